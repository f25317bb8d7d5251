"""cypool's dm_control ids against dm_control itself (1.0.52 on the same MuJoCo): every
observation, reward and flag np.array_equal, env i seeded as suite.load(..., random=s + i),
across time limits (short time_limit task kwargs), autoresets and thread counts."""
import os

import numpy as np
import pytest

import cypool

# quadruped escape's reset makes dm_control open a GL context (to upload its terrain): a
# headless one unless the caller chose a backend
os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("PYOPENGL_PLATFORM", os.environ["MUJOCO_GL"])
suite = pytest.importorskip("dm_control.suite", reason="dm_control is a test dependency")

from cypool.dm_control.family import parse_id  # noqa: E402

PLANET = ["cheetah-run", "walker-walk", "cartpole-swingup", "reacher-easy", "finger-spin",
          "ball_in_cup-catch"]
MORE = ["walker-stand", "walker-run", "cartpole-balance", "cartpole-balance_sparse",
        "cartpole-swingup_sparse", "reacher-hard", "pendulum-swingup", "point_mass-easy",
        "acrobot-swingup", "acrobot-swingup_sparse", "hopper-stand", "hopper-hop",
        "humanoid-stand", "humanoid-walk", "humanoid-run", "humanoid-run_pure_state",
        "finger-turn_easy", "finger-turn_hard", "fish-upright", "fish-swim", "swimmer-swimmer6",
        "swimmer-swimmer15", "manipulator-bring_ball"]
# suite.EXTRA tasks served
EXTRA = ["cartpole-two_poles", "cartpole-three_poles", "manipulator-bring_peg",
         "humanoid_CMU-stand", "humanoid_CMU-walk", "humanoid_CMU-run", "stacker-stack_2",
         "stacker-stack_4", "quadruped-walk", "quadruped-run", "quadruped-fetch",
         "dog-stand", "dog-walk", "dog-trot", "dog-run", "dog-fetch", "point_mass-hard",
         "manipulator-insert_ball", "manipulator-insert_peg"]


def _refs(domain, task, seed, n, time_limit):
    return [suite.load(domain, task, task_kwargs={"random": seed + i, "time_limit": time_limit})
            for i in range(n)]


def _check_obs(obs, steps, where):
    for i, ts in enumerate(steps):
        for key, value in ts.observation.items():
            assert np.array_equal(obs[key][i], value), (where, i, key, obs[key][i], value)
            assert obs[key][i].shape == np.shape(value) and obs[key].dtype == np.float64


def _run(name, seed, n, threads, time_limit, steps, action_scale=1.0):
    """Step a pool and dm_control Environments with the same actions; returns the number of
    episodes that ended (by the time limit) and the count of nonzero rewards."""
    env_id = f"dm_control/{name}-v0"
    domain, task = parse_id(env_id)
    env = cypool.make_vec(env_id, n, num_threads=threads, time_limit=time_limit)
    refs = _refs(domain, task, seed, n, time_limit)
    spec = refs[0].action_spec()
    # gymnasium's sorted Dict by default (Shimmy's spaces: test_shimmy_layout.py)
    assert list(env.single_observation_space.spaces) == sorted(refs[0].observation_spec())
    np.testing.assert_array_equal(env.single_action_space.low, spec.minimum)
    np.testing.assert_array_equal(env.single_action_space.high, spec.maximum)
    obs, _ = env.reset(seed=seed)
    _check_obs(obs, [r.reset() for r in refs], "reset")
    rng = np.random.default_rng(seed)
    ends = nonzero = 0
    for t in range(steps):
        # beyond the bounds too: dm_control does not clip (MuJoCo clamps, ctrl keeps it)
        a = rng.uniform(spec.minimum, spec.maximum, (n, spec.shape[0])) * action_scale
        obs, rew, term, trunc, _ = env.step(a)
        out = [r.step(a[i]) for i, r in enumerate(refs)]
        _check_obs(obs, out, t)
        assert rew.dtype == np.float64
        for i, ts in enumerate(out):
            if ts.first():          # next_step autoreset: the reset step
                assert (rew[i], term[i], trunc[i]) == (0.0, False, False)
                continue
            assert rew[i] == ts.reward or (np.isnan(rew[i]) and np.isnan(ts.reward)), \
                (t, i, rew[i], ts.reward)
            nonzero += ts.reward != 0
            last = ts.last()
            assert term[i] == (last and ts.discount == 0), (t, i)
            assert trunc[i] == (last and ts.discount != 0), (t, i)
            ends += last
    env.close()
    return ends, nonzero


