"""cypool.envpool against the installed EnvPool 1.2.5: the same API (spaces, config, shapes,
dtypes, info keys, seeding, env_id rows, async batches, episode ends), MuJoCo numbers equal
to gymnasium's, and an EnvPool-era script that runs unchanged but for its import."""
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import cypool.envpool as cep
from cypool.mujoco import envpool_names

sys.path.insert(0, str(Path(__file__).parent))
from _envpool_ref import real_envpool  # noqa: E402

IDS = ["Pong-v5", "Breakout-v5", "Hopper-v5", "Ant-v5"]
# EnvPool's MuJoCo -v4 ids (gymnasium's v4 classes) and its older ids served as one of them
V4_IDS = sorted(envpool_names.V4_ONLY) + sorted(a for m in envpool_names.ALIASES.values()
                                                  for a in m)


def test_mirrors_the_installed_envpool():
    assert real_envpool().__version__ == cep.ENVPOOL_API_VERSION


def _zeros(env, n):
    return np.zeros((n,) + env.action_space.shape, env.action_space.dtype)


@pytest.mark.parametrize("task", IDS + V4_IDS)
def test_the_same_api_as_envpool(task):
    kw = dict(num_envs=3)
    ours, theirs = cep.make_gymnasium(task, **kw), real_envpool().make_gymnasium(task, **kw)
    try:
        assert isinstance(ours, gym.Env) and isinstance(ours, gym.vector.VectorEnv)
        assert ours.observation_space == theirs.observation_space
        assert ours.action_space == theirs.action_space
        assert ours.single_action_space == theirs.single_action_space
        assert len(ours) == len(theirs) == 3 and ours.is_async == theirs.is_async
        assert np.array_equal(ours.all_env_ids, theirs.all_env_ids)
        assert ours.all_env_ids.dtype == theirs.all_env_ids.dtype
        mine, real = ours.config, theirs.config
        assert set(real) <= set(mine)
        same = {k for k in real if k not in ("base_path", "reward_threshold")}
        assert {k: mine[k] for k in same} == {k: real[k] for k in same}
        assert set(ours.spec.config._fields) >= set(theirs.spec.config._fields)
        for a, b in ((ours.reset(), theirs.reset()),
                     (ours.step(_zeros(ours, 3)), theirs.step(_zeros(theirs, 3)))):
            for x, y in zip(a[:-1], b[:-1]):
                assert x.dtype == y.dtype and x.shape == y.shape
            ia, ib = a[-1], b[-1]
            assert set(ib) <= set(ia)           # MuJoCo: gymnasium's keys, a superset
            if "lives" in ib:
                assert set(ia) == set(ib)
            for k in ib:
                if k == "players":
                    assert np.array_equal(ia[k]["env_id"], ib[k]["env_id"])
                else:
                    assert ia[k].dtype == ib[k].dtype and ia[k].shape == ib[k].shape, k
            assert np.array_equal(ia["env_id"], ib["env_id"])
        # rows of env_id, positionally, for reset and step
        obs, info = ours.reset(np.array([2, 0]))
        assert obs.shape[0] == 2 and info["env_id"].tolist() == [2, 0]
        out = ours.step(_zeros(ours, 1), np.array([1]))
        assert out[0].shape[0] == 1 and out[4]["env_id"].tolist() == [1]
    finally:
        ours.close(), theirs.close()


@pytest.mark.parametrize("task", sorted(envpool_names.V5_ONLY) + ["Pong-v5", "Breakout-v5"]
                         + V4_IDS)
def test_every_option_and_default_of_envpools_spec(task):
    mine = cep.make_spec(task).config._asdict()
    real = real_envpool().make_spec(task).config._asdict()
    assert set(real) <= set(mine)
    # reward_threshold: gymnasium's registered one (EnvPool has its own for some tasks)
    skip = ("base_path", "reward_threshold")
    assert {k: mine[k] for k in real if k not in skip} == {k: real[k] for k in real
                                                           if k not in skip}


def test_mujoco_numbers_are_gymnasiums_with_envpools_seeding():
    env = cep.make_gymnasium("Hopper-v5", num_envs=3, seed=7)
    refs = [gym.make("Hopper-v5") for _ in range(3)]
    try:
        obs, _ = env.reset()
        for i, r in enumerate(refs):
            assert np.array_equal(obs[i], r.reset(seed=7 + i)[0])        # env i: seed + i
        rng = np.random.default_rng(0)
        done = np.zeros(3, bool)
        for t in range(300):
            a = rng.uniform(-1, 1, (3, 3))
            obs, rew, term, trunc, info = env.step(a)
            assert rew.dtype == np.float32 and not (term & trunc).any()
            for i, r in enumerate(refs):
                if done[i]:                      # EnvPool: the step after an end resets
                    o, _ = r.reset()
                    assert rew[i] == 0 and info["elapsed_step"][i] == 0
                    assert np.array_equal(obs[i], o)
                    continue
                o, rw, te, tr, _ = r.step(a[i])
                assert np.array_equal(obs[i], o) and rew[i] == np.float32(rw)
                assert (term[i], trunc[i]) == (te, tr)
            done = term | trunc
        assert env.step(_zeros(env, 3))[4]["elapsed_step"].max() > 0
    finally:
        env.close()
        for r in refs:
            r.close()


