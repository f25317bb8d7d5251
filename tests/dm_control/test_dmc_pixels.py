"""Pixels of cypool's dm_control ids against dm_control itself (1.0.52, same MuJoCo, same GL
backend: EGL): from_pixels observations equal dm_control's ``pixels.Wrapper`` observations
(``physics.render(height, width, camera_id)``) and ``render()`` equals ``physics.render``
(with render_kwargs depth=True, ``physics.render(..., depth=True)``), bit for bit
(np.array_equal), across seeds, steps, an autoreset (short time_limit), free and fixed
cameras (by index and by name) and one or two threads (each thread renders on its own GL
context), tasks whose per-episode target each env keeps (reacher, finger turn, swimmer) or
whose model differs per env (fish, lqr, point_mass hard, manipulator, quadruped escape's
terrain) included; render settings dm_control refuses are a ValueError before any env exists."""
import numpy as np
import pytest

import cypool

suite = pytest.importorskip("dm_control.suite", reason="dm_control is a test dependency")
pixels = pytest.importorskip("dm_control.suite.wrappers.pixels")

from cypool.dm_control.family import parse_id  # noqa: E402


@pytest.fixture(autouse=True)
def egl(monkeypatch):
    # the reference and cypool under the same backend; dm_control reads it at its first render
    monkeypatch.setenv("MUJOCO_GL", "egl")


def _refs(domain, task, seeds, time_limit, render_kwargs):
    return [pixels.Wrapper(suite.load(domain, task, task_kwargs={"random": s,
                                                                  "time_limit": time_limit}),
                           pixels_only=True, render_kwargs=render_kwargs) for s in seeds]


CASES = [  # (task, camera_id, threads, seed): free and fixed cameras, by index and by name
    ("cheetah-run", -1, 1, 3),
    ("cheetah-run", -1, 2, 11),
    ("walker-walk", "side", 2, 5),
    ("walker-walk", -1, 1, 0),
    ("cartpole-swingup", 0, 2, 7),
    ("cartpole-swingup", 1, 1, 2),
    ("humanoid-walk", "egocentric", 2, 1),
    # per-episode targets kept in each env's task state, drawn into its data by the kernel
    ("reacher-easy", -1, 2, 4),
    ("reacher-hard", 0, 1, 6),
    ("finger-turn_hard", -1, 2, 8),
    ("finger-turn_easy", 1, 1, 2),
    ("swimmer-swimmer6", -1, 2, 3),
    ("swimmer-swimmer15", 0, 1, 1),
    # a model per env: the env's own target position (fish), stiffnesses and gains (not
    # drawn) in its model, its poses in its data
    ("fish-swim", -1, 2, 4),
    ("fish-swim", 0, 1, 9),
    ("lqr-lqr_2_1", 0, 2, 3),
    ("point_mass-hard", -1, 1, 2),
    # the per-episode target (and insert's receptacle) written into each env's model; escape's
    # per-episode terrain, uploaded to a thread's GL context whenever the env it draws holds
    # another (two envs per context, new terrain at each autoreset)
    ("manipulator-bring_ball", -1, 2, 1),
    ("manipulator-bring_peg", -1, 1, 3),
    ("manipulator-insert_ball", 0, 2, 5),
    ("manipulator-insert_peg", -1, 1, 2),
    ("quadruped-escape", -1, 1, 4),
    ("quadruped-escape", 1, 2, 8),
    ("stacker-stack_2", -1, 2, 2),          # the target body, as manipulator's
    ("fish-upright", -1, 1, 5),             # the target hidden (alpha 0)
]


@pytest.mark.sweep(first_of="domain")
@pytest.mark.parametrize("domain,task", suite.ALL_TASKS)
def test_every_task_renders_as_dm_control(domain, task):
    """render() of every task, after a reset and a step, equals physics.render, and with
    render_kwargs depth=True physics.render(depth=True)."""
    env = cypool.make_vec(f"dm_control/{domain}-{task}-v0", 1, render_mode="rgb_array",
                          width=32, height=24)
    deep = cypool.make_vec(f"dm_control/{domain}-{task}-v0", 1, render_mode="rgb_array",
                           render_kwargs={"width": 32, "height": 24, "depth": True})
    ref = suite.load(domain, task, task_kwargs={"random": 12})
    spec = ref.action_spec()
    a = ((spec.minimum + spec.maximum) / 2 + .3 * (spec.maximum - spec.minimum) / 2)[None]
    try:
        env.reset(seed=12)
        deep.reset(seed=12)
        ref.reset()
        for t in range(2):
            assert np.array_equal(env.render()[0], ref.physics.render(24, 32)), t
            got, want = deep.render()[0], ref.physics.render(24, 32, depth=True)
            assert got.dtype == want.dtype == np.float32 and got.shape == want.shape
            assert np.array_equal(got, want), t
            env.step(a)
            deep.step(a)
            ref.step(a[0])
    finally:
        env.close()
        deep.close()


