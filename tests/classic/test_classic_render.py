"""Classic-control rgb_array rendering against gymnasium: frames of
``gymnasium.make_vec(id, n, "sync", render_mode="rgb_array")`` (np.array_equal, uint8 (H, W, 3))
after resets and across steps with autoresets (both autoreset modes), for render() and
render(env_ids=...); Pendulum's last action (float32 and float64 actions, clipped); the single
env through gymnasium.make; RecordVideo and SB3's VecVideoRecorder; the refusals; pygame
missing."""
import pickle
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import cypool

pytest.importorskip("pygame")            # the test extra installs pygame-ce

N = 3
IDS = ["CartPole-v1", "CartPole-v0", "Acrobot-v1", "MountainCar-v0",
       "MountainCarContinuous-v0", "Pendulum-v1"]


def actions(rng, space, n, t):
    if isinstance(space, gym.spaces.Discrete):
        return rng.integers(0, space.n, n)
    # out of range too (clipped by the env; Pendulum draws the clipped torque); float64 and
    # float32 batches alternate (Pendulum's last_u keeps the action's dtype)
    dtype = np.float64 if t % 5 == 4 else np.float32
    return rng.uniform(-3.0, 3.0, (n,) + space.shape).astype(dtype)


def assert_frames(got, want, where):
    assert isinstance(got, tuple) and len(got) == len(want), where
    for k, (x, y) in enumerate(zip(got, want)):
        assert isinstance(x, np.ndarray) and x.dtype == np.uint8 and x.ndim == 3, where
        assert x.shape == y.shape and np.array_equal(x, y), (where, k)


@pytest.mark.parametrize("autoreset", ["next_step", "same_step"])
@pytest.mark.parametrize("env_id", IDS)
def test_render_matches_gymnasium(env_id, autoreset):
    kw = {"max_episode_steps": 17}               # truncations: autoresets are rendered
    env = cypool.make_vec(env_id, N, render_mode="rgb_array", autoreset_mode=autoreset, **kw)
    ref = gym.make_vec(env_id, N, vectorization_mode="sync", render_mode="rgb_array",
                       vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode[
                           autoreset.upper()]}, **kw)
    try:
        assert env.metadata["render_modes"] == ["rgb_array"]
        assert env.metadata["render_fps"] == ref.metadata["render_fps"]
        ends = 0
        for seed in (0, 7):
            env.reset(seed=seed)
            ref.reset(seed=seed)
            assert_frames(env.render(), ref.render(), f"seed {seed} reset")
            rng = np.random.default_rng(seed)
            for t in range(40):
                a = actions(rng, env.single_action_space, N, t)
                _, _, term, trunc, _ = env.step(a)
                ref.step(a)
                ends += int(np.sum(term | trunc))
                want = ref.render()
                assert_frames(env.render(), want, f"seed {seed} step {t}")
                if t % 6 == 0:
                    assert_frames(env.render(env_ids=[2, 0]), (want[2], want[0]),
                                  f"seed {seed} step {t} env_ids")
        assert ends >= 2 * N
    finally:
        env.close()
        ref.close()


def test_pendulum_frame_shows_the_last_action():
    """The torque arrow: none right after a reset, then the last (clipped) action's, so a
    render that ignored it would differ."""
    env = cypool.make_vec("Pendulum-v1", 1, render_mode="rgb_array")
    ref = gym.make("Pendulum-v1", render_mode="rgb_array").unwrapped
    try:
        env.reset(seed=3)
        ref.reset(seed=3)
        first = env.render()[0]
        assert np.array_equal(first, ref.render())
        for u in (1.5, -7.0, 0.25):
            a = np.array([[u]], np.float32)
            env.step(a)
            ref.step(a[0])
            got = env.render()[0]
            assert np.array_equal(got, ref.render())
        env.set_state(env.get_state())             # a state set by hand renders the same
        assert np.array_equal(env.render()[0], got)
        env.reset(seed=3)
        assert np.array_equal(env.render()[0], first)     # no arrow again
        assert not np.array_equal(got, first)
    finally:
        env.close()
        ref.close()


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1", "Acrobot-v1"])
def test_single_env_through_gymnasium_make(env_id):
    env = gym.make("cypool/" + env_id, render_mode="rgb_array")
    ref = gym.make(env_id, render_mode="rgb_array")
    try:
        assert env.render_mode == "rgb_array"
        rng = np.random.default_rng(1)
        resets = 0
        env.reset(seed=5)
        ref.reset(seed=5)
        assert np.array_equal(env.render(), ref.render())
        for t in range(80):
            a = actions(rng, env.action_space, 1, t)[0]
            _, _, term, trunc, _ = env.step(a)
            ref.step(a)
            assert np.array_equal(env.render(), ref.render()), t
            if term or trunc:
                resets += 1
                env.reset()
                ref.reset()
                assert np.array_equal(env.render(), ref.render()), t
        if env_id == "CartPole-v1":
            assert resets >= 1
    finally:
        env.close()
        ref.close()


