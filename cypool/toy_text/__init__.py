"""Toy text: gymnasium 1.4.0's toy-text envs as nogil kernels (FrozenLake-v1,
FrozenLake8x8-v1, Taxi-v4, CliffWalking-v1, CliffWalkingSlippery-v1, Blackjack-v1), built
only on cypool's public env API (:mod:`cypool.api`), as cypool/classic is.

Exact: the same seeds (env i: ``PCG64(SeedSequence(seed + i))``) and actions give gymnasium's
observations, rewards, terminated and info values bit for bit: the pools draw exactly
gymnasium's ``random()`` and ``choice``/``integers`` values from the same stream (see the pool
modules).

``ENVS`` describes the six ids as data: the pool ("module:Class"), one env's spaces, the
kwargs with their registered defaults, which of them are the pool's (one value for every env
of a pool) rather than per env, ``max_episode_steps``, the info keys and how gymnasium types
them, and render_fps. :func:`register` registers the ids that :func:`cypool.api.register_env`
can express today (Discrete observations; info columns of one value each).

What a façade must do to present these pools as gymnasium does (``FACADE_NOTES``):

- Blackjack-v1's observation is a ``Tuple(Discrete(32), Discrete(11), Discrete(2))``: the pool
  writes ONE ``(N, 3)`` int64 output ("obs"); gymnasium's vector obs is a tuple of the three
  ``(N,)`` int64 columns ``(obs[:, 0], obs[:, 1], obs[:, 2])``. It has no info (``{}``).
- ``info["prob"]`` (FrozenLake, CliffWalking) is int64 at reset and float64 after a step in
  gymnasium: its dtype is ``type(value)`` of the FIRST env, in index order, that reports the
  key in that call (an env reset in the call reports the int 1, a stepped env a float). When
  that env reset, the array is int64 and every other env's value is cast to int64 (a stepped
  slippery env's 0.333... is stored as 0). The pool's info column 0 holds the value as float64
  (1.0 at reset).
- Taxi's ``info["prob"]`` is float64 at reset and after steps (column 0), and
  ``info["action_mask"]`` is an ``(N, 6)`` int8 array (columns 1..6, 0.0/1.0), both reported
  at reset and after steps.
- ``desc`` and ``map_name`` are per pool (they set FrozenLake's observation space); every other
  kwarg is per env (populations' member_kwargs, set_attr).
- Rendering (rgb_array, ansi) is not done; the env states keep what it needs (FrozenLake's and
  CliffWalking's lastaction, Taxi's orientation, Blackjack's hands, suit and face).
- CliffWalking* and Blackjack-v1 have no time limit (episodes of a random CliffWalking policy
  last thousands of steps).
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np

__all__ = ["ENVS", "ENV_IDS", "FACADE_NOTES", "register"]

_MODULE = "cypool.toy_text"

FACADE_NOTES = __doc__.split("(``FACADE_NOTES``):", 1)[1].strip()

_FROZEN_LAKE_KWARGS = dict(desc=None, map_name="4x4", is_slippery=True,
                           success_rate=1.0 / 3.0, reward_schedule=(1, 0, 0))

# info keys: name -> (columns of the pool's info row, dtype after a step, dtype at reset)
# (None at reset: int64 if that call's first reporting env was reset, see FACADE_NOTES)
_PROB_INT_AT_RESET = {"prob": ((0, 1), np.float64, np.int64)}
_TAXI_INFO = {"prob": ((0, 1), np.float64, np.float64),
              "action_mask": ((1, 7), np.int8, np.int8)}

ENVS = {
    "FrozenLake-v1": dict(
        pool="cypool.toy_text._frozen_lake:FrozenLakePool",
        observation_space=gym.spaces.Discrete(16), action_space=gym.spaces.Discrete(4),
        kwargs={**_FROZEN_LAKE_KWARGS, "map_name": "4x4"}, pool_kwargs=("desc", "map_name"),
        max_episode_steps=100, info=_PROB_INT_AT_RESET, render_fps=4),
    "FrozenLake8x8-v1": dict(
        pool="cypool.toy_text._frozen_lake:FrozenLakePool",
        observation_space=gym.spaces.Discrete(64), action_space=gym.spaces.Discrete(4),
        kwargs={**_FROZEN_LAKE_KWARGS, "map_name": "8x8"}, pool_kwargs=("desc", "map_name"),
        max_episode_steps=200, info=_PROB_INT_AT_RESET, render_fps=4),
    "Taxi-v4": dict(
        pool="cypool.toy_text._taxi:TaxiPool",
        observation_space=gym.spaces.Discrete(500), action_space=gym.spaces.Discrete(6),
        kwargs=dict(is_rainy=False, fickle_passenger=False, rainy_probability=0.8,
                    fickle_probability=0.3), pool_kwargs=(),
        max_episode_steps=200, info=_TAXI_INFO, render_fps=4),
    "CliffWalking-v1": dict(
        pool="cypool.toy_text._cliff_walking:CliffWalkingPool",
        observation_space=gym.spaces.Discrete(48), action_space=gym.spaces.Discrete(4),
        kwargs=dict(is_slippery=False), pool_kwargs=(),
        max_episode_steps=None, info=_PROB_INT_AT_RESET, render_fps=4),
    "CliffWalkingSlippery-v1": dict(
        pool="cypool.toy_text._cliff_walking:CliffWalkingPool",
        observation_space=gym.spaces.Discrete(48), action_space=gym.spaces.Discrete(4),
        kwargs=dict(is_slippery=True), pool_kwargs=(),
        max_episode_steps=None, info=_PROB_INT_AT_RESET, render_fps=4),
    "Blackjack-v1": dict(
        pool="cypool.toy_text._blackjack:BlackjackPool",
        # the pool's obs output is (3,) int64; gymnasium's space is this Tuple
        observation_space=gym.spaces.Tuple((gym.spaces.Discrete(32), gym.spaces.Discrete(11),
                                            gym.spaces.Discrete(2))),
        action_space=gym.spaces.Discrete(2),
        kwargs=dict(natural=False, sab=True), pool_kwargs=(),
        max_episode_steps=None, info={}, render_fps=4),
}

ENV_IDS = tuple(ENVS)


def _number(env_id, name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                              np.floating)):
        raise TypeError(f"{env_id}: {name} must be a number, got {v!r}")


def _frozen_lake_check(env_id, nS):
    """check_kwargs of a FrozenLake id served through register_env: its observation space is
    the registered Discrete(nS), so the map must have nS cells."""
    def check(kw):
        from cypool.toy_text._tables import frozen_lake_desc

        desc = frozen_lake_desc(kw["desc"], kw["map_name"])
        if desc.size != nS:
            raise ValueError(f"{env_id}: the map has {desc.size} cells; {env_id}'s observation "
                             f"space is Discrete({nS}) (a map of another size needs the "
                             f"family contract, where spaces follow kwargs)")
        _number(env_id, "success_rate", kw["success_rate"])
        rs = kw["reward_schedule"]
        if (not isinstance(rs, (tuple, list)) or len(rs) != 3
                or not all(isinstance(x, (int, float, np.integer, np.floating)) for x in rs)):
            raise ValueError(f"{env_id}: reward_schedule must be 3 numbers, got {rs!r}")
        return None
    return check


def register() -> list[str]:
    """Register the ids register_env can serve today: FrozenLake-v1, FrozenLake8x8-v1,
    Taxi-v4, CliffWalking-v1, CliffWalkingSlippery-v1 (Blackjack-v1's Tuple observation is not
    expressible). Ids already served are skipped. Returns the ids registered.

    Deviations of the register_env path from gymnasium (its info keys are one column of one
    dtype each): ``info["prob"]`` is float64 at reset too (gymnasium: int64, see
    FACADE_NOTES), and Taxi's ``action_mask`` is not reported.
    """
    from cypool import families
    from cypool.api import register_env

    done = []
    served = set(families.list_envs())
    for env_id, d in ENVS.items():
        if env_id == "Blackjack-v1" or env_id in served:
            continue
        check = None
        if env_id.startswith("FrozenLake"):
            check = _frozen_lake_check(env_id, int(d["observation_space"].n))
        register_env(env_id, d["pool"], observation_space=d["observation_space"],
                     action_space=d["action_space"], kwargs=dict(d["kwargs"]),
                     max_episode_steps=d["max_episode_steps"],
                     info_keys={"prob": np.float64}, check_kwargs=check,
                     render_fps=d["render_fps"], module=_MODULE)
        done.append(env_id)
    return done
