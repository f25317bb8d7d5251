"""The PointMaze ids: the same ids, maps, reward types and limits as gymnasium-robotics'
registry; bad kwargs refused before any env is made; the missing package named with its
extra; snapshots carry the goal."""
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest

import cypool
from cypool.robotics import maze

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    gymnasium_robotics = pytest.importorskip("gymnasium_robotics")
gym.register_envs(gymnasium_robotics)


def test_ids_match_the_reference_registry():
    ref = {k: s for k, s in gym.registry.items()
           if k.startswith("PointMaze_") and k.endswith("-v3")}
    assert sorted(ref) == sorted(maze.POINT_MAZE)
    ids = set(cypool.list_envs())
    for env_id, s in ref.items():
        assert env_id in ids
        spec = cypool.registry.spec_of(env_id)
        assert spec.max_episode_steps == s.max_episode_steps
        assert spec.kwargs["maze_map"].default == s.kwargs["maze_map"]
        assert spec.kwargs["reward_type"].default == s.kwargs["reward_type"]
        assert set(s.kwargs) == {"maze_map", "reward_type"}


@pytest.mark.parametrize("kwargs,exc,text", [
    (dict(reward_type="shaped"), ValueError, "reward_type"),
    (dict(continuing_task=1), TypeError, "continuing_task"),
    (dict(maze_map=[[1, 1, 1], [1, "r", 1], [1, 1, 1]]), ValueError, "goal"),
    (dict(maze_map=[[1, 1, 1], [1, "g", 1], [1, 1, 1]]), ValueError, "start"),
    (dict(maze_map=[[1, 1, 1], [1, "c", 1], [1, 1, 1]]), ValueError, "forever"),
    (dict(maze_map=[[1, 1, 1], [1, 1, 1]]), ValueError, "goal"),
    (dict(maze_map=[[1, 1, 1], [1, 0], [1, 1, 1]]), ValueError, "rectangular"),
    (dict(maze_map=[[1, 1, 1], [1, 2, 0], [1, 1, 1]]), ValueError, "maze_map\\[1\\]\\[1\\]"),
    (dict(maze_map=[[1, 1, 1], [1, True, 0], [1, 1, 1]]), ValueError, "maze_map"),
    (dict(maze_map="U"), TypeError, "maze_map"),
    (dict(frame_skip=2), (TypeError, ValueError), "frame_skip"),
])
def test_bad_kwargs_refused(kwargs, exc, text):
    with pytest.raises(exc, match=text):
        cypool.make_vec("PointMaze_UMaze-v3", 2, **kwargs)


def test_missing_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "gymnasium_robotics.envs.maze", None)
    monkeypatch.setattr(maze, "_SPECS", {})
    with pytest.raises(ImportError, match=r'pip install "cypool\[robotics\]"'):
        cypool.make_vec("PointMaze_Open-v3", 1)


def test_snapshot_keeps_the_goal():
    env = cypool.make_vec("PointMaze_UMaze-v3", 2, reset_target=True)
    try:
        env.reset(seed=4)
        act = np.full((2, 2), 0.3, np.float32)
        for _ in range(5):
            env.step(act)
        state = env.get_state()
        a = [env.step(act) for _ in range(30)]
        env.set_state(state)
        b = [env.step(act) for _ in range(30)]
        for x, y in zip(a, b):
            for k in x[0]:
                assert np.array_equal(x[0][k], y[0][k])
            assert np.array_equal(x[1], y[1])
    finally:
        env.close()


def test_gymnasium_make():
    env = gym.make("cypool/PointMaze_UMaze-v3")
    obs, info = env.reset(seed=0)
    assert list(obs) == ["achieved_goal", "desired_goal", "observation"]
    assert env.spec.max_episode_steps == 300
    env.close()
