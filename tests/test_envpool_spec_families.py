"""cypool.envpool serving EnvPool 1.2.5's classic-control and toy-text ids from the family
specs' ``envpool`` names: the API surface against the installed EnvPool (config and
defaults, spaces and dtypes, info keys, env_id rows, send/recv), the numbers against
gymnasium's sync vector env (the dynamics are gymnasium's), and the errors."""
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import cypool.envpool as cep
from cypool.api import EnvPoolNames, FamilySpec, register_spec, unregister_env

sys.path.insert(0, str(Path(__file__).parent))
from _envpool_ref import envpool_or_none, real_envpool  # noqa: E402

# EnvPool id -> gymnasium id (the same game; cypool runs gymnasium's)
GYM = {"CartPole-v0": "CartPole-v0", "CartPole-v1": "CartPole-v1",
       "Pendulum-v1": "Pendulum-v1", "MountainCar-v0": "MountainCar-v0",
       "MountainCarContinuous-v0": "MountainCarContinuous-v0", "Acrobot-v1": "Acrobot-v1",
       "FrozenLake-v1": "FrozenLake-v1", "FrozenLake8x8-v1": "FrozenLake8x8-v1",
       "Taxi-v3": "Taxi-v4", "CliffWalking-v0": "CliffWalking-v1",
       "CliffWalking-v1": "CliffWalking-v1", "CliffWalkingSlippery-v1": "CliffWalkingSlippery-v1",
       "Blackjack-v1": "Blackjack-v1"}
IDS = sorted(GYM)


def _actions(space, n, rng):
    if isinstance(space, gym.spaces.Discrete):
        return rng.integers(0, space.n, n).astype(np.int32)
    return rng.uniform(space.low, space.high, (n,) + space.shape).astype(space.dtype)


def _desc(x):
    if isinstance(x, dict):
        return {k: _desc(v) for k, v in x.items()}
    return (np.asarray(x).dtype, np.shape(x))


def _same_surface(a, b):
    """Two (obs, ..., info) results of the same shape, dtypes and info keys."""
    for x, y in zip(a[:-1], b[:-1]):
        assert x.dtype == y.dtype and x.shape == y.shape
    assert _desc(a[-1]) == _desc(b[-1])
    assert a[-1]["env_id"].tolist() == b[-1]["env_id"].tolist()
    assert a[-1]["players"]["env_id"].tolist() == b[-1]["players"]["env_id"].tolist()


@pytest.mark.parametrize("task", IDS)
def test_the_same_api_as_envpool(task):
    ep = real_envpool()
    mine, real = cep.make_spec(task).config._asdict(), ep.make_spec(task).config._asdict()
    mine.pop("base_path"), real.pop("base_path")
    assert mine == real                          # every option, EnvPool's defaults
    kw = dict(num_envs=4, seed=7)
    ours, theirs = cep.make_gymnasium(task, **kw), ep.make_gymnasium(task, **kw)
    try:
        assert ours.observation_space == theirs.observation_space
        assert ours.observation_space.dtype == theirs.observation_space.dtype
        assert ours.action_space == theirs.action_space
        assert ours.action_space.dtype == theirs.action_space.dtype
        assert ours.single_observation_space == theirs.single_observation_space
        assert len(ours) == len(theirs) == 4 and ours.is_async == theirs.is_async is False
        assert ours.config.keys() == theirs.config.keys()
        assert ours.spec.reward_threshold == theirs.spec.reward_threshold
        rng = np.random.default_rng(0)
        _same_surface(ours.reset(), theirs.reset())
        act = _actions(ours.action_space, 4, rng)
        _same_surface(ours.step(act), theirs.step(act))
        for env_id in (np.array([2, 0]), np.array([3], np.int32)):
            _same_surface(ours.reset(env_id), theirs.reset(env_id))
            a = _actions(ours.action_space, len(env_id), rng)
            _same_surface(ours.step(a, env_id), theirs.step(a, env_id))
            ours.send(a, env_id), theirs.send(a, env_id)
            _same_surface(ours.recv(), theirs.recv())
    finally:
        ours.close(), theirs.close()


