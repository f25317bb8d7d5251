"""FrankaKitchen-v1's registration, spaces, kwargs and action checks, and the info lists'
form (against the installed gymnasium-robotics where it has an answer)."""
import gymnasium as gym
import numpy as np
import pytest

import cypool

from _fetch_ref import assert_info, assert_same, reference  # noqa: E402

ID = "FrankaKitchen-v1"


def test_registry_limit_and_spaces():
    assert ID in cypool.list_envs()
    assert cypool.registry.spec_of(ID).max_episode_steps == gym.spec(ID).max_episode_steps \
        == 280
    for kw in ({}, dict(tasks_to_complete=("kettle", "microwave", "kettle"))):
        env, ref = cypool.make_vec(ID, 1, **kw), reference(ID, 1, **kw)
        try:
            assert env.single_observation_space == ref.single_observation_space
            assert list(env.single_observation_space["achieved_goal"]) == \
                list(ref.single_observation_space["achieved_goal"])
            assert env.single_action_space == ref.single_action_space
            assert env.metadata["render_fps"] == 12
        finally:
            env.close()
            ref.close()


def test_subset_of_tasks_exact():
    """Three tasks (a tuple with a repeat), reset and a few steps, as the reference."""
    kw = dict(tasks_to_complete=("kettle", "light switch", "kettle", "top burner"))
    env, ref = cypool.make_vec(ID, 2, **kw), reference(ID, 2, **kw)
    try:
        o, i = env.reset(seed=5)
        ro, ri = ref.reset(seed=5)
        assert_same(o, ro, "reset")
        assert_info(i, ri, "reset")
        for t in range(3):
            a = np.full((2, 9), 0.5 - t)
            x, y = env.step(a), ref.step(a)
            for k in range(4):
                assert_same(x[k], y[k], f"step {t} [{k}]")
            assert_info(x[4], y[4], f"step {t}")
        # gymnasium's batch of lists: one new list per env
        lists = x[4]["tasks_to_complete"]
        assert lists.dtype == object and lists[0] == lists[1] and lists[0] is not lists[1]
    finally:
        env.close()
        ref.close()


def test_bad_kwargs_and_actions():
    with pytest.raises(ValueError, match="oven"):
        cypool.make_vec(ID, 1, tasks_to_complete=["kettle", "oven"])
    with pytest.raises(ValueError, match="at least one"):
        cypool.make_vec(ID, 1, tasks_to_complete=[])
    with pytest.raises(TypeError, match="list of task names"):
        cypool.make_vec(ID, 1, tasks_to_complete="kettle")
    with pytest.raises(ValueError, match="finite"):
        cypool.make_vec(ID, 1, robot_noise_ratio=float("nan"))
    with pytest.raises(TypeError):
        cypool.make_vec(ID, 1, frame_skip=20)
    env = cypool.make_vec(ID, 2)
    try:
        env.reset(seed=0)
        with pytest.raises(ValueError, match="shape"):
            env.step(np.zeros((2, 8)))
        with pytest.raises(ValueError, match="NaN"):
            env.step(np.full((2, 9), np.nan))
        with pytest.raises(TypeError):
            env.step(np.zeros((2, 9), np.complex64))
        env.step(np.zeros((2, 9), np.int64))
    finally:
        env.close()


def _same_unordered(x, y):
    """Equal dicts (keys compared as sets, at every level), arrays equal in dtype and value."""
    if isinstance(y, dict):
        assert sorted(x) == sorted(y)
        for k in y:
            _same_unordered(x[k], y[k])
    else:
        assert x.dtype == y.dtype and np.array_equal(x, y)


def test_single_env_equals_the_reference():
    """gymnasium.make("cypool/FrankaKitchen-v1"): one env's observation, reward and info (its
    task lists are Python lists, passed through as the env gives them; the reference's
    dict has its _get_obs key order, cypool's the space's)."""
    env, ref = gym.make(f"cypool/{ID}"), gym.make(ID)
    try:
        o, i = env.reset(seed=3)
        ro, ri = ref.reset(seed=3)
        _same_unordered(o, ro)
        rng = np.random.default_rng(0)
        for t in range(5):
            a = rng.uniform(-1, 1, 9).astype(np.float32)
            o, r, term, trunc, i = env.step(a)
            ro, rr, rterm, rtrunc, ri = ref.step(a)
            _same_unordered(o, ro)
            assert (r, term, trunc) == (rr, rterm, rtrunc) and type(r) is type(rr)
            assert sorted(i) == sorted(ri)
            for k in ri:
                assert type(i[k]) is type(ri[k]) and np.array_equal(i[k], ri[k]), (t, k)
    finally:
        env.close()
        ref.close()


def test_async_population_views_of_nested_goal_dicts():
    """A population's recv of one member returns read-only views of the pool's rows; Kitchen's
    goals are dicts inside the observation dict, and every level is a view."""
    from cypool.population import make_population
    pop = make_population(ID, 2, 2, member_batch=1)
    try:
        pop.reset(seed=1)
        pop.send(np.zeros((1, 2, 9), np.float32), members=[1])
        obs = pop.recv()[0]
        assert obs["achieved_goal"]["kettle"].shape == (1, 2, 7)
        assert not obs["achieved_goal"]["kettle"].flags.writeable
        assert not obs["observation"].flags.writeable
    finally:
        pop.close()
