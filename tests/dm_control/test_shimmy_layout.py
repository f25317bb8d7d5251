"""cypool's dm_control ids against Shimmy 2.0.1's under the same ids (gymnasium.make
("dm_control/<domain>-<task>-v0")): the same spaces (gymnasium's sorted Dict: key order,
shapes, dtypes, bounds), the same observations key for key and the same flattened vectors
(FlattenObservation, CleanRL's recipe), for all 51 tasks.

Shimmy's ``reset(seed=)`` does not reseed dm_control's task (it only replaces the wrapper's
``np_random``): a Shimmy env is seeded as cypool's env i of ``reset(seed=s)`` by
``task_kwargs={"random": s + i}`` at make, and its first ``reset()``. The numbers are then
compared bit for bit."""
import numpy as np
import pytest

import cypool

gym = pytest.importorskip("gymnasium")
shimmy = pytest.importorskip("shimmy", reason="Shimmy is a test reference")
pytest.importorskip("dm_control.suite", reason="dm_control is a test dependency")

from cypool.dm_control.family import env_ids  # noqa: E402

gym.register_envs(shimmy)
IDS = env_ids()
N, SEED, STEPS = 2, 7, 2


def _shimmy(env_id, seed, **kw):
    return gym.make(env_id, task_kwargs={"random": seed, **kw}, disable_env_checker=True)


def test_every_task_is_served():
    assert len(IDS) == 51
    assert set(IDS) <= set(gym.registry)     # each is one of Shimmy's ids


@pytest.mark.sweep(every=1)   # every id; every other one under ASan
@pytest.mark.parametrize("env_id", IDS)
def test_spaces_observations_and_flattening_are_shimmys(env_id):
    env = cypool.make_vec(env_id, N, num_threads=1)
    refs = [_shimmy(env_id, SEED + i) for i in range(N)]
    space, ref_space = env.single_observation_space, refs[0].observation_space
    # Box equality: shape, dtype, low and high; and the keys in the same order
    assert list(space.spaces) == list(ref_space.spaces) == sorted(ref_space.spaces)
    assert space == ref_space
    assert env.single_action_space == refs[0].action_space
    flat = gym.wrappers.FlattenObservation(refs[0])
    assert gym.spaces.flatten_space(space) == flat.observation_space
    obs, _ = env.reset(seed=SEED)
    outs = [(r.reset()[0], 0.0, False, False) for r in refs]
    rng = np.random.default_rng(SEED)
    act = env.single_action_space
    rew = term = trunc = None
    for t in range(STEPS + 1):
        assert list(obs) == list(ref_space.spaces), t
        for i, (ro, rew_i, term_i, trunc_i) in enumerate(outs):
            mine = {k: v[i] for k, v in obs.items()}
            assert mine.keys() == ro.keys()
            for k in ro:
                assert mine[k].dtype == ro[k].dtype and np.array_equal(mine[k], ro[k]), \
                    (env_id, t, i, k)
            assert np.array_equal(gym.spaces.flatten(space, mine), flat.observation(ro)), \
                (env_id, t, i)
            if t:
                assert (rew[i], term[i], trunc[i]) == (rew_i, term_i, trunc_i), (env_id, t, i)
        if t == STEPS:
            break
        a = rng.uniform(np.maximum(act.low, -1), np.minimum(act.high, 1), (N,) + act.shape)
        obs, rew, term, trunc, _ = env.step(a)
        outs = [r.step(a[i])[:4] for i, r in enumerate(refs)]
    env.close()


def test_gymnasium_make_vec_and_flatten_observation_match():
    """The vector API of the issue: gymnasium.make_vec through Shimmy (sync, one env seeded
    by its task) and cypool.make_vec, both under gymnasium's vector FlattenObservation."""
    env_id = "dm_control/walker-walk-v0"
    ref = gym.make_vec(env_id, 1, vectorization_mode="sync", task_kwargs={"random": 5},
                       disable_env_checker=True)
    env = cypool.make_vec(env_id, 1)
    assert env.single_observation_space == ref.single_observation_space
    assert env.observation_space == ref.observation_space
    ref_flat = gym.wrappers.vector.FlattenObservation(ref)
    mine_flat = gym.wrappers.vector.FlattenObservation(env)
    ro, _ = ref_flat.reset()
    mo, _ = mine_flat.reset(seed=5)
    assert np.array_equal(mo, ro)
    a = np.full((1, 6), 0.25)
    for _ in range(3):
        assert np.array_equal(mine_flat.step(a)[0], ref_flat.step(a)[0])
    env.close()
    ref.close()


@pytest.mark.parametrize("env_id", ["dm_control/walker-walk-v0", "dm_control/fish-swim-v0"])
def test_dm_control_order_is_an_option(env_id):
    """obs_key_order="dm_control": the observation_spec's order (EnvPool's), the same
    arrays; flatten_obs=True concatenates the keys in obs_key_order's order (sorted:
    FlattenObservation's vector of Shimmy's Dict)."""
    ref = _shimmy(env_id, SEED).unwrapped._env
    spec_keys = list(ref.observation_spec())
    assert spec_keys != sorted(spec_keys)
    env = cypool.make_vec(env_id, 1, obs_key_order="dm_control")
    assert list(env.single_observation_space.spaces) == spec_keys
    obs, _ = env.reset(seed=SEED)
    assert list(obs) == spec_keys
    ts = ref.reset()
    for k in spec_keys:
        assert np.array_equal(obs[k][0], ts.observation[k])
    for order in ("sorted", "dm_control"):
        flat = cypool.make_vec(env_id, 1, flatten_obs=True, obs_key_order=order)
        fo, _ = flat.reset(seed=SEED)
        keys = sorted(spec_keys) if order == "sorted" else spec_keys
        assert np.array_equal(fo[0], np.concatenate(
            [np.ravel(ts.observation[k]) for k in keys]))
        flat.close()
    env.close()


def test_envpool_names_keep_dm_control_order():
    import cypool.envpool as envpool
    env = envpool.make_gymnasium("WalkerWalk-v1", num_envs=1)
    ref = _shimmy("dm_control/walker-walk-v0", 0).unwrapped._env
    assert list(env.observation_space.spaces) == list(ref.observation_spec())
    env.close()


@pytest.mark.parametrize("bad", ["alphabetical", None, 1])
def test_bad_obs_key_order_is_refused(bad):
    with pytest.raises(ValueError, match="obs_key_order must be 'sorted'"):
        cypool.make_vec("dm_control/cheetah-run-v0", 1, obs_key_order=bad)
