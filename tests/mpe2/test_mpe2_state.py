"""Snapshots of mpe2 pools: get_state mid-episode, step on, set_state (through pickle), and
the same actions give the same results again (collect_treasure's world.np_random included);
a pool made from another pool's state continues it."""
import pickle

import numpy as np
import pytest

import cypool


def _acts(env, rng):
    return {k: rng.integers(0, sp.n, env.num_envs)
            for k, sp in env.single_action_space.spaces.items()}


def _run(env, acts):
    out = []
    for a in acts:
        o, r, te, tr, info = env.step(a)
        out.append(({k: v.copy() for k, v in o.items()}, r.copy(), te.copy(), tr.copy(),
                    info["rewards"].copy()))
    return out


def _same(x, y):
    for (o1, r1, te1, tr1, i1), (o2, r2, te2, tr2, i2) in zip(x, y):
        assert all(np.array_equal(o1[k], o2[k]) for k in o1)
        assert np.array_equal(r1, r2) and np.array_equal(te1, te2)
        assert np.array_equal(tr1, tr2) and np.array_equal(i1, i2)


@pytest.mark.parametrize("module,kw", [
    ("simple_spread_v3", {}),
    ("simple_line_v1", {}),
    ("collect_treasure_v1", {"num_collectors": 6, "num_treasures": 12}),
])
def test_snapshot_restores(module, kw):
    env = cypool.make_vec(f"mpe2/{module}", 3, max_cycles=9, **kw)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    _run(env, [_acts(env, rng) for _ in range(5)])
    state = pickle.loads(pickle.dumps(env.get_state()))
    acts = [_acts(env, rng) for _ in range(14)]      # past an episode end: autoreset
    first = _run(env, acts)
    env.set_state(state)
    _same(first, _run(env, acts))
    other = cypool.make_vec(f"mpe2/{module}", 3, max_cycles=9, **kw)
    other.reset(seed=99)
    other.set_state(state)
    _same(first, _run(other, acts))
    env.close()
    other.close()


def test_treasure_refuses_a_stream_that_is_not_pcg64():
    """collect_treasure copies each env's PCG64 state into its world stream at every reset;
    a snapshot that installs another bit generator is an EngineError there, never a read of
    the wrong state layout."""
    env = cypool.make_vec("mpe2/collect_treasure_v1", 2, max_cycles=3)
    env.reset(seed=1)
    state = env.get_state()
    for st in state["envs"]:
        assert st["rng"][0] == "PCG64"
        st["rng"] = ("MT19937", np.random.MT19937(0).state)
    env.set_state(state)
    with pytest.raises(cypool.EngineError, match="PCG64"):
        env.reset()
    env.close()
