"""Info dtypes that depend on the kwargs: reward_survive is healthy_reward times a bool in
gymnasium, so SyncVectorEnv gives it the kwarg's type (int64 for a Python int)."""
import numpy as np
import pytest
import gymnasium as gym

import cypool
from cypool import make_population

HEALTHY_REWARD_TASKS = ["InvertedDoublePendulum-v5", "Ant-v5", "Hopper-v5", "Walker2d-v5",
                        "Humanoid-v5"]


@pytest.mark.parametrize("healthy_reward", [10, 10.0, np.float32(10), np.int32(10)],
                         ids=["int", "float", "float32", "int32"])
@pytest.mark.parametrize("task", HEALTHY_REWARD_TASKS)
def test_reward_survive_follows_healthy_reward_type(task, healthy_reward):
    ref = gym.make_vec(task, 2, vectorization_mode="sync", max_episode_steps=15,
                       healthy_reward=healthy_reward)
    env = cypool.make_vec(task, 2, num_threads=1, max_episode_steps=15,
                          healthy_reward=healthy_reward)
    try:
        ref.reset(seed=4)
        env.reset(seed=4)
        rng = np.random.default_rng(0)
        survived = 0
        for _ in range(40):
            # large actions: some episodes end unhealthy (reward_survive 0)
            a = rng.uniform(-1, 1, ref.action_space.shape) * 3
            want, got = ref.step(a)[4], env.step(a)[4]
            assert ("reward_survive" in got) == ("reward_survive" in want)
            if "reward_survive" not in want:    # every env was autoresetting
                continue
            assert got["reward_survive"].dtype == want["reward_survive"].dtype
            assert np.array_equal(got["_reward_survive"], want["_reward_survive"])
            mask = want["_reward_survive"]
            assert np.array_equal(got["reward_survive"][mask], want["reward_survive"][mask])
            survived += int(np.sum(want["reward_survive"][mask] == 10))
        assert survived > 0
    finally:
        env.close()
        ref.close()


def test_population_members_keep_float64_reward_survive():
    # one layout serves every member, and a member may set a float healthy_reward later
    pop = make_population("Hopper-v5", 2, 1, healthy_reward=10,
                          member_kwargs=[{}, {"healthy_reward": 0.5}])
    try:
        pop.reset(seed=0)
        info = pop.step(np.zeros((2, 1, 3)))[4]
        assert info["reward_survive"].dtype == np.float64
        assert np.array_equal(np.asarray(info["reward_survive"]).ravel(), [10.0, 0.5])
    finally:
        pop.close()
