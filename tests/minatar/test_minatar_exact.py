"""Every MinAtar id against MinAtar 1.0.15 itself: cypool.make_vec vs SyncVectorEnv over
gymnasium.make(id) (next-step autoreset both), same seeds, random actions, obs / rewards /
terminated / truncated / info compared with np.array_equal at every step, across autoresets;
1 and 2 threads; sticky actions off and on; difficulty ramping off and on; a reset(seed=...)
mid-run; spaces and kwargs as the reference's."""
import gymnasium as gym
import numpy as np
import pytest

from _minatar_ref import IDS, lockstep, ref_vec

import cypool

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.mark.parametrize("env_id", IDS)
def test_lockstep_defaults(env_id):
    ends = lockstep(env_id, 3, 300, 11, num_threads=2 if env_id.endswith("v1") else 1)
    assert ends > 0 or "Freeway" in env_id


@pytest.mark.parametrize("env_id", IDS)
def test_lockstep_no_sticky_no_ramping(env_id):
    lockstep(env_id, 2, 200, 5, sticky_action_prob=0.0, difficulty_ramping=False,
             num_threads=1 if env_id.endswith("v1") else 2)


@pytest.mark.parametrize("env_id", ["MinAtar/Breakout-v0", "MinAtar/Seaquest-v1",
                                    "MinAtar/Asterix-v0"])
def test_lockstep_sticky_one_and_reseed(env_id):
    # probability 1: every action is the last one (0 at first, kept across episodes)
    lockstep(env_id, 2, 60, 2, sticky_action_prob=1.0, reseed_at=30)
    lockstep(env_id, 3, 200, 9, reseed_at=77, num_threads=2)


@pytest.mark.parametrize("env_id", ["MinAtar/Freeway-v1", "MinAtar/Freeway-v0"])
def test_freeway_time_limit(env_id):
    # Freeway ends itself after 2500 steps (no TimeLimit is registered): one full episode
    assert lockstep(env_id, 1, 2502, 4) == 1


@pytest.mark.parametrize("env_id", IDS)
def test_spaces(env_id):
    env = cypool.make_vec(env_id, 2)
    ref = ref_vec(env_id, 1)
    try:
        assert env.single_observation_space == ref.single_observation_space
        assert env.single_action_space == ref.single_action_space
    finally:
        env.close()
        ref.close()


def test_kwargs_as_reference():
    # the per-env kwargs reach the reference through gymnasium.make; use_minimal_action_set
    # given explicitly (pool scope) changes the action space as it does there
    env = cypool.make_vec("MinAtar/SpaceInvaders-v0", 2, use_minimal_action_set=True)
    ref = gym.make("MinAtar/SpaceInvaders-v0", use_minimal_action_set=True)
    try:
        assert env.single_action_space == ref.action_space
    finally:
        env.close()
        ref.close()


@pytest.mark.parametrize("bad, err", [
    ({"sticky_action_prob": 1.5}, ValueError),
    ({"sticky_action_prob": -0.1}, ValueError),
    ({"sticky_action_prob": float("nan")}, ValueError),
    ({"sticky_action_prob": "0.1"}, TypeError),
    ({"difficulty_ramping": "yes"}, TypeError),
    ({"use_minimal_action_set": 1.0}, TypeError),
    ({"game": "pong"}, ValueError),
    ({"no_such_kwarg": 1}, TypeError),
])
def test_bad_kwargs_refused(bad, err):
    with pytest.raises(err):
        cypool.make_vec("MinAtar/Breakout-v0", 2, **bad)


def test_bad_set_attr_refused_before_any_env_moves():
    env = cypool.make_vec("MinAtar/Asterix-v0", 2, seed=0)
    try:
        env.reset()
        with pytest.raises(ValueError):
            env.set_attr("sticky_action_prob", [0.5, 2.0])
        assert np.array_equal(env.unwrapped.pool.family.engine.sticky_action_prob,
                              [0.1, 0.1])
    finally:
        env.close()


def test_bad_action_refused():
    env = cypool.make_vec("MinAtar/Breakout-v1", 2, seed=0)
    try:
        env.reset()
        with pytest.raises((ValueError, IndexError)):
            env.step(np.array([0, 3]))
    finally:
        env.close()


def _breakout_policy(s):
    """Steers the paddle under the ball's landing column (from the ball and its trail)."""
    by, bx = np.argwhere(s[:, :, 1])[0]
    ty, tx = np.argwhere(s[:, :, 2])[0]
    px = np.argwhere(s[9, :, 0])[0][0]
    x, y, dx = bx, by, np.sign(bx - tx)
    if by > ty:
        while y < 8:
            x, y = x + dx, y + 1
            if x < 0 or x > 9:
                dx, x = -dx, min(9, max(0, x))
    return 1 if x < px else (3 if x > px else 0)


def test_breakout_long_episode_refills_bricks():
    # a good policy clears the 30 bricks, which come back when the ball next reaches row 9
    env_id, n = "MinAtar/Breakout-v0", 2
    ours = cypool.make_vec(env_id, n, sticky_action_prob=0.0)
    ref = ref_vec(env_id, n, sticky_action_prob=0.0)
    try:
        o, _ = ref.reset(seed=1)
        assert np.array_equal(ours.reset(seed=1)[0], o)
        total = np.zeros(n)
        for t in range(900):
            a = np.array([_breakout_policy(o[i]) for i in range(n)])
            out1, out2 = ours.step(a), ref.step(a)
            for x, y in zip(out1[:4], out2[:4]):
                assert np.array_equal(x, y), t
            o = out2[0]
            total += out2[1]
        assert total.max() > 30
    finally:
        ours.close()
        ref.close()
