"""env.call(name, *args, **kwargs) binds its arguments as gymnasium's SyncVectorEnv.call does
(the name by position or by keyword, the rest passed on as they came), on its C fast path
(the pool's bound methods: HER's compute_reward) and on its general path (attributes, the
refusals), and keeps no reference to anything it was given."""
import inspect
import sys

import gymnasium as gym
import numpy as np
import pytest

import cypool
from cypool.vector import VectorEnv

gymnasium_robotics = pytest.importorskip("gymnasium_robotics")


@pytest.fixture(scope="module")
def maze():
    gym.register_envs(gymnasium_robotics)
    env = cypool.make_vec("PointMaze_UMaze-v3", 2)
    ref = gym.vector.SyncVectorEnv([lambda: gym.make("PointMaze_UMaze-v3") for _ in range(2)])
    obs, _ = env.reset(seed=3)
    ref.reset(seed=3)
    rng = np.random.default_rng(0)
    d = obs["desired_goal"][[0, 1, 0, 1, 1]]
    a = d + rng.normal(0, 0.4, d.shape)
    yield env, ref, a, d
    env.close()
    ref.close()


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.array_equal(g, w)


@pytest.mark.parametrize("form", ["positional", "keywords", "name by keyword", "mixed"])
def test_argument_forms_as_sync_vector_env(maze, form):
    env, ref, a, d = maze
    args, kwargs = {
        "positional": (("compute_reward", a, d, {}), {}),
        "keywords": (("compute_reward",), dict(achieved_goal=a, desired_goal=d, info={})),
        "name by keyword": ((), dict(name="compute_reward", achieved_goal=a, desired_goal=d,
                                     info={})),
        "mixed": (("compute_reward", a), dict(info={}, desired_goal=d)),
    }[form]
    _same(env.call(*args, **kwargs), ref.call(*args, **kwargs))
    _same(VectorEnv.call(env, *args, **kwargs), ref.call(*args, **kwargs))
    assert env.call(*(("reward_type",) if args else ()),
                    **({} if args else dict(name="reward_type"))) == ref.get_attr("reward_type")


def test_bad_arguments_are_python_errors(maze):
    env, ref, a, d = maze
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'name'"):
        env.call()
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'name'"):
        env.call(achieved_goal=a)
    with pytest.raises(TypeError, match="unhashable"):
        env.call(["compute_reward"], a, d, {})
    with pytest.raises(TypeError):      # the bound method's own binding
        env.call("compute_reward", a, d, {}, bogus=1)
    with pytest.raises(TypeError):      # the descriptor checks what it is bound to
        VectorEnv.call(object(), "compute_reward")
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        env.call(name="nothing", x=1)


def test_signature_and_doc():
    assert str(inspect.signature(VectorEnv.call)) == "(self, /, name, *args, **kwargs)"
    assert "SyncVectorEnv.call" in VectorEnv.call.__doc__


def test_no_reference_is_kept(maze):
    """Every path leaves the refcounts of what it was given as they were."""
    env, _, a, d = maze
    info, name = {}, "compute_reward"
    calls = [
        lambda: env.call(name, a, d, info),
        lambda: env.call(name, achieved_goal=a, desired_goal=d, info=info),
        lambda: env.call(name=name, achieved_goal=a, desired_goal=d, info=info),
        lambda: env.call("reward_type"),
    ]
    failing = [
        lambda: env.call(name, a, d, info, bogus=a),
        lambda: env.call("nothing", a, info=info),
        lambda: env.call("step", a),
        lambda: env.call(achieved_goal=a),
    ]
    for fn in calls + failing:
        for _ in range(3):
            try:
                fn()
            except (TypeError, ValueError, AttributeError):
                pass
    before = [sys.getrefcount(x) for x in (a, d, info, name)]
    for fn in calls:
        for _ in range(1000):
            fn()
    for fn in failing:
        for _ in range(1000):
            with pytest.raises((TypeError, ValueError, AttributeError)):
                fn()
    assert [sys.getrefcount(x) for x in (a, d, info, name)] == before
