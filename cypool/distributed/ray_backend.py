"""RayVectorEnv: cypool pools inside Ray actors, behind one ``cypool.VectorEnv``.

Data flow
---------
The driver keeps the policy view: validation, seeds, which envs are in flight, and the
preallocated batch arrays. Actor w owns a sync-mode local cypool pool of the contiguous env
block ``[lo_w, hi_w)`` and does everything a local pool does: stepping on its OpenMP threads,
autoreset, info dicts. The driver never re-implements a family, so any family works.

    step / send    rows of ``actions`` for actor w  ->  actor.step.remote(rows, local ids)
    recv           ray.wait on the pending tasks; each finished task is a *chunk*
                   (global ids, obs, reward, terminated, truncated, info) whose arrays are
                   read from the object store without a copy; recv copies the rows once
                   into the preallocated batch and merges the infos at global rows

Per step only numpy arrays cross the wire: the action rows (and the local ids of a partial
send) one way, the result arrays and the info dict of arrays back. Seeds travel only with
resets. Env i of the pool is env ``i - lo_w`` of actor w, reset with seed ``s + i``, so its
trajectory is the one it has in a local pool.

Faults: a dead actor (killed, node lost) makes the task's result a Ray error; the driver turns
it into :class:`cypool.distributed.WorkerDiedError` naming the actor's envs. Every wait is a
loop of short ``ray.wait`` calls, so Ctrl-C and ``recv(timeout=)`` work and nothing blocks
on a dead actor.
"""
from __future__ import annotations

import collections
import os
import threading
import time
import warnings

import numpy as np
import gymnasium as gym
import ray
from ray.exceptions import ObjectLostError, RayActorError, RayTaskError

from cypool.build import make_local
from cypool.errors import ClosedEnvError, CypoolError, EngineError, WorkerDiedError
from cypool._validate import (check_int, check_number, check_seed, parse_env_ids,
                              parse_reset_options, parse_seeds)
from cypool._core.pool import check_disabled, default_ids
from cypool.vector import VectorEnv, parse_autoreset_mode

_WAIT_S = 0.05          # longest single ray.wait: Ctrl-C and timeouts are checked this often
_CLOSE_WAIT_S = 5.0     # close(): time given to the actors to close their pools


# ---------------------------------------------------------------------------- actor side
class _EngineFailure:
    """An actor's EngineError returned as data: ``[(local env id, message), ...]``."""

    def __init__(self, failures):
        self.failures = failures


