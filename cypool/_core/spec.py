"""The family contract as data: a :class:`FamilySpec` says everything the façade needs about
one env id, and :class:`SpecFamily` serves any spec through the one engine.

Design: a family is a pool (an ``Engine`` subclass with two nogil kernels) plus this
declaration: its kwargs (default, kind, scope), its spaces (Box, Discrete, MultiDiscrete and,
for observations, Tuple and Dict of those), its info keys, its time limit and its optional
hooks (kwargs check, spaces from kwargs, render). The public env API
(:func:`cypool.api.register_env`, version 1) builds a spec from its arguments;
:func:`cypool.api.register_spec` takes one directly.

Observations of a Tuple or Dict space are one engine output per leaf: the first leaf is the
output ``"obs"`` (every engine's first output), leaf k > 0 of a Tuple is ``"obs.k"``, leaf
``key`` of a Dict (after the first) is ``"obs.key"``; the façade gives gymnasium's batched
structure (a tuple or dict of arrays).
"""
from __future__ import annotations

import copy
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from cypool.errors import check_known_kwargs
from cypool._validate import check_discrete_actions, check_kwarg, KWARG_KINDS

__all__ = ["Kwarg", "InfoKey", "EnvPoolNames", "FamilySpec", "SpecFamily", "obs_outputs", "obs_structure"]

_LEAVES = (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiDiscrete)


@dataclass(frozen=True)
class Kwarg:
    """One constructor kwarg: its default, its kind (a name of
    ``cypool._validate.KWARG_KINDS``; None: taken from the default's type) and its scope:
    ``"env"`` (may differ per env: populations, ``env_kwargs``, ``set_attr``) or ``"pool"``
    (the same for every env of a pool: it changes the spaces or the pool's tables)."""

    default: Any
    kind: str | None = None
    scope: str = "env"

    def __post_init__(self):
        if self.kind is not None and self.kind not in KWARG_KINDS:
            raise ValueError(f"Kwarg kind must be one of {sorted(KWARG_KINDS)}, got "
                             f"{self.kind!r}")
        if self.scope not in ("env", "pool"):
            raise ValueError(f"Kwarg scope must be 'env' or 'pool', got {self.scope!r}")


@dataclass(frozen=True)
class InfoKey:
    """One info key: ``width`` columns of the engine's float64 info row, reported as ``dtype``
    (after steps when ``on_step``, after resets when ``on_reset``). ``reset_dtype``: the
    dtype when the first env reporting the key in a call was reset, as gymnasium types an
    info array by its first value (None: ``dtype`` always)."""

    name: str
    dtype: Any
    width: int = 1
    on_step: bool = True
    on_reset: bool = True
    reset_dtype: Any = None


class KindDtype:
    """An info dtype that depends on how the first env reporting the key ended its call."""

    __slots__ = ("step", "reset")

    def __init__(self, step, reset):
        self.step, self.reset = np.dtype(step), np.dtype(reset)

    def __repr__(self):
        return f"KindDtype(step={self.step}, reset={self.reset})"


# EnvPool's options every env of it has (envpool/python/env_spec.py), which cypool.envpool
# handles for every family: an EnvPoolNames config may not redefine them
ENVPOOL_COMMON_OPTIONS = ("num_envs", "batch_size", "num_threads", "max_num_players",
                          "thread_affinity_offset", "seed", "env_seed", "gym_reset_return_info",
                          "base_path")


