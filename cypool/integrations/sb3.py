"""Stable-Baselines3 adapter: a cypool env (or any gymnasium ``VectorEnv``) as an SB3 ``VecEnv``.

SB3 does not accept gymnasium vector envs (it has its own ``VecEnv`` interface), and it expects
*same-step* auto-reset: when env i ends, ``step`` returns the first observation of the next
episode in ``obs[i]`` and the last one in ``infos[i]["terminal_observation"]``. The adapter
therefore wraps a vector env made with ``autoreset_mode="same_step"`` and translates:

=========================  ============================================================
gymnasium (SAME_STEP)      SB3 ``VecEnv``
=========================  ============================================================
``reset(seed=, options=)``  ``seed(s)`` then ``reset()`` -> obs; infos in ``reset_infos``
``step(a)`` 5-tuple        ``step(a)`` -> ``(obs, rewards, dones, infos)``
``term | trunc``           ``dones`` (bool)
float64 rewards            float32 rewards (as SB3's ``DummyVecEnv`` returns them)
dict of arrays + masks     list of per-env dicts
``final_obs[i]``           ``infos[i]["terminal_observation"]``
``final_info`` rows        ``infos[i]`` of a done env (the terminal step's info)
top-level info of a done   ``reset_infos[i]`` (the new episode's reset info)
``trunc & ~term``          ``infos[i]["TimeLimit.truncated"]`` on every step
=========================  ============================================================

Per-env calls (``get_attr``, ``set_attr``, ``env_method``, ``env_is_wrapped``) follow
``DummyVecEnv``; see :class:`SB3VecEnv`.

On an exact cypool task the adapter returns what SB3's ``DummyVecEnv`` returns over
gymnasium's own envs with the same seeds (``tests/test_sb3.py`` checks this).

Example
-------
>>> import cypool
>>> from cypool.integrations.sb3 import to_sb3
>>> from stable_baselines3 import PPO
>>> from stable_baselines3.common.vec_env import VecMonitor
>>> venv = VecMonitor(to_sb3(cypool.make_vec("Hopper-v5", 8, autoreset_mode="same_step", seed=0)))
>>> model = PPO("MlpPolicy", venv).learn(10_000)  # doctest: +SKIP
"""
from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode

from cypool.integrations._info import split_info
from cypool._core.pool import map_obs
from cypool.vector import VectorEnv

try:
    from stable_baselines3.common.vec_env.base_vec_env import (
        VecEnv,
        VecEnvIndices,
        VecEnvObs,
        VecEnvStepReturn,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "cypool.integrations.sb3 needs Stable-Baselines3: pip install 'cypool[sb3]' "
        "(or pip install stable-baselines3)") from exc

__all__ = ["SB3VecEnv", "split_info", "to_sb3"]

# Keys that gymnasium vector wrappers add to the top-level info of the step where an episode
# ends (RecordEpisodeStatistics). Under SAME_STEP that top-level info is otherwise the reset
# info, so these keys are moved to the terminal step's infos[i], where SB3 looks for them.
_TERMINAL_KEYS = ("episode",)


