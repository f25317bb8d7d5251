"""render() on the worker threads (MjPool.render_frames through Engine.run_job): each worker
draws on a GL context of its own (made at its first frame, freed on its own thread when the
pool closes) and the caller helps on render()'s. The frames equal a one-thread pool's bit for
bit, whichever thread drew each (the render tests compare those with the references); a
render changes nothing a batch reads; with a send() outstanding the caller draws alone."""
import numpy as np
import pytest

import cypool


@pytest.fixture(autouse=True)
def egl(monkeypatch):
    monkeypatch.setenv("MUJOCO_GL", "egl")


SMALL = dict(width=48, height=40)


def _pair(env_id, n, mode="rgb_array", **kw):
    return [cypool.make_vec(env_id, n, num_threads=t, render_mode=mode,
                            autoreset_mode="disabled", **SMALL, **kw) for t in (2, 1)]


def _equal(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _equal(x, y)
        return
    assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize("env_id, mode", [
    ("Hopper-v5", "rgb_array"), ("Hopper-v5", "rgbd_tuple"),
    ("FetchPush-v4", "rgb_array"),                      # the target site, mj_forward
    ("HandManipulateBlock_BooleanTouchSensors-v1", "rgb_array"),    # touch colours per thread
    ("PointMaze_UMaze-v3", "depth_array")])
def test_worker_frames_equal_a_one_thread_pools(env_id, mode):
    two, one = _pair(env_id, 6, mode)
    engine = two.pool.engine
    try:
        assert engine.worker_renderers == 0
        rng = np.random.default_rng(0)
        space = two.single_action_space
        two.reset(seed=1)
        one.reset(seed=1)
        for t in range(4):
            for a, b in zip(two.render(), one.render()):
                _equal(a, b)
            act = rng.uniform(space.low, space.high, (6,) + space.shape).astype(space.dtype)
            two.step(act)
            one.step(act)
        # 24 frames of a few milliseconds each: the worker, woken by the first, drew some
        assert engine.worker_renderers == 1
        assert one.pool.engine.worker_renderers == 0
    finally:
        two.close()
        one.close()
    assert engine.worker_renderers == 0         # freed by the worker as the team stopped


def test_an_env_listed_twice_is_drawn_once_and_given_twice():
    """(render() refuses repeated env_ids; the engine's render_frames takes them: two
    threads never draw one env at once.)"""
    two, one = _pair("Hopper-v5", 3)
    try:
        two.reset(seed=0)
        one.reset(seed=0)
        full = one.render()
        rgb, depth = two.pool.engine.render_frames(np.array([2, 2, 0], np.int64), True, True)
        want_depth = one.pool.engine.render_frames(np.arange(3, dtype=np.int64), False, True)[1]
        for g, d, k in zip(rgb, depth, [2, 2, 0]):
            _equal(g, full[k])
            _equal(d, want_depth[k])
        assert not np.shares_memory(rgb[0], rgb[1])
    finally:
        two.close()
        one.close()


def test_render_changes_nothing_a_batch_reads():
    env = cypool.make_vec("FetchPush-v4", 4, num_threads=2, render_mode="rgb_array",
                          autoreset_mode="same_step", **SMALL)
    try:
        env.reset(seed=0)
        e = env.pool.engine
        act = np.zeros((4,) + env.single_action_space.shape, np.float32)
        env.step(act)
        names = ["obs", "reward", "terminated", "truncated", "info", "info_kind_arr",
                 "final_mask_arr", "done_arr", "ops_arr", "episode_return", "episode_length",
                 "env_steps"]
        before = {k: np.array(getattr(e, k), copy=True) for k in names}
        outs = {k: np.array(v, copy=True) for k, v in e.outputs.items()}
        env.render()
        for k in names:
            assert np.array_equal(getattr(e, k), before[k]), k
        for k, v in e.outputs.items():
            assert np.array_equal(v, outs[k]), k
        assert e.failures() == []
    finally:
        env.close()


def test_with_a_send_outstanding_the_caller_draws_alone():
    """Results of send() share the team's queue: render() of the envs that are back draws
    on the calling thread while the others are in flight, then on the team again."""
    env = cypool.make_vec("Hopper-v5", 4, num_threads=2, batch_size=2,
                          render_mode="rgb_array", **SMALL)
    twin = cypool.make_vec("Hopper-v5", 4, num_threads=1, render_mode="rgb_array", **SMALL)
    try:
        env.async_reset(seed=0)
        twin.reset(seed=0)
        want = twin.render()
        ready = env.recv()[-1]["env_id"]
        for g, k in zip(env.render(env_ids=ready), ready):
            _equal(g, want[k])
        assert env.pool.engine.worker_renderers == 0     # the caller alone drew them
        busy = sorted(set(range(4)) - set(ready.tolist()))
        with pytest.raises(ValueError, match="in flight"):
            env.render(env_ids=busy)
        env.recv()
        for g, w in zip(env.render(), want):
            _equal(g, w)
    finally:
        env.close()
        twin.close()


def test_run_job_checks_its_ids_and_moves_nothing():
    env = cypool.make_vec("CartPole-v1", 3, num_threads=2)
    try:
        env.reset(seed=0)
        e = env.pool.engine
        obs = e.obs.copy()
        with pytest.raises(ValueError, match="twice"):
            e.run_job(np.array([1, 1], np.int64))
        with pytest.raises(IndexError):
            e.run_job(np.array([3], np.int64))
        # a pool without a job fails each env's, and nothing else happens
        assert e.run_job(np.arange(3, dtype=np.int64)) == 3
        assert e.run_job(np.zeros(0, np.int64)) == 0
        assert np.array_equal(e.obs, obs) and e.failures() == []
        env.step(np.zeros(3, np.int64))
    finally:
        env.close()


def test_run_job_outside_render_draws_nothing():
    """MjPool's job draws only inside render(): called directly, before and after a render
    (whose arrays are gone), each env's job fails and nothing is written anywhere."""
    env = cypool.make_vec("Hopper-v5", 3, num_threads=2, render_mode="rgb_array", **SMALL)
    try:
        env.reset(seed=0)
        e = env.pool.engine
        ids = np.arange(3, dtype=np.int64)
        assert e.run_job(ids) == 3
        first = env.render()
        assert e.run_job(ids) == 3
        for a, b in zip(env.render(), first):
            _equal(a, b)
    finally:
        env.close()

