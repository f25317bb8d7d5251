"""Registers the robotics family (imported by cypool.entry): the PointMaze, AntMaze, Fetch
(-v4), Shadow Hand, Adroit and FrankaKitchen-v1 ids of gymnasium-robotics 1.4.2, and
CoupledHalfCheetah-v0 (MaMuJoCo's CoupledHalfCheetahEnv, the task mamujoco_v1 runs). Light:
gymnasium-robotics, mujoco and the compiled tasks are imported only when an id is made or its
spec is read."""
from cypool.registry import register_family


def _module(env_id):
    """The module serving env_id: cypool.robotics.maze (PointMaze), .ant_maze, .fetch, ..."""
    if env_id.startswith("Fetch"):
        from cypool.robotics import fetch
        return fetch
    if env_id.startswith("Hand"):
        from cypool.robotics import hand
        return hand
    if env_id.startswith("AdroitHand"):
        from cypool.robotics import adroit
        return adroit
    if env_id.startswith("AntMaze_"):
        from cypool.robotics import ant_maze
        return ant_maze
    if env_id.startswith("FrankaKitchen"):
        from cypool.robotics import kitchen
        return kitchen
    if env_id.startswith("CoupledHalfCheetah"):
        from cypool.robotics import coupled_half_cheetah
        return coupled_half_cheetah
    from cypool.robotics import maze
    return maze


def _ids():
    from cypool.robotics.adroit import ADROIT
    from cypool.robotics.ant_maze import ANT_MAZE
    from cypool.robotics.coupled_half_cheetah import COUPLED
    from cypool.robotics.fetch import FETCH
    from cypool.robotics.hand import HAND
    from cypool.robotics.kitchen import KITCHEN
    from cypool.robotics.maze import POINT_MAZE
    return list(POINT_MAZE) + list(ANT_MAZE) + list(FETCH) + list(HAND) \
        + list(ADROIT) + list(KITCHEN) + list(COUPLED)


def _spec(env_id):
    return _module(env_id).spec_of(env_id)


def _make(env_id, *args, **kwargs):
    return _module(env_id).make(env_id, *args, **kwargs)


def _limit(env_id):
    if env_id.startswith("Fetch"):
        from cypool.robotics.fetch import MAX_EPISODE_STEPS
        return MAX_EPISODE_STEPS
    if env_id.startswith("Hand"):
        from cypool.robotics.hand import limit
        return limit(env_id)
    if env_id.startswith("AdroitHand"):
        from cypool.robotics.adroit import MAX_EPISODE_STEPS
        return MAX_EPISODE_STEPS
    if env_id.startswith("FrankaKitchen"):
        from cypool.robotics.kitchen import MAX_EPISODE_STEPS
        return MAX_EPISODE_STEPS
    if env_id.startswith("CoupledHalfCheetah"):
        from cypool.robotics.coupled_half_cheetah import MAX_EPISODE_STEPS
        return MAX_EPISODE_STEPS
    from cypool.robotics.ant_maze import ANT_MAZE
    from cypool.robotics.maze import POINT_MAZE
    return (ANT_MAZE if env_id in ANT_MAZE else POINT_MAZE)[env_id][2]


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
