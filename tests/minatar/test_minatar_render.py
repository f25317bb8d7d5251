"""render_mode "rgb_array" (and "array") against MinAtar's own render(): frames equal
(np.array_equal, same dtype: the reference's (10, 10, 3) float64 cubehelix frames) after
resets and across steps with autoresets, for render() and render(env_ids=...)."""
import gymnasium as gym
import numpy as np
import pytest

from _minatar_ref import GAMES

import cypool

pytest.importorskip("seaborn")
# MinAtar's ids are v0 beside v1 (DeprecationWarning); its frames are float64 and it
# declares no render fps (gymnasium's checker warns on both)
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore:.*(render fps|dtype uint8).*:UserWarning")]


def _same_frames(got, want):
    assert isinstance(got, tuple) and len(got) == len(want)
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y)


@pytest.mark.parametrize("mode", ["rgb_array", "array"])
@pytest.mark.parametrize("game", GAMES)
def test_render_matches_minatar(game, mode):
    env_id = f"MinAtar/{game}-v1"
    env = cypool.make_vec(env_id, 3, render_mode=mode)
    ref = gym.vector.SyncVectorEnv([lambda: gym.make(env_id, render_mode=mode)
                                    for _ in range(3)])
    try:
        env.reset(seed=4)
        ref.reset(seed=4)
        _same_frames(env.render(), ref.render())
        rng = np.random.default_rng(0)
        ends = 0
        for t in range(80):
            a = rng.integers(0, env.single_action_space.n, 3)
            env.step(a)
            ends += ref.step(a)[2].sum()
            _same_frames(env.render(), ref.render())
        want = ref.render()
        got = env.render(env_ids=[2, 0])
        _same_frames(got, (want[2], want[0]))
        assert ends > 0 or game == "Freeway"
    finally:
        env.close()
        ref.close()
