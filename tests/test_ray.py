"""Ray backend: cypool pools as Ray actors behind one cypool.VectorEnv.

Every test compares with a local pool by np.array_equal. The module starts one Ray cluster on
loopback (ray.init(num_cpus=2)), or connects to CYPOOL_RAY_ADDRESS, which
tools/ray_two_node.sh sets after starting a two-node cluster; the tests marked ray_cluster
run only there (pytest -m ray_cluster).
"""
import inspect
import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from _ray_ref import real_ray, start_local_ray  # noqa: E402

ray = real_ray()   # skips under tools/sanitize.sh (tests/_ray_ref.py says why)

import gymnasium as gym  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402

import cypool  # noqa: E402
from cypool.distributed import WorkerDiedError, make_ray_vec  # noqa: E402

ADDRESS = os.environ.get("CYPOOL_RAY_ADDRESS")


@pytest.fixture(scope="module")
def cluster():
    if ADDRESS:
        if ray.is_initialized():
            ray.shutdown()
        ray.init(address=ADDRESS, log_to_driver=False)
    else:
        start_local_ray()
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def ray_vec(task, n, workers, **kw):
    # half a CPU per actor: up to four single-thread actors fit the 2-CPU test cluster
    kw.setdefault("num_cpus_per_worker", 0.5)
    kw.setdefault("num_threads", 1)
    return make_ray_vec(task, n, num_workers=workers, **kw)


def assert_same(a, b, where=""):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{k}]")
    elif isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), (where, sorted(a), sorted(b))
        for k in a:
            assert_same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert b.dtype == object and a.shape == b.shape, where
        for x, y in zip(a, b):      # final_obs rows: None, or an observation (maybe a tree)
            assert (x is None) == (y is None), where
            if x is not None:
                assert_same(x, y, where)
    else:
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and np.array_equal(a, b), (where, a, b)


def test_is_a_cypool_vector_env_with_local_spaces(cluster):
    env = ray_vec("Hopper-v5", 5, 2, max_episode_steps=10)
    loc = cypool.make_vec("Hopper-v5", 5, max_episode_steps=10)
    assert isinstance(env, cypool.VectorEnv) and isinstance(env, gym.vector.VectorEnv)
    assert env.worker_env_ranges == [(0, 3), (3, 5)] and env.worker_threads == [1, 1]
    for name in ("single_observation_space", "single_action_space", "observation_space",
                 "action_space"):
        assert getattr(env, name) == getattr(loc, name), name
    assert env.metadata == loc.metadata and env.metadata is not type(env).metadata
    assert env.autoreset_mode is AutoresetMode.NEXT_STEP and env.num_envs == 5
    assert "backend=ray" in repr(env)
    # a gymnasium vector wrapper accepts it; its episode statistics match the local pool's
    wrapped = gym.wrappers.vector.RecordEpisodeStatistics(env)
    wrapped.reset(seed=0), loc.reset(seed=0)
    acts = np.random.default_rng(0).uniform(-1, 1, (25, 5, 3))
    for a in acts:
        wrapped.step(a), loc.step(a)
    assert_same(env.episode_statistics(), loc.episode_statistics())
    wrapped.close(), loc.close()


