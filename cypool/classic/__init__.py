"""Classic control: gymnasium's classic-control envs as nogil kernels (CartPole-v0/v1,
MountainCar-v0, Pendulum-v1, Acrobot-v1, MountainCarContinuous-v0), built only on cypool's
public env API (:mod:`cypool.api`): the pools cimport ``cypool.api`` and this module
registers them with :func:`cypool.api.register_spec`, as a user's package would.

Exact: the same seeds and actions give gymnasium's observations (float32), rewards (float64),
terminated and truncated, bit for bit, as gymnasium.make_vec(id, n, vectorization_mode=
"sync") (gymnasium's default vector CartPole, CartPoleVectorEnv, is another algorithm: one
stream for all envs and float32 rewards). Reset options (low/high) are not offered: cypool's
reset takes only reset_mask. Every kwarg may differ per env (populations' member_kwargs,
set_attr).

Rendering: ``render_mode="rgb_array"`` gives gymnasium's frames bit for bit: ``render()``
returns one ``(H, W, 3)`` uint8 frame per env (or per id of ``env_ids``), drawn by the pool's
one gymnasium env of its id fed each env's state (:mod:`cypool.classic._render`, with the
dtypes gymnasium's state has and Pendulum's last action). It needs pygame
(``pip install "cypool[classic-control]"``; without it ``render()`` raises
``gymnasium.error.DependencyNotInstalled``); no display. ``"human"`` is not offered.

Each id also carries its EnvPool 1.2.5 names (:class:`cypool.api.EnvPoolNames`), which
:mod:`cypool.envpool` serves: EnvPool's ids (with its ``phys2d/`` aliases of CartPole), its
options and defaults (``max_episode_steps``, ``reward_threshold``; Pendulum's ``version``,
accepted at 1 only) and Acrobot's ``info["state"]`` (the two angles, float32).

Importing this module imports no extension: each pool is named ``"module:Class"`` and loaded
at the first make_vec of its id.
"""
from __future__ import annotations

import importlib
import math
from functools import partial

import gymnasium as gym
import numpy as np

from cypool.api import EnvPoolNames, FamilySpec, Kwarg, register_spec

__all__ = ["ENV_IDS"]

_MODULE = "cypool.classic"


def _box(low, high):
    return gym.spaces.Box(np.array(low, np.float32), np.array(high, np.float32),
                          dtype=np.float32)


def _check_goal_velocity(kw):
    """goal_velocity is gymnasium's int 0 by default, and its type decides the type numpy
    compares the car's velocity in: a Python number, a numpy float32, float64 or integer
    (its kind, "real", takes any number as given; the widths are checked here). None (the
    registered default) is gymnasium's 0."""
    g = kw["goal_velocity"]
    if g is None:
        return {**kw, "goal_velocity": 0}
    if isinstance(g, np.floating) and g.dtype not in (np.float32, np.float64):
        # numpy would compare in that dtype (float16, longdouble): not reproduced
        raise TypeError(f"goal_velocity must be a Python number or a numpy float32, float64 "
                        f"or integer, got {type(g).__name__}")
    return None


# a number kept as given (numpy compares in its type); None: gymnasium's 0
_GOAL_VELOCITY = dict(goal_velocity=Kwarg(None, kind="real"))
_THETA = 12 * 2 * 3.141592653589793 / 360          # CartPoleEnv.theta_threshold_radians
_CARTPOLE = dict(observation_space=_box((-4.8, -np.inf, -_THETA * 2, -np.inf),
                                        (4.8, np.inf, _THETA * 2, np.inf)),
                 action_space=gym.spaces.Discrete(2),
                 kwargs=dict(sutton_barto_reward=False), render_fps=50)
_MOUNTAIN_CAR_OBS = ((-1.2, -0.07), (0.6, 0.07))
_ACROBOT = (1.0, 1.0, 1.0, 1.0, 4 * math.pi, 9 * math.pi)   # AcrobotEnv's MAX_VEL_1, _2

def _acrobot_angles(engine, ids):
    """EnvPool's Acrobot info["state"]: theta1, theta2 of envs ids."""
    return engine.states[ids, :2]


