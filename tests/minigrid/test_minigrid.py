"""The MiniGrid ids through make_vec against gymnasium's SyncVectorEnv over minigrid 3.2.0's
own envs (``import minigrid`` registers them), bit for bit: the Dict observation (direction,
image, the mission as a tuple of str), rewards, terminated, truncated and info, across
autoresets, on one and two threads; per-env kwargs, reset(seed=) mid-run, same-step
autoreset's final_obs, the single-env route, snapshots, and bad kwargs refused before any
env moves."""
import copy

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import cypool
from cypool.minigrid.registration import ENV_IDS

minigrid = pytest.importorskip("minigrid")


def assert_same(x, y, where="obs"):
    """x (cypool's) equals y (gymnasium's): structure, dtypes and values; strs with ==.
    Key order: a batch's as gymnasium's Dict orders it; one env's dict (a final_obs, the
    single-env route) has minigrid's own order (image, direction, mission) there and the
    space's here (not reproduced: the same keys and values)."""
    if isinstance(y, dict):
        assert isinstance(x, dict) and sorted(x) == sorted(y), (where, list(x), list(y))
        for k in y:
            assert_same(x[k], y[k], f"{where}[{k!r}]")
    elif isinstance(y, tuple):
        assert isinstance(x, tuple) and x == y if all(isinstance(v, str) for v in y) else \
            len(x) == len(y), (where, x, y)
        for k, (u, v) in enumerate(zip(x, y)):
            assert_same(u, v, f"{where}[{k}]")
    elif isinstance(y, str):
        assert x == y, (where, x, y)
    elif isinstance(y, np.ndarray) and y.dtype == object:
        assert x.dtype == object and x.shape == y.shape, where
        for k, (u, v) in enumerate(zip(x, y)):
            if v is None:
                assert u is None, where
            else:
                assert_same(u, v, f"{where}[{k}]")
    else:
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype, (where, x.dtype, y.dtype)
        assert np.array_equal(x, y), (where, x, y)


def reference(env_id, n, kwargs=None, mode=AutoresetMode.NEXT_STEP):
    kwargs = kwargs or [{}] * n
    return gym.vector.SyncVectorEnv([lambda kw=kw: gym.make(env_id, **kw) for kw in kwargs],
                                    autoreset_mode=mode)


def policy(rng, n, k=7):
    """Random actions weighted to forward, pickup and toggle, so that keys are picked up,
    doors opened and goals reached within a few hundred steps (k: the number of actions,
    3 for Dynamic-Obstacles)."""
    if k == 3:
        return rng.choice(3, n, p=[0.25, 0.25, 0.5])
    return rng.choice(7, n, p=[0.15, 0.15, 0.35, 0.1, 0.05, 0.15, 0.05])


def run_pair(env, ref, steps, seed=3, rng_seed=0):
    n = env.num_envs
    assert_same(env.reset(seed=seed), ref.reset(seed=seed), "reset")
    rng = np.random.default_rng(rng_seed)
    events = 0
    for t in range(steps):
        a = policy(rng, n, env.single_action_space.n)
        x, y = env.step(a), ref.step(a)
        assert_same(x, y, f"step {t}")
        events += int(np.count_nonzero(y[2]) + np.count_nonzero(y[3]))
    return events


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_id_matches_minigrid(env_id):
    """Every served id, 4 envs, 120 steps across autoresets; threads 1 or 2 by id."""
    threads = 1 + ENV_IDS.index(env_id) % 2
    env = cypool.make_vec(env_id, 4, num_threads=threads)
    ref = reference(env_id, 4)
    try:
        assert env.single_observation_space["image"] == ref.single_observation_space["image"]
        assert env.single_observation_space["direction"] == \
            ref.single_observation_space["direction"]
        assert list(env.single_observation_space) == list(ref.single_observation_space)
        assert env.single_action_space == ref.single_action_space
        run_pair(env, ref, 120, seed=ENV_IDS.index(env_id))
    finally:
        env.close()
        ref.close()


