"""A CleanRL-style script (its make_env thunks, gymnasium's FlattenObservation vector wrapper,
random actions from the seeded action space, then a policy, the episodic bookkeeping) runs
unchanged on FetchReach-v4 whether its vector env is gymnasium's SyncVectorEnv over
gymnasium-robotics or cypool.make_vec: the same observations, rewards and flags."""
import gymnasium as gym
import numpy as np

import cypool

from _fetch_ref import patch_reference  # noqa: E402

ENV_ID, NUM_ENVS, SEED, STEPS, LEARNING_STARTS = "FetchReach-v4", 4, 1, 120, 40


def make_env(env_id):                   # CleanRL's thunk
    def thunk():
        return gym.make(env_id)
    return thunk


def script(envs):
    """The loop of a CleanRL continuous-control script, minus the learner: returns what it saw."""
    envs = gym.wrappers.vector.FlattenObservation(envs)
    envs.single_action_space.seed(SEED)
    obs, _ = envs.reset(seed=SEED)
    w = np.random.default_rng(SEED).normal(size=(obs.shape[1], envs.single_action_space.shape[0]))
    seen, returns = [obs], []
    ep_return = np.zeros(NUM_ENVS)
    for step in range(STEPS):
        if step < LEARNING_STARTS:
            actions = np.array([envs.single_action_space.sample() for _ in range(NUM_ENVS)])
        else:
            actions = np.clip(np.tanh(obs @ w), -1, 1).astype(np.float32)
        obs, rewards, terminations, truncations, infos = envs.step(actions)
        ep_return += rewards
        done = terminations | truncations
        returns += ep_return[done].tolist()
        ep_return[done] = 0
        # (an autoreset step's info is empty, in both)
        success = infos.get("is_success", np.full(NUM_ENVS, -1, np.float32))
        seen += [obs, rewards, terminations, truncations, success]
    envs.close()
    return seen, returns


def test_the_script_runs_unchanged_and_sees_the_same():
    patch_reference()
    ref, ref_returns = script(gym.vector.SyncVectorEnv([make_env(ENV_ID)
                                                        for _ in range(NUM_ENVS)]))
    got, got_returns = script(cypool.make_vec(ENV_ID, NUM_ENVS))   # the one changed line
    assert len(got_returns) == 2 * NUM_ENVS and got_returns == ref_returns
    for x, y in zip(got, ref):
        assert x.dtype == y.dtype and np.array_equal(x, y)
