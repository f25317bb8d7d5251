"""CartPole-v0/v1, MountainCar-v0, Pendulum-v1, Acrobot-v1 and MountainCarContinuous-v0
against gymnasium's envs under SyncVectorEnv, bit for bit: float32 observations, float64
rewards, flags and info, in the three autoreset modes, on one and two threads, across
auto-resets, termination and truncation; the rest of cypool's API on top."""
import json
import os
import pickle
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import cypool
from cypool.vector import parse_autoreset_mode


def _pair(env_id, n, mode, threads=2, **kw):
    env = cypool.make_vec(env_id, n, num_threads=threads, autoreset_mode=mode, **kw)
    ref = gym.make_vec(env_id, n, vectorization_mode="sync",
                       vector_kwargs={"autoreset_mode": parse_autoreset_mode(mode)}, **kw)
    return env, ref


def _same(x, y):
    for k in range(4):
        assert x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k]), k


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("mode", ["next_step", "same_step", "disabled"])
@pytest.mark.parametrize("env_id,kw", [("CartPole-v1", {}), ("CartPole-v0", {}),
                                       ("CartPole-v1", {"sutton_barto_reward": True}),
                                       ("MountainCar-v0", {}),
                                       ("MountainCar-v0", {"goal_velocity": 0.02})])
def test_matches_gymnasium(env_id, kw, mode, threads):
    n = 5
    env, ref = _pair(env_id, n, mode, threads, **kw)
    try:
        assert env.single_observation_space == ref.single_observation_space
        assert env.single_action_space == ref.single_action_space
        o, info = env.reset(seed=3)
        r, ref_info = ref.reset(seed=3)
        assert o.dtype == r.dtype and np.array_equal(o, r) and info == ref_info == {}
        rng = np.random.default_rng(1)
        ends = truncs = terms = 0
        cartpole = env_id.startswith("CartPole")
        for t in range(700):
            if t % 3 == 0:
                a = rng.integers(0, env.single_action_space.n, n)
            elif cartpole:       # keeps the pole up for a while: v0's 200-step limit is hit
                a = np.where(o[:, 2] + 0.5 * o[:, 3] > 0, 1, 0)
            else:                # pumps energy: the car reaches the flag now and then
                a = np.where(o[:, 1] >= 0, 2, 0)
            x, y = env.step(a), ref.step(a)
            _same(x, y)
            o = x[0]
            if mode == "same_step" and "final_obs" in y[4]:
                for i in np.flatnonzero(y[4]["_final_obs"]):
                    assert np.array_equal(x[4]["final_obs"][i], y[4]["final_obs"][i])
            done = x[2] | x[3]
            ends += int(done.sum())
            truncs += int(x[3].sum())
            terms += int(x[2].sum())
            if mode == "disabled" and done.any():
                o, _ = env.reset(options={"reset_mask": done})
                r, _ = ref.reset(options={"reset_mask": done})
                assert np.array_equal(o, r)
        assert ends >= n                          # every env crossed an auto-reset
        if env_id in ("CartPole-v0", "MountainCar-v0"):
            assert truncs > 0                      # the 200-step limit was reached
        if env_id.startswith("MountainCar") and not kw:
            assert terms > 0                       # and the goal
    finally:
        env.close()
        ref.close()


def test_actions_are_checked_like_gymnasiums_assert():
    env = cypool.make_vec("CartPole-v1", 3)
    try:
        env.reset(seed=0)
        with pytest.raises(TypeError, match="integers"):
            env.step(np.zeros(3))
        with pytest.raises(ValueError, match=r"in \[0, 2\)"):
            env.step(np.array([0, 2, 1]))
        with pytest.raises(ValueError, match="shape"):
            env.step(np.zeros((3, 1), np.int64))
        with pytest.raises(TypeError, match="sutton_barto_reward"):
            cypool.make_vec("CartPole-v1", 1, sutton_barto_reward=1)
        env.step(np.array([0, 1, 1], np.int8))    # any integer dtype
    finally:
        env.close()


