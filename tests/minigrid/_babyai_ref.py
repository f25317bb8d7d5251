"""The BabyAI level tests' reference side: minigrid's envs under SyncVectorEnv, and the
comparison of a cypool batch (reset's pair or step's 5-tuple) with gymnasium's."""
import gymnasium as gym
import numpy as np


def reference(env_id, n, kw):
    return gym.vector.SyncVectorEnv([lambda: gym.make(env_id, **kw)] * n)


def check_same(x, y, where):
    ox, oy = x[0], y[0]
    assert sorted(ox) == sorted(oy), where
    for k in ("image", "direction"):
        assert ox[k].dtype == oy[k].dtype and np.array_equal(ox[k], oy[k]), (where, k)
    assert isinstance(ox["mission"], tuple) and ox["mission"] == oy["mission"], where
    if len(x) == 2:
        return
    for k, name in ((1, "reward"), (2, "terminated"), (3, "truncated")):
        assert x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k]), (where, name)
    assert sorted(x[4]) == sorted(y[4]), where
