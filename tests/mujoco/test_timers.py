"""cypool turns MuJoCo's stage timers (mjcb_time, installed by the mujoco package) off at import,
since they cost 10-15% of every mj_step; CYPOOL_MUJOCO_TIMERS=1 keeps them."""
import os
import subprocess
import sys

import pytest

PROBE = """
import cypool, mujoco
m = mujoco.MjModel.from_xml_string(
    '<mujoco><worldbody><body><freejoint/><geom size=".1"/></body></worldbody></mujoco>')
d = mujoco.MjData(m)
mujoco.mj_step(m, d)
print(d.timer[mujoco.mjtTimer.mjTIMER_STEP].duration > 0)
"""


@pytest.mark.parametrize("setting, timed", [(None, "False"), ("0", "False"), ("1", "True")])
def test_timers_follow_the_setting(setting, timed):
    env = dict(os.environ)
    env.pop("CYPOOL_MUJOCO_TIMERS", None)
    if setting is not None:
        env["CYPOOL_MUJOCO_TIMERS"] = setting
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == timed