@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_sync_trajectory_equals_local(cluster, mode):
    n, task = 5, "Hopper-v5"
    env = ray_vec(task, n, 3, max_episode_steps=12, autoreset_mode=mode)
    loc = cypool.make_vec(task, n, max_episode_steps=12, autoreset_mode=mode)
    assert env.worker_env_ranges == [(0, 2), (2, 4), (4, 5)]
    assert_same(env.reset(seed=7), loc.reset(seed=7))
    rng = np.random.default_rng(1)
    for t in range(40):
        if t == 20:    # partial reset with a per-env seed list, skipping worker 1 entirely
            mask = np.array([True, False, False, False, True])
            seeds = [100, None, None, None, 104]
            got = env.reset(seed=seeds, options={"reset_mask": mask})
            assert_same(got, loc.reset(seed=seeds, options={"reset_mask": mask.copy()}))
        if mode is AutoresetMode.DISABLED and t > 0 and (done := r_loc[2] | r_loc[3]).any():
            assert_same(env.reset(options={"reset_mask": done}),
                        loc.reset(options={"reset_mask": done.copy()}), f"reset {t}")
        a = rng.uniform(-1, 1, (n, 3))
        r_ray, r_loc = env.step(a), loc.step(a)
        assert_same(r_ray, r_loc, f"step {t}")
    # sync send/recv of a subset returns its rows in the order given
    if mode is not AutoresetMode.DISABLED:
        a = rng.uniform(-1, 1, (3, 3)).astype(np.float32)
        env.send(a, [4, 0, 2]), loc.send(a, [4, 0, 2])
        assert_same(env.recv(), loc.recv())
    obs = env.step(rng.uniform(-1, 1, (n, 3)))[0] if mode is not AutoresetMode.DISABLED \
        else None
    if obs is not None:   # copy=True: the next step does not overwrite what was returned
        keep = obs.copy()
        env.step(np.zeros((n, 3)))
        assert np.array_equal(obs, keep)
    env.close(), loc.close()


def test_async_recv_equals_local_per_env(cluster):
    n, steps, task = 6, 25, "Hopper-v5"
    acts = np.random.default_rng(2).uniform(-1, 1, (n, steps * 20, 3))
    loc = cypool.make_vec(task, n, max_episode_steps=15)
    obs, _ = loc.reset(seed=3)
    want = [[("reset", obs[i])] for i in range(n)]
    for k in range(steps):
        o, r, te, tr, _ = loc.step(acts[:, k])
        for i in range(n):
            want[i].append((o[i], r[i], te[i], tr[i]))
    loc.close()

    env = ray_vec(task, n, 3, max_episode_steps=15, batch_size=2)
    assert env.is_async
    with pytest.raises(ValueError, match="in flight"):
        env.recv()                                 # nothing sent: an error, not a hang
    env.async_reset(seed=3)
    with pytest.raises(ValueError, match="in flight"):
        env.send(np.zeros((1, 3)), [5])
    got = [[] for _ in range(n)]
    count = np.zeros(n, int)
    workers_seen = set()
    while min(len(t) for t in got) < steps + 1:
        o, r, te, tr, info = env.recv(timeout=60)
        ids = info["env_id"]
        assert ids.dtype == np.int32 and len(ids) == 2 and o.shape == (2, 11)
        workers_seen.update(env._owner[ids].tolist())
        for row, i in enumerate(ids):
            got[i].append(("reset", o[row]) if not got[i] else (o[row], r[row], te[row], tr[row]))
        env.send(acts[ids, count[ids]], ids)
        count[ids] += 1
    assert workers_seen == {0, 1, 2}
    for i in range(n):
        for a, b in zip(got[i][: steps + 1], want[i]):
            assert all(np.array_equal(x, y) for x, y in zip(a, b))
    obs, _ = env.reset(seed=3)                      # drains the envs in flight, resets all
    assert np.array_equal(obs, np.stack([w[0][1] for w in want]))
    env.close()


def _row(obs, i):
    """Env i's observation of a batch (an array, or a tuple/dict of arrays)."""
    if isinstance(obs, tuple):
        return tuple(_row(x, i) for x in obs)
    if isinstance(obs, dict):
        return {k: _row(x, i) for k, x in obs.items()}
    return obs[i]


