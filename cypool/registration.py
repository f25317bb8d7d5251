"""Env ids, families, and gymnasium registration ("cypool/<id>")."""
from __future__ import annotations

import difflib
import functools

import gymnasium as gym

from cypool.mujoco.family import TASKS as _MUJOCO_TASKS

MUJOCO_MAX_EPISODE_STEPS = {"Reacher-v5": 50, "Pusher-v5": 100}


def family_of(env_id: str) -> str:
    if env_id in _MUJOCO_TASKS:
        return "mujoco"
    try:
        from cypool.atari.games import is_atari_id
    except ImportError:
        is_atari_id = None
    if is_atari_id is not None and is_atari_id(env_id):
        return "atari"
    close = difflib.get_close_matches(env_id, list_envs(), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise ValueError(f"unknown env id {env_id!r}{hint} (cypool.list_envs() lists them)")


def default_max_episode_steps(env_id: str):
    if env_id in _MUJOCO_TASKS:
        return MUJOCO_MAX_EPISODE_STEPS.get(env_id, 1000)
    return None


def list_envs() -> list[str]:
    ids = list(_MUJOCO_TASKS)
    try:
        from cypool.atari.games import atari_ids
        ids += atari_ids()
    except ImportError:
        pass
    return ids


def register_all():
    """Register every id as ``cypool/<id>`` with a vector entry point."""
    from cypool import make_vec

    for env_id in list_envs():
        name = f"cypool/{env_id}"
        if name in gym.registry:
            continue
        gym.register(name, vector_entry_point=functools.partial(make_vec, env_id),
                     max_episode_steps=default_max_episode_steps(env_id))
