"""Pool: one family's envs as the façades see them.

A Pool owns the engine that runs the envs, the family object that configures them, and the
only per-env records kept in Python: each env's complete task kwargs, its time limit (read
from the engine), whether it owns a random stream, whether it is in flight, and how envs are
grouped into population members. ``cypool.VectorEnv`` holds one as ``env.pool`` (its hot
path keeps direct references to the same engine and arrays); ``PopulationEnv``, unpickling
and ``cypool.envpool`` go through the methods here instead of the façade's internals.

The Pool also owns the batch protocol every front end drives (public methods, no front end
reads another's internals): which op each env runs (``set_ops``, ``check_disabled``), handing
envs to the engine (``dispatch``, ``drain``), failures (``check_failures``, ``partial``) and
the assembly of results (``gather``, ``finish``, ``info_dict``, ``obs``). The autoreset mode
and sync/async are fixed when the Pool is made.

Locks, the closed state and the copy policy stay the front end's: a Pool does no locking of
its own, so call it with the front end's lock held.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from cypool.errors import EngineError
from cypool._core._engine import INFO_KINDS, OPS
from cypool._core.spec import KindDtype
from cypool._validate import MAX_SEED, check_limit

OP_NONE, OP_STEP, OP_RESET, OP_STEP_RESET = (OPS[k] for k in ("none", "step", "reset",
                                                              "step_reset"))
INFO_STEP, INFO_RESET = INFO_KINDS["step"], INFO_KINDS["reset"]


class Pool:
    """The envs of one ``family`` (a :class:`cypool._core.family.Family`) and their records.

    Attributes
    ----------
    engine, family
        The family's engine and the family object (None once closed).
    num_envs : int
    env_kw : list of dict
        Env i's complete task kwargs (get_attr/set_attr, pickling); changed only through
        :meth:`configure` and :meth:`record_kwargs`.
    bound_methods : dict
        The family's methods bound to the envs' current kwargs (:meth:`bind_method`), read
        by ``call``'s fast path; emptied (never replaced) whenever an env's kwargs change and
        when the pool closes or is inherited by a fork.
    seeded : (num_envs,) bool array
        Env i owns a random stream.
    in_flight : (num_envs,) bool array
        Env i was sent and not yet received; written by the engine (through ``flags``, a
        uint8 view of it, in the native call that queues or takes it) and by the façade.
    done : (num_envs,) bool array
        The engine's own record of envs that ended and must reset before stepping.
    info_layout : list
        The family's info layout, ``[(key, first column, width, dtype, on_step, on_reset)]``.
    unit : int
        Envs per queue item: 1, or a population member's envs (:meth:`use_members`).
    seeder : callable or None
        ``seeder(i, seed)`` installs env i's random stream (None: a PCG64 stream).
    seed_bound : int
        The int seeds an env takes are in [0, seed_bound): the family's ``seed_bound``
        (2**32 for a RandomState stream), else 2**63.
    settings_owner : str or None
        Who changes these envs' settings instead of ``set_attr`` (a population's method).
    autoreset_mode : gymnasium.vector.AutoresetMode
    is_async : bool
        Envs are queued to the worker team (send/recv) rather than run in the caller.
    next_step, step_op
        What a step of every env runs: ``engine.step_all(next_step, step_op)``.
    ops : (num_envs,) uint8 array
        The op each env runs next (the engine's).
    obs_structure
        None for one observation array, else ("tuple", output names) or ("dict", {key: name}).
    sent_sync : int64 array or None
        Sync mode: the ids of the last ``dispatch``, stepped and waiting for ``finish``.
    """

    def __init__(self, family, *, seeder=None, env_kwargs=None,
                 autoreset_mode=AutoresetMode.NEXT_STEP, is_async=False):
        self.family = family
        self.engine = engine = family.engine
        self.num_envs = n = int(engine.num_envs)
        self.seeder = seeder if seeder is not None else getattr(family, "seed_env", None)
        self.seed_bound = int(getattr(family, "seed_bound", None) or MAX_SEED)
        if env_kwargs is None:                   # a family built with per-env kwargs
            take = getattr(family, "take_built_env_kwargs", None)
            env_kwargs = take() if take is not None else None
        self.env_kw = [dict(family.kwargs) for _ in range(n)] if env_kwargs is None else \
            [dict(kw) for kw in env_kwargs]
        self.bound_methods = {}
        self.seeded = np.zeros(n, np.bool_)
        self.in_flight = np.zeros(n, np.bool_)
        self.flags = self.in_flight.view(np.uint8)
        self.done = engine.done_arr
        self.info_layout = list(family.info_layout)
        self.unit = 1
        self.settings_owner = None
        self.autoreset_mode = autoreset_mode
        self.is_async = bool(is_async)
        # what a step runs: engine.step_all(next_step, step_op); NEXT_STEP resets a done env
        # at its next step instead
        self.next_step = autoreset_mode == AutoresetMode.NEXT_STEP
        self.step_op = OP_STEP_RESET if autoreset_mode == AutoresetMode.SAME_STEP else OP_STEP
        self.ops = engine.ops_arr
        self.obs_structure = getattr(family, "obs_structure", None)
        self.sent_sync = None

    # ------------------------------------------------------------------ settings
    def kwarg_names(self) -> list:
        return sorted(self.env_kw[0]) if self.env_kw else []

    def configure(self, i: int, kwargs: dict) -> None:
        """Give env i the complete task kwargs ``kwargs`` (in C from its next step or reset)
        and record them."""
        self.family.configure_envs(np.array([i], np.int64), kwargs)
        self.env_kw[i] = dict(kwargs)
        self.bound_methods.clear()

    def record_kwargs(self, ids, kwargs: dict) -> None:
        """Record ``kwargs`` as the complete task kwargs of envs ``ids`` (already applied in C
        by the caller)."""
        for i in ids:
            self.env_kw[int(i)] = dict(kwargs)
        self.bound_methods.clear()

    def bind_method(self, name: str):
        """The family's method ``name`` (``FamilySpec.methods``) for every env's current
        kwargs: ``fn(*args, **kwargs)``, one result per env; None when the family has no such
        method. Bound once (the hook's ``bind(env_kwargs)`` where it has one, else the hook
        given a snapshot of the kwargs) and kept in :attr:`bound_methods` until an env's
        kwargs change."""
        fn = self.bound_methods.get(name)
        if fn is None:
            hook = (getattr(self.family, "methods", None) or {}).get(name)
            if hook is None:
                return None
            env_kw = list(self.env_kw)      # configure replaces an env's dict: a snapshot
            bind = getattr(hook, "bind", None)
            fn = bind(env_kw) if bind is not None else functools.partial(hook, env_kw)
            self.bound_methods[name] = fn
        return fn

    def limits(self) -> list:
        """Each env's time limit (None: none)."""
        return [None if v == 0 else int(v) for v in self.engine.max_episode_steps_of()]

    def set_limit(self, i: int, limit) -> None:
        """Env i's time limit from its next step (None: none); checked first."""
        self.engine.set_max_episode_steps(np.array([i], np.int64),
                                          0 if limit is None else check_limit(limit))

    # ------------------------------------------------------------------ seeding
    def seed(self, seeds, mask) -> None:
        """Install a random stream for each env of ``mask`` given an int seed, or that has
        none yet (seed None); ``seeds`` holds one int or None per env."""
        seeder, seeded = self.seeder, self.seeded
        for i in range(self.num_envs):
            if not mask[i]:
                continue
            if seeds[i] is not None or not seeded[i]:
                if seeder is not None:
                    seeder(i, seeds[i])
                else:
                    self.engine.set_generator(
                        i, np.random.PCG64(np.random.SeedSequence(seeds[i])))
                seeded[i] = True

    # ------------------------------------------------------------------ population members
    # A population in async mode sends and receives whole members: queue items of `unit`
    # consecutive envs that one worker steps in turn, so a member comes back complete and its
    # rows are one contiguous block of the engine's buffers.
    def use_members(self, unit: int, is_async: bool) -> None:
        """Make queue items whole members of ``unit`` envs (an async pool whose engine was
        grouped by member, ``engine.set_groups``)."""
        if not is_async or self.engine.group_size != unit:
            raise ValueError("cypool: member items need an async pool grouped by member "
                             "(engine.set_groups)")
        self.unit = int(unit)

    def member_rows(self, members):
        """The env ids of ``members``, member by member."""
        E = self.unit
        return (members[:, None] * E + np.arange(E)).reshape(-1)

    def check_members_idle(self, members) -> None:
        """ValueError naming the members among ``members`` that are in flight."""
        flying = self.in_flight.reshape(-1, self.unit)[members].any(axis=1)
        if flying.any():
            raise ValueError(f"cypool: member(s) {members[flying].tolist()} are in flight "
                             "(sent, not yet received); recv() them before sending or "
                             "resetting them")

    def items_in_flight(self) -> int:
        """Queue items (envs, or whole members) in flight."""
        return int(self.in_flight.sum()) // self.unit

    # ------------------------------------------------------------------ batch protocol
    def check_disabled(self, ids) -> None:
        """DISABLED autoreset: ValueError naming the envs among ``ids`` (None: every env)
        that ended and were not reset."""
        check_disabled(self.autoreset_mode, self.done, ids)

    def set_ops(self, ids) -> None:
        """Envs ``ids`` (None: every env) step next, or reset if they ended (NEXT_STEP); in
        sync mode every other env does nothing."""
        ops = self.ops
        if ids is None:
            ops[:] = np.where(self.done, OP_RESET, OP_STEP) if self.next_step else self.step_op
            return
        if not self.is_async:
            ops[:] = OP_NONE
        ops[ids] = np.where(self.done[ids], OP_RESET, OP_STEP) if self.next_step else \
            self.step_op

    def set_reset_ops(self, mask) -> None:
        """The envs of ``mask`` reset next; the others do nothing."""
        self.ops[:] = np.where(mask, OP_RESET, OP_NONE)

    def run(self) -> None:
        """Run the ops in the caller (and the worker team); on failures raise EngineError
        carrying the results of the envs that did not fail (a failed env restarts at its next
        step, or by the user's reset_mask in DISABLED mode)."""
        self.engine.run()
        self.check_failures()

    def dispatch(self, ids) -> None:
        """Hand envs ``ids`` (their ops set) to the engine: queued to the worker team (async;
        ``engine.take_ready`` collects them), or run now, waiting for ``finish`` (sync)."""
        e = self.engine
        if self.is_async:
            e.submit(ids, self.flags)
            return
        if ids.size != self.num_envs:
            mask = np.zeros(self.num_envs, np.bool_)
            mask[ids] = True
            self.ops[~mask] = OP_NONE
        self.in_flight[ids] = True
        try:
            e.run()          # failures are reported by finish() with the results
        except BaseException:
            self.in_flight[ids] = False     # refused before any env ran
            raise
        self.sent_sync = ids

    def take_sent_sync(self):
        """Sync mode: the ids of the last ``dispatch`` (no longer in flight), or None."""
        ids, self.sent_sync = self.sent_sync, None
        if ids is not None:
            self.in_flight[ids] = False
        return ids

    def drain(self) -> None:
        """Wait for every env in flight and drop the results."""
        e = self.engine
        if self.is_async and self.in_flight.any():
            k = self.items_in_flight()
            while e.wait_ready(k, 50) < k:
                pass
            e.take_ready(k, self.flags)
        self.in_flight[:] = False
        self.sent_sync = None

    def check_failures(self) -> None:
        """EngineError for the envs whose last op failed, with the others' results."""
        failures = self.engine.failures(None)
        if failures:
            ran = np.flatnonzero(self.ops).astype(np.int64)
            raise EngineError(failures, self.partial(ran, failures))

    def partial(self, ids, failures):
        """(obs, reward, terminated, truncated, info) of the envs among ``ids`` that did not
        fail, with info["env_id"] naming them (None when every env failed)."""
        bad = {i for i, _ in failures}
        ok = np.array([i for i in ids if i not in bad], np.int64)
        if ok.size == 0:
            return None
        out = self.gather(ok)
        out[4]["env_id"] = ok.astype(np.int32)
        out[4]["_env_id"] = np.ones(ok.size, np.bool_)
        return out

    def finish(self, ids):
        """The results of envs ``ids`` (taken from the engine), with info["env_id"]; an
        EngineError if some failed."""
        failures = self.engine.failures(ids)
        if failures:
            raise EngineError(failures, self.partial(ids, failures))
        out = self.gather(ids)
        out[4]["env_id"] = ids.astype(np.int32)
        out[4]["_env_id"] = np.ones(ids.size, np.bool_)
        return out

    def obs(self, outputs, fn):
        """The observation assembled from the engine's ``outputs`` (name -> array), each
        array passed through ``fn``: one array, or gymnasium's tuple or dict of arrays for a
        Tuple or Dict space."""
        st = self.obs_structure
        if st is None:
            return fn(outputs["obs"])
        kind, names = st
        if kind == "tuple":      # an entry may be a text leaf (spec.TextLeaf): a tuple of str
            return tuple(n(outputs, fn) if callable(n) else fn(outputs[n]) for n in names)
        return {k: n(outputs, fn) if callable(n) else fn(outputs[n]) for k, n in names.items()}

    def info_dict(self, kinds, mat, ids=None) -> dict[str, Any]:
        """gymnasium's info dict of rows ``mat`` of the engine's info matrix, whose info
        kinds are ``kinds`` (``ids``: their envs, None: every env)."""
        info: dict[str, Any] = {}
        masks = _info_masks(kinds) if self.info_layout else {}
        family = self.family
        for key, col, width, dtype, on_step, on_reset in self.info_layout:
            entry = masks.get((bool(on_step), bool(on_reset)))
            if entry is None:
                continue
            mask, full = entry
            if full:
                mask = mask.copy()              # each key gets its own mask array
            if isinstance(dtype, str):          # "action": numpy computed it in the action's dtype
                per_env = getattr(family, "action_dtype_of", None)
                dtype = per_env(ids) if per_env is not None else family.action_dtype
            elif isinstance(dtype, KindDtype):  # gymnasium types it by its first reporter
                first = int(np.argmax(mask)) if not full else 0
                dtype = dtype.reset if kinds[first] == INFO_RESET else dtype.step
            cols = mat[:, col] if width == 1 else mat[:, col:col + width]
            if full:                            # the common case: one copy, no masking
                vals = cols.astype(dtype)
            else:
                vals = np.where(mask if width == 1 else mask[:, None], cols, 0).astype(
                    dtype, copy=False)
            info[key] = vals
            info["_" + key] = mask
        extra = getattr(family, "extra_info", None)
        if extra is not None:
            extra(info, kinds, ids)
        return info

    def gather(self, ids, sel=None, out=None):
        """The step results of envs ``ids`` (None: every env, each array through ``out``, the
        front end's copy policy; default read-only views); ``sel`` indexes their rows
        (default ids; a slice gives read-only views)."""
        e = self.engine
        if sel is None:
            sel = ids
        if ids is None:
            out = out or read_only
            obs, rew, term, trunc = (self.obs(e.outputs, out), out(e.reward),
                                     out(e.terminated), out(e.truncated))
            kinds, mat, fm = e.info_kind_arr, e.info, e.final_mask_arr
        else:
            obs = e.obs[sel] if self.obs_structure is None else \
                self.obs(e.outputs, lambda a: a[sel])
            rew, term, trunc = e.reward[sel], e.terminated[sel], e.truncated[sel]
            if isinstance(sel, slice):          # views of the pool's rows
                obs = map_obs(obs, read_only)
                rew, term, trunc = map(read_only, (rew, term, trunc))
            kinds, mat, fm = e.info_kind_arr[sel], e.info[sel], e.final_mask_arr[sel]
        info = self.info_dict(kinds, mat, ids)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and fm.any():
            rows = np.flatnonzero(fm)
            env_rows = rows if ids is None else ids[rows]
            final_obs = np.empty(len(fm), dtype=object)
            for r, i in zip(rows, env_rows):
                final_obs[r] = e.final_obs[i].copy() if self.obs_structure is None else \
                    self.obs(e.final_outputs, lambda a: a[i].copy())
            fkinds = np.where(fm, INFO_STEP, 0).astype(np.uint8)
            fmat = e.final_info if ids is None else e.final_info[sel]
            info = {"final_obs": final_obs, "_final_obs": fm.copy(),
                    "final_info": self.info_dict(fkinds, fmat, ids),
                    "_final_info": fm.copy(), **info}
        return obs, rew, term, trunc, info

    # ------------------------------------------------------------------ lifecycle
    def forget_team(self) -> None:
        """In an os.fork() child: drop the parent's worker team without touching it (and the
        bound methods: the child's calls take the path that names the parent)."""
        if self.engine is not None:
            self.engine._forget_team()    # the engine's fork-only hook
        self.bound_methods.clear()

    def close(self) -> None:
        """Stop the worker threads and drop the engine and the family."""
        if self.engine is not None:
            self.engine.stop_workers()
        self.engine = None
        self.family = None
        self.bound_methods.clear()


# ---------------------------------------------------------------------- shared by front ends
# (a local VectorEnv through its Pool, the Ray backend over its own records)
def check_disabled(mode, done, ids) -> None:
    """DISABLED autoreset: ValueError naming the envs among ``ids`` (None: every env) whose
    ``done`` flag is set (they ended and were not reset)."""
    if mode != AutoresetMode.DISABLED:
        return
    d = done if ids is None else done[ids]
    if d.any():
        bad = np.flatnonzero(done) if ids is None else ids[d]
        raise ValueError(
            f"cypool: env(s) {bad.tolist()} ended and autoreset is DISABLED; reset them "
            "with reset(options={'reset_mask': mask}) first")


def default_ids(actions, n: int, in_flight, last_ids):
    """The envs an async ``step(actions)`` without env_ids means: every env (None) when none
    is in flight and ``actions`` has n rows, else those of the last recv (``last_ids``)."""
    try:
        rows = len(np.asarray(actions))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"actions must be an array with one row per env: {exc}") from None
    if rows == n and not in_flight.any():
        return None
    if last_ids is not None and rows == len(last_ids):
        return last_ids
    raise ValueError("cypool: in async mode step(actions) needs env_ids (or actions for "
                     "the envs of the last recv(), or for every env when none is in flight)")


