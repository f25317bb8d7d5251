"""The AntMaze ids of gymnasium-robotics 1.4.2 (``AntMaze_*-v5``, ``-v4``, ``-v3``) as cypool
specs.

AntMazeEnv (ant_maze_v5 / ant_maze_v4) is maze_v4.MazeEnv around gymnasium's Ant (v5 / v4
class); ant_maze_v3 is maze.py's MazeEnv around the v4 Ant (its own Maze, reset distance and
step order, no reset_target, no "success"). The installed package's ``Maze.make_maze`` merges
the maze's wall boxes and target site into gymnasium's ant.xml (maze_size_scaling 4,
maze_height 0.5); the Ant gets the user's Ant kwargs plus
exclude_current_positions_from_observation=False and reset_noise_scale=0.0 (so those two,
and the maze's own constructor arguments, cannot be passed: gymnasium-robotics raises a
TypeError). The per-step and per-reset work runs in ``_ant_maze.pyx``, which calls cypool's
Ant task kernels for the ant's step."""
from __future__ import annotations

import functools
import importlib
import os

import gymnasium as gym
import numpy as np

from cypool._core.spec import Built, FamilySpec, InfoKey, Kwarg, SpecFamily
from cypool._validate import MIN_ENV_BYTES, Options, check_pool_memory
from cypool.robotics._render import no_render, pixel_kwargs, render, render_kwargs
from cypool.robotics.maze import (_MAPS, RESET_OPTION_KEYS, check_kwargs as check_maze_kwargs,
                                  maze_module, maze_render, option_per_env,
                                  reset_options as maze_reset_options)

MAZE_SIZE_SCALING = 4          # AntMazeEnv's
MAZE_HEIGHT = 0.5
POSITION_NOISE_RANGE = 0.25    # MazeEnv's default (AntMazeEnv cannot pass another)
_LIMITS = {"UMaze": 700, "Open": 700, "Medium": 1000, "Large": 1000}

# id -> (the maps.py map, reward_type, max_episode_steps, AntMaze version)
ANT_MAZE = {f"AntMaze_{name}{suffix}-{version}": (map_name, reward,
                                                   _LIMITS[name.split("_")[0]], version)
            for version in ("v5", "v4", "v3")
            for suffix, reward in (("", "sparse"), ("Dense", "dense"))
            for name, map_name, _ in _MAPS}

# the Ant kwargs AntMazeEnv sets itself (passing them is gymnasium-robotics' TypeError)
_SET_BY_ANT_MAZE = ("exclude_current_positions_from_observation", "reset_noise_scale",
                    "xml_file")


def _ant_module(version):
    """cypool's task module of the Ant class AntMaze ``version`` wraps (v3 and v4: Ant-v4)."""
    from cypool.mujoco.tasks import ant, ant_v4
    return ant if version == "v5" else ant_v4


def ant_defaults(version):
    """The Ant kwargs a user may pass to AntMaze of this version, with their defaults."""
    from cypool.mujoco.family import user_defaults
    return {k: v for k, v in user_defaults(_ant_module(version)).items()
            if k not in _SET_BY_ANT_MAZE}


def ant_xml(version, xml_file):
    """The agent model AntMazeEnv merges into the maze: gymnasium's assets/ant.xml (the Ant
    class's module's), or v5's xml_file as given."""
    if xml_file is not None:
        if not isinstance(xml_file, (str, os.PathLike)):
            raise TypeError(f"xml_file must be None or a path, got {xml_file!r}")
        if not os.path.exists(xml_file):
            raise ValueError(f"xml_file: {xml_file} does not exist")
        return os.fspath(xml_file)
    ant_module = importlib.import_module("gymnasium.envs.mujoco.ant_v4")   # v5's folder too
    return os.path.join(os.path.dirname(ant_module.__file__), "assets/ant.xml")


def _ant_kw(version, kw):
    """The complete kwargs the Ant task's configure reads for the maze kwargs ``kw``: x and y
    left out of the ant's observation (the kernel writes them as the achieved goal)."""
    from cypool.mujoco.family import task_kwargs
    mod = _ant_module(version)
    ant = {k: kw[k] for k in ant_defaults(version)}
    ant["exclude_current_positions_from_observation"] = True
    ant["reset_noise_scale"] = 0.0
    return task_kwargs(mod, ant)


def check_kwargs(env_id, version, kw):
    from cypool.mujoco.family import check_task_kwargs
    kw = check_maze_kwargs(env_id, kw)
    check_task_kwargs(_ant_module(version), {k: kw[k] for k in ant_defaults(version)})
    return kw