@pytest.mark.sweep(every=2)
@pytest.mark.parametrize("name,camera,threads,seed", CASES)
def test_pixel_observations_equal_dm_control(name, camera, threads, seed):
    env_id = f"dm_control/{name}-v0"
    domain, task = parse_id(env_id)
    n, width, height, steps = 2, 56, 40, 11
    dt = suite.load(domain, task).control_timestep()
    time_limit = 4 * dt            # an episode of 4 steps: two autoresets in 11 steps
    env = cypool.make_vec(env_id, n, num_threads=threads, from_pixels=True, width=width,
                          height=height, camera_id=camera, time_limit=time_limit)
    kwargs = dict(width=width, height=height, camera_id=camera)
    refs = _refs(domain, task, [seed + i for i in range(n)], time_limit, kwargs)
    space = env.single_observation_space
    assert list(space.spaces) == list(refs[0].observation_spec()) == ["pixels"]
    assert space["pixels"].shape == refs[0].observation_spec()["pixels"].shape == (40, 56, 3)
    assert space["pixels"].dtype == np.uint8
    spec = refs[0].action_spec()
    rng = np.random.default_rng(seed)
    resets = 0
    try:
        obs, _ = env.reset(seed=seed)
        out = [r.reset() for r in refs]
        for t in range(steps + 1):
            assert set(obs) == {"pixels"} and obs["pixels"].dtype == np.uint8
            for i, ts in enumerate(out):
                frame = ts.observation["pixels"]
                assert np.array_equal(obs["pixels"][i], frame), (t, i)
                resets += ts.first()
            if t == steps:
                break
            a = rng.uniform(spec.minimum, spec.maximum, (n, spec.shape[0]))
            obs, rew, term, trunc, _ = env.step(a)
            out = [r.step(a[i]) for i, r in enumerate(refs)]
            for i, ts in enumerate(out):
                assert rew[i] == (ts.reward or 0.0) and trunc[i] == (ts.last() and
                                                                      ts.discount == 1.0)
    finally:
        env.close()
    assert resets == n * 3          # the first reset and two autoresets per env


def test_frames_move():
    """The test above compares frames that change: a cheetah's run is not one still frame."""
    env = cypool.make_vec("dm_control/cheetah-run-v0", 1, from_pixels=True, width=32,
                          height=24)
    try:
        first = env.reset(seed=0)[0]["pixels"][0].copy()
        for _ in range(20):
            obs = env.step(np.ones((1, 6)))[0]
        assert not np.array_equal(first, obs["pixels"][0])
    finally:
        env.close()


@pytest.mark.parametrize("name,kwargs,call", [
    ("cheetah-run", {}, {}),                                   # dm_control's 240 x 320, -1
    ("walker-walk", {"render_kwargs": {"width": 64, "height": 48, "camera_id": 1}},
     {"width": 64, "height": 48, "camera_id": 1}),           # Shimmy's render_kwargs
    ("cartpole-swingup", {"width": 40, "height": 30, "camera_id": "fixed"},
     {"width": 40, "height": 30, "camera_id": "fixed"}),
    ("manipulator-insert_peg", {"width": 48, "height": 40}, {"width": 48, "height": 40}),
    ("quadruped-escape", {"width": 48, "height": 40}, {"width": 48, "height": 40}),
    # depth (render_kwargs depth=True): fixed and free cameras, models per env
    ("walker-walk", {"render_kwargs": {"width": 64, "height": 48, "camera_id": 1,
                                       "depth": True}},
     {"width": 64, "height": 48, "camera_id": 1, "depth": True}),
    ("fish-swim", {"width": 40, "height": 32, "render_kwargs": {"depth": True}},
     {"width": 40, "height": 32, "depth": True}),
    ("quadruped-escape", {"camera_id": 1, "render_kwargs": {"width": 48, "height": 40,
                                                            "depth": True}},
     {"width": 48, "height": 40, "camera_id": 1, "depth": True}),
])
def test_render_rgb_array_equals_physics_render(name, kwargs, call):
    env_id = f"dm_control/{name}-v0"
    domain, task = parse_id(env_id)
    n = 2
    env = cypool.make_vec(env_id, n, render_mode="rgb_array", num_threads=2, **kwargs)
    refs = [suite.load(domain, task, task_kwargs={"random": 4 + i}) for i in range(n)]
    spec = refs[0].action_spec()
    rng = np.random.default_rng(0)
    try:
        assert env.metadata["render_modes"] == ["rgb_array"]
        env.reset(seed=4)
        for r in refs:
            r.reset()
        for t in range(4):
            frames = env.render()
            assert isinstance(frames, tuple) and len(frames) == n
            for i, r in enumerate(refs):
                ref = r.physics.render(**call)
                assert frames[i].shape == ref.shape and frames[i].dtype == ref.dtype
                assert np.array_equal(frames[i], ref), (t, i)
            a = rng.uniform(spec.minimum, spec.maximum, (n, spec.shape[0]))
            env.step(a)
            for i, r in enumerate(refs):
                r.step(a[i])
        # the state observations are untouched by rendering
        assert set(env.single_observation_space.spaces) == set(refs[0].observation_spec())
    finally:
        env.close()


