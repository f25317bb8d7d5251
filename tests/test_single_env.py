"""gymnasium.make("cypool/<id>"): one env (cypool.SingleEnv inside gymnasium's wrappers) whose
numbers equal gymnasium.make(<id>)'s, the same seeds and actions given to both."""
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import cypool
from cypool.single import SingleEnv

HAS_ATARI = "Pong-v5" in cypool.list_envs()


def _same(a, b, what):
    """a (cypool) equals b (gymnasium): values and dtypes (a Python float reads as float64, an
    int as int64), tuples and dicts item by item."""
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b), what
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{what}[{i}]")
        return
    if isinstance(b, dict):
        assert isinstance(a, dict) and sorted(a) == sorted(b), (what, sorted(a), sorted(b))
        for k in b:
            _same(a[k], b[k], f"{what}[{k!r}]")
        return
    assert np.asarray(a).dtype == np.asarray(b).dtype, (what, np.asarray(a).dtype,
                                                         np.asarray(b).dtype)
    assert np.array_equal(a, b), (what, a, b)


def _episodes(env_id, steps, seed=0, **make_kw):
    """Run gymnasium.make(cypool/env_id) and gymnasium.make(env_id) side by side with the same
    seeded actions, resetting (seed=None) after each episode; returns the number of episode
    ends seen and whether one was a truncation."""
    ours = gym.make(f"cypool/{env_id}", **make_kw)
    ref = gym.make(env_id, **make_kw)
    ends = truncs = 0
    try:
        _same(ours.reset(seed=seed), ref.reset(seed=seed), "reset")
        space = ref.action_space
        space.seed(seed)
        for t in range(steps):
            a = space.sample()
            out, exp = ours.step(a), ref.step(a)
            for name, x, y in zip(("obs", "reward", "terminated", "truncated", "info"),
                                  out, exp):
                if name == "reward":
                    assert x == y, (t, x, y)
                    assert isinstance(x, float), type(x)
                else:
                    _same(x, y, f"step {t} {name}")
            if exp[2] or exp[3]:
                ends += 1
                truncs += bool(exp[3])
                _same(ours.reset(), ref.reset(), f"reset after step {t}")
    finally:
        ours.close()
        ref.close()
    return ends, truncs


@pytest.mark.parametrize("env_id,steps", [("CartPole-v1", 300), ("Hopper-v5", 300),
                                          ("FrozenLake-v1", 300), ("Taxi-v4", 300),
                                          ("Blackjack-v1", 100)])
