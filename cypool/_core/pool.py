"""Pool: one family's envs as the façades see them.

A Pool owns the engine that runs the envs, the family object that configures them, and the
only per-env records kept in Python: each env's complete task kwargs, its time limit (read
from the engine), whether it owns a random stream, whether it is in flight, and how envs are
grouped into population members. ``cypool.VectorEnv`` holds one as ``env.pool`` (its hot
path keeps direct references to the same engine and arrays); ``PopulationEnv``, unpickling
and ``cypool.envpool`` go through the methods here instead of the façade's internals.

Locks, the closed state and the step policy (autoreset, info dicts) stay the façade's: a
Pool does no locking of its own, so call it with the façade's lock held where the façade
would hold it.
"""
from __future__ import annotations

import numpy as np

from cypool._validate import MAX_SEED, check_limit


class Pool:
    """The envs of one ``family`` (a :class:`cypool.registry.Family`) and their records.

    Attributes
    ----------
    engine, family
        The family's engine and the family object (None once closed).
    num_envs : int
    env_kw : list of dict
        Env i's complete task kwargs (get_attr/set_attr, pickling).
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
    """

    def __init__(self, family, *, seeder=None, env_kwargs=None):
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
        self.seeded = np.zeros(n, np.bool_)
        self.in_flight = np.zeros(n, np.bool_)
        self.flags = self.in_flight.view(np.uint8)
        self.done = engine.done_arr
        self.info_layout = list(family.info_layout)
        self.unit = 1
        self.settings_owner = None

    # ------------------------------------------------------------------ settings
    def kwarg_names(self) -> list:
        return sorted(self.env_kw[0]) if self.env_kw else []

    def configure(self, i: int, kwargs: dict) -> None:
        """Give env i the complete task kwargs ``kwargs`` (in C from its next step or reset)
        and record them."""
        self.family.configure_envs(np.array([i], np.int64), kwargs)
        self.env_kw[i] = dict(kwargs)

    def record_kwargs(self, ids, kwargs: dict) -> None:
        """Record ``kwargs`` as the complete task kwargs of envs ``ids`` (already applied in C
        by the caller)."""
        for i in ids:
            self.env_kw[int(i)] = dict(kwargs)

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

    # ------------------------------------------------------------------ lifecycle
    def forget_team(self) -> None:
        """In an os.fork() child: drop the parent's worker team without touching it."""
        if self.engine is not None:
            self.engine._forget_team()    # the engine's fork-only hook

    def close(self) -> None:
        """Stop the worker threads and drop the engine and the family."""
        if self.engine is not None:
            self.engine.stop_workers()
        self.engine = None
        self.family = None
