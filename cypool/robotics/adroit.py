"""The Adroit hand ids of gymnasium-robotics 1.4.2 (``AdroitHand{Door,Hammer,Pen,Relocate}-v1``
and their ``...Sparse-v1``) as cypool specs.

The model is the installed package's (``gymnasium_robotics/envs/assets/adroit_hand``), with
the actuator gain and bias edits each env's constructor makes. Each reset draws part of the
model (see ``_adroit.pyx``), so every env gets its own copy of the edited model (about 7 MB
each, as each of the reference's envs has its own). ``reset(options={"initial_state_dict":
...})`` is served as the reference's reset serves it (reset_model's draws, then
set_env_state): see :func:`_reset_options`."""
from __future__ import annotations

import copy
import functools
import os

import gymnasium as gym
import numpy as np

from cypool._core.spec import Built, FamilySpec, InfoKey, Kwarg, SpecFamily
from cypool._validate import MIN_ENV_BYTES, check_pool_memory
from cypool.robotics._render import no_render, pixel_kwargs, render_kwargs
from cypool.robotics.envpool_info import envpool_info

INSTALL_HINT = 'pip install "cypool[robotics]"'
REFERENCE = "gymnasium-robotics 1.4.2"
MAX_EPISODE_STEPS = 200
FRAME_SKIP = 5
TASKS = ("Door", "Hammer", "Pen", "Relocate")
OBS_SIZE = dict(Door=39, Hammer=46, Pen=45, Relocate=39)
NU = dict(Door=28, Hammer=26, Pen=24, Relocate=30)
NQ = dict(Door=30, Hammer=33, Pen=30, Relocate=36)      # = nv
# the ids each task's kernels read, in _adroit.pyx's order: (kind, name)
IDS = {
    "Door": [("dof", "door_hinge"), ("site", "S_grasp"), ("site", "S_handle"),
             ("body", "frame")],
    "Hammer": [("site", "S_target"), ("site", "S_grasp"), ("body", "Object"),
               ("site", "tool"), ("site", "nail_goal"), ("body", "nail_board"),
               ("sensor", "S_nail")],
    "Pen": [("body", "target"), ("site", "S_grasp"), ("body", "Object"), ("site", "eps_ball"),
            ("site", "object_top"), ("site", "object_bottom"), ("site", "target_top"),
            ("site", "target_bottom")],
    "Relocate": [("site", "target"), ("site", "S_grasp"), ("body", "Object")],
}

# id -> (task, reward_type)
ADROIT = {f"AdroitHand{task}{suffix}-v1": (task, reward)
          for suffix, reward in (("Sparse", "sparse"), ("", "dense")) for task in TASKS}


def assets_dir():
    """The installed gymnasium-robotics' Adroit models (ImportError naming the extra)."""
    try:
        from cypool._quiet import import_quietly

        envs = import_quietly("gymnasium_robotics.envs")
    except ImportError as exc:
        raise ImportError(f"cypool's Adroit ids need gymnasium-robotics, whose Adroit models "
                          f"they load: {INSTALL_HINT} ({exc})") from None
    return os.path.join(os.path.dirname(os.path.realpath(envs.__file__)), "assets",
                        "adroit_hand")


def model_path(task):
    return os.path.join(assets_dir(), f"adroit_{task.lower()}.xml")


def _edit(model, mujoco):
    """The constructor's actuator edits (wrist: gain 10, bias -10; fingers: gain 1, bias -1),
    and act_mean, act_rng as it computes them."""
    def act(name):
        i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, name)
        if i < 0:
            raise ValueError(f"the Adroit model has no actuator {name!r}")
        return i
    wrist = slice(act("A_WRJ1"), act("A_WRJ0") + 1)
    fingers = slice(act("A_FFJ3"), act("A_THJ0") + 1)
    model.actuator_gainprm[wrist, :3] = np.array([10, 0, 0])
    model.actuator_gainprm[fingers, :3] = np.array([1, 0, 0])
    model.actuator_biasprm[wrist, :3] = np.array([0, -10, 0])
    model.actuator_biasprm[fingers, :3] = np.array([0, -1, 0])
    mean = np.mean(model.actuator_ctrlrange, axis=1)
    rng = 0.5 * (model.actuator_ctrlrange[:, 1] - model.actuator_ctrlrange[:, 0])
    return mean, rng