def _info_masks(kinds):
    """(on_step, on_reset) -> (rows holding such keys, all rows?), None where no row does.
    Batches of steps only, or of resets only, the common cases, take two numpy passes."""
    n = len(kinds)
    step_rows = kinds == INFO_STEP
    n_step = int(np.count_nonzero(step_rows))
    if n_step == n:
        return {(True, True): (step_rows, True), (True, False): (step_rows, True),
                (False, True): None}
    reset_rows = kinds == INFO_RESET
    n_reset = int(np.count_nonzero(reset_rows))    # counts: cheaper than any()/all()
    both = n_step + n_reset
    return {(True, True): (step_rows | reset_rows, both == n) if both else None,
            (True, False): (step_rows, False) if n_step else None,
            (False, True): (reset_rows, n_reset == n) if n_reset else None}


def map_obs(obs, fn, text=None):
    """``fn`` applied to each array of an observation batch (an array, tuple or dict, nested
    dicts too: Kitchen's goals); the text leaves of a dict (tuples of str, spec.TextLeaf) are
    immutable: they pass unchanged, or through ``text`` (a population regroups them)."""
    if isinstance(obs, tuple):
        return tuple(fn(a) for a in obs)
    if isinstance(obs, dict):
        return {k: (a if text is None else text(a)) if isinstance(a, (tuple, str))
                else map_obs(a, fn, text) for k, a in obs.items()}
    return fn(obs)


def read_only(a):
    """A read-only view of ``a``: a caller's write must not reach the pool's state."""
    v = a.view()
    v.flags.writeable = False
    return v