@dataclass(frozen=True)
class EnvPoolNames:
    """How :mod:`cypool.envpool` (EnvPool 1.2.5's API) serves a spec's env under EnvPool's
    names; cypool.envpool reads nothing else about the family.

    ids
        EnvPool's id(s) of this env (aliases included): ``cypool.envpool.make(id)`` builds
        the spec's env, and ``list_all_envs()`` lists them.
    config
        EnvPool's own options of these ids with its defaults, in its order: its
        ``make_spec(id).config`` less the options every EnvPool env has (``num_envs``,
        ``seed``, ...), e.g. ``max_episode_steps`` (the time limit given to the pool),
        ``reward_threshold`` (reported only), ``size``.
    kwargs
        ``{EnvPool option: cypool kwarg name}``, or ``{option: function(value) -> {cypool
        kwarg: value}}`` for a value that maps to other kwargs (raising ValueError for values
        cypool does not run). An option of ``config`` named here by neither (nor
        ``max_episode_steps``/``reward_threshold``) selects an EnvPool variant: it is
        accepted at its default only.
    obs_dtype, reward_dtype
        The dtypes EnvPool gives observations and rewards (obs None: the pool's).
    observation_space, obs
        EnvPool's one-env observation space where it is not the spec's, and
        ``obs(batched_observation) -> array`` turning the pool's batch into it (e.g. a Tuple
        into a Box).
    info
        ``{EnvPool info key: (source, dtype)}`` besides the keys every EnvPool env has
        (``env_id``, ``players``, ``elapsed_step``): source is one of the spec's info keys
        (read from the engine's float64 row, so gymnasium's first-reporter typing does not
        apply) or ``function(engine, ids) -> array`` of the rows ``ids``.
    """

    ids: tuple
    config: Mapping = field(default_factory=dict)
    kwargs: Mapping = field(default_factory=dict)
    obs_dtype: Any = None
    reward_dtype: Any = np.float32
    observation_space: gym.Space | None = None
    obs: Callable | None = None
    info: Mapping = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.ids, (tuple, list)) or not all(
                isinstance(i, str) and i for i in self.ids):
            raise TypeError(f"EnvPoolNames: ids must be a tuple of EnvPool ids (str), got "
                            f"{self.ids!r}")
        if not self.ids:
            raise ValueError("EnvPoolNames: ids must name at least one EnvPool id")
        if len(set(self.ids)) != len(self.ids):
            raise ValueError(f"EnvPoolNames: ids repeat an id: {list(self.ids)}")
        object.__setattr__(self, "ids", tuple(self.ids))
        for label in ("config", "kwargs", "info"):
            m = getattr(self, label)
            if not isinstance(m, Mapping) or not all(isinstance(k, str) for k in m):
                raise TypeError(f"EnvPoolNames: {label} must be a dict with str keys, got {m!r}")
        common = sorted(set(self.config) & set(ENVPOOL_COMMON_OPTIONS))
        if common:
            raise ValueError(f"EnvPoolNames: config may not hold EnvPool's common options "
                             f"{common} (cypool.envpool handles them for every env)")
        for name, target in self.kwargs.items():
            if name not in self.config:
                raise ValueError(f"EnvPoolNames: kwargs maps {name!r}, which is not an option "
                                 f"of config {sorted(self.config)}")
            if not (isinstance(target, str) and target) and not callable(target):
                raise TypeError(f"EnvPoolNames: kwargs[{name!r}] must be a cypool kwarg name "
                                f"or a function(value) -> dict, got {target!r}")
        for key, entry in self.info.items():
            if (not isinstance(entry, tuple) or len(entry) != 2
                    or not (isinstance(entry[0], str) or callable(entry[0]))):
                raise TypeError(f"EnvPoolNames: info[{key!r}] must be (a spec info key or "
                                f"function(engine, ids), dtype), got {entry!r}")
            _dtype(entry[1], f"info[{key!r}]")
        if self.obs_dtype is not None:
            _dtype(self.obs_dtype, "obs_dtype")
        _dtype(self.reward_dtype, "reward_dtype")
        if self.obs is not None and not callable(self.obs):
            raise TypeError(f"EnvPoolNames: obs must be callable or None, got {self.obs!r}")
        if self.observation_space is not None and not isinstance(self.observation_space,
                                                                 gym.spaces.Space):
            raise TypeError(f"EnvPoolNames: observation_space must be a gymnasium space or "
                            f"None, got {self.observation_space!r}")


def _dtype(d, label):
    try:
        return np.dtype(d)
    except TypeError:
        raise TypeError(f"EnvPoolNames: {label} must be a numpy dtype, got {d!r}") from None


