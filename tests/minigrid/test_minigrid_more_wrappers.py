"""make_vec(id, n, wrappers=[...]) with minigrid 3.2.0's ViewSizeWrapper, NoDeath,
ReseedWrapper, StochasticActionWrapper, FlatObsWrapper, DictObservationSpaceWrapper and
SymbolicObsWrapper, against gymnasium's SyncVectorEnv over minigrid's
envs wrapped by the same classes (innermost first), bit for bit across autoresets: every
observation key, reward, terminated, truncated and info; their combinations with the other
wrappers; bad kwargs and orders refused before any pool is made."""
import copy

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import cypool

minigrid = pytest.importorskip("minigrid")
from minigrid.wrappers import (ActionBonus, DictObservationSpaceWrapper,  # noqa: E402
                               DirectionObsWrapper, FlatObsWrapper, FullyObsWrapper,
                               ImgObsWrapper, NoDeath, OneHotPartialObsWrapper, PositionBonus,
                               ReseedWrapper, RGBImgObsWrapper, RGBImgPartialObsWrapper,
                               StochasticActionWrapper, SymbolicObsWrapper, ViewSizeWrapper)

from _wrapped_ref import assert_same, wrapped  # noqa: E402

IMG, FULL, HOT = ImgObsWrapper, FullyObsWrapper, OneHotPartialObsWrapper
FLAT, WORDS, SYM = FlatObsWrapper, DictObservationSpaceWrapper, SymbolicObsWrapper
SLOPE = (DirectionObsWrapper, {"type": "slope"})
pytestmark = pytest.mark.filterwarnings("ignore:.*ReseedWrapper.reset")


def VS(k):
    return (ViewSizeWrapper, {"agent_view_size": k})


def ND(types=("lava",), **kw):
    return (NoDeath, {"no_death_types": types, **kw})


def RS(seeds, **kw):
    return (ReseedWrapper, {"seeds": seeds, **kw})


def SA(**kw):
    return (StochasticActionWrapper, kw)


def reference(env_id, n, wrappers, mode=AutoresetMode.NEXT_STEP, **kw):
    return gym.vector.SyncVectorEnv([lambda: wrapped(env_id, wrappers, **kw)] * n,
                                    autoreset_mode=mode)


def policy(rng, n):
    """Weighted to forward, pickup and toggle: keys picked up, doors opened, goals reached."""
    return rng.choice(7, n, p=[0.15, 0.15, 0.35, 0.1, 0.05, 0.15, 0.05])


def compare(env_id, wrappers, n=3, steps=150, threads=1, seed=7, reseed_at=None, **kw):
    """cypool and the reference side by side: spaces, reset(seed), steps (every output, the
    info included) across autoresets; a second reset(seed) at step reseed_at. The number
    of episode ends seen."""
    kw = {"max_steps": 40, **kw}
    env = cypool.make_vec(env_id, n, num_threads=threads, wrappers=wrappers, **kw)
    ref = reference(env_id, n, wrappers, **kw)
    try:
        sp, rsp = env.single_observation_space, ref.single_observation_space
        if isinstance(rsp, gym.spaces.Dict):    # minigrid's MissionSpace: a Text here
            assert list(sp) == list(rsp)
            sp, rsp = ({k: v for k, v in s.items() if k != "mission"} for s in (sp, rsp))
        assert sp == rsp
        assert_same(env.reset(seed=seed), ref.reset(seed=seed), "reset")
        rng = np.random.default_rng(1)
        k = env.single_action_space.n
        ends = 0
        for t in range(steps):
            if t == reseed_at:
                assert_same(env.reset(seed=seed + 1), ref.reset(seed=seed + 1), "reset 2")
            a = policy(rng, n) if k == 7 else rng.integers(0, k, n)
            x, y = env.step(a), ref.step(a)
            assert_same(x, y, f"step {t}")
            ends += int(np.count_nonzero(y[2] | y[3]))
        return ends
    finally:
        env.close()
        ref.close()


def refused(wrappers, err, match, env_id="MiniGrid-DoorKey-5x5-v0", monkeypatch=None,
            **kw):
    import cypool.minigrid._minigrid as mg

    def no_pool(*a, **k):
        raise AssertionError("a pool was made")
    monkeypatch.setattr(mg, "MiniGridPool", no_pool)
    with pytest.raises(err, match=match):
        cypool.make_vec(env_id, 2, wrappers=wrappers, **kw)


