"""The gymnasium VectorEnv contract: autoreset modes, reset_mask, seeding, spaces, buffers,
all checked against gymnasium's SyncVectorEnv on the same task; copy=False views are
read-only."""
import numpy as np
import pytest
import gymnasium as gym
from gymnasium.vector import AutoresetMode

import cypool

TASK = "Ant-v5"


def pair(mode, n=3, limit=15, **kw):
    ref = gym.make_vec(TASK, n, vectorization_mode="sync", max_episode_steps=limit,
                       vector_kwargs={"autoreset_mode": mode}, **kw)
    env = cypool.make_vec(TASK, n, autoreset_mode=mode, max_episode_steps=limit, **kw)
    return ref, env


def assert_info_equal(got, want):
    assert set(got) == set(want), (sorted(got), sorted(want))
    for key, val in want.items():
        if isinstance(val, dict):
            assert_info_equal(got[key], val)
        elif val.dtype == object:
            for a, b in zip(got[key], val):
                assert (a is None and b is None) or np.array_equal(a, b)
        else:
            assert got[key].dtype == val.dtype, key
            assert np.array_equal(got[key], val), key


def actions(space, rng):
    return rng.uniform(space.low, space.high).astype(np.float64)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_autoreset_modes_match_sync(mode):
    ref, env = pair(mode)
    assert env.metadata["autoreset_mode"] is mode and env.autoreset_mode is mode
    rng = np.random.default_rng(1)
    o_ref, i_ref = ref.reset(seed=4)
    o, i = env.reset(seed=4)
    assert np.array_equal(o, o_ref)
    assert_info_equal(i, i_ref)
    finals = 0
    for _ in range(50):
        a = actions(ref.action_space, rng)
        want, got = ref.step(a), env.step(a)
        for x, y in zip(got[:4], want[:4]):
            assert np.array_equal(x, y)
        assert_info_equal(got[4], want[4])
        finals += int((want[2] | want[3]).any())
    assert finals >= 3
    env.close()


def test_disabled_mode_and_reset_mask_match_sync():
    ref, env = pair(AutoresetMode.DISABLED)
    rng = np.random.default_rng(2)
    ref.reset(seed=9)
    env.reset(seed=9)
    resets = 0
    for _ in range(60):
        a = actions(ref.action_space, rng)
        want, got = ref.step(a), env.step(a)
        for x, y in zip(got[:4], want[:4]):
            assert np.array_equal(x, y)
        done = want[2] | want[3]
        if done.any():
            with pytest.raises(ValueError, match="DISABLED"):
                env.step(a)
            o_ref, i_ref = ref.reset(options={"reset_mask": done.copy()})
            o, i = env.reset(options={"reset_mask": done.copy()})
            assert np.array_equal(o, o_ref)
            assert_info_equal(i, i_ref)
            resets += 1
    assert resets >= 2


def test_partial_reset_with_seed_list_matches_sync():
    ref, env = pair(AutoresetMode.NEXT_STEP, n=4, limit=1000)
    ref.reset(seed=0)
    env.reset(seed=0)
    rng = np.random.default_rng(3)
    for _ in range(5):
        a = actions(ref.action_space, rng)
        ref.step(a), env.step(a)
    mask = np.array([True, False, True, False])
    seeds = [100, None, None, None]
    o_ref, i_ref = ref.reset(seed=seeds, options={"reset_mask": mask})
    o, i = env.reset(seed=seeds, options={"reset_mask": mask})
    assert np.array_equal(o, o_ref)
    assert_info_equal(i, i_ref)
    for _ in range(5):
        a = actions(ref.action_space, rng)
        assert np.array_equal(env.step(a)[0], ref.step(a)[0])


def test_seeding_rules():
    env = cypool.make_vec(TASK, 2, seed=5)
    first, _ = env.reset()                 # make_vec's seed is the first reset's default
    again, _ = env.reset(seed=5)
    assert np.array_equal(first, again)
    other, _ = env.reset(seed=6)
    assert not np.array_equal(other, first)
    assert np.array_equal(other[0], first[1])   # env i gets seed + i
    cont, _ = env.reset()                  # no seed: the streams continue
    assert not np.array_equal(cont, other)


