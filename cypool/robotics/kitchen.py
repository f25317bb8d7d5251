"""``FrankaKitchen-v1`` of gymnasium-robotics 1.4.2 as a cypool spec.

The model is the installed package's (``envs/assets/kitchen_franka/kitchen_assets/
kitchen_env_model.xml``), loaded as it is; the robot's joint bounds and noise amplitudes are
read from the package's ``franka_config.xml``, the tasks' joint indices and goals from its
``kitchen_env`` module, once per pool. Everything per step and reset runs in ``_kitchen.pyx``.

Tasks are taken in the iteration order of ``set(tasks_to_complete)`` in this process (the
reference iterates that set and lists it in its info; Python's string hashing fixes the order
per process). The info values are gymnasium's batch of the reference's lists: an object array
holding one new list per env (None where an env did not report), built from the kernels'
codes; the observation's ``achieved_goal`` and ``desired_goal`` are dicts of per-task arrays
(gymnasium's Dict sorts the task names)."""
from __future__ import annotations

import os

import gymnasium as gym
import numpy as np

from cypool._core.spec import Built, FamilySpec, InfoKey, Kwarg, SpecFamily
from cypool._validate import MIN_ENV_BYTES, check_pool_memory
from cypool.robotics._actions import load_row_actions
from cypool.robotics._render import no_render, pixel_kwargs, render_kwargs

INSTALL_HINT = 'pip install "cypool[robotics]"'
REFERENCE = "gymnasium-robotics 1.4.2"
MAX_EPISODE_STEPS = 280
KITCHEN = {"FrankaKitchen-v1": None}
INFO_KEYS = ("tasks_to_complete", "step_task_completions", "episode_task_completions")
BONUS_THRESH = 0.3
# KitchenEnv.__init__'s robot_env.init_qpos (a literal in the reference's constructor)
INIT_QPOS = (
    1.48388023e-01, -1.76848573e00, 1.84390296e00, -2.47685760e00, 2.60252026e-01,
    7.12533105e-01, 1.59515394e00, 4.79267505e-02, 3.71350919e-02, -2.66279850e-04,
    -5.18043486e-05, 3.12877220e-05, -4.51199853e-05, -3.90842156e-06, -4.22629655e-05,
    6.28065475e-05, 4.04984708e-05, 4.62730939e-04, -2.26906415e-04, -4.65501369e-04,
    -6.44129196e-03, -1.77048263e-03, 1.08009684e-03, -2.69397440e-01, 3.50383255e-01,
    1.61944683e00, 1.00618764e00, 4.06395120e-03, -6.62095997e-03, -2.68278933e-04)


def _reference():
    """The installed kitchen_env module and the assets folder (ImportError naming the
    extra)."""
    try:
        from cypool._quiet import import_quietly

        kenv = import_quietly("gymnasium_robotics.envs.franka_kitchen.kitchen_env")
    except ImportError as exc:
        raise ImportError(f"cypool's FrankaKitchen-v1 needs gymnasium-robotics, whose model "
                          f"it loads: {INSTALL_HINT} ({exc})") from None
    assets = os.path.join(os.path.dirname(os.path.realpath(kenv.__file__)), "..", "assets",
                          "kitchen_franka")
    return kenv, os.path.normpath(assets)


def _goals():
    kenv, _ = _reference()
    return kenv.OBS_ELEMENT_INDICES, kenv.OBS_ELEMENT_GOALS


def _tasks(value):
    """tasks_to_complete, checked: the goal tasks in their first-listed order."""
    indices, _ = _goals()
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, set,
                                                                frozenset)):
        raise TypeError(f"FrankaKitchen-v1: tasks_to_complete must be a list of task names "
                        f"({list(indices)}), got {value!r}")
    out = []
    for task in value:
        if not isinstance(task, str) or task not in indices:
            raise ValueError(f"FrankaKitchen-v1: the task {task!r} cannot be found in the list "
                             f"of possible goals: {list(indices)}")
        if task not in out:
            out.append(task)
    if not out:                 # the reference's Dict spaces would be empty, which it refuses
        raise ValueError("FrankaKitchen-v1: tasks_to_complete must name at least one task")
    return out


