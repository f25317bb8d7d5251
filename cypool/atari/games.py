"""Atari ids (``<Game>-v5``) and their ROMs, read from the installed ale-py package.

Imported by cypool.registration at ``import cypool``, so it stays light: it reads the ROM list
(``ale_py/roms/md5.json``, the file behind ``ale_py.roms.get_all_rom_ids``) without importing
ale_py, whose import loads its own emulator and registers gymnasium envs.
"""
from __future__ import annotations

import difflib
import functools
import hashlib
import json
import os
from importlib.util import find_spec
from pathlib import Path

# Games whose ROMs have no single-player mode; ale-py registers no v5 id for them either.
MULTIPLAYER_ONLY = frozenset({"combat", "joust", "maze_craze", "warlords"})
SUFFIX = "-v5"
# EnvPool's time limit for Atari (agent steps): the default max_episode_steps
ENVPOOL_MAX_EPISODE_STEPS = 27000


def rom_id_to_name(rom: str) -> str:
    """ale-py's naming: ``ms_pacman`` -> ``MsPacman``."""
    return rom.title().replace("_", "")


@functools.lru_cache(maxsize=1)
def _package_roms_dir() -> Path | None:
    spec = find_spec("ale_py")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "roms"


@functools.lru_cache(maxsize=1)
def rom_md5s() -> dict[str, str]:
    """{rom id: expected md5} of every ROM the installed ale-py ships ({} without ale-py)."""
    d = _package_roms_dir()
    if d is None:
        return {}
    try:
        with open(d / "md5.json") as f:
            table = json.load(f)
    except OSError:
        return {}
    return {name.rsplit(".", 1)[0]: md5 for name, md5 in table.items()}


@functools.lru_cache(maxsize=1)
def _ids() -> dict[str, str]:
    return {rom_id_to_name(rom) + SUFFIX: rom for rom in sorted(rom_md5s())
            if rom not in MULTIPLAYER_ONLY}


def atari_ids() -> list[str]:
    """Every Atari id cypool knows: ``<Game>-v5`` for each single-player ROM of ale-py."""
    return list(_ids())


def is_atari_id(env_id: str) -> bool:
    return env_id in _ids()


def rom_of(env_id: str) -> str:
    """The ROM id (``breakout``) of an Atari env id; ValueError naming close ids otherwise."""
    rom = _ids().get(env_id)
    if rom is None:
        close = difflib.get_close_matches(env_id, atari_ids(), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"unknown Atari game {env_id!r}{hint} "
                         f"(cypool.atari.games.atari_ids() lists the {len(_ids())} games)")
    return rom


def roms_dir() -> Path:
    """Where ROMs are read from: $ALE_ROMS_DIR if set (as ale-py does), else ale-py's roms/."""
    env = os.environ.get("ALE_ROMS_DIR")
    if env:
        return Path(env)
    d = _package_roms_dir()
    if d is None:
        raise ModuleNotFoundError("cypool's Atari envs need the ale-py package "
                                  "(pip install ale-py==0.12.1), which ships the ROMs")
    return d


def rom_path(rom: str) -> str:
    """Path of ``<rom>.bin``; FileNotFoundError naming the game when it is missing."""
    path = roms_dir() / f"{rom}.bin"
    if not path.is_file():
        raise FileNotFoundError(
            f"cypool: no ROM for the Atari game {rom!r} ({rom_id_to_name(rom)}{SUFFIX}): "
            f"{path} does not exist. ROMs ship with ale-py (pip install ale-py==0.12.1); "
            "ALE_ROMS_DIR, when set, must hold them")
    expected = rom_md5s().get(rom)
    actual = hashlib.md5(path.read_bytes()).hexdigest()
    if expected is not None and actual != expected:
        # ale-py refuses such a file too: under the game's name, it would play another game
        raise RuntimeError(
            f"cypool: {path} is not ALE's {rom} ROM ({rom_id_to_name(rom)}{SUFFIX}): its MD5 "
            f"is {actual}, ale-py's has {expected}")
    return str(path)
