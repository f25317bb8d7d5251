"""The dm_control suite on cypool's MuJoCo engine as specs: :func:`task_spec` is each id's
:class:`cypool.api.FamilySpec`, whose build hook makes one pool of one task on MjPool.

Env i after ``reset(seed=s)`` is ``suite.load(domain, task, task_kwargs={"random": s + i})``
after its ``reset()``: each env's random stream is numpy's MT19937 seeded as
``RandomState(s + i)`` seeds it, drawn with RandomState's legacy algorithms (cypool/dm_control/
_dmc.pxd); the kernels replay dm_control's physics calls (``Physics.reset``,
``initialize_episode``, ``after_reset``, the legacy ``Physics.step``) on the same libmujoco.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import math
import os

import gymnasium as gym
import numpy as np

from cypool._core.spec import Built, FamilySpec, Kwarg
from cypool._mujoco_import import import_mujoco
from cypool._validate import (INT64_END, MAX_MUJOCO_FRAME_SKIP, MIN_ENV_BYTES,
                              check_pool_memory)
from cypool.mujoco._compile import compile_xml
from cypool.errors import check_known_kwargs

mujoco = import_mujoco()

# domain (its module under cypool.dm_control.tasks) -> the tasks cypool serves
SUITE = {
    "acrobot": ("swingup", "swingup_sparse"),
    "ball_in_cup": ("catch",),
    "cartpole": ("balance", "balance_sparse", "swingup", "swingup_sparse", "two_poles",
                 "three_poles"),
    "cheetah": ("run",),
    "finger": ("spin", "turn_easy", "turn_hard"),
    "dog": ("stand", "walk", "trot", "run", "fetch"),
    "fish": ("upright", "swim"),
    "hopper": ("stand", "hop"),
    "lqr": ("lqr_2_1", "lqr_6_2"),
    "manipulator": ("bring_ball", "bring_peg", "insert_ball", "insert_peg"),
    "humanoid": ("stand", "walk", "run", "run_pure_state"),
    "humanoid_CMU": ("stand", "walk", "run"),
    "pendulum": ("swingup",),
    "point_mass": ("easy", "hard"),
    "quadruped": ("walk", "run", "escape", "fetch"),
    "reacher": ("easy", "hard"),
    "stacker": ("stack_2", "stack_4"),
    "swimmer": ("swimmer6", "swimmer15"),
    "walker": ("stand", "walk", "run"),
}
KWARGS = {"time_limit": None, "environment_kwargs": None, "flatten_obs": False,
          # pixels: physics.render(height, width, camera_id)'s frames (dm_control's defaults
          # 240 x 320 from camera -1), as observations (from_pixels: pixels.Wrapper's
          # {"pixels": frame}) and for render_mode="rgb_array"; render_kwargs: Shimmy's dict
          # of the same three
          # channels_first: (3, H, W) frames (EnvPool's layout, for cypool.envpool)
          "from_pixels": False, "pixels_only": True, "channels_first": False, "width": None,
          "height": None, "camera_id": None, "render_kwargs": None,
          # the Dict's key order: "sorted", gymnasium's Dict of a dict (Shimmy's spaces under
          # the same ids, so FlattenObservation gives Shimmy's vectors); "dm_control", the
          # observation_spec's order (EnvPool's, for cypool.envpool)
          "obs_key_order": "sorted"}
OBS_KEY_ORDERS = ("sorted", "dm_control")
RENDER_DEFAULTS = {"width": 320, "height": 240, "camera_id": -1}
_ENV_KWARGS = ("control_timestep", "n_sub_steps")
PREFIX = "dm_control/"
TASK_STATE = 9          # doubles of persistent state per env (_dmc.pxd: T_*); a module's
                        # TASK_STATES may give a task more (quadruped escape: its terrain bumps)
PER_ENV = ("time_limit", "environment_kwargs")   # kwargs that may differ between envs
T_RESTORED = 2          # _dmc.pxd's slot the pool marks in each env restored by set_state


def domain_module(domain):
    return importlib.import_module(f"cypool.dm_control.tasks.{domain}")


def env_ids():
    return [f"{PREFIX}{d}-{t}-v0" for d, tasks in SUITE.items() for t in tasks]


def parse_id(env_id):
    """(domain, task) of ``dm_control/<domain>-<task>-v0``."""
    name = env_id[len(PREFIX):-len("-v0")]
    for d in SUITE:
        if name.startswith(d + "-"):
            return d, name[len(d) + 1:]
    raise ValueError(f"cypool: unknown dm_control id {env_id!r}")


def suite_dir():
    """dm_control's suite folder (its XML models): dm_control must be installed."""
    spec = importlib.util.find_spec("dm_control")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("cypool's dm_control ids load dm_control's own models, and "
                          "dm_control is not installed: pip install \"cypool[dm-control]\" "
                          "(dm-control==1.0.52, the release its numbers are tested against)")
    return os.path.join(list(spec.submodule_search_locations)[0], "suite")


