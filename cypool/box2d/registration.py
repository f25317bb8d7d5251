"""Registers the Box2D ids (imported by cypool.entry): one FamilySpec each. Light: the pools
are imported at the first make of their id.

kwargs as gymnasium's LunarLander: ``continuous`` (pool scope: it sets the action space),
``gravity`` (in (-12, 0), gymnasium's assertion, here a ValueError), ``enable_wind``,
``wind_power`` and ``turbulence_power`` (finite; outside gymnasium's recommended ranges a
warning, as gymnasium's). Each but ``continuous`` may differ per env.
"""
from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np

from cypool.api import EnvPoolNames, FamilySpec, Interval, Kwarg, register_spec
from cypool.box2d._render import render_bipedal_walker, render_lunar_lander
from cypool.box2d.car_racing_family import car_racing_spec

_MODULE = "cypool.box2d.registration"

_LL_LOW = np.array([-2.5, -2.5, -10.0, -10.0, -2 * math.pi, -10.0, -0.0, -0.0]).astype(np.float32)
_LL_HIGH = np.array([2.5, 2.5, 10.0, 10.0, 2 * math.pi, 10.0, 1.0, 1.0]).astype(np.float32)


def _ll_spaces(kw):
    obs = gym.spaces.Box(_LL_LOW, _LL_HIGH)
    act = (gym.spaces.Box(-1, +1, (2,), dtype=np.float32) if kw["continuous"]
           else gym.spaces.Discrete(4))
    return obs, act


# gravity in (-12, 0): gymnasium asserts it; the forces finite (bounds are only recommended)
_GRAVITY = Interval("number", -12.0, 0.0, closed="neither", note="gymnasium asserts it")
_FORCE = Interval("number", note="a NaN or infinite force fails Box2D's assertions in "
                  "gymnasium")


def _warn_lunar_lander(kw):
    """gymnasium's warnings for forces outside its recommended ranges (the kinds check the
    values)."""
    for name, high in (("wind_power", 20.0), ("turbulence_power", 2.0)):
        v = kw[name]
        if 0.0 > v or v > high:
            warnings.warn(f"LunarLander: {name} value is recommended to be between 0.0 and "
                          f"{high}, (current value: {v})", stacklevel=2)


def _lunar_lander(env_id, continuous, envpool_ids):
    return FamilySpec(
        env_id, "cypool.box2d._lunar_lander:LunarLanderPool",
        *_ll_spaces({"continuous": continuous}),
        kwargs={"continuous": Kwarg(continuous, scope="pool"),
                "gravity": Kwarg(-10.0, kind=_GRAVITY), "enable_wind": Kwarg(False),
                "wind_power": Kwarg(15.0, kind=_FORCE),
                "turbulence_power": Kwarg(1.5, kind=_FORCE)},
        max_episode_steps=1000, check_kwargs=_warn_lunar_lander, spaces=_ll_spaces,
        render=render_lunar_lander, render_modes=("rgb_array",), render_fps=50, module=_MODULE,
        envpool=EnvPoolNames(ids=envpool_ids, config=dict(max_episode_steps=1000,
                                                          reward_threshold=200.0)))


_BW_LOW = np.array([-math.pi, -5.0, -5.0, -5.0, -math.pi, -5.0, -math.pi, -5.0, -0.0, -math.pi,
                    -5.0, -math.pi, -5.0, -0.0] + [-1.0] * 10).astype(np.float32)
_BW_HIGH = np.array([math.pi, 5.0, 5.0, 5.0, math.pi, 5.0, math.pi, 5.0, 5.0, math.pi, 5.0,
                     math.pi, 5.0, 5.0] + [1.0] * 10).astype(np.float32)


def _bipedal_walker(env_id, hardcore, limit, envpool_ids):
    return FamilySpec(
        env_id, "cypool.box2d._bipedal_walker:BipedalWalkerPool",
        gym.spaces.Box(_BW_LOW, _BW_HIGH),
        gym.spaces.Box(np.array([-1, -1, -1, -1]).astype(np.float32),
                       np.array([1, 1, 1, 1]).astype(np.float32)),
        kwargs={"hardcore": Kwarg(hardcore)}, max_episode_steps=limit, render_fps=50,
        render=render_bipedal_walker, render_modes=("rgb_array",), module=_MODULE,
        envpool=EnvPoolNames(ids=envpool_ids, config=dict(max_episode_steps=limit,
                                                          reward_threshold=300.0,
                                                          hardcore=hardcore),
                             kwargs=dict(hardcore="hardcore")))


SPECS = (
    _lunar_lander("LunarLander-v3", False, ("LunarLander-v2", "LunarLander-v3")),
    _lunar_lander("LunarLanderContinuous-v3", True,
                  ("LunarLanderContinuous-v2", "LunarLanderContinuous-v3")),
    _bipedal_walker("BipedalWalker-v3", False, 1600, ("BipedalWalker-v3",)),
    _bipedal_walker("BipedalWalkerHardcore-v3", True, 2000, ("BipedalWalkerHardcore-v3",)),
    car_racing_spec("CarRacing-v3", ("CarRacing-v2", "CarRacing-v3")),
)

ENV_IDS = tuple(s.env_id for s in SPECS)

for _spec in SPECS:
    register_spec(_spec)
del _spec
