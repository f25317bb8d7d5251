"""Registers the Atari family (imported by cypool.entry): each game id is served by its
FamilySpec (family.game_spec). Light: the ids come from cypool.atari.games (a ROM list, no
emulator); the compiled pool is imported only when an Atari env is made."""
from cypool.registry import register_family


def _ids():
    from cypool.atari.games import atari_ids
    return atari_ids()


def _spec(env_id):
    from cypool.atari.family import game_spec
    return game_spec(env_id)


def _make(env_id, *args, **kwargs):
    from cypool.api import SpecFamily
    return SpecFamily(_spec(env_id), env_id, *args, **kwargs)


def _limit(env_id):
    from cypool.atari.games import ENVPOOL_MAX_EPISODE_STEPS
    return ENVPOOL_MAX_EPISODE_STEPS


def _config():
    try:
        from cypool.atari import _pool
    except ImportError:              # built without ALE
        return {"ale": None}
    return {"ale": _pool.ale_version()}


register_family("atari", env_ids=_ids, make=_make, default_max_episode_steps=_limit,
                config=_config, spec=_spec)
