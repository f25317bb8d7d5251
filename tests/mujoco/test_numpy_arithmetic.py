"""The arithmetic behind gymnasium's exact keys, checked on any CPU, not only on ours.

* numpy's float64 dot (behind np.linalg.norm, v.dot(w)) goes through its BLAS's ddot, whose
  kernel and so its summation order depend on the CPU: cypool calls the same routine. A
  left-to-right sum differs from every SIMD kernel at lengths >= 16, so the length sweep below
  fails against a hand-written sum on any machine.
* numpy's SIMD-dispatched loops that the reference uses (sin, cos, the pairwise sum,
  elementwise arithmetic, clip, the einsum of Humanoid's mass centre) are run in a subprocess
  once per dispatch target this CPU offers (NPY_DISABLE_CPU_FEATURES), and must give the same
  bits on every target: the kernels are tested against the default target elsewhere.

OPENBLAS_CORETYPE is never set here: to try another BLAS kernel by hand, set it for one command
(`OPENBLAS_CORETYPE=Prescott pytest tests/mujoco/test_exactness.py`).
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import cypool
from cypool import _numpy_blas
from cypool.mujoco import _pool


def test_routine_is_numpys_own():
    r = _numpy_blas.ROUTINE
    assert r.exact, r.describe()
    if r.kind == "blas":
        names = {n for n, defined in _numpy_blas._elf_dynamic_symbols(
            np._core._multiarray_umath.__file__) if not defined}
        assert r.symbol in names
        assert r.address != 0


@pytest.mark.parametrize("n", range(1, 257))
def test_dot_every_length(n):
    rng = np.random.default_rng(n)
    for scale in (1.0, 1e-3, 1e150):
        x = rng.standard_normal(n) * scale
        y = rng.standard_normal(n) * scale
        assert _pool.dot(x, x) == x.dot(x) == np.dot(x, x)
        assert _pool.dot(x, y) == x.dot(y)
        assert np.sqrt(_pool.dot(x, x)) == np.linalg.norm(x)


def test_dot_not_a_left_to_right_sum():
    """The sweep above can fail: a plain sum differs from numpy at some length >= 16."""
    rng = np.random.default_rng(0)
    if _numpy_blas.ROUTINE.kind != "blas":
        pytest.skip("numpy has no BLAS here: its dot is the plain sum")
    differs = 0
    for n in range(16, 257):
        x = rng.standard_normal(n)
        plain = 0.0
        for v in x:
            plain += v * v
        differs += plain != x.dot(x)
    assert differs > 0


@pytest.mark.parametrize("values", [
    [5e-324, 5e-324], [-0.0], [-0.0, 0.0, -0.0], [1e300, 1e300], [1e-160, 3e-161, 2e-170],
    [np.inf, 1.0], [np.nan, 0.0], [-1.5, 2.25, -3.125], [2.0**-1074] * 17,
])
def test_dot_edge_values(values):
    x = np.array(values, dtype=np.float64)
    ref, got = np.linalg.norm(x), np.sqrt(_pool.dot(x, x))
    assert np.array_equal(np.array([got]), np.array([ref]), equal_nan=True)
    assert np.signbit(got) == np.signbit(ref)


def test_dot_strided_slices():
    """gymnasium takes norms of slices (qpos[0:2], xpos[a] - xpos[b]): numpy copies a strided
    slice to a contiguous vector first, so the contiguous routine sees the same numbers."""
    rng = np.random.default_rng(3)
    m = rng.standard_normal((40, 7))
    for col in range(7):
        v = m[:, col]
        assert np.sqrt(_pool.dot(v, v)) == np.linalg.norm(v)
    q = rng.standard_normal(30)
    assert np.sqrt(_pool.dot(q[0:2], q[0:2])) == np.linalg.norm(q[0:2], ord=2)


def test_show_config_names_the_routine():
    cfg = cypool.show_config(file=open(os.devnull, "w"))
    assert cfg["numpy_dot"] == _numpy_blas.ROUTINE.describe()


def test_fallback_warns_once(monkeypatch):
    from cypool.mujoco import family
    monkeypatch.setattr(family, "_DOT_WARNED", False)
    monkeypatch.setattr(family, "DOT_ROUTINE", _numpy_blas.DotRoutine("fallback", detail="test"))
    with pytest.warns(RuntimeWarning, match="distance_from_origin"):
        cypool.make_vec("Ant-v5", 1).close()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cypool.make_vec("Ant-v5", 1).close()
        cypool.make_vec("Reacher-v5", 1).close()


# --- numpy's dispatched loops: the same bits on every target this CPU offers -------------

_PROBE = r"""
import json, sys
import numpy as np
from numpy._core import _multiarray_umath as mu
rng = np.random.default_rng(12345)
out = {"target": mu.__cpu_targets_info__["sin"]["dd"]["current"]}
x = np.concatenate([rng.standard_normal(4000) * s for s in (1.0, 10.0, 1e3, 1e6)])
out["sin"] = np.sin(x).tobytes().hex()
out["cos"] = np.cos(x).tobytes().hex()
out["sin2"] = np.sin(x[:2]).tobytes().hex()      # Reacher and the double pendulum: 2 angles
sums = []
for n in range(1, 300):
    a = rng.standard_normal(n)
    f = a.astype(np.float32)
    sums.append(np.sum(np.square(a)))
    sums.append(float(np.float32(0.1) * np.sum(np.square(f))))
    sums.append(np.sum(np.square(np.clip(a, -0.5, 0.5))))
