"""cypool.envpool's Gymnasium-Robotics ids (issue #43): EnvPool 1.2.5's layout (spaces, key
order, dtypes, info keys, ids, options), checked against the installed EnvPool; the values
are gymnasium-robotics' (through cypool.make_vec seeded alike), not EnvPool's own port.
EnvPool's info ``distance`` of HandManipulate and Adroit: its formula checked on EnvPool's own
observations, cypool's value on gymnasium-robotics' functions and envs."""
import importlib
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import cypool
import cypool.envpool as cep

sys.path.insert(0, str(Path(__file__).parent))
from _envpool_ref import real_envpool  # noqa: E402

# (EnvPool id, the gymnasium-robotics id cypool runs for it)
IDS = [("FetchReach-v1", "FetchReach-v4"), ("FetchPushDense-v4", "FetchPushDense-v4"),
       ("HandReach-v0", "HandReach-v3"),
       ("HandManipulateEgg_BooleanTouchSensors-v0", "HandManipulateEgg_BooleanTouchSensors-v1"),
       ("AdroitHandDoorSparse-v1", "AdroitHandDoorSparse-v1"),
       ("PointMaze_UMaze-v3", "PointMaze_UMaze-v3")]


def _layout(x):
    if isinstance(x, dict):
        return [(k, _layout(v)) for k, v in x.items()]
    a = np.asarray(x)
    return (a.dtype, a.shape)


@pytest.mark.parametrize("task,own", IDS)
def test_layout_is_envpools(task, own):
    ep = real_envpool()
    ours = cep.make_gymnasium(task, num_envs=2)
    theirs = ep.make_gymnasium(task, num_envs=2)
    try:
        assert ours.spec.task_id == task and ours._family.env_id == own
        assert ours.observation_space == theirs.observation_space
        assert list(getattr(ours.observation_space, "spaces", {})) == \
            list(getattr(theirs.observation_space, "spaces", {}))
        assert ours.action_space == theirs.action_space
        assert type(theirs).__name__ in repr(ours)
        assert ours.config == {**theirs.config, "base_path": ours.config["base_path"]}
        (o, i), (ro, ri) = ours.reset(), theirs.reset()
        assert _layout(o) == _layout(ro)
        assert _layout({k: v for k, v in i.items() if k != "players"}) == \
            _layout({k: v for k, v in ri.items() if k != "players"})
        a = np.zeros((2,) + ours.action_space.shape, np.float32)
        x, y = ours.step(a), theirs.step(a)
        assert _layout(x[0]) == _layout(y[0])
        assert [np.asarray(v).dtype for v in x[1:4]] == [np.asarray(v).dtype for v in y[1:4]]
        assert list(x[4]) == list(y[4])
    finally:
        ours.close(), theirs.close()


@pytest.mark.parametrize("task,own", IDS)
def test_values_are_gymnasium_robotics(task, own):
    env = cep.make_gymnasium(task, num_envs=2, seed=11)
    ref = cypool.make_vec(own, 2)
    try:
        o, _ = env.reset()
        r, _ = ref.reset(seed=[11, 12])
        keys = list(o) if isinstance(o, dict) else [None]
        pick = (lambda d, k: d if k is None else d[k])
        for k in keys:
            assert np.array_equal(pick(o, k), pick(r, k))
        rng = np.random.default_rng(1)
        for _ in range(5):
            a = rng.uniform(-1, 1, (2,) + env.action_space.shape).astype(np.float32)
            x, y = env.step(a), ref.step(a)
            for k in keys:
                assert np.array_equal(pick(x[0], k), pick(y[0], k))
            assert np.array_equal(x[1], np.asarray(y[1]).astype(np.float32))
            assert np.array_equal(x[2], y[2]) and np.array_equal(x[3], y[3])
            ok = "success" if "success" in x[4] else "is_success"
            assert np.array_equal(x[4][ok], np.asarray(y[4][ok], np.float64))
            if not task.startswith(("HandManipulate", "Adroit")):   # theirs: below
                d = np.linalg.norm(x[0]["achieved_goal"] - x[0]["desired_goal"], axis=-1)
                assert np.array_equal(x[4]["distance"], d)
    finally:
        env.close(), ref.close()


def test_send_recv_with_batch_size():
    env = cep.make_gymnasium("FetchReach-v1", num_envs=3, batch_size=2, seed=0)
    try:
        env.async_reset()
        seen = []
        for _ in range(5):
            o, r, term, trunc, info = env.recv()
            ids = info["env_id"]
            assert len(ids) == 2 and list(o) == ["observation", "achieved_goal", "desired_goal"]
            assert o["observation"].shape == (2, 10) and r.dtype == np.float32
            assert info["is_success"].dtype == np.float64 and info["distance"].shape == (2,)
            seen += ids.tolist()
            env.send(np.zeros((2, 4), np.float32), ids)
        assert set(seen) == {0, 1, 2}
    finally:
        env.close()


