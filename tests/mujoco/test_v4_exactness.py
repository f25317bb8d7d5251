"""gymnasium's MuJoCo v4 ids (the ``*_v4.py`` classes) against gymnasium itself, bit for bit:
obs, rewards, flags and info dicts with their dtypes, across autoresets, seeds, kwargs and
thread counts. Pusher-v4 is refused, as gymnasium refuses it on mujoco >= 3."""
import numpy as np
import pytest
import gymnasium as gym

import cypool
from test_exactness import rollout_equal

V4 = ["Ant-v4", "HalfCheetah-v4", "Hopper-v4", "Walker2d-v4", "Humanoid-v4",
      "HumanoidStandup-v4", "InvertedPendulum-v4", "InvertedDoublePendulum-v4", "Reacher-v4",
      "Swimmer-v4"]

# every v4 kwarg off its default (where the class has kwargs)
VARIANTS = {
    "Ant-v4": [dict(use_contact_forces=True, ctrl_cost_weight=0.3, contact_cost_weight=1e-3,
                    healthy_reward=2, healthy_z_range=(0.3, 0.9),
                    contact_force_range=(-0.5, 0.5), reset_noise_scale=0.2,
                    exclude_current_positions_from_observation=False),
               dict(terminate_when_unhealthy=False, healthy_z_range=(0.5, 0.7),
                    xml_file="ant.xml")],
    "HalfCheetah-v4": [dict(forward_reward_weight=0.7, ctrl_cost_weight=0.2,
                            reset_noise_scale=0.3,
                            exclude_current_positions_from_observation=False)],
    "Hopper-v4": [dict(forward_reward_weight=1.5, ctrl_cost_weight=0.01, healthy_reward=0.5,
                       terminate_when_unhealthy=False, healthy_state_range=(-50.0, 50.0),
                       healthy_z_range=(0.8, 2.0), healthy_angle_range=(-0.3, 0.3),
                       reset_noise_scale=0.05,
                       exclude_current_positions_from_observation=False),
                  dict(healthy_z_range=(1.2, 2.0))],
    "Walker2d-v4": [dict(forward_reward_weight=1.5, ctrl_cost_weight=0.01, healthy_reward=0.5,
                         healthy_z_range=(0.9, 1.9), healthy_angle_range=(-0.8, 0.8),
                         reset_noise_scale=0.05,
                         exclude_current_positions_from_observation=False),
                    dict(terminate_when_unhealthy=False, healthy_z_range=(1.2, 2.0))],
    "Humanoid-v4": [dict(forward_reward_weight=1.0, ctrl_cost_weight=0.2, healthy_reward=4,
                         healthy_z_range=(1.1, 2.0), reset_noise_scale=0.05,
                         exclude_current_positions_from_observation=False),
                    dict(terminate_when_unhealthy=False, healthy_z_range=(1.3, 2.0))],
    "HumanoidStandup-v4": [dict(width=64, height=64)],
    "InvertedPendulum-v4": [dict(camera_id=None)],
    "InvertedDoublePendulum-v4": [dict(max_geom=500)],
    "Reacher-v4": [dict(width=32)],
    "Swimmer-v4": [dict(forward_reward_weight=2.0, ctrl_cost_weight=1e-3,
                        reset_noise_scale=0.3,
                        exclude_current_positions_from_observation=False)],
}


@pytest.mark.parametrize("task", V4)
def test_v4_default_kwargs_exact(task):
    dones = rollout_equal(task, {}, num_envs=3, seed=11, steps=120, num_threads=2,
                          max_episode_steps=40)
    assert dones >= 3 * 2


@pytest.mark.parametrize("task", V4)
@pytest.mark.parametrize("seed", [3, 29])
def test_v4_custom_kwargs_exact(task, seed):
    for kw in VARIANTS[task]:
        rollout_equal(task, kw, num_envs=2, seed=seed, steps=90, num_threads=1 + seed % 2,
                      max_episode_steps=30)


@pytest.mark.parametrize("task", ["Ant-v4", "Hopper-v4", "Humanoid-v4"])
def test_v4_registered_time_limit_exact(task):
    rollout_equal(task, {}, num_envs=2, seed=5, steps=250, num_threads=2, max_episode_steps=None)


@pytest.mark.parametrize("task,kwarg", [("Hopper-v4", "xml_file"), ("Hopper-v4", "frame_skip"),
                                        ("Ant-v4", "frame_skip"), ("Ant-v4", "main_body"),
                                        ("Ant-v4", "forward_reward_weight"),
                                        ("HumanoidStandup-v4", "ctrl_cost_weight"),
                                        ("InvertedPendulum-v4", "reset_noise_scale"),
                                        ("HalfCheetah-v4", "default_camera_config")])
def test_v4_refuses_what_gymnasiums_v4_constructor_refuses(task, kwarg):
    with pytest.raises(TypeError):
        gym.make(task, **{kwarg: 1})
    with pytest.raises(TypeError, match=kwarg):
        cypool.make_vec(task, 1, **{kwarg: 1})


def test_pusher_v4_is_refused_as_gymnasium_refuses_it():
    with pytest.raises(ImportError):
        gym.make("Pusher-v4")
    with pytest.raises(ValueError, match="Pusher-v5"):
        cypool.make_vec("Pusher-v4", 1)


@pytest.mark.parametrize("task", V4)
def test_v4_info_has_gymnasiums_keys_only(task):
    # v4 columns gymnasium does not report (EnvPool's reward_contact, ...) stay out of info
    ref = gym.make_vec(task, 2, vectorization_mode="sync")
    env = cypool.make_vec(task, 2)
    try:
        assert set(env.reset(seed=1)[1]) == set(ref.reset(seed=1)[1])
        a = np.zeros((2,) + ref.single_action_space.shape)
        assert set(env.step(a)[4]) == set(ref.step(a)[4])
    finally:
        env.close()
        ref.close()


def test_v4_through_gymnasium_and_populations():
    env = gym.make("cypool/Hopper-v4")
    ref = gym.make("Hopper-v4")
    try:
        assert np.array_equal(env.reset(seed=2)[0], ref.reset(seed=2)[0])
        a = np.full(3, 0.3)
        assert np.array_equal(env.step(a)[0], ref.step(a)[0])
    finally:
        env.close()
        ref.close()
    pop = cypool.make_population("Hopper-v4", 2, member_kwargs=[{}, {"healthy_reward": 2.0}])
    pop.close()
    with pytest.raises(TypeError, match="frame_skip"):
        cypool.make_population("Hopper-v4", 2, member_kwargs=[{}, {"frame_skip": 2}])
