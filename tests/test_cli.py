"""``python -m cypool`` (the ``cypool`` console script): show_config, then a speed table."""
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import cypool

ROOT = Path(__file__).resolve().parents[1]


def _run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "cypool", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_quick_run_prints_config_and_speed_table():
    r = _run("--quick", "--envs", "4", "--seconds", "0.3")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "cypool: " + cypool.__version__ in out and "usable_cores" in out   # show_config
    header = out.index("cypool steps/s")
    assert "gymnasium steps/s" in out[header:] and "ratio" in out[header:]
    table = out[header:].splitlines()[1:]
    ids = ["Hopper-v5", "CartPole-v1"] + (["Pong-v5"] if "Pong-v5" in cypool.list_envs() else [])
    assert [line.split()[0] for line in table if line.strip()] == ids
    assert "n/a" not in out        # the references come with cypool's dependencies
    for line in table:                              # every row: numbers
        env_id, envs, ours, ref, ratio = line.split()
        assert envs == "4"
        assert float(ours.replace(",", "")) > 0 and float(ref.replace(",", "")) > 0
        assert re.fullmatch(r"\d+\.\dx", ratio), line
    assert out.count(" env steps/s") >= 4           # a progress line per measurement


def test_bad_options_exit_with_usage():
    for args in (["--envs", "0"], ["--seconds", "-1"], ["--envs", "x"]):
        r = _run(*args, timeout=60)
        assert r.returncode == 2 and "usage: cypool" in r.stderr, (args, r.stderr)


def test_console_script_points_at_main():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, name = scripts["cypool"].partition(":")
    assert module == "cypool.cli" and name == "main"
    from cypool.cli import main
    assert callable(main)


def test_a_row_that_cannot_run_names_the_command_that_fixes_it():
    import io

    from cypool.cli import _measure

    def missing(name):
        def make():
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return make

    for module, fix in (("cv2", "pip install opencv-python-headless"),
                        ("imageio.v2", "pip install imageio")):
        out = io.StringIO()
        assert _measure("Pong-v5 gymnasium", missing(module), 0.1, out) is None
        assert f"n/a (ModuleNotFoundError: No module named '{module}'; fix: {fix})" in \
            out.getvalue()
