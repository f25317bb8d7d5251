"""Registers the robotics family (imported by cypool.entry): the PointMaze ids of
gymnasium-robotics 1.4.2. Light: gymnasium-robotics, mujoco and the compiled task are imported
only when an id is made or its spec is read."""
from cypool.registry import register_family


def _ids():
    from cypool.robotics.maze import POINT_MAZE
    return list(POINT_MAZE)


def _spec(env_id):
    from cypool.robotics.maze import spec_of
    return spec_of(env_id)


def _make(env_id, *args, **kwargs):
    from cypool.robotics.maze import make
    return make(env_id, *args, **kwargs)


def _limit(env_id):
    from cypool.robotics.maze import POINT_MAZE
    return POINT_MAZE[env_id][2]


def _config():
    from importlib.metadata import PackageNotFoundError, version

    from cypool.robotics.maze import REFERENCE
    try:                    # without importing it (it registers its own envs with gymnasium)
        found = version("gymnasium-robotics")
    except PackageNotFoundError:
        found = None
    return {"robotics_reference": REFERENCE, "gymnasium_robotics": found}


register_family("robotics", env_ids=_ids, make=_make, default_max_episode_steps=_limit,
                config=_config, spec=_spec)