class _PoolWorker:
    """The Ray actor: one sync-mode local cypool pool of ``num_envs`` envs.

    Construction errors are kept and raised by ``describe()`` so that the driver sees the
    original exception (a TypeError for a bad kwarg) instead of a dead actor.
    """

    def __init__(self, env_id, num_envs, num_threads, offset, make_kwargs, family_module=None,
                 setup=None):
        self.offset = offset    # global id of this actor's env 0
        self.env = None
        self.error = None
        self.obs_all = None     # the pool's obs buffer (copy=False views it), set by a full reset
        try:
            from cypool.registry import import_family

            import_family(family_module)      # a family registered outside cypool
            if setup is not None:             # the family's own (a user's MuJoCo task)
                setup()
            self.env = make_local(env_id, num_envs, num_threads=num_threads, copy=False,
                                  **make_kwargs)
        except Exception as err:  # noqa: BLE001 - handed to the driver by describe()
            self.error = err

    def describe(self):
        if self.error is not None:
            raise self.error
        e = self.env
        return {"single_observation_space": e.single_observation_space,
                "single_action_space": e.single_action_space,
                "metadata": dict(e.metadata), "num_threads": e.num_threads,
                "seed_bound": e.pool.seed_bound,
                "reset_option_keys": tuple(getattr(e.pool.family, "reset_option_keys", ())),
                "reset_option_per_env": getattr(getattr(e.pool.family, "spec", None),
                                                "reset_option_per_env", None),
                "node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}

    def reset(self, seeds, mask, family_options=None):
        """``family_options``: the family's own reset options for this actor's envs."""
        options = None if mask is None else {"reset_mask": np.array(mask, np.bool_)}
        if family_options:
            options = {**(options or {}), **family_options}
        try:
            obs, info = self.env.reset(seed=seeds, options=options)
        except EngineError as err:
            return _EngineFailure(list(zip(err.env_ids, err.messages)))
        if mask is None:
            self.obs_all = obs
        return obs, self._global_ids(info)

    def check_options(self, mask, family_options):
        """Check the family's own reset options for this actor's envs (``mask``: the envs
        reset, None: all) without applying them: ValueError before any actor resets."""
        m = np.ones(self.env.num_envs, np.bool_) if mask is None else np.array(mask, np.bool_)
        self.env.pool.family.reset_options(family_options, m)

    def last_obs(self):
        """Every env's current observation (a partial reset that skips this actor)."""
        return self.obs_all

    def step(self, actions, ids):
        try:
            if ids is None:
                out = self.env.step(actions)
            else:
                out = self.env.step(actions, env_ids=ids)
        except EngineError as err:
            return _EngineFailure(list(zip(err.env_ids, err.messages)))
        self._global_ids(out[4])
        return out

    def _global_ids(self, info):
        """A family's (or recv's) info["env_id"] holds local ids: make them global."""
        ids = info.get("env_id")
        if ids is not None and self.offset:
            mask = info.get("_env_id")
            shifted = (ids + self.offset).astype(ids.dtype)
            info["env_id"] = shifted if mask is None else np.where(mask, shifted, ids)
        return info

    def episode_statistics(self):
        return self.env.episode_statistics()

    def close(self):
        """Close the pool and end this actor's process: later calls fail with ActorDiedError."""
        if self.env is not None:
            self.env.close()
        ray.actor.exit_actor()


_REMOTE_WORKER = None


def _remote_worker():
    global _REMOTE_WORKER
    if _REMOTE_WORKER is None:
        _REMOTE_WORKER = ray.remote(_PoolWorker)
    return _REMOTE_WORKER


# ---------------------------------------------------------------------------- helpers
class _Chunk:
    """Finished rows of one task, waiting for recv(): arrays are object-store views."""

    __slots__ = ("gids", "obs", "rew", "term", "trunc", "info", "pos")

    def __init__(self, gids, obs, rew, term, trunc, info):
        self.gids, self.obs, self.rew, self.term, self.trunc, self.info = \
            gids, obs, rew, term, trunc, info
        self.pos = 0


def _merge_info(out: dict, info: dict, dst, src, rows: int):
    """Write ``info[k][src]`` into ``out[k][dst]`` for every key (recursively), creating
    ``out[k]`` as zeros (False, None for objects) of ``rows`` rows: gymnasium's unset slots."""
    for key, v in info.items():
        if isinstance(v, dict):
            _merge_info(out.setdefault(key, {}), v, dst, src, rows)
            continue
        v = np.asarray(v)
        arr = out.get(key)
        if arr is None:
            make = np.empty if v.dtype == object else np.zeros
            arr = out[key] = make((rows, *v.shape[1:]), v.dtype)
        elif arr.dtype != v.dtype:
            arr = out[key] = arr.astype(np.result_type(arr, v))
        arr[dst] = v[src]


def _empty(space, rows):
    """Zeroed observation buffers of ``rows`` rows: an array, or for Tuple/Dict spaces a
    tuple/dict of them, the layout a local pool returns; a Text space's (MiniGrid's
    mission) an object array of str, handed out as a tuple of str (see _leaf_out)."""
    if isinstance(space, gym.spaces.Tuple):
        return tuple(_empty(s, rows) for s in space.spaces)
    if isinstance(space, gym.spaces.Dict):
        return {k: _empty(s, rows) for k, s in space.spaces.items()}
    if isinstance(space, gym.spaces.Text):
        return np.full(rows, "", object)
    return np.zeros((rows, *space.shape), space.dtype)


def _tree(fn, obs):
    """fn applied to every array of an observation batch (an array, tuple or dict)."""
    if isinstance(obs, tuple):
        return tuple(_tree(fn, x) for x in obs)
    if isinstance(obs, dict):
        return {k: _tree(fn, x) for k, x in obs.items()}
    return fn(obs)


def _put(dst, di, src, si):
    """``dst[di] = src[si]`` for every array of an observation batch."""
    if isinstance(dst, tuple):
        for d, x in zip(dst, src):
            _put(d, di, x, si)
    elif isinstance(dst, dict):
        for k, d in dst.items():
            _put(d, di, src[k], si)
    else:
        if isinstance(src, tuple):          # a text leaf: a tuple of str, one per env
            src = np.array(src, object)
        dst[di] = src[si]


def _leaf_out(a, copy):
    """A buffer as the caller gets it: a text leaf (object array of str) as a tuple of str,
    as gymnasium batches a Text space; an array as it is, or a copy."""
    if a.dtype == object:
        return tuple(a.tolist())
    return np.copy(a) if copy else a


def _unwrap(err: RayTaskError):
    """The exception an actor method raised (ValueError, TypeError, ...), not Ray's wrapper."""
    cause = getattr(err, "cause", None)
    return cause if isinstance(cause, BaseException) else err


def _short(err) -> str:
    lines = [ln for ln in str(err).strip().splitlines() if ln.strip()]
    return lines[0][:300] if lines else type(err).__name__


def _connect(ray_address, ray_init_kwargs):
    """Reuse this process's Ray connection, else connect to ``ray_address``/RAY_ADDRESS,
    else start a local cluster (no dashboard)."""
    if ray.is_initialized():
        if ray_address not in (None, "auto", "local"):
            current = ray.get_runtime_context().gcs_address
            if current.rsplit(":", 1)[-1] != str(ray_address).rsplit(":", 1)[-1]:
                warnings.warn(f"cypool: Ray is already connected to {current}; ignoring "
                              f"ray_address={ray_address!r} (ray.shutdown() first to switch)",
                              RuntimeWarning, stacklevel=4)
        return
    kwargs = dict(ray_init_kwargs or {})
    address = ray_address or os.environ.get("RAY_ADDRESS") or None
    if address is None:
        kwargs.setdefault("include_dashboard", False)
        ray.init(address="local", **kwargs)
    else:
        ray.init(address=address, **kwargs)


def _split(num_envs: int, num_workers: int):
    """Contiguous, balanced blocks: the first num_envs % W actors get one env more."""
    q, r = divmod(num_envs, num_workers)
    bounds, lo = [], 0
    for w in range(num_workers):
        hi = lo + q + (1 if w < r else 0)
        bounds.append((lo, hi))
        lo = hi
    return bounds


# ---------------------------------------------------------------------------- the env
class RayVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` envs in ``num_workers`` Ray actors, as one :class:`cypool.VectorEnv`.

    Same spaces, metadata, autoreset modes, seeding and ``reset``/``step``/``send``/``recv``
    as a local pool, and the same trajectories for the same seed and actions. Extra
    attributes: ``actors`` (the actor handles), ``worker_env_ranges`` (actor w holds envs
    ``[lo, hi)``), ``worker_threads``, ``worker_nodes`` (Ray node ids).

    Returned arrays are copies by default; with ``copy=False`` they are the driver's batch
    buffers, overwritten by the next call. ``episode_statistics()`` always returns copies.
    """

    def __init__(self, env_id: str, num_envs: int, *, num_workers: int, ray_address=None,
                 num_threads: int | None = None, num_cpus_per_worker: float | None = None,
                 seed=None, autoreset_mode="next_step", copy: bool = True,
                 max_episode_steps: int | None = None, batch_size: int | None = None,
                 ray_init_kwargs: dict | None = None, actor_options: dict | None = None,
                 start_timeout: float = 60.0, **task_kwargs):
        from cypool._validate import check_pool_size, env_id_of
        from cypool.registry import family_for

        # state that close() relies on comes first: a failed start still shuts actors down
        self._closed = False
        self._actors = []
        self._pending = {}
        self._ready = collections.deque()
        self._lock = threading.RLock()
        self._dead = None

        env_id = env_id_of(env_id)
        family = family_for(env_id)
        family_module = family.module
        setup = family.remote_setup(env_id) if family.remote_setup is not None else None
        check_pool_size(num_envs, memory=False)    # each actor checks its own block
        num_workers = check_int("num_workers", num_workers, 1, num_envs, closed_high=True)
        if num_threads is not None:
            num_threads = check_int("num_threads (per worker)", num_threads, 1,
                                    what="an int or None")
        if num_cpus_per_worker is not None:
            num_cpus_per_worker = check_number("num_cpus_per_worker", num_cpus_per_worker, 0.0)
        mode = parse_autoreset_mode(autoreset_mode)
        if batch_size is None:
            batch_size = num_envs
        batch_size = check_int("batch_size", batch_size, 1, num_envs, closed_high=True)
        self._default_seed = None if seed is None else check_seed(seed)

        self.env_id = env_id
        self.num_envs = n = int(num_envs)
        self.num_workers = int(num_workers)
        self.batch_size = int(batch_size)
        self.is_async = self.batch_size < n
        self.autoreset_mode = mode
        self.copy = bool(copy)
        self.render_mode = None
        self._has_reset = False
        self._done = np.zeros(n, np.bool_)
        self._in_flight = np.zeros(n, np.bool_)   # sent and not yet returned by recv()
        self._last_ids = None
        self._sync_order = None                   # sync mode: ids of the sends awaiting recv()

        _connect(ray_address, ray_init_kwargs)
        bounds = _split(n, self.num_workers)
        self.worker_env_ranges = bounds
        self._owner = np.empty(n, np.int64)
        for w, (lo, hi) in enumerate(bounds):
            self._owner[lo:hi] = w
        if num_threads is None:   # share the free CPUs evenly; at least one thread each
            free = ray.available_resources().get("CPU", 0.0)
            num_threads = max(1, int(free // self.num_workers))
        env_kwargs = task_kwargs.pop("env_kwargs", None)
        if env_kwargs is not None:
            from cypool._validate import env_kwargs_list

            env_kwargs = env_kwargs_list(env_kwargs, n)
        make_kwargs = dict(autoreset_mode=mode, max_episode_steps=max_episode_steps,
                           **task_kwargs)
        remote = _remote_worker()
        threads = [min(num_threads, hi - lo) for lo, hi in bounds]
        asked = sum(threads) if num_cpus_per_worker is None \
            else num_cpus_per_worker * self.num_workers
        total = ray.cluster_resources().get("CPU", 0.0)
        if asked > total:
            warnings.warn(f"cypool: the {self.num_workers} Ray actors ask for {asked} CPUs but "
                          f"the cluster has {total}; they start only if nodes join (waiting "
                          f"up to start_timeout={start_timeout} s)", RuntimeWarning,
                          stacklevel=3)
        for w, (lo, hi) in enumerate(bounds):
            opts = {"num_cpus": threads[w] if num_cpus_per_worker is None
                    else num_cpus_per_worker,
                    "scheduling_strategy": "SPREAD", "max_restarts": 0, "max_task_retries": 0}
            opts.update(actor_options or {})
            kw = make_kwargs if env_kwargs is None else \
                {**make_kwargs, "env_kwargs": env_kwargs[lo:hi]}     # the actor's own envs
            self._actors.append(remote.options(**opts).remote(env_id, hi - lo, threads[w], lo,
                                                               kw, family_module,
                                                               setup))
        descs = self._start(start_timeout, threads, num_cpus_per_worker)

        d0 = descs[0]
        self.single_observation_space = d0["single_observation_space"]
        self.single_action_space = d0["single_action_space"]
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, n)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, n)
        self.metadata = dict(d0["metadata"])
        self._seed_bound = d0["seed_bound"]
        self._option_keys = d0["reset_option_keys"]
        self._option_per_env = d0["reset_option_per_env"]
        if self._default_seed is not None:      # room for every env's seed, as make_vec checks
            try:
                parse_seeds(self._default_seed, n, self._seed_bound)
            except ValueError:
                self.close()
                raise
        self.metadata["autoreset_mode"] = mode
        self.worker_threads = [d["num_threads"] for d in descs]
        self.worker_nodes = [d["node_id"] for d in descs]
        self.num_threads = int(sum(self.worker_threads))

        # observations: an array, or a tuple/dict of arrays (Tuple/Dict spaces), as local
        obs_space = self.single_observation_space
        self._obs = _empty(obs_space, n)                      # full batches (reset, step)
        self._rew = np.zeros(n, np.float64)
        self._term = np.zeros(n, np.bool_)
        self._trunc = np.zeros(n, np.bool_)
        self._b_obs = _empty(obs_space, self.batch_size)      # recv batches
        self._b_rew = np.zeros(self.batch_size, np.float64)
        self._b_term = np.zeros(self.batch_size, np.bool_)
        self._b_trunc = np.zeros(self.batch_size, np.bool_)

    def _start(self, timeout, threads, cpus):
        refs = [a.describe.remote() for a in self._actors]
        ready, missing = ray.wait(refs, num_returns=len(refs), timeout=timeout)
        if missing:
            avail = ray.available_resources().get("CPU", 0.0)
            self.close()
            asked = cpus if cpus is not None else max(threads)
            raise CypoolError(
                f"cypool: {len(missing)} of {self.num_workers} Ray actors did not start within "
                f"{timeout} s: each asks for num_cpus={asked} and the cluster has {avail} CPUs "
                "free (lower num_threads/num_cpus_per_worker or num_workers, or add nodes)")
        descs = []
        for w, ref in enumerate(refs):
            try:
                descs.append(ray.get(ref))
            except RayTaskError as err:
                self.close()
                raise _unwrap(err) from None
            except (RayActorError, ObjectLostError) as err:
                self.close()
                lo, hi = self.worker_env_ranges[w]
                raise WorkerDiedError(w, range(lo, hi), _short(err)) from None
        for w, d in enumerate(descs[1:], 1):
            if (d["single_observation_space"] != descs[0]["single_observation_space"]
                    or d["single_action_space"] != descs[0]["single_action_space"]):
                self.close()
                raise CypoolError(f"cypool: Ray worker {w} built different spaces than worker "
                                  "0 (different cypool builds on the nodes?)")
        return descs

    # ------------------------------------------------------------------ properties
    @property
    def actors(self):
        """The Ray actor handles, one per worker (actor w holds ``worker_env_ranges[w]``)."""
        return tuple(self._actors)

    # ------------------------------------------------------------------ checks
    def check_open(self):
        if self._closed:
            raise ClosedEnvError(f"cypool: this {self.env_id} env is closed")

    _check_open = check_open

    def _check_alive(self):
        self._check_open()
        if self._dead is not None:
            raise self._dead

    def _check_ready_to_step(self):
        self._check_alive()
        if not self._has_reset:
            raise RuntimeError("cypool: call reset() (or async_reset()) before stepping")

    def _check_actions(self, actions, k, ids):
        a = np.asarray(actions)
        sp = self.single_action_space
        want = (k, *sp.shape)
        if a.shape != want:
            raise ValueError(f"actions must have shape {want}, got {a.shape}")
        # row-dependent checks here, before any actor moves (each actor checks the rest)
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            bad = np.flatnonzero(~np.isfinite(a.reshape(k, -1)).all(axis=1))
            bad = bad if ids is None else ids[bad]
            raise ValueError(f"actions contain NaN or Inf (env(s) {bad.tolist()})")
        if isinstance(sp, gym.spaces.Discrete) and a.dtype.kind in "iu" and a.size:
            lo, hi = int(sp.start), int(sp.start + sp.n)
            bad = (a < lo) | (a >= hi)
            if bad.any():
                rows = np.flatnonzero(bad.reshape(k, -1).any(axis=1))
                envs = rows if ids is None else ids[rows]
                raise ValueError(f"actions must be in [{lo}, {hi}); got {a[rows].tolist()} "
                                 f"for env(s) {envs.tolist()}")
        return np.ascontiguousarray(a)

    def _seed_list(self, seed):
        if seed is None and not self._has_reset and self._default_seed is not None:
            seed = self._default_seed
        if seed is None:
            return None
        return parse_seeds(seed, self.num_envs, self._seed_bound)

    # ------------------------------------------------------------------ tasks
    def _launch_step(self, a, ids):
        """One step task per actor owning some of ``ids`` (None: every env, in order)."""
        if ids is None:
            for w, (lo, hi) in enumerate(self.worker_env_ranges):
                ref = self._actors[w].step.remote(a[lo:hi], None)
                self._pending[ref] = (w, np.arange(lo, hi), False)
            return
        owner = self._owner[ids]
        for w in np.unique(owner):
            sel = np.flatnonzero(owner == w)
            gids = ids[sel]
            lo = self.worker_env_ranges[w][0]
            ref = self._actors[w].step.remote(a[sel], gids - lo)
            self._pending[ref] = (int(w), gids, False)

    def _absorb(self, ref, value=None, err=None):
        """Turn a finished task into a ready chunk; return the exception it carries, if any
        (its envs are then no longer in flight)."""
        w, gids, is_reset = self._pending.pop(ref)
        if err is None and value is None:
            try:
                value = ray.get(ref)
            except Exception as e:  # noqa: BLE001 - classified just below
                err = e
        if err is not None:
            self._in_flight[gids] = False
            if isinstance(err, (RayActorError, ObjectLostError)):
                lo, hi = self.worker_env_ranges[w]
                self._dead = WorkerDiedError(w, range(lo, hi), _short(err))
                return self._dead
            return _unwrap(err) if isinstance(err, RayTaskError) else err
        if isinstance(value, _EngineFailure):
            self._in_flight[gids] = False
            lo = self.worker_env_ranges[w][0]
            failures = [(lo + int(i), m) for i, m in value.failures]
            self._done[[i for i, _ in failures]] = True
            return EngineError(failures)
        if is_reset:
            obs, info = value
            k = len(gids)
            rew = np.zeros(k, self._rew.dtype)
            term, trunc = np.zeros(k, np.bool_), np.zeros(k, np.bool_)
        else:
            obs, rew, term, trunc, info = value
            self._done[gids] = term | trunc
        self._ready.append(_Chunk(gids, obs, rew, term, trunc, info))
        return None

    def _wait(self, refs, deadline=None):
        """Block until every ref has finished (Ctrl-C and ``deadline`` checked meanwhile)."""
        left = list(refs)
        while left:
            _, left = ray.wait(left, num_returns=len(left), timeout=_WAIT_S)
            if left and deadline is not None and time.monotonic() > deadline:
                raise TimeoutError("cypool: timed out waiting for the Ray workers")

    def _gather_all(self):
        """Wait for every pending task and absorb it; raise the worst error among them."""
        refs = list(self._pending)
        self._wait(refs)
        try:
            values = ray.get(refs)
            errors = [self._absorb(r, v) for r, v in zip(refs, values)]
        except Exception:  # noqa: BLE001 - one failed: classify them one by one
            errors = [self._absorb(r) for r in refs]
        errors = [e for e in errors if e is not None]
        if errors:
            self._ready.clear()
            self._in_flight[:] = False
            self._raise_worst(errors)

    @staticmethod
    def _raise_worst(errors):
        for e in errors:
            if isinstance(e, WorkerDiedError):
                raise e
        engine = [e for e in errors if isinstance(e, EngineError)]
        if engine and len(engine) == len(errors):
            failures = sorted(f for e in engine for f in zip(e.env_ids, e.messages))
            raise EngineError(failures)
        raise next(e for e in errors if not isinstance(e, EngineError))

    def _drain(self):
        """Finish every task in flight and drop its results (reset() in async mode)."""
        refs = list(self._pending)
        if refs:
            self._wait(refs)
            for r in refs:
                e = self._absorb(r)
                if isinstance(e, WorkerDiedError):
                    raise e
        self._ready.clear()
        self._in_flight[:] = False
        self._sync_order = None

    def _assemble(self, parts, k, full):
        """Copy ``(dst, chunk, src)`` row ranges into the first k rows of the full-batch
        (``full``) or recv-batch buffers; merge the infos. Returns the five results."""
        for _, c, _ in parts:
            if c.rew.dtype != self._rew.dtype:     # a family with other reward dtypes
                self._rew = self._rew.astype(c.rew.dtype)
                self._b_rew = self._b_rew.astype(c.rew.dtype)
        if full:
            obs, rew, term, trunc = self._obs, self._rew, self._term, self._trunc
        else:
            obs, rew, term, trunc = (_tree(lambda a: a[:k], self._b_obs), self._b_rew[:k],
                                     self._b_term[:k], self._b_trunc[:k])
        info: dict = {}
        for dst, c, src in parts:
            _put(obs, dst, c.obs, src)
            rew[dst] = c.rew[src]
            term[dst] = c.term[src]
            trunc[dst] = c.trunc[src]
            _merge_info(info, c.info, dst, src, k)
        return obs, rew, term, trunc, info

    def _out(self, a):
        return _tree(lambda x: _leaf_out(x, self.copy), a)

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed=None, options: dict | None = None):
        """Reset every env (or those in ``options["reset_mask"]``) and return the full batch.
        The family's own options (the maze ids' cells, Adroit's ``initial_state_dict``) as
        ``make_vec``'s pools take them.

        ``seed``: an int s seeds env i with s + i (actor w gets ``[s + lo_w, ..., s + hi_w - 1]``),
        a list gives one seed (or None) per env, None continues each env's stream. In async
        mode, results still in flight are waited for and discarded first.
        """
        with self._lock:
            self._check_alive()
            mask = parse_reset_options(options, self.num_envs, not self._has_reset,
                                       self._option_keys)
            seeds = self._seed_list(seed)
            fam_opts = self._family_options(options, mask)
            if any(o is not None for o in fam_opts):    # every share checked before any reset
                checks = [(w, self._actors[w].check_options.remote(mask[lo:hi], fam_opts[w]))
                          for w, (lo, hi) in enumerate(self.worker_env_ranges)
                          if fam_opts[w] is not None]
                self._wait([ref for _, ref in checks])
                for w, ref in checks:
                    try:
                        ray.get(ref)
                    except (RayActorError, ObjectLostError) as err:
                        lo, hi = self.worker_env_ranges[w]
                        self._dead = WorkerDiedError(w, range(lo, hi), _short(err))
                        raise self._dead from None
                    except RayTaskError as err:
                        raise _unwrap(err) from None
            self._drain()
            refs, slots = [], []
            for w, (lo, hi) in enumerate(self.worker_env_ranges):
                m = mask[lo:hi]
                s = None if seeds is None else seeds[lo:hi]
                if s is not None and all(x is None for x in s):
                    s = None
                if m.all():
                    refs.append(self._actors[w].reset.remote(s, None, fam_opts[w]))
                elif m.any():
                    refs.append(self._actors[w].reset.remote(s, m, fam_opts[w]))
                else:
                    refs.append(self._actors[w].last_obs.remote())
                slots.append(m.any())
            self._wait(refs)
            info: dict = {}
            errors = []
            for w, (ref, is_reset) in enumerate(zip(refs, slots)):
                lo, hi = self.worker_env_ranges[w]
                try:
                    value = ray.get(ref)
                except (RayActorError, ObjectLostError) as err:
                    self._dead = WorkerDiedError(w, range(lo, hi), _short(err))
                    errors.append(self._dead)
                    continue
                except RayTaskError as err:
                    errors.append(_unwrap(err))
                    continue
                if isinstance(value, _EngineFailure):
                    failures = [(lo + int(i), msg) for i, msg in value.failures]
                    self._done[[i for i, _ in failures]] = True
                    errors.append(EngineError(failures))
                    continue
                if is_reset:
                    obs, winfo = value
                    _merge_info(info, winfo, slice(lo, hi), slice(None), self.num_envs)
                else:
                    obs = value
                _put(self._obs, slice(lo, hi), obs, slice(None))
            self._has_reset = True
            if errors:
                self._raise_worst(errors)
            self._done[mask] = False
            return self._out(self._obs), info

    def _family_options(self, options, mask):
        """Each worker's share of the family's own reset options (the maze ids' cells,
        Adroit's initial_state_dict): a per-env value (the spec's reset_option_per_env) is
        cut into the worker's rows, any other value goes to every worker; None for a worker
        none of whose envs resets. Each worker's family checks its share, before any env of
        it moves; a per-env value of the wrong length is refused here."""
        out = [None] * len(self.worker_env_ranges)
        given = {k: options[k] for k in self._option_keys if options and k in options}
        if not given:
            return out
        per_env = {k for k, v in given.items()
                   if self._option_per_env is not None and self._option_per_env(k, v)}
        for k in per_env:
            if len(given[k]) != self.num_envs:
                raise ValueError(f"options[{k!r}]: one value per env must have "
                                 f"{self.num_envs} rows (one per env), got {len(given[k])}")
        for w, (lo, hi) in enumerate(self.worker_env_ranges):
            if mask[lo:hi].any():
                out[w] = {k: (v[lo:hi] if k in per_env else v) for k, v in given.items()}
        return out

    def step(self, actions, env_ids=None):
        """Step the envs with their rows of ``actions`` (every env, or ``env_ids``).

        Sync mode returns the rows of the envs stepped; async mode is ``send`` then ``recv``
        and returns the first ``batch_size`` envs to finish (``info["env_id"]``).
        """
        if self.is_async or env_ids is not None:
            if self.is_async and env_ids is None:
                env_ids = default_ids(actions, self.num_envs, self._in_flight, self._last_ids)
            self.send(actions, env_ids)
            return self.recv()
        with self._lock:
            self._check_ready_to_step()
            if self._in_flight.any():
                raise ValueError("cypool: step() while results of send() are waiting; call "
                                 "recv() first")
            check_disabled(self.autoreset_mode, self._done, None)
            a = self._check_actions(actions, self.num_envs, None)
            if self._pending:       # left by an interrupted step (Ctrl-C): finish, drop
                self._drain()
            self._launch_step(a, None)
            self._gather_all()
            n = self.num_envs
            parts = []
            while self._ready:
                c = self._ready.popleft()
                parts.append((slice(int(c.gids[0]), int(c.gids[-1]) + 1), c, slice(None)))
            obs, rew, term, trunc, info = self._assemble(parts, n, True)
            return self._out(obs), self._out(rew), self._out(term), self._out(trunc), info

    # ------------------------------------------------------------------ send / recv
    def async_reset(self, *, seed=None):
        """Queue a reset of every env on the actors; collect the observations with recv()."""
        with self._lock:
            self._check_alive()
            if self._in_flight.any():
                raise ValueError("cypool: async_reset() while envs are in flight; recv() "
                                 "them first")
            seeds = self._seed_list(seed)
            self._has_reset = True
            for w, (lo, hi) in enumerate(self.worker_env_ranges):
                s = None if seeds is None else seeds[lo:hi]
                ref = self._actors[w].reset.remote(s, None)
                self._pending[ref] = (w, np.arange(lo, hi), True)
            self._in_flight[:] = True
            self._done[:] = False
            if not self.is_async:
                self._sync_order = np.arange(self.num_envs)

    def send(self, actions, env_ids=None):
        """Hand ``actions`` (one row per id in ``env_ids``, default every env) to the actors
        and return at once. Every id must be idle: sent envs are in flight until ``recv()``
        returns them."""
        with self._lock:
            self._check_ready_to_step()
            ids = parse_env_ids(env_ids, self.num_envs)
            busy = ids[self._in_flight[ids]]
            if busy.size:
                raise ValueError(f"cypool: env(s) {busy.tolist()} are in flight (sent, not yet "
                                 "received); recv() them before sending again")
            check_disabled(self.autoreset_mode, self._done, ids)
            a = self._check_actions(actions, ids.size, ids)
            full = env_ids is None or (ids.size == self.num_envs
                                       and np.array_equal(ids, np.arange(self.num_envs)))
            self._launch_step(a, None if full else ids)
            self._in_flight[ids] = True
            if not self.is_async:
                self._sync_order = ids if self._sync_order is None \
                    else np.concatenate([self._sync_order, ids])

    def recv(self, timeout: float | None = None):
        """Return (obs, reward, terminated, truncated, info) of the first ``batch_size`` envs
        to finish, from whichever actors finish first (sync mode: the envs of the last
        ``send``, in its order); ``info["env_id"]`` names them with global ids.

        Raises instead of waiting when fewer envs are in flight than a batch needs,
        :class:`~cypool.distributed.WorkerDiedError` when an actor died, and TimeoutError
        after ``timeout`` seconds.
        """
        with self._lock:
            self._check_alive()
            deadline = None if timeout is None else time.monotonic() + timeout
            if not self.is_async:
                if self._sync_order is None:
                    raise ValueError("cypool: recv() with nothing sent; call send() first")
                self._wait(list(self._pending), deadline)     # TimeoutError keeps the order
                order, self._sync_order = self._sync_order, None
                self._gather_all()
                k = len(order)
                pos = np.empty(self.num_envs, np.int64)
                pos[order] = np.arange(k)
                parts = []
                while self._ready:
                    c = self._ready.popleft()
                    parts.append((pos[c.gids], c, slice(None)))
                ids = order
            else:
                in_flight = int(self._in_flight.sum())
                if in_flight < self.batch_size:
                    raise ValueError(f"cypool: recv() needs batch_size={self.batch_size} envs "
                                     f"in flight but {in_flight} are; send() more first")
                k = self.batch_size
                ready = sum(c.gids.size - c.pos for c in self._ready)
                while ready < k:
                    refs = list(self._pending)
                    if not refs:    # cannot happen while the bookkeeping holds; never hang
                        raise RuntimeError("cypool: recv() has nothing left to wait for")
                    done, _ = ray.wait(refs, num_returns=1, timeout=_WAIT_S)
                    if not done:
                        if deadline is not None and time.monotonic() > deadline:
                            raise TimeoutError(f"cypool: recv() timed out after {timeout} s")
                        continue
                    more, _ = ray.wait([r for r in refs if r not in done],
                                       num_returns=len(refs) - 1, timeout=0) \
                        if len(refs) > 1 else ([], [])
                    for ref in done + more:
                        err = self._absorb(ref)
                        if err is not None:
                            raise err
                    ready = sum(c.gids.size - c.pos for c in self._ready)
                parts, got, id_parts = [], 0, []
                while got < k:
                    c = self._ready[0]
                    m = min(k - got, c.gids.size - c.pos)
                    src = slice(c.pos, c.pos + m)
                    parts.append((slice(got, got + m), c, src))
                    id_parts.append(c.gids[src])
                    c.pos += m
                    got += m
                    if c.pos == c.gids.size:
                        self._ready.popleft()
                ids = np.concatenate(id_parts)
            obs, rew, term, trunc, info = self._assemble(parts, k, False)
            self._in_flight[ids] = False
            self._last_ids = ids
            info["env_id"] = ids.astype(np.int32)
            info["_env_id"] = np.ones(k, np.bool_)
            return self._out(obs), self._out(rew), self._out(term), self._out(trunc), info

    # ------------------------------------------------------------------ not on Ray yet
    def _not_on_ray(self, what):
        raise NotImplementedError(f"cypool: {what} is not available on the Ray backend yet; "
                                  "use a local pool (backend='local')")

    def get_attr(self, name):
        self._not_on_ray("get_attr")

    def set_attr(self, name, values, *, env_ids=None):
        self._not_on_ray("set_attr")

    def call(self, name, *args, **kwargs):
        self._not_on_ray("call")

    def get_state(self, env_ids=None):
        self._not_on_ray("get_state")

    def render(self, env_ids=None):
        self._not_on_ray("render")

    def xla(self):
        self._not_on_ray("xla()")

    def set_state(self, state, env_ids=None):
        self._not_on_ray("set_state")

    def __reduce_ex__(self, protocol):
        raise TypeError("cypool: a Ray pool cannot be pickled or copied (its envs live in "
                        "the actors' processes)")

    def __deepcopy__(self, memo):
        self.__reduce_ex__(4)

    def __copy__(self):
        self.__reduce_ex__(4)

    # ------------------------------------------------------------------ extras
    def episode_statistics(self, copy: bool = True):
        """Per-env episode statistics gathered from the actors (always fresh arrays)."""
        with self._lock:
            self._check_alive()
            refs = [a.episode_statistics.remote() for a in self._actors]
            self._wait(refs)
            try:
                parts = ray.get(refs)
            except (RayActorError, ObjectLostError) as err:
                raise CypoolError(f"cypool: a Ray worker died: {_short(err)}") from None
            return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}

    def close_extras(self, **kwargs):
        """Close every actor's pool, then kill the actors. The Ray cluster keeps running
        (``ray.shutdown()`` stops a cluster this process started)."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            actors, self._actors = list(getattr(self, "_actors", [])), []
            self._closed = True
            self._pending.clear()
            self._ready.clear()
            if not actors or not ray.is_initialized():
                return
            # each actor closes its pool and exits (tasks sent later fail); one that does not
            # answer in time (busy, hung) is killed
            done = set()
            try:
                refs = [a.close.remote() for a in actors]
                ready, _ = ray.wait(refs, num_returns=len(refs), timeout=_CLOSE_WAIT_S)
                done = {refs.index(r) for r in ready}
            except Exception:  # noqa: BLE001 - dead actors are killed below anyway
                pass
            for w, a in enumerate(actors):
                if w not in done:
                    try:
                        ray.kill(a, no_restart=True)
                    except Exception:  # noqa: BLE001 - already gone
                        pass

    def __del__(self):
        try:
            if not getattr(self, "_closed", True):
                self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown: Ray may be gone
            pass

    def __repr__(self):
        if self._closed:
            return f"cypool.VectorEnv({self.env_id}, closed, backend=ray)"
        return (f"cypool.VectorEnv({self.env_id}, num_envs={self.num_envs}, backend=ray, "
                f"num_workers={self.num_workers}, worker_threads={self.worker_threads})")


VectorEnv.register(RayVectorEnv)     # a sibling front end: isinstance(env, cypool.VectorEnv)
