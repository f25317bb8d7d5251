"""Ant-v5 (gymnasium.envs.mujoco.ant_v5) and, behind P_V4, Ant-v4 (ant_v4): kernels and
configuration."""
from libc.math cimport INFINITY

from cypool.mujoco._mj.mujoco cimport mjModel, mjData
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, sim_step, reset_noisy, np_norm
from cypool.mujoco._numeric cimport ctrl_cost, clip, all_finite
from cypool.mujoco.tasks._common cimport obs_qpos_qvel, xy_info, cfrc_sum_sq

import numpy as np

from cypool.mujoco.tasks._config import (param_row, require, kwarg_body_id, body_id as named_body,
                                         NUMBER, BOOL, PAIR, DT)

# Parameter layout (one row per env).
cdef enum:
    P_FRAME_SKIP, P_DT, P_FORWARD_W, P_CTRL_W, P_CONTACT_W, P_HEALTHY_REWARD, P_MAIN_BODY,
    P_TERMINATE, P_Z_LO, P_Z_HI, P_CF_LO, P_CF_HI, P_NOISE, P_EXCLUDE, P_CFRC, P_V4, NPARAM

# Info columns.
cdef enum:
    I_X, I_Y, I_DIST, I_VX, I_VY, I_FWD, I_CTRL, I_CONTACT, I_SURVIVE

ID = "Ant-v5"
ID_V4 = "Ant-v4"
MAX_EPISODE_STEPS = 1000
DEFAULTS = dict(
    xml_file="ant.xml", frame_skip=5, default_camera_config={"distance": 4.0},
    forward_reward_weight=1.0, ctrl_cost_weight=0.5, contact_cost_weight=5e-4,
    healthy_reward=1.0, main_body=1, terminate_when_unhealthy=True, healthy_z_range=(0.2, 1.0),
    contact_force_range=(-1.0, 1.0), reset_noise_scale=0.1,
    exclude_current_positions_from_observation=True, include_cfrc_ext_in_observation=True,
)
# (key, width, dtype, reported on step, reported on reset); dtype "action": the action's,
# "healthy_reward": that kwarg's type (gymnasium's reward_survive is an int for an int kwarg)
# keys computed with np.linalg.norm, i.e. numpy's BLAS dot (cypool._numpy_blas)
DOT_KEYS = ("distance_from_origin",)
INFO = [
    ("x_position", 1, np.float64, True, True),
    ("y_position", 1, np.float64, True, True),
    ("distance_from_origin", 1, np.float64, True, True),
    ("x_velocity", 1, np.float64, True, False),
    ("y_velocity", 1, np.float64, True, False),
    ("reward_forward", 1, np.float64, True, False),
    ("reward_ctrl", 1, "action", True, False),
    ("reward_contact", 1, np.float64, True, False),
    ("reward_survive", 1, "healthy_reward", True, False),
]


# (column, kwarg, kind) for _config.param_row; P_MAIN_BODY is looked up in configure
PARAMS = [
    (P_FRAME_SKIP, "frame_skip", NUMBER),
    (P_DT, "frame_skip", DT),
    (P_FORWARD_W, "forward_reward_weight", NUMBER),
    (P_CTRL_W, "ctrl_cost_weight", NUMBER),
    (P_CONTACT_W, "contact_cost_weight", NUMBER),
    (P_HEALTHY_REWARD, "healthy_reward", NUMBER),
    (P_TERMINATE, "terminate_when_unhealthy", BOOL),
    ((P_Z_LO, P_Z_HI), "healthy_z_range", PAIR),
    ((P_CF_LO, P_CF_HI), "contact_force_range", PAIR),
    (P_NOISE, "reset_noise_scale", NUMBER),
    (P_EXCLUDE, "exclude_current_positions_from_observation", BOOL),
    (P_CFRC, "include_cfrc_ext_in_observation", BOOL),
]


def configure(model, kw, v4=False):
    """Parameter row and observation size for these kwargs on this (Python-bindings) model."""
    require(ID, model, kw, [("nq", 3, "qpos[0:3]: x, y and the torso height")])
    # v4 reads the body named "torso" (gymnasium's get_body_com("torso"))
    body_id = named_body(ID_V4, model, kw, "torso") if v4 else kwarg_body_id(model, kw,
                                                                            "main_body")
    p = param_row(model, kw, NPARAM, PARAMS_V4 if v4 else PARAMS)
    p[P_MAIN_BODY] = body_id
    p[P_V4] = v4
    # v4 observes every body's forces, the world's (zeros) too
    bodies = model.nbody if v4 else model.nbody - 1
    obs_dim = model.nq + model.nv - 2 * int(p[P_EXCLUDE]) + bodies * 6 * int(p[P_CFRC])
    return p, obs_dim


# Ant-v4 (tasks/ant_v4.py): no forward weight, frame_skip or main body kwargs (fixed at
# v5's defaults); use_contact_forces (default off) adds the forces to the observation and
# their cost to the reward, and then reports -contact cost as reward_ctrl (gymnasium's v4 does)
DEFAULTS_V4 = dict(
    xml_file="ant.xml", ctrl_cost_weight=0.5, use_contact_forces=False, contact_cost_weight=5e-4,
    healthy_reward=1.0, terminate_when_unhealthy=True, healthy_z_range=(0.2, 1.0),
    contact_force_range=(-1.0, 1.0), reset_noise_scale=0.1,
    exclude_current_positions_from_observation=True,
    frame_skip=5, default_camera_config={"distance": 4.0}, forward_reward_weight=1.0,
    main_body=1,
)
FIXED_V4 = ("frame_skip", "default_camera_config", "forward_reward_weight", "main_body")
PARAMS_V4 = [(c, "use_contact_forces" if k == "include_cfrc_ext_in_observation" else k, kind)
             for c, k, kind in PARAMS]
