"""MinAtar snapshots: get_state/set_state and pickle continue bit-identically (the MT19937
stream included); states that would index outside the board are refused before any env
changes."""
import pickle

import numpy as np
import pytest

from _minatar_ref import GAMES

import cypool


def _run(env, actions):
    return [env.step(a)[:4] for a in actions]


@pytest.mark.parametrize("game", GAMES)
def test_get_set_state_and_pickle_continue_identically(game):
    env = cypool.make_vec(f"MinAtar/{game}-v0", 3, seed=2)
    try:
        env.reset()
        rng = np.random.default_rng(0)
        for a in rng.integers(0, 6, (60, 3)):
            env.step(a)
        state = env.get_state()
        blob = pickle.dumps(env)
        actions = rng.integers(0, 6, (120, 3))
        first = _run(env, actions)
        env.set_state(state)
        again = _run(env, actions)
        other = pickle.loads(blob)
        try:
            third = _run(other, actions)
        finally:
            other.close()
        for x, y, z in zip(first, again, third):
            for k in range(4):
                assert np.array_equal(x[k], y[k]) and np.array_equal(x[k], z[k])
    finally:
        env.close()


def test_bad_state_refused_before_any_env_changes():
    env = cypool.make_vec("MinAtar/Breakout-v0", 2, seed=0)
    try:
        env.reset()
        good = env.get_state()
        env.step(np.array([1, 3]))
        moved = env.get_state()
        for bad_env in (b"\xff" * len(good["envs"][1]["env"]), b"short", [1, 2]):
            state = pickle.loads(pickle.dumps(good))
            state["envs"][1]["env"] = bad_env
            with pytest.raises(ValueError):
                env.set_state(state)
            now = env.get_state()
            assert pickle.dumps(now) == pickle.dumps(moved)      # env 0 did not change either
    finally:
        env.close()
