"""Registers the toy-text ids (imported by cypool.entry): one FamilySpec each. Light: the
pools are imported at the first make of their id.

Each spec also names its EnvPool 1.2.5 ids (:class:`cypool.api.EnvPoolNames`) for
:mod:`cypool.envpool`: EnvPool's ``Taxi-v3`` is Taxi-v4 with its default (dry) options,
its ``CliffWalking-v0`` (and ``tabular/`` alias) is CliffWalking-v1; EnvPool's options
(FrozenLake's ``size`` 4 or 8, ``is_slippery``, ``natural``, ``sab``) and dtypes (obs int32,
Blackjack's obs a ``Box(0, 31, (3,), int32)``, CliffWalking's float32 ``prob``)."""
from __future__ import annotations

from functools import partial

import gymnasium as gym
import numpy as np

from cypool.api import EnvPoolNames, FamilySpec, InfoKey, Interval, Kwarg, register_spec
from cypool.toy_text._render import render_blackjack, render_tabular, render_taxi

_MODULE = "cypool.toy_text.registration"


# A probability kwarg: a number in [0, 1], kept as given ("real").
#
# NaN and values outside [0, 1] are refused (docs/reliability.md, the rule for non-finite
# kwargs): gymnasium takes them and builds "probabilities" such as NaN, 1.5 or -0.25 that
# mean nothing (FrozenLake ``success_rate=nan`` reports ``info["prob"]`` NaN, and its
# SyncVectorEnv raises at the first batch where a reset's int 1 types that array first).
# Every value in [0, 1] (0, 1 and subnormals included) runs exactly as gymnasium runs it.
# complete_kwargs checks the kind for make_vec, env_kwargs, member_kwargs, set_attr and
# set_member_kwargs alike, before any env changes.
_PROBABILITY = Interval("real", 0, 1, what="a probability")


def _probability_width(env_id, name, v):
    """Not a numpy float of another width than float64 (the kind has checked the value):
    gymnasium would then build its transition probabilities in that width, which the tables
    do not."""
    if isinstance(v, np.floating) and v.dtype != np.float64:
        raise TypeError(f"{env_id}: {name} must be a Python float (or float64), got a numpy "
                        f"{v.dtype} (gymnasium would compute its probabilities in {v.dtype})")


def _frozen_lake_spaces(kw):
    """The observation space follows the map (pool-scope desc, map_name)."""
    from cypool.toy_text._tables import frozen_lake_desc

    desc = frozen_lake_desc(kw["desc"], kw["map_name"])
    return gym.spaces.Discrete(int(desc.size)), gym.spaces.Discrete(4)


def _check_frozen_lake(kw):
    _frozen_lake_spaces(kw)                     # the map's own errors
    _probability_width("FrozenLake", "success_rate", kw["success_rate"])
    rs = kw["reward_schedule"]
    if (not isinstance(rs, (tuple, list)) or len(rs) != 3
            or not all(isinstance(x, (int, float, np.integer, np.floating))
                       and not isinstance(x, (bool, np.bool_)) for x in rs)):
        raise ValueError(f"FrozenLake: reward_schedule must be 3 numbers, got {rs!r}")


def _check_taxi(kw):
    for name in ("rainy_probability", "fickle_probability"):
        _probability_width("Taxi-v4", name, kw[name])


# rendering: gymnasium's own render(), fed each env's state (cypool.toy_text._render);
# gymnasium's Blackjack has no ansi
# (in the order of each gymnasium class's metadata, less "human")
_MODES = ("ansi", "rgb_array")

# gymnasium reports "prob" as the int 1 after a reset and a float after a step; an info
# array takes the type of the first env reporting it in the call
_PROB = (InfoKey("prob", np.float64, reset_dtype=np.int64),)


def _frozen_lake_size(size):
    """EnvPool's FrozenLake ``size``: gymnasium's map of that size (4x4 or 8x8)."""
    if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"FrozenLake: size must be an int, got {size!r}")
    if size not in (4, 8):
        raise ValueError(f"FrozenLake: size={size} is not served: cypool runs gymnasium's maps, "
                         "size=4 (4x4) or size=8 (8x8); EnvPool's maps of other sizes are not "
                         "reproduced")
    return {"map_name": f"{size}x{size}"}


_INT_MAX = 2**31 - 1        # EnvPool's time limit of the ids gymnasium gives none


def _blackjack_obs(obs):
    """gymnasium's Tuple batch as EnvPool's (N, 3) int32 Box."""
    return np.stack(obs, axis=1).astype(np.int32)


