"""dm_control suite point_mass (dm_control/suite/point_mass.py): easy, hard.

hard draws the actuators' tendon gains (the fixed tendons' wrap_prm: two unit directions, the
second redrawn while too parallel to the first) into the model each episode: each env has its
own copy of the model (and of its actuation-disabled twin); the gains live in the env's task
state (snapshots carry them) and every reset and step writes them into the env's models."""
from libc.math cimport fabs
from cypool.mujoco._mj.mujoco cimport mjModel
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (NpMath, init_math, randomize_joints, rs_gauss,
                                     dmc_reset_begin, after_reset, dmc_step, tolerance,
                                     small_control_mean, SIG_GAUSSIAN, P_NSUB, P_FIRST, T_TASK)

from cypool.dm_control._config import (sigmoid_scale, env_models as _env_models,
                                       SIG_GAUSSIAN as _G, SIG_QUADRATIC as _Q)

cdef enum:
    P_TARGET = P_FIRST, P_MASS, P_SIZE, P_GAUSS_SCALE, P_QUAD_SCALE, P_HARD, P_MODEL, \
        P_MODEL_NOACT, P_WRAP, P_WRAP_NOACT, P_WRAP0, NPARAM = P_WRAP0 + 4

# task state after the Gaussian cache (hard): wrap_prm[0:4] (dir1, dir2)
cdef enum:
    T_WRAP = T_TASK

cdef NpMath MM
init_math(&MM)

DOMAIN = "point_mass"
TASKS = ("easy", "hard")
ENV_MODEL_TASKS = ("hard",)     # a model per env (env_models)
TIME_LIMIT = 20
CONTROL_TIMESTEP = None


def configure(model, task):
    p = [0.0] * NPARAM
    p[P_TARGET] = model.geom("target").id
    p[P_MASS] = model.geom("pointmass").id
    p[P_SIZE] = float(model.geom_size[model.geom("target").id, 0])
    p[P_GAUSS_SCALE] = sigmoid_scale(_G, 0.1)
    p[P_QUAD_SCALE] = sigmoid_scale(_Q, 0)
    p[P_HARD] = task == "hard"
    if p[P_HARD] and (model.nwrap < 4 or model.nq != 2 or model.nv != 2):
        raise ValueError("point_mass: hard needs two fixed tendons of two joints each")
    for k in range(4 if p[P_HARD] else 0):     # the model's own gains (before any draw)
        p[P_WRAP0 + k] = float(model.wrap_prm[k])
    return p, [("position", (model.nq,)), ("velocity", (model.nv,))], []


def env_models(path, task, num_envs):
    """hard: each env's model and actuation-disabled twin, and their wrap_prm arrays."""
    if task != "hard":
        return None, {}
    return _env_models(path, num_envs, (P_MODEL, P_MODEL_NOACT),
                       {"wrap_prm": (P_WRAP, P_WRAP_NOACT)})


cdef void _use_env_model(MjEnv* e) noexcept nogil:
    """hard: point e at this env's models and write its tendon gains into both (the model's
    own before the first draw since seeding: a unit direction is never all zeros)."""
    cdef const double* p = e.prm
    cdef double* w = <double*> <size_t> p[P_WRAP]
    cdef double* w2 = <double*> <size_t> p[P_WRAP_NOACT]
    cdef const double* src = e.tstate + T_WRAP
    cdef Py_ssize_t k
    e.m = <const mjModel*> <size_t> p[P_MODEL]
    e.m_noact = <const mjModel*> <size_t> p[P_MODEL_NOACT]
    if src[0] == 0 and src[1] == 0:
        src = p + P_WRAP0
    for k in range(4):
        w[k] = src[k]
        w2[k] = src[k]


cdef void _unit2(MjEnv* e, double* v) noexcept nogil:
    """v = randn(2); v /= np.linalg.norm(v)."""
    cdef double nrm
    v[0] = rs_gauss(e)
    v[1] = rs_gauss(e)
    nrm = np_norm(e, v, 2)
    v[0] = v[0] / nrm
    v[1] = v[1] / nrm


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef Py_ssize_t k, j = 0
    for k in range(e.m.nq):
        e.obs[j] = e.d.qpos[k]
        j += 1
    for k in range(e.m.nv):
        e.obs[j] = e.d.qvel[k]
        j += 1


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef double d1[2]
    cdef double d2[2]
    if e.prm[P_HARD] != 0:
        _use_env_model(e)       # the gains of the last episode, as dm_control's model keeps
    if dmc_reset_begin(e):
        return 1
    randomize_joints(e)
    if e.prm[P_HARD] != 0:
        _unit2(e, d1)
        while True:     # a second direction not too parallel to the first
            _unit2(e, d2)
            if not fabs(e.dot(d1, d2, 2)) > 0.9:
                break
        e.tstate[T_WRAP] = d1[0]
        e.tstate[T_WRAP + 1] = d1[1]
        e.tstate[T_WRAP + 2] = d2[0]
        e.tstate[T_WRAP + 3] = d2[1]
        _use_env_model(e)
    if after_reset(e):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t t = 3 * <Py_ssize_t> p[P_TARGET], m = 3 * <Py_ssize_t> p[P_MASS], k
    cdef double v[3]
    cdef double near, ctrl
    if p[P_HARD] != 0:
        _use_env_model(e)
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
