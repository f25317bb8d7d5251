"""cypool.integrations.tianshou: the BaseVectorEnv surface Tianshou's collectors use, against
gymnasium's own envs driven the way Tianshou's DummyVectorEnv drives them (its real class
when tianshou is installed, else the same calls written out here): steps of chosen envs,
resets of the envs that ended by id, seeds; bit for bit. With tianshou installed, also a real
short DQN on CartPole-v1 and a Collector's buffers equal to those collected from
DummyVectorEnv."""
import gymnasium as gym
import numpy as np
import pytest

import cypool
from cypool.integrations.tianshou import TianshouVecEnv, to_tianshou

try:
    import tianshou  # noqa: F401
    HAVE_TIANSHOU = True
except ImportError:
    HAVE_TIANSHOU = False


class GymnasiumEnvs:
    """What Tianshou's DummyVectorEnv does with gymnasium envs (tianshou/env/venvs.py):
    reset kwargs go to every env reset; step results are stacked, info["env_id"] added;
    seed(s) resets env i with s + i."""

    def __init__(self, env_id, n, **kw):
        self.envs = [gym.make(env_id, **kw) for _ in range(n)]

    def __len__(self):
        return len(self.envs)

    def _ids(self, id):
        return list(range(len(self.envs))) if id is None else (
            [id] if np.isscalar(id) else list(id))

    def reset(self, env_id=None, **kwargs):
        out = [self.envs[i].reset(**kwargs) for i in self._ids(env_id)]
        return np.stack([o for o, _ in out]), np.array([i for _, i in out])

    def step(self, action, id=None):
        res = []
        for a, j in zip(action, self._ids(id)):
            r = list(self.envs[j].step(a))
            r[-1]["env_id"] = j
            res.append(r)
        obs, rew, term, trunc, info = zip(*res)
        return (np.stack(obs), np.stack(rew), np.stack(term), np.stack(trunc),
                np.stack(info))

    def seed(self, seed):
        out = []
        for i, e in enumerate(self.envs):
            e.reset(seed=seed + i)
            out.append([seed + i])
        return out

    def close(self):
        for e in self.envs:
            e.close()


def reference(env_id, n, **kw):
    if HAVE_TIANSHOU:
        from tianshou.env import DummyVectorEnv
        return DummyVectorEnv([lambda: gym.make(env_id, **kw) for _ in range(n)])
    return GymnasiumEnvs(env_id, n, **kw)


def same(got, want, where):
    for x, y, name in zip(got, want, ("obs", "rew", "terminated", "truncated", "info")):
        if name == "info":
            assert x.dtype == object and len(x) == len(y), where
            assert list(x) == list(y), (where, x, y)
        else:
            # rewards: float64 here; stacking gymnasium's Python numbers gives int64 when
            # every reward of the batch is an int (FrozenLake's 0), float64 otherwise
            if name != "rew":
                assert np.asarray(x).dtype == np.asarray(y).dtype, (where, name, x, y)
            assert np.array_equal(x, y), (where, name, x, y)


@pytest.mark.parametrize("env_id,kw", [("CartPole-v1", {}), ("Pendulum-v1", {}),
                                       ("FrozenLake-v1", {"max_episode_steps": 9})])
def test_surface_matches_gymnasium_envs_driven_as_tianshou(env_id, kw):
    n = 5
    env = to_tianshou(env_id, n, **kw)
    ref = reference(env_id, n, **kw)
    try:
        assert len(env) == n and env.env_num == n and not env.is_async
        assert env.action_space == gym.make(env_id).action_space
        assert env.observation_space == gym.make(env_id).observation_space
        assert env.seed(11) == ref.seed(11)
        same(env.reset(), ref.reset(), "reset")
        same(env.reset(env_id=[3, 1], seed=4), ref.reset(env_id=[3, 1], seed=4), "reset ids")
        rng = np.random.default_rng(0)
        space = env.action_space
        ended = 0
        for t in range(150):
            ids = np.flatnonzero(rng.random(n) < 0.7)
            if ids.size == 0:
                continue
            rng.shuffle(ids)
            if isinstance(space, gym.spaces.Discrete):
                act = rng.integers(0, space.n, ids.size)
            else:
                act = rng.uniform(-2, 2, (ids.size,) + space.shape).astype(np.float32)
            got, want = env.step(act, ids), ref.step(act, ids)
            same(got, want, f"step {t}")
            done = ids[got[2] | got[3]]
            if done.size:
                ended += done.size
                same(env.reset(env_id=done), ref.reset(env_id=done), f"reset {t}")
        if env_id != "Pendulum-v1":
            assert ended >= 3
        # every env, by None
        act = np.zeros((n,) + space.shape, space.dtype)
        obs, *_ = env.reset()
        ref.reset()
        same(env.step(act), ref.step(act), "step all")
    finally:
        env.close()
        ref.close()


