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

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode

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


def split_info(info: dict[str, Any], num_envs: int) -> list[dict[str, Any]]:
    """Turn a gymnasium vector info dict into one dict per env.

    Parameters
    ----------
    info : dict
        A vector info dict: ``info[k]`` has one entry per env and the bool mask ``info["_k"]``
        says which envs reported ``k``; nested dicts follow the same rule.
    num_envs : int
        Number of envs (length of every array in ``info``).

    Returns
    -------
    list of dict
        ``num_envs`` dicts; env i's holds ``info[k][i]`` for every ``k`` whose mask is set at i
        (or that has no mask). This is the conversion of gymnasium's ``DictInfoToList``.
    """
    out: list[dict[str, Any]] = [{} for _ in range(num_envs)]
    for key, value in info.items():
        if key.startswith("_"):
            continue
        mask = info.get("_" + key)
        rows = split_info(value, num_envs) if isinstance(value, dict) else value
        if len(rows) != num_envs:
            raise ValueError(f"info[{key!r}] has {len(rows)} entries, expected {num_envs}")
        for i in range(num_envs):
            if mask is None or mask[i]:
                out[i][key] = rows[i]
    return out


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
    * ``env_method`` and ``get_attr`` reach per-env Python objects only where the vector env
      has them (``call``/``get_attr``, as in ``SyncVectorEnv``); cypool's native envs have
      none, so ``get_attr`` answers with the vector env's attribute for every index.
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

        Uses the vector env's ``get_attr`` when it has one (per-env values); otherwise the
        attribute of the (outermost, else unwrapped) vector env, repeated for each index.
        """
        idx = list(self._get_indices(indices))
        u = self.env.unwrapped
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

        Without a per-env ``set_attr`` on the vector env, only all envs at once can be set.
        """
        idx = list(self._get_indices(indices))
        u = self.env.unwrapped
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
        """Call a method of every env (the vector env's ``call``), return one result per env.

        Raises
        ------
        NotImplementedError
            If the vector env has no ``call``. A subset (``indices``) gets its envs' results
            of ``call``, which runs on every env (for cypool's attributes and ``render`` that
            changes nothing).
        """
        idx = list(self._get_indices(indices))
        u = self.env.unwrapped
        if not callable(getattr(u, "call", None)):
            raise NotImplementedError(
                f"{type(u).__name__} has no per-env Python objects to call {method_name!r} on; "
                "call the vector env (SB3VecEnv.env) directly")
        results = list(u.call(method_name, *method_args, **method_kwargs))
        return [results[i] for i in idx]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper],
                       indices: VecEnvIndices = None) -> list[bool]:
        """Whether each env is wrapped in ``wrapper_class`` (a gymnasium single-env wrapper).

        cypool envs are native, never wrapped: False for each. For a ``SyncVectorEnv`` the
        sub-envs are inspected.
        """
        idx = list(self._get_indices(indices))
        envs = getattr(self.env.unwrapped, "envs", None)
        if envs is None:
            return [False for _ in idx]
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
    def _keep(self, obs):
        # SB3 keeps the previous observation while it steps; a copy=False pool would overwrite it
        if getattr(self.env.unwrapped, "copy", True) is False:
            return np.array(obs, copy=True)
        return obs


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
        import cypool

        mode = make_vec_kwargs.pop("autoreset_mode", "same_step")
        venv = cypool.make_vec(env, 1 if num_envs is None else num_envs,
                               autoreset_mode=mode, **make_vec_kwargs)
        try:
            return SB3VecEnv(venv)
        except Exception:
            venv.close()
            raise
    if num_envs is not None or make_vec_kwargs:
        raise TypeError("num_envs and make_vec kwargs apply only when env is an env id")
    return SB3VecEnv(env)
