"""mpe2 ids refuse bad kwargs and bad action dicts with a clear error before any env moves,
and refuse the reference's options cypool does not reproduce."""
import numpy as np
import pytest

import cypool


@pytest.mark.parametrize("kw,err,match", [
    ({"N": 0}, ValueError, "N"),
    ({"max_cycles": -1}, ValueError, "max_cycles"),
    ({"max_cycles": 0}, ValueError, "max_cycles"),
    ({"local_ratio": float("nan")}, ValueError, "local_ratio"),
    ({"local_ratio": 1.5}, ValueError, "local_ratio"),
    ({"local_ratio": np.float32(0.5)}, TypeError, "local_ratio"),
    ({"N": 2.5}, TypeError, "N"),
    ({"benchmark_data": True}, ValueError, "benchmark_data"),
    ({"num_agent_neighbors": 2}, ValueError, "num_agent_neighbors"),
    ({"num_landmark_neighbors": 1}, ValueError, "num_landmark_neighbors"),
    ({"bogus": 1}, TypeError, "bogus"),
])
def test_bad_kwargs(kw, err, match):
    with pytest.raises(err, match=match):
        cypool.make_vec("mpe2/simple_spread_v3", 2, **kw)


def test_tag_needs_an_agent():
    with pytest.raises(ValueError, match="num_good"):
        cypool.make_vec("mpe2/simple_tag_v3", 1, num_good=0, num_adversaries=0)


def _step_refused(env, act, err, match):
    before = {k: v.copy() for k, v in env.pool.engine.outputs.items()}
    steps = env.pool.engine.step_counts.copy()
    with pytest.raises(err, match=match):
        env.step(act)
    assert np.array_equal(env.pool.engine.step_counts, steps)
    for k, v in env.pool.engine.outputs.items():
        assert np.array_equal(v, before[k])


def test_bad_discrete_actions():
    env = cypool.make_vec("mpe2/simple_spread_v3", 2)
    env.reset(seed=0)
    good = {f"agent_{k}": np.zeros(2, np.int64) for k in range(3)}
    _step_refused(env, [0, 0], TypeError, "dict")
    _step_refused(env, {"agent_0": np.zeros(2, np.int64)}, ValueError, "missing")
    _step_refused(env, {**good, "agent_9": np.zeros(2, np.int64)}, ValueError, "agent_9")
    _step_refused(env, {**good, "agent_1": np.array([0, 5])}, ValueError, "agent_1")
    _step_refused(env, {**good, "agent_1": np.array([-1, 0])}, ValueError, "agent_1")
    _step_refused(env, {**good, "agent_2": np.zeros(2)}, TypeError, "agent_2")
    _step_refused(env, {**good, "agent_2": np.zeros(3, np.int64)}, ValueError, "agent_2")
    env.step(good)
    env.close()


def test_bad_continuous_actions():
    env = cypool.make_vec("mpe2/simple_push_v3", 2, continuous_actions=True)
    env.reset(seed=0)
    good = {k: np.full((2, 5), 0.5) for k in ("adversary_0", "agent_0")}
    bad = np.full((2, 5), 0.5)
    bad[1, 3] = np.nan
    _step_refused(env, {**good, "agent_0": bad}, ValueError, "agent_0")
    bad[1, 3] = np.inf
    _step_refused(env, {**good, "agent_0": bad}, ValueError, "agent_0")
    _step_refused(env, {**good, "adversary_0": np.zeros((2, 4))}, ValueError, "adversary_0")
    _step_refused(env, {**good, "adversary_0": np.zeros((2, 5), np.int64)}, TypeError,
                  "adversary_0")
    env.step(good)
    env.close()


def test_spaces_and_info_keys():
    env = cypool.make_vec("mpe2/simple_tag_v3", 2)
    assert list(env.single_observation_space) == ["adversary_0", "adversary_1",
                                                  "adversary_2", "agent_0"]
    assert list(env.single_action_space) == list(env.single_observation_space)
    obs, info = env.reset(seed=1)
    assert info["rewards"].shape == (2, 4) and info["terminations"].dtype == np.bool_
    env.close()


def test_human_render_refused():
    """Only rgb_array is offered: "human" is refused clearly at make."""
    with pytest.raises(ValueError, match="human"):
        cypool.make_vec("mpe2/simple_spread_v3", 1, render_mode="human")
