"""The PointMaze ids of gymnasium-robotics 1.4.2 (``PointMaze_*-v3``) as cypool specs.

The maze model is the one gymnasium-robotics generates: ``Maze.make_maze`` (the installed
package's) writes the agent's XML plus one box per wall cell to a temporary file, which the
pool loads and then deletes; the goal and reset cells (their (x, y) centres) are read from the
same ``Maze``. Everything per step and per reset runs in ``_point_maze.pyx``."""
from __future__ import annotations

import functools
import os

import gymnasium as gym
import numpy as np

from cypool._core.spec import Built, FamilySpec, InfoKey, Kwarg, SpecFamily
from cypool._validate import MIN_ENV_BYTES, Options, check_pool_memory
from cypool.robotics._render import no_render, pixel_kwargs, render, render_kwargs

INSTALL_HINT = 'pip install "cypool[robotics]"'
REFERENCE = "gymnasium-robotics 1.4.2"

# id -> (the maps.py map, reward_type, max_episode_steps), as gymnasium-robotics registers them
_MAPS = (("UMaze", "U_MAZE", 300), ("Open", "OPEN", 300),
         ("Open_Diverse_G", "OPEN_DIVERSE_G", 300), ("Open_Diverse_GR", "OPEN_DIVERSE_GR", 300),
         ("Medium", "MEDIUM_MAZE", 600), ("Medium_Diverse_G", "MEDIUM_MAZE_DIVERSE_G", 600),
         ("Medium_Diverse_GR", "MEDIUM_MAZE_DIVERSE_GR", 600), ("Large", "LARGE_MAZE", 800),
         ("Large_Diverse_G", "LARGE_MAZE_DIVERSE_G", 800),
         ("Large_Diverse_GR", "LARGE_MAZE_DIVERSE_GR", 800))
POINT_MAZE = {f"PointMaze_{name}{suffix}-v3": (map_name, reward, limit)
              for suffix, reward in (("", "sparse"), ("Dense", "dense"))
              for name, map_name, limit in _MAPS}

# the maze cells maze_v4.Maze.make_maze knows: 1 a wall, 0 empty, "r"/"g"/"c" reset, goal,
# combined
CELLS = (0, 1, "r", "g", "c")
MAZE_SIZE_SCALING = 1          # PointMazeEnv's
MAZE_HEIGHT = 0.4
POSITION_NOISE_RANGE = 0.25    # MazeEnv's default (PointMazeEnv cannot pass another)


def maze_module():
    """gymnasium-robotics' maze package (ImportError naming the extra when it is missing)."""
    try:
        from cypool._quiet import import_quietly

        import_quietly("gymnasium_robotics")
        from gymnasium_robotics.envs.maze import maps, maze_v4, point_maze
    except ImportError as exc:
        raise ImportError(f"cypool's maze ids need gymnasium-robotics, which generates "
                          f"their maze models: {INSTALL_HINT} ({exc})") from None
    return maps, maze_v4, point_maze


def _check_map(env_id, maze_map):
    """maze_map as a list of rows of CELLS values, rectangular (ValueError/TypeError)."""
    if not isinstance(maze_map, (list, tuple)) or not maze_map:
        raise TypeError(f"{env_id}: maze_map must be a non-empty list of rows, got {maze_map!r}")
    rows = []
    for i, row in enumerate(maze_map):
        if not isinstance(row, (list, tuple)) or not row:
            raise TypeError(f"{env_id}: maze_map row {i} must be a non-empty list, got {row!r}")
        cells = []
        for j, c in enumerate(row):
            ok = (c in ("r", "g", "c") if isinstance(c, str) else
                  isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_))
                  and c in (0, 1))
            if not ok:
                raise ValueError(f"{env_id}: maze_map[{i}][{j}] must be 1 (wall), 0 (empty), "
                                 f"'r' (reset), 'g' (goal) or 'c' (either), got {c!r}")
            cells.append(c if isinstance(c, str) else int(c))
        rows.append(cells)
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise ValueError(f"{env_id}: maze_map must be rectangular (every row {width} cells), "
                         f"got rows of {sorted({len(r) for r in rows})} cells")
    return rows


