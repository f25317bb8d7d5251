"""Env state snapshots (Engine.get_state / set_state) of the built-in families: restoring a
state and replaying the same actions gives the same results bit for bit, in the same pool and
in another one, across auto-resets; states are plain picklable values.

set_state and the engine refuse states that would leave an env half-restored or stepping with
no random stream: every field of every env's state is checked (a ValueError naming the state
and the field) before any env changes, a pool never reset must be given a state for every
env, and the engine refuses to run an op for an env that has no random stream (edited
pickles: tests/test_snapshots.py)."""
import copy
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import cypool


def _run(env, acts):
    return [env.step(a)[:4] for a in acts]


def _same(xs, ys, rows=None):
    for x, y in zip(xs, ys):
        for k in range(4):
            b = y[k] if rows is None else y[k][rows]
            assert np.array_equal(x[k], b), k


CASES = [("Hopper-v5", {}), ("Humanoid-v5", {}), ("Ant-v5", {}), ("Pusher-v5", {}),
         ("Breakout-v5", {"repeat_action_probability": 0.25}),
         ("Pong-v5", {"episodic_life": True, "max_episode_steps": 40})]


@pytest.mark.parametrize("env_id,kw", CASES, ids=[c[0] for c in CASES])
def test_restore_replays_bit_for_bit(env_id, kw):
    n, warm, steps = 3, 15, 60
    env = cypool.make_vec(env_id, n, num_threads=2, seed=7, **kw)
    other = cypool.make_vec(env_id, n, num_threads=1, seed=123, **kw)
    space = env.action_space
    space.seed(0)
    acts = [space.sample() for _ in range(warm + steps)]
    try:
        env.reset()
        _run(env, acts[:warm])
        state = pickle.loads(pickle.dumps(env.pool.engine.get_state(None)))
        first = _run(env, acts[warm:])
        if env_id == "Pong-v5":          # the replay crosses a truncation and its reset
            assert sum(int(r[3].sum()) for r in first) > 0
        env.pool.engine.set_state(None, state)
        _same(first, _run(env, acts[warm:]))
        other.reset()
        perm = [1, 2, 0]
        other.pool.engine.set_state(perm, state)
        inv = np.argsort(perm)
        moved = [other.step(a[inv])[:4] for a in acts[warm:]]
        _same(first, moved, rows=perm)
    finally:
        env.close()
        other.close()


def test_a_state_of_another_model_or_game_is_refused():
    hop = cypool.make_vec("Hopper-v5", 2, num_threads=1, seed=0)
    walker = cypool.make_vec("Walker2d-v5", 2, num_threads=1, seed=0)
    pong = cypool.make_vec("Pong-v5", 2, num_threads=1, seed=0)
    breakout = cypool.make_vec("Breakout-v5", 2, num_threads=1, seed=0)
    try:
        for e in (hop, walker, pong, breakout):
            e.reset()
        for dst, src in ((hop, walker), (pong, breakout), (hop, pong)):
            with pytest.raises(ValueError, match="different kind of env"):
                dst.pool.engine.set_state(None, src.pool.engine.get_state(None))
    finally:
        for e in (hop, walker, pong, breakout):
            e.close()


# ------------------------------------------------------------------ checked states
IDS = ["CartPole-v1", "Hopper-v5", "Pong-v5"]


def _actions(env, steps, seed=0):
    env.action_space.seed(seed)
    return [env.action_space.sample() for _ in range(steps)]


def _dump(env):
    return pickle.dumps(env.get_state())


def _same_step(x, y):
    for k in range(4):
        assert np.array_equal(x[k], y[k]), k


# ------------------------------------------------------------------ never-reset pools
@pytest.mark.parametrize("env_id", IDS)
def test_a_state_for_some_envs_of_a_never_reset_pool_is_refused(env_id):
    env = cypool.make_vec(env_id, 4, num_threads=1, seed=3)
    fresh = cypool.make_vec(env_id, 4, num_threads=1)
    try:
        env.reset()
        acts = _actions(env, 12)
        for a in acts[:6]:
            env.step(a)
        with pytest.raises(ValueError, match=r"never been reset.*every env|reset\(\) first"):
            fresh.set_state(env.get_state([1]), env_ids=[0])
        with pytest.raises(ValueError, match="never been reset"):
            fresh.set_state(env.get_state([0, 1, 2]))
        # nothing changed: still a pool that must be reset before stepping
        with pytest.raises(RuntimeError, match="reset"):
            fresh.step(acts[0])
        with pytest.raises(ValueError, match="before the first reset"):
            fresh.get_state()
        # a state for every env is a complete pool: it steps as the original
        fresh.set_state(env.get_state([3, 2, 1, 0]), env_ids=[3, 2, 1, 0])
        for a in acts[6:]:
            _same_step(env.step(a), fresh.step(a))
    finally:
        env.close()
        fresh.close()


