"""CartPole-v0/v1 and MountainCar-v0 against gymnasium's envs under SyncVectorEnv, bit for
bit: float32 observations, float64 rewards, flags and info, in the three autoreset modes, on
one and two threads, across auto-resets, termination and truncation; the rest of cypool's
API on top."""
import pickle

import gymnasium as gym
import numpy as np
import pytest

import cypool
from cypool.vector import parse_autoreset_mode


def _pair(env_id, n, mode, threads=2, **kw):
    env = cypool.make_vec(env_id, n, num_threads=threads, autoreset_mode=mode, **kw)
    ref = gym.make_vec(env_id, n, vectorization_mode="sync",
                       vector_kwargs={"autoreset_mode": parse_autoreset_mode(mode)}, **kw)
    return env, ref


def _same(x, y):
    for k in range(4):
        assert x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k]), k


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("mode", ["next_step", "same_step", "disabled"])
@pytest.mark.parametrize("env_id,kw", [("CartPole-v1", {}), ("CartPole-v0", {}),
                                       ("CartPole-v1", {"sutton_barto_reward": True}),
                                       ("MountainCar-v0", {}),
                                       ("MountainCar-v0", {"goal_velocity": 0.02})])
def test_matches_gymnasium(env_id, kw, mode, threads):
    n = 5
    env, ref = _pair(env_id, n, mode, threads, **kw)
    try:
        assert env.single_observation_space == ref.single_observation_space
        assert env.single_action_space == ref.single_action_space
        o, info = env.reset(seed=3)
        r, ref_info = ref.reset(seed=3)
        assert o.dtype == r.dtype and np.array_equal(o, r) and info == ref_info == {}
        rng = np.random.default_rng(1)
        ends = truncs = terms = 0
        cartpole = env_id.startswith("CartPole")
        for t in range(700):
            if t % 3 == 0:
                a = rng.integers(0, env.single_action_space.n, n)
            elif cartpole:       # keeps the pole up for a while: v0's 200-step limit is hit
                a = np.where(o[:, 2] + 0.5 * o[:, 3] > 0, 1, 0)
            else:                # pumps energy: the car reaches the flag now and then
                a = np.where(o[:, 1] >= 0, 2, 0)
            x, y = env.step(a), ref.step(a)
            _same(x, y)
            o = x[0]
            if mode == "same_step" and "final_obs" in y[4]:
                for i in np.flatnonzero(y[4]["_final_obs"]):
                    assert np.array_equal(x[4]["final_obs"][i], y[4]["final_obs"][i])
            done = x[2] | x[3]
            ends += int(done.sum())
            truncs += int(x[3].sum())
            terms += int(x[2].sum())
            if mode == "disabled" and done.any():
                o, _ = env.reset(options={"reset_mask": done})
                r, _ = ref.reset(options={"reset_mask": done})
                assert np.array_equal(o, r)
        assert ends >= n                          # every env crossed an auto-reset
        if env_id in ("CartPole-v0", "MountainCar-v0"):
            assert truncs > 0                      # the 200-step limit was reached
        if env_id.startswith("MountainCar") and not kw:
            assert terms > 0                       # and the goal
    finally:
        env.close()
        ref.close()


def test_actions_are_checked_like_gymnasiums_assert():
    env = cypool.make_vec("CartPole-v1", 3)
    try:
        env.reset(seed=0)
        with pytest.raises(TypeError, match="integers"):
            env.step(np.zeros(3))
        with pytest.raises(ValueError, match=r"in \[0, 2\)"):
            env.step(np.array([0, 2, 1]))
        with pytest.raises(ValueError, match="shape"):
            env.step(np.zeros((3, 1), np.int64))
        with pytest.raises(TypeError, match="sutton_barto_reward"):
            cypool.make_vec("CartPole-v1", 1, sutton_barto_reward=1)
        env.step(np.array([0, 1, 1], np.int8))    # any integer dtype
    finally:
        env.close()


def test_registered_async_population_and_snapshots():
    assert {"CartPole-v0", "CartPole-v1"} <= set(cypool.list_envs())
    env = gym.make_vec("cypool/CartPole-v1", num_envs=4, batch_size=2, seed=0)
    try:
        assert isinstance(env.unwrapped, cypool.VectorEnv) and env.unwrapped.is_async
        env.unwrapped.async_reset()
        for _ in range(50):
            _, _, _, _, info = env.unwrapped.recv(timeout=30)
            env.unwrapped.send(np.ones(2, np.int64), info["env_id"])
    finally:
        env.close()
    pop = cypool.make_population("CartPole-v1", 3, 2, seed=1)
    try:
        pop.reset()
        for _ in range(30):
            pop.step(np.ones((3, 2), np.int64))
        twin = pickle.loads(pickle.dumps(pop))
        try:
            a = np.random.default_rng(0).integers(0, 2, (300, 3, 2))
            for x in a:
                _same(pop.step(x), twin.step(x))
        finally:
            twin.close()
    finally:
        pop.close()


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [{}, {"g": 9.81}])
def test_pendulum_matches_gymnasium_in_the_actions_dtype(kw, dtype, mode):
    """gymnasium computes the torque terms in the action's dtype (float32 by default)."""
    n = 4
    env, ref = _pair("Pendulum-v1", n, mode, **kw)
    try:
        assert env.single_action_space == ref.single_action_space
        assert np.array_equal(env.reset(seed=5)[0], ref.reset(seed=5)[0])
        rng = np.random.default_rng(2)
        truncs = 0
        for t in range(450):
            a = rng.uniform(-2.5, 2.5, (n, 1)).astype(dtype)     # clipped to [-2, 2] too
            x, y = env.step(a), ref.step(a)
            _same(x, y)
            truncs += int(x[3].sum())
        assert truncs >= 2 * n                                    # 200-step episodes
        with pytest.raises(ValueError, match="NaN"):
            env.step(np.full((n, 1), np.nan, np.float32))
        with pytest.raises(TypeError, match="float32 or float64"):
            env.step(np.zeros((n, 1), np.int64))
    finally:
        env.close()
        ref.close()