def test_options():
    env = cep.make_gymnasium("FetchReach-v1", num_envs=1, reward_type="dense",
                             max_episode_steps=4)
    ref = cypool.make_vec("FetchReachDense-v4", 1, max_episode_steps=4)
    try:
        o, _ = env.reset()
        ref.reset(seed=42)
        for k in range(4):
            a = np.full((1, 4), 0.3, np.float32)
            x, y = env.step(a), ref.step(a)
            assert x[1][0] < 0 and np.array_equal(x[1], y[1].astype(np.float32))
            assert x[3].tolist() == y[3].tolist() == [k == 3]
    finally:
        env.close(), ref.close()
    spec = cep.make_spec("PointMaze_UMaze-v3", continuing_task=False)
    assert spec.config.continuing_task is False


def test_refusals():
    with pytest.raises(ValueError, match=r"xml_file='x.xml' selects an EnvPool variant"):
        cep.make_gymnasium("FetchReach-v1", xml_file="x.xml")
    with pytest.raises(ValueError, match=r"maze_map='LARGE_MAZE' selects an EnvPool variant"):
        cep.make_gymnasium("PointMaze_UMaze-v3", maze_map="LARGE_MAZE")
    with pytest.raises(ValueError, match="make_vec"):       # not an EnvPool id
        cep.make_gymnasium("AntMaze_UMaze-v5")
    with pytest.raises(ValueError, match="reward_type"):
        cep.make_gymnasium("FetchReach-v1", reward_type="nope")


def test_every_envpool_robotics_id_is_served():
    ep = real_envpool()
    import re
    theirs = [t for t in ep.list_all_envs() if re.match(
        r"(Fetch(Reach|Push|Slide|PickAndPlace)|HandReach|HandManipulate|AdroitHand|PointMaze_)",
        t)]
    ours = set(cep.list_all_envs())
    assert len(theirs) == 156 and set(theirs) <= ours


# ---------------------------------------------------------------- info["distance"]
# HandManipulate: every target mode EnvPool has (position random / ignore; rotation xyz, z,
# parallel; the Pen's ignore_z_target_rotation: no EnvPool id ignores the rotation), one with
# touch sensors; Adroit: each task, dense and sparse
MANIPULATE = ["HandManipulateBlock-v0", "HandManipulateBlockRotateZ-v1",
              "HandManipulateBlockRotateParallel_BooleanTouchSensorsDense-v1",
              "HandManipulateEggRotate-v0", "HandManipulatePen-v1",
              "HandManipulatePenRotateDense-v0"]
ADROIT = ["AdroitHandDoor-v1", "AdroitHandHammerSparse-v1", "AdroitHandPen-v1",
          "AdroitHandRelocateSparse-v1"]


def _libm_quat2euler(q):
    w, x, y, z = (float(v) for v in q)
    s = 2.0 / (w * w + x * x + y * y + z * z)
    X, Y, Z = x * s, y * s, z * s
    m = [1.0 - (y * Y + z * Z), x * Y - w * Z, x * Z + w * Y, x * Y + w * Z,
         1.0 - (x * X + z * Z), y * Z - w * X, x * Z - w * Y, y * Z + w * X,
         1.0 - (x * X + y * Y)]
    cy = math.sqrt(m[8] * m[8] + m[5] * m[5])
    if cy > 4 * np.finfo(np.float64).eps:
        return [-math.atan2(m[5], m[8]), -math.atan2(-m[2], cy), -math.atan2(m[1], m[0])]
    return [0.0, -math.atan2(-m[2], cy), -math.atan2(-m[3], m[4])]


def _libm_euler2quat(e):
    ai, aj, ak = e[2] / 2.0, -e[1] / 2.0, e[0] / 2.0
    si, sj, sk = math.sin(ai), math.sin(aj), math.sin(ak)
    ci, cj, ck = math.cos(ai), math.cos(aj), math.cos(ak)
    cc, cs, sc, ss = ci * ck, ci * sk, si * ck, si * sk
    return [cj * cc + sj * ss, cj * cs - sj * sc, -(cj * ss + sj * cc), cj * sc - sj * cs]