@pytest.mark.parametrize("env_id,n,max_steps,steps", [
    ("MiniGrid-DoorKey-5x5-v0", 16, 60, 340), ("MiniGrid-Unlock-v0", 16, 60, 100),
    ("MiniGrid-KeyCorridorS3R1-v0", 64, 300, 160), ("MiniGrid-MemoryS7-v0", 16, 60, 150),
    ("MiniGrid-LavaGapS5-v0", 16, 60, 150), ("BabyAI-GoToLocalS6N3-v0", 16, 40, 150),
    ("MiniGrid-RedBlueDoors-6x6-v0", 32, 100, 90),
    ("MiniGrid-Dynamic-Obstacles-6x6-v0", 8, 60, 100),
    ("MiniGrid-PutNear-6x6-N2-v0", 32, 30, 160), ("MiniGrid-GoToDoor-5x5-v0", 16, 100, 20),
    ("MiniGrid-Fetch-5x5-N2-v0", 16, 100, 20)])
def test_successes_match_minigrid(env_id, n, max_steps, steps):
    """Two threads, long enough that keys are picked up, doors unlocked and the goals (and
    lava, Memory's wrong object, an obstacle's -1) reached: nonzero rewards are reproduced,
    not only zeros."""
    env = cypool.make_vec(env_id, n, num_threads=2, max_steps=max_steps)
    ref = reference(env_id, n, [{"max_steps": max_steps}] * n)
    try:
        assert_same(env.reset(seed=1), ref.reset(seed=1))
        rng = np.random.default_rng(5)
        wins = 0
        for t in range(steps):
            a = policy(rng, n, env.single_action_space.n)
            x, y = env.step(a), ref.step(a)
            assert_same(x, y, f"step {t}")
            wins += int(np.count_nonzero(y[1]))
        assert wins > 0
    finally:
        env.close()
        ref.close()


@pytest.mark.parametrize("mode", ["same_step", "disabled"])
def test_autoreset_modes(mode):
    """Same-step final_obs (a dict with the mission as a str) and disabled mode."""
    env_id = "MiniGrid-DoorKey-5x5-v0"
    m = {"same_step": AutoresetMode.SAME_STEP, "disabled": AutoresetMode.DISABLED}[mode]
    env = cypool.make_vec(env_id, 3, num_threads=2, autoreset_mode=mode, max_steps=15)
    ref = reference(env_id, 3, [{"max_steps": 15}] * 3, m)
    try:
        assert_same(env.reset(seed=5), ref.reset(seed=5))
        rng = np.random.default_rng(0)
        for t in range(60):
            a = policy(rng, 3)
            x, y = env.step(a), ref.step(a)
            assert_same(x, y, f"step {t}")
            if mode == "disabled" and np.any(y[2] | y[3]):
                done = y[2] | y[3]
                assert_same(env.reset(options={"reset_mask": done}),
                            ref.reset(options={"reset_mask": done}))
    finally:
        env.close()
        ref.close()


def test_per_env_kwargs_and_reseed():
    """env_kwargs per env (max_steps, see_through_walls, start positions) and
    reset(seed=) in the middle of a run."""
    env_id = "MiniGrid-FourRooms-v0"
    kws = [{}, {"max_steps": 20, "see_through_walls": True},
           {"agent_pos": (3, 4), "goal_pos": (15, 15)}, {"max_steps": 7}]
    env = cypool.make_vec(env_id, 4, num_threads=2, env_kwargs=kws)
    ref = reference(env_id, 4, kws)
    try:
        run_pair(env, ref, 60, seed=21)
        run_pair(env, ref, 60, seed=[4, 5, 6, 7], rng_seed=1)
    finally:
        env.close()
        ref.close()
    kws = [{"agent_start_pos": None}, {"agent_start_pos": (2, 3), "agent_start_dir": 3},
           {"max_steps": 5}]
    env = cypool.make_vec("MiniGrid-Empty-6x6-v0", 3, env_kwargs=kws)
    ref = reference("MiniGrid-Empty-6x6-v0", 3, kws)
    run_pair(env, ref, 80)
    env.close()


