"""Registers the MinAtar ids (imported by cypool.entry), as one family (its ids have a
namespace, which register_spec does not take): ``MinAtar/<Game>-v0`` (six actions)
and ``-v1`` (the game's minimal action set), one FamilySpec each, with the kwargs
``minatar.gym.BaseEnv`` takes and their defaults (``sticky_action_prob`` 0.1 and
``difficulty_ramping`` True per env; ``use_minimal_action_set`` and ``game`` per pool, as the
ids set them; ``display_time`` only for "human" rendering, accepted and unused). No time
limit, as MinAtar registers none (Freeway ends itself after 2500 steps).

Seeding: MinAtar's ``reset(seed=s)`` makes ``RandomState(s)`` the one stream of the env's
sticky actions and game draws, kept by later resets; the seed hook installs that MT19937
stream (``RandomState(s)``'s state, by the public API) as env i's bit generator. Seed None
(an env never seeded) gets a fresh ``RandomState()``, unseeded as MinAtar's is."""
from __future__ import annotations

from functools import partial

import gymnasium as gym
import numpy as np

from cypool.api import FamilySpec, Interval, Kwarg, Options
from cypool.registry import register_family

_MODULE = "cypool.minatar.registration"

GAMES = ("asterix", "breakout", "freeway", "seaquest", "space_invaders")
_CHANNELS = dict(zip(GAMES, (4, 4, 7, 10, 6)))
_MINIMAL = dict(zip(GAMES, (5, 3, 3, 6, 4)))       # len(Env.minimal_action_set())


def _spaces(kw):
    game = kw["game"]
    obs = gym.spaces.Box(0.0, 1.0, shape=(10, 10, _CHANNELS[game]), dtype=bool)
    return obs, gym.spaces.Discrete(_MINIMAL[game] if kw["use_minimal_action_set"] else 6)


def _seed(fam, i, seed):
    """Env i's stream: RandomState(seed)'s MT19937 (seed None: an unseeded RandomState)."""
    rs = np.random.RandomState() if seed is None else np.random.RandomState(seed)
    bg = np.random.MT19937()
    bg.state = rs.get_state(legacy=False)
    fam.engine.set_generator(i, bg)


def _render(env_id, engine, ids, mode, kwargs):
    from cypool.minatar._render import render

    return render(env_id, engine, ids, mode, kwargs)


def _spec(name, game, minimal):
    env_id = f"MinAtar/{name}-{'v1' if minimal else 'v0'}"
    kwargs = {
        "game": Kwarg(game, kind=Options(GAMES), scope="pool"),
        "use_minimal_action_set": Kwarg(minimal, kind="bool", scope="pool"),
        "sticky_action_prob": Kwarg(0.1, kind=Interval("real", 0, 1, what="a probability")),
        "difficulty_ramping": Kwarg(True, kind="bool"),
        "display_time": Kwarg(50, kind="real", scope="make"),
    }
    return FamilySpec(
        env_id, "cypool.minatar._minatar:MinAtarPool",
        *_spaces({"game": game, "use_minimal_action_set": minimal}),
        kwargs=kwargs, max_episode_steps=None, spaces=_spaces,
        render=partial(_render, env_id), render_modes=("array", "rgb_array"), module=_MODULE,
        seed=_seed, seed_bound=2**32)


SPECS = {s.env_id: s for s in (_spec(g.title().replace("_", ""), g, m)
                                for g in GAMES for m in (False, True))}
ENV_IDS = tuple(SPECS)


def _make(env_id, *args, **kwargs):
    from cypool.api import SpecFamily

    return SpecFamily(SPECS[env_id], env_id, *args, **kwargs)


# a namespaced id ("MinAtar/..."): registered as a family (gymnasium's registry then knows
# it as cypool-MinAtar/<Game>-v<k>), as dm_control's ids are
register_family("minatar", env_ids=lambda: list(ENV_IDS), make=_make,
                default_max_episode_steps=lambda env_id: None, module=_MODULE,
                spec=SPECS.__getitem__)
