"""Property-based tests: random sequences of reset/step/send/recv/close, valid and invalid.

A model of the façade's state machine (which envs are idle or in flight, what a sync send
left for recv, whether the pool was reset or closed) says for each generated call whether it
must succeed or raise. Invariants, for every sequence hypothesis draws:
  - no crash, and no hang: every recv has a timeout and a watchdog ends a stuck process;
  - an invalid call raises ValueError, TypeError or RuntimeError and changes nothing (the
    façade's flags are compared, and the trajectories below would differ otherwise);
  - every result of a valid call equals a sync reference run: each env's own sequence of
    resets and steps (including steps whose results a reset discarded) is replayed on a sync
    pool, env by env, and every observation, reward and flag the pool returned must match.
Hypothesis is derandomized, so the sequences are the same on every run; the async pool has one
worker thread, so results come back in the order envs were sent.
"""
import faulthandler
import os
import sys
import tempfile
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st
from gymnasium.vector import AutoresetMode

import cypool

# hypothesis writes patches of failing examples on its own; keep them out of the checkout
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY",
                      os.path.join(tempfile.gettempdir(), "cypool-hypothesis"))

TASK, NU, LIMIT, DEFAULT_SEED = "Hopper-v5", 3, 3, 7
ENTROPY = "entropy"            # an env seeded from OS entropy: not reproducible
RECV_TIMEOUT = 30
SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))

# ------------------------------------------------------------------ the operations
seed_entries = st.one_of(st.none(), st.integers(0, 2**20))
seeds = st.one_of(st.none(), st.integers(0, 2**20),
                  st.lists(seed_entries, min_size=4, max_size=4),      # one per env
                  st.lists(seed_entries, min_size=1, max_size=6))      # mostly the wrong length
dtypes = st.sampled_from(["float64", "float32", "int64"])
ops = st.one_of(
    st.tuples(st.just("reset"), seeds, st.one_of(st.none(), st.integers(1, 2**6 - 1))),
    st.tuples(st.just("async_reset"), seeds),
    st.tuples(st.just("step"), dtypes, st.integers(0, 2**16)),
    st.tuples(st.just("send"), st.integers(1, 2**6 - 1), dtypes, st.integers(0, 2**16)),
    st.tuples(st.just("recv")),
    st.tuples(st.just("close")),
    st.tuples(st.just("bad"), st.sampled_from(
        ["nan", "shape", "dtype", "dup_ids", "ids_range", "ids_float", "seed_neg", "seed_float",
         "option", "mask_dtype", "send_busy"]), st.integers(0, 2**16)),
)


