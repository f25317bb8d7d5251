"""The Shadow Hand ids of gymnasium-robotics 1.4.2 (the mujoco-bindings ones:
``HandReach-v3``, ``HandManipulateBlock*-v1``, ``HandManipulateEgg*-v1``,
``HandManipulatePen*-v1``, their ``_BooleanTouchSensors`` / ``_ContinuousTouchSensors``
variants, sparse and ``Dense``) as cypool specs.

The model is the installed package's (``gymnasium_robotics/envs/assets/hand/<task>.xml``),
loaded as it is. ``_env_setup`` (HandReach: its initial joints; the others: none) and its
mj_forward run once per pool here; time, qpos and qvel after it are every reset's starting
state. Constants that are the reference's data are read from the installed package once per
pool: the 24 axis-aligned rotations of the ``parallel`` targets (``get_parallel_rotations``
through ``euler2quat``), HandReach's initial joints and fingertip sites. Everything per step
and reset runs in ``_hand.pyx``."""
from __future__ import annotations

import functools
import os

import gymnasium as gym
import numpy as np

from cypool._core.spec import Built, FamilySpec, InfoKey, Kwarg, SpecFamily
from cypool._validate import MIN_ENV_BYTES, Options, check_pool_memory
from cypool.robotics._actions import load_row_actions
from cypool.robotics._render import no_render, pixel_kwargs, render_kwargs
from cypool.robotics.envpool_info import envpool_info
from cypool.robotics.goals import METHODS, method_hooks, per_setting

INSTALL_HINT = 'pip install "cypool[robotics]"'
REFERENCE = "gymnasium-robotics 1.4.2"
REWARD_TYPES = ("sparse", "dense")
MAX_EPISODE_STEPS = 100
N_SUBSTEPS = 20
_RANGE = np.array([(-0.04, 0.04), (-0.06, 0.02), (0.0, 0.06)])

# the constructor arguments each object's class gives MujocoManipulateEnv (beyond the id's)
OBJECTS = {
    "Block": dict(xml="manipulate_block.xml", randomize_initial_rotation=True,
                  ignore_z_target_rotation=False, distance_threshold=0.01),
    "Egg": dict(xml="manipulate_egg.xml", randomize_initial_rotation=True,
                ignore_z_target_rotation=False, distance_threshold=0.01),
    "Pen": dict(xml="manipulate_pen.xml", randomize_initial_rotation=False,
                ignore_z_target_rotation=True, distance_threshold=0.05),
}
# variant -> (target_position, target_rotation), per object
_VARIANTS = {
    "Block": {"RotateZ": ("ignore", "z"), "RotateParallel": ("ignore", "parallel"),
              "RotateXYZ": ("ignore", "xyz"), "Full": ("random", "xyz"),
              "": ("random", "xyz")},
    "Egg": {"Rotate": ("ignore", "xyz"), "Full": ("random", "xyz"), "": ("random", "xyz")},
    "Pen": {"Rotate": ("ignore", "xyz"), "Full": ("random", "xyz"), "": ("random", "xyz")},
}
_TOUCH = {"": None, "_BooleanTouchSensors": "boolean", "_ContinuousTouchSensors": "sensordata"}
_REWARDS = (("", "sparse"), ("Dense", "dense"))
# id -> (object, target_position, target_rotation, reward_type, touch_get_obs or None)
HAND = {f"HandReach{suffix}-v3": ("Reach", None, None, reward, None)
        for suffix, reward in _REWARDS}
HAND.update({f"HandManipulate{obj}{var}{touch}{suffix}-v1": (obj, tp, tr, reward, how)
             for obj, variants in _VARIANTS.items() for var, (tp, tr) in variants.items()
             for touch, how in _TOUCH.items() if not (how and var == "Full")
             for suffix, reward in _REWARDS})
REACH_THRESHOLD = 0.01
REACH_MAX_EPISODE_STEPS = 50


def _reference_envs():
    try:
        from cypool._quiet import import_quietly

        return import_quietly("gymnasium_robotics.envs")
    except ImportError as exc:
        raise ImportError(f"cypool's Shadow Hand ids need gymnasium-robotics, whose models "
                          f"they load: {INSTALL_HINT} ({exc})") from None


def assets_dir():
    """The installed gymnasium-robotics' hand models (ImportError naming the extra)."""
    envs = _reference_envs()
    return os.path.join(os.path.dirname(os.path.realpath(envs.__file__)), "assets", "hand")