ENGINE_SCRIPT = r"""
import numpy as np, cypool
def refused(f):
    try:
        f()
    except RuntimeError as e:
        assert "no random stream" in str(e), e
        return
    raise AssertionError("ran an env with no random stream")
for env_id in ("CartPole-v1", "Hopper-v5"):
    env = cypool.make_vec(env_id, 3, num_threads=1)
    eng = env.pool.engine
    eng.ops_arr[:] = 0
    eng.ops_arr[1] = 1                  # a step of env 1
    refused(eng.run)
    eng.ops_arr[1] = 2                  # a reset of env 1
    refused(eng.run)
    refused(lambda: eng.step_all(True, 1))
    eng.ops_arr[:] = 0
    eng.run()                           # no op: nothing to refuse
    env.reset(seed=0)                   # the engine is usable afterwards
    env.step(env.action_space.sample())
    env.close()
env = cypool.make_vec("CartPole-v1", 4, num_threads=2, batch_size=2)
eng = env.pool.engine
eng.ops_arr[:] = 1
refused(lambda: eng.submit(np.array([0, 1], np.int64), env.pool.flags))
assert not env.pool.in_flight.any()
env.reset(seed=0)
env.close()
pop = cypool.make_population("CartPole-v1", 2, 2, num_threads=2, member_batch=1)
eng = pop.pool.engine
eng.ops_arr[:] = 1
refused(lambda: eng.submit_groups([1], pop.vec.pool.flags))
assert not pop.vec.pool.in_flight.any()
pop.close()
print("OK")
"""


def test_the_engine_refuses_to_run_an_env_with_no_random_stream():
    # in a child: without the check the kernel dereferences a NULL generator
    r = subprocess.run([sys.executable, "-c", ENGINE_SCRIPT], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), (r.returncode, r.stderr[-3000:])


# ------------------------------------------------------------------ atomic set_state
def _set(st, k, field, value):
    st["envs"][k][field] = value


def _set_item(field, j, value):
    def f(st):
        v = list(st["envs"][1][field])
        v[j] = value
        st["envs"][1][field] = tuple(v)
    return f


def _env_part(key, value):
    def f(st):
        st["envs"][1]["env"][key] = value
    return f


def _env_item(key, j, value):
    def f(st):
        v = list(st["envs"][1]["env"][key])
        v[j] = value
        st["envs"][1]["env"][key] = type(st["envs"][1]["env"][key])(v)
    return f


def _part_item(j, value):
    def f(st):
        st["envs"][1]["env"][j] = value
    return f


def _rows(fn):
    def f(st):
        st["envs"][1]["rows"] = fn(dict(st["envs"][1]["rows"]))
    return f


def _field(field, value):
    return lambda st: _set(st, 1, field, value)


def _drop(field):
    return lambda st: st["envs"][1].pop(field)


def _other_bitgen(st):
    st["envs"][1]["rng"] = ("PCG64", np.random.MT19937(0).state)