@pytest.mark.parametrize("env_id,kw", [
    ("MiniGrid-DoorKey-6x6-v0", {"agent_view_size": 5, "see_through_walls": True}),
    ("MiniGrid-Empty-8x8-v0", {"agent_view_size": 9, "size": 10}),
    ("MiniGrid-LavaCrossingS9N1-v0", {"size": 13, "num_crossings": 4, "obstacle_type": "wall"}),
    ("MiniGrid-MemoryS7-v0", {"size": 11, "random_length": True}),
    ("MiniGrid-KeyCorridorS3R1-v0", {"obj_type": "key", "num_rows": 2, "room_size": 4}),
    ("MiniGrid-KeyCorridorS4R3-v0", {"obj_type": "box"}),
    ("MiniGrid-ObstructedMaze-Full-v1", {"agent_room": (0, 1), "num_quarters": 3,
                                         "blocked": False}),
])
def test_pool_kwargs(env_id, kw):
    env = cypool.make_vec(env_id, 3, num_threads=2, **kw)
    ref = reference(env_id, 3, [kw] * 3)
    run_pair(env, ref, 150)
    env.close()


def test_missions_are_cached_strs():
    """One str object per distinct mission: no new str per env per step."""
    env = cypool.make_vec("MiniGrid-KeyCorridorS3R1-v0", 4)
    obs, _ = env.reset(seed=0)
    assert isinstance(obs["mission"], tuple) and all(isinstance(m, str) for m in obs["mission"])
    obs2, *_ = env.step(np.zeros(4, np.int64))
    for a, b in zip(obs["mission"], obs2["mission"]):
        assert a is b
    env.close()


def test_single_env_and_snapshot():
    env_id = "MiniGrid-DoorKey-6x6-v0"
    one = gym.make(f"cypool/{env_id}")
    ref = gym.make(env_id)
    assert_same(one.reset(seed=9), ref.reset(seed=9))
    rng = np.random.default_rng(0)
    for _ in range(40):
        a = int(policy(rng, 1)[0])
        x, y = one.step(a), ref.step(a)
        assert_same(x[0], y[0])
        assert x[1:4] == y[1:4]
    one.close()
    env = cypool.make_vec(env_id, 2)
    env.reset(seed=1)
    acts = np.random.default_rng(0).integers(0, 7, (30, 2))
    for a in acts[:10]:
        env.step(a)
    twin = copy.deepcopy(env)
    for a in acts[10:]:
        assert_same(env.step(a), twin.step(a))
    env.close()
    twin.close()


