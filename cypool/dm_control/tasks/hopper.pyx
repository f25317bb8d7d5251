"""dm_control suite hopper (dm_control/suite/hopper.py): stand, hop."""
from libc.math cimport INFINITY as INF
from cypool.mujoco._task cimport export_task, MjEnv, MjTask
from cypool.dm_control._dmc cimport (NpMath, init_math, randomize_joints, dmc_reset_begin,
                                     after_reset, dmc_step, tolerance, small_control_mean,
                                     SIG_GAUSSIAN, SIG_LINEAR, P_NSUB, P_FIRST)
from cypool._core._numpy_loops cimport np_unary

from cypool.dm_control._config import (sigmoid_scale, sensor_adr, body_id, SIG_LINEAR as _L,
                                       SIG_QUADRATIC as _Q)

cdef enum:
    P_HOP = P_FIRST, P_TORSO, P_FOOT, P_SPEED, P_TOE, P_HEEL, P_LIN_SCALE, P_QUAD_SCALE, NPARAM

cdef NpMath MM
init_math(&MM)

DOMAIN = "hopper"
TASKS = ("stand", "hop")
TIME_LIMIT = 20
CONTROL_TIMESTEP = .02
cdef double _STAND_HEIGHT = 0.6
cdef double _HOP_SPEED = 2


def configure(model, task):
    p = [0.0] * NPARAM
    p[P_HOP] = task == "hop"
    p[P_TORSO] = body_id(model, "torso")
    p[P_FOOT] = body_id(model, "foot")
    p[P_SPEED] = sensor_adr(model, "torso_subtreelinvel")
    p[P_TOE] = sensor_adr(model, "touch_toe")
    p[P_HEEL] = sensor_adr(model, "touch_heel")
    p[P_LIN_SCALE] = sigmoid_scale(_L, 0.5)
    p[P_QUAD_SCALE] = sigmoid_scale(_Q, 0)
    return p, [("position", (model.nq - 1,)), ("velocity", (model.nv,)), ("touch", (2,))], []


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef Py_ssize_t k, j = 0
    for k in range(1, e.m.nq):
        e.obs[j] = e.d.qpos[k]
        j += 1
    for k in range(e.m.nv):
        e.obs[j] = e.d.qvel[k]
        j += 1
    e.obs[j] = np_unary(MM.log1p, e.d.sensordata[<Py_ssize_t> e.prm[P_TOE]])
    e.obs[j + 1] = np_unary(MM.log1p, e.d.sensordata[<Py_ssize_t> e.prm[P_HEEL]])


cdef int _reset(MjEnv* e) noexcept nogil:
    if dmc_reset_begin(e):
        return 1
    randomize_joints(e)
    if after_reset(e):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef double height, standing, other
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    height = e.d.xipos[3 * <Py_ssize_t> p[P_TORSO] + 2] - e.d.xipos[3 * <Py_ssize_t> p[P_FOOT] + 2]
    standing = tolerance(&MM, height, _STAND_HEIGHT, 2, 0, SIG_GAUSSIAN, 0, True)
    if p[P_HOP] != 0:
        other = tolerance(&MM, e.d.sensordata[<Py_ssize_t> p[P_SPEED]], _HOP_SPEED, INF,
                          _HOP_SPEED / 2, SIG_LINEAR, p[P_LIN_SCALE], True)
    else:
        other = (small_control_mean(&MM, e, p[P_QUAD_SCALE]) + 4) / 5
    e.rew[0] = standing * other
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