@pytest.mark.parametrize("kwargs,match", [
    ({"camera_id": 3}, "has 2 fixed cameras: camera_id=3 is invalid"),    # cartpole has 2
    ({"camera_id": 2}, "camera_id=2 is invalid"),
    ({"camera_id": -2}, "smaller than -1"),
    ({"camera_id": "nope"}, "no camera named 'nope'"),
    ({"width": 641}, "image width 641 > framebuffer width 640"),
    ({"height": 481}, "image height 481 > framebuffer height 480"),
    ({"width": 0}, "width"),
    ({"flatten_obs": True}, "cannot be combined"),
    ({"render_kwargs": {"width": 8}, "width": 8}, "both"),
    ({"render_kwargs": {"segmentation": True}}, "not supported"),
])
def test_bad_render_settings_raise_before_any_env(kwargs, match):
    with pytest.raises(ValueError, match=match):
        cypool.make_vec("dm_control/cartpole-swingup-v0", 2, from_pixels=True, **kwargs)
    # refused for render_mode too (the same settings), and even when nothing renders
    if "flatten_obs" not in kwargs:
        with pytest.raises(ValueError, match=match):
            cypool.make_vec("dm_control/cartpole-swingup-v0", 2, **kwargs)


def test_bad_render_types():
    with pytest.raises(TypeError, match="from_pixels must be a bool"):
        cypool.make_vec("dm_control/cartpole-swingup-v0", 1, from_pixels=1)
    with pytest.raises(TypeError, match="camera_id"):
        cypool.make_vec("dm_control/cartpole-swingup-v0", 1, camera_id=1.0)
    with pytest.raises(TypeError, match="render_kwargs"):
        cypool.make_vec("dm_control/cartpole-swingup-v0", 1, render_kwargs=[1])
    with pytest.raises(TypeError, match="depth must be a bool"):
        cypool.make_vec("dm_control/cartpole-swingup-v0", 1, render_kwargs={"depth": 1})


def test_depth_frames_are_render_only():
    """render_kwargs depth=True: render()'s frames; pixel observations stay RGB frames, so
    from_pixels with depth is refused (not served yet) rather than given RGB."""
    with pytest.raises(ValueError, match="depth=True is served by render\\(\\) only"):
        cypool.make_vec("dm_control/cartpole-swingup-v0", 1, from_pixels=True,
                        render_kwargs={"depth": True})


