"""Kwargs and sizes that used to be silently wrong, unstoppable or machine-killing: pool sizes
no process can hold, NaN ends of MuJoCo clipping/health ranges, cypool.envpool's env ids and
Atari actions, count kwargs that drive native loops Ctrl-C cannot stop, and NaN/inf physical
kwargs (which keep gymnasium's exact behaviour)."""
import subprocess
import sys
import textwrap

import gymnasium as gym
import numpy as np
import os

import pytest

import cypool
import cypool.envpool as cep
from cypool import _validate
from cypool.mujoco.family import TASKS, task_module

NAN, INF = float("nan"), float("inf")


# ---------------------------------------------------------------------------- pool sizes
# Run in a child whose address space is capped just above what its imports took, so that a
# regression (per-env lists built before any check) dies of MemoryError in the child instead
# of filling the machine; the timeout bounds how long a refusal may take.
# AddressSanitizer reserves terabytes of address space for its shadow memory: a child under
# RLIMIT_AS cannot run with it
UNDER_RLIMIT = pytest.mark.skipif(os.environ.get("CYPOOL_SANITIZER") == "asan",
                                  reason="RLIMIT_AS children cannot run under AddressSanitizer")

SIZE_CHILD = textwrap.dedent("""
    import resource, sys
    import cypool, cypool.envpool

    def vm_size():
        for line in open("/proc/self/status"):
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024

    resource.setrlimit(resource.RLIMIT_AS, (vm_size() + 3 * 2**30,
                                            resource.getrlimit(resource.RLIMIT_AS)[1]))
    try:
        eval(sys.argv[1], {"cypool": cypool})
    except BaseException as exc:
        print("ERR", type(exc).__name__, exc)
    else:
        print("MADE")
""")


def _size_child(expr):
    out = subprocess.run([sys.executable, "-c", SIZE_CHILD, expr], capture_output=True,
                         text=True, timeout=90)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    return out.stdout.strip().splitlines()[-1]


@UNDER_RLIMIT
@pytest.mark.parametrize("expr", [
    "cypool.make_vec('CartPole-v1', 2**40)",
    "cypool.make_population('CartPole-v1', 2**20, 2**20)",
    "cypool.envpool.make('Pong-v5', 'gymnasium', num_envs=2**40)",
    "cypool.envpool.make('Hopper-v5', 'gymnasium', num_envs=2**31)",
])
def test_pool_size_beyond_what_envs_ids_name_is_refused(expr):
    line = _size_child(expr)
    assert line.startswith("ERR ValueError num_envs must be in [1, 2147483647]"), line


@UNDER_RLIMIT
@pytest.mark.parametrize("expr", [
    "cypool.make_vec('CartPole-v1', 2**30)",                   # make_vec's own per-env floor
    "cypool.make_population('Pendulum-v1', 2**15, 2**15)",
    "cypool.envpool.make('Pong-v5', 'gymnasium', num_envs=2**30)",
    "cypool.make_vec('Pong-v5', 2**16)",                       # Atari's frames and screens
    "cypool.make_vec('Hopper-v5', 2**20)",                     # MuJoCo's data per env
    "cypool.make_population('Hopper-v5', 2**10, 2**10)",
])
def test_pool_that_cannot_fit_is_a_memory_error_at_once(expr):
    line = _size_child(expr)
    assert line.startswith("ERR MemoryError cypool:"), line
    assert "more than this process can get" in line and "RLIMIT_AS" in line, line


def test_memory_check_counts_the_requested_bytes(monkeypatch):
    monkeypatch.setattr(_validate, "available_memory", lambda: (10_000, "a test's bound"))
    _validate.check_pool_memory(10, 1000)                      # exactly fits
    with pytest.raises(MemoryError, match="a test's bound"):
        _validate.check_pool_memory(11, 1000)
    monkeypatch.setattr(_validate, "available_memory", lambda: None)   # unknown: no refusal
    _validate.check_pool_memory(2**40, 2**20)


def test_sizes_that_work_today_still_work():
    # tests and benchmarks make 65536 CartPoles
    env = cypool.make_vec("CartPole-v1", 65536, num_threads=1)
    try:
        obs, _ = env.reset(seed=0)
        assert obs.shape == (65536, 4)
        env.step(np.zeros(65536, np.int64))
    finally:
        env.close()


# ---------------------------------------------------------------------------- NaN range ends
# (a v4 task's FIXED_KWARGS are constants of gymnasium's class, not kwargs)
RANGE_KWARGS = [(t, k) for t in TASKS for k, v in task_module(t).DEFAULTS.items()
                if k.endswith("_range") and k not in getattr(task_module(t), "FIXED_KWARGS", ())]


