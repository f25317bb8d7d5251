"""EnvPool 1.2.5's names of its Gymnasium-Robotics ids, for :mod:`cypool.envpool` (the
robotics family's specs name none; this module reads cypool's robotics ids through the
registry).

The dynamics are gymnasium-robotics' (cypool's robotics family, seed-exact with it), the
layout EnvPool's (measured with the installed EnvPool): goal observations a Dict in EnvPool's
key order ``observation``, ``achieved_goal``, ``desired_goal`` (float64); float32 actions and
rewards; info ``is_success`` (Fetch, Hand; ``success`` for Adroit and PointMaze) as float64 and
``distance`` (float64): ``|achieved_goal - desired_goal|`` for Fetch, HandReach and PointMaze;
``d_pos + d_rot`` of gymnasium-robotics' ``_goal_distance`` (one goal pair at a time, as its
step) for HandManipulate, after resets too; for Adroit the ``goal_distance`` of
gymnasium-robotics' step (Door the hinge angle; Hammer |nail - nail_goal|; Pen
|obj_pos - desired_pos|; Relocate |obj_pos - target_pos|), 0 after a reset. EnvPool's formulas,
gymnasium-robotics' arithmetic: EnvPool's own (libm's acos, a left-to-right sum of squares)
differs from numpy's in the last bits (measured: HandManipulate up to 1.6e-15).
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
    out = engine.outputs
    d = np.asarray(out["obs"])[ids] - np.asarray(out["obs.desired_goal"])[ids]
    return np.linalg.norm(d, axis=-1)


def _manipulate_distance(engine, ids):
    """HandManipulate: ``d_pos + d_rot`` of gymnasium-robotics' ``_goal_distance`` of each row
    (cypool's kernel, ``_hand.distance``, one goal at a time as the reference's step does:
    its batched call would set the Pen's Euler z of row 2, not of each row)."""
    from cypool.robotics import _hand as hk
    out = engine.outputs
    ids = np.asarray(ids)
    if len(ids) == 0:
        return np.zeros(0)
    a = np.ascontiguousarray(np.asarray(out["obs"])[ids], np.float64)
    d = np.ascontiguousarray(np.asarray(out["obs.desired_goal"])[ids], np.float64)
    # target modes are the id's (every env's row alike)
    d_pos, d_rot = hk.distance(np.ascontiguousarray(engine.params[ids[0]]), a, d)
    return d_pos + d_rot


def _norms(v):
    """np.linalg.norm of each row as gymnasium-robotics' Adroit step takes it (one 3-vector:
    sqrt of numpy's BLAS dot, which can differ from a left-to-right sum of squares, EnvPool's
    arithmetic, in the last bit)."""
    return np.array([np.linalg.norm(r) for r in v], np.float64).reshape(len(v))


@lru_cache(maxsize=None)
def _nail_goal_offset():
    """site_xpos[nail_goal] - xpos[nail_board] as MuJoCo adds it (mj_local2Global: the board's
    xmat times the site's pos, then + xpos), with ``xpos`` the board's body_pos (a child of
    the world) and ``xmat`` fixed (only its position is drawn): the model's own values."""
    from cypool._mujoco_import import import_mujoco
    from cypool.robotics.adroit import model_path
    mujoco = import_mujoco()
    m = mujoco.MjModel.from_xml_path(model_path("Hammer"))
    d = mujoco.MjData(m)
    board, site = m.body("nail_board").id, m.site("nail_goal").id
    if m.body_parentid[board] != 0 or m.site_bodyid[site] != board:
        raise ValueError("AdroitHandHammer: the installed model's nail_goal is not a site of "
                         "the world's nail_board body")
    mujoco.mj_kinematics(m, d)
    x, p = d.xmat[board].reshape(3, 3), m.site_pos[site]
    return (x[:, 0] * p[0] + x[:, 1] * p[1]) + x[:, 2] * p[2]


def _nail_goal(engine, ids):
    """site_xpos[nail_goal] of the rows ``ids``: the board's position (its model x, y or an
    initial_state_dict's, the drawn z: what _adroit.pyx writes into the env's model) plus
    the site's fixed offset."""
    from cypool.robotics import _adroit as ad
    at, base = ad.TASK_STATE_AT, ad.PARAMS["base"]
    pos = np.empty((len(ids), 3))
    for k, i in enumerate(ids):
        ts = engine.task_state_of(int(i))
        xy = ts[at["fix"]:at["fix"] + 2] if ts[at["fix_set"]] != 0.0 else \
            engine.params[i, base:base + 2]
        pos[k] = (xy[0], xy[1], ts[at["model"]])
    return pos + _nail_goal_offset()


def _adroit_distance(task):
    """EnvPool's Adroit ``distance`` of the rows ``ids``: the ``goal_distance`` of
    gymnasium-robotics' step (0 on a reset, as EnvPool's), from cypool's observation: Door the
    hinge angle (obs[28]); Hammer |nail - nail_goal| (the nail's site is obs[42:45]); Pen
    |obj_pos - desired_pos| (obs[-6:-3]); Relocate |obj_pos - target_pos| (obs[-3:])."""
    def distance(engine, ids):
        ids = np.asarray(ids)
        obs = np.asarray(engine.outputs["obs"])[ids]
        if task == "Door":
            d = obs[:, 28]
        elif task == "Hammer":
            d = _norms(obs[:, 42:45] - _nail_goal(engine, ids))
        elif task == "Pen":
            d = _norms(obs[:, -6:-3])
        else:
            d = _norms(obs[:, -3:])
        return np.where(engine.elapsed()[ids] > 0, d, 0.0)
    distance.__qualname__ = f"_adroit_distance.{task}"
    return distance


_ADROIT_DISTANCE = {t: _adroit_distance(t) for t in ("Door", "Hammer", "Pen", "Relocate")}


def _distance_of(eid):
    """EnvPool's info ``distance`` hook of the id."""
    if eid.startswith("HandManipulate"):
        return _manipulate_distance
    if eid.startswith("AdroitHand"):
        task = re.match(r"AdroitHand(Door|Hammer|Pen|Relocate)", eid).group(1)
        return _ADROIT_DISTANCE[task]
    return _distance


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
        info = {success: (success, np.float64), "distance": (_distance_of(eid), np.float64)}
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
