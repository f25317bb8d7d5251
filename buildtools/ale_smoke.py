"""Smoke check: the ALE core built by ale_build.py emulates exactly as the ale-py wheel.

Compiles a throwaway Cython extension (in a temporary directory) against the
built core through cypool's shim and its ``ale_interface.pxd``, then plays
Breakout with sticky actions in several emulators at once, from OpenMP threads
without the GIL, and compares every frame with ``ale_py.ALEInterface`` run with
the same seeds, settings and actions: grayscale and RGB screens, rewards,
lives, game-over flags, frame counters, RAM and action sets must all be equal.
It also checks that the shim turns ALE's errors into status codes.

Run from the repository root:  python -m buildtools.ale_smoke
"""
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
N_ENVS = 4
N_FRAMES = 1200
RESEED_AT = 700           # frame at which each env is reseeded (reloads the ROM)
MAX_EPISODE_FRAMES = 500  # short, so that truncation and reset_game are exercised
STICKY = 0.25

KERNEL = r'''
# distutils: language = c++
from cython.parallel cimport prange
from libc.stdint cimport uint8_t
from libc.stddef cimport size_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from cypool.atari._ale.ale_interface cimport (
    Action, ALEInterface, LOGGER_ERROR, PLAYER_A_FIRE, logger_set_mode)

# The shim's declarations live in cypool/atari/_ale_shim.pxd (one .pxd per header).
from cypool.atari._ale_shim cimport (
    CP_ALE_OK, CP_ALE_NUM_ACTIONS, cp_ale_last_error, cp_ale_create, cp_ale_destroy,
    cp_ale_set_int, cp_ale_set_float, cp_ale_set_bool, cp_ale_load_rom, cp_ale_seed,
    cp_ale_reset_game, cp_ale_act, cp_ale_game_over, cp_ale_game_truncated, cp_ale_lives,
    cp_ale_frame_number, cp_ale_episode_frame_number, cp_ale_screen_shape,
    cp_ale_screen_grayscale, cp_ale_screen_rgb, cp_ale_ram, cp_ale_legal_actions,
    cp_ale_minimal_actions)


cdef int play(ALEInterface* ale, int seed, int reseed_at, const int* actions, int n,
              uint8_t* gray, int* ints, uint8_t* ram, uint8_t* rgb) noexcept nogil:
    """Steps one env through n frames; ints gets 7 values per frame."""
    cdef int t, rc, screen = 210 * 160
    cdef int* row
    for t in range(n):
        row = ints + 7 * t
        if t == reseed_at:
            rc = cp_ale_seed(ale, seed + 1000)
            if rc: return rc
        rc = cp_ale_act(ale, actions[t], 1.0, &row[0])
        if rc == CP_ALE_OK: rc = cp_ale_lives(ale, &row[1])
        if rc == CP_ALE_OK: rc = cp_ale_game_over(ale, 0, &row[2])
        if rc == CP_ALE_OK: rc = cp_ale_game_truncated(ale, &row[3])
        if rc == CP_ALE_OK: rc = cp_ale_game_over(ale, 1, &row[4])
        if rc == CP_ALE_OK: rc = cp_ale_frame_number(ale, &row[5])
        if rc == CP_ALE_OK: rc = cp_ale_episode_frame_number(ale, &row[6])
        if rc == CP_ALE_OK: rc = cp_ale_screen_grayscale(ale, gray + <size_t>t * screen, screen)
        if rc == CP_ALE_OK: rc = cp_ale_ram(ale, ram + <size_t>t * 128, 128)
        if rc == CP_ALE_OK and row[4]: rc = cp_ale_reset_game(ale)
        if rc: return rc
    return cp_ale_screen_rgb(ale, rgb, 3 * screen)


def run(str rom, const int[::1] seeds, float sticky, int max_frames, int reseed_at,
        const int[:, ::1] actions, uint8_t[:, :, :, ::1] gray, int[:, :, ::1] ints,
        uint8_t[:, :, ::1] ram, uint8_t[:, :, :, ::1] rgb, int[:, ::1] minimal,
        int num_threads):
    """Creates one emulator per seed (settings through the pxd), then plays them in parallel."""
    cdef Py_ssize_t i, n_envs = seeds.shape[0]
    cdef int n = actions.shape[1], rc
    cdef size_t count
    cdef string path = rom.encode()
    cdef vector[ALEInterface*] ales
    ales.resize(n_envs, NULL)
    cdef int[::1] status = np.zeros(n_envs, np.intc)
    logger_set_mode(LOGGER_ERROR)
    try:
        for i in range(n_envs):
            ales[i] = new ALEInterface()
            ales[i].setInt(b"random_seed", seeds[i])
            ales[i].setFloat(b"repeat_action_probability", sticky)
            ales[i].setInt(b"max_num_frames_per_episode", max_frames)
            rc = cp_ale_load_rom(ales[i], path.c_str())
            if rc: raise RuntimeError(f"load_rom: {rc} {cp_ale_last_error().decode()}")
            rc = cp_ale_minimal_actions(ales[i], &minimal[i, 0], minimal.shape[1], &count)
            if rc or count != <size_t>minimal.shape[1]:
                raise RuntimeError(f"minimal_actions: {rc}, count {count}")
        with nogil:
            for i in prange(n_envs, schedule="static", num_threads=num_threads):
                status[i] = play(ales[i], seeds[i], reseed_at, &actions[i, 0], n,
                                 &gray[i, 0, 0, 0], &ints[i, 0, 0], &ram[i, 0, 0],
                                 &rgb[i, 0, 0, 0])
        return np.asarray(status)
    finally:
        for i in range(n_envs):
            del ales[i]


def pxd_probe(str rom, int seed):
    """Drives an emulator through ale_interface.pxd's own declarations (GIL held)."""
    cdef ALEInterface* ale = new ALEInterface()
    cdef int rc, reward = 0
    try:
        ale.setInt(b"random_seed", seed)
        rc = cp_ale_load_rom(ale, rom.encode())
        if rc: raise RuntimeError(cp_ale_last_error().decode())
        minimal = [<int>a for a in ale.getMinimalActionSet()]
        legal = ale.getLegalActionSet().size()
        for _ in range(50):
            reward += ale.act(PLAYER_A_FIRE, 1.0)
            reward += ale.act(<Action>3, 1.0)
        return dict(minimal=minimal, legal=legal, reward=reward, lives=ale.lives(),
                    over=ale.game_over(False), frame=ale.getFrameNumber(),
                    episode_frame=ale.getEpisodeFrameNumber(),
                    shape=(ale.getScreen().height(), ale.getScreen().width()),
                    ram=bytes(ale.getRAM().array()[:ale.getRAM().size()]),
                    max_frames=ale.getInt(b"max_num_frames_per_episode"),
                    sticky=ale.getFloat(b"repeat_action_probability"))
    finally:
        del ale


def error_statuses(str rom, str not_a_rom):
    """(case, status, message) for calls that must fail without killing the process."""
    cdef ALEInterface* ale = NULL
    cdef int value, h, w
    cdef int actions[CP_ALE_NUM_ACTIONS]
    cdef uint8_t small[16]
    cdef size_t count
    cdef list out = []
    cdef string path = rom.encode(), bad = not_a_rom.encode()

    def note(case, rc):
        out.append((case, rc, cp_ale_last_error().decode()))

    note("create", cp_ale_create(&ale))
    note("act_before_load", cp_ale_act(ale, 0, 1.0, &value))
    note("lives_before_load", cp_ale_lives(ale, &value))
    note("seed_before_load", cp_ale_seed(ale, 1))
    note("load_missing", cp_ale_load_rom(ale, b"/nonexistent/breakout.bin"))
    note("load_not_a_rom", cp_ale_load_rom(ale, bad.c_str()))
    note("set_unknown_key", cp_ale_set_int(ale, b"no_such_setting", 1))
    note("set_float_wrong_type", cp_ale_set_float(ale, b"random_seed", 1.0))
    note("set_bool", cp_ale_set_bool(ale, b"truncate_on_loss_of_life", 0))
    note("load_rom", cp_ale_load_rom(ale, path.c_str()))
    note("act_bad_action", cp_ale_act(ale, 18, 1.0, &value))
    note("act_negative_action", cp_ale_act(ale, -1, 1.0, &value))
    note("gray_small_buffer", cp_ale_screen_grayscale(ale, small, 16))
    note("rgb_small_buffer", cp_ale_screen_rgb(ale, small, 16))
    note("ram_small_buffer", cp_ale_ram(ale, small, 16))
    note("minimal_small_buffer", cp_ale_minimal_actions(ale, actions, 1, &count))
    out.append(("minimal_count", count, ""))
    note("legal_actions", cp_ale_legal_actions(ale, actions, CP_ALE_NUM_ACTIONS, &count))
    out.append(("legal_count", count, ""))
    note("seed_negative", cp_ale_seed(ale, -1))
    note("screen_shape", cp_ale_screen_shape(ale, &h, &w))
    out.append(("screen", (h, w), ""))
    note("act_after_errors", cp_ale_act(ale, 1, 1.0, &value))
    cp_ale_destroy(ale)
    cp_ale_destroy(NULL)
    return out
'''


