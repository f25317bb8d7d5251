"""env.xla() on the families after MuJoCo, Atari and classic control: Box2D, toy text's Tuple
observation (Blackjack) and dm_control's Dict observations, through a jitted lax.scan, equal
to the Python path (np.array_equal, leaf by leaf) across autoresets."""
import os

import gymnasium as gym
import jax
import numpy as np
import pytest

import cypool
from _xla_helpers import python_steps, scan_steps

os.environ.setdefault("MUJOCO_GL", "egl")

T = 200      # steps: random LunarLander and Blackjack episodes end well within them
IDS = ["LunarLander-v3", "LunarLanderContinuous-v3", "BipedalWalker-v3", "Blackjack-v1",
       "dm_control/cheetah-run-v0", "dm_control/walker-walk-v0"]


def _same(x, y, t, what):
    """Leaf by leaf: the scan's outputs at time t against the Python path's (a tuple or dict
    observation is one output per leaf)."""
    if isinstance(y, dict):     # a jax pytree's dict comes back with its keys sorted
        assert isinstance(x, dict) and sorted(x) == sorted(y), what
        for k in y:
            _same(x[k], y[k], t, f"{what}[{k}]")
    elif isinstance(y, tuple):
        assert isinstance(x, (tuple, list)) and len(x) == len(y), what
        for k, (a, b) in enumerate(zip(x, y)):
            _same(a, b, t, f"{what}[{k}]")
    else:
        a = np.asarray(x)[t]
        b = np.asarray(y).astype(a.dtype)      # jax without x64: float32/int32 leaves
        assert a.shape == b.shape and np.array_equal(a, b), (what, t)


@pytest.mark.parametrize("env_id", IDS)
def test_scan_equals_the_python_path(env_id):
    if env_id.startswith("dm_control/"):
        pytest.importorskip("dm_control", reason="dm_control is a test dependency")
    kw = {"time_limit": 0.2} if env_id.startswith("dm_control/") else {}
    env = cypool.make_vec(env_id, 3, num_threads=2, **kw)
    ref = cypool.make_vec(env_id, 3, num_threads=2, **kw)
    env.reset(seed=1), ref.reset(seed=1)
    sp = env.single_action_space
    rng = np.random.default_rng(0)
    if isinstance(sp, gym.spaces.Discrete):
        acts = rng.integers(0, sp.n, (T, 3)).astype(np.int32)
    else:
        acts = rng.uniform(sp.low, sp.high, (T, 3) + sp.shape).astype(np.float32)
    handle, recv, send, step = env.xla()
    xs = scan_steps(step, handle, acts)
    ends = 0
    for t, (o, r, te, tr, _) in enumerate(python_steps(ref, acts)):
        for k, (x, y) in enumerate(zip(xs[:4], (o, r, te, tr))):
            _same(x, y, t, f"{env_id} output {k}")
        ends += int(np.sum(te | tr))
    assert ends > 0                                     # autoresets inside the scan
    env.close(), ref.close()
