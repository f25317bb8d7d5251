"""The Walk family on the Ray backend: its actors import the family's registering module
(register_family(module=...)) and give the local pool's trajectories."""
import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))
from _ray_ref import real_ray, start_local_ray  # noqa: E402

ray = real_ray()   # skips under tools/sanitize.sh (tests/_ray_ref.py says why)

import cypool  # noqa: E402


@pytest.fixture
def ray_with_tests_on_path():
    path = os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])
    start_local_ray(runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield
    ray.shutdown()


def test_walk_on_ray_matches_the_local_pool(walk, ray_with_tests_on_path):
    env = cypool.make_vec("Walk-v0", 5, backend="ray", num_workers=2, num_threads=1,
                          bound=1.0, autoreset_mode="same_step", num_cpus_per_worker=0.5)
    local = cypool.make_vec("Walk-v0", 5, num_threads=2, bound=1.0, autoreset_mode="same_step")
    try:
        assert env.worker_env_ranges == [(0, 3), (3, 5)]
        o, _ = env.reset(seed=4)
        o_loc, _ = local.reset(seed=4)
        assert np.array_equal(o, o_loc)
        ends = 0
        for a in np.random.default_rng(0).uniform(-1, 1, (40, 5, 1)):
            got, want = env.step(a), local.step(a)
            for k in range(4):
                assert np.array_equal(got[k], want[k])
            assert np.array_equal(got[4]["x"], want[4]["x"])
            ends += int((got[2] | got[3]).sum())
        assert ends > 0
    finally:
        env.close()
        local.close()
