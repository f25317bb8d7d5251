"""MaMuJoCo (gymnasium-robotics 1.4.2's ``mamujoco_v1``) as an import swap:
``from cypool.multiagent import mamujoco_v1`` mirrors ``from gymnasium_robotics import
mamujoco_v1``. ``parallel_env(scenario, agent_conf, agent_obsk=1, ...)`` partitions the joints
of cypool's bit-exact gymnasium v5 MuJoCo task among agents; ``vec_env(num_envs, scenario,
agent_conf, ...)`` steps ``num_envs`` of them at once.

The partitions, graph and observation categories are the reference's own (its ``obsk``
module, read once at make: ``pip install "cypool[multiagent]"`` brings gymnasium-robotics).
Each agent's observation is a fixed selection of the env's mjData arrays (qpos, qvel, cinert,
cvel, qfrc_actuator, cfrc_ext, xpos), some elements clipped, or (Reacher) of those arrays
with the sines and cosines of qpos and the differences of body positions, computed by
numpy's float64 ufuncs as the reference's are; the selection is derived from the reference's
``build_obs`` at make and checked against it on random data, so observations that are none
of these are refused rather than approximated, and so is Pusher's agent split, whose order
the reference does not fix (three of its joints share a label, the reference sorts by label,
and equal labels keep the order of a set of objects, which follows their addresses: two
reference envs in one process order agent 0's observation differently).
CoupledHalfCheetah, an env class of the reference's own, runs on the robotics id
``CoupledHalfCheetah-v0`` (a MuJoCo task on the installed package's model). Served: Ant,
HalfCheetah, Hopper, Humanoid, HumanoidStandup, Reacher, Swimmer, Walker2d, InvertedPendulum,
InvertedDoublePendulum, CoupledHalfCheetah, ManySegmentAnt and ManySegmentSwimmer (the
reference's generated models on the Ant/Swimmer v5 tasks), Pusher without a partition
(``agent_conf=None``); not: Pusher's "3p".
"""
from __future__ import annotations

import numpy as np
from gymnasium import spaces

from cypool.multiagent._batch import VecEnv

__all__ = ["parallel_env", "env", "vec_env", "SCENARIOS"]

SCENARIOS = ("Ant", "HalfCheetah", "Hopper", "HumanoidStandup", "Humanoid", "Reacher",
             "Swimmer", "Pusher", "Walker2d", "InvertedPendulum", "InvertedDoublePendulum")
_SEGMENTS = ("ManySegmentAnt", "ManySegmentSwimmer")   # a generated model on a v5 task
_OWN_MODELS = ("CoupledHalfCheetah",)     # an id of its own (the robotics family's)
_COUPLED_ID = "CoupledHalfCheetah-v0"
_FIELDS = ("qpos", "qvel", "cinert", "cvel", "qfrc_actuator", "cfrc_ext", "xpos")
_BODY_FIELDS = ("cinert", "cvel", "cfrc_ext", "xpos")


def _obsk():
    try:
        from cypool._quiet import import_quietly

        obsk = import_quietly("gymnasium_robotics.envs.multiagent_mujoco.obsk")
    except ImportError as exc:
        raise ImportError("cypool.multiagent.mamujoco_v1 reads its partitions from "
                          "gymnasium-robotics: pip install \"cypool[multiagent]\" "
                          f"({exc})") from None
    return obsk


def _local_categories(scenario, agent_obsk):
    """The reference's default categories per observation depth."""
    if agent_obsk is None:
        return [[]]
    if scenario in ("Ant", "ManySegmentAnt"):
        cats = [["qpos", "qvel", "cfrc_ext"], ["qpos"]]
    elif scenario in ("Humanoid", "HumanoidStandup"):
        cats = [["qpos", "qvel", "cinert", "cvel", "qfrc_actuator", "cfrc_ext"], ["qpos"]]
    elif scenario == "CoupledHalfCheetah":
        cats = [["qpos", "qvel", "ten_J", "ten_length", "ten_velocity"], ["qpos"]]
    elif scenario == "Reacher":
        cats = [["qpos", "qvel", "fingertip_dist"], ["qpos"]]
    else:
        cats = [["qpos", "qvel"], ["qpos"]]
    return [cats[min(k, len(cats) - 1)] for k in range(agent_obsk + 1)]


