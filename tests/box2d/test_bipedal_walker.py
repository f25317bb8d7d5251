"""BipedalWalker-v3 and BipedalWalkerHardcore-v3 through make_vec against
gymnasium.make_vec(id, n, "sync") on the box2d 2.3.10 wheel, bit for bit, across autoresets
(gymnasium keeps one Box2D world per env across resets, whose history changes the physics:
several episodes per env are compared), float32 and float64 actions (their rewards differ:
NEP 50), one and two threads; per-env hardcore, bad input, the refusal to save a state and
cypool.envpool's names."""
import pickle
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.box2d.bipedal_walker import BipedalWalkerHeuristics

import cypool

sys.path.insert(0, str(Path(__file__).parent.parent))
from _envpool_ref import envpool_or_none  # noqa: E402

BW, BWH = "BipedalWalker-v3", "BipedalWalkerHardcore-v3"


def assert_step(x, y, where):
    for k, name in enumerate(("obs", "reward", "terminated", "truncated")):
        assert x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k]), (where, name, x[k], y[k])
    assert x[4] == y[4] == {}, where


class Policy:
    """Env 0 and 1 walk (gymnasium's heuristic walker, one each), the others flail at
    random (falls: game over, -100), with actions beyond [-1, 1]."""

    def __init__(self, n, dtype, seed):
        self.walkers = []
        for _ in range(min(n, 2)):
            h = BipedalWalkerHeuristics()
            h.a = np.zeros(4)          # the class shares one array between instances
            self.walkers.append(h)
        self.dtype = dtype
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs, done):
        a = self.rng.uniform(-1.3, 1.3, (len(obs), 4))
        for k, h in enumerate(self.walkers):
            if done[k]:
                h.__init__()
                h.a = np.zeros(4)
                h.state, h.moving_leg, h.supporting_leg = h.STAY_ON_ONE_LEG, 0, 1
                h.supporting_knee_angle = h.SUPPORT_KNEE_ANGLE
            a[k] = h.step_heuristic(obs[k])
        return a.astype(self.dtype)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("env_id,dtype,seed", [(BW, np.float32, 0), (BW, np.float64, 5),
                                              (BWH, np.float32, 2), (BWH, np.float64, 11)])
def test_make_vec_matches_gymnasium(env_id, dtype, seed, threads):
    n, steps = 4, 500
    env = cypool.make_vec(env_id, n, num_threads=threads)
    ref = gym.make_vec(env_id, n, vectorization_mode="sync")
    try:
        assert env.single_observation_space == ref.single_observation_space
        assert env.single_action_space == ref.single_action_space
        x, y = env.reset(seed=seed), ref.reset(seed=seed)
        assert np.array_equal(x[0], y[0]) and x[1] == y[1] == {}
        policy = Policy(n, dtype, seed)
        obs, done, ends = y[0], np.zeros(n, bool), 0
        for t in range(steps):
            a = policy(obs, done)
            x, y = env.step(a), ref.step(a)
            assert_step(x, y, f"step {t}")
            obs, done = y[0], y[2] | y[3]
            ends += int(y[2].sum())
        assert ends >= 2       # later episodes run in worlds that held earlier ones
    finally:
        env.close()
        ref.close()


def test_per_env_hardcore_and_reset_mask():
    kws = [{"hardcore": True}, {}, {"hardcore": True}]
    env = cypool.make_vec(BW, 3, env_kwargs=kws, autoreset_mode="disabled")
    ref = gym.vector.SyncVectorEnv([lambda k=k: gym.make(BW, **k) for k in kws],
                                   autoreset_mode=gym.vector.AutoresetMode.DISABLED)
    try:
        assert env.get_attr("hardcore") == (True, False, True)
        x, y = env.reset(seed=3), ref.reset(seed=3)
        assert np.array_equal(x[0], y[0])
        rng = np.random.default_rng(1)
        for t in range(200):
            a = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
            x, y = env.step(a), ref.step(a)
            assert_step(x, y, f"step {t}")
            done = y[2] | y[3]
            if done.any():
                m = {"reset_mask": done}
                assert np.array_equal(env.reset(options=m)[0], ref.reset(options=m)[0])
    finally:
        env.close()
        ref.close()


