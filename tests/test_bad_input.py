"""Bad input and engine faults: one test per cell of the bad-input matrix.

Every rejected call must raise ValueError or TypeError naming the argument and leave every env
exactly as it was: the pool's buffers, counters, random streams and façade flags are compared
before and after, and then the pool and a twin that never saw the bad call take the same valid
step and must return identical results. The matrix: action shapes, NaN/Inf rows and dtypes
(and the conversions that are no error: integers, non-native byte order), env_ids, seeds,
options, constructor arguments and kwargs, the send() path; the faults (divergence and MuJoCo's
warnings, mju_error, ALE errors) against gymnasium, and engine errors that lose nothing: the
other envs' rows and episode ends reach the caller, sync, async and per population member.
"""
import os
import sys

import numpy as np
import pytest
import gymnasium as gym

import cypool

TASK, N, NU = "Hopper-v5", 4, 3       # N != NU, so a transposed batch is a wrong shape
MAX_SEED = 2**63


def make(task=TASK, n=N, **kw):
    kw.setdefault("num_threads", 2)
    return cypool.make_vec(task, n, **kw)


def started(**kw):
    """A pool after a reset and one step, so every buffer and counter holds real values."""
    env = make(**kw)
    env.reset(seed=5)
    env.step(np.random.default_rng(0).uniform(-1, 1, (env.num_envs, NU)))
    return env


@pytest.fixture
def pair():
    env, twin = started(), started()
    yield env, twin
    env.close()
    twin.close()


def snapshot(env):
    """Everything a rejected call could have touched: engine buffers, per-env counters and
    random streams, the family's action state and the façade's flags."""
    e = env.pool.engine
    snap = {name: np.array(getattr(e, name), copy=True)
            for name in ("obs", "reward", "terminated", "truncated", "info", "info_kind_arr",
                         "final_mask_arr", "final_obs", "ops_arr", "actions", "act_f32",
                         "warnings")}
    snap["elapsed"] = e.elapsed()
    snap.update({"stat_" + k: v for k, v in env.episode_statistics().items()})
    snap["rng"] = [repr(e.generator(i).state) for i in range(env.num_envs)]
    snap["done"] = env.pool.done.copy()
    snap["in_flight"] = env.pool.in_flight.copy()
    snap["flags"] = (env._has_reset, env.pool.sent_sync is None, env.pool.family.action_dtype)
    return snap


def assert_same_snapshot(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            assert np.array_equal(a[k], b[k], equal_nan=True), k
        else:
            assert a[k] == b[k], k


def assert_same_step(got, want):
    for x, y in zip(got[:4], want[:4]):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    assert sorted(got[4]) == sorted(want[4])
    for k in want[4]:
        assert np.array_equal(got[4][k], want[4][k]), k


def assert_untouched(env, twin, before):
    """The rejected call changed nothing: same state, and the next valid step of the pool
    equals the twin's, which never saw the bad call."""
    assert_same_snapshot(snapshot(env), before)
    a = np.random.default_rng(1).uniform(-1, 1, (env.num_envs, NU))
    assert_same_step(env.step(a), twin.step(a))


# ------------------------------------------------------------------ actions (continuous)
BAD_ACTIONS = {
    "scalar": (lambda: 0.5, ValueError),
    "extra_dim": (lambda: np.zeros((N, NU, 1)), ValueError),
    "transposed": (lambda: np.zeros((NU, N)), ValueError),
    "empty_batch": (lambda: np.zeros((0, NU)), ValueError),
    "none": (lambda: None, ValueError),
    "ragged_list": (lambda: [[0.0] * NU] * (N - 1) + [[0.0] * (NU - 1)], ValueError),
    "bool": (lambda: np.zeros((N, NU), np.bool_), TypeError),
    "float16": (lambda: np.zeros((N, NU), np.float16), TypeError),
    "longdouble": (lambda: np.zeros((N, NU), np.longdouble), TypeError),
    "object_floats": (lambda: np.zeros((N, NU), object), TypeError),
    "bytes": (lambda: np.zeros((N, NU), "S4"), TypeError),
    "datetime": (lambda: np.zeros((N, NU), "datetime64[s]"), TypeError),
    "nan_float32": (lambda: np.where(np.eye(N, NU, dtype=bool), np.nan, 0).astype(np.float32),
                    ValueError),
    "neg_inf_one_cell": (lambda: np.where(np.arange(N * NU).reshape(N, NU) == 7, -np.inf, 0.0),
                         ValueError),
    "inf_float32_last_env": (lambda: np.vstack([np.zeros((N - 1, NU)),
                                                np.full((1, NU), np.inf)]).astype(np.float32),
                             ValueError),
}


@pytest.mark.parametrize("case", sorted(BAD_ACTIONS))
def test_bad_actions_rejected_naming_actions(pair, case):
    env, twin = pair
    make_bad, exc = BAD_ACTIONS[case]
    before = snapshot(env)
    with pytest.raises(exc, match="actions"):
        env.step(make_bad())
    assert_untouched(env, twin, before)


@pytest.fixture
def env():
    e = cypool.make_vec("Ant-v5", 3, num_threads=2)
    e.reset(seed=0)
    yield e
    e.close()


def _state(env):
    return env.step.__self__.pool.engine.obs.copy(), env.step.__self__.pool.engine.elapsed()


@pytest.mark.parametrize("bad, exc", [
    (np.zeros((3, 7)), ValueError),            # wrong shape
    (np.zeros((2, 8)), ValueError),            # wrong batch
    (np.zeros(24), ValueError),                # flat
    (np.full((3, 8), np.nan), ValueError),     # NaN
    (np.full((3, 8), np.inf), ValueError),     # Inf
    (np.zeros((3, 8), np.complex128), TypeError),
    (np.array([["a"] * 8] * 3), TypeError),
])
def test_bad_actions_leave_every_env_untouched(env, bad, exc):
    before_obs, before_elapsed = _state(env)
    with pytest.raises(exc):
        env.step(bad)
    after_obs, after_elapsed = _state(env)
    assert np.array_equal(before_obs, after_obs)
    assert np.array_equal(before_elapsed, after_elapsed)


def test_one_nan_row_rejects_whole_batch(env):
    a = np.zeros((3, 8))
    a[1, 3] = np.nan
    with pytest.raises(ValueError, match=r"\[1\]"):
        env.step(a)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint8, np.uint64])
