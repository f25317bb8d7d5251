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
