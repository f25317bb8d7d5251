"""Populations: P members of E envs each, stepped as one cypool pool of P·E envs.

A population-based method (PBT, CEM-RL, DvD) trains P agents side by side. Here their envs
live in one pool, member-major: env (k, j), member k's j-th env, is row ``k·E + j`` of every
batch array, so the ``(P, E, ...)`` arrays handed out are reshaped views of the pool's flat
buffers (no copy) and a batched learner consumes them directly.

What a population adds to :class:`cypool.VectorEnv`:

* a seed tree: env (k, j) draws from ``SeedSequence(root, spawn_key=(k, j))``, the stream
  ``SeedSequence(root).spawn(P)[k].spawn(E)[j]`` would give, so member k's envs see the same
  random streams whatever P is and whatever the other members are configured with;
* per-member task kwargs (reward weights, ``reset_noise_scale``, ``frame_skip``, ...), held as
  per-env parameter rows in C and changeable at run time (:meth:`PopulationEnv.set_member_kwargs`);
* per-member episode statistics, written by the native kernel and read as ``(P, E)`` views,
  and a per-member ring of the last K finished episodes (``(P, K)``), the PBT fitness;
* per-member ``max_episode_steps`` (a member kwarg);
* member resets (:meth:`PopulationEnv.reset_member`) that leave the other members alone;
* async stepping of whole members (``member_batch`` < P: :meth:`PopulationEnv.send` /
  :meth:`PopulationEnv.recv`), so members of different cost do not stall each other;
* an evaluation mode (:meth:`PopulationEnv.evaluate`): exactly K complete episodes per member
  from fixed seeds, on a separate pool, so training episodes are left alone.

MuJoCo tasks and Atari games alike.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector.utils import batch_space

from cypool.errors import ClosedEnvError
from cypool._pool_api import check_snapshot
from cypool._validate import MAX_SEED, check_int, check_limit, check_seed, is_int, parse_seeds
from cypool.build import request
from cypool._core.pool import map_obs, read_only
from cypool.vector import VectorEnv

__all__ = ["make_population", "PopulationEnv"]

_SEED_MODES = ("tree", "parity")


def _check_count(x, name):
    return check_int(name, x, 1)


def seed_below(seq: np.random.SeedSequence, bound: int) -> int:
    """An int seed in [0, bound) drawn from ``seq``: the top bits of its first 64-bit word
    when ``bound`` is a power of two (2**63: 63 bits, 2**32: a RandomState seed), else that
    word modulo ``bound``."""
    v = int(seq.generate_state(1, np.uint64)[0])
    bits = bound.bit_length() - 1
    return v >> (64 - bits) if bound == 1 << bits and bits <= 64 else v % bound


class _TreeSeeder:
    """The family's ``seed_env`` hook: installs the generator the population chose for env i.

    The façade calls ``seed_env(i, None)`` for an env it has never seeded when a reset
    reaches it; the population seeds envs itself (``install``) before calling the façade's
    reset with ``seed=None``, so the hook only fills in envs nobody seeded: they draw from
    the tree under a root taken once from fresh entropy.
    """

    def __init__(self, engine, envs_per_member, family_seeder=None, seed_bound=MAX_SEED):
        self.engine = engine
        self.E = envs_per_member
        self.family_seeder = family_seeder    # the family's own seed_env(i, int), if any
        self.seed_bound = seed_bound          # the ints family_seeder takes: [0, seed_bound)
        self.installed = np.zeros(engine.num_envs, np.bool_)
        self.entropy_root = np.random.SeedSequence().entropy

    def install(self, i, seed):
        """Seed env i from an int (as gymnasium's env seeded with it) or a SeedSequence."""
        if self.family_seeder is not None:
            if isinstance(seed, np.random.SeedSequence):
                # an int in the family's seed range, so that make_vec(seed=...) can
                # replay this env on its own
                seed = seed_below(seed, self.seed_bound)
            self.family_seeder(i, seed)
        else:
            if not isinstance(seed, np.random.SeedSequence):
                seed = np.random.SeedSequence(seed)
            self.engine.set_generator(i, np.random.PCG64(seed))
        self.installed[i] = True

    def __call__(self, i, seed):
        if seed is not None:   # pop.vec.reset(seed=...) called directly: the façade's seeds
            self.install(i, int(seed))
        elif not self.installed[i]:
            k, j = divmod(i, self.E)
            self.install(i, np.random.SeedSequence(self.entropy_root, spawn_key=(k, j)))


class PopulationEnv:
    """P members of E envs in one cypool pool, with ``(P, E, ...)`` batches.

    Build it with :func:`make_population`. ``step``/``reset`` return ``(P, E, ...)`` arrays:
    with ``copy=False`` (the default) these are views of the pool's own buffers, overwritten
    by the next call; with ``copy=True`` they are fresh arrays. Info arrays are reshaped to
    ``(P, E, ...)`` as well. The flat gymnasium VectorEnv underneath is :attr:`vec`
    (``num_envs = P·E``, row ``k·E + j`` is env j of member k); in sync mode stepping it
    directly is allowed and keeps the population's statistics and seeds consistent.

    Async mode (``member_batch`` < P): :meth:`send` hands whole members to the worker
    threads and returns at once, :meth:`recv` returns the first ``member_batch`` members to
    finish, ``(member_batch, E, ...)``, with ``info["member_id"]``. One worker thread steps
    a member's E envs in turn, so a member comes back complete.

    Attributes
    ----------
    population_size, envs_per_member, num_envs : int
        P, E and P·E.
    single_observation_space, single_action_space : gymnasium.spaces.Space
        One env's spaces.
    member_observation_space, member_action_space : gymnasium.spaces.Space
        One member's batch, ``(E, ...)``.
    observation_space, action_space : gymnasium.spaces.Space
        The population's batch, ``(P, E, ...)``.
    pool : cypool._core.pool.Pool
        The Pool of its ``P·E`` envs (``pool.engine``, ``pool.family``).
    """

    def __init__(self, family, *, env_id: str, population_size: int, envs_per_member: int,
                 member_kwargs: list[dict], base_kwargs: dict, seed=None, seed_mode="tree",
                 autoreset_mode="next_step", copy: bool = False, member_batch=None,
                 episode_window: int = 100, max_episode_steps: int, make_args=None):
        self.env_id = env_id
        self.population_size = P = population_size
        self.envs_per_member = E = envs_per_member
        self.num_envs = P * E
        if seed_mode not in _SEED_MODES:
            raise ValueError(f"seed_mode must be one of {_SEED_MODES}, got {seed_mode!r}")
        self.seed_mode = seed_mode
        self.copy = bool(copy)
        self._family = family
        self._engine = family.engine
        self._seeder = _TreeSeeder(self._engine, E, getattr(family, "seed_env", None),
                                   int(getattr(family, "seed_bound", None) or MAX_SEED))
        self.member_batch = P if member_batch is None else member_batch
        self.is_async = self.member_batch < P
        self.episode_window = episode_window
        self._engine.set_groups(E, episode_window)
        self.vec = VectorEnv(family, env_id=env_id, seed=None, autoreset_mode=autoreset_mode,
                             copy=False, batch_size=E if self.is_async else None,
                             seeder=self._seeder)
        self.pool = self.vec.pool
        if self.is_async:
            self.vec.use_members(E)
        self._last_members = None            # members of the last recv (async step default)
        self._eval = None                    # the evaluation pool, made by evaluate()
        self.num_threads = self.vec.num_threads
        self.autoreset_mode = self.vec.autoreset_mode
        self.metadata = dict(self.vec.metadata)
        self.single_observation_space = self.vec.single_observation_space
        self.single_action_space = self.vec.single_action_space
        self.member_observation_space = batch_space(self.single_observation_space, E)
        self.member_action_space = batch_space(self.single_action_space, E)
        self.observation_space = batch_space(self.member_observation_space, P)
        self.action_space = batch_space(self.member_action_space, P)
        self._seed_sequences(seed)           # validates every seed form up front
        self._default_seed = seed
        self._has_reset = False
        self._closed = False
        # task kwargs: the pool's base kwargs, and each member's own overrides
        self._base_kwargs = dict(base_kwargs)
        self._default_max_steps = max_episode_steps
        self._member_kwargs = [dict(m) for m in member_kwargs]
        self._info_kwargs: dict[str, np.ndarray] = {}
        for k, m in enumerate(self._member_kwargs):
            if "max_episode_steps" in m:
                family.set_max_episode_steps(self._ids(k), m["max_episode_steps"])
            self._sync_env_kw(k)
        self.pool.settings_owner = "PopulationEnv.set_member_kwargs"
        self._refresh_info_kwargs()
        self._make_args = None if make_args is None else dict(make_args)

    def _sync_env_kw(self, k):
        """The flat pool's record of member k's envs' complete kwargs (vec.get_attr)."""
        own = {n: v for n, v in self._member_kwargs[k].items() if n != "max_episode_steps"}
        full = self._family.merged_kwargs({**self._base_kwargs, **own})
        self.pool.record_kwargs(self._ids(k), full)

    # ------------------------------------------------------------------ layout helpers
    def member_slice(self, k: int) -> slice:
        """Rows of member k in the flat pool: ``slice(k·E, (k+1)·E)``."""
        k = self._check_member(k)
        E = self.envs_per_member
        return slice(k * E, (k + 1) * E)

    def _ids(self, k):
        E = self.envs_per_member
        return np.arange(k * E, (k + 1) * E, dtype=np.int64)

    def _check_member(self, k):
        return check_int("member", k, 0, self.population_size)

    def _members_mask(self, members):
        P = self.population_size
        if members is None:
            return np.ones(P, np.bool_)
        if is_int(members):
            mask = np.zeros(P, np.bool_)
            mask[self._check_member(members)] = True
            return mask
        m = np.asarray(members)
        if m.dtype == np.bool_:
            if m.shape != (P,):
                raise ValueError(f"a member mask must have shape ({P},), got {m.shape}")
            mask = m.copy()
        else:
            if m.ndim != 1 or m.dtype.kind not in "iu":
                raise TypeError("members must be an int, a sequence of member ids or a "
                                f"({P},) bool mask")
            mask = np.zeros(P, np.bool_)
            for k in m.tolist():
                mask[self._check_member(k)] = True
        if not mask.any():
            raise ValueError("members must name at least one member")
        return mask

    def _pe(self, a):
        """(N, ...) -> (P, E, ...) view (each array of a Tuple or Dict observation); fresh
        copy first when copy=True."""
        if not isinstance(a, np.ndarray):
            return map_obs(a, self._pe, self._text_pe)
        if self.copy:
            a = a.copy()
        return a.reshape((self.population_size, self.envs_per_member) + a.shape[1:])

    def _text_pe(self, t, members=None):
        """A text leaf (a tuple of str, one per env, MiniGrid's mission) as a tuple of one
        tuple per member (of E str); a str (one for every env) passes unchanged."""
        if isinstance(t, str):
            return t
        E = self.envs_per_member
        M = self.population_size if members is None else members
        return tuple(t[m * E:(m + 1) * E] for m in range(M))

    def _info_pe(self, info, members=None):
        """Info arrays of every member (or of `members`, in that order) as (M, E, ...)."""
        out: dict[str, Any] = {}
        E = self.envs_per_member
        M = self.population_size if members is None else len(members)
        for key, val in info.items():
            if isinstance(val, dict):
                out[key] = self._info_pe(val, members)
            elif isinstance(val, np.ndarray) and val.ndim >= 1 and val.shape[0] == M * E:
                out[key] = val.reshape((M, E) + val.shape[1:])
            else:
                out[key] = val
        for key, val in self._info_kwargs.items():
            out[key] = val if members is None else val[members]
            out["_" + key] = self._info_true if members is None else self._info_true[members]
        return out

    def _check_open(self):
        if self._closed:
            raise ClosedEnvError(f"cypool: this {self.env_id} population is closed")
        self.vec.check_open()       # inherited through os.fork(): names the parent process

    def _check_idle(self, k):
        if self.pool.in_flight[self.member_slice(k)].any():
            raise ValueError(f"cypool: member {k} is in flight (sent, not yet received); "
                             "recv() it first")

    # ------------------------------------------------------------------ seeding
    def _check_root(self, seed):
        s = check_seed(seed)
        if self.seed_mode == "parity":       # env i gets seed + i: each in the family's range
            parse_seeds(s, self.num_envs, self.pool.seed_bound)
        return s

    def _seed_sequences(self, seed):
        """A (P, E) object array of seeds: an int (seeds as gymnasium's env seeded with it),
        a SeedSequence (a tree stream) or None (keep the env's stream)."""
        P, E = self.population_size, self.envs_per_member
        out = np.empty((P, E), dtype=object)
        if seed is None:
            return out
        if is_int(seed):
            root = self._check_root(seed)
            for k in range(P):
                for j in range(E):
                    if self.seed_mode == "tree":
                        out[k, j] = np.random.SeedSequence(root, spawn_key=(k, j))
                    else:
                        out[k, j] = root + k * E + j
            return out
        if not isinstance(seed, (list, tuple, np.ndarray)):
            raise TypeError("seed must be an int, a list of population_size member seeds, a "
                            f"(population_size, envs_per_member) array of env seeds or None, "
                            f"got {type(seed).__name__}")
        if len(seed) != P:
            raise ValueError(f"a seed list must have one entry per member ({P}), got "
                             f"{len(seed)}")
        rows = [seed[k] for k in range(P)]
        if all(isinstance(r, (list, tuple, np.ndarray)) for r in rows):
            # per-env seeds: env (k, j) <- SeedSequence(seed[k][j]), as gymnasium's seed lists
            for k, r in enumerate(rows):
                if len(r) != E:
                    raise ValueError(f"seed[{k}] must have envs_per_member={E} entries, got "
                                     f"{len(r)}")
                for j, s in enumerate(r):
                    if s is not None:
                        out[k, j] = check_seed(s, f"seed[{k}][{j}]", self.pool.seed_bound)
            return out
        # per-member roots: env (k, j) <- SeedSequence(seed[k], spawn_key=(j,))
        for k, s in enumerate(rows):
            if s is None:
                continue
            if isinstance(s, (list, tuple, np.ndarray)):
                raise ValueError("seed: mix of per-member seeds and per-env rows")
            s = check_seed(s, f"seed[{k}]")
            for j in range(E):
                out[k, j] = np.random.SeedSequence(s, spawn_key=(j,))
        return out

    # ------------------------------------------------------------------ reset / step
    def reset(self, *, seed=None, members=None, options: dict | None = None):
        """Reset every member (or ``members``) and return ``(obs (P, E, ...), info)``.

        Parameters
        ----------
        seed : int, sequence or None
            ``int``: the tree root (``seed_mode="tree"``: env (k, j) <-
            ``SeedSequence(seed, spawn_key=(k, j))``; ``"parity"``: env i <- ``seed + i``, as
            gymnasium's vector envs). A length-P sequence: one root per member (env (k, j) <-
            ``SeedSequence(seed[k], spawn_key=(j,))``, None keeps that member's streams). A
            (P, E) nested sequence/array: one seed per env (``SeedSequence(seed[k][j])``).
            None continues every env's stream (the first reset uses ``make_population``'s
            seed). Only the envs being reset are reseeded.
        members : int, sequence of ints, (P,) bool array or None
            The members to reset (None: all). The first reset must reset every member.
        options : dict or None
            ``{"reset_mask": (P, E) or (P·E,) bool array}`` resets single envs instead.

        The other members' envs, episodes and statistics are left alone (their rows of the
        returned observation are their current observations). Async mode: resetting every
        member waits for the members in flight and drops their results (as ``make_vec``'s
        async ``reset``); resetting some members while others are in flight raises instead,
        since their results would be lost (``async_reset(members=...)`` queues a reset).
        """
        self._check_open()
        P, E = self.population_size, self.envs_per_member
        mask = np.repeat(self._members_mask(members), E)
        if options is not None:
            if not isinstance(options, dict):
                raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
            unknown = set(options) - {"reset_mask"}
            if unknown:
                raise ValueError(f"unknown reset option(s) {sorted(unknown)}; a population "
                                 "takes only 'reset_mask'")
            if "reset_mask" in options:
                if members is not None:
                    raise ValueError("give either members or options['reset_mask'], not both")
                rm = options["reset_mask"]
                if not isinstance(rm, np.ndarray) or rm.dtype != np.bool_:
                    raise TypeError("options['reset_mask'] must be a numpy bool array")
                if rm.shape not in ((P, E), (P * E,)):
                    raise ValueError(f"options['reset_mask'] must have shape ({P}, {E}) or "
                                     f"({P * E},), got {rm.shape}")
                mask = rm.reshape(-1).copy()
        if not self._has_reset and not mask.all():
            raise ValueError("the first reset must reset every env")
        flying = self.pool.in_flight.reshape(P, E).any(axis=1)
        if self.is_async and flying.any() and not mask.all():
            raise ValueError(f"cypool: member(s) {np.flatnonzero(flying).tolist()} are in "
                             "flight; recv() them before resetting some members (or queue "
                             "the reset with async_reset(members=...))")
        if seed is None and not self._has_reset:
            seed = self._default_seed
        seqs = self._seed_sequences(seed).reshape(-1)
        # members in flight finish (and their results are dropped) before any env gets a new
        # random stream: a worker still stepping an env must not see its generator replaced
        self.vec.drain()
        for i in np.flatnonzero(mask):
            if seqs[i] is not None:
                self._seeder.install(int(i), seqs[i])
        opts = None if mask.all() else {"reset_mask": mask}
        obs, info = self.vec.reset(seed=None, options=opts)
        self._has_reset = True
        return self._pe(obs), self._info_pe(info)

    def reset_member(self, k: int, *, seed=None, clear_stats: bool = True):
        """Reset member k's envs (a new episode each), leaving the other members alone.

        ``seed``: an int is the tree root, so member k's envs get exactly the streams a full
        ``reset(seed=root)`` would give them; None continues their streams. ``clear_stats``
        zeroes member k's finished-episode statistics (``episodes``, ``last_return``,
        ``last_length`` and its ring of recent episodes), which belong to the policy it had
        before (a PBT exploit replaces it); ``env_steps``, the steps the member's envs
        consumed, is kept.

        Returns ``(obs, info)`` of the whole population, like :meth:`reset`.
        """
        k = self._check_member(k)
        if isinstance(seed, (list, tuple, np.ndarray)):
            raise TypeError("reset_member takes an int root seed or None")
        out = self.reset(seed=seed, members=k)
        if clear_stats:
            self.clear_member_statistics(k)
        return out

    def clear_member_statistics(self, k: int):
        """Zero member k's finished-episode statistics: ``episodes``, ``last_return``,
        ``last_length`` and its ring of recent episodes (``env_steps`` is kept)."""
        self._check_open()
        k = self._check_member(k)
        sl = self.member_slice(k)
        e = self._engine
        for arr in (e.episodes, e.last_return, e.last_length):
            arr[sl] = 0
        e.ring_return[k] = 0
        e.ring_length[k] = 0
        e.group_episodes[k] = 0

    def _flat_actions(self, actions):
        a = np.asarray(actions)
        P, E = self.population_size, self.envs_per_member
        if a.ndim >= 2 and a.shape[:2] == (P, E):
            return a.reshape((P * E,) + a.shape[2:])
        return a

    def step(self, actions, members=None):
        """Step every env. ``actions`` is ``(P, E, *act)`` (or flat ``(P·E, *act)``); returns
        ``(obs, reward, terminated, truncated, info)`` shaped ``(P, E, ...)``.

        Async mode: ``send(actions, members)`` then ``recv()`` (``members`` defaults to every
        member when none is in flight, else to the members of the last ``recv``)."""
        self._check_open()
        if self.is_async:
            self.send(actions, members)
            return self.recv()
        if members is not None:
            raise ValueError("members: a sync population steps every member; make it with "
                             "make_population(..., member_batch=B) to step members apart")
        obs, rew, term, trunc, info = self.vec.step(self._flat_actions(actions))
        return (self._pe(obs), self._pe(rew), self._pe(term), self._pe(trunc),
                self._info_pe(info))

    # ------------------------------------------------------------------ async (whole members)
    def _check_async(self, what):
        self._check_open()
        if not self.is_async:
            raise ValueError(f"cypool: {what}() needs an async population "
                             "(make_population(..., member_batch=B) with B < population_size)")

    def _member_ids(self, members, count):
        """Validated member ids; `count` members' worth of actions were given."""
        if members is None:
            P = self.population_size
            if count == P and not self.pool.in_flight.any():
                return np.arange(P, dtype=np.int64)
            if self._last_members is not None and count == len(self._last_members):
                return self._last_members
            raise ValueError("cypool: send(actions) needs members (or actions for the members "
                             "of the last recv(), or for every member when none is in flight)")
        if is_int(members):
            return np.array([self._check_member(members)], np.int64)
        m = np.asarray(members)
        if m.ndim != 1 or m.size == 0 or m.dtype.kind not in "iu":
            raise TypeError("members must be an int or a non-empty 1-D sequence of member ids")
        for k in m.tolist():
            self._check_member(k)
        if np.unique(m).size != m.size:
            raise ValueError(f"members must not repeat, got {m.tolist()}")
        return m.astype(np.int64)

    def send(self, actions, members=None):
        """Hand ``actions`` (``(M, E, *act)``: one block per member of ``members``, in that
        order) to the worker threads and return at once. ``members``: an int or a sequence
        of member ids (default: see :meth:`step`); each must be idle (its last result
        received)."""
        self._check_async("send")
        try:
            a = np.asarray(actions)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"actions must be an (M, E, ...) array: {exc}") from None
        E = self.envs_per_member
        if a.ndim < 2 or a.shape[1] != E:
            raise ValueError(f"actions must have shape (M, {E}, ...) with one block per "
                             f"member, got {a.shape}")
        m = self._member_ids(members, a.shape[0])
        if a.shape[0] != len(m):
            raise ValueError(f"actions has {a.shape[0]} member blocks for {len(m)} members")
        self.vec.send_members(a.reshape((len(m) * E,) + a.shape[2:]), m)

    def recv(self, timeout: float | None = None):
        """The first ``member_batch`` members to finish: ``(obs, reward, terminated, truncated,
        info)`` shaped ``(member_batch, E, ...)``, ``info["member_id"]`` naming them.

        With ``member_batch=1`` and ``copy=False`` the arrays are views of the member's rows
        of the pool's buffers (no copy), valid until that member is sent again; otherwise
        they are fresh arrays. Raises instead of waiting when too few members are in flight;
        TimeoutError after ``timeout`` seconds; Ctrl-C interrupts the wait."""
        self._check_async("recv")
        members, out = self.vec.recv_members(self.member_batch, timeout)
        self._last_members = members
        B, E = len(members), self.envs_per_member
        arrays = [map_obs(x, lambda a: (a.copy() if self.copy else a).reshape(
            (B, E) + a.shape[1:]), lambda t: self._text_pe(t, B)) for x in out[:4]]
        info = self._info_pe(out[4], members)
        info["member_id"] = members.copy()
        return (*arrays, info)

    def async_reset(self, *, seed=None, members=None):
        """Queue a reset of every member (or of ``members``, each idle; seeds as
        :meth:`reset`, applied to those members' envs only); collect the observations with
        :meth:`recv`. A PBT exploit in async mode: ``copy_member(src, dst, reset=False)``,
        ``clear_member_statistics(dst)``, then ``async_reset(members=[dst])``."""
        self._check_async("async_reset")
        P, E = self.population_size, self.envs_per_member
        if members is None:
            if self.pool.in_flight.any():
                raise ValueError("cypool: async_reset() while members are in flight; recv() "
                                 "them first")
            m = np.arange(P, dtype=np.int64)
        else:
            if not self._has_reset:
                raise ValueError("the first reset must reset every member")
            m = self._member_ids(members, 0)
        if seed is None and not self._has_reset:
            seed = self._default_seed
        seqs = self._seed_sequences(seed)
        self.pool.check_members_idle(m)   # before any seed changes under a member in flight
        for k in m.tolist():
            for j in range(E):
                if seqs[k, j] is not None:
                    self._seeder.install(k * E + j, seqs[k, j])
        self.vec.send_members(None, m, reset=True)
        self._has_reset = True

    # ------------------------------------------------------------------ per-member kwargs
    def member_kwargs(self, k: int) -> dict:
        """Member k's settings, complete: the task's defaults, updated with the pool's kwargs,
        then with the member's own; ``max_episode_steps`` included."""
        self._check_open()
        k = self._check_member(k)
        own = dict(self._member_kwargs[k])
        limit = own.pop("max_episode_steps", self._default_max_steps)
        out = self._family.merged_kwargs({**self._base_kwargs, **own})
        out["max_episode_steps"] = limit
        return out

    def set_member_kwargs(self, k: int, **kwargs):
        """Change member k's settings at run time: task kwargs (reward weights,
        ``reset_noise_scale``, ``frame_skip``, ``repeat_action_probability``, ...) and
        ``max_episode_steps``. Kwargs that change the model, the observation or the action
        space are refused; everything is validated before anything changes.

        The kernels read an env's settings at every step and reset, so the new values apply
        from member k's next step (``frame_skip``, reward weights, termination ranges, the
        time limit) or next reset (reset noise, ALE's sticky actions, mode and difficulty);
        the episodes in progress are not restarted. Call :meth:`reset_member` to start member
        k afresh. Other members are untouched. In async mode member k must not be in flight.
        """
        self._check_open()
        k = self._check_member(k)
        if kwargs:
            self._assign(k, {**self._member_kwargs[k], **kwargs})

    def _assign(self, k, own):
        """Make `own` member k's override dict: validated first, then applied."""
        own = dict(own)
        task_kw = dict(own)
        limit = task_kw.pop("max_episode_steps", self._default_max_steps)
        limit = None if limit is None else check_limit(limit)   # None: the family's own
        self._check_idle(k)
        ids = self._ids(k)
        self._family.configure_envs(ids, {**self._base_kwargs, **task_kw})
        self._family.set_max_episode_steps(ids, limit)
        self._member_kwargs[k] = own
        self._sync_env_kw(k)
        self._refresh_info_kwargs()

    def copy_member(self, src: int, dst: int, *, reset: bool = True, seed=None):
        """PBT exploit on the env side: member dst takes member src's settings, then (by
        default) restarts with :meth:`reset_member` (``seed`` as there). Weights, optimizer
        state and normalization statistics are the learner's to copy."""
        self._check_open()
        src, dst = self._check_member(src), self._check_member(dst)
        self._assign(dst, self._member_kwargs[src])
        if reset:
            return self.reset_member(dst, seed=seed)
        return None

    def _refresh_info_kwargs(self):
        """info[name]: (P, E) read-only arrays of every setting some member overrides."""
        P, E = self.population_size, self.envs_per_member
        names = sorted({n for m in self._member_kwargs for n in m})
        clash = set(names) & {key for key, *_ in self._family.info_layout}
        if clash:
            raise ValueError(f"member kwargs {sorted(clash)} clash with info keys")
        out = {}
        for name in names:
            vals = [self.member_kwargs(k)[name] for k in range(P)]
            try:
                col = np.asarray(vals)
            except ValueError:
                continue
            if col.dtype.kind not in "biuf" or col.shape[0] != P:
                continue           # non-numeric kwargs (paths, camera dicts) stay out of info
            arr = np.repeat(col[:, None], E, axis=1)      # (P, E) or (P, E, width)
            arr.flags.writeable = False
            out[name] = arr
        self._info_kwargs = out
        t = np.ones((P, E), np.bool_)
        t.flags.writeable = False
        self._info_true = t

    # ------------------------------------------------------------------ statistics
    def episode_statistics(self, copy: bool = False) -> dict[str, np.ndarray]:
        """Per-env statistics as ``(P, E)`` arrays, written by the native kernel: the running
        ``return`` and ``length``, the last finished episode's ``last_return`` and
        ``last_length``, finished ``episodes`` and ``env_steps``. ``copy=False`` (default)
        gives views of the pool's arrays, updated in place by every step."""
        self._check_open()
        stats = self.vec.episode_statistics(copy=False)
        shape = (self.population_size, self.envs_per_member)
        return {k: (v.copy() if copy else v).reshape(shape) for k, v in stats.items()}

    def member_statistics(self) -> dict[str, np.ndarray]:
        """Per-member aggregates, ``(P,)`` arrays: ``episodes`` (finished episodes) and
        ``env_steps`` (sums over the member's envs); ``recent_return`` and
        ``recent_length``, means over the member's ring of its last ``episode_window``
        episodes (the usual PBT fitness); ``mean_last_return`` and ``mean_last_length``,
        means of each env's last finished episode. Means are NaN for a member with none."""
        s = self.episode_statistics(copy=False)
        finished = s["episodes"] > 0
        n_fin = finished.sum(axis=1)
        rec = self.recent_episodes()
        count = rec["count"]
        with np.errstate(invalid="ignore", divide="ignore"):
            mret = np.where(finished, s["last_return"], 0.0).sum(axis=1) / n_fin
            mlen = np.where(finished, s["last_length"], 0).sum(axis=1) / n_fin
            rret = np.nansum(rec["return"], axis=1) / count
            rlen = rec["length"].sum(axis=1) / count
        return {"episodes": s["episodes"].sum(axis=1), "env_steps": s["env_steps"].sum(axis=1),
                "recent_return": np.where(count > 0, rret, np.nan),
                "recent_length": np.where(count > 0, rlen, np.nan),
                "mean_last_return": np.where(n_fin > 0, mret, np.nan),
                "mean_last_length": np.where(n_fin > 0, mlen, np.nan)}

    def recent_episodes(self) -> dict[str, np.ndarray]:
        """Each member's last ``episode_window`` (K) finished episodes, oldest first:
        ``return`` ``(P, K)`` float64 (NaN where the member has finished fewer than K),
        ``length`` ``(P, K)`` int64 (0 there) and ``count`` ``(P,)``, how many are filled.
        Computed from the native ring (:attr:`episode_ring`) with array ops, no Python loop
        over members."""
        self._check_open()
        e = self._engine
        K = self.episode_window
        P = self.population_size
        if K == 0:
            return {"return": np.zeros((P, 0)), "length": np.zeros((P, 0), np.int64),
                    "count": np.zeros(P, np.int64)}
        n = e.group_episodes.copy()
        count = np.minimum(n, K)
        pos = np.arange(K)
        slot = (n[:, None] - K + pos) % K          # oldest first
        valid = pos >= K - count[:, None]
        rows = np.arange(P)[:, None]
        ret = np.where(valid, e.ring_return[rows, slot], np.nan)
        length = np.where(valid, e.ring_length[rows, slot], 0)
        return {"return": ret, "length": length, "count": count}

    @property
    def episode_ring(self) -> dict[str, np.ndarray]:
        """The native ring itself, zero-copy: ``return``/``length`` ``(P, K)`` in ring order
        (member k's n-th episode, counting from 0, is in column ``n % K``) and ``episodes``
        ``(P,)``, the finished episodes per member. In async mode they change while members
        are in flight. The views are read-only: a write would change the members' fitness."""
        self._check_open()
        e = self._engine
        return {"return": read_only(e.ring_return), "length": read_only(e.ring_length),
                "episodes": read_only(e.group_episodes)}

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, policy, episodes: int = 10, *, seed: int = 0) -> dict[str, np.ndarray]:
        """Play exactly ``episodes`` (K) complete episodes per member and return their
        ``return`` and ``length``, ``(P, K)`` each, in episode order.

        ``policy(obs)`` maps a ``(P, E, *obs)`` batch to ``(P, E, *act)`` actions
        (deterministic actions are the policy's business). The episodes run on a separate
        evaluation pool (same task, the members' current settings, made on first use and
        kept), so training envs, episodes and statistics are untouched. Env j of every member
        plays episodes j, j + E, j + 2E, ... from the stream ``SeedSequence(seed,
        spawn_key=(j,))``: every member starts from the same states, and a call with the
        same seed and policy gives the same results. Envs with no episode left stop stepping
        (their rows of ``obs`` go stale, their actions are ignored).
        """
        self._check_open()
        K = _check_count(episodes, "episodes")
        seed = check_seed(seed)
        if not callable(policy):
            raise TypeError(f"policy must be callable, got {type(policy).__name__}")
        ev = self._eval_pool()
        P, E = self.population_size, self.envs_per_member
        obs, _ = ev.reset(seed=[seed] * P)
        obs = obs.copy()
        flat_obs = obs.reshape((P * E,) + obs.shape[2:])
        quota = np.array([len(range(j, K, E)) for j in range(E)], np.int64)
        played = np.zeros((P, E), np.int64)
        active = np.broadcast_to(quota > 0, (P, E)).copy()
        returns = np.full((P, K), np.nan)
        lengths = np.zeros((P, K), np.int64)
        stats = ev.vec.episode_statistics(copy=False)      # read-only views, kept current
        want = (P, E) + self.single_action_space.shape
        while active.any():
            a = np.asarray(policy(obs))
            if a.shape != want:
                raise ValueError(f"policy must return actions of shape {want}, got {a.shape}")
            ids = np.flatnonzero(active.reshape(-1))
            o, _, term, trunc, _ = ev.vec.step(a.reshape((P * E,) + a.shape[2:])[ids],
                                               env_ids=ids)
            flat_obs[ids] = o
            ended = ids[term | trunc]
            if ended.size:
                k, j = np.divmod(ended, E)
                col = j + played[k, j] * E
                returns[k, col] = stats["last_return"][ended]
                lengths[k, col] = stats["last_length"][ended]
                played[k, j] += 1
                active[k, j] = played[k, j] < quota[j]
        return {"return": returns, "length": lengths}

    def _eval_pool(self):
        """The evaluation pool, its members' settings brought up to date."""
        P, E = self.population_size, self.envs_per_member
        if self._eval is None:
            self._eval = make_population(
                self.env_id, P, E, member_kwargs=self._member_kwargs,
                num_threads=self.num_threads, autoreset_mode="same_step",
                max_episode_steps=self._default_max_steps, episode_window=0,
                **self._base_kwargs)
        self._eval._follow(self._member_kwargs)
        return self._eval

    def _follow(self, member_kwargs):
        """Give each member the override dict ``member_kwargs[k]`` where its own differs (an
        evaluation pool following its population's members)."""
        for k, own in enumerate(member_kwargs):
            if self._member_kwargs[k] != own:
                self._assign(k, own)

    # ------------------------------------------------------------------ lifecycle
    def close(self):
        if not self._closed:
            if self._eval is not None:
                self._eval.close()
                self._eval = None
            self.vec.close()
            self._closed = True
            self._engine = None
            self._family = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # copy.copy, copy.deepcopy and pickle give an independent population in the same state
    # (every env's state, members' settings and rings; members in flight are refused)
    _make_args = None

    def __reduce_ex__(self, protocol):
        self._check_open()
        if self._make_args is None:
            raise TypeError("cypool: only populations made by cypool.make_population can be "
                            "pickled or copied")
        e = self._engine
        snap = {"make": dict(self._make_args),
                "member_kwargs": [dict(m) for m in self._member_kwargs],
                "state": self.vec.get_state() if self._has_reset else None,
                "rings": (e.ring_return.copy(), e.ring_length.copy(), e.group_episodes.copy()),
                "seeder": (self._seeder.installed.copy(), self._seeder.entropy_root),
                "has_reset": self._has_reset}
        return (_restore_population, (snap,))

    def _load_snapshot(self, snap):
        """Unpickling, on a population just made from ``snap["make"]`` with its members'
        current settings: every env's state, the members' episode rings and the seeding
        tree's root, each checked before use."""
        e = self._engine
        check_snapshot(snap, (), e.num_envs)
        seeder = snap["seeder"]
        installed = np.asarray(seeder[0]) if isinstance(seeder, (list, tuple)) and \
            len(seeder) == 2 else None
        if installed is None or installed.shape != (e.num_envs,) or installed.dtype != np.bool_:
            raise ValueError(f"cypool: the snapshot's seeder flags must be {e.num_envs} bools")
        if snap["state"] is not None:
            self.vec.set_state(snap["state"])
        # an env marked seeded keeps the stream it has at its next reset: it must have one
        unseeded = [i for i in np.flatnonzero(installed) if e.generator(int(i)) is None]
        if unseeded:
            raise ValueError(f"cypool: inconsistent snapshot: the seeder marks env(s) "
                             f"{unseeded} seeded but they have no random stream")
        e.ring_return[...] = snap["rings"][0]
        e.ring_length[...] = snap["rings"][1]
        e.group_episodes[...] = snap["rings"][2]
        self._seeder.installed[:] = installed
        self._seeder.entropy_root = snap["seeder"][1]
        self._has_reset = snap["has_reset"]

    def __deepcopy__(self, memo):
        import copy as _copy

        return _restore_population(_copy.deepcopy(self.__reduce_ex__(4)[1][0], memo))

    def __copy__(self):
        return self.__deepcopy__({})

    def __repr__(self):
        state = "closed" if self._closed else \
            f"population_size={self.population_size}, envs_per_member={self.envs_per_member}"
        return f"cypool.PopulationEnv({self.env_id}, {state}, num_threads={self.num_threads})"


