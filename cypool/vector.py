"""cypool.VectorEnv: the gymnasium.vector.VectorEnv façade over a family's engine.

The façade holds the policy (validation, seeding, which envs reset, info dicts); the engine
holds the mechanism (stepping and resetting in nogil code). A family object supplies the
engine, the spaces, the info layout and the action loader:

    family.engine                  an Engine subclass instance (cypool._core._engine)
    family.single_observation_space, family.single_action_space, family.metadata
    family.info_layout             [(key, first column, width, dtype, on_step, on_reset), ...]
    family.load_actions(actions, env_ids)
                                   validate the rows (env_ids None: every env) and copy them
                                   into the engine; raise ValueError/TypeError before any env
                                   moves
    family.extra_info(info, kinds, ids)  optional: family-specific info keys

Async (batch_size < num_envs): send() queues envs for the engine's worker team and returns at
once; recv() returns the first batch_size envs to finish. Each env is idle (its last result
was received) or in flight (sent, stepping or finished but not received); sending an env in
flight, or receiving more than is in flight, raises instead of hanging.
"""
from __future__ import annotations

import atexit
import os
import threading
import time
import weakref
from typing import Any

import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from cypool.errors import ClosedEnvError, EngineError
from cypool._validate import check_int, check_seed, check_timeout, parse_seeds
from cypool._pool_api import PoolApiMixin
from cypool._core.pool import Pool
from cypool._core.spec import KindDtype

from cypool._core._engine import INFO_KINDS, OPS

_OP_NONE, _OP_STEP, _OP_RESET, _OP_STEP_RESET = (OPS[k] for k in ("none", "step", "reset",
                                                                  "step_reset"))
# Pools not closed yet: closed at interpreter exit, before the modules their worker threads
# need are torn down.
_LIVE: "weakref.WeakSet[VectorEnv]" = weakref.WeakSet()
_INFO_STEP, _INFO_RESET = INFO_KINDS["step"], INFO_KINDS["reset"]


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