def test_integer_actions_convert_exactly_like_gymnasium(dtype):
    # Rule: integer actions are converted to float64, exactly as gymnasium's do_simulation
    # writes them into data.ctrl; costs follow numpy on the integer array (float64 results).
    rng = np.random.default_rng(3)
    ref = gym.make_vec(TASK, N, vectorization_mode="sync")
    env = make()
    as_float = make()
    try:
        o_ref, _ = ref.reset(seed=2)
        assert np.array_equal(env.reset(seed=2)[0], o_ref)
        as_float.reset(seed=2)
        lo = 0 if np.dtype(dtype).kind == "u" else -1
        for _ in range(12):
            a = rng.integers(lo, 2, (N, NU)).astype(dtype)
            want, got = ref.step(a), env.step(a)
            for x, y in zip(got[:4], want[:4]):
                assert x.dtype == y.dtype and np.array_equal(x, y)
            for k in ("reward_ctrl", "x_velocity"):
                assert got[4][k].dtype == want[4][k].dtype == np.float64
                assert np.array_equal(got[4][k], want[4][k])
            assert_same_step(as_float.step(a.astype(np.float64)), got)
    finally:
        env.close(), as_float.close(), ref.close()


@pytest.mark.parametrize("env_id,make_actions", [
    ("Hopper-v5", lambda rng: rng.uniform(-1, 1, (3, 3))),
    ("Hopper-v5", lambda rng: rng.uniform(-1, 1, (3, 3)).astype(np.float32)),
    ("Pong-v5", lambda rng: rng.integers(0, 6, 3)),
])
def test_non_native_byte_order_actions(env_id, make_actions):
    a, b = cypool.make_vec(env_id, 3, seed=0), cypool.make_vec(env_id, 3, seed=0)
    try:
        a.reset(seed=1)
        b.reset(seed=1)
        rng = np.random.default_rng(0)
        for _ in range(5):
            act = make_actions(rng)
            swapped = act.astype(act.dtype.newbyteorder(">" if sys.byteorder == "little" else "<"))
            ra, rb = a.step(act), b.step(swapped)
            for x, y in zip(ra[:4], rb[:4]):
                assert np.array_equal(x, y)
            for key in ra[4]:
                assert np.array_equal(ra[4][key], rb[4][key]) and \
                    ra[4][key].dtype == rb[4][key].dtype
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("task, nu", [("Hopper-v5", 3), ("Ant-v5", 8)])
def test_actions_outside_the_box_pass_through_unclipped(task, nu):
    # gymnasium's MuJoCo envs neither clip nor check the action: MuJoCo clamps ctrl to the
    # actuator's ctrlrange for the physics, while the control cost sees the raw action.
    rng = np.random.default_rng(4)
    ref = gym.make_vec(task, 3, vectorization_mode="sync", max_episode_steps=15)
    env = cypool.make_vec(task, 3, num_threads=2, max_episode_steps=15)
    try:
        assert np.array_equal(env.reset(seed=8)[0], ref.reset(seed=8)[0])
        w = env.pool.family.kwargs["ctrl_cost_weight"]
        for t in range(30):
            a = rng.uniform(-25, 25, (3, nu))
            a = a.astype(np.float32) if t % 2 else a
            assert not env.single_action_space.contains(a[0])
            want, got = ref.step(a), env.step(a)
            for x, y in zip(got[:4], want[:4]):
                assert np.array_equal(x, y), t
            stepped = want[4].get("_reward_ctrl", np.zeros(3, bool))  # not the autoreset rows
            if not stepped.any():
                continue
            assert np.array_equal(got[4]["reward_ctrl"][stepped], want[4]["reward_ctrl"][stepped])
            # the cost of the unclipped action, as numpy computes it in the action's dtype
            cost = np.array([-(w * np.sum(np.square(a[i]))) for i in range(3)])
            assert np.array_equal(got[4]["reward_ctrl"][stepped], cost[stepped])
    finally:
        env.close(), ref.close()