# ------------------------------------------------------------------------ ViewSizeWrapper
VIEW_CASES = [
    ("MiniGrid-LavaCrossingS9N1-v0", [VS(5)], {}),
    ("MiniGrid-DoorKey-8x8-v0", [VS(5), IMG], {}),
    ("MiniGrid-DoorKey-8x8-v0", [VS(3)], {"see_through_walls": True}),
    ("MiniGrid-FourRooms-v0", [VS(9), HOT], {}),
    ("MiniGrid-FourRooms-v0", [FULL, VS(11), IMG], {}),
    ("MiniGrid-KeyCorridorS3R3-v0", [(ViewSizeWrapper, {})], {"agent_view_size": 5}),
    ("BabyAI-GoToLocal-v0", [VS(13), ActionBonus], {}),
    # the frame's highlight: the env's view (7), not the wrapper's
    ("MiniGrid-DoorKey-6x6-v0", [VS(3), (RGBImgObsWrapper, {"tile_size": 4})], {}),
    ("MiniGrid-DoorKey-5x5-v0", [RGBImgPartialObsWrapper, VS(3), IMG], {}),
    ("MiniGrid-DoorKey-5x5-v0", [VS(7), (RGBImgPartialObsWrapper, {"tile_size": 2})], {}),
]


@pytest.mark.parametrize("env_id,wrappers,kw", VIEW_CASES,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(VIEW_CASES)])
def test_view_size_matches_minigrid(env_id, wrappers, kw):
    threads = 1 + VIEW_CASES.index((env_id, wrappers, kw)) % 2
    assert compare(env_id, wrappers, threads=threads, **kw) > 0


def test_view_size_vs_the_kwarg():
    """ViewSizeWrapper(k) encodes the view at k as agent_view_size=k does, but the env keeps
    its own agent_view_size: render()'s highlight (and RGBImgObsWrapper's) is the env's."""
    env_id = "MiniGrid-FourRooms-v0"
    kw = {"render_mode": "rgb_array", "tile_size": 4}
    env = cypool.make_vec(env_id, 2, wrappers=[VS(5)], agent_view_size=9, **kw)
    kwarg = cypool.make_vec(env_id, 2, agent_view_size=5, **kw)
    ref = gym.vector.SyncVectorEnv(
        [lambda: wrapped(env_id, [VS(5)], agent_view_size=9, **kw)] * 2)
    try:
        x, y, z = env.reset(seed=3), ref.reset(seed=3), kwarg.reset(seed=3)
        assert_same(x, y, "reset")
        assert np.array_equal(x[0]["image"], z[0]["image"])
        for t, a in enumerate(np.random.default_rng(0).integers(0, 3, (10, 2))):
            assert_same(env.step(a), ref.step(a), f"step {t}")
            kwarg.step(a)
            frames, want = env.render(), ref.render()
            assert all(np.array_equal(u, v) for u, v in zip(frames, want))
        assert not np.array_equal(env.render()[0], kwarg.render()[0])   # 9 vs 5 highlighted
    finally:
        env.close(), ref.close(), kwarg.close()


@pytest.mark.parametrize("wrappers,err,match", [
    ([VS(4)], ValueError, "odd"),
    ([VS(1)], ValueError, "agent_view_size"),
    ([VS(5.0)], TypeError, "agent_view_size"),
    ([VS(True)], TypeError, "agent_view_size"),
    ([(ViewSizeWrapper, {"size": 5})], ValueError, "ViewSizeWrapper kwarg size"),
    ([VS(5), RGBImgPartialObsWrapper], ValueError, "RGBImgPartialObsWrapper after"),
    ([IMG, VS(5)], ValueError, "after ImgObsWrapper"),
])
def test_view_size_refused(monkeypatch, wrappers, err, match):
    refused(wrappers, err, match, monkeypatch=monkeypatch)


# -------------------------------------------------------------------------------- NoDeath
NODEATH_CASES = [
    ("MiniGrid-LavaCrossingS9N1-v0", [ND(death_cost=-1.0)], {}),
    ("MiniGrid-LavaGapS5-v0", [ND(), ActionBonus], {}),
    ("MiniGrid-LavaGapS6-v0", [ActionBonus, ND(("lava", "wall"), death_cost=-0.3), IMG], {}),
    ("MiniGrid-Dynamic-Obstacles-5x5-v0", [ND(("ball",), death_cost=-0.5)], {}),
    ("MiniGrid-Dynamic-Obstacles-6x6-v0", [ND(["ball"], death_cost=2), PositionBonus], {}),
    # a str tests substrings (`"lava" in "lava"`), as minigrid's `in` does
    ("MiniGrid-DistShift1-v0", [ND("lava", death_cost=-2), ND(("lava",), death_cost=-0.1)],
     {"max_steps": 60}),
]


