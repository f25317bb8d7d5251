"""Toy-text rendering against gymnasium.make_vec(id, n, "sync", render_mode=...): rgb_array
frames (np.array_equal, uint8 (H, W, 3)) and ansi strings (==) after reset and across steps
with autoresets, for render() and render(env_ids=...); Taxi's orientation when only some
steps are rendered; the refusals; pygame missing."""
import pickle
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import cypool

N = 2
CASES = [
    ("FrozenLake-v1", {}),
    ("FrozenLake8x8-v1", {"is_slippery": False}),
    ("FrozenLake-v1", {"desc": ["SFFHF", "FHFFG", "FFSFH"]}),     # 320x192, not square
    ("Taxi-v4", {"max_episode_steps": 12}),                        # truncations: autoresets
    ("Taxi-v4", {"is_rainy": True, "fickle_passenger": True, "fickle_probability": 0.9,
                 "max_episode_steps": 20}),
    ("CliffWalking-v1", {"max_episode_steps": 15}),      # only the goal ends an episode
    ("CliffWalkingSlippery-v1", {"max_episode_steps": 15}),
    ("Blackjack-v1", {}),
]
MODES = {"Blackjack-v1": ["rgb_array"]}     # gymnasium's Blackjack has no ansi
PARAMS = [(e, kw, m) for e, kw in CASES for m in MODES.get(e, ["rgb_array", "ansi"])]


def policy(rng, env, n):
    a = rng.integers(0, env.single_action_space.n, n)
    if env.single_action_space.n == 4:       # lakes and cliffs: walk down-right, episodes end
        a = np.where(rng.random(n) < 0.4, np.where(rng.random(n) < 0.5, 1, 2), a)
    return a


def assert_frames(got, want, mode, where):
    assert isinstance(got, tuple) and len(got) == len(want), where
    for k, (x, y) in enumerate(zip(got, want)):
        if mode == "rgb_array":
            assert isinstance(x, np.ndarray) and x.dtype == np.uint8 and x.ndim == 3, where
            assert x.shape == y.shape and np.array_equal(x, y), (where, k)
        else:
            assert isinstance(x, str) and x == y, (where, k, x, y)


def pair(env_id, kw, mode, n=N):
    if mode == "rgb_array":
        pytest.importorskip("pygame")          # the test extra installs pygame-ce
    env = cypool.make_vec(env_id, n, render_mode=mode, **kw)
    ref = gym.make_vec(env_id, n, vectorization_mode="sync", render_mode=mode, **kw)
    return env, ref


@pytest.mark.parametrize("env_id,kw,mode", PARAMS,
                         ids=[f"{e}-{m}-{i}" for i, (e, _, m) in enumerate(PARAMS)])
def test_render_matches_gymnasium(env_id, kw, mode):
    env, ref = pair(env_id, kw, mode)
    try:
        assert env.metadata["render_modes"] == [m for m in ref.metadata["render_modes"]
                                                if m != "human"]
        ends = 0
        for seed in (0, 9):
            env.reset(seed=seed)
            ref.reset(seed=seed)
            assert_frames(env.render(), ref.render(), mode, f"seed {seed} reset")
            rng = np.random.default_rng(seed)
            for t in range(60):
                a = policy(rng, env, N)
                _, _, term, trunc, _ = env.step(a)
                ref.step(a)
                ends += int(np.sum(term | trunc))
                want = ref.render()
                assert_frames(env.render(), want, mode, f"seed {seed} step {t}")
                if t % 7 == 0:
                    assert_frames(env.render(env_ids=[1, 0]), (want[1], want[0]), mode,
                                  f"seed {seed} step {t} env_ids")
        assert ends >= 2          # autoresets were rendered
    finally:
        env.close()
        ref.close()


@pytest.mark.parametrize("mode,autoreset", [("rgb_array", "next_step"),
                                            ("rgb_array", "same_step"), ("ansi", "next_step")])
