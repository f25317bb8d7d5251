"""The reference side of the MinAtar tests: MinAtar 1.0.15's gymnasium envs, and a
lock-step comparison of cypool.make_vec with SyncVectorEnv over them."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("minatar")
import minatar.gym as mgym  # noqa: E402

import cypool  # noqa: E402

mgym.register_envs()

GAMES = ("Asterix", "Breakout", "Freeway", "Seaquest", "SpaceInvaders")
IDS = tuple(f"MinAtar/{g}-v{k}" for g in GAMES for k in (0, 1))


def ref_vec(env_id, n, **kwargs):
    return gym.vector.SyncVectorEnv([lambda: gym.make(env_id, **kwargs) for _ in range(n)])


def assert_same(a, b, what):
    assert type(a) is type(b) or what == "info", (what, type(a), type(b))
    if isinstance(a, dict):
        assert a.keys() == b.keys(), (what, a.keys(), b.keys())
        for k in a:
            assert_same(a[k], b[k], f"{what}[{k}]")
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (what, a.dtype, b.dtype)
    assert np.array_equal(a, b), what


def lockstep(env_id, n, steps, seed, *, num_threads=1, reseed_at=None, action_seed=0,
             **kwargs):
    """Steps both with the same random actions; compares every output."""
    ours = cypool.make_vec(env_id, n, num_threads=num_threads, **kwargs)
    ref = ref_vec(env_id, n, **kwargs)
    try:
        rng = np.random.default_rng(action_seed)
        o1, i1 = ours.reset(seed=seed)
        o2, i2 = ref.reset(seed=seed)
        assert_same(o1, o2, "reset obs")
        assert_same(i1, i2, "info")
        ends = 0
        for t in range(steps):
            if t == reseed_at:
                o1, i1 = ours.reset(seed=seed + 1000)
                o2, i2 = ref.reset(seed=seed + 1000)
                assert_same(o1, o2, f"reseed obs at {t}")
                continue
            a = rng.integers(0, ref.single_action_space.n, n)
            out1 = ours.step(a)
            out2 = ref.step(a)
            for name, x, y in zip(("obs", "reward", "terminated", "truncated", "info"),
                                  out1, out2):
                assert_same(x, y, f"{env_id} step {t} {name}")
            ends += int(np.sum(out2[2]))
        return ends
    finally:
        ours.close()
        ref.close()