@pytest.mark.parametrize("task,ref_id,ref_kwargs", [
    ("Ant-v4", "Ant-v4", {}), ("Ant-v3", "Ant-v4", dict(use_contact_forces=True)),
    ("Humanoid-v4", "Humanoid-v4", {}), ("Reacher-v2", "Reacher-v4", {})])
def test_v4_numbers_are_gymnasiums_v4(task, ref_id, ref_kwargs):
    # EnvPool's -v4 ids (and -v3/-v2 ones that have a v4 config) run gymnasium's v4 class
    n = 2
    env = cep.make_gymnasium(task, num_envs=n, seed=4)
    refs = [gym.make(ref_id, **ref_kwargs) for _ in range(n)]
    try:
        obs, info = env.reset()
        for i, r in enumerate(refs):
            assert np.array_equal(obs[i], r.reset(seed=4 + i)[0])
        rng = np.random.default_rng(1)
        low, high = env.action_space.low, env.action_space.high
        for t in range(60):
            a = rng.uniform(low, high, (n,) + env.action_space.shape)
            obs, rew, term, trunc, info = env.step(a)
            for i, r in enumerate(refs):
                if info["elapsed_step"][i] == 0:         # EnvPool's next-step reset
                    assert np.array_equal(obs[i], r.reset()[0])
                    continue
                o, rw, te, tr, inf = r.step(a[i])
                assert np.array_equal(obs[i], o) and rew[i] == np.float32(rw)
                assert term[i] == te
                for k, v in inf.items():       # gymnasium's v4 keys, gymnasium's values
                    assert info[k][i] == v, k
    finally:
        env.close()
        for r in refs:
            r.close()


def test_v4_era_ids_without_an_exact_env_are_refused_with_the_id_to_use():
    listed = cep.list_all_envs()
    real = real_envpool().list_all_envs()
    for task, use in (("Pusher-v4", "Pusher-v5"), ("Pusher-v2", "Pusher-v5"),
                      ("Humanoid-v3", "Humanoid-v4")):
        assert task in real and task not in listed
        with pytest.raises(ValueError, match=use):
            cep.make_gymnasium(task)
    for task in V4_IDS:
        assert task in listed and task in real


def test_seeds_and_async_batches():
    a = cep.make_gymnasium("Breakout-v5", num_envs=4, batch_size=2, seed=[5, 6, 7, 8])
    b = cep.make_gymnasium("Breakout-v5", num_envs=1, seed=7)
    try:
        assert a.is_async and a.config["seed"] == 0 and a.config["env_seed"] == [5, 6, 7, 8]
        a.async_reset()
        got = {}
        while len(got) < 4:
            obs, rew, term, trunc, info = a.recv()
            assert obs.shape[0] == 2 and (rew == 0).all()
            for r, i in enumerate(info["env_id"]):
                got[int(i)] = obs[r]
        assert np.array_equal(got[2], b.reset()[0][0])      # env 2 of a = env 0 of b
        with pytest.warns(UserWarning, match="seed"):
            b.reset(seed=3)
    finally:
        a.close(), b.close()


def test_send_before_reset_is_refused_and_keeps_the_seeds():
    a = cep.make_gymnasium("Hopper-v5", num_envs=2, seed=3)
    b = cep.make_gymnasium("Hopper-v5", num_envs=2, seed=3)
    try:
        with pytest.raises(RuntimeError, match="reset"):
            a.send(np.zeros((2, 3)))
        assert np.array_equal(a.reset()[0], b.reset()[0])     # still seeded 3, 4
    finally:
        a.close(), b.close()


def test_options_are_checked_before_any_env_is_made():
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        cep.make_gymnasium("Pong-v5", bogus=1)
    with pytest.raises(ValueError, match="batch_size"):
        cep.make_gymnasium("Pong-v5", num_envs=2, batch_size=3)
    with pytest.raises(ValueError, match="gym_reset_return_info"):
        cep.make_gymnasium("Hopper-v5", gym_reset_return_info=False)
    with pytest.raises(ValueError, match="post_constraint"):
        cep.make_gymnasium("Hopper-v5", post_constraint=False)
    with pytest.raises(ValueError, match="env_type"):
        cep.make("Pong-v5", env_type="jax")
    cep.make("Pong-v5", env_type="dm").close()      # dm_env's API: tests/test_envpool_dm.py
    spec = cep.make_spec("Hopper-v5", healthy_z_min=0.5)
    assert spec.config.healthy_z_min == 0.5 and spec.action_space.dtype == np.float64
    env = cep.make_gymnasium("Hopper-v5", healthy_z_min=0.5, ctrl_cost_weight=0.5)
    assert env.pool.get_attr("healthy_z_range")[0] == (0.5, float("inf"))
    assert env.pool.get_attr("ctrl_cost_weight")[0] == 0.5
    env.close()
    assert "Pong-v5" in cep.list_all_envs() and "Hopper-v5" in cep.list_all_envs()


