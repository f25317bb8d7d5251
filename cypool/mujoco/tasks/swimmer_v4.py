"""Swimmer-v4 (gymnasium.envs.mujoco.swimmer_v4): Swimmer-v5's kernels as they are (the same
maths); v4 names the forward reward reward_fwd and forward_reward (twice), has no xml_file or
frame_skip kwarg and reports nothing at reset."""
import numpy as np

from cypool.mujoco.tasks import swimmer as _v5

ID = "Swimmer-v4"
MAX_EPISODE_STEPS = 1000
DEFAULTS = dict(_v5.DEFAULTS)
FIXED_KWARGS = ("xml_file", "frame_skip")     # default_camera_config reaches MujocoEnv
DOT_KEYS = _v5.DOT_KEYS
# v5's columns: 0 x, 1 y, 2 distance, 3 vx, 4 vy, 5 forward reward, 6 ctrl reward
INFO = [
    ("reward_fwd", 1, np.float64, True, False, 5),
    ("reward_ctrl", 1, "action", True, False, 6),
    ("x_position", 1, np.float64, True, False, 0),
    ("y_position", 1, np.float64, True, False, 1),
    ("distance_from_origin", 1, np.float64, True, False, 2),
    ("x_velocity", 1, np.float64, True, False, 3),
    ("y_velocity", 1, np.float64, True, False, 4),
    ("forward_reward", 1, np.float64, True, False, 5),
]
configure = _v5.configure
task_capsule = _v5.task_capsule
