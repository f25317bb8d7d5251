"""Concurrency misuse, signals and processes.

- Two Python threads on one env: calls are serialised by the façade's lock (results equal a
  serial run) or refused with a clear error; never corrupted arrays, crashes or hangs.
- Ctrl-C during a long sync step: the batch cannot be interrupted half way; KeyboardInterrupt is
  raised right after it and the env stays usable and consistent (recv: tests/test_async.py).
- Ctrl-C at any moment of an async send/recv loop (vector and population) or of the env_ids
  check: nothing hangs, nothing is lost, no half-done check is left behind.
- multiprocessing with the 'spawn' start method, after the parent has used OpenMP.
"""
import _thread
import multiprocessing as mp
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import cypool

NU = 3


# ------------------------------------------------------------------ two threads, one env
def test_two_threads_stepping_one_env_are_serialised():
    n, k = 4, 60
    a = np.linspace(-0.8, 0.8, n * NU).reshape(n, NU)   # the same action every step
    ref = cypool.make_vec("Hopper-v5", n, num_threads=2, max_episode_steps=25)
    ref.reset(seed=1)
    serial = [ref.step(a)[:4] for _ in range(2 * k)]
    ref.close()
    index = {out[0].tobytes(): j for j, out in enumerate(serial)}
    assert len(index) == 2 * k                            # every step is recognisable

    env = cypool.make_vec("Hopper-v5", n, num_threads=2, max_episode_steps=25)
    env.reset(seed=1)
    got = {0: [], 1: []}
    start = threading.Barrier(2)

    def worker(t):
        start.wait()
        for _ in range(k):
            got[t].append(env.step(a)[:4])

    threads = [threading.Thread(target=worker, args=(t,)) for t in (0, 1)]
    [t.start() for t in threads]
    [t.join(60) for t in threads]
    env.close()
    seen = []
    for t in (0, 1):
        idx = [index[out[0].tobytes()] for out in got[t]]   # a KeyError would be a torn batch
        assert idx == sorted(idx)                            # each thread's calls in order
        for j, out in zip(idx, got[t]):
            for x, y in zip(out, serial[j]):
                assert np.array_equal(x, y)
        seen += idx
    assert sorted(seen) == list(range(2 * k))               # a serial order of all 2k steps


def test_two_threads_send_recv_loops_keep_every_trajectory_exact():
    # Two threads each run recv -> send on one async env. Whichever thread gets an env, each
    # env's trajectory must equal a sync run with the same per-env actions.
    n, per_thread = 8, 40
    rng = np.random.default_rng(0)
    acts = rng.uniform(-1, 1, (n, 400, NU))
    env = cypool.make_vec("Hopper-v5", n, batch_size=2, num_threads=2, max_episode_steps=20)
    env.async_reset(seed=3)
    traj = [[] for _ in range(n)]
    count = np.zeros(n, int)

    def worker():
        for _ in range(per_thread):
            o, r, te, tr, info = env.recv(timeout=30)
            ids = info["env_id"]
            if ids.size == 0:
                # two recv() racing for the last ready envs can come back empty-handed
                # (see test_second_concurrent_recv_...); nothing to record or send
                continue
            for row, i in enumerate(ids):
                traj[i].append((o[row].copy(), r[row], te[row], tr[row]))
            a = acts[ids, count[ids]]
            count[ids] += 1          # before send(): the env may return to the other thread
            env.send(a, ids)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    [t.start() for t in threads]
    [t.join(120) for t in threads]
    assert not any(t.is_alive() for t in threads)
    env.close()
    ref = cypool.make_vec("Hopper-v5", n, num_threads=2, max_episode_steps=20)
    obs, _ = ref.reset(seed=3)
    want = [[(obs[i], 0.0, False, False)] for i in range(n)]
    for s in range(int(count.max())):
        o, r, te, tr, _ = ref.step(acts[:, s])
        for i in range(n):
            want[i].append((o[i], r[i], te[i], tr[i]))
    ref.close()
    checked = 0
    for i in range(n):
        for s, (got_s, want_s) in enumerate(zip(traj[i], want[i])):
            assert np.array_equal(got_s[0], want_s[0]), (i, s)
            if s:
                assert got_s[1:] == want_s[1:], (i, s)
            checked += 1
    assert checked >= per_thread * 2


