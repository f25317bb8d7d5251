"""PointMass-v0: a user's MuJoCo task, written against cypool's public task API and built
by the test suite (cypool.mujoco.extension_kwargs()): a point on two slide joints driven by
two motors; obs = (qpos, qvel); reward = -(x * x + y * y) - ctrl_cost_weight * |a|^2."""
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, sim_step, reset_noisy

import numpy as np

ID = "PointMass-v0"
MAX_EPISODE_STEPS = 100
DEFAULTS = dict(xml_file="", frame_skip=5, ctrl_cost_weight=0.1, reset_noise_scale=0.1)
INFO = [("x_position", 1, np.float64, True, False), ("reward_ctrl", 1, np.float64, True, False)]

cdef enum:
    P_FRAME_SKIP, P_CTRL_W, P_NOISE, NPARAM


def configure(model, kw):
    if model.nq != 2 or model.nv != 2 or model.nu != 2:
        raise ValueError(f"{ID}: the model must have 2 slide joints and 2 actuators")
    row = np.zeros(NPARAM)
    row[P_FRAME_SKIP], row[P_CTRL_W], row[P_NOISE] = (kw["frame_skip"], kw["ctrl_cost_weight"],
                                                      kw["reset_noise_scale"])
    return row, 4


cdef void _obs(MjEnv* e) noexcept nogil:
    e.obs[0] = e.d.qpos[0]
    e.obs[1] = e.d.qpos[1]
    e.obs[2] = e.d.qvel[0]
    e.obs[3] = e.d.qvel[1]
    e.info[0] = e.d.qpos[0]


cdef int _reset(MjEnv* e) noexcept nogil:
    if reset_noisy(e, e.prm[P_NOISE], False):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef double x, y, ctrl
    if sim_step(e, <int> e.prm[P_FRAME_SKIP]):
        return 1
    x = e.d.qpos[0]
    y = e.d.qpos[1]
    ctrl = e.prm[P_CTRL_W] * (e.act[0] * e.act[0] + e.act[1] * e.act[1])
    e.rew[0] = -(x * x + y * y) - ctrl
    e.term[0] = 0
    e.info[1] = -ctrl
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
