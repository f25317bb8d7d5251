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

import abc
import atexit
import os
import threading
import time
import weakref

import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from cypool.errors import ClosedEnvError, EngineError
from cypool._validate import (check_int, check_seed, check_timeout, parse_env_ids,
                              parse_reset_options, parse_seeds)
from cypool._pool_api import PoolApiMixin
from cypool._core.pool import OP_RESET, Pool, default_ids, read_only

# Pools not closed yet: closed at interpreter exit, before the modules their worker threads
# need are torn down.
_LIVE: "weakref.WeakSet[VectorEnv]" = weakref.WeakSet()


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


class VectorEnv(PoolApiMixin, gym.vector.VectorEnv, metaclass=abc.ABCMeta):
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

    Other front ends are siblings, not subclasses: the Ray backend is a
    ``gymnasium.vector.VectorEnv`` of its own, registered here (``VectorEnv.register``) so
    that ``isinstance(env, cypool.VectorEnv)`` holds for every pool cypool makes.
    """

    def __init__(self, family, *, env_id: str, seed=None, autoreset_mode="next_step",
                 copy: bool = True, batch_size: int | None = None, seeder=None,
                 env_kwargs=None, make_args=None, rebuild=None):
        """``seeder(i, seed)``: installs env i's random stream for an int seed, or for None
        when the env has none yet (default: the family's ``seed_env`` if it has one, else a
        PCG64 seeded as gymnasium seeds); populations pass their own. ``env_kwargs``: each
        env's complete task kwargs when they differ from the family's; ``make_args``: how
        ``make_vec`` built the pool and ``rebuild(snapshot)`` what pickling rebuilds it with
        (:func:`cypool.build.restore`)."""
        self._closed = True                      # until construction succeeds (see __del__)
        self._parent_pid = None                  # set in a forked child: the pool's owner
        self._lock = threading.RLock()           # one caller at a time mutates the pool
        self._recv_lock = threading.Lock()       # one recv() waits at a time
        self.num_envs = n = int(family.engine.num_envs)
        self.batch_size = check_int("batch_size", n if batch_size is None else batch_size, 1, n,
                                    closed_high=True)
        self.is_async = self.batch_size < n
        self.autoreset_mode = parse_autoreset_mode(autoreset_mode)
        self.pool = pool = Pool(family, seeder=seeder, env_kwargs=env_kwargs,
                                autoreset_mode=self.autoreset_mode, is_async=self.is_async)
        self._bound_methods = pool.bound_methods    # call()'s fast path reads it
        self.env_id = env_id
        self.num_threads = int(pool.engine.num_threads)
        self.single_observation_space = family.single_observation_space
        self.single_action_space = family.single_action_space
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self.metadata = dict(family.metadata)
        self.metadata["autoreset_mode"] = self.autoreset_mode
        self.render_mode = None
        self.copy = bool(copy)
        # an int, with room for every env's seed below the family's bound
        self._default_seed = None if seed is None else check_seed(seed, bound=pool.seed_bound)
        parse_seeds(self._default_seed, n, pool.seed_bound)
        self._has_reset = False
        self._make_args = None if make_args is None else dict(make_args)
        self._rebuild = rebuild
        self._last_ids = None                    # ids of the last recv (async step() default)
        _LIVE.add(self)
        # sync: the caller steps envs too, so one thread fewer; async: the caller runs the policy
        pool.engine.start_workers(self.num_threads if self.is_async else self.num_threads - 1)
        self._closed = False

    # ------------------------------------------------------------------ checks
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

    def check_ready_to_step(self):
        """Open (ClosedEnvError) and reset (RuntimeError): what stepping needs."""
        self._check_open()
        if not self._has_reset:
            raise RuntimeError("cypool: call reset() (or async_reset()) before stepping")

    _check_ready_to_step = check_ready_to_step

    @property
    def lock(self):
        """The lock every call that changes the pool holds (code that steps the pool outside
        :meth:`step`, such as ``cypool.xla``'s handler, holds it too)."""
        return self._lock

    def steppable(self) -> bool:
        """Open and reset: :meth:`check_ready_to_step` would pass (nothing is raised)."""
        return not self._closed and self._has_reset

    def _parse_seeds(self, seed):
        """One seed (or None) per env, validated against the family's seed bound; nothing
        is applied yet."""
        if seed is None and not self._has_reset and self._default_seed is not None:
            seed = self._default_seed
        return parse_seeds(seed, self.num_envs, self.pool.seed_bound)

    def _out(self, a):
        """A fresh copy (copy=True), or a read-only view of the pool's buffer: a caller's write
        must not reach the pool's state (an Atari frame stack, say)."""
        return a.copy() if self.copy else read_only(a)

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed=None, options: dict | None = None):
        """Reset every env (or those in ``options["reset_mask"]``) and return the full batch.
        A family may take more options (``family.reset_option_keys``: the maze ids' cells).

        ``seed``: an int s seeds env i with s + i, a list gives one seed (or None) per env, None
        continues each env's stream. The reset runs in the native loop like a step. In async
        mode, results still in flight are waited for and discarded first.
        """
        with self._recv_lock, self._lock:       # the order recv() takes them in
            self._check_open()
            pool = self.pool
            keys = getattr(pool.family, "reset_option_keys", ())
            mask = parse_reset_options(options, self.num_envs, not self._has_reset, keys)
            seeds = self._parse_seeds(seed)
            # the family's own options, checked now; applied once nothing else is queued
            apply = pool.family.reset_options(options, mask) if keys and options else None
            pool.drain()                        # queued autoresets must not use the new seeds
            pool.seed(seeds, mask)
            pool.set_reset_ops(mask)
            if apply is not None:
                apply()
            self._has_reset = True
            pool.run()
            e = pool.engine
            return pool.obs(e.outputs, self._out), pool.info_dict(e.info_kind_arr, e.info)

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
                env_ids = default_ids(actions, self.num_envs, self.pool.in_flight,
                                      self._last_ids)
            self.send(actions, env_ids)
            return self.recv()
        with self._lock:
            self.check_ready_to_step()
            pool = self.pool
            if pool.in_flight.any():
                raise ValueError("cypool: step() while results of send() are waiting; call "
                                 "recv() first")
            pool.check_disabled(None)
            pool.family.load_actions(actions, None)
            pool.engine.step_all(pool.next_step, pool.step_op)
            pool.check_failures()
            return pool.gather(None, out=self._out)

    # ------------------------------------------------------------------ send / recv
    def async_reset(self, *, seed=None):
        """Queue a reset of every env; collect the observations with ``recv()``."""
        with self._lock:
            self._check_open()
            self._check_env_items()
            pool = self.pool
            if pool.in_flight.any():
                raise ValueError("cypool: async_reset() while envs are in flight; recv() "
                                 "them first")
            everyone = np.ones(self.num_envs, np.bool_)
            pool.seed(self._parse_seeds(seed), everyone)
            self._has_reset = True
            pool.set_reset_ops(everyone)
            pool.dispatch(np.arange(self.num_envs, dtype=np.int64))

    def send(self, actions, env_ids=None):
        """Hand ``actions`` (one row per id in ``env_ids``, default every env) to the workers
        and return at once (async mode), or step them now (sync mode). Every id must be
        idle: sent envs are in flight until ``recv()`` returns them."""
        with self._lock:
            self.check_ready_to_step()
            self._check_env_items()
            pool = self.pool
            if not self.is_async and pool.sent_sync is not None:
                raise ValueError("cypool: send() again before recv(); receive the results of "
                                 "the previous send() first")
            ids = parse_env_ids(env_ids, self.num_envs)
            busy = ids[pool.in_flight[ids]]
            if busy.size:
                raise ValueError(f"cypool: env(s) {busy.tolist()} are in flight (sent, not yet "
                                 "received); recv() them before sending again")
            pool.check_disabled(ids)
            pool.family.load_actions(actions, None if ids.size == self.num_envs
                                     and env_ids is None else ids)
            pool.set_ops(ids)
            pool.dispatch(ids)

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
            pool = self.pool
            if not self.is_async:
                ids = pool.take_sent_sync()
                if ids is None:
                    raise ValueError("cypool: recv() with nothing sent; call send() first")
                return pool.finish(ids)
            in_flight = int(pool.in_flight.sum())
            if in_flight < self.batch_size:
                raise ValueError(f"cypool: recv() needs batch_size={self.batch_size} envs in "
                                 f"flight but {in_flight} are; send() more first")
            engine = pool.engine
        self._wait(engine, self.batch_size, timeout)
        with self._lock:
            self._check_open()
            ids = engine.take_ready(self.batch_size, pool.flags)
            self._last_ids = ids
            return pool.finish(ids)

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
                self.check_ready_to_step()
            pool.check_members_idle(members)
            ids = pool.member_rows(members)
            if reset:
                mask = np.zeros(self.num_envs, np.bool_)
                mask[ids] = True
                pool.seed([None] * self.num_envs, mask)
                pool.ops[ids] = OP_RESET
                self._has_reset = True
            else:
                pool.check_disabled(ids)
                pool.family.load_actions(actions, ids)
                pool.set_ops(ids)
            pool.engine.submit_groups(members, pool.flags)

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
                engine = pool.engine
            self._wait(engine, count, timeout)
            with self._lock:
                self._check_open()
                members = engine.take_ready_groups(count, pool.flags)
                ids = pool.member_rows(members)
                E = pool.unit
                sel = slice(members[0] * E, (members[0] + 1) * E) if count == 1 else ids
                failures = engine.failures(ids)
                if failures:
                    raise EngineError(failures, pool.partial(ids, failures), members=members)
                return members, pool.gather(ids, sel)

    def drain(self) -> None:
        """Member protocol: wait for every env in flight and drop the results, with the
        locks held (a population's reset, before it installs seeds)."""
        with self._recv_lock, self._lock:
            self._check_open()
            self.pool.drain()

    def close_extras(self, **kwargs):
        # a recv() waiting in another thread sees the env closed within 50 ms and raises
        with self._lock:
            self._closed = True
        with self._recv_lock, self._lock:
            _LIVE.discard(self)
            self.pool.close()
            self._closed = True

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
            ids = parse_env_ids(env_ids, self.num_envs)
            busy = ids[self.pool.in_flight[ids]]
            if busy.size:
                raise ValueError(f"cypool: env(s) {busy.tolist()} are in flight; recv() them "
                                 "before render()")
            frames = self.pool.family.render(ids)
            return tuple(frames)

    # ------------------------------------------------------------------ extras
    def xla(self):
        """EnvPool's ``handle, recv, send, step``: jittable jax functions that step this env
        inside ``jax.jit`` / ``lax.scan`` (see :mod:`cypool.xla`; needs
        ``pip install "cypool[jax]"``)."""
        from cypool.xla import make_xla
        return make_xla(self)

    def episode_statistics(self, copy: bool = True):
        """Per-env episode statistics kept by the native loop: the running return and length,
        the last finished episode's return and length, finished episodes and env steps.
        ``copy=False`` gives views of the pool's arrays (no copy, updated in place)."""
        self._check_open()
        e = self.pool.engine
        out = {"return": e.episode_return, "length": e.episode_length,
               "last_return": e.last_return, "last_length": e.last_length,
               "episodes": e.episodes, "env_steps": e.env_steps}
        return {k: v.copy() if copy else read_only(v) for k, v in out.items()}


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
