"""What VectorEnv offers beyond stepping: gymnasium's call/get_attr/set_attr over what a
cypool env really has (its task kwargs, time limit, spec, random stream), and state
snapshots (get_state/set_state, pickling and deepcopy).

Per-env settings live in C (the family's parameter rows, Atari's per-env options, the time
limits); the pool keeps each env's complete kwargs beside them (`Pool.env_kw`) so that they
can be read back, changed one env at a time, and recreated by unpickling.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import gymnasium as gym

from cypool._core import _call
from cypool._validate import check_limit, gym_id, parse_env_ids

STATE_FORMAT = "cypool.VectorEnv state 1"
_READ_ONLY = ("spec", "render_mode", "metadata", "np_random", "num_envs", "env_id")
# Sub-env methods of gymnasium's call() that a pool runs for all its envs together, with
# the arguments of the pool's own method.
_POOL_METHODS = {"step": "actions", "reset": "seed=..., options=...", "close": ""}


def _per_env(values, n, name):
    """SyncVectorEnv.set_attr's rule: a list or tuple gives one value per env, anything else
    is every env's value."""
    if isinstance(values, (list, tuple)):
        if len(values) != n:
            raise ValueError(f"set_attr({name!r}): {len(values)} values for {n} envs")
        return list(values)
    return [values] * n


