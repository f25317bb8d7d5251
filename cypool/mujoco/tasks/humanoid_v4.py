"""Humanoid-v4 (gymnasium.envs.mujoco.humanoid_v4): Humanoid-v5's kernels with their v4
switch."""
import functools

from cypool.mujoco.tasks import humanoid as _v5

ID = "Humanoid-v4"
MAX_EPISODE_STEPS = 1000
DEFAULTS = _v5.DEFAULTS_V4
FIXED_KWARGS = _v5.FIXED_V4
INFO = _v5.INFO_V4
DOT_KEYS = _v5.DOT_KEYS
configure = functools.partial(_v5.configure, v4=True)
task_capsule = _v5.task_capsule
