"""Env ids and gymnasium registration; the families behind the ids live in cypool.registry.

Every cypool id is registered with gymnasium under the name :func:`gym_id` gives it:
``cypool/<id>`` (``cypool/Hopper-v5``), or, for an id with a namespace of its own,
``cypool-<namespace>/<name>`` (``dm_control/cartpole-swingup-v0`` ->
``cypool-dm_control/cartpole-swingup-v0``): gymnasium's ids hold one namespace at most
(``[namespace/](name)[-v(version)]``, its ``ENV_ID_RE``), so ``cypool/dm_control/...`` is
refused by ``gymnasium.make`` itself ("Malformed environment ID") before cypool is reached."""
from __future__ import annotations

import functools

import gymnasium as gym

from cypool._validate import gym_id
from cypool.registry import family_for, list_envs

__all__ = ["default_max_episode_steps", "list_envs", "gym_id", "register_id", "register_all"]



def default_max_episode_steps(env_id: str):
    return family_for(env_id).default_max_episode_steps(env_id)


def _make_single(env_id, **kwargs):
    """gymnasium.make's entry point: one env (cypool.SingleEnv) on a one-env pool."""
    from cypool.single import make_single

    return make_single(env_id, **kwargs)


def _make_vec(env_id, *args, **kwargs):
    from cypool.make import make_vec

    return make_vec(env_id, *args, **kwargs)


def check_env_id(env_id, where: str) -> str:
    """env_id as a registration takes it: a non-empty str (TypeError) that gymnasium accepts
    as the name of ``cypool/<env_id>`` (ValueError otherwise), checked before anything is
    registered."""
    if not isinstance(env_id, str) or not env_id:
        raise TypeError(f"{where}: env_id must be a non-empty str, got {env_id!r}")
    from gymnasium.envs.registration import parse_env_id

    try:
        namespace, _, _ = parse_env_id(f"cypool/{env_id}")
    except gym.error.Error:
        namespace = None
    if namespace != "cypool":
        raise ValueError(f"{where}: env_id {env_id!r} is not a valid gymnasium env name (it is "
                         f"registered as 'cypool/<env_id>'): use letters, digits, '_', '.', "
                         "':' and '-', optionally ending in -v<version>, e.g. 'MyEnv-v0'")
    return env_id


def register_id(env_id: str) -> None:
    """Register :func:`gym_id` of ``env_id`` (``cypool/<env_id>``, or
    ``cypool-<namespace>/<name>`` for a namespaced id) in gymnasium's registry:
    ``gymnasium.make_vec`` builds a pool, ``gymnasium.make`` one env
    (:class:`cypool.SingleEnv`); no-op if it is there."""
    name = gym_id(env_id)
    if name not in gym.registry:
        gym.register(name, entry_point=functools.partial(_make_single, env_id),
                     vector_entry_point=functools.partial(_make_vec, env_id),
                     max_episode_steps=default_max_episode_steps(env_id))


def register_all():
    """Register every id under its :func:`gym_id` (see register_id): ``cypool/<id>``, and
    ``cypool-<namespace>/<name>`` for an id with a namespace of its own
    (``dm_control/cheetah-run-v0`` -> ``cypool-dm_control/cheetah-run-v0``; gymnasium allows
    one namespace per id). An id gymnasium cannot parse in either form is left to
    cypool.make_vec and cypool.SingleEnv."""
    for env_id in list_envs():
        try:
            gym_id(env_id)
        except ValueError:
            continue
        register_id(env_id)
