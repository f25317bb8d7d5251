"""Extreme n_sub_steps, control_timestep and time_limit values of dm_control pools (issue #40,
items 3 and 5): counts that would overflow the kernels' C int, or drive a native loop Ctrl-C
cannot stop, are a ValueError naming the kwarg and the bound before any env moves (as MuJoCo's
frame_skip); time limits beyond any reachable step count (1e17 s, inf, an int too large for a
float) mean no limit, as in dm_control, and NaN / non-positive limits are refused."""
import math
import os

import numpy as np
import pytest

import cypool
from cypool._validate import MAX_MUJOCO_FRAME_SKIP

os.environ.setdefault("MUJOCO_GL", "egl")
suite = pytest.importorskip("dm_control.suite", reason="dm_control is a test dependency")

ID = "dm_control/cheetah-run-v0"
DT = 0.01                       # cheetah's physics timestep
HUGE = [2 ** 31, 2 ** 32 + 1, 10 ** 12, 2 ** 63 - 1]
BOUND = f"<= {MAX_MUJOCO_FRAME_SKIP}"


def _ref(seed, time_limit=None, environment_kwargs=None):
    tk = {"random": seed}
    if time_limit is not None:
        tk["time_limit"] = time_limit
    return suite.load("cheetah", "run", task_kwargs=tk, environment_kwargs=environment_kwargs)


def _same(obs, i, ts, where):
    for k, v in ts.observation.items():
        assert np.array_equal(obs[k][i], v), (where, i, k)


# ------------------------------------------------------------------ item 3: n_sub_steps
@pytest.mark.parametrize("n", HUGE)
def test_huge_n_sub_steps_is_refused_naming_the_bound(n):
    with pytest.raises(ValueError, match=f"n_sub_steps must be {BOUND}, got {n}"):
        cypool.make_vec(ID, 1, environment_kwargs={"n_sub_steps": n})
    with pytest.raises(ValueError, match=f"n_sub_steps must be {BOUND}"):
        cypool.make_vec(ID, 2, env_kwargs=[{}, {"environment_kwargs": {"n_sub_steps": n}}])
    with pytest.raises(ValueError, match=f"n_sub_steps must be {BOUND}"):
        cypool.make_vec(ID, 1, environment_kwargs={"n_sub_steps": np.int64(n)})


@pytest.mark.parametrize("ct", [DT * 2 ** 31, 1e12, 1e300])
def test_huge_control_timestep_is_refused_naming_the_bound(ct):
    with pytest.raises(ValueError, match=f"control_timestep=.*n_sub_steps must be {BOUND}"):
        cypool.make_vec(ID, 1, environment_kwargs={"control_timestep": ct})


@pytest.mark.parametrize("ct", [float("inf"), float("nan")])
def test_non_finite_control_timestep_is_refused(ct):
    # dm_control's compute_n_steps raises OverflowError (inf) or ValueError (NaN) from round()
    with pytest.raises(ValueError, match="control_timestep must be a finite number"):
        cypool.make_vec(ID, 1, environment_kwargs={"control_timestep": ct})


def test_huge_n_sub_steps_is_refused_before_any_env_moves():
    """set_attr and a population's member settings: refused, nothing changed, and the next
    step is the one dm_control takes."""
    env = cypool.make_vec(ID, 2, num_threads=1)
    obs, _ = env.reset(seed=4)
    refs = [_ref(4 + i) for i in range(2)]
    for i, r in enumerate(refs):
        _same(obs, i, r.reset(), "reset")
    for n in HUGE:
        with pytest.raises(ValueError, match=f"n_sub_steps must be {BOUND}"):
            env.set_attr("environment_kwargs", [None, {"n_sub_steps": n}])
    with pytest.raises(ValueError, match=f"control_timestep=.*n_sub_steps must be {BOUND}"):
        env.set_attr("environment_kwargs", [{"n_sub_steps": 2}, {"control_timestep": 1e12}])
    assert env.get_attr("environment_kwargs") == (None, None)
    assert env.pool.engine.params[:, 0].tolist() == [1.0, 1.0]   # P_NSUB of each env
    a = np.full((2, 6), 0.3)
    obs, _, _, trunc, _ = env.step(a)
    for i, r in enumerate(refs):
        ts = r.step(a[i])
        _same(obs, i, ts, "step")
        assert not trunc[i] and not ts.last()
    env.close()

    members = [{}, {"environment_kwargs": {"n_sub_steps": 2 ** 31}}]
    with pytest.raises(ValueError, match=f"n_sub_steps must be {BOUND}"):
        cypool.make_population(ID, 2, 1, member_kwargs=members, num_threads=1)
    # max_episode_steps given: set_member_kwargs of a population without one fails in
    # population.py (check_limit(None)), whatever the kwargs
    pop = cypool.make_population(ID, 2, 1, member_kwargs=[{}, {}], num_threads=1,
                                 max_episode_steps=10 ** 6)
    pop.reset(seed=0)
    for n in HUGE:
        with pytest.raises(ValueError, match=f"n_sub_steps must be {BOUND}"):
            pop.set_member_kwargs(1, environment_kwargs={"n_sub_steps": n})
    with pytest.raises(ValueError, match=f"control_timestep=.*n_sub_steps must be {BOUND}"):
        pop.set_member_kwargs(1, environment_kwargs={"control_timestep": 1e12})
    assert pop.member_kwargs(1)["environment_kwargs"] is None
    assert pop.pool.engine.params[:, 0].tolist() == [1.0, 1.0]
    pop.close()