def actions(n, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == "int64":
        return rng.integers(-1, 2, (n, NU)).astype(np.int64)
    return rng.uniform(-1.5, 1.5, (n, NU)).astype(dtype)   # out of the Box too


# ------------------------------------------------------------------ the model
@dataclass
class Model:
    n: int
    is_async: bool
    batch: int
    has_reset: bool = False
    closed: bool = False
    in_flight: set = field(default_factory=set)
    sync_ready: list | None = None
    events: list = field(default_factory=list)     # per env: ("reset", seed) / ("step", row)
    seen: list = field(default_factory=list)       # per env: (event index, obs, rew, te, tr)
    pending: dict = field(default_factory=dict)    # env -> event index awaiting its result

    def __post_init__(self):
        self.events = [[] for _ in range(self.n)]
        self.seen = [[] for _ in range(self.n)]

    def seed_list(self, seed):
        """The seed each env gets from reset(seed=...) (None: continue the stream)."""
        if seed is None:
            return [None if self.has_reset else DEFAULT_SEED + i for i in range(self.n)]
        if isinstance(seed, int):
            return [seed + i for i in range(self.n)]
        # a None entry continues the env's stream, or draws OS entropy at the first reset
        return [ENTROPY if s is None and not self.has_reset else s for s in seed]

    def idle(self):
        return [i for i in range(self.n) if i not in self.in_flight]


def pick(bits, pool):
    return [i for k, i in enumerate(pool) if bits >> k & 1]


def flags(env):
    return (env.pool.in_flight.copy().tolist(), env.pool.done.copy().tolist(), env._has_reset,
            None if env.pool.sent_sync is None else list(env.pool.sent_sync))


def record(model, ids, out):
    o, r, te, tr, info = out
    if "env_id" in info:
        assert info["env_id"].tolist() == list(ids)
    for row, i in enumerate(ids):
        k = model.pending.pop(i)
        model.seen[i].append((k, o[row].copy(), r[row], te[row], tr[row]))


def run_ops(env, model, sequence):
    n = model.n
    for op in sequence:
        kind = op[0]
        if model.closed:
            if kind == "close":
                env.close()
            else:
                with pytest.raises(RuntimeError):
                    _call_any(env, op, n)
            continue
        if kind == "close":
            env.close()
            model.closed = True
        elif kind == "reset":
            _, seed, mask_bits = op
            mask = None if mask_bits is None else np.array([bool(mask_bits >> i & 1)
                                                            for i in range(n)])
            bad_seed = isinstance(seed, list) and len(seed) != n
            bad_mask = mask is not None and (not mask.any() or (not model.has_reset
                                                                and not mask.all()))
            if bad_seed or bad_mask:
                before = flags(env)
                with pytest.raises(ValueError):
                    env.reset(seed=seed, options=None if mask is None else {"reset_mask": mask})
                assert flags(env) == before
                continue
            per_env = model.seed_list(seed)
            obs, _ = env.reset(seed=seed, options=None if mask is None else
                               {"reset_mask": mask.copy()})
            # envs in flight (or awaiting a sync recv) were stepped; their results dropped
            for i in list(model.pending):
                del model.pending[i]
            model.in_flight.clear()
            model.sync_ready = None
            for i in (range(n) if mask is None else np.flatnonzero(mask)):
                model.events[i].append(("reset", per_env[i]))
                model.seen[i].append((len(model.events[i]) - 1, obs[i].copy(), None, None, None))
            model.has_reset = True
        elif kind == "async_reset":
            _, seed = op
            if (isinstance(seed, list) and len(seed) != n) or model.in_flight:
                before = flags(env)
                with pytest.raises(ValueError):
                    env.async_reset(seed=seed)
                assert flags(env) == before
                continue
            per_env = model.seed_list(seed)
            env.async_reset(seed=seed)
            for i in range(n):
                model.events[i].append(("reset", per_env[i]))
                model.pending[i] = len(model.events[i]) - 1
                model.in_flight.add(i)
            model.has_reset = True
            if not model.is_async:
                model.sync_ready = list(range(n))
        elif kind == "step":
            _, dtype, aseed = op
            a = actions(n, dtype, aseed)
            if not model.has_reset:
                with pytest.raises(RuntimeError):
                    env.step(a)
                continue
            if model.in_flight:
                before = flags(env)
                with pytest.raises(ValueError):
                    env.step(a)
                assert flags(env) == before
                continue
            for i in range(n):
                model.events[i].append(("step", a[i]))
                model.pending[i] = len(model.events[i]) - 1
            out = env.step(a)
            if model.is_async:
                ids = out[4]["env_id"].tolist()
                assert len(ids) == model.batch
                model.in_flight = set(range(n)) - set(ids)
            else:
                ids = list(range(n))
            record(model, ids, out)
        elif kind == "send":
            _, bits, dtype, aseed = op
            ids = pick(bits, list(range(n)))
            a = actions(len(ids), dtype, aseed)
            if not model.has_reset:
                with pytest.raises(RuntimeError):
                    env.send(a, ids)
                continue
            busy = set(ids) & model.in_flight
            if not ids:
                with pytest.raises(ValueError):
                    env.send(a, ids)
                continue
            if busy or (not model.is_async and model.sync_ready is not None):
                # sync mode: results of the previous send() are waiting for recv()
                before = flags(env)
                with pytest.raises(ValueError):
                    env.send(a, ids)
                assert flags(env) == before
                continue
            env.send(a, ids)
            for row, i in enumerate(ids):
                model.events[i].append(("step", a[row]))
                model.pending[i] = len(model.events[i]) - 1
                model.in_flight.add(i)
            if not model.is_async:
                model.sync_ready = list(ids)
        elif kind == "recv":
            want = model.sync_ready if not model.is_async else None
            enough = (want is not None) if not model.is_async else \
                len(model.in_flight) >= model.batch
            if not enough:
                before = flags(env)
                with pytest.raises(ValueError):
                    env.recv(timeout=RECV_TIMEOUT)
                assert flags(env) == before
                continue
            out = env.recv(timeout=RECV_TIMEOUT)
            ids = out[4]["env_id"].tolist()
            if model.is_async:
                assert len(ids) == model.batch and set(ids) <= model.in_flight
            else:
                assert ids == want
                model.sync_ready = None
            model.in_flight -= set(ids)
            record(model, ids, out)
        elif kind == "bad":
            _bad_call(env, model, op)


def _call_any(env, op, n):
    kind = op[0]
    if kind == "reset":
        env.reset(seed=op[1] if not isinstance(op[1], list) else None)
    elif kind == "async_reset":
        env.async_reset()
    elif kind in ("step", "bad"):
        env.step(np.zeros((n, NU)))
    elif kind == "send":
        env.send(np.zeros((1, NU)), [0])
    elif kind == "recv":
        env.recv(timeout=RECV_TIMEOUT)


def _bad_call(env, model, op):
    _, what, s = op
    n = model.n
    idle = model.idle()
    before = flags(env)
    if not idle and what in ("nan", "shape", "dtype"):
        return                               # no idle env to send a bad row to
    i = idle[s % len(idle)] if idle else 0
    if what == "send_busy":
        if not model.in_flight or not model.has_reset:
            return
        busy = sorted(model.in_flight)[s % len(model.in_flight)]
        call, exc = (lambda: env.send(np.zeros((1, NU)), [busy])), ValueError
    elif what == "nan":
        a = np.zeros((1, NU))
        a[0, s % NU] = np.nan
        call, exc = (lambda: env.send(a, [i])), ValueError
    elif what == "shape":
        call, exc = (lambda: env.send(np.zeros((2, NU)), [i])), ValueError
    elif what == "dtype":
        call, exc = (lambda: env.send(np.zeros((1, NU), np.complex128), [i])), TypeError
    elif what == "dup_ids":
        call, exc = (lambda: env.send(np.zeros((2, NU)), [i, i])), ValueError
    elif what == "ids_range":
        call, exc = (lambda: env.send(np.zeros((1, NU)), [n + s % 3])), ValueError
    elif what == "ids_float":
        call, exc = (lambda: env.send(np.zeros((1, NU)), [float(i)])), TypeError
    elif what == "seed_neg":
        call, exc = (lambda: env.reset(seed=-1 - s)), ValueError
    elif what == "seed_float":
        call, exc = (lambda: env.reset(seed=s + 0.5)), TypeError
    elif what == "option":
        call, exc = (lambda: env.reset(options={"reset_mask": np.ones(n, bool), "x": s})), \
            ValueError
    else:  # mask_dtype
        call, exc = (lambda: env.reset(options={"reset_mask": np.ones(n, np.int8)})), TypeError
    sending = what not in ("seed_neg", "seed_float", "option", "mask_dtype")
    if sending and not model.has_reset:
        exc = (RuntimeError, exc)          # stepping before the first reset
    elif sending and not model.is_async and model.sync_ready is not None:
        exc = (ValueError, TypeError)      # a sync send() waiting for recv() may be named first
    with pytest.raises(exc):
        call()
    assert flags(env) == before


def replay_and_compare(model, mode):
    """Replay each env's events on a sync pool, env by env, and compare what was seen."""
    ref = cypool.make_vec(TASK, model.n, num_threads=1, max_episode_steps=LIMIT,
                          autoreset_mode=mode)
    try:
        firsts = [ev[0][1] if ev else 0 for ev in model.events]
        obs0, _ = ref.reset(seed=[None if s == ENTROPY else s for s in firsts])
        for i in range(model.n):
            if not model.events[i]:
                continue
            results = {0: (obs0[i], None)}
            valid = {0: firsts[i] != ENTROPY}
            for k, ev in enumerate(model.events[i][1:], start=1):
                valid[k] = valid[k - 1]
                if ev[0] == "reset":
                    if ev[1] is not None:
                        valid[k] = ev[1] != ENTROPY
                    mask = np.zeros(model.n, bool)
                    mask[i] = True
                    seed = [None] * model.n
                    seed[i] = None if ev[1] == ENTROPY else ev[1]
                    o, _ = ref.reset(seed=seed, options={"reset_mask": mask})
                    results[k] = (o[i], None)
                else:
                    o, r, te, tr, _ = ref.step(ev[1][None], env_ids=[i])
                    results[k] = (o[0], (r[0], te[0], tr[0]))
            for k, o, r, te, tr in model.seen[i]:
                if not valid[k]:
                    continue
                want_obs, want_rest = results[k]
                assert np.array_equal(o, want_obs), (i, k, model.events[i][k][0])
                if want_rest is not None:
                    assert (r, te, tr) == want_rest, (i, k)
    finally:
        ref.close()


@pytest.fixture(autouse=True)
def watchdog():
    # no hang: a stuck test ends the process with every thread's traceback instead
    faulthandler.dump_traceback_later(300, exit=True, file=sys.__stderr__)
    yield
    faulthandler.cancel_dump_traceback_later()


def _run(sequence, mode, batch_size, threads):
    n = 4
    env = cypool.make_vec(TASK, n, num_threads=threads, max_episode_steps=LIMIT,
                          autoreset_mode=mode, batch_size=batch_size, seed=DEFAULT_SEED)
    model = Model(n=n, is_async=env.is_async, batch=env.batch_size)
    try:
        run_ops(env, model, sequence)
    finally:
        env.close()
    replay_and_compare(model, mode)


MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP]


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=150, **SETTINGS)
@given(sequence=st.lists(ops, min_size=1, max_size=25))
# sequences that found bugs, always run: a second send() before recv(); a partial reset that
# discards the results of a step that ended two episodes
@example(sequence=[("reset", None, None), ("send", 1, "float64", 0), ("send", 2, "float64", 0),
                   ("recv",)])
