"""dm_control suite cartpole (dm_control/suite/cartpole.py): balance, balance_sparse, swingup,
swingup_sparse (one pole), two_poles and three_poles (swing-up with a chain of poles, on the
model dm_control's _make_model generates, written to a temporary file)."""
from libc.math cimport M_PI
from cypool.mujoco._task cimport export_task, MjEnv, MjTask
from cypool.dm_control._dmc cimport (NpMath, init_math, rs_uniform, rs_gauss, dmc_reset_begin,
                                     after_reset, dmc_step, tolerance, SIG_GAUSSIAN,
                                     SIG_QUADRATIC, P_NSUB, P_FIRST)

import os

from cypool.dm_control._config import (sigmoid_scale, joint_qpos, generated_model,
                                       SIG_GAUSSIAN as _G, SIG_QUADRATIC as _Q)

cdef enum:
    P_SWING = P_FIRST, P_SPARSE, P_SLIDER, P_HINGE, P_GAUSS_SCALE, P_QUAD_SCALE, NPARAM

cdef NpMath MM
init_math(&MM)

DOMAIN = "cartpole"
TASKS = ("balance", "balance_sparse", "swingup", "swingup_sparse", "two_poles", "three_poles")
TIME_LIMIT = 10
CONTROL_TIMESTEP = None
_POLES = {"two_poles": 2, "three_poles": 3}


def model_path(task, suite_dir):
    if task not in _POLES:
        return os.path.join(suite_dir, "cartpole.xml")
    from dm_control.suite import cartpole
    return generated_model(task, cartpole._make_model(_POLES[task]), suite_dir)


def configure(model, task):
    p = [0.0] * NPARAM
    p[P_SWING] = task.startswith("swingup") or task in _POLES
    p[P_SPARSE] = task.endswith("_sparse")
    p[P_SLIDER] = joint_qpos(model, "slider")
    p[P_HINGE] = joint_qpos(model, "hinge_1")
    p[P_GAUSS_SCALE] = sigmoid_scale(_G, 0.1)
    p[P_QUAD_SCALE] = sigmoid_scale(_Q, 0)
    layout = [("position", (1 + 2 * (model.nbody - 2),)), ("velocity", (model.nv,))]
    return p, layout, []


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef Py_ssize_t k, j = 1, b
    e.obs[0] = e.d.qpos[<Py_ssize_t> e.prm[P_SLIDER]]
    for b in range(2, e.m.nbody):
        e.obs[j] = e.d.xmat[9 * b + 8]
        e.obs[j + 1] = e.d.xmat[9 * b + 2]
        j += 2
    for k in range(e.m.nv):
        e.obs[j] = e.d.qvel[k]
        j += 1


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, nv = e.m.nv
    if dmc_reset_begin(e):
        return 1
    if p[P_SWING] != 0:
        e.d.qpos[<Py_ssize_t> p[P_SLIDER]] = .01 * rs_gauss(e)
        e.d.qpos[<Py_ssize_t> p[P_HINGE]] = M_PI + .01 * rs_gauss(e)
        for k in range(2, nv):
            e.d.qpos[k] = .1 * rs_gauss(e)
    else:
        e.d.qpos[<Py_ssize_t> p[P_SLIDER]] = rs_uniform(e, -.1, .1)
        for k in range(1, nv):
            e.d.qpos[k] = rs_uniform(e, -.034, .034)
    for k in range(nv):
        e.d.qvel[k] = 0.01 * rs_gauss(e)
    if after_reset(e):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef double cart, upright, centered, small_control, small_velocity, v, angle
    cdef Py_ssize_t b, k, npoles = e.m.nbody - 2
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    cart = e.d.qpos[<Py_ssize_t> p[P_SLIDER]]
    if p[P_SPARSE] != 0:
        angle = 1.0     # prod() of the poles' in-bounds values (np.prod: sequential)
        for b in range(2, e.m.nbody):
            angle = angle * tolerance(&MM, e.d.xmat[9 * b + 8], .995, 1, 0, SIG_GAUSSIAN, 0,
                                      False)
        e.rew[0] = tolerance(&MM, cart, -.25, .25, 0, SIG_GAUSSIAN, 0, True) * angle
    else:
        # upright.mean(): fewer than 8 poles, numpy adds them in order from -0.0
        upright = -0.0
        for b in range(2, e.m.nbody):
            upright += (e.d.xmat[9 * b + 8] + 1) / 2
        upright = upright / npoles
        centered = tolerance(&MM, cart, 0, 0, 2, SIG_GAUSSIAN, p[P_GAUSS_SCALE], True)
        centered = (1 + centered) / 2
        small_control = tolerance(&MM, e.d.ctrl[0], 0, 0, 1, SIG_QUADRATIC, p[P_QUAD_SCALE],
                                  False)
        small_control = (4 + small_control) / 5
        small_velocity = tolerance(&MM, e.d.qvel[1], 0, 0, 5, SIG_GAUSSIAN,
                                   p[P_GAUSS_SCALE], False)
        for k in range(2, e.m.nv):     # .min() over the poles
            v = tolerance(&MM, e.d.qvel[k], 0, 0, 5, SIG_GAUSSIAN, p[P_GAUSS_SCALE], False)
            if v < small_velocity or v != v:
                small_velocity = v
        small_velocity = (1 + small_velocity) / 2
        e.rew[0] = upright * small_control * small_velocity * centered
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
