"""gymnasium.make("cypool/<maze id>").reset(options=) with gymnasium-robotics' goal_cell and
reset_cell, against the reference's own gymnasium.make env (same seeds, same options, same
actions); bad cells refused before the env moves, with make_vec's errors."""
import warnings

import gymnasium as gym
import numpy as np
import pytest

from tests.robotics._maze_ref import assert_info, assert_same

import cypool  # noqa: F401  (registers the cypool/ ids)
from cypool.registration import gym_id


def make_pair(env_id, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.make(gym_id(env_id), **kwargs), gym.make(env_id, **kwargs)


def same_step(x, y, where):
    for j, name in enumerate(("obs", "reward", "terminated", "truncated")):
        assert_same(x[j], y[j], f"{where} {name}", ordered=False)
    assert_info(x[4], y[4], where)


@pytest.mark.parametrize("env_id, cells", [
    ("PointMaze_UMaze-v3", ((1, 1), (3, 1))),
    ("PointMaze_Medium_Diverse_GR-v3", ((1, 1), (6, 5))),
    ("AntMaze_UMaze-v5", ((1, 1), (3, 1))), ("AntMaze_UMaze-v4", ((3, 1), (1, 1)))])
def test_single_env_reset_options_match_reference(env_id, cells):
    a, b = cells
    mine, ref = make_pair(env_id)
    try:
        act = np.random.default_rng(0)
        for seed, options in ((5, {"goal_cell": a}), (6, {"reset_cell": b}),
                              (7, {"goal_cell": np.array(b), "reset_cell": a}),
                              (None, {"goal_cell": None}), (None, {}), (8, None),
                              (None, {"goal_cell": list(b), "reset_cell": np.array(a)})):
            x = mine.reset(seed=seed, options=options)
            y = ref.reset(seed=seed, options=options)
            assert_same(x[0], y[0], f"reset {options}", ordered=False)
            assert_info(x[1], y[1], f"reset {options}")
            for t in range(3):
                u = act.uniform(-1, 1, mine.action_space.shape).astype(np.float32)
                same_step(mine.step(u), ref.step(u), f"{options} step {t}")
    finally:
        mine.close()
        ref.close()


@pytest.mark.parametrize("options, match", [
    ({"goal_cell": (2, 1)}, "wall cell"), ({"reset_cell": (0, 0)}, "wall cell"),
    ({"goal_cell": (5, 1)}, "outside"), ({"reset_cell": (1, -1)}, "outside"),
    ({"goal_cell": (1, 1, 1)}, "shape"), ({"goal_cell": (1.0, 1.0)}, "integer"),
    ({"reset_cell": "ab"}, "integer"), ({"goal_cel": (1, 1)}, "unknown reset option"),
    ({"reset_mask": np.array([True])}, "unknown reset option")])
def test_single_env_bad_options_refused_before_the_env_moves(options, match):
    mine, ref = make_pair("PointMaze_UMaze-v3")
    try:
        mine.reset(seed=1)
        ref.reset(seed=1)
        with pytest.raises(ValueError, match=match):
            mine.reset(options=options)
        x, y = mine.reset(), ref.reset()          # the stream continues as if not called
        assert_same(x[0], y[0], "reset after the refused one", ordered=False)
        u = np.full(2, 0.5, np.float32)
        same_step(mine.step(u), ref.step(u), "step after the refused one")
    finally:
        mine.close()
        ref.close()


def test_single_env_options_not_a_dict_and_ids_without_options():
    mine = gym.make(gym_id("PointMaze_UMaze-v3"))
    other = gym.make(gym_id("CartPole-v1"))
    try:
        with pytest.raises(TypeError, match="dict"):
            mine.reset(seed=0, options=[("goal_cell", (1, 1))])
        with pytest.raises(ValueError, match="takes none"):
            other.reset(seed=0, options={"goal_cell": (1, 1)})
        other.reset(seed=0, options={})
    finally:
        mine.close()
        other.close()
