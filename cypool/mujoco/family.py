"""The MuJoCo family as specs: TASKS, the table of ids and their task modules, and
:func:`task_spec`, which builds each id's :class:`cypool.api.FamilySpec` from its task module
(kwargs, limit, info keys) with the hooks every MuJoCo pool shares (the model and the engine,
per-env parameter rows, float32/float64 actions, warnings, rendering) and its EnvPool names.
A new built-in task is its ``tasks/<name>.pyx`` and a row in TASKS (and, for cypool.envpool,
its EnvPool values in :mod:`cypool.mujoco.envpool_names`)."""
from __future__ import annotations

import functools
import importlib
import os
import warnings

import numpy as np
import gymnasium as gym

from cypool._mujoco_import import import_mujoco

from cypool._core._engine import INFO_KINDS
from cypool._numpy_blas import ROUTINE as DOT_ROUTINE
from cypool._validate import (MAX_MUJOCO_FRAME_SKIP, MIN_ENV_BYTES, Interval, check_int,
                              check_pool_memory, loop_count)
from cypool.mujoco.tasks._config import check_noise_scale
from cypool.mujoco._compile import compile_xml
from cypool.mujoco._pool import MjPool, GL_BACKENDS
from cypool._core.spec import Built, FamilySpec, InfoKey, Kwarg, NativeStep, SpecFamily

mujoco = import_mujoco()        # MUJOCO_GL cannot break it (read at the first render)

# module name under cypool.mujoco.tasks for each id
TASKS = {
    "Ant-v5": "ant",
    "HalfCheetah-v5": "half_cheetah",
    "Hopper-v5": "hopper",
    "Walker2d-v5": "walker2d",
    "Humanoid-v5": "humanoid",
    "HumanoidStandup-v5": "humanoidstandup",
    "InvertedPendulum-v5": "inverted_pendulum",
    "InvertedDoublePendulum-v5": "inverted_double_pendulum",
    "Reacher-v5": "reacher",
    "Swimmer-v5": "swimmer",
    "Pusher-v5": "pusher",
    # gymnasium's v4 classes: the v5 kernels with their v4 switch (tasks/*_v4.py). No
    # Pusher-v4: gymnasium refuses it on mujoco >= 3 (its model behaves differently there)
    "Ant-v4": "ant_v4",
    "HalfCheetah-v4": "half_cheetah_v4",
    "Hopper-v4": "hopper_v4",
    "Walker2d-v4": "walker2d_v4",
    "Humanoid-v4": "humanoid_v4",
    "HumanoidStandup-v4": "humanoidstandup_v4",
    "InvertedPendulum-v4": "inverted_pendulum_v4",
    "InvertedDoublePendulum-v4": "inverted_double_pendulum_v4",
    "Reacher-v4": "reacher_v4",
    "Swimmer-v4": "swimmer_v4",
}
# gymnasium's MujocoEnv render kwargs (pool-wide; they do not change the physics), plus
# EnvPool's from_pixels and channels-first pixel observations (EnvPool's layout)
RENDER_DEFAULTS = dict(width=480, height=480, camera_id=None, camera_name=None,
                       visual_options=None, max_geom=1000, from_pixels=False,
                       channels_first=False)
# gymnasium's MujocoEnv render modes but "human" (no window here)
RENDER_MODES = ("rgb_array", "depth_array", "rgbd_tuple")
ASSETS = os.path.join(os.path.dirname(gym.__file__), "envs", "mujoco", "assets")


_DOT_WARNED = False


def warn_if_inexact_dot(env_id, keys):
    """Warn once per process when a task's keys need numpy's BLAS dot and it was not found."""
    global _DOT_WARNED
    if not keys or DOT_ROUTINE.exact or _DOT_WARNED:
        return
    _DOT_WARNED = True
    warnings.warn(
        f"cypool: {env_id}'s {', '.join(keys)} use np.linalg.norm, and numpy's BLAS dot could "
        f"not be resolved ({DOT_ROUTINE.detail}); cypool uses a left-to-right sum, which may "
        "differ from numpy in the last bit on this CPU (see cypool.show_config())",
        RuntimeWarning, stacklevel=4)


_USER_TASKS: dict[str, str] = {}      # env id -> a user's task module (register_task)


def task_module(env_id):
    if env_id in _USER_TASKS:
        return importlib.import_module(_USER_TASKS[env_id])
    return importlib.import_module(f"cypool.mujoco.tasks.{TASKS[env_id]}")


TASK_API = ("ID", "MAX_EPISODE_STEPS", "DEFAULTS", "INFO", "configure", "task_capsule")
# the public task API's version (cypool.mujoco.api, api.pxd); a module's optional API_VERSION
# must equal it
TASK_API_VERSION = 1


def register_task(env_id: str, module: str, *, replace: bool = False) -> None:
    """Serve ``env_id`` with a MuJoCo task module of the user's (its importable name).

    The module has the shape of cypool's own tasks (``cypool/mujoco/tasks/*.pyx``): ``ID``,
    ``MAX_EPISODE_STEPS``, ``DEFAULTS`` (the kwargs with their defaults, ``xml_file`` and
    ``frame_skip`` among them), ``INFO`` (``[(key, width, dtype, on_step, on_reset), ...]``),
    ``configure(model, kwargs) -> (parameter row, observation size)``, and
    ``task_capsule()`` returning its two nogil kernels (``export_task`` of the public
    ``cypool/mujoco/api.pxd``; docs/mujoco_tasks.md), and optionally ``API_VERSION``
    (refused unless it is ``TASK_API_VERSION``); build it with
    ``cypool.mujoco.extension_kwargs()``. The id then works everywhere a
    built-in MuJoCo id does (make_vec, populations, ``gymnasium.make_vec("cypool/<id>")`` and
    ``gymnasium.make``, registered at once; the Ray backend, whose actors register the task
    again: ``module`` must be importable there).

    Registering the same id with the same module again is a no-op (a package that registers
    at import can be reloaded); another module for an id already served raises ValueError
    unless ``replace=True`` (which replaces a task of the user's, never a built-in one).
    """
    # everything is checked before the task is entered: a failed call registers nothing
    from cypool.registry import list_envs
    from cypool.registration import check_env_id, register_id

    check_env_id(env_id, "register_task")
    if not isinstance(replace, bool):
        raise TypeError(f"register_task: replace must be a bool, got {replace!r}")
    if not isinstance(module, str) or not module:
        raise TypeError(f"register_task: module must be an importable module name (str), got "
                        f"{module!r}")
    previous = _USER_TASKS.get(env_id)
    if previous == module:
        register_id(env_id)                      # the same registration: nothing to change
        return
    if env_id in TASKS or env_id in list_envs():
        if not (replace and previous is not None):
            what = ("a built-in task" if env_id in TASKS and previous is None
                    else f"task module {previous!r}" if previous is not None else "another family")
            hint = ("; pass replace=True to serve it with another module"
                    if previous is not None else "")
            raise ValueError(f"register_task: {env_id!r} is already served (by {what}){hint}")
    mod = importlib.import_module(module)
    missing = [name for name in TASK_API if not hasattr(mod, name)]
    if missing:
        raise TypeError(f"register_task: {module} lacks {missing} (see cypool.mujoco."
                        "register_task's documentation for a task module's shape)")
    version = getattr(mod, "API_VERSION", TASK_API_VERSION)
    if type(version) is not int or version != TASK_API_VERSION:
        raise ValueError(f"register_task: {module} was written for cypool's MuJoCo task API "
                         f"version {version!r}; this cypool implements {TASK_API_VERSION}")
    if not isinstance(mod.DEFAULTS, dict):
        raise TypeError(f"register_task: {module}.DEFAULTS must be a dict, got "
                        f"{type(mod.DEFAULTS).__name__}")
    for key in ("xml_file", "frame_skip"):
        if key not in mod.DEFAULTS:
            raise TypeError(f"register_task: {module}.DEFAULTS must have {key!r}")
    if previous is not None:                     # replace=True: gymnasium gets the new limit
        gym.registry.pop(f"cypool/{env_id}", None)
    _USER_TASKS[env_id] = module
    TASKS[env_id] = module
    try:
        register_id(env_id)
    except BaseException as exc:                 # all or nothing: the old task comes back
        _USER_TASKS.pop(env_id)
        del TASKS[env_id]
        if previous is not None:
            _USER_TASKS[env_id] = TASKS[env_id] = previous
            register_id(env_id)
        if isinstance(exc, gym.error.Error):
            raise ValueError(f"register_task: gymnasium refuses cypool/{env_id}: {exc}") from exc
        raise


