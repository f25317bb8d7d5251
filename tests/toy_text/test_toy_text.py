"""The toy-text ids through make_vec against gymnasium.make_vec(id, n, "sync"), bit for bit:
observations (Blackjack's tuple), rewards, terminated, truncated and the whole info dict
with gymnasium's dtypes (prob int64 after a reset and float64 after a step, typed by the
first env reporting it; Taxi's int8 action_mask), in the three autoreset modes, on one and
two threads; populations, pickling and cypool.envpool on the family."""
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import cypool

MODES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP,
         "disabled": AutoresetMode.DISABLED}
CASES = [
    ("FrozenLake-v1", {}),
    ("FrozenLake8x8-v1", {"is_slippery": False}),
    ("FrozenLake-v1", {"success_rate": 0.5, "reward_schedule": (5, -1, 0.5)}),
    ("FrozenLake-v1", {"desc": ["SFFHF", "FHFFG", "FFSFH"]}),
    ("Taxi-v4", {}),
    ("Taxi-v4", {"is_rainy": True, "fickle_passenger": True, "fickle_probability": 0.9}),
    ("CliffWalking-v1", {}),
    ("CliffWalkingSlippery-v1", {}),
    ("Blackjack-v1", {}),
    ("Blackjack-v1", {"natural": True, "sab": False}),
]


def assert_same(x, y, where="obs"):
    """x (cypool's) equals y (gymnasium's): structure, dtypes and values."""
    if isinstance(y, dict):
        assert isinstance(x, dict) and sorted(x) == sorted(y), (where, sorted(x), sorted(y))
        for k in y:
            assert_same(x[k], y[k], f"{where}[{k!r}]")
    elif isinstance(y, tuple):
        assert isinstance(x, tuple) and len(x) == len(y), where
        for k, (u, v) in enumerate(zip(x, y)):
            assert_same(u, v, f"{where}[{k}]")
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


def policy(rng, space, n, obs):
    a = rng.integers(0, space.n, n)
    if space.n == 4 and isinstance(obs, np.ndarray):     # lakes and cliffs: episodes end sooner
        a = np.where(rng.random(n) < 0.4, np.where(rng.random(n) < 0.5, 1, 2), a)
    return a


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("mode", ["next_step", "same_step", "disabled"])
@pytest.mark.parametrize("env_id,kw", CASES, ids=[f"{e}-{i}" for i, (e, _) in enumerate(CASES)])
def test_make_vec_matches_gymnasium(env_id, kw, mode, threads):
    n = 5
    env = cypool.make_vec(env_id, n, num_threads=threads, autoreset_mode=mode, **kw)
    ref = gym.make_vec(env_id, n, vectorization_mode="sync",
                       vector_kwargs={"autoreset_mode": MODES[mode]}, **kw)
    try:
        assert env.single_observation_space == ref.single_observation_space
        assert env.single_action_space == ref.single_action_space
        assert env.get_attr("max_episode_steps") == tuple(
            (ref.spec.max_episode_steps,) * n) or ref.spec.max_episode_steps is None
        assert_same(env.reset(seed=11), ref.reset(seed=11), "reset")
        rng = np.random.default_rng(2)
        obs = None
        for t in range(250):
            a = policy(rng, env.single_action_space, n, obs)
            x, y = env.step(a), ref.step(a)
            assert_same(x, y, f"step {t}")
            obs = x[0]
            done = x[2] | x[3]
            if mode == "disabled" and done.any():
                assert_same(env.reset(options={"reset_mask": done}),
                            ref.reset(options={"reset_mask": done}), f"reset at {t}")
    finally:
        env.close()
        ref.close()


def test_a_map_of_another_size_is_a_pool_setting():
    env = cypool.make_vec("FrozenLake-v1", 2, desc=["SFG"])
    assert env.single_observation_space == gym.spaces.Discrete(3)
    env.close()
    with pytest.raises(ValueError, match="per-pool setting"):
        cypool.make_vec("FrozenLake-v1", 2, env_kwargs=[{"map_name": "8x8"}, None])
    with pytest.raises(ValueError, match="random map"):
        cypool.make_vec("FrozenLake-v1", 2, map_name=None)
    with pytest.raises(TypeError, match="Python float"):
        cypool.make_vec("Taxi-v4", 2, rainy_probability=np.float32(0.8))


def test_per_env_kwargs_match_gymnasium_envs_built_with_them():
    kws = [{"is_slippery": True}, {"is_slippery": False, "reward_schedule": (2, -1, 0)},
           {"success_rate": 0.9}]
    env = cypool.make_vec("FrozenLake-v1", 3, env_kwargs=kws)
    refs = [gym.make("FrozenLake-v1", **k) for k in kws]
    obs, _ = env.reset(seed=4)
    assert obs.tolist() == [r.reset(seed=4 + i)[0] for i, r in enumerate(refs)]
    rng = np.random.default_rng(5)
    done = np.zeros(3, bool)
    for _ in range(200):
        a = rng.integers(0, 4, 3)
        o, rew, term, trunc, _ = env.step(a)
        for i, r in enumerate(refs):
            want = (r.reset()[0], 0.0, False, False) if done[i] else r.step(int(a[i]))[:4]
            assert (o[i], rew[i], term[i], trunc[i]) == want
        done = term | trunc
    env.close()


@pytest.mark.parametrize("env_id", ["Taxi-v4", "Blackjack-v1"])
def test_populations_and_pickling(env_id):
    pop = cypool.make_population(env_id, 2, 3, seed=1, seed_mode="parity")
    ref = gym.make_vec(env_id, 6, vectorization_mode="sync")
    obs, _ = pop.reset()
    want, _ = ref.reset(seed=1)
    flat = (lambda o: tuple(x.reshape(6) for x in o)) if env_id == "Blackjack-v1" else \
        (lambda o: o.reshape(6))
    assert_same(flat(obs), want)
    a = np.ones((2, 3), np.int64)
    pop.step(a)
    ref.step(a.reshape(6))
    copy = pickle.loads(pickle.dumps(pop))
    for _ in range(3):
        x, y = pop.step(a), copy.step(a)
        assert_same(flat(x[0]), flat(y[0]))
        assert_same(flat(x[0]), ref.step(a.reshape(6))[0])
    pop.close()
    copy.close()
    ref.close()
