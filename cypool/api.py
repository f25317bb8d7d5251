"""cypool's public env API, version 1: an env written in Cython in your own package, stepped
by cypool's engine like the built-in families.

You write a pool: a ``cdef class`` deriving from ``Engine`` (``from cypool.api cimport
Engine, EnvRow, ST_OK``) with two ``noexcept nogil`` kernels, ``env_reset(i, slot)`` and
``env_step(i, slot)``, that touch env i's memory only; you build it with
:func:`extension_kwargs` and register it with :func:`register_env`. The id then gets
everything cypool has: the OpenMP worker team, sync and async batches, the three autoreset
modes, ``reset_mask``, seeds (env i gets ``seed + i``, numpy PCG64 streams), episode
statistics, populations with per-member kwargs, get_state/set_state/pickling, the Ray
backend and ``gymnasium.make_vec("cypool/<id>")``.

The pool's Python side, which register_env checks at every construction:

``__init__(self, num_envs, num_threads, max_episode_steps, kwargs)``
    calls ``self._init_engine(num_envs, num_threads, max_episode_steps, [("obs", shape,
    dtype)], info_width)`` (shape and dtype those of ``observation_space``, info_width the
    number of ``info_keys``) and makes ``self.actions``, a C-contiguous array of
    ``(num_envs,) + action_space.shape`` (integers for ``Discrete``, floats for ``Box``) that
    the kernels read. ``kwargs`` is complete and validated.
``configure(self, ids, kwargs)`` (optional)
    gives envs ``ids`` (an int64 array) the complete kwargs ``kwargs``; called once for every
    env after ``__init__`` and again for population members and ``set_attr``. Without it
    every env of a pool shares the constructor's kwargs.
``set_actions(self, rows, actions)`` (optional, ``Box`` spaces)
    stores a validated action batch (its own dtype, float32 or float64) for ``rows`` (a slice
    or an int64 array) instead of the default ``self.actions[rows] = actions``: for envs whose
    arithmetic follows the action's dtype, as numpy's does.
``_env_state(i)``, ``_check_env_state(i, state)``, ``_set_env_state(i, state)`` (optional)
    env i's own state as plain picklable values, for get_state/set_state and pickling.
    ``_check_env_state`` must be complete: it raises ValueError for every value that
    ``_set_env_state`` would refuse or fail to convert, and changes nothing; it may return
    the state converted to plain values, which is then what ``_set_env_state`` gets (None:
    the state as given). ``state_int``, ``state_float``, ``state_bool``, ``state_bytes``,
    ``state_seq`` and ``state_dict`` (exported here) check one value each.
    set_state installs the engine's part of a state only once every env's part is
    installed; should ``_set_env_state`` still raise, the parts already installed are put
    back (from ``_env_state``) and nothing changes.

Versioning: ``API_VERSION`` changes when any of the above, or ``cypool/api.pxd``, changes
incompatibly; ``register_env(api_version=...)`` refuses a mismatch, and a pool compiled
against another ``Engine`` layout fails at import (Cython checks the base type's size).
"""
from __future__ import annotations

import copy
import functools
import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from cypool import families
from cypool.errors import check_known_kwargs
from cypool._validate import check_discrete_actions, check_int, is_int, is_number
from cypool._core._engine import (state_bool, state_bytes, state_dict,  # noqa: F401
                                  state_float, state_int, state_seq)

__all__ = ["API_VERSION", "register_env", "unregister_env", "extension_kwargs",
           "cython_directives", "get_include",
           "state_int", "state_float", "state_bool", "state_bytes", "state_seq", "state_dict"]

API_VERSION = 1


def get_include() -> list[str]:
    """Directories holding ``cypool/api.pxd`` and the engine headers it cimports."""
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.dirname(here), os.path.join(here, "_core")]


