"""cypool.envpool's Gymnasium-Robotics ids with from_pixels=True (EnvPool 1.2.5 accepts it
for every robotics id): EnvPool's layout (its make_spec's space and pixel options), and each
observation the channels-first frame gymnasium-robotics' render() gives after the same reset
or step (render_width x render_height, render_camera_id -1: the free camera), bit for bit."""
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import cypool.envpool as cep

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "robotics"))
from _envpool_ref import envpool_or_none  # noqa: E402
from _fetch_ref import patch_reference  # noqa: E402,F401  (the Fetch/Hand references run)

SIZE = dict(render_width=48, render_height=40)


@pytest.fixture(autouse=True)
def egl(monkeypatch):
    monkeypatch.setenv("MUJOCO_GL", "egl")


def _reference(own, camera):
    kw = dict(width=SIZE["render_width"], height=SIZE["render_height"])
    if camera:
        kw["camera_id"] = -1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.make(own, render_mode="rgb_array", disable_env_checker=True, **kw)


@pytest.mark.parametrize("task,own,camera", [
    ("FetchPush-v1", "FetchPush-v4", False),
    ("HandManipulateEgg_BooleanTouchSensors-v0", "HandManipulateEgg_BooleanTouchSensors-v1",
     False),
    ("HandReachDense-v3", "HandReachDense-v3", False),
    ("PointMaze_UMaze-v3", "PointMaze_UMaze-v3", True),
    ("AdroitHandDoorSparse-v1", "AdroitHandDoorSparse-v1", True),
])
def test_pixel_observations_are_the_reference_frames(task, own, camera):
    n, seed = 2, 7
    env = cep.make_gymnasium(task, num_envs=n, from_pixels=True, seed=seed, **SIZE)
    rng = np.random.default_rng(0)
    actions = [rng.uniform(-1, 1, (n,) + env.action_space.shape).astype(np.float32)
               for _ in range(3)]
    try:
        space = gym.spaces.Box(0, 255, (3, 40, 48), np.uint8)
        assert env.observation_space == space
        obs = [env.reset()[0]] + [env.step(a)[0] for a in actions]
    finally:
        env.close()
    for i in range(n):               # EnvPool seeds env i with seed + i
        ref = _reference(own, camera)
        try:
            ref.reset(seed=seed + i)
            want = [ref.render()]
            for a in actions:
                ref.step(a[i])
                want.append(ref.render())
        finally:
            ref.close()
        for t, (o, w) in enumerate(zip(obs, want)):
            assert o.shape == (n, 3, 40, 48) and o.dtype == np.uint8
            assert np.array_equal(o[i], w.transpose(2, 0, 1)), (task, i, t)


def test_layout_is_envpools():
    ep = envpool_or_none()      # None under tools/sanitize.sh: compared in the normal run
    for task in ("FetchReach-v1", "HandManipulateBlock_ContinuousTouchSensors-v1",
                 "PointMaze_UMaze-v3", "AdroitHandPen-v1"):
        mine = cep.make_spec(task, from_pixels=True, **SIZE)
        assert mine.observation_space == gym.spaces.Box(0, 255, (3, 40, 48), np.uint8)
        assert (mine.config.render_width, mine.config.render_height,
                mine.config.render_camera_id) == (48, 40, -1)
        if ep is not None:
            real = ep.make_spec(task, from_pixels=True, **SIZE)
            assert mine.observation_space == real.observation_space
            assert set(real.config._asdict()) <= set(mine.config._asdict())


def test_subsets_and_refusals():
    env = cep.make_gymnasium("PointMaze_UMaze-v3", num_envs=3, from_pixels=True, seed=1,
                             **SIZE)
    try:
        assert env.reset()[0].shape == (3, 3, 40, 48)
        part, info = env.reset(np.array([2, 0]))
        assert part.shape == (2, 3, 40, 48) and list(info["env_id"]) == [2, 0]
    finally:
        env.close()
    with pytest.raises(ValueError, match="render_camera_id"):
        cep.make_gymnasium("FetchReach-v1", from_pixels=True, render_camera_id=0)
    with pytest.raises(ValueError, match="need from_pixels=True"):
        cep.make_gymnasium("FetchReach-v1", render_width=48)


def test_make_dm_gives_the_same_frames():
    pytest.importorskip("dm_env")
    kw = dict(num_envs=2, from_pixels=True, seed=3, **SIZE)
    dm, env = cep.make_dm("PointMaze_UMaze-v3", **kw), cep.make_gymnasium(
        "PointMaze_UMaze-v3", **kw)
    try:
        a = np.full((2, 2), 0.5, np.float32)
        assert np.array_equal(dm.reset().observation.obs, env.reset()[0])
        assert np.array_equal(dm.step(a).observation.obs, env.step(a)[0])
    finally:
        dm.close()
        env.close()