def _number(env_id, name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                              np.floating)):
        raise TypeError(f"{env_id}: {name} must be a number, got {v!r}")
    try:
        return float(v)
    except OverflowError:       # an int beyond the floats: larger than any float
        return math.inf


def merge_kwargs(env_id, mod, kwargs):
    """The complete, checked kwargs: time_limit (seconds, dm_control's task kwarg),
    environment_kwargs (control_timestep or n_sub_steps), flatten_obs."""
    check_known_kwargs(env_id, kwargs, KWARGS)
    kw = dict(KWARGS)
    kw.update(kwargs)
    if kw["time_limit"] is None:
        kw["time_limit"] = mod.TIME_LIMIT
    tl = _number(env_id, "time_limit", kw["time_limit"])
    # dm_control takes any number, but NaN never ends an episode (step_count >= NaN is
    # False) and a limit <= 0 ends every episode after its first step: refused. inf, and any
    # limit beyond the steps an episode can count, mean no limit (step_limit)
    if not tl > 0:
        raise ValueError(f"{env_id}: time_limit must be > 0 seconds (inf, or any larger "
                         f"limit than an episode can reach: no limit), got {tl!r} (dm_control "
                         "would never end an episode for NaN, and end every episode after "
                         "one step for a limit <= 0)")
    ek = kw["environment_kwargs"]
    if ek is not None:
        if not isinstance(ek, dict):
            raise TypeError(f"{env_id}: environment_kwargs must be a dict, got {ek!r}")
        bad = [k for k in ek if k not in _ENV_KWARGS]
        if bad:
            raise ValueError(f"{env_id}: environment_kwargs {bad} are not supported (cypool "
                             f"takes {list(_ENV_KWARGS)}; flatten_obs=True replaces "
                             "flat_observation)")
        if len(ek) > 1:
            raise ValueError("Both n_sub_steps and control_timestep were supplied.")
    for key in ("flatten_obs", "from_pixels", "pixels_only", "channels_first"):
        if not isinstance(kw[key], (bool, np.bool_)):
            raise TypeError(f"{env_id}: {key} must be a bool, got {kw[key]!r}")
    if not isinstance(kw["obs_key_order"], str) or kw["obs_key_order"] not in OBS_KEY_ORDERS:
        raise ValueError(f"{env_id}: obs_key_order must be 'sorted' (gymnasium's sorted Dict, "
                         "as Shimmy's spaces) or 'dm_control' (the observation_spec's order), "
                         f"got {kw['obs_key_order']!r}")
    if kw["from_pixels"] and kw["flatten_obs"]:
        raise ValueError(f"{env_id}: flatten_obs=True and from_pixels=True cannot be combined "
                         "(the observation is the frame)")
    if kw["channels_first"] and not kw["from_pixels"]:
        raise ValueError(f"{env_id}: channels_first=True needs from_pixels=True (it lays out "
                         "the pixel observations)")
    rk = kw["render_kwargs"]
    if rk is not None:
        if not isinstance(rk, dict):
            raise TypeError(f"{env_id}: render_kwargs must be a dict, got {rk!r}")
        bad = [k for k in rk if k not in RENDER_DEFAULTS and k != "depth"]
        if bad:
            raise ValueError(f"{env_id}: render_kwargs {bad} are not supported (cypool renders "
                             f"physics.render's {list(RENDER_DEFAULTS) + ['depth']})")
        depth = rk.get("depth", False)
        if not isinstance(depth, (bool, np.bool_)):
            raise TypeError(f"{env_id}: render_kwargs depth must be a bool, got {depth!r}")
        if depth and kw["from_pixels"]:
            raise ValueError(f"{env_id}: render_kwargs depth=True is served by render() only; "
                             "from_pixels observations are RGB frames (depth observations "
                             "are not served yet)")
        both = [k for k in rk if k in RENDER_DEFAULTS and kw[k] is not None]
        if both:
            raise ValueError(f"{env_id}: {both} given both as kwargs and in render_kwargs")
    return kw


