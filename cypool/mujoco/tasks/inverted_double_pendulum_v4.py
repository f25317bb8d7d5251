"""InvertedDoublePendulum-v4 (gymnasium.envs.mujoco.inverted_double_pendulum_v4):
InvertedDoublePendulum-v5's kernels with their v4 switch; gymnasium's v4 class has no task
kwargs (v5's defaults are its constants)."""
import functools

import numpy as np

from cypool.mujoco.tasks import inverted_double_pendulum as _v5

ID = "InvertedDoublePendulum-v4"
MAX_EPISODE_STEPS = _v5.MAX_EPISODE_STEPS
# v5 passes no camera config (None); v4 passes its own
DEFAULTS = dict(_v5.DEFAULTS, default_camera_config={
    "trackbodyid": 0, "distance": 4.1225, "lookat": np.array((0.0, 0.0, 0.12250000000000005))})
FIXED_KWARGS = _v5.FIXED_V4
INFO = _v5.INFO_V4
configure = functools.partial(_v5.configure, v4=True)
task_capsule = _v5.task_capsule