# Tuple (Blackjack) and Dict (dm_control) observations travel as the local pool lays them out
TREE_TASKS = {"Blackjack-v1": {}, "dm_control/cartpole-balance-v0": {"time_limit": 0.08}}


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("task", list(TREE_TASKS))
def test_tuple_and_dict_observations_equal_local(cluster, task, mode):
    n, kw = 5, TREE_TASKS[task]
    env = ray_vec(task, n, 2, autoreset_mode=mode, **kw)
    loc = cypool.make_vec(task, n, autoreset_mode=mode, **kw)
    assert env.single_observation_space == loc.single_observation_space
    assert env.observation_space == loc.observation_space
    assert_same(env.reset(seed=4), loc.reset(seed=4))
    rng = np.random.default_rng(5)
    ends = 0
    for t in range(30):
        a = np.stack([loc.single_action_space.sample() for _ in range(n)]) if task == \
            "Blackjack-v1" else rng.uniform(-1, 1, (n, 1))
        r_ray, r_loc = env.step(a), loc.step(a)
        assert_same(r_ray, r_loc, f"step {t}")
        ends += int((r_loc[2] | r_loc[3]).sum())
        if t == 10:
            mask = np.array([False, True, False, False, True])
            assert_same(env.reset(seed=[None, 9, None, None, 8], options={"reset_mask": mask}),
                        loc.reset(seed=[None, 9, None, None, 8],
                                  options={"reset_mask": mask.copy()}), "partial reset")
    assert ends >= n                                   # episodes ended and were reset
    obs = env.step(a)[0]                               # copy=True: a later step leaves it be
    keep = _tree_copy(obs)
    env.step(a)
    assert_same(obs, keep)
    env.close(), loc.close()

    # async: each env's stream equals a local pool's, whatever order the actors answer in
    acts = [a.copy() for _ in range(12)]
    loc = cypool.make_vec(task, n, **kw)
    want = [[_row(loc.reset(seed=6)[0], i)] for i in range(n)]
    for k in range(len(acts)):
        o = loc.step(acts[k])[0]
        for i in range(n):
            want[i].append(_row(o, i))
    loc.close()
    env = ray_vec(task, n, 2, batch_size=2, **kw)
    env.async_reset(seed=6)
    got = [[] for _ in range(n)]
    count = np.zeros(n, int)
    while min(count) < len(acts):
        o, *_, info = env.recv(timeout=60)
        ids = info["env_id"]
        for row, i in enumerate(ids):
            got[i].append(_row(o, row))
        ids = ids[count[ids] < len(acts)]
        if ids.size:
            env.send(np.stack([acts[count[i]][i] for i in ids]), ids)
            count[ids] += 1
    for i in range(n):
        for k, (x, y) in enumerate(zip(got[i], want[i])):
            assert_same(x, y, f"env {i} step {k}")
    env.close()


def _tree_copy(obs):
    if isinstance(obs, tuple):
        return tuple(_tree_copy(x) for x in obs)
    if isinstance(obs, dict):
        return {k: _tree_copy(x) for k, x in obs.items()}
    return obs.copy()


def test_default_seed_and_stream_continuation(cluster):
    env = ray_vec("InvertedPendulum-v5", 4, 2, seed=11)
    loc = cypool.make_vec("InvertedPendulum-v5", 4, seed=11)
    assert_same(env.reset(), loc.reset())          # the default seed: env i gets 11 + i
    assert_same(env.reset(), loc.reset())          # no seed: every stream continues
    assert_same(env.reset(seed=[5, None, 6, 7]), loc.reset(seed=[5, None, 6, 7]))
    with pytest.raises(ValueError, match="length"):
        env.reset(seed=[1, 2])
    env.close(), loc.close()


def test_bad_input_raises_before_any_env_moves(cluster):
    with pytest.raises(ValueError, match="num_workers"):
        make_ray_vec("Hopper-v5", 2, num_workers=3)
    with pytest.raises(ValueError, match="unknown env id"):
        make_ray_vec("Hoper-v5", 2, num_workers=1)
    with pytest.raises(TypeError, match="unexpected keyword"):     # raised in the actor
        ray_vec("Hopper-v5", 2, 2, not_a_kwarg=1)
    env = ray_vec("Hopper-v5", 4, 2)
    loc = cypool.make_vec("Hopper-v5", 4)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros((4, 3)))
    env.reset(seed=0), loc.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros((3, 3)))
    bad = np.zeros((4, 3))
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"env\(s\) \[3\]"):
        env.step(bad)
    with pytest.raises(TypeError):                                 # every actor refuses it
        env.step(np.zeros((4, 3), np.complex128))
    a = np.full((4, 3), 0.3)
    assert_same(env.step(a), loc.step(a))                          # nothing moved before
    env.close(), loc.close()