def test_send_rejects_bad_actions_without_marking_envs_in_flight():
    env = make(batch_size=2, num_threads=1)
    twin = make(batch_size=2, num_threads=1)
    for e in (env, twin):
        e.async_reset(seed=0)
        e.recv(), e.recv()
    try:
        before = snapshot(env)
        bad = np.zeros((2, NU))
        bad[1, 2] = np.nan
        with pytest.raises(ValueError, match="actions"):
            env.send(bad, [3, 1])
        with pytest.raises(TypeError, match="actions"):
            env.send(np.zeros((2, NU), np.complex64), [3, 1])
        assert_same_snapshot(snapshot(env), before)
        a = np.random.default_rng(2).uniform(-1, 1, (N, NU))
        got, want = {}, {}
        for e, out in ((env, got), (twin, want)):
            e.send(a)
            for _ in range(2):
                o, r, *_, info = e.recv(timeout=30)
                out.update({int(i): (o[k], r[k]) for k, i in enumerate(info["env_id"])})
        assert sorted(got) == list(range(N))
        for i in range(N):
            assert np.array_equal(got[i][0], want[i][0]) and got[i][1] == want[i][1]
    finally:
        env.close(), twin.close()


# ------------------------------------------------------------------ env_ids
BAD_IDS = {
    "duplicate": ([1, 1], ValueError),
    "out_of_range": ([N], ValueError),
    "negative": ([-1], ValueError),
    "float": ([0.0, 1.0], TypeError),
    "bool_mask": ([True, False, True, False], TypeError),
    "two_dimensional": ([[0, 1]], ValueError),
    "empty": ([], ValueError),
    "none_entry": ([0, None], TypeError),
    "string": ("0", ValueError),
    "uint64_huge": (np.array([2**64 - 1], np.uint64), ValueError),
}


def _rows(ids):
    n = np.asarray(ids).size if np.asarray(ids).ndim == 1 else 1
    return np.zeros((max(n, 1), NU))


@pytest.mark.parametrize("case", sorted(BAD_IDS))
def test_bad_env_ids_in_sync_step(pair, case):
    env, twin = pair
    ids, exc = BAD_IDS[case]
    before = snapshot(env)
    with pytest.raises(exc, match="env_ids"):
        env.step(_rows(ids), env_ids=ids)
    assert_untouched(env, twin, before)


@pytest.mark.parametrize("case", sorted(BAD_IDS))
def test_bad_env_ids_in_async_send(case):
    env = make(batch_size=2, num_threads=1)
    try:
        env.async_reset(seed=0)
        env.recv(), env.recv()
        ids, exc = BAD_IDS[case]
        before = snapshot(env)
        with pytest.raises(exc, match="env_ids"):
            env.send(_rows(ids), ids)
        assert_same_snapshot(snapshot(env), before)
        env.send(np.zeros((2, NU)), [2, 0])       # still usable: nothing was marked in flight
        *_, info = env.recv(timeout=30)
        assert sorted(info["env_id"].tolist()) == [0, 2]
    finally:
        env.close()


# ------------------------------------------------------------------ seeds
BAD_SEEDS = {
    "negative_numpy": (np.int64(-1), ValueError),
    "too_large": (MAX_SEED, ValueError),
    "no_room_for_num_envs": (MAX_SEED - N + 1, ValueError),
    "float": (1.5, TypeError),
    "integral_float": (2.0, TypeError),
    "bool": (True, TypeError),
    "numpy_bool": (np.bool_(False), TypeError),
    "bytes": (b"7", TypeError),
    "dict": ({0: 1}, TypeError),
    "set": ({1}, TypeError),
    "list_with_negative": ([0, 1, -1, 3], ValueError),
    "list_with_float": ([0, 1, 2.5, 3], TypeError),
    "list_with_str": ([0, "1", 2, 3], TypeError),
    "list_with_too_large": ([0, 1, 2, MAX_SEED], ValueError),
    "list_too_long": ([0] * (N + 1), ValueError),
    "array_of_floats": (np.arange(N, dtype=np.float64), TypeError),
    "array_2d": (np.zeros((N, 1), np.int64), TypeError),
}


@pytest.mark.parametrize("case", sorted(BAD_SEEDS))
def test_bad_reset_seed_rejected_naming_seed(pair, case):
    env, twin = pair
    seed, exc = BAD_SEEDS[case]
    before = snapshot(env)
    with pytest.raises(exc, match="seed"):
        env.reset(seed=seed)
    assert_untouched(env, twin, before)