def test_spaces_metadata_and_gymnasium_registration():
    env = gym.make_vec("cypool/Ant-v5", num_envs=4)
    assert isinstance(env.unwrapped, cypool.VectorEnv)
    assert isinstance(env, gym.vector.VectorEnv)
    assert env.num_envs == 4
    assert env.observation_space.shape == (4, 105)
    assert env.action_space.shape == (4, 8) and env.action_space.dtype == np.float32
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert env.metadata is not gym.vector.VectorEnv.metadata
    assert env.spec.id == "cypool/Ant-v5"
    obs, _ = env.reset(seed=0)
    assert obs.dtype == np.float64 and env.observation_space.contains(obs)
    env.close()
    assert "Ant-v5" in cypool.list_envs() and "Pusher-v5" in cypool.list_envs()


def test_copy_semantics():
    env = cypool.make_vec(TASK, 2)
    obs0, _ = env.reset(seed=0)
    kept = obs0.copy()
    env.step(np.zeros((2, 8)))
    assert np.array_equal(obs0, kept)        # default: returned arrays stay valid
    view = cypool.make_vec(TASK, 2, copy=False)
    o1, _ = view.reset(seed=0)
    o2, r2, *_ = view.step(np.zeros((2, 8)))
    assert np.shares_memory(o1, o2)          # zero-copy: the pool's own buffer
    assert not o1.flags.writeable and not r2.flags.writeable   # read-only views
    env.close(), view.close()


@pytest.mark.parametrize("env_id,act", [("Hopper-v5", np.zeros((2, 3))),
                                        ("Pong-v5", np.zeros(2, np.int64))])
def test_zero_copy_views_are_read_only(env_id, act):
    env = cypool.make_vec(env_id, 2, copy=False)
    try:
        obs, _ = env.reset(seed=0)
        keep = obs.copy()
        with pytest.raises(ValueError, match="read-only"):
            obs[...] = 7
        out = env.step(act)
        for a in out[:4]:
            with pytest.raises(ValueError, match="read-only"):
                a[...] = 0
        assert not np.shares_memory(keep, out[0])
        stats = env.episode_statistics(copy=False)
        with pytest.raises(ValueError, match="read-only"):
            stats["episodes"][0] = 5
    finally:
        env.close()


def test_atari_frame_stack_cannot_be_corrupted_through_a_view():
    env = cypool.make_vec("Pong-v5", 1, copy=False)
    ref = cypool.make_vec("Pong-v5", 1)
    try:
        o, _ = env.reset(seed=3)
        ref.reset(seed=3)
        with pytest.raises(ValueError):
            o[0, -1] = 255
        for _ in range(4):
            a = env.step(np.ones(1, np.int64))[0]
            b = ref.step(np.ones(1, np.int64))[0]
            assert np.array_equal(a, b)
    finally:
        env.close()
        ref.close()


def test_step_before_reset_and_closed_env():
    env = cypool.make_vec(TASK, 2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros((2, 8)))
    env.close()
    env.close()  # closing twice is fine
    with pytest.raises(cypool.ClosedEnvError):
        env.reset()


def test_episode_statistics_match_python_sums():
    env = cypool.make_vec(TASK, 3, max_episode_steps=10)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    ret = np.zeros(3)
    last = np.full(3, np.nan)
    for _ in range(35):
        _, r, term, trunc, _ = env.step(rng.uniform(-1, 1, (3, 8)))
        ret += r
        done = term | trunc
        last[done] = ret[done]
        ret[done] = 0.0
    stats = env.episode_statistics()
    assert np.array_equal(stats["return"], ret)
    assert np.array_equal(stats["last_return"][~np.isnan(last)], last[~np.isnan(last)])
    assert (stats["episodes"] >= 3).all()
