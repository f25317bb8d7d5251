# The robotics extensions, gathered by setup.py: (builder, module, sources, options). Tasks on
# cypool's MuJoCo pool (cypool.mujoco._pool.MjPool), built as the MuJoCo tasks are.
EXTENSIONS = [
    ("mujoco", "cypool.robotics._point_maze", ["cypool/robotics/_point_maze.pyx"], {}),
    ("mujoco", "cypool.robotics._ant_maze", ["cypool/robotics/_ant_maze.pyx"], {}),
    # CoupledHalfCheetah-v0: MaMuJoCo's, which cypool.multiagent.mamujoco_v1 partitions
    ("mujoco", "cypool.robotics._coupled_half_cheetah",
     ["cypool/robotics/_coupled_half_cheetah.pyx"], {}),
    ("mujoco", "cypool.robotics._fetch", ["cypool/robotics/_fetch.pyx"], {}),
    ("mujoco", "cypool.robotics._adroit", ["cypool/robotics/_adroit.pyx"], {}),
    ("mujoco", "cypool.robotics._hand", ["cypool/robotics/_hand.pyx"], {}),
    ("mujoco", "cypool.robotics._kitchen", ["cypool/robotics/_kitchen.pyx"], {}),
]
