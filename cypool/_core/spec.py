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
import functools
import importlib
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from cypool.errors import check_known_kwargs
from cypool._validate import (MAX_SEED, KWARG_CONSTRAINTS, KWARG_KINDS, Interval, Options,
                             check_discrete_actions, check_int, check_kwarg, check_limit)

__all__ = ["Kwarg", "InfoKey", "EnvPoolNames", "NativeStep", "FamilySpec", "Built", "SpecFamily",
           "obs_outputs", "obs_structure", "TextLeaf"]

_LEAVES = (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiDiscrete)


@dataclass(frozen=True)
class Kwarg:
    """One constructor kwarg: its default, its kind and its scope.

    kind
        A name of ``cypool._validate.KWARG_KINDS``: ``"bool"``, ``"int"`` (numpy integers
        taken, converted to int), ``"number"`` (any real number, converted to float),
        ``"real"`` (any real number, kept as given: for values whose type the env computes
        in), ``"str"`` or ``"any"``; None: taken from the default's type. Or a constraint,
        a kind that carries its bounds (scikit-learn's ``_parameter_constraints``):
        :class:`cypool.api.Interval` (``Interval("int", 1, 1000)``,
        ``Interval("number", -12, 0, closed="neither")``: an int or finite number in that
        range) or :class:`cypool.api.Options` (``Options(("cypool", "envpool"))``: one
        of those values). A value of another kind is a TypeError, one outside the constraint
        a ValueError naming the env, the kwarg, the range or options and the value, checked
        for every way an env gets kwargs (make_vec, ``env_kwargs``, populations,
        ``set_attr``) before the spec's ``check_kwargs`` hook, which is left with what needs
        code (checks across kwargs, maps, arrays). The default must satisfy its constraint.
    scope
        ``"env"`` (may differ per env: populations, ``env_kwargs``, ``set_attr``), ``"pool"``
        (the same for every env of a pool: it changes the spaces or the pool's tables) or
        ``"make"`` (how the pool is built, e.g. MuJoCo's render size: read from the make's
        kwargs only, and no env's setting, so left out of each env's kwargs)."""

    default: Any
    kind: str | Interval | Options | None = None
    scope: str = "env"

    def __post_init__(self):
        if isinstance(self.kind, KWARG_CONSTRAINTS):    # "Kwarg: default must be >= 1, ..."
            check_kwarg("Kwarg", "default", self.default, self.default, self.kind)
        elif self.kind is not None and self.kind not in KWARG_KINDS:
            raise ValueError(f"Kwarg kind must be one of {sorted(KWARG_KINDS)} or an Interval "
                             f"or Options, got {self.kind!r}")
        if self.scope not in ("env", "pool", "make"):
            raise ValueError(f"Kwarg scope must be 'env', 'pool' or 'make', got "
                             f"{self.scope!r}")