def _ids(task, model, mujoco):
    kinds = dict(body=mujoco.mjtObj.mjOBJ_BODY, site=mujoco.mjtObj.mjOBJ_SITE,
                 sensor=mujoco.mjtObj.mjOBJ_SENSOR, dof=mujoco.mjtObj.mjOBJ_JOINT)
    out = []
    for kind, name in IDS[task]:
        i = mujoco.mj_name2id(model, kinds[kind], name)
        if i < 0:
            raise ValueError(f"AdroitHand{task}: the installed model has no {kind} {name!r}; "
                             f"cypool serves {REFERENCE}'s")
        # the door's angle: qpos indexed by the hinge's dof address, as the reference does
        out.append(int(model.jnt_dofadr[i]) if kind == "dof" else i)
    return out


# each task module's DEFAULT_CAMERA_CONFIG (its default_camera_config)
CAMERA = {"Door": dict(distance=1.5, azimuth=90.0), "Hammer": dict(distance=2.0, azimuth=45.0),
          "Pen": dict(distance=1.0, azimuth=-45.0),
          "Relocate": dict(distance=1.5, azimuth=90.0)}


class _State:
    """An Adroit pool's facts: its task, nu (for the action checks), the env models."""

    __slots__ = ("task", "nu", "models")


def _build(fam, num_envs, num_threads, max_episode_steps, env_kwargs, *, task):
    from cypool._mujoco_import import import_mujoco, model_address
    from cypool.mujoco._pool import MjPool
    from cypool.robotics import _adroit as ad
    mujoco = import_mujoco()
    path = model_path(task)
    base = mujoco.MjModel.from_xml_path(path)
    mean, rng = _edit(base, mujoco)
    P = ad.PARAMS
    if (base.nq, base.nv, base.nu, base.na) != (NQ[task], NQ[task], NU[task], 0):
        raise ValueError(f"AdroitHand{task}: the installed model (nq={base.nq}, nv={base.nv}, "
                         f"nu={base.nu}, na={base.na}) is not {REFERENCE}'s")
    row = np.zeros(P["width"])
    row[P["task"]] = ad.TASK_IDS[task]
    row[P["n_substeps"]] = FRAME_SKIP
    ids = _ids(task, base, mujoco)
    row[P["ids"]:P["ids"] + len(ids)] = ids
    row[P["mean"]:P["mean"] + base.nu] = mean
    row[P["rng"]:P["rng"] + base.nu] = rng
    row[P["base"]:P["base"] + 2] = _base_fixed(task, base, ids)
    check_pool_memory(num_envs, MIN_ENV_BYTES + mujoco.MjData(base).nbuffer + base.nbuffer
                      + 8 * (2 * OBS_SIZE[task] + len(row) + base.nq + base.nv),
                      f"{fam.env_id} envs")
    st = _State()
    st.task, st.nu = task, base.nu
    st.models = [copy.deepcopy(base) for _ in range(num_envs)]
    rows = np.stack([row] * num_envs)
    for i, m in enumerate(st.models):
        rows[i, P["model"]] = model_address(m)
    rows[:, P["sparse"]] = _sparse(fam.kwargs)
    engine = MjPool(path, num_envs, num_threads, max_episode_steps, ad.task_capsule(),
                    rows, OBS_SIZE[task], 1, task_state=ad.TASK_STATE,
                    **pixel_kwargs(fam.make_kwargs))
    # the task's MujocoRenderer; each env's frame is of its own model (env_m)
    from cypool.robotics._render import render, setup_render
    setup_render(engine, base, fam.make_kwargs, dict(CAMERA[task]))
    return Built(engine, state=st, render=render)


