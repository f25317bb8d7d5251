"""Atari ids (``<Game>-v5``) and their ROMs, read from the installed ale-py package.

Imported by cypool.registration at ``import cypool``, so it stays light: it reads the ROM list
(``ale_py/roms/md5.json``, the file behind ``ale_py.roms.get_all_rom_ids``) without importing
ale_py, whose import loads its own emulator and registers gymnasium envs.
"""
from __future__ import annotations

import atexit
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


def read_rom(rom: str) -> tuple[str, bytes]:
    """Path and contents of ``<rom>.bin``, read once; the MD5 checked is that of the bytes
    returned (a pool loads those, see RomCopy, not the file again). FileNotFoundError naming
    the game when it is missing, RuntimeError when it is not ale-py's ROM of the game."""
    path = roms_dir() / f"{rom}.bin"
    try:
        data = path.read_bytes() if path.is_file() else None
    except OSError:
        data = None
    if data is None:
        raise FileNotFoundError(
            f"cypool: no ROM for the Atari game {rom!r} ({rom_id_to_name(rom)}{SUFFIX}): "
            f"{path} does not exist or cannot be read. ROMs ship with ale-py "
            "(pip install ale-py==0.12.1); ALE_ROMS_DIR, when set, must hold them")
    expected = rom_md5s().get(rom)
    actual = hashlib.md5(data).hexdigest()
    if expected is not None and actual != expected:
        # ale-py refuses such a file too: under the game's name, it would play another game
        raise RuntimeError(
            f"cypool: {path} is not ALE's {rom} ROM ({rom_id_to_name(rom)}{SUFFIX}): its MD5 "
            f"is {actual}, ale-py's has {expected}")
    return str(path), data


def rom_path(rom: str) -> str:
    """Path of ``<rom>.bin``, checked like read_rom."""
    return read_rom(rom)[0]


# RomCopy's temporary directories not removed yet -> the process that made them; whatever a
# pool alive at interpreter exit still holds is removed then.
_TEMP_DIRS: dict[str, int] = {}


def _remove_dir(d):
    import shutil

    _TEMP_DIRS.pop(d, None)
    shutil.rmtree(d, ignore_errors=True)


@atexit.register
def _remove_temp_dirs():
    for d, pid in list(_TEMP_DIRS.items()):
        if pid == os.getpid():
            _remove_dir(d)


class RomCopy:
    """A private, unchangeable copy of ROM bytes, for ALE to read at every (re)load.

    ALE reads the ROM file at each load and reload (a pool reloads at seeded resets and
    settings changes), so a pool that gave ALE the user's file would play whatever the file
    holds then, not what was verified. The copy is a sealed memfd (no write, grow or shrink
    possible), named to ALE as /proc/self/fd/N; it lives until close() or until the copy is
    freed, and a forked child has its own descriptor. Where memfd is unavailable, a read-only
    file in a private temporary directory, removed by the process that made it.
    ALE matches the game by the bytes' MD5 (the shim requires the MD5 anyway), so the name
    ALE sees does not change the game or its settings."""

    def __init__(self, name: str, data: bytes):
        self._fd, self._dir, self._pid = -1, None, os.getpid()
        try:
            fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        except (AttributeError, OSError):
            fd = -1
        if fd >= 0:
            self._fd = fd
            try:
                import fcntl
                self._write(fd, data)
                fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW
                            | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
                self.path = f"/proc/self/fd/{fd}"
                if os.path.getsize(self.path) == len(data):
                    return
            except (AttributeError, OSError):
                pass
            self.close()       # no sealing or no /proc: the temporary file below
            self._fd = -1
        import tempfile
        self._dir = tempfile.mkdtemp(prefix="cypool-rom-")
        _TEMP_DIRS[self._dir] = self._pid
        try:
            self.path = os.path.join(self._dir, os.path.basename(name))
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
            try:
                self._write(fd, data)
            finally:
                os.close(fd)
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _write(fd, data):
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]

    def close(self):
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)
        if self._dir is not None and os.getpid() == self._pid:
            d, self._dir = self._dir, None
            _remove_dir(d)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