def _cells(rows, kind):
    return [(i, j) for i, row in enumerate(rows) for j, c in enumerate(row) if c == kind]


def check_maze(env_id, rows):
    """What make_maze would leave unusable: no goal cell or no reset cell (its asserts at the
    first reset), or one reset cell that is a goal cell too (its reset loop never ends)."""
    goals, resets, both = _cells(rows, "g"), _cells(rows, "r"), _cells(rows, "c")
    empty = _cells(rows, 0)
    if not goals and not resets and not both:
        goals = resets = empty
    elif not resets and not both:
        resets = empty
    elif not goals and not both:
        goals = empty
    goals, resets = goals + both, resets + both
    if not goals:
        raise ValueError(f"{env_id}: maze_map has no cell a goal can be placed in (a 'g' or "
                         f"'c' cell, or an empty 0 cell when there is none)")
    if not resets:
        raise ValueError(f"{env_id}: maze_map has no cell the ball can start in (an 'r' or "
                         f"'c' cell, or an empty 0 cell when there is none)")
    if len(set(resets)) == 1 and resets[0] in goals:
        raise ValueError(f"{env_id}: maze_map's only reset cell {resets[0]} is also a goal "
                         f"cell: gymnasium-robotics would draw reset cells forever")


def check_kwargs(env_id, kw):
    kw = dict(kw)
    rows = _check_map(env_id, kw["maze_map"])
    check_maze(env_id, rows)
    kw["maze_map"] = rows
    return kw


def point_maze_spec(env_id):
    map_name, reward, limit = POINT_MAZE[env_id]
    maps, _, _ = maze_module()
    default_map = [list(r) for r in getattr(maps, map_name)]
    kwargs = dict(
        maze_map=Kwarg(default_map, kind="any", scope="pool"),
        reward_type=Kwarg(reward, kind=Options(("sparse", "dense"),
                                               note="gymnasium-robotics' two rewards")),
        continuing_task=Kwarg(True, kind="bool"),
        reset_target=Kwarg(False, kind="bool"),
        **render_kwargs(width=480, height=480, camera_id=None, camera_name=None))
    space = gym.spaces.Dict(dict(
        observation=gym.spaces.Box(-np.inf, np.inf, (4,), np.float64),
        achieved_goal=gym.spaces.Box(-np.inf, np.inf, (2,), np.float64),
        desired_goal=gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)))
    from cypool.mujoco.family import _action_dtype_of, _extra_info, _load_actions
    from cypool.mujoco._pool import MjPool
    from cypool.robotics import goals as goal_fns
    return FamilySpec(
        env_id, MjPool, space, gym.spaces.Box(-1.0, 1.0, (2,), np.float32), kwargs=kwargs,
        max_episode_steps=limit, check_kwargs=functools.partial(check_kwargs, env_id),
        info=(InfoKey("success", np.bool_, 1, True, True),), render_fps=50,
        render=no_render, render_pixels=True, render_modes=("rgb_array", "depth_array"),
        build=_build, configure=_configure, load_actions=_load_actions,
        extra_info=_extra_info, action_dtype_of=_action_dtype_of,
        methods=goal_fns.hooks(),
        reset_option_keys=RESET_OPTION_KEYS, reset_options=_point_reset_options,
        reset_option_per_env=option_per_env)


class _State:
    """A PointMaze pool's facts: the maze's goal and reset cell centres, the action size."""

    __slots__ = ("goals", "resets", "nu", "rows")


def _row(st, kw):
    """The parameter row of one env's complete kwargs (_point_maze's P_* layout)."""
    from cypool.robotics import _point_maze as pm
    head = np.zeros(pm.NPARAM_FIXED)
    head[:7] = (kw["reward_type"] == "dense", kw["continuing_task"], kw["reset_target"],
                POSITION_NOISE_RANGE, MAZE_SIZE_SCALING, len(st.goals), len(st.resets))
    return np.concatenate([head, st.goals.ravel(), st.resets.ravel()])