class VectorEnv(PoolApiMixin, gym.vector.VectorEnv):
    """A batch of ``num_envs`` environments stepped in native threads.

    Returned arrays are fresh copies by default (``copy=True``), so they stay valid after
    later calls; with ``copy=False`` they are views of the pool's buffers, overwritten by the
    next ``step``/``reset``.

    ``pool`` is the :class:`cypool._core.pool.Pool` behind it: the engine, the family and
    the per-env records (kwargs, time limits, seeding and in-flight flags, member groups).

    Member protocol (used by :mod:`cypool.population`; not needed otherwise): a pool made
    with ``batch_size`` E over an engine grouped by member (``engine.set_groups(E, ...)``)
    is switched to whole-member queue items by :meth:`use_members`, then driven by
    :meth:`send_members` and :meth:`recv_members`; :meth:`drain` drops whatever is in
    flight and :meth:`check_open` raises if the pool is closed (or a forked parent's).
    """

    def __init__(self, family, *, env_id: str, seed=None, autoreset_mode="next_step",
                 copy: bool = True, batch_size: int | None = None, seeder=None,
                 env_kwargs=None, make_args=None):
        """``seeder(i, seed)``: installs env i's random stream for an int seed, or for None
        when the env has none yet (default: the family's ``seed_env`` if it has one, else a
        PCG64 seeded as gymnasium seeds); populations pass their own. ``env_kwargs``: each
        env's complete task kwargs when they differ from the family's; ``make_args``: how
        ``make_vec`` built the pool (what pickling rebuilds it from)."""
        self._closed = True                      # until construction succeeds (see __del__)
        self._parent_pid = None                  # set in a forked child: the pool's owner
        self._lock = threading.RLock()           # one caller at a time mutates the pool
        self._recv_lock = threading.Lock()       # one recv() waits at a time
        self.pool = pool = Pool(family, seeder=seeder, env_kwargs=env_kwargs)
        # the hot path's direct references to what the pool owns (same objects)
        self._family = family
        self._engine = pool.engine
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
        # an int, with room for every env's seed below the family's bound
        self._default_seed = None if seed is None else check_seed(seed, bound=pool.seed_bound)
        parse_seeds(self._default_seed, self.num_envs, pool.seed_bound)
        self._has_reset = False
        n = self.num_envs
        # env ended (or failed) and must reset before stepping: kept by the engine itself, so
        # no result the façade never gathered (a drained or interrupted batch) is lost
        self._done = pool.done
        self._make_args = None if make_args is None else dict(make_args)
        self._ops = self._engine.ops_arr
        self._layout = pool.info_layout
        # a Tuple or Dict observation: ("tuple", output names) or ("dict", {key: name})
        self._obs_structure = getattr(family, "obs_structure", None)
        if batch_size is None:
            batch_size = n
        self.batch_size = check_int("batch_size", batch_size, 1, n, closed_high=True)
        self.is_async = self.batch_size < n
        self._in_flight = pool.in_flight         # sent and not yet received
        # the engine marks envs in flight and idle in the same native call that queues and
        # takes them, so a KeyboardInterrupt never leaves the two disagreeing
        self._flags = pool.flags
        self._ready_sync = None                  # sync-mode send(): ids waiting for recv()
        self._last_ids = None                    # ids of the last recv (async step() default)
        _LIVE.add(self)
        # sync: the caller steps envs too, so one thread fewer; async: the caller runs the policy
        self._engine.start_workers(self.num_threads if self.is_async else self.num_threads - 1)
        self._closed = False

    # ------------------------------------------------------------------ helpers
    def _check_open(self):
        if self._closed:
            if getattr(self, "_parent_pid", None) is not None:
                raise ClosedEnvError(
                    f"cypool: this {self.env_id} env belongs to process {self._parent_pid}, "
                    "which forked this one; its worker threads do not exist here. Start "
                    "child processes with the 'spawn' or 'forkserver' method "
                    "(multiprocessing.get_context('spawn')), or make new envs in the child: "
                    "they step, but cannot render MuJoCo if an ancestor process had started "
                    "OpenGL (its GL driver's threads do not exist in a forked child; fork "
                    "before the first render instead)")
            raise ClosedEnvError(f"cypool: this {self.env_id} env is closed")

    check_open = _check_open     # the member protocol's name (one function, no extra call)

    def _parse_seeds(self, seed):
        """One seed (or None) per env, validated against the family's seed bound; nothing
        is applied yet."""
        if seed is None and not self._has_reset and self._default_seed is not None:
            seed = self._default_seed
        return parse_seeds(seed, self.num_envs, self.pool.seed_bound)

    def _apply_seeds(self, seeds, mask):
        self.pool.seed(seeds, mask)

    def _run(self):
        """Run the ops; on failures raise EngineError carrying the results of the
        envs that did not fail (a failed env restarts at its next step, or by the user's
        reset_mask in DISABLED mode)."""
        self._engine.run()
        self._check_failures()

    def _check_failures(self):
        failures = self._engine.failures(None)
        if failures:
            ran = np.flatnonzero(self._ops).astype(np.int64)
            raise EngineError(failures, self._partial(ran, failures))

    def _partial(self, ids, failures):
        """(obs, reward, terminated, truncated, info) of the envs among `ids` that did not
        fail, with info["env_id"] naming them (None when every env failed)."""
        bad = {i for i, _ in failures}
        ok = np.array([i for i in ids if i not in bad], np.int64)
        if ok.size == 0:
            return None
        out = self._gather(ok)
        out[4]["env_id"] = ok.astype(np.int32)
        out[4]["_env_id"] = np.ones(ok.size, np.bool_)
        return out

    def _info_masks(self, kinds):
        """(on_step, on_reset) -> (rows holding such keys, all rows?), None where no row does.
        Batches of steps only, or of resets only, the common cases, take two numpy passes."""
        n = len(kinds)
        step_rows = kinds == _INFO_STEP
        n_step = int(np.count_nonzero(step_rows))
        if n_step == n:
            return {(True, True): (step_rows, True), (True, False): (step_rows, True),
                    (False, True): None}
        reset_rows = kinds == _INFO_RESET
        n_reset = int(np.count_nonzero(reset_rows))    # counts: cheaper than any()/all()
        both = n_step + n_reset
        return {(True, True): (step_rows | reset_rows, both == n) if both else None,
                (True, False): (step_rows, False) if n_step else None,
                (False, True): (reset_rows, n_reset == n) if n_reset else None}

    def _info_dict(self, kinds, mat, ids=None) -> dict[str, Any]:
        info: dict[str, Any] = {}
        masks = self._info_masks(kinds) if self._layout else {}
        for key, col, width, dtype, on_step, on_reset in self._layout:
            entry = masks.get((bool(on_step), bool(on_reset)))
            if entry is None:
                continue
            mask, full = entry
            if full:
                mask = mask.copy()              # each key gets its own mask array
            if isinstance(dtype, str):          # "action": numpy computed it in the action's dtype
                per_env = getattr(self._family, "action_dtype_of", None)
                dtype = per_env(ids) if per_env is not None else self._family.action_dtype
            elif isinstance(dtype, KindDtype):  # gymnasium types it by its first reporter
                first = int(np.argmax(mask)) if not full else 0
                dtype = dtype.reset if kinds[first] == _INFO_RESET else dtype.step
            cols = mat[:, col] if width == 1 else mat[:, col:col + width]
            if full:                            # the common case: one copy, no masking
                vals = cols.astype(dtype)
            else:
                vals = np.where(mask if width == 1 else mask[:, None], cols, 0).astype(
                    dtype, copy=False)
            info[key] = vals
            info["_" + key] = mask
        extra = getattr(self._family, "extra_info", None)
        if extra is not None:
            extra(info, kinds, ids)
        return info

    def _obs(self, outputs, fn):
        """The observation assembled from the engine's ``outputs`` (name -> array), each
        array passed through ``fn``: one array, or gymnasium's tuple or dict of arrays for a
        Tuple or Dict space."""
        st = self._obs_structure
        if st is None:
            return fn(outputs["obs"])
        kind, names = st
        if kind == "tuple":
            return tuple(fn(outputs[n]) for n in names)
        return {k: fn(outputs[n]) for k, n in names.items()}

    def _out(self, a):
        """A fresh copy (copy=True), or a read-only view of the pool's buffer: a caller's write
        must not reach the pool's state (an Atari frame stack, say)."""
        return a.copy() if self.copy else _read_only(a)

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed=None, options: dict | None = None):
        """Reset every env (or those in ``options["reset_mask"]``) and return the full batch.

        ``seed``: an int s seeds env i with s + i, a list gives one seed (or None) per env, None
        continues each env's stream. The reset runs in the native loop like a step. In async
        mode, results still in flight are waited for and discarded first.
        """
        with self._recv_lock, self._lock:       # the order recv() takes them in
            self._check_open()
            mask = self._reset_mask(options)
            seeds = self._parse_seeds(seed)
            self._drain()                       # queued autoresets must not use the new seeds
            self._apply_seeds(seeds, mask)
            self._ops[:] = np.where(mask, _OP_RESET, _OP_NONE)
            self._has_reset = True
            self._run()
            e = self._engine
            return self._obs(e.outputs, self._out), self._info_dict(e.info_kind_arr, e.info)

    def step(self, actions, env_ids=None):
        """Step the envs with their rows of ``actions`` (every env, or ``env_ids``).

        Sync mode returns the rows of the envs stepped; async mode is ``send`` then ``recv``
        and returns the first ``batch_size`` envs to finish (``info["env_id"]``). Done envs
        follow the autoreset mode.
        """
        if self.is_async or env_ids is not None:
            with self._lock:
                self._check_open()
            if self.is_async and env_ids is None:
                env_ids = self._default_ids(actions)
            self.send(actions, env_ids)
            return self.recv()
        with self._lock:
            self._check_ready_to_step()
            if self._in_flight.any():
                raise ValueError("cypool: step() while results of send() are waiting; call "
                                 "recv() first")
            self._check_disabled(None)
            self._family.load_actions(actions, None)
            mode = self.autoreset_mode
            self._engine.step_all(mode == AutoresetMode.NEXT_STEP,
                                  _OP_STEP_RESET if mode == AutoresetMode.SAME_STEP else _OP_STEP)
            self._check_failures()
            return self._gather(None)

    # ------------------------------------------------------------------ send / recv
    def async_reset(self, *, seed=None):
        """Queue a reset of every env; collect the observations with ``recv()``."""
        with self._lock:
            self._check_open()
            self._check_env_items()
            if self._in_flight.any():
                raise ValueError("cypool: async_reset() while envs are in flight; recv() "
                                 "them first")
            self._apply_seeds(self._parse_seeds(seed), np.ones(self.num_envs, np.bool_))
            self._has_reset = True
            self._ops[:] = _OP_RESET
            self._dispatch(np.arange(self.num_envs, dtype=np.int64))

    def send(self, actions, env_ids=None):
        """Hand ``actions`` (one row per id in ``env_ids``, default every env) to the workers
        and return at once (async mode), or step them now (sync mode). Every id must be
        idle: sent envs are in flight until ``recv()`` returns them."""
        with self._lock:
            self._check_ready_to_step()
            self._check_env_items()
            if not self.is_async and self._ready_sync is not None:
                raise ValueError("cypool: send() again before recv(); receive the results of "
                                 "the previous send() first")
            ids = self._parse_ids(env_ids)
            busy = ids[self._in_flight[ids]]
            if busy.size:
                raise ValueError(f"cypool: env(s) {busy.tolist()} are in flight (sent, not yet "
                                 "received); recv() them before sending again")
            self._check_disabled(ids)
            self._family.load_actions(actions, None if ids.size == self.num_envs
                                      and env_ids is None else ids)
            self._set_ops(ids)
            self._dispatch(ids)

    def recv(self, timeout: float | None = None):
        """Return (obs, reward, terminated, truncated, info) of the first ``batch_size`` envs
        to finish (sync mode: the envs of the last ``send``); ``info["env_id"]`` names them.

        Raises instead of waiting when fewer envs are in flight than a batch needs, and
        TimeoutError after ``timeout`` seconds. Ctrl-C interrupts the wait promptly.
        """
        check_timeout(timeout)
        with self._recv_lock:
            return self._recv(timeout)

    def _recv(self, timeout):
        with self._lock:
            self._check_open()
            self._check_env_items()
            if not self.is_async:
                if self._ready_sync is None:
                    raise ValueError("cypool: recv() with nothing sent; call send() first")
                ids, self._ready_sync = self._ready_sync, None
                self._in_flight[ids] = False
                return self._finish(ids)
            in_flight = int(self._in_flight.sum())
            if in_flight < self.batch_size:
                raise ValueError(f"cypool: recv() needs batch_size={self.batch_size} envs in "
                                 f"flight but {in_flight} are; send() more first")
            engine = self._engine
        self._wait(engine, self.batch_size, timeout)
        with self._lock:
            self._check_open()
            ids = engine.take_ready(self.batch_size, self._flags)
            self._last_ids = ids
            return self._finish(ids)

    def _wait(self, engine, count, timeout):
        """Wait, without the lock, until `count` queue items are done; TimeoutError after
        `timeout` seconds (None: no limit), ClosedEnvError if the env is closed meanwhile."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while engine.wait_ready(count, 50) < count:
            self._check_open()
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"cypool: recv() timed out after {timeout} s")
            # back in Python every 50 ms: a pending KeyboardInterrupt is raised here

    # ------------------------------------------------------------------ whole members
    # A population in async mode (cypool.population) sends and receives whole members (see
    # Pool.use_members): a member comes back complete, its rows one contiguous block.
    def use_members(self, unit: int) -> None:
        """Member protocol: queue items are whole members of ``unit`` envs from now on."""
        self.pool.use_members(unit, self.is_async)

    def _check_env_items(self):
        if self.pool.unit != 1:
            raise ValueError("cypool: this pool is driven member by member; use the "
                             "population's send()/recv()/async_reset()")

    def send_members(self, actions, members, reset: bool = False) -> None:
        """Member protocol: queue whole ``members`` (an int64 array), stepping them with
        ``actions`` (rows in member order), or resetting them (reset=True; seeds are the
        population's, installed before)."""
        pool = self.pool
        with self._lock:
            if reset:
                self._check_open()
            else:
                self._check_ready_to_step()
            pool.check_members_idle(members)
            ids = pool.member_rows(members)
            if reset:
                mask = np.zeros(self.num_envs, np.bool_)
                mask[ids] = True
                self._apply_seeds([None] * self.num_envs, mask)
                self._ops[ids] = _OP_RESET
                self._has_reset = True
            else:
                self._check_disabled(ids)
                self._family.load_actions(actions, ids)
                self._set_ops(ids)
            self._engine.submit_groups(members, self._flags)

    def recv_members(self, count: int, timeout=None):
        """Member protocol: ``(members, results)`` of the first ``count`` members to finish;
        with count 1 the arrays are views of the member's rows, valid until it is sent
        again."""
        check_timeout(timeout)
        pool = self.pool
        with self._recv_lock:
            with self._lock:
                self._check_open()
                pending = int(pool.in_flight.sum()) // pool.unit   # inline: per recv
                if pending < count:
                    raise ValueError(f"cypool: recv() needs {count} member(s) in flight but "
                                     f"{pending} are; send() more first")
                engine = self._engine
            self._wait(engine, count, timeout)
            with self._lock:
                self._check_open()
                members = engine.take_ready_groups(count, self._flags)
                ids = pool.member_rows(members)
                E = pool.unit
                sel = slice(members[0] * E, (members[0] + 1) * E) if count == 1 else ids
                failures = engine.failures(ids)
                if failures:
                    raise EngineError(failures, self._partial(ids, failures), members=members)
                return members, self._gather(ids, sel)

    # ------------------------------------------------------------------ internals
    def _check_ready_to_step(self):
        self._check_open()
        if not self._has_reset:
            raise RuntimeError("cypool: call reset() (or async_reset()) before stepping")

    def _reset_mask(self, options):
        n = self.num_envs
        mask = np.ones(n, np.bool_)
        if options is None:
            return mask
        if not isinstance(options, dict):
            raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
        unknown = set(options) - {"reset_mask"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; cypool takes only "
                             "'reset_mask'")
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
        return mask

    def _parse_ids(self, env_ids):
        n = self.num_envs
        if env_ids is None:
            return np.arange(n, dtype=np.int64)
        ids = np.asarray(env_ids)
        if ids.ndim != 1 or ids.size == 0:
            raise ValueError(f"env_ids must be a non-empty 1-D sequence, got shape {ids.shape}")
        if ids.dtype.kind not in "iu":
            raise TypeError(f"env_ids must be integers, got {ids.dtype}")
        if ids.min() < 0 or ids.max() >= n:
            raise ValueError(f"env_ids must be in [0, {n}), got {ids.tolist()}")
        seen = np.zeros(n, np.bool_)   # local: an interrupt leaves no state behind
        seen[ids] = True
        if int(np.count_nonzero(seen)) != ids.size:
            raise ValueError(f"env_ids must not repeat, got {ids.tolist()}")
        return ids.astype(np.int64)

    def _default_ids(self, actions):
        try:
            rows = len(np.asarray(actions))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"actions must be an array with one row per env: {exc}") from None
        if rows == self.num_envs and not self._in_flight.any():
            return None
        if self._last_ids is not None and rows == len(self._last_ids):
            return self._last_ids
        raise ValueError("cypool: in async mode step(actions) needs env_ids (or actions for "
                         "the envs of the last recv(), or for every env when none is in flight)")

    def _check_disabled(self, ids):
        if self.autoreset_mode != AutoresetMode.DISABLED:
            return
        done = self._done if ids is None else self._done[ids]
        if done.any():
            bad = np.flatnonzero(self._done) if ids is None else ids[done]
            raise ValueError(
                f"cypool: env(s) {bad.tolist()} ended and autoreset is DISABLED; reset them "
                "with reset(options={'reset_mask': mask}) first")

    def _set_ops(self, ids):
        mode = self.autoreset_mode
        if ids is None:
            if mode == AutoresetMode.NEXT_STEP:
                self._ops[:] = np.where(self._done, _OP_RESET, _OP_STEP)
            else:
                self._ops[:] = _OP_STEP_RESET if mode == AutoresetMode.SAME_STEP else _OP_STEP
            return
        if not self.is_async:
            self._ops[:] = _OP_NONE
        if mode == AutoresetMode.NEXT_STEP:
            self._ops[ids] = np.where(self._done[ids], _OP_RESET, _OP_STEP)
        else:
            self._ops[ids] = _OP_STEP_RESET if mode == AutoresetMode.SAME_STEP else _OP_STEP

    def _dispatch(self, ids):
        if self.is_async:
            self._engine.submit(ids, self._flags)
        else:
            if ids.size != self.num_envs:
                mask = np.zeros(self.num_envs, np.bool_)
                mask[ids] = True
                self._ops[~mask] = _OP_NONE
            self._in_flight[ids] = True
            try:
                self._engine.run()   # failures are reported by recv() with the results
            except BaseException:
                self._in_flight[ids] = False     # refused before any env ran
                raise
            self._ready_sync = ids

    def drain(self) -> None:
        """Member protocol: wait for every env in flight and drop the results, with the
        locks held (a population's reset, before it installs seeds)."""
        with self._recv_lock, self._lock:
            self._check_open()
            self._drain()

    def _drain(self):
        """Wait for every env in flight and drop the results (reset() in async mode)."""
        e = self._engine
        if self.is_async and self._in_flight.any():
            k = self.pool.items_in_flight()
            while e.wait_ready(k, 50) < k:
                pass
            e.take_ready(k, self._flags)
        self._in_flight[:] = False
        self._ready_sync = None

    def _finish(self, ids):
        failures = self._engine.failures(ids)
        if failures:
            raise EngineError(failures, self._partial(ids, failures))
        out = self._gather(ids)
        out[4]["env_id"] = ids.astype(np.int32)
        out[4]["_env_id"] = np.ones(ids.size, np.bool_)
        return out

    def _gather(self, ids, sel=None):
        """The step results of envs `ids` (None: every env, as the pool's own buffers); `sel`
        indexes their rows (default ids; a slice gives views)."""
        e = self._engine
        if sel is None:
            sel = ids
        mode = self.autoreset_mode
        if ids is None:
            obs, rew, term, trunc = (self._obs(e.outputs, self._out), self._out(e.reward),
                                     self._out(e.terminated), self._out(e.truncated))
            kinds, mat, fm = e.info_kind_arr, e.info, e.final_mask_arr
        else:
            obs = e.obs[sel] if self._obs_structure is None else \
                self._obs(e.outputs, lambda a: a[sel])
            rew, term, trunc = e.reward[sel], e.terminated[sel], e.truncated[sel]
            if isinstance(sel, slice):          # views of the pool's rows
                obs = map_obs(obs, _read_only)
                rew, term, trunc = map(_read_only, (rew, term, trunc))
            kinds, mat, fm = e.info_kind_arr[sel], e.info[sel], e.final_mask_arr[sel]
        info = self._info_dict(kinds, mat, ids)
        if mode == AutoresetMode.SAME_STEP and fm.any():
            rows = np.flatnonzero(fm)
            env_rows = rows if ids is None else ids[rows]
            final_obs = np.empty(len(fm), dtype=object)
            for r, i in zip(rows, env_rows):
                final_obs[r] = e.final_obs[i].copy() if self._obs_structure is None else \
                    self._obs(e.final_outputs, lambda a: a[i].copy())
            fkinds = np.where(fm, _INFO_STEP, 0).astype(np.uint8)
            fmat = e.final_info if ids is None else e.final_info[sel]
            info = {"final_obs": final_obs, "_final_obs": fm.copy(),
                    "final_info": self._info_dict(fkinds, fmat, ids),
                    "_final_info": fm.copy(), **info}
        return obs, rew, term, trunc, info

    def close_extras(self, **kwargs):
        # a recv() waiting in another thread sees the env closed within 50 ms and raises
        with self._lock:
            self._closed = True
        with self._recv_lock, self._lock:
            _LIVE.discard(self)
            self.pool.close()
            self._closed = True
            self._engine = None
            self._family = None

    def _orphan_in_child(self, parent):
        """os.fork() child (the module's at-fork hook): this pool becomes unusable (a clear
        error names the parent) and is never torn down here, so the child neither touches
        the parent's worker team nor hangs at exit. The locks are replaced: a parent thread
        stepping or waiting in recv() at the fork held them, and it does not exist here, so
        a call in the child would otherwise wait forever instead of raising."""
        self._closed = True
        self.closed = True                  # gymnasium's flag: close() is a no-op
        self._parent_pid = parent
        self._lock = threading.RLock()
        self._recv_lock = threading.Lock()
        self.pool.forget_team()

    def __del__(self):
        # an env dropped without close() still stops its worker threads
        if not getattr(self, "_closed", True):
            self.close()

    def __repr__(self):
        state = "closed" if self._closed else f"num_envs={self.num_envs}"
        return f"cypool.VectorEnv({self.env_id}, {state}, num_threads={self.num_threads})"

    # ------------------------------------------------------------------ rendering
    def render(self, env_ids=None):
        """``render_mode="rgb_array"``: a tuple of one ``(H, W, 3)`` uint8 frame per env
        (gymnasium's vector convention, so ``gymnasium.wrappers.vector.RecordVideo`` and
        ``HumanRendering`` work), or per id of ``env_ids`` only (cheaper: only those envs
        render). The frames are fresh (MuJoCo's: views of one fresh array). ``"ansi"`` (toy
        text): a tuple of one string per env. MuJoCo's ``"depth_array"``: one ``(H, W)``
        float32 depth buffer per env; ``"rgbd_tuple"``: one ``(frame, depth)`` pair per env.
        Envs in flight are refused."""
        with self._lock:
            self._check_open()
            if self.render_mode is None:
                raise gym.error.Error("cypool: this pool has no render mode; make it with "
                                      "render_mode='rgb_array' to render")
            if not self._has_reset:
                raise gym.error.ResetNeeded("cypool: call reset() before render()")
            ids = self._parse_ids(env_ids)
            busy = ids[self._in_flight[ids]]
            if busy.size:
                raise ValueError(f"cypool: env(s) {busy.tolist()} are in flight; recv() them "
                                 "before render()")
            frames = self._family.render(ids)
            return tuple(frames)

    # ------------------------------------------------------------------ extras
    def xla(self):
        """EnvPool's ``handle, recv, send, step``: jittable jax functions that step this env
        inside ``jax.jit`` / ``lax.scan`` (see :mod:`cypool.xla`; needs
        ``pip install "cypool[jax]"``)."""
        from cypool.xla import make_xla
        return make_xla(self)

    def native_port(self) -> "NativePort":
        """This env as code that steps it outside :meth:`step` sees it (``cypool.xla``'s
        handler): see :class:`NativePort`."""
        return NativePort(self)

    def episode_statistics(self, copy: bool = True):
        """Per-env episode statistics kept by the native loop: the running return and length,
        the last finished episode's return and length, finished episodes and env steps.
        ``copy=False`` gives views of the pool's arrays (no copy, updated in place)."""
        self._check_open()
        e = self._engine
        out = {"return": e.episode_return, "length": e.episode_length,
               "last_return": e.last_return, "last_length": e.last_length,
               "episodes": e.episodes, "env_steps": e.env_steps}
        return {k: v.copy() if copy else _read_only(v) for k, v in out.items()}


