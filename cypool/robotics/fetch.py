"""The Fetch ids of gymnasium-robotics 1.4.2 (``FetchReach-v4``, ``FetchPush-v4``,
``FetchSlide-v4``, ``FetchPickAndPlace-v4`` and their ``...Dense-v4``) as cypool specs.

The model is the installed package's (``gymnasium_robotics/envs/assets/fetch/<task>.xml``),
loaded with one change made in a temporary copy of its main file and of ``shared.xml`` (paths
made absolute): the mocap weld's ``relpose="0 0 0 1 0 0 0"``, which is what
``reset_mocap_welds`` writes into ``model.eq_data`` in ``_env_setup``. The rest of
``_env_setup`` (initial joints, mocap target, 10 x n_substeps settle steps) runs once per pool
here, with the mujoco package on that model; its result (time, qpos, qvel, the gripper's and
object's settled positions) is every reset's starting state. Everything per step and reset
runs in ``_fetch.pyx``."""
from __future__ import annotations

import functools
import os
import shutil
import tempfile
import warnings
import xml.etree.ElementTree as ET

import gymnasium as gym
import numpy as np

from cypool._core.spec import Built, FamilySpec, InfoKey, Kwarg, SpecFamily
from cypool._validate import MIN_ENV_BYTES, Options, check_pool_memory
from cypool.robotics._actions import load_row_actions
from cypool.robotics._render import (camera_config, no_render, pixel_kwargs, render,
                                     render_kwargs, setup_render, site_id)
from cypool.robotics.goals import METHODS, method_hooks, per_setting

INSTALL_HINT = 'pip install "cypool[robotics]"'
REFERENCE = "gymnasium-robotics 1.4.2"
REWARD_TYPES = ("sparse", "dense")
MAX_EPISODE_STEPS = 50
N_SUBSTEPS = 20
_SLIDES = {"robot0:slide0": 0.405, "robot0:slide1": 0.48, "robot0:slide2": 0.0}
_BLOCK = [1.25, 0.53, 0.4, 1.0, 0.0, 0.0, 0.0]
# fetch_env.DEFAULT_CAMERA_CONFIG (every Fetch task's default_camera_config)
DEFAULT_CAMERA_CONFIG = dict(distance=2.5, azimuth=132.0, elevation=-14.0,
                             lookat=np.array([1.3, 0.75, 0.55]))

# the constructor arguments each task class gives MujocoFetchEnv
TASKS = {
    "Reach": dict(xml="reach.xml", has_object=False, block_gripper=True,
                  gripper_extra_height=0.2, target_in_the_air=True, target_offset=0.0,
                  obj_range=0.15, target_range=0.15, distance_threshold=0.05,
                  initial_qpos={**_SLIDES, "robot0:slide0": 0.4049}),
    "Push": dict(xml="push.xml", has_object=True, block_gripper=True,
                 gripper_extra_height=0.0, target_in_the_air=False, target_offset=0.0,
                 obj_range=0.15, target_range=0.15, distance_threshold=0.05,
                 initial_qpos={**_SLIDES, "object0:joint": _BLOCK}),
    "Slide": dict(xml="slide.xml", has_object=True, block_gripper=True,
                  gripper_extra_height=-0.02, target_in_the_air=False,
                  target_offset=np.array([0.4, 0.0, 0.0]), obj_range=0.1, target_range=0.3,
                  distance_threshold=0.05,
                  initial_qpos={**_SLIDES, "robot0:slide0": 0.05,
                                "object0:joint": [1.7, 1.1, 0.41, 1.0, 0.0, 0.0, 0.0]}),
    "PickAndPlace": dict(xml="pick_and_place.xml", has_object=True, block_gripper=False,
                         gripper_extra_height=0.2, target_in_the_air=True, target_offset=0.0,
                         obj_range=0.15, target_range=0.15, distance_threshold=0.05,
                         initial_qpos={**_SLIDES, "object0:joint": _BLOCK}),
}

