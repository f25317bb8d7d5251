"""examples/ppo_jax.py's quick form (what CI runs): the whole rollout is one jitted lax.scan
through env.xla(), on CartPole-v1 (MLP) and Pong-v5 (Nature CNN)."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("env_id,episodes", [("CartPole-v1", True), ("Pong-v5", False)])
def test_ppo_jax_quick(env_id, episodes):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "ppo_jax.py"), "--quick",
                        "--env-id", env_id], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = re.findall(r"iter (\d+)/3 steps (\d+) sps \d+ episodes (\d+) return (\S+) .*loss "
                       r"(\S+)", r.stdout)
    assert [int(x[0]) for x in lines] == [1, 2, 3], r.stdout
    assert all(x[4] != "nan" for x in lines)
    if episodes:        # CartPole's random-ish policy ends episodes within 32 steps
        assert sum(int(x[2]) for x in lines) > 0 and lines[0][3] != "nan"
