"""render_mode="rgb_array": mpe2's own frames, bit for bit, for envs in the middle of an
episode (colours that follow the goal draws, comm text, dynamic rescaling)."""
import importlib
import warnings

import numpy as np
import pytest

import cypool


@pytest.mark.parametrize("module,kw", [
    ("simple_spread_v3", {}),
    ("simple_adversary_v3", {"dynamic_rescaling": False}),
    ("simple_speaker_listener_v4", {}),
    ("simple_reference_v3", {"continuous_actions": True}),
    ("simple_crypto_v3", {}),
    ("simple_push_v3", {}),
    ("simple_tag_v3", {}),
    ("simple_world_comm_v3", {"continuous_actions": True}),
    ("simple_formation_v1", {}),
    ("simple_line_v1", {}),
    ("collect_treasure_v1", {"num_collectors": 4, "num_treasures": 12}),
])
def test_frames_match_reference(module, kw):
    n, seed = 2, 5
    env = cypool.make_vec(f"mpe2/{module}", n, render_mode="rgb_array", **kw)
    mod = importlib.import_module(f"mpe2.{module}")
    refs = [mod.parallel_env(render_mode="rgb_array", **kw) for _ in range(n)]
    try:
        env.reset(seed=seed)
        for i, r in enumerate(refs):
            r.reset(seed=seed + i)
        rng = np.random.default_rng(seed)
        for t in range(6):
            act = {}
            for name, sp in env.single_action_space.spaces.items():
                act[name] = (rng.integers(0, sp.n, n) if hasattr(sp, "n")
                             else rng.uniform(0, 1, (n, sp.shape[0])))
            env.step(act)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for i, r in enumerate(refs):
                    r.step({k: act[k][i] for k in act})
        frames = env.render()
        for i, r in enumerate(refs):
            want = r.render()
            assert frames[i].dtype == np.uint8 and frames[i].shape == want.shape
            assert np.array_equal(frames[i], want), i
    finally:
        env.close()
        for r in refs:
            r.close()
