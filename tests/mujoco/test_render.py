"""MuJoCo render_mode="rgb_array" (and "depth_array", "rgbd_tuple"): frames equal gymnasium's
env.render() for the same state,
bit for bit (EGL, one gymnasium env rendering alone at a time, as gymnasium renders right
only then), for several tasks, sizes and cameras, across steps and resets; pools render from
several threads at once; misuse is refused before anything is rendered. OSMesa and the
MUJOCO_GL values: test_gl_backends.py."""
import threading

import gymnasium as gym
import numpy as np
import pytest

import cypool


@pytest.fixture(autouse=True)
def egl(monkeypatch):
    monkeypatch.setenv("MUJOCO_GL", "egl")      # gymnasium's backend for the references


CASES = [("Hopper-v5", dict(width=84, height=84)),
         ("Walker2d-v5", dict(width=64, height=48, camera_name="track")),
         ("Ant-v5", dict(width=72, height=56)),
         ("InvertedPendulum-v5", dict(width=48, height=48)),
         ("Reacher-v5", dict(width=40, height=64, camera_id=-1)),
         # v4 ids: their own camera configs (InvertedDoublePendulum-v4's is not v5's None)
         ("InvertedDoublePendulum-v4", dict(width=48, height=40)),
         ("Ant-v4", dict(width=40, height=40))]


def _trajectory(task, n, kw, seed, schedule, actions, mode="rgb_array"):
    """cypool's frames of every env at the steps in `schedule` ("reset" entries reset)."""
    env = cypool.make_vec(task, n, num_threads=2, render_mode=mode, autoreset_mode="disabled",
                          **kw)
    frames = []
    try:
        env.reset(seed=seed)
        for t, what in enumerate(schedule):
            if what == "reset":
                env.reset()
            elif what == "step":
                env.step(actions[t])
            else:                                 # "render"
                frames.append(env.render())
    finally:
        env.close()
    return frames


def _assert_equal(got, want, where):
    """One env's render: an array, or rgbd_tuple's (rgb, depth) pair, equal bit for bit."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want) == 2, where
        for g, w in zip(got, want):
            _assert_equal(g, w, where)
        return
    assert got.shape == want.shape and got.dtype == want.dtype, (where, got.dtype, want.dtype)
    assert np.array_equal(got, want), where


def _compare_with_gymnasium(task, kw, mode):
    n = 2
    # first render after steps (gymnasium fixes the FREE camera's lookat then), a reset in
    # between (the lookat is kept)
    schedule = ["step", "step", "render", "step", "render", "reset", "render", "step", "render"]
    space = gym.make(task).action_space
    rng = np.random.default_rng(0)
    actions = [rng.uniform(space.low, space.high, (n,) + space.shape).astype(np.float32)
               for _ in schedule]
    got = _trajectory(task, n, kw, 5, schedule, actions, mode)
    for i in range(n):                        # one reference env at a time, alone
        ref = gym.make(task, render_mode=mode, **kw)
        try:
            ref.reset(seed=5 + i)
            k = 0
            for t, what in enumerate(schedule):
                if what == "reset":
                    ref.reset()
                elif what == "step":
                    ref.step(actions[t][i])
                else:
                    want = ref.render()
                    assert len(got[k]) == n
                    _assert_equal(got[k][i], want, (task, mode, i, t))
                    k += 1
        finally:
            ref.close()


@pytest.mark.parametrize("task,kw", CASES, ids=[c[0] for c in CASES])
def test_frames_equal_gymnasiums_render(task, kw):
    _compare_with_gymnasium(task, kw, "rgb_array")


@pytest.mark.parametrize("mode", ["depth_array", "rgbd_tuple"])
@pytest.mark.parametrize("task,kw", [CASES[0], CASES[1], CASES[4], CASES[5]],
                         ids=["Hopper-v5", "Walker2d-v5", "Reacher-v5",
                              "InvertedDoublePendulum-v4"])
def test_depth_and_rgbd_equal_gymnasiums_render(task, kw, mode):
    """gymnasium's other MujocoRenderer modes: depth_array's float32 depth buffer (as read,
    top-down) and rgbd_tuple's (frame, depth) pair, from the one render."""
    _compare_with_gymnasium(task, kw, mode)


