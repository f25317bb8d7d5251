"""What installing and making the dm_control ids takes: the cypool[dm-control] extra (the
dm-control release the tests pin), the error without dm_control that names it, and no
compiler deprecation warning (cheetah's settotalmass) at every make."""
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(code, cwd):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_dm_control_extra_pins_the_tested_release():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    pinned = [r for r in extras["test"] if r.startswith("dm-control")]
    assert extras["dm-control"] == pinned == ["dm-control==1.0.52"]


def test_missing_dm_control_names_the_extra(tmp_path):
    run = _run("""
        import sys
        sys.modules["dm_control"] = None          # not installed
        import cypool
        try:
            cypool.make_vec("dm_control/cheetah-run-v0", 1)
        except ImportError as exc:
            print(exc)
        """, tmp_path)
    assert run.returncode == 0, run.stderr
    assert 'pip install "cypool[dm-control]"' in run.stdout


def test_cheetah_make_prints_no_settotalmass_warning(tmp_path):
    pytest.importorskip("dm_control")
    run = _run("""
        import cypool
        for order in ("sorted", "dm_control"):
            cypool.make_vec("dm_control/cheetah-run-v0", 1, obs_key_order=order).close()
        print("made")
        """, tmp_path)
    assert run.returncode == 0, run.stderr
    assert "made" in run.stdout
    assert "settotalmass" not in run.stdout + run.stderr
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()


def test_compile_xml_drops_only_the_known_warning(monkeypatch):
    """Other warnings go to the callback installed before, which is put back."""
    mujoco = pytest.importorskip("mujoco")
    from cypool.mujoco import _compile as _config

    def compile_with_warnings(path):      # MuJoCo calls the user warning callback
        hook = mujoco.get_mju_user_warning()
        hook(_config.KNOWN_WARNINGS[0] + " and will be removed")
        hook("another warning")
        return path

    seen = []
    before = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(seen.append)
    try:
        monkeypatch.setattr(mujoco.MjModel, "from_xml_path", compile_with_warnings)
        assert _config.compile_xml("model.xml") == "model.xml"
        monkeypatch.undo()
        assert seen == ["another warning"]
        mujoco.get_mju_user_warning()("after")
        assert seen == ["another warning", "after"]
    finally:
        mujoco.set_mju_user_warning(before)
