"""The Shadow Hand goal functions (``env.call("compute_reward", a, d, info)``, as HER calls it)
against gymnasium-robotics' on batches, bit for bit (float64 through the kernels' goal
distance; other dtypes and the Pen's batches through numpy); the state cypool resets from
against the reference env's after its _env_setup; a reset with a seed mid-episode."""
import os

import numpy as np
import pytest

import cypool

from _fetch_ref import assert_info, assert_same, reference  # noqa: E402


def same(x, y):
    assert type(x) is type(y), (type(x), type(y))
    if isinstance(y, np.ndarray):
        assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, y.dtype, x.shape, y.shape)
    assert np.array_equal(x, y), (x, y)


def batches(rng, goal):
    """Goals about ``goal`` at scales around the thresholds (successes and failures), one
    pair, other dtypes, far-apart goals."""
    n = goal.size
    scale = np.exp(rng.uniform(np.log(1e-4), np.log(0.3), (4000, 1)))
    near = goal + rng.normal(0, 1, (4000, n)) * scale
    if n == 7:
        near[:, 3:] /= np.linalg.norm(near[:, 3:], axis=-1, keepdims=True)
    base = np.repeat(goal[None], 4000, 0)
    yield near, base
    yield near[7], goal
    yield near[:9].astype(np.float32), base[:9].astype(np.float32)
    yield rng.normal(size=(6, n)), rng.normal(size=(6, n))
    yield np.arange(3 * n).reshape(3, n) % 3, np.ones((3, n), np.int64)
    if n == 15:                 # the manipulation tasks' quat_mul takes 1-D and 2-D goals only
        yield near[:24].reshape(2, 3, 4, n), base[:24].reshape(2, 3, 4, n)


@pytest.mark.parametrize("env_id", [
    "HandManipulateBlockRotateZ-v1", "HandManipulateBlockDense-v1",
    "HandManipulateBlockRotateParallel-v1", "HandManipulateEggFullDense-v1",
    "HandManipulatePenRotate-v1", "HandManipulatePenDense-v1", "HandReach-v3",
    "HandReachDense-v3"])
def test_call_compute_reward_exact(env_id):
    mine = cypool.make_vec(env_id, 2)
    ref = reference(env_id, 2)
    try:
        o, _ = ref.reset(seed=0)
        mine.reset(seed=0)
        rng = np.random.default_rng(1)
        hits = 0
        for a, d in batches(rng, o["desired_goal"][0]):
            got = mine.call("compute_reward", a, d, {})
            want = ref.call("compute_reward", a, d, {})
            assert len(got) == len(want) == 2
            for x, y in zip(got, want):
                same(x, y)
            hits += int(np.sum(want[0] == 0))
        if "Dense" not in env_id:
            assert hits > 10                        # successes: sparse rewards of 0
        for name in ("compute_terminated", "compute_truncated"):
            assert mine.call(name, a, d, {}) == ref.call(name, a, d, {}) == (False, False)
        n = a.shape[-1]
        bad = np.ones((5, n))
        bad[2, 1] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            mine.call("compute_reward", bad, np.ones((5, n)), {})
        with pytest.raises(ValueError, match="shape"):
            mine.call("compute_reward", np.ones((5, n)), np.ones((4, n)), {})
        with pytest.raises(ValueError, match="shape"):
            mine.call("compute_reward", np.ones((5, 3)), np.ones((5, 3)), {})
    finally:
        mine.close()
        ref.close()


def test_per_env_reward_types():
    from cypool.robotics.hand import compute_reward
    mine = cypool.make_vec("HandManipulateBlockRotateZ-v1", 3)
    try:
        mine.set_attr("reward_type", ["sparse", "dense", "sparse"])
        rng = np.random.default_rng(2)
        a, d = rng.normal(size=(50, 7)), rng.normal(size=(50, 7))
        s, dense, s2 = mine.call("compute_reward", a, d, {})
        same(s, compute_reward("HandManipulateBlockRotateZ-v1", "sparse", a, d))
        same(dense, compute_reward("HandManipulateBlockRotateZ-v1", "dense", a, d))
        same(s2, s)
    finally:
        mine.close()


