"""Sync batches on the worker team: cheap envs go out as ranges of envs (the caller from the
low end, the workers from the high end), costly ones as queued ids. Either way every env
steps exactly once per batch, with its own op, bit for bit as gymnasium's envs."""
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import cypool

MODES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_range_batches_match_gymnasium(mode):
    n, steps = 2048, 40
    env = cypool.make_vec("CartPole-v1", n, num_threads=2, autoreset_mode=mode)
    ref = gym.make_vec("CartPole-v1", n, vectorization_mode="sync",
                       vector_kwargs={"autoreset_mode": MODES[mode]})
    obs, _ = env.reset(seed=3)
    robs, _ = ref.reset(seed=3)
    assert np.array_equal(obs, robs)
    rng = np.random.default_rng(0)
    plans = set()
    for t in range(steps):
        a = rng.integers(0, 2, n)
        out, rout = env.step(a), ref.step(a)
        for k in range(4):
            assert np.array_equal(out[k], rout[k]), (t, k)
        if mode == "same_step" and "final_obs" in rout[4]:
            m = rout[4]["_final_obs"]
            assert np.array_equal(out[4]["_final_obs"], m)
            assert np.array_equal(np.stack(out[4]["final_obs"][m]),
                                  np.stack(rout[4]["final_obs"][m]))
        plans.add(env.pool.engine._sync_plan())
    # the batches did run as ranges (2048 CartPoles cost well over the serial threshold, and
    # a few tens of ns each make chunks of many envs)
    assert "ranges" in plans, plans
    env.close()
    ref.close()


def test_range_and_id_batches_give_the_same_trajectories():
    """The same pool on one thread (no team) and on two (ranges) gives the same arrays."""
    n = 1500
    a = np.random.default_rng(1).integers(0, 2, (30, n))
    outs = []
    for threads in (1, 2):
        env = cypool.make_vec("CartPole-v1", n, num_threads=threads, seed=5)
        o, _ = env.reset(seed=5)
        traj = [o.copy()]
        for t in range(30):
            traj.append(env.step(a[t])[0].copy())
        if threads == 2:
            assert env.pool.engine._sync_plan() == "ranges"
        env.close()
        outs.append(np.stack(traj))
    assert np.array_equal(outs[0], outs[1])


def test_costly_envs_go_out_as_ids():
    env = cypool.make_vec("Hopper-v5", 4, num_threads=2)
    env.reset(seed=0)
    for _ in range(5):
        env.step(env.action_space.sample())
    assert env.pool.engine._sync_plan() == "ids"
    env.close()
