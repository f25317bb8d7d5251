"""The family contract as data (cypool.api.FamilySpec, cypool/_core/spec.py): Tuple and Dict
observations, MultiDiscrete actions, info keys of several columns and of the dtype gymnasium
gives them (the first reporting env's), per-pool kwargs, spaces that follow kwargs, render
hooks. Built on tests/spec/_counter.pyx, a tiny pool compiled as a user's package would be,
and checked against a Python twin of it."""
import pickle
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import cypool
import cypool.api
from cypool.api import FamilySpec, InfoKey, Kwarg

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from _buildext import build_extension, import_built  # noqa: E402


@pytest.fixture(scope="module")
def counter():
    out = build_extension("_counter", HERE / "_counter.pyx", cypool.api.extension_kwargs(),
                          Path.home() / ".cache" / "cypool" / "test-spec")
    return import_built("_counter", out)


def _spaces(kw):
    n = kw["n"]
    obs = gym.spaces.Tuple((gym.spaces.Discrete(n),
                            gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)))
    return obs, gym.spaces.MultiDiscrete([3, 4])


def _render(engine, ids, mode, kwargs):
    if mode == "ansi":
        return [f"c={int(engine.counts[i])}" for i in ids]
    return [np.full((2, 3, 3), engine.counts[i], np.uint8) for i in ids]


@pytest.fixture
def spec(counter):
    obs, act = _spaces({"n": 7})
    s = FamilySpec("SpecCounter-v0", counter.CounterPool, obs, act,
                   kwargs={"n": Kwarg(7, scope="pool"), "unused": Kwarg(0.5)},
                   max_episode_steps=9,
                   info=(InfoKey("prob", np.float64, reset_dtype=np.int64),
                         InfoKey("mask", np.int8, width=3)),
                   spaces=_spaces, render=_render, render_modes=("rgb_array", "ansi"))
    cypool.api.register_spec(s)
    yield s
    cypool.api.unregister_env("SpecCounter-v0")


class Twin:
    """The counter in Python, seeded as gymnasium seeds an env (PCG64(SeedSequence(s)))."""

    def __init__(self, seed, n):
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
        self.n, self.t = n, 0

    def reset(self):
        self.c, self.t = int(self.rng.random() * self.n), 0
        return (self.c, [self.c, -self.c]), 1, [1, 0, 1]

    def step(self, a):
        self.c, self.t = (self.c + int(a[0]) + int(a[1])) % self.n, self.t + 1
        return (self.c, [a[0], a[1]]), self.c, self.c == 0, self.t >= 9, 0.25 * a[0], \
            [a[0], a[1], self.c % 2]


def _typed_prob(vals, kinds):
    """gymnasium's rule: the array takes the type of the first reporting env's value."""
    return np.array(vals, np.int64 if kinds[0] == "reset" else np.float64)