def render_setup(env_id, model, kw):
    """(width, height, camera id) of physics.render(height, width, camera_id), checked as
    dm_control's Camera checks them (a ValueError here, before any env exists)."""
    from cypool._validate import check_int

    rk = dict(RENDER_DEFAULTS)
    rk.update(kw["render_kwargs"] or {})
    rk.update({k: kw[k] for k in RENDER_DEFAULTS if kw[k] is not None})
    width = check_int("width", rk["width"], 1, 1 << 14)
    height = check_int("height", rk["height"], 1, 1 << 14)
    bw, bh = int(model.vis.global_.offwidth), int(model.vis.global_.offheight)
    if width > bw:
        raise ValueError(f"{env_id}: image width {width} > framebuffer width {bw} (dm_control "
                         "refuses it too): reduce the width, or give the model a larger "
                         "<visual><global offwidth=.../></visual>")
    if height > bh:
        raise ValueError(f"{env_id}: image height {height} > framebuffer height {bh} "
                         "(dm_control refuses it too): reduce the height, or give the model a "
                         "larger <visual><global offheight=.../></visual>")
    cam = rk["camera_id"]
    if isinstance(cam, str):
        cid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, cam)
        if cid < 0:
            names = [model.camera(k).name for k in range(model.ncam)]
            raise ValueError(f"{env_id}: the model has no camera named {cam!r} (its cameras: "
                             f"{names})")
        cam = cid
    if isinstance(cam, (bool, np.bool_)) or not isinstance(cam, (int, np.integer)):
        raise TypeError(f"{env_id}: camera_id must be an int or a camera name, got {cam!r}")
    cam = int(cam)
    if cam < -1:
        raise ValueError(f"{env_id}: camera_id cannot be smaller than -1, got {cam}")
    if cam >= model.ncam:
        raise ValueError(f"{env_id}: the model has {model.ncam} fixed cameras: camera_id={cam} "
                         "is invalid")
    return width, height, cam


def render_camera(model, camera_id):
    """dm_control's Camera's mjvCamera, as the pool's per-env camera settings: -1, the free
    camera of mjv_defaultFreeCamera; k >= 0, a default mjvCamera that the pool makes FIXED
    on camera k."""
    cam = mujoco.MjvCamera()
    if camera_id == -1:
        mujoco.mjv_defaultFreeCamera(model, cam)
    if cam.orthographic:
        raise ValueError("cypool: an orthographic free camera is not supported")
    return {"distance": float(cam.distance), "azimuth": float(cam.azimuth),
            "elevation": float(cam.elevation), "lookat": [float(x) for x in cam.lookat],
            "trackbodyid": int(cam.trackbodyid)}


def max_geom(model):
    """dm_control's MjvScene size: max(1000, its estimate of the renderable geoms)."""
    frames = max(model.nbody, model.ngeom, model.nsite, model.ncam, model.nlight)
    return max(1000, 3 * frames + 4 * model.ngeom + 3 * model.nbody + model.nsite
               + model.ntendon + model.njnt + model.nu + model.nskin + model.ncam
               + model.nlight)