def test_every_range_kwarg_is_covered():
    # the tasks' range kwargs, as the issue lists them; a new one joins the tests below
    assert len(RANGE_KWARGS) >= 10
    assert ("Ant-v5", "contact_force_range") in RANGE_KWARGS
    assert ("HumanoidStandup-v5", "impact_cost_range") in RANGE_KWARGS


@pytest.mark.parametrize("end", [0, 1])
@pytest.mark.parametrize("task,key", RANGE_KWARGS)
def test_nan_range_end_is_refused(task, key, end):
    pair = list(task_module(task).DEFAULTS[key])
    pair[end] = NAN
    with pytest.raises(ValueError, match=f"{key} .*NaN"):
        cypool.make_vec(task, 1, **{key: tuple(pair)})
    with pytest.raises(ValueError, match=key):          # per-env settings too
        cypool.make_vec(task, 2, env_kwargs=[None, {key: tuple(pair)}])


def test_nan_range_end_is_refused_everywhere():
    with pytest.raises(ValueError, match="contact_force_range"):
        cep.make("Ant-v5", "gymnasium", contact_force_min=NAN)
    with pytest.raises(ValueError, match="impact_cost_range"):
        cep.make("HumanoidStandup-v5", "gymnasium", contact_cost_max=NAN)
    with pytest.raises(ValueError, match="healthy_z_range"):
        cypool.make_population("Hopper-v5", 2, member_kwargs=[{}, {"healthy_z_range":
                                                                   (NAN, 2.0)}])
    env = cypool.make_vec("Walker2d-v5", 2)
    try:
        with pytest.raises(ValueError, match="healthy_angle_range"):
            env.set_attr("healthy_angle_range", [(-1.0, 1.0), (-1.0, NAN)])
        assert list(env.get_attr("healthy_angle_range")) == [(-1.0, 1.0), (-1.0, 1.0)]
    finally:
        env.close()


def test_infinite_range_ends_still_accepted():
    env = cypool.make_vec("Ant-v5", 1, contact_force_range=(-INF, INF),
                          healthy_z_range=(-INF, INF))
    env.close()


# ---------------------------------------------------------------------------- cypool.envpool ids
@pytest.fixture(scope="module")
def pong4():
    env = cep.make("Pong-v5", "gymnasium", num_envs=4)
    env.reset()
    yield env
    env.close()


@pytest.mark.parametrize("ids,exc,match", [
    ([-1], ValueError, r"env_id must be in \[0, 4\).*-1"),
    ([7], ValueError, r"env_id must be in \[0, 4\).*7"),
    ([1, 1], ValueError, "repeat"),
    ([0.5], TypeError, "env_id must be"),
    ([True], TypeError, "env_id must be"),
    (np.array([2**64 - 1], np.uint64), ValueError, "env_id must be in"),
])
def test_envpool_env_ids_are_checked_in_every_entry_point(pong4, ids, exc, match):
    before = pong4.pool.pool.engine.elapsed().copy()
    n = len(np.asarray(ids).reshape(-1))
    with pytest.raises(exc, match=match):
        pong4.reset(np.asarray(ids))
    with pytest.raises(exc, match=match):
        pong4.step(np.zeros(n, np.int64), np.asarray(ids))
    with pytest.raises(exc, match=match):
        pong4.send(np.zeros(n, np.int64), np.asarray(ids))
    assert np.array_equal(pong4.pool.pool.engine.elapsed(), before)      # no env moved
    obs, info = pong4.reset(np.array([3, 0]))                           # still usable
    assert info["env_id"].tolist() == [3, 0]


@pytest.mark.parametrize("bad", [2**31, 2**32 + 1, -2**32 + 2, 6])
def test_envpool_atari_actions_are_checked_before_any_cast(pong4, bad):
    before = pong4.pool.pool.engine.elapsed().copy()
    with pytest.raises(ValueError, match=r"actions must be in \[0, 6\).*" + str(bad)):
        pong4.step(np.array([bad, 0, 0, 0], np.int64))
    with pytest.raises(TypeError, match="integers"):
        pong4.step(np.array([1.7, 0, 0, 0]))                    # never truncated to 1
    assert np.array_equal(pong4.pool.pool.engine.elapsed(), before)
    pong4.step(np.array([1, 0, 0, 0], np.int64))
    pong4.step(np.array([1, 0, 0, 0], np.int32))