@example(sequence=[("reset", 5, None), ("step", "float64", 0), ("step", "float64", 1),
                   ("send", 3, "float64", 2), ("reset", None, 12), ("step", "float64", 3)])
def test_random_call_sequences_sync_pool(mode, sequence):
    _run(sequence, mode, batch_size=None, threads=2)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=40, **SETTINGS)
@given(sequence=st.lists(ops, min_size=1, max_size=25))
# sequences that found bugs, always run: stepping a closed env; a seeded reset while the
# resets of async_reset() are still queued
@example(sequence=[("async_reset", None), ("close",), ("step", "float64", 0)])
@example(sequence=[("async_reset", None), ("reset", 1188, None), ("async_reset", None),
                   ("recv",), ("recv",)])
def test_random_call_sequences_async_pool(mode, sequence):
    _run(sequence, mode, batch_size=2, threads=1)


# ------------------------------------------------------------------ regressions found above
def test_sync_send_twice_without_recv():
    # The second send() must not strand the envs of the first: either it is refused until
    # recv() (what the model above expects), or recv() returns both. Never: env 0 stuck
    # "in flight" with its results lost until the next reset.
    env = cypool.make_vec(TASK, 3, num_threads=2)
    try:
        env.reset(seed=0)
        env.send(np.zeros((1, NU)), [0])
        try:
            env.send(np.zeros((1, NU)), [1])
        except ValueError:
            pass
        *_, info = env.recv()
        got = set(info["env_id"].tolist())
        assert 0 in got
        env.step(np.zeros((3, NU)))               # nothing is left in flight
    finally:
        env.close()