def maze_render(engine, model, render_kw, rows, z, camera=None):
    """Set a maze pool up to render (its agent env's MujocoRenderer: PointMazeEnv's camera
    distance, or ``camera``), each frame with the target site at the env's goal (the task
    state's first 2 doubles), at height ``z`` (update_target_site_pos)."""
    from cypool.robotics._render import setup_render, site_id
    from cypool._mujoco_import import import_mujoco
    target = site_id(model, import_mujoco(), "target")
    setup_render(engine, model, render_kw,
                 {"distance": 12.5 if rows > 8 else 8.8} if camera is None else camera,
                 sites=[(target, [("task", 0), ("task", 1), ("const", z)])])


def _build(fam, num_envs, num_threads, max_episode_steps, env_kwargs):
    from cypool.mujoco._pool import MjPool
    from cypool.robotics import _point_maze as pm
    _, maze_v4, point_maze = maze_module()
    kw = fam.kwargs
    agent = os.path.join(os.path.dirname(os.path.realpath(point_maze.__file__)),
                         "../assets/point/point.xml")
    maze, path = maze_v4.Maze.make_maze(agent, kw["maze_map"], MAZE_SIZE_SCALING, MAZE_HEIGHT)
    st = _State()
    st.rows = kw["maze_map"]
    st.goals = np.array(maze.unique_goal_locations, np.float64).reshape(-1, 2)
    st.resets = np.array(maze.unique_reset_locations, np.float64).reshape(-1, 2)
    st.nu = 2
    row = _row(st, kw)
    check_pool_memory(num_envs, MIN_ENV_BYTES + 4096 + 8 * (20 + len(row)), f"{fam.env_id} envs")
    try:
        # the kernels read and write 2 positions, velocities and controls
        from cypool._mujoco_import import import_mujoco
        model = import_mujoco().MjModel.from_xml_path(path)
        if (model.nq, model.nv, model.nu) != (2, 2, 2):
            raise ValueError(f"{fam.env_id}: the installed gymnasium-robotics' point model has "
                             f"nq={model.nq}, nv={model.nv}, nu={model.nu}; cypool's PointMaze "
                             f"kernels serve {REFERENCE}'s (2, 2, 2)")
        engine = MjPool(path, num_envs, num_threads, max_episode_steps, pm.task_capsule(),
                        np.stack([row] * num_envs), 8, 1, task_state=pm.TASK_STATE,
                        obs_split=[("obs", (2,)), ("obs.desired_goal", (2,)),
                                   ("obs.observation", (4,))], **pixel_kwargs(fam.make_kwargs))
        maze_render(engine, model, fam.make_kwargs, len(kw["maze_map"]),
                    MAZE_HEIGHT / 2 * MAZE_SIZE_SCALING)
    finally:
        try:
            os.remove(path)
        except OSError:
            pass
    return Built(engine, state=st, render=render)


def _configure(fam, ids, kw):
    """Envs ``ids`` get the row of the complete kwargs ``kw`` (from their next step; the
    reward type and flags are read at every step)."""
    st = fam.state
    if kw["maze_map"] != st.rows:
        raise ValueError(f"{fam.env_id}: maze_map must be the same for every env of a pool")
    fam.engine.params[ids] = _row(st, kw)


RESET_OPTION_KEYS = ("goal_cell", "reset_cell")


