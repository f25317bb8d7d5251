"""Reacher-v5 (gymnasium.envs.mujoco.reacher_v5) and, behind P_V4, Reacher-v4 (reacher_v4):
kernels and configuration."""
from libc.math cimport sin, cos

from cypool.mujoco._mj.mujoco cimport mjModel, mjData
from cypool.mujoco._task cimport (export_task, MjEnv, MjTask, sim_step, sim_reset_data,
                                  sim_set_state, np_norm)
from cypool.mujoco._numeric cimport ctrl_cost, uniform_fill
from cypool.mujoco.tasks._common cimport body_dist

import numpy as np

from cypool.mujoco.tasks._config import param_row, require, body_id, NUMBER

# Parameter layout (one row per env).
cdef enum:
    P_FRAME_SKIP, P_DIST_W, P_CTRL_W, P_FINGERTIP, P_TARGET, P_V4, NPARAM

# Info columns.
cdef enum:
    I_DIST, I_CTRL

ID = "Reacher-v5"
MAX_EPISODE_STEPS = 50
DEFAULTS = dict(
    xml_file="reacher.xml", frame_skip=2, default_camera_config={"trackbodyid": 0},
    reward_dist_weight=1.0, reward_control_weight=1.0,
)
# (key, width, dtype, reported on step, reported on reset). gymnasium's reward_ctrl is float32
# for a float32 action; the value is exact in float64.
# keys computed with np.linalg.norm, i.e. numpy's BLAS dot (cypool._numpy_blas)
DOT_KEYS = ("reward", "reward_dist",
            "every observation (the goal is drawn until its norm < 0.2)")
INFO = [
    ("reward_dist", 1, np.float64, True, False),
    ("reward_ctrl", 1, "action", True, False),
]


# (column, kwarg, kind) for _config.param_row; body ids come from the model
PARAMS = [
    (P_FRAME_SKIP, "frame_skip", NUMBER),
    (P_DIST_W, "reward_dist_weight", NUMBER),
    (P_CTRL_W, "reward_control_weight", NUMBER),
]


def configure(model, kw, v4=False):
    """Parameter row and observation size for these kwargs on this (Python-bindings) model."""
    require(ID, model, kw, [("nq", 2, "qpos[0:2] (the arm angles) and qpos[-2:] (the goal)"),
                            ("nv", 2, "qvel[0:2] and qvel[-2:]")])
    p = param_row(model, kw, NPARAM, PARAMS)
    p[P_FINGERTIP] = body_id(ID, model, kw, "fingertip")
    p[P_TARGET] = body_id(ID, model, kw, "target")
    p[P_V4] = v4
    return p, 2 + 2 + (model.nq - 2) + 2 + (3 if v4 else 2)


# Reacher-v4 (tasks/reacher_v4.py): the reward is the distance before the step, the
# observation ends with the whole fingertip - target vector (z too); no kwargs
FIXED_V4 = tuple(DEFAULTS)


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const mjModel* m = e.m
    cdef mjData* d = e.d
    cdef Py_ssize_t f = 3 * <Py_ssize_t> e.prm[P_FINGERTIP], t = 3 * <Py_ssize_t> e.prm[P_TARGET]
    cdef Py_ssize_t k, j = 0
    for k in range(2):
        e.obs[j] = cos(d.qpos[k])
        j += 1
    for k in range(2):
        e.obs[j] = sin(d.qpos[k])
        j += 1
    for k in range(2, m.nq):
        e.obs[j] = d.qpos[k]
        j += 1
    for k in range(2):
        e.obs[j] = d.qvel[k]
        j += 1
    e.obs[j] = d.xpos[f] - d.xpos[t]
    e.obs[j + 1] = d.xpos[f + 1] - d.xpos[t + 1]
    if e.prm[P_V4] != 0:
        e.obs[j + 2] = d.xpos[f + 2] - d.xpos[t + 2]


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const mjModel* m = e.m
    cdef double* qpos = e.qpos_buf
    cdef double* qvel = e.qvel_buf
    cdef double goal[2]
    cdef Py_ssize_t k
    if sim_reset_data(e):
        return 1
    uniform_fill(e.rng, -0.1, 0.1, qpos, m.nq)
    for k in range(m.nq):
        qpos[k] = qpos[k] + m.qpos0[k]
    # rejection sampling: the number of draws varies, as in gymnasium
    while True:
        uniform_fill(e.rng, -0.2, 0.2, goal, 2)
        if np_norm(e, goal, 2) < 0.2:
            break
    qpos[m.nq - 2] = goal[0]
    qpos[m.nq - 1] = goal[1]
    uniform_fill(e.rng, -0.005, 0.005, qvel, m.nv)
    for k in range(m.nv):
        qvel[k] = 0.0 + qvel[k]
    qvel[m.nv - 2] = 0.0
    qvel[m.nv - 1] = 0.0
    if sim_set_state(e, qpos, qvel):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const mjModel* m = e.m
    cdef mjData* d = e.d
    cdef const double* p = e.prm
    cdef double dist, ctrl
    if p[P_V4] != 0:        # v4 rewards the distance before the step
        dist = -body_dist(e, <Py_ssize_t> p[P_FINGERTIP], <Py_ssize_t> p[P_TARGET]) * p[P_DIST_W]
    if sim_step(e, <int> p[P_FRAME_SKIP]):
        return 1
    _obs(e)
    if p[P_V4] == 0:
        dist = -body_dist(e, <Py_ssize_t> p[P_FINGERTIP], <Py_ssize_t> p[P_TARGET]) * p[P_DIST_W]
    # -(sum a^2) * w == -(w * sum a^2): negation is exact in either precision
    ctrl = -ctrl_cost(p[P_CTRL_W], e.act, m.nu, e.act_f32)
    e.rew[0] = dist + ctrl
    e.term[0] = False
    e.info[I_DIST] = dist
    e.info[I_CTRL] = ctrl
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
