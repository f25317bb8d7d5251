"""The Shadow Hand touch-sensor ids' render_mode="rgb_array": each env's frame equals the
installed gymnasium-robotics' env.render() bit for bit across steps and resets (EGL; one
reference env at a time). The reference's _render_callback colours every touch site
"robot0:T_*" in its model by its sensor after the target's mj_forward (touch_color where the
value is not 0, notouch_color elsewhere); cypool draws each env alone with its own colours
and restores the shared model's after each frame."""
import warnings

import gymnasium as gym
import numpy as np
import pytest

import cypool

from _fetch_ref import patch_reference  # noqa: F401  (the Hand references run)


@pytest.fixture(autouse=True)
def egl(monkeypatch):
    monkeypatch.setenv("MUJOCO_GL", "egl")


SCHEDULE = ["render", "step", "step", "render", "step", "render", "reset", "render", "step",
            "step", "render"]


def _leaves(obs, i=None):
    return [np.asarray(obs[k] if i is None else obs[k][i]) for k in sorted(obs)]


def _cypool(env_id, n, kw, seed, ids=None):
    """cypool's frames at the "render" entries (all envs, or env subsets ``ids[k]``), its
    observations after each entry and the actions it stepped."""
    env = cypool.make_vec(env_id, n, num_threads=2, render_mode="rgb_array",
                          autoreset_mode="disabled", **kw)
    space = env.single_action_space
    rng = np.random.default_rng(seed)
    actions = [rng.uniform(space.low, space.high, (n,) + space.shape).astype(np.float32)
               for _ in SCHEDULE]
    frames, obs = [], []
    try:
        o, _ = env.reset(seed=seed)
        for t, what in enumerate(SCHEDULE):
            if what == "reset":
                o, _ = env.reset()
            elif what == "step":
                o = env.step(actions[t])[0]
            else:
                frames.append(env.render())
            obs.append(o)
    finally:
        env.close()
    return frames, obs, actions


def _reference(env_id, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.make(env_id, render_mode="rgb_array", disable_env_checker=True, **kw)


def compare(env_id, n=3, seed=5, kw=None):
    """Every env's frames and observations equal its own reference env's (seeded seed + i);
    returns the touch states the references drew (one bool array per frame)."""
    kw = kw or dict(width=72, height=72)
    got, obs, actions = _cypool(env_id, n, kw, seed)
    drawn = []
    for i in range(n):
        ref = _reference(env_id, kw)
        u = ref.unwrapped
        sites = [s for _, s in u._touch_sensor_id_site_id]
        try:
            o, _ = ref.reset(seed=seed + i)
            k = 0
            for t, what in enumerate(SCHEDULE):
                if what == "reset":
                    o, _ = ref.reset()
                elif what == "step":
                    o = ref.step(actions[t][i])[0]
                for x, y in zip(_leaves(obs[t], i), _leaves(o)):
                    assert np.array_equal(x, y), (env_id, i, t, "obs")
                if what == "render":
                    want = ref.render()
                    drawn.append(np.array(u.model.site_rgba[sites, 0] == 1.0))
                    frame = np.asarray(got[k][i])
                    assert want.shape == frame.shape, (env_id, i, t)
                    assert np.array_equal(frame, want), \
                        (env_id, i, t, int((frame != want).sum()))
                    k += 1
        finally:
            ref.close()
    return drawn


@pytest.mark.parametrize("env_id", ["HandManipulateBlock_BooleanTouchSensors-v1",
                                    "HandManipulateEggRotate_ContinuousTouchSensorsDense-v1",
                                    "HandManipulatePen_BooleanTouchSensors-v1"])
def test_touch_frames(env_id):
    drawn = compare(env_id)
    # the frames drew both colours (some sites touched, some not), in different patterns
    assert any(d.any() for d in drawn) and any((~d).any() for d in drawn)
    assert len({d.tobytes() for d in drawn}) > 1


def test_colours_are_visible():
    """A frame with the touch colours swapped differs from the reference's: the frames
    above test the colouring, not only the scene."""
    env_id, kw = "HandManipulateBlock_ContinuousTouchSensors-v1", dict(width=72, height=72)
    ref = _reference(env_id, kw)
    try:
        ref.reset(seed=1)
        want = ref.render()
        u = ref.unwrapped
        u.touch_color, u.notouch_color = u.notouch_color, u.touch_color
        assert not np.array_equal(ref.render(), want)
    finally:
        ref.close()
    env = cypool.make_vec(env_id, 1, render_mode="rgb_array", **kw)
    try:
        env.reset(seed=1)
        assert np.array_equal(np.array(env.render())[0], want)
    finally:
        env.close()


def test_each_env_alone():
    """An env's frame does not depend on which envs render with it, nor on their order (the
    shared model holds no env's colours between frames)."""
    env_id, kw = "HandManipulateBlockRotateZ_BooleanTouchSensors-v1", dict(width=48, height=48)
    env = cypool.make_vec(env_id, 3, render_mode="rgb_array", **kw)
    try:
        env.reset(seed=2)
        rng = np.random.default_rng(0)
        for _ in range(3):
            env.step(rng.uniform(-1, 1, (3, 20)).astype(np.float32))
        full = np.array(env.render())
        for ids in ([2, 0], [1], [0, 1, 2]):
            assert np.array_equal(np.array(env.render(env_ids=ids)), full[ids])
    finally:
        env.close()