@dataclass(frozen=True)
class InfoKey:
    """One info key: ``width`` columns of the engine's float64 info row, reported as ``dtype``
    (after steps when ``on_step``, after resets when ``on_reset``). ``reset_dtype``: the
    dtype when the first env reporting the key in a call was reset, as gymnasium types an
    info array by its first value (None: ``dtype`` always). ``column``: its first column
    (None: the column after the previous key's). ``dtype`` may also be ``"action"``: the
    dtype the env's last actions had (the family's ``action_dtype_of`` hook)."""

    name: str
    dtype: Any
    width: int = 1
    on_step: bool = True
    on_reset: bool = True
    reset_dtype: Any = None
    column: int | None = None


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
    variants
        ``{option: value}``: options of ``config`` that select an EnvPool variant cypool does
        not run, accepted at that value only (checked before ``convert``).
    convert
        Optional ``convert(task_id, options, pixels) -> cypool kwargs`` for options read
        together (``x_min``/``x_max`` into one ``x_range``): ``options`` are the id's own
        (``config``'s names, the user's values), ``pixels`` None or EnvPool's
        ``render_width``/``render_height``/``render_camera_id`` (``from_pixels=True``).
        Replaces ``kwargs``.
    fixed
        Read-only options EnvPool reports after the user's (Atari's ``task``, its ROM).
    pixels
        EnvPool's ``from_pixels=True`` is served (``convert`` asks the pool for frames).
    action_dtype
        EnvPool's dtype of Box actions (None: the pool's).
    info_all
        EnvPool's info holds every info key of the pool (zeros where a call has none) instead
        of ``info``'s.
    family
        EnvPool's class-name prefix (``<family>GymnasiumEnvPool``; None: from the id).
    aliases
        ``{EnvPool id: {option: default}}``: EnvPool's older ids of this env whose config is
        ``config`` with these defaults (MuJoCo's ``Ant-v3``: ``Ant-v4`` with contact forces).
    refused
        ``{EnvPool id: why}``: EnvPool ids of this env's family that cypool does not serve,
        each with the sentence ``cypool.envpool`` refuses it with (saying what to use); specs
        of one family may name the same id.
    """

    ids: tuple
    config: Mapping = field(default_factory=dict)
    kwargs: Mapping = field(default_factory=dict)
    obs_dtype: Any = None
    reward_dtype: Any = np.float32
    observation_space: gym.Space | None = None
    obs: Callable | None = None
    info: Mapping = field(default_factory=dict)
    variants: Mapping = field(default_factory=dict)
    convert: Callable | None = None
    fixed: Mapping = field(default_factory=dict)
    pixels: bool = False
    action_dtype: Any = None
    info_all: bool = False
    family: str | None = None
    aliases: Mapping = field(default_factory=dict)
    refused: Mapping = field(default_factory=dict)

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
        for label in ("config", "kwargs", "info", "refused"):
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
        for alias, over in self.aliases.items():
            if not isinstance(alias, str) or not alias or alias in self.ids:
                raise ValueError(f"EnvPoolNames: aliases key {alias!r} must be an EnvPool id "
                                 f"(str) not in ids")
            if not isinstance(over, Mapping) or not set(over) <= set(self.config):
                raise ValueError(f"EnvPoolNames: aliases[{alias!r}] must set options of "
                                 f"config {sorted(self.config)}, got {over!r}")
        for eid, why in self.refused.items():
            if not eid or eid in self.ids or eid in self.aliases or not isinstance(why, str):
                raise ValueError(f"EnvPoolNames: refused maps {eid!r} to {why!r}; it must map "
                                 f"EnvPool ids (str) not served here to why (str)")
        for key, entry in self.info.items():
            if (not isinstance(entry, tuple) or len(entry) != 2
                    or not (isinstance(entry[0], str) or callable(entry[0]))):
                raise TypeError(f"EnvPoolNames: info[{key!r}] must be (a spec info key or "
                                f"function(engine, ids), dtype), got {entry!r}")
            _dtype(entry[1], f"info[{key!r}]")
        if self.obs_dtype is not None:
            _dtype(self.obs_dtype, "obs_dtype")
        _dtype(self.reward_dtype, "reward_dtype")
        for label in ("variants", "fixed"):
            if not isinstance(getattr(self, label), Mapping):
                raise TypeError(f"EnvPoolNames: {label} must be a dict")
        for name in self.variants:
            if name not in self.config:
                raise ValueError(f"EnvPoolNames: variants names {name!r}, which is not an "
                                 f"option of config {sorted(self.config)}")
        if self.convert is not None and not callable(self.convert):
            raise TypeError(f"EnvPoolNames: convert must be callable or None, got "
                            f"{self.convert!r}")
        if self.action_dtype is not None:
            _dtype(self.action_dtype, "action_dtype")
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
class NativeStep:
    """What ``env.xla()``'s native step (a whole ``step()`` in C, no Python frame) may do for
    a family, beyond what its spec shows by itself.

    actions
        Its ``load_actions`` hook checks no more than the action space does, so the native
        step may write actions straight into the engine's buffer: Discrete actions checked in
        range, Box actions cast into the engine's ``act_f32`` buffer.
    info_masks
        ``((mask key, info key), ...)``: masks its ``extra_info`` narrows to the rows where
        that info key's value is > 0 (Atari's ``_game_length``).
    """

    actions: bool = False
    info_masks: tuple = ()


@dataclass(frozen=True)
class FamilySpec:
    """Everything about one env id.

    pool
        The ``Engine`` subclass, or ``"module:Class"`` (imported at the first make).
    observation_space, action_space
        One env's spaces, or the spaces of the default kwargs when ``spaces`` is given.
    kwargs
        ``{name: Kwarg}``: each kwarg's default, kind and scope; a kind may carry the
        kwarg's bounds (:class:`cypool.api.Interval`, :class:`cypool.api.Options`), checked
        before ``check_kwargs``, which is left with what needs code (checks across kwargs,
        maps, arrays).
    spaces
        Optional ``spaces(kwargs) -> (observation_space, action_space)`` for spaces that
        depend on pool-scope kwargs (a map's size).
    render
        Optional ``render(engine, ids, mode, kwargs) -> list`` of one frame (``rgb_array``:
        an ``(H, W, 3)`` uint8 array) or text (``ansi``) per id.
    render_pixels
        The spec takes make-scope bool kwargs ``from_pixels`` and ``channels_first`` beside
        ``width`` and ``height``: with ``from_pixels=True`` the observation space is the
        frames' (gymnasium's ``AddRenderObservation(env, render_only=True)`` over an env
        made with ``render_mode="rgb_array"``; ``channels_first``: ``(3, H, W)``, EnvPool's
        layout) and the build's engine writes each env's frame after its step or reset as
        its "obs" output (MjPool's ``pixels``: on the worker threads).
    envpool
        Optional :class:`EnvPoolNames`: the env's EnvPool 1.2.5 name(s), options and
        dtypes, for :mod:`cypool.envpool` (None: cypool.envpool does not serve it).
    envpool_info
        ``{EnvPool info key: (function(engine, ids) -> array, dtype)}``: EnvPool info values
        only the family can compute, for a spec whose EnvPool names a front-end table gives
        (cypool._envpool_robotics: the Shadow Hand's and Adroit's ``distance``); they replace
        the table's keys of the same name.

    Hooks for a family whose pool is more than ``pool(num_envs, num_threads,
    max_episode_steps, kwargs)`` over fixed spaces (MuJoCo's model, Atari's ROM). Each takes
    the :class:`SpecFamily` ``fam`` serving the pool first (``fam.engine``, ``fam.kwargs``:
    the pool's kwargs, ``fam.make_kwargs``: its make-scope ones, ``fam.state``: what
    ``build`` left there).

    build
        ``build(fam, num_envs, num_threads, max_episode_steps, env_kwargs) -> Built``: makes
        the engine (``env_kwargs``: each env's complete kwargs, or None when all are the
        pool's; each env is then configured through ``configure``) and what follows from
        it: spaces, info keys, render fps, family state.
    configure
        ``configure(fam, ids, kwargs)``: give envs ``ids`` (int64) the complete, checked
        kwargs ``kwargs`` (default: the engine's ``configure(ids, kwargs)`` if it has one).
    check_env_kwargs
        ``check_env_kwargs(fam, kwargs)``: check one env's complete kwargs against what
        ``build`` loaded (dm_control: ``n_sub_steps`` against the model's timestep).
        ``fam.merged_kwargs`` calls it, so ``set_attr`` and populations refuse a setting
        before any env changes.
    set_max_episode_steps
        ``set_max_episode_steps(fam, ids, limit)``: give envs ``ids`` the step limit
        ``limit`` (0: none) where the family keeps a limit of its own that it combines with
        it (dm_control's ``time_limit``: the episode ends at whichever comes first; default:
        the engine's limit is ``limit``).
    load_actions
        ``load_actions(fam, actions, env_ids)``: check an action batch and copy it in
        (default: the action space's checks).
    seed
        ``seed(fam, i, seed)``: install env i's random stream for an int seed or None
        (default: ``PCG64(SeedSequence(seed))``).
    seed_bound
        The int seeds ``seed`` takes are in [0, seed_bound) (None: 2**63; 2**32 for a
        ``RandomState`` seed). ``reset(seed=...)`` refuses a batch with a seed outside it
        before any env is seeded, and populations derive their envs' seeds inside it.
    extra_info
        ``extra_info(fam, info, kinds, ids)``: add or narrow keys of an info dict.
    action_dtype_of
        ``action_dtype_of(fam, ids)``: the dtype of ``"action"`` info keys for envs ``ids``
        (None: every env).
    native
        A :class:`NativeStep`: what ``env.xla()``'s native step may do for a family with
        ``load_actions`` or ``extra_info`` hooks (None: only what follows from the spec
        alone: Discrete actions without a ``load_actions`` hook, info keys as laid out).
    methods
        ``{name: fn(env_kwargs, *args, **kwargs)}``: methods of the reference's env that
        ``env.call(name, ...)`` (and SB3's ``env_method``) run for the whole pool at once,
        given each env's complete kwargs (read-only: shared with the pool); ``fn`` returns
        one result per env (Gymnasium-Robotics' ``compute_reward`` on a batch of goals, as
        HER calls it). A hook may have ``bind(env_kwargs)``, returning ``fn(*args, **kwargs)``
        for those kwargs, which the pool keeps until an env's kwargs change
        (``Pool.bind_method``; the robotics kernels' fast path).
    reset_option_keys, reset_options
        The family's own ``reset(options=...)`` keys, beside ``reset_mask``, and
        ``reset_options(fam, options, mask)``: checks their values before any env moves
        (ValueError) and returns a function that writes them in, which ``reset`` calls once
        the pool has drained and the reset's seeds are in (the maze ids' ``goal_cell`` and
        ``reset_cell``).
    reset_option_per_env
        ``reset_option_per_env(key, value) -> bool``: whether ``value`` of option ``key`` is
        the family's one-value-per-env form, whose ``value[lo:hi]`` is the same form for envs
        ``lo..hi-1`` (the Ray backend hands each worker its envs' rows; any other value goes
        to every worker as it is). None: the family's option values are never per env.
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
    render_pixels: bool = False
    module: str | None = None
    envpool: EnvPoolNames | None = None
    envpool_info: dict | None = None
    build: Callable | None = None
    configure: Callable | None = None
    load_actions: Callable | None = None
    seed: Callable | None = None
    seed_bound: int | None = None
    extra_info: Callable | None = None
    action_dtype_of: Callable | None = None
    native: NativeStep | None = None
    methods: dict | None = None
    reset_option_keys: tuple = ()
    reset_options: Callable | None = None
    reset_option_per_env: Callable | None = None
    check_env_kwargs: Callable | None = None
    set_max_episode_steps: Callable | None = None

    def pool_class(self):
        if isinstance(self.pool, str):
            mod, _, name = self.pool.partition(":")
            try:
                module = importlib.import_module(mod)
            except ModuleNotFoundError as exc:
                source = _unbuilt_source(mod) if exc.name == mod else None
                if source is None:
                    raise
                raise ModuleNotFoundError(
                    f"{self.env_id}: pool {self.pool!r}: the extension module {mod} is not "
                    f"built here: Python found its package's source folder ({source} is its "
                    "unbuilt Cython source) before any installed, built copy, as it does when "
                    "you run a package's tests or scripts from its source folder (the "
                    "current directory is first on sys.path). Run them from outside the "
                    "source folder (the installed package has the built module), or build it "
                    "in place there: python setup.py build_ext --inplace",
                    name=mod) from exc
            cls = getattr(module, name, None)
            if cls is None:
                raise ImportError(f"{self.env_id}: pool {self.pool!r}: module {mod} has no "
                                  f"{name}")
            check_pool_class(cls, f"{self.env_id}: pool {self.pool!r}")
            return cls
        return self.pool

    @property
    def metadata(self) -> dict:
        return {"render_modes": list(self.render_modes), "render_fps": self.render_fps}


def _unbuilt_source(mod):
    """The .pyx source of extension module ``mod`` (``pkg.sub._ext``) where the package
    imported from its source folder holds it unbuilt, else None."""
    import os
    import sys

    parent, _, leaf = mod.rpartition(".")
    pkg = sys.modules.get(parent) if parent else None
    folders = list(getattr(pkg, "__path__", None) or []) if parent else \
        [p or os.getcwd() for p in sys.path]
    for folder in folders:
        source = os.path.join(folder, leaf + ".pyx")
        if os.path.isfile(source):
            return source
    return None


@dataclass
class Built:
    """What a spec's ``build`` hook made: the engine, and what depends on it (None: the
    spec's own ``observation_space``, ``action_space``, ``info``, ``render_fps``,
    ``render``). ``obs_structure``: how the engine's outputs make an observation, for a
    pool whose outputs are not one per leaf of the space (:func:`obs_structure`; None: they
    are). ``render``: the pool's ``render(engine, ids, mode, kwargs)`` where it needs what
    was loaded (dm_control's depth frames: the model's clipping planes)."""

    engine: Any
    observation_space: gym.Space | None = None
    action_space: gym.Space | None = None
    info: tuple | None = None
    render_fps: int | None = None
    state: Any = None
    obs_structure: Any = None
    render: Callable | None = None


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
            if isinstance(d, str) and d == "action" and spec.action_dtype_of is not None:
                continue
            if d is not None and np.dtype(d).kind not in "biuf":   # TypeError: not a dtype
                raise TypeError(f"{where}: info key {key.name!r} must have a bool, integer "
                                f"or float dtype (the kernels write info as doubles), got {d!r}")
    for label in ("check_kwargs", "spaces", "render", "build", "configure", "load_actions",
                  "seed", "extra_info", "action_dtype_of", "check_env_kwargs",
                  "set_max_episode_steps"):
        hook = getattr(spec, label)
        if hook is not None and not callable(hook):
            raise TypeError(f"{where}: {label} must be callable or None")
    if spec.seed_bound is not None:
        check_int(f"{where}: seed_bound", spec.seed_bound, 1, MAX_SEED, closed_high=True,
                  what="an int or None")
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
        if not leaves or not all(isinstance(s, _LEAVES + (gym.spaces.Text,)) for s in leaves):
            raise TypeError(f"{where}: a Tuple or Dict observation_space must hold Box, "
                            f"Discrete, MultiDiscrete or Text spaces, got {space!r}")
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
        if isinstance(leaf, gym.spaces.Text):     # a code per env (TextLeaf)
            out.append((name, (), np.dtype(np.int64)))
            continue
        shape = () if isinstance(leaf, gym.spaces.Discrete) else tuple(leaf.shape)
        out.append((name, shape, np.dtype(leaf.dtype)))
    return out


class TextLeaf:
    """A text leaf of an observation structure (a Text leaf of a Dict or Tuple space): the
    engine writes one int64 code per env in output ``name``, ``strings[code]`` is its str.
    Called as ``leaf(outputs, fn)`` by ``Pool.obs``: ``fn`` (the copy policy, a row
    selection) applies to the codes; a batch gives a tuple of str (gymnasium's batch of a
    Text space), one row (a final observation) its str. The strings are the family's cached
    objects: no new str per env per step. A spec's ``build`` hook gives it in
    ``Built.obs_structure`` (the default structure would give the codes)."""

    __slots__ = ("name", "strings")

    def __init__(self, name, strings):
        self.name = name
        self.strings = tuple(strings)

    def __call__(self, outputs, fn):
        codes = fn(outputs[self.name])
        s = self.strings
        if codes.ndim == 0:
            return s[int(codes)]
        return tuple([s[c] for c in codes.tolist()])

    def __repr__(self):
        return f"TextLeaf({self.name!r}, {len(self.strings)} strings)"


def _dict_order_hint(space, outputs) -> str:
    """For a Dict observation whose outputs do not fit: which output each key is, and that
    gymnasium's Dict sorts a plain dict's keys (the likely mistake: the pool wrote its
    first key to "obs", and the space put another one first)."""
    if not isinstance(space, gym.spaces.Dict) or not space.spaces:
        return ""
    keys = list(space.spaces)
    names = ", ".join(f"{k!r} -> {n!r}" for k, (n, _, _) in zip(keys, obs_outputs(space)))
    hint = (f". A Dict's outputs follow its key order ({names}): the first key is \"obs\". "
            "gymnasium's Dict sorts the keys of a plain dict, so its first key is the "
            f"alphabetically first one, {keys[0]!r}; to keep your own order pass a list of "
            "(key, space) pairs (or sort_keys=False)")
    if f"obs.{keys[0]}" in outputs:
        hint += (f". The pool declares an output \"obs.{keys[0]}\", so it puts another key "
                 "first")
    return hint


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
    checked against its kind, then the spec's ``check_kwargs`` (which may normalise).
    Make-scope kwargs are accepted in ``kwargs`` and left out (:func:`make_kwargs`)."""
    check_known_kwargs(spec.env_id, kwargs, spec.kwargs)
    kw = {name: check_kwarg(spec.env_id, name, kwargs.get(name, k.default), k.default, k.kind)
          for name, k in spec.kwargs.items() if k.scope != "make"}
    if spec.check_kwargs is not None:
        out = spec.check_kwargs(kw)
        if isinstance(out, Mapping):           # normalised kwargs replace kw
            out = dict(out)
            if set(out) != set(kw):
                raise TypeError(f"{spec.env_id}: check_kwargs returned kwargs named "
                                f"{sorted(out)}; the env's kwargs are {sorted(kw)}")
            kw = out
    return kw


def make_kwargs(spec: FamilySpec, kwargs: dict) -> dict:
    """The make-scope kwargs of ``kwargs`` over their defaults (checked by kind; the build
    hook checks their values)."""
    return {name: check_kwarg(spec.env_id, name, kwargs.get(name, k.default), k.default, k.kind)
            for name, k in spec.kwargs.items() if k.scope == "make"}


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


def check_ids(ids, n):
    """``ids`` as a C-contiguous int64 array of env ids in [0, n): TypeError for a non-integer
    or non-1-D array, ValueError for an id out of range."""
    a = np.asarray(ids)
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise TypeError(f"ids must be a 1-D array of env ids, got {a.dtype} {a.shape}")
    bad = (a < 0) | (a >= n)
    if bad.any():
        raise ValueError(f"ids must be in [0, {n}), got {a[bad].tolist()}")
    return np.ascontiguousarray(a, np.int64)


def _one_buffer(a, b) -> bool:
    """Two reads of one attribute are the same memory: the same array, or views of one
    buffer (a property building ``np.asarray(self.view)`` anew each time)."""
    if a is b or a.size == 0:              # an empty array: nothing to save or restore
        return True
    if (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
            and a.shape == b.shape and a.strides == b.strides):
        return True
    return bool(np.shares_memory(a, b))


def _check_state_buffers(engine, where):
    """Each array that state_arrays names must be the pool's own memory, the same buffer at
    every read: get_state reads row i of it and set_state writes row i into it, so an
    attribute that returns a copy (a property computing it) would take the writes into a
    temporary and snapshots would silently not restore. Two reads that share no memory
    show it. TypeError, as the other state_arrays declarations that cannot work."""
    for name in type(engine).state_arrays:
        first, second = getattr(engine, name), getattr(engine, name)
        if not _one_buffer(first, second):
            raise TypeError(
                f"{where}: state_arrays names {name!r}, but two reads of it give arrays that "
                f"share no memory (a property returning a copy?): set_state would write into "
                f"a temporary and snapshots would not restore. {name!r} must return the same "
                f"buffer each time: a memoryview/ndarray attribute of the pool (e.g. `cdef "
                f"readonly object {name}`, the array the kernels write), not a copy")


def check_member_kwargs(member_kwargs, n):
    """One dict per env (TypeError/ValueError)."""
    if not isinstance(member_kwargs, (list, tuple)):
        raise TypeError("member_kwargs must be a list of one dict per env, got "
                        f"{type(member_kwargs).__name__}")
    if len(member_kwargs) != n:
        raise ValueError(f"member_kwargs must have one dict per env ({n}), got "
                         f"{len(member_kwargs)}")
    for i, extra in enumerate(member_kwargs):
        if not isinstance(extra, dict):
            raise TypeError(f"member_kwargs[{i}] must be a dict, got {type(extra).__name__}")


# ---------------------------------------------------------------------------- the family
class SpecFamily:
    """The family (:class:`cypool.registry.Family`) of one spec: the only family class; the
    spec's data and hooks say everything particular to its envs."""

    def __init__(self, spec: FamilySpec, env_id, num_envs, num_threads, max_episode_steps,
                 kwargs, member_kwargs=None):
        self.spec = spec
        self.env_id = env_id
        self.kwargs = kw = complete_kwargs(spec, kwargs)
        self.make_kwargs = make_kwargs(spec, kwargs)
        if max_episode_steps is None:
            max_episode_steps = spec.max_episode_steps
        per_env = None
        if member_kwargs is not None:
            check_member_kwargs(member_kwargs, num_envs)
            per_env = [kw if not m else self._complete({**kwargs, **m}, f"member_kwargs[{i}]: ")
                       for i, m in enumerate(member_kwargs)]
        self.state = None
        self.metadata = spec.metadata
        info = spec.info
        structure = None
        self._render = spec.render
        if spec.build is not None:
            built = spec.build(self, num_envs, num_threads, max_episode_steps or 0, per_env)
            self.state = built.state
            engine = built.engine
            obs_space = built.observation_space or spec.observation_space
            act_space = built.action_space or spec.action_space
            structure = built.obs_structure
            if built.info is not None:
                info = built.info
            if built.render_fps is not None:
                self.metadata = {**spec.metadata, "render_fps": built.render_fps}
            if built.render is not None:
                self._render = built.render
        else:
            if spec.spaces is not None:
                obs_space, act_space = spec.spaces(dict(kw))
                check_observation_space(obs_space, repr(spec.env_id))
                check_action_space(act_space, repr(spec.env_id))
            else:
                obs_space, act_space = spec.observation_space, spec.action_space
        # from_pixels (a render_pixels spec): the pool's observations are the engine's frames
        mk = self.make_kwargs
        self.from_pixels = bool(spec.render_pixels and mk["from_pixels"])
        if spec.render_pixels:
            obs_space = self._pixel_space(mk, obs_space)
            if self.from_pixels:
                structure = None
        # each pool its own copies: seeding one pool's action_space leaves another's alone
        self.single_observation_space = copy.deepcopy(obs_space)
        self.single_action_space = copy.deepcopy(act_space)
        self.obs_structure = structure or obs_structure(obs_space)
        self.info_keys = info = tuple(info)
        if spec.build is None:
            cls = spec.pool_class()
            engine = cls(num_envs, num_threads, max_episode_steps or 0, dict(kw))
            self.engine = engine
            self._check_pool(engine, num_envs)
        self.engine = engine
        # the spec's per-call hooks, bound to this family once (the step path calls them);
        # through a weak proxy, so that the family is no cycle and its engine is freed as
        # soon as the pool lets go of it
        me = weakref.proxy(self)
        for name in ("load_actions", "extra_info", "action_dtype_of"):
            hook = getattr(spec, name)
            if hook is not None:
                setattr(self, name, functools.partial(hook, me))
        if spec.seed is not None:
            self.seed_env = functools.partial(spec.seed, me)
        self.seed_bound = spec.seed_bound
        self.methods = dict(spec.methods or {})
        # each env's complete kwargs as built, handed once to the Pool (which keeps the only
        # per-env record): take_built_env_kwargs()
        self._built_env_kw = per_env
        # each env's complete kwargs for the render hook (None: every env has the pool's),
        # kept by _apply, the one way an env's kwargs change after the build
        self._render_kw = list(per_env) if per_env is not None else None
        self._configure = spec.configure
        if self._configure is None and callable(getattr(engine, "configure", None)):
            self._configure = _engine_configure
        if self._configure is not None and spec.build is None:
            self._configure(self, np.arange(num_envs, dtype=np.int64), dict(kw))
        if per_env is not None:
            # a spec's configure hook: once per distinct setting (a population's members
            # share theirs); an engine's configure (the public env API): once per env
            groups = []
            for i, m in enumerate(per_env):
                if m is kw or same_kwargs(m, kw):
                    continue
                for g in groups if spec.configure is not None else ():
                    if same_kwargs(g[0], m):
                        g[1].append(i)
                        break
                else:
                    groups.append((m, [i]))
            for m, ids in groups:
                self._apply(np.array(ids, np.int64), m)
        self.info_layout = []
        col = 0
        for key in info:
            if key.column is not None:
                col = key.column
            if isinstance(key.dtype, str):
                dtype = key.dtype                   # "action"
            elif key.reset_dtype is None:
                dtype = np.dtype(key.dtype)
            else:
                dtype = KindDtype(key.dtype, key.reset_dtype)
            self.info_layout.append((key.name, col, key.width, dtype, key.on_step,
                                     key.on_reset))
            col += key.width
        self.render_mode = None

    def _complete(self, kwargs, where=""):
        """complete_kwargs of one env's kwargs, refusing a pool-scope value other than the
        pool's."""
        if not isinstance(kwargs, dict):
            raise TypeError(f"{where}kwargs must be a dict, got {type(kwargs).__name__}")
        if "max_episode_steps" in kwargs and "max_episode_steps" not in self.spec.kwargs:
            raise TypeError(f"{where}max_episode_steps is not a task kwarg of {self.env_id}; "
                            "set it with set_max_episode_steps(ids, limit)")
        kw = complete_kwargs(self.spec, kwargs)
        self._check_pool_scope(kw, f"{where}the")
        for name, k in self.spec.kwargs.items():
            if k.scope == "make" and name in kwargs and not _eq(kwargs[name],
                                                                self.make_kwargs[name]):
                raise ValueError(f"{where}{self.env_id}: {name} is set when the pool is made "
                                 f"(the same for every env); the value {kwargs[name]!r} "
                                 f"differs from the pool's {self.make_kwargs[name]!r}")
        return kw

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
                                f"observation space needs {want} {dtype}"
                                + _dict_order_hint(self.single_observation_space, outputs))
        width = sum(k.width for k in self.spec.info)
        if engine.info.shape[1] < width:
            raise TypeError(f"{where} has {engine.info.shape[1]} info column(s); info_keys "
                            f"names {width} column(s)")
        if engine._state_mode() == "arrays":  # (it raises for a declaration that cannot work)
            _check_state_buffers(engine, where)
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

    @property
    def action_dtype(self):
        """The dtype of "action" info keys for the whole pool (the action space's, or the
        action_dtype_of hook's for every env)."""
        per_env = self.__dict__.get("action_dtype_of")
        return per_env(None) if per_env is not None else self.single_action_space.dtype

    def merged_kwargs(self, kwargs):
        kw = complete_kwargs(self.spec, kwargs)
        if self.spec.check_env_kwargs is not None:
            self.spec.check_env_kwargs(self, kw)
        return kw

    def _apply(self, ids, kw):
        if self._configure is not None:
            self._configure(self, ids, dict(kw))
        elif not same_kwargs(kw, self.kwargs):
            raise ValueError(f"{self.spec.env_id}: the envs of a pool share their kwargs "
                             f"(its pool has no configure(ids, kwargs))")
        if self._render is not None and (self._render_kw is not None
                                         or not same_kwargs(kw, self.kwargs)):
            if self._render_kw is None:
                self._render_kw = [self.kwargs] * self.engine.num_envs
            for i in np.asarray(ids).tolist():
                self._render_kw[i] = kw

    def take_built_env_kwargs(self):
        """Each env's complete kwargs as the family was built with them (None: all the
        pool's), once: the Pool records them from then on."""
        kw, self._built_env_kw = self._built_env_kw, None
        return kw

    def configure_envs(self, ids, kwargs):
        """Give envs ``ids`` the complete kwargs ``kwargs`` (the pool's updated with theirs),
        everything checked before any env changes."""
        ids = check_ids(ids, self.engine.num_envs)
        self._apply(ids, self._complete(kwargs))

    def set_max_episode_steps(self, ids, limit):
        """Truncation limit of envs ``ids`` from their next step: an int >= 1, or None for
        the spec's registered limit (none: no limit); the spec's ``set_max_episode_steps``
        hook combines it with a limit of the family's own."""
        ids = check_ids(ids, self.engine.num_envs)
        if limit is None:
            limit = self.spec.max_episode_steps or 0
        else:
            limit = check_limit(limit)
        if self.spec.set_max_episode_steps is not None:
            self.spec.set_max_episode_steps(self, ids, limit)
        else:
            self.engine.set_max_episode_steps(ids, limit)

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
        # a pool whose env defines NaN/inf actions (gymnasium's LunarLanderContinuous clips
        # them) says so with takes_nonfinite_actions; its set_actions refuses the rest
        if not np.isfinite(a).all() and not getattr(engine, "takes_nonfinite_actions", False):
            raise ValueError("actions contain NaN or Inf")
        setter = getattr(engine, "set_actions", None)
        if setter is not None:
            setter(rows, a)
        else:
            engine.actions[rows] = a

    def set_render_mode(self, mode):
        self.render_mode = mode
        hook = getattr(self.engine, "set_render_mode", None)
        if hook is not None:       # a pool whose envs change with it (LunarLander's particles)
            hook(mode)

    @staticmethod
    def _pixel_space(kw, space):
        """A render_pixels spec's observation space: its frames' with from_pixels."""
        if kw["channels_first"] and not kw["from_pixels"]:
            raise ValueError("channels_first=True needs from_pixels=True (it lays out the "
                             "pixel observations)")
        if not kw["from_pixels"]:
            return space
        h, w = kw["height"], kw["width"]
        return gym.spaces.Box(0, 255, (3, h, w) if kw["channels_first"] else (h, w, 3),
                              np.uint8)

    def render(self, ids, mode=None):
        """The render hook's frames of envs ``ids`` (in ``mode``, default the pool's render
        mode), its ``kwargs`` those of the envs it draws: one call per distinct setting among
        them (envs with their own kwargs: ``env_kwargs``, ``set_attr``, population members),
        the frames in ``ids``' order."""
        ids = np.asarray(ids, np.int64)
        mode = mode or self.render_mode
        per_env = self._render_kw
        if per_env is None:
            return self._render(self.engine, ids, mode, self.kwargs)
        by_object = {}                      # envs given one dict share it (_apply)
        for pos, i in enumerate(ids.tolist()):
            by_object.setdefault(id(per_env[i]), (per_env[i], []))[1].append(pos)
        groups = []                         # [(kwargs, positions in ids)]
        for kw, pos in by_object.values():
            for g in groups:
                if same_kwargs(g[0], kw):
                    g[1].extend(pos)
                    break
            else:
                groups.append((kw, pos))
        if len(groups) <= 1:
            kw = groups[0][0] if groups else self.kwargs
            return self._render(self.engine, ids, mode, kw)
        frames = [None] * len(ids)
        for kw, pos in groups:
            pos.sort()
            out = self._render(self.engine, ids[pos], mode, kw)
            for p, frame in zip(pos, out):
                frames[p] = frame
        return frames

    def extra_info(self, info, kinds, ids):
        pass

    @property
    def reset_option_keys(self):
        """The spec's own reset option keys (beside ``reset_mask``)."""
        return self.spec.reset_option_keys

    def reset_options(self, options, mask):
        """Check the spec's own reset options; the function that writes them in."""
        return self.spec.reset_options(self, options, mask)


def _engine_configure(fam, ids, kwargs):
    fam.engine.configure(ids, kwargs)
