"""Hopper-v5 (gymnasium.envs.mujoco.hopper_v5): kernels and configuration."""
from cpython.pycapsule cimport PyCapsule_New

from cypool.mujoco._task cimport MjEnv, MjTask
from cypool.mujoco.tasks._planar cimport (planar_reset, planar_step, NPARAM, P_FRAME_SKIP,
    P_DT, P_FORWARD_W, P_CTRL_W, P_HEALTHY_REWARD, P_TERMINATE, P_STATE_LO, P_STATE_HI,
    P_Z_LO, P_Z_HI, P_ANGLE_LO, P_ANGLE_HI, P_NOISE, P_EXCLUDE)

import numpy as np

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


cdef int _reset(MjEnv* e) noexcept nogil:
    return planar_reset(e)


cdef int _step(MjEnv* e) noexcept nogil:
    return planar_step(e, True)


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return PyCapsule_New(&TASK, "cypool.MjTask", NULL)
