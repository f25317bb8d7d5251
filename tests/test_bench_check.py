"""The speed-regression check fails when cypool slows down (CYPOOL_BENCH_SLOWDOWN_US)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_check(tmp_path, slowdown_us):
    thresholds = tmp_path / "thresholds.json"
    # a floor any healthy build clears by far (cypool is several times gym-sync here)
    thresholds.write_text(json.dumps({"ratios": [
        {"task": "Hopper-v5", "system": "cypool", "reference": "gym-sync", "min": 0.7}]}))
    env = dict(os.environ, CYPOOL_BENCH_SLOWDOWN_US=str(slowdown_us))
    return subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--tasks", "Hopper-v5", "--systems", "cypool",
         "gym-sync", "--rounds", "1", "--seconds", "0.5", "--out", str(tmp_path),
         "--check", str(thresholds)], capture_output=True, text=True, cwd=ROOT, env=env,
        timeout=300)


def test_check_passes_then_catches_a_slowdown(tmp_path):
    ok = run_check(tmp_path, 0)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "bench check passed" in ok.stdout
    slow = run_check(tmp_path, 20000)     # 20 ms per step: a gross regression
    assert slow.returncode == 1, slow.stdout + slow.stderr
    assert "bench check FAILED" in slow.stdout and "Hopper-v5" in slow.stdout
    samples = [f for f in os.listdir(tmp_path) if f.startswith("bench-")]
    assert len(samples) == 2