def test_seed_boundaries_accepted():
    env = make()
    try:
        top = MAX_SEED - N                    # env i gets top + i <= 2**63 - 1
        o1, _ = env.reset(seed=top)
        o2, _ = env.reset(seed=[top + i for i in range(N)])
        o3, _ = env.reset(seed=np.uint64(top))
        o4, _ = env.reset(seed=np.arange(top, top + N, dtype=np.uint64))
        assert np.array_equal(o1, o2) and np.array_equal(o1, o3) and np.array_equal(o1, o4)
    finally:
        env.close()


@pytest.mark.parametrize("seed, exc", [
    (MAX_SEED - 1, ValueError),   # valid alone, but env 1 would get 2**63
    (True, TypeError),
    (0.5, TypeError),
    (np.int64(-3), ValueError),
])
def test_bad_default_seed_rejected_by_make_vec(seed, exc):
    # The default seed seeds the first reset: it must be checked where it is given, not at a
    # later reset() that the caller passed no seed to.
    with pytest.raises(exc, match="seed"):
        make(seed=seed)


# ------------------------------------------------------------------ options
BAD_OPTIONS = {
    "unknown_key": ({"seed": 3}, ValueError, "option"),
    "not_a_dict": ([("reset_mask", np.ones(N, bool))], TypeError, "options"),
    "string": ("reset_mask", TypeError, "options"),
    "mask_of_floats": ({"reset_mask": np.ones(N)}, TypeError, "reset_mask"),
    "mask_2d": ({"reset_mask": np.ones((N, 1), bool)}, ValueError, "reset_mask"),
    "mask_none": ({"reset_mask": None}, TypeError, "reset_mask"),
    "mask_too_short": ({"reset_mask": np.ones(N - 1, bool)}, ValueError, "reset_mask"),
}


@pytest.mark.parametrize("case", sorted(BAD_OPTIONS))
def test_bad_reset_options_rejected(pair, case):
    env, twin = pair
    options, exc, name = BAD_OPTIONS[case]
    before = snapshot(env)
    with pytest.raises(exc, match=name):
        env.reset(seed=1, options=options)
    assert_untouched(env, twin, before)


def test_partial_first_reset_rejected_and_env_still_unreset():
    env, twin = make(), make()
    try:
        mask = np.array([True, False, True, False])
        with pytest.raises(ValueError, match="first reset"):
            env.reset(seed=0, options={"reset_mask": mask})
        with pytest.raises(RuntimeError, match="reset"):
            env.step(np.zeros((N, NU)))
        o, _ = env.reset(seed=0)
        assert np.array_equal(o, twin.reset(seed=0)[0])
    finally:
        env.close(), twin.close()


def test_bad_reset_arguments(env):
    with pytest.raises(TypeError):
        env.reset(options={"reset_mask": [True, False, True]})
    with pytest.raises(ValueError):
        env.reset(options={"reset_mask": np.ones(2, bool)})
    with pytest.raises(TypeError):
        env.reset(options={"reset_mask": np.ones(3, np.int64)})
    with pytest.raises(ValueError):
        env.reset(options={"reset_mask": np.zeros(3, bool)})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"reset_mask": np.ones(3, bool), "noise": 1})
    with pytest.raises(ValueError):
        env.reset(seed=[1, 2])
    with pytest.raises(TypeError):
        env.reset(seed="7")
    with pytest.raises(ValueError):
        env.reset(seed=-5)


# ------------------------------------------------------------------ constructor arguments, kwargs
def test_unknown_id_names_close_matches():
    with pytest.raises(ValueError, match="Ant-v5"):
        cypool.make_vec("Ant-v9", 2)     # Ant-v4 and -v5 are served
    with pytest.raises(TypeError, match="env_id"):
        cypool.make_vec(5, 2)


def test_an_env_object_instead_of_an_id_names_the_call_to_make():
    env = gym.make("CartPole-v1")
    with pytest.raises(TypeError, match=r"got TimeLimit: cypool makes the envs itself from an "
                                        r"id, e\.g\. cypool\.make_vec\('CartPole-v1', num_envs\)"):
        cypool.make_vec(env, 2)
    env.close()


def test_unknown_kwarg_is_type_error_naming_it():
    with pytest.raises(TypeError, match="ctrl_cost_wieght.*ctrl_cost_weight"):
        cypool.make_vec("Ant-v5", 2, ctrl_cost_wieght=0.1)


@pytest.mark.parametrize("kwargs, exc", [
    (dict(num_envs=0), ValueError), (dict(num_envs=-3), ValueError),
    (dict(num_envs=2.0), TypeError), (dict(num_envs=2, num_threads=0), ValueError),
    (dict(num_envs=2, num_threads="2"), TypeError),
    (dict(num_envs=2, autoreset_mode="sometimes"), ValueError),
    (dict(num_envs=2, max_episode_steps=0), ValueError),
    (dict(num_envs=2, frame_skip=0), ValueError),
    (dict(num_envs=2, healthy_z_range=0.2), TypeError),
    (dict(num_envs=2, ctrl_cost_weight="big"), TypeError),
    (dict(num_envs=2, xml_file="no_such.xml"), ValueError),
    (dict(num_envs=2, seed=-1), ValueError),
])
def test_bad_constructor_arguments(kwargs, exc):
    with pytest.raises(exc):
        cypool.make_vec("Ant-v5", **kwargs)