COMMON = {
    "elapsed": [("str", _field("elapsed", "x")), ("negative", _field("elapsed", -1)),
                ("too large", _field("elapsed", 2**63)), ("float", _field("elapsed", 1.5)),
                ("bool", _field("elapsed", True)), ("missing", _drop("elapsed"))],
    "done": [("str", _field("done", "yes")), ("int", _field("done", 2)),
             ("None", _field("done", None))],
    "episode": [("None", _field("episode", None)), ("str", _field("episode", "abcdef")),
                ("short", _field("episode", (0.0, 0, 0.0, 0, 0))),
                ("return str", _set_item("episode", 0, "x")),
                ("return huge", _set_item("episode", 2, 10**400)),
                ("length negative", _set_item("episode", 1, -1)),
                ("length too large", _set_item("episode", 3, 2**63)),
                ("episodes float", _set_item("episode", 4, 1.5)),
                ("steps str", _set_item("episode", 5, "1"))],
    "rng": [("int", _field("rng", 5)), ("short", _field("rng", ("PCG64",))),
            ("unknown", _field("rng", ("Nope", {}))), ("kind int", _field("rng", (5, {}))),
            ("base class", _field("rng", ("BitGenerator", {}))),
            ("empty state", _field("rng", ("PCG64", {}))),
            ("other generator's state", _other_bitgen), ("missing", _drop("rng"))],
    "rows": [("None", _field("rows", None)), ("missing obs", _rows(lambda r: {})),
             ("extra", _rows(lambda r: {**r, "extra": b""})),
             ("list", _rows(lambda r: {**r, "obs": list(r["obs"])})),
             ("short", _rows(lambda r: {**r, "obs": r["obs"][:-1]}))],
    "step": [("None", _field("step", None)), ("short", _field("step", (0.0, False, False))),
             ("reward str", _set_item("step", 0, "x")), ("term int", _set_item("step", 1, 2)),
             ("trunc None", _set_item("step", 2, None)),
             ("info_kind too large", _set_item("step", 3, 7)),
             ("info_kind negative", _set_item("step", 3, -1)),
             ("info_kind huge", _set_item("step", 3, 300)),
             ("info_kind str", _set_item("step", 3, "a"))],
    "info": [("None", _field("info", None)), ("empty", _field("info", b"")),
             ("list", _field("info", [0.0]))],
    "version": [("other", _field("version", 99))],
    "signature": [("other", _field("signature", ("x",)))],
}