def test_tuple_obs_multidiscrete_actions_and_info_dtypes_follow_gymnasium(spec):
    n = 5
    env = cypool.make_vec("SpecCounter-v0", n, seed=3, num_threads=2)
    twins = [Twin(3 + i, 7) for i in range(n)]
    assert isinstance(env.single_observation_space, gym.spaces.Tuple)
    obs, info = env.reset()
    ref = [t.reset() for t in twins]
    assert isinstance(obs, tuple) and len(obs) == 2
    assert obs[0].dtype == np.int64 and obs[1].dtype == np.float32
    assert np.array_equal(obs[0], [r[0][0] for r in ref])
    assert np.array_equal(obs[1], np.array([r[0][1] for r in ref], np.float32))
    assert info["prob"].dtype == np.int64 and np.array_equal(info["prob"], [1] * n)
    assert info["mask"].dtype == np.int8 and info["mask"].shape == (n, 3)
    rng = np.random.default_rng(0)
    done = np.zeros(n, bool)
    saw_mixed = False
    for _ in range(60):
        a = np.stack([rng.integers(0, 3, n), rng.integers(0, 4, n)], axis=1)
        obs, rew, term, trunc, info = env.step(a)
        kinds, c0, c1, rw, tm, tr, prob, mask = [], [], [], [], [], [], [], []
        for i, t in enumerate(twins):        # next_step autoreset: ended envs reset now
            if done[i]:
                (o, r, m), step = t.reset(), ((0.0, False, False))
                kinds.append("reset")
                rw.append(0.0), tm.append(False), tr.append(False), prob.append(r)
            else:
                o, r, te, tu, p, m = t.step(a[i])
                kinds.append("step")
                rw.append(r), tm.append(te), tr.append(tu), prob.append(p)
            c0.append(o[0]), c1.append(o[1]), mask.append(m)
        assert np.array_equal(obs[0], c0)
        assert np.array_equal(obs[1], np.array(c1, np.float32))
        assert np.array_equal(rew, rw) and np.array_equal(term, tm) and np.array_equal(trunc, tr)
        want = _typed_prob(prob, kinds)
        assert info["prob"].dtype == want.dtype and np.array_equal(info["prob"], want)
        assert np.array_equal(info["mask"], np.array(mask, np.int8))
        saw_mixed |= kinds[0] == "reset" and "step" in kinds and any(
            p % 1 for p, k in zip(prob, kinds) if k == "step")
        done = np.logical_or(term, trunc)
    assert saw_mixed, "no batch where env 0 reset while a stepped env reported a fraction"
    with pytest.raises(ValueError, match=r"in \[0, nvec\)"):
        env.step(np.full((n, 2), 3))
    with pytest.raises(TypeError, match="integers"):
        env.step(np.zeros((n, 2)))
    env.close()


def test_same_step_final_obs_are_tuples(spec):
    env = cypool.make_vec("SpecCounter-v0", 3, seed=1, autoreset_mode="same_step")
    env.reset()
    for _ in range(12):
        obs, _, term, trunc, info = env.step(np.ones((3, 2), np.int64))
        if "final_obs" in info:
            i = int(np.flatnonzero(info["_final_obs"])[0])
            final = info["final_obs"][i]
            assert isinstance(final, tuple) and final[1].dtype == np.float32
            assert final[1].tolist() == [1.0, 1.0]
            break
    else:
        pytest.fail("no episode ended")
    env.close()


def test_pool_scope_kwargs_and_spaces_from_kwargs(spec):
    env = cypool.make_vec("SpecCounter-v0", 2, n=11)
    assert env.single_observation_space[0] == gym.spaces.Discrete(11)
    env.close()
    with pytest.raises(ValueError, match="n is a per-pool setting"):
        cypool.make_vec("SpecCounter-v0", 2, env_kwargs=[{"n": 3}, None])
    pop = cypool.make_population("SpecCounter-v0", 2, 2, member_kwargs=[{"unused": 0.5}, None])
    with pytest.raises(ValueError, match="per-pool setting"):
        pop.set_member_kwargs(0, n=4)
    obs, _ = pop.reset(seed=0)
    assert isinstance(obs, tuple) and obs[0].shape == (2, 2) and obs[1].shape == (2, 2, 2)
    pop.close()


def test_render_hook_and_snapshots(spec):
    env = cypool.make_vec("SpecCounter-v0", 2, seed=5, render_mode="ansi")
    env.reset()
    assert env.render() == tuple(f"c={c}" for c in env.pool.family.engine.counts)
    env.step(np.ones((2, 2), np.int64))
    copy = pickle.loads(pickle.dumps(env))
    a = np.array([[2, 1], [1, 3]])
    for x, y in zip(env.step(a)[:4], copy.step(a)[:4]):
        if isinstance(x, tuple):
            assert all(np.array_equal(u, v) for u, v in zip(x, y))
        else:
            assert np.array_equal(x, y)
    env.close()
    copy.close()
    env = cypool.make_vec("SpecCounter-v0", 2, render_mode="rgb_array")
    env.reset()
    frames = env.render()
    assert len(frames) == 2 and frames[0].shape == (2, 3, 3)
    env.close()


