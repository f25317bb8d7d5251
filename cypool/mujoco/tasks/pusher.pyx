"""Pusher-v5 (gymnasium.envs.mujoco.pusher_v5): kernels and configuration."""

from cypool.mujoco._mj.mujoco cimport mjModel, mjData
from cypool.mujoco._task cimport (export_task, MjEnv, MjTask, sim_step, sim_reset_data,
                                  sim_set_state, np_norm)
from cypool.mujoco._numeric cimport ctrl_cost, uniform_fill
from cypool.mujoco.tasks._common cimport body_dist

import numpy as np

from cypool.mujoco.tasks._config import param_row, require, body_id, NUMBER

# Parameter layout (one row per env).
cdef enum:
    P_FRAME_SKIP, P_NEAR_W, P_DIST_W, P_CTRL_W, P_TIPS, P_OBJECT, P_GOAL, NPARAM

# Info columns.
cdef enum:
    I_DIST, I_CTRL, I_NEAR

ID = "Pusher-v5"
MAX_EPISODE_STEPS = 100
DEFAULTS = dict(
    xml_file="pusher_v5.xml", frame_skip=5,
    default_camera_config={"trackbodyid": -1, "distance": 4.0},
    reward_near_weight=0.5, reward_dist_weight=1.0, reward_control_weight=0.1,
)
# (key, width, dtype, reported on step, reported on reset). gymnasium's reward_ctrl is float32
# for a float32 action; the value is exact in float64.
# keys computed with np.linalg.norm, i.e. numpy's BLAS dot (cypool._numpy_blas)
DOT_KEYS = ("reward", "reward_dist", "reward_near",
            "every observation (the cylinder is drawn until its distance > 0.17)")
INFO = [
    ("reward_dist", 1, np.float64, True, False),
    ("reward_ctrl", 1, "action", True, False),
    ("reward_near", 1, np.float64, True, False),
]


# (column, kwarg, kind) for _config.param_row; body ids come from the model
PARAMS = [
    (P_FRAME_SKIP, "frame_skip", NUMBER),
    (P_NEAR_W, "reward_near_weight", NUMBER),
    (P_DIST_W, "reward_dist_weight", NUMBER),
    (P_CTRL_W, "reward_control_weight", NUMBER),
]


def configure(model, kw):
    """Parameter row and observation size for these kwargs on this (Python-bindings) model."""
    require(ID, model, kw, [("nq", 4, "qpos[-4:]: the cylinder and the goal")])
    p = param_row(model, kw, NPARAM, PARAMS)
    p[P_TIPS] = body_id(ID, model, kw, "tips_arm")
    p[P_OBJECT] = body_id(ID, model, kw, "object")
    p[P_GOAL] = body_id(ID, model, kw, "goal")
    return p, min(model.nq, 7) + min(model.nv, 7) + 9


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const mjModel* m = e.m
    cdef mjData* d = e.d
    cdef const double* p = e.prm
    cdef Py_ssize_t k, j = 0
    cdef Py_ssize_t bodies[3]
    bodies[0] = <Py_ssize_t> p[P_TIPS]
    bodies[1] = <Py_ssize_t> p[P_OBJECT]
    bodies[2] = <Py_ssize_t> p[P_GOAL]
    for k in range(min(m.nq, 7)):
        e.obs[j] = d.qpos[k]
        j += 1
    for k in range(min(m.nv, 7)):
        e.obs[j] = d.qvel[k]
        j += 1
    for k in range(3):
        e.obs[j] = d.xpos[3 * bodies[k]]
        e.obs[j + 1] = d.xpos[3 * bodies[k] + 1]
        e.obs[j + 2] = d.xpos[3 * bodies[k] + 2]
        j += 3


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const mjModel* m = e.m
    cdef double* qpos = e.qpos_buf
    cdef double* qvel = e.qvel_buf
    cdef double cyl[2]
    cdef Py_ssize_t k
    if sim_reset_data(e):
        return 1
    # gymnasium's qpos aliases init_qpos (qpos0) and writes the cylinder and goal into it;
    # every reset overwrites the same four slots, so qpos0 plus those slots is equivalent.
    # The arm joints are never randomized.
    for k in range(m.nq):
        qpos[k] = m.qpos0[k]
    # rejection sampling (two separate size-1 draws per try), distance from the goal (0, 0)
    while True:
        uniform_fill(e.rng, -0.3, 0.0, cyl, 1)
        uniform_fill(e.rng, -0.2, 0.2, cyl + 1, 1)
        if np_norm(e, cyl, 2) > 0.17:
            break
    qpos[m.nq - 4] = cyl[0]
    qpos[m.nq - 3] = cyl[1]
    qpos[m.nq - 2] = 0.0
    qpos[m.nq - 1] = 0.0
    uniform_fill(e.rng, -0.005, 0.005, qvel, m.nv)
    for k in range(m.nv):
        qvel[k] = 0.0 + qvel[k]
    for k in range(max(m.nv - 4, 0), m.nv):    # gymnasium's qvel[-4:] = 0
        qvel[k] = 0.0
    if sim_set_state(e, qpos, qvel):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const mjModel* m = e.m
    cdef mjData* d = e.d
    cdef const double* p = e.prm
    cdef Py_ssize_t tips = <Py_ssize_t> p[P_TIPS], obj = <Py_ssize_t> p[P_OBJECT]
    cdef double near, dist, ctrl
    if sim_step(e, <int> p[P_FRAME_SKIP]):
        return 1
    _obs(e)
    near = -body_dist(e, obj, tips) * p[P_NEAR_W]
    dist = -body_dist(e, obj, <Py_ssize_t> p[P_GOAL]) * p[P_DIST_W]
    # -(sum a^2) * w == -(w * sum a^2): negation is exact in either precision
    ctrl = -ctrl_cost(p[P_CTRL_W], e.act, m.nu, e.act_f32)
    e.rew[0] = (dist + ctrl) + near
    e.term[0] = False
    e.info[I_DIST] = dist
    e.info[I_CTRL] = ctrl
    e.info[I_NEAR] = near
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