def n_sub_steps(env_id, mod, kw, timestep):
    """control.Environment's n_sub_steps; the task's control_timestep and environment_kwargs
    are combined as dm_control's task functions combine them (and refused where they are)."""
    ek = dict(kw["environment_kwargs"] or {})
    if mod.CONTROL_TIMESTEP is not None:
        if "control_timestep" in ek:
            raise TypeError(f"{env_id}: control.Environment got multiple values for keyword "
                            "argument 'control_timestep' (this task sets its own)")
        if "n_sub_steps" in ek:
            raise ValueError("Both n_sub_steps and control_timestep were supplied.")
        ek["control_timestep"] = mod.CONTROL_TIMESTEP
    # One env's step runs n_sub_steps MuJoCo steps natively (the kernels' C int), where
    # Ctrl-C cannot stop them: bounded as the MuJoCo family bounds frame_skip
    if "n_sub_steps" in ek:
        n = ek["n_sub_steps"]
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"{env_id}: n_sub_steps must be an int >= 1, got {n!r}")
        if n > MAX_MUJOCO_FRAME_SKIP:
            raise ValueError(f"{env_id}: environment_kwargs n_sub_steps must be <= "
                             f"{MAX_MUJOCO_FRAME_SKIP}, got {int(n)}: it is the number of "
                             "MuJoCo steps per env step, run natively without a Ctrl-C check "
                             "(as MuJoCo's frame_skip); no real use needs more")
        return int(n)
    if "control_timestep" in ek:
        ct = _number(env_id, "control_timestep", ek["control_timestep"])
        if not math.isfinite(ct):   # dm_control's round() raises OverflowError / ValueError
            raise ValueError(f"{env_id}: environment_kwargs control_timestep must be a finite "
                             f"number of seconds, got {ct!r}")
        if ct < timestep:
            raise ValueError(f"Control timestep ({ct}) cannot be smaller than physics "
                             f"timestep ({timestep}).")
        if abs(ct / timestep - round(ct / timestep)) > 1e-8:
            raise ValueError(f"Control timestep ({ct}) must be an integer multiple of physics "
                             f"timestep ({timestep})")
        n = int(round(ct / timestep))
        if n > MAX_MUJOCO_FRAME_SKIP:
            raise ValueError(f"{env_id}: environment_kwargs control_timestep={ct!r} is "
                             f"{ct / timestep:.17g} physics timesteps of {timestep}, but "
                             f"n_sub_steps must be <= {MAX_MUJOCO_FRAME_SKIP} (control_timestep <= "
                             f"{MAX_MUJOCO_FRAME_SKIP * timestep!r}): they are the MuJoCo "
                             "steps per env step, run natively without a Ctrl-C check (as "
                             "MuJoCo's frame_skip); no real use needs more")
        return n
    return 1


def step_limit(time_limit, timestep, n_sub):
    """Steps until the time limit's LAST step: the first count >= time_limit / (dt * n_sub),
    dm_control's test (0: none). inf is none, as in dm_control; so is a limit no episode can
    reach, the engine's step counters being int64 (dm_control never ends those either)."""
    limit = _number("dm_control", "time_limit", time_limit) / (timestep * n_sub)
    if limit >= INT64_END:      # inf included (a finite limit may overflow to it)
        return 0
    return max(1, math.ceil(limit))


# ---------------------------------------------------------------------------- the spec
@functools.lru_cache(maxsize=None)
def task_spec(env_id):
    """The FamilySpec of ``dm_control/<domain>-<task>-v0``: its kwargs, its hooks and its
    EnvPool names (no model is loaded: ``build`` loads it)."""
    from cypool.dm_control.envpool_names import envpool_names

    domain, task = parse_id(env_id)
    # placeholders: build gives the spaces of the model it loads
    box = gym.spaces.Box(-np.inf, np.inf, (1,), np.float64)
    return FamilySpec(
        env_id, "cypool.mujoco._pool:MjPool", box, box,
        kwargs={k: Kwarg(v, kind="any", scope="env" if k in PER_ENV else "pool")
                for k, v in KWARGS.items()},
        check_kwargs=functools.partial(_check_kwargs, env_id, domain),
        render=_render, render_modes=("rgb_array",),     # build binds it to the pool's model
        envpool=envpool_names(domain, task, SUITE),
        build=functools.partial(_build, domain=domain, task=task), configure=_configure,
        load_actions=_load_actions, seed=_seed,
        seed_bound=2 ** 32,         # an env's seed seeds a RandomState (_seed)
        extra_info=_extra_info, check_env_kwargs=_check_env_kwargs,
        set_max_episode_steps=_set_max_episode_steps)


def _check_kwargs(env_id, domain, kw):
    """The spec's check_kwargs: time_limit None is the task's; everything checked."""
    return merge_kwargs(env_id, domain_module(domain), kw)


