"""cypool's public env API, version 1: an env written in Cython in your own package, stepped
by cypool's engine like the built-in registry.

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
    arithmetic follows the action's dtype, as numpy's does. Batches holding NaN or inf are
    refused before it is called, unless the pool class sets ``takes_nonfinite_actions =
    True`` (its env defines them, as gymnasium's LunarLanderContinuous, which clips them):
    then ``set_actions`` gets them and raises ValueError, writing nothing, for those it
    does not take.
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
``state_arrays`` (class attribute, optional; beside version 1, which it leaves unchanged)
    instead of the three hooks: the names of the pool's per-env arrays that hold its envs'
    own state (numeric numpy arrays with one row per env, readable from Python: ``cdef
    readonly object positions``); row i of each is saved and restored as env i's. Each
    name must give the pool's own buffer, the same memory at every read (the array the
    kernels write): a property returning a copy would take set_state's writes into a
    temporary, and is refused with a TypeError naming it when the pool is made.
    ``state_arrays = ()`` declares that the engine's part (obs rows, random stream,
    counters) is all of the env's state. A pool that defines neither the hooks nor
    ``state_arrays`` builds and runs as before, but its get_state/set_state, pickling and
    ``copy.deepcopy`` raise TypeError naming the pool (they would lose any state it keeps).

Versioning: ``API_VERSION`` changes when any of the above, or ``cypool/api.pxd``, changes
incompatibly; ``register_env(api_version=...)`` refuses a mismatch, and a pool compiled
against another ``Engine`` layout fails at import (Cython checks the base type's size).
"""
from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping
from typing import Callable

import gymnasium as gym
import numpy as np

from cypool import registry
from cypool._core.spec import (Built, EnvPoolNames, FamilySpec, InfoKey, Kwarg, SpecFamily,
                               check_pool_class, check_spec, complete_kwargs)
from cypool._validate import Interval, Options, check_int, is_int
from cypool._core._engine import (state_bool, state_bytes, state_dict,  # noqa: F401
                                  state_float, state_int, state_seq)

__all__ = ["API_VERSION", "register_env", "register_spec", "unregister_env", "FamilySpec",
           "Kwarg", "Interval", "Options", "InfoKey", "EnvPoolNames", "Built",
           "registered_spec", "envpool_ids", "extension_kwargs", "cython_directives",
           "get_include", "state_int", "state_float", "state_bool", "state_bytes", "state_seq",
           "state_dict"]

API_VERSION = 1

# the specs registered here, by cypool id (register_env's too)
_SPECS: dict[str, FamilySpec] = {}


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


def _family_name(env_id):
    return f"env:{env_id}"


def register_env(env_id: str, pool, *, observation_space: gym.Space, action_space: gym.Space,
                 kwargs: dict | None = None, max_episode_steps: int | None = None,
                 info_keys: dict | None = None,
                 check_kwargs: Callable[[dict], dict | None] | None = None,
                 render_fps: int | None = None, module: str | None = None,
                 api_version: int = API_VERSION, envpool: EnvPoolNames | None = None,
                 replace: bool = False) -> None:
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
    envpool : EnvPoolNames or None
        The env's EnvPool 1.2.5 name(s) and options, for :mod:`cypool.envpool` (None: not
        served there). Optional: pools written for version 1 without it are unchanged.
    replace : bool
        Registering an id again with equal arguments is a no-op (a package that registers at
        import can be reloaded); different ones raise ``ValueError`` ("already served")
        unless ``replace=True``, which replaces an earlier register_env/register_spec
        registration of the id.
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
    if not isinstance(replace, bool):
        raise TypeError(f"register_env: replace must be a bool, got {replace!r}")
    if env_id in registry.list_envs() and env_id not in _SPECS:
        raise ValueError(f"register_env: {env_id!r} is already served (by another family)")
    if isinstance(pool, str):
        if ":" not in pool:
            raise TypeError("register_env: pool must be an Engine subclass or 'module:Class', "
                            f"got {pool!r}")
    else:
        check_pool_class(pool, "register_env")
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
    register_spec(FamilySpec(env_id, pool, observation_space, action_space,
                             {k: Kwarg(v) for k, v in defaults.items()}, max_episode_steps,
                             tuple(InfoKey(k, d) for k, d in info.items()), check_kwargs,
                             render_fps=render_fps, module=module, envpool=envpool),
                  replace=replace)


