"""HumanoidStandup-v4 (gymnasium.envs.mujoco.humanoidstandup_v4): HumanoidStandup-v5's kernels
with their v4 switch; gymnasium's v4 class has no task kwargs (v5's defaults are its
constants)."""
import functools

from cypool.mujoco.tasks import humanoidstandup as _v5

ID = "HumanoidStandup-v4"
MAX_EPISODE_STEPS = _v5.MAX_EPISODE_STEPS
DEFAULTS = _v5.DEFAULTS
FIXED_KWARGS = _v5.FIXED_V4
INFO = _v5.INFO_V4
configure = functools.partial(_v5.configure, v4=True)
task_capsule = _v5.task_capsule