def test_render_modes_are_gymnasiums_but_human():
    env = cypool.make_vec("Hopper-v5", 1, num_threads=1)
    try:
        want = [m for m in gym.make("Hopper-v5").metadata["render_modes"] if m != "human"]
        assert env.metadata["render_modes"] == want
    finally:
        env.close()
    with pytest.raises(ValueError, match="render_mode='human' is not offered"):
        cypool.make_vec("Hopper-v5", 1, render_mode="human")


def test_one_env_renders_depth_through_gymnasium_make():
    import gymnasium

    env = gymnasium.make("cypool/Hopper-v5", render_mode="rgbd_tuple", width=32, height=24)
    ref = gymnasium.make("Hopper-v5", render_mode="rgbd_tuple", width=32, height=24)
    try:
        env.reset(seed=1)
        ref.reset(seed=1)
        for a in np.random.default_rng(1).uniform(-1, 1, (3, 3)).astype(np.float32):
            env.step(a)
            ref.step(a)
        _assert_equal(env.render(), ref.render(), "single env")
    finally:
        env.close()
        ref.close()


def test_pools_render_from_several_threads_at_once():
    pools = [cypool.make_vec(t, 2, num_threads=1, render_mode="rgb_array", width=48, height=48)
             for t in ("Hopper-v5", "Ant-v5")]
    try:
        for p in pools:
            p.reset(seed=0)
        alone = [np.stack(p.render()) for p in pools]
        out = [[], []]

        def work(k):
            for _ in range(3):
                out[k].append(np.stack(pools[k].render()))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for k in range(2):
            assert len(out[k]) == 3
            for f in out[k]:
                assert np.array_equal(f, alone[k])
        one = pools[0].render(env_ids=[1])
        assert len(one) == 1 and np.array_equal(one[0], alone[0][1])
    finally:
        for p in pools:
            p.close()


def test_the_pool_renders_through_egl_when_mujoco_gl_says_so():
    """MUJOCO_GL=egl: EGL only (the other values: tests/mujoco/test_gl_backends.py)."""
    from cypool.mujoco import _pool

    env = cypool.make_vec("Hopper-v5", 1, render_mode="rgb_array", width=16, height=16)
    try:
        env.reset(seed=0)
        assert env.pool.engine.render_backend is None          # no context before the first render
        env.render()
        assert env.pool.engine.render_backend == "egl" and _pool.gl_backend() == "egl"
    finally:
        env.close()


def test_render_arguments_are_checked():
    with pytest.raises(ValueError, match="camera_id"):          # gymnasium: process exit
        cypool.make_vec("Hopper-v5", 1, render_mode="rgb_array", camera_id=5)
    with pytest.raises(ValueError, match="cannot be specified at the same time"):
        cypool.make_vec("Hopper-v5", 1, render_mode="rgb_array", camera_id=0,
                        camera_name="track")
    with pytest.raises(ValueError, match="width"):
        cypool.make_vec("Hopper-v5", 1, render_mode="rgb_array", width=0)
    with pytest.raises(ValueError, match="offered"):
        cypool.make_vec("Hopper-v5", 1, render_mode="human")
    env = cypool.make_vec("Hopper-v5", 1, render_mode="rgb_array", camera_name="no-such",
                          width=32, height=32)
    try:
        with pytest.raises(gym.error.ResetNeeded):
            env.render()
        env.reset(seed=0)
        assert env.render()[0].shape == (32, 32, 3)       # an unknown name: the FREE camera
        assert env.metadata["render_modes"] == ["rgb_array", "depth_array", "rgbd_tuple"]
        assert env.metadata["render_fps"] == gym.make("Hopper-v5").metadata["render_fps"]
    finally:
        env.close()
