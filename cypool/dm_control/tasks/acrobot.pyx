"""dm_control suite acrobot (dm_control/suite/acrobot.py): swingup, swingup_sparse."""
from libc.math cimport M_PI
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (NpMath, init_math, rs_uniform, dmc_reset_begin,
                                     after_reset, dmc_step, tolerance, SIG_GAUSSIAN, P_NSUB,
                                     P_FIRST)

from cypool.dm_control._config import sigmoid_scale, joint_qpos, body_id, SIG_GAUSSIAN as _G

cdef enum:
    P_SHOULDER = P_FIRST, P_ELBOW, P_UPPER, P_LOWER, P_TARGET, P_TIP, P_RADIUS, P_MARGIN, \
        P_SCALE, NPARAM

cdef NpMath MM
init_math(&MM)

DOMAIN = "acrobot"
TASKS = ("swingup", "swingup_sparse")
TIME_LIMIT = 10
CONTROL_TIMESTEP = None


def configure(model, task):
    p = [0.0] * NPARAM
    p[P_SHOULDER] = joint_qpos(model, "shoulder")
    p[P_ELBOW] = joint_qpos(model, "elbow")
    p[P_UPPER] = body_id(model, "upper_arm")
    p[P_LOWER] = body_id(model, "lower_arm")
    p[P_TARGET] = model.site("target").id
    p[P_TIP] = model.site("tip").id
    p[P_RADIUS] = float(model.site_size[model.site("target").id, 0])
    p[P_MARGIN] = 0 if task == "swingup_sparse" else 1
    p[P_SCALE] = sigmoid_scale(_G, 0.1)
    return p, [("orientations", (4,)), ("velocity", (model.nv,))], []


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef Py_ssize_t u = 9 * <Py_ssize_t> e.prm[P_UPPER], l = 9 * <Py_ssize_t> e.prm[P_LOWER], k
    e.obs[0] = e.d.xmat[u + 2]
    e.obs[1] = e.d.xmat[l + 2]
    e.obs[2] = e.d.xmat[u + 8]
    e.obs[3] = e.d.xmat[l + 8]
    for k in range(e.m.nv):
        e.obs[4 + k] = e.d.qvel[k]


cdef int _reset(MjEnv* e) noexcept nogil:
    if dmc_reset_begin(e):
        return 1
    e.d.qpos[<Py_ssize_t> e.prm[P_SHOULDER]] = rs_uniform(e, -M_PI, M_PI)
    e.d.qpos[<Py_ssize_t> e.prm[P_ELBOW]] = rs_uniform(e, -M_PI, M_PI)
    if after_reset(e):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t t = 3 * <Py_ssize_t> p[P_TARGET], s = 3 * <Py_ssize_t> p[P_TIP], k
    cdef double v[3]
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    for k in range(3):
        v[k] = e.d.site_xpos[t + k] - e.d.site_xpos[s + k]
    e.rew[0] = tolerance(&MM, np_norm(e, v, 3), 0, p[P_RADIUS], p[P_MARGIN], SIG_GAUSSIAN,
                         p[P_SCALE], True)
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