@pytest.mark.parametrize("env_id,kw,err", [
    ("MiniGrid-Empty-5x5-v0", {"size": 2}, ValueError),
    ("MiniGrid-Empty-Random-5x5-v0", {"size": 3}, ValueError),   # minigrid loops forever
    ("MiniGrid-DoorKey-5x5-v0", {"size": 4}, ValueError),
    ("MiniGrid-DoorKey-5x5-v0", {"max_steps": -1}, ValueError),
    ("MiniGrid-DoorKey-5x5-v0", {"max_steps": 0}, ValueError),
    ("MiniGrid-DoorKey-5x5-v0", {"max_steps": 5.0}, TypeError),
    ("MiniGrid-DoorKey-5x5-v0", {"agent_view_size": 4}, ValueError),
    ("MiniGrid-DoorKey-5x5-v0", {"agent_view_size": 1}, ValueError),
    ("MiniGrid-DoorKey-5x5-v0", {"see_through_walls": 1}, TypeError),
    ("MiniGrid-Empty-5x5-v0", {"see_through_walls": True}, TypeError),   # minigrid: too
    ("MiniGrid-Empty-5x5-v0", {"agent_start_pos": (0, 1)}, ValueError),
    ("MiniGrid-FourRooms-v0", {"goal_pos": (18, 2)}, ValueError),
    ("MiniGrid-FourRooms-v0", {"max_steps": None}, TypeError),
    ("MiniGrid-LavaCrossingS9N1-v0", {"size": 10}, ValueError),
    ("MiniGrid-LavaCrossingS9N1-v0", {"obstacle_type": "water"}, ValueError),
    ("MiniGrid-LavaCrossingS9N1-v0", {"num_crossings": -1}, ValueError),
    ("MiniGrid-MemoryS7-v0", {"size": 8}, ValueError),
    ("MiniGrid-KeyCorridorS3R1-v0", {"obj_type": "door"}, ValueError),
    ("MiniGrid-KeyCorridorS3R1-v0", {"room_size": 2}, ValueError),
    ("MiniGrid-PutNear-6x6-N2-v0", {"numObjs": 1}, ValueError),
    ("MiniGrid-PutNear-6x6-N2-v0", {"numObjs": 5}, ValueError),     # no room: minigrid hangs
    ("MiniGrid-LockedRoom-v0", {"size": 11}, ValueError),
    ("MiniGrid-GoToDoor-5x5-v0", {"size": 4}, ValueError),
    ("MiniGrid-Dynamic-Obstacles-8x8-v0", {"size": 60}, ValueError),
    ("MiniGrid-Fetch-5x5-N2-v0", {"numObjs": 9}, ValueError),
    ("MiniGrid-MultiRoom-N6-v0", {"maxRoomSize": 3}, ValueError),
    ("BabyAI-GoToLocal-v0", {"num_dists": 0}, ValueError),
    ("MiniGrid-ObstructedMaze-1Dl-v0", {"num_rooms_visited": 3}, TypeError),   # minigrid too
    ("MiniGrid-ObstructedMaze-Full-v1", {"num_quarters": 5}, ValueError),
    ("MiniGrid-ObstructedMaze-2Q-v0", {"blocked": 1}, TypeError),
    ("MiniGrid-Unlock-v0", {"render_mode": "human"}, ValueError),   # rgb_array only
    ("MiniGrid-Unlock-v0", {"tile_size": 8.0}, TypeError),
])
def test_bad_kwargs_refused(env_id, kw, err):
    with pytest.raises(err, match=env_id.split("-")[1][:5] + "|" + env_id + "|tile_size"):
        cypool.make_vec(env_id, 2, **kw)


def test_bad_env_kwargs_refused_before_any_env_moves():
    env = cypool.make_vec("MiniGrid-DoorKey-5x5-v0", 2)
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError):
        env.set_attr("max_steps", [10, -3])
    with pytest.raises(ValueError):
        env.step(np.array([7, 0]))
    again, *_ = env.step(np.array([0, 0]))
    ref = reference("MiniGrid-DoorKey-5x5-v0", 2)
    ref.reset(seed=0)
    assert_same(again, ref.step(np.array([0, 0]))[0])
    env.close()


def test_xla_refuses_the_text_leaf():
    """xla() cannot hold a str leaf (cypool.envpool's MiniGrid ids, whose mission is bytes:
    tests/test_envpool_minigrid.py)."""
    pytest.importorskip("jax")
    env = cypool.make_vec("MiniGrid-DoorKey-8x8-v0", 2)
    with pytest.raises(ValueError, match="text leaf"):
        env.xla()
    env.close()


def test_every_minigrid_id_is_served_or_refused_with_its_reason():
    """All of minigrid's registered ids: cypool serves each, but the 6 wave-function-collapse
    ones, which make_vec refuses naming why (not as an unknown id)."""
    theirs = {i for i in gym.registry if i.startswith(("MiniGrid-", "BabyAI-"))}
    rest = sorted(theirs - set(ENV_IDS))
    assert len(theirs) == 178 and set(ENV_IDS) <= theirs
    assert rest == sorted(i for i in theirs if i.startswith("MiniGrid-WFC-")) and len(rest) == 6
    for env_id in rest:
        with pytest.raises(ValueError, match=f"{env_id}: not served: .*wave-function-collapse"):
            cypool.make_vec(env_id, 1)
