"""render_mode="rgb_array" against minigrid 3.2.0's own render() under gymnasium's
SyncVectorEnv, bit for bit (np.array_equal) after the same seeds and actions, across
autoresets: the full frame (highlight on/off, per env), the agent's point of view
(agent_pov), tile sizes 8 and 32 (and odd ones), every object type (walls, goals, lava,
doors open/closed/locked, keys, balls, boxes, carried objects under the agent); the tile
table itself against Grid.render_tile; bad rendering kwargs refused."""
import gymnasium as gym
import numpy as np
import pytest

import cypool

minigrid = pytest.importorskip("minigrid")
from minigrid.core.constants import IDX_TO_COLOR  # noqa: E402
from minigrid.core.grid import Grid  # noqa: E402
from minigrid.core.world_object import Goal, WorldObj  # noqa: E402


def policy(rng, n, k):
    """Weighted to forward, pickup and toggle: keys carried, doors opened and closed."""
    if k != 7:
        return rng.integers(0, k, n)
    return rng.choice(7, n, p=[0.15, 0.15, 0.3, 0.15, 0.05, 0.15, 0.05])


def run_pair(env_id, n, steps, env_kwargs=None, seed=5, threads=1, **kw):
    """cypool's frames equal minigrid's at every step; the door states seen."""
    own = env_kwargs or [{}] * n
    env = cypool.make_vec(env_id, n, num_threads=threads, render_mode="rgb_array",
                          env_kwargs=env_kwargs, **kw)
    ref = gym.vector.SyncVectorEnv(
        [lambda d=d: gym.make(env_id, render_mode="rgb_array", **kw, **d) for d in own])
    doors = set()
    try:
        env.reset(seed=seed)
        ref.reset(seed=seed)
        rng = np.random.default_rng(seed)
        k = env.single_action_space.n
        for t in range(steps):
            x, y = env.render(), ref.render()
            assert isinstance(x, tuple) and len(x) == len(y) == n
            for i, (u, v) in enumerate(zip(x, y)):
                assert u.dtype == v.dtype == np.uint8 and u.shape == v.shape, (t, i)
                assert np.array_equal(u, v), (env_id, kw, t, i, np.argwhere(u != v)[:4])
            cells = env.pool.engine.grids[..., :3].reshape(-1, 3)
            doors.update(int(s) for s in cells[cells[:, 0] == 4, 2])
            a = policy(rng, n, k)
            env.step(a)
            ref.step(a)
    finally:
        env.close()
        ref.close()
    return doors


CASES = [
    ("MiniGrid-DoorKey-8x8-v0", {}),                                   # tile_size 32
    ("MiniGrid-DoorKey-6x6-v0", {"tile_size": 8, "highlight": False}),
    ("MiniGrid-DoorKey-6x6-v0", {"agent_pov": True, "see_through_walls": True}),
    ("MiniGrid-LavaCrossingS9N2-v0", {"tile_size": 8}),
    ("MiniGrid-DistShift1-v0", {"tile_size": 5, "agent_pov": True}),
    ("MiniGrid-KeyCorridorS3R3-v0", {"tile_size": 8, "agent_pov": True}),
    ("MiniGrid-Playground-v0", {"tile_size": 8}),
    ("MiniGrid-ObstructedMaze-1Dlhb-v0", {"tile_size": 8, "agent_view_size": 5}),
    ("MiniGrid-Dynamic-Obstacles-6x6-v0", {"tile_size": 7}),
    ("BabyAI-GoToLocal-v0", {"tile_size": 8, "agent_pov": True}),
]


@pytest.mark.parametrize("env_id,kw", CASES, ids=[f"{c[0]}-{k}" for k, c in enumerate(CASES)])
def test_frames_match_minigrid(env_id, kw):
    """2 envs, 60 steps (max_steps 25: autoresets), threads 1 or 2 by case."""
    threads = 1 + CASES.index((env_id, kw)) % 2
    run_pair(env_id, 2, 60, threads=threads, max_steps=25, **kw)