class _Data:
    """A stand-in for mjData holding given arrays (what build_obs reads; ``body(name)``:
    the named body's row of xpos, as mujoco's accessor). ``shapes``: the fields' shapes, in
    the flat vector's order."""

    def __init__(self, flat, shapes, body_ids):
        off = 0
        for f, shape in shapes.items():
            n = int(np.prod(shape))
            setattr(self, f, flat[off:off + n].reshape(shape))
            off += n
        self._ids = body_ids

    def body(self, name):
        return _Body(self.xpos[self._ids[name]])


class _Body:
    __slots__ = ("xpos",)

    def __init__(self, xpos):
        self.xpos = xpos


class _Recipe:
    """One agent's observation as ``clip(data[idx], lo, hi)`` of the env's concatenated
    mjData arrays: derived from the reference's build_obs on marked data, then checked."""

    def __init__(self, build, shapes, body_ids):
        total = sum(int(np.prod(v)) for v in shapes.values())
        j = np.arange(total, dtype=np.float64)
        unit = 2.0 ** -20                  # marks inside every clip range: pass unchanged
        small = build(_Data((j + 1) * unit, shapes, body_ids))
        idx = np.rint(small / unit).astype(np.int64) - 1
        if (small.dtype != np.float64 or (idx < 0).any() or (idx >= total).any()
                or not np.array_equal((idx + 1) * unit, small)):
            raise _NotAGather()
        hi = build(_Data(1e6 + j, shapes, body_ids))
        lo = build(_Data(-1e6 - j, shapes, body_ids))
        self.idx = idx
        self.hi = np.where(hi == 1e6 + idx, np.inf, hi)
        self.lo = np.where(lo == -1e6 - idx, -np.inf, lo)
        self.clipped = bool(np.isfinite(self.hi).any() or np.isfinite(self.lo).any())
        rng = np.random.default_rng(0)
        for scale in (0.5, 3.0, 50.0):
            probe = rng.normal(0.0, scale, total)
            if not np.array_equal(self(probe[None])[0], build(_Data(probe, shapes, body_ids))):
                raise _NotAGather()

    def __call__(self, data):
        g = data[:, self.idx]
        return np.clip(g, self.lo, self.hi) if self.clipped else g


def _derived(data, nq, nbody, xpos_at):
    """The values an observation may take beyond a gather (Reacher's): sin and cos of every
    qpos element, then xpos[a] - xpos[b] of every ordered pair of bodies a != b; float64
    numpy ufuncs on (num_envs, ...) rows, the loops the reference's scalars go through."""
    qpos = data[:, :nq]
    xpos = data[:, xpos_at:xpos_at + 3 * nbody].reshape(len(data), nbody, 3)
    a, b = np.nonzero(~np.eye(nbody, dtype=bool))
    diff = (xpos[:, a] - xpos[:, b]).reshape(len(data), -1)
    return np.concatenate([data, np.sin(qpos), np.cos(qpos), diff], axis=1)


class _DerivedRecipe:
    """One agent's observation as a selection of :func:`_derived`'s values (a gather with
    sines, cosines and body-position differences, no clipping): each of the reference's
    values on random data found once among them, then checked on more random data."""

    def __init__(self, build, shapes, body_ids):
        total = sum(int(np.prod(v)) for v in shapes.values())
        self.nq = int(shapes["qpos"][0])
        self.nbody = int(shapes["xpos"][0])
        names = list(shapes)
        self.xpos_at = sum(int(np.prod(shapes[f])) for f in names[:names.index("xpos")])
        rng = np.random.default_rng(1)
        probe = rng.normal(0.0, 1.0, total)
        small = build(_Data(probe, shapes, body_ids))
        feats = self.features(probe[None])[0]
        if small.dtype != np.float64 or small.ndim != 1:
            raise _NotAGather()
        order = np.argsort(feats, kind="stable")
        lo = np.searchsorted(feats[order], small, "left")
        hi = np.searchsorted(feats[order], small, "right")
        if (hi - lo != 1).any():
            raise _NotAGather()
        self.idx = order[lo]
        for scale in (0.3, 2.0, 40.0):
            probe = rng.normal(0.0, scale, total)
            if not np.array_equal(self(probe[None])[0], build(_Data(probe, shapes, body_ids))):
                raise _NotAGather()

    def features(self, data):
        return _derived(data, self.nq, self.nbody, self.xpos_at)

    def __call__(self, data):
        return self.features(data)[:, self.idx]


class _NotAGather(Exception):
    pass