BAD_KWARGS = {
    "xml_file_int": (dict(xml_file=5), "xml_file"),
    "xml_file_none": (dict(xml_file=None), "xml_file"),
    "range_of_strings": (dict(healthy_z_range=("a", "b")), "healthy_z_range"),
    "range_of_one": (dict(healthy_angle_range=(0.1,)), "healthy_angle_range"),
    "frame_skip_float": (dict(frame_skip=2.0), "frame_skip"),
    "frame_skip_beyond_c_int": (dict(frame_skip=2**31), "frame_skip"),
    "frame_skip_bool": (dict(frame_skip=True), "frame_skip"),
    "max_episode_steps_float": (dict(max_episode_steps=10.0), "max_episode_steps"),
    "max_episode_steps_beyond_int64": (dict(max_episode_steps=2**63), "max_episode_steps"),
    "batch_size_zero": (dict(batch_size=0), "batch_size"),
    "batch_size_above_num_envs": (dict(batch_size=N + 1), "batch_size"),
    "batch_size_float": (dict(batch_size=2.0), "batch_size"),
    "num_threads_float": (dict(num_threads=1.5), "num_threads"),
    "num_threads_negative": (dict(num_threads=-2), "num_threads"),
    "render_mode": (dict(render_mode="human"), "render_mode"),
    "weight_list": (dict(ctrl_cost_weight=[0.1]), "ctrl_cost_weight"),
    "weight_none": (dict(forward_reward_weight=None), "forward_reward_weight"),
    "noise_string": (dict(reset_noise_scale="0.1"), "reset_noise_scale"),
    "autoreset_mode_int": (dict(autoreset_mode=1), "autoreset_mode"),
}


@pytest.mark.parametrize("case", sorted(BAD_KWARGS))
def test_bad_kwargs_rejected_naming_them(case):
    kwargs, name = BAD_KWARGS[case]
    with pytest.raises((TypeError, ValueError), match=name):
        cypool.make_vec(TASK, N, **kwargs)


def test_failed_construction_leaves_no_half_built_env(monkeypatch):
    # A constructor that raises must not leave an object whose finaliser fails later.
    import gc

    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    for kwargs in (dict(batch_size=0), dict(batch_size=1.5)):
        with pytest.raises((TypeError, ValueError)):
            make(**kwargs)
        gc.collect()
    assert [str(u.exc_value) for u in unraisable] == []


def test_numpy_pair_kwargs_accepted_like_gymnasium():
    # gymnasium unpacks the *_range kwargs, so a numpy pair works there too.
    ref = gym.make_vec(TASK, 2, vectorization_mode="sync",
                       healthy_z_range=np.array([0.8, 2.0]))
    env = make(n=2, healthy_z_range=np.array([0.8, 2.0]))
    try:
        assert np.array_equal(env.reset(seed=3)[0], ref.reset(seed=3)[0])
        a = np.full((2, NU), 0.7)
        for _ in range(20):
            want, got = ref.step(a), env.step(a)
            for x, y in zip(got[:4], want[:4]):
                assert np.array_equal(x, y)
    finally:
        env.close(), ref.close()


# ------------------------------------------------------------------ faults: divergence
def _assets(name):
    return open(os.path.join(os.path.dirname(gym.__file__), "envs/mujoco/assets", name)).read()


def _warning_totals(ref):
    return np.array([sum(int(w.number) for w in e.unwrapped.data.warning) for e in ref.envs])


def _diverge_against_gymnasium(xml, kwargs, actions_at, steps):
    """Step cypool and gymnasium's SyncVectorEnv side by side; return the warning counts."""
    ref = gym.make_vec(TASK, 3, vectorization_mode="sync", xml_file=xml, **kwargs)
    env = make(n=3, xml_file=xml, **kwargs)
    warned = np.zeros(3, int)
    try:
        o_ref, _ = ref.reset(seed=0)
        o, _ = env.reset(seed=0)
        assert np.array_equal(o, o_ref, equal_nan=True)
        for t in range(steps):
            a = actions_at(t)
            w0 = _warning_totals(ref)
            want, got = ref.step(a), env.step(a)
            new = _warning_totals(ref) - w0
            for x, y in zip(got[:4], want[:4]):
                assert np.array_equal(x, y, equal_nan=True), t
            # MuJoCo's warning counters, surfaced per env in info
            if new.any():
                assert got[4]["_mujoco_warnings"].tolist() == (new > 0).tolist()
                assert np.array_equal(got[4]["mujoco_warnings"], new)
            else:
                assert "mujoco_warnings" not in got[4]
            warned += new
            # a diverged env never spreads NaN: rows equal gymnasium's, the others are finite
            calm = new == 0
            assert np.isfinite(got[0][calm]).all() and np.isfinite(got[1][calm]).all()
    finally:
        env.close(), ref.close()
    return warned


