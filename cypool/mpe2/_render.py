"""Rendering of the mpe2 pools: mpe2's own ``SimpleEnv.render()``, fed each env's state
(imported at the first render; stepping never touches it).

Each pool keeps, in its ``renderer`` slot, one reference ``raw_env`` of its module made with
the pool's kwargs and ``render_mode="rgb_array"`` (its own ``draw``: collect_treasure's too).
To draw env i the hook gives that env's world env i's state: the colours through the
scenario's own ``reset_world`` replayed with env i's recorded draws (the goal landmarks its
``np_random.integers`` drew, or collect_treasure's treasure types; the positions are set
after), collect_treasure's live treasures and holdings, the positions and velocities, the
agents' comm states, the camera range of env i's last reset (``original_cam_range``) and its
``dynamic_rescaling``; ``render()`` then draws the frame the reference would.
"""
from __future__ import annotations

import numpy as np

__all__ = ["render"]


class _Replay:
    """A stand-in for reset_world's ``np_random``: ``integers`` gives env i's recorded goal
    draws in order, ``uniform`` zeros (the positions are set afterwards)."""

    def __init__(self, ints):
        self._ints = list(ints)

    def integers(self, *args, **kwargs):
        return np.int64(self._ints.pop(0))

    def uniform(self, low=0.0, high=1.0, size=None):
        return 0.0 if size is None else np.zeros(size)


# the number of np_random.integers draws each module's reset_world makes
_DRAWS = {"simple_adversary_v3": 1, "simple_push_v3": 1, "simple_speaker_listener_v4": 1,
          "simple_reference_v3": 2, "simple_crypto_v3": 2}


def _treasure_state(world, engine, i):
    """collect_treasure: which treasures are alive, their types' colours, what each
    collector holds (its colour 0.85 times the treasure's)."""
    colors = world.treasure_colors
    for t, lm in enumerate(world.landmarks):
        lm.alive = bool(engine.alive_arr[i, t])
        lm.type = int(engine.types[i, t])
        lm.color = colors[lm.type].copy()
    for c in range(engine.n_collectors):
        h = int(engine.holdings[i, c])
        agent = world.agents[c]
        agent.holding = None if h < 0 else h
        agent.color = (np.array([0.85, 0.85, 0.85]) if h < 0 else 0.85 * colors[h].copy())


class _Renderer:
    __slots__ = ("env",)

    def __init__(self, env):
        self.env = env


def render(module, engine, ids, mode, kwargs):
    """One ``(700, 700, 3)`` uint8 frame per id, mpe2's."""
    from cypool.mpe2._reference import reference_env

    if mode != "rgb_array":
        raise ValueError(f"mpe2/{module}: cannot render {mode!r} (only 'rgb_array')")
    r = engine.renderer
    if r is None:
        r = engine.renderer = _Renderer(reference_env(module, dict(kwargs), "rgb_array"))
    env = r.env
    world = env.world
    dc = engine.dim_c
    draws = _DRAWS.get(module, 0)
    treasure = module == "collect_treasure_v1"
    out = []
    for i in ids:
        i = int(i)
        ints = (engine.types[i, :engine.n_landmarks] if treasure
                else engine.goals[i, :draws]).tolist()
        env.scenario.reset_world(world, _Replay(ints))
        if treasure:
            _treasure_state(world, engine, i)
        for e, ent in enumerate(world.agents + world.landmarks):
            ent.state.p_pos = np.array(engine.positions[i, e], np.float64)
            ent.state.p_vel = np.array(engine.velocities[i, e], np.float64)
        for a, agent in enumerate(world.agents):
            agent.state.c = np.array(engine.comms[i, a, :dc], np.float64)
        env.original_cam_range = np.float64(engine.cam_ranges[i])
        env.dynamic_rescaling = bool(engine.rescaling[i])
        out.append(np.ascontiguousarray(env.render()))
    return out
