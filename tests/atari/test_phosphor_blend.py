"""cypool's ale::PhosphorBlend (cypool/atari/_phosphor_blend.cpp, swapped into libale.a by
buildtools/ale_build.py) against ALE's own, through behaviour: with the setting
color_averaging, every screen ALE returns is built from the blend's two tables, so a bare
emulator of cypool's libale and ale-py's ALEInterface (the pip wheel: ALE's original code),
same ROM, seed and actions, must give the same palette indices and RGB at every step."""
import numpy as np
import pytest

ale_py = pytest.importorskip("ale_py")
from ale_py import roms  # noqa: E402

from cypool.atari import _pool  # noqa: E402

STEPS = 300
SEED = 7


def _actions(game):
    rng = np.random.default_rng(sum(map(ord, game)))
    # runs of a few frames of each action, from ALE's full set, so that objects move
    return np.repeat(rng.integers(0, 18, size=STEPS // 3), 3)


def _ale_py_screens(rom, actions, color_averaging):
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setInt("random_seed", SEED)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.setBool("color_averaging", color_averaging)
    ale.loadROM(rom)
    indices, rgb, rewards = [ale.getScreen()], [ale.getScreenRGB()], []
    for a in actions:
        rewards.append(ale.act(ale_py.Action(int(a))))
        indices.append(ale.getScreen())
        rgb.append(ale.getScreenRGB())
        if ale.game_over():
            ale.reset_game()
    return np.stack(indices), np.stack(rgb), np.array(rewards)


# Freeway and Enduro show colour pairs whose blend lands on a tie in the RGB -> palette map
# (equally near colours), which only the first-minimum tie-break resolves as ALE does.
@pytest.mark.parametrize("game", ["pong", "breakout", "freeway", "enduro"])
def test_color_averaged_screens_match_ale_py(game):
    rom = str(roms.get_rom_path(game))
    actions = _actions(game)
    ours_idx, ours_rgb, ours_rew = _pool._bare_ale_screens(rom, SEED, actions, True)
    ref_idx, ref_rgb, ref_rew = _ale_py_screens(rom, actions, True)
    assert ours_idx.shape == ref_idx.shape == (STEPS + 1, 210, 160)
    for t in range(STEPS + 1):
        assert np.array_equal(ours_idx[t], ref_idx[t]), f"{game}: palette indices at step {t}"
        assert np.array_equal(ours_rgb[t], ref_rgb[t]), f"{game}: RGB at step {t}"
    np.testing.assert_array_equal(ours_rew, ref_rew)

    # The blend path is exercised: averaged frames differ from the plain ones somewhere,
    # and the plain ones match ale-py's too (same emulation underneath).
    plain_idx, _, plain_rew = _pool._bare_ale_screens(rom, SEED, actions, False)
    ref_plain_idx, _, _ = _ale_py_screens(rom, actions, False)
    np.testing.assert_array_equal(plain_idx, ref_plain_idx)
    np.testing.assert_array_equal(plain_rew, ours_rew)
    differing = [t for t in range(STEPS + 1) if not np.array_equal(plain_idx[t], ours_idx[t])]
    assert len(differing) > STEPS // 10, f"{game}: averaging changed only steps {differing}"


def test_tables_shared_across_emulators_stay_exact():
    """Later emulators copy the process-wide tables (built once): a run repeated in the
    same process gives the same screens."""
    rom = str(roms.get_rom_path("pong"))
    actions = _actions("pong")[:60]
    first = _pool._bare_ale_screens(rom, SEED, actions, True)
    again = _pool._bare_ale_screens(rom, SEED, actions, True)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
