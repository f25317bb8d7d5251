"""dm_control suite ball_in_cup (dm_control/suite/ball_in_cup.py): catch."""
from libc.math cimport fabs
from cypool.mujoco._task cimport export_task, MjEnv, MjTask
from cypool.dm_control._dmc cimport (rs_uniform, dmc_reset_begin, after_reset, dmc_step, P_NSUB,
                                     P_FIRST)

from cypool.dm_control._config import joint_qpos, body_id

cdef enum:
    P_BALL_X = P_FIRST, P_BALL_Z, P_TARGET, P_BALL, P_LIM_X, P_LIM_Z, NPARAM

DOMAIN = "ball_in_cup"
TASKS = ("catch",)
TIME_LIMIT = 20
CONTROL_TIMESTEP = .02


def configure(model, task):
    p = [0.0] * NPARAM
    p[P_BALL_X] = joint_qpos(model, "ball_x")
    p[P_BALL_Z] = joint_qpos(model, "ball_z")
    target = model.site("target").id
    p[P_TARGET] = target
    p[P_BALL] = body_id(model, "ball")
    lim = model.site_size[target, [0, 2]] - model.geom_size[model.geom("ball").id, 0]
    p[P_LIM_X], p[P_LIM_Z] = float(lim[0]), float(lim[1])
    layout = [("position", (model.nq,)), ("velocity", (model.nv,))]
    return p, layout, []


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef Py_ssize_t k, j = 0
    for k in range(e.m.nq):
        e.obs[j] = e.d.qpos[k]
        j += 1
    for k in range(e.m.nv):
        e.obs[j] = e.d.qvel[k]
        j += 1


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    if dmc_reset_begin(e):
        return 1
    while True:     # until the ball does not penetrate the cup
        e.d.qpos[<Py_ssize_t> p[P_BALL_X]] = rs_uniform(e, -.2, .2)
        e.d.qpos[<Py_ssize_t> p[P_BALL_Z]] = rs_uniform(e, .2, .5)
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
    cdef Py_ssize_t t = 3 * <Py_ssize_t> p[P_TARGET], b = 3 * <Py_ssize_t> p[P_BALL]
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    e.rew[0] = 1.0 if (fabs(e.d.site_xpos[t] - e.d.xpos[b]) < p[P_LIM_X] and
                       fabs(e.d.site_xpos[t + 2] - e.d.xpos[b + 2]) < p[P_LIM_Z]) else 0.0
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