def _option_cells(fam, name, value):
    """``options[name]`` as a checked (num_envs, 2) int64 array, or None."""
    if value is None:
        return None
    rows, n = fam.state.rows, fam.engine.num_envs
    try:
        a = np.asarray(value)
    except (ValueError, TypeError):
        a = None
    if a is None or a.dtype.kind not in "iu":
        raise ValueError(f"{fam.env_id}: options[{name!r}] must be integer (row, col) "
                         f"cells, got {value!r}")
    if a.shape == (2,):
        a = np.broadcast_to(a, (n, 2))
    elif a.shape != (n, 2):
        raise ValueError(f"{fam.env_id}: options[{name!r}] must be one (row, col) cell, "
                         f"shape (2,), or one per env, shape ({n}, 2); got shape {a.shape}")
    for i, (r, c) in enumerate(a.tolist()):
        if not (0 <= r < len(rows) and 0 <= c < len(rows[0])):
            raise ValueError(f"{fam.env_id}: options[{name!r}] of env {i} is ({r}, {c}), "
                             f"outside the {len(rows)}x{len(rows[0])} maze_map")
        if rows[r][c] == 1:
            raise ValueError(f"{fam.env_id}: options[{name!r}] of env {i} is ({r}, {c}), "
                             f"a wall cell")
    return a.astype(np.int64)


def option_per_env(key, value):
    """FamilySpec.reset_option_per_env: a (num_envs, 2) array of cells (two or more axes) is
    one cell per env; a (row, col) cell serves every env."""
    try:
        return np.ndim(value) >= 2
    except ValueError:              # ragged: refused by _option_cells
        return False


def reset_options(fam, options, mask, *, at, scale, reset_distance):
    """The FamilySpec hook of gymnasium-robotics' ``goal_cell`` and ``reset_cell`` reset
    options: each a (row, col) cell for every env reset, or a (num_envs, 2) array of one cell
    per env; the cell's centre replaces that cell's draw (the position noise is still drawn),
    for that reset only (autoresets draw again). Checks them (ValueError; nothing changes)
    and returns the function that writes them into the rows of the envs of ``mask`` (the
    option columns from ``at``) for their next reset, after the pool has drained its queued
    autoresets."""
    goal = _option_cells(fam, "goal_cell", options.get("goal_cell"))
    reset = _option_cells(fam, "reset_cell", options.get("reset_cell"))
    rows = fam.state.rows
    xc, yc = len(rows[0]) / 2 * scale, len(rows) / 2 * scale     # Maze's map centre

    def centres(cells):         # Maze.cell_rowcol_to_xy
        return np.array([((c + 0.5) * scale - xc, yc - (r + 0.5) * scale)
                         for r, c in cells.tolist()], np.float64)

    gxy = None if goal is None else centres(goal)
    rxy = None if reset is None else centres(reset)
    if gxy is not None and rxy is None:
        # a goal no reset cell can be drawn far enough from, whatever the goal's noise:
        # gymnasium-robotics would draw reset cells forever
        far = np.sqrt(2.0) * POSITION_NOISE_RANGE * scale
        resets = fam.state.resets
        for i in np.flatnonzero(mask):
            d = np.sqrt(((resets - gxy[i]) ** 2).sum(axis=1)).max()
            if d + far <= reset_distance:
                raise ValueError(f"{fam.env_id}: options['goal_cell'] of env {i} is "
                                 f"{tuple(goal[i].tolist())}, too close to every reset "
                                 f"cell (gymnasium-robotics would draw reset cells "
                                 f"forever); give a reset_cell too")

    def apply():
        p = fam.engine.params
        p[:, at:at + 6] = 0.0
        if gxy is not None:
            p[mask, at] = 1.0
            p[mask, at + 1:at + 3] = gxy[mask]
        if rxy is not None:
            p[mask, at + 3] = 1.0
            p[mask, at + 4:at + 6] = rxy[mask]
    return apply


def _point_reset_options(fam, options, mask):
    from cypool.robotics import _point_maze as pm
    return reset_options(fam, options, mask, at=pm.P_OPTIONS, scale=MAZE_SIZE_SCALING,
                         reset_distance=0.5 * MAZE_SIZE_SCALING)


def make(env_id, *args, **kwargs):
    return SpecFamily(spec_of(env_id), env_id, *args, **kwargs)


_SPECS: dict = {}


def spec_of(env_id):
    spec = _SPECS.get(env_id)
    if spec is None:
        spec = _SPECS[env_id] = point_maze_spec(env_id)
    return spec