FAMILY = {
    "CartPole-v1": [("None", _field("env", None)), ("short", _field("env", [0.0] * 3)),
                    ("dict", _field("env", {})), ("str item", _part_item(2, "x")),
                    ("huge item", _part_item(0, 10**400)), ("bool item", _part_item(1, True))],
    "Hopper-v5": [("None", _field("env", None)), ("empty", _field("env", {})),
                  ("buffer short", lambda st: _env_part("buffer",
                                                        st["envs"][1]["env"]["buffer"][:-8])(st)),
                  ("buffer str", _env_part("buffer", "x")),
                  ("time str", _env_part("time", "x")),
                  ("warnings short", lambda st: _env_part(
                      "warnings", st["envs"][1]["env"]["warnings"][:-1])(st)),
                  ("warning not a pair", _env_item("warnings", 2, (1,))),
                  ("warning str", _env_item("warnings", 2, ("a", 0))),
                  ("warning too large", _env_item("warnings", 3, (0, 2**40))),
                  ("warn short", _env_part("warn", (0,))),
                  ("warn str", _env_part("warn", ("a", 0))),
                  ("warn too large", _env_part("warn", (0, 2**64))),
                  ("act_f32 out of range", _env_part("act_f32", 5)),
                  ("act_f32 str", _env_part("act_f32", "x"))],
    "Pong-v5": [("None", _field("env", None)), ("empty", _field("env", {})),
                ("buf0 short", lambda st: _env_part("buf0", st["envs"][1]["env"]["buf0"][1:])(st)),
                ("buf1 None", _env_part("buf1", None)),
                ("counters short", _env_part("counters", (0, 0, 0, 0))),
                ("lives str", _env_item("counters", 0, "x")),
                ("game_steps negative", _env_item("counters", 1, -1)),
                ("life_lost 5", _env_item("counters", 2, 5)),
                ("seed_pending 2", _env_item("counters", 3, 2)),
                ("ale_seed too large", _env_item("counters", 4, 2**40)),
                ("ale int", _env_part("ale", 5)),
                # these pass every check and fail inside ALE: rolled back
                ("ale short", _env_part("ale", b"abc")),
                ("ale truncated", lambda st: _env_part(
                    "ale", st["envs"][1]["env"]["ale"][:-40])(st)),
                ("ale half", lambda st: _env_part(
                    "ale", st["envs"][1]["env"]["ale"][:len(st["envs"][1]["env"]["ale"]) // 2])(
                    st))],
}


def _seeded(value):
    def f(st):
        st["seeded"] = value
    return f


SEEDED = [("None", _seeded(None)), ("short", _seeded([True])), ("str item", _seeded([True, "x"])),
          ("int item", _seeded([True, 2]))]


# ALE's deserializer refuses corrupt bytes by throwing a C++ exception, which aborts in
# AddressSanitizer's __cxa_throw interceptor when libasan is preloaded into Python: those
# cases run in the normal suite only
UNDER_ASAN = os.environ.get("CYPOOL_SANITIZER") == "asan"


def _cases(env_id):
    out = [(f, label, fn) for f, cases in COMMON.items() for label, fn in cases]
    out += [("env", label, fn) for label, fn in FAMILY[env_id]
            if not (UNDER_ASAN and label in ("ale short", "ale truncated", "ale half"))]
    out += [("seeded", label, fn) for label, fn in SEEDED]
    return out


@pytest.fixture(scope="module", params=IDS)
def stepped(request):
    """(pool of 2 envs, a state taken 5 steps before its current one, the next actions)."""
    env = cypool.make_vec(request.param, 2, num_threads=1, seed=5)
    acts = _actions(env, 40, seed=1)
    env.reset()
    for a in acts[:10]:
        env.step(a)
    saved = env.get_state()
    for a in acts[10:15]:
        env.step(a)
    yield env, saved, acts[15:]
    env.close()


def test_a_corrupt_field_of_env_1_changes_neither_env(stepped):
    env, saved, acts = stepped
    twin = copy.deepcopy(env)
    try:
        before = _dump(env)
        assert pickle.dumps(saved) != before      # a half-applied state would show
        for field, label, corrupt in _cases(env.env_id):
            bad = copy.deepcopy(saved)
            corrupt(bad)
            with pytest.raises(ValueError) as e:
                env.set_state(bad)
            if field != "seeded":
                assert f"state 1: {field}" in str(e.value), (field, label, str(e.value))
            else:
                assert "seeded" in str(e.value), (label, str(e.value))
            assert _dump(env) == before, (field, label)
        for a in acts[:8]:                        # and it steps as its untouched twin
            _same_step(env.step(a), twin.step(a))
        env.set_state(saved)                      # the intact state is still accepted
        twin.set_state(saved)
        for a in acts[8:16]:
            _same_step(env.step(a), twin.step(a))
    finally:
        twin.close()


def test_a_state_with_bad_envs_or_top_level_is_refused():
    env = cypool.make_vec("CartPole-v1", 2, num_threads=1, seed=0)
    try:
        env.reset()
        st = env.get_state()
        before = _dump(env)
        for bad, match in [({**st, "envs": None}, "envs"), ({**st, "envs": 5}, "envs"),
                           ({k: v for k, v in st.items() if k != "envs"}, "envs"),
                           ({k: v for k, v in st.items() if k != "env_id"}, "env_id"),
                           ({k: v for k, v in st.items() if k != "seeded"}, "seeded"),
                           ({**st, "envs": [st["envs"][0], 5]}, "state 1"),
                           ({**st, "env_ids": "ab"}, "env_ids")]:
            with pytest.raises((ValueError, TypeError), match=match):
                env.set_state(bad)
            assert _dump(env) == before
    finally:
        env.close()


CLASSIC = ["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0",
           "Pendulum-v1"]


@pytest.mark.parametrize("env_id", CLASSIC)
def test_every_classic_env_checks_its_own_part(env_id):
    env = cypool.make_vec(env_id, 2, num_threads=1, seed=2)
    try:
        env.reset()
        acts = _actions(env, 20)
        for a in acts[:5]:
            env.step(a)
        saved = env.get_state()
        for a in acts[5:10]:
            env.step(a)
        twin = pickle.loads(pickle.dumps(env))
        try:
            before = _dump(env)
            part = saved["envs"][1]["env"]
            for j in range(len(part)):
                for value in ("x", None, 10**400, 2.5 if isinstance(part[j], int) else True):
                    bad = copy.deepcopy(saved)
                    bad["envs"][1]["env"][j] = value
                    with pytest.raises(ValueError, match=r"state 1: env: .*state\[%d\]" % j):
                        env.set_state(bad)
                    assert _dump(env) == before
            for a in acts[10:]:
                _same_step(env.step(a), twin.step(a))
        finally:
            twin.close()
    finally:
        env.close()
