"""get_state / set_state on one id of each robotics kind (PointMaze, AntMaze, Fetch, the Shadow
Hand, Adroit, Franka Kitchen): a snapshot (pickled and unpickled) taken mid-episode, restored
into the same pool and into a fresh pool reset with another seed, continues bit for bit as
gymnasium-robotics' SyncVectorEnv continued from that point, across an autoreset (the random
stream, the goals and the model values drawn at reset are in the snapshot)."""
import pickle

import numpy as np
import pytest

import cypool

from _fetch_ref import assert_info, assert_same, reference  # noqa: E402

LIMIT = 5           # the time limit: the continuation crosses an autoreset
BEFORE, AFTER = 3, 6


def _check(x, y, where):
    for k, name in enumerate(("obs", "reward", "terminated", "truncated")):
        assert_same(x[k], y[k], f"{where} {name}")
    assert_info(x[4], y[4], where)


@pytest.mark.parametrize("env_id, dtype", [
    ("PointMaze_UMaze-v3", np.float32), ("AntMaze_UMaze-v5", np.float32),
    ("FetchPickAndPlace-v4", np.float32), ("HandManipulateBlock-v1", np.float32),
    ("AdroitHandRelocate-v1", np.float32), ("FrankaKitchen-v1", np.float64)])
def test_snapshot_continues_as_the_reference(env_id, dtype):
    n = 2
    mine = cypool.make_vec(env_id, n, num_threads=2, max_episode_steps=LIMIT)
    other = cypool.make_vec(env_id, n, num_threads=1, max_episode_steps=LIMIT)
    ref = reference(env_id, n, "next_step", max_episode_steps=LIMIT)
    shape = (BEFORE + AFTER, n) + mine.single_action_space.shape
    acts = np.random.default_rng(5).uniform(-1, 1, shape).astype(dtype)
    try:
        o, i = mine.reset(seed=11)
        ro, ri = ref.reset(seed=11)
        assert_same(o, ro, "reset")
        for t in range(BEFORE):
            _check(mine.step(acts[t]), ref.step(acts[t]), f"step {t}")
        snap = pickle.loads(pickle.dumps(mine.get_state()))
        want = [ref.step(a) for a in acts[BEFORE:]]
        assert any(w[3].any() for w in want)               # an autoreset after the snapshot
        for a in acts[BEFORE:]:                             # the pool moves on, then back
            mine.step(a)
        mine.set_state(snap)
        other.reset(seed=99)
        other.step(acts[0])
        other.set_state(snap)
        for k, a in enumerate(acts[BEFORE:]):
            _check(mine.step(a), want[k], f"restored step {BEFORE + k}")
            _check(other.step(a), want[k], f"restored in another pool, step {BEFORE + k}")
    finally:
        mine.close()
        other.close()
        ref.close()


@pytest.mark.parametrize("env_id", ["FetchPush-v4", "HandReach-v3"])
def test_from_pixels_snapshot_continues(env_id):
    """from_pixels: a snapshot restored into a pool with another history continues with the
    same frames and the same whole env state, step by step, as the pool it came from."""
    n, size = 2, dict(width=32, height=24)
    mine = cypool.make_vec(env_id, n, num_threads=2, from_pixels=True, **size)
    other = cypool.make_vec(env_id, n, num_threads=1, from_pixels=True, **size)
    acts = np.random.default_rng(3).uniform(
        -1, 1, (BEFORE + AFTER, n) + mine.single_action_space.shape).astype(np.float32)
    try:
        mine.reset(seed=4)
        for a in acts[:BEFORE]:
            mine.step(a)
        snap = pickle.loads(pickle.dumps(mine.get_state()))
        want, states = [], []
        for a in acts[BEFORE:]:
            want.append(mine.step(a)[0])
            states.append(pickle.dumps(mine.get_state()))
        other.reset(seed=8)
        for a in acts[::-1]:
            other.step(a)
        other.set_state(snap)
        for k, a in enumerate(acts[BEFORE:]):
            assert np.array_equal(other.step(a)[0], want[k]), k
            assert pickle.dumps(other.get_state()) == states[k], k
    finally:
        mine.close()
        other.close()


def test_render_state_is_the_reference_models_target_position(monkeypatch):
    """Fetch's render callback places target0 at goal - (site_xpos - site_pos)[0], the
    offset taken with the position its own model kept from the last frame: the env state's
    render_state. An env restored with a kept position whose offset is inexact (target0's
    body sits at x=0.8: position + 0.8 rounds) places target0 where the reference env, its
    model holding that position, does, and keeps what the reference's model keeps."""
    import gymnasium as gym
    import mujoco
    monkeypatch.setenv("MUJOCO_GL", "egl")
    env = cypool.make_vec("FetchPush-v4", 1, render_mode="rgb_array", width=32, height=24)
    ref = gym.make("FetchPush-v4", render_mode="rgb_array", width=32, height=24)
    try:
        env.reset(seed=6)
        ref.reset(seed=6)
        m, d = ref.unwrapped.model, ref.unwrapped.data
        site = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "target0")
        kept = np.array([0.35, 0.35, 0.5])     # 0.35 + 0.8 - 0.35 != 0.8 (and with 0.75)
        body = d.xpos[m.site_bodyid[site]]
        assert ((kept + body) - kept != body)[:2].all()
        m.site_pos[site] = kept
        mujoco.mj_kinematics(m, d)              # the data of a step taken with that model
        state = env.get_state()
        state["envs"][0]["env"]["render_state"] = kept.tobytes()
        env.set_state(state)
        frame, want = env.render()[0], ref.render()
        got = np.frombuffer(env.get_state()["envs"][0]["env"]["render_state"])
        assert np.array_equal(got, m.site_pos[site])
        assert not np.array_equal(got, kept)
        assert np.array_equal(frame, want)
    finally:
        env.close()
        ref.close()
