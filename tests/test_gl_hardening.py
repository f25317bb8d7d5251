"""OpenGL hardening: rendering in a fork child of a process that used GL is refused with a
clear error (Mesa's llvmpipe threads do not exist in the child: it would hang), while a
child of a process that never touched GL renders; a GL context that would not fit under the
address-space limit or in the available memory is a clean MemoryError, never a crash inside
Mesa; MUJOCO_GL cannot break ``import cypool`` or pools that do not render.

Every case runs in a fresh interpreter (a subprocess with a timeout); forked children are
waited for with a deadline and killed past it, so a hang fails the test."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

SLOW = 4 if os.environ.get("CYPOOL_SANITIZER") else 1

PRELUDE = textwrap.dedent(r"""
    import os, signal, sys, time
    import numpy as np
    import cypool
    SLOW = 4 if os.environ.get("CYPOOL_SANITIZER") else 1

    def in_child(work, limit):
        '''Run work() in an os.fork() child; its exit code (0: work returned), or -1 if it
        was still running after `limit` seconds (hung: killed).'''
        pid = os.fork()
        if pid == 0:
            try:
                work()
            except BaseException as e:
                print("child failed:", type(e).__name__, e, flush=True)
                os._exit(1)
            os._exit(0)
        t0 = time.monotonic()
        while time.monotonic() - t0 < limit:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.01)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        print(f"child still running after {limit} s (hung): killed", flush=True)
        return -1

    def expect_fork_refusal(call):
        try:
            call()
        except RuntimeError as e:
            msg = str(e)
            assert "fork" in msg and "spawn" in msg and "forkserver" in msg, msg
            return
        raise AssertionError("rendered in the child of a process that used GL")
""")


def _run(body, env=None, timeout=120 * SLOW, pre=""):
    full = dict(os.environ)
    full.pop("MUJOCO_GL", None)
    full.pop("PYOPENGL_PLATFORM", None)
    full.update(env or {})
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(pre) + PRELUDE +
                          textwrap.dedent(body)], env=full,
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


# ---------------------------------------------------------------------- fork after GL
def test_fork_child_of_a_gl_process_refuses_to_render():
    """The parent rendered (render() and a from_pixels pool) and closed its pools: a child
    making new pools gets a clear RuntimeError from render() and from a from_pixels pool
    (before any GL call), and still steps pools that do not render; a grandchild too."""
    out = _run(r"""
        env = cypool.make_vec("Hopper-v5", 2, num_threads=1, render_mode="rgb_array")
        env.reset(seed=0)
        assert env.render()[0].shape == (480, 480, 3)
        pix = cypool.make_vec("Hopper-v5", 2, num_threads=2, from_pixels=True, width=32,
                              height=32)
        pix.reset(seed=0)
        env.close()
        pix.close()

        def grandchild():
            own = cypool.make_vec("Hopper-v5", 1, num_threads=1, render_mode="rgb_array")
            own.reset(seed=0)
            expect_fork_refusal(own.render)

        def child():
            signal.alarm(60)
            own = cypool.make_vec("Hopper-v5", 2, num_threads=1, render_mode="rgb_array")
            own.reset(seed=0)
            expect_fork_refusal(own.render)
            expect_fork_refusal(lambda: cypool.make_vec(
                "Hopper-v5", 2, num_threads=2, from_pixels=True, width=32, height=32))
            own.step(np.zeros((2, 3)))                     # physics is unaffected
            cypool.make_vec("CartPole-v1", 2, num_threads=1).reset(seed=0)
            assert in_child(grandchild, 30) == 0

        assert in_child(child, 60 * SLOW) == 0
        # the parent itself keeps rendering
        again = cypool.make_vec("Hopper-v5", 1, num_threads=1, render_mode="rgb_array")
        again.reset(seed=0)
        again.render()
        print("ok")
    """)
    assert out.strip().endswith("ok"), out


def test_fork_child_of_a_process_without_gl_renders():
    """A process that stepped MuJoCo pools but never rendered: its child renders (render()
    and from_pixels); that child's own child is then refused (its parent used GL)."""
    out = _run(r"""
        env = cypool.make_vec("Hopper-v5", 2, num_threads=2)
        env.reset(seed=0)
        env.step(np.zeros((2, 3)))

        def grandchild():
            own = cypool.make_vec("Hopper-v5", 1, num_threads=1, render_mode="rgb_array")
            own.reset(seed=0)
            expect_fork_refusal(own.render)

        def child():
            signal.alarm(60)
            own = cypool.make_vec("Hopper-v5", 2, num_threads=1, render_mode="rgb_array")
            own.reset(seed=0)
            assert own.render()[0].shape == (480, 480, 3)
            pix = cypool.make_vec("Hopper-v5", 2, num_threads=2, from_pixels=True, width=32,
                                  height=32)
            obs, _ = pix.reset(seed=0)
            assert obs.shape == (2, 32, 32, 3) and obs.any()
            assert in_child(grandchild, 30) == 0

        assert in_child(child, 60 * SLOW) == 0
        print("ok")
    """)
    assert out.strip().endswith("ok"), out