def _envpool_manipulate_distance(cfg, a, d):
    """EnvPool's HandManipulate ``distance`` of one goal pair: d_pos + d_rot of
    gymnasium-robotics' _goal_distance, in scalar double arithmetic and libm's sqrt, acos,
    atan2, sin, cos (Python's math), as its C++ computes it."""
    a, d = [float(v) for v in a], [float(v) for v in d]
    d_pos = d_rot = 0.0
    if cfg["target_position"] != "ignore":
        dx, dy, dz = a[0] - d[0], a[1] - d[1], a[2] - d[2]
        d_pos = math.sqrt(dx * dx + dy * dy + dz * dz)
    if cfg["target_rotation"] != "ignore":
        qa, qb = a[3:], d[3:]
        if cfg["ignore_z_target_rotation"]:
            ea = _libm_quat2euler(qa)
            ea[2] = _libm_quat2euler(qb)[2]
            qa = _libm_euler2quat(ea)
        w = qa[0] * qb[0] - qa[1] * -qb[1] - qa[2] * -qb[2] - qa[3] * -qb[3]
        d_rot = 2.0 * math.acos(min(max(w, -1.0), 1.0))
    return d_pos + d_rot


def _goal_distance_of(own):
    """gymnasium-robotics' env of the id ``own`` with its target modes, for its
    _goal_distance (not constructed: its constructor fails on the installed MuJoCo, see
    tests/robotics/_fetch_ref.py)."""
    import gymnasium as gym
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gr = pytest.importorskip("gymnasium_robotics")
    gym.register_envs(gr)
    spec = gym.spec(own)
    module, cls = spec.entry_point.split(":")
    env = object.__new__(getattr(importlib.import_module(module), cls))
    env.target_position = spec.kwargs["target_position"]
    env.target_rotation = spec.kwargs["target_rotation"]
    env.ignore_z_target_rotation = cls == "MujocoHandPenEnv"    # what its constructor passes
    # one goal pair at a time, as its step: a batch would set row 2's Euler z (the Pen)
    return lambda a, d: np.array([np.add(*env._goal_distance(x, y)) for x, y in zip(a, d)])


@pytest.mark.parametrize("task", MANIPULATE)
def test_envpool_manipulate_distance_is_d_pos_plus_d_rot(task):
    """EnvPool's HandManipulate distance is d_pos + d_rot of its own goals, after resets
    (nonzero) and autoresets too: bit for bit in its libm arithmetic; within 4e-15 of
    gymnasium-robotics' numpy functions (measured: at most 1.6e-15, numpy's SIMD arccos and
    its Euler conversions against libm's)."""
    ep = real_envpool()
    env = ep.make_gymnasium(task, num_envs=3, seed=5, max_episode_steps=3)
    ref = _goal_distance_of(task[:-3] + "-v1")
    cfg = env.config
    try:
        o, info = env.reset()
        rng = np.random.default_rng(0)
        autoresets, worst = 0, 0.0
        for k in range(8):
            a, d, dist = o["achieved_goal"], o["desired_goal"], info["distance"]
            assert dist.dtype == np.float64 and (dist > 0).all()
            assert np.array_equal(dist, [_envpool_manipulate_distance(cfg, x, y)
                                         for x, y in zip(a, d)])
            worst = max(worst, np.abs(dist - ref(a, d)).max())
            autoresets += k > 0 and int((info["elapsed_step"] == 0).sum())
            o, _, _, _, info = env.step(rng.uniform(-1, 1, (3, 20)).astype(np.float32))
        assert autoresets and worst <= 4e-15
    finally:
        env.close()


@pytest.mark.parametrize("task", MANIPULATE)
def test_manipulate_distance_is_gymnasium_robotics_goal_distance(task):
    """cypool.envpool's HandManipulate distance: d_pos + d_rot of gymnasium-robotics'
    _goal_distance on cypool's goals, bit for bit, at resets, steps and autoresets."""
    env = cep.make_gymnasium(task, num_envs=3, seed=7, max_episode_steps=3)
    ref = _goal_distance_of(env._family.env_id)
    try:
        o, info = env.reset()
        rng = np.random.default_rng(1)
        autoresets = 0
        for k in range(8):
            dist = info["distance"]
            assert dist.dtype == np.float64
            assert np.array_equal(dist, ref(o["achieved_goal"], o["desired_goal"]))
            autoresets += k > 0 and int((info["elapsed_step"] == 0).sum())
            o, _, _, _, info = env.step(rng.uniform(-1, 1, (3, 20)).astype(np.float32))
        assert autoresets
    finally:
        env.close()


def _adroit_task(eid):
    return eid[len("AdroitHand"):].split("-")[0].replace("Sparse", "")