@dataclass(frozen=True)
class FamilySpec:
    """Everything about one env id.

    pool
        The ``Engine`` subclass, or ``"module:Class"`` (imported at the first make).
    observation_space, action_space
        One env's spaces, or the spaces of the default kwargs when ``spaces`` is given.
    kwargs
        ``{name: Kwarg}``.
    spaces
        Optional ``spaces(kwargs) -> (observation_space, action_space)`` for spaces that
        depend on pool-scope kwargs (a map's size).
    render
        Optional ``render(engine, ids, mode, kwargs) -> list`` of one frame (``rgb_array``:
        an ``(H, W, 3)`` uint8 array) or text (``ansi``) per id.
    envpool
        Optional :class:`EnvPoolNames`: the env's EnvPool 1.2.5 name(s), options and
        dtypes, for :mod:`cypool.envpool` (None: cypool.envpool does not serve it).
    """

    env_id: str
    pool: Any
    observation_space: gym.Space
    action_space: gym.Space
    kwargs: dict = field(default_factory=dict)
    max_episode_steps: int | None = None
    info: tuple = ()
    check_kwargs: Callable[[dict], dict | None] | None = None
    spaces: Callable[[dict], tuple] | None = None
    render: Callable | None = None
    render_modes: tuple = ()
    render_fps: int | None = None
    module: str | None = None
    envpool: EnvPoolNames | None = None

    def pool_class(self):
        if isinstance(self.pool, str):
            mod, _, name = self.pool.partition(":")
            cls = getattr(importlib.import_module(mod), name, None)
            if cls is None:
                raise ImportError(f"{self.env_id}: pool {self.pool!r}: module {mod} has no "
                                  f"{name}")
            check_pool_class(cls, f"{self.env_id}: pool {self.pool!r}")
            return cls
        return self.pool

    @property
    def metadata(self) -> dict:
        return {"render_modes": list(self.render_modes), "render_fps": self.render_fps}


def check_pool_class(cls, where):
    """A pool class must be a strict subclass of Engine (TypeError)."""
    from cypool._core._engine import Engine

    if not isinstance(cls, type) or not issubclass(cls, Engine):
        raise TypeError(f"{where}: pool must be an Engine subclass or 'module:Class' naming "
                        f"one (a cdef class deriving from cypool.api's Engine), got {cls!r}")
    if cls is Engine:
        raise TypeError(f"{where}: pool is Engine itself, which has no env_reset/env_step "
                        "kernels; derive a cdef class from it")


def check_spec(spec: FamilySpec) -> None:
    """TypeError/ValueError for a malformed spec (before it is registered)."""
    where = f"{spec.env_id!r}"
    if isinstance(spec.pool, str):
        if ":" not in spec.pool:
            raise TypeError(f"{where}: pool must be an Engine subclass or 'module:Class', got "
                            f"{spec.pool!r}")
    else:
        check_pool_class(spec.pool, where)
    check_observation_space(spec.observation_space, where)
    check_action_space(spec.action_space, where)
    for name, k in spec.kwargs.items():
        if not isinstance(name, str) or not isinstance(k, Kwarg):
            raise TypeError(f"{where}: kwargs must map names (str) to cypool Kwarg objects")
    names = set()
    for key in spec.info:
        if not isinstance(key, InfoKey) or not isinstance(key.name, str) or not key.name:
            raise TypeError(f"{where}: info must hold InfoKey objects with str names, got "
                            f"{key!r}")
        if key.name in names:
            raise ValueError(f"{where}: info key {key.name!r} is given twice")
        names.add(key.name)
        if not isinstance(key.width, int) or key.width < 1:
            raise ValueError(f"{where}: info key {key.name!r} needs a width >= 1")
        for d in (key.dtype, key.reset_dtype):
            if d is not None and np.dtype(d).kind not in "biuf":   # TypeError: not a dtype
                raise TypeError(f"{where}: info key {key.name!r} must have a bool, integer "
                                f"or float dtype (the kernels write info as doubles), got {d!r}")
    for label, hook in (("check_kwargs", spec.check_kwargs), ("spaces", spec.spaces),
                        ("render", spec.render)):
        if hook is not None and not callable(hook):
            raise TypeError(f"{where}: {label} must be callable or None")
    if spec.envpool is not None and not isinstance(spec.envpool, EnvPoolNames):
        raise TypeError(f"{where}: envpool must be a cypool.api.EnvPoolNames or None, got "
                        f"{spec.envpool!r}")
    if spec.envpool is not None:
        known = {k.name for k in spec.info}
        for key, (source, _) in spec.envpool.info.items():
            if isinstance(source, str) and source not in known:
                raise ValueError(f"{where}: envpool info {key!r} reads info key {source!r}, "
                                 f"which the spec does not have ({sorted(known)})")
    if spec.render_modes and spec.render is None:
        raise TypeError(f"{where}: render_modes {list(spec.render_modes)} need a render hook")


