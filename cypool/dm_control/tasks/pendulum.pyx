"""dm_control suite pendulum (dm_control/suite/pendulum.py): swingup."""
from libc.math cimport M_PI
from cypool.mujoco._task cimport export_task, MjEnv, MjTask
from cypool.dm_control._dmc cimport (NpMath, init_math, rs_uniform, dmc_reset_begin,
                                     after_reset, dmc_step, tolerance, SIG_GAUSSIAN, P_NSUB,
                                     P_FIRST)

import numpy as np

from cypool.dm_control._config import joint_qpos, body_id

cdef enum:
    P_HINGE = P_FIRST, P_POLE, P_COS_BOUND, NPARAM

cdef NpMath MM
init_math(&MM)

DOMAIN = "pendulum"
TASKS = ("swingup",)
TIME_LIMIT = 20
CONTROL_TIMESTEP = None


def configure(model, task):
    p = [0.0] * NPARAM
    p[P_HINGE] = joint_qpos(model, "hinge")
    p[P_POLE] = body_id(model, "pole")
    p[P_COS_BOUND] = float(np.cos(np.deg2rad(8)))
    return p, [("orientation", (2,)), ("velocity", (1,))], []


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef Py_ssize_t b = 9 * <Py_ssize_t> e.prm[P_POLE]
    e.obs[0] = e.d.xmat[b + 8]
    e.obs[1] = e.d.xmat[b + 2]
    e.obs[2] = e.d.qvel[<Py_ssize_t> e.prm[P_HINGE]]    # hinge: qvel index = qpos index


cdef int _reset(MjEnv* e) noexcept nogil:
    if dmc_reset_begin(e):
        return 1
    e.d.qpos[<Py_ssize_t> e.prm[P_HINGE]] = rs_uniform(e, -M_PI, M_PI)
    if after_reset(e):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    e.rew[0] = tolerance(&MM, e.d.xmat[9 * <Py_ssize_t> p[P_POLE] + 8], p[P_COS_BOUND], 1, 0,
                         SIG_GAUSSIAN, 0, True)
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
