"""Bad input: refused with a clear TypeError/ValueError before any env moves."""
import gc

import numpy as np
import pytest

import cypool


@pytest.fixture(scope="module")
def env():
    e = cypool.make_vec("Breakout-v5", 3, num_threads=2)
    e.reset(seed=0)
    yield e
    e.close()


@pytest.mark.parametrize("actions", [[0, 1, 4], [0, -1, 2], [18, 0, 0], [0, 0, -100]])
def test_action_out_of_range(env, actions):
    before = env.pool.family.engine.game_steps().copy()
    with pytest.raises(ValueError, match=r"actions must be in \[0, 4\)"):
        env.step(np.array(actions))
    assert np.array_equal(env.pool.family.engine.game_steps(), before)   # nothing moved


@pytest.mark.parametrize("actions,exc", [
    (np.array([0.0, 1.0, 2.0]), TypeError),
    (np.array([True, False, True]), TypeError),
    (np.array([0, 1]), ValueError),
    (np.zeros((3, 1), np.int64), ValueError),
    (["a", "b", "c"], TypeError),
])
def test_action_bad_type_or_shape(env, actions, exc):
    with pytest.raises(exc):
        env.step(actions)


def test_actions_ok_after_errors(env):
    obs, r, term, trunc, info = env.step(np.array([1, 2, 3], np.uint8))
    assert obs.shape == (3, 4, 84, 84)
    env.step([0, 1, 2])                      # a list of ints is fine


def test_unknown_game_names_close_matches():
    with pytest.raises(ValueError, match="Breakout-v5"):
        cypool.make_vec("Breakot-v5", 1)
    with pytest.raises(ValueError, match="MsPacman-v5"):
        cypool.make_vec("MsPacmann-v5", 1)