def test_registered_async_population_and_snapshots():
    assert {"CartPole-v0", "CartPole-v1"} <= set(cypool.list_envs())
    env = gym.make_vec("cypool/CartPole-v1", num_envs=4, batch_size=2, seed=0)
    try:
        assert isinstance(env.unwrapped, cypool.VectorEnv) and env.unwrapped.is_async
        env.unwrapped.async_reset()
        for _ in range(50):
            _, _, _, _, info = env.unwrapped.recv(timeout=30)
            env.unwrapped.send(np.ones(2, np.int64), info["env_id"])
    finally:
        env.close()
    pop = cypool.make_population("CartPole-v1", 3, 2, seed=1)
    try:
        pop.reset()
        for _ in range(30):
            pop.step(np.ones((3, 2), np.int64))
        twin = pickle.loads(pickle.dumps(pop))
        try:
            a = np.random.default_rng(0).integers(0, 2, (300, 3, 2))
            for x in a:
                _same(pop.step(x), twin.step(x))
        finally:
            twin.close()
    finally:
        pop.close()


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [{}, {"g": 9.81}])
def test_pendulum_matches_gymnasium_in_the_actions_dtype(kw, dtype, mode):
    """gymnasium computes the torque terms in the action's dtype (float32 by default)."""
    n = 4
    env, ref = _pair("Pendulum-v1", n, mode, **kw)
    try:
        assert env.single_action_space == ref.single_action_space
        assert np.array_equal(env.reset(seed=5)[0], ref.reset(seed=5)[0])
        rng = np.random.default_rng(2)
        truncs = 0
        for t in range(450):
            a = rng.uniform(-2.5, 2.5, (n, 1)).astype(dtype)     # clipped to [-2, 2] too
            x, y = env.step(a), ref.step(a)
            _same(x, y)
            truncs += int(x[3].sum())
        assert truncs >= 2 * n                                    # 200-step episodes
        with pytest.raises(ValueError, match="NaN"):
            env.step(np.full((n, 1), np.nan, np.float32))
        with pytest.raises(TypeError, match="float32 or float64"):
            env.step(np.zeros((n, 1), np.int64))
    finally:
        env.close()
        ref.close()


# ---------------------------------------------------------------- Acrobot-v1


def _same_state(env, ref):
    """The envs' whole states, not only their float32 observations: the float64 (or float32)
    state arrays of gymnasium's envs against cypool's, bit for bit, with their dtypes."""
    eng = env.pool.engine
    ours = eng.states
    theirs = [e.unwrapped.state for e in ref.envs]
    assert np.array_equal(ours, np.array(theirs, np.float64))
    if hasattr(eng, "state_f32"):       # MountainCarContinuous: float32 after a step only
        assert eng.state_f32.tolist() == [int(t.dtype == np.float32) for t in theirs]


def _run_pair(env, ref, steps, policy, seed, mode="next_step"):
    """Step both with policy(obs, t) for steps steps; every result compared bit for bit, and
    the envs' states too. Returns the counts of (terminations, truncations)."""
    o, info = env.reset(seed=seed)
    r, ref_info = ref.reset(seed=seed)
    assert o.dtype == r.dtype and np.array_equal(o, r) and info == ref_info == {}
    terms = truncs = 0
    for t in range(steps):
        a = policy(o, t)
        x, y = env.step(a), ref.step(a)
        _same(x, y)
        _same_state(env, ref)
        if mode == "same_step":
            assert x[4].keys() == y[4].keys()
            if "final_obs" in y[4]:
                assert np.array_equal(x[4]["_final_obs"], y[4]["_final_obs"])
                for i in np.flatnonzero(y[4]["_final_obs"]):
                    assert np.array_equal(x[4]["final_obs"][i], y[4]["final_obs"][i])
        else:
            assert x[4] == y[4] == {}
        o = x[0]
        terms += int(x[2].sum())
        truncs += int(x[3].sum())
    return terms, truncs