# ---------------------------------------------------------------------------- loop counts
@pytest.mark.parametrize("env_id,key,high", [
    ("Pong-v5", "frame_skip", _validate.MAX_ATARI_FRAME_SKIP),
    ("Pong-v5", "noop_max", _validate.MAX_ATARI_NOOP_MAX),
    ("Hopper-v5", "frame_skip", _validate.MAX_MUJOCO_FRAME_SKIP),
    ("Humanoid-v5", "frame_skip", _validate.MAX_MUJOCO_FRAME_SKIP),
])
@pytest.mark.parametrize("over", [1, 2**31 - 1])
def test_loop_count_above_its_bound_is_refused(env_id, key, high, over):
    value = high + over if over == 1 else over
    msg = f"{key} must be <= {high}, got {value}.*Ctrl-C"
    with pytest.raises(ValueError, match=msg):
        cypool.make_vec(env_id, 1, **{key: value})
    with pytest.raises(ValueError, match=msg):
        cypool.make_vec(env_id, 2, env_kwargs=[None, {key: value}])
    with pytest.raises(ValueError, match=msg):
        cep.make(env_id, "gymnasium", **{key: value})
    env = cypool.make_population(env_id, 2)
    try:
        with pytest.raises(ValueError, match=msg):
            env.set_member_kwargs(1, **{key: value})
    finally:
        env.close()


def test_largest_accepted_atari_counts_still_work():
    env = cypool.make_vec("Pong-v5", 1, frame_skip=_validate.MAX_ATARI_FRAME_SKIP,
                          noop_max=_validate.MAX_ATARI_NOOP_MAX)
    try:
        env.reset(seed=1)
        _, _, _, _, info = env.step(np.array([0]))
        assert list(env.get_attr("frame_skip")) == [_validate.MAX_ATARI_FRAME_SKIP]
        assert info["elapsed_step"].tolist() == [1]
    finally:
        env.close()


def test_largest_accepted_mujoco_frame_skip_still_works():
    fs = _validate.MAX_MUJOCO_FRAME_SKIP
    ref = gym.make("Hopper-v5", frame_skip=fs).unwrapped
    env = cypool.make_vec("Hopper-v5", 1, frame_skip=fs)
    try:
        o, _ = ref.reset(seed=3)
        vo, _ = env.reset(seed=3)
        assert np.array_equal(o, vo[0])
        a = np.full(3, 0.1, np.float32)
        o, r, term, _, _ = ref.step(a)
        vo, vr, vterm, _, _ = env.step(a[None])
        assert np.array_equal(o, vo[0]) and r == vr[0] and term == vterm[0]
    finally:
        env.close()
        ref.close()


# ---------------------------------------------------------------------------- NaN physics
@pytest.mark.parametrize("env_id,kw", [
    ("Pendulum-v1", dict(g=NAN)),
    ("Hopper-v5", dict(ctrl_cost_weight=NAN)),
    ("Swimmer-v5", dict(ctrl_cost_weight=INF)),
    ("Ant-v5", dict(healthy_reward=NAN)),
    ("HalfCheetah-v5", dict(forward_reward_weight=-INF)),
])
def test_non_finite_physical_kwargs_match_gymnasium(env_id, kw):
    ref = gym.make(env_id, **kw).unwrapped
    env = cypool.make_vec(env_id, 1, **kw)
    try:
        o, _ = ref.reset(seed=7)
        vo, _ = env.reset(seed=7)
        assert np.array_equal(o, vo[0], equal_nan=True)
        rewards = []
        for t in range(3):
            a = np.full(ref.action_space.shape, 0.3, ref.action_space.dtype)
            o, r, term, trunc, _ = ref.step(a)
            vo, vr, vterm, vtrunc, _ = env.step(a[None])
            assert np.array_equal(o, vo[0], equal_nan=True), t
            assert np.array_equal(r, vr[0], equal_nan=True), (t, r, vr[0])
            assert (term, trunc) == (vterm[0], vtrunc[0]), t
            rewards.append(r)
            if term:
                break
        assert not np.isfinite(rewards).all()       # the kwarg did reach the numbers
    finally:
        env.close()
        ref.close()


def test_engine_checks_its_own_buffers(monkeypatch):
    # the pixel outputs are the engine's alone (the MuJoCo family's estimate leaves them
    # out): 4 envs of two 480x480 RGB frames each need ~5.5 MB, refused under a 2 MB bound
    monkeypatch.setattr(_validate, "available_memory", lambda: (2 * 2**20, "a test's bound"))
    with pytest.raises(MemoryError, match="4 envs of a MjPool need .*a test's bound"):
        cypool.make_vec("Hopper-v5", 4, from_pixels=True)


def test_memory_errors_name_the_env_and_the_bound(monkeypatch):
    monkeypatch.setattr(_validate, "available_memory", lambda: (2**30, "a test's bound"))
    with pytest.raises(MemoryError, match=r"2097152 Pong-v5 envs need at least .*GiB "
                                          r"\(\d+ bytes per env\).*a test's bound"):
        cypool.make_vec("Pong-v5", 2**21)
    with pytest.raises(MemoryError, match=r"2097153 CartPole-v1 envs need at least 1 GiB "
                                          r"\(512 bytes per env\)"):
        cypool.make_vec("CartPole-v1", 2**21 + 1)       # one env past the bound
