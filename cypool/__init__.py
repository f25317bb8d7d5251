"""cypool: vectorized RL environments stepped by Cython nogil loops over OpenMP threads."""
from __future__ import annotations

from cypool._version import __version__
from cypool.errors import ClosedEnvError, CypoolError, EngineError
from cypool.vector import VectorEnv
from cypool.registration import list_envs, register_all as _register_all
from cypool.config import get_include, show_config
from cypool.make import make_vec
from cypool.population import PopulationEnv, make_population
from cypool.single import SingleEnv
import cypool.entry  # noqa: E402,F401  (registers the built-in families)

__all__ = ["make_vec", "make_population", "PopulationEnv", "SingleEnv", "list_envs",
           "show_config", "get_include",
           "VectorEnv", "EngineError", "ClosedEnvError", "CypoolError", "__version__"]

_register_all()
