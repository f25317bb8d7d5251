"""cypool.integrations.sb3: a cypool env as a Stable-Baselines3 VecEnv.

On an exact task the adapter must return what SB3's own DummyVecEnv returns over gymnasium's
envs with the same seeds; and SB3's PPO must train from it."""
import numpy as np
import pytest
import gymnasium as gym

pytest.importorskip("stable_baselines3")
torch = pytest.importorskip("torch")

from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.monitor import Monitor  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecMonitor  # noqa: E402

import cypool  # noqa: E402
from cypool.integrations.sb3 import SB3VecEnv, split_info, to_sb3  # noqa: E402

TASK, N, LIMIT = "Hopper-v5", 4, 20


def dummy(task=TASK, n=N, limit=LIMIT):
    return DummyVecEnv([lambda: gym.make(task, max_episode_steps=limit) for _ in range(n)])


def assert_info_same(got, want):
    """Per-env info dicts: same keys, types and values (numpy scalars, bools, arrays)."""
    assert set(got) == set(want), (sorted(got), sorted(want))
    for k, w in want.items():
        g = got[k]
        if isinstance(w, dict):
            assert_info_same(g, w)
        else:
            # DictInfoToList-style rows hold numpy scalars where gymnasium's env may return a
            # Python float: compare dtypes and values
            assert np.asarray(g).dtype == np.asarray(w).dtype, (k, type(g), type(w))
            assert isinstance(g, bool) == isinstance(w, bool), k
            assert np.array_equal(g, w), (k, g, w)


def compare_with_dummy(ref, env, steps, rng, make_action):
    ref.seed(11), env.seed(11)
    o_ref, o = ref.reset(), env.reset()
    assert o.dtype == o_ref.dtype and np.array_equal(o, o_ref)
    for a, b in zip(env.reset_infos, ref.reset_infos):
        assert_info_same(a, b)
    ends = {"terminal": 0, "truncated": 0}
    for t in range(steps):
        a = make_action(rng)
        want, got = ref.step(a), env.step(a)
        for x, y in zip(got[:3], want[:3]):
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), t
        assert len(got[3]) == N
        for a_info, b_info in zip(got[3], want[3]):
            assert_info_same(a_info, b_info)
            if "terminal_observation" in b_info:
                ends["truncated" if b_info["TimeLimit.truncated"] else "terminal"] += 1
        for a_info, b_info in zip(env.reset_infos, ref.reset_infos):
            assert_info_same(a_info, b_info)
    return ends


def test_adapter_equals_dummy_vec_env():
    env = to_sb3(cypool.make_vec(TASK, N, autoreset_mode="same_step",
                                 max_episode_steps=LIMIT))
    assert isinstance(env, VecEnv) and env.num_envs == N
    assert env.observation_space == gym.spaces.Box(-np.inf, np.inf, (11,), np.float64)
    assert env.action_space.shape == (3,) and env.action_space.dtype == np.float32
    ref = dummy()
    rng = np.random.default_rng(0)
    ends = compare_with_dummy(ref, env, 80, rng,
                              lambda r: r.uniform(-1, 1, (N, 3)).astype(np.float32))
    assert ends["terminal"] >= 3 and ends["truncated"] >= 3, ends
    env.close(), ref.close()


def test_adapter_copy_false_and_env_id():
    """copy=False pools: SB3 keeps the previous obs while it steps, so the adapter copies."""
    env = to_sb3(TASK, N, max_episode_steps=LIMIT, copy=False)
    assert env.env.autoreset_mode is gym.vector.AutoresetMode.SAME_STEP
    env.seed(2)
    first = env.reset()
    kept = first.copy()
    obs, *_ = env.step(np.zeros((N, 3), np.float32))
    assert np.array_equal(first, kept) and not np.shares_memory(first, obs)
    env.close()