def _member_kwargs_list(member_kwargs, P):
    if member_kwargs is None:
        return [{} for _ in range(P)]
    if isinstance(member_kwargs, dict) or not isinstance(member_kwargs, Sequence):
        raise TypeError("member_kwargs must be a list of population_size dicts (or None)")
    if len(member_kwargs) != P:
        raise ValueError(f"member_kwargs must have population_size={P} entries, got "
                         f"{len(member_kwargs)}")
    out = []
    for k, m in enumerate(member_kwargs):
        if m is None:
            m = {}
        if not isinstance(m, dict):
            raise TypeError(f"member_kwargs[{k}] must be a dict or None, got "
                            f"{type(m).__name__}")
        bad = [key for key in m if not isinstance(key, str)]
        if bad:
            raise TypeError(f"member_kwargs[{k}] must map kwarg names (str) to values, got the "
                            f"key(s) {bad!r}")
        out.append(dict(m))
    return out


def make_population(env_id: str, population_size: int = 1, envs_per_member: int = 1, *,
                    member_kwargs: list[dict] | None = None, seed=None, seed_mode: str = "tree",
                    num_threads: int | None = None, autoreset_mode="next_step",
                    copy: bool = False, max_episode_steps: int | None = None,
                    member_batch: int | None = None, episode_window: int = 100,
                    **kwargs) -> PopulationEnv:
    """Make one pool of ``population_size · envs_per_member`` envs laid out as a population.

    Parameters
    ----------
    env_id : str
        A task of :func:`cypool.list_envs`: a MuJoCo task (``"Hopper-v5"``) or an Atari game
        (``"Pong-v5"``).
    population_size : int
        P, the number of members.
    envs_per_member : int
        E, the envs each member steps.
    member_kwargs : list of P dicts or None
        Member k's settings, on top of ``**kwargs``: task kwargs (MuJoCo: reward weights,
        ``reset_noise_scale``, ``frame_skip``, health ranges...; Atari: ``frame_skip``,
        ``repeat_action_probability``, ``noop_max``, ``episodic_life``, ``reward_clip``,
        ``mode``, ``difficulty``...) and ``max_episode_steps``. Settings that change the
        model, the observation or the action space are refused. They are held per env in C
        and reported in info (``info[name]``, ``(P, E)``).
    seed : int, sequence or None
        Seed of the first :meth:`PopulationEnv.reset` without one (see there).
    seed_mode : {"tree", "parity"}
        How an int seed spreads: ``"tree"`` (env (k, j) <- ``SeedSequence(seed,
        spawn_key=(k, j))``, independent of P and of the other members) or ``"parity"``
        (env i <- ``seed + i``, bit-exact with gymnasium's ``make_vec(env_id, P·E)``).
    num_threads : int or None
        OpenMP threads (None: OMP_NUM_THREADS or the usable cores, at most P·E).
    autoreset_mode : str or gymnasium.vector.AutoresetMode
        As :func:`cypool.make_vec`.
    copy : bool
        False (default): the returned ``(P, E, ...)`` arrays are views of the pool's buffers,
        overwritten by the next call. True: fresh arrays.
    max_episode_steps : int or None
        Every member's truncation limit unless its member kwargs say otherwise (None:
        gymnasium's registered limit; Atari: EnvPool's 27,000 steps).
    member_batch : int or None
        Async mode when < P: :meth:`PopulationEnv.recv` returns this many whole members.
        None (or P): sync, every step steps every member.
    episode_window : int
        K, the finished episodes each member's ring keeps (:meth:`PopulationEnv.recent_episodes`).
    **kwargs
        Task kwargs shared by every member, with gymnasium's (MuJoCo) or EnvPool's (Atari)
        names and defaults.

    Returns
    -------
    PopulationEnv
    """
    P = check_int("population_size", population_size, 1)
    E = check_int("envs_per_member", envs_per_member, 1)
    req = request(env_id, P * E, num_threads=num_threads, max_episode_steps=max_episode_steps,
                  autoreset_mode=autoreset_mode, task_kwargs=kwargs)
    mk = _member_kwargs_list(member_kwargs, P)
    env_id, threads, max_episode_steps = req.env_id, req.num_threads, req.max_episode_steps
    if max_episode_steps is not None:        # None: a family without a limit (register_env)
        max_episode_steps = check_limit(max_episode_steps)
    for m in mk:
        if "max_episode_steps" in m:
            m["max_episode_steps"] = check_limit(m["max_episode_steps"])
    if member_batch is not None:
        member_batch = check_int("member_batch", member_batch, 1, P, closed_high=True)
    episode_window = check_int("episode_window", episode_window, 0)
    mode = req.autoreset_mode
    task_kw = [{n: v for n, v in m.items() if n != "max_episode_steps"} for m in mk]
    per_env = [task_kw[k] for k in range(P) for _ in range(E)]
    fam = req.family.make(env_id, P * E, threads, max_episode_steps, kwargs,
                          member_kwargs=per_env)
    make_args = dict(env_id=env_id, population_size=P, envs_per_member=E, seed=seed,
                     seed_mode=seed_mode, num_threads=threads, autoreset_mode=mode, copy=copy,
                     max_episode_steps=max_episode_steps, member_batch=member_batch,
                     episode_window=int(episode_window), kwargs=dict(kwargs))
    return PopulationEnv(fam, env_id=env_id, population_size=P, envs_per_member=E,
                         member_kwargs=mk, base_kwargs=kwargs, seed=seed, seed_mode=seed_mode,
                         autoreset_mode=mode, copy=copy, member_batch=member_batch,
                         episode_window=int(episode_window),
                         max_episode_steps=max_episode_steps, make_args=make_args)


def _restore_population(snap):
    """Unpickling a PopulationEnv: made as the original was, then given the snapshot's state
    (PopulationEnv._load_snapshot)."""
    check_snapshot(snap, ("make", "member_kwargs", "state", "rings", "seeder", "has_reset"))
    make = dict(snap["make"])
    kwargs = make.pop("kwargs")
    pop = make_population(member_kwargs=snap["member_kwargs"], **make, **kwargs)
    try:
        pop._load_snapshot(snap)
    except BaseException:
        pop.close()
        raise
    return pop