class SB3VecEnv(VecEnv):
    """A gymnasium ``VectorEnv`` in SAME_STEP auto-reset mode, seen as an SB3 ``VecEnv``.

    Parameters
    ----------
    env : gymnasium.vector.VectorEnv
        A cypool env (``cypool.make_vec(..., autoreset_mode="same_step")``), possibly under
        gymnasium vector wrappers, or any other gymnasium vector env in SAME_STEP mode.

    Attributes
    ----------
    env : gymnasium.vector.VectorEnv
        The wrapped vector env; close it through :meth:`close`.
    num_envs : int
        Number of envs.
    observation_space, action_space : gymnasium.spaces.Space
        The *single*-env spaces (SB3's convention), e.g. ``Box((11,), float64)`` and
        ``Box((3,), float32)`` for Hopper-v5, ``Box((4, 84, 84), uint8)`` and ``Discrete(6)``
        for an Atari game.
    reset_infos : list of dict
        Info of each env's latest reset (SB3's convention).

    Notes
    -----
    * Actions: ``(num_envs, *action_shape)`` for Box spaces, ``(num_envs,)`` integers for
      Discrete ones, as SB3's policies produce them.
    * Seeding: ``seed(s)`` makes the next ``reset()`` seed env i with ``s + i``, as in
      ``DummyVecEnv``; without it a reset continues each env's random stream.
    * Returned observations are always safe to keep: with a ``copy=False`` cypool env the
      adapter copies them (SB3 keeps the previous observation while stepping).
    * Per-env API as ``DummyVecEnv``'s: ``get_attr``/``set_attr`` reach each env's task
      kwargs and time limit in the pool, and keep new attribute names per env;
      ``env_method`` serves ``reset`` (of the chosen envs), ``render`` and the
      ``*_wrapper_attr`` methods, and refuses other names with a clear error. A
      ``SyncVectorEnv`` underneath is served by its sub-envs.
    * Atari with ``episodic_life=True``: a lost life ends SB3's episode (``dones``), but
      ``info["episode"]`` (``{"r", "l", "t"}``, SB3's ``Monitor`` format) comes only at the
      end of a game, with its unclipped score and agent steps (``info["game_return"]``,
      ``info["game_length"]``), so SB3's ``ep_rew_mean`` is the game score; do not add
      ``VecMonitor`` (it would count lives). ``env_is_wrapped(Monitor)`` is True there.
    """

    def __init__(self, env: gym.vector.VectorEnv):
        if not isinstance(env, gym.vector.VectorEnv):
            raise TypeError("to_sb3 needs a gymnasium.vector.VectorEnv (e.g. "
                            f"cypool.make_vec(...)), got {type(env).__name__}")
        mode = env.metadata.get("autoreset_mode")
        if mode is not AutoresetMode.SAME_STEP:
            raise ValueError(
                "SB3 resets an env in the step where it ends; make the env with "
                f"autoreset_mode='same_step' (this one has {mode!r})")
        if getattr(env.unwrapped, "is_async", False):
            raise ValueError("SB3 steps every env at every step; make the env without "
                             "batch_size (sync mode) for to_sb3")
        self.env = env
        self._actions: np.ndarray | None = None
        # set_attr of names a cypool pool does not have: kept per env, as DummyVecEnv keeps
        # them on each env's outer wrapper
        self._extra: list[dict[str, Any]] = [{} for _ in range(env.num_envs)]
        self._t_start = time.time()          # Monitor's clock for info["episode"]["t"]
        self._no_life_option = False         # the pool has no episodic_life (not Atari)
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> VecEnvObs:
        """Reset every env with the seeds and options set by ``seed()``/``set_options()``.

        Returns
        -------
        numpy.ndarray
            Observations, ``(num_envs, *obs_shape)`` in the observation space's dtype. The
            reset infos are in :attr:`reset_infos`.
        """
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        options = None
        if any(self._options):
            if any(o != self._options[0] for o in self._options[1:]):
                raise ValueError("a vector env takes one options dict for every env; "
                                 "set_options() gave different ones")
            options = dict(self._options[0])
        obs, info = self.env.reset(seed=seeds, options=options)
        self.reset_infos = split_info(info, self.num_envs)
        self._reset_seeds()
        self._reset_options()
        return self._keep(obs)

    def step_async(self, actions: np.ndarray) -> None:
        """Store the actions for :meth:`step_wait` (the step itself runs there).

        Parameters
        ----------
        actions : numpy.ndarray
            ``(num_envs, *action_shape)`` for Box spaces, ``(num_envs,)`` ints for Discrete.
        """
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        """Step every env with the stored actions; ended envs are reset in the same step.

        Returns
        -------
        obs : numpy.ndarray
            ``(num_envs, *obs_shape)``; for an env that ended, the first observation of its
            next episode.
        rewards : numpy.ndarray
            ``(num_envs,)`` float32.
        dones : numpy.ndarray
            ``(num_envs,)`` bool, terminated or truncated.
        infos : list of dict
            Per-env step info. Every dict has ``"TimeLimit.truncated"`` (truncated and not
            terminated); an env that ended also has ``"terminal_observation"``.
        """
        if self._actions is None:
            raise RuntimeError("step_wait() called without step_async()")
        actions, self._actions = self._actions, None
        obs, rew, term, trunc, info = self.env.step(actions)
        n = self.num_envs
        term = np.asarray(term, dtype=bool)
        trunc = np.asarray(trunc, dtype=bool)
        dones = term | trunc
        info = dict(info)
        final_obs = info.pop("final_obs", None)
        final_mask = info.pop("_final_obs", None)
        final_info = info.pop("final_info", None)
        info.pop("_final_info", None)
        top = split_info(info, n)
        finals = split_info(final_info, n) if final_info is not None else None
        infos: list[dict[str, Any]] = []
        scored = self._game_scored() if dones.any() else None
        for i in range(n):
            if dones[i]:
                if final_obs is None or final_mask is None or not final_mask[i]:
                    raise RuntimeError(
                        f"env {i} ended but the step returned no final_obs for it; is the "
                        "vector env (or a wrapper) dropping SAME_STEP's final_obs/final_info?")
                d = dict(finals[i]) if finals is not None else {}
                reset_info = top[i]
                for key in _TERMINAL_KEYS:
                    if key in reset_info:
                        d[key] = reset_info.pop(key)
                if scored is not None and scored[i]:
                    # episodic life: an "episode" is a life; SB3's Monitor-style episode is
                    # the game instead (its unclipped score), and only where a game ended
                    d.pop("episode", None)
                    if "game_length" in d:
                        d["episode"] = {"r": float(d["game_return"]),
                                        "l": int(d["game_length"]),
                                        "t": round(time.time() - self._t_start, 6)}
                d["terminal_observation"] = final_obs[i]
                self.reset_infos[i] = reset_info
            else:
                d = top[i]
            d["TimeLimit.truncated"] = bool(trunc[i] and not term[i])
            infos.append(d)
        return self._keep(obs), np.array(rew, dtype=np.float32), dones, infos

    def close(self) -> None:
        """Close the wrapped vector env."""
        self.env.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """Return an attribute for each env in ``indices`` (all when None).

        A cypool pool answers with each env's own value (its task kwargs, time limit, spec,
        ...; see ``VectorEnv.get_attr``) or with what :meth:`set_attr` stored for a name
        the pool does not have. Another vector env's ``get_attr`` is used when it has one;
        otherwise the attribute of the (outermost, else unwrapped) vector env, repeated.

        Raises
        ------
        AttributeError
            If an env has no such attribute (a pool's message lists the names it has).
        """
        idx = list(self._get_indices(indices))
        u = self.env.unwrapped
        if _is_pool(u):
            if all(attr_name in self._extra[i] for i in idx):
                return [self._extra[i][attr_name] for i in idx]
            values = u.get_attr(attr_name)
            return [self._extra[i].get(attr_name, values[i]) for i in idx]
        if callable(getattr(u, "get_attr", None)):
            values = u.get_attr(attr_name)
            return [values[i] for i in idx]
        try:
            value = getattr(self.env, attr_name)
        except AttributeError:       # gymnasium's vector wrappers do not forward attributes
            value = getattr(u, attr_name)
        return [value for _ in idx]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute to ``value`` for each env in ``indices`` (all when None).

        On a cypool pool, a name the pool has goes to the pool: a task kwarg or
        ``"max_episode_steps"`` changes those envs in C from their next step or reset, and
        a read-only one (``"spec"``, ``"render_mode"``, ...) raises ``AttributeError``. Any
        other name is a new attribute, kept per env here and read back by :meth:`get_attr`
        (as ``DummyVecEnv`` keeps it on each env's outer wrapper). Without a per-env
        ``set_attr`` on another vector env, only all envs at once can be set.
        """
        idx = list(self._get_indices(indices))
        u = self.env.unwrapped
        if _is_pool(u):
            try:
                u.get_attr(attr_name)
            except AttributeError:           # not the pool's: a new per-env attribute
                for i in idx:
                    self._extra[i][attr_name] = value
                return
            u.set_attr(attr_name, [value] * len(idx), env_ids=idx)
            return
        if callable(getattr(u, "set_attr", None)):
            values = list(u.get_attr(attr_name)) if len(idx) < self.num_envs else \
                [None] * self.num_envs
            for i in idx:
                values[i] = value
            u.set_attr(attr_name, values)
            return
        if sorted(idx) != list(range(self.num_envs)):
            raise NotImplementedError(f"{type(u).__name__} has no per-env attributes; set "
                                      f"{attr_name!r} for all envs (indices=None)")
        setattr(u, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """Call a method of each env in ``indices`` (all when None); one result per env.

        On a cypool pool, the methods of a single gymnasium env that a pool can run for
        some of its envs:

        * ``reset(seed=None, options=None)``: resets those envs alone (a ``reset_mask``
          reset of the vector env, through its wrappers) and returns ``(obs, info)`` per env,
          as ``DummyVecEnv`` does; an int seed seeds each of them with it. The other envs
          keep their episodes; the reset envs continue from there at the next ``step``.
        * ``render()``: each env's frame (``render_mode="rgb_array"``); None each, with a
          warning, for a pool without a render mode (as a gymnasium env without one).
        * ``get_wrapper_attr(name)``, ``has_wrapper_attr(name)``,
          ``set_wrapper_attr(name, value)``: :meth:`get_attr`, whether it succeeds, and
          :meth:`set_attr`.
        * a callable stored with :meth:`set_attr` under a new name.
        * the family's own methods (``env.unwrapped.method_names()``: Gymnasium-Robotics'
          ``compute_reward``, which SB3's ``HerReplayBuffer`` calls on a batch of goals).

        A ``SyncVectorEnv`` underneath calls its sub-envs' methods, as ``DummyVecEnv``.

        Raises
        ------
        AttributeError
            For a name a cypool env has no method of (``seed`` included: gymnasium envs have
            none since 0.26; use ``VecEnv.seed(s)`` or ``env_method("reset", seed=s)``).
        TypeError
            For one of the pool's attributes (read it with :meth:`get_attr`).
        NotImplementedError
            For ``step``/``close`` (the pool steps and closes all its envs at once: use
            ``VecEnv.step``/``close``), and on a vector env with neither sub-envs nor
            ``call``.
        """
        idx = list(self._get_indices(indices))
        u = self.env.unwrapped
        envs = getattr(u, "envs", None)
        if envs is not None and not _is_pool(u):       # SyncVectorEnv: the sub-envs' own
            return [envs[i].get_wrapper_attr(method_name)(*method_args, **method_kwargs)
                    for i in idx]
        if not _is_pool(u):
            if not callable(getattr(u, "call", None)):
                raise NotImplementedError(
                    f"{type(u).__name__} has no per-env Python objects to call "
                    f"{method_name!r} on; call the vector env (SB3VecEnv.env) directly")
            results = list(u.call(method_name, *method_args, **method_kwargs))
            return [results[i] for i in idx]
        if method_name in getattr(u, "method_names", tuple)():   # the family's own
            results = u.call(method_name, *method_args, **method_kwargs)
            return [results[i] for i in idx]
        if all(method_name in self._extra[i] for i in idx):
            return [self._extra[i][method_name](*method_args, **method_kwargs) for i in idx]
        handler = {"reset": self._reset_some, "render": self._render_some,
                   "get_wrapper_attr": self._get_wrapper_attr,
                   "has_wrapper_attr": self._has_wrapper_attr,
                   "set_wrapper_attr": self._set_wrapper_attr}.get(method_name)
        if handler is not None:
            return handler(idx, *method_args, **method_kwargs)
        raise self._no_method(u, method_name)

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper],
                       indices: VecEnvIndices = None) -> list[bool]:
        """Whether each env is wrapped in ``wrapper_class`` (a gymnasium single-env wrapper).

        cypool envs are native, never wrapped, with one exception: an Atari env with
        ``episodic_life=True`` counts as wrapped in SB3's ``Monitor``, because the adapter
        gives its ``info["episode"]`` at each game's end as a ``Monitor`` under
        ``EpisodicLifeEnv`` does (so SB3's ``evaluate_policy`` reports game scores and
        ``VecMonitor`` warns that it would replace them). For a ``SyncVectorEnv`` the
        sub-envs are inspected.
        """
        idx = list(self._get_indices(indices))
        u = self.env.unwrapped
        envs = getattr(u, "envs", None)
        if envs is None or _is_pool(u):
            from stable_baselines3.common.monitor import Monitor

            if not (isinstance(wrapper_class, type) and issubclass(wrapper_class, Monitor)):
                return [False for _ in idx]
            scored = self._game_scored()
            return [scored is not None and bool(scored[i]) for i in idx]
        from stable_baselines3.common.env_util import is_wrapped

        return [is_wrapped(envs[i], wrapper_class) for i in idx]

    def get_images(self) -> Sequence[np.ndarray | None]:
        """Per-env RGB frames from the vector env's ``render()``; None each without rendering."""
        if self.render_mode != "rgb_array":
            warnings.warn(f"The render mode is {self.render_mode}, but get_images() needs "
                          "'rgb_array'", stacklevel=2)
            return [None for _ in range(self.num_envs)]
        return list(self.env.render())

    def __repr__(self) -> str:
        return f"SB3VecEnv({self.env!r})"

    # ------------------------------------------------------------------ helpers
    def _game_scored(self):
        """Per env: whether the adapter reports its game scores as ``info["episode"]``
        (cypool Atari envs with episodic_life=True); None for other envs."""
        u = self.env.unwrapped
        if not _is_pool(u) or self._no_life_option:
            return None
        try:
            return tuple(bool(v) for v in u.get_attr("episodic_life"))   # Atari's option
        except AttributeError:
            self._no_life_option = True      # a pool's attribute names never change
            return None

    def _reset_some(self, idx, *, seed=None, options=None):
        n = self.num_envs
        mask = np.zeros(n, np.bool_)
        mask[idx] = True
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"env_method('reset'): options must be a dict or None, got "
                            f"{type(options).__name__}")
        opts = dict(options or {})
        if "reset_mask" in opts:
            raise ValueError("env_method('reset'): the envs to reset are given by indices, "
                             "not options['reset_mask']")
        opts["reset_mask"] = mask
        seeds = None if seed is None else [seed if m else None for m in mask]
        obs, info = self.env.reset(seed=seeds, options=opts)
        obs = self._keep(obs)
        rows = split_info(info, n)
        return [(map_obs(obs, lambda a, i=i: a[i]), rows[i]) for i in idx]

    def _render_some(self, idx):
        u = self.env.unwrapped
        if u.render_mode is None:
            warnings.warn("env_method('render'): the envs have no render mode; make the pool "
                          "with render_mode='rgb_array'", stacklevel=3)
            return [None for _ in idx]
        return list(u.render(env_ids=idx))

    def _get_wrapper_attr(self, idx, name):
        return self.get_attr(name, idx)

    def _has_wrapper_attr(self, idx, name):
        try:
            self.get_attr(name, idx)
        except AttributeError:
            return [False for _ in idx]
        return [True for _ in idx]

    def _set_wrapper_attr(self, idx, name, value, *, force=True):
        self.set_attr(name, value, idx)
        return [None for _ in idx]

    def _no_method(self, u, name):
        if name in ("step", "close"):
            return NotImplementedError(
                f"env_method({name!r}): a cypool pool {name}s all its envs at once; use the "
                f"VecEnv's own {name}()")
        if name == "seed":
            return AttributeError(
                "env_method('seed'): gymnasium envs have no seed() method; use "
                "VecEnv.seed(s) (applied at the next reset) or env_method('reset', seed=s)")
        try:
            u.get_attr(name)
        except AttributeError:
            return AttributeError(
                f"env_method({name!r}): {u.env_id} envs have no such method; a cypool env "
                "serves reset, render, get_wrapper_attr, has_wrapper_attr and "
                "set_wrapper_attr (and callables stored with set_attr)")
        return TypeError(f"env_method({name!r}): {name!r} is an attribute of the envs, not a "
                         f"method; read it with get_attr({name!r})")

    def _keep(self, obs):
        # SB3 keeps the previous observation while it steps; a copy=False pool would overwrite it
        if getattr(self.env.unwrapped, "copy", True) is False:
            return np.array(obs, copy=True)
        return obs


