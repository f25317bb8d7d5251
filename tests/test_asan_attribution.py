"""Under tools/sanitize.sh only: every AddressSanitizer report names the test that produced it
(tools/asan_hook.c writes "cypool-asan: test=<PYTEST_CURRENT_TEST> pid=..." at its head), in
every kind of child process a test starts. Each case makes a child report on purpose, checks
the marker in that child's report file, then deletes the file so that the run stays clean.
The test process itself is not made to report: its report file is kept open by ASan and
holds whatever real errors it has seen."""
import multiprocessing as mp
import os
import re
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("CYPOOL_SANITIZER") != "asan",
                                reason="checks tools/sanitize.sh's ASan run")

# a read one byte past an 8-byte heap block, reported through ASan's own entry point (CPython
# is not instrumented); recoverable: the process carries on
OVERFLOW = textwrap.dedent("""
    import ctypes
    lib = ctypes.CDLL(None)
    lib.malloc.restype = ctypes.c_void_p
    lib.__asan_report_load1_noabort(ctypes.c_void_p(lib.malloc(8) + 8))
""")


def _report_path(pid):
    opts = dict(o.split("=", 1) for o in os.environ["ASAN_OPTIONS"].split(":") if "=" in o)
    return f"{opts['log_path']}.{pid}"


def _check_report(pid, kind, ppid=None):
    """The report of child `pid` holds an ASan error of `kind` headed by a marker naming this
    test and that pid; the report is then removed."""
    path = _report_path(pid)
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        pytest.fail(f"no ASan report from child {pid} at {path}")
    try:
        test = os.environ["PYTEST_CURRENT_TEST"]
        marks = re.findall(r"^cypool-asan: test=(.*) pid=(\d+) ppid=(\d+) tid=(\d+) cmd=",
                           text, re.M)
        assert marks, text[:2000]
        assert marks[0][:2] == (test, str(pid)), (marks, test, pid)
        if ppid is not None:
            assert marks[0][2] == str(ppid), (marks, ppid)
        head, _, body = text.partition(f"=={pid}==ERROR: AddressSanitizer: ")
        assert "cypool-asan: test=" in head and body.startswith(kind), text[:2000]
        return marks[0]
    finally:
        os.remove(path)


def test_a_segv_in_a_subprocess_thread_names_the_test():
    """The CI report's shape: a SEGV at a small address in a non-main thread of a child."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import ctypes, os, sys, threading
        print(os.getpid(), flush=True)
        t = threading.Thread(target=lambda: ctypes.string_at(0x2c47, 1))
        t.start()
        t.join()
    """)], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0, out.stderr[-2000:]          # ASan ends it after the report
    pid = int(out.stdout.split()[0])
    _, _, _, tid = _check_report(pid, "SEGV on unknown address 0x000000002c47")
    assert int(tid) != pid                                  # the thread, not the main one


def test_a_fork_child_report_names_the_test():
    pid = os.fork()
    if pid == 0:                                            # the child: report, then leave
        try:
            exec(OVERFLOW, {})
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    _check_report(pid, "heap-buffer-overflow", ppid=os.getpid())


def _spawned_overflow():
    exec(OVERFLOW, {})


def test_a_spawn_child_report_names_the_test():
    p = mp.get_context("spawn").Process(target=_spawned_overflow)
    p.start()
    p.join(120)
    assert p.exitcode == 0, p.exitcode
    _check_report(p.pid, "heap-buffer-overflow", ppid=os.getpid())
