"""Humanoid-v5 (gymnasium.envs.mujoco.humanoid_v5) and, behind P_V4, Humanoid-v4 (humanoid_v4):
kernels and configuration."""

from cypool.mujoco._mj.mujoco cimport mjModel, mjData
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, sim_step, reset_noisy, np_norm
from cypool.mujoco.tasks._common cimport xy_info
from cypool.mujoco.tasks._humanoid cimport (humanoid_obs, humanoid_obs_dim, tendon_info,
    humanoid_ctrl_cost, humanoid_contact_cost)

import numpy as np

from cypool.mujoco.tasks._config import param_row, require, NUMBER, BOOL, PAIR, DT

# Parameter layout (one row per env).
cdef enum:
    P_FRAME_SKIP, P_DT, P_FORWARD_W, P_CTRL_W, P_CONTACT_W, P_CC_LO, P_CC_HI, P_HEALTHY_REWARD,
    P_TERMINATE, P_Z_LO, P_Z_HI, P_NOISE, P_EXCLUDE, P_CINERT, P_CVEL, P_QFRC, P_CFRC,
    P_MASS_SUM, P_V4, NPARAM

# Info columns; tendon_length and tendon_velocity take ntendon columns each, at the end.
cdef enum:
    I_X, I_Y, I_DIST, I_VX, I_VY, I_SURVIVE, I_FWD, I_CTRL, I_CONTACT, I_TLEN

ID = "Humanoid-v5"
MAX_EPISODE_STEPS = 1000
DEFAULTS = dict(
    xml_file="humanoid.xml", frame_skip=5,
    default_camera_config={"trackbodyid": 1, "distance": 4.0,
                           "lookat": np.array((0.0, 0.0, 2.0)), "elevation": -20.0},
    forward_reward_weight=1.25, ctrl_cost_weight=0.1, contact_cost_weight=5e-7,
    contact_cost_range=(-np.inf, 10.0), healthy_reward=5.0, terminate_when_unhealthy=True,
    healthy_z_range=(1.0, 2.0), reset_noise_scale=1e-2,
    exclude_current_positions_from_observation=True, include_cinert_in_observation=True,
    include_cvel_in_observation=True, include_qfrc_actuator_in_observation=True,
    include_cfrc_ext_in_observation=True,
)
# (key, width, dtype, reported on step, reported on reset); dtype "healthy_reward": that
# kwarg's type (gymnasium's reward_survive is an int for an int kwarg)
# keys computed with np.linalg.norm, i.e. numpy's BLAS dot (cypool._numpy_blas)
DOT_KEYS = ("distance_from_origin",)
INFO = [
    ("x_position", 1, np.float64, True, True),
    ("y_position", 1, np.float64, True, True),
    ("distance_from_origin", 1, np.float64, True, True),
    ("x_velocity", 1, np.float64, True, False),
    ("y_velocity", 1, np.float64, True, False),
    ("reward_survive", 1, "healthy_reward", True, False),
    ("reward_forward", 1, np.float64, True, False),
    ("reward_ctrl", 1, np.float64, True, False),
    ("reward_contact", 1, np.float64, True, False),
    ("tendon_length", "ntendon", np.float64, True, True),     # width: the model's ntendon
    ("tendon_velocity", "ntendon", np.float64, True, True),
]


# (column, kwarg, kind) for _config.param_row; P_MASS_SUM comes from the model
PARAMS = [
    (P_FRAME_SKIP, "frame_skip", NUMBER),
    (P_DT, "frame_skip", DT),
    (P_FORWARD_W, "forward_reward_weight", NUMBER),
    (P_CTRL_W, "ctrl_cost_weight", NUMBER),
    (P_CONTACT_W, "contact_cost_weight", NUMBER),
    ((P_CC_LO, P_CC_HI), "contact_cost_range", PAIR),
    (P_HEALTHY_REWARD, "healthy_reward", NUMBER),
    (P_TERMINATE, "terminate_when_unhealthy", BOOL),
    ((P_Z_LO, P_Z_HI), "healthy_z_range", PAIR),
    (P_NOISE, "reset_noise_scale", NUMBER),
    (P_EXCLUDE, "exclude_current_positions_from_observation", BOOL),
    (P_CINERT, "include_cinert_in_observation", BOOL),
    (P_CVEL, "include_cvel_in_observation", BOOL),
    (P_QFRC, "include_qfrc_actuator_in_observation", BOOL),
    (P_CFRC, "include_cfrc_ext_in_observation", BOOL),
]


def configure(model, kw, v4=False):
    """Parameter row and observation size for these kwargs on this (Python-bindings) model."""
    require(ID, model, kw, [("nq", 3, "qpos[0:3]: x, y and the torso height")])
    p = param_row(model, kw, NPARAM, PARAMS)
    # mass_center's denominator, evaluated by numpy exactly as gymnasium does
    p[P_MASS_SUM] = model.body_mass.sum()
    p[P_V4] = v4
    return p, humanoid_obs_dim(model.nq, model.nv, model.nbody, p[P_EXCLUDE] != 0,
                               p[P_CINERT] != 0, p[P_CVEL] != 0, p[P_QFRC] != 0, p[P_CFRC] != 0,
                               v4)