@pytest.mark.parametrize("name", PLANET)
@pytest.mark.parametrize("seed,threads", [(0, 1), (11, 2)])
def test_planet_tasks_equal_dm_control(name, seed, threads):
    ends, _ = _run(name, seed, 3, threads, 0.3 if name != "cheetah-run" else 0.1, 40)
    assert ends >= 3            # every env crossed its time limit at least once


@pytest.mark.parametrize("name", MORE)
def test_more_benchmarking_tasks_equal_dm_control(name):
    ends, _ = _run(name, 5, 2, 2, 0.2, 25, action_scale=1.5)
    assert ends >= 2


@pytest.mark.sweep(every=2)
@pytest.mark.parametrize("name", EXTRA)
@pytest.mark.parametrize("seed,threads", [(3, 1), (17, 2)])
def test_extra_tasks_equal_dm_control(name, seed, threads):
    ends, _ = _run(name, seed, 3, threads, 0.2, 30, action_scale=1.5)
    assert ends >= 3


@pytest.mark.parametrize("name", ["cheetah-run", "walker-walk", "cartpole-swingup",
                                  "point_mass-easy", "acrobot-swingup",
                                  "cartpole-two_poles", "cartpole-three_poles",
                                  "humanoid_CMU-stand", "humanoid_CMU-run", "stacker-stack_4",
                                  "quadruped-walk", "quadruped-fetch", "dog-trot", "dog-fetch",
                                  "point_mass-hard"])
def test_rewards_are_exercised(name):
    """Long enough episodes that the rewards' sigmoids give nonzero values (the tolerance
    branches are compared, not only their zero side)."""
    _, nonzero = _run(name, 3, 2, 2, 1.0, 60)
    assert nonzero > 0


def test_reset_without_seed_continues_each_stream():
    env_id = "dm_control/cartpole-swingup-v0"   # Gaussian draws: the cached value matters
    env = cypool.make_vec(env_id, 2, num_threads=1, time_limit=0.05)
    refs = _refs("cartpole", "swingup", 21, 2, 0.05)
    env.reset(seed=21)
    [r.reset() for r in refs]
    for _ in range(3):
        obs, _ = env.reset()
        _check_obs(obs, [r.reset() for r in refs], "unseeded reset")


@pytest.mark.parametrize("order", ["sorted", "dm_control"])
def test_flatten_obs_is_the_concatenation_in_the_key_order(order):
    """flatten_obs=True: the keys concatenated in obs_key_order's order (sorted, the
    default: FlattenObservation's vector of Shimmy's Dict; dm_control: flat_observation's)."""
    env = cypool.make_vec("dm_control/walker-walk-v0", 2, num_threads=1, flatten_obs=True,
                          obs_key_order=order)
    ref = _refs("walker", "walk", 4, 2, 25)
    obs, _ = env.reset(seed=4)
    a = np.full((2, 6), 0.2)
    for t in range(3):
        for i, r in enumerate(ref):
            o = (r.reset() if t == 0 else r.step(a[i])).observation
            keys = sorted(o) if order == "sorted" else list(o)
            flat = np.concatenate([np.ravel(o[k]) for k in keys])
            assert np.array_equal(obs[i], flat) and obs.dtype == np.float64
        obs = env.step(a)[0]
    assert env.single_observation_space.shape == (24,)
    env.close()


