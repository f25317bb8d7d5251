"""Walker2d-v5 (gymnasium.envs.mujoco.walker2d_v5): kernels and configuration."""

from cypool.mujoco._task cimport export_task, MjEnv, MjTask
from cypool.mujoco.tasks._planar cimport (planar_reset, planar_step, NPARAM, P_FRAME_SKIP,
    P_DT, P_FORWARD_W, P_CTRL_W, P_HEALTHY_REWARD, P_TERMINATE, P_Z_LO, P_Z_HI, P_ANGLE_LO,
    P_ANGLE_HI, P_NOISE, P_EXCLUDE, P_V4)

import numpy as np

from cypool.mujoco.tasks._config import param_row, require, NUMBER, BOOL, PAIR, DT

ID = "Walker2d-v5"
MAX_EPISODE_STEPS = 1000
DEFAULTS = dict(
    xml_file="walker2d_v5.xml", frame_skip=4,
    default_camera_config={"trackbodyid": 2, "distance": 4.0,
                           "lookat": np.array((0.0, 0.0, 1.15)), "elevation": -20.0},
    forward_reward_weight=1.0, ctrl_cost_weight=1e-3, healthy_reward=1.0,
    terminate_when_unhealthy=True, healthy_z_range=(0.8, 2.0), healthy_angle_range=(-1.0, 1.0),
    reset_noise_scale=5e-3, exclude_current_positions_from_observation=True,
)
# (key, width, dtype, reported on step, reported on reset); dtype "action": the action's,
# "healthy_reward": that kwarg's type (gymnasium's reward_survive is an int for an int kwarg)
INFO = [
    ("x_position", 1, np.float64, True, True),
    ("z_distance_from_origin", 1, np.float64, True, True),
    ("x_velocity", 1, np.float64, True, False),
    ("reward_forward", 1, np.float64, True, False),
    ("reward_ctrl", 1, "action", True, False),
    ("reward_survive", 1, "healthy_reward", True, False),
]


# (column, kwarg, kind) for _config.param_row
PARAMS = [
    (P_FRAME_SKIP, "frame_skip", NUMBER),
    (P_DT, "frame_skip", DT),
    (P_FORWARD_W, "forward_reward_weight", NUMBER),
    (P_CTRL_W, "ctrl_cost_weight", NUMBER),
    (P_HEALTHY_REWARD, "healthy_reward", NUMBER),
    (P_TERMINATE, "terminate_when_unhealthy", BOOL),
    ((P_Z_LO, P_Z_HI), "healthy_z_range", PAIR),
    ((P_ANGLE_LO, P_ANGLE_HI), "healthy_angle_range", PAIR),
    (P_NOISE, "reset_noise_scale", NUMBER),
    (P_EXCLUDE, "exclude_current_positions_from_observation", BOOL),
]


def configure(model, kw, v4=False):
    """Parameter row and observation size for these kwargs on this (Python-bindings) model."""
    require(ID, model, kw, [("nq", 3, "qpos[0:3]: x, z and the torso angle")])
    p = param_row(model, kw, NPARAM, PARAMS)
    p[P_V4] = v4
    return p, model.nq + model.nv - int(p[P_EXCLUDE])


cdef int _reset(MjEnv* e) noexcept nogil:
    return planar_reset(e)


cdef int _step(MjEnv* e) noexcept nogil:
    return planar_step(e, False)


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