class _State:
    """A dm_control pool's own facts (its family's ``state``): the domain's module, the
    model, the action size, the pool's max_episode_steps, each env's step limit from its
    time_limit (``own_limit``, which max_episode_steps can only shorten) and, for tasks
    with a model per env, those models."""

    __slots__ = ("env_id", "mod", "model", "nu", "max_steps", "own_limit", "env_models")

    def steps(self, kw):
        """(n_sub_steps, step limit) of an env's complete kwargs (limit 0: none), capped by
        the pool's max_episode_steps."""
        timestep = self.model.opt.timestep
        n_sub = n_sub_steps(self.env_id, self.mod, kw, timestep)
        limit = step_limit(kw["time_limit"], timestep, n_sub)
        if self.max_steps:
            limit = min(limit, self.max_steps) if limit else self.max_steps
        return n_sub, limit


def _build(fam, num_envs, num_threads, max_episode_steps, env_kwargs, *, domain, task):
    """One pool of one task on MjPool. Per env (env_kwargs, populations): time_limit and
    environment_kwargs (PER_ENV), given by _configure after the build."""
    from cypool.mujoco._pool import MjPool

    env_id, kw = fam.env_id, fam.kwargs
    mod = domain_module(domain)
    if task not in mod.TASKS:
        raise ValueError(f"cypool: unknown dm_control task {env_id!r}")
    path = mod.model_path(task, suite_dir()) if hasattr(mod, "model_path") else \
        os.path.join(suite_dir(), f"{domain}.xml")
    st = _State()
    st.env_id, st.mod, st.max_steps, st.env_models = env_id, mod, max_episode_steps, None
    st.model = model = compile_xml(path)
    prm, layout, edits = mod.configure(model, task)
    n_sub, limit = st.steps(kw)
    prm[0] = n_sub
    for k in env_kwargs or ():          # every env's checked before any env exists
        st.steps(k)
    sizes = [int(np.prod(shape, dtype=np.int64)) for _, shape in layout]
    obs_dim = sum(sizes)
    env_models = task in getattr(mod, "ENV_MODEL_TASKS", ())
    task_state = max(TASK_STATE, getattr(mod, "TASK_STATES", {}).get(task, TASK_STATE))
    # the render settings are checked whether or not this pool renders (before any env)
    width, height, camera_id = render_setup(env_id, model, kw)
    pixels = bool(kw["from_pixels"])
    check_pool_memory(num_envs, MIN_ENV_BYTES + mujoco.MjData(model).nbuffer
                      + 8 * (3 * obs_dim + len(prm) + model.nq + model.nv + task_state)
                      + (2 * model.nbuffer if env_models else 0)
                      + (6 * width * height if pixels else 0),
                      f"{env_id} envs")
    split = structure = None
    pixels_only = bool(kw["pixels_only"])
    ordered = _key_order(kw["obs_key_order"])
    if pixels:         # pixels.Wrapper: {"pixels": frame}, after the state keys
        structure = ("dict", ordered({**({} if pixels_only else {
            key: f"state.{key}" for key, _ in layout}), "pixels": "obs"}))
    elif not kw["flatten_obs"]:
        # the kernels write dm_control's order: the pool splits it in that order, and the
        # structure names each key's output in the Dict's order
        split = [("obs" if k == 0 else f"obs.{key}", shape)
                 for k, (key, shape) in enumerate(layout)]
        structure = ("dict", ordered({key: name for (key, _), (name, _) in zip(layout, split)}))
    perm = None
    if kw["flatten_obs"] and not pixels:
        # one vector, its keys in the chosen order (sorted: FlattenObservation's of Shimmy's
        # Dict); the pool gathers it from the kernel's dm_control order
        starts, at = {}, 0
        for key, shape in layout:
            size = int(np.prod(shape, dtype=np.int64))
            starts[key] = np.arange(at, at + size)
            at += size
        perm = np.concatenate([starts[key] for key in ordered(starts)]) if layout else None
        split = [("obs", (obs_dim,))] if perm is not None else None
    engine = MjPool(path, num_envs, num_threads, limit, mod.task_capsule(task),
                    np.tile(np.asarray(prm, np.float64), (num_envs, 1)), obs_dim, 0,
                    (height, width) if pixels else None, bool(kw["channels_first"]),
                    task_state, split, perm)
    engine.set_restore_slot(T_RESTORED)
    # each env's step limit from its time_limit (0: none), which a population's
    # max_episode_steps can only shorten (_set_max_episode_steps)
    st.own_limit = np.full(num_envs, limit, np.int64)
    for field, index, value in edits:
        engine.model_set(field, index, value)
    # tasks whose dm_control model differs per env (lqr's drawn stiffnesses, fish swim's
    # target, ...) keep a model per env: the module compiles them and names them in each
    # env's parameter row. The engine draws each env with the model it last stepped with
    if env_models:
        st.env_models, columns = mod.env_models(path, task, num_envs)
        rows = np.array(engine.params, dtype=np.float64)
        for col, values in columns.items():
            rows[:, col] = values
        engine.set_params(rows)
        # what set_state must bring in line with a restored env (its models)
        hook = getattr(mod, "restore_hook", lambda task: None)(task)
        if hook is not None:
            engine.set_restore_hook(hook)
    # dm_control's MjvOption: MuJoCo's defaults, rangefinder rays not drawn (quadruped
    # escape's rangefinders)
    engine.setup_render(width, height, camera_id, render_camera(model, camera_id),
                        {int(mujoco.mjtVisFlag.mjVIS_RANGEFINDER): False}, max_geom(model))
    if pixels and not pixels_only:
        # the state keys are views of the pool's "state" output (each env's whole state
        # observation, written by the kernel next to its frame), under the names
        # the observation structure gives them; final_obs reads the final twins alike
        for outputs in (engine.outputs, engine.final_outputs):
            state, col = outputs["state"], 0
            for (key, shape), size in zip(layout, sizes):
                outputs[f"state.{key}"] = state[:, col:col + size].reshape(
                    (num_envs,) + tuple(shape))
                col += size
    if pixels:      # the caller's GL context now: a missing driver is a clear error
        from cypool.mujoco.family import gl_backend_request
        engine.open_pixel_renderer(gl_backend_request())
    st.nu = model.nu
    lo, hi = model.actuator_ctrlrange[:, 0].copy(), model.actuator_ctrlrange[:, 1].copy()
    unlimited = model.actuator_ctrllimited == 0
    lo[unlimited], hi[unlimited] = -mujoco.mjMAXVAL, mujoco.mjMAXVAL
    act_space = gym.spaces.Box(lo, hi, dtype=np.float64)
    state_spaces = [(key, gym.spaces.Box(-np.inf, np.inf, shape, np.float64))
                    for key, shape in layout]
    if pixels:
        state_spaces = ([] if pixels_only else state_spaces) + [
            ("pixels", gym.spaces.Box(0, 255, (3, height, width) if kw["channels_first"]
                                      else (height, width, 3), np.uint8))]
    if kw["flatten_obs"]:
        obs_space = gym.spaces.Box(-np.inf, np.inf, (obs_dim,), np.float64)
    else:
        # a list of pairs in the chosen order (gymnasium would sort a plain dict's keys)
        obs_space = gym.spaces.Dict(list(ordered(dict(state_spaces)).items()))
    # render_mode="rgb_array" is refused by make_vec where the frames would be wrong
    return Built(engine, obs_space, act_space,
                 render_fps=int(np.round(1.0 / (model.opt.timestep * n_sub))), state=st,
                 obs_structure=structure, render=functools.partial(_render, model=model))