def test_surface_errors_are_clear():
    with pytest.raises(ValueError, match="autoreset_mode='disabled'"):
        TianshouVecEnv(cypool.make_vec("CartPole-v1", 2))
    with pytest.raises(ValueError, match="synchronously"):
        TianshouVecEnv(cypool.make_vec("CartPole-v1", 4, autoreset_mode="disabled",
                                       batch_size=2))
    with pytest.raises(TypeError, match="Tuple"):
        to_tianshou("Blackjack-v1", 2)
    with pytest.raises(TypeError, match="cypool VectorEnv"):
        TianshouVecEnv(gym.make_vec("CartPole-v1", 2, vectorization_mode="sync"))
    with pytest.raises(TypeError, match="autoreset_mode"):
        to_tianshou("CartPole-v1", 2, autoreset_mode="next_step")
    env = to_tianshou("CartPole-v1", 3, seed=0)
    try:
        env.reset()
        with pytest.raises(ValueError, match=r"in \[0, 3\)"):
            env.step(np.zeros(1, np.int64), [3])
        with pytest.raises(ValueError, match="distinct"):
            env.reset(env_id=[1, 1])
        with pytest.raises(ValueError, match="one row per env id"):
            env.step(np.zeros(3, np.int64), [0, 1])
        with pytest.raises(ValueError, match="None"):
            env.step(None, [0])
        with pytest.raises(ValueError, match="reset option"):
            env.reset(options={"low": 0})
        while True:                                  # env 0 ends; stepping it is refused
            _, _, term, trunc, _ = env.step(np.ones(1, np.int64), [0])
            if term[0] or trunc[0]:
                break
        with pytest.raises(ValueError, match=r"reset\(env_id=\[0\]\)"):
            env.step(np.ones(2, np.int64), [1, 0])
        obs, info = env.reset(env_id=0)
        assert obs.shape == (1, 4) and info.dtype == object
        env.step(np.ones(2, np.int64), [1, 0])       # nothing moved before: works now
        assert env.get_env_attr("sutton_barto_reward", [2]) == [False]
        env.set_env_attr("max_episode_steps", 5, id=[1])
        assert env.get_env_attr("max_episode_steps") == [500, 5, 500]
    finally:
        env.close()
    assert env.is_closed


def test_render_through_the_adapter():
    pytest.importorskip("pygame")
    env = to_tianshou("CartPole-v1", 2, seed=0, render_mode="rgb_array")
    ref = gym.make_vec("CartPole-v1", 2, vectorization_mode="sync", render_mode="rgb_array")
    try:
        env.reset()
        ref.reset(seed=0)
        frames = env.render()
        assert isinstance(frames, list) and len(frames) == 2
        assert all(np.array_equal(a, b) for a, b in zip(frames, ref.render()))
    finally:
        env.close()
        ref.close()


@pytest.mark.skipif(not HAVE_TIANSHOU, reason="tianshou is not installed")
def test_tianshou_collector_and_dqn_on_cypool():
    import torch
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    single = gym.make("CartPole-v1")      # DummyVectorEnv's spaces are lists, one per env

    def algorithm():
        torch.manual_seed(0)
        net = Net(state_shape=single.observation_space.shape,
                  action_shape=single.action_space.n, hidden_sizes=[32, 32])
        policy = DiscreteQLearningPolicy(model=net, action_space=single.action_space,
                                         eps_training=0.1, eps_inference=0.0)
        return DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.9,
                   n_step_return_horizon=3, target_update_freq=50)

    # a greedy Collector: the same transitions as from gymnasium's envs in DummyVectorEnv
    envs = to_tianshou("CartPole-v1", 4)
    ref = DummyVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(4)])
    bufs = []
    for e in (envs, ref):
        e.seed(3)
        buf = VectorReplayBuffer(1000, 4)
        c = Collector[CollectStats](algorithm(), e, buf)
        c.reset()
        stats = c.collect(n_step=200)
        assert stats.n_collected_steps == 200 and stats.n_collected_episodes > 0
        bufs.append(buf)
    for key in ("obs", "act", "rew", "terminated", "truncated", "obs_next"):
        assert np.array_equal(getattr(bufs[0], key), getattr(bufs[1], key)), key
    envs.close()
    ref.close()

    # a short DQN (a few hundred steps) trains and tests on cypool envs
    train_envs = to_tianshou("CartPole-v1", 4, seed=0)
    test_envs = to_tianshou("CartPole-v1", 2, seed=100)
    algo = algorithm()
    train_c = Collector[CollectStats](algo, train_envs,
                                      VectorReplayBuffer(2000, len(train_envs)),
                                      exploration_noise=True)
    test_c = Collector[CollectStats](algo, test_envs, exploration_noise=True)
    train_c.reset()
    test_c.reset()
    train_c.collect(n_step=64, random=True)
    res = algo.run_training(OffPolicyTrainerParams(
        training_collector=train_c, test_collector=test_c, max_epochs=2, epoch_num_steps=200,
        collection_step_num_env_steps=8, test_step_num_episodes=2, batch_size=32,
        update_step_num_gradient_steps_per_sample=0.25, show_progress=False, verbose=False))
    assert res.train_step >= 400 and res.train_episode > 0 and res.update_step > 0
    stats = test_c.collect(n_episode=4, reset_before_collect=True)
    assert stats.n_collected_episodes == 4
    assert np.array_equal(stats.returns, stats.lens)       # CartPole: 1 per step
    train_envs.close()
    test_envs.close()


@pytest.mark.skipif(not HAVE_TIANSHOU, reason="tianshou is not installed")
def test_tianshou_collector_on_the_envpool_import_swap():
    """EnvPool users' hello-world: Tianshou's Collector over envpool.make_gymnasium(
    "CartPole-v1", ...) with `import cypool.envpool as envpool`."""
    import torch
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.utils.net.common import Net

    import cypool.envpool as envpool

    envs = envpool.make_gymnasium("CartPole-v1", num_envs=4, seed=0)
    torch.manual_seed(0)
    net = Net(state_shape=envs.observation_space.shape, action_shape=envs.action_space.n,
              hidden_sizes=[16])
    policy = DiscreteQLearningPolicy(model=net, action_space=envs.action_space,
                                     eps_training=0.5)
    c = Collector[CollectStats](policy, envs, VectorReplayBuffer(1000, 4),
                                exploration_noise=True)
    c.reset()
    stats = c.collect(n_step=400)
    assert stats.n_collected_steps == 400 and stats.n_collected_episodes > 0
    assert np.array_equal(stats.returns, stats.lens)
    assert c.collect(n_step=40, random=True).n_collected_steps == 40
    envs.close()