@pytest.mark.parametrize("env_id,wrappers,kw", NODEATH_CASES,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(NODEATH_CASES)])
def test_no_death_matches_minigrid(env_id, wrappers, kw):
    threads = 1 + NODEATH_CASES.index((env_id, wrappers, kw)) % 2
    assert compare(env_id, wrappers, threads=threads, steps=200, **kw) > 0


@pytest.mark.parametrize("wrappers,err,match", [
    ([ND(("goal", "lava"))], ValueError, "goal"),
    ([(NoDeath, {})], TypeError, "no_death_types"),
    ([ND(5)], TypeError, "no_death_types"),
    ([ND(death_cost=np.float32(-1))], TypeError, "death_cost"),
    ([ND(death_cost="x")], TypeError, "death_cost"),
    ([(NoDeath, {"no_death_types": ("lava",), "cost": 1})], ValueError, "NoDeath kwarg cost"),
])
def test_no_death_refused(monkeypatch, wrappers, err, match):
    refused(wrappers, err, match, monkeypatch=monkeypatch)


# -------------------------------------------------------------------------- ReseedWrapper
RESEED_CASES = [
    ("MiniGrid-Empty-Random-6x6-v0", [RS([3, 5, 7])], {"max_steps": 10}),
    ("MiniGrid-DoorKey-5x5-v0", [RS((1, 2), seed_idx=1), FULL], {"max_steps": 15}),
    ("MiniGrid-KeyCorridorS3R2-v0", [RS(range(4), seed_idx=-1), IMG], {"max_steps": 12}),
    ("BabyAI-GoToLocal-v0", [ActionBonus, RS([2 ** 80, 0])], {"max_steps": 12}),
]


@pytest.mark.parametrize("env_id,wrappers,kw", RESEED_CASES,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(RESEED_CASES)])
def test_reseed_matches_minigrid(env_id, wrappers, kw):
    """Every reset (reset(seed), which the wrapper ignores, and each autoreset) takes the
    next seed of each env's own cycle."""
    threads = 1 + RESEED_CASES.index((env_id, wrappers, kw)) % 2
    assert compare(env_id, wrappers, n=3, threads=threads, reseed_at=60, **kw) > 3


def test_reseed_unseeded_reset_and_snapshot():
    """reset() without a seed gives the cycle's first layouts too; a deepcopy keeps each
    env's place in its cycle."""
    env_id, wrappers = "MiniGrid-Empty-Random-5x5-v0", [RS([11, 12, 13])]
    env = cypool.make_vec(env_id, 2, wrappers=wrappers, max_steps=6)
    ref = reference(env_id, 2, wrappers, max_steps=6)
    assert_same(env.reset(), ref.reset(), "reset")
    acts = np.random.default_rng(0).integers(0, 3, (40, 2))
    for a in acts[:9]:
        assert_same(env.step(a), ref.step(a), "step")
    twin = copy.deepcopy(env)
    for t, a in enumerate(acts[9:]):
        y = ref.step(a)
        assert_same(env.step(a), y, f"step {t}")
        assert_same(twin.step(a), y, f"twin step {t}")
    env.close(), twin.close(), ref.close()


@pytest.mark.parametrize("kw,err,match", [
    ({"seeds": []}, ValueError, "empty"),
    ({"seeds": [-1]}, ValueError, r"seeds\[0\]"),
    ({"seeds": [1.5]}, TypeError, r"seeds\[0\]"),
    ({"seeds": [np.int64(1)]}, TypeError, r"seeds\[0\]"),     # gymnasium: a Python int
    ({"seeds": 3}, TypeError, "sequence"),
    ({"seeds": [1, 2], "seed_idx": 2}, ValueError, "seed_idx"),
    ({"seeds": [1, 2], "seed_idx": -3}, ValueError, "seed_idx"),
    ({"seeds": [1], "idx": 0}, ValueError, "ReseedWrapper kwarg idx"),
])
def test_reseed_refused(monkeypatch, kw, err, match):
    refused([(ReseedWrapper, kw)], err, match, monkeypatch=monkeypatch)


