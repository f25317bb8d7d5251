"""cypool.VectorEnv: the gymnasium.vector.VectorEnv façade over a family's engine.

The façade holds the policy (validation, seeding, which envs reset, info dicts); the engine
holds the mechanism (stepping and resetting in nogil code). A family object supplies the
engine, the spaces, the info layout and the action loader:

    family.engine                  an Engine subclass instance (cypool._core._engine)
    family.single_observation_space, family.single_action_space, family.metadata
    family.info_layout             [(key, first column, width, dtype, on_step, on_reset), ...]
    family.load_actions(actions)   validate the batch and copy it into the engine; raise
                                   ValueError/TypeError before any env moves
"""
from __future__ import annotations

from typing import Any

import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from cypool.errors import ClosedEnvError, EngineError

_OP_NONE, _OP_STEP, _OP_RESET, _OP_STEP_RESET = 0, 1, 2, 3
_INFO_STEP, _INFO_RESET = 1, 2
_MAX_SEED = 2**63  # numpy's SeedSequence takes any non-negative int; keep seeds in int64


def parse_autoreset_mode(mode) -> AutoresetMode:
    if isinstance(mode, AutoresetMode):
        return mode
    if isinstance(mode, str):
        key = mode.replace("_", "").replace("-", "").lower()
        for m in AutoresetMode:
            if m.value.lower() == key:
                return m
    raise ValueError(f"autoreset_mode must be an AutoresetMode or one of 'next_step', "
                     f"'same_step', 'disabled'; got {mode!r}")


def _check_seed(s, name="seed"):
    if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)):
        raise TypeError(f"{name} must be an int or None, got {type(s).__name__}")
    if s < 0 or s >= _MAX_SEED:
        raise ValueError(f"{name} must be in [0, 2**63), got {s}")
    return int(s)


