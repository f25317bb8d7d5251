"""gymnasium's vector wrappers on cypool envs, checked against the same wrappers on
gymnasium's SyncVectorEnv (the task is exact, so every output must be equal)."""
import numpy as np
import pytest
import gymnasium as gym
import gymnasium.wrappers.vector as W
from gymnasium.vector import AutoresetMode

import cypool

TASK, N, LIMIT, OBS_DIM = "Hopper-v5", 4, 20, 11   # 20 steps: both terminations and truncations
NEXT, SAME, DISABLED = AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED


def pair(mode, copy=True):
    ref = gym.make_vec(TASK, N, vectorization_mode="sync", max_episode_steps=LIMIT,
                       vector_kwargs={"autoreset_mode": mode})
    env = cypool.make_vec(TASK, N, autoreset_mode=mode, max_episode_steps=LIMIT, copy=copy)
    return ref, env


def assert_same(got, want, path="out"):
    """Equal structure, dtypes and values (bit for bit), through dicts, lists and tuples."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), (path, sorted(got), sorted(want))
        for k in want:
            assert_same(got[k], want[k], f"{path}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{path}[{i}]")
    elif want is None:
        assert got is None, path
    elif isinstance(want, np.ndarray) and want.dtype == object:
        assert isinstance(got, np.ndarray) and got.dtype == object, path
        assert_same(list(got), list(want), path)
    else:
        g, w = np.asarray(got), np.asarray(want)
        assert g.dtype == w.dtype, (path, g.dtype, w.dtype)
        assert g.shape == w.shape and np.array_equal(g, w), (path, g, w)


def drop_episode_time(info):
    """RecordEpisodeStatistics' "t" is wall-clock time: check it, then leave it out."""
    if isinstance(info, dict) and "episode" in info:
        t = info["episode"].pop("t")
        assert t.dtype == np.float64 and (t >= 0).all()
    return info


def run_pair(ref, env, mode, steps=60, seed=3, act_scale=1.5):
    """Step both with the same actions; compare every output. Returns (terms, truncs) seen."""
    assert_same(env.reset(seed=seed), ref.reset(seed=seed), "reset")
    rng = np.random.default_rng(seed)
    terms = truncs = 0
    for t in range(steps):
        a = rng.uniform(-act_scale, act_scale, ref.action_space.shape)
        want, got = ref.step(a), env.step(a)
        drop_episode_time(want[4]), drop_episode_time(got[4])
        assert_same(got, want, f"step {t}")
        terms, truncs = terms + int(want[2].sum()), truncs + int(want[3].sum())
        done = want[2] | want[3]
        if mode == DISABLED and done.any():
            assert_same(env.reset(options={"reset_mask": done.copy()}),
                        ref.reset(options={"reset_mask": done.copy()}), f"partial reset {t}")
    assert terms >= 2 and truncs >= 2, (terms, truncs)   # both ends of an episode were seen
    return terms, truncs


# name -> (factory, the autoreset modes in which it works on SyncVectorEnv, gymnasium 1.4)
ALL = frozenset(AutoresetMode)
WRAPPERS = {
    "RecordEpisodeStatistics": (lambda e: W.RecordEpisodeStatistics(e), ALL),
    "NormalizeReward": (lambda e: W.NormalizeReward(e, gamma=0.9), ALL),
    "ClipReward": (lambda e: W.ClipReward(e, -0.5, 0.8), ALL),
    "TransformReward": (lambda e: W.TransformReward(e, lambda r: 2.0 * r - 1.0), ALL),
    "VectorizeTransformReward": (
        lambda e: W.VectorizeTransformReward(e, gym.wrappers.TransformReward,
                                             func=lambda r: r * r), ALL),
    "ClipAction": (lambda e: W.ClipAction(e), ALL),
    "RescaleAction": (lambda e: W.RescaleAction(e, -3.0, 3.0), ALL),
    "TransformAction": (lambda e: W.TransformAction(e, lambda a: 0.5 * a), ALL),
    "DictInfoToList": (lambda e: W.DictInfoToList(e), ALL),
    "NormalizeObservation": (lambda e: W.NormalizeObservation(e), {NEXT}),
    "TransformObservation": (
        lambda e: W.TransformObservation(e, lambda o: np.clip(o, -1.0, 1.0)), {NEXT, DISABLED}),
    "VectorizeTransformObservation": (
        lambda e: W.VectorizeTransformObservation(e, gym.wrappers.TransformObservation,
                                                  func=lambda o: o * 2.0,
                                                  observation_space=None), {NEXT, DISABLED}),
    "FlattenObservation": (lambda e: W.FlattenObservation(e), {NEXT, DISABLED}),
    "DtypeObservation": (lambda e: W.DtypeObservation(e, np.float32), {NEXT, DISABLED}),
    "ReshapeObservation": (lambda e: W.ReshapeObservation(e, (1, OBS_DIM)), {NEXT, DISABLED}),
}