def check_observation_space(space, where):
    if isinstance(space, (gym.spaces.Tuple, gym.spaces.Dict)):
        leaves = list(space.spaces.values() if isinstance(space, gym.spaces.Dict)
                      else space.spaces)
        if not leaves or not all(isinstance(s, _LEAVES) for s in leaves):
            raise TypeError(f"{where}: a Tuple or Dict observation_space must hold Box, "
                            f"Discrete or MultiDiscrete spaces, got {space!r}")
    elif not isinstance(space, _LEAVES):
        raise TypeError(f"{where}: observation_space must be a gymnasium Box, Discrete, "
                        f"MultiDiscrete, or a Tuple or Dict of those, got {space!r}")
    for s in _leaves(space):
        if isinstance(s, gym.spaces.Discrete) and s.start != 0:
            raise TypeError(f"{where}: a Discrete observation space must start at 0")


def check_action_space(space, where):
    if not isinstance(space, _LEAVES):
        raise TypeError(f"{where}: action_space must be a gymnasium Box, Discrete or "
                        f"MultiDiscrete, got {space!r}")
    if isinstance(space, gym.spaces.Discrete) and space.start != 0:
        raise TypeError(f"{where}: a Discrete action_space must start at 0")
    if isinstance(space, gym.spaces.MultiDiscrete) and np.any(space.start != 0):
        raise TypeError(f"{where}: a MultiDiscrete action_space must start at 0")
    if isinstance(space, gym.spaces.Box) and space.dtype.kind != "f":
        raise TypeError(f"{where}: a Box action_space must have a float dtype")


def _leaves(space):
    if isinstance(space, gym.spaces.Dict):
        return list(space.spaces.values())
    if isinstance(space, gym.spaces.Tuple):
        return list(space.spaces)
    return [space]


def _leaf_keys(space):
    if isinstance(space, gym.spaces.Dict):
        return list(space.spaces)
    if isinstance(space, gym.spaces.Tuple):
        return list(range(len(space.spaces)))
    return [None]


def obs_outputs(space) -> list:
    """The engine outputs ``[(name, shape, dtype), ...]`` one env's observation needs."""
    out = []
    for k, (key, leaf) in enumerate(zip(_leaf_keys(space), _leaves(space))):
        name = "obs" if k == 0 else f"obs.{key}"
        shape = () if isinstance(leaf, gym.spaces.Discrete) else tuple(leaf.shape)
        out.append((name, shape, np.dtype(leaf.dtype)))
    return out


def obs_structure(space):
    """None for a plain observation; else ``("tuple", names)`` or ``("dict", {key: name})``:
    how the façade assembles the outputs into gymnasium's batched structure."""
    names = [name for name, _, _ in obs_outputs(space)]
    if isinstance(space, gym.spaces.Tuple):
        return ("tuple", tuple(names))
    if isinstance(space, gym.spaces.Dict):
        return ("dict", dict(zip(space.spaces, names)))
    return None


