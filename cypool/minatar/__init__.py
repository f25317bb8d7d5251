"""MinAtar 1.0.15's games (``MinAtar/{Asterix,Breakout,Freeway,Seaquest,SpaceInvaders}-v0``
and ``-v1``, the minimal action set) as one nogil pool, seed for seed the envs
``minatar.gym.register_envs()`` registers; see docs/minatar.md. The ids are registered by
:mod:`cypool.minatar.registration`."""
