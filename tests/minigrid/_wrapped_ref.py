"""The minigrid wrapper tests' reference side: minigrid's envs wrapped as a user wraps them
(wrapper classes innermost first, ``(cls, kwargs)`` pairs), and the comparison of cypool's
batches with gymnasium's."""
import gymnasium as gym
import numpy as np


def wrapped(env_id, wrappers, **kw):
    env = gym.make(env_id, **kw)
    for w in wrappers:
        cls, wkw = w if isinstance(w, tuple) else (w, {})
        env = cls(env, **wkw)
    return env


def assert_same(x, y, where):
    """cypool's x equals gymnasium's y: structure, dtypes, values (strs with ==)."""
    if isinstance(y, dict):
        assert isinstance(x, dict) and sorted(x) == sorted(y), (where, list(x), list(y))
        for k in y:
            assert_same(x[k], y[k], f"{where}[{k!r}]")
    elif isinstance(y, tuple) and all(isinstance(v, str) for v in y):
        assert x == y, (where, x, y)
    elif isinstance(y, tuple):
        assert isinstance(x, tuple) and len(x) == len(y), where
        for k, (u, v) in enumerate(zip(x, y)):
            assert_same(u, v, f"{where}[{k}]")
    elif isinstance(y, np.ndarray) and y.dtype == object:     # same-step final_obs
        assert x.dtype == object and x.shape == y.shape, where
        for k, (u, v) in enumerate(zip(x, y)):
            assert (u is None) == (v is None), where
            if v is not None:
                assert_same(u, v, f"{where}[{k}]")
    else:
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape, (where, x.dtype, y.dtype)
        assert np.array_equal(x, y), (where, x, y)
