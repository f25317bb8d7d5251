"""Kwarg values that used to be silently wrong or unstoppable: NaN ends of MuJoCo
clipping/health ranges (refused wherever kwargs enter: make_vec, env_kwargs, member_kwargs,
set_attr, cypool.envpool's *_min/*_max names), count kwargs that drive native loops Ctrl-C
cannot stop (bounded; the largest accepted values still work), and NaN/inf physical kwargs
(which keep gymnasium's exact behaviour). Unknown names and wrong types:
tests/test_bad_input.py; pool sizes: tests/test_resources.py."""
import gymnasium as gym
import numpy as np
import pytest

import cypool
import cypool.envpool as cep
from cypool import _validate
from cypool.mujoco.family import TASKS, task_module

NAN, INF = float("nan"), float("inf")


# ---------------------------------------------------------------------------- NaN range ends
# (a v4 task's FIXED_KWARGS are constants of gymnasium's class, not kwargs)
RANGE_KWARGS = [(t, k) for t in TASKS for k, v in task_module(t).DEFAULTS.items()
                if k.endswith("_range") and k not in getattr(task_module(t), "FIXED_KWARGS", ())]


def test_every_range_kwarg_is_covered():
    # the tasks' range kwargs, as the issue lists them; a new one joins the tests below
    assert len(RANGE_KWARGS) >= 10
    assert ("Ant-v5", "contact_force_range") in RANGE_KWARGS
    assert ("HumanoidStandup-v5", "impact_cost_range") in RANGE_KWARGS


@pytest.mark.parametrize("end", [0, 1])
@pytest.mark.parametrize("task,key", RANGE_KWARGS)
def test_nan_range_end_is_refused(task, key, end):
    pair = list(task_module(task).DEFAULTS[key])
    pair[end] = NAN
    with pytest.raises(ValueError, match=f"{key} .*NaN"):
        cypool.make_vec(task, 1, **{key: tuple(pair)})
    with pytest.raises(ValueError, match=key):          # per-env settings too
        cypool.make_vec(task, 2, env_kwargs=[None, {key: tuple(pair)}])


def test_nan_range_end_is_refused_everywhere():
    with pytest.raises(ValueError, match="contact_force_range"):
        cep.make("Ant-v5", "gymnasium", contact_force_min=NAN)
    with pytest.raises(ValueError, match="impact_cost_range"):
        cep.make("HumanoidStandup-v5", "gymnasium", contact_cost_max=NAN)
    with pytest.raises(ValueError, match="healthy_z_range"):
        cypool.make_population("Hopper-v5", 2, member_kwargs=[{}, {"healthy_z_range":
                                                                   (NAN, 2.0)}])
    env = cypool.make_vec("Walker2d-v5", 2)
    try:
        with pytest.raises(ValueError, match="healthy_angle_range"):
            env.set_attr("healthy_angle_range", [(-1.0, 1.0), (-1.0, NAN)])
        assert list(env.get_attr("healthy_angle_range")) == [(-1.0, 1.0), (-1.0, 1.0)]
    finally:
        env.close()


def test_infinite_range_ends_still_accepted():
    env = cypool.make_vec("Ant-v5", 1, contact_force_range=(-INF, INF),
                          healthy_z_range=(-INF, INF))
    env.close()


# ---------------------------------------------------------------------------- loop counts
@pytest.mark.parametrize("env_id,key,high", [
    ("Pong-v5", "frame_skip", _validate.MAX_ATARI_FRAME_SKIP),
    ("Pong-v5", "noop_max", _validate.MAX_ATARI_NOOP_MAX),
    ("Hopper-v5", "frame_skip", _validate.MAX_MUJOCO_FRAME_SKIP),
    ("Humanoid-v5", "frame_skip", _validate.MAX_MUJOCO_FRAME_SKIP),
])
@pytest.mark.parametrize("over", [1, 2**31 - 1])
def test_loop_count_above_its_bound_is_refused(env_id, key, high, over):
    value = high + over if over == 1 else over
    msg = f"{key} must be <= {high}, got {value}.*Ctrl-C"
    with pytest.raises(ValueError, match=msg):
        cypool.make_vec(env_id, 1, **{key: value})
    with pytest.raises(ValueError, match=msg):
        cypool.make_vec(env_id, 2, env_kwargs=[None, {key: value}])
    with pytest.raises(ValueError, match=msg):
        cep.make(env_id, "gymnasium", **{key: value})
    env = cypool.make_population(env_id, 2)
    try:
        with pytest.raises(ValueError, match=msg):
            env.set_member_kwargs(1, **{key: value})
    finally:
        env.close()


def test_largest_accepted_atari_counts_still_work():
    env = cypool.make_vec("Pong-v5", 1, frame_skip=_validate.MAX_ATARI_FRAME_SKIP,
                          noop_max=_validate.MAX_ATARI_NOOP_MAX)
    try:
        env.reset(seed=1)
        _, _, _, _, info = env.step(np.array([0]))
        assert list(env.get_attr("frame_skip")) == [_validate.MAX_ATARI_FRAME_SKIP]
        assert info["elapsed_step"].tolist() == [1]
    finally:
        env.close()


def test_largest_accepted_mujoco_frame_skip_still_works():
    fs = _validate.MAX_MUJOCO_FRAME_SKIP
    ref = gym.make("Hopper-v5", frame_skip=fs).unwrapped
    env = cypool.make_vec("Hopper-v5", 1, frame_skip=fs)
    try:
        o, _ = ref.reset(seed=3)
        vo, _ = env.reset(seed=3)
        assert np.array_equal(o, vo[0])
        a = np.full(3, 0.1, np.float32)
        o, r, term, _, _ = ref.step(a)
        vo, vr, vterm, _, _ = env.step(a[None])
        assert np.array_equal(o, vo[0]) and r == vr[0] and term == vterm[0]
    finally:
        env.close()
        ref.close()


# ---------------------------------------------------------------------------- NaN physics
@pytest.mark.parametrize("env_id,kw", [
    ("Pendulum-v1", dict(g=NAN)),
    ("Hopper-v5", dict(ctrl_cost_weight=NAN)),
    ("Swimmer-v5", dict(ctrl_cost_weight=INF)),
    ("Ant-v5", dict(healthy_reward=NAN)),
    ("HalfCheetah-v5", dict(forward_reward_weight=-INF)),
])
def test_non_finite_physical_kwargs_match_gymnasium(env_id, kw):
    ref = gym.make(env_id, **kw).unwrapped
    env = cypool.make_vec(env_id, 1, **kw)
    try:
        o, _ = ref.reset(seed=7)
        vo, _ = env.reset(seed=7)
        assert np.array_equal(o, vo[0], equal_nan=True)
        rewards = []
        for t in range(3):
            a = np.full(ref.action_space.shape, 0.3, ref.action_space.dtype)
            o, r, term, trunc, _ = ref.step(a)
            vo, vr, vterm, vtrunc, _ = env.step(a[None])
            assert np.array_equal(o, vo[0], equal_nan=True), t
            assert np.array_equal(r, vr[0], equal_nan=True), (t, r, vr[0])
            assert (term, trunc) == (vterm[0], vtrunc[0]), t
            rewards.append(r)
            if term:
                break
        assert not np.isfinite(rewards).all()       # the kwarg did reach the numbers
    finally:
        env.close()
        ref.close()
