"""render_mode="rgb_array" for Atari: every frame equals gymnasium's AtariEnv.render() for
the same state (across auto-resets, any subset of envs), RecordVideo writes a playable video,
and misuse gets clear errors."""
import gymnasium as gym
import numpy as np
import pytest

import cypool

from atari_helpers import gym_reference


@pytest.mark.parametrize("game,n,threads", [("Breakout", 3, 2), ("Pong", 2, 1),
                                            ("SpaceInvaders", 2, 2)])
def test_frames_equal_gymnasiums_render(game, n, threads):
    ref = gym_reference(game, n, noop_max=30, p=0.25, render_mode="rgb_array")
    env = cypool.make_vec(f"{game}-v5", n, num_threads=threads, use_fire_reset=False,
                          repeat_action_probability=0.25, render_mode="rgb_array",
                          max_episode_steps=60)
    try:
        assert env.metadata["render_modes"] == ["rgb_array"]
        assert env.metadata["render_fps"] == ref.envs[0].unwrapped.metadata["render_fps"]
        ref.reset(seed=3)
        env.reset(seed=3)
        rng = np.random.default_rng(0)
        for t in range(120):
            frames, want = env.render(), ref.render()
            assert len(frames) == n
            for i in range(n):
                assert frames[i].shape == (210, 160, 3) and frames[i].dtype == np.uint8
                assert np.array_equal(frames[i], want[i]), (t, i)
            one = env.render(env_ids=[n - 1])               # a subset renders only those
            assert len(one) == 1 and np.array_equal(one[0], want[n - 1])
            a = rng.integers(0, env.single_action_space.n, n)
            _, _, term, trunc, _ = env.step(a)
            ref_out = ref.step(a)
            if (term | trunc).any():     # the reference is gymnasium's TimeLimit-free pipeline:
                # resynchronise both at the envs' own time limit (60 steps) with a reset
                env.reset(seed=100 + t)
                ref.reset(seed=100 + t)
            del ref_out
    finally:
        env.close()
        ref.close()


def test_record_video_writes_a_playable_video(tmp_path):
    import imageio.v3 as iio

    env = cypool.make_vec("Breakout-v5", 2, render_mode="rgb_array", max_episode_steps=30)
    folder = tmp_path / "videos"
    env = gym.wrappers.vector.RecordVideo(env, str(folder), episode_trigger=lambda k: k == 0,
                                          video_length=40)
    env.reset(seed=0)
    for _ in range(45):
        env.step(np.ones(2, np.int64))
    env.close()
    videos = sorted(folder.glob("*.mp4"))
    assert videos, list(folder.iterdir())
    frames = iio.imread(videos[0])                        # decodes: a playable mp4
    assert frames.ndim == 4 and frames.shape[0] >= 30 and frames.shape[-1] == 3


def test_render_misuse_is_refused_clearly():
    plain = cypool.make_vec("Pong-v5", 2)
    env = cypool.make_vec("Pong-v5", 4, render_mode="rgb_array", batch_size=2)
    try:
        with pytest.raises(gym.error.Error, match="render_mode='rgb_array'"):
            plain.render()
        with pytest.raises(gym.error.ResetNeeded):
            env.render()
        env.async_reset(seed=0)
        with pytest.raises(ValueError, match="in flight"):
            env.render()
        _, _, _, _, info = env.recv(timeout=30)
        assert len(env.render(env_ids=info["env_id"])) == 2    # the received envs render
        with pytest.raises(ValueError, match="offered"):
            cypool.make_vec("Pong-v5", 1, render_mode="human")
    finally:
        plain.close()
        env.close()
