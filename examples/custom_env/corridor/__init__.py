"""Corridor-v0: an env of this package, stepped by cypool (cypool.make_vec("Corridor-v0", n)
after ``import corridor``)."""
import gymnasium as gym
import numpy as np

import cypool.api

__version__ = "0.1.0"


def _check(kw):
    if kw["size"] < 2:
        raise ValueError(f"Corridor-v0: size must be >= 2, got {kw['size']}")
    if not 0.0 <= kw["slip"] < 1.0:
        raise ValueError(f"Corridor-v0: slip must be in [0, 1), got {kw['slip']}")


cypool.api.register_env(
    "Corridor-v0", "corridor._corridor:CorridorPool",
    observation_space=gym.spaces.Box(np.float32(0), np.float32(1), (2,), np.float32),
    action_space=gym.spaces.Discrete(2),
    kwargs=dict(size=10, slip=0.1, step_cost=0.01), check_kwargs=_check,
    info_keys={"distance": np.int64}, max_episode_steps=100, module="corridor")
