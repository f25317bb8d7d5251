"""reset(options=) with gymnasium-robotics' goal_cell / reset_cell on the maze ids, against the
reference's SyncVectorEnv (which passes the same options to every env) and single envs (one
cell per env); bad cells refused before any env moves."""
import warnings

import gymnasium as gym
import numpy as np
import pytest

from tests.robotics._maze_ref import assert_info, assert_same

import cypool

# maps.U_MAZE: (1, 1), (1, 3), (3, 1) are free cells; (2, 1) is a wall
WALL, FREE_A, FREE_B = (2, 1), (1, 1), (3, 1)


def ref_vec(env_id, n, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.vector.SyncVectorEnv([lambda: gym.make(env_id, **kwargs) for _ in range(n)])


def ref_env(env_id, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.make(env_id, **kwargs)


def steps(mine, ref, n_act, k, seed):
    rng = np.random.default_rng(seed)
    for t in range(k):
        a = rng.uniform(-1, 1, (mine.num_envs, n_act)).astype(np.float32)
        x, y = mine.step(a), ref.step(a)
        for j, name in enumerate(("obs", "reward", "terminated", "truncated")):
            assert_same(x[j], y[j], f"step {t} {name}")
        assert_info(x[4], y[4], f"step {t}")


@pytest.mark.parametrize("env_id, n_act, cells", [
    ("PointMaze_UMaze-v3", 2, (FREE_A, FREE_B)),
    ("PointMaze_Medium_Diverse_GR-v3", 2, ((1, 1), (6, 5))),     # 'c' cells
    ("AntMaze_UMaze-v5", 8, (FREE_A, FREE_B)), ("AntMaze_UMaze-v4", 8, (FREE_A, FREE_B)),
    ("AntMaze_UMaze-v3", 8, (FREE_A, FREE_B))])
def test_same_cells_for_every_env(env_id, n_act, cells):
    """goal_cell, reset_cell, both, and no options again (the cells serve one reset only)."""
    n = 3
    FREE_A, FREE_B = cells
    mine, ref = cypool.make_vec(env_id, n), ref_vec(env_id, n)
    try:
        for seed, options in ((5, {"goal_cell": FREE_A}), (6, {"reset_cell": FREE_B}),
                              (7, {"goal_cell": np.array(FREE_B), "reset_cell": FREE_A}),
                              (None, {"goal_cell": None}), (None, None)):
            o, i = mine.reset(seed=seed, options=options)
            ro, ri = ref.reset(seed=seed, options=options)
            assert_same(o, ro, f"reset {options}")
            assert_info(i, ri, f"reset {options}")
            steps(mine, ref, n_act, 2, 0 if seed is None else seed)
    finally:
        mine.close()
        ref.close()


def test_one_cell_per_env_and_reset_mask():
    env_id, n = "PointMaze_Medium-v3", 3
    goals = np.array([[1, 1], [6, 6], [3, 4]])
    resets = np.array([[6, 6], [1, 1], [5, 1]])
    mine = cypool.make_vec(env_id, n, num_threads=2)
    refs = [ref_env(env_id) for _ in range(n)]
    try:
        o, _ = mine.reset(seed=3, options={"goal_cell": goals, "reset_cell": resets})
        for k, env in enumerate(refs):
            ro, _ = env.reset(seed=3 + k, options={"goal_cell": goals[k],
                                                   "reset_cell": resets[k]})
            for key in ro:
                assert np.array_equal(o[key][k], ro[key]), (k, key)
        # a partial reset: only env 1 takes its cells, from its continuing stream
        mask = np.array([False, True, False])
        before = {key: v.copy() for key, v in o.items()}
        o, _ = mine.reset(options={"reset_mask": mask, "goal_cell": goals[::-1].copy()})
        ro, _ = refs[1].reset(options={"goal_cell": goals[1]})
        for key in ro:
            assert np.array_equal(o[key][1], ro[key]), key
            assert np.array_equal(o[key][[0, 2]], before[key][[0, 2]]), key
    finally:
        mine.close()
        for env in refs:
            env.close()


@pytest.mark.parametrize("options, match", [
    ({"goal_cell": WALL}, "wall cell"), ({"reset_cell": (0, 0)}, "wall cell"),
    ({"goal_cell": (5, 1)}, "outside"), ({"reset_cell": (1, -1)}, "outside"),
    ({"goal_cell": (1, 1, 1)}, "shape"), ({"goal_cell": np.ones((3, 2), int)}, "shape"),
    ({"goal_cell": (1.0, 1.0)}, "integer"), ({"reset_cell": np.array([True, True])}, "integer"),
    ({"goal_cell": "ab"}, "integer"), ({"goal_cel": (1, 1)}, "unknown reset option")])
def test_bad_cells_refused_before_any_env_moves(options, match):
    env_id = "PointMaze_UMaze-v3"
    mine, ref = cypool.make_vec(env_id, 2), ref_vec(env_id, 2)
    try:
        o, _ = mine.reset(seed=1)
        ref.reset(seed=1)
        with pytest.raises(ValueError, match=match):
            mine.reset(options=options)
        o, _ = mine.reset()
        ro, _ = ref.reset()
        assert_same(o, ro, "reset after the refused one")
    finally:
        mine.close()
        ref.close()


def test_goal_cell_no_reset_cell_can_be_drawn_for():
    """The only reset cell is the given goal cell: the reference would loop forever."""
    maze_map = [[1, 1, 1, 1], [1, "r", 0, 1], [1, 1, 1, 1]]
    mine = cypool.make_vec("PointMaze_UMaze-v3", 2, maze_map=maze_map)
    try:
        mine.reset(seed=0)
        with pytest.raises(ValueError, match="give a reset_cell"):
            mine.reset(options={"goal_cell": (1, 1)})
        o, _ = mine.reset(options={"goal_cell": (1, 1), "reset_cell": (1, 1)})
        assert np.all(np.abs(o["observation"][:, :2] - [-0.5, 0.0]) <= 0.25)
    finally:
        mine.close()
