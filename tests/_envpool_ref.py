"""The installed EnvPool, for tests that compare cypool with it.

EnvPool's import loads its compiled modules (matplotlib's, jumanji's) whose own faults abort or
report in a process with libasan preloaded (tools/sanitize.sh): an alloc-dealloc mismatch in
jumanji_envpool.so at import, C++ exceptions in matplotlib. Those are EnvPool's, not cypool's,
so under the ASan run the comparisons are left to the normal run and skip with that reason."""
import importlib
import os

import pytest

UNDER_ASAN = os.environ.get("CYPOOL_SANITIZER") == "asan"


def real_envpool(module: str = "envpool"):
    """`import module` (envpool or one of its submodules), or skip: under ASan, or when EnvPool
    is not installed."""
    if UNDER_ASAN:
        pytest.skip("EnvPool's import aborts or reports under preloaded libasan; "
                    "compared in the normal run")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        pytest.skip(f"EnvPool is not importable: {exc}")


def envpool_or_none(module: str = "envpool"):
    """`import module`, or None where real_envpool() would skip: for a test whose comparison
    with EnvPool is one part among others that run everywhere."""
    if UNDER_ASAN:
        return None
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