def _is_pool(u) -> bool:
    """A cypool pool (a population's too): per-env attributes with env_ids, reset_mask
    resets, render(env_ids=)."""
    return isinstance(u, VectorEnv)


def to_sb3(env: gym.vector.VectorEnv | str, num_envs: int | None = None,
           **make_vec_kwargs: Any) -> SB3VecEnv:
    """Adapt a cypool env to Stable-Baselines3's ``VecEnv``.

    Parameters
    ----------
    env : gymnasium.vector.VectorEnv or str
        A vector env in SAME_STEP auto-reset mode, e.g.
        ``cypool.make_vec("Hopper-v5", 8, autoreset_mode="same_step", seed=0)``, possibly under
        gymnasium vector wrappers; or an env id, in which case the env is made here with
        ``cypool.make_vec(env, num_envs, autoreset_mode="same_step", **make_vec_kwargs)``.
    num_envs : int, optional
        Number of envs when ``env`` is an id (default 1).
    **make_vec_kwargs
        Further :func:`cypool.make_vec` arguments when ``env`` is an id.

    Returns
    -------
    SB3VecEnv
        The SB3 ``VecEnv``. Wrap it in SB3's ``VecMonitor`` to log episode returns, and in
        ``VecNormalize`` to normalize observations or rewards.

    Raises
    ------
    ValueError
        If the env does not auto-reset in the same step, or is asynchronous
        (``batch_size < num_envs``).
    TypeError
        If ``env`` is not a gymnasium vector env, or ``num_envs``/kwargs come with an env object.
    """
    if isinstance(env, str):
        from cypool.make import make_vec

        mode = make_vec_kwargs.pop("autoreset_mode", "same_step")
        venv = make_vec(env, 1 if num_envs is None else num_envs,
                               autoreset_mode=mode, **make_vec_kwargs)
        try:
            return SB3VecEnv(venv)
        except Exception:
            venv.close()
            raise
    if num_envs is not None or make_vec_kwargs:
        raise TypeError("num_envs and make_vec kwargs apply only when env is an env id")
    return SB3VecEnv(env)