def test_same_numbers_as_gymnasium_make(env_id, steps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # Blackjack-v1's 'out of date'
        ends, _ = _episodes(env_id, steps)
    assert ends > 0      # the run crossed episode ends (terminations and fresh resets)


def test_time_limit_is_gymnasiums_and_applied_once():
    # Pendulum never terminates: a 250-step limit over gymnasium's registered 200 truncates at
    # step 250 in both (a limit kept by the pool too would truncate at 200)
    assert gym.spec("cypool/Pendulum-v1").max_episode_steps == gym.spec(
        "Pendulum-v1").max_episode_steps
    ends, truncs = _episodes("Pendulum-v1", 260, max_episode_steps=250)
    assert (ends, truncs) == (1, 1)
    ends, truncs = _episodes("Pendulum-v1", 30, max_episode_steps=12)
    assert (ends, truncs) == (2, 2)
    env = gym.make("cypool/Pendulum-v1", max_episode_steps=-1)    # -1: no TimeLimit at all
    try:
        env.reset(seed=0)
        assert not any(env.step(np.zeros(1, np.float32))[3] for _ in range(210))
    finally:
        env.close()


def test_wrappers_spaces_and_attributes():
    env = gym.make("cypool/CartPole-v1")
    ref = gym.make("CartPole-v1")
    try:
        assert isinstance(env, gym.wrappers.TimeLimit)
        assert isinstance(env.env, gym.wrappers.OrderEnforcing)
        assert isinstance(env.env.env, gym.wrappers.PassiveEnvChecker)
        assert isinstance(env.unwrapped, SingleEnv)
        assert env.spec.id == "cypool/CartPole-v1"
        assert env.spec.max_episode_steps == ref.spec.max_episode_steps == 500
        assert env.unwrapped.spec.id == "cypool/CartPole-v1"
        assert env.observation_space == ref.observation_space
        assert env.action_space == ref.action_space
        with pytest.raises(gym.error.ResetNeeded):           # OrderEnforcing
            env.step(0)
        env.reset(seed=5)
        ref.reset(seed=5)
        # np_random: gymnasium's seeding of the reset seed
        assert env.unwrapped.np_random_seed == 5
        assert isinstance(env.unwrapped.np_random, np.random.Generator)
        assert env.unwrapped.pool.num_envs == 1
        assert "autoreset_mode" not in env.unwrapped.metadata
    finally:
        env.close()
        ref.close()
    with pytest.raises(cypool.ClosedEnvError):
        env.unwrapped.step(0)                             # closed: refused, no crash
    env.close()                                           # twice: a no-op


def test_bad_reset_options_and_actions_raise_before_anything_moves():
    env = cypool.SingleEnv("CartPole-v1")
    try:
        obs, _ = env.reset(seed=1)
        with pytest.raises(ValueError, match="reset option"):
            env.reset(options={"low": -0.1})
        with pytest.raises(TypeError, match="options"):
            env.reset(options=[1])
        with pytest.raises((TypeError, ValueError)):
            env.step(2)                                    # not in Discrete(2)
        env.reset(seed=1, options={})
        o2, *_ = env.step(0)
        ref = gym.make("CartPole-v1")
        ref.reset(seed=1)
        assert np.array_equal(o2, ref.step(0)[0])
    finally:
        env.close()


def test_direct_single_env_keeps_the_registered_limit():
    env = cypool.SingleEnv("Pendulum-v1")              # no gymnasium TimeLimit around it
    try:
        env.reset(seed=0)
        truncs = [env.step(np.zeros(1, np.float32))[3] for _ in range(200)]
        assert truncs[-1] and not any(truncs[:-1])
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1", "Hopper-v5", "FrozenLake-v1",
                                    "Taxi-v4", "Blackjack-v1"] + (["Pong-v5"] if HAS_ATARI else []))
def test_check_env(env_id):
    if env_id in ("CartPole-v1", "Pendulum-v1", "FrozenLake-v1", "Taxi-v4", "Blackjack-v1"):
        # check_env renders every mode in the metadata, and classic-control and toy-text
        # rgb_array frames are drawn with pygame, their extras' (a plain `pip install .` has
        # no pygame: tools/newest_python.sh); without it render() raises
        # DependencyNotInstalled (classic/test_classic_render.py::test_pygame_missing_is_a_clear_error)
        pytest.importorskip("pygame")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                   # gymnasium's own space warnings
        env = gym.make(f"cypool/{env_id}")
        try:
            check_env(env.unwrapped)
        finally:
            env.close()


def test_sync_vector_env_of_single_envs_equals_gymnasiums():
    ours = gym.vector.SyncVectorEnv([lambda: gym.make("cypool/CartPole-v1")] * 2)
    ref = gym.make_vec("CartPole-v1", 2, "sync")
    try:
        _same(ours.reset(seed=[3, 4]), ref.reset(seed=[3, 4]), "reset")
        ref.action_space.seed(0)
        ends = 0
        for t in range(300):
            a = ref.action_space.sample()
            out, exp = ours.step(a), ref.step(a)
            for name, x, y in zip(("obs", "reward", "terminated", "truncated", "info"),
                                  out, exp):
                _same(x, y, f"step {t} {name}")
            ends += int(exp[2].sum() + exp[3].sum())
        assert ends > 2                                   # autoresets happened in both
    finally:
        ours.close()
        ref.close()


@pytest.mark.skipif(not HAS_ATARI, reason="cypool built without ALE")
def test_atari_single_env_equals_one_env_pool():
    # cypool's Atari ids take EnvPool's options, not ale-py's: the reference is make_vec(id, 1)
    env = gym.make("cypool/Pong-v5", render_mode="rgb_array")
    pool = cypool.make_vec("Pong-v5", 1, render_mode="rgb_array")
    try:
        assert env.observation_space == pool.single_observation_space
        assert env.action_space == pool.single_action_space
        assert env.spec.max_episode_steps == cypool.registration.default_max_episode_steps(
            "Pong-v5")
        obs, info = env.reset(seed=7)
        pobs, pinfo = pool.reset(seed=7)
        assert np.array_equal(obs, pobs[0]) and info["lives"] == pinfo["lives"][0]
        assert isinstance(info["lives"], int)
        frame = env.render()
        assert frame.shape[-1] == 3 and frame.dtype == np.uint8
        assert np.array_equal(frame, pool.render()[0])
        rng = np.random.default_rng(0)
        for t in range(60):
            a = int(rng.integers(env.action_space.n))
            o, r, te, tr, i = env.step(a)
            po, pr, pte, ptr, pi = pool.step(np.array([a]))
            assert np.array_equal(o, po[0]) and r == pr[0], t
            assert (te, tr) == (pte[0], ptr[0]), t
            # a single env's info holds the keys the pool reported for it (their masks)
            assert sorted(i) == sorted(k for k in pi if not k.startswith("_") and pi["_" + k][0])
            for k in i:
                assert np.array_equal(i[k], pi[k][0]), (t, k)
    finally:
        env.close()
        pool.close()