def parallel_quats():
    """BaseManipulateEnv.parallel_quats: the reference's 24 rotations as quaternions."""
    _reference_envs()
    from gymnasium_robotics.utils import rotations
    return np.array([rotations.euler2quat(r) for r in rotations.get_parallel_rotations()])


def _id(model, mujoco, kind, name):
    i = mujoco.mj_name2id(model, kind, name)
    if i < 0:
        raise ValueError(f"the Shadow Hand model has no {kind} {name!r}")
    return i


def _reach_constants():
    """HandReach's initial joints and fingertip sites (the reference module's)."""
    _reference_envs()
    from gymnasium_robotics.envs.shadow_dexterous_hand import reach
    return dict(reach.DEFAULT_INITIAL_QPOS), list(reach.FINGERTIP_SITE_NAMES)


def _setup(model, mujoco, obj, touch):
    """_env_setup on a fresh MjData, and the ids and actuator ranges the kernels read."""
    from cypool.robotics import _hand as hk
    O, hinge = mujoco.mjtObj, (int(mujoco.mjtJoint.mjJNT_HINGE),
                               int(mujoco.mjtJoint.mjJNT_SLIDE))
    data = mujoco.MjData(model)
    if model.na or model.nu != hk.ACTION_SIZE:
        raise ValueError(f"the Shadow Hand model has nu={model.nu}, na={model.na}; cypool "
                         f"serves {REFERENCE}'s 20 position actuators")
    out = {}
    if obj == "Reach":
        initial, fingers = _reach_constants()
        for name, value in initial.items():
            j = _id(model, mujoco, O.mjOBJ_JOINT, name)
            if int(model.jnt_type[j]) not in hinge:
                raise ValueError(f"HandReach: joint {name!r} is not a hinge")
            data.qpos[model.jnt_qposadr[j]] = value
        mujoco.mj_forward(model, data)
        sites = [_id(model, mujoco, O.mjOBJ_SITE, name) for name in fingers]
        if len(sites) != 5:
            raise ValueError("HandReach: cypool serves five fingertip sites")
        out.update(finger_sites=sites, init_goal=data.site_xpos[sites].ravel().copy(),
                   meet=data.xpos[_id(model, mujoco, O.mjOBJ_BODY, "robot0:palm")].copy()
                   + np.array([0.0, -0.09, 0.05]))
    else:
        mujoco.mj_forward(model, data)
        jobj = _id(model, mujoco, O.mjOBJ_JOINT, "object:joint")
        if int(model.jnt_type[jobj]) != int(mujoco.mjtJoint.mjJNT_FREE):
            raise ValueError("the Shadow Hand model's object:joint is not a free joint")
        out.update(obj_qpos=model.jnt_qposadr[jobj], obj_qvel=model.jnt_dofadr[jobj],
                   site=_id(model, mujoco, O.mjOBJ_SITE, "object:center"))
    # the touch sensors, in id order (the reference reads sensordata at the sensor ids)
    names = [mujoco.mj_id2name(model, O.mjOBJ_SENSOR, i) or "" for i in range(model.nsensor)]
    out["touch"] = [i for i, name in enumerate(names) if "robot0:TS_" in name] \
        if touch else []
    if len(out["touch"]) > hk.NTOUCH or (model.nsensor and (model.sensor_dim != 1).any()):
        raise ValueError("the Shadow Hand model's sensors are not what cypool serves")
    robot = [j for j in range(model.njnt)
             if (mujoco.mj_id2name(model, O.mjOBJ_JOINT, j) or "").startswith("robot")]
    if len(robot) > hk.NROBOT or any(int(model.jnt_type[j]) not in hinge for j in robot):
        raise ValueError("the Shadow Hand model's robot joints are not what cypool serves")
    lo, hi = model.actuator_ctrlrange[:, 0].copy(), model.actuator_ctrlrange[:, 1].copy()
    out.update(time0=data.time, qpos=data.qpos.copy(), qvel=data.qvel.copy(),
               robot_qpos=[model.jnt_qposadr[j] for j in robot],
               robot_qvel=[model.jnt_dofadr[j] for j in robot],
               # MujocoHandEnv._set_action's centre and half range, as numpy computes them
               center=(hi + lo) / 2.0, half=(hi - lo) / 2.0, lo=lo, hi=hi)
    return out


class _State:
    """A Shadow Hand pool's facts: its id's constants and the setup (_setup's dict)."""

    __slots__ = ("obj", "tpos", "trot", "touch", "setup", "parallel", "nq", "nv")