def test_every_door_state_and_carried_objects():
    """KeyCorridor's doors (locked, closed, opened by the policy) and the carried ball in
    the point of view, over a longer run."""
    doors = run_pair("MiniGrid-KeyCorridorS3R2-v0", 2, 150, tile_size=4, max_steps=60,
                     agent_pov=False)
    assert {1, 2} <= doors and 0 in doors, doors
    run_pair("MiniGrid-KeyCorridorS3R1-v0", 2, 120, seed=2, tile_size=4, agent_pov=True)


def test_per_env_highlight_and_env_ids():
    """highlight is per env (env_kwargs): render() draws each env with its own;
    render(env_ids) draws those envs only."""
    kws = [{"highlight": False}, {}, {"highlight": False}]
    run_pair("MiniGrid-FourRooms-v0", 3, 30, env_kwargs=kws, tile_size=8)
    env = cypool.make_vec("MiniGrid-Empty-5x5-v0", 3, render_mode="rgb_array", tile_size=8)
    env.reset(seed=0)
    all3 = env.render()
    one = env.render(env_ids=[2])
    assert len(one) == 1 and np.array_equal(one[0], all3[2])
    assert all3[0].shape == (40, 40, 3)
    env.close()


def test_single_env_route():
    one = gym.make("cypool/MiniGrid-DoorKey-5x5-v0", render_mode="rgb_array", tile_size=8)
    two = gym.make("MiniGrid-DoorKey-5x5-v0", render_mode="rgb_array", tile_size=8)
    one.reset(seed=1)
    two.reset(seed=1)
    for a in [2, 1, 2, 3, 0, 5, 2]:
        assert np.array_equal(one.render(), two.render())
        one.step(a)
        two.step(a)
    one.close()
    two.close()


@pytest.mark.parametrize("tile_size", [1, 4])
def test_tile_table_matches_render_tile(tile_size):
    """Every tile cypool draws (nothing, walls, floors, doors in 3 states, keys, balls,
    boxes, goals in every colour, lava; with the agent facing each way or not; highlighted
    or not) equals Grid.render_tile's."""
    from cypool.minigrid import _tiles

    table = _tiles.tiles(tile_size)
    for k, (t, c, s) in enumerate(_tiles._OBJECTS):
        obj = None if t is None else WorldObj.decode(t, c, s)
        if t == 8:                          # decode makes every goal green
            obj = Goal(IDX_TO_COLOR[c])
        for agent in range(5):
            for h in (False, True):
                ref = Grid.render_tile(obj, agent_dir=None if agent == 0 else agent - 1,
                                       highlight=h, tile_size=tile_size)
                assert np.array_equal(table[k, agent, int(h)], ref.astype(np.uint8)), \
                    (tile_size, t, c, s, agent, h)


@pytest.mark.parametrize("kw,err,match", [
    ({"render_mode": "human"}, ValueError, "human"),
    ({"render_mode": "rgb_array", "tile_size": 0}, ValueError, "tile_size"),
    ({"render_mode": "rgb_array", "tile_size": -8}, ValueError, "tile_size"),
    ({"render_mode": "rgb_array", "tile_size": 1000}, ValueError, "tile_size"),
    ({"render_mode": "rgb_array", "tile_size": 8.0}, TypeError, "tile_size"),
    ({"render_mode": "rgb_array", "tile_size": True}, TypeError, "tile_size"),
    ({"render_mode": "rgb_array", "highlight": 1}, TypeError, "highlight"),
    ({"render_mode": "rgb_array", "agent_pov": "yes"}, TypeError, "agent_pov"),
    ({"render_mode": "rgb_array", "screen_size": 0}, ValueError, "screen_size"),
])
def test_bad_render_kwargs_refused(kw, err, match):
    with pytest.raises(err, match=match):
        cypool.make_vec("MiniGrid-DoorKey-5x5-v0", 2, **kw)


def test_render_needs_a_mode():
    env = cypool.make_vec("MiniGrid-DoorKey-5x5-v0", 2, screen_size=None)
    env.reset(seed=0)
    with pytest.raises(gym.error.Error, match="render mode"):
        env.render()
    env.close()
