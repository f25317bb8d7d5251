"""EnvPool 1.2.5's names of its MiniGrid/BabyAI ids, for :mod:`cypool.envpool` (the minigrid
family's spec names none; this module reads cypool's minigrid ids through the registry).

The dynamics are minigrid's (cypool's minigrid family, seed-exact with minigrid 3.2.0), the
layout EnvPool's (read from ``envpool/minigrid`` and measured with the installed EnvPool):
the observation is a Dict of ``direction`` (int32, ``Discrete(4)``), ``image`` (uint8) and
``mission``, the mission's UTF-8 bytes zero-padded to ``mission_bytes`` (96; BabyAI 512) as a
``Box(0, 255, (mission_bytes,), uint8)``; info adds ``agent_pos`` (int32 ``(x, y)``, minigrid's
``agent_pos``) and ``mission_id`` (int32) where EnvPool's is a constant: -1 on every BabyAI id,
0 on the MiniGrid ids whose generator EnvPool does not number (one mission, or KeyCorridor's,
LockedRoom's, BlockedUnlockPickup's). EnvPool numbers the missions of Fetch, GoToDoor,
GoToObject, PutNear and UnlockPickup (colour, colour * 3 + type, ...): a function of the
mission string that the info hook, given the engine's rows only, cannot read, so those ids
have no ``mission_id``. Options: ``max_episode_steps`` is minigrid's ``max_steps`` (EnvPool's
BabyAI 0: the env's own limit); every other option of EnvPool's (one config for all its
MiniGrid ids) is accepted at the id's default only.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import gymnasium as gym

from cypool import _envpool_tables as T
from cypool._core.spec import EnvPoolNames

def same(value, default) -> bool:
    """value is the option's default (a bool only for a bool default; a pair as a tuple or
    list)."""
    if isinstance(default, (bool, np.bool_)) != isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(default, str) or isinstance(value, str):
        return isinstance(value, str) and value == default
    try:
        a, b = np.asarray(value), np.asarray(default)
        return a.shape == b.shape and bool(np.all(a == b))
    except Exception:
        return False


def _agent_pos(engine, ids):
    return engine.agent_pos(ids)          # the MiniGrid engine's public accessor


# EnvPool's generators whose mission_id numbers the mission (not given, see the docstring)
NUMBERED = ("fetch", "goto_door", "goto_object", "put_near", "unlock_pickup")


def mission_id(cfg):
    """EnvPool's constant mission_id of an id's config, or None where it numbers missions."""
    if cfg["env_name"].startswith("babyai_"):
        return -1
    return None if cfg["env_name"] in NUMBERED else 0


def _constant(value):
    def info(engine, ids):
        return np.full(len(ids), value, np.int32)
    return info


def _mission_bytes(n):
    def obs(batch):
        out = dict(batch)
        missions = out["mission"]
        arr = np.zeros((len(missions), n), np.uint8)
        for i, m in enumerate(missions):
            b = m.encode()[:n]
            arr[i, :len(b)] = np.frombuffer(b, np.uint8)
        out["direction"] = np.asarray(out["direction"]).astype(np.int32)
        out["mission"] = arr
        return {k: out[k] for k in ("direction", "image", "mission")}
    return obs


def _space(n):
    def space(pool_space):
        return gym.spaces.Dict({"direction": gym.spaces.Discrete(4),
                                "image": pool_space["image"],
                                "mission": gym.spaces.Box(0, 255, (n,), np.uint8)})
    return space


def _convert(env_id):
    def convert(task_id, own, pixels):
        cfg = {**T.MINIGRID_BASE, **T.MINIGRID[task_id]}
        for k, v in own.items():
            if k != "max_episode_steps" and not same(v, cfg[k]):
                raise ValueError(
                    f"{k}={v!r} selects an EnvPool variant of {task_id} that cypool does not "
                    f"run (it runs minigrid's {env_id}: {k}={cfg[k]!r}); for other minigrid "
                    f"kwargs use cypool.make_vec({env_id!r}, num_envs, ...)")
        steps = own["max_episode_steps"]
        if steps and steps != cfg["max_episode_steps"]:
            return {"max_steps": int(steps)}
        return {}
    return convert


@lru_cache(maxsize=None)
def served() -> dict:
    """``{EnvPool id: (cypool id, EnvPoolNames, space hook)}``."""
    out = {}
    for eid, over in T.MINIGRID.items():
        cfg = {**T.MINIGRID_BASE, **over}
        n = cfg["mission_bytes"]
        info = {"agent_pos": (_agent_pos, np.int32)}
        if mission_id(cfg) is not None:
            info["mission_id"] = (_constant(mission_id(cfg)), np.int32)
        names = EnvPoolNames(ids=(eid,), config=cfg, convert=_convert(eid), obs=_mission_bytes(n),
                             info=info, family="MiniGrid")
        out[eid] = (eid, names, _space(n))
    return out


def refused() -> dict:
    return {eid: (f"{eid}: cypool does not run this minigrid env (cypool.envpool serves "
                  f"EnvPool's MiniGrid and BabyAI ids whose env cypool runs; "
                  f"cypool.list_envs() lists cypool's minigrid ids for cypool.make_vec)")
            for eid in T.MINIGRID_UNSERVED}