out["sums"] = np.array(sums).tobytes().hex()
mass, xipos = rng.random(14), rng.standard_normal((14, 3))
out["einsum"] = np.einsum("b,bj->j", mass, xipos).tobytes().hex()
v = rng.standard_normal((100, 3))
out["arith"] = (v[:, 0] * v[:, 1] - v[:, 2] / 3.0 + np.sqrt(np.abs(v[:, 0]))).tobytes().hex()
json.dump(out, sys.stdout)
"""


def _targets():
    """NPY_DISABLE_CPU_FEATURES values that select each target numpy offers for float64 sin
    on this CPU (the same X86_V* groups select the other loops' targets)."""
    from numpy._core import _multiarray_umath as mu
    avail = mu.__cpu_targets_info__["sin"]["dd"]["available"].split()
    groups = [t for t in avail if not t.startswith("baseline")]
    return [" ".join(groups[:k]) for k in range(len(groups) + 1)]


def test_dispatched_loops_agree_on_every_target():
    results = {}
    for disable in _targets():
        env = dict(os.environ)
        env.pop("NPY_ENABLE_CPU_FEATURES", None)
        if disable:
            env["NPY_DISABLE_CPU_FEATURES"] = disable
        else:
            env.pop("NPY_DISABLE_CPU_FEATURES", None)
        out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                             text=True, timeout=120, check=True)
        res = json.loads(out.stdout)
        results[res.pop("target")] = res
    assert len(results) == len(_targets()), f"targets not all reached: {sorted(results)}"
    first = next(iter(results.values()))
    for target, res in results.items():
        for key, value in res.items():
            assert value == first[key], f"numpy's {key} differs on target {target}"


def test_sin_cos_are_libms():
    """cypool's kernels call libm's sin/cos; numpy's float64 loops give libm's bits."""
    import math
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.standard_normal(20000) * s for s in (1.0, 10.0, 1e3, 1e6)])
    assert np.array_equal(np.sin(x), np.array([math.sin(v) for v in x]))
    assert np.array_equal(np.cos(x), np.array([math.cos(v) for v in x]))


def test_resolve_other_builds(tmp_path):
    """A module that imports no ddot is a numpy built without BLAS (its loop is cypool's sum);
    a file that is not ELF falls back, and says so."""
    from cypool._core import _engine
    r = _numpy_blas.resolve(_engine.__file__)
    assert r.kind == "numpy-loop" and r.exact
    bad = tmp_path / "not-elf.so"
    bad.write_bytes(b"MZ not an ELF file")
    r = _numpy_blas.resolve(str(bad))
    assert r.kind == "fallback" and not r.exact
    assert "may differ from numpy" in r.describe()


@pytest.mark.parametrize("name,ilp64", [("cblas_ddot", False), ("scipy_cblas_ddot64_", True),
                                        ("cblas_ddot64_", True), ("cblas_ddot_64", True),
                                        ("scipy_cblas_ddot", False)])
def test_symbol_names_of_blas_builds(name, ilp64):
    """System OpenBLAS and MKL (LP64 and ILP64 names) and the wheels' scipy-openblas."""
    m = _numpy_blas._DDOT.match(name)
    assert m is not None
    assert (m.group("suffix") is not None) == ilp64
    assert _numpy_blas._DDOT.match("cblas_ddot_sub") is None
