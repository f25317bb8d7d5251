"""``render_mode="rgb_array"`` (and ``"array"``) of the MinAtar ids: the frame of
``minatar.gym.BaseEnv.render``, computed from the env's observation (its ``state()``) with the
same colours: seaborn's ``cubehelix`` palette of one colour per channel, black first, indexed
by the highest set channel + 1 of each cell. The frame is the reference's (10, 10, 3) float64
array in [0, 1] (not uint8). Imported at the first render (it imports seaborn)."""
from __future__ import annotations

import numpy as np


def palette(n_channels: int) -> np.ndarray:
    """(n_channels + 1, 3) float64: black, then ``sns.color_palette("cubehelix", n)``."""
    try:
        import seaborn as sns
    except ImportError as e:       # the reference cannot render without it either
        raise ImportError("MinAtar rgb_array rendering needs seaborn (the reference's "
                          "palette): pip install \"cypool[minatar]\"") from e
    cmap = sns.color_palette("cubehelix", n_channels)
    cmap.insert(0, (0, 0, 0))
    return np.stack(cmap)


def render(env_id, engine, ids, mode, kwargs):
    """One frame per id of the env's current state (the last observation it gave);
    ``"array"``: that state itself (a fresh bool (10, 10, C) array), as the reference's."""
    if mode == "array":
        return [np.array(engine.obs[int(i)]) for i in ids]
    if mode != "rgb_array":
        raise ValueError(f"{env_id}: cannot render {mode!r} (only 'array' and 'rgb_array')")
    if engine.renderer is None:
        engine.renderer = palette(engine.obs.shape[-1])
    cmap = engine.renderer
    obs = np.asarray(engine.obs)
    n = obs.shape[-1]
    weights = np.reshape(np.arange(n) + 1, (1, 1, -1))
    return [cmap[np.amax(obs[int(i)] * weights, 2)] for i in ids]