def _slow_async_env(n=4, batch_size=2):
    # frame_skip 40000: one env step takes ~0.3 s on one worker thread
    env = cypool.make_vec("HalfCheetah-v5", n, batch_size=batch_size, num_threads=1,
                          frame_skip=40000)
    env.async_reset(seed=0)
    for _ in range(n // batch_size):
        env.recv(timeout=30)
    return env


def test_second_concurrent_recv_with_one_batch_in_flight_fails_fast():
    # One batch is in flight and two threads recv(): one gets it; the other must be told at
    # once that nothing is left to wait for (as a lone recv() is), not wait out its timeout.
    env = _slow_async_env()
    env.send(np.zeros((2, 6)), [0, 1])
    out = {}

    def rcv(name):
        t0 = time.monotonic()
        try:
            out[name] = ("ok", env.recv(timeout=5)[4]["env_id"].tolist())
        except Exception as exc:   # noqa: BLE001 - the type is what is checked
            out[name] = (type(exc).__name__, time.monotonic() - t0)

    threads = [threading.Thread(target=rcv, args=(k,)) for k in "AB"]
    [t.start() for t in threads]
    [t.join(30) for t in threads]
    env.close()
    results = sorted(out.values(), key=lambda v: v[0])
    assert results[0] == ("ValueError", results[0][1]) and results[0][1] < 2.0, out
    assert results[1] == ("ok", [0, 1]), out


def test_reset_from_another_thread_during_recv():
    # reset() while another thread waits in recv(): serialise (the waiting recv gets its
    # batch first) or fail it with a clear error at once; never leave it waiting for results
    # that reset() took away.
    env = _slow_async_env()
    env.send(np.zeros((2, 6)), [2, 3])
    out = {}

    def rcv():
        t0 = time.monotonic()
        try:
            ids = env.recv(timeout=5)[4]["env_id"].tolist()
            out["recv"] = ("ok", time.monotonic() - t0, ids)
        except Exception as exc:   # noqa: BLE001
            out["recv"] = (type(exc).__name__, time.monotonic() - t0, None)

    t = threading.Thread(target=rcv)
    t.start()
    time.sleep(0.1)
    obs, _ = env.reset(seed=9)
    t.join(30)
    ref = cypool.make_vec("HalfCheetah-v5", 4, num_threads=1, frame_skip=40000)
    assert np.array_equal(obs, ref.reset(seed=9)[0])
    env.close(), ref.close()
    kind, waited, ids = out["recv"]
    assert waited < 3.0, out
    if kind == "ok":
        assert sorted(ids) == [2, 3], out          # served before the reset
    else:
        assert kind in ("ValueError", "RuntimeError"), out


CLOSE_DURING_RECV = """
import threading, time, numpy as np, cypool
env = cypool.make_vec("HalfCheetah-v5", 4, batch_size=2, num_threads=1, frame_skip=40000)
env.async_reset(seed=0)
env.recv(timeout=30); env.recv(timeout=30)
env.send(np.zeros((2, 6)), [0, 1])
out = []
def rcv():
    try:
        env.recv(timeout=10); out.append("ok")
    except Exception as exc:
        out.append(type(exc).__name__)
t = threading.Thread(target=rcv); t.start()
time.sleep(0.1)
env.close()
t.join(30)
print("RESULT", out)
"""


def test_close_from_another_thread_during_recv():
    # close() while another thread waits in recv(): the waiter gets its batch or a
    # ClosedEnvError; the process must not crash (a child process, in case it does).
    proc = subprocess.run([sys.executable, "-c", CLOSE_DURING_RECV], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    assert ("RESULT ['ok']" in proc.stdout or "RESULT ['ClosedEnvError']" in proc.stdout), \
        proc.stdout


def test_reset_seed_is_not_consumed_by_autoresets_still_queued():
    # Env 0 is stepping (slow); envs 1-3 finished an episode and were sent, so their
    # autoresets wait in the queue behind it. reset(seed=100) must give every env exactly
    # the reset that seed gives, whatever was still queued.
    env = cypool.make_vec("HalfCheetah-v5", 4, batch_size=1, num_threads=1, frame_skip=5000,
                          max_episode_steps=2)
    ref = cypool.make_vec("HalfCheetah-v5", 4, num_threads=1, frame_skip=5000)
    try:
        env.async_reset(seed=0)
        for _ in range(4):
            env.recv(timeout=30)
        env.send(np.zeros((4, 6)))
        for _ in range(4):
            env.recv(timeout=30)
        env.send(np.zeros((3, 6)), [1, 2, 3])            # their second step: truncated
        for _ in range(3):
            env.recv(timeout=30)
        env.send(np.zeros((1, 6)), [0])                  # a slow step
        env.send(np.zeros((3, 6)), [1, 2, 3])            # autoresets, queued behind it
        obs, _ = env.reset(seed=100)
        want, _ = ref.reset(seed=100)
        assert [bool(np.array_equal(obs[i], want[i])) for i in range(4)] == [True] * 4
    finally:
        env.close(), ref.close()


# ------------------------------------------------------------------ Ctrl-C in a sync step
def _interrupt_after(seconds):
    timer = threading.Timer(seconds, _thread.interrupt_main)
    timer.start()
    return timer


@pytest.mark.usefixtures("default_sigint")
@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_during_sync_step_raises_right_after_the_batch(threads):
    # A sync batch runs in native code and is not interrupted half way: the whole batch is
    # applied, and KeyboardInterrupt comes right after it. The env stays usable: its next
    # step is the second step of an undisturbed run.
    kw = dict(num_threads=threads, frame_skip=40000)
    env = cypool.make_vec("HalfCheetah-v5", 2, **kw)
    ref = cypool.make_vec("HalfCheetah-v5", 2, **kw)
    try:
        env.reset(seed=0), ref.reset(seed=0)
        a = np.full((2, 6), 0.3)
        t0 = time.monotonic()
        env.step(a)                                      # how long one batch takes here
        batch = time.monotonic() - t0
        ref.step(a)
        timer = _interrupt_after(0.1)
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            env.step(a)
        waited = time.monotonic() - t0
        timer.join()
        ref.step(a)
        assert waited > 0.5 * batch                      # not cut short mid-batch
        assert waited < 2 * batch + 1.0                  # raised promptly after it
        assert env.episode_statistics()["env_steps"].tolist() == [2, 2]
        same = [np.array_equal(x, y) for x, y in zip(env.step(a)[:4], ref.step(a)[:4])]
        assert same == [True] * 4
    finally:
        env.close(), ref.close()


@pytest.mark.usefixtures("default_sigint")
def test_ctrl_c_after_an_episode_ending_batch_keeps_its_autoreset():
    # max_episode_steps=1: the interrupted batch ends every episode. Its bookkeeping must
    # survive the KeyboardInterrupt: the next step is an autoreset (reward 0, no flags), so
    # that no episode runs past max_episode_steps.
    env = cypool.make_vec("HalfCheetah-v5", 2, num_threads=1, frame_skip=40000,
                          max_episode_steps=1)
    try:
        env.reset(seed=0)
        timer = _interrupt_after(0.1)
        with pytest.raises(KeyboardInterrupt):
            env.step(np.zeros((2, 6)))
        timer.join()
        _, r, te, tr, info = env.step(np.zeros((2, 6)))
        assert r.tolist() == [0.0, 0.0] and not (te | tr).any()
        assert (env.episode_statistics()["last_length"] <= 1).all()
    finally:
        env.close()


# ------------------------------------------------------------------ Ctrl-C at any moment
INTERRUPT_FUZZ = textwrap.dedent(r"""
    import signal, sys, time
    import numpy as np, cypool

    armed = [False]
    def fire(signum, frame):           # one KeyboardInterrupt per arming, wherever it lands
        if armed[0]:
            armed[0] = False
            raise KeyboardInterrupt
    signal.signal(signal.SIGALRM, fire)
    pop_mode = sys.argv[1] == "population"
    if pop_mode:
        env = cypool.make_population("Hopper-v5", 4, 2, member_batch=2, num_threads=2)
    else:
        env = cypool.make_vec("Hopper-v5", 8, batch_size=4, num_threads=2)
    hits, loops, deadline = 0, 0, time.monotonic() + float(sys.argv[2])
    signal.setitimer(signal.ITIMER_REAL, 0.0003, 0.0003)
    while time.monotonic() < deadline:
        armed[0] = True
        try:
            env.async_reset(seed=0)
            for _ in range(50):
                out = env.recv(timeout=5)
                if pop_mode:
                    env.send(np.zeros((2, 2, 3)), out[4]["member_id"])
                else:
                    env.send(np.zeros((4, 3)), out[4]["env_id"])
                loops += 1
            armed[0] = False
        except KeyboardInterrupt:
            hits += 1
        env.reset(seed=1)              # must return: nothing lost, nothing hung
    signal.setitimer(signal.ITIMER_REAL, 0)
    obs, _ = env.reset(seed=2)
    env.step(np.zeros((8, 3)) if not pop_mode else np.zeros((4, 2, 3)))
    env.close()
    print("ok", hits, loops)
""")


@pytest.mark.parametrize("mode", ["vector", "population"])
def test_interrupts_anywhere_in_async_loop(mode):
    """KeyboardInterrupt every ~0.3 ms during send/recv: after each one reset() returns."""
    out = subprocess.run([sys.executable, "-c", INTERRUPT_FUZZ, mode, "8"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    assert out.stdout.startswith("ok")
    hits = int(out.stdout.split()[1])
    assert hits > 100        # the interrupts did land, many times


def _interrupt_next_count_nonzero(monkeypatch):
    """The next np.count_nonzero call (the duplicate-id check) raises KeyboardInterrupt."""
    real = np.count_nonzero
    calls = {"n": 0}

    def interrupted(a, *args, **kw):
        calls["n"] += 1
        monkeypatch.setattr(np, "count_nonzero", real)
        raise KeyboardInterrupt
    monkeypatch.setattr(np, "count_nonzero", interrupted)
    return calls


def test_interrupt_in_parse_ids_leaves_no_state(monkeypatch):
    env = cypool.make_vec("Hopper-v5", 4, batch_size=2)
    try:
        env.async_reset(seed=0)
        out = env.recv()
        ids = out[4]["env_id"]
        calls = _interrupt_next_count_nonzero(monkeypatch)
        with pytest.raises(KeyboardInterrupt):
            env.send(np.zeros((2, 3)), ids)
        assert calls["n"] == 1
        # each id alone, then the pair: nothing of the interrupted check is left over
        env.send(np.zeros((1, 3)), ids[:1])
        env.send(np.zeros((1, 3)), ids[1:])
        env.recv()
        env.reset(seed=0)
    finally:
        env.close()


def test_interrupt_in_parse_ids_sync_subsets_after_reset(monkeypatch):
    env = cypool.make_vec("Hopper-v5", 4)
    try:
        env.reset(seed=0)
        calls = _interrupt_next_count_nonzero(monkeypatch)
        with pytest.raises(KeyboardInterrupt):
            env.step(np.zeros((2, 3)), env_ids=[0, 1])
        assert calls["n"] == 1
        env.reset(seed=0)
        for ids in ([0], [1], [1, 2], [3, 0, 2], [0, 1, 2, 3]):
            *_, info = env.step(np.zeros((len(ids), 3)), env_ids=ids)
            assert info["env_id"].tolist() == ids
        with pytest.raises(ValueError, match="must not repeat"):
            env.step(np.zeros((2, 3)), env_ids=[2, 2])    # the check itself still works
    finally:
        env.close()


# ------------------------------------------------------------------ processes
def _rollout(task, n, batch_size, seed, steps):
    """Per-env observations of a short rollout (importable by spawned children)."""
    env = cypool.make_vec(task, n, num_threads=2, batch_size=batch_size, max_episode_steps=10)
    rng = np.random.default_rng(seed)
    out = [[] for _ in range(n)]
    if env.is_async:
        env.async_reset(seed=seed)
        acts = rng.uniform(-1, 1, (n, steps, NU))
        count = np.zeros(n, int)
        while min(len(o) for o in out) < steps:
            o, *_, info = env.recv(timeout=30)
            ids = info["env_id"]
            for row, i in enumerate(ids):
                out[i].append(o[row].copy())
            env.send(acts[ids, np.minimum(count[ids], steps - 1)], ids)
            count[ids] += 1
    else:
        obs, _ = env.reset(seed=seed)
        acts = rng.uniform(-1, 1, (n, steps, NU))
        for i in range(n):
            out[i].append(obs[i].copy())
        for s in range(steps - 1):
            obs, *_ = env.step(acts[:, s])
            for i in range(n):
                out[i].append(obs[i].copy())
    env.close()
    return [np.array(o[:steps]) for o in out]


def test_spawn_children_work_after_the_parent_used_openmp():
    want_sync = _rollout("Hopper-v5", 4, None, 5, 12)      # the parent's OpenMP team ran
    want_async = _rollout("Hopper-v5", 4, 2, 5, 12)
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        got_sync, got_async = pool.starmap(_rollout, [("Hopper-v5", 4, None, 5, 12),
                                                      ("Hopper-v5", 4, 2, 5, 12)])
    for got, want in ((got_sync, want_sync), (got_async, want_async)):
        assert all(np.array_equal(g, w) for g, w in zip(got, want))
    assert all(np.array_equal(g, w) for g, w in zip(got_sync, got_async))