def test_huge_actions_diverge_like_gymnasium(tmp_path):
    # Without control limits a 1e12 action blows the state up: MuJoCo warns (bad qacc) and
    # resets that env's data; gymnasium's health check then terminates the episode.
    xml = tmp_path / "hopper_unlimited.xml"
    xml.write_text(_assets("hopper.xml").replace('ctrllimited="true"', 'ctrllimited="false"'))

    def actions(t):
        a = np.zeros((3, NU))
        if t in (2, 6):
            a[1] = 1e12
        return a

    warned = _diverge_against_gymnasium(str(xml), {}, actions, steps=12)
    assert warned[1] >= 2 and warned[0] == warned[2] == 0


def test_unstable_kwargs_diverge_like_gymnasium():
    # A reset noise of 1e4 starts the envs with absurd velocities.
    warned = _diverge_against_gymnasium("hopper.xml", dict(reset_noise_scale=1e4),
                                        lambda t: np.zeros((3, NU)), steps=8)
    assert warned.sum() >= 1


def test_mujoco_warnings_reported_in_info_not_printed(capfd, tmp_path):
    # Without control limits, huge actions make the simulation diverge: MuJoCo warns
    # (bad qacc) and resets that env's state; cypool reports it per env and prints nothing.
    src = open(os.path.join(os.path.dirname(gym.__file__), "envs/mujoco/assets/hopper.xml")).read()
    xml = tmp_path / "hopper_unlimited.xml"
    xml.write_text(src.replace('ctrllimited="true"', 'ctrllimited="false"'))
    env = cypool.make_vec("Hopper-v5", 3, num_threads=2, terminate_when_unhealthy=False,
                          xml_file=str(xml))
    env.reset(seed=0)
    a = np.zeros((3, 3))
    a[1] = 1e12                                   # only env 1 diverges
    *_, info = env.step(a)
    assert info["_mujoco_warnings"].tolist() == [False, True, False]
    assert info["mujoco_warnings"][1] > 0
    obs, *_ = env.step(np.zeros((3, 3)))
    assert np.isfinite(obs).all()                 # nothing spread to the other envs
    assert "WARNING" not in capfd.readouterr().err
    env.close()


# ------------------------------------------------------------------ faults: mju_error
def _ant_with_memory(tmp_path, memory):
    path = tmp_path / f"ant_{memory}.xml"
    path.write_text(_assets("ant.xml").replace('<mujoco model="ant">',
                                               f'<mujoco model="ant"><size memory="{memory}"/>'))
    return str(path)


def _ant_actions(steps):
    # Env 0 idles and is the first to run out of arena memory (at step 3 with seed 0); the
    # others move and are still within it.
    rng = np.random.default_rng(0)
    out = []
    for _ in range(steps):
        a = np.zeros((4, 8))
        a[1:] = rng.uniform(-1, 1, (3, 8))
        a[2] *= 0.1
        out.append(a)
    return out


def _ant_pair(tmp_path, **kw):
    env = cypool.make_vec("Ant-v5", 4, num_threads=2, xml_file=_ant_with_memory(tmp_path, "12K"),
                          **kw)
    ref = cypool.make_vec("Ant-v5", 4, num_threads=2, **kw)   # default arena: never fails
    return env, ref


def test_mju_error_names_the_env_and_spares_the_others(tmp_path):
    env, ref = _ant_pair(tmp_path)
    acts = _ant_actions(3)
    try:
        assert np.array_equal(env.reset(seed=0)[0], ref.reset(seed=0)[0])
        for a in acts[:2]:
            assert_same_step(env.step(a), ref.step(a))
        ref.step(acts[2])
        with pytest.raises(cypool.EngineError) as err:
            env.step(acts[2])
        assert err.value.env_ids == [0]
        assert "stack" in err.value.messages[0] and "env(s) [0]" in str(err.value)
        # the other envs stepped normally
        for i in (1, 2, 3):
            assert np.array_equal(env.pool.engine.obs[i], ref.pool.engine.obs[i])
        # and the pool works again after a reset
        assert np.array_equal(env.reset(seed=4)[0], ref.reset(seed=4)[0])
        for a in acts[:2]:
            assert_same_step(env.step(a), ref.step(a))
    finally:
        env.close(), ref.close()


