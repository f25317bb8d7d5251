"""Per-env kwargs of dm_control pools (time_limit, environment_kwargs): env_kwargs, set_attr
and populations, each env equal to suite.load with its own kwargs (np.array_equal)."""
import os

import numpy as np
import pytest

import cypool

os.environ.setdefault("MUJOCO_GL", "egl")
suite = pytest.importorskip("dm_control.suite", reason="dm_control is a test dependency")

ID = "dm_control/cartpole-swingup-v0"
BASE = 0.1
KWS = [{}, {"time_limit": 0.05}, {"environment_kwargs": {"n_sub_steps": 3}},
       {"time_limit": 0.08, "environment_kwargs": {"control_timestep": 0.02}}]


def _ref(seed, kw):
    return suite.load("cartpole", "swingup",
                      task_kwargs={"random": seed, "time_limit": kw.get("time_limit", BASE)},
                      environment_kwargs=kw.get("environment_kwargs"))


def _compare(env, refs, seed, steps, where):
    """Step the pool (next_step autoreset) and dm_control Environments alike; returns the
    number of episode ends."""
    obs, _ = env.reset(seed=seed)
    ts = [r.reset() for r in refs]
    rng = np.random.default_rng(seed)
    ends = 0
    for t in range(steps + 1):
        for i, x in enumerate(ts):
            for k, v in x.observation.items():
                assert np.array_equal(obs[k][i], v), (where, t, i, k)
        if t == steps:
            return ends
        a = rng.uniform(-1, 1, (len(refs), 1))
        obs, rew, term, trunc, _ = env.step(a)
        for i, r in enumerate(refs):
            if ts[i].last():                     # cypool's next_step reset: reward 0
                ts[i] = r.reset()
                assert rew[i] == 0 and not term[i] and not trunc[i], (where, t, i)
                continue
            ts[i] = r.step(a[i])
            assert rew[i] == ts[i].reward, (where, t, i)
            assert trunc[i] == ts[i].last() and not term[i], (where, t, i)
            ends += int(ts[i].last())


@pytest.mark.parametrize("threads", [1, 2])
def test_env_kwargs_give_each_env_its_own_limit_and_substeps(threads):
    env = cypool.make_vec(ID, 4, num_threads=threads, time_limit=BASE, env_kwargs=KWS)
    assert env.get_attr("time_limit") == (BASE, 0.05, BASE, 0.08)
    ends = _compare(env, [_ref(7 + i, kw) for i, kw in enumerate(KWS)], 7, 40, "env_kwargs")
    assert ends >= 8
    env.close()


def test_set_attr_changes_the_limit_from_the_next_episode():
    env = cypool.make_vec(ID, 2, num_threads=1, time_limit=BASE)
    env.reset(seed=3)
    env.step(np.zeros((2, 1)))
    env.set_attr("time_limit", [BASE, 0.04])
    env.set_attr("environment_kwargs", [{"n_sub_steps": 2}, None])
    assert env.get_attr("time_limit") == (BASE, 0.04)
    kws = [{"environment_kwargs": {"n_sub_steps": 2}}, {"time_limit": 0.04}]
    assert _compare(env, [_ref(3 + i, kw) for i, kw in enumerate(kws)], 3, 30, "set_attr") >= 4
    env.close()


def test_a_population_with_member_time_limits_equals_a_pool_with_env_kwargs():
    members = [{"time_limit": 0.05}, {"time_limit": 0.08}]
    pop = cypool.make_population(ID, 2, 2, member_kwargs=members, seed_mode="parity",
                                 num_threads=1, time_limit=BASE)
    flat = cypool.make_vec(ID, 4, num_threads=1, time_limit=BASE,
                           env_kwargs=[members[0]] * 2 + [members[1]] * 2)
    o_p, _ = pop.reset(seed=11)
    o_f, _ = flat.reset(seed=11)
    rng = np.random.default_rng(0)
    for t in range(25):
        for k in o_f:
            assert np.array_equal(np.asarray(o_p[k]).reshape(o_f[k].shape), o_f[k]), (t, k)
        a = rng.uniform(-1, 1, (4, 1))
        r_p = pop.step(a.reshape(2, 2, 1))
        r_f = flat.step(a)
        o_p, o_f = r_p[0], r_f[0]
        for x, y in zip(r_p[1:4], r_f[1:4]):
            assert np.array_equal(np.asarray(x).reshape(-1), y), t
    pop.close(), flat.close()


def test_pool_wide_kwargs_may_not_differ():
    with pytest.raises(ValueError, match="flatten_obs is a per-pool setting"):
        cypool.make_vec(ID, 2, env_kwargs=[{}, {"flatten_obs": True}])
    env = cypool.make_vec(ID, 2, num_threads=1)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="per-pool setting"):
        env.set_attr("flatten_obs", [False, True])
    with pytest.raises(ValueError, match="time_limit must be > 0"):
        env.set_attr("time_limit", [BASE, -1.0])
    assert env.get_attr("time_limit") == (1000 * 0.01, 1000 * 0.01)   # nothing changed
    env.close()