def test_engine_error_names_global_env_ids(cluster, tmp_path):
    src = open(os.path.join(os.path.dirname(gym.__file__), "envs/mujoco/assets/ant.xml")).read()
    xml = tmp_path / "ant.xml"
    xml.write_text(src.replace('<mujoco model="ant">', '<mujoco model="ant"><size memory="12K"/>'))
    env = ray_vec("Ant-v5", 4, 2, xml_file=str(xml))
    # Each worker's envs are a local pool of that block, seeded [s + lo, ..., s + hi - 1]. An
    # EngineError skips the done-flag update of the other envs of its batch, so after an
    # error the batch's composition matters: compare with local pools of the same blocks.
    blocks = [cypool.make_vec("Ant-v5", 2, xml_file=str(xml), num_threads=1) for _ in range(2)]
    env.reset(seed=0)
    blocks[0].reset(seed=[0, 1]), blocks[1].reset(seed=[2, 3])
    want, got = [], []
    for t in range(70):
        fails = []
        for lo, b in zip((0, 2), blocks):
            try:
                b.step(np.zeros((2, 8)))
            except cypool.EngineError as err:
                fails += [lo + i for i in err.env_ids]
        if fails:
            want.append((t, fails))
        try:
            env.step(np.zeros((4, 8)))
        except cypool.EngineError as err:
            assert all("stack" in m for m in err.messages)
            got.append((t, err.env_ids))
    assert got == want                           # the same envs fail at the same steps
    assert {i for _, ids in want for i in ids} == {0, 1, 2, 3}
    assert any(min(ids) < 2 <= max(ids) for _, ids in want)    # one error from both workers
    obs, _ = env.reset(seed=0)                                 # usable again
    assert np.array_equal(obs, np.concatenate([blocks[0].reset(seed=[0, 1])[0],
                                               blocks[1].reset(seed=[2, 3])[0]]))
    env.close(), [b.close() for b in blocks]


def _raises_within(fn, seconds, exc):
    t0 = time.monotonic()
    with pytest.raises(exc) as err:
        for _ in range(1000):
            fn()
    assert time.monotonic() - t0 < seconds
    return err.value


def test_killed_worker_raises_naming_its_envs_never_hangs(cluster):
    env = ray_vec("Hopper-v5", 4, 2)
    env.reset(seed=0)
    ray.kill(env.actors[1])
    err = _raises_within(lambda: env.step(np.zeros((4, 3))), 30, WorkerDiedError)
    assert err.worker == 1 and err.env_ids == [2, 3] and "[2, 4)" in str(err)
    with pytest.raises(WorkerDiedError):
        env.reset()
    env.close()

    env = ray_vec("Hopper-v5", 4, 2, batch_size=2)
    env.async_reset(seed=0)
    *_, info = env.recv(timeout=60)
    dead = int(env._owner[info["env_id"][0]])
    ray.kill(env.actors[dead])              # the envs just received go back to a dead actor
    env.send(np.zeros((2, 3)), info["env_id"])

    def loop():
        *_, info = env.recv(timeout=60)
        env.send(np.zeros((2, 3)), info["env_id"])

    err = _raises_within(loop, 30, WorkerDiedError)
    assert err.worker == dead and err.env_ids == [2 * dead, 2 * dead + 1]
    with pytest.raises(WorkerDiedError):
        env.recv()
    env.close()


def test_close_shuts_actors_down_and_cluster_is_reused(cluster):
    env = ray_vec("InvertedPendulum-v5", 2, 2)
    actors = env.actors
    env.close()
    for a in actors:
        with pytest.raises(ray.exceptions.RayActorError):
            ray.get(a.describe.remote(), timeout=30)
    with pytest.raises(cypool.ClosedEnvError):
        env.reset()
    env2 = ray_vec("InvertedPendulum-v5", 2, 1, ray_address=cluster)  # the same cluster
    assert ray.get_runtime_context().gcs_address == cluster
    env2.reset(seed=0)
    env2.close()


