"""Bad input raises a clear exception before any env moves; engine faults become exceptions."""
import os

import numpy as np
import pytest
import gymnasium as gym

import cypool


@pytest.fixture
def env():
    e = cypool.make_vec("Ant-v5", 3, num_threads=2)
    e.reset(seed=0)
    yield e
    e.close()


def test_unknown_id_names_close_matches():
    with pytest.raises(ValueError, match="Ant-v5"):
        cypool.make_vec("Ant-v9", 2)     # Ant-v4 and -v5 are served
    with pytest.raises(TypeError, match="env_id"):
        cypool.make_vec(5, 2)


def test_unknown_kwarg_is_type_error_naming_it():
    with pytest.raises(TypeError, match="ctrl_cost_wieght.*ctrl_cost_weight"):
        cypool.make_vec("Ant-v5", 2, ctrl_cost_wieght=0.1)


@pytest.mark.parametrize("kwargs, exc", [
    (dict(num_envs=0), ValueError), (dict(num_envs=-3), ValueError),
    (dict(num_envs=2.0), TypeError), (dict(num_envs=2, num_threads=0), ValueError),
    (dict(num_envs=2, num_threads="2"), TypeError),
    (dict(num_envs=2, autoreset_mode="sometimes"), ValueError),
    (dict(num_envs=2, max_episode_steps=0), ValueError),
    (dict(num_envs=2, frame_skip=0), ValueError),
    (dict(num_envs=2, healthy_z_range=0.2), TypeError),
    (dict(num_envs=2, ctrl_cost_weight="big"), TypeError),
    (dict(num_envs=2, xml_file="no_such.xml"), ValueError),
    (dict(num_envs=2, seed=-1), ValueError),
])
def test_bad_constructor_arguments(kwargs, exc):
    with pytest.raises(exc):
        cypool.make_vec("Ant-v5", **kwargs)


def _state(env):
    return env.step.__self__.pool.engine.obs.copy(), env.step.__self__.pool.engine.elapsed()


@pytest.mark.parametrize("bad, exc", [
    (np.zeros((3, 7)), ValueError),            # wrong shape
    (np.zeros((2, 8)), ValueError),            # wrong batch
    (np.zeros(24), ValueError),                # flat
    (np.full((3, 8), np.nan), ValueError),     # NaN
    (np.full((3, 8), np.inf), ValueError),     # Inf
    (np.zeros((3, 8), np.complex128), TypeError),
    (np.array([["a"] * 8] * 3), TypeError),
])
def test_bad_actions_leave_every_env_untouched(env, bad, exc):
    before_obs, before_elapsed = _state(env)
    with pytest.raises(exc):
        env.step(bad)
    after_obs, after_elapsed = _state(env)
    assert np.array_equal(before_obs, after_obs)
    assert np.array_equal(before_elapsed, after_elapsed)


def test_one_nan_row_rejects_whole_batch(env):
    a = np.zeros((3, 8))
    a[1, 3] = np.nan
    with pytest.raises(ValueError, match=r"\[1\]"):
        env.step(a)


def test_bad_reset_arguments(env):
    with pytest.raises(TypeError):
        env.reset(options={"reset_mask": [True, False, True]})
    with pytest.raises(ValueError):
        env.reset(options={"reset_mask": np.ones(2, bool)})
    with pytest.raises(TypeError):
        env.reset(options={"reset_mask": np.ones(3, np.int64)})
    with pytest.raises(ValueError):
        env.reset(options={"reset_mask": np.zeros(3, bool)})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"reset_mask": np.ones(3, bool), "noise": 1})
    with pytest.raises(ValueError):
        env.reset(seed=[1, 2])
    with pytest.raises(TypeError):
        env.reset(seed="7")
    with pytest.raises(ValueError):
        env.reset(seed=-5)


def _ant_xml_with_memory(tmp_path, memory):
    src = open(os.path.join(os.path.dirname(gym.__file__), "envs/mujoco/assets/ant.xml")).read()
    path = tmp_path / "ant_small_stack.xml"
    path.write_text(src.replace('<mujoco model="ant">',
                                f'<mujoco model="ant"><size memory="{memory}"/>'))
    return str(path)


def test_mujoco_fatal_error_becomes_exception_and_pool_recovers(tmp_path):
    # A tiny arena: mj_step hits mju_error ("stack overflow") once contacts appear.
    xml = _ant_xml_with_memory(tmp_path, "12K")
    env = cypool.make_vec("Ant-v5", 3, num_threads=2, xml_file=xml)
    env.reset(seed=0)
    with pytest.raises(cypool.EngineError) as info:
        for _ in range(50):
            env.step(np.zeros((3, 8)))
    err = info.value
    assert err.env_ids and all(0 <= i < 3 for i in err.env_ids)
    assert "stack" in err.messages[0]
    assert "env" in str(err)
    obs, _ = env.reset(seed=0)         # the pool works again after reset
    assert np.isfinite(obs).all()
    env.step(np.zeros((3, 8)))
    env.close()


def test_mujoco_warnings_reported_in_info_not_printed(capfd, tmp_path):
    # Without control limits, huge actions make the simulation diverge: MuJoCo warns
    # (bad qacc) and resets that env's state; cypool reports it per env and prints nothing.
    src = open(os.path.join(os.path.dirname(gym.__file__), "envs/mujoco/assets/hopper.xml")).read()
    xml = tmp_path / "hopper_unlimited.xml"
    xml.write_text(src.replace('ctrllimited="true"', 'ctrllimited="false"'))
    env = cypool.make_vec("Hopper-v5", 3, num_threads=2, terminate_when_unhealthy=False,
                          xml_file=str(xml))
    env.reset(seed=0)
    a = np.zeros((3, 3))
    a[1] = 1e12                                   # only env 1 diverges
    *_, info = env.step(a)
    assert info["_mujoco_warnings"].tolist() == [False, True, False]
    assert info["mujoco_warnings"][1] > 0
    obs, *_ = env.step(np.zeros((3, 3)))
    assert np.isfinite(obs).all()                 # nothing spread to the other envs
    assert "WARNING" not in capfd.readouterr().err
    env.close()