class PartitionAgents:
    """The agent view of a MuJoCo task split among agents (MaMuJoCo)."""

    def __init__(self, family, *, scenario, agent_conf, agent_obsk, agent_factorization,
                 local_categories, global_categories):
        obsk = _obsk()
        engine = family.engine
        single_act = family.single_action_space
        self.engine = engine
        self.reward_type = int if scenario == "InvertedPendulum" else np.float64
        self.act_dim = int(single_act.shape[0])
        self.agent_obsk = None if agent_conf is None else agent_obsk
        if self.agent_obsk is not None:
            if agent_factorization is None:
                try:
                    parts, edges, globs = obsk.get_parts_and_edges(scenario, agent_conf)
                except Exception as exc:
                    raise ValueError(f"mamujoco_v1: unknown agent_conf {agent_conf!r} for "
                                     f"{scenario} ({exc})") from None
            else:
                parts = agent_factorization["partition"]
                edges = agent_factorization["edges"]
                globs = agent_factorization["globals"]
        else:
            parts = [tuple(obsk.Node("dummy_node", None, None, i)
                           for i in range(self.act_dim))]
            edges, globs = [], []
        self.partitions = [[int(node.act_ids) for node in part] for part in parts]
        flat = sorted(a for p in self.partitions for a in p)
        if flat != list(range(self.act_dim)):
            raise ValueError(f"mamujoco_v1: the partition must give each of the {scenario} "
                             f"task's {self.act_dim} actions to exactly one agent, got "
                             f"{self.partitions}")
        self.possible_agents = [f"agent_{k}" for k in range(len(parts))]
        cats = local_categories if local_categories is not None else \
            _local_categories(scenario, self.agent_obsk)
        gcats = tuple(global_categories) if global_categories is not None else \
            ("qpos", "qvel")
        self.sizes = engine.data_sizes()
        nbody = self.sizes["cvel"] // 6
        shapes = {f: (nbody, self.sizes[f] // nbody) if f in _BODY_FIELDS
                  else (self.sizes[f],) for f in _FIELDS}
        # CoupledHalfCheetah: the tendon arrays, copied from the task's observation
        self.tendon_map = None
        if scenario == "CoupledHalfCheetah":
            # (column after the mjData arrays, column of the task's observation): ten_J's
            # row 0 at dofs 0, 1, 9, 10, ten_length, ten_velocity (the observation's last 6)
            nv = self.sizes["qvel"]
            shapes.update(ten_J=(1, nv), ten_length=(1,), ten_velocity=(1,))
            self.tendon_map = list(zip((0, 1, 9, 10, nv, nv + 1), range(34, 40)))
        model = getattr(getattr(family, "state", None), "model", None)   # mujoco.MjModel
        body_ids = {} if model is None else {model.body(k).name: k for k in range(nbody)}
        self.recipes = None
        if self.agent_obsk is not None:
            self.recipes = []
            for part in parts:
                k_dict = obsk.get_joints_at_kdist(part, edges, k=self.agent_obsk)
                for nodes in k_dict.values():
                    labels = [node.label for node in nodes]
                    if len(set(labels)) != len(labels):
                        # the reference sorts each depth's nodes by label; equal labels keep
                        # a set's order, which follows the nodes' addresses
                        raise ValueError(
                            f"mamujoco_v1: {scenario} {agent_conf}: the reference orders "
                            f"an agent's observation by joint label, and joints share the "
                            f"label(s) {sorted({x for x in labels if labels.count(x) > 1})}, "
                            "so its order differs from one reference env to the next (it "
                            "follows the objects' addresses): no exact order to serve")

                def build(data, k_dict=k_dict):
                    return obsk.build_obs(data, k_dict, cats, globs, gcats)
                try:
                    try:
                        recipe = _Recipe(build, shapes, body_ids)
                    except _NotAGather:
                        recipe = _DerivedRecipe(build, shapes, body_ids)
                    self.recipes.append(recipe)
                except _NotAGather:
                    raise ValueError(
                        f"mamujoco_v1: {scenario}'s observations (categories {cats}, "
                        f"global {list(gcats)}) are not a selection of mjData arrays (with "
                        "sines and cosines of qpos and body-position differences) that cypool "
                        "reproduces exactly: not served") from None
                except (AttributeError, TypeError, KeyError, IndexError) as exc:
                    raise ValueError(
                        f"mamujoco_v1: {scenario}'s observation categories {cats} read "
                        f"more than the mjData arrays cypool copies ({exc}): not "
                        "served") from None
        obs_dtype = family.single_observation_space.dtype
        low, high = single_act.low[0], single_act.high[0]
        self.action_spaces = {
            a: spaces.Box(low=low, high=high, shape=(len(p),), dtype=np.float32)
            for a, p in zip(self.possible_agents, self.partitions)}
        if self.recipes is None:
            dims = [int(family.single_observation_space.shape[0])]
        else:
            dims = [r.idx.size for r in self.recipes]
        self.observation_spaces = {
            a: spaces.Box(low=-np.inf, high=np.inf, shape=(d,), dtype=obs_dtype)
            for a, d in zip(self.possible_agents, dims)}
        if self.tendon_map is not None and self.recipes is not None:
            n = sum(self.sizes.values())
            known = list(range(n)) + [n + dst for dst, _ in self.tendon_map]
            for r in self.recipes:
                if not np.isin(r.idx, known).all():
                    raise ValueError(f"mamujoco_v1: {scenario}'s observations (categories "
                                     f"{cats}) read tendon values beyond those of the task's "
                                     f"observation: not served")
        self.buf = np.full((engine.num_envs, sum(int(np.prod(v)) for v in shapes.values())),
                           np.nan)

    def load_actions(self, pool, actions):
        if not isinstance(actions, dict):
            raise TypeError(f"actions must be a dict keyed by agent, got "
                            f"{type(actions).__name__}")
        missing = [a for a in self.possible_agents if a not in actions]
        unknown = [a for a in actions if a not in self.action_spaces]
        if missing or unknown:
            raise ValueError(f"actions must hold one array per agent of "
                             f"{self.possible_agents}: missing {missing}, unknown {unknown}")
        n = pool.num_envs
        if self.agent_obsk is None:
            # one agent, the task's own action: the reference passes it on as given (a
            # float32 action keeps its dtype, which the task's costs are computed in)
            x = np.asarray(actions[self.possible_agents[0]])
            if x.dtype.kind == "f" and not np.isfinite(x).all():
                raise ValueError(f"actions[{self.possible_agents[0]!r}] holds NaN or inf")
            pool.family.load_actions(x, None)
            return
        glob = np.empty((n, self.act_dim), np.float64)
        for a, part in zip(self.possible_agents, self.partitions):
            x = np.asarray(actions[a])
            if x.shape != (n, len(part)):
                raise ValueError(f"actions[{a!r}] must have shape {(n, len(part))}, got "
                                 f"{x.shape}")
            if not np.issubdtype(x.dtype, np.floating):
                raise TypeError(f"actions[{a!r}] must be floats, got {x.dtype}")
            if not np.isfinite(x).all():
                raise ValueError(f"actions[{a!r}] holds NaN or inf")
            glob[:, part] = x
        pool.family.load_actions(glob, None)

    def observations(self, pool, obs):
        if self.recipes is None:
            return {self.possible_agents[0]: obs}
        n = sum(self.sizes.values())
        if self.tendon_map is None:
            self.engine.read_data(list(_FIELDS), self.buf)
        else:
            data = np.empty((len(self.buf), n))
            self.engine.read_data(list(_FIELDS), data)
            self.buf[:, :n] = data
            for dst, src in self.tendon_map:
                self.buf[:, n + dst] = obs[:, src]
        return {a: r(self.buf) for a, r in zip(self.possible_agents, self.recipes)}

    def rewards(self, n, rew, info):
        return np.repeat(np.asarray(rew, np.float64)[:, None], len(self.possible_agents), 1)

    def terminations(self, n, term, info):
        return np.repeat(term[:, None], len(self.possible_agents), axis=1)

    def infos(self, info):
        return {a: info for a in self.possible_agents}

    # one env (ParallelEnv): every agent's info is the task's info dict, and its reward the
    # task's, a numpy float (InvertedPendulum's: the int 0 or 1)

    def single_infos(self, info, agents):
        one = {k: v[0] for k, v in info.items()
               if not k.startswith("_") and info.get("_" + k, np.ones(1, bool))[0]}
        return {a: one for a in agents}

    def state(self, pool, obs):
        return obs


def _segments_model(scenario, agent_conf):
    """ManySegmentAnt/ManySegmentSwimmer: the reference's generated model of agent_conf's
    segment count ("AxB": A * B segments), written once per content under the temporary
    directory; (the v5 task it runs on, the model's path)."""
    import hashlib
    import os
    import tempfile

    from gymnasium_robotics.envs.multiagent_mujoco import many_segment_ant, many_segment_swimmer

    try:
        a, b = str(agent_conf).split("x")
        n_segs = int(a) * int(b)
    except ValueError:
        raise ValueError(f"mamujoco_v1: unknown agent_conf {agent_conf!r} for {scenario} "
                         "(segments x agents, e.g. '2x3')") from None
    if not 1 <= n_segs <= 64:
        raise ValueError(f"mamujoco_v1: {scenario} takes 1 to 64 segments, got {n_segs}")
    gen = many_segment_ant if scenario == "ManySegmentAnt" else many_segment_swimmer
    folder = os.path.join(tempfile.gettempdir(), f"cypool-mamujoco-{os.getuid()}")
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f"gen-{os.getpid()}.xml")
    gen.gen_asset(n_segs=n_segs, asset_path=tmp)
    with open(tmp, "rb") as f:
        xml = f.read()
    path = os.path.join(folder, f"{scenario}-{hashlib.sha256(xml).hexdigest()[:16]}.xml")
    os.replace(tmp, path)
    return ("Ant" if scenario == "ManySegmentAnt" else "Swimmer"), path


