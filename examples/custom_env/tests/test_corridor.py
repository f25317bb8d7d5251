"""Corridor-v0 through cypool, bit for bit against the same env written here in Python (seeded
as gymnasium seeds: PCG64, Generator.random), and the features every registered id gets."""
import pickle

import gymnasium as gym
import numpy as np
import pytest

import cypool
import corridor  # noqa: F401  (registers Corridor-v0)


class Corridor(gym.Env):
    """The reference."""
    observation_space = gym.spaces.Box(np.float32(0), np.float32(1), (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, size=10, slip=0.1, step_cost=0.01):
        self.size, self.slip, self.step_cost = size, slip, step_cost

    def _obs(self):
        return np.array([self.pos / (self.size - 1), self.slip], np.float32)

    def _info(self):
        return {"distance": self.size - 1 - self.pos}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = int(self.np_random.random() * (self.size // 2))
        return self._obs(), self._info()

    def step(self, action):
        if not self.np_random.random() < self.slip:
            self.pos += 1 if action == 1 else -1
        self.pos = min(max(self.pos, 0), self.size - 1)
        done = self.pos == self.size - 1
        return self._obs(), 1.0 if done else -self.step_cost, done, False, self._info()


def reference(n, mode, **kw):
    return gym.vector.SyncVectorEnv(
        [lambda: gym.wrappers.TimeLimit(Corridor(**kw), 100)] * n, autoreset_mode=mode)


def assert_equal(x, y, where):
    """Equal values of equal types: arrays (object arrays element by element) and dicts."""
    if isinstance(y, dict):
        assert isinstance(x, dict) and x.keys() == y.keys(), where
        for k in y:
            assert_equal(x[k], y[k], f"{where}[{k!r}]")
    elif isinstance(y, np.ndarray) and y.dtype == object:
        assert x.shape == y.shape and x.dtype == object, where
        for i, (u, v) in enumerate(zip(x, y)):
            assert_equal(u, v, f"{where}[{i}]")
    elif y is None:
        assert x is None, where
    else:
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and np.array_equal(x, y), where


def assert_same(a, b):
    """Two (obs, [reward, terminated, truncated,] info) results."""
    assert len(a) == len(b)
    for k, (x, y) in enumerate(zip(a, b)):
        assert_equal(x, y, f"result[{k}]")


@pytest.mark.parametrize("mode", [gym.vector.AutoresetMode.NEXT_STEP,
                                  gym.vector.AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("kw", [{}, dict(size=4, slip=0.5, step_cost=0.25)])
def test_matches_the_python_env_bit_for_bit(mode, kw):
    n, rng = 6, np.random.default_rng(0)
    env = cypool.make_vec("Corridor-v0", n, num_threads=2, autoreset_mode=mode, **kw)
    ref = reference(n, mode, **kw)
    assert env.single_observation_space == ref.single_observation_space
    ends = 0
    for seed in (0, 123):
        assert_same(env.reset(seed=seed), ref.reset(seed=seed))
        for _ in range(300):
            a = rng.integers(0, 2, n) | (rng.random(n) < 0.7)   # mostly right: episodes end
            out, want = env.step(a), ref.step(a)
            assert_same(out, want)
            ends += int(np.sum(want[2] | want[3]))
    assert ends > 20
    env.close()


def test_async_populations_and_state():
    pop = cypool.make_population("Corridor-v0", 2, 3, member_kwargs=[dict(slip=0.0),
                                                                     dict(slip=0.5)])
    obs, _ = pop.reset(seed=1)
    assert obs.shape == (2, 3, 2)          # (members, envs per member, obs)
    assert np.all(obs[0, :, 1] == 0.0) and np.all(obs[1, :, 1] == np.float32(0.5))
    pop.close()
    # async: each env's observations equal its column of a sync pool's (always action 1)
    sync = cypool.make_vec("Corridor-v0", 8, num_threads=2)
    want = [sync.reset(seed=5)[0]] + [sync.step(np.ones(8, np.int64))[0] for _ in range(30)]
    env = cypool.make_vec("Corridor-v0", 8, batch_size=4, num_threads=2)
    seen = [[] for _ in range(8)]
    env.async_reset(seed=5)
    while min(map(len, seen)) < 31:
        obs, _, _, _, info = env.recv()
        for row, i in enumerate(info["env_id"]):
            seen[i].append(obs[row])
        env.send(np.ones(4, np.int64), env_ids=info["env_id"])
    for i in range(8):
        assert np.array_equal(np.stack(seen[i][:31]), np.stack([w[i] for w in want]))
    env.close()
    # state: a pickled pool continues as the original
    twin = pickle.loads(pickle.dumps(sync))
    for _ in range(50):
        a = np.ones(8, np.int64)
        assert_same(sync.step(a), twin.step(a))
    sync.close()
    twin.close()


def test_gymnasium_make_vec_and_bad_input():
    env = gym.make_vec("cypool/Corridor-v0", 2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="in \\[0, 2\\)"):
        env.step(np.array([0, 2]))
    with pytest.raises(TypeError, match="integers"):
        env.step(np.array([0.0, 1.0]))
    env.close()
    with pytest.raises(ValueError, match="slip must be in"):
        cypool.make_vec("Corridor-v0", 2, slip=1.5)
    with pytest.raises(TypeError, match="size must be an int"):
        cypool.make_vec("Corridor-v0", 2, size=3.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'slipp'"):
        cypool.make_vec("Corridor-v0", 2, slipp=0.2)