def test_snapshots_continue_exactly():
    env = cypool.make_vec("dm_control/cartpole-swingup-v0", 2, num_threads=1, time_limit=0.1)
    env.reset(seed=2)
    a = np.full((2, 1), 0.3)
    env.step(a)
    state = env.pool.engine.get_state(np.arange(2, dtype=np.int64))
    first = [env.step(a)[0]["position"].copy() for _ in range(15)]
    env.pool.engine.set_state(np.arange(2, dtype=np.int64), state)
    again = [env.step(a)[0]["position"].copy() for _ in range(15)]
    assert all(np.array_equal(x, y) for x, y in zip(first, again))


def test_snapshots_carry_the_drawn_target():
    """stacker's target lives in each env's task state: a snapshot carries it (and the next
    episodes' draws, from the restored stream)."""
    env = cypool.make_vec("dm_control/stacker-stack_2-v0", 2, num_threads=1, time_limit=0.05)
    env.reset(seed=2)
    a = np.full((2, 5), 0.3)
    env.step(a)
    state = env.pool.engine.get_state(np.arange(2, dtype=np.int64))
    first = [env.step(a)[0]["target_pos"].copy() for _ in range(12)]
    env.pool.engine.set_state(np.arange(2, dtype=np.int64), state)
    again = [env.step(a)[0]["target_pos"].copy() for _ in range(12)]
    assert all(np.array_equal(x, y) for x, y in zip(first, again))
    assert len({x.tobytes() for x in first}) > 1       # episodes with new targets


def test_bad_input_is_refused_before_any_env_moves():
    env = cypool.make_vec("dm_control/cheetah-run-v0", 2, num_threads=1)
    obs, _ = env.reset(seed=0)
    bad = np.zeros((2, 6))
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        env.step(bad)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros((2, 5)))
    obs2, *_ = env.step(np.zeros((2, 6)))
    ref = _refs("cheetah", "run", 0, 2, 10)
    for i, r in enumerate(ref):
        r.reset()
        assert np.array_equal(obs2["velocity"][i], r.step(np.zeros(6)).observation["velocity"])
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=2 ** 32 - 1)
    with pytest.raises(ValueError, match="time_limit"):
        cypool.make_vec("dm_control/cheetah-run-v0", 1, time_limit=0)
    with pytest.raises(TypeError, match="sparse"):
        cypool.make_vec("dm_control/cheetah-run-v0", 1, sparse=True)


def test_same_step_autoreset_gives_the_last_and_the_reset_observation():
    env = cypool.make_vec("dm_control/walker-walk-v0", 2, num_threads=2, time_limit=0.1,
                          autoreset_mode="same_step")
    refs = _refs("walker", "walk", 8, 2, 0.1)
    env.reset(seed=8)
    [r.reset() for r in refs]
    a = np.full((2, 6), 0.4)
    for t in range(9):
        obs, rew, term, trunc, info = env.step(a)
        out = [r.step(a[i]) for i, r in enumerate(refs)]
        assert rew.tolist() == [ts.reward for ts in out]
        if t % 4 == 3:      # the time limit: 0.1 s is 4 steps of 0.025 s
            assert trunc.all() and not term.any()
            for i, ts in enumerate(out):
                for key, value in ts.observation.items():
                    assert np.array_equal(info["final_obs"][i][key], value)
            _check_obs(obs, [r.step(a[i]) for i, r in enumerate(refs)], "reset")
        else:
            assert not trunc.any()
            _check_obs(obs, out, t)