def _base_fixed(task, model, ids):
    """The model's own values of what only an initial_state_dict changes beyond the draws
    (_adroit.pyx's P_BASE): Hammer's board x, y; Relocate's ball z."""
    if task == "Hammer":
        return model.body_pos[ids[5], :2]
    if task == "Relocate":
        return [model.body_pos[ids[2], 2], 0.0]
    return [0.0, 0.0]


# set_env_state's state_dict per task: its keys (the reference's _state_space, in the order
# their model values are packed into the option row after qpos and qvel) and shapes
STATE_KEYS = {"Door": ("door_body_pos",), "Hammer": ("board_pos",), "Pen": ("desired_orien",),
              "Relocate": ("obj_pos", "target_pos")}
STATE_SHAPES = {"door_body_pos": 3, "board_pos": 3, "desired_orien": 4, "obj_pos": 3,
                "target_pos": 3}
RESET_OPTION_KEYS = ("initial_state_dict",)


def _state_row(env_id, task, d, where):
    """One initial_state_dict as the reference's ``_state_space.contains`` takes it (exactly
    its keys; each value an array, or anything ``np.asarray(x, float64)`` takes, that casts
    safely to float64, of its shape, not NaN; qpos and qvel numpy arrays, as its set_state
    needs), as its option row: qpos, qvel, model values."""
    shapes = {"qpos": NQ[task], "qvel": NQ[task],
              **{k: STATE_SHAPES[k] for k in STATE_KEYS[task]}}
    if not isinstance(d, dict):
        raise ValueError(f"{env_id}: {where} must be a dict with the keys "
                         f"{sorted(shapes)}, got {type(d).__name__}")
    if set(d) != set(shapes):
        raise ValueError(f"{env_id}: {where} must have exactly the keys {sorted(shapes)} "
                         f"(set_env_state's), got {sorted(map(str, d))}")
    out = []
    for key in ("qpos", "qvel") + STATE_KEYS[task]:
        x = d[key]
        if key in ("qpos", "qvel") and not isinstance(x, np.ndarray):
            raise ValueError(f"{env_id}: {where}[{key!r}] must be a numpy array (set_state "
                             f"reads its shape), got {type(x).__name__}")
        if not isinstance(x, np.ndarray):
            try:
                x = np.asarray(x, dtype=np.float64)
            except (ValueError, TypeError, OverflowError):
                x = None
        if x is None or not np.can_cast(x.dtype, np.float64):
            raise ValueError(f"{env_id}: {where}[{key!r}] must be float64 values (or values "
                             f"that cast safely to float64), got {d[key]!r}")
        if x.shape != (shapes[key],):
            raise ValueError(f"{env_id}: {where}[{key!r}] must have shape ({shapes[key]},), "
                             f"got {x.shape}")
        x = x.astype(np.float64)
        if np.isnan(x).any():
            raise ValueError(f"{env_id}: {where}[{key!r}] holds NaN")
        out.append(x)
    return np.concatenate(out)


def _reset_options(fam, options, mask):
    """The FamilySpec hook of the reference's ``reset(options={"initial_state_dict": d})``:
    ``d`` one dict (every env reset takes it, as gymnasium's vector envs pass the options to
    each env) or a list of ``num_envs`` dicts or None (env i takes entry i; None: no state
    set). Each env reset draws as without the option, then takes ``d`` (set_env_state), for
    that reset only (autoresets do not). Checks every dict (ValueError; nothing changes) and
    returns the function that writes them into the rows of the envs of ``mask``."""
    from cypool.robotics import _adroit as ad
    env_id, task, n = fam.env_id, fam.state.task, fam.engine.num_envs
    value = options["initial_state_dict"]
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{env_id}: options['initial_state_dict'] must be one dict, or a "
                             f"list of one dict (or None) per env ({n}), got {len(value)}")
        rows = [None if d is None else
                _state_row(env_id, task, d, f"options['initial_state_dict'][{i}]")
                for i, d in enumerate(value)]
    else:
        rows = [_state_row(env_id, task, value, "options['initial_state_dict']")] * n
    P, nq = ad.PARAMS, NQ[task]

    def apply():
        p = fam.engine.params
        p[:, P["opt"]] = 0.0
        for i in np.flatnonzero(mask):
            r = rows[i]
            if r is None:
                continue
            p[i, P["opt"]] = 1.0
            p[i, P["opt_qpos"]:P["opt_qpos"] + nq] = r[:nq]
            p[i, P["opt_qvel"]:P["opt_qvel"] + nq] = r[nq:2 * nq]
            p[i, P["opt_model"]:P["opt_model"] + len(r) - 2 * nq] = r[2 * nq:]
    return apply