@pytest.mark.parametrize("change, err, match", [
    (dict(observation_space=gym.spaces.Tuple((gym.spaces.MultiBinary(2),))), TypeError,
     "Tuple or Dict observation_space must hold"),
    (dict(action_space=gym.spaces.Tuple((gym.spaces.Discrete(2),))), TypeError,
     "action_space must be"),
    (dict(info=(InfoKey("a", np.float64), InfoKey("a", np.int8))), ValueError, "twice"),
    (dict(info=(InfoKey("a", np.float64, width=0),)), ValueError, "width"),
    (dict(render_modes=("ansi",), render=None), TypeError, "need a render hook"),
    (dict(kwargs={"n": 7}), TypeError, "Kwarg objects"),
])
def test_a_malformed_spec_is_refused_and_nothing_is_registered(counter, change, err, match):
    obs, act = _spaces({"n": 7})
    base = dict(env_id="SpecBad-v0", pool=counter.CounterPool, observation_space=obs,
                action_space=act, kwargs={"n": Kwarg(7, scope="pool")},
                info=(InfoKey("prob", np.float64), InfoKey("mask", np.int8, width=3)))
    base.update(change)
    with pytest.raises(err, match=match):
        cypool.api.register_spec(FamilySpec(**base))
    assert "SpecBad-v0" not in cypool.list_envs()


def test_a_pool_whose_outputs_do_not_fit_the_tuple_space_is_refused(counter):
    obs = gym.spaces.Tuple((gym.spaces.Discrete(7), gym.spaces.Discrete(3)))
    cypool.api.register_spec(FamilySpec(
        "SpecMis-v0", counter.CounterPool, obs, gym.spaces.MultiDiscrete([3, 4]),
        kwargs={"n": Kwarg(7)}, info=(InfoKey("p", np.float64),)))
    try:
        with pytest.raises(TypeError, match="obs.1 output"):
            cypool.make_vec("SpecMis-v0", 2)
    finally:
        cypool.api.unregister_env("SpecMis-v0")


def test_kwarg_kinds_and_scopes_are_checked():
    with pytest.raises(ValueError, match="kind must be one of"):
        Kwarg(1, kind="integer")
    with pytest.raises(ValueError, match="scope"):
        Kwarg(1, scope="member")


def test_a_specs_seed_bound_is_checked_by_resets_and_kept_by_populations(counter):
    """A spec whose seed hook takes 32-bit seeds: reset refuses seeds outside the bound before
    any env is seeded, and a population's tree gives each env a seed inside it."""
    got = {}

    def seed(fam, i, s):
        got[i] = s
        fam.engine.set_generator(i, np.random.PCG64(np.random.SeedSequence(s)))

    obs, act = _spaces({"n": 7})
    cypool.api.register_spec(FamilySpec(
        "SpecSeed32-v0", counter.CounterPool, obs, act, kwargs={"n": Kwarg(7)},
        info=(InfoKey("prob", np.float64), InfoKey("mask", np.int8, width=3)), seed=seed,
        seed_bound=2**32))
    try:
        env = cypool.make_vec("SpecSeed32-v0", 2)
        env.reset(seed=2**32 - 2)
        assert got == {0: 2**32 - 2, 1: 2**32 - 1}
        got.clear()
        for bad in (2**32 - 1, [0, 2**32]):
            with pytest.raises(ValueError, match=r"2\*\*32"):
                env.reset(seed=bad)
        assert got == {}
        env.close()
        pop = cypool.make_population("SpecSeed32-v0", 2, 3)
        pop.reset(seed=5)
        want = {k * 3 + j: int(np.random.SeedSequence(5, spawn_key=(k, j))
                               .generate_state(1, np.uint64)[0]) >> 32
                for k in range(2) for j in range(3)}
        assert got == want and all(0 <= s < 2**32 for s in got.values())
        pop.close()
    finally:
        cypool.api.unregister_env("SpecSeed32-v0")
    for bad, err in ((0, ValueError), (2**63 + 1, ValueError), (1.5, TypeError)):
        with pytest.raises(err, match="seed_bound"):
            cypool.api.register_spec(FamilySpec(
                "SpecSeedBad-v0", counter.CounterPool, obs, act, kwargs={"n": Kwarg(7)},
                info=(InfoKey("prob", np.float64), InfoKey("mask", np.int8, width=3)),
                seed=seed, seed_bound=bad))
    assert "SpecSeedBad-v0" not in cypool.list_envs()
