"""Resources: pool sizes no process can hold (refused at once, naming the env, the bytes it
needs and the bound), memory over long runs, pools made and closed in a loop, threads, exit.

RSS is read from /proc (Linux). Before each reading the garbage collector runs and glibc is
asked to give free heap pages back (malloc_trim), so that the numbers measure memory in use,
not pages the allocator keeps after a burst of frees. The long versions are marked soak:
    pytest -m soak tests/test_resources.py        (CYPOOL_SOAK_STEPS overrides 10**6)
"""
import ctypes
import gc
import os
import subprocess
import sys
import textwrap
import threading
import time
import weakref

import numpy as np
import pytest

import cypool
from cypool import _validate

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SOAK_STEPS = int(os.environ.get("CYPOOL_SOAK_STEPS", 10**6))

try:
    _trim = ctypes.CDLL("libc.so.6").malloc_trim
except (OSError, AttributeError):           # not glibc
    _trim = None


# AddressSanitizer keeps freed memory in quarantine (tools/sanitize.sh): RSS says nothing there
needs_plain_malloc = pytest.mark.skipif(os.environ.get("CYPOOL_SANITIZER") == "asan",
                                        reason="RSS under ASan's quarantine is not meaningful")


def rss_kb():
    gc.collect()
    if _trim is not None:
        _trim(0)
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def os_threads():
    return len(os.listdir("/proc/self/task"))


def settled_threads(expected, seconds=5.0):
    """The OS thread count once exiting threads are gone: a joined thread (and the OpenMP
    threads of its team) leave the task list a moment after join() returns."""
    deadline = time.monotonic() + seconds
    while os_threads() != expected and time.monotonic() < deadline:
        time.sleep(0.01)
    return os_threads()


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def py_workers():
    return sum(t.name == "cypool-workers" for t in threading.enumerate())


# ------------------------------------------------------------------ memory over many steps
def _mujoco_pool():
    return cypool.make_vec("InvertedPendulum-v5", 16, num_threads=2, max_episode_steps=200)


def _atari_pool():
    pytest.importorskip("cypool.atari._pool")
    return cypool.make_vec("Pong-v5", 16, num_threads=2, max_episode_steps=500)


def _random_actions(env, rng, k):
    space = env.single_action_space
    if hasattr(space, "n"):
        return rng.integers(0, space.n, (k, env.num_envs))
    return rng.uniform(space.low * 3, space.high * 3, (k, env.num_envs) + space.shape)


def assert_rss_flat(make, warmup, steps, *, batch_size=None):
    env = make()
    rng = np.random.default_rng(0)
    acts = _random_actions(env, rng, 64)    # reused: the loop itself allocates nothing new
    env.reset(seed=0)
    for k in range(warmup):
        env.step(acts[k % 64])
    before = rss_kb()
    for k in range(steps):
        env.step(acts[k % 64])
    after = rss_kb()
    stats = env.episode_statistics()
    env.close()
    # every call stepped or (NEXT_STEP autoreset) reset each env; many episodes ended
    assert stats["env_steps"].sum() + stats["episodes"].sum() >= env.num_envs * (warmup + steps)
    assert stats["episodes"].sum() >= env.num_envs
    assert after - before < 0.01 * before, (before, after)


@needs_plain_malloc
def test_rss_flat_mujoco_short():
    assert_rss_flat(_mujoco_pool, warmup=1000, steps=8_000)


@needs_plain_malloc
def test_rss_flat_atari_short():
    assert_rss_flat(_atari_pool, warmup=100, steps=500)


@needs_plain_malloc
@pytest.mark.soak
def test_rss_flat_mujoco_soak():
    assert_rss_flat(_mujoco_pool, warmup=20_000, steps=SOAK_STEPS)


@needs_plain_malloc
@pytest.mark.soak
def test_rss_flat_atari_soak():
    assert_rss_flat(_atari_pool, warmup=5_000, steps=SOAK_STEPS)


@needs_plain_malloc
def test_rss_flat_async_short():
    env = cypool.make_vec("Hopper-v5", 16, batch_size=4, num_threads=2, max_episode_steps=50)
    env.async_reset(seed=0)
    acts = np.random.default_rng(0).uniform(-1, 1, (64, 4, 3))

    def cycles(k):
        for j in range(k):
            *_, info = env.recv(timeout=30)
            env.send(acts[j % 64], info["env_id"])

    cycles(1000)
    before = rss_kb()
    cycles(5000)
    after = rss_kb()
    env.close()
    assert after - before < 0.01 * before, (before, after)


# ------------------------------------------------------------------ pools in a loop
def _pool_cycle(k):
    """Make, use and close one pool: sync and async alternate."""
    env = cypool.make_vec("Ant-v5", 16, num_threads=2, batch_size=8 if k % 2 else None)
    if env.is_async:
        env.async_reset(seed=k)
        env.recv(timeout=30)
        env.send(np.zeros((8, 8)), env._last_ids)   # work still in flight at close()
    else:
        env.reset(seed=k)
        env.step(np.zeros((16, 8)))
    env.close()


def test_make_and_close_200_pools_without_growth():
    for k in range(20):                               # warm-up: caches, OpenMP pools
        _pool_cycle(k)
    before = rss_kb(), open_fds(), os_threads(), threading.active_count()
    for k in range(200):
        _pool_cycle(k)
    after = rss_kb(), open_fds(), settled_threads(before[2]), threading.active_count()
    assert after[1:] == before[1:], (before, after)   # fds, OS threads, Python threads
    if os.environ.get("CYPOOL_SANITIZER") != "asan":   # RSS: not under ASan's quarantine
        assert after[0] - before[0] < 0.01 * before[0], (before, after)