@pytest.mark.parametrize("task", ["CartPole-v1", "Taxi-v3", "Blackjack-v1"])
def test_async_batches_like_envpool(task):
    kw = dict(num_envs=4, batch_size=2, seed=3)
    ours, theirs = cep.make_gymnasium(task, **kw), real_envpool().make_gymnasium(task, **kw)
    try:
        assert ours.is_async and theirs.is_async
        ours.async_reset(), theirs.async_reset()
        seen = []
        for _ in range(4):
            a, b = ours.recv(), theirs.recv()
            _same_surface_no_ids(a, b)
            assert len(a[-1]["env_id"]) == 2
            seen += a[-1]["env_id"].tolist()
            act = _actions(ours.action_space, 2, np.random.default_rng(1))
            ours.send(act, a[-1]["env_id"]), theirs.send(act, b[-1]["env_id"])
        assert set(seen) == {0, 1, 2, 3}
    finally:
        ours.close(), theirs.close()


def _same_surface_no_ids(a, b):         # async: which envs finish first is a race
    for x, y in zip(a[:-1], b[:-1]):
        assert x.dtype == y.dtype and x.shape == y.shape
    assert _desc(a[-1]) == _desc(b[-1])


def _cast(obs, dtype):
    if isinstance(obs, tuple):           # Blackjack: EnvPool's (N, 3) Box
        return np.stack(obs, axis=1).astype(dtype)
    return obs.astype(dtype)


def _compare_with_gymnasium(task, options, gym_id, gym_kwargs, steps, seed):
    ours = cep.make_gymnasium(task, num_envs=4, seed=seed, **options)
    limit = ours.config["max_episode_steps"]
    ref = gym.make_vec(gym_id, 4, vectorization_mode="sync",
                       max_episode_steps=limit if limit < 2**31 - 1 else None, **gym_kwargs)
    try:
        space = ours.observation_space       # EnvPool: Discrete(n) (int64), its obs int32
        dt = np.int32 if isinstance(space, gym.spaces.Discrete) else space.dtype
        obs, info = ours.reset()
        assert obs.dtype == dt
        gobs, ginfo = ref.reset(seed=seed)
        assert np.array_equal(obs, _cast(gobs, dt))
        rng = np.random.default_rng(seed)
        ends = 0
        for _ in range(steps):
            act = _actions(ours.action_space, 4, rng)
            obs, rew, term, trunc, info = ours.step(act)
            gobs, grew, gterm, gtrunc, ginfo = ref.step(act.astype(ref.single_action_space.dtype))
            assert obs.dtype == dt and rew.dtype == np.float32
            assert np.array_equal(obs, _cast(gobs, dt))
            assert np.array_equal(rew, grew.astype(np.float32))
            assert np.array_equal(trunc, gtrunc)
            assert np.array_equal(term, gterm & ~gtrunc)       # EnvPool: truncation wins
            if "prob" in info and ginfo.get("prob", np.zeros(1)).dtype == np.float64:
                assert np.array_equal(info["prob"], ginfo["prob"].astype(np.float32))
            if "state" in info:                 # Acrobot: EnvPool's (theta1, theta2)
                want = np.array([e.unwrapped.state[:2] for e in ref.envs], np.float32)
                assert np.array_equal(info["state"], want)
            ends += int((term | trunc).sum())
        return ends
    finally:
        ours.close(), ref.close()


@pytest.mark.parametrize("task", IDS)
def test_numbers_are_gymnasiums(task):
    steps = {"Acrobot-v1": 120, "CartPole-v1": 150}.get(task, 230)
    for seed in (0, 11):
        _compare_with_gymnasium(task, {}, GYM[task], {}, steps, seed)


