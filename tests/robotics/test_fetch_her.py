"""A real client: stable-baselines3's SAC + HerReplayBuffer on FetchReach-v4 through cypool
(to_sb3; HER's env_method("compute_reward", ...) on batches of goals runs the family's batched
compute_reward) learns the same parameters as through the reference env (DummyVecEnv over
gymnasium-robotics, patched as in _fetch_ref.py), for the same seeds."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
sb3 = pytest.importorskip("stable_baselines3")

import gymnasium as gym  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv  # noqa: E402

import cypool  # noqa: E402
from cypool.integrations.sb3 import to_sb3  # noqa: E402

import _fetch_ref  # noqa: E402, F401 (registers the reference and patches it)

ID = "FetchReach-v4"


def _train(venv):
    model = sb3.SAC("MultiInputPolicy", venv, replay_buffer_class=sb3.HerReplayBuffer,
                    replay_buffer_kwargs=dict(n_sampled_goal=4, goal_selection_strategy="future"),
                    learning_starts=110, batch_size=64, seed=0, device="cpu")
    model.learn(180)
    return torch.nn.utils.parameters_to_vector(model.policy.parameters()).detach().numpy()


def test_sac_her_learns_the_same_parameters_as_on_the_reference():
    torch.set_num_threads(1)
    want = _train(DummyVecEnv([lambda: gym.make(ID)]))
    got = _train(to_sb3(cypool.make_vec(ID, 1, autoreset_mode="same_step")))
    assert np.array_equal(got, want)


def test_env_method_compute_reward():
    env = to_sb3(cypool.make_vec("FetchReachDense-v4", 2, autoreset_mode="same_step"))
    try:
        rng = np.random.default_rng(0)
        a, d = rng.normal(size=(256, 3)), rng.normal(size=(256, 3))
        ref = gym.make("FetchReachDense-v4").unwrapped
        (got,) = env.env_method("compute_reward", a, d, {}, indices=[0])
        assert np.array_equal(got, ref.compute_reward(a, d, {}))
    finally:
        env.close()