def _same(a, b) -> bool:
    """Equal registration arguments, as a reloaded module makes them again: functions (and
    classes) of the same module and name with equal code count as the same."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, type):
        return (a.__module__, a.__qualname__) == (b.__module__, b.__qualname__)
    if isinstance(a, functools.partial):
        return (_same(a.func, b.func) and _same(a.args, b.args)
                and _same(a.keywords, b.keywords))
    code = getattr(a, "__code__", None)
    if code is not None:
        return ((a.__module__, a.__qualname__) == (b.__module__, b.__qualname__)
                and code == b.__code__ and _same(a.__defaults__, b.__defaults__)
                and _same(a.__kwdefaults__, b.__kwdefaults__))
    if dataclasses.is_dataclass(a):
        return all(_same(getattr(a, f.name), getattr(b, f.name))
                   for f in dataclasses.fields(a))
    if isinstance(a, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:                     # e.g. arrays compared elementwise
        return False


def register_spec(spec: FamilySpec, *, replace: bool = False) -> None:
    """Serve ``spec.env_id`` as ``spec`` says (:class:`FamilySpec`: kwargs with kinds and
    scopes, the kinds' bounds included (:class:`Interval`, :class:`Options`: ``Kwarg(10,
    kind=Interval("int", 1, 1000))``), Box/Discrete/MultiDiscrete spaces and Tuple/Dict
    observations, info keys of several columns and gymnasium's dtypes, spaces from kwargs, a
    render hook). The spec and
    its default kwargs are checked before anything is registered; a registration that fails
    after that (gymnasium's own checks) is taken back: all or nothing. The same spec again
    is a no-op; another one for a served id raises ValueError unless ``replace=True``
    (see :func:`register_env`)."""
    from cypool.registration import check_env_id, register_id

    if not isinstance(spec, FamilySpec):
        raise TypeError(f"register_spec: expected a cypool.api.FamilySpec, got {spec!r}")
    if not isinstance(replace, bool):
        raise TypeError(f"register_spec: replace must be a bool, got {replace!r}")
    env_id = spec.env_id
    check_env_id(env_id, "register_spec")
    previous = _SPECS.get(env_id)
    if previous is not None and _same(previous, spec):
        register_id(env_id)            # the same registration again: nothing changes
        return
    if env_id in registry.list_envs() and not (replace and previous is not None):
        hint = "; pass replace=True to replace it" if previous is not None else ""
        raise ValueError(f"register_env: {env_id!r} is already served{hint}")
    check_spec(spec)
    if spec.max_episode_steps is not None:
        check_int("max_episode_steps", spec.max_episode_steps, 1, 2**63)
    if spec.module is not None and (not isinstance(spec.module, str) or not spec.module):
        raise TypeError(f"register_spec: module must be a module name (str) or None, got "
                        f"{spec.module!r}")
    complete_kwargs(spec, {})         # the defaults themselves must pass
    if previous is not None:          # replace=True: the old one goes, and comes back on failure
        unregister_env(env_id)
        try:
            _register_checked(spec)
        except BaseException:
            _register_checked(previous)
            raise
    else:
        _register_checked(spec)


def _register_checked(spec: FamilySpec) -> None:
    """Enter a checked spec in the registry and gymnasium's (taken back if either refuses)."""
    from cypool.registration import register_id

    env_id = spec.env_id
    _check_envpool_ids(spec)
    registry.register_family(_family_name(env_id), env_ids=lambda: [env_id],
                             make=functools.partial(SpecFamily, spec),
                             default_max_episode_steps=lambda _id: spec.max_episode_steps,
                             module=spec.module, spec=lambda _id: spec)
    try:
        register_id(env_id)
    except BaseException as exc:
        registry.unregister_family(_family_name(env_id))
        if isinstance(exc, gym.error.Error):
            raise ValueError(f"register_env: gymnasium refuses cypool/{env_id}: {exc}") from exc
        raise
    _SPECS[env_id] = spec


def _check_envpool_ids(spec: FamilySpec) -> None:
    """An EnvPool id names one env: not another spec's EnvPool id, nor another env's
    cypool id (ValueError)."""
    claimed = envpool_ids()
    if spec.env_id in claimed:
        raise ValueError(f"register_spec: {spec.env_id!r} is already the EnvPool name of "
                         f"cypool's {claimed[spec.env_id].env_id}")
    if spec.envpool is None:
        return
    served = set(registry.list_envs())
    for eid in spec.envpool.ids:
        if eid in claimed:
            raise ValueError(f"register_spec: {spec.env_id}: EnvPool id {eid!r} already names "
                             f"cypool's {claimed[eid].env_id}")
        if eid != spec.env_id and eid in served:
            raise ValueError(f"register_spec: {spec.env_id}: EnvPool id {eid!r} is another "
                             "cypool env's id")


def registered_spec(env_id: str) -> FamilySpec | None:
    """The spec ``env_id`` was registered with (register_env or register_spec), or None."""
    return _SPECS.get(env_id)


def envpool_ids() -> dict[str, FamilySpec]:
    """``{EnvPool id: spec}`` for every registered spec with :class:`EnvPoolNames`, in
    registration order (what :mod:`cypool.envpool` serves besides Atari and MuJoCo)."""
    return {eid: spec for spec in _SPECS.values() if spec.envpool is not None
            for eid in spec.envpool.ids}


def unregister_env(env_id: str) -> None:
    """Forget an id registered with register_env (also in gymnasium's registry)."""
    registry.unregister_family(_family_name(env_id))
    gym.registry.pop(f"cypool/{env_id}", None)
    _SPECS.pop(env_id, None)
