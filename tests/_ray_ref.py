"""Ray, for the tests that run cypool pools as Ray actors.

Not under tools/sanitize.sh: Ray's own processes (GCS, raylet, its runtime-env agent, workers)
inherit the preloaded libasan, and Ray's uninstrumented code then reports its own faults
(`spt_setup`, Ray's setproctitle, reading freed argv memory; C++ exceptions aborting in ASan's
__cxa_throw interceptor). Whether such a report is written depends on how far a Ray process
gets before ray.shutdown(), so it comes and goes between runs. The pools Ray's actors run are
cypool's in-process ones, which the ASan run covers; the Ray tests run in the normal pass.
Every test module that uses Ray gets it here (tests/test_third_party_refs.py checks that)."""
import os

import pytest

UNDER_ASAN = os.environ.get("CYPOOL_SANITIZER") == "asan"


def real_ray():
    """The `ray` module, or skip: under ASan, or when Ray is not installed."""
    if UNDER_ASAN:
        pytest.skip("Ray's processes do not run under a preloaded libasan; "
                    "the Ray tests run in the normal pass", allow_module_level=True)
    return pytest.importorskip("ray")
