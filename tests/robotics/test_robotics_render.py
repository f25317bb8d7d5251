"""Robotics render_mode="rgb_array": each env's frame equals the installed
gymnasium-robotics' env.render() after the same seed and actions, bit for bit (EGL; one
reference env at a time, alone, as gymnasium renders right only then; small frames to keep
it fast). Fetch: the target site moved to the goal and mj_forward (its _render_callback);
mazes: the target site at the goal."""
import warnings

import gymnasium as gym
import numpy as np
import pytest

import cypool

from _fetch_ref import patch_reference  # noqa: F401  (Fetch/Hand references run)


@pytest.fixture(autouse=True)
def egl(monkeypatch):
    monkeypatch.setenv("MUJOCO_GL", "egl")


def _leaves(obs, i=None):
    """An observation's arrays (a Dict's, key by key), env i's rows where i is given."""
    if isinstance(obs, dict):
        return [x for k in sorted(obs) for x in _leaves(obs[k], i)]
    return [np.asarray(obs if i is None else obs[i])]


def _frames(env_id, n, kw, seed, schedule, mode):
    """cypool's frames of every env at the "render" entries of ``schedule``, its
    observations after each entry, and the actions it stepped."""
    env = cypool.make_vec(env_id, n, num_threads=2, render_mode=mode,
                          autoreset_mode="disabled", **kw)
    space = env.single_action_space
    rng = np.random.default_rng(seed)
    actions = [rng.uniform(space.low, space.high, (n,) + space.shape).astype(np.float32)
               for _ in schedule]
    out, obs = [], []
    try:
        o, _ = env.reset(seed=seed)
        for t, what in enumerate(schedule):
            if what == "reset":
                o, _ = env.reset()
            elif what == "step":
                o = env.step(actions[t])[0]
            else:
                out.append(env.render())
            obs.append(o)
    finally:
        env.close()
    return out, obs, actions


def compare(env_id, kw, n=2, seed=3, schedule=None, mode="rgb_array"):
    """Frames in render mode ``mode`` (and the observations between them: rendering leaves
    the envs in step with the reference's, whose callbacks write into its data) of ``n``
    envs equal the reference's, each env against its own reference env seeded seed + i."""
    schedule = schedule or ["render", "step", "step", "render", "step", "render", "reset",
                            "render", "step", "render"]
    got, obs, actions = _frames(env_id, n, kw, seed, schedule, mode)
    for i in range(n):                      # one reference env at a time, alone
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = gym.make(env_id, render_mode=mode, disable_env_checker=True, **kw)
        try:
            o, _ = ref.reset(seed=seed + i)
            k = 0
            for t, what in enumerate(schedule):
                if what == "reset":
                    o, _ = ref.reset()
                elif what == "step":
                    o = ref.step(actions[t][i])[0]
                for x, y in zip(_leaves(obs[t], i), _leaves(o)):
                    assert np.array_equal(x, y), (env_id, i, t, "obs")
                if what == "render":
                    want = ref.render()
                    frame = got[k][i]
                    assert frame.dtype == want.dtype and frame.shape == want.shape, \
                        (env_id, i, t, frame.shape, want.shape)
                    assert np.array_equal(frame, want), (env_id, i, t,
                                                         int((frame != want).sum()))
                    k += 1
        finally:
            ref.close()


@pytest.mark.parametrize("env_id", ["FetchReach-v4", "FetchPickAndPlaceDense-v4"])
def test_fetch(env_id):
    compare(env_id, dict(width=64, height=48))


def test_fetch_camera_config():
    compare("FetchPush-v4", dict(width=40, height=40, default_camera_config=dict(
        distance=1.5, azimuth=90.0, elevation=-30.0, lookat=np.array([1.2, 0.7, 0.4]))),
        schedule=["step", "render", "step", "render"])


@pytest.mark.parametrize("env_id,kw", [
    ("PointMaze_UMaze-v3", dict(width=48, height=48)),
    ("PointMaze_MediumDense-v3", dict(width=40, height=56, camera_id=-1)),
])
def test_point_maze(env_id, kw):
    compare(env_id, kw)


@pytest.mark.parametrize("env_id,kw", [
    ("AntMaze_UMaze-v5", dict(width=48, height=40)),
    ("AntMaze_OpenDense-v3", dict(width=40, height=40, camera_id=-1)),
])
def test_ant_maze(env_id, kw):
    compare(env_id, kw, schedule=["render", "step", "step", "render", "reset", "step",
                                  "render"])


@pytest.mark.parametrize("env_id", ["HandReach-v3", "HandManipulateBlockRotateZ-v1",
                                    "HandManipulatePenDense-v1"])
def test_hand(env_id):
    compare(env_id, dict(width=48, height=48), schedule=["render", "step", "render", "step",
                                                         "step", "render", "reset", "render"])


@pytest.mark.parametrize("env_id", ["AdroitHandDoorSparse-v1", "AdroitHandPen-v1"])
def test_adroit(env_id):
    """Each env's frame shows its own model (the targets drawn at reset live there)."""
    compare(env_id, dict(width=48, height=40), schedule=["step", "render", "step", "render",
                                                         "reset", "render"])


def test_kitchen():
    compare("FrankaKitchen-v1", dict(width=40, height=40, default_camera_config=dict(
        distance=3.0, azimuth=10.0, elevation=-20.0)), schedule=["render", "step", "render"])


def test_misuse_refused():
    """Only "rgb_array"; a bad camera config and an unknown camera are refused when the
    pool is made."""
    with pytest.raises(ValueError, match="render_mode"):
        cypool.make_vec("FetchReach-v4", 1, render_mode="depth_array")
    with pytest.raises(ValueError, match="render_mode"):
        cypool.make_vec("HandManipulateBlock_BooleanTouchSensors-v1", 1,
                        render_mode="depth_array")
    with pytest.raises(ValueError, match="default_camera_config"):
        cypool.make_vec("FetchReach-v4", 1, render_mode="rgb_array",
                        default_camera_config=dict(fovy=3.0))
    with pytest.raises(ValueError, match="camera_id"):
        cypool.make_vec("PointMaze_UMaze-v3", 1, render_mode="rgb_array", camera_id=7)
    env = cypool.make_vec("PointMaze_UMaze-v3", 1)
    try:
        with pytest.raises(Exception, match="render_mode"):
            env.render()
    finally:
        env.close()