# RecordEpisodeStatistics under DISABLED: see test_record_episode_statistics_partial_reset
CASES = [(name, mode) for name in sorted(WRAPPERS) for mode in AutoresetMode
         if (name, mode) != ("RecordEpisodeStatistics", DISABLED)]


@pytest.mark.parametrize("name, mode", CASES, ids=[f"{n}-{m.name}" for n, m in CASES])
def test_wrapper_equals_sync(name, mode):
    make, supported = WRAPPERS[name]
    ref, env = pair(mode)
    if mode not in supported:
        # Where SyncVectorEnv is refused, cypool is refused with the same error.
        with pytest.raises(ValueError) as want:
            make(ref)
        with pytest.raises(ValueError) as got:
            make(env)
        assert str(got.value) == str(want.value)
        return
    wref, wenv = make(ref), make(env)
    assert wenv.unwrapped is env and wenv.num_envs == N
    assert wenv.observation_space == wref.observation_space
    assert wenv.action_space == wref.action_space
    # RescaleAction maps [-3, 3] onto the task's [-1, 1]: scale the sampled actions to match
    run_pair(wref, wenv, mode, act_scale=4.5 if name == "RescaleAction" else 1.5)
    wenv.close(), wref.close()


def test_record_episode_statistics_partial_reset():
    """DISABLED + reset(options={"reset_mask": done}): the stats of the envs that go on are kept.

    SyncVectorEnv pops "reset_mask" out of the options before the wrapper sees it, so there the
    wrapper restarts *every* env's return and length (gymnasium PR #1696). cypool leaves the
    mask in place; the episode statistics are then the true sums, checked here against the
    raw rewards of an unwrapped SyncVectorEnv.
    """
    ref, env = pair(DISABLED)
    wenv = W.RecordEpisodeStatistics(env)
    ref.reset(seed=5)
    wenv.reset(seed=5)
    ret, length = np.zeros(N), np.zeros(N, dtype=int)
    rng = np.random.default_rng(5)
    episodes, partial, returns, lengths = 0, 0, [], []
    for _ in range(70):
        a = rng.uniform(-1.5, 1.5, ref.action_space.shape)
        o, r, te, tr, _ = ref.step(a)
        o2, r2, te2, tr2, info = wenv.step(a)
        assert np.array_equal(o2, o) and np.array_equal(r2, r)
        ret += r
        length += 1
        done = te | tr
        if done.any():
            assert np.array_equal(info["_episode"], done)
            assert np.array_equal(info["episode"]["r"], np.where(done, ret, 0.0))
            assert np.array_equal(info["episode"]["l"], np.where(done, length, 0))
            options = {"reset_mask": done.copy()}
            ref.reset(options={"reset_mask": done.copy()})
            wenv.reset(options=options)
            assert options == {}    # the wrapper consumed the mask, as it does on Sync
            returns += ret[done].tolist()
            lengths += length[done].tolist()
            ret[done], length[done] = 0.0, 0
            episodes += int(done.sum())
            partial += int(not done.all())
        else:
            assert "episode" not in info
    assert episodes >= 8 and partial >= 3
    assert list(wenv.return_queue) == returns and list(wenv.length_queue) == lengths