def test_taxi_sparse_rendering_matches_gymnasium(mode, autoreset):
    """gymnasium's taxi_orientation changes only when it renders rgb_array (and at reset): a
    frame after a pickup or dropoff shows the last rendered frame's orientation. Rendering
    some envs at some steps, explicit resets included, matches env-by-env renders."""
    env = cypool.make_vec("Taxi-v4", 4, render_mode=mode, max_episode_steps=15,
                          autoreset_mode=autoreset)
    ref = gym.make_vec("Taxi-v4", 4, vectorization_mode="sync", render_mode=mode,
                       max_episode_steps=15, vector_kwargs={
                           "autoreset_mode": gym.vector.AutoresetMode[autoreset.upper()]})
    try:
        rng = np.random.default_rng(3)
        env.reset(seed=4)
        ref.reset(seed=4)
        for t in range(120):
            if t % 40 == 39:
                env.reset()
                ref.reset()
            else:
                a = rng.integers(0, 6, 4)
                env.step(a)
                ref.step(a)
            ids = np.flatnonzero(rng.random(4) < 0.3).tolist()
            if ids:
                want = tuple(ref.envs[i].render() for i in ids)
                assert_frames(env.render(env_ids=ids), want, mode, f"step {t} ids {ids}")
    finally:
        env.close()
        ref.close()


def test_pickled_pool_renders_the_same():
    env, ref = pair("FrozenLake-v1", {}, "rgb_array", n=3)
    try:
        env.reset(seed=2)
        ref.reset(seed=2)
        env.step(np.array([1, 2, 1]))
        ref.step(np.array([1, 2, 1]))
        copy = pickle.loads(pickle.dumps(env))
        try:
            assert copy.render_mode == "rgb_array"
            assert_frames(copy.render(), ref.render(), "rgb_array", "copy")
        finally:
            copy.close()
    finally:
        env.close()
        ref.close()


def test_no_render_mode_refuses_render():
    env = cypool.make_vec("Taxi-v4", 2)
    try:
        env.reset(seed=0)
        with pytest.raises(gym.error.Error, match="no render mode"):
            env.render()
    finally:
        env.close()


def test_render_before_reset_and_modes_not_offered():
    env = cypool.make_vec("CliffWalking-v1", 2, render_mode="ansi")
    try:
        with pytest.raises(gym.error.ResetNeeded):
            env.render()
    finally:
        env.close()
    with pytest.raises(ValueError, match="not offered"):
        cypool.make_vec("Blackjack-v1", 2, render_mode="ansi")
    with pytest.raises(ValueError, match="not offered"):
        cypool.make_vec("FrozenLake-v1", 2, render_mode="human")


# pygame made unimportable (sys.modules[name] = None makes `import name` raise ImportError)
_NO_PYGAME = r"""
import sys
sys.modules["pygame"] = None
import gymnasium as gym, cypool
env = cypool.make_vec("FrozenLake-v1", 2, render_mode="ansi")
env.reset(seed=0)
text = env.render()
ref = gym.make_vec("FrozenLake-v1", 2, vectorization_mode="sync", render_mode="ansi")
ref.reset(seed=0)
assert text == ref.render(), (text, ref.render())
env.close()
for env_id in ("FrozenLake-v1", "Taxi-v4", "CliffWalking-v1", "Blackjack-v1"):
    env = cypool.make_vec(env_id, 2, render_mode="rgb_array")
    env.reset(seed=0)
    try:
        env.render()
    except gym.error.DependencyNotInstalled as exc:
        assert 'pip install "cypool[toy-text]"' in str(exc), str(exc)
        assert env_id in str(exc), str(exc)
    else:
        raise SystemExit(env_id + ": rendered without pygame")
    env.step([0, 1])             # the pool still works
    env.close()
print("OK")
"""


def test_pygame_missing_is_a_clear_error():
    r = subprocess.run([sys.executable, "-c", _NO_PYGAME], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr
