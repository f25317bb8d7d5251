"""The registry under its version-1 name: ``cypool.families`` is :mod:`cypool.registry`
(``register_family``, ``unregister_family``, ``families``, ``family_for``, ``list_envs``, the
``Family`` protocol, ``FAMILY_API_VERSION``), kept so that family packages written against it
keep working unchanged."""
from cypool.registry import (FAMILY_API_VERSION, Family, FamilyEntry,  # noqa: F401
                             families, family_for, import_family, list_envs, register_family,
                             unregister_family)