def ant_maze_spec(env_id):
    from cypool.mujoco.family import _action_dtype_of, _extra_info, _load_actions, task_kind
    from cypool.mujoco._pool import MjPool
    from cypool.robotics import goals as goal_fns
    map_name, reward, limit, version = ANT_MAZE[env_id]
    maps, _, _ = maze_module()
    kwargs = dict(
        maze_map=Kwarg([list(r) for r in getattr(maps, map_name)], kind="any", scope="pool"),
        reward_type=Kwarg(reward, kind=Options(("sparse", "dense"),
                                               note="gymnasium-robotics' two rewards")),
        continuing_task=Kwarg(True, kind="bool"),
        reset_target=Kwarg(False, kind="bool"))
    kwargs.update(render_kwargs(width=480, height=480, camera_id=None, camera_name=None))
    if version == "v3":             # ant_maze_v3 has no reset_target
        del kwargs["reset_target"]
    if version == "v5":
        kwargs["xml_file"] = Kwarg(None, kind="any", scope="pool")
    kwargs.update({k: Kwarg(v, kind=task_kind(k, v)) for k, v in ant_defaults(version).items()})
    # placeholders: the built pool's spaces (the observation size follows the kwargs)
    space = gym.spaces.Dict(dict(
        achieved_goal=gym.spaces.Box(-np.inf, np.inf, (2,), np.float64),
        desired_goal=gym.spaces.Box(-np.inf, np.inf, (2,), np.float64),
        observation=gym.spaces.Box(-np.inf, np.inf, (1,), np.float64)))
    return FamilySpec(
        env_id, MjPool, space, gym.spaces.Box(-1.0, 1.0, (8,), np.float32), kwargs=kwargs,
        max_episode_steps=limit,
        check_kwargs=functools.partial(check_kwargs, env_id, version),
        render_fps=50, render=no_render, render_pixels=True,
        render_modes=("rgb_array", "depth_array"),
        build=functools.partial(_build, version=version),
        configure=_configure, load_actions=_load_actions, extra_info=_extra_info,
        action_dtype_of=_action_dtype_of,
        methods=goal_fns.hooks(),
        reset_option_keys=RESET_OPTION_KEYS, reset_options=_reset_options,
        reset_option_per_env=option_per_env)


class _State:
    """An AntMaze pool's facts: its Ant version, model, maze cells, sizes."""

    __slots__ = ("version", "model", "goals", "resets", "nu", "rows", "xml", "obs_dim",
                 "success_col")


def _row(st, kw):
    """The parameter row of one env's complete kwargs (_ant_maze's P_* layout) and the
    ant's observation size."""
    from cypool.robotics import _ant_maze as am
    ant_kw = _ant_kw(st.version, kw)
    ant_row, obs_dim = _ant_module(st.version).configure(st.model, ant_kw)
    cfrc = ant_kw["include_cfrc_ext_in_observation" if st.version == "v5"
                  else "use_contact_forces"]
    head = np.zeros(am.NPARAM)
    v3 = st.version == "v3"
    head[:am.P_OPTIONS] = (
               kw["reward_type"] == "dense", kw["continuing_task"], kw.get("reset_target", 0),
               POSITION_NOISE_RANGE, MAZE_SIZE_SCALING, len(st.goals), len(st.resets),
               am.NPARAM, am.NPARAM + len(ant_row), bool(cfrc),
               6 if st.version == "v5" else 0, *map(float, ant_kw["contact_force_range"]),
               st.version == "v5", -1 if v3 else st.success_col,
               0.5 if v3 else 0.5 * MAZE_SIZE_SCALING, v3)
    return np.concatenate([head, ant_row, st.goals.ravel(), st.resets.ravel()]), obs_dim


def _info_keys(version, kw, env_kwargs, model):
    """The Ant's info keys (as cypool's MuJoCo family reports them for its INFO list), then
    "success"; and the number of columns."""
    info, col = [], 0
    for key, width, dtype, on_step, on_reset, *at in _ant_module(version).INFO:
        if callable(dtype) and not isinstance(dtype, type):
            dtype = dtype(kw)
        if isinstance(dtype, str) and dtype in kw:
            dtype = np.float64 if env_kwargs is not None else np.dtype(type(kw[dtype]))
        first = at[0] if at else col
        if key is not None:
            info.append(InfoKey(key, dtype, width, on_step, on_reset, column=first))
        col = max(col, first + width)
    if version != "v3":
        info.append(InfoKey("success", np.bool_, 1, True, True, column=col))
    return info, col


