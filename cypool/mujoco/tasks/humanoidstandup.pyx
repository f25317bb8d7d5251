"""HumanoidStandup-v5 (gymnasium.envs.mujoco.humanoidstandup_v5) and, behind P_V4,
HumanoidStandup-v4 (humanoidstandup_v4): kernels and configuration."""

from cypool.mujoco._mj.mujoco cimport mjData
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, sim_step, reset_noisy
from cypool.mujoco.tasks._humanoid cimport (humanoid_obs, humanoid_obs_dim, tendon_info,
    humanoid_ctrl_cost, humanoid_contact_cost)

import numpy as np

from cypool.mujoco.tasks._config import param_row, require, NUMBER, BOOL, PAIR

# Parameter layout (one row per env). uph_cost_weight is accepted but, as in gymnasium
# 1.4.0, never applied, so it has no slot.
cdef enum:
    P_FRAME_SKIP, P_TIMESTEP, P_CTRL_W, P_IMPACT_W, P_IC_LO, P_IC_HI, P_NOISE, P_EXCLUDE,
    P_CINERT, P_CVEL, P_QFRC, P_CFRC, P_V4, NPARAM

# Info columns; tendon_length and tendon_velocity take ntendon columns each, at the end.
cdef enum:
    I_X, I_Y, I_Z, I_LINUP, I_QUADCTRL, I_IMPACT, I_TLEN

ID = "HumanoidStandup-v5"
MAX_EPISODE_STEPS = 1000
DEFAULTS = dict(
    xml_file="humanoidstandup.xml", frame_skip=5,
    default_camera_config={"trackbodyid": 1, "distance": 4.0,
                           "lookat": np.array((0.0, 0.0, 0.8925)), "elevation": -20.0},
    uph_cost_weight=1, ctrl_cost_weight=0.1, impact_cost_weight=0.5e-6,
    impact_cost_range=(-np.inf, 10.0), reset_noise_scale=1e-2,
    exclude_current_positions_from_observation=True, include_cinert_in_observation=True,
    include_cvel_in_observation=True, include_qfrc_actuator_in_observation=True,
    include_cfrc_ext_in_observation=True,
)
# (key, width, dtype, reported on step, reported on reset)
INFO = [
    ("x_position", 1, np.float64, True, True),
    ("y_position", 1, np.float64, True, True),
    ("z_distance_from_origin", 1, np.float64, True, True),
    ("reward_linup", 1, np.float64, True, False),
    ("reward_quadctrl", 1, np.float64, True, False),
    ("reward_impact", 1, np.float64, True, False),
    ("tendon_length", "ntendon", np.float64, True, True),     # width: the model's ntendon
    ("tendon_velocity", "ntendon", np.float64, True, True),
]


# (column, kwarg, kind) for _config.param_row
PARAMS = [
    (P_FRAME_SKIP, "frame_skip", NUMBER),
    (P_CTRL_W, "ctrl_cost_weight", NUMBER),
    (P_IMPACT_W, "impact_cost_weight", NUMBER),
    ((P_IC_LO, P_IC_HI), "impact_cost_range", PAIR),
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
    p[P_TIMESTEP] = model.opt.timestep  # the linup reward divides by the timestep, not dt
    p[P_V4] = v4
    return p, humanoid_obs_dim(model.nq, model.nv, model.nbody, p[P_EXCLUDE] != 0,
                               p[P_CINERT] != 0, p[P_CVEL] != 0, p[P_QFRC] != 0, p[P_CFRC] != 0,
                               v4)


# HumanoidStandup-v4 (tasks/humanoidstandup_v4.py): v5's defaults, none of them a kwarg; the
# whole cinert, cvel, qfrc_actuator and cfrc_ext observed; only the three reward terms
# reported, at steps
FIXED_V4 = tuple(DEFAULTS)
INFO_V4 = [
    (None, 3, np.float64, False, False),
    ("reward_linup", 1, np.float64, True, False),
    ("reward_quadctrl", 1, np.float64, True, False),
    ("reward_impact", 1, np.float64, True, False),
    (None, "ntendon", np.float64, False, False),
    (None, "ntendon", np.float64, False, False),
]


cdef inline void _obs(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    humanoid_obs(e, p[P_EXCLUDE] != 0, p[P_CINERT] != 0, p[P_CVEL] != 0, p[P_QFRC] != 0,
                 p[P_CFRC] != 0, p[P_V4] != 0)


cdef void _common_info(MjEnv* e) noexcept nogil:
    cdef mjData* d = e.d
    e.info[I_X] = d.qpos[0]
    e.info[I_Y] = d.qpos[1]
    e.info[I_Z] = d.qpos[2] - e.m.qpos0[2]
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
    cdef double uph, ctrl, impact
    if sim_step(e, <int> p[P_FRAME_SKIP]):
        return 1
    uph = (d.qpos[2] - 0.0) / p[P_TIMESTEP]
    ctrl = humanoid_ctrl_cost(e, p[P_CTRL_W])
    impact = humanoid_contact_cost(e, p[P_IMPACT_W], p[P_IC_LO], p[P_IC_HI])
    e.rew[0] = ((uph - ctrl) - impact) + 1.0
    e.term[0] = False
    _obs(e)
    _common_info(e)
    e.info[I_LINUP] = uph
    e.info[I_QUADCTRL] = -ctrl
    e.info[I_IMPACT] = -impact
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
