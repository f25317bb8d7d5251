"""Sweeps: a reference comparison repeated over every id or case of a family, marked
``@pytest.mark.sweep(every=K)`` or ``@pytest.mark.sweep(first_of="param")``. A default run
(CI's included) keeps a fixed, representative sample of each sweep: every K-th of a test
function's cases in collection order, the first always, or the first case of each value of
the parameter ``param`` (one task per dm_control domain, say). Under the ASan build
(tools/sanitize.sh sets CYPOOL_SANITIZER) an ``every`` sample is every 2K-th: that run
checks memory, and the kernels a sweep reaches are still reached by the sample
(``every=1``: every case in a default run, every other one under ASan).
``pytest --full-sweep`` (or CYPOOL_FULL_SWEEP=1) runs every case: docs/reliability.md says
when to."""
import os
import signal

import pytest


def pytest_addoption(parser):
    parser.addoption("--full-sweep", action="store_true",
                     help="run every case of the tests marked sweep (default: a sample)")


def _full(config):
    return config.getoption("--full-sweep") or os.environ.get("CYPOOL_FULL_SWEEP", "") not in (
        "", "0")


def pytest_collection_modifyitems(config, items):
    if _full(config):
        return
    scale = 2 if os.environ.get("CYPOOL_SANITIZER") else 1
    seen, keep, drop = {}, [], []
    for item in items:
        mark = item.get_closest_marker("sweep")
        if mark is None:
            keep.append(item)
            continue
        group = item.nodeid.split("[", 1)[0]
        if "first_of" in mark.kwargs:
            value = (group, repr(item.callspec.params[mark.kwargs["first_of"]]))
            (keep if value not in seen else drop).append(item)
            seen[value] = True
            continue
        every = mark.kwargs.get("every", 3) * scale
        k = seen.get(group, 0)
        seen[group] = k + 1
        (keep if k % every == 0 else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture
def default_sigint():
    """Python's own Ctrl-C handling (KeyboardInterrupt) for the duration of a test that
    simulates Ctrl-C with ``_thread.interrupt_main``, which does nothing while SIGINT is
    ignored or left to the OS (as a library in the same worker process may have set it: CI's
    fresh-clone run once saw all four such tests of one xdist worker not interrupted)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
