"""The façade under interrupts, engine failures and misuse: nothing hangs, nothing is lost,
nothing the caller does can write into a pool's state."""
import copy
import os
import pickle
import subprocess
import sys
import textwrap

import gymnasium as gym
import numpy as np
import pytest

import cypool

HOPPER_ACT = (3,)


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


# ------------------------------------------------------------------ engine failures lose nothing
def _fragile_ant(tmp_path):
    """An Ant whose arena is too small for some contact states: some envs fail, others not."""
    src = open(os.path.join(os.path.dirname(gym.__file__), "envs/mujoco/assets/ant.xml")).read()
    path = tmp_path / "ant_14k.xml"
    path.write_text(src.replace('<mujoco model="ant">', '<mujoco model="ant"><size memory="14K"/>'))
    return str(path)


def _actions(t):
    a = np.zeros((4, 8))
    a[2:] = 1.0
    return a


def test_sync_engine_error_carries_the_other_envs(tmp_path):
    env = cypool.make_vec("Ant-v5", 4, num_threads=2, xml_file=_fragile_ant(tmp_path),
                          max_episode_steps=5)
    try:
        env.reset(seed=0)
        partial_batches = 0
        seen_done = 0
        for t in range(40):
            try:
                obs, rew, term, trunc, info = env.step(_actions(t))
                seen_done += int((term | trunc).sum())
            except cypool.EngineError as err:
                ok = sorted(set(range(4)) - set(err.env_ids))
                obs, rew, term, trunc, info = err.result
                assert info["env_id"].tolist() == ok
                assert obs.shape == (len(ok), env.single_observation_space.shape[0])
                seen_done += int((term | trunc).sum())
                partial_batches += 1
        assert partial_batches >= 3
        stats = env.episode_statistics()
        # every episode the pool counted (failed envs end none) reached the caller
        assert stats["episodes"].sum() == seen_done
    finally:
        env.close()


def test_async_engine_error_keeps_the_loop_running(tmp_path):
    env = cypool.make_vec("Ant-v5", 4, num_threads=2, batch_size=2,
                          xml_file=_fragile_ant(tmp_path))
    try:
        env.async_reset(seed=0)
        errors, received = 0, np.zeros(4, np.int64)
        for t in range(80):
            try:
                *_, info = env.recv(timeout=10)
                ids = info["env_id"]
            except cypool.EngineError as err:
                errors += 1
                done = [] if err.result is None else err.result[4]["env_id"].tolist()
                ids = np.array(sorted(done + err.env_ids), np.int64)
                assert len(ids) == 2        # the whole batch: finished rows plus failed envs
            received[ids] += 1
            a = np.zeros((len(ids), 8))
            a[np.asarray(ids) >= 2] = 1.0
            env.send(a, ids)               # failed envs are idle: they restart here
        assert errors >= 2
        assert (received > 0).all()
    finally:
        env.close()


def test_population_async_engine_error_keeps_the_loop_running(tmp_path):
    """Member recv: the error names the batch's members (err.members) and carries the
    finished envs' rows; re-sending err.members keeps every member in the rotation."""
    pop = cypool.make_population("Ant-v5", 4, 2, member_batch=2, num_threads=2,
                                 xml_file=_fragile_ant(tmp_path))
    try:
        pop.async_reset(seed=0)
        errors, received = 0, np.zeros(4, np.int64)
        for t in range(80):
            try:
                *_, info = pop.recv(timeout=10)
                members = info["member_id"]
            except cypool.EngineError as err:
                errors += 1
                members = np.asarray(err.members)
                assert len(members) == 2
                rows = set(np.concatenate([members * 2, members * 2 + 1]).tolist())
                done = [] if err.result is None else err.result[4]["env_id"].tolist()
                assert set(err.env_ids) | set(done) == rows          # nothing lost
                assert not set(err.env_ids) & set(done)
            received[members] += 1
            a = np.zeros((len(members), 2, 8))
            a[members >= 2] = 1.0
            pop.send(a, members)
        assert errors >= 2
        assert (received > 0).all()
        pop.reset(seed=1)
        pop.step(np.zeros((4, 2, 8)))
    finally:
        pop.close()


# ------------------------------------------------------------------ copy=False views
@pytest.mark.parametrize("env_id,act", [("Hopper-v5", np.zeros((2, 3))),
                                        ("Pong-v5", np.zeros(2, np.int64))])
def test_zero_copy_views_are_read_only(env_id, act):
    env = cypool.make_vec(env_id, 2, copy=False)
    try:
        obs, _ = env.reset(seed=0)
        keep = obs.copy()
        with pytest.raises(ValueError, match="read-only"):
            obs[...] = 7
        out = env.step(act)
        for a in out[:4]:
            with pytest.raises(ValueError, match="read-only"):
                a[...] = 0
        assert not np.shares_memory(keep, out[0])
        stats = env.episode_statistics(copy=False)
        with pytest.raises(ValueError, match="read-only"):
            stats["episodes"][0] = 5
    finally:
        env.close()