def test_the_largest_n_sub_steps_works_as_in_dm_control():
    """n_sub_steps = the bound, and control_timestep = the bound's worth of physics steps:
    one step is that many MuJoCo steps on (dm_control's observation); one more is refused."""
    n = MAX_MUJOCO_FRAME_SKIP
    for ek in ({"n_sub_steps": n}, {"control_timestep": n * DT}):
        env = cypool.make_vec(ID, 1, num_threads=1, environment_kwargs=ek)
        assert env.pool.engine.params[0, 0] == n
        obs, _ = env.reset(seed=2)
        ref = _ref(2, environment_kwargs=ek)
        _same(obs, 0, ref.reset(), "reset")
        a = np.full((1, 6), -0.5)
        obs, rew, term, trunc, _ = env.step(a)
        ts = ref.step(a[0])
        _same(obs, 0, ts, "step")
        assert ref.physics.data.time == pytest.approx(n * DT)
        assert rew[0] == ts.reward
        # cheetah's 10 s limit is within this one 1000 s step, in dm_control too
        assert trunc[0] and ts.last() and ts.discount == 1.0 and not term[0]
        env.close()
    with pytest.raises(ValueError, match=f"n_sub_steps must be {BOUND}, got {n + 1}"):
        cypool.make_vec(ID, 1, environment_kwargs={"n_sub_steps": n + 1})
    with pytest.raises(ValueError, match=f"control_timestep=.*n_sub_steps must be {BOUND}"):
        cypool.make_vec(ID, 1, environment_kwargs={"control_timestep": (n + 1) * DT})


# ------------------------------------------------------------------ item 5: time_limit
@pytest.mark.parametrize("time_limit", [1e17, 1e300, 1.7e308, float("inf"), 10 ** 400])
def test_huge_time_limit_is_no_limit_as_in_dm_control(time_limit):
    env = cypool.make_vec(ID, 2, num_threads=1, time_limit=time_limit)
    assert env.get_attr("max_episode_steps") == (None, None)        # the engine's: none
    assert env.get_attr("time_limit") == (time_limit, time_limit)
    obs, _ = env.reset(seed=9)
    # dm_control fails on an int it cannot divide as a float; any other huge limit is its
    # no-limit behaviour
    refs = [_ref(9 + i, time_limit=1e17 if isinstance(time_limit, int) else time_limit)
            for i in range(2)]
    for i, r in enumerate(refs):
        _same(obs, i, r.reset(), "reset")
    rng = np.random.default_rng(0)
    for t in range(5):
        a = rng.uniform(-1, 1, (2, 6))
        obs, rew, term, trunc, _ = env.step(a)
        for i, r in enumerate(refs):
            ts = r.step(a[i])
            _same(obs, i, ts, t)
            assert rew[i] == ts.reward and not ts.last()
            assert not trunc[i] and not term[i]
    env.close()


def test_huge_time_limit_per_env_and_with_max_episode_steps():
    env = cypool.make_vec(ID, 3, num_threads=1, env_kwargs=[
        {"time_limit": 1e17}, {"time_limit": float("inf")}, {"time_limit": 0.05}])
    assert env.get_attr("max_episode_steps") == (None, None, 5)
    env.set_attr("time_limit", [0.03, 1e17, 1e17])
    assert env.get_attr("max_episode_steps") == (3, None, None)
    env.close()
    env = cypool.make_vec(ID, 1, time_limit=1e17, max_episode_steps=7)
    assert env.get_attr("max_episode_steps") == (7,)
    env.close()
    pop = cypool.make_population(ID, 2, 1, member_kwargs=[{"time_limit": 1e17}, {}],
                                 num_threads=1)
    assert pop.pool.engine.max_episode_steps_of().tolist() == [0, 1000]     # 0: none
    assert pop.member_kwargs(0)["time_limit"] == 1e17
    pop.close()


def test_the_largest_finite_limit_is_kept():
    """A limit whose step count fits the engine's int64 counter stays a limit (the first
    count >= time_limit / control timestep, dm_control's comparison)."""
    env = cypool.make_vec(ID, 1, time_limit=9e16)
    assert env.get_attr("max_episode_steps") == (math.ceil(9e16 / DT),)
    env.close()


@pytest.mark.parametrize("time_limit", [float("nan"), -1.0, 0, 0.0, float("-inf")])
def test_nan_and_non_positive_time_limits_are_refused(time_limit):
    """dm_control takes them and misbehaves: NaN never ends an episode (step_count >= NaN is
    False), a limit <= 0 ends every episode after its first step."""
    ref = _ref(0, time_limit=time_limit)
    ref.reset()
    ts = ref.step(np.zeros(6))
    assert ts.last() == (not time_limit != time_limit)       # NaN: never; <= 0: at once
    with pytest.raises(ValueError, match="time_limit must be > 0"):
        cypool.make_vec(ID, 1, time_limit=time_limit)
    with pytest.raises(ValueError, match="time_limit must be > 0"):
        cypool.make_vec(ID, 2, env_kwargs=[{}, {"time_limit": time_limit}])