@pytest.mark.parametrize("seed,mode,threads,kw", [
    (0, "next_step", 2, {}), (11, "next_step", 1, {}), (2024, "same_step", 2, {}),
    (7, "next_step", 2, {"max_episode_steps": 130})])
def test_acrobot_matches_gymnasium(seed, mode, threads, kw):
    n = 4
    env, ref = _pair("Acrobot-v1", n, mode, threads, **kw)
    rng = np.random.default_rng(seed + 1)

    def policy(o, t):          # torque against the first link's swing pumps energy: the tip
        if t % 4 == 0:         # reaches the line every ~100 steps
            return rng.integers(0, 3, n)
        return np.where(o[:, 4] > 0, 0, 2)

    try:
        assert env.single_observation_space == ref.single_observation_space
        assert env.single_action_space == ref.single_action_space
        assert env.single_observation_space.high[4:].tolist() == [12.566370964050293,
                                                                  28.274333953857422]
        terms, truncs = _run_pair(env, ref, 1200, policy, seed, mode)
        assert terms >= n                        # terminations and auto-resets
        if kw:
            assert truncs >= n                   # and the time limit
    finally:
        env.close()
        ref.close()


def test_acrobot_reset_observations_over_many_seeds():
    """The reset observation is numpy's float32 cos/sin of the float32 state (not libm's
    double rounded): with f32(cos(double(x))) about 20 of these 51200 values would differ."""
    n = 64
    env = cypool.make_vec("Acrobot-v1", n, num_threads=2)
    ref = gym.make_vec("Acrobot-v1", n, vectorization_mode="sync")
    try:
        for seed in range(0, 200 * n, n):
            o, r = env.reset(seed=seed)[0], ref.reset(seed=seed)[0]
            assert np.array_equal(o.view(np.uint32), r.view(np.uint32)), seed
    finally:
        env.close()
        ref.close()


def _f32_inputs():
    rng = np.random.default_rng(3)
    parts = [rng.uniform(-h, h, 40000).astype(np.float32)
             for h in (0.1, 1.0, np.pi, 100.0, 8e4, 1.2e5, 1e7, 1e30)]
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-45, 3.4028235e38,
                        71476.0625, -71476.0625, 117435.992, 117436.0, np.pi / 2, np.pi],
                       np.float32)
    return np.concatenate(parts + [special])


def test_acrobot_float32_cos_sin_are_numpys():
    """The kernel's float32 cos/sin call numpy's own float32 loop (SIMD on FMA3 machines,
    libm's cosf/sinf on others), one value at a time as gymnasium calls it on numpy scalars."""
    from cypool.classic import _acrobot
    x = _f32_inputs()
    c, s = _acrobot._f32_cos_sin(x)
    with np.errstate(invalid="ignore"):                  # cos/sin of +-inf
        assert np.array_equal(c.view(np.uint32), np.cos(x).view(np.uint32))
        assert np.array_equal(s.view(np.uint32), np.sin(x).view(np.uint32))
        for v, cv, sv in zip(x[::97], c[::97], s[::97]):     # numpy scalars, as gymnasium's
            assert np.cos(v).view(np.uint32) == cv.view(np.uint32)
            assert np.sin(v).view(np.uint32) == sv.view(np.uint32)
    # not libm's double result rounded (which is what a plain C port would give)
    near = x[:40000]
    assert not np.array_equal(c[:40000], np.cos(near.astype(np.float64)).astype(np.float32))


_F32_PROBE = r"""
import json, sys
import numpy as np
from numpy._core import _multiarray_umath as mu
from cypool.classic import _acrobot
x = np.load(sys.argv[1])
c, s = _acrobot._f32_cos_sin(x)
np.seterr(invalid="ignore")
json.dump({"target": mu.__cpu_targets_info__["cos"]["ff"]["current"],
           "cos": bool(np.array_equal(c.view(np.uint32), np.cos(x).view(np.uint32))),
           "sin": bool(np.array_equal(s.view(np.uint32), np.sin(x).view(np.uint32)))},
          sys.stdout)
"""


