"""Registers the MuJoCo family (imported by cypool.entry). Light: the task table, the
compiled pool and the mujoco package are imported only when a MuJoCo id is made or listed."""
from cypool.registry import register_family


def _ids():
    from cypool.mujoco.family import TASKS
    return list(TASKS)


def _make(*args, **kwargs):
    from cypool.mujoco.family import MujocoFamily
    return MujocoFamily(*args, **kwargs)


def _limit(env_id):
    from cypool.mujoco.family import task_module
    return task_module(env_id).MAX_EPISODE_STEPS


register_family("mujoco", env_ids=_ids, make=_make, default_max_episode_steps=_limit)
