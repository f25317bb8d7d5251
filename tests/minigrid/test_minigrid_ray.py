"""MiniGrid/BabyAI on the Ray backend (cypool.distributed.make_ray_vec, two workers) against a
local pool: the Dict observation with its text leaf (mission, a tuple of str as gymnasium
batches a Text space) assembled from the workers' rows, rewards, flags and same-step
final observations, across autoresets; send/recv batches."""
import numpy as np
import pytest

import cypool

from _ray_ref import ray_session  # noqa: E402,F401  (fixture: skips under ASan or without Ray)

ENV_ID, N = "BabyAI-GoToLocal-v0", 4     # missions differ from env to env


def same(x, y, where):
    if isinstance(y, dict):
        assert sorted(x) == sorted(y), where
        for k in y:
            same(x[k], y[k], f"{where}[{k!r}]")
    elif isinstance(y, tuple):
        assert type(x) is tuple and x == y, (where, x, y)
    elif isinstance(y, np.ndarray) and y.dtype == object:       # final_obs rows
        for i, row in enumerate(y):
            assert (row is None) == (x[i] is None), (where, i)
            if row is not None:
                same(x[i], row, f"{where}[{i}]")
    else:
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and np.array_equal(x, y), (where, x, y)


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_ray_matches_the_local_pool(ray_session, mode):
    from cypool.distributed import make_ray_vec
    kw = dict(num_threads=1, max_steps=5, autoreset_mode=mode)
    env = make_ray_vec(ENV_ID, N, num_workers=2, num_cpus_per_worker=0.5, **kw)
    loc = cypool.make_vec(ENV_ID, N, **kw)
    try:
        for k, (x, y) in enumerate(zip(env.reset(seed=3), loc.reset(seed=3))):
            same(x, y, f"reset {k}")
        rng = np.random.default_rng(0)
        missions = set()
        for t in range(14):
            a = rng.integers(0, 7, N)
            x, y = env.step(a), loc.step(a)
            for k in range(5):
                same(x[k], y[k], f"step {t} output {k}")
            missions.update(y[0]["mission"])
        assert len(missions) > N                 # new missions after autoresets
        mask = np.array([False, True, True, False])       # rows of both workers
        for k, (x, y) in enumerate(zip(
                env.reset(seed=[None, 9, 10, None], options={"reset_mask": mask}),
                loc.reset(seed=[None, 9, 10, None], options={"reset_mask": mask}))):
            same(x, y, f"masked reset {k}")
    finally:
        env.close()
        loc.close()


def test_ray_send_recv_batches(ray_session):
    from cypool.distributed import make_ray_vec
    env = make_ray_vec(ENV_ID, N, num_workers=2, num_cpus_per_worker=0.5, num_threads=1,
                       batch_size=2, max_steps=5)
    loc = cypool.make_vec(ENV_ID, N, num_threads=1, max_steps=5)
    try:
        want, _ = loc.reset(seed=4)
        env.async_reset(seed=4)
        seen = {}
        for _ in range(2):
            obs, _, _, _, info = env.recv()
            assert type(obs["mission"]) is tuple and len(obs["mission"]) == 2
            for k, i in enumerate(info["env_id"]):
                seen[int(i)] = obs["mission"][k]
                assert np.array_equal(obs["image"][k], want["image"][i])
        assert tuple(seen[i] for i in range(N)) == want["mission"]
    finally:
        env.close()
        loc.close()
