"""os.fork() in a process that holds pools: the child never touches the parent's worker teams,
exits at once, gets a clear error from inherited pools and can make pools of its own; the
parent's pools keep working. Rendering in the child of a process that used GL is refused with
a clear error (Mesa's llvmpipe threads do not exist in the child: it would hang), while a child
of a process that never touched GL renders.

Each case runs in a fresh interpreter (a subprocess with a timeout), and every forked child
is waited for with a deadline and killed past it, and arms SIGALRM as well, so a hang fails
the test instead of hanging it or leaving a stuck process behind."""
import os
import subprocess
import sys
import textwrap

SLOW = 4 if os.environ.get("CYPOOL_SANITIZER") else 1

# put at the top of every script: wait_child(pid, seconds) -> (exit code, seconds waited)
PRELUDE = textwrap.dedent(r"""
    import os, signal, sys, threading, time
    import numpy as np, cypool
    SLOW = 4 if os.environ.get("CYPOOL_SANITIZER") else 1   # deadlines bound hangs only

    def wait_child(pid, limit):
        t0 = time.monotonic()
        while time.monotonic() - t0 < limit:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status), time.monotonic() - t0
            time.sleep(0.01)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        print(f"child {pid} still running after {limit} s (hung); killed")
        sys.exit(1)

    def expect_fork_error(name, call):
        try:
            call()
        except RuntimeError as e:
            msg = str(e)
            if not ("belongs to process" in msg and "spawn" in msg and "child" in msg):
                print(name, "unclear error:", repr(e))
                os._exit(4)
        else:
            print(name, "raised nothing in the child")
            os._exit(3)
""")


def _run(body, timeout=180 * (4 if os.environ.get("CYPOOL_SANITIZER") else 1)):
    out = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    return out.stdout


def test_fork_child_is_safe_and_fast():
    out = _run(r"""
        never_reset = cypool.make_vec("Hopper-v5", 4, num_threads=2)
        in_flight = cypool.make_vec("Hopper-v5", 4, batch_size=2, num_threads=2)
        in_flight.async_reset(seed=0)
        atari = cypool.make_vec("Pong-v5", 2, num_threads=2)
        atari.reset(seed=0)
        atari_async = cypool.make_vec("Breakout-v5", 4, batch_size=2, num_threads=2)
        atari_async.async_reset(seed=0)
        pop = cypool.make_population("Hopper-v5", 2, 2, num_threads=2)
        pop.reset(seed=0)

        # 1. a child that only exits (sys.exit: atexit handlers and finalizers run) is fast
        pid = os.fork()
        if pid == 0:
            signal.alarm(20 * SLOW)
            sys.exit(0)
        code, exit_s = wait_child(pid, 20 * SLOW)
        assert code == 0, code

        # 2. the child's calls on inherited pools raise; its own pools work; it exits fast
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            signal.alarm(60 * SLOW)
            os.close(r)
            for name, call in (("never_reset", lambda: never_reset.reset(seed=0)),
                               ("in_flight recv", lambda: in_flight.recv(timeout=1)),
                               ("in_flight send", lambda: in_flight.send(np.zeros((2, 3)))),
                               ("atari", lambda: atari.step(np.zeros(2, np.int64))),
                               ("atari_async", lambda: atari_async.recv(timeout=1)),
                               ("pop", lambda: pop.step(np.zeros((2, 2, 3)))),
                               ("stats", never_reset.episode_statistics)):
                expect_fork_error(name, call)
            assert never_reset.closed
            never_reset.close()                     # a no-op in the child ...
            expect_fork_error("after close", lambda: never_reset.reset(seed=0))  # ... still clear
            own = cypool.make_vec("Hopper-v5", 4, num_threads=2)
            own.reset(seed=0)
            own.step(np.zeros((4, 3)))
            own_async = cypool.make_vec("Pong-v5", 4, batch_size=2, num_threads=2)
            own_async.async_reset(seed=0)
            own_async.recv(timeout=30)
            os.write(w, repr(time.monotonic()).encode())    # CLOCK_MONOTONIC: system-wide
            os.close(w)
            sys.exit(0)            # own pools left open: closed by the atexit handler
        os.close(w)
        code, _ = wait_child(pid, 60 * SLOW)
        assert code == 0, code
        exit_from = float(os.read(r, 100))
        exit2_s = time.monotonic() - exit_from

        # the parent's pools are untouched
        in_flight.recv(timeout=10)
        atari_async.recv(timeout=10)
        atari.step(np.zeros(2, np.int64))
        never_reset.reset(seed=0)
        never_reset.step(np.zeros((4, 3)))
        pop.step(np.zeros((2, 2, 3)))
        print("ok %.3f %.3f" % (exit_s, exit2_s))
    """)
    assert out.startswith("ok"), out
    exit_s, exit2_s = map(float, out.split()[1:3])
    limit = 3 * (4 if os.environ.get("CYPOOL_SANITIZER") else 1)   # no wait for a dead team
    assert exit_s < limit and exit2_s < limit, out


