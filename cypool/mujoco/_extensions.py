# The MuJoCo extensions, gathered by setup.py: (builder, module, sources, options).
TASKS = ["ant", "half_cheetah", "hopper", "walker2d", "humanoid", "humanoidstandup",
         "inverted_pendulum", "inverted_double_pendulum", "reacher", "swimmer", "pusher"]
EXTENSIONS = [
    ("mujoco", "cypool.mujoco._pool", ["cypool/mujoco/_pool.pyx", "cypool/mujoco/_mj_guard.c",
                                       "cypool/mujoco/_mj_render.c"], {}),
] + [("mujoco", f"cypool.mujoco.tasks.{t}", [f"cypool/mujoco/tasks/{t}.pyx"], {})
     for t in TASKS]