@pytest.mark.parametrize("mode", [NEXT, SAME], ids=lambda m: m.name)
def test_record_episode_statistics_queues_equal_sync(mode):
    ref, env = pair(mode)
    wref, wenv = W.RecordEpisodeStatistics(ref, buffer_length=50), \
        W.RecordEpisodeStatistics(env, buffer_length=50)
    run_pair(wref, wenv, mode, steps=80)
    assert len(wenv.return_queue) >= 8
    assert list(wenv.return_queue) == list(wref.return_queue)
    assert list(wenv.length_queue) == list(wref.length_queue)
    assert wenv.episode_count == wref.episode_count


def cleanrl_stack(env, gamma=0.99):
    """The wrapper stack of CleanRL's ppo_continuous_action.py, on a vector env."""
    env = W.RecordEpisodeStatistics(env)
    env = W.ClipAction(env)
    env = W.NormalizeObservation(env)
    env = W.TransformObservation(env, lambda o: np.clip(o, -10, 10))
    env = W.NormalizeReward(env, gamma=gamma)
    return W.TransformReward(env, lambda r: np.clip(r, -10, 10))


@pytest.mark.parametrize("copy", [True, False], ids=["copy", "no-copy"])
def test_cleanrl_wrapper_stack_equals_sync(copy):
    """A stack of stateful wrappers; copy=False must not leak buffer reuse into them."""
    ref, env = pair(NEXT, copy=copy)
    wref, wenv = cleanrl_stack(ref), cleanrl_stack(env)
    run_pair(wref, wenv, NEXT, steps=80, act_scale=2.0)
    obs_rms = wenv.env.env.env.obs_rms     # NormalizeObservation's running statistics
    ref_rms = wref.env.env.env.obs_rms
    assert obs_rms.count == ref_rms.count > 80 * N - N
    assert np.array_equal(obs_rms.mean, ref_rms.mean) and np.array_equal(obs_rms.var, ref_rms.var)


def test_make_vec_registered_id_with_wrappers():
    """gym.make_vec("cypool/<id>") gives a cypool env; wrappers go on afterwards."""
    env = gym.make_vec("cypool/" + TASK, num_envs=N, max_episode_steps=LIMIT,
                       autoreset_mode="same_step")
    assert isinstance(env.unwrapped, cypool.VectorEnv)
    ref = gym.make_vec(TASK, N, vectorization_mode="sync", max_episode_steps=LIMIT,
                       vector_kwargs={"autoreset_mode": SAME})
    run_pair(W.NormalizeReward(W.RecordEpisodeStatistics(ref)),
             W.NormalizeReward(W.RecordEpisodeStatistics(env)), SAME)
    env.close(), ref.close()


@pytest.mark.parametrize("mode", [NEXT, DISABLED], ids=lambda m: m.name)
def test_numpy_to_torch(mode):
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")   # gymnasium's torch conversion needs it too
    # (SAME_STEP's object-array final_obs cannot become a tensor, on SyncVectorEnv neither)
    ref, env = pair(mode)
    wref, wenv = W.NumpyToTorch(ref), W.NumpyToTorch(env)
    o_ref, _ = wref.reset(seed=1)
    o, _ = wenv.reset(seed=1)
    assert isinstance(o, torch.Tensor) and torch.equal(o, o_ref)
    rng = np.random.default_rng(1)
    dones = 0
    for _ in range(40):
        a = torch.as_tensor(rng.uniform(-1, 1, ref.action_space.shape))
        want, got = wref.step(a), wenv.step(a)
        for x, y in zip(got[:4], want[:4]):
            assert isinstance(x, torch.Tensor) and x.dtype == y.dtype and torch.equal(x, y)
        assert set(got[4]) == set(want[4])
        for k, v in want[4].items():
            assert torch.equal(got[4][k], v)
        done = want[2] | want[3]
        dones += int(done.sum())
        if mode == DISABLED and done.any():
            o_ref, _ = wref.reset(options={"reset_mask": done.clone()})
            o, _ = wenv.reset(options={"reset_mask": done.clone()})
            assert torch.equal(o, o_ref)
    assert dones >= 2
