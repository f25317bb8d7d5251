# The dm_control extensions, gathered by setup.py: one module per suite domain under tasks/,
# built against the MuJoCo family's headers (MjTask interface) and numpy's libm-exact pow.
from pathlib import Path

DOMAINS = sorted(p.stem for p in (Path(__file__).parent / "tasks").glob("*.pyx"))
EXTENSIONS = [("mujoco", f"cypool.dm_control.tasks.{d}", [f"cypool/dm_control/tasks/{d}.pyx"],
               {"flags": ["-fno-builtin-pow"]}) for d in DOMAINS]