@pytest.mark.parametrize("task, options, gym_id, gym_kwargs", [
    ("FrozenLake-v1", dict(size=8), "FrozenLake-v1", dict(map_name="8x8")),
    ("FrozenLake8x8-v1", dict(size=4), "FrozenLake8x8-v1", dict(map_name="4x4")),
    ("CliffWalking-v0", dict(is_slippery=True, max_episode_steps=40),
     "CliffWalkingSlippery-v1", {}),
    ("Blackjack-v1", dict(natural=True, sab=False), "Blackjack-v1",
     dict(natural=True, sab=False)),
    ("Acrobot-v1", dict(max_episode_steps=40), "Acrobot-v1", {}),
    ("CliffWalking-v1", dict(max_episode_steps=30), "CliffWalking-v1", {}),
])
def test_envpools_options_reach_gymnasiums_kwargs(task, options, gym_id, gym_kwargs):
    ends = _compare_with_gymnasium(task, options, gym_id, gym_kwargs, 90, 5)
    assert ends > 0                           # episodes ended (and were reset) on the way
    spec = cep.make_spec(task, **options)
    assert {k: spec.config._asdict()[k] for k in options} == options


def test_obs_and_reward_dtypes_are_envpools():
    with cep.make_gymnasium("Blackjack-v1", num_envs=2) as env:
        assert env.observation_space == gym.spaces.Box(0, 31, (3,), np.int32)
        obs, _ = env.reset()
        assert obs.dtype == np.int32 and obs.shape == (2, 3)
        assert env.observation_space.contains(obs[0])
    with cep.make_gymnasium("Taxi-v3", num_envs=2) as env:
        obs, info = env.reset()
        assert obs.dtype == np.int32 and set(info) == {"env_id", "players", "elapsed_step"}
        assert env.step(np.zeros(2, np.int32))[1].dtype == np.float32


def test_list_all_envs_is_what_make_serves():
    ids = cep.list_all_envs()
    assert len(ids) == len(set(ids))
    assert set(GYM) <= set(ids)
    for cypool_only in ("Taxi-v4", "FrozenLake-v0"):
        assert cypool_only not in ids
    spec_ids = [i for i in ids if not i.endswith("-v5")]     # not Atari's, MuJoCo's
    assert set(GYM) <= set(spec_ids)
    ep = envpool_or_none()                   # None under tools/sanitize.sh
    if ep is not None:                       # every one (aliases included) is EnvPool's
        assert set(spec_ids) <= set(ep.list_all_envs())
    for task in spec_ids:
        assert cep.make_spec(task).observation_space is not None


@pytest.mark.parametrize("task, words", [
    ("Taxi-v4", ["Taxi-v4", "Taxi-v3", "make_vec"]),
    ("Pendulum-v0", ["Pendulum-v0", "Pendulum-v1"]),
    ("Catch-v0", ["Catch-v0", "list_all_envs"]),
    ("CartPol-v1", ["CartPol-v1", "CartPole-v1"]),
])
def test_ids_it_cannot_serve_say_what_to_use(task, words):
    for call in (cep.make_gymnasium, cep.make_spec):
        with pytest.raises(ValueError) as exc:
            call(task)
        msg = str(exc.value)
        assert all(w in msg for w in words), msg
        assert "env:" not in msg and "<" not in msg and "FamilySpec" not in msg


@pytest.mark.parametrize("task, options, exc, words", [
    ("Pendulum-v1", dict(version=0), ValueError, ["version=0", "version=1"]),
    ("FrozenLake-v1", dict(size=5), ValueError, ["size=5", "4", "8"]),
    ("FrozenLake-v1", dict(size=4.0), TypeError, ["size"]),
    ("CliffWalking-v0", dict(is_slippery="yes"), TypeError, ["is_slippery"]),
    ("CartPole-v1", dict(bogus=1), TypeError, ["bogus"]),
    ("Taxi-v3", dict(is_rainy=True), TypeError, ["is_rainy"]),     # not an EnvPool option
    ("Blackjack-v1", dict(from_pixels=True), ValueError, ["MuJoCo"]),
    ("CartPole-v1", dict(max_episode_steps=0), ValueError, ["max_episode_steps"]),
])
def test_bad_options_are_refused_before_anything_runs(task, options, exc, words):
    with pytest.raises(exc) as info:
        cep.make_gymnasium(task, **options)
    assert all(w in str(info.value) for w in words), str(info.value)


