"""LunarLander-v3 and LunarLanderContinuous-v3 through make_vec against
gymnasium.make_vec(id, n, "sync") on the box2d 2.3.10 wheel, bit for bit: observations,
rewards, terminated, truncated, info dicts, across autoresets (landings: the lander asleep,
+100; crashes and flights off-screen, -100), several seeds and kwargs, one and two threads;
per-env kwargs, the time limit, bad input and the refusal to save a state."""
import copy
import math
import pickle
import sys
import types
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.box2d.lunar_lander import heuristic
from gymnasium.vector import AutoresetMode

import cypool

sys.path.insert(0, str(Path(__file__).parent.parent))
from _envpool_ref import envpool_or_none  # noqa: E402

LL, LLC = "LunarLander-v3", "LunarLanderContinuous-v3"
# (id, kwargs, seed, whether some lander lands: in a strong wind the pilot crashes)
CASES = [
    (LL, {}, 0, True),
    (LL, {"enable_wind": True}, 3, True),
    (LL, {"gravity": -5.5, "enable_wind": True, "wind_power": 7.0, "turbulence_power": 0.7}, 9,
     True),
    (LL, {"gravity": -11.99}, 21, True),
    (LLC, {}, 0, True),
    (LLC, {"enable_wind": True, "gravity": -3.0, "wind_power": 19.5}, 5, False),
]


def assert_same(x, y, where):
    assert type(x) is type(y), (where, type(x), type(y))
    if isinstance(y, dict):
        assert sorted(x) == sorted(y), (where, x, y)
        for k in y:
            assert_same(x[k], y[k], f"{where}[{k!r}]")
    elif y.dtype == object:         # same-step autoreset's final_obs / final_info
        assert x.dtype == object and x.shape == y.shape, where
        for k, (u, v) in enumerate(zip(x, y)):
            if v is None:
                assert u is None, where
            else:
                assert_same(u, v, f"{where}[{k}]")
    else:
        assert x.dtype == y.dtype and x.shape == y.shape, (where, x.dtype, y.dtype)
        assert np.array_equal(x, y), (where, x, y)


def assert_step(x, y, where):
    for k, name in enumerate(("obs", "reward", "terminated", "truncated", "info")):
        assert_same(x[k], y[k], f"{where} {name}")


class Policy:
    """gymnasium's heuristic lander pilot (it lands: legs touch, the lander falls asleep),
    with random actions mixed in (crashes, flights off-screen) and, for the continuous id,
    actions outside [-1, 1] (clipped by the env)."""

    NOISE = np.array([0.0, 0.0, 0.05, 0.5, 1.0])   # env k's share of random actions

    def __init__(self, continuous, seed):
        self.env = types.SimpleNamespace(unwrapped=types.SimpleNamespace(continuous=continuous))
        self.continuous = continuous
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs):
        n = len(obs)
        acts = [heuristic(self.env, o) for o in obs]
        if self.continuous:
            a = np.array(acts, np.float32)
            noisy = self.rng.random(n) < self.NOISE[np.arange(n) % 5]
            a[noisy] = self.rng.uniform(-1.5, 1.5, (int(noisy.sum()), 2)).astype(np.float32)
            return a
        a = np.array(acts, np.int64)
        return np.where(self.rng.random(n) < self.NOISE[np.arange(n) % 5],
                        self.rng.integers(0, 4, n), a)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("env_id,kw,seed,lands", CASES,
                         ids=[f"{e}-{i}" for i, (e, *_) in enumerate(CASES)])
def test_make_vec_matches_gymnasium(env_id, kw, seed, lands, threads):
    n, steps = 5, 450
    env = cypool.make_vec(env_id, n, num_threads=threads, **kw)
    ref = gym.make_vec(env_id, n, vectorization_mode="sync", **kw)
    try:
        assert env.single_observation_space == ref.single_observation_space
        assert env.single_action_space == ref.single_action_space
        x, y = env.reset(seed=seed), ref.reset(seed=seed)
        assert_same(x[0], y[0], "reset obs")
        assert_same(x[1], y[1], "reset info")
        policy = Policy(env_id == LLC, seed)
        obs, rewards = y[0], []
        for t in range(steps):
            a = policy(obs)
            x, y = env.step(a), ref.step(a)
            assert_step(x, y, f"step {t}")
            obs = y[0]
            rewards.append(y[1])
        rewards = np.concatenate(rewards)
        # the endings happened (each case runs several episodes per env)
        assert (rewards == 100).any() == lands and (rewards == -100).any(), (
            (rewards == 100).sum(), (rewards == -100).sum())
    finally:
        env.close()
        ref.close()