def build_kernel(workdir, config):
    """Compile KERNEL with the shim against the built ALE; return the imported module."""
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension

    pyx = Path(workdir, "ale_smoke_kernel.pyx")
    pyx.write_text("import numpy as np\n" + KERNEL)
    ext = Extension(
        "ale_smoke_kernel",
        [str(pyx), str(ROOT / "cypool" / "atari" / "_ale_shim.cpp")],
        language="c++",
        include_dirs=config["include_dirs"] + [str(ROOT / "cypool" / "atari")],
        library_dirs=config["library_dirs"],
        libraries=config["libraries"],
        extra_objects=config["extra_objects"],
        extra_compile_args=["-std=c++17", "-O2", "-fopenmp"],
        extra_link_args=["-fopenmp"],
    )
    modules = cythonize([ext], include_path=[str(ROOT)], quiet=True,
                        compiler_directives=dict(language_level=3, boundscheck=False,
                                                 wraparound=False))
    dist = Distribution({"ext_modules": modules})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib = cmd.build_temp = str(workdir)
    cmd.ensure_finalized()
    cmd.run()
    spec = importlib.util.spec_from_file_location("ale_smoke_kernel",
                                                  cmd.get_ext_fullpath("ale_smoke_kernel"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def play_wheel(rom, seed, actions):
    """The same episode as KERNEL's play(), through the installed ale-py wheel."""
    import ale_py

    ale = ale_py.ALEInterface()
    ale.setInt("random_seed", seed)
    ale.setFloat("repeat_action_probability", STICKY)
    ale.setInt("max_num_frames_per_episode", MAX_EPISODE_FRAMES)
    ale.loadROM(rom)
    n = len(actions)
    gray = np.empty((n, 210, 160), np.uint8)
    ints = np.empty((n, 7), np.intc)
    ram = np.empty((n, 128), np.uint8)
    for t, action in enumerate(actions):
        if t == RESEED_AT:
            ale.setInt("random_seed", seed + 1000)
            ale.loadROM(rom)
        reward = ale.act(int(action))
        ints[t] = (reward, ale.lives(), ale.game_over(with_truncation=False),
                   ale.game_truncated(), ale.game_over(), ale.getFrameNumber(),
                   ale.getEpisodeFrameNumber())
        gray[t] = ale.getScreenGrayscale()
        ram[t] = ale.getRAM()
        if ints[t, 4]:
            ale.reset_game()
    minimal = [a.value for a in ale.getMinimalActionSet()]
    return gray, ints, ram, ale.getScreenRGB(), minimal


def probe_wheel(rom, seed):
    """What KERNEL's pxd_probe() reads, through the ale-py wheel."""
    import ale_py

    ale = ale_py.ALEInterface()
    ale.setInt("random_seed", seed)
    ale.loadROM(rom)
    reward = 0
    for _ in range(50):
        reward += ale.act(1) + ale.act(3)
    return dict(minimal=[a.value for a in ale.getMinimalActionSet()],
                legal=len(ale.getLegalActionSet()), reward=reward, lives=ale.lives(),
                over=ale.game_over(with_truncation=False), frame=ale.getFrameNumber(),
                episode_frame=ale.getEpisodeFrameNumber(), shape=ale.getScreenGrayscale().shape,
                ram=ale.getRAM().tobytes(), max_frames=ale.getInt("max_num_frames_per_episode"),
                sticky=ale.getFloat("repeat_action_probability"))


def check_errors(kernel, rom, workdir):
    not_a_rom = Path(workdir, "not_a_game.bin")
    not_a_rom.write_bytes(bytes(4096))
    got = {case: (rc, msg) for case, rc, msg in kernel.error_statuses(rom, str(not_a_rom))}
    ok, arg, exc, no_rom, bad_rom = 0, 3, 1, 4, 5
    expected = dict(
        create=ok, act_before_load=no_rom, lives_before_load=no_rom, seed_before_load=no_rom,
        load_missing=bad_rom, load_not_a_rom=bad_rom, set_unknown_key=exc,
        set_float_wrong_type=exc, set_bool=ok, load_rom=ok, act_bad_action=arg,
        act_negative_action=arg, gray_small_buffer=arg, rgb_small_buffer=arg,
        ram_small_buffer=arg, minimal_small_buffer=arg, minimal_count=4, legal_actions=ok,
        legal_count=18, seed_negative=arg, screen_shape=ok, screen=(210, 160),
        act_after_errors=ok)
    wrong = {k: (got[k], v) for k, v in expected.items() if got[k][0] != v}
    assert not wrong, f"shim statuses differ (got, expected): {wrong}"
    assert "no_such_setting" in got["set_unknown_key"][1], got["set_unknown_key"]
    assert "/nonexistent/breakout.bin" in got["load_missing"][1], got["load_missing"]
    print(f"shim errors: {len(expected)} cases give the expected status; the process survived")


def main():
    import ale_py
    from ale_py.roms import get_rom_path

    sys.path.insert(0, str(ROOT))
    from buildtools.ale_build import ensure_ale

    t0 = time.perf_counter()
    config = ensure_ale()
    print(f"ensure_ale: {time.perf_counter() - t0:.1f} s -> {config}")
    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
    rom = str(get_rom_path("breakout"))
    seeds = np.arange(N_ENVS, dtype=np.intc) * 7 + 3
    rng = np.random.default_rng(0)
    # Runs of repeated actions, so that the paddle travels and FIRE launches balls.
    runs = rng.integers(0, 4, size=(N_ENVS, N_FRAMES // 8 + 1), dtype=np.intc)
    actions = np.ascontiguousarray(np.repeat(runs, 8, axis=1)[:, :N_FRAMES])

    with tempfile.TemporaryDirectory(prefix="cypool-ale-smoke-") as workdir:
        t0 = time.perf_counter()
        kernel = build_kernel(workdir, config)
        print(f"kernel built in {time.perf_counter() - t0:.1f} s")
        gray = np.zeros((N_ENVS, N_FRAMES, 210, 160), np.uint8)
        ints = np.zeros((N_ENVS, N_FRAMES, 7), np.intc)
        ram = np.zeros((N_ENVS, N_FRAMES, 128), np.uint8)
        rgb = np.zeros((N_ENVS, 210, 160, 3), np.uint8)
        minimal = np.zeros((N_ENVS, 4), np.intc)
        t0 = time.perf_counter()
        status = kernel.run(rom, seeds, STICKY, MAX_EPISODE_FRAMES, RESEED_AT, actions,
                            gray, ints, ram, rgb, minimal, 2)
        built_s = time.perf_counter() - t0
        assert not status.any(), f"kernel statuses {status}"
        check_errors(kernel, rom, workdir)
        probe = kernel.pxd_probe(rom, 5)
        assert probe == probe_wheel(rom, 5), (probe, probe_wheel(rom, 5))
        print(f"pxd: ALEInterface methods agree with the wheel ({len(probe)} values)")

    t0 = time.perf_counter()
    for i in range(N_ENVS):
        w_gray, w_ints, w_ram, w_rgb, w_minimal = play_wheel(rom, int(seeds[i]), actions[i])
        for name, ours, theirs in (("grayscale", gray[i], w_gray), ("ints", ints[i], w_ints),
                                   ("ram", ram[i], w_ram), ("rgb", rgb[i], w_rgb),
                                   ("minimal actions", minimal[i], w_minimal)):
            if not np.array_equal(ours, theirs):
                where = np.argwhere(np.asarray(ours) != np.asarray(theirs))[:3]
                sys.exit(f"MISMATCH env {i} {name}: first differing indices {where.tolist()}")
    wheel_s = time.perf_counter() - t0

    ends = int(ints[:, :, 4].sum())
    print(f"{N_ENVS} envs x {N_FRAMES} frames of Breakout (sticky {STICKY}, reseed at frame "
          f"{RESEED_AT}, {ends} episode ends, reward {int(ints[:, :, 0].sum())}): grayscale, "
          "RGB, RAM, rewards, lives, game-over/truncation flags, frame counters and action "
          "sets all equal to the ale-py wheel")
    print(f"time: built core {built_s:.2f} s on 2 threads, wheel {wheel_s:.2f} s from Python")
    assert ends > 0 and len(set(map(bytes, gray[:, -1]))) > 1, "smoke run too trivial"
    print("OK")


if __name__ == "__main__":
    main()
