"""Async batching (send/recv with batch_size < num_envs): semantics (recv's timeout checked,
each env's action dtype kept), determinism, stress. Engine errors in recv:
tests/test_bad_input.py."""
import _thread
import threading
import time

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import cypool


def per_env_actions(num_envs, steps, nu, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (num_envs, steps, nu))


def sync_trajectories(task, n, steps, acts, mode, **kw):
    env = cypool.make_vec(task, n, max_episode_steps=20, autoreset_mode=mode, **kw)
    obs, _ = env.reset(seed=3)
    traj = [[("reset", obs[i])] for i in range(n)]
    for k in range(steps):
        o, r, te, tr, _ = env.step(acts[:, k])
        for i in range(n):
            traj[i].append((o[i], r[i], te[i], tr[i]))
    env.close()
    return traj


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("batch_size, threads", [(3, 2), (1, 1), (5, 2)])
def test_async_trajectories_equal_sync(mode, batch_size, threads):
    n, steps, task = 8, 30, "Hopper-v5"
    acts = per_env_actions(n, steps * 10, 3)
    want = sync_trajectories(task, n, steps, acts, mode, num_threads=2)
    env = cypool.make_vec(task, n, batch_size=batch_size, num_threads=threads,
                          max_episode_steps=20, autoreset_mode=mode)
    assert env.is_async
    env.async_reset(seed=3)
    got = [[] for _ in range(n)]
    count = np.zeros(n, int)
    while min(len(t) for t in got) < steps + 1:
        o, r, te, tr, info = env.recv()
        ids = info["env_id"]
        assert len(ids) == batch_size and o.shape[0] == batch_size
        for row, i in enumerate(ids):
            got[i].append(("reset", o[row]) if not got[i] else (o[row], r[row], te[row], tr[row]))
        env.send(acts[ids, count[ids]], ids)
        count[ids] += 1
    for i in range(n):
        for a, b in zip(got[i][: steps + 1], want[i]):
            assert all(np.array_equal(x, y) for x, y in zip(a, b))
    env.close()


def test_state_machine_errors_never_hang():
    env = cypool.make_vec("InvertedPendulum-v5", 4, batch_size=2, num_threads=2)
    with pytest.raises(RuntimeError, match="reset"):
        env.send(np.zeros((4, 1)))
    with pytest.raises(ValueError, match="in flight"):
        env.recv()                      # nothing sent: an error, not a hang
    env.async_reset(seed=0)
    with pytest.raises(ValueError, match="in flight"):
        env.send(np.zeros((1, 1)), [2])  # still in flight
    with pytest.raises(ValueError, match="in flight"):
        env.async_reset()
    _, _, _, _, info = env.recv()
    first = info["env_id"]
    _, _, _, _, info = env.recv()
    assert sorted(np.concatenate([first, info["env_id"]]).tolist()) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="in flight"):
        env.recv()                      # everything received: nothing left to wait for
    with pytest.raises(ValueError, match="repeat"):
        env.send(np.zeros((2, 1)), [1, 1])
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        env.send(np.zeros((1, 1)), [4])
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        env.send(np.zeros((1, 1)), [-1])
    with pytest.raises(TypeError, match="integers"):
        env.send(np.zeros((1, 1)), [0.5])
    with pytest.raises(ValueError, match="shape"):
        env.send(np.zeros((2, 1)), [0])  # one row per id
    env.send(np.zeros((1, 1)), [3])
    with pytest.raises(ValueError, match="needs batch_size=2"):
        env.recv()                      # 1 in flight < batch_size: would wait forever
    env.close()


def test_sync_mode_send_recv_and_double_recv():
    env = cypool.make_vec("InvertedPendulum-v5", 3)
    env.reset(seed=0)
    env.send(np.zeros((2, 1)), [2, 0])
    o, r, te, tr, info = env.recv()
    assert info["env_id"].tolist() == [2, 0] and o.shape == (2, 4)
    with pytest.raises(ValueError, match="nothing sent"):
        env.recv()
    o, *_ = env.step(np.zeros((1, 1)), env_ids=[1])
    assert o.shape == (1, 4)
    env.close()


def test_reset_in_async_mode_returns_every_env():
    env = cypool.make_vec("Hopper-v5", 6, batch_size=2, num_threads=2)
    env.async_reset(seed=1)
    env.recv()
    obs, info = env.reset(seed=1)            # waits for the in-flight envs, then resets all
    ref = cypool.make_vec("Hopper-v5", 6)
    assert np.array_equal(obs, ref.reset(seed=1)[0])
    o, *_ = env.step(np.zeros((6, 3)))       # none in flight: actions for every env
    assert o.shape == (2, 11)
    env.close(), ref.close()