# ---------------------------------------------------------------- StochasticActionWrapper
STOCH_CASES = [
    ("MiniGrid-DoorKey-8x8-v0", [SA(prob=0.7)], {}),
    ("MiniGrid-Dynamic-Obstacles-5x5-v0", [SA(prob=0.5), ActionBonus], {}),
    ("MiniGrid-FourRooms-v0", [(StochasticActionWrapper, {}), IMG], {}),
    # NoDeath inside sees the stochastic action, ActionBonus outside the user's
    ("MiniGrid-LavaCrossingS9N2-v0", [ND(), SA(prob=0.6), ActionBonus], {}),
    ("MiniGrid-LavaGapS5-v0", [ActionBonus, SA(prob=0.5), SA(prob=0.8, random_action=1),
                               ND(death_cost=-0.25)], {}),
    ("BabyAI-GoToLocal-v0", [SA(prob=0.3, random_action=2), RS([4, 9]), FULL], {}),
]


@pytest.mark.parametrize("env_id,wrappers,kw", STOCH_CASES,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(STOCH_CASES)])
def test_stochastic_action_matches_minigrid(env_id, wrappers, kw):
    """The wrapper draws from the env's np_random (gymnasium's Wrapper.np_random): random()
    then, below prob failing, integers(n) unless random_action is set."""
    threads = 1 + STOCH_CASES.index((env_id, wrappers, kw)) % 2
    assert compare(env_id, wrappers, threads=threads, **kw) > 0


@pytest.mark.parametrize("env_id,kw,err,match", [
    ("MiniGrid-DoorKey-5x5-v0", {"prob": np.float32(0.5)}, TypeError, "prob"),
    ("MiniGrid-DoorKey-5x5-v0", {"random_action": 7}, ValueError, "random_action"),
    ("MiniGrid-DoorKey-5x5-v0", {"random_action": 1.0}, TypeError, "random_action"),
    ("MiniGrid-Dynamic-Obstacles-5x5-v0", {"random_action": 3}, ValueError, "random_action"),
    ("MiniGrid-DoorKey-5x5-v0", {"p": 0.5}, ValueError, "StochasticActionWrapper kwarg p"),
])
def test_stochastic_action_refused(monkeypatch, env_id, kw, err, match):
    refused([(StochasticActionWrapper, kw)], err, match, env_id=env_id,
            monkeypatch=monkeypatch)


# ------------------------------------------------------------------------- FlatObsWrapper
FLAT_CASES = [
    ("MiniGrid-LavaCrossingS9N1-v0", [FLAT], {}),
    ("MiniGrid-Fetch-8x8-N3-v0", [(FLAT, {"maxStrLen": 28}), ActionBonus], {}),
    ("MiniGrid-LockedRoom-v0", [FULL, FLAT], {}),
    ("MiniGrid-DoorKey-8x8-v0", [SLOPE, VS(5), HOT, FLAT], {}),
    ("MiniGrid-PutNear-6x6-N2-v0", [RGBImgPartialObsWrapper, (FLAT, {"maxStrLen": 40})], {}),
    ("MiniGrid-Playground-v0", [(FLAT, {"maxStrLen": 0})], {}),      # its mission is ""
]


@pytest.mark.parametrize("env_id,wrappers,kw", FLAT_CASES,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(FLAT_CASES)])
def test_flat_obs_matches_minigrid(env_id, wrappers, kw):
    threads = 1 + FLAT_CASES.index((env_id, wrappers, kw)) % 2
    assert compare(env_id, wrappers, threads=threads, **kw) > 0


@pytest.mark.parametrize("env_id,wrappers,err,match", [
    ("MiniGrid-Fetch-8x8-N3-v0", [(FLAT, {"maxStrLen": 27})], ValueError, "maxStrLen=27"),
    ("MiniGrid-DoorKey-5x5-v0", [(FLAT, {"maxStrLen": -1})], ValueError, "maxStrLen"),
    ("MiniGrid-DoorKey-5x5-v0", [(FLAT, {"maxStrLen": 9.0})], TypeError, "maxStrLen"),
    ("BabyAI-GoToLocal-v0", [FLAT], ValueError, "BabyAI"),
    ("MiniGrid-DoorKey-5x5-v0", [FLAT, IMG], ValueError, "after FlatObsWrapper"),
    ("MiniGrid-DoorKey-5x5-v0", [IMG, FLAT], ValueError, "after ImgObsWrapper"),
    ("MiniGrid-DoorKey-5x5-v0", [FLAT, FLAT], ValueError, "after FlatObsWrapper"),
    ("MiniGrid-DoorKey-5x5-v0", [WORDS, FLAT], ValueError, "after DictObservation"),
    ("MiniGrid-DoorKey-5x5-v0", [SYM, FLAT], ValueError, "after SymbolicObsWrapper"),
])
def test_flat_obs_refused(monkeypatch, env_id, wrappers, err, match):
    refused(wrappers, err, match, env_id=env_id, monkeypatch=monkeypatch)


