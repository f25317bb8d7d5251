"""HalfCheetah-v4 (gymnasium.envs.mujoco.half_cheetah_v4): HalfCheetah-v5's kernels as they are
(the same maths); v4 names the forward reward reward_run, has no xml_file or frame_skip kwarg
and reports nothing at reset."""
import numpy as np

from cypool.mujoco.tasks import half_cheetah as _v5

ID = "HalfCheetah-v4"
MAX_EPISODE_STEPS = 1000
DEFAULTS = dict(_v5.DEFAULTS)
FIXED_KWARGS = ("xml_file", "frame_skip", "default_camera_config")
# v5's columns: x_position, x_velocity, forward reward, ctrl reward
INFO = [
    ("x_position", 1, np.float64, True, False),
    ("x_velocity", 1, np.float64, True, False),
    ("reward_run", 1, np.float64, True, False),
    ("reward_ctrl", 1, "action", True, False),
]
configure = _v5.configure
task_capsule = _v5.task_capsule