def test_adapter_discrete_actions_on_a_gymnasium_vector_env():
    """The Discrete path (Atari in cypool), run over gymnasium's own CartPole SyncVectorEnv."""
    venv = gym.make_vec("CartPole-v1", N, vectorization_mode="sync",
                        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP})
    env = to_sb3(venv)
    assert env.action_space == gym.spaces.Discrete(2)
    ref = DummyVecEnv([lambda: gym.make("CartPole-v1") for _ in range(N)])
    ends = compare_with_dummy(ref, env, 120, np.random.default_rng(1),
                              lambda r: r.integers(0, 2, N))
    assert ends["terminal"] >= 3
    assert env.env_is_wrapped(gym.wrappers.TimeLimit) == [True] * N   # Sync has sub-envs
    assert env.get_attr("render_mode") == [None] * N
    env.close()


def test_adapter_rejects_other_autoreset_modes_and_non_vector_envs():
    env = cypool.make_vec(TASK, 2)
    with pytest.raises(ValueError, match="same_step"):
        to_sb3(env)
    with pytest.raises(ValueError, match="same_step"):
        to_sb3(TASK, 2, autoreset_mode="next_step")
    with pytest.raises(TypeError, match="VectorEnv"):
        SB3VecEnv(gym.make(TASK))
    with pytest.raises(TypeError, match="env id"):
        to_sb3(env, 2)
    with pytest.raises(ValueError, match="batch_size"):
        to_sb3(TASK, 4, batch_size=2)
    env.close()


def test_adapter_attributes_and_gymnasium_wrappers_inside():
    base = cypool.make_vec(TASK, N, autoreset_mode="same_step", max_episode_steps=LIMIT)
    env = to_sb3(gym.wrappers.vector.RecordEpisodeStatistics(base))
    assert env.env_is_wrapped(Monitor) == [False] * N       # native envs have no wrappers
    # per-env attributes: the envs' task kwargs and time limits (cypool's get_attr/set_attr)
    assert env.get_attr("ctrl_cost_weight") == [1e-3] * N
    env.set_attr("ctrl_cost_weight", 0.5, indices=[1])
    assert env.get_attr("ctrl_cost_weight") == [1e-3, 0.5] + [1e-3] * (N - 2)
    assert env.get_attr("ctrl_cost_weight", indices=[1]) == [0.5]
    env.set_attr("ctrl_cost_weight", 1e-3, indices=[1])
    assert env.get_attr("max_episode_steps", indices=[0, 2]) == [LIMIT, LIMIT]
    with pytest.raises(TypeError, match="get_attr"):      # an attribute, not a method
        env.env_method("max_episode_steps", indices=[0, 2])
    with pytest.raises(AttributeError, match="ctrl_cost_weight"):   # lists what exists
        env.get_attr("no_such_attribute")
    env.seed(0)
    env.reset()
    rng = np.random.default_rng(0)
    returns, episodes = np.zeros(N), 0
    for _ in range(60):
        _, rew, dones, infos = env.step(rng.uniform(-1, 1, (N, 3)).astype(np.float32))
        returns += rew
        for i in np.flatnonzero(dones):
            # RecordEpisodeStatistics' "episode" goes to the terminal step's info, where SB3
            # reads it (float32 sums here versus the wrapper's float64 ones)
            assert infos[i]["episode"]["r"] == pytest.approx(returns[i], rel=1e-5)
            assert "episode" not in env.reset_infos[i]
            returns[i] = 0.0
            episodes += 1
    assert episodes >= 6
    env.close()


def test_split_info_follows_masks_and_nesting():
    info = {"a": np.array([1.0, 2.0, 3.0]), "_a": np.array([True, False, True]),
            "d": {"x": np.array([4, 5, 6]), "_x": np.array([False, True, True])},
            "_d": np.array([False, True, True]), "plain": np.array(["p", "q", "r"])}
    assert split_info(info, 3) == [{"a": 1.0, "plain": "p"},
                                   {"d": {"x": 5}, "plain": "q"},
                                   {"a": 3.0, "d": {"x": 6}, "plain": "r"}]
    with pytest.raises(ValueError, match="entries"):
        split_info({"a": np.zeros(2)}, 3)