def test_fork_child_of_a_process_that_rendered_with_gymnasium_refuses_to_render():
    """GL started outside cypool (gymnasium's renderer, through PyOpenGL) counts too: the
    GL driver is loaded at the fork. Under MUJOCO_GL=egl, import mujoco initialises an EGL
    display without loading a driver: a child of a process that did only that renders."""
    out = _run(r"""
        import gymnasium as gym

        def render_in_child():
            own = cypool.make_vec("Hopper-v5", 1, num_threads=1, render_mode="rgb_array")
            own.reset(seed=0)
            assert own.render()[0].shape == (480, 480, 3)

        def refused_in_child():
            own = cypool.make_vec("Hopper-v5", 1, num_threads=1, render_mode="rgb_array")
            own.reset(seed=0)
            expect_fork_refusal(own.render)

        assert in_child(render_in_child, 60 * SLOW) == 0
        env = gym.make("Hopper-v5", render_mode="rgb_array")
        env.reset(seed=0)
        env.render()
        assert in_child(refused_in_child, 60 * SLOW) == 0
        print("ok")
    """, env={"MUJOCO_GL": "egl"})
    assert out.strip().endswith("ok"), out


def test_fork_closed_env_error_names_spawn_and_forkserver():
    out = _run(r"""
        env = cypool.make_vec("Hopper-v5", 2, num_threads=1)

        def child():
            try:
                env.reset(seed=0)
            except cypool.ClosedEnvError as e:
                msg = str(e)
                assert "spawn" in msg and "forkserver" in msg and "render" in msg, msg
            else:
                raise AssertionError("no error")

        assert in_child(child, 30 * SLOW) == 0
        print("ok")
    """)
    assert out.strip().endswith("ok"), out


# ---------------------------------------------------------------------- memory pressure
MEMORY_SCRIPT = textwrap.dedent(r"""
    import resource, sys
    limit = int(float(sys.argv[1]) * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import numpy as np
    import cypool
    try:
        pix = cypool.make_vec("Hopper-v5", 4, from_pixels=True, width=84, height=84,
                              num_threads=2)
        pix.reset(seed=0)
        pix.step(np.zeros((4, 3)))
        env = cypool.make_vec("Hopper-v5", 2, num_threads=1, render_mode="rgb_array")
        env.reset(seed=0)
        env.render()
        print("RESULT ok", flush=True)
    except MemoryError as e:
        assert "memory" in str(e) and "GL context" in str(e), e
        print("RESULT clean", flush=True)
""")


@pytest.mark.skipif(os.environ.get("CYPOOL_SANITIZER") == "asan",
                    reason="AddressSanitizer reserves terabytes of address space for its shadow "
                           "memory: a process under RLIMIT_AS cannot start with it")
