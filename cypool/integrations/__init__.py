"""Adapters from cypool's gymnasium ``VectorEnv`` to other RL libraries' interfaces.

Each adapter lives in its own submodule and imports its library only when that submodule is
imported, so ``import cypool`` never needs them:

- :mod:`cypool.integrations.sb3`: :func:`~cypool.integrations.sb3.to_sb3`, a Stable-Baselines3
  ``VecEnv`` (``pip install "cypool[sb3]"``).
- :mod:`cypool.integrations.tianshou`: :func:`~cypool.integrations.tianshou.to_tianshou`, the
  ``BaseVectorEnv`` surface Tianshou's collectors use (imports nothing from Tianshou).

gymnasium's own vector wrappers (``gymnasium.wrappers.vector``) need no adapter: a cypool env is
a real ``gymnasium.vector.VectorEnv``.
"""

__all__ = ["sb3", "tianshou"]
