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
* per-member episode statistics, written by the native kernel and read as ``(P, E)`` views;
* member resets (:meth:`PopulationEnv.reset_member`) that leave the other members alone.

MuJoCo tasks only for now; Atari pools do not take per-env kwargs yet.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium.vector.utils import batch_space

from cypool.errors import ClosedEnvError
from cypool.vector import VectorEnv, _check_seed, _MAX_SEED, parse_autoreset_mode

__all__ = ["make_population", "PopulationEnv"]

_SEED_MODES = ("tree", "parity")


def _check_count(x, name):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(x).__name__}")
    if x < 1:
        raise ValueError(f"{name} must be >= 1, got {x}")
    return int(x)


class _TreeSeeder:
    """The family's ``seed_env`` hook: installs the generator the population chose for env i.

    The façade calls ``seed_env(i, None)`` for an env it has never seeded when a reset
    reaches it; the population seeds envs itself (``install``) before calling the façade's
    reset with ``seed=None``, so the hook only fills in envs nobody seeded: they draw from
    the tree under a root taken once from fresh entropy.
    """

    def __init__(self, engine, envs_per_member):
        self.engine = engine
        self.E = envs_per_member
        self.installed = np.zeros(engine.num_envs, np.bool_)
        self.entropy_root = np.random.SeedSequence().entropy

    def install(self, i, seed_seq):
        self.engine.set_generator(i, np.random.PCG64(seed_seq))
        self.installed[i] = True

    def __call__(self, i, seed):
        if seed is not None:   # pop.vec.reset(seed=...) called directly: the façade's seeds
            self.install(i, np.random.SeedSequence(seed))
        elif not self.installed[i]:
            k, j = divmod(i, self.E)
            self.install(i, np.random.SeedSequence(self.entropy_root, spawn_key=(k, j)))