def test_acrobot_float32_cos_sin_on_every_numpy_target(tmp_path):
    """numpy picks its float32 cos/sin at import (X86_V4, X86_V3, baseline here): in a
    subprocess per target this CPU offers, the kernel's values are that target's."""
    from numpy._core import _multiarray_umath as mu
    avail = mu.__cpu_targets_info__["cos"]["ff"]["available"].split()
    groups = [t for t in avail if not t.startswith("baseline")]
    np.save(tmp_path / "x.npy", _f32_inputs())
    seen = set()
    for k in range(len(groups) + 1):
        env = dict(os.environ)
        env.pop("NPY_ENABLE_CPU_FEATURES", None)
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(groups[:k])
        out = subprocess.run([sys.executable, "-c", _F32_PROBE, str(tmp_path / "x.npy")],
                             env=env, capture_output=True, text=True, timeout=120, check=True)
        res = json.loads(out.stdout)
        assert res["cos"] and res["sin"], res["target"]
        seen.add(res["target"])
    assert len(seen) == len(groups) + 1, seen


def test_acrobot_actions_and_kwargs_are_checked():
    """Actions are Discrete(3) indices. gymnasium's Acrobot indexes its torque list with the
    action unchecked (so -1..-3 count from the end there); cypool refuses anything outside
    [0, 3), before any env moves."""
    env, ref = _pair("Acrobot-v1", 3, "next_step")
    try:
        env.reset(seed=1)
        ref.reset(seed=1)
        with pytest.raises(ValueError, match=r"in \[0, 3\)"):
            env.step(np.array([0, -1, 2]))
        with pytest.raises(ValueError, match=r"in \[0, 3\)"):
            env.step(np.array([3, 1, 2]))
        with pytest.raises(TypeError, match="integers"):
            env.step(np.array([0.0, 1.0, 2.0]))
        with pytest.raises(ValueError, match="shape"):
            env.step(np.zeros((3, 1), np.int64))
        for a in ([0, 1, 2], np.array([2, 2, 0], np.uint8), [1, 0, 0]):  # nothing moved
            _same(env.step(a), ref.step(np.asarray(a, np.int64)))
    finally:
        env.close()
        ref.close()
    for bad in ({"book_or_nips": "nips"}, {"dt": 0.1}, {"torque_noise_max": 0.1}):
        with pytest.raises(TypeError, match="unexpected keyword"):
            cypool.make_vec("Acrobot-v1", 1, **bad)


# ---------------------------------------------------------------- MountainCarContinuous-v0

_WALL = np.float32(-1.2)


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed,kw", [(0, {}), (9, {"goal_velocity": 0.01}),
                                     (3, {"goal_velocity": np.float32(0.005)}),
                                     (4, {"goal_velocity": np.float64(0.005)}),
                                     (5, {"max_episode_steps": 120})])
