"""Async batching with Atari (make_vec(..., batch_size=B), async_reset/recv/send): every env
follows the same trajectory as in sync mode, whatever order the envs finish in."""
import numpy as np
import pytest

import cypool

KW = dict(episodic_life=True, max_episode_steps=25, repeat_action_probability=0.25)


def sync_trajectories(n, steps, acts):
    env = cypool.make_vec("Breakout-v5", n, num_threads=2, **KW)
    obs, info = env.reset(seed=3)
    traj = [[(obs[i], 0.0, False, False, info["lives"][i])] for i in range(n)]
    for k in range(steps):
        o, r, te, tr, info = env.step(acts[:, k])
        for i in range(n):
            traj[i].append((o[i], r[i], te[i], tr[i], info["lives"][i]))
    env.close()
    return traj


@pytest.mark.parametrize("batch_size,threads", [(2, 2), (1, 1), (3, 2)])
def test_async_trajectories_equal_sync(batch_size, threads):
    n, steps = 5, 40
    acts = np.random.default_rng(0).integers(0, 4, (n, steps * 4))
    want = sync_trajectories(n, steps, acts)
    env = cypool.make_vec("Breakout-v5", n, batch_size=batch_size, num_threads=threads, **KW)
    try:
        assert env.is_async
        env.async_reset(seed=3)
        got = [[] for _ in range(n)]
        count = np.zeros(n, int)
        while min(len(t) for t in got) < steps + 1:
            o, r, te, tr, info = env.recv()
            ids = info["env_id"]
            assert len(ids) == batch_size and o.shape == (batch_size, 4, 84, 84)
            for row, i in enumerate(ids):
                got[i].append((o[row], r[row], te[row], tr[row], info["lives"][row]))
            env.send(acts[ids, count[ids]], ids)
            count[ids] += 1
        for i in range(n):
            for t, (a, b) in enumerate(zip(got[i][: steps + 1], want[i])):
                assert all(np.array_equal(x, y) for x, y in zip(a, b)), f"env {i} step {t}"
    finally:
        env.close()


def test_async_bad_actions_refused():
    env = cypool.make_vec("Pong-v5", 4, batch_size=2, num_threads=2)
    try:
        env.async_reset(seed=0)
        _, _, _, _, info = env.recv()
        with pytest.raises(ValueError, match=r"\[0, 6\)"):
            env.send(np.array([0, 6]), info["env_id"])
        env.send(np.array([0, 5]), info["env_id"])   # still idle after the refusal
        env.recv()
    finally:
        env.close()