def test_same_step_autoreset_and_reset_mask():
    n = 4
    env = cypool.make_vec(LL, n, autoreset_mode="same_step", enable_wind=True)
    ref = gym.make_vec(LL, n, vectorization_mode="sync", enable_wind=True,
                       vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP})
    try:
        assert_same(env.reset(seed=40)[0], ref.reset(seed=40)[0], "reset")
        policy = Policy(False, 1)
        obs = None
        for t in range(300):
            a = policy(obs) if obs is not None else np.zeros(n, np.int64)
            x, y = env.step(a), ref.step(a)
            assert_step(x, y, f"step {t}")
            obs = y[0]
        mask = np.array([True, False, True, False])
        assert_same(env.reset(options={"reset_mask": mask})[0],
                    ref.reset(options={"reset_mask": mask})[0], "masked reset")
        for t in range(20):
            a = np.full(n, 2, np.int64)
            assert_step(env.step(a), ref.step(a), f"after masked reset, step {t}")
    finally:
        env.close()
        ref.close()


def test_per_env_kwargs_match_gymnasium_envs_built_with_them():
    kws = [{"gravity": -2.0}, {"enable_wind": True, "wind_power": 3.0},
           {"enable_wind": True, "turbulence_power": 0.1, "gravity": -11.0}, {}]
    n = len(kws)
    env = cypool.make_vec(LL, n, num_threads=2, env_kwargs=kws)
    ref = gym.vector.SyncVectorEnv([lambda k=k: gym.make(LL, **k) for k in kws])
    try:
        assert_same(env.reset(seed=8)[0], ref.reset(seed=8)[0], "reset")
        policy = Policy(False, 8)
        obs = None
        for t in range(300):
            a = policy(obs) if obs is not None else np.zeros(n, np.int64)
            x, y = env.step(a), ref.step(a)
            assert_step(x, y, f"step {t}")
            obs = y[0]
        assert env.get_attr("gravity") == (-2.0, -10.0, -11.0, -10.0)
        # set_attr: gymnasium reads wind_power at every step, gravity at the next reset
        env.set_attr("wind_power", 11.0)
        ref.set_attr("wind_power", 11.0)
        env.set_attr("gravity", -4.0)
        ref.set_attr("gravity", -4.0)
        for t in range(300):
            a = policy(obs)
            x, y = env.step(a), ref.step(a)
            assert_step(x, y, f"after set_attr, step {t}")
            obs = y[0]
    finally:
        env.close()
        ref.close()


def test_time_limit():
    limit = 40
    env = cypool.make_vec(LL, 3, max_episode_steps=limit)
    ref = gym.vector.SyncVectorEnv([lambda: gym.make(LL, max_episode_steps=limit)] * 3)
    try:
        assert_same(env.reset(seed=2)[0], ref.reset(seed=2)[0], "reset")
        truncated = False
        for t in range(3 * limit):
            a = np.full(3, 2 * (t % 2), np.int64)   # main engine every other step: it hovers
            x, y = env.step(a), ref.step(a)
            assert_step(x, y, f"step {t}")
            truncated |= y[3].any()
        assert truncated
    finally:
        env.close()
        ref.close()


@pytest.mark.parametrize("kw,match", [
    ({"gravity": 0.0}, "gravity"), ({"gravity": -12.0}, "gravity"),
    ({"gravity": 3.0}, "gravity"), ({"gravity": math.nan}, "gravity"),
    ({"wind_power": math.nan}, "wind_power"), ({"wind_power": math.inf}, "wind_power"),
    ({"turbulence_power": -math.inf}, "turbulence_power"),
])
def test_bad_kwargs_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        cypool.make_vec(LL, 2, **kw)
    # gymnasium refuses the same gravities (an assertion); the non-finite forces it takes
    # fail later inside Box2D
    if "gravity" in kw:
        with pytest.raises(AssertionError):
            gym.make(LL, **kw)


