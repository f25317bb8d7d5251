"""Registers the MuJoCo family (imported by cypool.entry): each id of family.TASKS is served
by its FamilySpec (family.task_spec). Light: the task table, the compiled pool and the mujoco
package are imported only when a MuJoCo id is made or listed."""
from cypool.registry import register_family


def _ids():
    from cypool.mujoco.family import TASKS
    return list(TASKS)


def _spec(env_id):
    from cypool.mujoco.family import task_spec
    return task_spec(env_id)


def _make(env_id, *args, **kwargs):
    from cypool.api import SpecFamily
    return SpecFamily(_spec(env_id), env_id, *args, **kwargs)


def _limit(env_id):
    return _spec(env_id).max_episode_steps


def _config():
    from cypool._mujoco_import import import_mujoco
    from cypool.mujoco import _pool

    return {"mujoco_compiled": _pool.HEADER_VERSION, "mujoco_runtime": _pool.runtime_version()[1],
            "mujoco_python": import_mujoco().__version__}


def _remote_setup(env_id):
    """A user's task (register_task) is registered again in a Ray actor."""
    import functools

    from cypool.mujoco.family import user_task_module

    module = user_task_module(env_id)
    return None if module is None else functools.partial(_register_again, env_id, module)


def _register_again(env_id, module):
    from cypool.mujoco.family import register_task
    from cypool.registry import list_envs

    if env_id not in list_envs():
        register_task(env_id, module)


register_family("mujoco", env_ids=_ids, make=_make, default_max_episode_steps=_limit,
                config=_config, remote_setup=_remote_setup, spec=_spec)
