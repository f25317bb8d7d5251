"""Snapshots (get_state/set_state, pickle, copy.deepcopy) of a user's pool that keeps state
of its own (tests/spec/_keeper.pyx): saved when the pool says how (API version 1's state
hooks, or the arrays that hold its state, ``state_arrays``), refused with a TypeError naming
the pool and what to define when it says nothing, never a copy that silently continues from
construction-time values."""
import copy
import pickle
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import cypool
import cypool.api

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from _buildext import build_extension, import_built  # noqa: E402

POOLS = ("HiddenPool", "ArrayPool", "HookPool", "BothPool", "HalfHookPool", "BadArrayPool",
         "RowPool")


@pytest.fixture(scope="module")
def keeper():
    out = build_extension("_keeper", HERE / "_keeper.pyx", cypool.api.extension_kwargs(),
                          Path.home() / ".cache" / "cypool" / "test-keeper")
    mod = import_built("_keeper", out)
    for name in POOLS:
        cypool.api.register_env(
            f"Keep{name}-v0", getattr(mod, name),
            observation_space=gym.spaces.Box(-np.inf, np.inf, (1,), np.float64),
            action_space=gym.spaces.Discrete(2), max_episode_steps=60)
    yield mod
    for name in POOLS:
        cypool.api.unregister_env(f"Keep{name}-v0")


def _stepped(env_id, n=4, steps=7, seed=3):
    env = cypool.make_vec(env_id, n, num_threads=2)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        env.step(rng.integers(0, 2, n))
    return env


def _assert_continues_alike(a, b, n=4, steps=40):
    rng = np.random.default_rng(11)
    for _ in range(steps):
        act = rng.integers(0, 2, n)
        ra, rb = a.step(act), b.step(act)
        for x, y in zip(ra[:4], rb[:4]):
            assert np.array_equal(x, y)


@pytest.mark.parametrize("name", ["ArrayPool", "HookPool", "RowPool"])
def test_a_declared_pool_snapshots_bit_for_bit(keeper, name):
    env_id = f"Keep{name}-v0"

    def history():                       # the same pool with the same past, made anew
        env = _stepped(env_id)
        assert np.abs(env.step(np.ones(4, np.int64))[0]).max() > 0   # state moved off zero
        return env

    env = history()
    clones = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    fresh = cypool.make_vec(env_id, 4, num_threads=1)
    fresh.set_state(env.get_state())
    clones.append(fresh)
    for clone in clones:
        _assert_continues_alike(history(), clone)


def test_state_arrays_move_one_env_to_another(keeper):
    env = _stepped("KeepArrayPool-v0")
    before = env.get_state(env_ids=[1])
    acts = np.random.default_rng(4).integers(0, 2, (30, 4))
    ahead = copy.deepcopy(env)
    want = [ahead.step(a)[0][1] for a in acts]          # env 1 from the snapshot on
    env.step(np.ones(4, np.int64))
    env.set_state(before, env_ids=[2])                   # env 2 becomes env 1 then
    for a, w in zip(acts, want):
        a = a.copy()
        a[2] = a[1]
        assert np.array_equal(env.step(a)[0][2], w)


def test_a_pool_with_state_and_no_hooks_refuses_snapshots(keeper):
    env = _stepped("KeepHiddenPool-v0")
    for take in (env.get_state, lambda: pickle.dumps(env), lambda: copy.deepcopy(env),
                 lambda: copy.copy(env)):
        with pytest.raises(TypeError) as err:
            take()
        msg = str(err.value)
        assert "HiddenPool" in msg
        for hook in ("_env_state", "_check_env_state", "_set_env_state", "state_arrays"):
            assert hook in msg
    state = _stepped("KeepArrayPool-v0").get_state()
    state["env_id"] = "KeepHiddenPool-v0"
    obs = env.step(np.zeros(4, np.int64))[0]
    with pytest.raises(TypeError, match="HiddenPool"):
        env.set_state(state)
    # nothing moved: the pool goes on as before
    twin = _stepped("KeepHiddenPool-v0")
    assert np.array_equal(twin.step(np.zeros(4, np.int64))[0], obs)
    _assert_continues_alike(env, twin)


def test_a_population_of_such_a_pool_refuses_pickling(keeper):
    pop = cypool.make_population("KeepHiddenPool-v0", 2, 2)
    pop.reset(seed=0)
    with pytest.raises(TypeError, match="HiddenPool"):
        pickle.dumps(pop)


def test_a_pool_never_reset_still_pickles(keeper):
    # no state yet: the copy is a fresh pool, exactly what it was copied from
    env = cypool.make_vec("KeepHiddenPool-v0", 3)
    clone = pickle.loads(pickle.dumps(env))
    env.reset(seed=5)
    clone.reset(seed=5)
    _assert_continues_alike(env, clone, n=3)


def test_half_the_hooks_names_the_missing_ones(keeper):
    env = _stepped("KeepHalfHookPool-v0")
    with pytest.raises(TypeError, match=r"HalfHookPool.*_check_env_state.*_set_env_state"):
        env.get_state()


@pytest.mark.parametrize("name, match", [
    ("BothPool", "both"),
    ("BadArrayPool", "nowhere"),
])
def test_bad_state_declarations_are_refused_at_construction(keeper, name, match):
    with pytest.raises(TypeError, match=match):
        cypool.make_vec(f"Keep{name}-v0", 2)


def test_state_arrays_must_name_the_pools_own_buffer(keeper):
    """A `state_arrays` name whose attribute returns a copy (a property) passed the checks:
    set_state wrote into the temporary and snapshots silently did not restore. Two reads
    that share no memory show it: refused when the pool is made, naming the attribute. A
    property that returns a new view of the pool's own buffer at each read is the buffer."""

    class CopyPool(keeper.ArrayPool):
        state_arrays = ("counts_copy",)

        @property
        def counts_copy(self):
            return self.positions.copy()

    class ViewPool(keeper.ArrayPool):
        state_arrays = ("counts_view",)

        @property
        def counts_view(self):
            return self.positions[:]

    space = dict(observation_space=gym.spaces.Box(-np.inf, np.inf, (1,), np.float64),
                 action_space=gym.spaces.Discrete(2), max_episode_steps=60)
    cypool.api.register_env("KeepCopyPool-v0", CopyPool, **space)
    cypool.api.register_env("KeepViewPool-v0", ViewPool, **space)
    try:
        for make in (lambda: cypool.make_vec("KeepCopyPool-v0", 2),
                     lambda: cypool.make_population("KeepCopyPool-v0", 2, 2),
                     lambda: gym.make("cypool/KeepCopyPool-v0")):
            with pytest.raises(TypeError, match=r"CopyPool.*'counts_copy'.*share no memory"
                                                r".*same buffer each time") as err:
                make()
            assert "not a copy" in str(err.value)

        env = _stepped("KeepViewPool-v0")
        state = env.get_state()
        ahead = [env.step(np.ones(4, np.int64))[0] for _ in range(5)]
        env.set_state(state)                              # restores: the same buffer
        assert all(np.array_equal(env.step(np.ones(4, np.int64))[0], a) for a in ahead)
        _assert_continues_alike(env, pickle.loads(pickle.dumps(env)))
        env.close()
    finally:
        cypool.api.unregister_env("KeepCopyPool-v0")
        cypool.api.unregister_env("KeepViewPool-v0")
