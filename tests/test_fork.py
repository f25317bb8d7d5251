"""os.fork() in a process that holds pools: the child never touches the parent's worker teams,
exits at once, gets a clear error from inherited pools and can make pools of its own; the
parent's pools keep working."""
import subprocess
import sys
import textwrap


SCRIPT = textwrap.dedent(r"""
    import os, sys, time
    import numpy as np, cypool
    never_reset = cypool.make_vec("Hopper-v5", 4, num_threads=2)
    in_flight = cypool.make_vec("Hopper-v5", 4, batch_size=2, num_threads=2)
    in_flight.async_reset(seed=0)
    atari = cypool.make_vec("Pong-v5", 2, num_threads=2)
    atari.reset(seed=0)
    pop = cypool.make_population("Hopper-v5", 2, 2, num_threads=2)
    pop.reset(seed=0)
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        for name, call in (("never_reset", lambda: never_reset.reset(seed=0)),
                           ("in_flight", lambda: in_flight.recv(timeout=1)),
                           ("atari", lambda: atari.step(np.zeros(2, np.int64))),
                           ("pop", lambda: pop.step(np.zeros((2, 2, 3))))):
            try:
                call()
            except RuntimeError as e:
                assert "belongs to process" in str(e) and "spawn" in str(e), (name, e)
            else:
                os._exit(3)
        own = cypool.make_vec("Hopper-v5", 4, num_threads=2)
        own.reset(seed=0)
        own.step(np.zeros((4, 3)))
        own_async = cypool.make_vec("Pong-v5", 4, batch_size=2, num_threads=2)
        own_async.async_reset(seed=0)
        own_async.recv(timeout=30)
        sys.exit(0)                 # a normal exit: atexit handlers and finalizers run
    _, status = os.waitpid(pid, 0)
    elapsed = time.monotonic() - t0
    assert os.waitstatus_to_exitcode(status) == 0, status
    in_flight.recv(timeout=10)
    atari.step(np.zeros(2, np.int64))
    never_reset.reset(seed=0)
    pop.step(np.zeros((2, 2, 3)))
    print("ok %.2f" % elapsed)
""")


def test_fork_child_is_safe_and_fast():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    assert out.stdout.startswith("ok")
    assert float(out.stdout.split()[1]) < 30
