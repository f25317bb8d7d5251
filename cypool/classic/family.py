"""Builds a classic-control pool: gymnasium's spaces, kwargs and limits for CartPole-v0/v1.

Exact: the same seeds and actions give gymnasium's observations (float32), rewards (float64),
terminated and truncated, bit for bit, as gymnasium.make_vec(id, n, vectorization_mode=
"sync") (gymnasium's default CartPole vector env, CartPoleVectorEnv, is another algorithm:
one stream for all envs and float32 rewards). Reset options (low/high) are not offered:
cypool's reset takes only reset_mask.
"""
from __future__ import annotations

import numpy as np
import gymnasium as gym

from cypool.errors import check_known_kwargs
from cypool.classic._cartpole import CartPolePool, THETA_THRESHOLD_RADIANS

# id -> (gymnasium's time limit, reward threshold)
IDS = {"CartPole-v0": (200, 195.0), "CartPole-v1": (500, 475.0)}
DEFAULTS = dict(sutton_barto_reward=False)


def merge_kwargs(env_id, kwargs):
    check_known_kwargs(env_id, kwargs, DEFAULTS)
    kw = {**DEFAULTS, **kwargs}
    if not isinstance(kw["sutton_barto_reward"], (bool, np.bool_)):
        raise TypeError(f"sutton_barto_reward must be a bool, got {kw['sutton_barto_reward']!r}")
    kw["sutton_barto_reward"] = bool(kw["sutton_barto_reward"])
    return kw


class ClassicFamily:
    """Everything the façade needs for one CartPole pool (cypool.families.Family)."""

    def __init__(self, env_id, num_envs, num_threads, max_episode_steps, kwargs,
                 member_kwargs=None):
        self.env_id = env_id
        self.kwargs = kw = merge_kwargs(env_id, kwargs)
        if member_kwargs is not None:
            for i, extra in enumerate(member_kwargs):
                if merge_kwargs(env_id, {**kwargs, **extra}) != kw:
                    raise ValueError(f"member_kwargs[{i}]: CartPole envs of one pool share "
                                     "their kwargs (sutton_barto_reward)")
        self.engine = CartPolePool(num_envs, num_threads, max_episode_steps or 0,
                                   kw["sutton_barto_reward"])
        high = np.array([2.4 * 2, np.inf, THETA_THRESHOLD_RADIANS * 2, np.inf], np.float32)
        self.single_observation_space = gym.spaces.Box(-high, high, dtype=np.float32)
        self.single_action_space = gym.spaces.Discrete(2)
        self.metadata = {"render_modes": [], "render_fps": 50}
        self.info_layout = []
        self.action_dtype = np.int64

    def merged_kwargs(self, kwargs):
        return merge_kwargs(self.env_id, kwargs)

    def configure_envs(self, ids, kwargs):
        if self.merged_kwargs(kwargs) != self.kwargs:
            raise ValueError("CartPole envs of one pool share their kwargs (sutton_barto_reward)")

    def set_max_episode_steps(self, ids, limit):
        self.engine.set_max_episode_steps(np.asarray(ids, np.int64), int(limit))

    def load_actions(self, actions, env_ids=None):
        """gymnasium's CartPole asserts action_space.contains(a): integers 0 or 1."""
        a = np.asarray(actions)
        n = self.engine.num_envs if env_ids is None else len(env_ids)
        if a.shape != (n,):
            raise ValueError(f"actions must have shape ({n},), got {a.shape}")
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions must be integers 0 or 1, got {a.dtype}")
        bad = (a < 0) | (a > 1)
        if bad.any():
            raise ValueError(f"actions must be 0 or 1; got {a[bad].tolist()}")
        if env_ids is None:
            self.engine.actions[:] = a
        else:
            self.engine.actions[np.asarray(env_ids, np.int64)] = a

    def extra_info(self, info, kinds, ids):
        pass