@pytest.mark.parametrize("env_id", ["HandReach-v3", "HandManipulatePen-v1",
                                    "HandManipulateBlock_BooleanTouchSensors-v1"])
def test_setup_is_the_reference_after_env_setup(env_id):
    import mujoco

    from cypool.robotics import hand
    ref = reference(env_id, 1).envs[0].unwrapped
    obj, _, _, _, touch = hand.HAND[env_id]
    xml = "reach.xml" if obj == "Reach" else hand.OBJECTS[obj]["xml"]
    if touch:
        xml = xml.replace(".xml", "_touch_sensors.xml")
    model = mujoco.MjModel.from_xml_path(os.path.join(hand.assets_dir(), xml))
    s = hand._setup(model, mujoco, obj, touch)
    assert s["time0"] == ref.initial_time
    assert np.array_equal(s["qpos"], ref.initial_qpos)
    assert np.array_equal(s["qvel"], ref.initial_qvel)
    if obj == "Reach":
        assert np.array_equal(s["init_goal"], ref.initial_goal)
        assert np.array_equal(s["meet"], ref.palm_xpos + np.array([0.0, -0.09, 0.05]))
    else:
        assert np.array_equal(hand.parallel_quats(), np.array(ref.parallel_quats))
    if touch:
        assert s["touch"] == list(ref._touch_sensor_id)


def test_reset_with_seed_mid_episode():
    """reset(seed=) after some steps continues each env's MuJoCo data, as the reference's."""
    env_id = "HandManipulateBlockRotateXYZ-v1"
    mine, ref = cypool.make_vec(env_id, 2), reference(env_id, 2)
    try:
        rng = np.random.default_rng(0)
        for seed in (1, 2):
            assert_same(mine.reset(seed=seed)[0], ref.reset(seed=seed)[0], "reset")
            for t in range(5):
                a = rng.uniform(-1, 1, (2, 20)).astype(np.float32)
                x, y = mine.step(a), ref.step(a)
                assert_same(x[0], y[0], f"step {t}")
                assert_same(x[1], y[1], f"reward {t}")
                assert_info(x[4], y[4], f"step {t}")
    finally:
        mine.close()
        ref.close()


def test_kernel_goal_distance_is_the_references():
    """_hand.distance row by row against _goal_distance on one pair at a time (the env's own
    calls): the Pen's Euler round trip, its gimbal-lock branch, the Block's position term."""
    from cypool.robotics import _hand
    from cypool.robotics.hand import HAND, OBJECTS
    rng = np.random.default_rng(4)
    for env_id in ("HandManipulatePen-v1", "HandManipulateBlockFull-v1"):
        ref = reference(env_id, 1).envs[0].unwrapped
        obj, tpos, trot, _, _ = HAND[env_id]
        P = _hand.PARAMS
        prm = np.zeros(P["ignore_z"] + 1)
        prm[P["tpos"]], prm[P["trot"]] = _hand.MODES_POS[tpos], _hand.MODES_ROT[trot]
        prm[P["ignore_z"]] = OBJECTS[obj]["ignore_z_target_rotation"]
        a, b = rng.normal(size=(1500, 7)), rng.normal(size=(1500, 7))
        a[::10, 3:] = [0.5 ** 0.5, 0.0, 0.5 ** 0.5, 0.0]          # pitch 90 degrees
        b[::7, 3:] = [0.5 ** 0.5, 0.0, -(0.5 ** 0.5), 0.0]
        a[::5, 3:] /= np.linalg.norm(a[::5, 3:], axis=-1, keepdims=True)
        dp, dr = _hand.distance(prm, a, b)
        for i in range(len(a)):
            want = ref._goal_distance(a[i], b[i])
            assert dp[i] == want[0] and dr[i] == want[1], (env_id, i)
