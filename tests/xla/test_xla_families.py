"""env.xla() on MuJoCo (Hopper-v5) and Atari (Pong-v5): jitted lax.scan of step equals the
Python path, with jax's default float32 actions and with float64 actions under x64."""
import os

import gymnasium as gym
import jax
import numpy as np
import pytest

import cypool
from _xla_helpers import assert_same, python_steps, scan_steps, x64


def _pair(env_id, n, threads, seed, **kw):
    env = cypool.make_vec(env_id, num_envs=n, num_threads=threads, **kw)
    ref = cypool.make_vec(env_id, num_envs=n, num_threads=threads, **kw)
    env.reset(seed=seed)
    ref.reset(seed=seed)
    return env, ref


@pytest.mark.parametrize("threads,seed", [(1, 0), (2, 5)])
def test_hopper_float32_actions(threads, seed):
    # Python path given the same float32 actions; without x64 jax holds float64 obs as float32
    env, ref = _pair("Hopper-v5", 4, threads, seed)
    acts = np.random.default_rng(seed).uniform(-1, 1, (80, 4, 3)).astype(np.float32)
    handle, recv, send, step = env.xla()
    outs = scan_steps(step, handle, acts)
    py = python_steps(ref, acts)
    assert any(p[2].any() for p in py)             # falls ended episodes: autoreset covered
    assert outs[0].dtype == np.float32
    assert_same(outs, py, cast=True)
    assert set(outs[4]) >= {"x_position", "x_velocity", "_x_position", "env_id"}
    env.close(), ref.close()


@pytest.mark.parametrize("threads,seed,dtype", [(1, 3, np.float64), (2, 11, np.float64),
                                                (2, 6, np.float32)])
def test_hopper_actions_x64_exact(threads, seed, dtype):
    with x64():
        env, ref = _pair("Hopper-v5", 4, threads, seed)
        acts = np.random.default_rng(seed).uniform(-1, 1, (80, 4, 3)).astype(dtype)
        handle, recv, send, step = env.xla()
        outs = scan_steps(step, handle, acts)
        assert outs[0].dtype == np.float64 and outs[1].dtype == np.float64
        assert_same(outs, python_steps(ref, acts))          # no cast: bit for bit
        env.close(), ref.close()


def test_mujoco_warnings_key_declared(tmp_path):
    # a key only some steps report (MuJoCo's warning count) is declared up front
    src = open(os.path.join(os.path.dirname(gym.__file__),
                            "envs/mujoco/assets/hopper.xml")).read()
    xml = tmp_path / "hopper_unlimited.xml"
    xml.write_text(src.replace('ctrllimited="true"', 'ctrllimited="false"'))
    with x64():
        kw = dict(terminate_when_unhealthy=False, xml_file=str(xml))
        env, ref = _pair("Hopper-v5", 3, 2, 0, **kw)
        acts = np.full((20, 3, 3), 1e30)
        handle, recv, send, step = env.xla()
        outs = scan_steps(step, handle, acts)
        py = python_steps(ref, acts)
        assert any("mujoco_warnings" in p[4] for p in py)
        assert_same(outs, py)
        env.close(), ref.close()


@pytest.mark.parametrize("threads,seed", [(1, 0), (2, 4)])
def test_pong_scan_matches_python(threads, seed):
    env, ref = _pair("Pong-v5", 3, threads, seed)
    acts = np.random.default_rng(seed).integers(0, 6, (60, 3)).astype(np.int32)
    handle, recv, send, step = env.xla()
    outs = scan_steps(step, handle, acts)
    assert outs[0].dtype == np.uint8 and outs[0].shape == (60, 3, 4, 84, 84)
    assert_same(outs, python_steps(ref, acts))
    env.close(), ref.close()


def test_pong_int64_actions_x64():
    with x64():
        env, ref = _pair("Pong-v5", 2, 2, 1)
        acts = np.random.default_rng(2).integers(0, 6, (40, 2))             # int64
        handle, recv, send, step = env.xla()
        outs = scan_steps(step, handle, acts)
        assert_same(outs, python_steps(ref, acts))
        env.close(), ref.close()


def test_native_route_used_and_bad_box_action():
    env, ref = _pair("Hopper-v5", 2, 1, 0)
    handle, recv, send, step = env.xla()
    assert step.adapter.native is not None
    bad = np.zeros((2, 3), np.float32)
    bad[1, 2] = np.inf
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"Hopper-v5.step\(\).*NaN or Inf"):
        jax.block_until_ready(jax.jit(lambda h: step(h, bad))(handle))
    a = np.zeros((2, 3), np.float32)           # nothing moved
    assert np.array_equal(env.step(a)[0], ref.step(a)[0])
    env.close(), ref.close()


def test_pong_game_ends_info_native():
    # time-limit ends write game_length / game_return; their masks hold only there
    env, ref = _pair("Pong-v5", 3, 2, 2, max_episode_steps=25)
    handle, recv, send, step = env.xla()
    assert step.adapter.native is not None and not step.adapter.py_rows
    acts = np.random.default_rng(4).integers(0, 6, (60, 3)).astype(np.int32)
    outs = scan_steps(step, handle, acts)
    py = python_steps(ref, acts)
    assert sum(int(p[4].get("_game_length", np.zeros(1, bool)).sum()) for p in py) >= 3
    assert_same(outs, py)
    env.close(), ref.close()
