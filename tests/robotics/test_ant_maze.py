"""The AntMaze ids through cypool.make_vec against gymnasium's SyncVectorEnv over
gymnasium.make(id) of the installed gymnasium-robotics, bit for bit: Dict observations,
rewards (sparse and dense), terminated, truncated (the registered limits) and info (the Ant's
keys and "success"), across autoresets and goal resampling, random actions. An ant moving at
random never reaches a goal (reset cells are 2 m or more from it), so every few steps both
sides get the same goal planted next to the ant (cypool: its env state's task_state; the
reference: env.unwrapped.goal): success, termination and resampling all happen."""
import warnings

import gymnasium as gym
import numpy as np
import pytest

import cypool
from cypool.robotics import goals
from cypool.robotics.ant_maze import ANT_MAZE

from _maze_ref import MODES, assert_info, assert_same  # noqa: E402


def plant_goals(mine, ref, achieved, rng):
    """Both sides' goals := the ant's position + a small offset (within 0.45 for some)."""
    state = mine.get_state()
    for i, env in enumerate(state["envs"]):
        goal = achieved[i] + rng.uniform(-0.5, 0.5, 2)
        env["env"]["task_state"] = goal.astype(np.float64).tobytes()
        ref.envs[i].unwrapped.goal = goal.copy()
    mine.set_state(state)


