"""Hopper-v5 (gymnasium.envs.mujoco.hopper_v5): kernels and configuration."""
from cpython.pycapsule cimport PyCapsule_New

from cypool.mujoco._mj.mujoco cimport mjModel, mjData
from cypool.mujoco._task cimport MjEnv, MjTask, sim_step, reset_noisy
from cypool.mujoco._numeric cimport ctrl_cost, clip

import numpy as np

# Parameter layout (one row per env).
cdef enum:
    P_FRAME_SKIP, P_DT, P_FORWARD_W, P_CTRL_W, P_HEALTHY_REWARD, P_TERMINATE, P_STATE_LO,
    P_STATE_HI, P_Z_LO, P_Z_HI, P_ANGLE_LO, P_ANGLE_HI, P_NOISE, P_EXCLUDE, NPARAM

# Info columns.
cdef enum:
    I_X, I_Z_DIST, I_VX, I_FWD, I_CTRL, I_SURVIVE

ID = "Hopper-v5"
MAX_EPISODE_STEPS = 1000
DEFAULTS = dict(
    xml_file="hopper.xml", frame_skip=4,
    default_camera_config={"trackbodyid": 2, "distance": 3.0,
                           "lookat": np.array((0.0, 0.0, 1.15)), "elevation": -20.0},
    forward_reward_weight=1.0, ctrl_cost_weight=1e-3, healthy_reward=1.0,
    terminate_when_unhealthy=True, healthy_state_range=(-100.0, 100.0),
    healthy_z_range=(0.7, float("inf")), healthy_angle_range=(-0.2, 0.2),
    reset_noise_scale=5e-3, exclude_current_positions_from_observation=True,
)
# (key, width, dtype, reported on step, reported on reset); dtype "action": the action's
INFO = [
    ("x_position", 1, np.float64, True, True),
    ("z_distance_from_origin", 1, np.float64, True, True),
    ("x_velocity", 1, np.float64, True, False),
    ("reward_forward", 1, np.float64, True, False),
    ("reward_ctrl", 1, "action", True, False),
    ("reward_survive", 1, np.float64, True, False),
]


def configure(model, kw):
    """Parameter row and observation size for these kwargs on this (Python-bindings) model."""
    p = np.zeros(NPARAM)
    p[P_FRAME_SKIP] = kw["frame_skip"]
    p[P_DT] = model.opt.timestep * kw["frame_skip"]
    p[P_FORWARD_W] = kw["forward_reward_weight"]
    p[P_CTRL_W] = kw["ctrl_cost_weight"]
    p[P_HEALTHY_REWARD] = kw["healthy_reward"]
    p[P_TERMINATE] = bool(kw["terminate_when_unhealthy"])
    p[P_STATE_LO], p[P_STATE_HI] = kw["healthy_state_range"]
    p[P_Z_LO], p[P_Z_HI] = kw["healthy_z_range"]
    p[P_ANGLE_LO], p[P_ANGLE_HI] = kw["healthy_angle_range"]
    p[P_NOISE] = kw["reset_noise_scale"]
    p[P_EXCLUDE] = bool(kw["exclude_current_positions_from_observation"])
    obs_dim = model.nq + model.nv - int(p[P_EXCLUDE])
    return p, obs_dim


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const mjModel* m = e.m
    cdef mjData* d = e.d
    cdef Py_ssize_t k, j = 0, start = 1 if e.prm[P_EXCLUDE] != 0 else 0
    for k in range(start, m.nq):
        e.obs[j] = d.qpos[k]
        j += 1
    for k in range(m.nv):
        e.obs[j] = clip(d.qvel[k], -10.0, 10.0)
        j += 1


cdef bint _healthy(MjEnv* e) noexcept nogil:
    # every element of state_vector()[2:] strictly inside the state range, then z and angle
    cdef const mjModel* m = e.m
    cdef mjData* d = e.d
    cdef const double* p = e.prm
    cdef double lo = p[P_STATE_LO], hi = p[P_STATE_HI], z = d.qpos[1], angle = d.qpos[2]
    cdef Py_ssize_t k
    for k in range(2, m.nq):
        if not (lo < d.qpos[k] and d.qpos[k] < hi):
            return False
    for k in range(m.nv):
        if not (lo < d.qvel[k] and d.qvel[k] < hi):
            return False
    return (p[P_Z_LO] < z and z < p[P_Z_HI]) and (p[P_ANGLE_LO] < angle and angle < p[P_ANGLE_HI])


cdef void _position_info(MjEnv* e) noexcept nogil:
    e.info[I_X] = e.d.qpos[0]
    e.info[I_Z_DIST] = e.d.qpos[1] - e.m.qpos0[1]


cdef int _reset(MjEnv* e) noexcept nogil:
    if reset_noisy(e, e.prm[P_NOISE], False):
        return 1
    _obs(e)
    _position_info(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const mjModel* m = e.m
    cdef mjData* d = e.d
    cdef const double* p = e.prm
    cdef double x0 = d.qpos[0]
    cdef double vx, fwd, healthy, ctrl
    cdef bint is_healthy
    if sim_step(e, <int> p[P_FRAME_SKIP]):
        return 1
    vx = (d.qpos[0] - x0) / p[P_DT]
    _obs(e)
    fwd = p[P_FORWARD_W] * vx
    is_healthy = _healthy(e)
    healthy = (1.0 if is_healthy else 0.0) * p[P_HEALTHY_REWARD]
    ctrl = ctrl_cost(p[P_CTRL_W], e.act, m.nu, e.act_f32)
    e.rew[0] = (fwd + healthy) - ctrl
    e.term[0] = (not is_healthy) and p[P_TERMINATE] != 0
    _position_info(e)
    e.info[I_VX] = vx
    e.info[I_FWD] = fwd
    e.info[I_CTRL] = -ctrl
    e.info[I_SURVIVE] = healthy
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return PyCapsule_New(&TASK, "cypool.MjTask", NULL)
