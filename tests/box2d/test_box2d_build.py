"""buildtools/box2d_build.py: the cached Box2D core (reused, not rebuilt), its checks of the
source (sha256 pin, no download when downloads are off) and the properties its float
equality with the box2d wheel rests on (no FMA instruction, no Python in b2Settings.h)."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# buildtools/ is the source tree's (setup.py's helpers), not an installed package
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from buildtools import box2d_build as bb  # noqa: E402


def test_the_cache_is_reused_as_built():
    cfg = bb.ensure_box2d(verbose=False)
    lib = cfg["extra_objects"][0]
    install = bb.cache_dir() / "install"
    before = (install / "lib" / "libbox2d.a").stat().st_mtime_ns
    assert bb.ensure_box2d(verbose=False) == cfg
    assert (install / "lib" / "libbox2d.a").stat().st_mtime_ns == before
    stamp = json.loads((install / bb.STAMP_NAME).read_text())
    assert stamp["sdist_sha256"] == bb.SDIST_SHA256
    assert "-ffp-contract=off" in stamp["cxxflags"] and "-ffast-math" not in stamp["cxxflags"]
    settings = (install / "include" / "Box2D" / "Common" / "b2Settings.h").read_text()
    assert "Python.h" not in settings and "b2AssertException{#A}" in settings
    assert lib.endswith("libbox2d.a")


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs binutils' objdump")
def test_no_fused_multiply_add_in_the_library():
    lib = bb.ensure_box2d(verbose=False)["extra_objects"][0]
    text = subprocess.run(["objdump", "-d", lib], capture_output=True, text=True,
                          check=True).stdout
    assert "b2RevoluteJoint" in text
    assert not any(op in text for op in ("vfmadd", "vfmsub", "vfnmadd", "vfnmsub"))


def test_a_wrong_sdist_is_refused(tmp_path, monkeypatch):
    fake = tmp_path / bb.SDIST_NAME
    fake.write_bytes(b"not box2d")
    monkeypatch.setenv("CYPOOL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CYPOOL_BOX2D_SOURCE", str(fake))
    with pytest.raises(bb.Box2DBuildError, match="sha256"):
        bb.ensure_box2d(verbose=False)


def test_no_download_when_downloads_are_off(tmp_path, monkeypatch):
    monkeypatch.setenv("CYPOOL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CYPOOL_BOX2D_SOURCE", raising=False)
    monkeypatch.setenv("CYPOOL_BOX2D_NO_DOWNLOAD", "1")
    with pytest.raises(bb.Box2DBuildError, match="CYPOOL_BOX2D_NO_DOWNLOAD"):
        bb.ensure_box2d(verbose=False)


# pip's isolated build environment (pip/_internal/build_env.py): PYTHONPATH names an overlay
# whose sitecustomize.py drops the installing environment's site-packages from sys.path, so
# the build's interpreter cannot import pip. A cold cache on a fresh machine downloads from
# inside it: `pip install .` failed there with "No module named pip" when the download was
# `python -m pip download` alone.
_OVERLAY = """import site, sys
drop = set(site.getsitepackages() + [site.getusersitepackages()])
sys.path[:] = [p for p in sys.path if p not in drop]
"""
_FETCH = """import sys
sys.path.insert(0, {root!r})
from pathlib import Path
from buildtools import box2d_build as bb
try:
    import pip  # noqa: F401
    sys.exit("the overlay did not hide pip")
except ImportError:
    pass
if {route!r} == "pip":
    err = bb._download_pip(Path({dest!r}), True)
else:
    err = bb._download_url(Path({dest!r}) / bb.SDIST_NAME, True)
sys.exit(err or 0)
"""


@pytest.mark.parametrize("route", ["url", "pip"])
def test_the_sdist_downloads_inside_an_isolated_build(tmp_path, route):
    """Each download route, from an interpreter that cannot import pip (needs PyPI)."""
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "sitecustomize.py").write_text(_OVERLAY)
    dest = tmp_path / "dl"
    dest.mkdir()
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(overlay), "PYTHONNOUSERSITE": "1",
           "HOME": str(Path.home())}
    code = _FETCH.format(root=str(Path(__file__).resolve().parents[2]), route=route,
                         dest=str(dest))
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    bb._check_sdist(dest / bb.SDIST_NAME)      # the pinned sha256
