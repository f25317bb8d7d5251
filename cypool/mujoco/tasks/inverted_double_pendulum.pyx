"""InvertedDoublePendulum-v5 (gymnasium.envs.mujoco.inverted_double_pendulum_v5) and, behind
P_V4, InvertedDoublePendulum-v4 (inverted_double_pendulum_v4): kernels and configuration."""
from libc.math cimport sin, cos

from cypool.mujoco._mj.mujoco cimport mjModel, mjData
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, sim_step, reset_noisy
from cypool.mujoco._numeric cimport clip

import numpy as np

from cypool.mujoco.tasks._config import param_row, require, NUMBER

cdef extern from *:
    """
    #include <math.h>
    /* numpy's float64 scalar `**` calls libm pow(), which can differ from x*x by one ulp;
       the volatile pointer keeps the compiler from folding pow(x, 2.0) into x*x. */
    static double (*volatile cp_libm_pow)(double, double) = pow;
    """
    double cp_libm_pow(double x, double y) nogil

# Parameter layout (one row per env).
cdef enum:
    P_FRAME_SKIP, P_HEALTHY_REWARD, P_NOISE, P_V4, NPARAM

# Info columns.
cdef enum:
    I_SURVIVE, I_DIST, I_VEL

ID = "InvertedDoublePendulum-v5"
MAX_EPISODE_STEPS = 1000
DEFAULTS = dict(
    xml_file="inverted_double_pendulum.xml", frame_skip=5, default_camera_config=None,
    healthy_reward=10.0, reset_noise_scale=0.1,
)
# (key, width, dtype, reported on step, reported on reset); dtype "healthy_reward": that
# kwarg's type (gymnasium's reward_survive is an int for an int kwarg)
INFO = [
    ("reward_survive", 1, "healthy_reward", True, False),
    ("distance_penalty", 1, np.float64, True, False),
    ("velocity_penalty", 1, np.float64, True, False),
]


# (column, kwarg, kind) for _config.param_row
PARAMS = [
    (P_FRAME_SKIP, "frame_skip", NUMBER),
    (P_HEALTHY_REWARD, "healthy_reward", NUMBER),
    (P_NOISE, "reset_noise_scale", NUMBER),
]


def configure(model, kw, v4=False):
    """Parameter row and observation size for these kwargs on this (Python-bindings) model."""
    require(ID, model, kw, [("nq", 1, "qpos[0]: the cart"), ("nv", 3, "qvel[1:3]: the link velocities"),
                            ("nsite", 1, "site_xpos[0]: the pole tip")])
    p = param_row(model, kw, NPARAM, PARAMS)
    p[P_V4] = v4
    return p, 1 + 2 * (model.nq - 1) + model.nv + (model.nv if v4 else 1)


# InvertedDoublePendulum-v4 (tasks/inverted_double_pendulum_v4.py): every qfrc_constraint
# value observed, the alive bonus paid on every step, the last too; no kwargs; an empty info
FIXED_V4 = tuple(DEFAULTS)
INFO_V4 = [(None, 3, np.float64, False, False)]


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const mjModel* m = e.m
    cdef mjData* d = e.d
    cdef Py_ssize_t k, j = 0
    e.obs[j] = d.qpos[0]
    j += 1
    for k in range(1, m.nq):
        e.obs[j] = sin(d.qpos[k])
        j += 1
    for k in range(1, m.nq):
        e.obs[j] = cos(d.qpos[k])
        j += 1
    for k in range(m.nv):
        e.obs[j] = clip(d.qvel[k], -10.0, 10.0)
        j += 1
    e.obs[j] = clip(d.qfrc_constraint[0], -10.0, 10.0)
    if e.prm[P_V4] != 0:
        for k in range(1, m.nv):
            e.obs[j + k] = clip(d.qfrc_constraint[k], -10.0, 10.0)


cdef int _reset(MjEnv* e) noexcept nogil:
    if reset_noisy(e, e.prm[P_NOISE], True):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef mjData* d = e.d
    cdef double x, y, v1, v2, dist, vel, alive
    cdef bint terminated
    if sim_step(e, <int> e.prm[P_FRAME_SKIP]):
        return 1
    # site_xpos is not refreshed after mj_step: gymnasium reads the pre-last-substep value too
    x = d.site_xpos[0]
    y = d.site_xpos[2]
    _obs(e)
    terminated = y <= 1.0
    v1 = d.qvel[1]
    v2 = d.qvel[2]
    dist = 0.01 * cp_libm_pow(x, 2.0) + cp_libm_pow(y - 2.0, 2.0)
    vel = 1e-3 * cp_libm_pow(v1, 2.0) + 5e-3 * cp_libm_pow(v2, 2.0)
    alive = e.prm[P_HEALTHY_REWARD] * (0.0 if terminated and e.prm[P_V4] == 0 else 1.0)
    e.rew[0] = (alive - dist) - vel
    e.term[0] = terminated
    e.info[I_SURVIVE] = alive
    e.info[I_DIST] = -dist
    e.info[I_VEL] = -vel
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
