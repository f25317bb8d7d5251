"""Shared by the multi-agent tests: the served mpe2 modules, their references, random
actions."""
import importlib

import numpy as np
from gymnasium import spaces

import cypool.multiagent.mpe2 as cy_mpe2

MODULES = list(cy_mpe2.__all__)


def reference(name):
    return importlib.import_module(f"mpe2.{name}")


def ours(name):
    return getattr(cy_mpe2, name)


def random_action(space, rng):
    if isinstance(space, spaces.Discrete):
        return int(rng.integers(space.n))
    return rng.random(space.shape).astype(space.dtype)


def random_batch(spaces_by_agent, n, rng):
    """{agent: (n, ...) array} of random actions."""
    out = {}
    for a, sp in spaces_by_agent.items():
        if isinstance(sp, spaces.Discrete):
            out[a] = rng.integers(sp.n, size=n).astype(np.int64)
        else:
            out[a] = rng.random((n,) + sp.shape).astype(sp.dtype)
    return out


def assert_same_dict(got, want, what):
    assert list(got) == list(want), f"{what}: agents {list(got)} != {list(want)}"
    for a in want:
        g, w = got[a], want[a]
        if isinstance(w, np.ndarray):
            assert isinstance(g, np.ndarray) and g.dtype == w.dtype, (what, a, g, w)
            assert np.array_equal(g, w), f"{what}[{a}]: {g} != {w}"
        else:
            assert type(g) is type(w) and g == w, f"{what}[{a}]: {g!r} != {w!r}"