def test_close_frees_the_engine_without_waiting_for_the_gc():
    # A closed (or dropped) pool must free its simulators when the last reference goes, not
    # when the cyclic garbage collector happens to run: a pool holds num_envs MuJoCo data
    # blocks (or ALE emulators), and a loop making pools would pile them up meanwhile.
    gc.collect()
    gc.disable()
    try:
        env = cypool.make_vec("Ant-v5", 4, num_threads=2)
        env.reset(seed=0)
        alive = weakref.ref(env.pool.engine.obs)
        env.close()
        del env
        assert alive() is None, "the engine is kept alive by a reference cycle"
        env = cypool.make_vec("Ant-v5", 4, num_threads=2)
        alive = weakref.ref(env.pool.engine.obs)
        del env                                       # dropped without close()
        assert alive() is None, "the engine is kept alive by a reference cycle"
    finally:
        gc.enable()


# ------------------------------------------------------------------ threads
@pytest.mark.parametrize("batch_size", [None, 2])
def test_env_dropped_without_close_leaks_no_threads(batch_size):
    gc.collect()
    before = os_threads(), py_workers()
    for k in range(5):
        env = cypool.make_vec("Hopper-v5", 4, num_threads=2, batch_size=batch_size)
        if env.is_async:
            env.async_reset(seed=k)
            env.recv(timeout=30)
            env.send(np.zeros((2, 3)), env._last_ids)   # dropped with work in flight
        else:
            env.reset(seed=k)
            env.step(np.zeros((4, 3)))
        assert py_workers() == before[1] + 1
        del env
    gc.collect()
    assert (settled_threads(before[0]), py_workers()) == before


def test_env_in_a_reference_cycle_leaks_no_threads():
    gc.collect()
    before = os_threads(), py_workers()
    env = cypool.make_vec("Hopper-v5", 4, num_threads=2, batch_size=2)
    env.async_reset(seed=0)
    env.me = env                                        # only the cyclic gc can free it
    del env
    gc.collect()
    assert (settled_threads(before[0]), py_workers()) == before


EXIT_WITHOUT_CLOSE = """
import numpy as np, cypool
keep = []
for k in range(20):
    env = cypool.make_vec("Hopper-v5", 3, num_threads=2)       # a sync pool with a team
    env.reset(seed=k)
    env.step(np.zeros((3, 3)))
    busy = cypool.make_vec("Hopper-v5", 4, num_threads=2, batch_size=2)
    busy.async_reset(seed=k)                                  # work still in flight
    keep += [env, busy]            # none is closed: the interpreter's exit tears them down
print("DONE")
"""


def _exit_without_close():
    proc = subprocess.run([sys.executable, "-c", EXIT_WITHOUT_CLOSE], capture_output=True,
                          text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def test_interpreter_exit_without_close():
    # Pools nobody closed are torn down by the interpreter's exit, while their worker
    # threads may still be inside the work queue. Before a fix this aborted (glibc heap
    # corruption: "corrupted double-linked list") or segfaulted in most runs.
    for _ in range(2):
        rc, out, err = _exit_without_close()
        assert rc == 0 and "DONE" in out, (rc, err[-3000:])
        assert "Fatal Python error" not in err and "Traceback" not in err, err[-3000:]


@pytest.mark.soak
def test_interpreter_exit_without_close_repeated():
    bad = []
    for k in range(200):
        rc, out, err = _exit_without_close()
        if rc != 0 or "DONE" not in out:
            bad.append((k, rc, err.strip().splitlines()[-1:] if err.strip() else ""))
    assert bad == []


def _failed_constructions(tmp_path, k):
    broken = tmp_path / "broken.xml"
    broken.write_text("<mujoco><worldbody><body><geom type='nosuchtype'/></body></worldbody>"
                      "</mujoco>")
    with pytest.raises(ValueError):                    # MuJoCo cannot load the model
        cypool.make_vec("Hopper-v5", 4, num_threads=2, xml_file=str(broken))
    with pytest.raises(ValueError, match="mode"):      # a mode the game does not have
        cypool.make_vec("Breakout-v5", 4, num_threads=2, mode=99)
    with pytest.raises(ValueError, match="camera_id"):  # refused after the model is loaded
        cypool.make_vec("Hopper-v5", 4, num_threads=2, render_mode="rgb_array", camera_id=9)
    with pytest.raises(TypeError):                     # a bad kwarg of one env of a pool
        cypool.make_vec("Hopper-v5", 3, env_kwargs=[{}, {"ctrl_cost_weight": "x"}, {}])


def test_200_failed_constructions_leak_nothing(tmp_path):
    for k in range(10):                                # warm-up: caches, imports
        _failed_constructions(tmp_path, k)
    before = rss_kb(), open_fds(), os_threads(), threading.active_count()
    for k in range(200):
        _failed_constructions(tmp_path, k)
    after = rss_kb(), open_fds(), settled_threads(before[2]), threading.active_count()
    assert after[1:] == before[1:], (before, after)   # fds, OS threads, Python threads
    if os.environ.get("CYPOOL_SANITIZER") != "asan":
        assert after[0] - before[0] < 0.02 * before[0], (before, after)
    env = cypool.make_vec("Breakout-v5", 2, num_threads=2)    # the process is fine
    env.reset(seed=0)
    env.step(np.zeros(2, np.int64))
    env.close()


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
