"""Chain-v0: a user's MuJoCo task over a model of any size (the test generates a chain of 100
hinged links, one motor each: nq = nv = nu = 100), built by the test suite against cypool's
public task API. obs = (qpos, qvel); reward = tip height - ctrl_cost_weight * sum(a * a)
(summed in order); terminated once the tip rises above -depth."""
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, sim_step, reset_noisy

import numpy as np

ID = "Chain-v0"
MAX_EPISODE_STEPS = 1000
DEFAULTS = dict(xml_file="", frame_skip=2, ctrl_cost_weight=0.01, depth=7.8,
                reset_noise_scale=0.1)
INFO = [("tip_z", 1, np.float64, True, True), ("reward_ctrl", 1, np.float64, True, False)]

cdef enum:
    P_FRAME_SKIP, P_CTRL_W, P_DEPTH, P_NOISE, NPARAM


def configure(model, kw):
    if not (model.nq == model.nv == model.nu and model.nbody >= 2):
        raise ValueError(f"{ID}: the model must be a chain of hinges with one motor each")
    row = np.zeros(NPARAM)
    row[P_FRAME_SKIP], row[P_CTRL_W] = kw["frame_skip"], kw["ctrl_cost_weight"]
    row[P_DEPTH], row[P_NOISE] = kw["depth"], kw["reset_noise_scale"]
    return row, model.nq + model.nv


cdef double _tip_z(MjEnv* e) noexcept nogil:
    return e.d.xpos[3 * (e.m.nbody - 1) + 2]


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef int k, nq = e.m.nq
    for k in range(nq):
        e.obs[k] = e.d.qpos[k]
        e.obs[nq + k] = e.d.qvel[k]
    e.info[0] = _tip_z(e)


cdef int _reset(MjEnv* e) noexcept nogil:
    if reset_noisy(e, e.prm[P_NOISE], False):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef double ctrl = 0.0, z
    cdef int k
    if sim_step(e, <int> e.prm[P_FRAME_SKIP]):
        return 1
    for k in range(e.m.nu):
        ctrl = ctrl + e.act[k] * e.act[k]
    ctrl = e.prm[P_CTRL_W] * ctrl
    z = _tip_z(e)
    e.rew[0] = z - ctrl
    e.term[0] = z > -e.prm[P_DEPTH]
    e.info[1] = -ctrl
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