# Humanoid-v4 (tasks/humanoid_v4.py): whole cinert, cvel, qfrc_actuator and cfrc_ext in the
# observation, no contact cost, the healthy reward paid whenever terminate_when_unhealthy
# holds, positions from the mass centre, v4's info names; no xml_file or frame_skip kwarg
DEFAULTS_V4 = dict(DEFAULTS, contact_cost_weight=0.0)
FIXED_V4 = tuple(k for k in DEFAULTS if k not in (
    "forward_reward_weight", "ctrl_cost_weight", "healthy_reward", "terminate_when_unhealthy",
    "healthy_z_range", "reset_noise_scale", "exclude_current_positions_from_observation"))
INFO_V4 = [
    ("reward_linvel", 1, np.float64, True, False, I_FWD),
    ("reward_quadctrl", 1, np.float64, True, False, I_CTRL),
    ("reward_alive", 1, np.float64, True, False, I_SURVIVE),   # float(...) * healthy_reward
    ("x_position", 1, np.float64, True, False, I_X),
    ("y_position", 1, np.float64, True, False, I_Y),
    ("distance_from_origin", 1, np.float64, True, False, I_DIST),
    ("x_velocity", 1, np.float64, True, False, I_VX),
    ("y_velocity", 1, np.float64, True, False, I_VY),
    ("forward_reward", 1, np.float64, True, False, I_FWD),
    # never in gymnasium's v4 info; cypool.envpool reports it (EnvPool's Humanoid-v4 key)
    ("reward_impact", 1, np.float64, False, False, I_CONTACT),
    (None, "ntendon", np.float64, False, False, I_TLEN),
    (None, "ntendon", np.float64, False, False),
]


cdef inline void _obs(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    humanoid_obs(e, p[P_EXCLUDE] != 0, p[P_CINERT] != 0, p[P_CVEL] != 0, p[P_QFRC] != 0,
                 p[P_CFRC] != 0, p[P_V4] != 0)


cdef void _mass_center(MjEnv* e, double* xy) noexcept nogil:
    """np.einsum("b,bj->j", body_mass, xipos) / body_mass.sum(), x and y: the einsum adds the
    products body by body, in order, per column (checked against numpy)."""
    cdef const mjModel* m = e.m
    cdef const double* xipos = e.d.xipos
    cdef Py_ssize_t b, j
    cdef double acc
    for j in range(2):
        acc = 0.0
        for b in range(m.nbody):
            acc += m.body_mass[b] * xipos[3 * b + j]
        xy[j] = acc / e.prm[P_MASS_SUM]


cdef void _common_info(MjEnv* e) noexcept nogil:
    xy_info(e, I_X, I_Y, I_DIST)
    tendon_info(e, I_TLEN)


cdef int _reset(MjEnv* e) noexcept nogil:
    if reset_noisy(e, e.prm[P_NOISE], False):
        return 1
    _obs(e)
    _common_info(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef mjData* d = e.d
    cdef const double* p = e.prm
    cdef double before[2]
    cdef double after[2]
    cdef double vx, vy, fwd, healthy, ctrl, contact, z
    cdef bint is_healthy
    _mass_center(e, before)
    if sim_step(e, <int> p[P_FRAME_SKIP]):
        return 1
    _mass_center(e, after)
    vx = (after[0] - before[0]) / p[P_DT]
    vy = (after[1] - before[1]) / p[P_DT]
    _obs(e)
    fwd = p[P_FORWARD_W] * vx
    z = d.qpos[2]
    is_healthy = p[P_Z_LO] < z and z < p[P_Z_HI]
    ctrl = humanoid_ctrl_cost(e, p[P_CTRL_W])
    if p[P_V4] != 0:
        return _step_v4(e, is_healthy, fwd, ctrl, vx, vy, after)
    healthy = (1.0 if is_healthy else 0.0) * p[P_HEALTHY_REWARD]
    contact = humanoid_contact_cost(e, p[P_CONTACT_W], p[P_CC_LO], p[P_CC_HI])
    e.rew[0] = (fwd + healthy) - (ctrl + contact)
    e.term[0] = (not is_healthy) and p[P_TERMINATE] != 0
    _common_info(e)
    e.info[I_VX] = vx
    e.info[I_VY] = vy
    e.info[I_SURVIVE] = healthy
    e.info[I_FWD] = fwd
    e.info[I_CTRL] = -ctrl
    e.info[I_CONTACT] = -contact
    return 0


cdef int _step_v4(MjEnv* e, bint is_healthy, double fwd, double ctrl, double vx, double vy,
                  double* after) noexcept nogil:
    """Humanoid-v4's reward (no contact cost; the healthy reward paid whenever
    terminate_when_unhealthy holds) and info (positions: the mass centre's)."""
    cdef const double* p = e.prm
    cdef double healthy
    healthy = (1.0 if (is_healthy or p[P_TERMINATE] != 0) else 0.0) * p[P_HEALTHY_REWARD]
    e.rew[0] = (fwd + healthy) - ctrl
    e.term[0] = (not is_healthy) and p[P_TERMINATE] != 0
    e.info[I_X] = after[0]
    e.info[I_Y] = after[1]
    e.info[I_DIST] = np_norm(e, after, 2)
    e.info[I_VX] = vx
    e.info[I_VY] = vy
    e.info[I_SURVIVE] = healthy
    e.info[I_FWD] = fwd
    e.info[I_CTRL] = -ctrl
    e.info[I_CONTACT] = 0.0
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