def _frozen_lake(env_id, map_name, limit):
    size = int(map_name[0])
    return FamilySpec(
        env_id, "cypool.toy_text._frozen_lake:FrozenLakePool",
        *_frozen_lake_spaces({"desc": None, "map_name": map_name}),
        # map_name "any": a map's name, read only when desc is None (_check_frozen_lake)
        kwargs={"desc": Kwarg(None, scope="pool"),
                "map_name": Kwarg(map_name, kind="any", scope="pool"),
                "is_slippery": Kwarg(True),
                "success_rate": Kwarg(1.0 / 3.0, kind=_PROBABILITY),
                "reward_schedule": Kwarg((1, 0, 0))},
        max_episode_steps=limit, info=_PROB, check_kwargs=_check_frozen_lake,
        spaces=_frozen_lake_spaces, render=partial(render_tabular, env_id),
        render_modes=_MODES, render_fps=4, module=_MODULE,
        envpool=EnvPoolNames(ids=(env_id,), config=dict(
            max_episode_steps=limit, reward_threshold={4: 0.7, 8: 0.85}[size], size=size),
            kwargs=dict(size=_frozen_lake_size), obs_dtype=np.int32))


def _cliff(env_id, slippery, envpool_ids):
    return FamilySpec(
        env_id, "cypool.toy_text._cliff_walking:CliffWalkingPool", gym.spaces.Discrete(48),
        gym.spaces.Discrete(4), kwargs={"is_slippery": Kwarg(slippery)},
        max_episode_steps=None, info=_PROB, render=partial(render_tabular, env_id),
        render_modes=("rgb_array", "ansi"), render_fps=4, module=_MODULE,
        envpool=EnvPoolNames(ids=envpool_ids,
                             config=dict(max_episode_steps=_INT_MAX, is_slippery=slippery),
                             kwargs=dict(is_slippery="is_slippery"), obs_dtype=np.int32,
                             info={"prob": ("prob", np.float32)}))


# EnvPool 1.2.5's toy-text ids that no gymnasium or cypool env runs (refused by Taxi's names)
_NOT_SERVED = {
    "Catch-v0": "Catch-v0 is not served: EnvPool's Catch-v0 (bsuite's Catch) has no gymnasium "
                "or cypool env",
    "NChain-v0": "NChain-v0 is not served: EnvPool's NChain-v0 (gym 0.x's NChain) has no "
                 "gymnasium or cypool env",
}

SPECS = (
    _frozen_lake("FrozenLake-v1", "4x4", 100),
    _frozen_lake("FrozenLake8x8-v1", "8x8", 200),
    FamilySpec(
        "Taxi-v4", "cypool.toy_text._taxi:TaxiPool", gym.spaces.Discrete(500),
        gym.spaces.Discrete(6),
        kwargs={"is_rainy": Kwarg(False), "fickle_passenger": Kwarg(False),
                "rainy_probability": Kwarg(0.8, kind=_PROBABILITY),
                "fickle_probability": Kwarg(0.3, kind=_PROBABILITY)},
        max_episode_steps=200,
        info=(InfoKey("prob", np.float64), InfoKey("action_mask", np.int8, width=6)),
        check_kwargs=_check_taxi, render=partial(render_taxi, "Taxi-v4"), render_modes=_MODES,
        render_fps=4, module=_MODULE,
        envpool=EnvPoolNames(ids=("Taxi-v3",), config=dict(max_episode_steps=200,
                                                            reward_threshold=8.0),
                             obs_dtype=np.int32, refused=_NOT_SERVED)),
    _cliff("CliffWalking-v1", False, ("CliffWalking-v1", "tabular/CliffWalking-v0",
                                       "CliffWalking-v0")),
    _cliff("CliffWalkingSlippery-v1", True, ("CliffWalkingSlippery-v1",)),
    FamilySpec(
        "Blackjack-v1", "cypool.toy_text._blackjack:BlackjackPool",
        gym.spaces.Tuple((gym.spaces.Discrete(32), gym.spaces.Discrete(11),
                          gym.spaces.Discrete(2))),
        gym.spaces.Discrete(2), kwargs={"natural": Kwarg(False), "sab": Kwarg(True)},
        max_episode_steps=None, render=partial(render_blackjack, "Blackjack-v1"),
        render_modes=("rgb_array",), render_fps=4, module=_MODULE,
        envpool=EnvPoolNames(ids=("Blackjack-v1", "tabular/Blackjack-v0"),
                             config=dict(max_episode_steps=_INT_MAX, natural=False, sab=True),
                             kwargs=dict(natural="natural", sab="sab"), obs_dtype=np.int32,
                             observation_space=gym.spaces.Box(0, 31, (3,), np.int32),
                             obs=_blackjack_obs)),
)

ENV_IDS = tuple(s.env_id for s in SPECS)

for _spec in SPECS:
    register_spec(_spec)
del _spec