def test_fork_while_other_threads_hold_the_pool():
    """A parent thread stepping a pool or waiting in recv() holds the pool's locks at the
    fork; that thread does not exist in the child, so the child's calls must not wait for it
    (they raise). A thread stepping a pool in a loop meanwhile keeps going in the parent."""
    out = _run(r"""
        held = cypool.make_vec("Hopper-v5", 4, num_threads=2)
        held.reset(seed=0)
        waiting = cypool.make_vec("Hopper-v5", 4, batch_size=2, num_threads=2)
        waiting.async_reset(seed=0)
        *_, info = waiting.recv()
        idle = info["env_id"]
        busy = cypool.make_vec("Pong-v5", 2, num_threads=2)
        busy.reset(seed=0)
        holding, release, stop = threading.Event(), threading.Event(), threading.Event()
        steps = [0]

        def holder():          # what a step() in progress and a waiting recv() hold
            with held._lock, waiting._recv_lock:
                holding.set()
                release.wait()

        def stepper():
            while not stop.is_set():
                busy.step(np.zeros(2, np.int64))
                steps[0] += 1

        threads = [threading.Thread(target=holder), threading.Thread(target=stepper)]
        for t in threads:
            t.start()
        holding.wait()
        while steps[0] < 5:
            time.sleep(0.01)
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                signal.alarm(30 * SLOW)
                expect_fork_error("held step", lambda: held.step(np.zeros((4, 3))))
                expect_fork_error("held reset", lambda: held.reset(seed=0))
                expect_fork_error("waiting recv", lambda: waiting.recv(timeout=1))
                expect_fork_error("busy step", lambda: busy.step(np.zeros(2, np.int64)))
                held.close()
                waiting.close()
                own = cypool.make_vec("Hopper-v5", 2, num_threads=2)
                own.reset(seed=1)
                own.step(np.zeros((2, 3)))
                sys.exit(0)
            code, _ = wait_child(pid, 30 * SLOW)
            assert code == 0, code
        before = steps[0]
        time.sleep(0.2)
        stop.set()
        release.set()
        for t in threads:
            t.join()
        assert steps[0] > before
        held.step(np.zeros((4, 3)))
        waiting.send(np.zeros((2, 3)), idle)
        waiting.recv(timeout=10)
        print("ok")
    """)
    assert out.startswith("ok"), out


def test_fork_inherited_population_refuses_every_call():
    """Every population method in the child raises the fork error (not only those that
    step): its statistics and settings are the parent's, and evaluate() would silently build
    a pool from them."""
    out = _run(r"""
        pop = cypool.make_population("Hopper-v5", 2, 2, num_threads=2)
        pop.reset(seed=0)
        apop = cypool.make_population("Hopper-v5", 4, 1, member_batch=2, num_threads=2)
        apop.async_reset(seed=0)
        pid = os.fork()
        if pid == 0:
            signal.alarm(30 * SLOW)
            calls = dict(
                reset=lambda: pop.reset(seed=0), reset_member=lambda: pop.reset_member(0),
                clear=lambda: pop.clear_member_statistics(0),
                step=lambda: pop.step(np.zeros((2, 2, 3))),
                member_kwargs=lambda: pop.member_kwargs(0),
                set_member_kwargs=lambda: pop.set_member_kwargs(0, ctrl_cost_weight=0.1),
                copy_member=lambda: pop.copy_member(0, 1),
                stats=pop.episode_statistics, member_stats=pop.member_statistics,
                recent=pop.recent_episodes, ring=lambda: pop.episode_ring,
                evaluate=lambda: pop.evaluate(lambda o: np.zeros((2, 2, 3)), episodes=1),
                async_recv=lambda: apop.recv(timeout=1),
                async_send=lambda: apop.send(np.zeros((2, 1, 3))),
            )
            for name, call in calls.items():
                expect_fork_error(name, call)
            pop.close()
            apop.close()
            own = cypool.make_population("Hopper-v5", 2, 2, num_threads=2)
            own.reset(seed=0)
            own.step(np.zeros((2, 2, 3)))
            sys.exit(0)
        code, _ = wait_child(pid, 30 * SLOW)
        assert code == 0, code
        pop.step(np.zeros((2, 2, 3)))
        apop.recv(timeout=10)
        print("ok")
    """)
    assert out.startswith("ok"), out


def test_fork_twice_names_the_owner():
    """A grandchild: the child's own pools belong to the child, the original ones to the
    first process."""
    out = _run(r"""
        root = cypool.make_vec("Hopper-v5", 2, num_threads=2)
        root_pid = os.getpid()
        pid = os.fork()
        if pid == 0:
            signal.alarm(30 * SLOW)
            mine = cypool.make_vec("Hopper-v5", 2, num_threads=2)
            mine.reset(seed=0)
            child_pid = os.getpid()
            gpid = os.fork()
            if gpid == 0:
                signal.alarm(30 * SLOW)
                for env, owner in ((root, root_pid), (mine, child_pid)):
                    try:
                        env.reset(seed=0)
                    except RuntimeError as e:
                        assert f"belongs to process {owner}," in str(e), (owner, e)
                    else:
                        os._exit(3)
                sys.exit(0)
            code, _ = wait_child(gpid, 30 * SLOW)
            mine.step(np.zeros((2, 3)))
            sys.exit(code)
        code, _ = wait_child(pid, 60 * SLOW)
        assert code == 0, code
        root.reset(seed=0)
        print("ok")
    """)
    assert out.startswith("ok"), out


# ------------------------------------------------------------------ fork after GL
# put at the top of every script of these cases: in_child(work, limit) -> exit code,
# expect_fork_refusal(call)
GL_PRELUDE = textwrap.dedent(r"""
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


def _run_gl(body, env=None, timeout=120 * SLOW, pre=""):
    full = dict(os.environ)
    full.pop("MUJOCO_GL", None)
    full.pop("PYOPENGL_PLATFORM", None)
    full.update(env or {})
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(pre) + GL_PRELUDE +
                          textwrap.dedent(body)], env=full,
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


# ---------------------------------------------------------------------- fork after GL
def test_fork_child_of_a_gl_process_refuses_to_render():
    """The parent rendered (render() and a from_pixels pool) and closed its pools: a child
    making new pools gets a clear RuntimeError from render() and from a from_pixels pool
    (before any GL call), and still steps pools that do not render; a grandchild too."""
    out = _run_gl(r"""
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
    out = _run_gl(r"""
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
    out = _run_gl(r"""
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
    out = _run_gl(r"""
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