def test_render_mode_not_offered_is_refused():
    with pytest.raises(ValueError, match="render_mode"):
        gym.make("cypool/CartPole-v1", render_mode="human")
    with pytest.raises(ValueError, match="render_mode"):
        gym.make("cypool/CartPole-v1", render_mode="ansi")


def test_make_vec_through_gymnasium_unchanged():
    env = gym.make_vec("cypool/CartPole-v1", 3)
    try:
        assert isinstance(env, cypool.VectorEnv) and env.num_envs == 3
    finally:
        env.close()


# ids with a namespace of their own (all dm_control's): gymnasium.make takes them as
# cypool-<namespace>/<name> (gymnasium's ids hold one namespace; issue #40 item 9). One task
# per dm_control domain.
def _one_per_domain():
    seen, out = set(), []
    for env_id in cypool.list_envs():
        if "/" in env_id:
            domain = env_id.split("/", 1)[1].split("-")[0]
            if domain not in seen:
                seen.add(domain)
                out.append(env_id)
    return out


def _same_run(ours, ref, steps, seed=0):
    """Step ours (gymnasium.make's) and ref (cypool.SingleEnv) with the same seeded actions:
    equal reset and step outputs (np.array_equal, dtypes too); the step of the first episode
    end, or None."""
    _same(ours.reset(seed=seed), ref.reset(seed=seed), "reset")
    space = ref.action_space
    space.seed(seed)
    for t in range(steps):
        a = space.sample()
        out, exp = ours.step(a), ref.step(a)
        assert out[1] == exp[1] and isinstance(out[1], float), (t, out[1], exp[1])
        for name, x, y in zip(("obs", "terminated", "truncated", "info"),
                              (out[0],) + out[2:], (exp[0],) + exp[2:]):
            _same(x, y, f"step {t} {name}")
        if exp[2] or exp[3]:
            return t
    return None


@pytest.mark.parametrize("env_id", _one_per_domain())
def test_namespaced_id_through_gymnasium_make_equals_single_env(env_id):
    pytest.importorskip("dm_control.suite", reason="dm_control is a test dependency")
    name = cypool.registration.gym_id(env_id)
    assert name == "cypool-" + env_id
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # gymnasium's checker on float64 Dict spaces
        ours = gym.make(name)
        ref = SingleEnv(env_id)
        try:
            assert ours.spec.id == name and ours.unwrapped.env_id == env_id
            assert ours.observation_space == ref.observation_space
            assert ours.action_space == ref.action_space
            _same_run(ours, ref, 20)
        finally:
            ours.close()
            ref.close()


def test_namespaced_id_time_limits_through_gymnasium_make():
    pytest.importorskip("dm_control.suite", reason="dm_control is a test dependency")
    env_id = "dm_control/cartpole-swingup-v0"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # dm_control's own limit (1000 steps: the task's time_limit) truncates both, once
        ours, ref = gym.make("cypool-dm_control/cartpole-swingup-v0"), SingleEnv(env_id)
        try:
            assert _same_run(ours, ref, 1010) == 999
            _same(ours.reset(), ref.reset(), "reset after the limit")
        finally:
            ours.close()
            ref.close()
        # gymnasium.make's max_episode_steps (its TimeLimit) as SingleEnv's own
        ours = gym.make("cypool-dm_control/cartpole-swingup-v0", max_episode_steps=30)
        ref = SingleEnv(env_id, max_episode_steps=30)
        try:
            assert _same_run(ours, ref, 40, seed=5) == 29
        finally:
            ours.close()
            ref.close()
