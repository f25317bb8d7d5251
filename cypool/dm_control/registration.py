"""Registers the dm_control family (imported by cypool.entry): ids dm_control/<domain>-<task>-v0,
each served by its FamilySpec (family.task_spec). Light: the pool, mujoco and dm_control's
models are touched only when an id is made."""
from cypool.registry import register_family


def _ids():
    from cypool.dm_control.family import env_ids
    return env_ids()


def _spec(env_id):
    from cypool.dm_control.family import task_spec
    return task_spec(env_id)


def _make(env_id, *args, **kwargs):
    from cypool.api import SpecFamily
    return SpecFamily(_spec(env_id), env_id, *args, **kwargs)


register_family("dm_control", env_ids=_ids, make=_make,
                default_max_episode_steps=lambda env_id: None,
                module="cypool.dm_control.registration", spec=_spec)
