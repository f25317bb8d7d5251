"""dm_control suite point_mass (dm_control/suite/point_mass.py): easy. (hard draws the
actuators' tendon gains into the model per episode: not served yet.)"""
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (NpMath, init_math, randomize_joints, dmc_reset_begin,
                                     after_reset, dmc_step, tolerance, small_control_mean,
                                     SIG_GAUSSIAN, P_NSUB, P_FIRST)

from cypool.dm_control._config import sigmoid_scale, SIG_GAUSSIAN as _G, SIG_QUADRATIC as _Q

cdef enum:
    P_TARGET = P_FIRST, P_MASS, P_SIZE, P_GAUSS_SCALE, P_QUAD_SCALE, NPARAM

cdef NpMath MM
init_math(&MM)

DOMAIN = "point_mass"
TASKS = ("easy",)
TIME_LIMIT = 20
CONTROL_TIMESTEP = None


def configure(model, task):
    p = [0.0] * NPARAM
    p[P_TARGET] = model.geom("target").id
    p[P_MASS] = model.geom("pointmass").id
    p[P_SIZE] = float(model.geom_size[model.geom("target").id, 0])
    p[P_GAUSS_SCALE] = sigmoid_scale(_G, 0.1)
    p[P_QUAD_SCALE] = sigmoid_scale(_Q, 0)
    return p, [("position", (model.nq,)), ("velocity", (model.nv,))], []


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef Py_ssize_t k, j = 0
    for k in range(e.m.nq):
        e.obs[j] = e.d.qpos[k]
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
    cdef Py_ssize_t t = 3 * <Py_ssize_t> p[P_TARGET], m = 3 * <Py_ssize_t> p[P_MASS], k
    cdef double v[3]
    cdef double near, ctrl
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    for k in range(3):
        v[k] = e.d.geom_xpos[t + k] - e.d.geom_xpos[m + k]
    near = tolerance(&MM, np_norm(e, v, 3), 0, p[P_SIZE], p[P_SIZE], SIG_GAUSSIAN,
                     p[P_GAUSS_SCALE], True)
    ctrl = (small_control_mean(&MM, e, p[P_QUAD_SCALE]) + 4) / 5
    e.rew[0] = near * ctrl
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
