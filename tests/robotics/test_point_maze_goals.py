"""The batched goal functions (cypool.robotics.goals) against the installed gymnasium-robotics'
env.unwrapped.compute_reward / compute_terminated / compute_truncated, bit for bit, on batches
of any size and dtype; and the arithmetic traps they avoid (numpy's exp is not libm's on every
CPU; np.linalg.norm with and without axis round differently)."""
import math
import warnings

import gymnasium as gym
import numpy as np
import pytest

import cypool
from cypool.robotics import goals

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    gymnasium_robotics = pytest.importorskip("gymnasium_robotics")
gym.register_envs(gymnasium_robotics)


def reference(env_id, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.make(env_id, **kwargs).unwrapped


def same(x, y):
    assert type(x) is type(y), (type(x), type(y))
    if isinstance(y, np.ndarray):
        assert x.dtype == y.dtype and x.shape == y.shape
    assert np.array_equal(x, y)


def batches(rng):
    near = rng.normal(0, 0.3, (4000, 2))
    yield rng.normal(0, 2, (5000, 2)), rng.normal(0, 2, (5000, 2))
    yield near, near + rng.normal(0, 0.3, (4000, 2))            # around the 0.45 radius
    yield rng.normal(0, 1, 2), rng.normal(0, 1, 2)              # one goal pair: scalars
    yield rng.normal(0, 1, 2), rng.normal(0, 1, (7, 2))         # broadcast
    yield rng.normal(0, 1, (3, 4, 2)), rng.normal(0, 1, (3, 4, 2))
    yield (rng.normal(0, 1, (9, 2)).astype(np.float32),
           rng.normal(0, 1, (9, 2)).astype(np.float32))          # numpy's float32 route
    yield np.zeros((0, 2)), np.zeros((0, 2))
    yield np.arange(6).reshape(3, 2), np.ones((3, 2), np.int64)   # integers: as float64


@pytest.mark.parametrize("reward_type", ["sparse", "dense"])
def test_compute_reward_exact(reward_type):
    ref = reference("PointMaze_UMaze-v3", reward_type=reward_type)
    rng = np.random.default_rng(0)
    for a, d in batches(rng):
        same(goals.compute_reward(reward_type, a, d, {}), ref.compute_reward(a, d, {}))


@pytest.mark.parametrize("continuing", [True, False])
def test_compute_terminated_truncated_exact(continuing):
    ref = reference("PointMaze_UMaze-v3", continuing_task=continuing)
    rng = np.random.default_rng(1)
    for a, d in batches(rng):
        same(goals.compute_terminated(continuing, a, d, {}), ref.compute_terminated(a, d, {}))
        same(goals.compute_truncated(a, d, {}), ref.compute_truncated(a, d, {}))
    # a batch within the radius as a whole (one Frobenius norm, as the reference)
    a = rng.normal(0, 1, (3, 2))
    d = a + 0.1
    same(goals.compute_terminated(continuing, a, d), ref.compute_terminated(a, d, {}))


def test_call_on_a_pool():
    """goals.call(env, ...) is SyncVectorEnv.call's tuple: per env, with its own settings."""
    env = cypool.make_vec("PointMaze_UMazeDense-v3", 3,
                          env_kwargs=[{}, {"reward_type": "sparse"}, {}])
    try:
        rng = np.random.default_rng(2)
        a, d = rng.normal(0, 0.5, (11, 2)), rng.normal(0, 0.5, (11, 2))
        out = goals.call(env, "compute_reward", a, d, {})
        dense = reference("PointMaze_UMazeDense-v3").compute_reward(a, d, {})
        sparse = reference("PointMaze_UMaze-v3").compute_reward(a, d, {})
        assert len(out) == 3
        for x, y in zip(out, (dense, sparse, dense)):
            same(x, y)
        assert goals.call(env, "compute_terminated", a, d, {}) == (False,) * 3
        assert goals.call(env, "compute_truncated", a, d, {}) == (False,) * 3
        with pytest.raises(ValueError):
            goals.call(env, "step", a, d, {})
    finally:
        env.close()


@pytest.mark.parametrize("a,d,exc", [
    ([[np.nan, 0.0]], [[0.0, 0.0]], ValueError),
    ([[0.0, 0.0]], [[0.0, np.inf]], ValueError),
    ([[0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0]], ValueError),
    (np.zeros((3, 2)), np.zeros((4, 2)), ValueError),
    ([["a", "b"]], [[0.0, 0.0]], TypeError),
    (1.0, 2.0, ValueError),
])
def test_bad_goals_refused(a, d, exc):
    for fn in (lambda: goals.compute_reward("dense", a, d, {}),
               lambda: goals.compute_terminated(False, a, d, {}),
               lambda: goals.compute_truncated(a, d, {})):
        with pytest.raises(exc):
            fn()
    with pytest.raises(ValueError):
        goals.compute_reward("shaped", [0.0, 0.0], [0.0, 0.0])


def test_arithmetic_traps():
    """Why the kernels call numpy's exp loop and keep two distance formulas: on this CPU
    they may differ from libm's exp / from each other (asserted equal to numpy's only)."""
    from cypool.robotics import _point_maze as pm
    rng = np.random.default_rng(3)
    d = np.abs(rng.normal(0, 3, 200000))
    assert np.array_equal(pm.dense_rewards(d), np.exp(-d))
    a, b = rng.normal(0, 2, (20000, 2)), rng.normal(0, 2, (20000, 2))
    assert np.array_equal(pm.goal_distances(a, b, False), np.linalg.norm(a - b, axis=-1))
    rows = np.array([np.linalg.norm(x - y) for x, y in zip(a, b)])
    assert np.array_equal(pm.goal_distances(a, b, True), rows)
    # informative: how often libm's exp differs from numpy's here
    libm = np.array([math.exp(-x) for x in d[:20000]])
    print("np.exp != libm exp:", int((libm != np.exp(-d[:20000])).sum()), "of 20000")