class EpisodeLengths(BaseCallback):
    """Mean length of the last 100 episodes (VecMonitor's buffer) after each rollout."""

    def __init__(self):
        super().__init__()
        self.means = []

    def _on_rollout_end(self):
        buf = self.model.ep_info_buffer
        self.means.append(float(np.mean([e["l"] for e in buf])) if buf else 0.0)

    def _on_step(self):
        return True


def test_ppo_learns_from_cypool():
    """SB3's PPO on InvertedPendulum-v5 (reward 1 per step): 8192 steps, about 3 s on CPU."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)        # one thread: deterministic and no oversubscription
    try:
        venv = VecMonitor(to_sb3("InvertedPendulum-v5", 8, seed=0, num_threads=1))
        model = PPO("MlpPolicy", venv, n_steps=64, batch_size=128, n_epochs=4,
                    learning_rate=1e-3, seed=0, device="cpu")
        cb = EpisodeLengths()
        model.learn(8192, callback=cb)
    finally:
        torch.set_num_threads(threads)
    assert model.num_timesteps == 8192
    episodes = list(model.ep_info_buffer)
    assert len(episodes) == 100
    # v5 rewards +1 per step while the pole is up and 0 on the step where it falls
    assert all(e["r"] == e["l"] - 1 for e in episodes), episodes[:5]
    # a random policy balances ~8 steps; the trained one several times longer
    assert cb.means[0] < 15 and cb.means[-1] > 3 * cb.means[0], cb.means
    venv.close()


# ---------------------------------------------------------------------- the rest of VecEnv
ENV_METHOD_TASKS = [("CartPole-v1", lambda r: r.integers(0, 2, N)),
                    ("Hopper-v5", lambda r: r.uniform(-1, 1, (N, 3)).astype(np.float32))]


def pair(task):
    return (to_sb3(task, N), DummyVecEnv([lambda: gym.make(task)] * N))


def assert_steps_same(env, ref, rng, act, steps):
    for t in range(steps):
        a = act(rng)
        got, want = env.step(a), ref.step(a)
        for x, y in zip(got[:3], want[:3]):
            assert x.dtype == y.dtype and np.array_equal(x, y), t
        for a_info, b_info in zip(got[3], want[3]):
            assert_info_same(a_info, b_info)


@pytest.mark.parametrize("task,act", ENV_METHOD_TASKS)
def test_env_method_reset_of_chosen_envs_equals_dummy(task, act):
    """env_method("reset") resets those envs alone, returns DummyVecEnv's (obs, info) per env,
    and the batch steps on exactly as DummyVecEnv's does."""
    env, ref = pair(task)
    rng = np.random.default_rng(3)
    env.seed(0), ref.seed(0)
    assert np.array_equal(env.reset(), ref.reset())
    assert_steps_same(env, ref, rng, act, 5)
    for kwargs, indices in (({"seed": 7}, [1, 3]), ({}, 2), ({"seed": 9, "options": None}, None)):
        got = env.env_method("reset", indices=indices, **kwargs)
        want = ref.env_method("reset", indices=indices, **kwargs)
        assert len(got) == len(want) == len(list(env._get_indices(indices)))
        for (o, info), (o_ref, info_ref) in zip(got, want):
            assert o.dtype == o_ref.dtype and np.array_equal(o, o_ref)
            assert_info_same(info, info_ref)
        assert_steps_same(env, ref, rng, act, 8)
    with pytest.raises(ValueError, match="unknown reset option"):
        env.env_method("reset", indices=[0], options={"noise": 1})
    with pytest.raises(ValueError, match="indices"):
        env.env_method("reset", indices=[0], options={"reset_mask": np.ones(N, bool)})
    env.close(), ref.close()