class PoolApiMixin:
    """Mixed into cypool.VectorEnv (which sets `pool`, a cypool._core.pool.Pool, and
    `_make_args` and `_rebuild`).

    copy.copy, copy.deepcopy and pickle all give an independent pool in the same state
    (never a second handle on the same pool)."""

    _make_args = None
    _rebuild = None

    # ------------------------------------------------------------------ attributes
    def _kwarg_names(self):
        return self.pool.kwarg_names()

    def _attr_names(self):
        return self._kwarg_names() + ["max_episode_steps"] + list(_READ_ONLY)

    def _unknown(self, name, settable=False):
        names = (self._kwarg_names() + ["max_episode_steps"]) if settable else self._attr_names()
        what = "settable attributes" if settable else "attributes"
        return AttributeError(f"cypool: {self.env_id} envs have no {'settable ' if settable else ''}"
                              f"attribute {name!r}; their {what} are {names}")

    def get_attr(self, name: str) -> tuple:
        """Every env's value of ``name`` (a tuple, one per env, as SyncVectorEnv's): a task
        kwarg (``"ctrl_cost_weight"``, Atari's ``"frame_skip"``...), ``"max_episode_steps"``
        (None: no limit), ``"spec"``, ``"render_mode"``, ``"metadata"``, ``"np_random"`` (a
        Generator over the env's own stream: drawing from it advances the env's stream, as
        in gymnasium), ``"num_envs"``, ``"env_id"``."""
        with self._lock:
            self._check_open()
            n = self.num_envs
            if name in self._kwarg_names():
                return tuple(kw[name] for kw in self.pool.env_kw)
            if name == "max_episode_steps":
                return tuple(self.pool.limits())
            if name == "spec":
                return tuple(self._env_spec(i) for i in range(n))
            if name == "np_random":
                gens = [self.pool.engine.generator(i) for i in range(n)]
                return tuple(None if g is None else np.random.Generator(g) for g in gens)
            if name == "render_mode":
                return (self.render_mode,) * n
            if name == "metadata":
                return tuple(dict(self.metadata) for _ in range(n))
            if name == "num_envs":
                return (1,) * n
            if name == "env_id":
                return (self.env_id,) * n
            raise self._unknown(name)

    def _env_spec(self, i):
        try:
            base = gym.spec(gym_id(self.env_id))
        except (gym.error.Error, ValueError):
            return None
        pool = self.pool
        return dataclasses.replace(base, kwargs=dict(pool.env_kw[i]),
                                   max_episode_steps=pool.limits()[i])

    def set_attr(self, name: str, values, *, env_ids=None) -> None:
        """Set ``name`` for every env (one value, or a list/tuple of one per env), or for
        ``env_ids`` only (a cypool extension; the values are then one per id). Task kwargs
        change the env's parameters in C from its next step (reset-time kwargs such as
        ``reset_noise_scale`` from its next reset), exactly as if the env had been built with
        them; ``"max_episode_steps"`` sets the time limit (None: none). Everything is checked
        before any env changes; kwargs that change the model or the spaces are refused."""
        with self._lock:
            self._check_open()
            pool = self.pool
            if pool.settings_owner is not None:
                raise ValueError(f"cypool: this pool's settings are a population's; change "
                                 f"them with {pool.settings_owner}")
            ids = parse_env_ids(env_ids, self.num_envs)
            vals = _per_env(values, len(ids), name)
            busy = ids[self.pool.in_flight[ids]]
            if busy.size:
                raise ValueError(f"cypool: env(s) {busy.tolist()} are in flight; recv() them "
                                 "before set_attr")
            if name == "max_episode_steps":
                limits = [None if v is None else check_limit(v) for v in vals]
                for i, lim in zip(ids, limits):      # None: none; from the env's next step
                    pool.set_limit(i, lim)
                return
            if name not in self._kwarg_names():
                raise self._unknown(name, settable=True)
            new = [pool.family.merged_kwargs({**pool.env_kw[i], name: v})
                   for i, v in zip(ids, vals)]
            old = [pool.env_kw[i] for i in ids]
            done = []
            try:
                for i, kw in zip(ids, new):
                    pool.configure(i, kw)
                    done.append(i)
            except Exception:
                for i, kw in zip(done, old):   # put back what was applied: all or nothing
                    pool.configure(i, kw)
                raise

    def method_names(self) -> tuple:
        """The names of the family's methods that :meth:`call` runs for the whole pool
        (``FamilySpec.methods``; PointMaze's ``compute_reward``, ...)."""
        return tuple(getattr(self.pool.family, "methods", None) or ())

    def _call(self, name: str, args: tuple, kwargs: dict) -> tuple:
        if name == "render":
            return tuple(self.render())
        if name in _POOL_METHODS:
            raise ValueError(f"cypool: call({name!r}) would {name} each env on its own; a "
                             f"cypool pool does it for all its envs at once: use "
                             f"env.{name}({_POOL_METHODS[name]}) instead")
        with self._lock:
            self._check_open()
            fn = self.pool.bind_method(name)
        if fn is not None:                  # the family's own (compute_reward, ...)
            return fn(*args, **kwargs)
        if args or kwargs:
            if name not in self._attr_names():
                raise self._unknown(name)
            raise TypeError(f"cypool: {name!r} is an attribute, not a method; it takes no "
                            "arguments")
        return self.get_attr(name)

    # ------------------------------------------------------------------ state
    def get_state(self, env_ids=None) -> dict:
        """The complete state of every env (or of ``env_ids``): physics or emulator state,
        random streams, step counters, frame stacks, episode statistics and the autoreset
        bookkeeping, as plain picklable values. Envs in flight are refused (``recv()`` them
        first): their state is being changed by a worker."""
        with self._lock:
            self._check_open()
            ids = parse_env_ids(env_ids, self.num_envs)
            self._check_settled(ids)
            if not self._has_reset:
                raise ValueError("cypool: get_state() before the first reset(): there is no "
                                 "state yet")
            return {"format": STATE_FORMAT, "env_id": self.env_id,
                    "env_ids": ids.tolist(), "envs": self.pool.engine.get_state(ids),
                    "seeded": self.pool.seeded[ids].tolist()}

    def set_state(self, state: dict, env_ids=None) -> None:
        """Give envs ``env_ids`` (default: the ids the state was taken from) the states in
        ``state`` (from :meth:`get_state` of a pool of the same env id and model); the other
        envs are untouched. A pool never reset must be given a state for every env (or be
        reset first). Everything is checked before any env changes: a bad field raises
        ValueError ("cypool: state k: <field>: ..."). Configuration (kwargs, time limits)
        stays each env's own."""
        with self._lock:
            self._check_open()
            if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
                raise ValueError(f"cypool: not a state from VectorEnv.get_state() "
                                 f"({STATE_FORMAT})")
            missing = [k for k in ("env_id", "env_ids", "envs", "seeded") if k not in state]
            if missing:
                raise ValueError(f"cypool: not a state from VectorEnv.get_state(): it has no "
                                 f"{missing}")
            if state["env_id"] != self.env_id:
                raise ValueError(f"cypool: a state of {state['env_id']} envs cannot be given "
                                 f"to {self.env_id} envs")
            envs = state["envs"]
            if not isinstance(envs, (list, tuple)):
                raise ValueError(f"cypool: the state's envs must be a list of env states, got "
                                 f"{type(envs).__name__}")
            ids = parse_env_ids(state["env_ids"] if env_ids is None else env_ids, self.num_envs)
            if len(ids) != len(envs):
                raise ValueError(f"cypool: {len(ids)} env ids for a state of "
                                 f"{len(envs)} envs")
            seeded = _parse_seeded(state["seeded"], len(envs))
            if not self._has_reset and len(ids) != self.num_envs:
                # the others would step with no random stream and no state
                raise ValueError(f"cypool: this pool has never been reset: set_state() must "
                                 f"give every env ({self.num_envs}) a state, got "
                                 f"{len(ids)}; or call reset() first")
            self._check_settled(ids)
            self.pool.engine.set_state(ids, envs)
            self.pool.seeded[ids] = seeded
            self._has_reset = True

    def _check_settled(self, ids):
        busy = ids[self.pool.in_flight[ids]]
        if busy.size or self.pool.sent_sync is not None:
            raise ValueError(f"cypool: env(s) {busy.tolist() or 'sent'} are in flight (sent, "
                             "not yet received); recv() them before taking or setting state")

    # ------------------------------------------------------------------ pickling
    def __reduce_ex__(self, protocol):
        with self._lock:
            self._check_open()
            if self._make_args is None or self._rebuild is None:
                raise TypeError("cypool: only pools made by cypool.make_vec can be pickled "
                                "or copied")
            state = self.get_state() if self._has_reset else None
            snapshot = {"make": dict(self._make_args),
                        "env_kw": [dict(k) for k in self.pool.env_kw],
                        "limits": self.pool.limits(), "state": state,
                        "has_reset": self._has_reset}
        return (self._rebuild, (snapshot,))

    def __deepcopy__(self, memo):
        snapshot = self.__reduce_ex__(4)[1][0]
        import copy as _copy

        return self._rebuild(_copy.deepcopy(snapshot, memo))

    def __copy__(self):
        return self.__deepcopy__({})