def test_make_vec_backend_hook(cluster):
    if "backend" not in inspect.signature(cypool.make_vec).parameters:
        pytest.skip("cypool.make_vec has no backend= parameter yet")
    env = cypool.make_vec("InvertedPendulum-v5", 3, backend="ray", num_workers=2,
                          num_cpus_per_worker=0.5)
    loc = cypool.make_vec("InvertedPendulum-v5", 3)
    assert isinstance(env, cypool.VectorEnv)
    assert_same(env.reset(seed=4), loc.reset(seed=4))
    env.close(), loc.close()


def test_atari_trajectory_equals_local(cluster):
    pytest.importorskip("cypool.atari._pool")
    n = 4
    env = ray_vec("Pong-v5", n, 2)
    loc = cypool.make_vec("Pong-v5", n, num_threads=1)
    assert env.single_observation_space == loc.single_observation_space
    assert_same(env.reset(seed=5), loc.reset(seed=5))
    rng = np.random.default_rng(0)
    for t in range(60):
        a = rng.integers(0, env.single_action_space.n, n)
        assert_same(env.step(a), loc.step(a), f"step {t}")
    env.close(), loc.close()


# ------------------------------------------------------------------ two nodes (ray_cluster)
needs_cluster = pytest.mark.skipif(not ADDRESS, reason="needs CYPOOL_RAY_ADDRESS "
                                   "(tools/ray_two_node.sh)")


@pytest.mark.ray_cluster
@needs_cluster
@pytest.mark.parametrize("task, steps", [("Hopper-v5", 40), ("Pong-v5", 40)])
def test_two_nodes_trajectory_equals_local(cluster, task, steps):
    if task == "Pong-v5":
        pytest.importorskip("cypool.atari._pool")
    n = 4
    # one CPU per actor on a cluster of two one-CPU nodes: one actor per node
    env = make_ray_vec(task, n, num_workers=2, ray_address=cluster, num_threads=1,
                       num_cpus_per_worker=1, max_episode_steps=25)
    assert len(set(env.worker_nodes)) == 2
    loc = cypool.make_vec(task, n, max_episode_steps=25, num_threads=1)
    assert_same(env.reset(seed=9), loc.reset(seed=9))
    rng = np.random.default_rng(3)
    for t in range(steps):
        if isinstance(env.single_action_space, gym.spaces.Discrete):
            a = rng.integers(0, env.single_action_space.n, n)
        else:
            a = rng.uniform(-1, 1, (n, *env.single_action_space.shape))
        assert_same(env.step(a), loc.step(a), f"step {t}")
    env.close(), loc.close()


@pytest.mark.ray_cluster
@needs_cluster
def test_two_nodes_killed_worker(cluster):
    env = make_ray_vec("Hopper-v5", 4, num_workers=2, ray_address=cluster, num_threads=1,
                       num_cpus_per_worker=1, batch_size=2)
    assert len(set(env.worker_nodes)) == 2
    env.async_reset(seed=0)
    *_, info = env.recv(timeout=60)
    dead = int(env._owner[info["env_id"][0]])
    ray.kill(env.actors[dead])              # the envs just received go back to a dead actor
    env.send(np.zeros((2, 3)), info["env_id"])

    def loop():
        *_, info = env.recv(timeout=60)
        env.send(np.zeros((2, 3)), info["env_id"])

    err = _raises_within(loop, 30, WorkerDiedError)
    assert err.worker == dead and err.env_ids == [2 * dead, 2 * dead + 1]
    env.close()


def test_a_registered_task_is_served_by_ray_actors(cluster):
    """register_task in the driver only: each actor registers the task again (the family's
    remote_setup) and steps it bit for bit as a local pool does."""
    import cypool.mujoco

    cypool.mujoco.register_task("RayMyHopper-v0", "cypool.mujoco.tasks.hopper")
    try:
        local = cypool.make_vec("RayMyHopper-v0", 4, num_threads=1)
        remote = ray_vec("RayMyHopper-v0", 4, 2)
        try:
            assert_same(remote.reset(seed=2), local.reset(seed=2))
            rng = np.random.default_rng(0)
            for _ in range(20):
                a = rng.uniform(-1, 1, (4, 3))
                assert_same(remote.step(a), local.step(a))
        finally:
            remote.close()
            local.close()
    finally:
        cypool.mujoco.unregister_task("RayMyHopper-v0")