class NativePort:
    """What native code that runs a :class:`VectorEnv`'s step outside ``step()``
    (``cypool.xla``) uses of the env: its engine, family and result layout, ``step()``'s
    checks and lock, and its result assembly. It holds the env weakly and reads it at each
    call (a fork child's env gets a new lock). This class, beside VectorEnv, is the only code
    outside it that reads its fields: a change inside VectorEnv shows up here."""

    __slots__ = ("_ref",)

    def __init__(self, env: VectorEnv):
        self._ref = weakref.ref(env)

    def env(self) -> VectorEnv | None:
        """The env, or None once it was garbage-collected."""
        return self._ref()

    def _live(self) -> VectorEnv:
        env = self._ref()
        if env is None:
            raise ReferenceError("cypool: the env behind this port was garbage-collected")
        return env

    @property
    def engine(self):
        return self._live()._engine

    @property
    def family(self):
        return self._live()._family

    @property
    def info_layout(self) -> list:
        """(key, column, width, dtype, on_step, on_reset) of each info key (the Pool's)."""
        return self._live()._layout

    @property
    def obs_structure(self):
        """None for one observation array, else ("tuple", names) or ("dict", {key: name})."""
        return self._live()._obs_structure

    @property
    def in_flight(self) -> np.ndarray:
        """The Pool's per-env flags of envs sent and not yet received (a bool array)."""
        return self._live()._in_flight

    @property
    def lock(self):
        """The lock ``step()`` holds while it runs."""
        return self._live()._lock

    def steppable(self) -> bool:
        """Alive, open and reset: ``step()``'s checks would pass (nothing is raised)."""
        env = self._ref()
        return env is not None and not env._closed and env._has_reset

    def check_open(self) -> None:
        self._live()._check_open()

    def check_ready_to_step(self) -> None:
        """``step()``'s checks: open (ClosedEnvError) and reset (RuntimeError)."""
        self._live()._check_ready_to_step()

    def check_failures(self) -> None:
        """The EngineError ``step()`` raises for the envs whose last op failed, if any."""
        self._live()._check_failures()

    def obs(self, outputs, fn):
        """The observation ``step()`` assembles from the engine's outputs, through ``fn``."""
        return self._live()._obs(outputs, fn)

    def info_dict(self, kinds, mat, ids=None) -> dict[str, Any]:
        """The info dict ``step()`` builds from info kinds and rows."""
        return self._live()._info_dict(kinds, mat, ids)


def map_obs(obs, fn):
    """``fn`` applied to each array of an observation batch (an array, tuple or dict)."""
    if isinstance(obs, tuple):
        return tuple(fn(a) for a in obs)
    if isinstance(obs, dict):
        return {k: fn(a) for k, a in obs.items()}
    return fn(obs)


def _read_only(a):
    v = a.view()
    v.flags.writeable = False
    return v


_FORKING_PID = [None]     # the pid that called os.fork() (getppid() is racy if it exits)


def _note_forking_pid():
    _FORKING_PID[0] = os.getpid()


def _orphan_pools_in_child():
    """os.fork() child: every inherited pool becomes unusable (VectorEnv._orphan_in_child);
    pools the child makes are its own."""
    parent = _FORKING_PID[0] or os.getppid()
    for env in list(_LIVE):
        env._orphan_in_child(parent)
    _LIVE.clear()


os.register_at_fork(before=_note_forking_pid, after_in_child=_orphan_pools_in_child)


@atexit.register
def _close_live_pools():
    for env in list(_LIVE):
        try:
            env.close()
        except Exception:
            pass