def _row(st, kw):
    """The parameter row of one env's complete kwargs (_hand's P_* layout)."""
    from cypool.robotics import _hand as hk
    P, s = hk.PARAMS, st.setup
    row = np.zeros(P["state"] + st.nq + st.nv)
    row[P["dense"]] = kw["reward_type"] == "dense"
    row[P["n_substeps"]] = N_SUBSTEPS
    row[P["time0"]] = s["time0"]
    n = len(s["robot_qpos"])
    row[P["nrobot"]] = n
    row[P["robot_qpos"]:P["robot_qpos"] + n] = s["robot_qpos"]
    row[P["robot_qvel"]:P["robot_qvel"] + n] = s["robot_qvel"]
    for name in ("center", "half", "lo", "hi"):
        row[P[name]:P[name] + hk.ACTION_SIZE] = s[name]
    row[P["state"]:] = np.concatenate([s["qpos"], s["qvel"]])
    if st.obj == "Reach":
        row[P["dist_thr"]] = REACH_THRESHOLD
        row[P["finger_sites"]:P["finger_sites"] + 5] = s["finger_sites"]
        row[P["meet"]:P["meet"] + 3] = s["meet"]
        row[P["init_goal"]:P["init_goal"] + 15] = s["init_goal"]
        return row
    cfg = OBJECTS[st.obj]
    row[P["tpos"]] = hk.MODES_POS[st.tpos]
    row[P["trot"]] = hk.MODES_ROT[st.trot]
    row[P["rand_rot"]] = cfg["randomize_initial_rotation"]
    row[P["rand_pos"]] = True
    row[P["ignore_z"]] = cfg["ignore_z_target_rotation"]
    row[P["dist_thr"]] = cfg["distance_threshold"]
    row[P["rot_thr"]] = 0.1
    row[P["obj_qpos"]] = s["obj_qpos"]
    row[P["obj_qvel"]] = s["obj_qvel"]
    row[P["site"]] = s["site"]
    row[P["range_lo"]:P["range_lo"] + 3] = _RANGE[:, 0]
    row[P["range_hi"]:P["range_hi"] + 3] = _RANGE[:, 1]
    row[P["parallel"]:P["parallel"] + st.parallel.size] = st.parallel.ravel()
    row[P["ntouch"]] = len(s["touch"])
    row[P["touch_bool"]] = st.touch == "boolean"
    row[P["touch_ids"]:P["touch_ids"] + len(s["touch"])] = s["touch"]
    return row


def sizes(env_id):
    """(goal size, observation size) of env_id."""
    obj, _, _, _, touch = HAND[env_id]
    if obj == "Reach":
        return 15, 63
    return 7, 61 + (92 if touch else 0)


def _space(env_id):
    ng, n = sizes(env_id)
    goal = gym.spaces.Box(-np.inf, np.inf, (ng,), np.float64)
    return gym.spaces.Dict(dict(
        achieved_goal=goal, desired_goal=goal,
        observation=gym.spaces.Box(-np.inf, np.inf, (n,), np.float64)))


def _build(fam, num_envs, num_threads, max_episode_steps, env_kwargs, *, env_id):
    from cypool._mujoco_import import import_mujoco
    from cypool.mujoco._pool import MjPool
    from cypool.robotics import _hand as hk
    mujoco = import_mujoco()
    obj, tpos, trot, _, touch = HAND[env_id]
    xml = "reach.xml" if obj == "Reach" else OBJECTS[obj]["xml"]
    if touch:
        xml = xml.replace(".xml", "_touch_sensors.xml")
    path = os.path.join(assets_dir(), xml)
    model = mujoco.MjModel.from_xml_path(path)
    st = _State()
    st.obj, st.tpos, st.trot, st.touch = obj, tpos, trot, touch
    st.nq, st.nv = model.nq, model.nv
    st.setup = _setup(model, mujoco, obj, touch)
    st.parallel = parallel_quats()
    row = _row(st, fam.kwargs)
    ng, n = sizes(env_id)
    extra = 15 if obj == "Reach" else 13 + len(st.setup["touch"])
    if len(st.setup["robot_qpos"]) * 2 + extra != n:
        raise ValueError(f"{env_id}: the model's observation is not {n} values")
    check_pool_memory(num_envs, MIN_ENV_BYTES + mujoco.MjData(model).nbuffer
                      + 8 * (2 * (2 * ng + n) + len(row) + model.nq + model.nv),
                      f"{fam.env_id} envs")
    engine = MjPool(path, num_envs, num_threads, max_episode_steps,
                    hk.task_capsule(obj == "Reach"), np.stack([row] * num_envs), 2 * ng + n,
                    1, task_state=hk.TASK_STATE,
                    obs_split=[("obs", (ng,)), ("obs.desired_goal", (ng,)),
                               ("obs.observation", (n,))], **pixel_kwargs(fam.make_kwargs))
    from cypool.robotics._render import camera_config, render, setup_render
    hidden = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "object_hidden")
    if obj != "Reach" and hidden >= 0:      # the render callback shows it (rendering alone)
        engine.model_set("geom_rgba", 4 * hidden + 3, 1.0)
    setup_render(engine, model, fam.make_kwargs, camera_config(
        fam.make_kwargs["default_camera_config"], DEFAULT_CAMERA_CONFIG),
        **_render_prep(mujoco, model, obj, tpos, touch))
    return Built(engine, state=st, render=render)