def _option_per_env(key, value):
    """FamilySpec.reset_option_per_env: a list (or tuple) holds one dict (or None) per env."""
    return isinstance(value, (list, tuple))


def _sparse(kw):
    return kw["reward_type"].lower() == "sparse"


def _check_kwargs(kw):
    """reward_type as the reference takes it: 'dense' or 'sparse' in any case."""
    if kw["reward_type"].lower() not in ("dense", "sparse"):
        raise ValueError(f"reward_type must be 'dense' or 'sparse' (in any case), got "
                         f"{kw['reward_type']!r}")


def _configure(fam, ids, kw):
    """Envs ``ids`` get the complete kwargs ``kw`` (the reward type, read at every step)."""
    from cypool.robotics import _adroit as ad
    fam.engine.params[ids, ad.PARAMS["sparse"]] = _sparse(kw)


def _extra_info(fam, info, kinds, ids):
    """MuJoCo's warnings; ``success`` as gymnasium stacks it: Door, Hammer and Pen report a
    numpy bool, which SyncVectorEnv keeps in an object array (None where an env has none);
    Relocate a Python bool (a bool array)."""
    from cypool.mujoco.family import _extra_info as mujoco_extra
    mujoco_extra(fam, info, kinds, ids)
    if fam.state.task == "Relocate" or "success" not in info:
        return
    mask, values = info["_success"], info["success"]
    out = np.full(len(mask), None, dtype=object)
    for k in np.flatnonzero(mask):
        out[k] = np.bool_(values[k])
    info["success"] = out


def adroit_spec(env_id):
    from cypool.mujoco.family import _action_dtype_of, _load_actions
    from cypool.mujoco._pool import MjPool
    task, reward = ADROIT[env_id]
    assets_dir()                            # the ImportError naming the extra, at first use
    nu = NU[task]
    return FamilySpec(
        env_id, MjPool, gym.spaces.Box(-np.inf, np.inf, (OBS_SIZE[task],), np.float64),
        gym.spaces.Box(-1.0, 1.0, (nu,), np.float32),
        kwargs=dict(reward_type=Kwarg(reward, kind="str"),
                    **render_kwargs(width=480, height=480, camera_id=None, camera_name=None)),
        check_kwargs=_check_kwargs, render=no_render, render_pixels=True,
        render_modes=("rgb_array", "depth_array"), envpool_info=envpool_info(env_id, model_path),
        max_episode_steps=MAX_EPISODE_STEPS,
        info=(InfoKey("success", np.bool_, 1, True, False),), render_fps=100,
        build=functools.partial(_build, task=task), configure=_configure,
        load_actions=_load_actions, extra_info=_extra_info, action_dtype_of=_action_dtype_of,
        reset_option_keys=RESET_OPTION_KEYS, reset_options=_reset_options,
        reset_option_per_env=_option_per_env)


_SPECS: dict = {}


def spec_of(env_id):
    spec = _SPECS.get(env_id)
    if spec is None:
        spec = _SPECS[env_id] = adroit_spec(env_id)
    return spec


def make(env_id, *args, **kwargs):
    return SpecFamily(spec_of(env_id), env_id, *args, **kwargs)