def run(env_id, n, steps, seed, threads=1, mode="next_step", dtype=np.float32, plant=7,
        attrs=None, **kwargs):
    """Step both side by side; counts of successes, terminations, truncations, goal moves."""
    mine = cypool.make_vec(env_id, n, num_threads=threads, autoreset_mode=mode, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = gym.vector.SyncVectorEnv([lambda: gym.make(env_id, **kwargs) for _ in range(n)],
                                       autoreset_mode=MODES[mode])
    try:
        assert mine.single_observation_space == ref.single_observation_space
        assert mine.single_action_space == ref.single_action_space
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
            if plant and t % plant == plant - 1:
                plant_goals(mine, ref, ro["achieved_goal"], rng)
            goal = np.stack([e.unwrapped.goal for e in ref.envs])
            a = rng.uniform(-1, 1, (n, 8)).astype(dtype)
            x, y = mine.step(a), ref.step(a)
            assert_same(x[0], y[0], f"step {t} obs")
            for k, name in ((1, "reward"), (2, "terminated"), (3, "truncated")):
                assert_same(x[k], y[k], f"step {t} {name}")
            assert_info(x[4], y[4], f"step {t}")
            seen["success"] += int(y[4].get("success", np.zeros(1, bool)).sum())
            seen["term"] += int(y[2].sum())
            seen["trunc"] += int(y[3].sum())
            after = np.stack([e.unwrapped.goal for e in ref.envs])
            seen["goal_moves"] += int((np.any(after != goal, 1) & ~(y[2] | y[3])).sum())
            ro = y[0]
        return seen
    finally:
        mine.close()
        ref.close()


@pytest.mark.parametrize("threads", [1, 2])
def test_umaze_v5_sparse(threads):
    """Registered limit 700: truncations and autoresets; successes (continuing task)."""
    seen = run("AntMaze_UMaze-v5", 3, 710, seed=11, threads=threads, plant=11 * threads)
    assert seen["trunc"] == 3 and seen["success"] > 5


def test_umaze_v5_dense_episodic_same_step():
    """Dense rewards (numpy's exp); continuing_task=False: terminations at the goal,
    same-step autoreset (final observations)."""
    seen = run("AntMaze_UMazeDense-v5", 3, 150, seed=5, threads=2, mode="same_step",
               continuing_task=False)
    assert seen["term"] > 5


def test_medium_diverse_gr_v5_reset_target():
    """Many goal and reset cells; reached goals are resampled in place."""
    seen = run("AntMaze_Medium_Diverse_GR-v5", 3, 150, seed=3, threads=2, reset_target=True)
    assert seen["goal_moves"] > 5


@pytest.mark.parametrize("env_id,kwargs", [
    ("AntMaze_UMaze-v4", {}),
    ("AntMaze_Large_Diverse_GDense-v4", dict(use_contact_forces=True, reset_target=True)),
    ("AntMaze_Open_Diverse_GR-v5", dict(include_cfrc_ext_in_observation=False, frame_skip=3,
                                        healthy_reward=2, ctrl_cost_weight=0.1)),
    ("AntMaze_Large-v5", dict(continuing_task=False, main_body="torso")),
])
def test_other_ids_and_ant_kwargs(env_id, kwargs):
    run(env_id, 2, 60, seed=2, **kwargs)


@pytest.mark.parametrize("env_id,kwargs", [
    ("AntMaze_UMaze-v3", {}),
    ("AntMaze_Medium_Diverse_GRDense-v3", {}),
    ("AntMaze_Open_Diverse_G-v3", dict(continuing_task=False)),
])
def test_v3(env_id, kwargs):
    """maze.py's MazeEnv: one new goal drawn inside compute_terminated, the reward measured
    against it; no "success"."""
    seen = run(env_id, 2, 80, seed=4, threads=2, **kwargs)
    assert seen["goal_moves"] + seen["term"] > 0


def test_per_env_settings():
    """set_attr per env: reward type, episodic or not, goal resampling differ between envs."""
    seen = run("AntMaze_Medium-v5", 4, 60, seed=9, threads=2,
               attrs=dict(reset_target=[True, False, True, False],
                          continuing_task=[True, True, False, False],
                          reward_type=["dense", "sparse", "sparse", "dense"]))
    assert seen["term"] > 0 and seen["goal_moves"] > 0


def test_custom_maze_float64_actions():
    C = "c"
    maze = [[1, 1, 1, 1, 1], [1, C, 0, C, 1], [1, 1, 1, 1, 1]]
    seen = run("AntMaze_UMaze-v5", 2, 60, seed=1, dtype=np.float64, maze_map=maze,
               reset_target=True)
    assert seen["success"] > 0


def test_ids_match_the_reference_registry():
    ref = {k: s for k, s in gym.registry.items() if k.startswith("AntMaze_")}
    assert sorted(ANT_MAZE) == sorted(ref) and len(ref) == 60
    ids = set(cypool.list_envs())
    for env_id, s in ref.items():
        assert env_id in ids
        spec = cypool.registry.spec_of(env_id)
        assert spec.max_episode_steps == s.max_episode_steps, env_id
        assert spec.kwargs["maze_map"].default == s.kwargs["maze_map"]
        assert spec.kwargs["reward_type"].default == s.kwargs["reward_type"]
        assert set(s.kwargs) == {"maze_map", "reward_type"}


@pytest.mark.parametrize("reward_type", ["sparse", "dense"])
def test_compute_reward_batch(reward_type):
    """compute_reward on a (256, 2) batch, and the pool's per-env goal functions, equal
    AntMazeEnv's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = gym.make("AntMaze_UMaze-v5", reward_type=reward_type).unwrapped
    rng = np.random.default_rng(0)
    a = rng.normal(0, 0.4, (256, 2))
    d = a + rng.normal(0, 0.3, (256, 2))
    want = ref.compute_reward(a, d, {})
    got = goals.compute_reward(reward_type, a, d, {})
    assert got.dtype == want.dtype and np.array_equal(got, want)
    pool = cypool.make_vec("AntMaze_UMaze-v5", 2, reward_type=reward_type)
    try:
        for r in goals.call(pool, "compute_reward", a, d, {}):
            assert np.array_equal(r, want)
    finally:
        pool.close()
    for cont in (True, False):
        ref.continuing_task = cont
        assert goals.compute_terminated(cont, a, d, {}) == ref.compute_terminated(a, d, {})
        assert goals.compute_terminated(cont, a[0], a[0], {}) == \
            ref.compute_terminated(a[0], a[0], {})


@pytest.mark.parametrize("env_id,kwargs,exc", [
    ("AntMaze_UMaze-v5", dict(reset_noise_scale=0.1), TypeError),     # AntMazeEnv sets it
    ("AntMaze_UMaze-v5", dict(exclude_current_positions_from_observation=True), TypeError),
    ("AntMaze_UMaze-v4", dict(xml_file="ant.xml"), TypeError),
    ("AntMaze_UMaze-v4", dict(frame_skip=3), TypeError),              # fixed in Ant-v4
    ("AntMaze_UMaze-v3", dict(reset_target=True), TypeError),
    ("AntMaze_UMaze-v5", dict(maze_size_scaling=2), TypeError),
    ("AntMaze_UMaze-v5", dict(reward_type="shaped"), ValueError),
    ("AntMaze_UMaze-v5", dict(maze_map=[[1, 2], [0, 1]]), ValueError),
    ("AntMaze_UMaze-v5", dict(healthy_z_range=(0.2,)), TypeError),
    ("AntMaze_UMaze-v5", dict(frame_skip=0), ValueError),
    ("AntMaze_UMaze-v5", dict(xml_file="/nonexistent/ant.xml"), ValueError),
])
def test_bad_kwargs_refused(env_id, kwargs, exc):
    with pytest.raises(exc):
        cypool.make_vec(env_id, 1, **kwargs)


def test_bad_actions_refused():
    env = cypool.make_vec("AntMaze_UMaze-v5", 2)
    try:
        env.reset(seed=0)
        with pytest.raises(ValueError):
            env.step(np.zeros((2, 2), np.float32))
        with pytest.raises(ValueError):
            env.step(np.full((2, 8), np.nan, np.float32))
    finally:
        env.close()


def test_every_id_briefly():
    """Every id: reset, a few steps with a goal planted (one env each)."""
    for env_id in sorted(ANT_MAZE):
        run(env_id, 1, 4, seed=len(env_id), plant=2)
