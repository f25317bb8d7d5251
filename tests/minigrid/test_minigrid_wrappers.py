"""make_vec(id, n, wrappers=[...]) against gymnasium's SyncVectorEnv over minigrid 3.2.0's
envs wrapped by minigrid.wrappers the same way (innermost first), bit for bit across
autoresets: observations (ImgObsWrapper's bare image, FullyObsWrapper's whole grid,
OneHotPartialObsWrapper's bits, DirectionObsWrapper's goal_direction), rewards (with
ActionBonus' and PositionBonus' count bonuses, kept across episodes) and flags; snapshots;
xla() on an ImgObsWrapper pool; wrappers cypool cannot compute, bad kwargs and orders
minigrid would crash on refused before any env is made."""
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import cypool

minigrid = pytest.importorskip("minigrid")
from minigrid.wrappers import (ActionBonus, DirectionObsWrapper,  # noqa: E402
                               FullyObsWrapper, ImgObsWrapper, OneHotPartialObsWrapper,
                               PositionBonus, ReseedWrapper, SymbolicObsWrapper)

from _wrapped_ref import assert_same, wrapped  # noqa: E402

IMG, FULL, HOT = ImgObsWrapper, FullyObsWrapper, OneHotPartialObsWrapper
SLOPE = (DirectionObsWrapper, {"type": "slope"})


def reference(env_id, n, wrappers, mode=AutoresetMode.NEXT_STEP, **kw):
    return gym.vector.SyncVectorEnv([lambda: wrapped(env_id, wrappers, **kw)] * n,
                                    autoreset_mode=mode)


def policy(rng, n):
    """Weighted to forward, pickup and toggle: keys picked up, doors opened, goals reached."""
    return rng.choice(7, n, p=[0.15, 0.15, 0.35, 0.1, 0.05, 0.15, 0.05])


CASES = [
    ("MiniGrid-DoorKey-8x8-v0", [IMG], {}),
    ("MiniGrid-DoorKey-8x8-v0", [FULL], {}),
    ("MiniGrid-DoorKey-8x8-v0", [(FULL, {}), IMG], {}),
    ("MiniGrid-DoorKey-8x8-v0", [HOT], {}),
    ("MiniGrid-DoorKey-8x8-v0", [SLOPE], {}),
    ("MiniGrid-FourRooms-v0", [FULL, IMG], {}),
    ("MiniGrid-FourRooms-v0", [SLOPE, FULL], {"max_steps": 30}),
    ("MiniGrid-KeyCorridorS3R3-v0", [IMG], {}),
    ("MiniGrid-KeyCorridorS3R3-v0", [HOT], {}),
    ("BabyAI-GoToLocal-v0", [FULL, IMG], {}),
    ("BabyAI-GoToLocal-v0", [(HOT, {"tile_size": 4}), IMG], {}),
    ("MiniGrid-MultiRoom-N2-S4-v0", [FULL], {}),
    ("MiniGrid-MultiRoom-N2-S4-v0", [SLOPE, HOT, FULL, IMG], {}),
    ("MiniGrid-LavaCrossingS9N1-v0", [SLOPE], {"max_steps": 40}),
    ("MiniGrid-Dynamic-Obstacles-5x5-v0", [FULL, IMG], {}),
    ("MiniGrid-DoorKey-8x8-v0", [ActionBonus], {}),
    ("MiniGrid-FourRooms-v0", [(PositionBonus, {"scale": 0.3}), ActionBonus], {}),
    ("BabyAI-GoToLocal-v0", [FULL, IMG, ActionBonus, PositionBonus], {}),
    ("MiniGrid-Dynamic-Obstacles-5x5-v0", [ActionBonus, IMG, (PositionBonus, {"scale": 3})],
     {}),
]


@pytest.mark.parametrize("env_id,wrappers,kw", CASES,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(CASES)])
def test_wrapped_matches_minigrid(env_id, wrappers, kw):
    """3 envs, 150 random steps across autoresets (max_steps 40 unless the case says),
    threads 1 or 2 by case."""
    threads = 1 + CASES.index((env_id, wrappers, kw)) % 2
    kw = {"max_steps": 40, **kw}
    env = cypool.make_vec(env_id, 3, num_threads=threads, wrappers=wrappers, **kw)
    ref = reference(env_id, 3, wrappers, **kw)
    try:
        sp, rsp = env.single_observation_space, ref.single_observation_space
        if isinstance(rsp, gym.spaces.Dict):    # minigrid's MissionSpace: a Text here
            assert list(sp) == list(rsp)
            sp, rsp = ({k: v for k, v in s.items() if k != "mission"} for s in (sp, rsp))
        assert sp == rsp
        assert_same(env.reset(seed=7), ref.reset(seed=7), "reset")
        rng = np.random.default_rng(1)
        k = env.single_action_space.n
        ends = 0
        for t in range(150):
            a = policy(rng, 3) if k == 7 else rng.integers(0, k, 3)
            x, y = env.step(a), ref.step(a)
            assert_same(x[:4], y[:4], f"step {t}")
            ends += int(np.count_nonzero(y[2] | y[3]))
        assert ends > 0                                 # autoresets were compared
    finally:
        env.close()
        ref.close()