def test_pickled_pool_renders_the_same():
    env = cypool.make_vec("MountainCarContinuous-v0", 2, render_mode="rgb_array")
    ref = gym.make_vec("MountainCarContinuous-v0", 2, vectorization_mode="sync",
                       render_mode="rgb_array")
    try:
        env.reset(seed=2)
        ref.reset(seed=2)
        a = np.array([[1.0], [-0.5]], np.float32)
        env.step(a)
        ref.step(a)
        copy = pickle.loads(pickle.dumps(env))
        try:
            assert copy.render_mode == "rgb_array"
            assert_frames(copy.render(), ref.render(), "copy")
        finally:
            copy.close()
    finally:
        env.close()
        ref.close()


def test_record_video_writes_a_playable_video(tmp_path):
    import imageio.v3 as iio

    # the vector wrapper
    env = cypool.make_vec("CartPole-v1", 2, render_mode="rgb_array", max_episode_steps=20)
    env = gym.wrappers.vector.RecordVideo(env, str(tmp_path / "vec"),
                                          episode_trigger=lambda k: k == 0, video_length=25)
    env.reset(seed=0)
    for _ in range(30):
        env.step(np.ones(2, np.int64))
    env.close()
    # the single-env wrapper on gymnasium.make's env
    env = gym.wrappers.RecordVideo(gym.make("cypool/Pendulum-v1", render_mode="rgb_array"),
                                   str(tmp_path / "single"), episode_trigger=lambda k: k == 0,
                                   video_length=25)
    env.reset(seed=0)
    for _ in range(30):
        env.step(np.array([1.0], np.float32))
    env.close()
    for sub, shape in (("vec", (400, 1200)), ("single", (500, 500))):
        videos = sorted((tmp_path / sub).glob("*.mp4"))
        assert videos, list((tmp_path / sub).iterdir())
        frames = iio.imread(videos[0])                      # decodes: a playable mp4
        assert frames.ndim == 4 and frames.shape[0] >= 20 and frames.shape[-1] == 3
        assert frames.shape[1:3] == shape


def test_sb3_vec_video_recorder(tmp_path):
    pytest.importorskip("stable_baselines3")
    import imageio.v3 as iio
    from stable_baselines3.common.vec_env import VecVideoRecorder

    from cypool.integrations.sb3 import to_sb3

    venv = to_sb3(cypool.make_vec("Acrobot-v1", 2, render_mode="rgb_array",
                                   autoreset_mode="same_step"))
    rec = VecVideoRecorder(venv, str(tmp_path), record_video_trigger=lambda s: s == 0,
                           video_length=15, name_prefix="acrobot")
    try:
        rec.reset()
        for _ in range(20):
            rec.step(np.array([0, 2]))
    finally:
        rec.close()
    videos = sorted(tmp_path.glob("acrobot*.mp4"))
    assert videos, list(tmp_path.iterdir())
    frames = iio.imread(videos[0])
    assert frames.ndim == 4 and frames.shape[0] >= 10 and frames.shape[-1] == 3


def test_refusals():
    with pytest.raises(ValueError, match="not offered"):
        cypool.make_vec("CartPole-v1", 2, render_mode="human")
    with pytest.raises(ValueError, match="not offered"):
        gym.make("cypool/Pendulum-v1", render_mode="human")
    env = cypool.make_vec("Acrobot-v1", 2, render_mode="rgb_array")
    plain = cypool.make_vec("Acrobot-v1", 2)
    try:
        with pytest.raises(gym.error.ResetNeeded):
            env.render()
        plain.reset(seed=0)
        with pytest.raises(gym.error.Error, match="render_mode='rgb_array'"):
            plain.render()
    finally:
        env.close()
        plain.close()


# pygame made unimportable (sys.modules[name] = None makes `import name` raise ImportError)
_NO_PYGAME = r"""
import sys
sys.modules["pygame"] = None
import gymnasium as gym, numpy as np, cypool
for env_id in ("CartPole-v1", "Pendulum-v1"):
    env = cypool.make_vec(env_id, 2, render_mode="rgb_array")
    env.reset(seed=0)
    try:
        env.render()
    except gym.error.DependencyNotInstalled as exc:
        assert 'pip install "cypool[classic-control]"' in str(exc), str(exc)
        assert env_id in str(exc), str(exc)
    else:
        raise SystemExit(env_id + ": rendered without pygame")
    env.step(env.action_space.sample())          # the pool still works
    env.close()
print("OK")
"""


def test_pygame_missing_is_a_clear_error():
    r = subprocess.run([sys.executable, "-c", _NO_PYGAME], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr
