"""The import-swap modules: one module object per multi-agent env id, with PettingZoo's
module functions (``parallel_env``, ``env``) and the batch (``vec_env``)."""
from __future__ import annotations

import sys
import types


def env_module(package: str, name: str, env_id: str) -> types.ModuleType:
    """The module ``<package>.<name>`` for ``env_id``, also importable by its dotted name."""
    from cypool.multiagent._batch import VecEnv

    mod = types.ModuleType(f"{package}.{name}", f"cypool's {env_id}: parallel_env(**kwargs), "
                           "env(**kwargs) and vec_env(num_envs, num_threads=None, **kwargs).")

    def parallel_env(**kwargs):
        """A PettingZoo ParallelEnv (kwargs: the reference module's)."""
        from cypool.multiagent._parallel import ParallelEnv

        return ParallelEnv(env_id, **kwargs)

    def env(**kwargs):
        """The AEC form of :func:`parallel_env`, through PettingZoo's parallel_to_aec."""
        from pettingzoo.utils.conversions import parallel_to_aec

        return parallel_to_aec(parallel_env(**kwargs))

    def vec_env(num_envs: int, num_threads: int | None = None, **kwargs):
        """``num_envs`` envs stepped at once (:class:`cypool.multiagent.VecEnv`)."""
        return VecEnv(env_id, num_envs, num_threads=num_threads, **kwargs)

    for fn in (parallel_env, env, vec_env):
        fn.__module__ = mod.__name__
        fn.__qualname__ = fn.__name__
        setattr(mod, fn.__name__, fn)
    mod.ENV_ID = env_id
    sys.modules[mod.__name__] = mod
    return mod