@pytest.mark.parametrize("batch_size", [None, 2])
def test_reset_keeps_episode_ends_of_discarded_results(batch_size):
    # Envs 0 and 1 are sent a step that ends their episode (max_episode_steps=1); a partial
    # reset of the others then discards those results. Their episode still ended: the next
    # step must reset them, so that no episode is longer than max_episode_steps.
    env = cypool.make_vec(TASK, 4, num_threads=2, max_episode_steps=1, batch_size=batch_size)
    try:
        if env.is_async:
            env.async_reset(seed=0)
            env.recv(timeout=RECV_TIMEOUT), env.recv(timeout=RECV_TIMEOUT)
        else:
            env.reset(seed=0)
        env.send(np.zeros((2, NU)), [0, 1])
        env.reset(options={"reset_mask": np.array([False, False, True, True])})
        o, r, te, tr, info = env.step(np.zeros((4, NU))) if not env.is_async else \
            _step_all_async(env)
        assert r[:2].tolist() == [0.0, 0.0] and not tr[:2].any()   # autoreset rows
        assert (env.episode_statistics()["last_length"] <= 1).all()
    finally:
        env.close()


def _step_all_async(env):
    env.send(np.zeros((4, NU)))
    rows = {}
    for _ in range(2):
        o, r, te, tr, info = env.recv(timeout=RECV_TIMEOUT)
        for k, i in enumerate(info["env_id"]):
            rows[int(i)] = (o[k], r[k], te[k], tr[k])
    o, r, te, tr = (np.array([rows[i][j] for i in range(4)]) for j in range(4))
    return o, r, te, tr, {}


@pytest.mark.parametrize("batch_size", [None, 2])
def test_every_call_on_a_closed_env_says_it_is_closed(batch_size):
    env = cypool.make_vec(TASK, 4, num_threads=2, batch_size=batch_size)
    env.async_reset(seed=0)                      # work in flight when it is closed
    env.close()
    env.close()                                  # idempotent
    calls = [lambda: env.reset(seed=0), lambda: env.async_reset(seed=0),
             lambda: env.step(np.zeros((4, NU))), lambda: env.step(np.zeros((2, NU)), [0, 1]),
             lambda: env.send(np.zeros((1, NU)), [0]), lambda: env.recv(timeout=1),
             lambda: env.episode_statistics()]
    for call in calls:
        with pytest.raises(cypool.ClosedEnvError):
            call()
