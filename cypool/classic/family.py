"""Builds a classic-control pool: gymnasium's spaces, kwargs and limits for CartPole-v0/v1,
MountainCar-v0, Pendulum-v1, Acrobot-v1 and MountainCarContinuous-v0.

Exact: the same seeds and actions give gymnasium's observations (float32), rewards (float64),
terminated and truncated, bit for bit, as gymnasium.make_vec(id, n, vectorization_mode=
"sync") (gymnasium's default vector CartPole, CartPoleVectorEnv, is another algorithm: one
stream for all envs and float32 rewards). Reset options (low/high) are not offered: cypool's
reset takes only reset_mask.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import gymnasium as gym

from cypool.errors import check_known_kwargs
from cypool._validate import check_discrete_actions, is_number


@dataclass(frozen=True)
class Spec:
    limit: int                 # gymnasium's registered max_episode_steps
    n_actions: int
    low: tuple
    high: tuple
    defaults: dict
    box_high: float = 0.0      # n_actions 0: the action Box is [-box_high, box_high]


_THETA = 12 * 2 * 3.141592653589793 / 360          # CartPoleEnv.theta_threshold_radians
_CARTPOLE = dict(n_actions=2, low=(-4.8, -np.inf, -_THETA * 2, -np.inf),
                 high=(4.8, np.inf, _THETA * 2, np.inf),
                 defaults=dict(sutton_barto_reward=False))
_ACROBOT = (1.0, 1.0, 1.0, 1.0, 4 * math.pi, 9 * math.pi)   # AcrobotEnv's MAX_VEL_1, _2
SPECS = {
    "CartPole-v0": Spec(limit=200, **_CARTPOLE),
    "CartPole-v1": Spec(limit=500, **_CARTPOLE),
    "MountainCar-v0": Spec(limit=200, n_actions=3, low=(-1.2, -0.07), high=(0.6, 0.07),
                           defaults=dict(goal_velocity=0)),
    "Pendulum-v1": Spec(limit=200, n_actions=0, low=(-1.0, -1.0, -8.0), high=(1.0, 1.0, 8.0),
                        defaults=dict(g=10.0), box_high=2.0),
    "Acrobot-v1": Spec(limit=500, n_actions=3, low=tuple(-h for h in _ACROBOT), high=_ACROBOT,
                       defaults={}),
    "MountainCarContinuous-v0": Spec(limit=999, n_actions=0, low=(-1.2, -0.07),
                                     high=(0.6, 0.07), defaults=dict(goal_velocity=0),
                                     box_high=1.0),
}


def merge_kwargs(env_id, kwargs):
    defaults = SPECS[env_id].defaults
    check_known_kwargs(env_id, kwargs, defaults)
    kw = {**defaults, **kwargs}
    if "sutton_barto_reward" in kw:
        if not isinstance(kw["sutton_barto_reward"], (bool, np.bool_)):
            raise TypeError(f"sutton_barto_reward must be a bool, got "
                            f"{kw['sutton_barto_reward']!r}")
        kw["sutton_barto_reward"] = bool(kw["sutton_barto_reward"])
    for key in ("goal_velocity", "g"):
        if key in kw and not is_number(kw[key]):
            raise TypeError(f"{key} must be a number, got {kw[key]!r}")
    g = kw.get("goal_velocity")
    if isinstance(g, np.floating) and g.dtype not in (np.float32, np.float64):
        # numpy would compare in that dtype (float16, longdouble): not reproduced
        raise TypeError(f"goal_velocity must be a Python number or a numpy float32, float64 "
                        f"or integer, got {type(g).__name__}")
    return kw


class ClassicFamily:
    """Everything the façade needs for one classic-control pool (cypool.families.Family)."""

    def __init__(self, env_id, num_envs, num_threads, max_episode_steps, kwargs,
                 member_kwargs=None):
        self.env_id = env_id
        spec = SPECS[env_id]
        self.kwargs = kw = merge_kwargs(env_id, kwargs)
        if member_kwargs is not None:
            for i, extra in enumerate(member_kwargs):
                if merge_kwargs(env_id, {**kwargs, **extra}) != kw:
                    raise ValueError(f"member_kwargs[{i}]: the envs of a {env_id} pool share "
                                     f"their kwargs ({sorted(kw)})")
        limit = max_episode_steps or 0
        if env_id.startswith("CartPole"):
            from cypool.classic._cartpole import CartPolePool
            self.engine = CartPolePool(num_envs, num_threads, limit, kw["sutton_barto_reward"])
        elif env_id == "MountainCarContinuous-v0":
            from cypool.classic._mountain_car_continuous import MountainCarContinuousPool
            g = kw["goal_velocity"]      # its type decides numpy's comparison (T64, T32, TPY)
            gtype = (1 if isinstance(g, np.float32) else 0) if isinstance(g, np.generic) else 2
            self.engine = MountainCarContinuousPool(num_envs, num_threads, limit, float(g),
                                                    gtype)
        elif env_id == "Acrobot-v1":
            from cypool.classic._acrobot import AcrobotPool
            self.engine = AcrobotPool(num_envs, num_threads, limit)
        elif env_id.startswith("MountainCar"):
            from cypool.classic._mountain_car import MountainCarPool
            self.engine = MountainCarPool(num_envs, num_threads, limit,
                                          float(kw["goal_velocity"]))
        else:
            from cypool.classic._pendulum import PendulumPool
            self.engine = PendulumPool(num_envs, num_threads, limit, float(kw["g"]))
        self.single_observation_space = gym.spaces.Box(
            np.array(spec.low, np.float32), np.array(spec.high, np.float32), dtype=np.float32)
        self.n_actions = spec.n_actions         # 0: a Box of forces (Pendulum, MCC)
        if spec.n_actions:
            self.single_action_space = gym.spaces.Discrete(spec.n_actions)
        else:
            self.single_action_space = gym.spaces.Box(-spec.box_high, spec.box_high, (1,),
                                                      np.float32)
        self.metadata = {"render_modes": [], "render_fps": {"CartPole": 50, "Acrobot": 15}.get(
            env_id.split("-")[0], 30)}
        self.info_layout = []
        self.action_dtype = np.int64 if spec.n_actions else np.float32

    def merged_kwargs(self, kwargs):
        return merge_kwargs(self.env_id, kwargs)

    def configure_envs(self, ids, kwargs):
        if self.merged_kwargs(kwargs) != self.kwargs:
            raise ValueError(f"the envs of a {self.env_id} pool share their kwargs")

    def set_max_episode_steps(self, ids, limit):
        self.engine.set_max_episode_steps(np.asarray(ids, np.int64), int(limit))

    def load_actions(self, actions, env_ids=None):
        """Discrete: gymnasium's envs assert action_space.contains(a), integers in [0, n)
        (Acrobot indexes its torque list unchecked, so -3..-1 pass there; cypool refuses
        them too). Pendulum, MountainCarContinuous: float32 or float64 forces, kept in their
        dtype (numpy computes in the action's dtype); NaN and Inf are refused, and so are
        MountainCarContinuous forces whose square overflows (gymnasium's math.pow raises)."""
        if not self.n_actions:
            return self._load_torques(actions, env_ids)
        n = self.engine.num_envs if env_ids is None else len(env_ids)
        a = check_discrete_actions(actions, self.n_actions, n, env_ids)
        if env_ids is None:
            self.engine.actions[:] = a
        else:
            self.engine.actions[np.asarray(env_ids, np.int64)] = a

    def _load_torques(self, actions, env_ids):
        a = np.asarray(actions)
        n = self.engine.num_envs if env_ids is None else len(env_ids)
        if a.shape != (n, 1):
            raise ValueError(f"actions must have shape ({n}, 1), got {a.shape}")
        if a.dtype not in (np.float32, np.float64):
            raise TypeError(f"actions must be float32 or float64, got {a.dtype}")
        if not np.isfinite(a).all():
            raise ValueError("actions contain NaN or Inf")
        if self.env_id == "MountainCarContinuous-v0":
            with np.errstate(over="ignore"):
                if not np.isfinite(np.square(a, dtype=np.float64)).all():
                    raise ValueError("actions whose square overflows float64 (gymnasium's "
                                     "math.pow(a, 2) raises OverflowError)")
        rows = slice(None) if env_ids is None else np.asarray(env_ids, np.int64)
        self.engine.actions[rows] = a[:, 0]
        self.engine.act_f32[rows] = a.dtype == np.float32

    def extra_info(self, info, kinds, ids):
        pass
