"""cypool.envpool serves EnvPool 1.2.5's dm_control names (``CheetahRun-v1``, ...) for the
tasks cypool serves: names, options, spaces, dtypes and info keys checked against the
installed envpool, numbers against dm_control itself (np.array_equal), pixels against
physics.render; EnvPool's other dm_control ids are refused by name."""
import sys
from pathlib import Path

import numpy as np
import pytest

import cypool
import cypool.envpool as cep

suite = pytest.importorskip("dm_control.suite", reason="dm_control is a test dependency")

from cypool.dm_control.envpool_names import ENVPOOL_SUITE, FRAME_SKIP, envpool_id  # noqa: E402
from cypool.dm_control.family import (SUITE, domain_module, merge_kwargs,  # noqa: E402
                                      n_sub_steps, parse_id)

sys.path.insert(0, str(Path(__file__).parent.parent))
from _envpool_ref import real_envpool  # noqa: E402


def _envpool_tasks():
    reg = real_envpool("envpool.mujoco.dmc.registration")
    return [(d, t) for d, t, _ in reg.dmc_mujoco_envs]


def _served():
    return [(d, t) for d, tasks in SUITE.items() for t in tasks]


def test_names_are_envpools_and_every_envpool_id_is_served_or_refused():
    envpool = real_envpool()
    theirs = _envpool_tasks()
    assert sorted(theirs) == sorted(suite.ALL_TASKS)
    assert sorted(theirs) == sorted((d, t) for d, ts in ENVPOOL_SUITE.items() for t in ts)
    registered = set(envpool.list_all_envs())
    listed = set(cep.list_all_envs())
    for d, t in theirs:
        eid = envpool_id(d, t)
        assert eid in registered
        if (d, t) in _served():
            assert eid in listed
        else:
            assert eid not in listed
            with pytest.raises(ValueError, match=f"EnvPool's dm_control {d} {t}, which "
                                                 "cypool does not serve yet"):
                cep.make_gymnasium(eid)
    assert {envpool_id(d, t) for d, t in _served()} <= listed


@pytest.mark.parametrize("domain,task", _served())
def test_config_and_spaces_are_envpools(domain, task):
    envpool = real_envpool()
    eid = envpool_id(domain, task)
    ref = envpool.make_spec(eid)
    ours = cep.make_spec(eid)
    theirs = ref.config._asdict()
    mine = ours.config._asdict()
    theirs.pop("base_path"), mine.pop("base_path")
    assert list(mine) == list(theirs) and mine == theirs
    # EnvPool's frame_skip is dm_control's n_sub_steps, which cypool's pool runs
    env_id = f"dm_control/{domain}-{task}-v0"
    mod = domain_module(domain)
    kw = merge_kwargs(env_id, mod, {})
    timestep = suite.load(domain, task).physics.timestep()
    assert FRAME_SKIP[domain] == theirs["frame_skip"] == n_sub_steps(env_id, mod, kw, timestep)
    # dm_control's keys, in EnvPool's order, shapes and dtypes. EnvPool's spec is one per
    # domain: it adds the keys of the domain's other tasks (finger spin: target_position,
    # dist_to_target; fish upright: target; humanoid: run_pure_state's position and velocity)
    # that dm_control's task does not have. EnvPool's bounds are (DBL_MIN, DBL_MAX), which its
    # own negative observations leave: cypool's are (-inf, inf)
    o_ref, o = ref.observation_space, ours.observation_space
    assert list(o.spaces) == list(suite.load(domain, task).observation_spec())
    # the same keys; in EnvPool's order but for fish swim, whose dm_control order puts target
    # before velocity (EnvPool's per-domain spec puts it last): cypool keeps dm_control's
    shared = [k for k in o_ref.spaces if k in o.spaces]
    assert sorted(shared) == sorted(o.spaces)
    assert shared == list(o.spaces) or (domain, task) == ("fish", "swim")
    for k in o.spaces:
        assert o[k].shape == o_ref[k].shape and o[k].dtype == o_ref[k].dtype
    assert ours.action_space == ref.action_space
    px = cep.make_spec(eid, from_pixels=True, render_width=40, render_height=30)
    px_ref = envpool.make_spec(eid, from_pixels=True, render_width=40, render_height=30)
    assert px.observation_space == px_ref.observation_space
    assert px.config._asdict().keys() == px_ref.config._asdict().keys()


