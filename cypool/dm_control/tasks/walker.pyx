"""dm_control suite walker (dm_control/suite/walker.py): stand, walk, run."""
from libc.math cimport INFINITY as INF
from cypool.mujoco._task cimport export_task, MjEnv, MjTask
from cypool.dm_control._dmc cimport (NpMath, init_math, randomize_joints, dmc_reset_begin,
                                     after_reset, dmc_step, tolerance, SIG_GAUSSIAN,
                                     SIG_LINEAR, P_NSUB, P_FIRST)

from cypool.dm_control._config import (sigmoid_scale, sensor_adr, body_id, SIG_GAUSSIAN as _G,
                                       SIG_LINEAR as _L)

cdef enum:
    P_TORSO = P_FIRST, P_HVEL, P_MOVE, P_STAND_SCALE, P_MOVE_SCALE, NPARAM

cdef NpMath MM
init_math(&MM)

DOMAIN = "walker"
TASKS = ("stand", "walk", "run")
TIME_LIMIT = 25
CONTROL_TIMESTEP = .025
cdef double _STAND_HEIGHT = 1.2
_SPEEDS = {"stand": 0, "walk": 1, "run": 8}


def configure(model, task):
    p = [0.0] * NPARAM
    p[P_TORSO] = body_id(model, "torso")
    p[P_HVEL] = sensor_adr(model, "torso_subtreelinvel")
    p[P_MOVE] = _SPEEDS[task]
    p[P_STAND_SCALE] = sigmoid_scale(_G, 0.1)
    p[P_MOVE_SCALE] = sigmoid_scale(_L, 0.5)
    layout = [("orientations", (2 * (model.nbody - 1),)), ("height", ()),
              ("velocity", (model.nv,))]
    return p, layout, []


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef Py_ssize_t k, j = 0, b
    for b in range(1, e.m.nbody):
        e.obs[j] = e.d.xmat[9 * b]
        e.obs[j + 1] = e.d.xmat[9 * b + 2]
        j += 2
    e.obs[j] = e.d.xpos[3 * <Py_ssize_t> e.prm[P_TORSO] + 2]
    j += 1
    for k in range(e.m.nv):
        e.obs[j] = e.d.qvel[k]
        j += 1


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
    cdef Py_ssize_t torso = <Py_ssize_t> p[P_TORSO]
    cdef double standing, upright, stand, move, speed = p[P_MOVE]
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    standing = tolerance(&MM, e.d.xpos[3 * torso + 2], _STAND_HEIGHT, INF, _STAND_HEIGHT / 2,
                         SIG_GAUSSIAN, p[P_STAND_SCALE], True)
    upright = (1 + e.d.xmat[9 * torso + 8]) / 2
    stand = (3 * standing + upright) / 4
    if speed == 0:
        e.rew[0] = stand
    else:
        move = tolerance(&MM, e.d.sensordata[<Py_ssize_t> p[P_HVEL]], speed, INF, speed / 2,
                         SIG_LINEAR, p[P_MOVE_SCALE], True)
        e.rew[0] = stand * (5 * move + 1) / 6
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