class VectorEnv(gym.vector.VectorEnv):
    """A batch of ``num_envs`` environments stepped in native threads.

    Returned arrays are fresh copies by default (``copy=True``), so they stay valid after
    later calls; with ``copy=False`` they are views of the pool's buffers, overwritten by the
    next ``step``/``reset``.
    """

    def __init__(self, family, *, env_id: str, seed=None, autoreset_mode="next_step",
                 copy: bool = True):
        self._family = family
        self._engine = family.engine
        self.env_id = env_id
        self.num_envs = int(self._engine.num_envs)
        self.num_threads = int(self._engine.num_threads)
        self.single_observation_space = family.single_observation_space
        self.single_action_space = family.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.autoreset_mode = parse_autoreset_mode(autoreset_mode)
        self.metadata = dict(family.metadata)
        self.metadata["autoreset_mode"] = self.autoreset_mode
        self.render_mode = None
        self.copy = bool(copy)
        self._default_seed = None if seed is None else _check_seed(seed)
        self._closed = False
        self._has_reset = False
        n = self.num_envs
        self._done = np.zeros(n, np.bool_)       # env ended (term or trunc) at its last step
        self._seeded = np.zeros(n, np.bool_)     # env owns a random stream
        self._ops = self._engine.ops_arr
        self._layout = list(family.info_layout)

    # ------------------------------------------------------------------ helpers
    def _check_open(self):
        if self._closed:
            raise ClosedEnvError(f"cypool: this {self.env_id} env is closed")

    def _seed_envs(self, seed, mask):
        n = self.num_envs
        if seed is None and not self._has_reset and self._default_seed is not None:
            seed = self._default_seed
        if seed is None:
            seeds = [None] * n
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            s = _check_seed(seed)
            if s + n > _MAX_SEED:
                raise ValueError(f"seed must leave room for num_envs consecutive seeds, got {s}")
            seeds = [s + i for i in range(n)]
        elif isinstance(seed, (list, tuple, np.ndarray)):
            if len(seed) != n:
                raise ValueError(f"seed list must have length num_envs={n}, got {len(seed)}")
            seeds = [None if s is None else _check_seed(s, "seed[i]") for s in seed]
        else:
            raise TypeError(f"seed must be an int, a list of num_envs ints or None, "
                            f"got {type(seed).__name__}")
        for i in range(n):
            if not mask[i]:
                continue
            if seeds[i] is not None or not self._seeded[i]:
                self._engine.set_generator(i, np.random.PCG64(np.random.SeedSequence(seeds[i])))
                self._seeded[i] = True

    def _run(self):
        failures = self._engine.run()
        if failures:
            ids = [i for i, _ in failures]
            # A failed env restarts: next step (autoreset) or by the user's reset_mask (DISABLED).
            self._done[ids] = True
            raise EngineError(failures)

    def _info_dict(self, kinds, mat) -> dict[str, Any]:
        info: dict[str, Any] = {}
        step_rows = kinds == _INFO_STEP
        reset_rows = kinds == _INFO_RESET
        any_step, any_reset = bool(step_rows.any()), bool(reset_rows.any())
        for key, col, width, dtype, on_step, on_reset in self._layout:
            if isinstance(dtype, str):          # "action": numpy computed it in the action's dtype
                dtype = self._family.action_dtype
            if on_step and on_reset:
                mask = step_rows | reset_rows
            elif on_step:
                if not any_step:
                    continue
                mask = step_rows
            elif on_reset:
                if not any_reset:
                    continue
                mask = reset_rows
            else:
                continue
            if not mask.any():
                continue
            if width == 1:
                vals = np.where(mask, mat[:, col], 0).astype(dtype, copy=False)
            else:
                vals = np.where(mask[:, None], mat[:, col:col + width], 0).astype(dtype, copy=False)
            info[key] = vals
            info["_" + key] = mask
        extra = getattr(self._family, "extra_info", None)
        if extra is not None:
            extra(info, kinds)
        return info

    def _out(self, a):
        return a.copy() if self.copy else a

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed=None, options: dict | None = None):
        """Reset every env (or those in ``options["reset_mask"]``) and return the full batch.

        ``seed``: an int s seeds env i with s + i, a list gives one seed (or None) per env, None
        continues each env's stream. The reset runs in the native loop like a step.
        """
        self._check_open()
        n = self.num_envs
        mask = np.ones(n, np.bool_)
        if options is not None:
            if not isinstance(options, dict):
                raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
            unknown = set(options) - {"reset_mask"}
            if unknown:
                raise ValueError(f"unknown reset option(s) {sorted(unknown)}; cypool takes "
                                 "only 'reset_mask'")
            if "reset_mask" in options:
                rm = options["reset_mask"]
                if not isinstance(rm, np.ndarray):
                    raise TypeError(f"options['reset_mask'] must be a numpy array, got "
                                    f"{type(rm).__name__}")
                if rm.shape != (n,):
                    raise ValueError(f"options['reset_mask'] must have shape ({n},), got {rm.shape}")
                if rm.dtype != np.bool_:
                    raise TypeError(f"options['reset_mask'] must have dtype bool, got {rm.dtype}")
                if not rm.any():
                    raise ValueError("options['reset_mask'] must contain at least one True value")
                if not self._has_reset and not rm.all():
                    raise ValueError("the first reset must reset every env (no partial reset_mask)")
                mask = rm.copy()
        self._seed_envs(seed, mask)
        self._ops[:] = np.where(mask, _OP_RESET, _OP_NONE)
        self._has_reset = True
        self._run()
        self._done[mask] = False
        e = self._engine
        return self._out(e.obs), self._info_dict(e.info_kind_arr, e.info)

    def step(self, actions):
        """Step every env with its row of ``actions``; see the autoreset mode for done envs."""
        self._check_open()
        if not self._has_reset:
            raise RuntimeError("cypool: call reset() before step()")
        mode = self.autoreset_mode
        if mode == AutoresetMode.DISABLED and self._done.any():
            raise ValueError(
                f"cypool: env(s) {np.flatnonzero(self._done).tolist()} ended and autoreset is "
                "DISABLED; reset them with reset(options={'reset_mask': mask}) first")
        self._family.load_actions(actions)
        if mode == AutoresetMode.NEXT_STEP:
            self._ops[:] = np.where(self._done, _OP_RESET, _OP_STEP)
        elif mode == AutoresetMode.SAME_STEP:
            self._ops[:] = _OP_STEP_RESET
        else:
            self._ops[:] = _OP_STEP
        self._run()
        e = self._engine
        self._done = e.terminated | e.truncated
        info = self._info_dict(e.info_kind_arr, e.info)
        if mode == AutoresetMode.SAME_STEP:
            fm = e.final_mask_arr
            if fm.any():
                self._done[:] = False
                final_obs = np.empty(self.num_envs, dtype=object)
                for i in np.flatnonzero(fm):
                    final_obs[i] = e.final_obs[i].copy()
                kinds = np.where(fm, _INFO_STEP, 0).astype(np.uint8)
                info = {"final_obs": final_obs, "_final_obs": fm.copy(),
                        "final_info": self._info_dict(kinds, e.final_info),
                        "_final_info": fm.copy(), **info}
        return (self._out(e.obs), self._out(e.reward), self._out(e.terminated),
                self._out(e.truncated), info)

    def close_extras(self, **kwargs):
        self._closed = True
        self._engine = None
        self._family = None

    def __repr__(self):
        state = "closed" if self._closed else f"num_envs={self.num_envs}"
        return f"cypool.VectorEnv({self.env_id}, {state}, num_threads={self.num_threads})"

    # ------------------------------------------------------------------ extras
    def episode_statistics(self):
        """Per-env episode statistics kept by the native loop: dict of arrays."""
        self._check_open()
        r, l, lr, ll, n = self._engine.episode_stats()
        return {"return": r, "length": l, "last_return": lr, "last_length": ll, "episodes": n}