class PopulationEnv:
    """P members of E envs in one cypool pool, with ``(P, E, ...)`` batches.

    Build it with :func:`make_population`. ``step``/``reset`` return ``(P, E, ...)`` arrays:
    with ``copy=False`` (the default) these are views of the pool's own buffers, overwritten
    by the next call; with ``copy=True`` they are fresh arrays. Info arrays are reshaped to
    ``(P, E, ...)`` as well. The flat gymnasium VectorEnv underneath is :attr:`vec`
    (``num_envs = P·E``, row ``k·E + j`` is env j of member k); stepping it directly is
    allowed and keeps the population's statistics and seeds consistent.

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
    """

    def __init__(self, family, *, env_id: str, population_size: int, envs_per_member: int,
                 member_kwargs: list[dict], base_kwargs: dict, seed=None, seed_mode="tree",
                 autoreset_mode="next_step", copy: bool = False):
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
        self._seeder = _TreeSeeder(self._engine, E)
        family.seed_env = self._seeder       # the façade's seeding hook (see VectorEnv)
        self.vec = VectorEnv(family, env_id=env_id, seed=None, autoreset_mode=autoreset_mode,
                             copy=False)
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
        self._member_kwargs = [dict(m) for m in member_kwargs]
        self._task = _MujocoTask(env_id, family, base_kwargs)
        self._info_kwargs: dict[str, np.ndarray] = {}
        self._refresh_info_kwargs()

    # ------------------------------------------------------------------ layout helpers
    def member_slice(self, k: int) -> slice:
        """Rows of member k in the flat pool: ``slice(k·E, (k+1)·E)``."""
        k = self._check_member(k)
        E = self.envs_per_member
        return slice(k * E, (k + 1) * E)

    def _check_member(self, k):
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"member must be an int, got {type(k).__name__}")
        if not 0 <= k < self.population_size:
            raise ValueError(f"member must be in [0, {self.population_size}), got {k}")
        return int(k)

    def _members_mask(self, members):
        P = self.population_size
        if members is None:
            return np.ones(P, np.bool_)
        if isinstance(members, (int, np.integer)) and not isinstance(members, (bool, np.bool_)):
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
        """(N, ...) -> (P, E, ...) view; fresh copy first when copy=True."""
        if self.copy:
            a = a.copy()
        return a.reshape((self.population_size, self.envs_per_member) + a.shape[1:])

    def _info_pe(self, info):
        out: dict[str, Any] = {}
        n = self.num_envs
        shape = (self.population_size, self.envs_per_member)
        for key, val in info.items():
            if isinstance(val, dict):
                out[key] = self._info_pe(val)
            elif isinstance(val, np.ndarray) and val.ndim >= 1 and val.shape[0] == n:
                out[key] = val.reshape(shape + val.shape[1:])
            else:
                out[key] = val
        for key, val in self._info_kwargs.items():
            out[key] = val
            out["_" + key] = self._info_true
        return out

    def _check_open(self):
        if self._closed:
            raise ClosedEnvError(f"cypool: this {self.env_id} population is closed")

    # ------------------------------------------------------------------ seeding
    def _check_root(self, seed):
        s = _check_seed(seed)
        if self.seed_mode == "parity" and s + self.num_envs > _MAX_SEED:
            raise ValueError(f"seed must leave room for num_envs consecutive seeds, got {s}")
        return s

    def _seed_sequences(self, seed):
        """A (P, E) object array of SeedSequence (or None: keep the env's stream)."""
        P, E = self.population_size, self.envs_per_member
        out = np.empty((P, E), dtype=object)
        if seed is None:
            return out
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            root = self._check_root(seed)
            for k in range(P):
                for j in range(E):
                    if self.seed_mode == "tree":
                        out[k, j] = np.random.SeedSequence(root, spawn_key=(k, j))
                    else:
                        out[k, j] = np.random.SeedSequence(root + k * E + j)
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
                        out[k, j] = np.random.SeedSequence(_check_seed(s, f"seed[{k}][{j}]"))
            return out
        # per-member roots: env (k, j) <- SeedSequence(seed[k], spawn_key=(j,))
        for k, s in enumerate(rows):
            if s is None:
                continue
            if isinstance(s, (list, tuple, np.ndarray)):
                raise ValueError("seed: mix of per-member seeds and per-env rows")
            s = _check_seed(s, f"seed[{k}]")
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
        returned observation are their current observations).
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
        if seed is None and not self._has_reset:
            seed = self._default_seed
        seqs = self._seed_sequences(seed).reshape(-1)
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
        ``last_length``), which belong to the policy it had before (a PBT exploit replaces
        it); ``env_steps``, the steps the member's envs consumed, is kept.

        Returns ``(obs, info)`` of the whole population, like :meth:`reset`.
        """
        k = self._check_member(k)
        if isinstance(seed, (list, tuple, np.ndarray)):
            raise TypeError("reset_member takes an int root seed or None")
        out = self.reset(seed=seed, members=k)
        if clear_stats:
            sl = self.member_slice(k)
            e = self._engine
            for arr in (e.episodes, e.last_return, e.last_length):
                arr[sl] = 0
        return out

    def _flat_actions(self, actions):
        a = np.asarray(actions)
        P, E = self.population_size, self.envs_per_member
        if a.ndim >= 2 and a.shape[:2] == (P, E):
            return a.reshape((P * E,) + a.shape[2:])
        return a

    def step(self, actions):
        """Step every env. ``actions`` is ``(P, E, *act)`` (or flat ``(P·E, *act)``); returns
        ``(obs, reward, terminated, truncated, info)`` shaped ``(P, E, ...)``."""
        self._check_open()
        obs, rew, term, trunc, info = self.vec.step(self._flat_actions(actions))
        return (self._pe(obs), self._pe(rew), self._pe(term), self._pe(trunc),
                self._info_pe(info))

    # ------------------------------------------------------------------ per-member kwargs
    def member_kwargs(self, k: int) -> dict:
        """Member k's task kwargs, complete: the task's defaults, updated with the pool's
        kwargs, then with the member's own."""
        self._check_open()
        k = self._check_member(k)
        return self._task.merged({**self._base_kwargs, **self._member_kwargs[k]})

    def set_member_kwargs(self, k: int, **kwargs):
        """Change member k's task kwargs at run time (reward weights, ``reset_noise_scale``,
        ``frame_skip``, ...); kwargs that change the model or the observation size are
        refused.

        The kernels read an env's parameter row at every step and reset, so the new values
        apply from member k's next step (``frame_skip``, reward weights, termination ranges)
        or next reset (reset noise); the episodes in progress are not restarted. Call
        :meth:`reset_member` to start member k afresh under the new settings. Other members
        are untouched.
        """
        self._check_open()
        k = self._check_member(k)
        if not kwargs:
            return
        new = {**self._member_kwargs[k], **kwargs}
        row = self._task.row({**self._base_kwargs, **new})     # validates before any change
        params = self._engine.params.copy()
        params[self.member_slice(k)] = row
        self._engine.set_params(params)
        self._member_kwargs[k] = new
        self._refresh_info_kwargs()

    def copy_member(self, src: int, dst: int, *, reset: bool = True, seed=None):
        """PBT exploit on the env side: member dst takes member src's task kwargs, then (by
        default) restarts with :meth:`reset_member` (``seed`` as there). Weights, optimizer
        state and normalization statistics are the learner's to copy."""
        self._check_open()
        src, dst = self._check_member(src), self._check_member(dst)
        new = dict(self._member_kwargs[src])
        row = self._task.row({**self._base_kwargs, **new})
        params = self._engine.params.copy()
        params[self.member_slice(dst)] = row
        self._engine.set_params(params)
        self._member_kwargs[dst] = new
        self._refresh_info_kwargs()
        if reset:
            return self.reset_member(dst, seed=seed)
        return None

    def _refresh_info_kwargs(self):
        """info[name]: (P, E) read-only arrays of every kwarg some member overrides."""
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
        """Per-member aggregates, ``(P,)`` arrays computed from the per-env views:
        ``episodes`` and ``env_steps`` (sums over the member's envs), ``mean_last_return``
        and ``mean_last_length`` (means over the envs that finished an episode; NaN for a
        member with none)."""
        s = self.episode_statistics(copy=False)
        finished = s["episodes"] > 0
        count = finished.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mret = np.where(finished, s["last_return"], 0.0).sum(axis=1) / count
            mlen = np.where(finished, s["last_length"], 0).sum(axis=1) / count
        return {"episodes": s["episodes"].sum(axis=1), "env_steps": s["env_steps"].sum(axis=1),
                "mean_last_return": np.where(count > 0, mret, np.nan),
                "mean_last_length": np.where(count > 0, mlen, np.nan)}

    # ------------------------------------------------------------------ lifecycle
    def close(self):
        if not self._closed:
            self.vec.close()
            self._closed = True
            self._engine = None
            self._family = None
            self._task = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self._closed else \
            f"population_size={self.population_size}, envs_per_member={self.envs_per_member}"
        return f"cypool.PopulationEnv({self.env_id}, {state}, num_threads={self.num_threads})"