def test_mountain_car_continuous_matches_gymnasium(seed, kw, dtype, mode):
    """gymnasium mixes float32 and float64 (its state is float64 after reset, float32 after a
    step; a float32 force stays float32, a clipped one is a Python float): float32 and float64
    forces, in and out of [-1, 1], exact bounds and zeros."""
    n = 5
    env, ref = _pair("MountainCarContinuous-v0", n, mode, **kw)
    rng = np.random.default_rng(seed + 100)
    seen = {"wall": 0}

    def policy(o, t):
        seen["wall"] += int((o[:, 0] == _WALL).sum())
        k = t % 5
        if k == 0:
            a = rng.uniform(-1.5, 1.5, (n, 1))
        elif k == 1:
            a = rng.choice([-1.0, 1.0, 0.0, -0.0, 1.5, -2.0, 1.0000001, -0.9999999], (n, 1))
        else:                # push with the car's velocity: it reaches the flag now and then
            a = np.where(o[:, 1:2] >= 0, 1.0, -1.0) * rng.uniform(0.6, 1.4, (n, 1))
        return a.astype(dtype)

    try:
        assert env.single_observation_space == ref.single_observation_space
        assert env.single_action_space == ref.single_action_space
        terms, truncs = _run_pair(env, ref, 1500, policy, seed, mode)
        assert terms >= 2 * n
        assert seen["wall"] > 0                  # the left wall stops the car
        if kw.get("max_episode_steps"):
            assert truncs > 0
    finally:
        env.close()
        ref.close()


def _mcc_search(p0, v0, idx, target):
    """A float32 state (p0, v0), p0 or v0 (idx 0 or 1) moved, from which gymnasium's step with
    force 0 lands exactly on target in component idx."""
    e = gym.make("MountainCarContinuous-v0").unwrapped
    e.reset(seed=0)
    x = [np.float32(p0), np.float32(v0)]
    for _ in range(400):
        e.state = np.array(x, np.float32)
        o = e.step(np.zeros(1, np.float32))[0]
        if o[idx] == target:
            return float(x[0]), float(x[1])
        d = np.float32(target - o[idx])
        x[idx] = np.float32(x[idx] + d) if abs(d) > 1e-7 else np.nextafter(
            x[idx], np.float32(np.sign(d)))
    raise AssertionError("no such state")


@pytest.mark.parametrize("kw", [{}, {"goal_velocity": 0.03}, {"goal_velocity": np.float32(0.03)},
                                {"goal_velocity": np.float64(0.03)},
                                {"goal_velocity": np.float32(0.07)},
                                {"goal_velocity": float(np.float32(0.07))}])
def test_mountain_car_continuous_edges(kw):
    """States put in by hand (cypool's set_state, gymnasium's env.state), float32 ones (after a
    step) and float64 ones (after a reset), then one step with float32 and float64 forces:
    the speed limit, both position clamps and the wall, a step landing exactly on f32(0.45)
    (terminated with a float32 force only), and the goal-velocity comparison whose type numpy takes from goal_velocity (a float32
    velocity equal to f32(0.03) < 0.03 reaches a Python or float32 goal of 0.03, not a
    float64 one; the clamped Python 0.07 reaches np.float32(0.07) only)."""
    at_45 = _mcc_search(0.44, 0.01, 0, np.float32(0.45))
    v_03 = _mcc_search(0.5, 0.03, 1, np.float32(0.03))
    cases = [  # (p, v, float32 state?), force
        ((0.0, 0.0699, 1), 1.0), ((0.0, -0.0699, 1), -1.0), ((0.3, 0.0699, 1), 1.0),
        ((-1.19, -0.02, 1), -1.0), ((-1.2, -0.001, 1), 0.0), ((-1.2, 0.0, 1), -1.0),
        ((0.5999, 0.01, 1), 1.0), ((0.59, 0.0699, 1), 1.0),
        (at_45 + (1,), 0.0), (v_03 + (1,), 0.0),
        ((0.0, 0.0699, 0), 1.0), ((-1.19, -0.02, 0), -1.0), ((0.5999, 0.01, 0), 1.0),
        ((0.44999, 0.0005, 0), 0.7), ((-0.5, 0.0, 0), 1.5)]
    n = len(cases)
    env, ref = _pair("MountainCarContinuous-v0", n, "next_step", **kw)
    try:
        env.reset(seed=0)
        ref.reset(seed=0)
        for dtype in (np.float32, np.float64):
            st = env.get_state()
            for k, ((p, v, s32), _) in enumerate(cases):
                t = np.float32 if s32 else np.float64
                p, v = float(t(p)), float(t(v))
                st["envs"][k]["env"] = [p, v, s32]
                ref.envs[k].unwrapped.state = np.array([p, v], t)
            env.set_state(st)
            a = np.array([[f] for _, f in cases], dtype)
            x, y = env.step(a), ref.step(a)
            _same(x, y)
            # exactly at the flag in float32; a float64 force makes p float64 there, just
            # below 0.45 (its float32 observation still shows 0.45)
            g = kw.get("goal_velocity", 0)         # (v = 0.0094 there)
            assert y[0][8][0] == np.float32(0.45) and y[2][8] == (dtype == np.float32 and g == 0)
            if dtype == np.float32:
                assert y[0][9][1] == np.float32(0.03)
                assert y[2][9] == (not isinstance(g, np.float64) and g <= np.float32(0.03))
            assert y[2][7] == (not isinstance(g, float) or g < 0.07)   # v clamped to 0.07
            env.reset(seed=0)
            ref.reset(seed=0)
    finally:
        env.close()
        ref.close()


