"""cypool.multiagent's single envs (the import swap) against mpe2's parallel_env: the same
seed and actions give the same agents, observations, rewards, terminations, truncations and
infos, across episodes; PettingZoo's conformance tests pass."""
import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test

from _ma_ref import MODULES, assert_same_dict, ours, random_action, reference

pytestmark = pytest.mark.skipif(not MODULES, reason="no mpe2 module served")


def _kwargs_variants(name):
    yield dict(max_cycles=7)
    yield dict(max_cycles=5, continuous_actions=True)


@pytest.mark.parametrize("name", MODULES)
def test_same_episodes_as_the_reference(name):
    for kw in _kwargs_variants(name):
        ref = reference(name).parallel_env(**kw)
        env = ours(name).parallel_env(**kw)
        assert env.possible_agents == ref.possible_agents
        for a in ref.possible_agents:
            assert env.observation_space(a) == ref.observation_space(a)
            assert env.action_space(a) == ref.action_space(a)
        rng = np.random.default_rng(3)
        for episode, seed in enumerate((11, None, 12)):
            got, want = env.reset(seed=seed), ref.reset(seed=seed)
            assert env.agents == ref.agents
            assert_same_dict(got[0], want[0], f"{name} reset obs")
            assert got[1] == want[1]
            while ref.agents:
                acts = {a: random_action(ref.action_space(a), rng) for a in ref.agents}
                got, want = env.step(acts), ref.step(acts)
                for g, w, what in zip(got, want, ("obs", "rew", "term", "trunc")):
                    assert_same_dict(g, w, f"{name} {kw} episode {episode} {what}")
                assert got[4] == dict(want[4])
                assert env.agents == ref.agents
            assert np.array_equal(env.state(), ref.state())
        assert env.step({}) == ({}, {}, {}, {}, {})
        env.close()


@pytest.mark.parametrize("name", MODULES[:3])
def test_pettingzoo_conformance(name):
    parallel_api_test(ours(name).parallel_env(max_cycles=30), num_cycles=60)
    api_test(ours(name).env(max_cycles=30), num_cycles=60)