def _check_kwargs(kw):
    _tasks(kw["tasks_to_complete"])
    for name in ("robot_noise_ratio", "object_noise_ratio"):
        if not np.isfinite(kw[name]):
            raise ValueError(f"FrankaKitchen-v1: {name} must be finite, got {kw[name]!r}")
    return kw


def _space(tasks):
    _, goals = _goals()
    f = np.float64

    def goal():
        return gym.spaces.Dict({t: gym.spaces.Box(-np.inf, np.inf, np.shape(goals[t]), f)
                                for t in tasks})
    return gym.spaces.Dict(dict(desired_goal=goal(), achieved_goal=goal(),
                                observation=gym.spaces.Box(-np.inf, np.inf, (59,), f)))


class _State:
    """A pool's facts: its task order (the set's), the sorted task names (the Dict's) and
    the config's bounds and amplitudes."""

    __slots__ = ("order", "sorted", "config", "dt", "names", "episodes")


class _Goals:
    """The outputs of one goal key, as a dict of per-task arrays (spec.obs_structure's
    callable leaf)."""

    __slots__ = ("names",)

    def __init__(self, names):
        self.names = names

    def __call__(self, outputs, fn):
        return {task: fn(outputs[name]) for task, name in self.names}


def _config(assets, nv):
    from cypool._quiet import import_quietly
    utils = import_quietly("gymnasium_robotics.envs.franka_kitchen.utils")
    root, _ = utils.get_config_root_node(
        config_file_name=os.path.join(assets, "franka_assets", "franka_config.xml"))
    out = {k: np.zeros((nv, 2) if k.endswith("bound") else nv)
           for k in ("pos_bound", "vel_bound", "pos_noise_amp", "vel_noise_amp")}
    for i in range(nv):
        for k, a in out.items():
            v = utils.read_config_from_node(root, f"qpos{i}", k, float)
            a[i] = v if k.endswith("bound") else v[0]
    return out


def _row(st, kw):
    from cypool.robotics import _kitchen as ki
    P, L = ki.PARAMS, ki.LIMITS
    indices, goals = _goals()
    c = st.config
    row = np.zeros(P["size"])
    row[P["rnr"]] = kw["robot_noise_ratio"]
    row[P["onr"]] = kw["object_noise_ratio"]
    row[P["term"]] = bool(kw["terminate_on_tasks_completed"])
    row[P["remove"]] = bool(kw["remove_task_when_completed"])
    row[P["dt"]] = st.dt
    row[P["ntask"]] = len(st.order)
    row[P["thresh"]] = BONUS_THRESH
    nv, nr = L["nv"], L["nr"]
    row[P["pos_amp"]:P["pos_amp"] + nv] = c["pos_noise_amp"]
    row[P["vel_amp"]:P["vel_amp"] + nv] = c["vel_noise_amp"]
    row[P["vlo"]:P["vlo"] + nr] = c["vel_bound"][:nr, 0]
    row[P["vhi"]:P["vhi"] + nr] = c["vel_bound"][:nr, 1]
    row[P["plo"]:P["plo"] + nr] = c["pos_bound"][:nr, 0]
    row[P["phi"]:P["phi"] + nr] = c["pos_bound"][:nr, 1]
    row[P["init"]:P["init"] + L["nq"]] = INIT_QPOS
    for k, task in enumerate(st.order):
        idx = np.asarray(indices[task])
        row[P["tstart"] + k] = idx[0]
        row[P["tlen"] + k] = len(idx)
        g = P["tgoal"] + L["goal"] * k
        row[g:g + len(idx)] = goals[task]
    ach = [int(i) for t in st.sorted for i in indices[t]]
    des = [float(v) for t in st.sorted for v in goals[t]]
    row[P["nach"]] = len(ach)
    row[P["ach"]:P["ach"] + len(ach)] = ach
    row[P["des"]:P["des"] + len(des)] = des
    return row


