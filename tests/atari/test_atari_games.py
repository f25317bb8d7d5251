"""Atari ids, registration, and the module-level helpers."""
import io
import subprocess
import sys

import numpy as np
import gymnasium as gym
import pytest

import cypool
from cypool.atari import games


def test_ids_cover_every_single_player_rom():
    from ale_py.roms import get_all_rom_ids

    ids = games.atari_ids()
    want = {games.rom_id_to_name(r) + "-v5" for r in get_all_rom_ids()} - {
        "Combat-v5", "Joust-v5", "MazeCraze-v5", "Warlords-v5"}
    assert set(ids) == want and len(ids) == 104
    assert {"Pong-v5", "Breakout-v5", "MsPacman-v5", "SpaceInvaders-v5"} <= set(ids)
    assert set(ids) <= set(cypool.list_envs())
    assert games.is_atari_id("Pong-v5") and not games.is_atari_id("Pong-v4")
    assert games.rom_of("MsPacman-v5") == "ms_pacman"


def test_import_cypool_stays_light():
    code = ("import sys, cypool; "
            "print(int('ale_py' in sys.modules), int('cypool.atari._pool' in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["0", "0"]


@pytest.mark.parametrize("game", ["Tetris-v5", "Seaquest-v5", "MontezumaRevenge-v5"])
def test_other_games_run(game):
    env = cypool.make_vec(game, 2)
    try:
        obs, _ = env.reset(seed=0)
        for _ in range(5):
            obs, *_ = env.step(env.action_space.sample())
        assert obs.shape == (2, 4, 84, 84)
    finally:
        env.close()


def test_registered_with_gymnasium():
    env = gym.make_vec("cypool/Pong-v5", 2, noop_max=0)
    try:
        obs, _ = env.reset(seed=0)
        assert obs.shape == (2, 4, 84, 84)
        obs, r, te, tr, _ = env.step(np.array([0, 1]))
        assert r.dtype == np.float64 and te.dtype == np.bool_
    finally:
        env.close()


def test_ale_version_and_per_core_limit():
    from cypool.atari import _pool

    assert _pool.ale_version() == "0.12.1"
    assert cypool.show_config(file=io.StringIO())["ale"] == "0.12.1"
    assert _pool.per_core_limit("Pong", 0.2) > 50
    assert _pool.per_core_limit("Breakout-v5", 0.1) > 50


def test_rom_with_wrong_contents_is_refused(tmp_path, monkeypatch):
    """Another game's ROM under Pong's name (ALE_ROMS_DIR) would play Breakout: refused, as
    ale-py refuses it (MD5), before any env is built."""
    import shutil
    from cypool.atari import games
    src = games.roms_dir()
    shutil.copy(src / "breakout.bin", tmp_path / "pong.bin")
    shutil.copy(src / "breakout.bin", tmp_path / "breakout.bin")
    monkeypatch.setenv("ALE_ROMS_DIR", str(tmp_path))
    with pytest.raises(RuntimeError, match=r"pong\.bin is not ALE's pong ROM \(Pong-v5\): its MD5"):
        cypool.make_vec("Pong-v5", 2)
    env = cypool.make_vec("Breakout-v5", 1)   # the genuine file in the same directory is fine
    env.reset(seed=0)
    env.close()
