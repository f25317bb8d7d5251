"""A MuJoCo task in a user's own package (tests/mujoco/task_pkg: orbit), written against the
public cypool/mujoco/api.pxd only, installed with pip (no build isolation) as a user would:
its model ships beside its module as package data and is found from the module's path; the
id registers at import and steps bit for bit with itself across pickling and deepcopy."""
import copy
import hashlib
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cypool
import cypool.mujoco
import cypool.mujoco.api

PKG = Path(__file__).parent / "task_pkg"
HEADERS = [Path(cypool.mujoco.__file__).parent / n for n in ("api.pxd", "_task.pxd",
                                                              "_numeric.pxd", "family.py")]


def _installed():
    """pip install --no-build-isolation --target <cache> (cached by a hash of the package's
    and cypool's headers); the target directory."""
    files = sorted(p for p in PKG.rglob("*") if p.is_file())
    h = hashlib.sha256(sys.version.encode() + cypool.__version__.encode())
    for p in files + HEADERS:
        h.update(str(p.name).encode() + p.read_bytes())
    root = Path.home() / ".cache" / "cypool" / "test-task-pkg" / h.hexdigest()[:16]
    target = root / "site"
    if not list(target.glob("orbit/_orbit*.so")):
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(PKG, root / "src")           # pip builds in the source tree
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                        "--no-build-isolation", "--target", str(target), str(root / "src")],
                       check=True)
    return target


@pytest.fixture(scope="module")
def orbit():
    target = _installed()
    sys.path.insert(0, str(target))
    try:
        import orbit                                     # registers Orbit-v0
        yield target
    finally:
        cypool.mujoco.unregister_task("Orbit-v0")
        sys.path.remove(str(target))
        for name in [m for m in sys.modules if m == "orbit" or m.startswith("orbit.")]:
            del sys.modules[name]


def test_the_task_cimports_only_the_public_api():
    src = (PKG / "orbit" / "_orbit.pyx").read_text()
    cimports = re.findall(r"from\s+(\S+)\s+cimport", src)
    assert cimports == ["cypool.mujoco.api"]
    assert cypool.mujoco.api.TASK_API_VERSION == 1


def test_the_model_ships_as_package_data_and_is_found_beside_the_module(orbit):
    import orbit._orbit as mod

    xml = Path(mod.DEFAULTS["xml_file"])
    assert xml == orbit / "orbit" / "orbit.xml" and xml.is_file()      # installed by pip
    assert Path(mod.__file__).parent == xml.parent


def _run(env, actions):
    out = []
    for a in actions:
        obs, rew, term, trunc, info = env.step(a)
        out.append((obs, rew, term, trunc, info["radius"], info["reward_ctrl"]))
    return out


def test_bit_for_bit_with_itself_across_pickling(orbit):
    n = 5
    env = cypool.make_vec("Orbit-v0", n, num_threads=2, max_radius=0.35)
    obs, info = env.reset(seed=7)
    assert obs.shape == (n, 4) and np.all(info["radius"] > 0)
    rng = np.random.default_rng(1)
    _run(env, rng.uniform(-1, 1, (30, n, 2)))
    later = rng.uniform(-1, 1, (120, n, 2)).astype(np.float32)
    copies = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    want = _run(env, later)
    assert any(t[2].any() for t in want)               # autoresets happen in the window
    for other in copies:
        got = _run(other, later)
        for w, g in zip(want, got):
            for x, y in zip(w, g):
                assert x.dtype == y.dtype and np.array_equal(x, y)
    one = cypool.make_vec("Orbit-v0", n, num_threads=1, max_radius=0.35)  # any thread count
    one.reset(seed=7)
    _run(one, np.random.default_rng(1).uniform(-1, 1, (30, n, 2)))
    for w, g in zip(want, _run(one, later)):
        for x, y in zip(w, g):
            assert np.array_equal(x, y)


def test_a_module_of_another_api_version_is_refused(orbit, monkeypatch):
    import orbit._orbit as mod

    monkeypatch.setattr(mod, "API_VERSION", 2)
    with pytest.raises(ValueError, match="task API version 2; this cypool implements 1"):
        cypool.mujoco.register_task("Orbit2-v0", "orbit._orbit")
    assert "Orbit2-v0" not in cypool.list_envs()


def test_the_public_headers_are_package_data():
    """pyproject.toml's package-data globs take api.pxd and every header it reaches into a
    wheel (a user's task compiles against an installed cypool, not a clone)."""
    import fnmatch
    import tomllib

    root = Path(cypool.__file__).parent
    conf = tomllib.loads((root.parent / "pyproject.toml").read_text())
    globs = conf["tool"]["setuptools"]["package-data"]["cypool"]
    for rel in ("mujoco/api.pxd", "mujoco/_task.pxd", "mujoco/_numeric.pxd",
                "mujoco/_mj/mujoco.pxd", "mujoco/_mj_guard.h", "api.pxd", "_core/_engine.pxd",
                "_core/_numpy_loops.pxd"):
        assert (root / rel).is_file(), rel
        assert any(fnmatch.fnmatch(rel, g) and rel.count("/") == g.count("/") for g in globs), rel