# ---------------------------------------------------------------------------- kwargs
def complete_kwargs(spec: FamilySpec, kwargs: dict) -> dict:
    """The complete, checked kwargs of one env: defaults updated with ``kwargs``, each value
    checked against its kind, then the spec's ``check_kwargs`` (which may normalise)."""
    check_known_kwargs(spec.env_id, kwargs, spec.kwargs)
    kw = {name: check_kwarg(spec.env_id, name, kwargs.get(name, k.default), k.default, k.kind)
          for name, k in spec.kwargs.items()}
    if spec.check_kwargs is not None:
        out = spec.check_kwargs(kw)
        if isinstance(out, Mapping):           # normalised kwargs replace kw
            out = dict(out)
            if set(out) != set(kw):
                raise TypeError(f"{spec.env_id}: check_kwargs returned kwargs named "
                                f"{sorted(out)}; the env's kwargs are {sorted(kw)}")
            kw = out
    return kw


def same_kwargs(a: dict, b: dict) -> bool:
    """a and b hold equal values of the same types (np.float64(0.5) == 0.5, yet a pool may
    compute differently with each)."""
    return a.keys() == b.keys() and all(
        type(a[k]) is type(b[k]) and _eq(a[k], b[k]) for k in a)


def _eq(x, y):
    try:
        return bool(np.all(x == y)) if isinstance(x, np.ndarray) else bool(x == y)
    except Exception:          # values without a truth value
        return x is y