def _envpool(*ids, info=None, refused=None, **config):
    return EnvPoolNames(ids=ids, config=config, info=info or {}, refused=refused or {})


# EnvPool 1.2.5's Pendulum-v0 ids, which no cypool env runs (refused by Pendulum-v1's names)
_PENDULUM_V0 = ("{} is not served: EnvPool's Pendulum-v0 runs gym 0.21's Pendulum "
                "(version=0), which gymnasium and cypool do not have; use Pendulum-v1")


def _render(env_id, engine, ids, mode, kwargs):
    """rgb_array frames: gymnasium's render() fed each env's state (cypool.classic._render,
    imported at the first render as the pools are at the first make)."""
    return importlib.import_module("cypool.classic._render").render(env_id, engine, ids,
                                                                     mode, kwargs)


_ENVS = {
    "CartPole-v0": dict(pool="cypool.classic._cartpole:CartPolePool", max_episode_steps=200,
                        envpool=_envpool("CartPole-v0", "phys2d/CartPole-v0",
                                         max_episode_steps=200, reward_threshold=195.0),
                        **_CARTPOLE),
    "CartPole-v1": dict(pool="cypool.classic._cartpole:CartPolePool", max_episode_steps=500,
                        envpool=_envpool("CartPole-v1", "phys2d/CartPole-v1",
                                         max_episode_steps=500, reward_threshold=475.0),
                        **_CARTPOLE),
    "MountainCar-v0": dict(
        pool="cypool.classic._mountain_car:MountainCarPool", max_episode_steps=200,
        observation_space=_box(*_MOUNTAIN_CAR_OBS), action_space=gym.spaces.Discrete(3),
        kwargs=_GOAL_VELOCITY, check_kwargs=_check_goal_velocity, render_fps=30,
        envpool=_envpool("MountainCar-v0", max_episode_steps=200, reward_threshold=-110.0)),
    "Pendulum-v1": dict(
        pool="cypool.classic._pendulum:PendulumPool", max_episode_steps=200,
        observation_space=_box((-1.0, -1.0, -8.0), (1.0, 1.0, 8.0)),
        action_space=gym.spaces.Box(-2.0, 2.0, (1,), np.float32),
        kwargs=dict(g=10.0), render_fps=30,
        envpool=_envpool("Pendulum-v1", max_episode_steps=200, version=1,
                         refused={i: _PENDULUM_V0.format(i)
                                  for i in ("Pendulum-v0", "phys2d/Pendulum-v0")})),
    "Acrobot-v1": dict(
        pool="cypool.classic._acrobot:AcrobotPool", max_episode_steps=500,
        observation_space=_box(tuple(-h for h in _ACROBOT), _ACROBOT),
        action_space=gym.spaces.Discrete(3), kwargs={}, render_fps=15,
        envpool=_envpool("Acrobot-v1", max_episode_steps=500, reward_threshold=-100.0,
                         info={"state": (_acrobot_angles, np.float32)})),
    "MountainCarContinuous-v0": dict(
        pool="cypool.classic._mountain_car_continuous:MountainCarContinuousPool",
        max_episode_steps=999, observation_space=_box(*_MOUNTAIN_CAR_OBS),
        action_space=gym.spaces.Box(-1.0, 1.0, (1,), np.float32),
        kwargs=_GOAL_VELOCITY, check_kwargs=_check_goal_velocity, render_fps=30,
        envpool=_envpool("MountainCarContinuous-v0", max_episode_steps=999,
                         reward_threshold=90.0)),
}

ENV_IDS = tuple(_ENVS)

for _env_id, _spec in _ENVS.items():
    _spec = dict(_spec)
    register_spec(FamilySpec(
        _env_id, _spec.pop("pool"), _spec.pop("observation_space"), _spec.pop("action_space"),
        kwargs={k: v if isinstance(v, Kwarg) else Kwarg(v)
                for k, v in _spec.pop("kwargs").items()},
        render=partial(_render, _env_id), render_modes=("rgb_array",), module=_MODULE,
        **_spec))
del _env_id, _spec
