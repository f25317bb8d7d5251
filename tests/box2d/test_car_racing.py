"""CarRacing-v3 through make_vec against gymnasium.make_vec("CarRacing-v3", n, "sync") on the
box2d 2.3.10 wheel and pygame-ce, bit for bit: the 96 x 96 frames (the road, grass and field
drawn by gfxdraw, the car and the indicators by draw.polygon, the score by SDL_ttf, then
smoothscale), rewards, terminated, truncated and info dicts (lap_finished), across
autoresets, several seeds and kwargs (discrete and continuous, domain_randomize,
lap_complete_percent), one and two threads; bad input and the refusal to save a state."""
import os

import gymnasium as gym
import numpy as np
import pytest

import cypool

CR = "CarRacing-v3"


def assert_same(x, y, where):
    assert type(x) is type(y), (where, type(x), type(y))
    if isinstance(y, tuple):
        assert len(x) == len(y), where
        for k, (u, v) in enumerate(zip(x, y)):
            assert_same(u, v, f"{where}[{k}]")
    elif isinstance(y, dict):
        assert sorted(x) == sorted(y), (where, sorted(x), sorted(y))
        for k in y:
            assert_same(x[k], y[k], f"{where}[{k!r}]")
    elif y.dtype == object:
        assert x.dtype == object and x.shape == y.shape, where
        for k, (u, v) in enumerate(zip(x, y)):
            if v is None:
                assert u is None, where
            else:
                assert_same(u, v, f"{where}[{k}]")
    else:
        assert x.dtype == y.dtype and x.shape == y.shape, (where, x.dtype, y.dtype)
        if not np.array_equal(x, y):
            bad = np.argwhere(x != y)
            raise AssertionError(f"{where}: {len(bad)} values differ, first at "
                                 f"{bad[:5].tolist()}")


class Driver:
    """Drives fast along the track with random steering (the car leaves the road, skids on
    the grass, brakes; with strong gas some cars leave the playfield); continuous actions
    include values outside the box (gymnasium clips gas, steer and brake saturate)."""

    def __init__(self, continuous, n, seed):
        self.continuous, self.n = continuous, n
        self.rng = np.random.default_rng(seed)

    def __call__(self, t):
        if not self.continuous:
            p = [0.15, 0.2, 0.2, 0.35, 0.1]
            return self.rng.choice(5, size=self.n, p=p).astype(np.int64)
        a = np.zeros((self.n, 3), np.float32)
        a[:, 0] = self.rng.uniform(-1.3, 1.3, self.n)
        a[:, 1] = self.rng.uniform(0.0, 1.2, self.n)
        a[:, 2] = np.where(self.rng.random(self.n) < 0.1, self.rng.uniform(0, 1.1, self.n), 0)
        return a


def run_both(kwargs, seed, steps, n=2, num_threads=1, autoreset="next_step", limit=None):
    mode = {"next_step": gym.vector.AutoresetMode.NEXT_STEP,
            "same_step": gym.vector.AutoresetMode.SAME_STEP}[autoreset]
    ref = gym.vector.SyncVectorEnv(
        [lambda: gym.make(CR, max_episode_steps=limit, **kwargs)] * n, autoreset_mode=mode)
    env = cypool.make_vec(CR, n, num_threads=num_threads, autoreset_mode=autoreset,
                          **({} if limit is None else {"max_episode_steps": limit}), **kwargs)
    try:
        assert_same(env.reset(seed=seed), ref.reset(seed=seed), "reset")
        drive = Driver(kwargs.get("continuous", True), n, seed)
        ended = 0
        for t in range(steps):
            a = drive(t)
            x, y = env.step(a), ref.step(a)
            for k, name in enumerate(("obs", "reward", "terminated", "truncated", "info")):
                assert_same(x[k], y[k], f"step {t} {name}")
            ended += int(np.sum(y[2] | y[3]))
        return ended
    finally:
        env.close()
        ref.close()


@pytest.mark.parametrize("kwargs,seed", [
    ({}, 0),
    ({"continuous": False}, 1),
    ({"domain_randomize": True}, 2),
    ({"continuous": False, "domain_randomize": True, "lap_complete_percent": 0.5}, 3),
])
def test_frames_and_rewards_equal_gymnasium(kwargs, seed):
    run_both(kwargs, seed, 150)


def test_frames_with_the_whole_road_drawn():
    # the path of a bar above the panel: every road row drawn, the panel's rows drawn over them
    from cypool.box2d import _car_racing
    _car_racing._draw_whole_road(True)
    try:
        run_both({"domain_randomize": True}, 5, 60)
    finally:
        _car_racing._draw_whole_road(False)


