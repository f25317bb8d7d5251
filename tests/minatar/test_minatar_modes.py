"""MinAtar pools beyond the defaults, against SyncVectorEnv over MinAtar: per-env kwargs
(env_kwargs: sticky_action_prob and difficulty_ramping differing per env) and same-step
autoreset (final_obs / final_info in info, compared item by item)."""
import gymnasium as gym
import numpy as np
import pytest

from _minatar_ref import assert_same

import cypool

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _same_info(got, want, where):
    assert got.keys() == want.keys(), (where, got.keys(), want.keys())
    for k, y in want.items():
        x = got[k]
        if isinstance(y, np.ndarray) and y.dtype == object:
            assert len(x) == len(y), (where, k)
            for a, b in zip(x, y):
                if isinstance(b, dict):
                    _same_info(a, b, f"{where} {k}")
                else:
                    assert (a is None) == (b is None), (where, k)
                    assert b is None or np.array_equal(a, b), (where, k)
        else:
            assert np.array_equal(x, y), (where, k)


@pytest.mark.parametrize("env_id", ["MinAtar/Asterix-v0", "MinAtar/Seaquest-v1",
                                    "MinAtar/SpaceInvaders-v0"])
def test_per_env_kwargs(env_id):
    kws = [dict(sticky_action_prob=0.0, difficulty_ramping=False),
           dict(sticky_action_prob=0.9), dict(difficulty_ramping=False)]
    ours = cypool.make_vec(env_id, 3, env_kwargs=kws, num_threads=2)
    ref = gym.vector.SyncVectorEnv([lambda k=k: gym.make(env_id, **k) for k in kws])
    try:
        assert_same(ours.reset(seed=3)[0], ref.reset(seed=3)[0], "reset obs")
        rng = np.random.default_rng(0)
        for t in range(300):
            a = rng.integers(0, ref.single_action_space.n, 3)
            for name, x, y in zip(("obs", "reward", "term", "trunc", "info"), ours.step(a),
                                  ref.step(a)):
                assert_same(x, y, f"step {t} {name}")
    finally:
        ours.close()
        ref.close()


@pytest.mark.parametrize("env_id", ["MinAtar/Breakout-v0", "MinAtar/Seaquest-v0"])
def test_same_step_autoreset(env_id):
    ours = cypool.make_vec(env_id, 3, autoreset_mode="same_step")
    ref = gym.vector.SyncVectorEnv([lambda: gym.make(env_id) for _ in range(3)],
                                   autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    try:
        assert_same(ours.reset(seed=3)[0], ref.reset(seed=3)[0], "reset obs")
        rng = np.random.default_rng(0)
        ends = 0
        for t in range(300):
            a = rng.integers(0, ref.single_action_space.n, 3)
            got, want = ours.step(a), ref.step(a)
            for x, y in zip(got[:4], want[:4]):
                assert_same(x, y, f"step {t}")
            _same_info(got[4], want[4], f"step {t}")
            ends += int(want[2].sum())
        assert ends > 0
    finally:
        ours.close()
        ref.close()
