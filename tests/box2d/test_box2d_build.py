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