# ---------------------------------------------------------------------------- the family
class SpecFamily:
    """The family (:class:`cypool.registry.Family`) of one spec."""

    def __init__(self, spec: FamilySpec, env_id, num_envs, num_threads, max_episode_steps,
                 kwargs, member_kwargs=None):
        self.spec = spec
        self.kwargs = kw = complete_kwargs(spec, kwargs)
        per_env = None
        if member_kwargs is not None:
            per_env = [complete_kwargs(spec, {**kwargs, **m}) for m in member_kwargs]
            for i, m in enumerate(per_env):
                self._check_pool_scope(m, f"env {i}'s")
        if spec.spaces is not None:
            obs_space, act_space = spec.spaces(dict(kw))
            check_observation_space(obs_space, repr(spec.env_id))
            check_action_space(act_space, repr(spec.env_id))
        else:
            obs_space, act_space = spec.observation_space, spec.action_space
        # each pool its own copies: seeding one pool's action_space leaves another's alone
        self.single_observation_space = copy.deepcopy(obs_space)
        self.single_action_space = copy.deepcopy(act_space)
        self.obs_structure = obs_structure(obs_space)
        cls = spec.pool_class()
        self.engine = engine = cls(num_envs, num_threads, max_episode_steps or 0, dict(kw))
        self._check_pool(engine, num_envs)
        self._configurable = callable(getattr(engine, "configure", None))
        if self._configurable:
            engine.configure(np.arange(num_envs, dtype=np.int64), dict(kw))
        if per_env is not None:
            for i, m in enumerate(per_env):
                if not same_kwargs(m, kw):
                    self.configure_envs([i], m)
        self.metadata = spec.metadata
        self.info_layout = []
        col = 0
        for key in spec.info:
            dtype = np.dtype(key.dtype) if key.reset_dtype is None else \
                KindDtype(key.dtype, key.reset_dtype)
            self.info_layout.append((key.name, col, key.width, dtype, key.on_step,
                                     key.on_reset))
            col += key.width
        self.action_dtype = act_space.dtype
        self.render_mode = None

    def _check_pool_scope(self, kw, whose):
        for name, k in self.spec.kwargs.items():
            if k.scope == "pool" and not _eq(kw[name], self.kwargs[name]):
                raise ValueError(f"{self.spec.env_id}: {name} is a per-pool setting (it changes "
                                 f"the spaces or the pool's tables); {whose} value "
                                 f"{kw[name]!r} differs from the pool's {self.kwargs[name]!r}")

    def _check_pool(self, engine, n):
        """The pool's buffers fit the spaces (the kernels trust them)."""
        where = f"{self.spec.env_id}: pool {type(engine).__name__}"
        outputs = getattr(engine, "outputs", None)
        if not isinstance(outputs, dict):
            raise TypeError(f"{where}: its __init__ did not call self._init_engine(num_envs, "
                            "num_threads, max_episode_steps, [('obs', shape, dtype)], "
                            "info_width)")
        for name, shape, dtype in obs_outputs(self.single_observation_space):
            got = outputs.get(name)
            want = (n,) + shape
            if got is None or got.shape != want or got.dtype != dtype:
                got = None if got is None else (got.shape, got.dtype)
                raise TypeError(f"{where} declares its {name} output as {got}; the "
                                f"observation space needs {want} {dtype}")
        width = sum(k.width for k in self.spec.info)
        if engine.info.shape[1] < width:
            raise TypeError(f"{where} has {engine.info.shape[1]} info column(s); info_keys "
                            f"names {width} column(s)")
        engine._state_mode()             # a state_arrays declaration that cannot work
        act = getattr(engine, "actions", None)
        asp = self.single_action_space
        want = (n,) + tuple(asp.shape)
        kind = "f" if isinstance(asp, gym.spaces.Box) else "iu"
        if (not isinstance(act, np.ndarray) or act.shape != want or act.dtype.kind not in kind
                or not act.flags.c_contiguous):
            got = None if not isinstance(act, np.ndarray) else (act.shape, act.dtype)
            raise TypeError(f"{where}: its `actions` must be a C-contiguous "
                            f"{'integer' if kind == 'iu' else 'float'} array of shape {want}, "
                            f"got {got}")

    def merged_kwargs(self, kwargs):
        return complete_kwargs(self.spec, kwargs)

    def configure_envs(self, ids, kwargs):
        kw = self.merged_kwargs(kwargs)
        self._check_pool_scope(kw, "the new")
        if self._configurable:
            self.engine.configure(np.asarray(ids, np.int64), dict(kw))
        elif not same_kwargs(kw, self.kwargs):
            raise ValueError(f"{self.spec.env_id}: the envs of a pool share their kwargs "
                             f"(its pool has no configure(ids, kwargs))")

    def set_max_episode_steps(self, ids, limit):
        self.engine.set_max_episode_steps(np.asarray(ids, np.int64), int(limit))

    def load_actions(self, actions, env_ids=None):
        """Discrete and MultiDiscrete: integers in range (floats refused, never rounded). Box:
        shape (n,) + the space's shape, float32 or float64, finite; not clipped (the env sees
        what it is given, as gymnasium's envs do)."""
        engine = self.engine
        n = engine.num_envs if env_ids is None else len(env_ids)
        rows = slice(None) if env_ids is None else np.asarray(env_ids, np.int64)
        asp = self.single_action_space
        if isinstance(asp, gym.spaces.Discrete):
            engine.actions[rows] = check_discrete_actions(actions, int(asp.n), n, env_ids)
            return
        a = np.asarray(actions)
        want = (n,) + tuple(asp.shape)
        if a.shape != want:
            raise ValueError(f"actions must have shape {want}, got {a.shape}")
        if isinstance(asp, gym.spaces.MultiDiscrete):
            if a.dtype.kind not in "iu":
                raise TypeError(f"actions must be integers, got {a.dtype}")
            if a.size and (np.any(a < 0) or np.any(a >= asp.nvec)):
                raise ValueError(f"actions must be in [0, nvec) with nvec={asp.nvec.tolist()}")
            engine.actions[rows] = a
            return
        if a.dtype not in (np.float32, np.float64):
            raise TypeError(f"actions must be float32 or float64, got {a.dtype}")
        if not np.isfinite(a).all():
            raise ValueError("actions contain NaN or Inf")
        setter = getattr(engine, "set_actions", None)
        if setter is not None:
            setter(rows, a)
        else:
            engine.actions[rows] = a

    def set_render_mode(self, mode):
        self.render_mode = mode

    def render(self, ids):
        return self.spec.render(self.engine, np.asarray(ids, np.int64), self.render_mode,
                                self.kwargs)

    def extra_info(self, info, kinds, ids):
        pass
