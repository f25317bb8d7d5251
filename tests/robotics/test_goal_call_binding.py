"""env.call("compute_reward", ...)'s fast path: the pool binds the family's goal function to
its envs' settings once (Pool.bind_method) and rebinds it when a setting changes; the bound
kernels (squared distances against the largest square whose root is within the threshold,
the goals checked only when a result is not finite, rows four at a time where the CPU has
AVX2 and one by one after the last group of four, the GIL released on big batches) equal the
reference's compute_reward bit for bit at the threshold itself."""
import numpy as np
import pytest

import cypool
from cypool.errors import ClosedEnvError

from _fetch_ref import reference   # (patches the reference: Gymnasium-Robotics PR #330)

IDS = ["FetchReach-v4", "HandReach-v3", "HandManipulateBlockRotateZ-v1", "PointMaze_UMaze-v3"]


def bits_equal(x, y):
    x, y = np.asarray(x), np.asarray(y)
    assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, y.dtype, x.shape, y.shape)
    assert x.tobytes() == y.tobytes()


class _Ref:
    """One reference env's compute_reward (a 1-env SyncVectorEnv of gymnasium.make)."""

    def __init__(self, env_id, reward_type):
        self.vec = reference(env_id, 1, reward_type=reward_type)
        self.compute_reward = self.vec.envs[0].unwrapped.compute_reward

    def close(self):
        self.vec.close()


def _ref(env_id, reward_type):
    return _Ref(env_id, reward_type)


def _goals(obs, n, rng, scale=0.05):
    g = obs["desired_goal"][rng.integers(0, len(obs["desired_goal"]), n)]
    a = g + rng.normal(0, scale, g.shape)
    if g.shape[1] == 7:
        a[:, 3:] /= np.linalg.norm(a[:, 3:], axis=-1, keepdims=True)
    return a, g


@pytest.mark.parametrize("env_id", IDS)
def test_rebound_when_a_setting_changes(env_id):
    env = cypool.make_vec(env_id, 3)
    try:
        obs, _ = env.reset(seed=0)
        a, d = _goals(obs, 40, np.random.default_rng(1))
        refs = {rt: _ref(env_id, rt) for rt in ("sparse", "dense")}
        first = env.unwrapped.get_attr("reward_type")[0]
        for got in env.call("compute_reward", a, d, {}):
            bits_equal(got, refs[first].compute_reward(a, d, {}))
        other = "dense" if first == "sparse" else "sparse"
        env.set_attr("reward_type", other)            # every env: the kernel rebinds
        for got in env.call("compute_reward", a, d, {}):
            bits_equal(got, refs[other].compute_reward(a, d, {}))
        env.set_attr("reward_type", [first, other, first])     # mixed: one per setting
        got = env.call("compute_reward", a, d, {})
        for g, rt in zip(got, [first, other, first]):
            bits_equal(g, refs[rt].compute_reward(a, d, {}))
        for r in refs.values():
            r.close()
    finally:
        env.close()


@pytest.mark.parametrize("n", [1, 255, 256, 257, 513, 40000])
def test_batch_sizes(n):
    """Groups of four rows and the rows after them, and a batch big enough to release the
    GIL."""
    for env_id in ("FetchPush-v4", "HandReach-v3", "PointMaze_UMaze-v3"):
        env = cypool.make_vec(env_id, 2)
        ref = _ref(env_id, "sparse")
        try:
            obs, _ = env.reset(seed=2)
            a, d = _goals(obs, n, np.random.default_rng(n))
            got = env.call("compute_reward", a, d, {})
            bits_equal(got[0], ref.compute_reward(a, d, {}))
            assert got[1] is got[0]
            by_name = env.call("compute_reward", achieved_goal=a, desired_goal=d, info={})
            bits_equal(by_name[1], got[0])
        finally:
            env.close()
            ref.close()


@pytest.mark.parametrize("env_id,size,threshold", [
    ("FetchPush-v4", 3, 0.05), ("HandReach-v3", 15, 0.01), ("PointMaze_UMaze-v3", 2, 0.45)])
def test_rewards_at_the_threshold(env_id, size, threshold):
    """Squared distances on every double within a few ulps of threshold**2: the sparse
    kernel's comparison of squares decides as the reference's root does. (For HandReach's
    0.01, sqrt(s) > 0.01 first holds 2 ulps above 0.01 * 0.01, not 1: a comparison with
    the rounded square of the threshold would be wrong there.)"""
    x = threshold + np.arange(-6, 7) * np.spacing(threshold)
    y = np.sqrt(np.arange(0, 24) * np.spacing(threshold * threshold))
    a = np.zeros((len(x) * len(y), size))
    a[:, 0] = np.repeat(x, len(y))                  # squares x**2 + y**2: each double near
    a[:, 1] = np.tile(y, len(x))                    # threshold**2, several times over
    d = np.zeros_like(a)
    env = cypool.make_vec(env_id, 1)
    ref = _ref(env_id, "sparse")
    try:
        got = env.call("compute_reward", a, d, {})[0]
        want = ref.compute_reward(a, d, {})
        bits_equal(got, want)
        near = want == (-1.0 if env_id != "PointMaze_UMaze-v3" else 0.0)    # beyond it
        assert 0 < near.sum() < len(near)
        if threshold == 0.01:
            s = (a * a).sum(axis=-1)
            assert ((s > threshold * threshold) != near).any()
    finally:
        env.close()
        ref.close()


def test_overflowing_squares_and_nan_goals():
    """Finite goals whose squares overflow are the reference's inf distances; a NaN goal is
    refused, also where its row's square is what flags it."""
    env = cypool.make_vec("FetchReach-v4", 1)
    ref = _ref("FetchReach-v4", "dense")
    try:
        env.set_attr("reward_type", "dense")
        a = np.full((300, 3), 1e300)
        with np.errstate(over="ignore"):
            bits_equal(env.call("compute_reward", a, -a, {})[0],
                       ref.compute_reward(a, -a, {}))
        for which in ("achieved_goal", "desired_goal"):
            x, y = np.zeros((300, 3)), np.zeros((300, 3))
            (x if which == "achieved_goal" else y)[299, 2] = np.nan
            with pytest.raises(ValueError, match=f"{which} contains NaN"):
                env.call("compute_reward", x, y, {})
    finally:
        env.close()
        ref.close()


def test_closed_pool_refuses_the_bound_method():
    env = cypool.make_vec("FetchReach-v4", 2)
    a = np.zeros((4, 3))
    env.call("compute_reward", a, a, {})
    env.close()
    with pytest.raises(ClosedEnvError):
        env.call("compute_reward", a, a, {})
