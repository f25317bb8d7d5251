"""TorchRL's GymWrapper over cypool pools (both families, same_step and disabled modes):
check_env_specs passes and rollouts cross auto-resets with cypool's numbers."""
import copy

import numpy as np
import pytest

import torch
from torchrl.envs import GymWrapper
from torchrl.envs.utils import check_env_specs

import cypool


@pytest.mark.parametrize("mode", ["same_step", "disabled"])
@pytest.mark.parametrize("env_id,kw", [("Hopper-v5", {}),
                                       ("Pong-v5", {"max_episode_steps": 30})])
def test_gym_wrapper_rollouts(env_id, kw, mode):
    checked = cypool.make_vec(env_id, 3, num_threads=2, autoreset_mode=mode, **kw)
    try:
        check_env_specs(GymWrapper(checked))
    finally:
        checked.close()
    env = cypool.make_vec(env_id, 3, num_threads=2, autoreset_mode=mode, **kw)
    try:
        t = GymWrapper(env)
        start = t.reset()
        # a copy of the pool as TorchRL's rollout starts: replaying TorchRL's actions on it
        # gives the same numbers
        replay = copy.deepcopy(env)
        td = t.rollout(70, auto_reset=False, tensordict=start, break_when_any_done=False)
        assert td.batch_size == torch.Size([3, 70])
        assert td["next", "done"].any()                 # episodes ended and restarted
        try:
            if mode != "same_step":
                return
            reward = td["next", "reward"].squeeze(-1).numpy()
            term = td["next", "terminated"].squeeze(-1).numpy()
            for k in range(70):
                a = td["action"][:, k].numpy()
                if env_id == "Pong-v5" and a.ndim == 2:          # one-hot
                    a = a.argmax(-1)
                _, r, te, _, _ = replay.step(a)
                assert np.array_equal(r.astype(reward.dtype), reward[:, k]), k
                assert np.array_equal(te, term[:, k]), k
        finally:
            replay.close()
    finally:
        env.close()


def test_gymnasium_make_builds_one_env():
    import gymnasium as gym

    env = gym.make("cypool/Hopper-v5")
    try:
        assert isinstance(env.unwrapped, cypool.SingleEnv)
    finally:
        env.close()