def test_same_step_final_frames_and_async():
    """same_step: the LAST frame in info["final_obs"], the reset frame as the observation;
    an async pool (batch_size 1) renders the same frames on its worker threads."""
    name, seed, n = "walker-walk", 9, 2
    domain, task = parse_id(f"dm_control/{name}-v0")
    time_limit = 2 * suite.load(domain, task).control_timestep()
    kw = dict(from_pixels=True, width=32, height=24, time_limit=time_limit)
    env = cypool.make_vec(f"dm_control/{name}-v0", n, autoreset_mode="same_step",
                          num_threads=2, **kw)
    refs = _refs(domain, task, [seed + i for i in range(n)], time_limit,
                 dict(width=32, height=24))
    finals = 0
    try:
        env.reset(seed=seed)
        for r in refs:
            r.reset()
        for t in range(5):
            obs, _, _, trunc, info = env.step(np.zeros((n, 6)))
            for i, r in enumerate(refs):
                ts = r.step(np.zeros(6))
                if ts.last():
                    assert trunc[i] and info["_final_obs"][i]
                    assert np.array_equal(info["final_obs"][i]["pixels"],
                                          ts.observation["pixels"])
                    ts = r.step(np.zeros(6))          # dm_control's reset step
                    finals += 1
                assert np.array_equal(obs["pixels"][i], ts.observation["pixels"]), (t, i)
    finally:
        env.close()
    assert finals == 2 * n
    env = cypool.make_vec(f"dm_control/{name}-v0", 3, batch_size=1, num_threads=2, **kw)
    refs = _refs(domain, task, [seed + i for i in range(3)], time_limit,
                 dict(width=32, height=24))
    try:
        env.async_reset(seed=seed)
        seen = [[r.reset().observation["pixels"]] for r in refs]
        got = [[] for _ in refs]
        for _ in range(12):
            obs, _, _, _, info = env.recv()
            i = int(info["env_id"][0])
            got[i].append(obs["pixels"][0].copy())
            env.send(np.zeros((1, 6)), info["env_id"])
        env.recv()
        for i, r in enumerate(refs):
            while len(seen[i]) < len(got[i]):
                seen[i].append(r.step(np.zeros(6)).observation["pixels"])
            assert len(got[i]) > 1
            for a, b in zip(got[i], seen[i]):
                assert np.array_equal(a, b)
    finally:
        env.close()


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_pixels_only_false_is_pixels_wrappers(mode):
    """pixels_only=False: dm_control's state keys and "pixels" (in gymnasium's sorted
    order), each equal to pixels.Wrapper(pixels_only=False)'s (final observations too)."""
    name, seed, n = "finger-turn_easy", 12, 2
    domain, task = parse_id(f"dm_control/{name}-v0")
    time_limit = 3 * suite.load(domain, task).control_timestep()
    env = cypool.make_vec(f"dm_control/{name}-v0", n, num_threads=2, from_pixels=True,
                          pixels_only=False, width=40, height=32, camera_id=0,
                          time_limit=time_limit, autoreset_mode=mode)
    refs = [pixels.Wrapper(suite.load(domain, task, task_kwargs={"random": seed + i,
                                                                "time_limit": time_limit}),
                           pixels_only=False,
                           render_kwargs=dict(width=40, height=32, camera_id=0))
            for i in range(n)]
    spec = refs[0].observation_spec()
    space = env.single_observation_space
    # pixels.Wrapper puts "pixels" last; the Dict is gymnasium's sorted one by default
    assert list(space.spaces) == sorted(spec) and list(spec)[-1] == "pixels"
    for k, v in spec.items():
        assert space[k].shape == v.shape and space[k].dtype == v.dtype, k

    def check(obs, i, ts, where):
        assert list(obs) == sorted(spec)
        for k, v in ts.observation.items():
            assert np.array_equal(obs[k][i], v) and obs[k][i].shape == np.shape(v), (where, k)

    rng = np.random.default_rng(seed)
    finals = 0
    try:
        obs, _ = env.reset(seed=seed)
        for i, r in enumerate(refs):
            check(obs, i, r.reset(), "reset")
        for t in range(8):
            a = rng.uniform(-1, 1, (n, 2))
            obs, _, _, _, info = env.step(a)
            for i, r in enumerate(refs):
                ts = r.step(a[i])
                if mode == "same_step" and ts.last():
                    final = info["final_obs"][i]
                    for k, v in ts.observation.items():
                        assert np.array_equal(final[k], v), (t, k)
                    ts = r.step(a[i])
                    finals += 1
                check(obs, i, ts, t)
    finally:
        env.close()
    assert finals == (2 * n if mode == "same_step" else 0)


@pytest.mark.parametrize("name", ["quadruped-escape", "manipulator-insert_ball"])
def test_frames_after_set_state(name):
    """A model per env follows a restored state at once: after set_state (the snapshot of an
    earlier episode, whose terrain or target the env's model no longer holds), render() and
    the next pixel observation equal those of the episode the snapshot came from."""
    env_id = f"dm_control/{name}-v0"
    domain, task = parse_id(env_id)
    dt = suite.load(domain, task).control_timestep()
    kw = dict(width=40, height=32)
    env = cypool.make_vec(env_id, 2, render_mode="rgb_array", time_limit=3 * dt, **kw)
    ref = suite.load(domain, task, task_kwargs={"random": 6, "time_limit": 3 * dt})
    spec = ref.action_spec()
    a = np.tile((spec.minimum + spec.maximum) / 2, (2, 1))
    try:
        env.reset(seed=6)
        ref.reset()
        env.step(a)
        ref.step(a[0])
        saved = env.get_state()
        frame = ref.physics.render(32, 40)
        assert np.array_equal(env.render()[0], frame)
        for _ in range(5):          # past the autoreset: a new terrain or target
            env.step(a)
        assert not np.array_equal(env.render()[0], frame)
        env.set_state(saved)
        assert np.array_equal(env.render()[0], frame)
        env.step(a)
        ref.step(a[0])
        assert np.array_equal(env.render()[0], ref.physics.render(32, 40))
    finally:
        env.close()
