"""Running one system of a side-by-side bench in its own process (bench.classic,
bench.reference_families, bench.multiagent): the child script prints one JSON line last."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_child(script, args, threads):
    """Run ``script`` (python -c) with ``args`` and OMP_NUM_THREADS=threads; its last stdout
    line as a dict, or ``{"error": its last stderr line}``."""
    proc = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": str(threads)})
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed"}
    return json.loads(proc.stdout.strip().splitlines()[-1])
