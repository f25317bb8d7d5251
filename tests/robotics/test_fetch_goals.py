"""Fetch's goal functions (``env.call("compute_reward", a, d, info)``, as HER calls it) against
gymnasium-robotics' on batches, bit for bit; the model cypool loads against the reference env's
after its _env_setup; and the kernels' numpy arithmetic (jacp @ qvel by numpy's BLAS dgemv,
rotations.mat2euler by numpy's arctan2 loop)."""
import numpy as np
import pytest

import cypool

from _fetch_ref import reference  # noqa: E402


def same(x, y):
    assert type(x) is type(y), (type(x), type(y))
    if isinstance(y, np.ndarray):
        assert x.dtype == y.dtype and x.shape == y.shape
    assert np.array_equal(x, y)


def batches(rng):
    near = rng.normal(1.3, 0.1, (4000, 3))
    yield near, near + rng.normal(0, 0.03, (4000, 3))              # around the 0.05 radius
    yield rng.normal(0, 1, 3), rng.normal(0, 1, 3)                  # one pair: scalars
    yield rng.normal(0, 1, (3, 4, 3)), rng.normal(0, 1, (3, 4, 3))
    yield (rng.normal(0, 0.05, (9, 3)).astype(np.float32),
           rng.normal(0, 0.05, (9, 3)).astype(np.float32))
    yield np.zeros((0, 3)), np.zeros((0, 3))
    yield np.arange(6).reshape(2, 3), np.ones((2, 3), np.int64)


@pytest.mark.parametrize("env_id", ["FetchPush-v4", "FetchReachDense-v4"])
def test_call_compute_reward_exact(env_id):
    mine = cypool.make_vec(env_id, 2)
    ref = reference(env_id, 2)
    try:
        mine.reset(seed=0)
        ref.reset(seed=0)
        rng = np.random.default_rng(1)
        for a, d in batches(rng):
            got = mine.call("compute_reward", a, d, {})
            want = ref.call("compute_reward", a, d, {})
            assert len(got) == len(want) == 2
            for x, y in zip(got, want):
                same(x, y)
        for name in ("compute_terminated", "compute_truncated"):
            assert mine.call(name, a, d, {}) == ref.call(name, a, d, {}) == (False, False)
        bad = np.ones((5, 3))
        bad[2, 1] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            mine.call("compute_reward", bad, np.ones((5, 3)), {})
        with pytest.raises(ValueError, match="shape"):
            mine.call("compute_reward", np.ones((5, 3)), np.ones((4, 3)), {})
        with pytest.raises(ValueError, match="shape"):
            mine.call("compute_reward", np.ones((5, 2)), np.ones((5, 2)), {})
    finally:
        mine.close()
        ref.close()


def test_per_env_reward_types():
    mine = cypool.make_vec("FetchReach-v4", 3)
    try:
        mine.set_attr("reward_type", ["sparse", "dense", "sparse"])
        rng = np.random.default_rng(2)
        a, d = rng.normal(0, 0.05, (50, 3)), rng.normal(0, 0.05, (50, 3))
        s, dense, s2 = mine.call("compute_reward", a, d, {})
        same(s, -(np.linalg.norm(a - d, axis=-1) > 0.05).astype(np.float32))
        same(dense, -np.linalg.norm(a - d, axis=-1))
        same(s2, s)
    finally:
        mine.close()


@pytest.mark.parametrize("task", ["Reach", "PickAndPlace"])
def test_model_is_the_reference_after_env_setup(task, tmp_path):
    """Every numeric field of the model cypool loads equals the reference env's model after
    reset_mocap_welds (the weld's identity relpose); the settled state equals the state the
    reference resets to. One exception: MuJoCo >= 3.4 marks a weld compiled without relpose
    with eq_data[:, 11] = 1 (mj_setConst would recompute its relpose); cypool's model states
    the relpose, so it has 0 there. Only mj_setConst and mj_copyBack read the mark, and
    neither side calls them."""
    import mujoco

    from cypool.robotics import fetch
    ref = reference(f"Fetch{task}-v4", 1).envs[0].unwrapped
    model = mujoco.MjModel.from_xml_path(fetch.write_model(task, str(tmp_path)))
    checked = 0
    for name in dir(ref.model):
        want = getattr(ref.model, name, None)
        if not isinstance(want, np.ndarray) or want.dtype.kind not in "biuf" \
                or name in ("paths", "names", "names_map"):
            continue
        got = getattr(model, name)
        if name == "eq_data" and want.shape[1] > 11:
            assert np.array_equal(got[:, 11], np.zeros(len(got))), got
            got, want = got[:, :11], want[:, :11]
        assert np.array_equal(got, want), name
        checked += 1
    assert checked > 100
    s = fetch._settle(task, model, mujoco)
    assert s["time0"] == ref.initial_time
    assert np.array_equal(s["qpos"], ref.initial_qpos)
    assert np.array_equal(s["qvel"], ref.initial_qvel)
    assert np.array_equal(s["grip0"], ref.initial_gripper_xpos)
    if task != "Reach":
        assert s["height"] == ref.height_offset


def test_kernel_arithmetic_is_numpys():
    import mujoco
    from gymnasium_robotics.utils import rotations

    from cypool.robotics import _fetch
    rng = np.random.default_rng(3)
    for nv in (15, 21):
        for _ in range(500):
            jac = rng.normal(size=(3, nv)) * (rng.uniform(size=(3, nv)) < 0.7)
            q = rng.normal(size=nv)
            assert np.array_equal(_fetch.site_velocity(jac, q), jac @ q)
    for k in range(3000):
        quat = rng.normal(size=4)
        m = np.empty(9)
        mujoco.mju_quat2Mat(m, quat / np.linalg.norm(quat))
        if k % 10 == 0:            # about gimbal lock: mat2euler's other branch
            m = np.array([[0.0, rng.normal(), -1.0], [rng.normal(), 1e-17, 0.0],
                          [1.0, 0.0, 1e-17]]).ravel()
        assert np.array_equal(_fetch.mat2euler(m), rotations.mat2euler(m.reshape(3, 3)))