def _check_model(model, mujoco, kenv):
    from cypool.robotics import _kitchen as ki
    L = ki.LIMITS
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or ""
             for j in range(model.njnt)]
    robot = [j for j, n in enumerate(names) if n.startswith("robot")]
    ok = (model.nq == L["nq"] and model.nv == L["nv"] and model.nu == L["nr"] and not model.na
          and [int(model.jnt_qposadr[j]) for j in robot] == list(range(L["nr"]))
          and [int(model.jnt_dofadr[j]) for j in robot] == list(range(L["nr"]))
          and list(model.actuator_trnid[:, 0]) == robot)
    for task, idx in kenv.OBS_ELEMENT_INDICES.items():
        idx = np.asarray(idx)
        ok = ok and len(idx) <= L["goal"] and np.array_equal(idx, idx[0] + np.arange(len(idx)))
    if not ok or len(kenv.OBS_ELEMENT_INDICES) > L["tasks"]:
        raise ValueError(f"FrankaKitchen-v1: the installed gymnasium-robotics' kitchen model "
                         f"or tasks differ from {REFERENCE}'s, which cypool serves")


def _build(fam, num_envs, num_threads, max_episode_steps, env_kwargs):
    from cypool._mujoco_import import import_mujoco
    from cypool.mujoco._pool import MjPool
    from cypool.robotics import _kitchen as ki
    mujoco = import_mujoco()
    kenv, assets = _reference()
    path = os.path.join(assets, "kitchen_assets", "kitchen_env_model.xml")
    model = mujoco.MjModel.from_xml_path(path)
    _check_model(model, mujoco, kenv)
    tasks = _tasks(fam.kwargs["tasks_to_complete"])
    st = _State()
    st.order = list(set(tasks))         # the reference's set, in this process's order
    st.sorted = sorted(tasks)           # gymnasium's Dict order
    st.config = _config(assets, model.nv)
    st.dt = model.opt.timestep * ki.LIMITS["frame_skip"]     # MujocoEnv.dt
    st.names = {}
    st.episodes = {}
    row = _row(st, fam.kwargs)
    ng = sum(len(kenv.OBS_ELEMENT_INDICES[t]) for t in tasks)
    check_pool_memory(num_envs, MIN_ENV_BYTES + mujoco.MjData(model).nbuffer
                      + 8 * (2 * (ki.OBS_SIZE + 2 * ng) + len(row) + 2 * (model.nq + model.nv)),
                      f"{fam.env_id} envs")
    split = [("obs", (ki.OBS_SIZE,))]
    leaves = {}
    for key in ("achieved_goal", "desired_goal"):
        leaves[key] = []
        for k, t in enumerate(st.sorted):
            name = f"obs.{key}.{k}"
            split.append((name, (len(kenv.OBS_ELEMENT_INDICES[t]),)))
            leaves[key].append((t, name))
    engine = MjPool(path, num_envs, num_threads, max_episode_steps, ki.task_capsule(),
                    np.stack([row] * num_envs), ki.OBS_SIZE + 2 * ng, ki.INFO_WIDTH,
                    task_state=ki.TASK_STATE, obs_split=split, **pixel_kwargs(fam.make_kwargs))
    structure = ("dict", {"achieved_goal": _Goals(leaves["achieved_goal"]),
                          "desired_goal": _Goals(leaves["desired_goal"]), "observation": "obs"})
    # FrankaRobot's MujocoRenderer (KitchenEnv.render renders it as it stands)
    from cypool.robotics._render import camera_config, render, setup_render
    setup_render(engine, model, fam.make_kwargs, camera_config(
        fam.make_kwargs["default_camera_config"], DEFAULT_CAMERA_CONFIG))
    return Built(engine, observation_space=_space(tasks), state=st, obs_structure=structure,
                 render=render)


