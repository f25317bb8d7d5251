"""Hopper-v4 (gymnasium.envs.mujoco.hopper_v4): Hopper-v5's kernels with their v4 switch (the
healthy reward is paid whenever terminate_when_unhealthy holds); the model is hopper.xml, there
is no xml_file or frame_skip kwarg, and only x_position and x_velocity are reported, at
steps."""
import functools

import numpy as np

from cypool.mujoco.tasks import hopper as _v5

ID = "Hopper-v4"
MAX_EPISODE_STEPS = 1000
DEFAULTS = dict(_v5.DEFAULTS, xml_file="hopper.xml")
FIXED_KWARGS = ("xml_file", "frame_skip", "default_camera_config")
# v5's columns: 0 x, 1 z distance, 2 vx, then the reward terms v4 does not report
INFO = [
    ("x_position", 1, np.float64, True, False, 0),
    ("x_velocity", 1, np.float64, True, False, 2),
    (None, 6, np.float64, False, False, 0),
]
configure = functools.partial(_v5.configure, v4=True)
task_capsule = _v5.task_capsule
