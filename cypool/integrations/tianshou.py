"""Tianshou adapter: a cypool env as the vector env Tianshou's collectors take.

Tianshou (2.x) drives a vector env through its ``BaseVectorEnv`` surface, not gymnasium's
``VectorEnv``: ``len(env)``, ``step(action, id)`` of the *ready* envs only, and the envs that
ended reset by the collector itself with ``reset(env_id=done_ids)`` (no autoreset: the step
that ends an episode returns its last observation). :class:`TianshouVecEnv` gives that
surface over a cypool pool made with ``autoreset_mode="disabled"``:

==============================  ==========================================================
Tianshou ``BaseVectorEnv``      cypool
==============================  ==========================================================
``len(env)``, ``env_num``       ``num_envs``
``reset(env_id=ids, seed=)``    ``reset(seed=, options={"reset_mask": ...})``; the rows of
                                ``ids`` only; infos an object array of one dict per id
``step(action, id=ids)``        ``step(action, env_ids=ids)``; rows in the order of ``ids``;
                                ``info[k]["env_id"]`` is the env's index, as Tianshou adds it
``seed(s)``                     resets env i with seed ``s + i`` now (a list: one each), as
                                ``BaseVectorEnv.seed``'s workers do; ``reset(seed=s)`` gives
                                every env reset seed ``s``, as Tianshou passes reset kwargs
``action_space``,               one env's spaces (as EnvPool's, which Tianshou's collector
``observation_space``           samples per env)
``get_env_attr``/``set_env_attr``  ``get_attr``/``set_attr`` (task kwargs,
                                ``max_episode_steps``, ...), per id
``render()``, ``close()``       ``render()``, ``close()``
==============================  ==========================================================

The adapter imports nothing from Tianshou (its collectors duck-type the env), so it is usable
and testable without it. The pool steps synchronously (``is_async`` is False); a Tuple
observation space is refused, as Tianshou refuses one.

Example
-------
>>> from cypool.integrations.tianshou import to_tianshou
>>> from tianshou.data import Collector, VectorReplayBuffer
>>> train_envs = to_tianshou("CartPole-v1", 8, seed=0)
>>> collector = Collector(policy, train_envs, VectorReplayBuffer(20_000, len(train_envs)))  # doctest: +SKIP
"""
from __future__ import annotations

from typing import Any

import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode

from cypool.integrations._info import split_info
from cypool.vector import VectorEnv

__all__ = ["TianshouVecEnv", "to_tianshou"]


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


