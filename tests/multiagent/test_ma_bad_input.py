"""Bad input to cypool.multiagent gets a clear error before any env moves: an action dict
missing an agent or naming an unknown one, wrong shapes, out-of-range or NaN actions, an
unknown kwarg, a non-multi-agent id; a closed batch refuses every call."""
import numpy as np
import pytest

import cypool
from cypool.multiagent import VecEnv
from _ma_ref import MODULES, ours, random_batch

pytestmark = pytest.mark.skipif("simple_spread_v3" not in MODULES,
                                reason="simple_spread_v3 not served")


@pytest.fixture
def batch():
    env = ours("simple_spread_v3").vec_env(3, max_cycles=10)
    env.reset(seed=0)
    yield env
    env.close()


def _unchanged(env, before):
    after = env.state()
    assert np.array_equal(after, before), "an env moved"


@pytest.mark.parametrize("edit, error, match", [
    (lambda a: a.pop("agent_1"), ValueError, "agent_1"),
    (lambda a: a.update(agent_9=np.zeros(3, np.int64)), ValueError, "agent_9"),
    (lambda a: a.update(agent_0=np.zeros(2, np.int64)), ValueError, "agent_0"),
    (lambda a: a.update(agent_0=np.full(3, 5, np.int64)), ValueError, "agent_0"),
    (lambda a: a.update(agent_0=np.full(3, -1, np.int64)), ValueError, "agent_0"),
])
def test_bad_discrete_actions_are_refused_before_any_env_moves(batch, edit, error, match):
    acts = random_batch(batch.action_spaces, 3, np.random.default_rng(0))
    edit(acts)
    before = batch.state()
    with pytest.raises(error, match=match):
        batch.step(acts)
    _unchanged(batch, before)


def test_nan_continuous_actions_are_refused():
    env = ours("simple_spread_v3").vec_env(2, continuous_actions=True)
    env.reset(seed=1)
    acts = random_batch(env.action_spaces, 2, np.random.default_rng(0))
    acts["agent_2"][1, 3] = np.nan
    before = env.state()
    with pytest.raises(ValueError, match="agent_2"):
        env.step(acts)
    _unchanged(env, before)
    env.close()


def test_actions_must_be_a_dict(batch):
    with pytest.raises((TypeError, ValueError)):
        batch.step(np.zeros((3, 3), np.int64))


def test_single_env_names_the_missing_agent():
    env = ours("simple_spread_v3").parallel_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="agent_2"):
        env.step({"agent_0": 0, "agent_1": 0})
    with pytest.raises(TypeError, match="dict"):
        env.step([0, 0, 0])
    env.close()


def test_unknown_kwarg_and_bad_values_are_refused():
    mod = ours("simple_spread_v3")
    with pytest.raises((TypeError, ValueError), match="no_such_kwarg"):
        mod.vec_env(2, no_such_kwarg=1)
    with pytest.raises(ValueError):
        mod.vec_env(2, N=0)
    with pytest.raises(ValueError):
        mod.parallel_env(max_cycles=-1)


def test_a_single_agent_id_is_not_a_multi_agent_env():
    with pytest.raises(ValueError, match="not a multi-agent env"):
        VecEnv("CartPole-v1", 2)


def test_step_before_reset_and_after_close():
    env = ours("simple_spread_v3").vec_env(2)
    acts = random_batch(env.action_spaces, 2, np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="reset"):
        env.step(acts)
    env.close()
    with pytest.raises(cypool.ClosedEnvError):
        env.reset(seed=0)
    env.close()                    # twice: a no-op