# ---------------------------------------------------------------------- seeds
def _tree_seed(root, k, j):
    """The RandomState seed env (k, j) of a population draws in the default seed mode: the
    top 32 bits of the first 64-bit word of SeedSequence(root, spawn_key=(k, j))."""
    word = np.random.SeedSequence(root, spawn_key=(k, j)).generate_state(1, np.uint64)[0]
    return int(word) >> 32


@pytest.mark.parametrize("how", ["reset_seed", "default_seed"])
def test_a_population_in_the_default_seed_mode_seeds_each_env_with_a_randomstate_seed(how):
    P, E, root = 2, 2, 0
    pop = cypool.make_population(ID, P, E, num_threads=1, time_limit=1.0,
                                 seed=root if how == "default_seed" else None)
    obs, _ = pop.reset(seed=root) if how == "reset_seed" else pop.reset()
    refs = [_ref(_tree_seed(root, k, j), {"time_limit": 1.0})
            for k in range(P) for j in range(E)]
    flat = {key: np.asarray(v).reshape((P * E,) + np.shape(v)[2:]) for key, v in obs.items()}
    rng = np.random.default_rng(1)
    ts = [r.reset() for r in refs]
    for t in range(12):
        for i, x in enumerate(ts):
            for key, v in x.observation.items():
                assert np.array_equal(flat[key][i], v), (how, t, i, key)
        a = rng.uniform(-1, 1, (P * E, 1))
        obs, rew, _, _, _ = pop.step(a.reshape(P, E, 1))
        flat = {key: np.asarray(v).reshape((P * E,) + np.shape(v)[2:]) for key, v in obs.items()}
        ts = [r.step(a[i]) for i, r in enumerate(refs)]
        assert np.array_equal(np.asarray(rew).reshape(-1), [x.reward for x in ts]), (how, t)
    pop.reset()          # no seed: each env continues its stream
    pop.close()


def test_unseeded_population_and_member_resets_work():
    pop = cypool.make_population(ID, 2, 2, num_threads=1, time_limit=BASE)
    pop.reset()
    pop.reset(seed=[5, 2**40])          # per-member roots: any SeedSequence root
    pop.reset_member(1, seed=2**62)
    pop.close()


def test_seeds_outside_randomstates_range_are_refused_before_any_env_is_seeded():
    top = 2**32 - 2                      # env 0 gets top, env 1 top + 1: the last valid seed
    env = cypool.make_vec(ID, 2, num_threads=1, time_limit=BASE)
    obs, _ = env.reset(seed=top)
    ref = _ref(top + 1, {}).reset()
    assert np.array_equal(obs["position"][1], ref.observation["position"])
    before = env.step(np.zeros((2, 1)))[0]["position"].copy()
    for bad in (top + 1, [0, 2**32], 2**40):
        with pytest.raises(ValueError, match=r"2\*\*32"):
            env.reset(seed=bad)
    # nothing was seeded or reset: the next step continues from where the envs were
    after = env.step(np.zeros((2, 1)))[0]["position"]
    twin = cypool.make_vec(ID, 2, num_threads=1, time_limit=BASE)
    twin.reset(seed=top)
    twin.step(np.zeros((2, 1)))
    assert np.array_equal(after, twin.step(np.zeros((2, 1)))[0]["position"])
    assert not np.array_equal(before, after)
    with pytest.raises(ValueError, match=r"2\*\*32"):
        cypool.make_vec(ID, 2, seed=top + 1)
    with pytest.raises(ValueError, match=r"2\*\*32"):
        cypool.make_population(ID, 2, 2, seed=2**32 - 3, seed_mode="parity").reset()
    with pytest.raises(ValueError, match=r"2\*\*32"):
        cypool.make_population(ID, 2, 2).reset(seed=[[0, 1], [2, 2**32]])
    env.close(), twin.close()


def _first_truncation(pop, steps=30):
    P, E = pop.population_size, pop.envs_per_member
    pop.reset(seed=0)
    first = np.zeros((P, E), np.int64)
    for t in range(1, steps + 1):
        _, _, term, trunc, _ = pop.step(np.zeros((P, E, 1)))
        first[(first == 0) & np.asarray(trunc)] = t
        assert not np.asarray(term).any()
    return first


def test_a_members_max_episode_steps_shortens_its_time_limit_never_lengthens_it():
    # time_limit 0.1 s is 10 steps of cartpole's 0.01 s control timestep
    members = [{"max_episode_steps": 4}, {"max_episode_steps": 50}, {}]
    pop = cypool.make_population(ID, 3, 2, member_kwargs=members, num_threads=1,
                                 time_limit=BASE)
    assert _first_truncation(pop).tolist() == [[4, 4], [10, 10], [10, 10]]
    # set_member_kwargs on a population made without max_episode_steps (merged with the
    # member's overrides: member 0 keeps its 4 steps under a 5-step time limit)
    pop.set_member_kwargs(0, time_limit=0.05)
    pop.set_member_kwargs(1, max_episode_steps=7, time_limit=0.2)
    pop.set_member_kwargs(2, time_limit=0.03)
    assert _first_truncation(pop).tolist() == [[4, 4], [7, 7], [3, 3]]
    pop.set_member_kwargs(0, max_episode_steps=30)
    assert _first_truncation(pop).tolist()[0] == [5, 5]
    pop.close()