def test_autoresets_and_two_threads():
    # a short time limit: every env truncates and resets (a new track in the same world)
    ended = run_both({}, 7, 130, n=3, num_threads=2, limit=40)
    assert ended >= 6


def test_same_step_autoreset():
    run_both({"continuous": False}, 11, 70, n=2, autoreset="same_step", limit=30)


@pytest.mark.parametrize("every,threads", [(1, 1), (7, 2)])
def test_rgb_array_frames_are_gymnasiums(every, threads):
    """rgb_array frames (600 x 400, skid marks included: black on the road, mud on the grass)
    from gymnasium's own render() fed the pool's state, equal to gymnasium's, every step or
    sparsely, across resets."""
    pytest.importorskip("pygame")
    n = 2
    env = cypool.make_vec(CR, n, num_threads=threads, render_mode="rgb_array",
                          max_episode_steps=90)
    ref = gym.vector.SyncVectorEnv(
        [lambda: gym.make(CR, render_mode="rgb_array", max_episode_steps=90)] * n)
    try:
        assert_same(env.reset(seed=4), ref.reset(seed=4), "reset")
        rng = np.random.default_rng(4)
        skids = 0
        for t in range(200):
            # full gas, then hard steering and braking: the wheels skid
            a = np.zeros((n, 3), np.float32)
            a[:, 1] = 1.0
            if t % 40 > 25:
                a[:, 0] = rng.choice([-1.0, 1.0], n)
                a[:, 2] = rng.uniform(0, 1, n)
            x, y = env.step(a), ref.step(a)
            for k, name in enumerate(("obs", "reward", "terminated", "truncated", "info")):
                assert_same(x[k], y[k], f"step {t} {name}")
            if t % every == 0:
                got, want = env.render(), ref.render()
                assert len(got) == len(want) == n
                for k in range(n):
                    assert_same(got[k], want[k], f"frame {t} env {k}")
                    skids += len(ref.envs[k].unwrapped.car.particles)
        assert skids > 0
    finally:
        env.close()
        ref.close()


def test_human_rendering_is_refused():
    with pytest.raises(ValueError, match="render"):
        cypool.make_vec(CR, 1, render_mode="human")


def test_lap_finished_info_off_the_playfield_and_by_lap_complete_percent():
    """info["lap_finished"] only on the steps that end an episode: False (and -100) when a car
    leaves the playfield (straight on at constant gas), True with lap_complete_percent <= 0
    (gymnasium then counts the lap at the reset's touch of tile 0); per-env kwargs."""
    kws = [{"lap_complete_percent": 0.95}, {"lap_complete_percent": -0.5}]
    with pytest.warns(UserWarning, match="lap_complete_percent"):
        env = cypool.make_vec(CR, 2, env_kwargs=kws)
    ref = gym.vector.SyncVectorEnv([lambda k=k: gym.make(CR, **k) for k in kws])
    try:
        assert_same(env.reset(seed=3), ref.reset(seed=3), "reset")
        seen = set()
        for t in range(380):
            a = np.array([[0.0, 0.2, 0.0]] * 2, np.float32)
            x, y = env.step(a), ref.step(a)
            for k, name in enumerate(("obs", "reward", "terminated", "truncated", "info")):
                assert_same(x[k], y[k], f"step {t} {name}")
            if "lap_finished" in y[4]:
                for i in np.flatnonzero(y[4]["_lap_finished"]):
                    seen.add((int(i), bool(y[4]["lap_finished"][i]), float(y[1][i])))
        assert (0, False, -100.0) in seen
        assert any(i == 1 and done for i, done, _ in seen)
        assert env.get_attr("lap_complete_percent") == (0.95, -0.5)
    finally:
        env.close()
        ref.close()