def _configure(fam, ids, kw):
    fam.engine.params[ids] = _row(fam.state, kw)


def _load_actions(fam, actions, env_ids=None):
    """The (n, 9) action batch into the envs' parameter rows, where the kernels read it (the
    Kitchen kernel reads no act_f32 flag)."""
    from cypool.robotics import _kitchen as ki
    load_row_actions(fam, actions, env_ids, 9, ki.PARAMS["act"], mark_f32=False)


def _names(st, code, episode):
    """The task names of a code (cached tuples): a bitmask, or an episode's base-8 list."""
    cache = st.episodes if episode else st.names
    names = cache.get(code)
    if names is None:
        if episode:
            out, c = [], code
            while c:
                out.append(st.order[c % 8 - 1])
                c //= 8
        else:
            out = [t for k, t in enumerate(st.order) if (code >> k) & 1]
        names = cache[code] = tuple(out)
    return names


def _extra_info(fam, info, kinds, ids):
    """The three info keys, from the kernels' codes to gymnasium's batch of the reference's
    lists: an object array of one new list per reporting env (None elsewhere)."""
    from cypool.mujoco.family import _extra_info as mujoco_info
    st = fam.state
    # a same-step autoreset's envs: the reference's reset clears the very list its final info
    # holds, so that final info's episode_task_completions is [] (the reset info's is too)
    final = fam.engine.final_mask_arr if ids is None else fam.engine.final_mask_arr[ids]
    for key in INFO_KEYS:
        codes = info.get(key)
        if codes is None:
            continue
        mask = info["_" + key]
        episode = key == "episode_task_completions"
        out = np.full(len(codes), None, dtype=object)
        for r in np.flatnonzero(mask).tolist():
            out[r] = [] if episode and final[r] else list(_names(st, int(codes[r]), episode))
        info[key] = out
    mujoco_info(fam, info, kinds, ids)


# franka_env.DEFAULT_CAMERA_CONFIG (FrankaRobot's default default_camera_config)
DEFAULT_CAMERA_CONFIG = dict(distance=2.2, azimuth=70.0, elevation=-35.0,
                             lookat=np.array([-0.2, 0.5, 2.0]))


def kitchen_spec(env_id):
    from cypool.mujoco._pool import MjPool
    kenv, _ = _reference()
    tasks = list(kenv.OBS_ELEMENT_GOALS)
    kwargs = dict(
        tasks_to_complete=Kwarg(tasks, kind="any", scope="pool"),
        terminate_on_tasks_completed=Kwarg(True, kind="bool"),
        remove_task_when_completed=Kwarg(True, kind="bool"),
        object_noise_ratio=Kwarg(0.0005, kind="number"),
        robot_noise_ratio=Kwarg(0.01, kind="number"),
        **render_kwargs(width=480, height=480, camera_id=None, camera_name=None,
                        default_camera_config=None))
    return FamilySpec(
        env_id, MjPool, _space(tasks), gym.spaces.Box(-1.0, 1.0, (9,), np.float64),
        kwargs=kwargs, check_kwargs=_check_kwargs, max_episode_steps=MAX_EPISODE_STEPS,
        info=tuple(InfoKey(k, np.int64) for k in INFO_KEYS), render_fps=12, build=_build,
        render=no_render, render_pixels=True, render_modes=("rgb_array", "depth_array"),
        configure=_configure, load_actions=_load_actions, extra_info=_extra_info)


_SPECS: dict = {}


def spec_of(env_id):
    if env_id not in KITCHEN:
        raise KeyError(env_id)
    spec = _SPECS.get(env_id)
    if spec is None:
        spec = _SPECS[env_id] = kitchen_spec(env_id)
    return spec


def make(env_id, *args, **kwargs):
    return SpecFamily(spec_of(env_id), env_id, *args, **kwargs)