def _agents(scenario, agent_conf, agent_obsk, agent_factorization, local_categories,
            global_categories):
    if scenario not in SCENARIOS + _SEGMENTS + _OWN_MODELS:
        raise ValueError(f"mamujoco_v1: unknown scenario {scenario!r}; served: "
                         f"{SCENARIOS + _SEGMENTS + _OWN_MODELS}")

    def view(family):
        return PartitionAgents(family, scenario=scenario, agent_conf=agent_conf,
                               agent_obsk=agent_obsk, agent_factorization=agent_factorization,
                               local_categories=local_categories,
                               global_categories=global_categories)
    return view


def _task(scenario, agent_conf, kwargs):
    """The v5 task id a scenario runs on, and its kwargs."""
    if scenario in _SEGMENTS:
        base, path = _segments_model(scenario, agent_conf)
        return f"{base}-v5", {**kwargs, "xml_file": path}
    if scenario == "CoupledHalfCheetah":
        if kwargs:
            # the reference builds CoupledHalfCheetahEnv(render_mode) and drops any kwargs
            raise ValueError(f"mamujoco_v1: CoupledHalfCheetah takes no task kwargs (the "
                             f"reference ignores them), got {sorted(kwargs)}")
        return _COUPLED_ID, {}
    return f"{scenario}-v5", kwargs


