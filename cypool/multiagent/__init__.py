"""cypool.multiagent: multi-agent envs (PettingZoo's parallel API), one env or a batch.

Version 1 of this API (``API_VERSION``):

- import swaps, one module per env: ``from cypool.multiagent.mpe2 import simple_spread_v3``
  (mpe2's particle worlds), ``from cypool.multiagent import mamujoco_v1`` (MaMuJoCo);
  ``simple_spread_v3.parallel_env(**kwargs)`` is a PettingZoo ``ParallelEnv``,
  ``.env(**kwargs)`` its AEC form, ``.vec_env(num_envs, num_threads=None, **kwargs)`` a
  :class:`VecEnv`;
- :class:`VecEnv`: ``num_envs`` envs stepped at once, dicts of ``(num_envs, ...)`` arrays,
  next-step autoreset, ``reset_mask``, an ``active`` mask per agent;
  ``VecEnv.as_vector_env()``: :class:`FlatVectorEnv`, one row per (env, agent) in
  SuperSuit's layout, for parameter-sharing learners.

See docs/multiagent.md.
"""
from cypool.multiagent._batch import VecEnv
from cypool.multiagent._flat import FlatVectorEnv

API_VERSION = 1

__all__ = ["API_VERSION", "VecEnv", "FlatVectorEnv", "ParallelEnv"]


def __getattr__(name):
    if name == "ParallelEnv":           # imports PettingZoo
        from cypool.multiagent._parallel import ParallelEnv

        return ParallelEnv
    raise AttributeError(f"module 'cypool.multiagent' has no attribute {name!r}")