@pytest.mark.parametrize("task", ADROIT)
def test_envpool_adroit_distance(task):
    """EnvPool's Adroit distance: 0 after a reset (autoresets too); after a step its
    goal_distance, on its own observation: Door the hinge angle obs[28], Pen
    |obs[-6:-3]|, Relocate |obs[-3:]|, each norm a left-to-right sum of squares, bit for
    bit. Hammer's |nail - nail_goal| (the goal's site is not observed) is the nail's slide
    from its 0.091 start, |0.091 - obs[26]|, within 2e-16 (measured at most 5.6e-17)."""
    ep = real_envpool()
    env = ep.make_gymnasium(task, num_envs=2, seed=3, max_episode_steps=3)
    name = _adroit_task(task)
    try:
        _, info = env.reset()
        assert info["distance"].dtype == np.float64 and (info["distance"] == 0).all()
        rng = np.random.default_rng(2)
        autoresets = 0
        for _ in range(7):
            a = rng.uniform(-1, 1, (2,) + env.action_space.shape).astype(np.float32)
            o, _, _, _, info = env.step(a)
            dist, on = info["distance"], info["elapsed_step"] > 0
            assert (dist[~on] == 0).all()
            autoresets += int((~on).sum())
            if name == "Hammer":
                assert np.abs(dist[on] - np.abs(0.091 - o[on, 26])).max(initial=0) <= 2e-16
                continue
            want = {"Door": lambda: o[:, 28], "Pen": lambda: np.linalg.norm(o[:, -6:-3], axis=-1),
                    "Relocate": lambda: np.linalg.norm(o[:, -3:], axis=-1)}[name]()
            assert np.array_equal(dist[on], want[on])
        assert autoresets
    finally:
        env.close()


@pytest.mark.parametrize("task", ADROIT)
def test_adroit_distance_is_gymnasium_robotics_goal_distance(task):
    """cypool.envpool's Adroit distance: the goal_distance of gymnasium-robotics' step (its
    np.linalg.norm of one 3-vector), read from reference envs stepped alike (their
    observations equal cypool's), bit for bit; 0 after resets and autoresets; env_id
    subsets too."""
    import gymnasium as gym
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gr = pytest.importorskip("gymnasium_robotics")
        gym.register_envs(gr)
        refs = [gym.make(task).unwrapped for _ in range(2)]
    name = _adroit_task(task)

    def goal_distance(r):
        sx, xp = r.data.site_xpos, r.data.xpos
        if name == "Door":
            return r.data.qpos[r.door_hinge_addrs]
        if name == "Hammer":
            return np.linalg.norm(sx[r.target_obj_site_id] - sx[r.goal_site_id])
        if name == "Pen":
            return np.linalg.norm(xp[r.obj_body_id] - sx[r.eps_ball_site_id])
        return np.linalg.norm(xp[r.obj_body_id] - sx[r.target_obj_site_id])

    env = cep.make_gymnasium(task, num_envs=2, seed=11, max_episode_steps=3)
    try:
        _, info = env.reset()
        for i, r in enumerate(refs):
            r.reset(seed=11 + i)
        assert (info["distance"] == 0).all()
        rng = np.random.default_rng(3)
        autoresets = 0
        for k in range(8):
            ids = np.array([1, 0]) if k % 3 else np.array([1])
            a = rng.uniform(-1, 1, (len(ids),) + env.action_space.shape).astype(np.float32)
            o, _, _, _, info = env.step(a, env_id=ids)
            assert info["env_id"].tolist() == ids.tolist()
            for j, i in enumerate(ids):
                if info["elapsed_step"][j] == 0:        # cypool's autoreset: the reference's
                    refs[i].reset()
                    assert info["distance"][j] == 0
                    autoresets += 1
                    continue
                assert np.array_equal(refs[i].step(a[j])[0], o[j])
                assert info["distance"][j] == goal_distance(refs[i])
        assert autoresets
    finally:
        env.close()
        for r in refs:
            r.close()


def test_hammer_distance_after_an_initial_state_dict():
    """The nail's goal follows the board an initial_state_dict moves (cypool's pool reset
    with the reference's option; EnvPool has none): x, y included."""
    import gymnasium as gym
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gr = pytest.importorskip("gymnasium_robotics")
        gym.register_envs(gr)
        ref = gym.make("AdroitHandHammer-v1").unwrapped
    env = cep.make_gymnasium("AdroitHandHammer-v1", num_envs=1, seed=0)
    try:
        env.reset()
        ref.reset(seed=0)
        s = ref.get_env_state()
        state = dict(qpos=s["qpos"], qvel=s["qvel"],
                     board_pos=s["board_pos"] + [0.01, -0.02, 0.003])
        env.pool.reset(options={"initial_state_dict": state})
        ref.reset(options={"initial_state_dict": state})
        rng = np.random.default_rng(4)
        for _ in range(3):
            a = rng.uniform(-1, 1, (1, 26)).astype(np.float32)
            o, _, _, _, info = env.step(a)
            assert np.array_equal(ref.step(a[0])[0], o[0])
            sx = ref.data.site_xpos
            assert info["distance"][0] == np.linalg.norm(sx[ref.target_obj_site_id] -
                                                         sx[ref.goal_site_id])
    finally:
        env.close(), ref.close()