# SyncVectorEnv.call(name, *args, **kwargs), a C method (HER's compute_reward): what a bound
# method of the pool does not serve goes to PoolApiMixin._call
PoolApiMixin.call = _call.method_of(PoolApiMixin)


def _parse_seeded(seeded, n):
    """A state's "seeded" flags: n bools."""
    if not isinstance(seeded, (list, tuple, np.ndarray)) or len(seeded) != n:
        raise ValueError(f"cypool: the state's seeded must be a list of {n} bools, got "
                         f"{seeded!r:.60}")
    for k, v in enumerate(seeded):
        if not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"cypool: state {k}: seeded: must be a bool, got {v!r:.60}")
    return np.array(seeded, np.bool_)


def check_snapshot(snapshot, keys, n=None):
    """The consistency of an unpickled snapshot (a pool's or a population's): its keys,
    has_reset a bool, a state exactly when it was reset, and (n: the pool's size) that
    state covering every env, so that no env is left with no state or random stream."""
    if not isinstance(snapshot, dict):
        raise ValueError(f"cypool: not a cypool snapshot (a dict), got "
                         f"{type(snapshot).__name__}")
    missing = [k for k in keys if k not in snapshot]
    if missing:
        raise ValueError(f"cypool: the snapshot has no {missing}")
    has_reset, state = snapshot["has_reset"], snapshot["state"]
    if not isinstance(has_reset, bool):
        raise ValueError(f"cypool: the snapshot's has_reset must be a bool, got {has_reset!r:.60}")
    if has_reset != (state is not None):
        raise ValueError("cypool: inconsistent snapshot: has_reset is "
                         f"{has_reset} but it {'has no' if state is None else 'has a'} state")
    if state is not None and n is not None:
        ids = state.get("env_ids") if isinstance(state, dict) else None
        try:
            every = isinstance(ids, (list, tuple)) and sorted(ids) == list(range(n))
        except TypeError:        # ids that do not compare: not env ids
            every = False
        if not every:
            raise ValueError(f"cypool: the snapshot's state must hold every env (0..{n - 1}), "
                             f"got env ids {ids!r:.80}")