def user_task_module(env_id: str) -> str | None:
    """The module a user's task ``env_id`` was registered with (None: a built-in task)."""
    return _USER_TASKS.get(env_id)


def unregister_task(env_id: str) -> None:
    """Forget a task registered with register_task, in gymnasium's registry too (the built-in
    ones stay)."""
    if _USER_TASKS.pop(env_id, None) is not None:
        del TASKS[env_id]
        gym.registry.pop(f"cypool/{env_id}", None)


def extension_kwargs() -> dict:
    """setuptools.Extension keyword arguments for building a task module against this cypool
    and the mujoco it runs with: include dirs (numpy, cypool's headers, MuJoCo's), numpy's
    random library, libmujoco, and the flags cypool's own tasks use (no FMA contraction:
    rewards round as numpy's do)."""
    import numpy

    here = os.path.dirname(os.path.abspath(__file__))
    mj = os.path.dirname(mujoco.__file__)
    lib = os.path.join(mj, f"libmujoco.so.{mujoco.__version__}")
    return dict(
        include_dirs=[numpy.get_include(), os.path.dirname(os.path.dirname(here)), here,
                      os.path.join(os.path.dirname(here), "_core"), os.path.join(mj, "include")],
        library_dirs=[os.path.join(numpy.get_include(), "..", "..", "random", "lib"),
                      os.path.join(numpy.get_include(), "..", "lib")],
        libraries=["npyrandom", "npymath", "m"],
        extra_compile_args=["-O2", "-ffp-contract=off", "-fno-math-errno"],
        extra_link_args=[lib, f"-Wl,-rpath,{mj}"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


def xml_path(xml_file):
    """gymnasium's expand_model_path."""
    if not isinstance(xml_file, (str, os.PathLike)):
        raise TypeError(f"xml_file must be a path, got {type(xml_file).__name__}")
    xml_file = os.fspath(xml_file)
    if xml_file.startswith((".", "/")):
        path = xml_file
    elif xml_file.startswith("~"):
        path = os.path.expanduser(xml_file)
    else:
        path = os.path.join(ASSETS, xml_file)
    if not os.path.exists(path):
        raise ValueError(f"xml_file: {path} does not exist")
    return path


def user_defaults(mod):
    """The task's kwargs a user may pass: its DEFAULTS less FIXED_KWARGS, the values its
    kernels read that gymnasium's constructor hard-codes (v4 tasks)."""
    fixed = getattr(mod, "FIXED_KWARGS", ())
    return {k: v for k, v in mod.DEFAULTS.items() if k not in fixed}


def task_kwargs(mod, kw):
    """The complete kwargs the task's configure reads: ``kw`` plus its fixed values."""
    return {**mod.DEFAULTS, **kw}


# one env's step runs frame_skip MuJoCo steps natively, where Ctrl-C cannot stop them
FRAME_SKIP_KIND = loop_count(1, MAX_MUJOCO_FRAME_SKIP, "MuJoCo steps per env step")
# the render kwargs' kinds (make scope; the camera id is checked against the model at build)
RENDER_KINDS = dict(width=Interval("int", 1, 1 << 14, closed="left"),
                    height=Interval("int", 1, 1 << 14, closed="left"),
                    max_geom=Interval("int", 1, 1 << 20, closed="left"),
                    camera_id="int", camera_name="str", from_pixels="bool",
                    channels_first="bool")


def task_kind(name, default):
    """A task kwarg's kind: frame_skip a loop count (an int, converted); a float default's a
    number kept as given ("real": gymnasium computes in its type, e.g. an int healthy_reward
    gives int64 info); any other ("any"): what gymnasium takes (a truthy flag, a path, a
    pair checked by check_task_kwargs, a body name or index)."""
    if name == "frame_skip":
        return FRAME_SKIP_KIND
    return "real" if isinstance(default, float) else "any"


def check_task_kwargs(mod, kw):
    """Check complete task kwargs (the spec's check_kwargs) beyond their kinds (task_kind):
    the (low, high) pairs and reset_noise_scale."""
    kw = dict(kw)
    for k, v in kw.items():
        if k.endswith("_range"):
            try:
                pair = tuple(float(x) for x in v)
            except (TypeError, ValueError):
                pair = ()
            if len(pair) != 2 or any(isinstance(x, (bool, np.bool_, str)) for x in v):
                raise TypeError(f"{k} must be a pair of numbers (low, high), got {v!r}")
            # gymnasium clips and compares with it as given (NaN rewards, or never healthy);
            # a range with a NaN end means nothing, so it is refused (open ends: +-inf)
            if any(x != x for x in pair):
                raise ValueError(f"{k} must be a (low, high) pair without NaN ends (use -inf "
                                 f"or inf for an open end), got {v!r}")
    if "reset_noise_scale" in kw:
        check_noise_scale(kw)
    return kw




def _render_setup(model, kw):
    """(width, height, camera id, visual options, max_geom), checked as gymnasium checks
    them (their kinds, RENDER_KINDS, first); a camera id gymnasium would pass to MuJoCo
    unchecked (which ends the process) is a ValueError here."""
    width, height, max_geom = kw["width"], kw["height"], kw["max_geom"]
    cid, name = kw["camera_id"], kw["camera_name"]
    if cid is not None and name is not None:
        raise ValueError("Both `camera_id` and `camera_name` cannot be specified at the same "
                         "time.")
    if cid is None:
        # gymnasium resolves the name ("track" when none is given, then discarded) and
        # falls back to its FREE camera (-1) when the model has no such camera
        cid = -1 if name is None else mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA,
                                                          name)
    cid = check_int("camera_id", cid, -1, model.ncam)
    vis = kw["visual_options"]
    if vis is not None and not isinstance(vis, dict):
        raise TypeError(f"visual_options must be a dict of mjtVisFlag -> bool, got {vis!r}")
    for flag in (vis or {}):
        check_int("visual_options flag", int(flag), 0, int(mujoco.mjtVisFlag.mjNVISFLAG))
    return width, height, cid, vis, max_geom


def gl_backend_request():
    """The GL backend MUJOCO_GL asks for, as gymnasium reads it (case-sensitive): "egl",
    "osmesa", or unset (also empty): EGL, then OSMesa when EGL cannot make a context.
    "glfw" and anything else are a ValueError."""
    value = os.environ.get("MUJOCO_GL")
    if value is None or value == "":
        return GL_BACKENDS["auto"]
    if value in ("egl", "osmesa"):
        return GL_BACKENDS[value]
    if value == "glfw":
        raise ValueError("MUJOCO_GL='glfw' is not supported: cypool renders MuJoCo offscreen "
                         "(headless), through EGL or OSMesa, and GLFW needs a window system. "
                         "Set MUJOCO_GL=egl or MUJOCO_GL=osmesa, or unset it (EGL, then "
                         "OSMesa)")
    raise ValueError(f"MUJOCO_GL must be 'egl' or 'osmesa' (or unset: EGL, then OSMesa when "
                     f"EGL cannot make a context), got {value!r}")


# ---------------------------------------------------------------------------- the spec
_SPECS: dict = {}       # (env id, task module) -> FamilySpec


def task_spec(env_id, mod=None):
    """The FamilySpec of MuJoCo id ``env_id`` (built once per task module); ``mod``: the
    task module, for an id another family serves with a task of its own (robotics'
    CoupledHalfCheetah-v0); by default the one TASKS names."""
    mod = task_module(env_id) if mod is None else mod
    key = (env_id, mod.__name__)
    spec = _SPECS.get(key)
    if spec is None:
        from cypool.mujoco.envpool_names import envpool_names

        kwargs = {k: Kwarg(v, kind=task_kind(k, v))
                  for k, v in user_defaults(mod).items()}
        # visual_options (a dict) and render_mode "any": checked at build / by make_vec
        kwargs.update({k: Kwarg(v, kind=RENDER_KINDS.get(k, "any"), scope="make") for k, v in
                       {**RENDER_DEFAULTS, "render_mode": None}.items()})
        spec = _SPECS[key] = FamilySpec(
            env_id, MjPool, gym.spaces.Box(-np.inf, np.inf, (1,), np.float64),
            gym.spaces.Box(-1, 1, (1,), np.float32), kwargs=kwargs,
            max_episode_steps=mod.MAX_EPISODE_STEPS,
            check_kwargs=functools.partial(check_task_kwargs, mod),
            render=_render, render_modes=RENDER_MODES, module=None,
            envpool=envpool_names(env_id, mod), build=functools.partial(_build, mod=mod),
            configure=_configure,
            load_actions=_load_actions, extra_info=_extra_info,
            action_dtype_of=_action_dtype_of,
            # the native step repeats _load_actions' checks (shape, dtype, finite) and casts
            native=NativeStep(actions=True))
    return spec


def MujocoFamily(env_id, num_envs, num_threads, max_episode_steps, kwargs,
                 member_kwargs=None):
    """The family of one MuJoCo pool (a :class:`cypool.api.SpecFamily` of ``task_spec``)."""
    return SpecFamily(task_spec(env_id), env_id, num_envs, num_threads, max_episode_steps,
                      kwargs, member_kwargs)


class _State:
    """A MuJoCo pool's own facts: its task module, model, model path, observation size and
    whether it has rendered (made its GL context)."""

    __slots__ = ("mod", "model", "path", "obs_dim", "nu", "rendered")


def _build(fam, num_envs, num_threads, max_episode_steps, env_kwargs, *, mod):
    env_id, kw, render_kw = fam.env_id, task_kwargs(mod, fam.kwargs), fam.make_kwargs
    if render_kw["render_mode"] is not None:     # make_vec takes it; populations do not
        raise ValueError("render_mode: only cypool.make_vec pools render")
    st = _State()
    st.mod = mod
    st.path = path = xml_path(kw["xml_file"])
    try:
        st.model = model = compile_xml(path)
    except ValueError as exc:
        if "allocate" in str(exc):
            raise MemoryError(f"cypool: out of memory loading {path}: {exc}") from None
        raise
    warn_if_inexact_dot(env_id, getattr(mod, "DOT_KEYS", ()))
    prm, obs_dim = mod.configure(model, kw)
    st.obs_dim, st.nu, st.rendered = obs_dim, model.nu, False
    # before anything per env: each env's mjData buffer (its arena comes on top), its
    # observation and final observation, its parameter row and scratch
    check_pool_memory(num_envs, MIN_ENV_BYTES + mujoco.MjData(model).nbuffer
                      + 8 * (2 * obs_dim + len(prm) + model.nq + model.nv),
                      f"{env_id} envs")
    params = np.stack([prm] * num_envs)       # envs of their own: fam configures them next
    info, col = [], 0
    for key, width, dtype, on_step, on_reset, *at in mod.INFO:
        if isinstance(width, str):          # a model count, e.g. "ntendon"
            width = int(getattr(model, width))
        if callable(dtype) and not isinstance(dtype, type):   # one that depends on the kwargs
            dtype = dtype(kw)
        if isinstance(dtype, str) and dtype in kw:
            # gymnasium's value is this kwarg times a bool, so it keeps the kwarg's type
            # (int -> int64); envs of their own may differ, so they get float64
            dtype = np.float64 if env_kwargs is not None else np.dtype(type(kw[dtype]))
        # a 6th item: the column of an earlier key (gymnasium reports one value twice);
        # key None: a column the kernel writes that this id does not report
        first = at[0] if at else col
        if key is not None:
            info.append(InfoKey(key, dtype, width, on_step, on_reset, column=first))
        col = max(col, first + width)
    w, h, cam, vis, max_geom = _render_setup(model, render_kw)
    pixels, chw = render_kw["from_pixels"], render_kw["channels_first"]    # bools (kinds)
    if chw and not pixels:
        raise ValueError("channels_first=True needs from_pixels=True (it lays out the "
                         "pixel observations)")
    backend = gl_backend_request() if pixels else None
    engine = MjPool(path, num_envs, num_threads, max_episode_steps, mod.task_capsule(),
                    params, obs_dim, col, (h, w) if pixels else None, bool(chw))
    engine.setup_render(w, h, cam, dict(kw.get("default_camera_config") or {}), vis,
                        max_geom)
    if pixels:          # the caller's GL context now: a missing driver is a clear error
        engine.open_pixel_renderer(backend)
    bounds = model.actuator_ctrlrange.copy().astype(np.float32)
    act_space = gym.spaces.Box(bounds[:, 0], bounds[:, 1], dtype=np.float32)
    if pixels:      # AddRenderObservation(render_only=True)'s space, or channels-first
        obs_space = gym.spaces.Box(0, 255, (3, h, w) if chw else (h, w, 3), np.uint8)
    else:
        obs_space = gym.spaces.Box(-np.inf, np.inf, (obs_dim,), np.float64)
    dt = model.opt.timestep * kw["frame_skip"]
    return Built(engine, obs_space, act_space, tuple(info), int(np.round(1.0 / dt)), st)


def _render(engine, ids, mode, kwargs):
    """gymnasium's MujocoRenderer modes, one render per env: "rgb_array" (len(ids), height,
    width, 3) uint8 frames; "depth_array" (len(ids), height, width) float32 depth buffers;
    "rgbd_tuple" a list of one (frame, depth) pair per env. As in gymnasium, MUJOCO_GL is read
    at the first render, which makes the GL context."""
    ids = np.ascontiguousarray(ids, np.int64)
    args = () if engine.has_renderer else (gl_backend_request(),)
    rgb, depth = engine.render_frames(ids, mode != "depth_array", mode != "rgb_array", *args)
    if mode == "rgb_array":
        return rgb
    if mode == "depth_array":
        return depth
    return list(zip(rgb, depth))


def _configure(fam, ids, kw):
    """Envs ``ids`` get the parameter row of the complete task kwargs ``kw``: read by the
    kernels at every step and reset, so the values apply from their next step (reset noise:
    next reset). Kwargs that change the model or the observation size are refused."""
    st = fam.state
    kw = task_kwargs(st.mod, kw)
    if xml_path(kw["xml_file"]) != st.path:
        raise ValueError("xml_file must be the same for every env of a pool")
    row, obs_dim = st.mod.configure(st.model, kw)
    if obs_dim != st.obs_dim:
        raise ValueError("member kwargs must not change the observation size")
    fam.engine.params[ids] = row    # in place: the C buffer


def _load_actions(fam, actions, env_ids=None):
    """Validate an action batch (rows for env_ids, or for every env) and copy it into C."""
    nu = fam.state.nu
    try:
        a = np.asarray(actions)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"actions must be an array of shape (num_envs, {nu}): {exc}") \
            from None
    if a.dtype.byteorder not in "=|":      # big- or little-endian by request: convert
        a = a.astype(a.dtype.newbyteorder("="))
    n = fam.engine.num_envs if env_ids is None else len(env_ids)
    if a.shape != (n, nu):
        raise ValueError(f"actions must have shape ({n}, {nu}), got {a.shape}")
    if a.dtype == np.float32:
        f32 = True
    elif a.dtype == np.float64 or a.dtype.kind in "iu":
        f32 = False
    else:
        raise TypeError(f"actions must be float32 or float64 (or integers), got {a.dtype}")
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        bad = np.flatnonzero(~np.isfinite(a).all(axis=1)).tolist()
        raise ValueError(f"actions contain NaN or Inf (env(s) {bad})")
    fam.engine.set_actions(a, env_ids, f32)


def _action_dtype_of(fam, ids):
    """The dtype numpy computes "action"-typed info in for envs `ids` (None: every env):
    float32 when each of them was last given float32 actions, else float64. The dtype is
    kept per env in C, since async envs of one pool may be sent different dtypes."""
    f = fam.engine.act_f32 if ids is None else fam.engine.act_f32[ids]
    return np.float32 if f.size and f.all() else np.float64


def _extra_info(fam, info, kinds, ids):
    """MuJoCo warnings raised during the step, per env (only where there were some)."""
    w = fam.engine.warnings if ids is None else fam.engine.warnings[ids]
    if not w.any():          # the usual case
        return
    hit = (kinds == INFO_KINDS["step"]) & (w > 0)
    if hit.any():
        info["mujoco_warnings"] = np.where(hit, w, 0)
        info["_mujoco_warnings"] = hit