class TianshouVecEnv:
    """A cypool ``VectorEnv`` (``autoreset_mode="disabled"``, synchronous) with the surface of
    Tianshou's ``BaseVectorEnv``; see the module note for the mapping.

    Parameters
    ----------
    env : cypool.VectorEnv
        Made with ``autoreset_mode="disabled"`` and no ``batch_size`` below ``num_envs``.
    """

    is_async = False

    def __init__(self, env: VectorEnv):
        if not isinstance(env, VectorEnv):
            raise TypeError(f"TianshouVecEnv wraps a cypool VectorEnv (cypool.make_vec), got "
                            f"{type(env).__name__}; or call to_tianshou(env_id, num_envs)")
        if env.autoreset_mode is not AutoresetMode.DISABLED:
            raise ValueError("Tianshou resets the envs that ended itself (reset(env_id=...)); "
                             "make the env with autoreset_mode='disabled' (this one has "
                             f"{env.autoreset_mode.value!r})")
        if env.is_async:
            raise ValueError("TianshouVecEnv steps synchronously; make the env without "
                             f"batch_size (this one has batch_size={env.batch_size} of "
                             f"{env.num_envs} envs)")
        if isinstance(env.single_observation_space, gym.spaces.Tuple):
            raise TypeError(f"{env.env_id}: Tianshou does not take a Tuple observation space "
                            "(its vector envs refuse one)")
        self.env = env
        self.env_num = env.num_envs
        self.waiting_id: list[int] = []           # Tianshou's async collector reads these
        self.ready_id = list(range(self.env_num))

    # ------------------------------------------------------------------ sizes and spaces
    def __len__(self) -> int:
        return self.env_num

    @property
    def action_space(self) -> gym.Space:
        return self.env.single_action_space

    @property
    def observation_space(self) -> gym.Space:
        return self.env.single_observation_space

    @property
    def is_closed(self) -> bool:
        return self.env.closed

    def __repr__(self) -> str:
        return f"TianshouVecEnv({self.env!r})"

    # ------------------------------------------------------------------ ids
    def _ids(self, id) -> np.ndarray:
        """Tianshou's ``_wrap_id``: None (every env), an int or a sequence of distinct ints
        in range, as an int64 array (ValueError/TypeError otherwise)."""
        n = self.env_num
        if id is None:
            return np.arange(n, dtype=np.int64)
        if isinstance(id, (bool, np.bool_)):
            raise TypeError(f"env ids must be ints, got {id!r}")
        ids = np.atleast_1d(np.asarray(id))
        if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
            raise TypeError(f"env ids must be an int or a 1-D sequence of ints, got {id!r}")
        ids = ids.astype(np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= n):
            raise ValueError(f"env ids must be in [0, {n}), got {ids.tolist()}")
        if np.unique(ids).size != ids.size:
            raise ValueError(f"env ids must be distinct, got {ids.tolist()}")
        return ids

    def _obs_rows(self, obs, ids):
        if isinstance(obs, dict):        # as Tianshou stacks dict observations: one per env
            rows = np.empty(len(ids), dtype=object)
            rows[:] = [{k: v[i] for k, v in obs.items()} for i in ids]
            return rows
        return obs[ids]

    @staticmethod
    def _infos(rows) -> np.ndarray:
        out = np.empty(len(rows), dtype=object)
        out[:] = rows
        return out

    # ------------------------------------------------------------------ reset / step
    def seed(self, seed: int | list[int | None] | None = None) -> list[list[int | None]]:
        """Seed every env now, as ``BaseVectorEnv.seed`` does (its workers reset each env with
        its seed): an int s gives env i ``s + i``, a list one seed (or None) per env. Returns
        ``[[seed_0], [seed_1], ...]``, as Tianshou's workers report them."""
        n = self.env_num
        if seed is None or _is_int(seed):
            seeds = [None if seed is None else int(seed) + i for i in range(n)]
        elif isinstance(seed, (list, tuple, np.ndarray)) and len(seed) == n:
            seeds = list(seed)
        else:
            raise TypeError(f"seed must be an int, a list of {n} seeds or None, got {seed!r}")
        self.env.reset(seed=seeds)
        return [[s] for s in seeds]

    def reset(self, env_id=None, *, seed: int | list | None = None,
              options: dict | None = None, **kwargs: Any):
        """Reset envs ``env_id`` (None: every env); returns their observations and an object
        array of their info dicts, in the order of ``env_id``. ``seed``: an int is given to
        each env reset, as Tianshou passes its reset kwargs to every env (use :meth:`seed`
        for s + i), a list one seed (or None) per id; None continues each env's stream.
        cypool's envs take no reset options."""
        if kwargs:
            raise TypeError(f"reset() got unexpected keyword argument(s) {sorted(kwargs)}")
        if options:
            raise ValueError(f"unknown reset option(s) {sorted(options)}: cypool's "
                             f"{self.env.env_id} takes none")
        ids = self._ids(env_id)
        seeds = [None] * self.env_num
        if isinstance(seed, (list, tuple, np.ndarray)):
            if len(seed) != len(ids):
                raise ValueError(f"seed list must have one seed per env id ({len(ids)}), "
                                 f"got {len(seed)}")
            for i, s in zip(ids, seed):
                seeds[i] = s
        elif seed is not None:
            if not _is_int(seed):
                raise TypeError(f"seed must be an int, a list or None, got {seed!r}")
            for i in ids:
                seeds[i] = int(seed)
        mask = np.zeros(self.env_num, np.bool_)
        mask[ids] = True
        # the pool checks every seed before any env moves; no seed at all: None, so that
        # make_vec's seed= seeds the first reset
        obs, info = self.env.reset(seed=None if all(s is None for s in seeds) else seeds,
                                   options={"reset_mask": mask})
        rows = split_info(info, self.env_num)
        return self._obs_rows(obs, ids), self._infos([rows[i] for i in ids])

    def step(self, action, id=None):
        """Step envs ``id`` (None: every env) with one row of ``action`` each; returns
        (obs, rew, terminated, truncated, info) of those envs in that order, info an object
        array of dicts holding ``"env_id"``. An env that ended must be reset first."""
        if action is None:
            raise ValueError("action must not be None (this env steps synchronously)")
        ids = self._ids(id)
        act = np.asarray(action)
        if act.ndim == 0 or len(act) != len(ids):
            raise ValueError(f"action must have one row per env id ({len(ids)}), got shape "
                             f"{act.shape}")
        ended = ids[np.asarray(self.env.pool.done)[ids]]
        if ended.size:
            raise ValueError(f"env(s) {ended.tolist()} ended; reset them with "
                             f"reset(env_id={ended.tolist()}) before stepping them")
        whole = id is None
        obs, rew, term, trunc, info = self.env.step(act, None if whole else ids)
        n = len(ids)
        info = {k: v for k, v in info.items() if k not in ("env_id", "_env_id")}
        rows = split_info(info, n)
        for k, i in enumerate(ids):
            rows[k]["env_id"] = int(i)
        obs = self._obs_rows(obs, np.arange(n)) if isinstance(obs, dict) else obs
        return obs, rew, term, trunc, self._infos(rows)

    # ------------------------------------------------------------------ the rest
    def get_env_attr(self, key: str, id=None) -> list:
        """``key`` of envs ``id`` (cypool's ``get_attr``: task kwargs, ``spec``, ...)."""
        values = self.env.get_attr(key)
        return [values[i] for i in self._ids(id)]

    def set_env_attr(self, key: str, value: Any, id=None) -> None:
        """Set ``key`` to ``value`` for envs ``id`` (cypool's ``set_attr``)."""
        ids = self._ids(id)
        self.env.set_attr(key, [value] * len(ids), env_ids=ids)

    def render(self, **kwargs: Any) -> list:
        if kwargs:
            raise TypeError(f"render() takes no arguments, got {sorted(kwargs)}")
        return list(self.env.render())

    def close(self) -> None:
        self.env.close()


def to_tianshou(env: VectorEnv | str, num_envs: int | None = None,
                **make_vec_kwargs: Any) -> TianshouVecEnv:
    """A :class:`TianshouVecEnv`: of ``env`` (a cypool VectorEnv made with
    ``autoreset_mode="disabled"``), or of ``cypool.make_vec(env, num_envs,
    autoreset_mode="disabled", **make_vec_kwargs)`` when ``env`` is an id."""
    if isinstance(env, str):
        from cypool.make import make_vec

        if "autoreset_mode" in make_vec_kwargs:
            raise TypeError("to_tianshou makes the env with autoreset_mode='disabled' "
                            "(Tianshou resets the envs that ended itself)")
        venv = make_vec(env, 1 if num_envs is None else num_envs,
                               autoreset_mode="disabled", **make_vec_kwargs)
        try:
            return TianshouVecEnv(venv)
        except Exception:
            venv.close()
            raise
    if num_envs is not None or make_vec_kwargs:
        raise TypeError("num_envs and make_vec kwargs apply only when env is an env id")
    return TianshouVecEnv(env)
