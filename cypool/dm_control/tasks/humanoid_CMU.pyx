"""dm_control suite humanoid_CMU (dm_control/suite/humanoid_CMU.py): stand, walk, run (the
CMU humanoid; egocentric features about its thorax)."""
from libc.math cimport INFINITY as INF
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (NpMath, init_math, vec3_dot_mat3, np_sum, randomize_joints,
                                     dmc_reset_begin, after_reset, dmc_step, tolerance,
                                     small_control_mean, SIG_GAUSSIAN, SIG_LINEAR, P_NSUB,
                                     P_FIRST)

from cypool.dm_control._config import (sigmoid_scale, sensor_adr, body_id, SIG_GAUSSIAN as _G,
                                       SIG_LINEAR as _L, SIG_QUADRATIC as _Q)

cdef enum:
    P_MOVE = P_FIRST, P_TORSO, P_HEAD, P_LHAND, P_LFOOT, P_RHAND, P_RFOOT, P_COMVEL, \
        P_GAUSS_SCALE, P_LIN_SCALE, P_QUAD_SCALE, NPARAM

cdef NpMath MM
init_math(&MM)

DOMAIN = "humanoid_CMU"
TASKS = ("stand", "walk", "run")
TIME_LIMIT = 20
CONTROL_TIMESTEP = .02
cdef double _STAND_HEIGHT = 1.4
_SPEEDS = {"stand": 0, "walk": 1, "run": 10}


def configure(model, task):
    p = [0.0] * NPARAM
    p[P_MOVE] = _SPEEDS[task]
    if model.nu > 64 or model.jnt_type[0] != 0 or model.nq < 7:
        raise ValueError("humanoid_CMU: the model must start with its free root joint and "
                         "have at most 64 actuators")
    for col, name in ((P_TORSO, "thorax"), (P_HEAD, "head"), (P_LHAND, "lhand"),
                      (P_LFOOT, "lfoot"), (P_RHAND, "rhand"), (P_RFOOT, "rfoot")):
        p[col] = body_id(model, name)
    p[P_COMVEL] = sensor_adr(model, "thorax_subtreelinvel")
    p[P_GAUSS_SCALE] = sigmoid_scale(_G, 0.1)
    p[P_LIN_SCALE] = sigmoid_scale(_L, 0)
    p[P_QUAD_SCALE] = sigmoid_scale(_Q, 0)
    layout = [("joint_angles", (model.nq - 7,)), ("head_height", ()),
              ("extremities", (12,)), ("torso_vertical", (3,)), ("com_velocity", (3,)),
              ("velocity", (model.nv,))]
    return p, layout, []


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, j = 0, t = <Py_ssize_t> p[P_TORSO], c = <Py_ssize_t> p[P_COMVEL], b
    cdef Py_ssize_t limbs[4]
    cdef double v[3]
    for k in range(7, e.m.nq):
        e.obs[j] = e.d.qpos[k]
        j += 1
    e.obs[j] = e.d.xpos[3 * <Py_ssize_t> p[P_HEAD] + 2]
    j += 1
    # extremities: l hand, l foot, r hand, r foot, each (xpos - thorax) . thorax xmat
    limbs[0] = <Py_ssize_t> p[P_LHAND]
    limbs[1] = <Py_ssize_t> p[P_LFOOT]
    limbs[2] = <Py_ssize_t> p[P_RHAND]
    limbs[3] = <Py_ssize_t> p[P_RFOOT]
    for b in range(4):
        for k in range(3):
            v[k] = e.d.xpos[3 * limbs[b] + k] - e.d.xpos[3 * t + k]
        vec3_dot_mat3(&MM, v, e.d.xmat + 9 * t, e.obs + j)
        j += 3
    for k in range(3):
        e.obs[j] = e.d.xmat[9 * t + 6 + k]
        j += 1
    for k in range(3):
        e.obs[j] = e.d.sensordata[c + k]
        j += 1
    for k in range(e.m.nv):
        e.obs[j] = e.d.qvel[k]
        j += 1


cdef int _reset(MjEnv* e) noexcept nogil:
    if dmc_reset_begin(e):
        return 1
    while True:     # until no contact
        randomize_joints(e)
        if after_reset(e):
            return 1
        if e.d.ncon == 0:
            break
    if after_reset(e):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t t = <Py_ssize_t> p[P_TORSO], c = <Py_ssize_t> p[P_COMVEL]
    cdef double standing, upright, stand, small, last, speed = p[P_MOVE]
    cdef double h[2]
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    standing = tolerance(&MM, e.d.xpos[3 * <Py_ssize_t> p[P_HEAD] + 2], _STAND_HEIGHT, INF,
                         _STAND_HEIGHT / 4, SIG_GAUSSIAN, p[P_GAUSS_SCALE], True)
    # thorax_upright: xmat['thorax', 'zy']
    upright = tolerance(&MM, e.d.xmat[9 * t + 7], 0.9, INF, 1.9, SIG_LINEAR, p[P_LIN_SCALE],
                        True)
    stand = standing * upright
    small = (4 + small_control_mean(&MM, e, p[P_QUAD_SCALE])) / 5
    h[0] = e.d.sensordata[c]
    h[1] = e.d.sensordata[c + 1]
    if speed == 0:
        h[0] = tolerance(&MM, h[0], 0, 0, 2, SIG_GAUSSIAN, p[P_GAUSS_SCALE], False)
        h[1] = tolerance(&MM, h[1], 0, 0, 2, SIG_GAUSSIAN, p[P_GAUSS_SCALE], False)
        last = np_sum(h, 2) / 2
    else:
        last = tolerance(&MM, np_norm(e, h, 2), speed, INF, speed, SIG_LINEAR, p[P_LIN_SCALE],
                         True)
        last = (5 * last + 1) / 6
    e.rew[0] = small * stand * last
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
