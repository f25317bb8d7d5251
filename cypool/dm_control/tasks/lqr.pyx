"""dm_control suite lqr (dm_control/suite/lqr.py): lqr_2_1, lqr_6_2.

dm_control draws each joint's stiffness (uniform(15, 25), then a zero-width uniform(0, 0) for
its damping) into the model's XML when the task is built, from the task's own RandomState: a
model per seed. Here every env has its own copy of dm_control's model (and of its
actuation-disabled twin), compiled once from the XML dm_control's _make_model writes (the
copies differ only in jnt_stiffness). A freshly seeded env draws its stiffnesses at its first
reset, before the episode's draws, as suite.load then reset would; they live in the env's
task state (0: not drawn yet), so snapshots carry them, and every reset and step writes them
into the env's models. No time limit: an episode ends when the state's norm falls below
1e-6 (terminated)."""
from libc.math cimport sqrt
from cypool.mujoco._mj.mujoco cimport mjModel
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (rs_uniform, rs_gauss, dmc_reset_begin, after_reset,
                                     dmc_step, P_NSUB, P_FIRST, T_TASK)

import numpy as np

from cypool.dm_control._config import generated_model, env_models as _env_models

cdef enum:
    MAX_BODIES = 6      # the task state's 6 doubles after the Gaussian cache

cdef enum:
    P_NBODY = P_FIRST, P_MODEL, P_MODEL_NOACT, P_STIFF, P_STIFF_NOACT, P_COEF, NPARAM

# task state after the Gaussian cache: each joint's stiffness (0: not drawn since seeding)
cdef enum:
    T_STIFF = T_TASK

DOMAIN = "lqr"
TASKS = ("lqr_2_1", "lqr_6_2")
ENV_MODEL_TASKS = ("lqr_2_1", "lqr_6_2")     # a model per env (env_models)
TIME_LIMIT = float("inf")
CONTROL_TIMESTEP = None
_SIZES = {"lqr_2_1": (2, 1), "lqr_6_2": (6, 2)}
cdef double _TERMINAL_TOL = 1e-6


def model_path(task, suite_dir):
    """dm_control's model with the stiffnesses of RandomState(0): the pool's shared model,
    whose structure every env's own model has."""
    from dm_control.suite import lqr
    n_bodies, n_actuators = _SIZES[task]
    xml = lqr._make_model(n_bodies, n_actuators, np.random.RandomState(0))
    return generated_model(task, xml, suite_dir)


def configure(model, task):
    p = [0.0] * NPARAM
    n_bodies, n_actuators = _SIZES[task]
    if model.njnt != n_bodies or model.nq != n_bodies or model.nv != n_bodies or model.na:
        raise ValueError("lqr: one hinge per body, no activations")
    p[P_NBODY] = n_bodies
    from dm_control.suite import lqr
    p[P_COEF] = float(lqr._CONTROL_COST_COEF)
    layout = [("position", (model.nq,)), ("velocity", (model.nv,))]
    return p, layout, []


def env_models(path, task, num_envs):
    """Each env's model and actuation-disabled twin, and their jnt_stiffness arrays."""
    return _env_models(path, num_envs, (P_MODEL, P_MODEL_NOACT),
                       {"jnt_stiffness": (P_STIFF, P_STIFF_NOACT)})


cdef void _use_env_model(MjEnv* e) noexcept nogil:
    """Point e at this env's models and write its stiffnesses into both."""
    cdef const double* p = e.prm
    cdef double* s = <double*> <size_t> p[P_STIFF]
    cdef double* s2 = <double*> <size_t> p[P_STIFF_NOACT]
    cdef Py_ssize_t k
    e.m = <const mjModel*> <size_t> p[P_MODEL]
    e.m_noact = <const mjModel*> <size_t> p[P_MODEL_NOACT]
    for k in range(<Py_ssize_t> p[P_NBODY]):
        s[k] = e.tstate[T_STIFF + k]
        s2[k] = e.tstate[T_STIFF + k]


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
    cdef Py_ssize_t k, n = <Py_ssize_t> p[P_NBODY]
    cdef double u[MAX_BODIES]
    cdef double nrm
    if e.tstate[T_STIFF] == 0:
        # the task's construction: per body, stiffness then damping (a zero-width uniform)
        for k in range(n):
            e.tstate[T_STIFF + k] = rs_uniform(e, 15, 25)
            rs_uniform(e, 0, 0)
    _use_env_model(e)
    if dmc_reset_begin(e):
        return 1
    for k in range(n):
        u[k] = rs_gauss(e)
    nrm = np_norm(e, u, n)
    for k in range(n):
        e.d.qpos[k] = sqrt(2.0) * u[k] / nrm
    if after_reset(e):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, n = <Py_ssize_t> p[P_NBODY]
    cdef double state_cost, control_cost
    cdef double s[2 * MAX_BODIES]
    _use_env_model(e)
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    state_cost = 0.5 * e.dot(e.d.qpos, e.d.qpos, e.m.nq)
    control_cost = 0.5 * e.dot(e.d.ctrl, e.d.ctrl, e.m.nu)
    e.rew[0] = 1 - (state_cost + control_cost * p[P_COEF])
    # get_termination: np.linalg.norm(physics.state()) (qpos, qvel; no activations)
    for k in range(n):
        s[k] = e.d.qpos[k]
        s[n + k] = e.d.qvel[k]
    e.term[0] = np_norm(e, s, 2 * n) < _TERMINAL_TOL
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