# id -> (task, reward_type)
FETCH = {f"Fetch{task}{suffix}-v4": (task, reward)
         for task in ("Reach", "Push", "Slide", "PickAndPlace")
         for suffix, reward in (("", "sparse"), ("Dense", "dense"))}


def assets_dir():
    """The installed gymnasium-robotics' Fetch models (ImportError naming the extra)."""
    try:
        from cypool._quiet import import_quietly

        envs = import_quietly("gymnasium_robotics.envs")
    except ImportError as exc:
        raise ImportError(f"cypool's Fetch ids need gymnasium-robotics, whose Fetch models "
                          f"they load: {INSTALL_HINT} ({exc})") from None
    return os.path.join(os.path.dirname(os.path.realpath(envs.__file__)), "assets", "fetch")


def write_model(task, folder):
    """The task's model file with the weld's identity relpose, written into ``folder`` (the
    main file and shared.xml; every other path made absolute): its path."""
    src = assets_dir()
    root = ET.parse(os.path.join(src, TASKS[task]["xml"])).getroot()
    for comp in root.iter("compiler"):
        for attr in ("meshdir", "texturedir", "assetdir"):
            if comp.get(attr) is not None:
                comp.set(attr, os.path.normpath(os.path.join(src, comp.get(attr))))
    welds = 0
    for inc in root.iter("include"):
        name = inc.get("file")
        if name == "shared.xml":
            shared = ET.parse(os.path.join(src, name))
            for weld in shared.getroot().iter("weld"):
                weld.set("relpose", "0 0 0 1 0 0 0")     # reset_mocap_welds' eq_data
                welds += 1
            shared.write(os.path.join(folder, name))
        else:
            inc.set("file", os.path.join(src, name))
    if welds != 1:
        raise ValueError(f"Fetch{task}: the installed gymnasium-robotics' Fetch model has "
                         f"{welds} mocap welds in shared.xml; cypool serves {REFERENCE}'s one")
    path = os.path.join(folder, TASKS[task]["xml"])
    ET.ElementTree(root).write(path)
    return path



def _joint(model, mujoco, name):
    j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
    if j < 0:
        raise ValueError(f"the Fetch model has no joint {name!r}")
    return j


def _id(model, mujoco, kind, name):
    i = mujoco.mj_name2id(model, kind, name)
    if i < 0:
        raise ValueError(f"the Fetch model has no {kind} {name!r}")
    return i