def test_results_are_dm_controls_with_envpools_types():
    """Env i seeded seed + i is dm_control's random=seed + i; float32 rewards, EnvPool's
    info keys and dtypes; max_episode_steps truncates (no dm_control time limit of its own)
    and the next step resets (reward 0, elapsed_step 0)."""
    envpool = real_envpool()
    n, seed, limit = 2, 5, 3
    env = cep.make_gymnasium("CheetahRun-v1", num_envs=n, seed=seed, max_episode_steps=limit)
    ref_pool = envpool.make_gymnasium("CheetahRun-v1", num_envs=n, seed=seed,
                                      max_episode_steps=limit)
    refs = [suite.load("cheetah", "run", task_kwargs={"random": seed + i}) for i in range(n)]
    rng = np.random.default_rng(0)
    try:
        obs, info = env.reset()
        r_obs, r_info = ref_pool.reset()
        assert info.keys() == r_info.keys()
        for k in info:
            if isinstance(info[k], np.ndarray):
                assert info[k].dtype == r_info[k].dtype
        out = [r.reset() for r in refs]
        for t in range(2 * limit + 2):
            for i, ts in enumerate(out):
                for k, v in ts.observation.items():
                    assert np.array_equal(obs[k][i], v), (t, i, k)
            a = rng.uniform(-1, 1, (n, 6))
            obs, rew, term, trunc, info = env.step(a)
            _, r_rew, r_term, r_trunc, r_info = ref_pool.step(a)
            assert rew.dtype == r_rew.dtype == np.float32
            assert info.keys() == r_info.keys()
            assert info["elapsed_step"].dtype == r_info["elapsed_step"].dtype
            assert np.array_equal(info["elapsed_step"], r_info["elapsed_step"])
            assert np.array_equal(trunc, r_trunc) and np.array_equal(term, r_term)
            for i, r in enumerate(refs):
                if info["elapsed_step"][i] == 0:       # EnvPool's next-step reset
                    out[i] = r.reset()
                    assert rew[i] == 0.0
                else:
                    out[i] = r.step(a[i])
                    assert rew[i] == np.float32(out[i].reward)
                assert trunc[i] == (info["elapsed_step"][i] == limit)
    finally:
        env.close()
        ref_pool.close()


def test_from_pixels_frames_are_physics_render(monkeypatch):
    monkeypatch.setenv("MUJOCO_GL", "egl")
    n, seed, w, h = 2, 3, 48, 32
    env = cep.make_gymnasium("WalkerWalk-v1", num_envs=n, seed=seed, num_threads=2,
                             from_pixels=True, render_width=w, render_height=h,
                             render_camera_id=0)
    refs = [suite.load("walker", "walk", task_kwargs={"random": seed + i}) for i in range(n)]
    try:
        assert env.observation_space == cypool.make_vec(
            "dm_control/walker-walk-v0", 1, from_pixels=True, channels_first=True, width=w,
            height=h).single_observation_space["pixels"]
        obs, _ = env.reset()
        for r in refs:
            r.reset()
        for t in range(4):
            assert obs.shape == (n, 3, h, w) and obs.dtype == np.uint8
            for i, r in enumerate(refs):
                frame = r.physics.render(h, w, camera_id=0)
                assert np.array_equal(obs[i], frame.transpose(2, 0, 1)), (t, i)
            a = np.full((n, 6), 0.3)
            obs = env.step(a)[0]
            for i, r in enumerate(refs):
                r.step(a[i])
    finally:
        env.close()


def test_options_cypool_does_not_run_are_refused():
    with pytest.raises(ValueError, match="frame_skip=2 selects an EnvPool variant"):
        cep.make_gymnasium("WalkerWalk-v1", frame_skip=2)
    with pytest.raises(ValueError, match="task_name='run' selects an EnvPool variant"):
        cep.make_gymnasium("WalkerWalk-v1", task_name="run")
    with pytest.raises(ValueError, match="frame_stack=4 selects an EnvPool variant"):
        cep.make_gymnasium("CheetahRun-v1", frame_stack=4)
    # an error of the pool names EnvPool's id
    with pytest.raises(ValueError, match=r"^ManipulatorBringBall-v1: .*camera_id=9 is invalid"):
        cep.make_gymnasium("ManipulatorBringBall-v1", from_pixels=True, render_camera_id=9)
    with pytest.raises(ValueError, match="camera_id=5 is invalid"):
        cep.make_gymnasium("CheetahRun-v1", from_pixels=True, render_camera_id=5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'time_limit'"):
        cep.make_gymnasium("CheetahRun-v1", time_limit=3)
    assert parse_id("dm_control/ball_in_cup-catch-v0") == ("ball_in_cup", "catch")
    assert envpool_id("ball_in_cup", "catch") == "BallInCupCatch-v1"