def test_gl_contexts_under_an_address_space_limit_never_crash():
    """Under RLIMIT_AS values spanning the range where Mesa used to die (SIGSEGV in
    mjr_makeContext, SIGABRT from LLVM), each run works or raises cypool's MemoryError;
    with room enough it works."""
    limits = ["0.8", "1.0", "1.1", "1.2", "1.3", "1.5", "2.0"] * 2
    procs = [(lim, subprocess.Popen([sys.executable, "-c", MEMORY_SCRIPT, lim],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)) for lim in limits[:7]]
    results = []
    for rnd in range(2):
        for lim, p in procs:
            try:
                out, err = p.communicate(timeout=180 * SLOW)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                pytest.fail(f"RLIMIT_AS {lim} GB: hung")
            assert p.returncode >= 0, (f"RLIMIT_AS {lim} GB: killed by "
                                       f"{signal.Signals(-p.returncode).name}\n{err[-2000:]}")
            assert p.returncode == 0, f"RLIMIT_AS {lim} GB:\n{out}{err[-2000:]}"
            results.append((lim, out.split("RESULT ")[-1].strip()))
        if rnd == 0:
            procs = [(lim, subprocess.Popen([sys.executable, "-c", MEMORY_SCRIPT, lim],
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            text=True)) for lim in limits[7:]]
    assert all(r in ("ok", "clean") for _, r in results), results
    assert [r for lim, r in results if lim == "2.0"] == ["ok", "ok"], results
    assert [r for lim, r in results if lim == "0.8"] == ["clean", "clean"], results


# ---------------------------------------------------------------------- MUJOCO_GL at import
# a machine without libOSMesa, as PyOpenGL (which mujoco's import uses) sees it
NO_OSMESA = r"""
    import ctypes
    _cdll_init = ctypes.CDLL.__init__
    def _no_osmesa(self, name, *args, **kwargs):
        if name and "OSMesa" in str(name):
            raise OSError(f"{name}: cannot open shared object file (simulated)")
        _cdll_init(self, name, *args, **kwargs)
    ctypes.CDLL.__init__ = _no_osmesa
"""


@pytest.mark.parametrize("gl", ["bogus", "osmesa", "osmesa-no-lib", "glfw", "egl"])
def test_mujoco_gl_cannot_break_import_or_pools_that_do_not_render(gl):
    """Whatever MUJOCO_GL says (a bad value; osmesa where libOSMesa is missing), import
    cypool and making and stepping CartPole, Atari and MuJoCo pools work; the first MuJoCo
    render gives cypool's clear error for a bad value."""
    pre = NO_OSMESA if gl == "osmesa-no-lib" else ""
    gl = gl.replace("-no-lib", "")
    out = _run(r"""
        import gymnasium
        gl = os.environ["MUJOCO_GL"]
        cp = cypool.make_vec("CartPole-v1", 2, num_threads=1)
        cp.reset(seed=0)
        cp.step(np.zeros(2, np.int64))
        try:
            pong = cypool.make_vec("Pong-v5", 2, num_threads=1)
        except ImportError:          # cypool built without ALE
            pass
        else:
            pong.reset(seed=0)
            pong.step(np.zeros(2, np.int64))
        hop = cypool.make_vec("Hopper-v5", 2, num_threads=1, render_mode="rgb_array")
        hop.reset(seed=0)
        hop.step(np.zeros((2, 3)))
        cypool.make_population("Hopper-v5", 2, 1, num_threads=1).reset(seed=0)
        cypool.show_config(file=open(os.devnull, "w"))
        try:
            hop.render()
        except ValueError as e:
            assert gl in ("bogus", "glfw") and "MUJOCO_GL" in str(e), e
        except RuntimeError as e:
            assert gl in ("osmesa", "egl") and "cannot render MuJoCo" in str(e), e
        else:
            assert gl in ("osmesa", "egl"), gl
        print("ok")
    """, env={"MUJOCO_GL": gl}, pre=pre)
    assert out.strip().endswith("ok"), out