def _settle(task, model, mujoco):
    """_env_setup on a fresh MjData of ``model`` (whose weld is already reset): the state
    every reset starts from and the ids the kernels read (a dict)."""
    cfg = TASKS[task]
    data = mujoco.MjData(model)
    for name, value in cfg["initial_qpos"].items():
        j = _joint(model, mujoco, name)
        adr = model.jnt_qposadr[j]
        n = {int(mujoco.mjtJoint.mjJNT_FREE): 7, int(mujoco.mjtJoint.mjJNT_BALL): 4}.get(
            int(model.jnt_type[j]), 1)
        data.qpos[adr:adr + n] = np.array(value)
    mujoco.mj_forward(model, data)          # reset_mocap_welds'
    mujoco.mj_forward(model, data)
    grip_site = _id(model, mujoco, mujoco.mjtObj.mjOBJ_SITE, "robot0:grip")
    target = np.array([-0.498, 0.005, -0.431 + cfg["gripper_extra_height"]]) \
        + data.site_xpos[grip_site]
    mocap_body = _id(model, mujoco, mujoco.mjtObj.mjOBJ_BODY, "robot0:mocap")
    mocap = model.body_mocapid[mocap_body]
    data.mocap_pos[mocap] = target
    data.mocap_quat[mocap] = np.array([1.0, 0.0, 1.0, 0.0])
    for _ in range(10):
        mujoco.mj_step(model, data, nstep=N_SUBSTEPS)
    out = dict(time0=data.time, qpos=data.qpos.copy(), qvel=data.qvel.copy(),
               grip0=data.site_xpos[grip_site].copy(), grip_site=grip_site, height=0.0,
               object_site=-1, object_qpos=-1)
    if cfg["has_object"]:
        out["object_site"] = _id(model, mujoco, mujoco.mjtObj.mjOBJ_SITE, "object0")
        out["height"] = data.site_xpos[out["object_site"]][2]
        out["object_qpos"] = model.jnt_qposadr[_joint(model, mujoco, "object0:joint")]
    # the weld: mocap body and the body it holds (reset_mocap2body_xpos)
    weld = int(mujoco.mjtEq.mjEQ_WELD)
    eqs = [k for k in range(model.neq) if int(model.eq_type[k]) == weld]
    if model.nmocap != 1 or len(eqs) != 1:
        raise ValueError(f"Fetch{task}: cypool's Fetch kernels serve one mocap body welded to "
                         f"the gripper, as {REFERENCE}'s models have")
    b1, b2 = model.eq_obj1id[eqs[0]], model.eq_obj2id[eqs[0]]
    out["mocap"], out["weld_body"] = ((model.body_mocapid[b1], b2)
                                      if model.body_mocapid[b1] != -1
                                      else (model.body_mocapid[b2], b1))
    # robot_get_obs: the last two joints named robot* (in id order) are the gripper's
    robot = [j for j in range(model.njnt)
             if (mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or "").startswith(
                 "robot")]
    out["grip_qpos"] = [model.jnt_qposadr[j] for j in robot[-2:]]
    out["grip_qvel"] = [model.jnt_dofadr[j] for j in robot[-2:]]
    out["fingers"] = [model.jnt_qposadr[_joint(model, mujoco, f"robot0:{s}_gripper_finger_joint")]
                      for s in ("l", "r")]
    if model.nu > 2 or (model.nu and (model.actuator_biastype == 0).any()):
        raise ValueError(f"Fetch{task}: cypool's Fetch kernels serve at most two position "
                         f"actuators, as {REFERENCE}'s models have")
    out["ctrl_qpos"] = [model.jnt_qposadr[model.actuator_trnid[i, 0]] for i in range(model.nu)]
    if model.nv > 64 or model.na:
        raise ValueError(f"Fetch{task}: the model has nv={model.nv}, na={model.na}")
    return out


class _State:
    """A Fetch pool's facts: its task, the settled state and ids (_settle's dict)."""

    __slots__ = ("task", "setup", "nq", "nv")


def _row(st, kw):
    """The parameter row of one env's complete kwargs (_fetch's P_* layout)."""
    from cypool.robotics import _fetch as fe
    P = fe.PARAMS
    cfg, s = TASKS[st.task], st.setup
    row = np.zeros(P["state"] + st.nq + st.nv)
    row[P["dense"]] = kw["reward_type"] == "dense"
    row[P["has_object"]] = cfg["has_object"]
    row[P["block"]] = cfg["block_gripper"]
    row[P["in_air"]] = cfg["target_in_the_air"]
    row[P["obj_range"]] = cfg["obj_range"]
    row[P["target_range"]] = cfg["target_range"]
    row[P["threshold"]] = cfg["distance_threshold"]
    row[P["n_substeps"]] = N_SUBSTEPS
    row[P["dt"]] = N_SUBSTEPS * s["timestep"]           # MujocoFetchEnv's dt, as it computes it
    row[P["time0"]] = s["time0"]
    row[P["height"]] = s["height"]
    row[P["grip0"]:P["grip0"] + 3] = s["grip0"]
    row[P["offset"]:P["offset"] + 3] = cfg["target_offset"]
    row[P["site_grip"]] = s["grip_site"]
    row[P["site_object"]] = s["object_site"]
    row[P["weld_body"]] = s["weld_body"]
    row[P["mocap"]] = s["mocap"]
    row[P["finger_l"]], row[P["finger_r"]] = s["fingers"]
    row[P["grip_qpos"]:P["grip_qpos"] + 2] = s["grip_qpos"]
    row[P["grip_qvel"]:P["grip_qvel"] + 2] = s["grip_qvel"]
    row[P["object_qpos"]] = s["object_qpos"]
    row[P["nu"]] = len(s["ctrl_qpos"])
    row[P["ctrl_qpos"]:P["ctrl_qpos"] + len(s["ctrl_qpos"])] = s["ctrl_qpos"]
    row[P["state"]:] = np.concatenate([s["qpos"], s["qvel"]])
    return row