def extension_kwargs() -> dict:
    """``setuptools.Extension`` keyword arguments for a pool module: cypool's and numpy's
    headers, numpy's random library (``numpy.random.c_distributions``) and the flags
    cypool's own envs use (``-ffp-contract=off``: no fused multiply-add, so float maths
    rounds as numpy's does)."""
    inc = np.get_include()
    return dict(
        include_dirs=[inc] + get_include(),
        library_dirs=[os.path.join(inc, "..", "..", "random", "lib"),
                      os.path.join(inc, "..", "lib")],
        libraries=["npyrandom", "npymath", "m"],
        extra_compile_args=["-O2", "-ffp-contract=off"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


def cython_directives() -> dict:
    """Cython compiler directives for a pool module (no bounds or wraparound checks in the
    kernels; Python's semantics for ``%`` and ``//`` kept, as numpy's)."""
    return dict(language_level=3, boundscheck=False, wraparound=False, initializedcheck=False)


@dataclass(frozen=True)
class EnvSpec:
    """What register_env was told about one id."""

    env_id: str
    pool: Any                          # the Engine subclass, or "module:Class"
    observation_space: gym.Space
    action_space: gym.Space
    defaults: dict
    max_episode_steps: int | None
    info_keys: dict
    check_kwargs: Callable[[dict], dict | None] | None
    metadata: dict = field(default_factory=dict)

    def pool_class(self):
        if isinstance(self.pool, str):
            mod, _, name = self.pool.partition(":")
            cls = getattr(importlib.import_module(mod), name, None)
            if cls is None:
                raise ImportError(f"{self.env_id}: pool {self.pool!r}: module {mod} has no "
                                  f"{name}")
            _check_pool_class(cls, f"{self.env_id}: pool {self.pool!r}")
            return cls
        return self.pool


def _check_pool_class(cls, where):
    """A pool class must be a strict subclass of Engine (TypeError)."""
    from cypool._core._engine import Engine

    if not isinstance(cls, type) or not issubclass(cls, Engine):
        raise TypeError(f"{where}: pool must be an Engine subclass or 'module:Class' naming "
                        f"one (a cdef class deriving from cypool.api's Engine), got {cls!r}")
    if cls is Engine:
        raise TypeError(f"{where}: pool is Engine itself, which has no env_reset/env_step "
                        "kernels; derive a cdef class from it")


def _family_name(env_id):
    return f"env:{env_id}"


def register_env(env_id: str, pool, *, observation_space: gym.Space, action_space: gym.Space,
                 kwargs: dict | None = None, max_episode_steps: int | None = None,
                 info_keys: dict | None = None,
                 check_kwargs: Callable[[dict], dict | None] | None = None,
                 render_fps: int | None = None, module: str | None = None,
                 api_version: int = API_VERSION) -> None:
    """Serve ``env_id`` with ``pool``.

    Parameters
    ----------
    env_id : str
        The id (``make_vec(env_id, n)``, ``gymnasium.make_vec("cypool/" + env_id, n)``).
    pool : Engine subclass or str
        The pool class, or ``"module:Class"`` (imported at the first ``make_vec``).
    observation_space, action_space : gymnasium.spaces.Box or Discrete
        One env's spaces.
    kwargs : dict
        The env's constructor kwargs and their defaults. A passed value must have its
        default's type: bool, int (numpy integers accepted), float (any real number, kept
        as float) or str; a None default accepts anything.
    max_episode_steps : int or None
        The registered time limit (None: none).
    info_keys : dict
        ``{name: dtype}``, one column of the pool's info row each (the kernels write row
        ``info[k]`` as a double); reported after steps and resets in gymnasium's vector
        format.
    check_kwargs : callable or None
        Called with the complete kwargs; raise ``ValueError`` for values out of range (or
        ``TypeError`` for values of a wrong type, e.g. under a None default).
        It may return a dict with the same names that replaces them: normalised values
        (e.g. a None default turned into the env's own default); returning None keeps the
        kwargs as they are (any other non-dict return value is ignored, as in earlier
        versions). The pool's ``__init__`` and ``configure`` see the returned kwargs.
    render_fps : int or None
        ``metadata["render_fps"]`` (pools of this API do not render).
    module : str or None
        An importable module whose import registers the id: processes cypool starts (Ray
        actors) import it before making envs.
    """
    # Everything is checked before anything is registered; a registration that fails after
    # that (gymnasium's own checks) is taken back: all or nothing.
    from cypool.registration import check_env_id, register_id

    check_env_id(env_id, "register_env")
    if not is_int(api_version):
        raise TypeError(f"register_env: api_version must be an int, got {api_version!r}")
    if api_version != API_VERSION:
        raise ValueError(f"register_env: {env_id} was written for cypool env API version "
                         f"{api_version}; this cypool implements {API_VERSION}")
    if env_id in families.list_envs():
        raise ValueError(f"register_env: {env_id!r} is already served")
    if isinstance(pool, str):
        if ":" not in pool:
            raise TypeError("register_env: pool must be an Engine subclass or 'module:Class', "
                            f"got {pool!r}")
    else:
        _check_pool_class(pool, "register_env")
    for label, space in (("observation_space", observation_space),
                         ("action_space", action_space)):
        if not isinstance(space, (gym.spaces.Box, gym.spaces.Discrete)):
            raise TypeError(f"register_env: {label} must be a gymnasium Box or Discrete, got "
                            f"{space!r}")
    for label, space in (("observation_space", observation_space),
                         ("action_space", action_space)):
        if isinstance(space, gym.spaces.Discrete) and space.start != 0:
            raise TypeError(f"register_env: a Discrete {label} must start at 0")
    if isinstance(action_space, gym.spaces.Box) and action_space.dtype.kind != "f":
        raise TypeError("register_env: a Box action_space must have a float dtype")
    if kwargs is not None and not isinstance(kwargs, Mapping):
        raise TypeError(f"register_env: kwargs must be a dict of names and defaults, got "
                        f"{type(kwargs).__name__}")
    defaults = dict(kwargs or {})
    if not all(isinstance(k, str) for k in defaults):
        raise TypeError("register_env: kwargs' names must be str")
    if info_keys is not None and not isinstance(info_keys, Mapping):
        raise TypeError(f"register_env: info_keys must be a dict {{name: dtype}}, got "
                        f"{type(info_keys).__name__}")
    info = {}
    for name, dtype in (info_keys or {}).items():
        if not isinstance(name, str):
            raise TypeError("register_env: info_keys' names must be str")
        try:
            info[name] = np.dtype(dtype)
        except TypeError:
            info[name] = None
        if info[name] is None or info[name].kind not in "biuf":
            raise TypeError(f"register_env: info_keys[{name!r}] must be a bool, integer or "
                            f"float dtype (the kernels write info as doubles), got {dtype!r}")
    if max_episode_steps is not None:
        max_episode_steps = check_int("max_episode_steps", max_episode_steps, 1, 2**63)
    if check_kwargs is not None and not callable(check_kwargs):
        raise TypeError("register_env: check_kwargs must be callable or None")
    if render_fps is not None and not is_int(render_fps):
        raise TypeError(f"register_env: render_fps must be an int or None, got {render_fps!r}")
    if module is not None and (not isinstance(module, str) or not module):
        raise TypeError(f"register_env: module must be a module name (str) or None, got "
                        f"{module!r}")
    spec = EnvSpec(env_id, pool, observation_space, action_space, defaults, max_episode_steps,
                   info, check_kwargs, {"render_modes": [], "render_fps": render_fps})
    spec_kwargs(spec, {})         # the defaults themselves must pass
    families.register_family(_family_name(env_id), env_ids=lambda: [env_id],
                             make=functools.partial(EnvFamily, spec),
                             default_max_episode_steps=lambda _id: spec.max_episode_steps,
                             module=module)
    try:
        register_id(env_id)
    except BaseException as exc:
        families.unregister_family(_family_name(env_id))
        if isinstance(exc, gym.error.Error):
            raise ValueError(f"register_env: gymnasium refuses cypool/{env_id}: {exc}") from exc
        raise


def unregister_env(env_id: str) -> None:
    """Forget an id registered with register_env (also in gymnasium's registry)."""
    families.unregister_family(_family_name(env_id))
    gym.registry.pop(f"cypool/{env_id}", None)


def _check_kwarg(env_id, key, value, default):
    if default is None:
        return value
    if isinstance(default, (bool, np.bool_)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{env_id}: {key} must be a bool, got {value!r}")
        return bool(value)
    if is_int(default):
        if not is_int(value):
            raise TypeError(f"{env_id}: {key} must be an int, got {value!r}")
        return int(value)
    if is_number(default):
        if not is_number(value):
            raise TypeError(f"{env_id}: {key} must be a number, got {value!r}")
        return float(value)
    if isinstance(default, str):
        if not isinstance(value, str):
            raise TypeError(f"{env_id}: {key} must be a str, got {value!r}")
        return value
    return value


def spec_kwargs(spec: EnvSpec, kwargs: dict) -> dict:
    """The complete, validated kwargs of one env."""
    check_known_kwargs(spec.env_id, kwargs, spec.defaults)
    kw = {k: _check_kwarg(spec.env_id, k, kwargs.get(k, d), d) for k, d in spec.defaults.items()}
    if spec.check_kwargs is not None:
        out = spec.check_kwargs(kw)
        if isinstance(out, Mapping):           # normalised kwargs replace kw
            out = dict(out)
            if set(out) != set(kw):
                raise TypeError(f"{spec.env_id}: check_kwargs returned kwargs named "
                                f"{sorted(out)}; the env's kwargs are {sorted(kw)}")
            kw = out
    return kw


def _same_kwargs(a: dict, b: dict) -> bool:
    """a and b hold equal values of the same types (np.float64(0.5) == 0.5, yet a pool may
    compute differently with each)."""
    return a.keys() == b.keys() and all(
        type(a[k]) is type(b[k]) and _eq(a[k], b[k]) for k in a)


def _eq(x, y):
    try:
        return bool(x == y)
    except Exception:          # arrays and other values without a truth value
        return x is y


class EnvFamily:
    """The family (cypool.families.Family) of one register_env id."""

    def __init__(self, spec: EnvSpec, env_id, num_envs, num_threads, max_episode_steps, kwargs,
                 member_kwargs=None):
        self.spec = spec
        self.kwargs = kw = spec_kwargs(spec, kwargs)
        per_env = None
        if member_kwargs is not None:
            per_env = [spec_kwargs(spec, {**kwargs, **m}) for m in member_kwargs]
        cls = spec.pool_class()
        self.engine = engine = cls(num_envs, num_threads, max_episode_steps or 0, dict(kw))
        self._check_pool(engine, num_envs)
        self._configurable = callable(getattr(engine, "configure", None))
        if self._configurable:
            engine.configure(np.arange(num_envs, dtype=np.int64), dict(kw))
        if per_env is not None:
            for i, m in enumerate(per_env):
                if not _same_kwargs(m, kw):
                    self.configure_envs([i], m)
        # each pool its own copies: seeding one pool's action_space leaves another's alone
        self.single_observation_space = copy.deepcopy(spec.observation_space)
        self.single_action_space = copy.deepcopy(spec.action_space)
        self.metadata = dict(spec.metadata)
        self.info_layout = [(name, k, 1, dtype, True, True)
                            for k, (name, dtype) in enumerate(spec.info_keys.items())]
        self.action_dtype = spec.action_space.dtype

    def _check_pool(self, engine, n):
        """The pool's buffers fit the registered spaces (the kernels trust them)."""
        spec = self.spec
        where = f"{spec.env_id}: pool {type(engine).__name__}"
        if getattr(engine, "outputs", None) is None:
            raise TypeError(f"{where}: its __init__ did not call self._init_engine(num_envs, "
                            "num_threads, max_episode_steps, [('obs', shape, dtype)], "
                            "info_width)")
        obs = getattr(engine, "outputs", {}).get("obs")
        osp = spec.observation_space
        want = (n,) + tuple(osp.shape)
        if obs is None or obs.shape != want or obs.dtype != osp.dtype:
            got = None if obs is None else (obs.shape, obs.dtype)
            raise TypeError(f"{where} declares its obs output as {got}; the observation space "
                            f"needs {want} {osp.dtype}")
        if engine.info.shape[1] < len(spec.info_keys):
            raise TypeError(f"{where} has {engine.info.shape[1]} info column(s); info_keys "
                            f"names {len(spec.info_keys)}")
        act = getattr(engine, "actions", None)
        asp = spec.action_space
        want = (n,) + tuple(asp.shape)
        kind = "iu" if isinstance(asp, gym.spaces.Discrete) else "f"
        if (not isinstance(act, np.ndarray) or act.shape != want or act.dtype.kind not in kind
                or not act.flags.c_contiguous):
            got = None if not isinstance(act, np.ndarray) else (act.shape, act.dtype)
            raise TypeError(f"{where}: its `actions` must be a C-contiguous "
                            f"{'integer' if kind == 'iu' else 'float'} array of shape {want}, "
                            f"got {got}")

    def merged_kwargs(self, kwargs):
        return spec_kwargs(self.spec, kwargs)

    def configure_envs(self, ids, kwargs):
        kw = self.merged_kwargs(kwargs)
        if self._configurable:
            self.engine.configure(np.asarray(ids, np.int64), dict(kw))
        elif kw != self.kwargs:
            raise ValueError(f"{self.spec.env_id}: the envs of a pool share their kwargs "
                             f"(its pool has no configure(ids, kwargs))")

    def set_max_episode_steps(self, ids, limit):
        self.engine.set_max_episode_steps(np.asarray(ids, np.int64), int(limit))

    def load_actions(self, actions, env_ids=None):
        """Discrete: integers in [0, n) (floats refused, never rounded). Box: shape
        (n,) + the space's shape, float32 or float64, finite; not clipped (the env sees what
        it is given, as gymnasium's envs do)."""
        engine = self.engine
        n = engine.num_envs if env_ids is None else len(env_ids)
        rows = slice(None) if env_ids is None else np.asarray(env_ids, np.int64)
        asp = self.spec.action_space
        if isinstance(asp, gym.spaces.Discrete):
            engine.actions[rows] = check_discrete_actions(actions, int(asp.n), n, env_ids)
            return
        a = np.asarray(actions)
        want = (n,) + tuple(asp.shape)
        if a.shape != want:
            raise ValueError(f"actions must have shape {want}, got {a.shape}")
        if a.dtype not in (np.float32, np.float64):
            raise TypeError(f"actions must be float32 or float64, got {a.dtype}")
        if not np.isfinite(a).all():
            raise ValueError("actions contain NaN or Inf")
        setter = getattr(engine, "set_actions", None)
        if setter is not None:
            setter(rows, a)
        else:
            engine.actions[rows] = a

    def extra_info(self, info, kinds, ids):
        pass
