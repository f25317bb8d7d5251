"""Pixel observations (from_pixels=True): every observation is the env's frame, rendered in
the worker threads (one GL context per thread slot), equal bit for bit to gymnasium's
AddRenderObservation(render_only=True) over the same env, across auto-resets (final_obs
frames too), sync and async; channels_first=True gives the same frames as (3, H, W), which
cypool.envpool's from_pixels uses (EnvPool's layout)."""
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import AddRenderObservation

import cypool

sys.path.insert(0, str(Path(__file__).parent.parent))
from _envpool_ref import envpool_or_none  # noqa: E402

SIZE = dict(width=48, height=40)
LIMIT = 4


@pytest.fixture(autouse=True)
def egl(monkeypatch):
    monkeypatch.setenv("MUJOCO_GL", "egl")


def _reference(task, seed, actions, mode):
    """One AddRenderObservation env alone: its obs, rewards and final frames per step. The
    base env is seeded before wrapping, as the wrapper's constructor resets it unseeded."""
    base = gym.make(task, render_mode="rgb_array", max_episode_steps=LIMIT, **SIZE)
    base.reset(seed=seed)
    env = AddRenderObservation(base, render_only=True)
    out = []
    try:
        obs, _ = env.reset(seed=seed)
        out.append((obs, 0.0, None))
        done = False
        for a in actions:
            if done and mode == "next_step":
                obs, _ = env.reset()
                out.append((obs, 0.0, None))
                done = False
                continue
            obs, r, te, tr, _ = env.step(a)
            final = None
            if (te or tr) and mode == "same_step":
                final, (obs, _) = obs, env.reset()
            out.append((obs, r, final))
            done = te or tr
    finally:
        env.close()
    return out


@pytest.mark.parametrize("task,mode", [("Hopper-v5", "next_step"), ("Walker2d-v5", "same_step")])
def test_pixel_observations_equal_add_render_observation(task, mode):
    n, steps = 2, 9
    env = cypool.make_vec(task, n, num_threads=2, from_pixels=True, autoreset_mode=mode,
                          max_episode_steps=LIMIT, **SIZE)
    assert env.single_observation_space == gym.spaces.Box(0, 255, (40, 48, 3), np.uint8)
    assert env.pool.engine.num_slots == 2                      # the caller and one worker
    rng = np.random.default_rng(1)
    actions = rng.uniform(-1, 1, (steps, n) + env.single_action_space.shape).astype(np.float32)
    got = []
    try:
        obs, _ = env.reset(seed=7)
        got.append((obs, np.zeros(n), {}))
        for a in actions:
            obs, rew, term, trunc, info = env.step(a)
            got.append((obs, rew, info))
    finally:
        env.close()
    for i in range(n):
        ref = _reference(task, 7 + i, actions[:, i], mode)
        for t, ((obs, rew, info), (r_obs, r_rew, r_final)) in enumerate(zip(got, ref)):
            assert np.array_equal(obs[i], r_obs), (i, t)
            assert rew[i] == r_rew, (i, t)
            if r_final is not None:
                assert info["_final_obs"][i]
                assert np.array_equal(info["final_obs"][i], r_final), (i, t)


def test_async_pixel_pool_renders_on_the_workers():
    env = cypool.make_vec("Hopper-v5", 4, num_threads=2, batch_size=2, from_pixels=True, **SIZE)
    sync = cypool.make_vec("Hopper-v5", 4, num_threads=1, from_pixels=True, **SIZE)
    try:
        assert env.pool.engine.num_slots == 3                  # the caller and two workers
        env.async_reset(seed=0)
        first = {}
        while len(first) < 4:
            obs, _, _, _, info = env.recv(timeout=60)
            for r, i in enumerate(info["env_id"]):
                first[int(i)] = obs[r]
        o, _ = sync.reset(seed=0)
        for i in range(4):
            assert np.array_equal(first[i], o[i])
    finally:
        env.close()
        sync.close()
    with pytest.raises(TypeError, match="from_pixels"):
        cypool.make_vec("Hopper-v5", 1, from_pixels=1)


def test_a_population_of_pixel_envs():
    pop = cypool.make_population("Hopper-v5", 2, 2, num_threads=2, from_pixels=True,
                                 seed=4, seed_mode="parity", **SIZE)
    flat = cypool.make_vec("Hopper-v5", 4, num_threads=2, from_pixels=True, **SIZE)
    try:
        obs, _ = pop.reset()
        o, _ = flat.reset(seed=4)
        assert obs.shape == (2, 2, 40, 48, 3)
        assert np.array_equal(obs.reshape(o.shape), o)
        a = np.full((2, 2, 3), 0.2, np.float32)
        assert np.array_equal(pop.step(a)[0].reshape(o.shape), flat.step(a.reshape(4, 3))[0])
    finally:
        pop.close()
        flat.close()


