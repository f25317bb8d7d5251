"""The 13 games whose ALE screen has more than 210 lines (250 for the PAL cartridges).

A pool reads its game's screen size from ALE (cypool.atari._pool.screen_shape) and sizes its
buffers, resize and render by it. Each id is checked against the real references: gymnasium's
AtariPreprocessing + FrameStackObservation over ale-py (observations, rewards, flags, lives
and the rendered (H, 160, 3) frames, np.array_equal), and cypool.envpool against EnvPool
1.2.5, which reads only the top 210 x 160 pixels of every screen (screen_rows=210).
"""
import sys
from pathlib import Path

import numpy as np
import pytest

import cypool
from cypool.atari import games

from atari_helpers import as_gym_obs, bare_ale, gym_reference, resize_frame

sys.path.insert(0, str(Path(__file__).parent.parent))
from _envpool_ref import real_envpool  # noqa: E402

# game -> ALE's screen height (ale-py's env: observation_space.shape[0])
TALL = dict(Adventure=250, AirRaid=250, Carnival=214, JourneyEscape=230, KeystoneKapers=250,
            KingKong=250, Klax=250, LaserGates=250, MrDo=250, Pacman=250, Pooyan=220,
            SirLancelot=250, SpaceWar=250)
# options shared by cypool and the reference, varied across the games so that colour, other
# sizes, other frame skips and stacks meet a 250-line screen too
VARIANTS = [dict(), dict(gray=False), dict(size=(105, 80), frame_skip=3, stack=2),
            dict(size=(125, 80)), dict(size=(64, 48), gray=False, stack=1)]


def _screen(game):
    from cypool.atari._pool import screen_shape

    rom = games.rom_of(f"{game}-v5")
    _, data = games.read_rom(rom)
    return screen_shape(f"{rom}.bin", data)


@pytest.mark.parametrize("k,game", list(enumerate(TALL)), ids=list(TALL))
def test_matches_gymnasium(k, game):
    o = VARIANTS[k % len(VARIANTS)]
    gray, stack = o.get("gray", True), o.get("stack", 4)
    h, w = o.get("size", (84, 84))
    n, steps = 1, 12
    ref = gym_reference(game, n, noop_max=10, p=0.25, render_mode="rgb_array", **o)
    env = cypool.make_vec(f"{game}-v5", n, use_fire_reset=False, noop_max=10,
                          repeat_action_probability=0.25, frame_skip=o.get("frame_skip", 4),
                          stack_num=stack, img_height=h, img_width=w, gray_scale=gray,
                          render_mode="rgb_array")
    try:
        rows = TALL[game]
        assert _screen(game) == (rows, 160)
        assert env.pool.family.engine.raw_h == rows
        assert ref.envs[0].unwrapped.observation_space.shape[:2] == (rows, 160)
        o_ref, i_ref = ref.reset(seed=k)
        obs, info = env.reset(seed=k)
        assert np.array_equal(as_gym_obs(obs, gray, stack), o_ref), "reset obs"
        assert np.array_equal(info["lives"], i_ref["lives"])
        rng = np.random.default_rng(k)
        for t in range(steps):
            frames, want = env.render(), ref.render()
            assert frames[0].shape == (rows, 160, 3) and np.array_equal(frames[0], want[0]), t
            a = rng.integers(0, env.single_action_space.n, n)
            r, r_ref = env.step(a), ref.step(a)
            assert np.array_equal(as_gym_obs(r[0], gray, stack), r_ref[0]), f"obs {t}"
            for x, y in zip(r[1:4], r_ref[1:4]):
                assert np.array_equal(x, y), f"reward/flags {t}"
            assert np.array_equal(r[4]["lives"], r_ref[4]["lives"])
    finally:
        env.close()
        ref.close()


def test_usual_games_keep_210_lines():
    assert _screen("Pong") == (210, 160)
    env = cypool.make_vec("Pong-v5", 1, render_mode="rgb_array")
    try:
        env.reset(seed=0)
        assert env.pool.family.engine.raw_h == 210 and env.render()[0].shape == (210, 160, 3)
    finally:
        env.close()


@pytest.mark.parametrize("gray", [True, False])
def test_screen_rows_210_is_envpools_crop(gray):
    """screen_rows=210 resizes the top 210 lines of the 250, as EnvPool does (replayed on a
    bare ale-py emulator: noop_max=1 and FIRE make the reset deterministic); rendering still
    gives the whole screen."""
    env = cypool.make_vec("Pacman-v5", 1, noop_max=1, screen_rows=210, gray_scale=gray,
                          render_mode="rgb_array")
    try:
        obs, _ = env.reset(seed=0)
        fire = env.pool.family.engine.fire_on_reset
        ale = bare_ale("pacman", 0)
        ale.reset_game()
        ale.act(1 if fire else 0)
        screen = ale.getScreenGrayscale() if gray else ale.getScreenRGB()
        assert screen.shape[0] == 250
        want = resize_frame(screen[:210], 84, 84)
        assert np.array_equal(obs[0, -want.shape[0]:], want)
        assert not np.array_equal(want, resize_frame(screen, 84, 84))
        assert env.render()[0].shape == (250, 160, 3)
    finally:
        env.close()


def test_screen_rows_checked():
    with pytest.raises(ValueError, match="more than the 250 lines"):
        cypool.make_vec("Pacman-v5", 1, screen_rows=251)
    with pytest.raises(ValueError, match="more than the 210 lines"):
        cypool.make_vec("Pong-v5", 1, screen_rows=250)
    with pytest.raises(TypeError):
        cypool.make_vec("Pacman-v5", 1, screen_rows=200.5)


def test_bench_and_test_hooks_size_by_the_screen():
    from cypool.atari import _pool

    assert _pool.per_core_limit("Pacman", 0.05) > 0
    idx, rgb, _ = _pool._bare_ale_screens(games.rom_path("pacman"), 0, [0, 1, 0], False)
    assert idx.shape == (4, 250, 160) and rgb.shape == (4, 250, 160, 3)


@pytest.mark.parametrize("kw", [dict(), dict(gray_scale=False, img_height=105, img_width=80)])
def test_envpool_pacman_matches_envpool(kw):
    """cypool.envpool's Pacman-v5 against EnvPool 1.2.5's, step for step (noop_max=1: both
    reset with FIRE only, whatever their no-op generators)."""
    import cypool.envpool as cep

    envpool = real_envpool()
    a = envpool.make_gymnasium("Pacman-v5", num_envs=2, noop_max=1, seed=3, **kw)
    b = cep.make_gymnasium("Pacman-v5", num_envs=2, noop_max=1, seed=3, **kw)
    try:
        oa, _ = a.reset()
        ob, _ = b.reset()
        assert np.array_equal(oa, ob)
        rng = np.random.default_rng(0)
        for t in range(40):
            act = rng.integers(0, a.action_space.n, 2)
            ra, rb = a.step(act), b.step(act)
            for x, y in zip(ra[:4], rb[:4]):
                assert np.array_equal(x, y), t
            assert np.array_equal(ra[4]["lives"], rb[4]["lives"])
    finally:
        a.close()
        b.close()