@pytest.mark.parametrize("kw,match", [
    ({"lap_complete_percent": float("nan")}, "lap_complete_percent"),
    ({"lap_complete_percent": float("inf")}, "lap_complete_percent"),
    ({"lap_complete_percent": "0.5"}, "lap_complete_percent"),
    ({"verbose": True}, "verbose"),
])
def test_bad_kwargs_refused(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        cypool.make_vec(CR, 2, **kw)


def test_continuous_is_a_pool_setting():
    with pytest.raises(ValueError, match="continuous"):
        cypool.make_vec(CR, 2, env_kwargs=[{"continuous": False}, {}])
    env = cypool.make_vec(CR, 1, continuous=False)
    assert env.single_action_space == gym.spaces.Discrete(5)
    assert env.single_observation_space == gym.spaces.Box(0, 255, (96, 96, 3), np.uint8)
    env.close()


def test_bad_actions_refused_before_any_env_moves():
    disc = cypool.make_vec(CR, 3, continuous=False)
    dref = gym.make_vec(CR, 3, vectorization_mode="sync", continuous=False)
    cont = cypool.make_vec(CR, 2)
    cref = gym.make_vec(CR, 2, vectorization_mode="sync")
    try:
        assert_same(disc.reset(seed=1), dref.reset(seed=1), "reset")
        assert_same(cont.reset(seed=1), cref.reset(seed=1), "reset")
        for bad in ([0, 1, 5], [0, -1, 2], [0.0, 1.0, 2.0], [0, 1]):
            with pytest.raises((ValueError, TypeError)):
                disc.step(np.array(bad))
        for bad in (np.zeros((2, 2)), np.zeros((2, 3), np.int64), np.zeros(3),
                    np.array([[0.0, np.nan, 0.0], [0.0, 0.0, 0.0]])):
            with pytest.raises((ValueError, TypeError)):
                cont.step(bad)
        # nothing moved: the next steps still match gymnasium, infinite actions included
        # (gas is clipped, steering and braking saturate)
        for t in range(8):
            a = np.array([3, 1, 4])
            x, y = disc.step(a), dref.step(a)
            for k in range(4):
                assert_same(x[k], y[k], f"step {t}")
            c = np.array([[np.inf, np.inf, 0.0], [-np.inf, 0.5, np.inf]], np.float32)
            x, y = cont.step(c), cref.step(c)
            for k in range(4):
                assert_same(x[k], y[k], f"continuous step {t}")
    finally:
        for e in (disc, dref, cont, cref):
            e.close()


def test_saving_a_state_is_refused_clearly():
    import copy
    import pickle

    env = cypool.make_vec(CR, 2)
    env.reset(seed=0)
    try:
        with pytest.raises(TypeError, match="Box2D world"):
            pickle.dumps(env)
        with pytest.raises(TypeError, match="Box2D world"):
            copy.deepcopy(env)
        env.step(np.zeros((2, 3), np.float32))      # the pool goes on
    finally:
        env.close()


def test_envpool_names():
    """cypool.envpool serves EnvPool's CarRacing-v2/-v3 ids with EnvPool's config and info
    keys, and gymnasium's frames (EnvPool's own port draws other tracks and frames)."""
    import cypool.envpool as cep

    for ep_id in ("CarRacing-v2", "CarRacing-v3"):
        spec = cep.make_spec(ep_id).config
        assert (spec.max_episode_steps, spec.reward_threshold) == (1000, 900.0)
        env = cep.make(ep_id, env_type="gymnasium", num_envs=2, seed=5)
        ref = gym.make_vec(CR, 2, vectorization_mode="sync")
        try:
            o, info = env.reset()
            assert sorted(info) == ["elapsed_step", "env_id", "players"]
            assert np.array_equal(o, ref.reset(seed=5)[0])
            a = np.array([[0.3, 0.5, 0.0], [-0.4, 0.2, 0.1]], np.float32)
            for _ in range(20):
                x, y = env.step(a), ref.step(a)
                assert np.array_equal(x[0], y[0])
                assert np.array_equal(x[1], y[1].astype(x[1].dtype))
        finally:
            env.close()
            ref.close()


def test_population_members_with_their_own_kwargs():
    members = [{"domain_randomize": True}, {"lap_complete_percent": 0.5}]
    pop = cypool.make_population(CR, 2, 2, member_kwargs=members, seed=6, seed_mode="parity",
                                 num_threads=2)
    kws = [members[0], members[0], members[1], members[1]]
    ref = gym.vector.SyncVectorEnv([lambda k=k: gym.make(CR, **k) for k in kws])
    try:
        obs, _ = pop.reset()
        assert np.array_equal(obs.reshape(4, 96, 96, 3), ref.reset(seed=6)[0])
        rng = np.random.default_rng(3)
        for t in range(40):
            a = rng.uniform(0, 1, (2, 2, 3)).astype(np.float32)
            x, y = pop.step(a), ref.step(a.reshape(4, 3))
            for k in range(4):
                assert np.array_equal(x[k].reshape(y[k].shape), y[k]), (t, k)
    finally:
        pop.close()
        ref.close()