def test_a_users_spec_is_served_from_its_envpool_names():
    """Nothing per family in cypool.envpool: a spec of one's own, with EnvPool names, is
    served (and listed) the same way, and forgotten with it."""
    names = EnvPoolNames(ids=("MyCliff-v0",), config=dict(max_episode_steps=25, slippery=False),
                         kwargs=dict(slippery="is_slippery"), obs_dtype=np.int32,
                         info={"prob": ("prob", np.float32)})
    spec = FamilySpec("UserCliff-v9", "cypool.toy_text._cliff_walking:CliffWalkingPool",
                      gym.spaces.Discrete(48), gym.spaces.Discrete(4),
                      kwargs={"is_slippery": cep_kwarg(False)}, info=_prob_key(),
                      envpool=names)
    register_spec(spec)
    try:
        assert "MyCliff-v0" in cep.list_all_envs() and "UserCliff-v9" not in cep.list_all_envs()
        with cep.make_gymnasium("MyCliff-v0", num_envs=2, slippery=True) as env:
            obs, info = env.reset()
            assert obs.dtype == np.int32 and info["prob"].dtype == np.float32
            assert env.config["max_episode_steps"] == 25 and env.config["slippery"] is True
            _, _, _, _, info = env.step(np.zeros(2, np.int32))
            assert np.allclose(info["prob"], 1 / 3)                  # slippery reached the pool
        with pytest.raises(ValueError, match="MyCliff-v0"):
            cep.make_gymnasium("UserCliff-v9")
        clash = FamilySpec("UserCliff-v10", spec.pool, spec.observation_space,
                           spec.action_space, kwargs=spec.kwargs, info=spec.info,
                           envpool=EnvPoolNames(ids=("MyCliff-v0",)))
        with pytest.raises(ValueError, match="MyCliff-v0"):
            register_spec(clash)
    finally:
        unregister_env("UserCliff-v9")
    assert "MyCliff-v0" not in cep.list_all_envs()
    with pytest.raises(ValueError, match="MyCliff-v0"):
        cep.make_gymnasium("MyCliff-v0")


def cep_kwarg(default):
    from cypool.api import Kwarg
    return Kwarg(default)


def _prob_key():
    from cypool.api import InfoKey
    return (InfoKey("prob", np.float64, reset_dtype=np.int64),)


@pytest.mark.parametrize("bad, exc", [
    (dict(ids="CartPole-v1"), TypeError),                  # a str, not a tuple of ids
    (dict(ids=()), ValueError),
    (dict(ids=("A-v0",), kwargs={"x": "y"}), ValueError),   # x is no option of config
    (dict(ids=("A-v0",), config={"num_envs": 2}), ValueError),   # EnvPool's common option
    (dict(ids=("A-v0",), info={"k": ("k",)}), TypeError),
    (dict(ids=("A-v0",), obs_dtype="nope"), TypeError),
    (dict(ids=("A-v0",), obs="not callable"), TypeError),
])
def test_malformed_envpool_names_are_refused(bad, exc):
    with pytest.raises(exc):
        EnvPoolNames(**bad)


def test_a_spec_whose_envpool_info_reads_no_key_of_its_own_is_refused():
    names = EnvPoolNames(ids=("NoSuchKey-v0",), info={"prob": ("probability", np.float32)})
    spec = FamilySpec("UserCliff-v11", "cypool.toy_text._cliff_walking:CliffWalkingPool",
                      gym.spaces.Discrete(48), gym.spaces.Discrete(4),
                      kwargs={"is_slippery": cep_kwarg(False)}, info=_prob_key(),
                      envpool=names)
    with pytest.raises(ValueError, match="probability"):
        register_spec(spec)
    with pytest.raises(TypeError, match="EnvPoolNames"):
        register_spec(FamilySpec(spec.env_id, spec.pool, spec.observation_space,
                                 spec.action_space, kwargs=spec.kwargs, info=spec.info,
                                 envpool={"ids": ("X-v0",)}))
    assert "NoSuchKey-v0" not in cep.list_all_envs()