def test_envs_that_ended_in_a_failed_batch_are_autoreset(tmp_path):
    # Step 3 truncates every env (max_episode_steps=3) and env 0 hits mju_error in it. The
    # EngineError must not lose the other envs' episode ends: at the next step all four are
    # reset, exactly as in a run without the error.
    env, ref = _ant_pair(tmp_path, max_episode_steps=3)
    acts = _ant_actions(4)
    try:
        env.reset(seed=0), ref.reset(seed=0)
        for a in acts[:2]:
            env.step(a), ref.step(a)
        with pytest.raises(cypool.EngineError):
            env.step(acts[2])
        ref.step(acts[2])
        got, want = env.step(acts[3]), ref.step(acts[3])
        assert np.array_equal(want[1], np.zeros(4))            # the reference autoresets all
        assert_same_step(got, want)
    finally:
        env.close(), ref.close()


def _ant_xml_with_memory(tmp_path, memory):
    src = open(os.path.join(os.path.dirname(gym.__file__), "envs/mujoco/assets/ant.xml")).read()
    path = tmp_path / "ant_small_stack.xml"
    path.write_text(src.replace('<mujoco model="ant">',
                                f'<mujoco model="ant"><size memory="{memory}"/>'))
    return str(path)


def test_mujoco_fatal_error_becomes_exception_and_pool_recovers(tmp_path):
    # A tiny arena: mj_step hits mju_error ("stack overflow") once contacts appear.
    xml = _ant_xml_with_memory(tmp_path, "12K")
    env = cypool.make_vec("Ant-v5", 3, num_threads=2, xml_file=xml)
    env.reset(seed=0)
    with pytest.raises(cypool.EngineError) as info:
        for _ in range(50):
            env.step(np.zeros((3, 8)))
    err = info.value
    assert err.env_ids and all(0 <= i < 3 for i in err.env_ids)
    assert "stack" in err.messages[0]
    assert "env" in str(err)
    obs, _ = env.reset(seed=0)         # the pool works again after reset
    assert np.isfinite(obs).all()
    env.step(np.zeros((3, 8)))
    env.close()


# ------------------------------------------------------------------ engine failures lose nothing
def _fragile_ant(tmp_path):
    """An Ant whose arena is too small for some contact states: some envs fail, others not."""
    src = open(os.path.join(os.path.dirname(gym.__file__), "envs/mujoco/assets/ant.xml")).read()
    path = tmp_path / "ant_14k.xml"
    path.write_text(src.replace('<mujoco model="ant">', '<mujoco model="ant"><size memory="14K"/>'))
    return str(path)


def _fragile_ant_actions(t):
    a = np.zeros((4, 8))
    a[2:] = 1.0
    return a


def test_sync_engine_error_carries_the_other_envs(tmp_path):
    env = cypool.make_vec("Ant-v5", 4, num_threads=2, xml_file=_fragile_ant(tmp_path),
                          max_episode_steps=5)
    try:
        env.reset(seed=0)
        partial_batches = 0
        seen_done = 0
        for t in range(40):
            try:
                obs, rew, term, trunc, info = env.step(_fragile_ant_actions(t))
                seen_done += int((term | trunc).sum())
            except cypool.EngineError as err:
                ok = sorted(set(range(4)) - set(err.env_ids))
                obs, rew, term, trunc, info = err.result
                assert info["env_id"].tolist() == ok
                assert obs.shape == (len(ok), env.single_observation_space.shape[0])
                seen_done += int((term | trunc).sum())
                partial_batches += 1
        assert partial_batches >= 3
        stats = env.episode_statistics()
        # every episode the pool counted (failed envs end none) reached the caller
        assert stats["episodes"].sum() == seen_done
    finally:
        env.close()


def test_engine_error_reaches_recv_naming_env(tmp_path):
    src = open(os.path.join(os.path.dirname(gym.__file__), "envs/mujoco/assets/ant.xml")).read()
    xml = tmp_path / "ant.xml"
    xml.write_text(src.replace('<mujoco model="ant">', '<mujoco model="ant"><size memory="12K"/>'))
    env = cypool.make_vec("Ant-v5", 4, batch_size=2, num_threads=2, xml_file=str(xml))
    env.async_reset(seed=0)
    with pytest.raises(cypool.EngineError) as err:
        for _ in range(200):
            *_, info = env.recv()
            env.send(np.zeros((2, 8)), info["env_id"])
    assert err.value.env_ids and "stack" in err.value.messages[0]
    obs, _ = env.reset(seed=0)               # usable again
    assert np.isfinite(obs).all()
    env.close()


def test_async_engine_error_keeps_the_loop_running(tmp_path):
    env = cypool.make_vec("Ant-v5", 4, num_threads=2, batch_size=2,
                          xml_file=_fragile_ant(tmp_path))
    try:
        env.async_reset(seed=0)
        errors, received = 0, np.zeros(4, np.int64)
        for t in range(80):
            try:
                *_, info = env.recv(timeout=10)
                ids = info["env_id"]
            except cypool.EngineError as err:
                errors += 1
                done = [] if err.result is None else err.result[4]["env_id"].tolist()
                ids = np.array(sorted(done + err.env_ids), np.int64)
                assert len(ids) == 2        # the whole batch: finished rows plus failed envs
            received[ids] += 1
            a = np.zeros((len(ids), 8))
            a[np.asarray(ids) >= 2] = 1.0
            env.send(a, ids)               # failed envs are idle: they restart here
        assert errors >= 2
        assert (received > 0).all()
    finally:
        env.close()


