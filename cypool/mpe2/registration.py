"""Registers the mpe2 family (imported by cypool.entry): ids mpe2/<module>, each served by its
FamilySpec (family.spec_of). Light: the pool and mpe2 are touched only when an id is made."""
from cypool.registry import register_family


def _ids():
    from cypool.mpe2.family import env_ids
    return env_ids()


def _spec(env_id):
    from cypool.mpe2.family import spec_of
    return spec_of(env_id)


def _make(env_id, *args, **kwargs):
    from cypool.api import SpecFamily
    return SpecFamily(_spec(env_id), env_id, *args, **kwargs)


register_family("mpe2", env_ids=_ids, make=_make,
                default_max_episode_steps=lambda env_id: None,
                module="cypool.mpe2.registration", spec=_spec)