# ------------------------------------------------------------ DictObservationSpaceWrapper
_DOORKEY_WORDS = {w: 100 + k for k, w in enumerate(
    "use the key to open door and then get goal".split())}
WORDS_CASES = [
    ("MiniGrid-LockedRoom-v0", [WORDS], {}),
    ("MiniGrid-GoToDoor-8x8-v0", [HOT, (WORDS, {"max_words_in_mission": 6})], {}),
    ("MiniGrid-DoorKey-8x8-v0", [SLOPE, WORDS], {}),           # the space drops the slope
    ("MiniGrid-DoorKey-8x8-v0", [(WORDS, {"word_dict": _DOORKEY_WORDS}), SLOPE], {}),
    ("MiniGrid-KeyCorridorS3R3-v0", [WORDS, FULL, IMG], {}),
    ("MiniGrid-PutNear-8x8-N3-v0", [WORDS, VS(3), PositionBonus], {}),
]


@pytest.mark.parametrize("env_id,wrappers,kw", WORDS_CASES,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(WORDS_CASES)])
def test_dict_observation_space_matches_minigrid(env_id, wrappers, kw):
    threads = 1 + WORDS_CASES.index((env_id, wrappers, kw)) % 2
    assert compare(env_id, wrappers, threads=threads, **kw) > 0


@pytest.mark.parametrize("env_id,wrappers,err,match", [
    ("MiniGrid-GoToDoor-8x8-v0", [(WORDS, {"max_words_in_mission": 5})], ValueError,
     "max_words_in_mission=5"),
    ("MiniGrid-DoorKey-5x5-v0", [(WORDS, {"word_dict": {"use": 1}})], ValueError,
     "unknown word 'the'"),
    ("MiniGrid-DoorKey-5x5-v0", [(WORDS, {"word_dict": {"use": 1.0}})], TypeError,
     "word_dict"),
    ("MiniGrid-DoorKey-5x5-v0", [(WORDS, {"max_words_in_mission": 0})], ValueError,
     "max_words_in_mission"),
    ("BabyAI-GoToLocal-v0", [WORDS], ValueError, "BabyAI"),
    ("MiniGrid-DoorKey-5x5-v0", [WORDS, WORDS], ValueError, "after DictObservation"),
])
def test_dict_observation_space_refused(monkeypatch, env_id, wrappers, err, match):
    refused(wrappers, err, match, env_id=env_id, monkeypatch=monkeypatch)


# --------------------------------------------------------------------- SymbolicObsWrapper
SYM_CASES = [
    ("MiniGrid-LavaCrossingS9N1-v0", [SYM], {}),
    ("MiniGrid-DoorKey-8x8-v0", [SYM, IMG], {}),
    ("MiniGrid-MultiRoom-N2-S4-v0", [HOT, SYM, SLOPE], {}),
    ("BabyAI-GoToLocal-v0", [SYM, ActionBonus], {}),
    ("MiniGrid-KeyCorridorS3R3-v0", [SYM, WORDS], {}),
    ("MiniGrid-Dynamic-Obstacles-8x8-v0", [SYM, FULL], {}),
    ("MiniGrid-ObstructedMaze-1Dlhb-v0", [FULL, SYM, IMG], {}),
]


@pytest.mark.parametrize("env_id,wrappers,kw", SYM_CASES,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(SYM_CASES)])
def test_symbolic_obs_matches_minigrid(env_id, wrappers, kw):
    threads = 1 + SYM_CASES.index((env_id, wrappers, kw)) % 2
    assert compare(env_id, wrappers, threads=threads, **kw) > 0


@pytest.mark.parametrize("wrappers,match", [
    ([SYM, HOT], "OneHotPartialObsWrapper after SymbolicObsWrapper"),
    ([SYM, RGBImgPartialObsWrapper], "RGBImgPartialObsWrapper after"),
    ([(SYM, {"x": 1})], "SymbolicObsWrapper kwarg x"),
])
def test_symbolic_obs_refused(monkeypatch, wrappers, match):
    refused(wrappers, ValueError, match, monkeypatch=monkeypatch)
