# The MuJoCo extensions, gathered by setup.py: (builder, module, sources, options). Every
# task module under tasks/ is built: a new task is its .pyx plus a line in family.TASKS.
from pathlib import Path

TASKS = sorted(p.stem for p in (Path(__file__).parent / "tasks").glob("*.pyx"))
EXTENSIONS = [
    ("mujoco", "cypool.mujoco._pool", ["cypool/mujoco/_pool.pyx", "cypool/mujoco/_mj_guard.c",
                                       "cypool/mujoco/_mj_render.c"], {}),
] + [("mujoco", f"cypool.mujoco.tasks.{t}", [f"cypool/mujoco/tasks/{t}.pyx"], {})
     for t in TASKS]