def obs_size(task):
    return 25 if TASKS[task]["has_object"] else 10


def _space(task):
    goal = gym.spaces.Box(-np.inf, np.inf, (3,), np.float64)
    return gym.spaces.Dict(dict(
        achieved_goal=goal, desired_goal=goal,
        observation=gym.spaces.Box(-np.inf, np.inf, (obs_size(task),), np.float64)))


def _build(fam, num_envs, num_threads, max_episode_steps, env_kwargs, *, task):
    from cypool._mujoco_import import import_mujoco
    from cypool.mujoco._pool import MjPool
    from cypool.robotics import _fetch as fe
    mujoco = import_mujoco()
    if fe.GEMV == "fallback":
        warnings.warn(
            f"cypool: {fam.env_id}'s site velocities are numpy's BLAS dgemv in the reference, "
            "which could not be resolved here; cypool sums left to right, which may differ "
            "from numpy in the last bit on this CPU (see cypool.show_config())",
            RuntimeWarning, stacklevel=4)
    folder = tempfile.mkdtemp(prefix="cypool_fetch_")
    try:
        path = write_model(task, folder)
        model = mujoco.MjModel.from_xml_path(path)
        st = _State()
        st.task, st.nq, st.nv = task, model.nq, model.nv
        st.setup = _settle(task, model, mujoco)
        st.setup["timestep"] = model.opt.timestep
        row = _row(st, fam.kwargs)
        check_pool_memory(num_envs, MIN_ENV_BYTES + mujoco.MjData(model).nbuffer
                          + 8 * (2 * (6 + obs_size(task)) + len(row) + model.nq + model.nv),
                          f"{fam.env_id} envs")
        n = obs_size(task)
        engine = MjPool(path, num_envs, num_threads, max_episode_steps, fe.task_capsule(),
                        np.stack([row] * num_envs), 6 + n, 1, task_state=fe.TASK_STATE,
                        obs_split=[("obs", (3,)), ("obs.desired_goal", (3,)),
                                   ("obs.observation", (n,))], **pixel_kwargs(fam.make_kwargs))
        # MujocoFetchEnv._render_callback: target0 at the goal (the task state's first 3
        # doubles), offset by site 0's offset, then mj_forward
        setup_render(engine, model, fam.make_kwargs, camera_config(
            fam.make_kwargs["default_camera_config"], DEFAULT_CAMERA_CONFIG), forward=True,
            sites=[(site_id(model, mujoco, "target0"), [("task", c) for c in range(3)])],
            offset_sites=[0])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return Built(engine, state=st, render=render)


def _configure(fam, ids, kw):
    """Envs ``ids`` get the row of the complete kwargs ``kw`` (the reward type, read at every
    step)."""
    fam.engine.params[ids] = _row(fam.state, kw)


def _load_actions(fam, actions, env_ids=None):
    """The (n, 4) action batch into the envs' parameter rows, where the kernels read it (the
    model's own controls are fewer)."""
    from cypool.robotics import _fetch as fe
    load_row_actions(fam, actions, env_ids, 4, fe.PARAMS["act"])


# ------------------------------------------------------------------ goal functions (HER)
DISTANCE_THRESHOLD = 0.05          # every Fetch task's