def test_atari_frame_stack_cannot_be_corrupted_through_a_view():
    env = cypool.make_vec("Pong-v5", 1, copy=False)
    ref = cypool.make_vec("Pong-v5", 1)
    try:
        o, _ = env.reset(seed=3)
        ref.reset(seed=3)
        with pytest.raises(ValueError):
            o[0, -1] = 255
        for _ in range(4):
            a = env.step(np.ones(1, np.int64))[0]
            b = ref.step(np.ones(1, np.int64))[0]
            assert np.array_equal(a, b)
    finally:
        env.close()
        ref.close()


def test_population_views_are_read_only():
    pop = cypool.make_population("Hopper-v5", 2, 2)
    try:
        obs, _ = pop.reset(seed=0)
        with pytest.raises(ValueError, match="read-only"):
            obs[0, 0, 0] = 1.0
        out = pop.step(np.zeros((2, 2, 3)))
        with pytest.raises(ValueError, match="read-only"):
            out[1][...] = 0
    finally:
        pop.close()
    pop = cypool.make_population("Hopper-v5", 2, 2, member_batch=1)
    try:
        pop.async_reset(seed=0)
        obs, *_ = pop.recv()
        with pytest.raises(ValueError, match="read-only"):
            obs[...] = 0
    finally:
        pop.close()


def test_population_episode_ring_is_read_only():
    pop = cypool.make_population("Hopper-v5", 2, 2, episode_window=4, max_episode_steps=3)
    try:
        pop.reset(seed=0)
        for _ in range(7):
            pop.step(np.zeros((2, 2, 3)))
        before = pop.member_statistics()["recent_return"].copy()
        ring = pop.episode_ring
        for key in ("return", "length", "episodes"):
            with pytest.raises(ValueError, match="read-only"):
                ring[key][...] = 0
        assert np.array_equal(pop.member_statistics()["recent_return"], before)
        pop.reset_member(0)               # the population itself still clears its ring
        assert pop.recent_episodes()["count"][0] == 0
    finally:
        pop.close()


# ------------------------------------------------------------------ misuse gets clear errors
def test_copies_that_cannot_be_made_are_refused_clearly():
    """Copies are independent pools (tests/test_snapshots.py); a pool not made by make_vec,
    a closed one and one with envs in flight are refused, and the original is untouched."""
    from cypool.families import family_for

    fam = family_for("Hopper-v5").make("Hopper-v5", 2, 1, 1000, {})
    bare = cypool.VectorEnv(fam, env_id="Hopper-v5")
    flying = cypool.make_vec("Hopper-v5", 4, batch_size=2)
    closed = cypool.make_vec("Hopper-v5", 2)
    closed.close()
    try:
        for how in (copy.copy, copy.deepcopy, pickle.dumps):
            with pytest.raises(TypeError, match="make_vec"):
                how(bare)
            with pytest.raises(cypool.ClosedEnvError):
                how(closed)
        flying.async_reset(seed=0)
        for how in (copy.copy, copy.deepcopy, pickle.dumps):
            with pytest.raises(ValueError, match="in flight"):
                how(flying)
        bare.reset(seed=0)             # the originals are untouched
        bare.step(np.zeros((2, 3)))
        flying.recv(timeout=30)
    finally:
        bare.close()
        flying.close()


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


@pytest.mark.parametrize("mk", [[{1: 2}, {}], [{"ctrl_cost_weight": 0.1}, {(1,): 2}]])
def test_member_kwargs_keys_must_be_names(mk):
    with pytest.raises(TypeError, match=r"member_kwargs\[\d\] must map kwarg names"):
        cypool.make_population("Hopper-v5", 2, 1, member_kwargs=mk)


# ------------------------------------------------------------------ action dtypes
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


@pytest.mark.parametrize("env_id,make_actions", [
    ("Hopper-v5", lambda rng: rng.uniform(-1, 1, (3, 3))),
    ("Hopper-v5", lambda rng: rng.uniform(-1, 1, (3, 3)).astype(np.float32)),
    ("Pong-v5", lambda rng: rng.integers(0, 6, 3)),
])
def test_non_native_byte_order_actions(env_id, make_actions):
    a, b = cypool.make_vec(env_id, 3, seed=0), cypool.make_vec(env_id, 3, seed=0)
    try:
        a.reset(seed=1)
        b.reset(seed=1)
        rng = np.random.default_rng(0)
        for _ in range(5):
            act = make_actions(rng)
            swapped = act.astype(act.dtype.newbyteorder(">" if sys.byteorder == "little" else "<"))
            ra, rb = a.step(act), b.step(swapped)
            for x, y in zip(ra[:4], rb[:4]):
                assert np.array_equal(x, y)
            for key in ra[4]:
                assert np.array_equal(ra[4][key], rb[4][key]) and ra[4][key].dtype == rb[4][key].dtype
    finally:
        a.close()
        b.close()


def test_population_reset_with_members_in_flight():
    """A full reset while members step: they finish before any env gets its new random
    stream (it was replaced under a running worker), and the reset equals a fresh one."""
    pop = cypool.make_population("Hopper-v5", 4, 2, member_batch=2, num_threads=2)
    fresh = cypool.make_population("Hopper-v5", 4, 2, num_threads=1)
    try:
        want, _ = fresh.reset(seed=5)
        for _ in range(100):
            pop.async_reset(seed=0)
            got, _ = pop.reset(seed=5)
            assert np.array_equal(got, want)
    finally:
        pop.close()
        fresh.close()
