"""PettingZoo's particle worlds (mpe2 1.1.1), as an import swap: ``from
cypool.multiagent.mpe2 import simple_spread_v3`` mirrors ``from mpe2 import
simple_spread_v3``. Each module has ``parallel_env(**kwargs)`` (a PettingZoo
``ParallelEnv``), ``env(**kwargs)`` (the AEC form, through PettingZoo's
``parallel_to_aec``) and ``vec_env(num_envs, num_threads=None, **kwargs)`` (a
:class:`cypool.multiagent.VecEnv`; ``.as_vector_env()`` for SuperSuit's flat layout). The
kwargs are the reference module's, with its defaults."""
from __future__ import annotations

from cypool.multiagent._module import env_module

# mpe2's modules, in its own order; a module is here once its id (mpe2/<module>) is served
MODULES = ("simple_v3", "simple_adversary_v3", "simple_crypto_v3", "simple_push_v3",
           "simple_reference_v3", "simple_speaker_listener_v4", "simple_spread_v3",
           "simple_tag_v3", "simple_world_comm_v3", "simple_formation_v1", "simple_line_v1",
           "collect_treasure_v1")


def _served():
    from cypool.registry import list_envs

    ids = set(list_envs())
    return [m for m in MODULES if f"mpe2/{m}" in ids]


__all__ = _served()
for _name in __all__:
    globals()[_name] = env_module(__name__, _name, f"mpe2/{_name}")