def test_bad_input_refused_and_state_not_saved():
    env = cypool.make_vec(BW, 2)
    ref = gym.make_vec(BW, 2, vectorization_mode="sync")
    try:
        assert np.array_equal(env.reset(seed=0)[0], ref.reset(seed=0)[0])
        for bad in (np.full((2, 4), np.nan, np.float32), np.zeros((2, 3), np.float32),
                    np.zeros((2, 4), np.int64), np.array([[0, 0, 0, 0], [0, np.nan, 0, 0]])):
            with pytest.raises((ValueError, TypeError), match="NaN|shape|float"):
                env.step(bad)
        # infinite actions: gymnasium's sign and clip make them full torque
        a = np.array([[np.inf, -np.inf, 0.5, 0], [-np.inf, 1, np.inf, -0.25]], np.float32)
        for t in range(10):
            assert_step(env.step(a), ref.step(a), f"infinite actions, step {t}")
        with pytest.raises(TypeError, match="Box2D world"):
            pickle.dumps(env)
        a = np.array([[1, -1, 0.5, 0.2], [-0.3, 0.9, -1, 1]], np.float32)
        for t in range(10):
            assert_step(env.step(a), ref.step(a), f"step {t}")
    finally:
        env.close()
        ref.close()
    with pytest.raises(TypeError):
        cypool.make_vec(BW, 2, hardcore="yes")


def test_envpool_names():
    import cypool.envpool as cep

    for ep_id, want in ((BW, (1600, 300.0, False)), (BWH, (2000, 300.0, True))):
        ours = cep.make_spec(ep_id).config
        assert (ours.max_episode_steps, ours.reward_threshold, ours.hardcore) == want
        envpool = envpool_or_none()   # None under tools/sanitize.sh: compared in the normal run
        if envpool is not None:
            theirs = envpool.make_spec(ep_id).config
            assert (theirs.max_episode_steps, theirs.reward_threshold, theirs.hardcore) == want
    env = cep.make(BW, env_type="gymnasium", num_envs=2, seed=4, hardcore=True)
    ref = gym.make_vec(BWH, 2, vectorization_mode="sync")
    try:
        assert np.array_equal(env.reset()[0], ref.reset(seed=4)[0])
        a = np.full((2, 4), 0.5, np.float32)
        for _ in range(20):
            assert np.array_equal(env.step(a)[0], ref.step(a)[0])
    finally:
        env.close()
        ref.close()


@pytest.mark.parametrize("every", [1, 7])
def test_rgb_array_frames_are_gymnasiums(every):
    """Frames drawn by gymnasium's own render() fed the pool's state: equal to gymnasium's,
    rendering every step (the lidar highlight cycles through 100 frames) or sparsely, across
    resets (which restart the cycle), in hardcore terrain."""
    pytest.importorskip("pygame")
    n = 3
    env = cypool.make_vec(BWH, n, render_mode="rgb_array")
    ref = gym.make_vec(BWH, n, vectorization_mode="sync", render_mode="rgb_array")
    try:
        env.reset(seed=1)
        ref.reset(seed=1)
        rng = np.random.default_rng(0)
        ends = 0
        for t in range(150):
            a = rng.uniform(-1, 1, (n, 4)).astype(np.float32)
            x, y = env.step(a), ref.step(a)
            assert_step(x, y, f"step {t}")
            ends += int(y[2].sum())
            if t % every == 0:
                got, want = env.render(), ref.render()
                assert len(got) == len(want) == n
                for k in range(n):
                    assert got[k].dtype == want[k].dtype == np.uint8
                    assert np.array_equal(got[k], want[k]), (t, k)
        assert ends >= 1
    finally:
        env.close()
        ref.close()


def test_human_rendering_is_refused():
    with pytest.raises(ValueError, match="human|render"):
        cypool.make_vec(BW, 1, render_mode="human")
