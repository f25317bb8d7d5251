"""The registry: which family serves an env id, and the contract each family implements.

A family turns an env id and its kwargs into an engine (an ``Engine`` subclass stepping the
envs in nogil code) plus what the façade needs around it. ``make_vec``, ``make_population``,
gymnasium registration and the Ray backend look families up here instead of branching on
their names. This module names no family: each family folder registers itself (its
``registration.py``), :mod:`cypool.entry` lists the built-in ones, and another family
registers with :func:`register_family`. Envs written on the public env API
(:mod:`cypool.api`, among them cypool's own classic-control envs) get one family per id from
:func:`cypool.api.register_env`.

Version 1 of the contract (``FAMILY_API_VERSION``) is :class:`cypool._core.family.Family`.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from cypool._core.family import Family  # noqa: F401  (the contract, version 1)

FAMILY_API_VERSION = 1


@dataclass(frozen=True)
class FamilyEntry:
    """A registered family.

    name
        Short name (``"mujoco"``, ``"atari"``).
    env_ids
        Returns the ids the family serves (called lazily: a family may need an optional
        package to list them).
    make
        ``make(env_id, num_envs, num_threads, max_episode_steps, kwargs, member_kwargs=None)``
        returns a :class:`Family`; ``member_kwargs`` is one kwargs dict per env, or None.
    default_max_episode_steps
        The truncation limit an id gets when ``max_episode_steps`` is None (None: no limit in
        the engine; the family may keep its own).
    module
        An importable module whose import registers the family (None: the family is built
        in). Processes cypool starts (the Ray backend's actors) import it before making
        envs, so a family registered by a user's package works there too.
    config
        Optional ``config() -> dict``: what the family was built with and runs on, for
        ``cypool.show_config()`` (e.g. the simulator's compiled and loaded versions).
    remote_setup
        Optional ``remote_setup(env_id) -> callable or None``: a picklable no-argument
        callable that a process cypool starts (a Ray actor) runs before it makes ``env_id``
        (e.g. registering a user's task again there).
    spec
        Optional ``spec(env_id) -> FamilySpec``: the spec serving the id, for a family
        described by specs (:func:`spec_of`; cypool.envpool reads its EnvPool names there).
    """

    name: str
    env_ids: Callable[[], list]
    make: Callable[..., Family]
    default_max_episode_steps: Callable[[str], int | None]
    module: str | None = None
    config: Callable[[], dict] | None = None
    remote_setup: Callable[[str], Callable | None] | None = None
    spec: Callable[[str], Any] | None = None


_FAMILIES: dict[str, FamilyEntry] = {}


def register_family(name: str, *, env_ids: Callable[[], list], make: Callable[..., Family],
                    default_max_episode_steps: Callable[[str], int | None] = lambda env_id: None,
                    module: str | None = None, config: Callable[[], dict] | None = None,
                    remote_setup: Callable[[str], Callable | None] | None = None,
                    spec: Callable[[str], Any] | None = None,
                    api_version: int = FAMILY_API_VERSION) -> FamilyEntry:
    """Register a family under ``name``; its ids become known to ``make_vec``,
    ``make_population``, ``list_envs`` and (at ``cypool.registration.register_all``)
    gymnasium's registry. ``module``, ``config``, ``remote_setup``: see
    :class:`FamilyEntry` (``module`` is needed for the Ray backend)."""
    # everything is checked before the family is entered: a failed call registers nothing
    if not isinstance(name, str) or not name:
        raise TypeError("register_family: name must be a non-empty str")
    if not isinstance(api_version, (int, np.integer)) or isinstance(api_version, bool):
        raise TypeError(f"register_family: api_version must be an int, got {api_version!r}")
    if api_version != FAMILY_API_VERSION:
        raise ValueError(f"register_family: family {name!r} implements family API version "
                         f"{api_version}, this cypool implements {FAMILY_API_VERSION}")
    for label, fn in (("env_ids", env_ids), ("make", make),
                      ("default_max_episode_steps", default_max_episode_steps)):
        if not callable(fn):
            raise TypeError(f"register_family: {label} must be callable")
    for label, fn in (("config", config), ("remote_setup", remote_setup), ("spec", spec)):
        if fn is not None and not callable(fn):
            raise TypeError(f"register_family: {label} must be callable or None")
    if module is not None and (not isinstance(module, str) or not module):
        raise TypeError("register_family: module must be a module name (str) or None")
    if name in _FAMILIES:
        raise ValueError(f"register_family: a family named {name!r} is already registered")
    entry = FamilyEntry(name, env_ids, make, default_max_episode_steps, module, config,
                        remote_setup, spec)
    _FAMILIES[name] = entry
    return entry


def unregister_family(name: str) -> None:
    """Remove a family (for tests and plug-ins that unload)."""
    _FAMILIES.pop(name, None)


def _ids(entry: FamilyEntry) -> list:
    try:
        return list(entry.env_ids())
    except ImportError:      # an optional family whose package is missing serves no ids
        return []


_REFUSED: dict[str, str] = {}


def refuse_ids(reasons: dict) -> None:
    """Ids a family knows of and does not serve, ``{env_id: why}``: ``make_vec`` refuses them
    with that reason (a ``ValueError``) instead of calling them unknown."""
    _REFUSED.update(reasons)


def family_for(env_id: str) -> FamilyEntry:
    """The family serving ``env_id`` (a ``ValueError`` with close matches if none does)."""
    for entry in _FAMILIES.values():
        if env_id in _ids(entry):
            return entry
    if env_id in _REFUSED:
        raise ValueError(f"{env_id}: not served: {_REFUSED[env_id]}")
    close = difflib.get_close_matches(env_id, list_envs(), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise ValueError(f"unknown env id {env_id!r}{hint} (cypool.list_envs() lists them; an env "
                     "id of your own package is registered when that package is imported: "
                     "import it first, or use gymnasium's 'pkg:cypool/Id' form)")


def import_family(module: str | None) -> None:
    """In a process cypool started: import the module that registers a family (no-op for
    None, or when it is imported already)."""
    if module is not None:
        import importlib

        importlib.import_module(module)


def spec_of(env_id: str):
    """The FamilySpec serving ``env_id``, or None (an unknown id, or a family that is not
    described by specs)."""
    try:
        entry = family_for(env_id)
    except ValueError:
        return None
    return None if entry.spec is None else entry.spec(env_id)


def specs():
    """``(env_id, FamilySpec)`` of every id served by a spec, in list_envs order."""
    for entry in list(_FAMILIES.values()):
        if entry.spec is not None:
            for env_id in _ids(entry):
                yield env_id, entry.spec(env_id)


def families() -> list[FamilyEntry]:
    """The registered families, in registration order."""
    return list(_FAMILIES.values())


def list_envs() -> list[str]:
    """Every id of every registered family, in registration order."""
    return [env_id for entry in _FAMILIES.values() for env_id in _ids(entry)]
