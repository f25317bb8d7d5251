"""Orbit-v0: a ball on a spring in the plane (two slide joints, two motors), written against
cypool's public MuJoCo task API only (cypool/mujoco/api.pxd). Its model, orbit.xml, ships
beside this module and is found from the module's own path.

obs = (qpos, qvel); reward = -|qpos| - ctrl_cost_weight * |a|^2 (numpy's rounding);
terminated when |qpos| > max_radius."""
import os

import numpy as np

from cypool.mujoco.api cimport (MjEnv, MjTask, export_task, sim_step, reset_noisy, np_norm,
                                ctrl_cost)

API_VERSION = 1
ID = "Orbit-v0"
MAX_EPISODE_STEPS = 200
DEFAULTS = dict(xml_file=os.path.join(os.path.dirname(os.path.abspath(__file__)), "orbit.xml"),
                frame_skip=4, ctrl_cost_weight=0.05, reset_noise_scale=0.3, max_radius=2.0)
INFO = [("radius", 1, np.float64, True, True), ("reward_ctrl", 1, np.float64, True, False)]

cdef enum:
    P_FRAME_SKIP, P_CTRL_W, P_NOISE, P_MAX_R, NPARAM


def configure(model, kw):
    if model.nq != 2 or model.nv != 2 or model.nu != 2:
        raise ValueError(f"{ID}: the model must have 2 slide joints and 2 motors")
    row = np.zeros(NPARAM)
    row[P_FRAME_SKIP], row[P_CTRL_W], row[P_NOISE], row[P_MAX_R] = (
        kw["frame_skip"], kw["ctrl_cost_weight"], kw["reset_noise_scale"], kw["max_radius"])
    return row, 4


cdef double _obs(MjEnv* e) noexcept nogil:
    cdef double r = np_norm(e, e.d.qpos, 2)
    e.obs[0] = e.d.qpos[0]
    e.obs[1] = e.d.qpos[1]
    e.obs[2] = e.d.qvel[0]
    e.obs[3] = e.d.qvel[1]
    e.info[0] = r
    return r


cdef int _reset(MjEnv* e) noexcept nogil:
    if reset_noisy(e, e.prm[P_NOISE], True):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef double r, ctrl
    if sim_step(e, <int> e.prm[P_FRAME_SKIP]):
        return 1
    r = _obs(e)
    ctrl = ctrl_cost(e.prm[P_CTRL_W], e.act, 2, e.act_f32)
    e.rew[0] = -r - ctrl
    e.term[0] = r > e.prm[P_MAX_R]
    e.info[1] = -ctrl
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
