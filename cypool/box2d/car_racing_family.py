"""CarRacing-v3's family spec (registered by cypool.box2d.registration; light: the pool is
imported at the first make).

kwargs as gymnasium's CarRacing: ``continuous`` (pool scope: it sets the action space),
``domain_randomize`` and ``lap_complete_percent`` (per env, from the env's next reset), and
``verbose`` (False only: the kernels print nothing).
"""
from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np

from cypool.api import EnvPoolNames, FamilySpec, InfoKey, Interval, Kwarg, Options
from cypool.box2d._render import render_car_racing

_MODULE = "cypool.box2d.registration"


def _spaces(kw):
    obs = gym.spaces.Box(low=0, high=255, shape=(96, 96, 3), dtype=np.uint8)
    act = (gym.spaces.Box(np.array([-1, 0, 0]).astype(np.float32),
                          np.array([+1, +1, +1]).astype(np.float32))
           if kw["continuous"] else gym.spaces.Discrete(5))
    return obs, act


# lap_complete_percent: any finite number (outside (0, 1] a warning, from _warn)
_PERCENT = Interval("number")
_VERBOSE = Options((False,), note="gymnasium's verbose prints track-generation messages; "
                   "cypool's kernels print nothing")


def _warn(kw):
    """A warning for a lap_complete_percent outside (0, 1] (the kinds check the values)."""
    p = kw["lap_complete_percent"]
    if not 0.0 < p <= 1.0:
        warnings.warn(f"CarRacing: lap_complete_percent={p} is outside (0, 1]: "
                      + ("a lap never completes by it (only by visiting every tile)" if p > 1
                         else "the first step ends the episode, as in gymnasium"), stacklevel=2)


def _extra_info(fam, info, kinds, ids):
    """gymnasium's info["lap_finished"] (bool) only on the steps that ended an episode: the
    kernel's column is 0 (absent), 1 (False) or 2 (True)."""
    v = info.pop("lap_finished", None)
    mask = info.pop("_lap_finished", None)
    if v is None:
        return
    present = mask & (v > 0)
    if present.any():
        info["lap_finished"] = v == 2
        info["_lap_finished"] = present


def car_racing_spec(env_id, envpool_ids):
    return FamilySpec(
        env_id, "cypool.box2d._car_racing:CarRacingPool", *_spaces({"continuous": True}),
        kwargs={"continuous": Kwarg(True, scope="pool"), "domain_randomize": Kwarg(False),
                "lap_complete_percent": Kwarg(0.95, kind=_PERCENT),
                "verbose": Kwarg(False, kind=_VERBOSE)},
        max_episode_steps=1000, check_kwargs=_warn, spaces=_spaces,
        info=(InfoKey("lap_finished", np.float64, on_reset=False),),
        extra_info=_extra_info, render=render_car_racing, render_modes=("rgb_array",),
        render_fps=50, module=_MODULE,
        # EnvPool's config of CarRacing-v2/-v3: its lap_complete_percent is gymnasium's
        # (EnvPool reports its float32 default, 0.949999988079071; cypool runs gymnasium's 0.95)
        envpool=EnvPoolNames(ids=envpool_ids,
                             config=dict(max_episode_steps=1000, reward_threshold=900.0,
                                         lap_complete_percent=0.95),
                             kwargs=dict(lap_complete_percent="lap_complete_percent")))
