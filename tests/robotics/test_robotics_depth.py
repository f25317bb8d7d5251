"""Robotics render_mode="depth_array": each env's (height, width) float32 depth buffer equals
the installed gymnasium-robotics' env.render() after the same seed and actions, bit for bit,
for the ids whose reference lists the mode (mazes, Adroit, FrankaKitchen); the others (Fetch,
Shadow Hand: MujocoRobotEnv lists "rgb_array" only) and "rgbd_tuple" (listed by none) are
refused when the pool is made. The comparison is test_robotics_render's ``compare`` (frames
and the observations between them, one reference env at a time, EGL) in the mode."""

import gymnasium as gym
import numpy as np
import pytest

import cypool

from test_robotics_render import compare, egl  # noqa: F401  (egl: autouse, MUJOCO_GL=egl)


def depth(env_id, kw, schedule):
    """test_robotics_render.compare in "depth_array", and the frames drew something: float32
    depths, not one constant."""
    compare(env_id, kw, schedule=schedule, mode="depth_array")
    env = cypool.make_vec(env_id, 1, render_mode="depth_array", **kw)
    try:
        env.reset(seed=1)
        frame, = env.render()
    finally:
        env.close()
    assert frame.dtype == np.float32 and frame.shape == (kw["height"], kw["width"])
    assert frame.min() < frame.max() <= 1.0


SCHEDULE = ["render", "step", "step", "render", "reset", "step", "render"]


def test_point_maze():
    depth("PointMaze_UMaze-v3", dict(width=48, height=40), SCHEDULE)


def test_ant_maze():
    depth("AntMaze_UMaze-v5", dict(width=40, height=32), SCHEDULE)


def test_adroit():
    """Each env's frame is of its own model (the pen's target drawn at reset)."""
    depth("AdroitHandPen-v1", dict(width=48, height=40), ["step", "render", "reset", "render"])


def test_kitchen():
    depth("FrankaKitchen-v1", dict(width=40, height=32, default_camera_config=dict(
        distance=3.0, azimuth=10.0, elevation=-20.0)), ["render", "step", "render"])


@pytest.mark.parametrize("env_id,modes", [
    ("PointMaze_UMaze-v3", ["rgb_array", "depth_array"]),
    ("AntMaze_UMaze-v4", ["rgb_array", "depth_array"]),
    ("AdroitHandDoor-v1", ["rgb_array", "depth_array"]),
    ("FrankaKitchen-v1", ["rgb_array", "depth_array"]),
    ("FetchReach-v4", ["rgb_array"]),
    ("HandManipulateEgg-v1", ["rgb_array"]),
])
def test_modes_offered(env_id, modes):
    """metadata["render_modes"]: the reference's, less "human"; any other mode is refused
    when the pool is made, naming the modes the id has."""
    ref = gym.spec(env_id).entry_point
    ref = gym.envs.registration.load_env_creator(ref) if isinstance(ref, str) else ref
    assert [m for m in ref.metadata["render_modes"] if m != "human"] == modes
    env = cypool.make_vec(env_id, 1)
    try:
        assert env.metadata["render_modes"] == modes
    finally:
        env.close()
    for mode in {"depth_array", "rgbd_tuple"} - set(modes):
        with pytest.raises(ValueError, match=rf"render_mode='{mode}'.*offers \['rgb_array'"):
            cypool.make_vec(env_id, 1, render_mode=mode)