def _build(fam, num_envs, num_threads, max_episode_steps, env_kwargs, *, version):
    from cypool._mujoco_import import import_mujoco
    from cypool.mujoco._pool import MjPool
    from cypool.robotics import _ant_maze as am
    _, maze_v4, _ = maze_module()
    if version == "v3":
        from gymnasium_robotics.envs.maze import maze as maze_v4    # its own Maze
    kw = fam.kwargs
    st = _State()
    st.version, st.rows = version, kw["maze_map"]
    st.xml = kw.get("xml_file")
    maze, path = maze_v4.Maze.make_maze(ant_xml(version, st.xml), kw["maze_map"],
                                        MAZE_SIZE_SCALING, MAZE_HEIGHT)
    try:
        st.goals = np.array(maze.unique_goal_locations, np.float64).reshape(-1, 2)
        st.resets = np.array(maze.unique_reset_locations, np.float64).reshape(-1, 2)
        if not len(st.goals) or not len(st.resets):     # v3's Maze: no empty-cell fallback
            raise ValueError(f"{fam.env_id}: maze_map needs a goal ('g' or 'c') and a reset "
                             f"('r' or 'c') cell in gymnasium-robotics' v3 mazes")
        mujoco = import_mujoco()
        st.model = model = mujoco.MjModel.from_xml_path(path)
        st.nu = model.nu
        ant_kw = _ant_kw(version, kw)
        info, st.success_col = _info_keys(version, ant_kw, env_kwargs, model)
        row, st.obs_dim = _row(st, kw)
        check_pool_memory(num_envs, MIN_ENV_BYTES + mujoco.MjData(model).nbuffer
                          + 8 * (2 * st.obs_dim + 8 + len(row) + model.nq + model.nv),
                          f"{fam.env_id} envs")
        engine = MjPool(path, num_envs, num_threads, max_episode_steps, am.task_capsule(),
                        np.stack([row] * num_envs), st.obs_dim + 4,
                        st.success_col + (version != "v3"),
                        task_state=am.TASK_STATE,
                        obs_split=[("obs", (2,)), ("obs.desired_goal", (2,)),
                                   ("obs.observation", (st.obs_dim,))],
                        **pixel_kwargs(fam.make_kwargs))
        # the Ant's MujocoRenderer: its default_camera_config, its "track" camera
        maze_render(engine, model, fam.make_kwargs, len(kw["maze_map"]),
                    MAZE_HEIGHT / 2 * MAZE_SIZE_SCALING,
                    camera=dict(ant_kw.get("default_camera_config") or {}))
    finally:
        try:
            os.remove(path)
        except OSError:
            pass
    space = gym.spaces.Dict(dict(
        achieved_goal=gym.spaces.Box(-np.inf, np.inf, (2,), np.float64),
        desired_goal=gym.spaces.Box(-np.inf, np.inf, (2,), np.float64),
        observation=gym.spaces.Box(-np.inf, np.inf, (st.obs_dim,), np.float64)))
    bounds = model.actuator_ctrlrange.copy().astype(np.float32)
    act_space = gym.spaces.Box(bounds[:, 0], bounds[:, 1], dtype=np.float32)
    return Built(engine, space, act_space, tuple(info), 50, st, render=render)


def _configure(fam, ids, kw):
    """Envs ``ids`` get the row of the complete kwargs ``kw`` (from their next step)."""
    st = fam.state
    if kw["maze_map"] != st.rows:
        raise ValueError(f"{fam.env_id}: maze_map must be the same for every env of a pool")
    if kw.get("xml_file") != st.xml:
        raise ValueError(f"{fam.env_id}: xml_file must be the same for every env of a pool")
    row, obs_dim = _row(st, kw)
    if obs_dim != st.obs_dim:
        raise ValueError(f"{fam.env_id}: member kwargs must not change the observation size")
    fam.engine.params[ids] = row


_SPECS: dict = {}


def spec_of(env_id):
    spec = _SPECS.get(env_id)
    if spec is None:
        spec = _SPECS[env_id] = ant_maze_spec(env_id)
    return spec


def _reset_options(fam, options, mask):
    from cypool.robotics import _ant_maze as am
    lim = 0.5 if fam.state.version == "v3" else 0.5 * MAZE_SIZE_SCALING
    return maze_reset_options(fam, options, mask, at=am.P_OPTIONS, scale=MAZE_SIZE_SCALING,
                              reset_distance=lim)


def make(env_id, *args, **kwargs):
    return SpecFamily(spec_of(env_id), env_id, *args, **kwargs)
