"""How cypool was built: OpenMP, versions, thread-count rules."""
import io
import os

import mujoco
import pytest

import cypool
from cypool._threads import resolve_num_threads, usable_cores


def test_show_config_reports_build():
    buf = io.StringIO()
    cfg = cypool.show_config(file=buf)
    text = buf.getvalue()
    for key in ("built_with_openmp", "cython", "numpy", "mujoco_runtime", "ale"):
        assert key in cfg and key in text
    if os.environ.get("CYPOOL_NO_OPENMP", "") in ("", "0"):
        assert cfg["built_with_openmp"] is True
        assert cfg["openmp_version"] >= 201107
    assert cfg["mujoco_compiled"] == 4000001
    assert cfg["mujoco_runtime"] == mujoco.__version__ == "4.0.1"


def test_num_threads_rules(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert resolve_num_threads(None, 1000) == usable_cores()
    assert resolve_num_threads(None, 1) == 1            # never more threads than envs
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert resolve_num_threads(None, 8) == 1            # OMP_NUM_THREADS is respected
    assert resolve_num_threads(3, 2) == 2
    with pytest.warns(RuntimeWarning, match="exceeds"):
        resolve_num_threads(usable_cores() + 1, 64)
    env = cypool.make_vec("Hopper-v5", 3)
    assert env.num_threads == 1
    env.close()