def test_mountain_car_continuous_actions_and_kwargs_are_checked():
    n = 3
    env, ref = _pair("MountainCarContinuous-v0", n, "next_step")
    try:
        env.reset(seed=2)
        ref.reset(seed=2)
        with pytest.raises(TypeError, match="float32 or float64"):
            env.step(np.zeros((n, 1), np.int64))
        with pytest.raises(TypeError, match="float32 or float64"):
            env.step(np.zeros((n, 1), np.float16))
        with pytest.raises(ValueError, match="shape"):
            env.step(np.zeros(n, np.float32))
        with pytest.raises(ValueError, match="NaN"):
            env.step(np.array([[0.0], [np.nan], [0.0]], np.float32))
        with pytest.raises(ValueError, match="NaN"):
            env.step(np.array([[0.0], [np.inf], [0.0]]))
        with pytest.raises(ValueError, match="overflow"):   # gymnasium's math.pow raises
            env.step(np.array([[0.0], [1e200], [0.0]]))
        a = np.array([[0.5], [-1.0], [3.0]], np.float32)   # nothing moved
        _same(env.step(a), ref.step(a))
    finally:
        env.close()
        ref.close()
    with pytest.raises(TypeError, match="goal_velocity"):
        cypool.make_vec("MountainCarContinuous-v0", 1, goal_velocity="0.1")
    with pytest.raises(TypeError, match="goal_velocity"):
        cypool.make_vec("MountainCarContinuous-v0", 1, goal_velocity=np.float16(0.1))
    with pytest.raises(TypeError, match="unexpected keyword"):
        cypool.make_vec("MountainCarContinuous-v0", 1, power=0.002)


# ---------------------------------------------------------------- both: state round trip


@pytest.mark.parametrize("env_id", ["Acrobot-v1", "MountainCarContinuous-v0"])
def test_state_round_trip_replays_bit_for_bit(env_id):
    """get_state/set_state and pickling, taken right after a reset (MountainCarContinuous's
    float64 state) and mid-episode (its float32 one), replay the same results."""
    n = 3
    env = cypool.make_vec(env_id, n, num_threads=2, seed=4, max_episode_steps=150)
    space = env.action_space
    space.seed(0)
    acts = [space.sample() for _ in range(400)]
    try:
        for warm in (0, 37):
            env.reset(seed=4)
            for a in acts[:warm]:
                env.step(a)
            state = pickle.loads(pickle.dumps(env.get_state()))
            twin = pickle.loads(pickle.dumps(env))
            try:
                first = [env.step(a)[:4] for a in acts[warm:]]
                assert sum(int(x[3].sum()) for x in first) >= n    # crosses auto-resets
                for x, a in zip(first, acts[warm:]):
                    _same(x, twin.step(a))
                env.set_state(state)
                for x, a in zip(first, acts[warm:]):
                    _same(x, env.step(a))
            finally:
                twin.close()
    finally:
        env.close()
