"""MjPool.setup_render_prep (the robotics render callbacks in C) refuses what its nogil code
could not honour, before any env moves: values that are not (kind, index[, add]), indices
outside the task state, observation or model, sites on moving bodies, a call once the pool
runs; and model_set is refused once the model was copied for rendering."""
import mujoco
import numpy as np
import pytest

import cypool


def test_refused_once_the_pool_runs():
    env = cypool.make_vec("FetchReach-v4", 1)
    try:
        with pytest.raises(RuntimeError, match="before the pool starts"):
            env.pool.engine.setup_render_prep(forward=True)
    finally:
        env.close()


@pytest.mark.parametrize("kw,match", [
    (dict(qpos=[(0, 1.0)]), "not \\(kind, index"),
    (dict(qpos=[(0, ("task",))]), "not \\(kind, index"),
    (dict(qpos=[(0, ("qpos", 0))]), "not \\(kind, index"),
    (dict(qpos=[(0, ("task", 10**6))]), "outside the task state"),
    (dict(qpos=[(0, ("obs", -1))]), "outside the observation"),
    (dict(qpos=[(10**6, ("const", 0.0))]), "qpos address"),
    (dict(qvel=[(-1, ("const", 0.0))]), "qvel address"),
    (dict(sites=[(10**6, [("const", 0.0)] * 3)]), "welded to the world"),
    (dict(sites=[("grip", [("const", 0.0)] * 3)]), "welded to the world"),
    (dict(sites=[(0, [("const", 0.0)] * 2)]), "3 values"),
    (dict(sites=[(0, [("const", 0.0)] * 3)], offset_sites=[0, 0]), "offset_sites"),
    (dict(touch=(np.array([10**6]), np.array([0]), np.zeros((2, 4)))), "touch sites"),
])
def test_bad_prep(kw, match, tmp_path):
    """A fresh MjPool of the Fetch model, not started: each bad argument is a ValueError."""
    from cypool.mujoco._pool import MjPool
    from cypool.robotics import _fetch as fe
    from cypool.robotics.fetch import obs_size, write_model
    path = write_model("Reach", str(tmp_path))
    model = mujoco.MjModel.from_xml_path(path)
    if "sites" in kw and kw["sites"][0][0] == "grip":
        grip = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, "robot0:grip")
        kw = dict(sites=[(grip, kw["sites"][0][1])])
    env = cypool.make_vec("FetchReach-v4", 1)
    try:
        row = env.pool.engine.params[:1].copy()
    finally:
        env.close()
    engine = MjPool(path, 1, 1, 50, fe.task_capsule(), row, 6 + obs_size("Reach"), 1,
                    task_state=fe.TASK_STATE)
    with pytest.raises(ValueError, match=match):
        engine.setup_render_prep(**kw)


def test_model_set_after_the_model_was_copied(monkeypatch):
    monkeypatch.setenv("MUJOCO_GL", "egl")
    env = cypool.make_vec("FetchReach-v4", 1, render_mode="rgb_array", width=16, height=16)
    try:
        env.reset(seed=0)
        env.render()
        with pytest.raises(RuntimeError, match="model_set after the pool copied"):
            env.pool.engine.model_set("site_pos", 0, 0.0)
    finally:
        env.close()
