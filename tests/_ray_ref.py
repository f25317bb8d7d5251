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


def start_local_ray(**init_kwargs):
    """A fresh Ray session on the tests' loopback cluster (2 CPUs, a 200 MiB object store, no
    dashboard), any earlier session shut down first; ``init_kwargs`` add to ray.init's
    (a ``runtime_env``). Skips as real_ray does. The caller shuts it down."""
    ray = real_ray()
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, object_store_memory=200 * 2**20, include_dashboard=False,
             _node_ip_address="127.0.0.1", log_to_driver=False, **init_kwargs)
    return ray


@pytest.fixture(scope="module")
def ray_session():
    """A test module's Ray session (start_local_ray), shut down after its tests; import it
    into the module to use it."""
    ray = start_local_ray()
    yield ray
    ray.shutdown()