def test_same_step_final_obs_and_single_env():
    """Same-step autoreset's final_obs is the wrapped observation; the single-env route
    (gym.make("cypool/...")) takes the wrappers too."""
    env_id, wrappers = "MiniGrid-DoorKey-5x5-v0", [FULL, IMG]
    env = cypool.make_vec(env_id, 3, autoreset_mode="same_step", max_steps=12,
                          wrappers=wrappers)
    ref = reference(env_id, 3, wrappers, AutoresetMode.SAME_STEP, max_steps=12)
    try:
        assert_same(env.reset(seed=2), ref.reset(seed=2), "reset")
        rng = np.random.default_rng(0)
        for t in range(40):
            a = policy(rng, 3)
            x, y = env.step(a), ref.step(a)
            assert_same(x[:4], y[:4], f"step {t}")
            if "final_obs" in y[4]:
                assert_same(x[4]["final_obs"], y[4]["final_obs"], f"final_obs {t}")
    finally:
        env.close()
        ref.close()
    one = gym.make(f"cypool/{env_id}", wrappers=[SLOPE, FULL])
    two = wrapped(env_id, [SLOPE, FULL])
    assert_same(one.reset(seed=4)[0], two.reset(seed=4)[0], "reset")
    for a in np.random.default_rng(3).integers(0, 7, 20):
        x, y = one.step(int(a)), two.step(int(a))
        assert_same(x[0], y[0], "obs")
        assert x[1:4] == y[1:4]
        if x[2] or x[3]:
            break
    one.close()
    two.close()


class NotMiniGrid(gym.ObservationWrapper):
    pass


@pytest.mark.parametrize("wrappers,err,match", [
    ([IMG, SymbolicObsWrapper], ValueError, "after ImgObsWrapper"),
    ([(ReseedWrapper, {"seeds": ()})], ValueError, "ReseedWrapper"),
    ([NotMiniGrid], ValueError, "NotMiniGrid.*supported: "),
    ([IMG, FULL], ValueError, "after ImgObsWrapper"),
    ([IMG, IMG], ValueError, "after ImgObsWrapper"),
    ([HOT, HOT], ValueError, "twice"),
    ([FULL, HOT], ValueError, "after FullyObsWrapper"),     # minigrid: IndexError
    ([(DirectionObsWrapper, {"type": "angle"})], ValueError, "type='angle'"),
    ([(FULL, {"x": 1})], ValueError, "FullyObsWrapper kwarg x"),
    ([(FULL, {}, {})], TypeError, r"wrappers\[0\]"),
    (IMG, TypeError, "list"),
    ([ActionBonus, ActionBonus], ValueError, "twice"),
    ([(PositionBonus, {"scale": np.float32(2)})], TypeError, "scale"),
    ([(DirectionObsWrapper, {"type": np.array(["slope"])})], ValueError, "type="),
])
def test_bad_wrappers_refused_before_any_env(monkeypatch, wrappers, err, match):
    import cypool.minigrid._minigrid as mg

    def no_pool(*a, **k):
        raise AssertionError("a pool was made")
    monkeypatch.setattr(mg, "MiniGridPool", no_pool)
    with pytest.raises(err, match=match):
        cypool.make_vec("MiniGrid-DoorKey-5x5-v0", 2, wrappers=wrappers)


def test_direction_needs_a_goal():
    """KeyCorridor has no Goal: minigrid's DirectionObsWrapper raises at reset; cypool at
    make."""
    with pytest.raises(ValueError, match="Goal"):
        wrapped("MiniGrid-KeyCorridorS3R1-v0", [SLOPE]).reset(seed=0)
    with pytest.raises(ValueError, match="Goal"):
        cypool.make_vec("MiniGrid-KeyCorridorS3R1-v0", 2, wrappers=[SLOPE])


def test_xla_with_img_obs():
    """ImgObsWrapper leaves no text leaf: xla() serves the pool, its scan equal to the Python
    path across autoresets; the Dict observation is still refused."""
    pytest.importorskip("jax")
    import jax

    env_id, wrappers = "MiniGrid-DoorKey-5x5-v0", [FULL, IMG]
    env = cypool.make_vec(env_id, 3, wrappers=wrappers, max_steps=20)
    ref = cypool.make_vec(env_id, 3, wrappers=wrappers, max_steps=20)
    env.reset(seed=1), ref.reset(seed=1)
    acts = np.random.default_rng(0).integers(0, 7, (60, 3)).astype(np.int32)
    handle, recv, send, step = env.xla()

    def body(h, a):
        h, (o, r, te, tr, _) = step(h, a)
        return h, (o, r, te, tr)
    _, xs = jax.jit(lambda h, A: jax.lax.scan(body, h, A))(handle, acts)
    xs = jax.device_get(jax.block_until_ready(xs))
    ends = 0
    for t, a in enumerate(acts):
        o, r, te, tr, _ = ref.step(a)
        for k, y in enumerate((o, r, te, tr)):
            x = np.asarray(xs[k])[t]
            assert np.array_equal(x, np.asarray(y).astype(x.dtype)), (k, t)
        ends += int(np.sum(te | tr))
    assert ends > 0
    env.close(), ref.close()
    dict_env = cypool.make_vec(env_id, 2, wrappers=[FULL])
    with pytest.raises(ValueError, match="text leaf"):
        dict_env.xla()
    dict_env.close()


def test_snapshot_keeps_bonus_counts():
    """copy.deepcopy mid-run: the twin's bonus counts (state_arrays acounts, pcounts) and
    wrapped observations go on as the original's."""
    import copy

    env = cypool.make_vec("MiniGrid-DoorKey-6x6-v0", 2, max_steps=15,
                          wrappers=[ActionBonus, (PositionBonus, {"scale": 2}), FULL, IMG])
    env.reset(seed=1)
    acts = np.random.default_rng(0).integers(0, 7, (60, 2))
    for a in acts[:20]:
        env.step(a)
    twin = copy.deepcopy(env)
    for t, a in enumerate(acts[20:]):
        x, y = env.step(a), twin.step(a)
        assert_same(x[:4], y[:4], f"step {t}")
    env.close()
    twin.close()
