"""One env as a ``gymnasium.Env``: what ``gymnasium.make("cypool/<id>")`` returns
(``"cypool-<namespace>/<name>"`` for an id with a namespace: ``cypool.registration.gym_id``;
inside gymnasium's own wrappers), backed by a one-env pool stepped by the same native code as
``cypool.make_vec``. Numbers equal gymnasium's env for the id; per-step speed is not the point
(a pool of many envs is)."""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from cypool._validate import INT64_END

__all__ = ["SingleEnv", "make_single"]

# the pool's truncation limit when gymnasium.make's TimeLimit keeps the time instead
NO_LIMIT = INT64_END - 1


def _scalar(v):
    """One env's scalar info value typed as gymnasium's envs type theirs: Python ints and
    bools (toy text's ``prob`` at reset, Atari's ``lives``), numpy floats (MuJoCo's
    ``x_position``; an np.float64 is a Python float too)."""
    if v.dtype.kind in "iu":
        return int(v)
    if v.dtype.kind == "b":
        return bool(v)
    return v[()]


def _unbatch_info(info: dict) -> dict:
    """Row 0 of a one-env pool's info: the keys whose ``_key`` mask holds it, unbatched."""
    out = {}
    for key, val in info.items():
        if key.startswith("_"):
            continue
        mask = info.get("_" + key)
        if mask is not None and not bool(np.asarray(mask)[0]):
            continue
        if isinstance(val, dict):
            out[key] = _unbatch_info(val)
        elif isinstance(val, np.ndarray) and val.dtype == object:
            out[key] = val[0]          # the env's own value: a list of task names, an np.bool_
        elif isinstance(val, np.ndarray):
            row = val[0]
            out[key] = _scalar(row) if row.ndim == 0 else row.copy()
        else:
            out[key] = val
    return out


def _unbatch_obs(space: spaces.Space, batch):
    """Row 0 of a one-env batch in ``space``: a Discrete as a Python int (as gymnasium's toy
    text envs give it), arrays as their own copies."""
    if isinstance(space, spaces.Discrete):
        return int(batch[0])
    if isinstance(space, spaces.Text):          # a text leaf: a tuple of str
        return batch[0]
    if isinstance(space, spaces.Tuple):
        return tuple(_unbatch_obs(s, b) for s, b in zip(space.spaces, batch))
    if isinstance(space, spaces.Dict):
        return {k: _unbatch_obs(s, batch[k]) for k, s in space.spaces.items()}
    return np.array(batch[0], copy=True)


class SingleEnv(gym.Env):
    """One cypool env as a ``gymnasium.Env``.

    ``gymnasium.make(cypool.registration.gym_id(<id>), **kwargs)``, i.e.
    ``gymnasium.make("cypool/<id>")`` (``"cypool/Hopper-v5"``), or
    ``gymnasium.make("cypool-<namespace>/<name>")`` for an id with a namespace of its own
    (``"cypool-dm_control/cartpole-swingup-v0"``: gymnasium refuses two namespaces, as in
    ``"cypool/dm_control/..."``), builds it inside gymnasium's wrappers
    (``TimeLimit`` with the registered ``max_episode_steps``, ``OrderEnforcing``,
    ``PassiveEnvChecker``); then the env itself keeps no time limit, so the limit is applied
    once, by ``TimeLimit``. Built directly, ``SingleEnv(env_id, max_episode_steps=None)``
    truncates at the id's registered limit itself.

    Observations, rewards, terminated, truncated and info equal gymnasium's env for the id
    (same seeds, same actions); info is gymnasium's single-env dict (e.g. MuJoCo's
    ``x_position``, toy text's ``prob``), not a vector env's masked arrays.

    ``np_random`` is the generator gymnasium's seeding makes from the last reset seed; the env
    draws its own numbers in native code, not from it.
    """

    def __init__(self, env_id: str, *, render_mode: str | None = None,
                 max_episode_steps: int | None = None, **task_kwargs):
        from cypool.make import make_vec

        self._pool = None                          # until the pool exists (see close)
        self._pool = make_vec(env_id, 1, num_threads=1, autoreset_mode="disabled",
                              max_episode_steps=max_episode_steps, render_mode=render_mode,
                              **task_kwargs)
        pool = self._pool
        self.env_id = pool.env_id
        self.observation_space = pool.single_observation_space
        self.action_space = pool.single_action_space
        self.metadata = {k: v for k, v in pool.metadata.items() if k != "autoreset_mode"}
        self.render_mode = render_mode

    @property
    def pool(self):
        """The one-env ``cypool.VectorEnv`` behind this env."""
        return self._pool

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset the env: ``seed`` an int (the env's stream restarts, as gymnasium's does) or
        None (the stream continues; a random one at the first reset). ``options``: None, an
        empty dict, or the family's own reset options (``pool.family.reset_option_keys``:
        the maze ids' ``goal_cell`` / ``reset_cell``, Adroit's ``initial_state_dict``), checked
        as ``make_vec``'s reset checks them (ValueError, nothing moves); other keys, the vector
        env's ``reset_mask`` included, are refused."""
        family = getattr(getattr(self._pool, "pool", None), "family", None)
        keys = tuple(getattr(family, "reset_option_keys", ()))
        if options is not None:
            if not isinstance(options, dict):
                raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
            unknown = set(options) - set(keys)
            if unknown:
                takes = (f"takes only {', '.join(repr(k) for k in keys)}" if keys
                         else "takes none")
                raise ValueError(f"unknown reset option(s) {sorted(unknown)}: cypool's "
                                 f"{self.env_id} {takes}")
        # checks the seed and the options before np_random changes
        obs, info = self._pool.reset(seed=seed, options=options or None)
        super().reset(seed=seed)
        return _unbatch_obs(self.observation_space, obs), _unbatch_info(info)

    def step(self, action):
        """Step the env with one action of ``action_space``."""
        obs, rew, term, trunc, info = self._pool.step(np.asarray(action)[None])
        return (_unbatch_obs(self.observation_space, obs), float(rew[0]), bool(term[0]),
                bool(trunc[0]), _unbatch_info(info))

    def render(self):
        """The env's frame (``render_mode="rgb_array"``: an ``(H, W, 3)`` uint8 array; the
        other modes as :meth:`cypool.VectorEnv.render` gives each env's)."""
        return self._pool.render()[0]

    def close(self):
        if self._pool is not None:
            self._pool.close()

    def __repr__(self):
        return f"<cypool.SingleEnv {self.env_id}>"


def make_single(env_id: str, **kwargs) -> SingleEnv:
    """``gymnasium.make``'s entry point for ``gym_id(env_id)``: gymnasium's ``TimeLimit``
    keeps the time (and ``max_episode_steps=-1`` means no limit, as for gymnasium's envs), so
    the env keeps none."""
    kwargs.setdefault("max_episode_steps", NO_LIMIT)
    return SingleEnv(env_id, **kwargs)
