"""The PointMaze ids through cypool.make_vec against gymnasium's SyncVectorEnv over
gymnasium.make(id) of the installed gymnasium-robotics, bit for bit: Dict observations,
rewards (sparse and dense), terminated, truncated (the registered limits) and info
("success"), across autoresets and goal resampling (continuing_task / reset_target), on one
and two threads, with a policy that drives the ball to its goal (so that goals are reached)."""
import warnings

import gymnasium as gym
import numpy as np
import pytest

import cypool

from _maze_ref import MODES, assert_info, assert_same  # noqa: E402


def policy(rng, obs, n, dtype=np.float32):
    """Towards the goal, damped, with noise and some out-of-range (clipped) actions."""
    d = obs["desired_goal"] - obs["achieved_goal"]
    a = 2.0 * d - 0.3 * obs["observation"][:, 2:] + rng.normal(0, 0.3, (n, 2))
    return a.astype(dtype)


def run(env_id, n, steps, seed, threads=1, mode="next_step", dtype=np.float32, attrs=None,
        **kwargs):
    """Step both side by side; the counts of successes, terminations and goal changes."""
    mine = cypool.make_vec(env_id, n, num_threads=threads, autoreset_mode=mode, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = gym.vector.SyncVectorEnv([lambda: gym.make(env_id, **kwargs) for _ in range(n)],
                                       autoreset_mode=MODES[mode])
    try:
        o, i = mine.reset(seed=seed)
        ro, ri = ref.reset(seed=seed)
        assert_same(o, ro, "reset obs")
        assert_info(i, ri, "reset")
        for name, values in (attrs or {}).items():     # per-env settings, both sides
            mine.set_attr(name, values)
            ref.set_attr(name, values)
        rng = np.random.default_rng(seed)
        seen = dict(success=0, term=0, trunc=0, goal_moves=0)
        for t in range(steps):
            a = policy(rng, ro, n, dtype)
            x, y = mine.step(a), ref.step(a)
            assert_same(x[0], y[0], f"step {t} obs")
            for k, name in ((1, "reward"), (2, "terminated"), (3, "truncated")):
                assert_same(x[k], y[k], f"step {t} {name}")
            assert_info(x[4], y[4], f"step {t}")
            seen["success"] += int(y[4]["success"].sum())
            seen["term"] += int(y[2].sum())
            seen["trunc"] += int(y[3].sum())
            seen["goal_moves"] += int((np.any(y[0]["desired_goal"] != ro["desired_goal"], 1)
                                       & ~(y[2] | y[3])).sum())
            ro = y[0]
        return seen
    finally:
        mine.close()
        ref.close()


@pytest.mark.parametrize("threads", [1, 2])
def test_umaze_default(threads):
    """Sparse, continuing, registered limit 300: truncations and autoresets."""
    seen = run("PointMaze_UMaze-v3", 6, 620, seed=11, threads=threads)
    assert seen["trunc"] == 12 and seen["success"] > 0


def test_umaze_episodic_same_step():
    """continuing_task=False: terminations at the goal, same-step autoreset (final obs)."""
    seen = run("PointMaze_UMaze-v3", 5, 300, seed=5, threads=2, mode="same_step",
               continuing_task=False)
    assert seen["term"] > 3


def test_umaze_dense_reset_target():
    """Dense rewards (numpy's exp); reached goals are resampled in place."""
    seen = run("PointMaze_UMazeDense-v3", 5, 320, seed=7, threads=2, reset_target=True)
    assert seen["goal_moves"] > 3 and seen["trunc"] == 5


@pytest.mark.parametrize("env_id,kwargs", [
    ("PointMaze_Open-v3", dict(reset_target=True)),
    ("PointMaze_Open_Diverse_GRDense-v3", dict(continuing_task=False)),
    ("PointMaze_Medium_Diverse_G-v3", {}),
    ("PointMaze_Large_Diverse_GR-v3", dict(reward_type="dense", reset_target=True)),
])
def test_other_mazes(env_id, kwargs):
    run(env_id, 4, 150, seed=3, threads=2, **kwargs)


def test_custom_maze_map():
    """A custom maze_map (the docs' example: two combined cells), goals resampled; float64
    actions."""
    C = "c"
    maze = [[1, 1, 1, 1, 1], [1, C, 0, C, 1], [1, 1, 1, 1, 1]]
    seen = run("PointMaze_UMaze-v3", 4, 200, seed=1, dtype=np.float64, maze_map=maze,
               reset_target=True)
    assert seen["success"] > 0


def test_per_env_settings():
    """set_attr per env: reward type and goal resampling differ between envs."""
    seen = run("PointMaze_UMaze-v3", 4, 250, seed=9, threads=2,
               attrs=dict(reset_target=[True, False, True, False],
                          reward_type=["dense", "sparse", "sparse", "dense"]))
    assert seen["goal_moves"] > 0
