"""Bad input: refused with a clear TypeError/ValueError before any env moves."""
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
    before = env._family.engine.game_steps().copy()
    with pytest.raises(ValueError, match=r"actions must be in \[0, 4\)"):
        env.step(np.array(actions))
    assert np.array_equal(env._family.engine.game_steps(), before)   # nothing moved


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


def test_engine_error_in_the_kernel_is_raised_and_recoverable(tmp_path, monkeypatch):
    """A ROM that disappears between construction and the first reset (whose seeded ROM
    load runs in the kernel) fails those envs with an EngineError naming ALE's message; the
    process survives and a later reset, with the file back, works."""
    import shutil

    from ale_py.roms import get_rom_path

    rom, original = tmp_path / "pong.bin", get_rom_path("pong")
    shutil.copy(original, rom)
    monkeypatch.setenv("ALE_ROMS_DIR", str(tmp_path))
    env = cypool.make_vec("Pong-v5", 2, num_threads=2)
    try:
        rom.unlink()
        with pytest.raises(cypool.EngineError, match="ROM file not found") as err:
            env.reset(seed=0)
        assert err.value.env_ids == [0, 1]
        shutil.copy(original, rom)
        obs, _ = env.reset(seed=0)
        ref = cypool.make_vec("Pong-v5", 2)
        assert np.array_equal(obs, ref.reset(seed=0)[0])
        ref.close()
    finally:
        env.close()