INFO_V4 = [
    ("reward_forward", 1, np.float64, True, False, I_FWD),
    ("reward_ctrl", 1, lambda kw: np.float64 if kw["use_contact_forces"] else "action", True,
     False, I_CTRL),
    ("reward_survive", 1, np.float64, True, False, I_SURVIVE),   # float(...) * healthy_reward
    ("x_position", 1, np.float64, True, False, I_X),
    ("y_position", 1, np.float64, True, False, I_Y),
    ("distance_from_origin", 1, np.float64, True, False, I_DIST),
    ("x_velocity", 1, np.float64, True, False, I_VX),
    ("y_velocity", 1, np.float64, True, False, I_VY),
    ("forward_reward", 1, np.float64, True, False, I_FWD),
    # never in gymnasium's v4 info; cypool.envpool reports it (EnvPool's Ant-v4 key)
    ("reward_contact", 1, np.float64, False, False, I_CONTACT),
]


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, j = obs_qpos_qvel(e, 2 if p[P_EXCLUDE] != 0 else 0, INFINITY)
    if p[P_CFRC] != 0:
        for k in range(0 if p[P_V4] != 0 else 6, e.m.nbody * 6):
            e.obs[j] = clip(e.d.cfrc_ext[k], p[P_CF_LO], p[P_CF_HI])
            j += 1


cdef bint _healthy(MjEnv* e) noexcept nogil:
    cdef mjData* d = e.d
    cdef double z = d.qpos[2]
    return (all_finite(d.qpos, e.m.nq) and all_finite(d.qvel, e.m.nv)
            and e.prm[P_Z_LO] <= z and z <= e.prm[P_Z_HI])


cdef int _reset(MjEnv* e) noexcept nogil:
    if reset_noisy(e, e.prm[P_NOISE], True):
        return 1
    _obs(e)
    xy_info(e, I_X, I_Y, I_DIST)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const mjModel* m = e.m
    cdef mjData* d = e.d
    cdef const double* p = e.prm
    cdef Py_ssize_t b = <Py_ssize_t> p[P_MAIN_BODY]
    cdef double x0 = d.xpos[3 * b], y0 = d.xpos[3 * b + 1]
    cdef double vx, vy, fwd, healthy, ctrl, contact
    cdef bint is_healthy
    if sim_step(e, <int> p[P_FRAME_SKIP]):
        return 1
    vx = (d.xpos[3 * b] - x0) / p[P_DT]
    vy = (d.xpos[3 * b + 1] - y0) / p[P_DT]
    _obs(e)
    fwd = vx * p[P_FORWARD_W]
    is_healthy = _healthy(e)
    ctrl = ctrl_cost(p[P_CTRL_W], e.act, m.nu, e.act_f32)
    if p[P_V4] != 0:
        return _step_v4(e, is_healthy, fwd, ctrl, vx, vy)
    healthy = (1.0 if is_healthy else 0.0) * p[P_HEALTHY_REWARD]
    contact = p[P_CONTACT_W] * cfrc_sum_sq(e, p[P_CF_LO], p[P_CF_HI])
    e.rew[0] = (fwd + healthy) - (ctrl + contact)
    e.term[0] = (not is_healthy) and p[P_TERMINATE] != 0
    xy_info(e, I_X, I_Y, I_DIST)
    e.info[I_VX] = vx
    e.info[I_VY] = vy
    e.info[I_FWD] = fwd
    e.info[I_CTRL] = -ctrl
    e.info[I_CONTACT] = -contact
    e.info[I_SURVIVE] = healthy
    return 0


cdef int _step_v4(MjEnv* e, bint is_healthy, double fwd, double ctrl, double vx,
                  double vy) noexcept nogil:
    """Ant-v4's rewards and info: the healthy reward is paid while terminate_when_unhealthy
    holds (even on the unhealthy last step), the contact cost only with use_contact_forces,
    and the positions are the torso's xpos (kinematics of the last substep's start)."""
    cdef const double* p = e.prm
    cdef const double* xy = e.d.xpos + 3 * <Py_ssize_t> p[P_MAIN_BODY]
    cdef double healthy, contact = 0.0
    healthy = (1.0 if (is_healthy or p[P_TERMINATE] != 0) else 0.0) * p[P_HEALTHY_REWARD]
    if p[P_CFRC] != 0:
        contact = p[P_CONTACT_W] * cfrc_sum_sq(e, p[P_CF_LO], p[P_CF_HI])
        e.rew[0] = (fwd + healthy) - (ctrl + contact)
        e.info[I_CTRL] = -contact
    else:
        e.rew[0] = (fwd + healthy) - ctrl
        e.info[I_CTRL] = -ctrl
    e.term[0] = (not is_healthy) and p[P_TERMINATE] != 0
    e.info[I_X] = xy[0]
    e.info[I_Y] = xy[1]
    e.info[I_DIST] = np_norm(e, xy, 2)
    e.info[I_VX] = vx
    e.info[I_VY] = vy
    e.info[I_FWD] = fwd
    e.info[I_CONTACT] = -contact
    e.info[I_SURVIVE] = healthy
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
