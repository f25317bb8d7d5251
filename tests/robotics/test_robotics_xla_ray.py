"""Robotics ids (Dict observations, goal infos) on cypool's other front ends: env.xla() through
a jitted lax.scan, and the Ray backend (cypool.distributed.make_ray_vec) against a local pool,
each equal (np.array_equal, dtypes included) to the plain pool's Python path across
autoresets. The plain pool is itself tested exact against gymnasium-robotics."""
import sys
from pathlib import Path

import numpy as np
import pytest

import cypool

jax = pytest.importorskip("jax")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _ray_ref import ray_session  # noqa: E402,F401  (fixture: skips under ASan or without Ray)

LIMIT = 7            # a short time limit: autoresets inside the scan / the Ray run
T = 20


def _acts(env, seed, t=T):
    sp = env.single_action_space
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.2, 1.2, (t, env.num_envs) + sp.shape).astype(np.float32)


def _same(x, y, where, row=None):
    """x equals y leaf by leaf (dicts by key), shape, dtype and values; ``row``: x has a
    leading time axis (xla's scan) and its row ``row`` is compared."""
    if isinstance(y, dict):
        assert isinstance(x, dict), where
        for k in y:
            _same(x[k], y[k], f"{where}[{k!r}]", row)
        return
    x = np.asarray(x) if row is None else np.asarray(x)[row]
    y = np.asarray(y)
    assert x.dtype == y.dtype and x.shape == y.shape, (where, x.dtype, y.dtype, x.shape)
    assert np.array_equal(x, y), where


@pytest.mark.parametrize("env_id", ["FetchReach-v4", "PointMaze_UMaze-v3"])
def test_xla_scan_equals_the_python_path(env_id):
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)        # float64 observations and rewards
    env = cypool.make_vec(env_id, 3, num_threads=2, max_episode_steps=LIMIT)
    ref = cypool.make_vec(env_id, 3, num_threads=2, max_episode_steps=LIMIT)
    try:
        env.reset(seed=4)
        ref.reset(seed=4)
        acts = _acts(env, 0)
        handle, recv, send, step = env.xla()
        _, outs = jax.jit(lambda h, A: jax.lax.scan(lambda c, a: step(c, a), h, A))(
            handle, acts)
        outs = jax.device_get(jax.block_until_ready(outs))
        assert sorted(outs[0]) == sorted(env.single_observation_space.spaces)
        ends = 0
        for t, a in enumerate(acts):
            o, r, te, tr, info = ref.step(a)
            for k, (x, y) in enumerate(zip(outs[:4], (o, r, te, tr))):
                _same(x, y, f"step {t} output {k}", row=t)
            for key, v in info.items():             # the goal infos (is_success, success)
                if key not in ("final_obs", "_final_obs", "final_info", "_final_info"):
                    _same(outs[4][key], v, f"step {t} info[{key!r}]", row=t)
            ends += int(np.sum(te | tr))
        assert ends >= 3                             # every env autoreset inside the scan
    finally:
        jax.config.update("jax_enable_x64", old)
        env.close()
        ref.close()


def _same_step(x, y, t):
    """A Ray step against the local pool's: outputs, info keys, final_obs rows."""
    for k in range(4):
        _same(x[k], y[k], f"step {t} output {k}")
    assert sorted(x[4]) == sorted(y[4]), (t, sorted(x[4]), sorted(y[4]))
    for key, v in y[4].items():
        if isinstance(v, np.ndarray) and v.dtype == object:     # final_obs rows
            for i, row in enumerate(v):
                assert (row is None) == (x[4][key][i] is None), (t, key, i)
                if row is not None:
                    _same(x[4][key][i], row, f"step {t} {key}[{i}]")
        else:
            _same(x[4][key], v, f"step {t} info[{key!r}]")


def test_ray_family_reset_options(ray_session):
    """PointMaze on two Ray workers against one local pool, with the maze's cells: one cell
    for every env, one per env (cut into each worker's rows), with a reset_mask (per-env
    seeds); steps over autoresets (Dict observations, success); a bad cell
    refused by the workers' checks before any worker resets, a per-env array of the wrong
    length refused by the driver."""
    from cypool.distributed import make_ray_vec
    env_id, n = "PointMaze_UMaze-v3", 4
    env = make_ray_vec(env_id, n, num_workers=2, num_cpus_per_worker=0.5, num_threads=1,
                       max_episode_steps=LIMIT)
    loc = cypool.make_vec(env_id, n, num_threads=1, max_episode_steps=LIMIT)
    try:
        cells = np.array([[1, 1], [3, 1], [1, 3], [3, 1]])
        for seed, opts in ((2, {"goal_cell": (3, 1)}),
                           (None, {"goal_cell": cells, "reset_cell": cells[::-1].copy()}),
                           ([None, None, 7, 8], {"reset_mask": np.array([False, False, True,
                                                                          True]),
                                                 "reset_cell": cells.tolist()})):
            x, y = env.reset(seed=seed, options=dict(opts)), loc.reset(seed=seed,
                                                                       options=dict(opts))
            _same(x[0], y[0], f"reset {opts}")
            _same(x[1], y[1], f"reset info {opts}")
            for t, a in enumerate(_acts(loc, 3, 4)):
                _same_step(env.step(a), loc.step(a), t)
        # envs 2 and 3 (reset last) reach the limit here; envs 0 and 1 did above
        ends = 0
        for t, a in enumerate(_acts(loc, 4, 4)):
            x = env.step(a)
            _same_step(x, loc.step(a), f"last {t}")
            ends += int(x[3].sum())
        assert ends >= 2
        before = env.step(np.zeros((n, 2), np.float32))[0]
        loc.step(np.zeros((n, 2), np.float32))
        bad = np.array([[1, 1], [1, 1], [1, 1], [2, 1]])    # env 3 (worker 1): a wall
        with pytest.raises(ValueError, match="wall cell"):
            env.reset(options={"goal_cell": bad})
        with pytest.raises(ValueError, match="one per env"):
            env.reset(options={"goal_cell": cells[:3]})
        with pytest.raises(ValueError, match="unknown reset option"):
            env.reset(options={"goal": (1, 1)})
        # nothing moved: the next step continues both runs alike
        a = np.full((n, 2), 0.5, np.float32)
        x, y = env.step(a), loc.step(a)
        _same(x[0], y[0], "step after the refused resets")
        assert not np.array_equal(x[0]["observation"], before["observation"])
    finally:
        env.close()
        loc.close()