def test_missing_rom_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("ALE_ROMS_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"'pong'.*Pong-v5"):
        cypool.make_vec("Pong-v5", 1)


def test_not_a_rom_is_a_clear_error(tmp_path, monkeypatch):
    """ALE would exit the process on a file that has a game's name but is no cartridge; the
    shim refuses any file without the game's MD5 (as ale-py does), at construction."""
    (tmp_path / "pong.bin").write_bytes(bytes(7))
    (tmp_path / "breakout.bin").write_bytes(bytes(range(256)) * 16)
    monkeypatch.setenv("ALE_ROMS_DIR", str(tmp_path))
    with pytest.raises(RuntimeError, match=r"pong.bin is not ALE's pong ROM"):
        cypool.make_vec("Pong-v5", 1)
    with pytest.raises(RuntimeError, match=r"breakout.bin is not ALE's breakout ROM"):
        cypool.make_vec("Breakout-v5", 1)
    (tmp_path / "random.bin").write_bytes(bytes(4096))
    from cypool.atari._pool import AlePool
    from cypool.atari.family import merge_kwargs
    from cypool.atari.resize import make_plan

    with pytest.raises(RuntimeError, match="not a ROM supported by ALE"):
        AlePool(str(tmp_path / "random.bin"), 1, 1, 100, merge_kwargs("Pong-v5", {}),
                make_plan(210, 160, 84, 84), 4)


@pytest.mark.parametrize("kwargs", [
    dict(img_height=0), dict(img_width=-3), dict(stack_num=0), dict(frame_skip=0),
    dict(noop_max=-1), dict(repeat_action_probability=1.5),
    dict(repeat_action_probability=-0.1), dict(repeat_action_probability=float("nan")),
    dict(mode=3), dict(difficulty=7), dict(mode=-2), dict(img_height=100000),
])
def test_impossible_options(kwargs):
    with pytest.raises(ValueError):
        cypool.make_vec("Breakout-v5", 1, **kwargs)


@pytest.mark.parametrize("kwargs", [
    dict(stack_num=2.0), dict(gray_scale="yes"), dict(episodic_life=1),
    dict(repeat_action_probability="0.1"), dict(mode=1.5), dict(stak_num=4),
])
def test_wrong_option_types(kwargs):
    with pytest.raises(TypeError):
        cypool.make_vec("Breakout-v5", 1, **kwargs)


def test_unknown_option_suggests():
    with pytest.raises(TypeError, match="stack_num"):
        cypool.make_vec("Pong-v5", 1, stack_nums=4)


def test_max_episode_steps_must_be_positive():
    with pytest.raises(ValueError):
        cypool.make_vec("Pong-v5", 1, max_episode_steps=0)


def test_engine_error_in_the_kernel_is_raised_and_recoverable(monkeypatch):
    """A ROM copy that disappears between construction and the first reset (whose seeded
    ROM load runs in the kernel) fails those envs with an EngineError naming ALE's message;
    the process survives and a later reset, with the file back, works. (The pool's copy is a
    sealed memfd that cannot disappear; without memfd it is a private file, used here.)"""
    import os

    monkeypatch.delattr(os, "memfd_create")
    env = cypool.make_vec("Pong-v5", 2, num_threads=2)
    try:
        copy = env.pool.family.engine._rom_copy
        assert copy._fd < 0 and os.path.isfile(copy.path)
        with open(copy.path, "rb") as f:
            data = f.read()
        os.unlink(copy.path)
        with pytest.raises(cypool.EngineError, match="ROM file not found") as err:
            env.reset(seed=0)
        assert err.value.env_ids == [0, 1]
        with open(copy.path, "wb") as f:
            f.write(data)
        obs, _ = env.reset(seed=0)
        ref = cypool.make_vec("Pong-v5", 2)
        assert np.array_equal(obs, ref.reset(seed=0)[0])
        ref.close()
    finally:
        env.close()
    del env, err
    gc.collect()
    assert not os.path.exists(os.path.dirname(copy.path))    # removed with the pool


RELOAD_WITHOUT_FILE = """
import os, numpy as np, cypool
del os.memfd_create
env = cypool.make_vec("Pong-v5", 2, num_threads=1)
env.reset(seed=0)
env.pool.family.configure_envs(np.array([1], np.int64), {"repeat_action_probability": 0.25})
os.unlink(env.pool.family.engine._rom_copy.path)
try:
    env.reset()              # env 1 reloads its ROM (ALE would exit on a missing file)
except cypool.EngineError as exc:
    print("ENGINE-ERROR", exc.env_ids, exc)
"""


def test_rom_gone_at_a_reload_is_an_engine_error():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", RELOAD_WITHOUT_FILE], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert "ENGINE-ERROR [1]" in proc.stdout and "ROM file not found" in proc.stdout, \
        proc.stdout


def test_rom_copy_is_sealed_and_closed_with_the_pool():
    """The copy ALE reads is a memfd nobody can write, released with the pool."""
    import os

    env = cypool.make_vec("Pong-v5", 1)
    copy = env.pool.family.engine._rom_copy
    assert copy._fd >= 0 and copy.path == f"/proc/self/fd/{copy._fd}"
    with pytest.raises(PermissionError):
        with open(copy.path, "r+b") as f:
            f.write(b"x")
    with pytest.raises(PermissionError):
        os.write(copy._fd, b"x")
    env.reset(seed=0)
    env.close()
    del env
    gc.collect()
    assert copy._fd < 0


def _roll(env, seed, steps=40):
    """Observations and rewards of a seeded reset and `steps` fixed actions."""
    obs = [env.reset(seed=seed)[0]]
    rew = []
    for t in range(steps):
        o, r, *_ = env.step(np.full(env.num_envs, t % env.single_action_space.n))
        obs.append(o)
        rew.append(r)
    return np.stack(obs), np.stack(rew)


@pytest.mark.parametrize("replacement", ["breakout", "junk", "removed"])
def test_rom_replaced_after_verification_plays_the_verified_bytes(tmp_path, monkeypatch,
                                                                  replacement):
    """The ROM's MD5 is checked at construction; ALE reads a ROM at every seeded reset and
    settings reload. A file replaced in between (another game's ROM under Pong's name would
    play Breakout; junk or a missing file failed the reset) changes nothing: the pool plays
    the bytes it verified, the same frames as a pool built from the genuine ROM."""
    import shutil

    src = cypool.atari.games.roms_dir()
    rom = tmp_path / "pong.bin"
    shutil.copy(src / "pong.bin", rom)
    monkeypatch.setenv("ALE_ROMS_DIR", str(tmp_path))
    env = cypool.make_vec("Pong-v5", 2, num_threads=2)
    monkeypatch.delenv("ALE_ROMS_DIR")
    ref = cypool.make_vec("Pong-v5", 2, num_threads=2)
    try:
        if replacement == "breakout":
            shutil.copy(src / "breakout.bin", rom)
        elif replacement == "junk":
            rom.write_bytes(bytes(range(256)) * 16)
        else:
            rom.unlink()
        got, want = _roll(env, 0), _roll(ref, 0)          # the first load
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        for e in (env, ref):      # a settings change: a reload at env 1's next reset
            e.pool.family.configure_envs(np.array([1], np.int64),
                                         {"repeat_action_probability": 0.25})
        got, want = _roll(env, None), _roll(ref, None)    # unseeded: the reload keeps ALE's stream
        assert np.array_equal(got[0], want[0])
        got, want = _roll(env, 1), _roll(ref, 1)          # a seeded load
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    finally:
        env.close()
        ref.close()
