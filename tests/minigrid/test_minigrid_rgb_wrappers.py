"""make_vec(id, n, wrappers=[RGBImgObsWrapper / RGBImgPartialObsWrapper, ...]) against
gymnasium's SyncVectorEnv over minigrid 3.2.0's envs wrapped the same way (innermost
first), bit for bit across autoresets: the frames drawn in the kernel as observations (with
ImgObsWrapper, the reward wrappers, DirectionObsWrapper, per-env highlight), same-step
final_obs, snapshots; bad tile sizes and orders minigrid would crash on refused before any
env is made."""
import copy

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import cypool

minigrid = pytest.importorskip("minigrid")
from minigrid.wrappers import (ActionBonus, DirectionObsWrapper,  # noqa: E402
                               FullyObsWrapper, ImgObsWrapper, OneHotPartialObsWrapper,
                               RGBImgObsWrapper, RGBImgPartialObsWrapper)

from _wrapped_ref import assert_same, wrapped  # noqa: E402

IMG, FULL, HOT = ImgObsWrapper, FullyObsWrapper, OneHotPartialObsWrapper
RGB, POV = RGBImgObsWrapper, RGBImgPartialObsWrapper
SLOPE = (DirectionObsWrapper, {"type": "slope"})


def reference(env_id, wrappers, own, mode=AutoresetMode.NEXT_STEP, **kw):
    return gym.vector.SyncVectorEnv(
        [lambda d=d: wrapped(env_id, wrappers, **kw, **d) for d in own], autoreset_mode=mode)


def policy(rng, n):
    return rng.choice(7, n, p=[0.15, 0.15, 0.3, 0.15, 0.05, 0.15, 0.05])


CASES = [
    ("MiniGrid-DoorKey-8x8-v0", [POV, IMG], {}),                      # the common use
    ("MiniGrid-DoorKey-8x8-v0", [RGB, IMG], {}),
    ("MiniGrid-DoorKey-6x6-v0", [SLOPE, (RGB, {"tile_size": 5})], {"see_through_walls": True}),
    ("MiniGrid-LavaCrossingS9N1-v0", [(POV, {"tile_size": 4}), ActionBonus, IMG], {}),
    ("MiniGrid-KeyCorridorS3R2-v0", [(POV, {"tile_size": 3})], {"agent_view_size": 5}),
    ("MiniGrid-Playground-v0", [HOT, (POV, {"tile_size": 2}), IMG], {}),
    ("MiniGrid-ObstructedMaze-1Dlhb-v0", [FULL, (RGB, {"tile_size": 4}), IMG], {}),
    ("MiniGrid-Dynamic-Obstacles-6x6-v0", [(POV, {"tile_size": 6}), RGB], {}),
]


@pytest.mark.parametrize("env_id,wrappers,kw", CASES,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(CASES)])
def test_rgb_wrapped_matches_minigrid(env_id, wrappers, kw):
    """3 envs (the middle one with highlight off), 70 steps across autoresets (max_steps
    20), threads 1 or 2 by case."""
    threads = 1 + CASES.index((env_id, wrappers, kw)) % 2
    kw = {"max_steps": 20, **kw}
    own = [{}, {"highlight": False}, {}]
    env = cypool.make_vec(env_id, 3, num_threads=threads, wrappers=wrappers, env_kwargs=own,
                          **kw)
    ref = reference(env_id, wrappers, own, **kw)
    try:
        sp, rsp = env.single_observation_space, ref.single_observation_space
        if isinstance(rsp, gym.spaces.Dict):    # minigrid's MissionSpace: a Text here
            assert list(sp) == list(rsp)
            sp, rsp = ({k: v for k, v in s.items() if k != "mission"} for s in (sp, rsp))
        assert sp == rsp
        assert_same(env.reset(seed=11)[0], ref.reset(seed=11)[0], "reset")
        rng = np.random.default_rng(2)
        n_act = env.single_action_space.n
        ends = 0
        for t in range(70):
            a = policy(rng, 3) if n_act == 7 else rng.integers(0, n_act, 3)
            x, y = env.step(a), ref.step(a)
            assert_same(x[:4], y[:4], f"step {t}")
            ends += int(np.count_nonzero(y[2] | y[3]))
        assert ends > 0
    finally:
        env.close()
        ref.close()


def test_same_step_final_obs_and_snapshot():
    env_id, wrappers = "MiniGrid-DoorKey-5x5-v0", [(POV, {"tile_size": 4}), IMG]
    own = [{}, {}]
    env = cypool.make_vec(env_id, 2, autoreset_mode="same_step", max_steps=10,
                          wrappers=wrappers)
    ref = reference(env_id, wrappers, own, AutoresetMode.SAME_STEP, max_steps=10)
    rng = np.random.default_rng(0)
    try:
        assert_same(env.reset(seed=3)[0], ref.reset(seed=3)[0], "reset")
        for t in range(30):
            a = policy(rng, 2)
            x, y = env.step(a), ref.step(a)
            assert_same(x[:4], y[:4], f"step {t}")
            if "final_obs" in y[4]:
                assert_same(x[4]["final_obs"], y[4]["final_obs"], f"final_obs {t}")
        twin = copy.deepcopy(env)
        for t in range(15):
            a = policy(rng, 2)
            assert_same(env.step(a)[:4], twin.step(a)[:4], f"twin {t}")
        twin.close()
    finally:
        env.close()
        ref.close()


def test_set_attr_highlight():
    """highlight set on one env (set_attr) changes its RGBImgObsWrapper frames, as
    minigrid's env attribute does."""
    env_id, wrappers = "MiniGrid-Empty-6x6-v0", [(RGB, {"tile_size": 3}), IMG]
    env = cypool.make_vec(env_id, 2, wrappers=wrappers)
    ref = reference(env_id, wrappers, [{}, {}])
    env.reset(seed=0)
    ref.reset(seed=0)
    env.set_attr("highlight", [True, False])
    ref.envs[1].unwrapped.highlight = False
    for a in ([2, 2], [1, 0], [2, 2]):
        assert_same(env.step(a)[0], ref.step(a)[0], "step")
    env.close()
    ref.close()


@pytest.mark.parametrize("wrappers,err,match", [
    ([(POV, {"tile_size": 0})], ValueError, "tile_size"),
    ([(RGB, {"tile_size": -4})], ValueError, "tile_size"),
    ([(RGB, {"tile_size": 100000})], ValueError, "tile_size"),
    ([(POV, {"tile_size": 8.0})], TypeError, "tile_size"),
    ([(POV, {"tile_size": "8"})], TypeError, "tile_size"),
    ([(RGB, {"tile_size": True})], TypeError, "tile_size"),
    ([(RGB, {"highlight": True})], ValueError, "RGBImgObsWrapper kwarg highlight"),
    ([RGB, HOT], ValueError, "after an RGB wrapper"),             # minigrid: IndexError
    ([FULL, POV], ValueError, "RGBImgPartialObsWrapper after"),
    ([RGB, POV], ValueError, "RGBImgPartialObsWrapper after"),
    ([POV, POV], ValueError, "RGBImgPartialObsWrapper after"),
    ([IMG, POV], ValueError, "after ImgObsWrapper"),
])
def test_bad_rgb_wrappers_refused_before_any_env(monkeypatch, wrappers, err, match):
    import cypool.minigrid._minigrid as mg

    def no_pool(*a, **k):
        raise AssertionError("a pool was made")
    monkeypatch.setattr(mg, "MiniGridPool", no_pool)
    with pytest.raises(err, match=match):
        cypool.make_vec("MiniGrid-DoorKey-5x5-v0", 2, wrappers=wrappers)
