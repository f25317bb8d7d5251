"""Shared by the maze tests: gymnasium-robotics registered with gymnasium (the tests skip
without it), and exact comparisons of cypool's results with the reference's."""
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    gymnasium_robotics = pytest.importorskip("gymnasium_robotics")
gym.register_envs(gymnasium_robotics)

MODES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}


def assert_same(x, y, where="obs", ordered=True):
    """x (cypool's) equals y (gymnasium's): structure, key order, dtypes and values. A final
    observation (one env's Dict, same-step autoreset) has the space's key order in cypool and
    the maze env's _get_obs's in gymnasium-robotics: its keys are compared as a set."""
    if isinstance(y, dict):
        assert isinstance(x, dict), where
        assert (list(x) == list(y)) if ordered else (sorted(x) == sorted(y)), (where, list(x))
        for k in y:
            assert_same(x[k], y[k], f"{where}[{k!r}]")
    elif isinstance(y, np.ndarray) and y.dtype == object:
        assert x.dtype == object and x.shape == y.shape, where
        for k, (u, v) in enumerate(zip(x, y)):
            if v is None:
                assert u is None, where
            else:
                assert_same(u, v, f"{where}[{k}]", ordered=False)
    else:
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype, (where, x.dtype, y.dtype)
        assert np.array_equal(x, y), (where, x, y)


def assert_info(x, y, where):
    assert sorted(x) == sorted(y), (where, sorted(x), sorted(y))
    for k in y:
        assert_same(x[k], y[k], f"{where}: info[{k!r}]")