@pytest.mark.parametrize("task,act", ENV_METHOD_TASKS)
def test_get_attr_set_attr_and_wrapper_attrs_like_dummy(task, act):
    env, ref = pair(task)
    env.seed(0), ref.seed(0)
    env.reset(), ref.reset()
    for v in (env, ref):
        # a new name is kept per env and read back; an env without it has no such attribute
        v.set_attr("my_weight", 3, indices=[0, 2])
        assert v.get_attr("my_weight", indices=[0, 2]) == [3, 3]
        with pytest.raises(AttributeError, match="my_weight"):
            v.get_attr("my_weight")
        with pytest.raises(AttributeError, match="my_weight"):
            v.env_method("get_wrapper_attr", "my_weight")
        v.set_attr("my_weight", [1, 2])               # one value for every env, as given
        v.set_attr("double", lambda x: 2 * x, indices=1)
        assert v.env_method("double", 4, indices=1) == [8]
    for name in ("my_weight", "render_mode"):
        assert env.get_attr(name) == ref.get_attr(name)
        assert env.env_method("get_wrapper_attr", name, indices=[1, 3]) == \
            ref.env_method("get_wrapper_attr", name, indices=[1, 3])
    assert env.env_method("has_wrapper_attr", "my_weight") == [True] * N
    assert env.env_method("has_wrapper_attr", "no_such") == [False] * N
    assert env.has_attr("my_weight") and not env.has_attr("no_such")
    env.env_method("set_wrapper_attr", "other", 5, indices=[0])
    assert env.get_attr("other", indices=0) == [5]
    assert env.seed(5) == ref.seed(5) == [5 + i for i in range(N)]
    assert np.array_equal(env.reset(), ref.reset())
    assert_steps_same(env, ref, np.random.default_rng(0), act, 5)   # nothing changed the task
    assert env.env_is_wrapped(Monitor, indices=[0, 1]) == [False, False]
    env.close(), ref.close()


def test_set_attr_of_task_kwargs_goes_to_the_pool():
    env = to_sb3(TASK, N)
    env.set_attr("ctrl_cost_weight", 0.5, indices=[1, 2])
    assert env.env.get_attr("ctrl_cost_weight") == (1e-3, 0.5, 0.5, 1e-3)   # the pool's own
    assert env.get_attr("ctrl_cost_weight") == [1e-3, 0.5, 0.5, 1e-3]
    env.set_attr("max_episode_steps", 7, indices=0)
    assert env.env.get_attr("max_episode_steps")[:2] == (7, 1000)
    with pytest.raises(AttributeError, match="settable"):      # read-only: never shadowed
        env.set_attr("render_mode", "human")
    with pytest.raises((TypeError, ValueError), match="ctrl_cost_weight"):
        env.set_attr("ctrl_cost_weight", "x")
    assert env.get_attr("ctrl_cost_weight") == [1e-3, 0.5, 0.5, 1e-3]
    assert env.get_attr("render_mode") == [None] * N
    env.close()


def test_env_method_clear_errors_and_render():
    env, ref = pair("CartPole-v1")
    env.reset(), ref.reset()
    for v in (env, ref):                      # gymnasium envs have no seed() since 0.26
        with pytest.raises(AttributeError, match="seed"):
            v.env_method("seed", 1)
        with pytest.raises(AttributeError, match="no_such"):
            v.env_method("no_such")
    with pytest.raises(AttributeError, match="VecEnv.seed"):
        env.env_method("seed", 1)
    with pytest.raises(NotImplementedError, match="step"):
        env.env_method("step", 0, indices=[0])
    with pytest.raises(NotImplementedError, match="close"):
        env.env_method("close")
    with pytest.warns(UserWarning, match="render mode"):     # no render mode: None, as gymnasium
        assert env.env_method("render") == [None] * N
    with pytest.warns(UserWarning, match="render mode"):
        assert ref.env_method("render") == [None] * N
    env.close(), ref.close()