def _key_order(order):
    """A dict's items in the Dict's key order: "sorted" as gymnasium's Dict sorts a plain
    dict's keys (Shimmy's ``dm_spec2gym_space`` passes it one), "dm_control" as given."""
    if order == "sorted":
        return lambda d: dict(sorted(d.items()))
    return dict


# ---------------------------------------------------------------------------- the hooks
def _check_env_kwargs(fam, kw):
    fam.state.steps(kw)     # n_sub_steps / control_timestep checked before any env changes


def _configure(fam, ids, kw):
    """Envs ``ids`` get the complete kwargs ``kw``: their n_sub_steps from their next step,
    their time limit from their next step (as set_max_episode_steps)."""
    st, engine = fam.state, fam.engine
    n_sub, limit = st.steps(kw)
    rows = engine.params          # in place: the kernels read these rows (P_NSUB)
    for i in ids.tolist():
        rows[i, 0] = n_sub
        st.own_limit[i] = limit
        engine.set_max_episode_steps(np.array([i], np.int64), limit)


def _set_max_episode_steps(fam, ids, limit):
    """A step limit of envs ``ids`` on top of their time_limit: the episode ends at
    whichever comes first, as a TimeLimit around dm_control's Environment (limit 0: the
    time limit alone)."""
    for i in ids.tolist():
        own = int(fam.state.own_limit[i])
        eff = min(own, limit) if own and limit else own or limit
        fam.engine.set_max_episode_steps(np.array([i], np.int64), eff)


