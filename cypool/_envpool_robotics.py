"""EnvPool 1.2.5's names of its Gymnasium-Robotics ids, for :mod:`cypool.envpool` (the
robotics family's specs name none; this module reads cypool's robotics ids through the
registry).

The dynamics are gymnasium-robotics' (cypool's robotics family, seed-exact with it), the
layout EnvPool's (measured with the installed EnvPool): goal observations a Dict in EnvPool's
key order ``observation``, ``achieved_goal``, ``desired_goal`` (float64); float32 actions and
rewards; info ``is_success`` (Fetch, Hand; ``success`` for Adroit and PointMaze) as float64 and
``distance`` (float64): ``|achieved_goal - desired_goal|`` for Fetch, HandReach and PointMaze;
for HandManipulate and Adroit the family's own (FamilySpec.envpool_info,
cypool/robotics/envpool_info.py: ``d_pos + d_rot``; each Adroit task's goal distance, 0 after a
reset).
EnvPool's older ids run gymnasium-robotics' current version: ``Fetch*-v1`` is ``Fetch*-v4``,
``HandReach*-v0`` is ``HandReach*-v3``, ``HandManipulate*-v0`` is ``HandManipulate*-v1``
(EnvPool gives the pairs one config). Options: ``reward_type`` (and PointMaze's
``continuing_task``, ``reset_target``) are gymnasium-robotics' kwargs; ``max_episode_steps``
the time limit; every other one (model files, dimensions, ranges) at the id's default only.
"""
from __future__ import annotations

import re
from collections import OrderedDict
from functools import lru_cache

import numpy as np
import gymnasium as gym

from cypool import _envpool_tables as T
from cypool._core.spec import EnvPoolNames

_GOAL_KEYS = ("observation", "achieved_goal", "desired_goal")


def _goal_obs(batch):
    return OrderedDict((k, batch[k]) for k in _GOAL_KEYS)


def _goal_space(pool_space):
    return gym.spaces.Dict(OrderedDict((k, pool_space[k]) for k in _GOAL_KEYS))


def _distance(engine, ids):
    """|achieved_goal - desired_goal| of the rows ``ids`` (the engine's outputs: ``obs`` is
    the achieved goal's leaf)."""
    out = engine.state_outputs
    d = np.asarray(out["obs"])[ids] - np.asarray(out["obs.desired_goal"])[ids]
    return np.linalg.norm(d, axis=-1)


def _cypool_id(eid):
    """The gymnasium-robotics id cypool serves for EnvPool's id."""
    if re.match(r"Fetch\w+-v1$", eid):
        return eid[:-2] + "v4"
    if re.match(r"HandReach\w*-v0$", eid):
        return eid[:-2] + "v3"
    if re.match(r"HandManipulate\w*-v0$", eid):
        return eid[:-2] + "v1"
    return eid


_GROUPS = (  # (prefix, base, table, family, success key, extra kwargs)
    ("Fetch", T.FETCH_BASE, T.FETCH, "Fetch", "is_success", ()),
    ("HandReach", T.HAND_BASE, T.HAND, "Hand", "is_success", ()),
    ("HandManipulate", T.HAND_BASE, T.HAND, "Hand", "is_success", ()),
    ("AdroitHand", T.ADROIT_BASE, T.ADROIT, "Adroit", "success", ()),
    ("PointMaze_", T.MAZE_BASE, T.MAZE, "PointMaze", "success",
     ("continuing_task", "reset_target")),
)


def _ids():
    """EnvPool's ids of the tables (its order: sparse, dense; the older version first)."""
    for prefix, base, table, *rest in _GROUPS:
        for key in table:
            if not key.startswith(prefix):
                continue
            if prefix == "AdroitHand":
                variants = ((key, "dense"), (key + "Sparse", "sparse"))
            else:
                variants = ((key, "sparse"), (key + "Dense", "dense"))
            vers = {"Fetch": ("-v1", "-v4"), "HandReach": ("-v0", "-v3"),
                    "HandManipulate": ("-v0", "-v1")}.get(prefix, ("-v1",) if
                                                            prefix == "AdroitHand" else ("-v3",))
            for name, rt in variants:
                for v in vers:
                    yield name + v, {**base, **table[key], "reward_type": rt}, rest


@lru_cache(maxsize=None)
def served() -> dict:
    """``{EnvPool id: (cypool id, EnvPoolNames, space hook)}``."""
    out = {}
    for eid, cfg, (family, success, extra) in _ids():
        kwargs = {"reward_type": "reward_type", **{k: k for k in extra}}
        # (the Shadow Hand's and Adroit's distance: the family's spec, envpool_info)
        info = {success: (success, np.float64), "distance": (_distance, np.float64)}
        goal = not eid.startswith("Adroit")
        names = EnvPoolNames(ids=(eid,), config=cfg, kwargs=kwargs, info=info,
                             obs=_goal_obs if goal else None,
                             family=f"GymnasiumRobotics{family}")
        out[eid] = (_cypool_id(eid), names, _goal_space if goal else None)
    return out


def refused() -> dict:
    return {eid: (f"{eid}: cypool does not run this Gymnasium-Robotics env under EnvPool's "
                  f"API (cypool.list_envs() lists cypool's robotics ids for cypool.make_vec)")
            for eid in T.ROBOTICS_UNSERVED}