@pytest.mark.parametrize("env_kw", [{"n_sub_steps": 3}, {"control_timestep": 0.02}])
def test_environment_kwargs_equal_dm_control(env_kw):
    env = cypool.make_vec("dm_control/cheetah-run-v0", 2, num_threads=2, time_limit=0.15,
                          environment_kwargs=env_kw)
    refs = [suite.load("cheetah", "run", task_kwargs={"random": 6 + i, "time_limit": 0.15},
                       environment_kwargs=env_kw) for i in range(2)]
    obs, _ = env.reset(seed=6)
    _check_obs(obs, [r.reset() for r in refs], "reset")
    a = np.full((2, 6), -0.7)
    ends = 0
    # walker sets its own control_timestep: dm_control refuses either kwarg on top of it
    with pytest.raises(ValueError if "n_sub_steps" in env_kw else TypeError):
        suite.load("walker", "run", environment_kwargs=env_kw)
    with pytest.raises(ValueError if "n_sub_steps" in env_kw else TypeError):
        cypool.make_vec("dm_control/walker-run-v0", 1, environment_kwargs=env_kw)
    for t in range(40):
        obs, rew, term, trunc, _ = env.step(a)
        out = [r.step(a[i]) for i, r in enumerate(refs)]
        _check_obs(obs, out, t)
        ends += int(trunc.sum())
        assert [float(x) for x in rew] == [0.0 if ts.first() else ts.reward for ts in out]
    assert ends >= 4


def test_manipulator_initial_states_equal_dm_control():
    """bring_ball's three initial states (object in hand, in the target, anywhere: choice
    with p) over many resets: 8 envs, episodes of 2 steps."""
    _run("manipulator-bring_ball", 40, 8, 2, 0.02, 24)


def test_manipulator_bring_peg_rewards_equal_dm_control():
    """bring_peg's reward (grasp, pinch, and the target peg's sites placed from its drawn
    pose) over many initial states, the in-hand ones giving nonzero grasp terms."""
    _, nonzero = _run("manipulator-bring_peg", 40, 8, 2, 0.02, 24)
    assert nonzero > 0


@pytest.mark.parametrize("name", ["stacker-stack_2", "stacker-stack_4"])
def test_stacker_initial_states_equal_dm_control(name):
    """stacker's rejection loop (arm, randint target height, boxes, until no contact) over
    many resets: 8 envs, episodes of 2 steps."""
    _run(name, 60, 8, 2, 0.02, 24)


def test_quadruped_fetch_initial_states_equal_dm_control():
    """fetch's placement (azimuth, spawn point, the non-contacting height search, the ball's
    pose and Gaussian velocity) over many resets: 6 envs, episodes of 2 steps."""
    _run("quadruped-fetch", 70, 6, 2, 0.04, 20)


def test_dog_fetch_initial_states_equal_dm_control():
    """dog's resets over many episodes (three Gaussians per reset in stand, five in fetch: the
    cached one carried into the next episode) and fetch's thrown ball: 4 envs, 2 steps each."""
    _run("dog-fetch", 90, 4, 2, 0.03, 20)


@pytest.mark.parametrize("task", ["lqr_2_1", "lqr_6_2"])
@pytest.mark.parametrize("time_limit", [float("inf"), 0.3])
def test_lqr_equal_dm_control(task, time_limit):
    """lqr: each env's stiffnesses drawn from its seed into its own model (before the
    episode's draws), no time limit by default (a short one crosses autoresets), and a
    reseeded reset redraws them."""
    n = 3
    env = cypool.make_vec(f"dm_control/lqr-{task}-v0", n, num_threads=2, time_limit=time_limit)
    spec_n = env.single_action_space.shape[0]
    assert np.all(env.single_action_space.high == 1e10)
    rng = np.random.default_rng(1)
    ends = 0
    for seed in (4, 40):
        refs = _refs("lqr", task, seed, n, time_limit)
        obs, _ = env.reset(seed=seed)
        _check_obs(obs, [r.reset() for r in refs], "reset")
        for t in range(25):
            a = rng.uniform(-1, 1, (n, spec_n))
            obs, rew, term, trunc, _ = env.step(a)
            out = [r.step(a[i]) for i, r in enumerate(refs)]
            _check_obs(obs, out, t)
            for i, ts in enumerate(out):
                if ts.first():
                    continue
                assert rew[i] == ts.reward, (t, i, rew[i], ts.reward)
                assert term[i] == (ts.last() and ts.discount == 0)
                assert trunc[i] == (ts.last() and ts.discount != 0)
                ends += ts.last()
    assert ends == (0 if time_limit == float("inf") else 2 * n * 2)