def test_continuous_is_a_pool_setting_and_out_of_range_powers_warn():
    with pytest.raises(ValueError, match="continuous"):
        cypool.make_vec(LL, 2, env_kwargs=[{"continuous": True}, {}])
    with pytest.warns(UserWarning, match="wind_power"):
        cypool.make_vec(LL, 1, wind_power=25.0).close()
    env = cypool.make_vec(LL, 1, continuous=True)
    assert env.single_action_space == gym.spaces.Box(-1, 1, (2,), np.float32)
    env.close()


def test_bad_actions_refused_before_any_env_moves():
    env = cypool.make_vec(LL, 3)
    ref = gym.make_vec(LL, 3, vectorization_mode="sync")
    cont = cypool.make_vec(LLC, 2)
    cref = gym.make_vec(LLC, 2, vectorization_mode="sync")
    try:
        assert_same(env.reset(seed=1)[0], ref.reset(seed=1)[0], "reset")
        assert_same(cont.reset(seed=1)[0], cref.reset(seed=1)[0], "reset")
        for bad in ([0, 1, 4], [0, -1, 2], [0.0, 1.0, 2.0], [0, 1]):
            with pytest.raises((ValueError, TypeError)):
                env.step(np.array(bad))
        for bad in (np.zeros((2, 3)), np.zeros((2, 2), np.int64), np.zeros(2)):
            with pytest.raises((ValueError, TypeError)):
                cont.step(bad)
        # nothing moved: the next good steps still match gymnasium
        for t in range(5):
            a = np.array([2, 1, 3])
            assert_step(env.step(a), ref.step(a), f"step {t}")
            c = np.array([[0.7, -0.8], [-2.0, 3.0]], np.float32)
            assert_step(cont.step(c), cref.step(c), f"continuous step {t}")
    finally:
        for e in (env, ref, cont, cref):
            e.close()


def test_saving_a_state_is_refused_clearly():
    env = cypool.make_vec(LL, 2)
    env.reset(seed=0)
    try:
        with pytest.raises(TypeError, match="Box2D world"):
            pickle.dumps(env)
        with pytest.raises(TypeError, match="Box2D world"):
            copy.deepcopy(env)
        # the pool goes on
        env.step(np.array([0, 2]))
    finally:
        env.close()


def test_bodies_match_gymnasium_box2d_state():
    """Beyond the observation: the legs' Box2D state too (float32, as Box2D keeps it)."""
    env = cypool.make_vec(LL, 1)
    ref = gym.make(LL).unwrapped
    try:
        env.reset(seed=12)
        ref.reset(seed=12)
        rng = np.random.default_rng(0)
        for t in range(120):
            a = int(rng.integers(0, 4))
            if env.step(np.array([a]))[2][0]:
                assert ref.step(a)[2]
                break
            ref.step(a)
            want = np.array([[b.position.x, b.position.y, b.angle, b.linearVelocity.x,
                              b.linearVelocity.y, b.angularVelocity]
                             for b in [ref.lander] + ref.legs], np.float32)
            assert np.array_equal(env.pool.engine.bodies(0), want), t
    finally:
        env.close()
        ref.close()


def test_envpool_names():
    """cypool.envpool serves EnvPool's LunarLander ids with EnvPool's config, dtypes and info
    keys, and gymnasium's numbers (EnvPool's own port draws other random numbers)."""
    import cypool.envpool as cep

    for ep_id, gym_id in (("LunarLander-v2", LL), ("LunarLanderContinuous-v3", LLC)):
        env = cep.make(ep_id, env_type="gymnasium", num_envs=3, seed=5)
        ours = cep.make_spec(ep_id).config
        assert (ours.max_episode_steps, ours.reward_threshold) == (1000, 200.0)
        envpool = envpool_or_none()   # None under tools/sanitize.sh: compared in the normal run
        if envpool is not None:
            theirs = envpool.make_spec(ep_id).config
            assert (ours.max_episode_steps, ours.reward_threshold) == (
                theirs.max_episode_steps, theirs.reward_threshold)
        ref = gym.make_vec(gym_id, 3, vectorization_mode="sync")
        o, info = env.reset()
        assert sorted(info) == ["elapsed_step", "env_id", "players"]
        assert np.array_equal(o, ref.reset(seed=5)[0])
        a = (np.array([0, 2, 3]) if gym_id == LL
             else np.array([[0.9, 0.0], [0.1, -0.7], [-1.0, 0.8]], np.float32))
        for _ in range(30):
            x, y = env.step(a), ref.step(a)
            assert np.array_equal(x[0], y[0])
            assert np.array_equal(x[1], y[1].astype(x[1].dtype))
        env.close()
        ref.close()


def test_population_members_with_their_own_gravity_and_wind():
    members = [{"gravity": -3.0}, {"enable_wind": True, "wind_power": 12.0}]
    pop = cypool.make_population(LL, 2, 2, member_kwargs=members, seed=6, seed_mode="parity",
                                 num_threads=2)
    kws = [members[0], members[0], members[1], members[1]]
    ref = gym.vector.SyncVectorEnv([lambda k=k: gym.make(LL, **k) for k in kws])
    try:
        obs, _ = pop.reset()
        assert np.array_equal(obs.reshape(4, 8), ref.reset(seed=6)[0])
        rng = np.random.default_rng(3)
        for t in range(200):
            a = rng.integers(0, 4, (2, 2))
            x, y = pop.step(a), ref.step(a.reshape(4))
            for k in range(4):
                assert np.array_equal(x[k].reshape(y[k].shape), y[k]), (t, k)
    finally:
        pop.close()
        ref.close()


def test_nan_and_inf_continuous_actions_as_gymnasium():
    """gymnasium's np.clip(action, -1, 1) defines them: inf is full power, NaN fires no
    engine (its comparisons are false). cypool takes them and gives the same numbers."""
    env = cypool.make_vec(LLC, 4)
    ref = gym.make_vec(LLC, 4, vectorization_mode="sync")
    try:
        assert_same(env.reset(seed=30)[0], ref.reset(seed=30)[0], "reset")
        batches = [np.array([[math.nan, math.nan], [math.inf, -math.inf], [-math.inf, math.inf],
                             [math.nan, math.inf]], dt) for dt in (np.float32, np.float64)]
        for t in range(60):
            a = batches[t % 2]
            assert_step(env.step(a), ref.step(a), f"step {t}")
    finally:
        env.close()
        ref.close()


@pytest.mark.parametrize("env_id,every,threads", [(LL, 1, 1), (LLC, 1, 2), (LL, 9, 2)])
def test_rgb_array_frames_are_gymnasiums(env_id, every, threads):
    """Frames from gymnasium's own render() fed the pool's state, particles included (made
    only with a render mode; each render() ages them): equal to gymnasium's, every step or
    sparsely, across resets, and the observations stay gymnasium's with particles."""
    pytest.importorskip("pygame")
    n = 3
    env = cypool.make_vec(env_id, n, num_threads=threads, render_mode="rgb_array",
                          enable_wind=True)
    ref = gym.make_vec(env_id, n, vectorization_mode="sync", render_mode="rgb_array",
                       enable_wind=True)
    try:
        assert_same(env.reset(seed=1)[0], ref.reset(seed=1)[0], "reset")
        policy = Policy(env_id == LLC, 4)
        obs, ends = None, 0
        for t in range(240 if every > 1 else 200):
            a = policy(obs) if obs is not None else policy(np.zeros((n, 8), np.float32))
            x, y = env.step(a), ref.step(a)
            assert_step(x, y, f"step {t}")
            obs = y[0]
            ends += int(y[2].sum())
            if t % every == 0:
                got, want = env.render(), ref.render()
                assert len(got) == len(want) == n
                for k in range(n):
                    assert got[k].dtype == want[k].dtype and np.array_equal(got[k], want[k]), (
                        t, k)
        assert ends >= 1
    finally:
        env.close()
        ref.close()


def test_human_rendering_is_refused():
    with pytest.raises(ValueError, match="render"):
        cypool.make_vec(LL, 1, render_mode="human")
