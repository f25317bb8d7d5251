"""Registers the dm_control family (imported by cypool.entry): ids dm_control/<domain>-<task>-v0.
Light: the pool, mujoco and dm_control's models are touched only when an id is made."""
from cypool.registry import register_family


def _ids():
    from cypool.dm_control.family import env_ids
    return env_ids()


def _make(*args, **kwargs):
    from cypool.dm_control.family import DmcFamily
    return DmcFamily(*args, **kwargs)


def _spec(env_id):
    """EnvPool's names of the id, for cypool.envpool (no model is loaded)."""
    from cypool.dm_control.envpool_names import spec
    return spec(env_id)


register_family("dm_control", env_ids=_ids, make=_make,
                default_max_episode_steps=lambda env_id: None,
                module="cypool.dm_control.registration", spec=_spec)