def vec_env(num_envs: int, scenario: str, agent_conf: str | None, agent_obsk: int | None = 1,
            agent_factorization=None, local_categories=None, global_categories=None,
            num_threads: int | None = None, render_mode=None, **kwargs):
    """``num_envs`` MaMuJoCo envs stepped at once (:class:`cypool.multiagent.VecEnv`); the
    kwargs are the reference's (``kwargs``: the gymnasium v5 task's)."""
    view = _agents(scenario, agent_conf, agent_obsk, agent_factorization, local_categories,
                   global_categories)
    task, kwargs = _task(scenario, agent_conf, kwargs)
    return VecEnv(task, num_envs, num_threads=num_threads, render_mode=render_mode,
                  agents=view, **kwargs)


def parallel_env(scenario: str, agent_conf: str | None, agent_obsk: int | None = 1,
                 agent_factorization=None, local_categories=None, global_categories=None,
                 render_mode=None, gym_env=None, **kwargs):
    """A PettingZoo ParallelEnv equal to ``gymnasium_robotics.mamujoco_v1.parallel_env`` with
    the same arguments (``gym_env``, a custom env, is not served)."""
    from cypool.multiagent._parallel import ParallelEnv

    if gym_env is not None:
        raise ValueError("mamujoco_v1: gym_env (a custom MujocoEnv) is not served; pass "
                         "scenario and agent_conf")
    view = _agents(scenario, agent_conf, agent_obsk, agent_factorization, local_categories,
                   global_categories)
    task, kwargs = _task(scenario, agent_conf, kwargs)
    return ParallelEnv(task, render_mode=render_mode, agents=view, **kwargs)


def env(*args, **kwargs):
    """The AEC form of :func:`parallel_env`, through PettingZoo's parallel_to_aec."""
    from pettingzoo.utils.conversions import parallel_to_aec

    return parallel_to_aec(parallel_env(*args, **kwargs))