class _MujocoTask:
    """Turns a kwargs dict into the task's parameter row, refusing kwargs that change the
    model or the observation size (the pool shares one mjModel and one obs buffer)."""

    def __init__(self, env_id, family, base_kwargs):
        import mujoco

        from cypool.mujoco.family import merge_kwargs, task_module, xml_path

        self._merge, self._xml_path = merge_kwargs, xml_path
        self.env_id = env_id
        self.mod = task_module(env_id)
        self.path = xml_path(family.kwargs["xml_file"])
        self.model = mujoco.MjModel.from_xml_path(self.path)
        self.obs_dim = family.single_observation_space.shape[0]

    def merged(self, kwargs):
        return self._merge(self.env_id, self.mod, kwargs)

    def row(self, kwargs):
        kw = self._merge(self.env_id, self.mod, kwargs)
        if self._xml_path(kw["xml_file"]) != self.path:
            raise ValueError("xml_file must be the same for every env of a pool")
        row, obs_dim = self.mod.configure(self.model, kw)
        if obs_dim != self.obs_dim:
            raise ValueError("member kwargs must not change the observation size")
        return row


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
        out.append(dict(m))
    return out


def make_population(env_id: str, population_size: int = 1, envs_per_member: int = 1, *,
                    member_kwargs: list[dict] | None = None, seed=None, seed_mode: str = "tree",
                    num_threads: int | None = None, autoreset_mode="next_step",
                    copy: bool = False, max_episode_steps: int | None = None,
                    **kwargs) -> PopulationEnv:
    """Make one pool of ``population_size · envs_per_member`` envs laid out as a population.

    Parameters
    ----------
    env_id : str
        A MuJoCo task of :func:`cypool.list_envs` (e.g. ``"Hopper-v5"``).
    population_size : int
        P, the number of members.
    envs_per_member : int
        E, the envs each member steps.
    member_kwargs : list of P dicts or None
        Member k's task kwargs, on top of ``**kwargs``: reward weights, ``reset_noise_scale``,
        ``frame_skip``, health ranges... Kwargs that change the model (``xml_file``) or the
        observation size are refused. They are held per env in C and reported in info
        (``info[name]``, ``(P, E)``).
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
        Truncation limit (None: gymnasium's registered limit).
    **kwargs
        Task kwargs shared by every member, with gymnasium's names and defaults.

    Returns
    -------
    PopulationEnv
    """
    from cypool import _check_num_envs
    from cypool._threads import resolve_num_threads
    from cypool.registration import default_max_episode_steps, family_of

    if not isinstance(env_id, str):
        raise TypeError(f"env_id must be a str, got {type(env_id).__name__}")
    if env_id.startswith("cypool/"):
        env_id = env_id[len("cypool/"):]
    family = family_of(env_id)
    if family != "mujoco":
        raise NotImplementedError(
            f"cypool: populations support MuJoCo tasks only for now; {env_id!r} is a "
            f"{family} task, whose pools do not take per-env kwargs yet")
    P = _check_count(population_size, "population_size")
    E = _check_count(envs_per_member, "envs_per_member")
    _check_num_envs(P * E)
    mk = _member_kwargs_list(member_kwargs, P)
    threads = resolve_num_threads(num_threads, P * E)
    if max_episode_steps is None:
        max_episode_steps = default_max_episode_steps(env_id)
    elif isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, int) \
            or max_episode_steps < 1:
        raise ValueError(f"max_episode_steps must be an int >= 1 or None, got "
                         f"{max_episode_steps!r}")
    mode = parse_autoreset_mode(autoreset_mode)
    from cypool.mujoco.family import MujocoFamily

    per_env = [mk[k] for k in range(P) for _ in range(E)]
    fam = MujocoFamily(env_id, P * E, threads, max_episode_steps, kwargs,
                       member_kwargs=per_env)
    return PopulationEnv(fam, env_id=env_id, population_size=P, envs_per_member=E,
                         member_kwargs=mk, base_kwargs=kwargs, seed=seed, seed_mode=seed_mode,
                         autoreset_mode=mode, copy=copy)