@pytest.mark.parametrize("mode", ["same_step", "next_step"])
def test_channels_first_frames_are_the_hwc_frames_transposed(mode):
    """channels_first=True: (3, H, W) observations and space; every frame, final_obs frames
    included, is the HWC pool's frame transposed, across auto-resets."""
    n, steps = 2, 9
    kw = dict(from_pixels=True, autoreset_mode=mode, max_episode_steps=LIMIT, **SIZE)
    chw = cypool.make_vec("Hopper-v5", n, num_threads=2, channels_first=True, **kw)
    hwc = cypool.make_vec("Hopper-v5", n, num_threads=2, **kw)
    assert chw.single_observation_space == gym.spaces.Box(0, 255, (3, 40, 48), np.uint8)
    assert chw.observation_space.shape == (n, 3, 40, 48)
    rng = np.random.default_rng(2)
    actions = rng.uniform(-1, 1, (steps, n, 3)).astype(np.float32)
    finals = 0
    try:
        a, _ = chw.reset(seed=3)
        b, _ = hwc.reset(seed=3)
        assert a.shape == (n, 3, 40, 48) and np.array_equal(a, b.transpose(0, 3, 1, 2))
        for act in actions:
            a, ra, ta, tra, ia = chw.step(act)
            b, rb, tb, trb, ib = hwc.step(act)
            assert np.array_equal(a, b.transpose(0, 3, 1, 2))
            assert np.array_equal(ra, rb) and np.array_equal(tra, trb)
            assert chw.observation_space.contains(a)
            if "final_obs" in ib:
                assert np.array_equal(ia["_final_obs"], ib["_final_obs"])
                for i in np.flatnonzero(ib["_final_obs"]):
                    finals += 1
                    assert np.array_equal(ia["final_obs"][i],
                                          ib["final_obs"][i].transpose(2, 0, 1))
    finally:
        chw.close()
        hwc.close()
    assert finals > 0 if mode == "same_step" else finals == 0
    with pytest.raises(ValueError, match="needs from_pixels=True"):
        cypool.make_vec("Hopper-v5", 1, channels_first=True)
    with pytest.raises(TypeError, match="channels_first"):
        cypool.make_vec("Hopper-v5", 1, from_pixels=True, channels_first="yes")


def test_envpool_from_pixels_gives_channels_first_frames():
    """cypool.envpool.make(..., from_pixels=True) passes EnvPool's pixel options through:
    (3, render_height, render_width) observations, EnvPool 1.2.5's space and config keys."""
    import cypool.envpool as cep

    env = cep.make_gymnasium("Hopper-v5", num_envs=2, from_pixels=True, render_width=48,
                             render_height=40, seed=5)
    ref = cypool.make_vec("Hopper-v5", 2, num_threads=1, from_pixels=True, **SIZE)
    try:
        assert env.observation_space == gym.spaces.Box(0, 255, (3, 40, 48), np.uint8)
        assert (env.config["render_width"], env.config["render_height"],
                env.config["render_camera_id"]) == (48, 40, -1)
        obs, _ = env.reset()
        o, _ = ref.reset(seed=[5, 6])          # EnvPool seeds env i with seed + i
        assert np.array_equal(obs, o.transpose(0, 3, 1, 2))
        a = np.full((2, 3), 0.3)
        assert np.array_equal(env.step(a)[0], ref.step(a)[0].transpose(0, 3, 1, 2))
    finally:
        env.close()
        ref.close()
    spec = cep.make_spec("Hopper-v5", from_pixels=True)
    assert spec.observation_space == gym.spaces.Box(0, 255, (3, 84, 84), np.uint8)
    envpool = envpool_or_none()     # None under tools/sanitize.sh: compared in the normal run
    if envpool is not None:
        real = envpool.make_spec("Hopper-v5", from_pixels=True, render_width=48,
                                 render_height=40)
        mine = cep.make_spec("Hopper-v5", from_pixels=True, render_width=48, render_height=40)
        assert mine.observation_space == real.observation_space
        assert set(real.config._asdict()) <= set(mine.config._asdict())
    with pytest.raises(ValueError, match="only supported for MuJoCo"):
        cep.make_gymnasium("Pong-v5", from_pixels=True)
    with pytest.raises(ValueError, match="need from_pixels=True"):
        cep.make_gymnasium("Hopper-v5", render_width=48)