def test_env_method_render_frames():
    pytest.importorskip("ale_py")
    env = to_sb3("Breakout-v5", 3, render_mode="rgb_array", seed=0)
    env.reset()
    frames = env.env_method("render", indices=[0, 2])
    want = env.env.render()
    assert len(frames) == 2 and frames[0].shape == (210, 160, 3)
    assert np.array_equal(frames[0], want[0]) and np.array_equal(frames[1], want[2])
    env.close()


# ---------------------------------------------------------------------- Atari game scores
def atari_pair(**extra):
    """An episodic-life, clipped-reward Breakout adapter and the plain game pool it plays
    exactly (no reset no-ops or FIRE: a life-loss reset leaves the emulator alone)."""
    pytest.importorskip("ale_py")
    kw = dict(noop_max=0, use_fire_reset=False, seed=3, max_episode_steps=250)
    env = to_sb3("Breakout-v5", N, episodic_life=True, reward_clip=True, **kw, **extra)
    plain = gym.wrappers.vector.RecordEpisodeStatistics(
        cypool.make_vec("Breakout-v5", N, autoreset_mode="same_step", **kw))
    return env, plain


def test_sb3_episode_is_the_atari_game_score():
    """episodic_life=True: SB3's info["episode"] ({"r", "l", "t"}, as its Monitor under
    EpisodicLifeEnv gives it) only where a game ends, with the game's unclipped score and
    length: RecordEpisodeStatistics' episodes of the plain pool fed the same actions."""
    env, plain = atari_pair()
    assert env.env_is_wrapped(Monitor) == [True] * N
    env.reset(), plain.reset()
    rng = np.random.default_rng(0)
    games = lives = 0
    for t in range(600):
        a = rng.integers(0, 4, N)
        _, rew, dones, infos = env.step(a)
        _, _, term, trunc, info = plain.step(a)
        ended = term | trunc
        for i in range(N):
            if ended[i]:
                ep = infos[i]["episode"]
                assert dones[i] and set(ep) == {"r", "l", "t"}
                assert ep["r"] == info["episode"]["r"][i] and ep["l"] == info["episode"]["l"][i]
                assert type(ep["r"]) is float and type(ep["l"]) is int and ep["t"] >= 0
                games += 1
            else:
                assert "episode" not in infos[i], t
                lives += bool(dones[i])
    assert games >= 6 and lives >= 3 * games
    env.close(), plain.close()


class RandomPolicy:
    def __init__(self, seed):
        self.rng, self.actions = np.random.default_rng(seed), []

    def predict(self, obs, state=None, episode_start=None, deterministic=False):
        self.actions.append(self.rng.integers(0, 4, len(obs)))
        return self.actions[-1], state


def test_sb3_evaluate_policy_reports_game_scores():
    """SB3's evaluate_policy sees a Monitor (env_is_wrapped) and so reports info["episode"]:
    the first game of each env, not its lives."""
    from stable_baselines3.common.evaluation import evaluate_policy

    env, plain = atari_pair()
    policy = RandomPolicy(1)
    returns, lengths = evaluate_policy(policy, env, n_eval_episodes=N, deterministic=False,
                                       return_episode_rewards=True, warn=False)
    plain.reset()
    first = {}
    for a in policy.actions:
        _, _, term, trunc, info = plain.step(a)
        for i in np.flatnonzero(term | trunc):
            first.setdefault(int(i), (float(info["episode"]["r"][i]),
                                      int(info["episode"]["l"][i])))
    assert len(first) == N
    assert sorted(zip(returns, lengths)) == sorted(first.values())
    env.close(), plain.close()


def test_sb3_without_episodic_life_keeps_its_episodes():
    pytest.importorskip("ale_py")
    env = to_sb3("Breakout-v5", N, reward_clip=True, seed=0, max_episode_steps=50)
    assert env.env_is_wrapped(Monitor) == [False] * N
    env.reset()
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(60):
        _, _, dones, infos = env.step(rng.integers(0, 4, N))
        for i in np.flatnonzero(dones):
            assert "episode" not in infos[i] and "game_return" in infos[i]
            ended += 1
    assert ended >= N
    env.close()