def _seed(fam, i, seed):
    """RandomState(seed)'s stream for env i: numpy's MT19937 with its legacy seeding
    (None: fresh entropy), with no cached Gaussian. The façade and populations check a
    batch's seeds against ``seed_bound`` before any env is seeded."""
    bg = np.random.MT19937()
    if seed is not None:
        if not 0 <= seed < fam.seed_bound:
            raise ValueError(f"cypool: a dm_control env's seed is a RandomState seed in "
                             f"[0, 2**32), got {seed} for env {i}")
        bg._legacy_seeding(int(seed))
    fam.engine.set_generator(i, bg)
    fam.engine.clear_task_state(i)


def _render(engine, ids, mode, kwargs, *, model):
    """render_mode="rgb_array": (len(ids), height, width, 3) uint8 frames, those of
    physics.render(height, width, camera_id), rendered on the worker threads; with
    render_kwargs depth=True, (len(ids), height, width) float32 depths in model units,
    those of physics.render(..., depth=True). MUJOCO_GL is read at the first render,
    which makes the GL context."""
    from cypool.mujoco.family import gl_backend_request
    ids = np.ascontiguousarray(ids, np.int64)
    args = () if engine.has_renderer else (gl_backend_request(),)
    # render_kwargs depth=True: physics.render(depth=True)'s frames, made from the depth
    # buffer with dm_control's own numpy expression and clipping planes
    if not (kwargs["render_kwargs"] or {}).get("depth", False):
        return engine.render_rgb(ids, *args)
    z = engine.render_frames(ids, False, True, *args)[1]
    # dm_control's conversion, as it writes it (Python floats against the float32 buffer:
    # float32 arithmetic). No task's per-env model changes stat or vis, so the pool's
    # clipping planes are every env's.
    extent = model.stat.extent
    near = model.vis.map.znear * extent
    far = model.vis.map.zfar * extent
    return near / (1 - z * (1 - near / far))


def _load_actions(fam, actions, env_ids=None):
    """Validate an action batch and copy it into C (float64, as np.copyto into
    data.ctrl; dm_control does not clip)."""
    nu = fam.state.nu
    try:
        a = np.asarray(actions)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"actions must be an array of shape (num_envs, {nu}): {exc}") \
            from None
    n = fam.engine.num_envs if env_ids is None else len(env_ids)
    if a.shape != (n, nu):
        raise ValueError(f"actions must have shape ({n}, {nu}), got {a.shape}")
    if not (a.dtype.kind in "iu" or a.dtype in (np.float32, np.float64)):
        raise TypeError(f"actions must be float32 or float64 (or integers), got {a.dtype}")
    a = a.astype(np.float64)
    if not np.isfinite(a).all():
        bad = np.flatnonzero(~np.isfinite(a).all(axis=1)).tolist()
        raise ValueError(f"actions contain NaN or Inf (env(s) {bad}); dm_control raises "
                         "PhysicsError (mjWARN_BADCTRL) on them")
    fam.engine.set_actions(a, env_ids, False)


def _extra_info(fam, info, kinds, ids):
    """MuJoCo warnings raised during the step, per env (only where there were some)."""
    from cypool._core._engine import INFO_KINDS
    w = fam.engine.warnings if ids is None else fam.engine.warnings[ids]
    if not w.any():
        return
    hit = (kinds == INFO_KINDS["step"]) & (w > 0)
    if hit.any():
        info["mujoco_warnings"] = np.where(hit, w, 0)
        info["_mujoco_warnings"] = hit