@pytest.mark.parametrize("timeout,exc", [("1", TypeError), (True, TypeError), ([1], TypeError),
                                         (-1, ValueError), (float("nan"), ValueError)])
def test_recv_timeout_checked(timeout, exc):
    env = cypool.make_vec("Hopper-v5", 4, batch_size=2)
    try:
        env.async_reset(seed=0)
        with pytest.raises(exc, match="timeout"):
            env.recv(timeout=timeout)
        env.recv(timeout=5.0)          # nothing was lost
    finally:
        env.close()
    pop = cypool.make_population("Hopper-v5", 2, 1, member_batch=1)
    try:
        pop.async_reset(seed=0)
        with pytest.raises(exc, match="timeout"):
            pop.recv(timeout=timeout)
        pop.recv(timeout=5)
    finally:
        pop.close()


def test_async_mixed_action_dtypes_keep_each_envs_dtype():
    """envs 0-3 sent float32 actions, 4-7 float64: each batch's reward_ctrl has its own
    envs' dtype, as numpy computes it (the dtype is kept per env, not per pool)."""
    env = cypool.make_vec("Hopper-v5", 8, batch_size=4, num_threads=2)
    try:
        env.async_reset(seed=0)
        for _ in range(2):
            env.recv()
        env.send(np.zeros((4, 3), np.float32), np.arange(4))
        env.send(np.zeros((4, 3), np.float64), np.arange(4, 8))
        seen = {}
        for _ in range(2):
            *_, info = env.recv()
            ids = info["env_id"]
            want = np.float32 if (ids < 4).all() else np.float64
            assert info["reward_ctrl"].dtype == want, ids
            seen[tuple(sorted(ids.tolist()))] = info["reward_ctrl"].dtype
        assert len(seen) == 2
    finally:
        env.close()


def _worker_threads():
    return [t for t in threading.enumerate() if t.name == "cypool-workers"]


def test_close_with_work_pending_stops_threads():
    before = len(_worker_threads())
    env = cypool.make_vec("Humanoid-v5", 8, batch_size=2, num_threads=2)
    env.async_reset(seed=0)
    assert len(_worker_threads()) == before + 1
    env.close()                               # work still queued: workers stop cleanly
    assert len(_worker_threads()) == before
    env2 = cypool.make_vec("Hopper-v5", 4, batch_size=2)
    env2.async_reset(seed=0)
    del env2                                  # dropped without close(): no leaked thread
    import gc

    gc.collect()
    assert len(_worker_threads()) == before


@pytest.mark.usefixtures("default_sigint")
def test_keyboard_interrupt_during_recv_is_prompt():
    # 5000 substeps per step on one thread: a batch takes about a second to finish.
    env = cypool.make_vec("Humanoid-v5", 4, batch_size=4 - 1, num_threads=1, frame_skip=5000)
    env.async_reset(seed=0)
    env.recv()
    env.send(np.zeros((3, 17)), env._last_ids)
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        env.recv()
    waited = time.monotonic() - t0
    assert waited < 0.2 + 0.3                  # raised within ~50 ms of the signal
    o, *_ = env.recv()                         # the env is still usable: results arrive
    assert o.shape == (3, 348)
    env.close()


@pytest.mark.parametrize("cycles", [20_000])
def test_stress_send_recv_no_lost_or_duplicated_env(cycles):
    rng = np.random.default_rng(0)
    n = 12
    for batch_size in (1, 5, 11):
        env = cypool.make_vec("InvertedPendulum-v5", n, batch_size=batch_size, num_threads=2,
                              max_episode_steps=7)
        env.async_reset(seed=0)
        sent = np.ones(n, int)
        received = np.zeros(n, int)
        idle = []
        t_end = time.monotonic() + 60
        for _ in range(cycles // 3):
            *_, info = env.recv(timeout=10)
            ids = info["env_id"]
            received[ids] += 1
            idle += ids.tolist()
            rng.shuffle(idle)
            # send a random subset of the idle envs, but keep enough in flight for a batch
            in_flight = n - len(idle)
            k = rng.integers(max(0, batch_size - in_flight), len(idle) + 1)
            go, idle = np.array(idle[:k], np.int64), idle[k:]
            if go.size:
                env.send(np.zeros((go.size, 1)), go)
                sent[go] += 1
            assert time.monotonic() < t_end
        assert (received <= sent).all() and (sent - received <= 1).all()
        assert received.min() > 0                # no starved env
        env.close()


@pytest.mark.soak
def test_stress_soak_100k_cycles():
    test_stress_send_recv_no_lost_or_duplicated_env(100_000)