def test_population_async_engine_error_keeps_the_loop_running(tmp_path):
    """Member recv: the error names the batch's members (err.members) and carries the
    finished envs' rows; re-sending err.members keeps every member in the rotation."""
    pop = cypool.make_population("Ant-v5", 4, 2, member_batch=2, num_threads=2,
                                 xml_file=_fragile_ant(tmp_path))
    try:
        pop.async_reset(seed=0)
        errors, received = 0, np.zeros(4, np.int64)
        for t in range(80):
            try:
                *_, info = pop.recv(timeout=10)
                members = info["member_id"]
            except cypool.EngineError as err:
                errors += 1
                members = np.asarray(err.members)
                assert len(members) == 2
                rows = set(np.concatenate([members * 2, members * 2 + 1]).tolist())
                done = [] if err.result is None else err.result[4]["env_id"].tolist()
                assert set(err.env_ids) | set(done) == rows          # nothing lost
                assert not set(err.env_ids) & set(done)
            received[members] += 1
            a = np.zeros((len(members), 2, 8))
            a[members >= 2] = 1.0
            pop.send(a, members)
        assert errors >= 2
        assert (received > 0).all()
        pop.reset(seed=1)
        pop.step(np.zeros((4, 2, 8)))
    finally:
        pop.close()


# ------------------------------------------------------------------ Atari (discrete actions)
def _atari_env(n=3, **kw):
    pytest.importorskip("cypool.atari._pool")
    from cypool.mujoco.family import TASKS

    ids = [i for i in cypool.list_envs() if i not in TASKS]
    game = "Pong-v5" if "Pong-v5" in ids else ids[0]
    return cypool.make_vec(game, n, num_threads=2, **kw)


BAD_DISCRETE = {
    "out_of_range": (lambda k: np.full(3, k), ValueError),
    "negative": (lambda k: np.array([0, -1, 0]), ValueError),
    "huge_uint64": (lambda k: np.array([0, 2**64 - 1, 0], np.uint64), ValueError),
    "float_integral": (lambda k: np.zeros(3, np.float64), TypeError),
    "float_nan": (lambda k: np.array([0.0, np.nan, 0.0]), TypeError),
    "bool": (lambda k: np.zeros(3, np.bool_), TypeError),
    "wrong_shape": (lambda k: np.zeros((3, 1), np.int64), ValueError),
    "scalar": (lambda k: 0, ValueError),
}


@pytest.fixture(scope="module")
def atari_pair():
    env, twin = _atari_env(), _atari_env()
    env.reset(seed=0), twin.reset(seed=0)
    yield env, twin
    env.close(), twin.close()


@pytest.mark.parametrize("case", sorted(BAD_DISCRETE))
def test_bad_discrete_actions_rejected(atari_pair, case):
    # Rule: discrete actions must be integers in [0, n); floats are rejected, not rounded.
    # The pair shares one state: each case ends with the same valid step on both.
    env, twin = atari_pair
    k = env.single_action_space.n
    make_bad, exc = BAD_DISCRETE[case]
    before = env.pool.engine.obs.copy(), env.pool.engine.elapsed(), env.pool.done.copy()
    with pytest.raises(exc, match="actions"):
        env.step(make_bad(k))
    assert np.array_equal(env.pool.engine.obs, before[0])
    assert np.array_equal(env.pool.engine.elapsed(), before[1])
    assert np.array_equal(env.pool.done, before[2])
    a = np.array([0, k - 1, 1])
    assert_same_step(env.step(a), twin.step(a))


ALE_BAD_ROM = """
import sys, numpy as np, cypool
from cypool.atari import games
games.read_rom = lambda rom: (sys.argv[1], open(sys.argv[1], "rb").read())
try:
    env = cypool.make_vec("Pong-v5", 2, num_threads=1)
    env.reset(seed=0)
    env.step(np.zeros(2, np.int64))
except Exception as exc:
    print("PYTHON-EXCEPTION", type(exc).__name__, exc)
"""


def test_ale_error_becomes_python_exception(tmp_path):
    # A damaged ROM under a known name (a truncated download) reaches ALE, whose console
    # creation fails. That must come back as a Python exception, never end the interpreter
    # (ALE reports some load failures by calling exit()), so this runs in a child process.
    pytest.importorskip("cypool.atari._pool")
    import subprocess

    bad_rom = tmp_path / "pong.bin"
    bad_rom.write_bytes(b"\x00" * 7)          # not a cartridge image of any supported size
    proc = subprocess.run([sys.executable, "-c", ALE_BAD_ROM, str(bad_rom)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert "PYTHON-EXCEPTION" in proc.stdout, proc.stdout
