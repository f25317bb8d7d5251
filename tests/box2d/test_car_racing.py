"""CarRacing-v3 through make_vec against gymnasium.make_vec("CarRacing-v3", n, "sync") on the
box2d 2.3.10 wheel and pygame-ce, bit for bit: the 96 x 96 frames (the road, grass and field
drawn by gfxdraw, the car and the indicators by draw.polygon, the score by SDL_ttf, then
smoothscale), rewards, terminated, truncated and info dicts (lap_finished), across
autoresets, several seeds and kwargs (discrete and continuous, domain_randomize,
lap_complete_percent), one and two threads; bad input and the refusal to save a state."""
import os

import gymnasium as gym
import numpy as np
import pytest

import cypool

CR = "CarRacing-v3"


def assert_same(x, y, where):
    assert type(x) is type(y), (where, type(x), type(y))
    if isinstance(y, tuple):
        assert len(x) == len(y), where
        for k, (u, v) in enumerate(zip(x, y)):
            assert_same(u, v, f"{where}[{k}]")
    elif isinstance(y, dict):
        assert sorted(x) == sorted(y), (where, sorted(x), sorted(y))
        for k in y:
            assert_same(x[k], y[k], f"{where}[{k!r}]")
    elif y.dtype == object:
        assert x.dtype == object and x.shape == y.shape, where
        for k, (u, v) in enumerate(zip(x, y)):
            if v is None:
                assert u is None, where
            else:
                assert_same(u, v, f"{where}[{k}]")
    else:
        assert x.dtype == y.dtype and x.shape == y.shape, (where, x.dtype, y.dtype)
        if not np.array_equal(x, y):
            bad = np.argwhere(x != y)
            raise AssertionError(f"{where}: {len(bad)} values differ, first at "
                                 f"{bad[:5].tolist()}")


class Driver:
    """Drives fast along the track with random steering (the car leaves the road, skids on
    the grass, brakes; with strong gas some cars leave the playfield); continuous actions
    include values outside the box (gymnasium clips gas, steer and brake saturate)."""

    def __init__(self, continuous, n, seed):
        self.continuous, self.n = continuous, n
        self.rng = np.random.default_rng(seed)

    def __call__(self, t):
        if not self.continuous:
            p = [0.15, 0.2, 0.2, 0.35, 0.1]
            return self.rng.choice(5, size=self.n, p=p).astype(np.int64)
        a = np.zeros((self.n, 3), np.float32)
        a[:, 0] = self.rng.uniform(-1.3, 1.3, self.n)
        a[:, 1] = self.rng.uniform(0.0, 1.2, self.n)
        a[:, 2] = np.where(self.rng.random(self.n) < 0.1, self.rng.uniform(0, 1.1, self.n), 0)
        return a


def run_both(kwargs, seed, steps, n=2, num_threads=1, autoreset="next_step", limit=None):
    mode = {"next_step": gym.vector.AutoresetMode.NEXT_STEP,
            "same_step": gym.vector.AutoresetMode.SAME_STEP}[autoreset]
    ref = gym.vector.SyncVectorEnv(
        [lambda: gym.make(CR, max_episode_steps=limit, **kwargs)] * n, autoreset_mode=mode)
    env = cypool.make_vec(CR, n, num_threads=num_threads, autoreset_mode=autoreset,
                          **({} if limit is None else {"max_episode_steps": limit}), **kwargs)
    try:
        assert_same(env.reset(seed=seed), ref.reset(seed=seed), "reset")
        drive = Driver(kwargs.get("continuous", True), n, seed)
        ended = 0
        for t in range(steps):
            a = drive(t)
            x, y = env.step(a), ref.step(a)
            for k, name in enumerate(("obs", "reward", "terminated", "truncated", "info")):
                assert_same(x[k], y[k], f"step {t} {name}")
            ended += int(np.sum(y[2] | y[3]))
        return ended
    finally:
        env.close()
        ref.close()


@pytest.mark.parametrize("kwargs,seed", [
    ({}, 0),
    ({"continuous": False}, 1),
    ({"domain_randomize": True}, 2),
    ({"continuous": False, "domain_randomize": True, "lap_complete_percent": 0.5}, 3),
])
def test_frames_and_rewards_equal_gymnasium(kwargs, seed):
    run_both(kwargs, seed, 150)


def test_autoresets_and_two_threads():
    # a short time limit: every env truncates and resets (a new track in the same world)
    ended = run_both({}, 7, 130, n=3, num_threads=2, limit=40)
    assert ended >= 6


def test_same_step_autoreset():
    run_both({"continuous": False}, 11, 70, n=2, autoreset="same_step", limit=30)


@pytest.mark.parametrize("every,threads", [(1, 1), (7, 2)])
def test_rgb_array_frames_are_gymnasiums(every, threads):
    """rgb_array frames (600 x 400, skid marks included: black on the road, mud on the grass)
    from gymnasium's own render() fed the pool's state, equal to gymnasium's, every step or
    sparsely, across resets."""
    pytest.importorskip("pygame")
    n = 2
    env = cypool.make_vec(CR, n, num_threads=threads, render_mode="rgb_array",
                          max_episode_steps=90)
    ref = gym.vector.SyncVectorEnv(
        [lambda: gym.make(CR, render_mode="rgb_array", max_episode_steps=90)] * n)
    try:
        assert_same(env.reset(seed=4), ref.reset(seed=4), "reset")
        rng = np.random.default_rng(4)
        skids = 0
        for t in range(200):
            # full gas, then hard steering and braking: the wheels skid
            a = np.zeros((n, 3), np.float32)
            a[:, 1] = 1.0
            if t % 40 > 25:
                a[:, 0] = rng.choice([-1.0, 1.0], n)
                a[:, 2] = rng.uniform(0, 1, n)
            x, y = env.step(a), ref.step(a)
            for k, name in enumerate(("obs", "reward", "terminated", "truncated", "info")):
                assert_same(x[k], y[k], f"step {t} {name}")
            if t % every == 0:
                got, want = env.render(), ref.render()
                assert len(got) == len(want) == n
                for k in range(n):
                    assert_same(got[k], want[k], f"frame {t} env {k}")
                    skids += len(ref.envs[k].unwrapped.car.particles)
        assert skids > 0
    finally:
        env.close()
        ref.close()


def test_human_rendering_is_refused():
    with pytest.raises(ValueError, match="render"):
        cypool.make_vec(CR, 1, render_mode="human")