# hand_env.DEFAULT_CAMERA_CONFIG (every Shadow Hand id's default_camera_config)
DEFAULT_CAMERA_CONFIG = dict(distance=0.5, azimuth=55.0, elevation=-25.0,
                             lookat=np.array([1, 0.96, 0.14]))


# MujocoManipulateTouchSensorsEnv's notouch_color and touch_color (touch_visualisation
# "on_touch", every touch id's)
TOUCH_RGBA = np.array([[0, 0.5, 0, 0.2], [1, 0, 0, 0.5]], np.float32)


def _render_prep(mujoco, model, obj, tpos, touch):
    """MjPool.setup_render_prep's arguments for the reference's render callback.
    HandReach (MujocoHandReachEnv._render_callback): the 5 target sites at the goal (the
    task state's first 15 doubles) and the 5 finger sites at the achieved goal (the
    observation's first 15), each offset by its own offset, then mj_forward. The others
    (MujocoManipulateEnv._render_callback): the target object's joint at the goal (0.15 to
    the side where the target position is ignored) with zero velocity, in the env's data
    (kept, as the reference's), mj_forward; the hidden object shown (set on the model at
    build); the touch ids' callback then colours each touch site "robot0:T_*" by its sensor
    "robot0:TS_*" after that mj_forward."""
    from cypool.robotics._render import site_id
    if obj == "Reach":
        sites = [site_id(model, mujoco, f"{kind}{k}") for kind in ("target", "finger")
                 for k in range(5)]
        values = [[("task" if j < 5 else "obs", 3 * (j % 5) + c) for c in range(3)]
                  for j in range(10)]
        return dict(forward=True, sites=list(zip(sites, values)), offset_sites=sites)
    j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "target:joint")
    if j < 0 or int(model.jnt_type[j]) != int(mujoco.mjtJoint.mjJNT_FREE):
        raise ValueError("the Shadow Hand model has no free joint 'target:joint'")
    qa, va = int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
    side = 0.15 if tpos == "ignore" else 0.0
    return dict(forward=True,
                qpos=[(qa + k, ("task", k, side if k == 0 else 0.0)) for k in range(7)],
                qvel=[(va + k, ("const", 0.0)) for k in range(6)],
                touch=_touch_sites(mujoco, model) if touch else None)


def _touch_sites(mujoco, model):
    """(sensordata indices, site ids, TOUCH_RGBA) of the touch sensors and their sites, as
    the reference pairs them (sensor "robot0:TS_x", site "robot0:T_x")."""
    O, adr, sites = mujoco.mjtObj, [], []
    for i in range(model.nsensor):
        name = mujoco.mj_id2name(model, O.mjOBJ_SENSOR, i) or ""
        if "robot0:TS_" in name:
            adr.append(i)                   # the reference reads sensordata[sensor id]
            sites.append(_id(model, mujoco, O.mjOBJ_SITE,
                             name.replace("robot0:TS_", "robot0:T_")))
    return np.array(adr, np.int64), np.array(sites, np.int64), TOUCH_RGBA


def _configure(fam, ids, kw):
    """Envs ``ids`` get the row of the complete kwargs ``kw`` (the reward type)."""
    fam.engine.params[ids] = _row(fam.state, kw)


def _load_actions(fam, actions, env_ids=None):
    """The (n, 20) action batch into the envs' parameter rows, where the kernels read it."""
    from cypool.robotics import _hand as hk
    load_row_actions(fam, actions, env_ids, hk.ACTION_SIZE, hk.PARAMS["act"])


# ------------------------------------------------------------------ goal functions (HER)
def limit(env_id):
    """The id's registered max_episode_steps (HandReach: 50; the others: 100)."""
    return REACH_MAX_EPISODE_STEPS if HAND[env_id][0] == "Reach" else MAX_EPISODE_STEPS


def _goals(achieved_goal, desired_goal, size=7):
    out = []
    for name, g in (("achieved_goal", achieved_goal), ("desired_goal", desired_goal)):
        try:
            a = np.asarray(g)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be an array of {size}-value goals: {exc}") \
                from None
        if a.dtype.kind not in "fiu" or a.dtype.kind == "f" and a.dtype.itemsize > 8:
            raise TypeError(f"{name} must be an array of real numbers (float16/32/64 or "
                            f"integers), got {a.dtype}")
        if a.ndim == 0 or a.shape[-1] != size:
            raise ValueError(f"{name} must have shape ({size},) or (..., {size}), got "
                             f"{a.shape}")
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise ValueError(f"{name} contains NaN or infinite values")
        out.append(a)
    if out[0].shape != out[1].shape:        # _goal_distance asserts equal shapes
        raise ValueError(f"achieved_goal {out[0].shape} and desired_goal {out[1].shape} "
                         f"must have the same shape")
    return out


def compute_reward(env_id, reward_type, achieved_goal, desired_goal, info=None):
    """compute_reward of env_id with this reward type, on one goal pair or a batch.
    BaseManipulateEnv's: sparse: float32 success - 1; dense: -(10 d_pos + d_rot).
    BaseHandReachEnv's: sparse: -(float32 (d > 0.01)); dense: -d.
    HER's batch (C-contiguous (n, g) float64) runs in the kernel, in place; other float64
    manipulation goals go through the kernel's goal distance row by row; other dtypes and
    layouts of HandReach's goals, and the Pen's batches, through numpy's own expression, as
    the reference computes them."""
    from cypool.robotics import _hand as hk
    if reward_type not in REWARD_TYPES:
        raise ValueError(f"reward_type must be 'sparse' or 'dense', got {reward_type!r}")
    obj, tpos, trot, _, _ = HAND[env_id]
    dense = reward_type == "dense"
    if obj == "Reach":                  # HER's (n, 15) / (n, 7) float64 batch, in the kernel
        out = hk.batch_reach_rewards(achieved_goal, desired_goal, REACH_THRESHOLD, dense)
    elif not OBJECTS[obj]["ignore_z_target_rotation"]:
        out = hk.batch_manipulate_rewards(achieved_goal, desired_goal, hk.MODES_POS[tpos],
                                          hk.MODES_ROT[trot],
                                          OBJECTS[obj]["distance_threshold"], dense)
    else:
        out = None
    if out is not None:
        return out
    size = sizes(env_id)[0]
    a, d = _goals(achieved_goal, desired_goal, size)
    shape = a.shape[:-1]
    if obj == "Reach" or a.dtype != np.float64 or d.dtype != np.float64 or (
            a.ndim > 1 and OBJECTS[obj]["ignore_z_target_rotation"]):
        # HandReach: numpy's sum of 15 squares is pairwise along a contiguous axis and
        # sequential along a strided one (a Fortran-ordered batch), so any other layout
        # takes numpy's own expression. The Pen's batches: the reference's
        # euler_a[2] = euler_b[2] replaces row 2's angles, not each row's z (and a batch of
        # fewer than 3 raises IndexError)
        return _numpy_reward(env_id, reward_type, a, d)
    a2 = np.ascontiguousarray(a.reshape(-1, size), dtype=np.float64)
    d2 = np.ascontiguousarray(d.reshape(-1, size), dtype=np.float64)
    cfg = OBJECTS[obj]
    P = hk.PARAMS
    prm = np.zeros(P["ignore_z"] + 1)
    prm[P["tpos"]] = hk.MODES_POS[tpos]
    prm[P["trot"]] = hk.MODES_ROT[trot]
    prm[P["ignore_z"]] = cfg["ignore_z_target_rotation"]
    d_pos, d_rot = hk.distance(prm, a2, d2)
    d_pos, d_rot = d_pos.reshape(shape), d_rot.reshape(shape)
    if reward_type == "sparse":
        ok = (d_pos < cfg["distance_threshold"]).astype(np.float32) * \
            (d_rot < 0.1).astype(np.float32)
        return ok - np.float32(1.0) if shape else np.float32(ok - np.float32(1.0))
    r = -(10.0 * d_pos + d_rot)
    return r if shape else np.float64(r)


def _numpy_reward(env_id, reward_type, a, d):
    """compute_reward's arithmetic in numpy, in the goals' own dtypes (the rotations are the
    installed reference's functions)."""
    obj, tpos, trot, _, _ = HAND[env_id]
    if obj == "Reach":
        dist = np.linalg.norm(a - d, axis=-1)
        if reward_type == "sparse":
            return -(dist > REACH_THRESHOLD).astype(np.float32)
        return -dist
    _reference_envs()
    from gymnasium_robotics.utils import rotations
    cfg = OBJECTS[obj]
    d_pos, d_rot = np.zeros_like(a[..., 0]), np.zeros_like(d[..., 0])
    if tpos != "ignore":
        d_pos = np.linalg.norm(a[..., :3] - d[..., :3], axis=-1)
    qa, qb = a[..., 3:], d[..., 3:]
    if cfg["ignore_z_target_rotation"]:
        ea, eb = rotations.quat2euler(qa), rotations.quat2euler(qb)
        ea[2] = eb[2]                           # (sic: the reference's index, not [..., 2])
        qa = rotations.euler2quat(ea)
    w = rotations.quat_mul(qa, rotations.quat_conjugate(qb))[..., 0]
    d_rot = 2 * np.arccos(np.clip(w, -1.0, 1.0))
    if reward_type == "sparse":
        ok = (d_pos < cfg["distance_threshold"]).astype(np.float32) * \
            (d_rot < 0.1).astype(np.float32)
        return ok - 1.0
    return -(10.0 * d_pos + d_rot)


def _rewards_call(env_id, reward_type, n, general):
    """compute_reward bound to one reward type for a pool of n envs (GoalMethod's fast): the
    kernel's where compute_reward has a batch kernel (not the Pen's ignore_z)."""
    from cypool.robotics import _hand as hk
    obj, tpos, trot, _, _ = HAND[env_id]
    if reward_type not in REWARD_TYPES:             # the general path's ValueError
        return general
    dense = reward_type == "dense"
    if obj == "Reach":
        return hk.reach_rewards_call(REACH_THRESHOLD, dense, n, general)
    if OBJECTS[obj]["ignore_z_target_rotation"]:
        return general
    return hk.manipulate_rewards_call(hk.MODES_POS[tpos], hk.MODES_ROT[trot],
                                      OBJECTS[obj]["distance_threshold"], dense, n, general)


def per_env(env_id, name, env_kwargs, *args, **kwargs):
    """The goal function ``name`` for envs of complete kwargs ``env_kwargs``: one result per
    env (a spec's method hook)."""
    if name not in METHODS:
        raise ValueError(f"cypool.robotics: {name!r} is not one of {METHODS}")
    if name != "compute_reward":                  # BaseRobotEnv's: always False
        _goals(*args[:2], **{k: v for k, v in kwargs.items() if k != "info"},
               size=sizes(env_id)[0])
        return (False,) * len(env_kwargs)
    return per_setting(functools.partial(compute_reward, env_id), "reward_type", env_kwargs,
                       *args, **kwargs)


def hand_spec(env_id):
    from cypool.mujoco.family import _action_dtype_of, _extra_info
    from cypool.mujoco._pool import MjPool
    reward = HAND[env_id][3]
    assets_dir()                            # the ImportError naming the extra, at first use
    kwargs = dict(reward_type=Kwarg(reward, kind=Options(
        REWARD_TYPES, note="gymnasium-robotics' two Shadow Hand rewards")))
    kwargs.update(render_kwargs(width=480, height=480, default_camera_config=None))
    return FamilySpec(
        env_id, MjPool, _space(env_id), gym.spaces.Box(-1.0, 1.0, (20,), np.float32),
        kwargs=kwargs, max_episode_steps=limit(env_id),
        info=(InfoKey("is_success", np.float32, 1, True, False),), render_fps=25,
        build=functools.partial(_build, env_id=env_id), configure=_configure,
        load_actions=_load_actions, extra_info=_extra_info, action_dtype_of=_action_dtype_of,
        methods=method_hooks(functools.partial(per_env, env_id),
                             functools.partial(_rewards_call, env_id)),
        envpool_info=envpool_info(env_id), render=no_render, render_pixels=True,
        render_modes=("rgb_array",))


_SPECS: dict = {}


def spec_of(env_id):
    spec = _SPECS.get(env_id)
    if spec is None:
        spec = _SPECS[env_id] = hand_spec(env_id)
    return spec


def make(env_id, *args, **kwargs):
    return SpecFamily(spec_of(env_id), env_id, *args, **kwargs)