@pytest.mark.parametrize("seed,threads", [(3, 1), (30, 2)])
def test_fish_swim_targets_equal_dm_control(seed, threads):
    """fish swim: each episode's target drawn into the env's own model (it collides with
    the fish): 4 envs, episodes of 10 steps."""
    ends, nonzero = _run("fish-swim", seed, 4, threads, 0.4, 45)
    assert ends >= 16 and nonzero > 0


@pytest.mark.parametrize("name", ["manipulator-insert_ball", "manipulator-insert_peg"])
def test_manipulator_insert_initial_states_equal_dm_control(name):
    """insert's receptacle, moved in each env's own model inside the rejection loop (it
    collides), over many resets: 8 envs, episodes of 2 steps."""
    _run(name, 50, 8, 2, 0.02, 24)


@pytest.mark.parametrize("seed,threads", [(5, 1), (12, 2)])
def test_quadruped_escape_equal_dm_control(seed, threads):
    """escape: each episode's terrain (bumps from the env's stream, scipy's cubic-spline zoom,
    the bowl) in the env's own model, the height search on it, rangefinders: 2 envs,
    episodes of 5 steps."""
    ends, nonzero = _run("quadruped-escape", seed, 2, threads, 0.1, 16)
    assert ends >= 4 and nonzero > 0


def test_quadruped_escape_snapshot_rebuilds_the_terrain():
    """A snapshot carries the bumps, not the terrain: restoring env 0's state into env 1,
    whose model holds another terrain, rebuilds env 0's terrain there at the next step."""
    env = cypool.make_vec("dm_control/quadruped-escape-v0", 2, num_threads=1, time_limit=0.5)
    env.reset(seed=3)
    a = np.full((2, 12), 0.2)
    env.step(a)
    models = env.pool.family.state.env_models   # env i: models 2i (and its twin 2i + 1)
    hf0 = models[0].hfield_data.copy()
    assert not np.array_equal(hf0, models[2].hfield_data)
    state = env.pool.engine.get_state(np.array([0], dtype=np.int64))
    env.pool.engine.set_state(np.array([1], dtype=np.int64), state)
    env.step(a)
    for m in models[:4]:
        assert np.array_equal(m.hfield_data, hf0)


def _same(a, b, where):
    for k in a[0]:
        assert np.array_equal(a[0][k], b[0][k]), (where, k)
    for x, y in zip(a[1:4], b[1:4]):
        assert np.array_equal(x, y), where


@pytest.mark.parametrize("env_id", cypool.dm_control.family.env_ids())
def test_pickled_pool_continues_exactly(env_id):
    """A pool pickled mid-episode continues as the original does, bit for bit, across an
    autoreset: the snapshot carries the mjData buffer and the task state, and the first
    legacy step after a restore rebuilds the arena (contacts, constraint rows) that mj_step2
    reads (walker, humanoid, dog, ... diverged at once before)."""
    import pickle

    env = cypool.make_vec(env_id, 2, num_threads=1, time_limit=0.12)
    env.reset(seed=5)
    sp = env.single_action_space
    acts = np.random.default_rng(1).uniform(sp.low, sp.high, (14, 2) + sp.shape)
    for a in acts[:4]:
        env.step(a)
    copy = pickle.loads(pickle.dumps(env))
    ends = 0
    for t, a in enumerate(acts[4:]):
        want = env.step(a)
        _same(copy.step(a), want, f"{env_id} step {t}")
        ends += int(want[3].sum())
    assert ends >= 2                    # an episode ended in each env and was reset
    env.close(), copy.close()