SCRIPT = textwrap.dedent('''
    import gymnasium as gym
    import numpy as np
    {import_line}

    class RecordEpisodeStatistics(gym.Wrapper):          # CleanRL's envpool variant
        def __init__(self, env, deque_size=100):
            super().__init__(env)
            self.num_envs = getattr(env, "num_envs", 1)
            self.episode_returns = None
            self.episode_lengths = None

        def reset(self, **kwargs):
            observations, infos = super().reset(**kwargs)
            self.episode_returns = np.zeros(self.num_envs, dtype=np.float32)
            self.episode_lengths = np.zeros(self.num_envs, dtype=np.int32)
            self.lives = np.zeros(self.num_envs, dtype=np.int32)
            self.returned_episode_returns = np.zeros(self.num_envs, dtype=np.float32)
            self.returned_episode_lengths = np.zeros(self.num_envs, dtype=np.int32)
            return observations, infos

        def step(self, action):
            observations, rewards, terms, truncs, infos = super().step(action)
            self.episode_returns += infos["reward"]
            self.episode_lengths += 1
            self.returned_episode_returns[:] = self.episode_returns
            self.returned_episode_lengths[:] = self.episode_lengths
            self.episode_returns *= 1 - infos["terminated"]
            self.episode_lengths *= 1 - infos["terminated"]
            infos["r"] = self.returned_episode_returns
            infos["l"] = self.returned_episode_lengths
            return observations, rewards, terms, truncs, infos

    envs = envpool.make("Breakout-v5", env_type="gym", num_envs=4, episodic_life=True,
                        reward_clip=True, seed=1)
    assert isinstance(envs.single_action_space, gym.spaces.Discrete) and envs.is_vector_env
    n_actions = envs.single_action_space.n
    envs = RecordEpisodeStatistics(envs)
    obs, _ = envs.reset()
    rng = np.random.default_rng(0)
    games, clipped = 0, True
    for step in range(400):
        action = rng.integers(0, n_actions, 4)
        obs, reward, term, trunc, info = envs.step(action)
        clipped &= bool(np.isin(reward, (-1.0, 0.0, 1.0)).all())
        for idx, d in enumerate(term | trunc):
            if d and info["lives"][idx] == 0:
                games += 1
                print("episodic_return", info["r"][idx])
    assert obs.shape == (4, 4, 84, 84) and clipped
    print("games", games)
    envs.close()
''')


def test_old_cleanrl_assignments_are_accepted():
    """CleanRL's EnvPool scripts assign these on the env (EnvPool 1.2.5 refuses them)."""
    envs = cep.make("Pong-v5", env_type="gym", num_envs=2)
    envs.num_envs = 2
    envs.single_action_space = envs.action_space
    envs.single_observation_space = envs.observation_space
    envs.is_vector_env = True
    assert envs.reset()[0].shape == (2, 4, 84, 84)
    envs.close()


@pytest.mark.parametrize("import_line", ["import cypool.envpool as envpool", "import envpool"])
def test_an_envpool_script_runs_unchanged_but_for_its_import(import_line, tmp_path):
    import subprocess

    if import_line == "import envpool":
        real_envpool()               # the script's child process inherits the preloaded libasan

    path = tmp_path / "script.py"
    path.write_text(SCRIPT.format(import_line=import_line))
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "games" in out.stdout


@pytest.mark.parametrize("task", ["CartPole-v1", "Hopper-v5", "Pong-v5"])
def test_step_takes_jax_arrays_as_numpy_converts_them(task):
    """ARLBench's io_callback partial resets pass jax.Arrays to step(action, env_id)."""
    jnp = pytest.importorskip("jax.numpy", reason="jax is a test dependency")
    envs = [cep.make_gymnasium(task, num_envs=3, seed=5) for _ in range(2)]
    space = envs[0].action_space
    space.seed(1)
    for _ in range(3):
        for e in envs:
            e.reset()
        a = np.stack([space.sample() for _ in range(3)])
        ids = np.array([2, 0], np.int32)
        j = jnp.asarray(a[ids])       # jax's dtype (float32 without x64), which numpy keeps
        want = envs[0].step(np.asarray(j), ids)
        got = envs[1].step(j, jnp.asarray(ids))
        for x, y in zip(want[:4], got[:4]):
            assert np.array_equal(x, y) and np.asarray(x).dtype == np.asarray(y).dtype
        got = envs[1].step(a.tolist(), None)                 # a list: numpy's dtype for it
        want = envs[0].step(np.asarray(a.tolist()))
        for x, y in zip(want[:4], got[:4]):
            assert np.array_equal(x, y)
    with pytest.raises(TypeError, match="array of numbers"):
        envs[0].step([object()] * 3)
    for e in envs:
        e.close()