def _goals(achieved_goal, desired_goal):
    out = []
    for name, g in (("achieved_goal", achieved_goal), ("desired_goal", desired_goal)):
        try:
            a = np.asarray(g)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be an array of (x, y, z) goals: {exc}") from None
        if a.dtype.kind not in "fiu" or a.dtype.kind == "f" and a.dtype.itemsize > 8:
            raise TypeError(f"{name} must be an array of real numbers (float16/32/64 or "
                            f"integers), got {a.dtype}")
        if a.ndim == 0 or a.shape[-1] != 3:
            raise ValueError(f"{name} must have shape (3,) or (..., 3), got {a.shape}")
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise ValueError(f"{name} contains NaN or infinite values")
        out.append(a)
    if out[0].shape != out[1].shape:         # goal_distance asserts equal shapes
        raise ValueError(f"achieved_goal {out[0].shape} and desired_goal {out[1].shape} "
                         f"must have the same shape")
    return out


def compute_reward(reward_type, achieved_goal, desired_goal, info=None):
    """BaseFetchEnv.compute_reward with this reward type, on one goal pair or a batch: its
    own numpy expression (sparse: float32 -1 or -0 beyond 0.05; dense: -distance)."""
    from cypool.robotics import _fetch as fk
    if reward_type not in REWARD_TYPES:
        raise ValueError(f"reward_type must be 'sparse' or 'dense', got {reward_type!r}")
    out = fk.batch_rewards(achieved_goal, desired_goal, DISTANCE_THRESHOLD,
                           reward_type == "dense")
    if out is not None:                 # HER's (n, 3) float64 batch, in the kernel
        return out
    a, d = _goals(achieved_goal, desired_goal)
    dist = np.linalg.norm(a - d, axis=-1)
    if reward_type == "sparse":
        return -(dist > DISTANCE_THRESHOLD).astype(np.float32)
    return -dist


def _rewards_call(reward_type, n, general):
    """compute_reward bound to one reward type for a pool of n envs (GoalMethod's fast)."""
    from cypool.robotics import _fetch as fk
    if reward_type not in REWARD_TYPES:             # the general path's ValueError
        return general
    return fk.rewards_call(DISTANCE_THRESHOLD, reward_type == "dense", n, general)


def per_env(name, env_kwargs, *args, **kwargs):
    """The goal function ``name`` for envs of complete kwargs ``env_kwargs``: one result per
    env (a spec's method hook)."""
    if name not in METHODS:
        raise ValueError(f"cypool.robotics: {name!r} is not one of {METHODS}")
    if name != "compute_reward":                  # BaseRobotEnv's: always False
        _goals(*args[:2], **{k: v for k, v in kwargs.items() if k != "info"})
        return (False,) * len(env_kwargs)
    return per_setting(compute_reward, "reward_type", env_kwargs, *args, **kwargs)


def fetch_spec(env_id):
    from cypool.mujoco.family import _action_dtype_of, _extra_info
    from cypool.mujoco._pool import MjPool
    task, reward = FETCH[env_id]
    assets_dir()                            # the ImportError naming the extra, at first use
    kwargs = dict(reward_type=Kwarg(reward, kind=Options(
        REWARD_TYPES, note="gymnasium-robotics' two Fetch rewards")),
        **render_kwargs(width=480, height=480, default_camera_config=None))
    return FamilySpec(
        env_id, MjPool, _space(task), gym.spaces.Box(-1.0, 1.0, (4,), np.float32),
        kwargs=kwargs, max_episode_steps=MAX_EPISODE_STEPS,
        info=(InfoKey("is_success", np.float32, 1, True, False),), render_fps=25,
        render=no_render, render_pixels=True, render_modes=("rgb_array",),
        build=functools.partial(_build, task=task), configure=_configure,
        load_actions=_load_actions, extra_info=_extra_info, action_dtype_of=_action_dtype_of,
        methods=method_hooks(per_env, _rewards_call))


_SPECS: dict = {}


def spec_of(env_id):
    spec = _SPECS.get(env_id)
    if spec is None:
        spec = _SPECS[env_id] = fetch_spec(env_id)
    return spec


def make(env_id, *args, **kwargs):
    return SpecFamily(spec_of(env_id), env_id, *args, **kwargs)
