"""make_vec(..., from_pixels=True) on the robotics ids: every observation is the frame the
reference env (gym.make(id, render_mode="rgb_array")) renders right after the same reset, step
or (next-step) autoreset, bit for bit: what gymnasium's AddRenderObservation(env,
render_only=True) returns, less one quirk of the wrapper: its constructor resets and renders
the env once before the user's first reset, and on AntMaze's tracking camera that earlier
frame moves the camera of the later ones. With channels_first=True the same frames as
(3, H, W). Each env is checked against its own reference env, alone (gymnasium renders right
only then: test_robotics_render). The frames are drawn on the worker threads (num_threads=2:
each env on a thread of its own), after what the reference's render callback does."""
import warnings

import gymnasium as gym
import numpy as np
import pytest

import cypool

from _fetch_ref import patch_reference  # noqa: F401  (Fetch/Hand references run)
from test_robotics_render import egl  # noqa: F401  (autouse: MUJOCO_GL=egl)

SIZE = dict(width=40, height=32)


class _Reference:
    """The reference env, each reset's and step's observation its render() right after."""

    def __init__(self, env_id, kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.env = gym.make(env_id, render_mode="rgb_array", disable_env_checker=True,
                                **kw)

    def reset(self, **kwargs):
        _, info = self.env.reset(**kwargs)
        return self.env.render(), info

    def step(self, action):
        _, *rest = self.env.step(action)
        return (self.env.render(), *rest)

    def close(self):
        self.env.close()


def _run(env, steps, seed, rng):
    """cypool's observations, rewards and dones over ``steps`` steps, and the actions."""
    space = env.single_action_space
    n = env.num_envs
    obs, _ = env.reset(seed=seed)
    out = [(obs, None, None)]
    actions = []
    for _ in range(steps):
        a = rng.uniform(space.low, space.high, (n,) + space.shape).astype(space.dtype)
        obs, rew, term, trunc, _ = env.step(a)
        actions.append(a)
        out.append((obs, rew, term | trunc))
    return out, actions


def _check_against_reference(env_id, kw, out, actions, seed, n, chw=False):
    for i in range(n):
        ref = _Reference(env_id, kw)
        try:
            o, _ = ref.reset(seed=seed + i)
            done = False
            for t, (obs, rew, dones) in enumerate(out):
                if t:
                    if done:                # next-step autoreset: the reset's frame, reward 0
                        o, _ = ref.reset()
                        r, done = 0.0, False
                    else:
                        o, r, term, trunc, _ = ref.step(actions[t - 1][i])
                        done = term or trunc
                    assert rew[i] == r and bool(dones[i]) == done, (env_id, i, t)
                frame = obs[i].transpose(1, 2, 0) if chw else obs[i]
                assert frame.dtype == o.dtype and frame.shape == o.shape, (frame.shape, o.shape)
                assert np.array_equal(frame, o), (env_id, i, t, int((frame != o).sum()))
        finally:
            ref.close()


@pytest.mark.parametrize("env_id,kw,steps", [
    ("FetchReach-v4", dict(max_episode_steps=3), 5),
    ("PointMaze_UMaze-v3", dict(max_episode_steps=3), 5),
    ("AntMaze_UMaze-v5", dict(max_episode_steps=2), 3),
    ("HandManipulateBlockRotateZ-v1", dict(max_episode_steps=2), 3),
    ("HandReach-v3", {}, 2),
    ("AdroitHandDoor-v1", dict(max_episode_steps=2), 3),
    ("FrankaKitchen-v1", {}, 2),
])
def test_frames_are_the_reference_observations(env_id, kw, steps):
    n, seed = 2, 5
    limit = kw.get("max_episode_steps")
    env = cypool.make_vec(env_id, n, num_threads=2, from_pixels=True, **SIZE, **kw)
    try:
        assert env.single_observation_space == gym.spaces.Box(0, 255, (32, 40, 3), np.uint8)
        out, actions = _run(env, steps, seed, np.random.default_rng(seed))
    finally:
        env.close()
    if limit is not None:
        assert any(d.any() for _, _, d in out[1:]), "the schedule reaches an autoreset"
    _check_against_reference(env_id, {**SIZE, **kw}, out, actions, seed, n)


def test_channels_first():
    env = cypool.make_vec("PointMaze_UMaze-v3", 2, from_pixels=True, channels_first=True,
                          **SIZE)
    try:
        assert env.single_observation_space.shape == (3, 32, 40)
        out, actions = _run(env, 2, 1, np.random.default_rng(1))
    finally:
        env.close()
    _check_against_reference("PointMaze_UMaze-v3", SIZE, out, actions, 1, 2, chw=True)


def test_async_batches_are_the_envs_frames():
    """send/recv: each received env's observation is its own frame after its step."""
    env = cypool.make_vec("PointMaze_UMaze-v3", 4, num_threads=2, batch_size=2,
                          from_pixels=True, **SIZE)
    sync = cypool.make_vec("PointMaze_UMaze-v3", 4, num_threads=1, from_pixels=True, **SIZE)
    try:
        o, _ = env.reset(seed=3)
        s, _ = sync.reset(seed=3)
        assert np.array_equal(o, s)
        a = np.tile(np.array([[0.5, -0.25]], np.float32), (4, 1))
        env.send(a)
        got = {}
        for _ in range(2):
            obs, _, _, _, info = env.recv()
            got.update(zip(info["env_id"].tolist(), obs))
        want = sync.step(a)[0]
        assert sorted(got) == [0, 1, 2, 3]
        for i, frame in got.items():
            assert np.array_equal(frame, want[i]), i
    finally:
        env.close()
        sync.close()


@pytest.mark.parametrize("env_id", ["FetchReach-v4", "HandReach-v3"])
def test_same_step_final_frames(env_id):
    """A SAME_STEP autoreset: the done step's final_obs is the reference's frame after that
    step, the observation its frame after the reset (on the same env, as the reference's
    render callback left it)."""
    n, seed, limit = 2, 4, 2
    env = cypool.make_vec(env_id, n, num_threads=2, from_pixels=True, max_episode_steps=limit,
                          autoreset_mode="same_step", **SIZE)
    refs = [_Reference(env_id, dict(max_episode_steps=limit, **SIZE)) for _ in range(n)]
    try:
        obs, _ = env.reset(seed=seed)
        want = [r.reset(seed=seed + i)[0] for i, r in enumerate(refs)]
        assert all(np.array_equal(obs[i], want[i]) for i in range(n))
        space, rng = env.single_action_space, np.random.default_rng(0)
        for t in range(2 * limit):
            a = rng.uniform(space.low, space.high, (n,) + space.shape).astype(space.dtype)
            obs, rew, term, trunc, info = env.step(a)
            for i, ref in enumerate(refs):
                frame, r, te, tr, _ = ref.step(a[i])
                assert rew[i] == r and bool(term[i] | trunc[i]) == (te or tr), (t, i)
                if te or tr:
                    assert info["_final_obs"][i]
                    assert np.array_equal(info["final_obs"][i], frame), (t, i)
                    frame = ref.reset()[0]
                assert np.array_equal(obs[i], frame), (t, i)
        assert info["_final_obs"].all(), "the schedule reaches an autoreset"
    finally:
        env.close()
        for r in refs:
            r.close()


def test_xla_serves_the_frames():
    """xla()'s step gives the frames the Python step gives (a twin pool, same seed and
    actions)."""
    jax = pytest.importorskip("jax")
    env = cypool.make_vec("PointMaze_UMaze-v3", 2, from_pixels=True, **SIZE)
    twin = cypool.make_vec("PointMaze_UMaze-v3", 2, from_pixels=True, **SIZE)
    try:
        env.reset(seed=2)
        twin.reset(seed=2)
        a = np.random.default_rng(2).uniform(-1, 1, (3, 2, 2)).astype(np.float32)
        handle, _, _, step = env.xla()
        _, outs = jax.jit(lambda h, A: jax.lax.scan(step, h, A))(handle, a)
        obs = np.asarray(jax.device_get(outs[0]))
        assert obs.shape == (3, 2, 32, 40, 3) and obs.dtype == np.uint8
        for t in range(3):
            assert np.array_equal(obs[t], twin.step(a[t])[0]), t
    finally:
        env.close()
        twin.close()


def test_refusals():
    with pytest.raises(ValueError, match="channels_first=True needs from_pixels=True"):
        cypool.make_vec("FetchReach-v4", 1, channels_first=True)


@pytest.mark.parametrize("member_batch", [None, 1])
def test_population_frames(member_batch):
    """A population's observations are its envs' frames, as a pool of its P*E envs seeded
    alike gives them (seed_mode="parity"), sync or member by member."""
    pop = cypool.make_population("PointMaze_UMaze-v3", 2, 2, seed_mode="parity",
                                 member_batch=member_batch, from_pixels=True, **SIZE)
    flat = cypool.make_vec("PointMaze_UMaze-v3", 4, num_threads=1, from_pixels=True, **SIZE)
    try:
        o, _ = pop.reset(seed=7)
        assert o.shape == (2, 2, 32, 40, 3)
        assert np.array_equal(o.reshape(4, 32, 40, 3), flat.reset(seed=7)[0])
        a = np.random.default_rng(0).uniform(-1, 1, (2, 2, 2)).astype(np.float32)
        want = flat.step(a.reshape(4, 2))[0].reshape(2, 2, 32, 40, 3)
        if member_batch is None:
            assert np.array_equal(pop.step(a)[0], want)
        else:
            pop.send(a)
            for _ in range(2):
                obs, *_, info = pop.recv()
                k = int(info["member_id"][0])
                assert np.array_equal(obs[0], want[k]), k
    finally:
        pop.close()
        flat.close()
