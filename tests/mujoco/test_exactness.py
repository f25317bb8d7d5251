"""Trajectory exactness against gymnasium's own MuJoCo envs (SyncVectorEnv), bit for bit.

Both sides are reset with the same seed and fed the same actions (float64 and float32 rows
alternate, since numpy's costs round differently for each); a short max_episode_steps forces
several truncation autoresets, and random actions bring natural terminations.
"""
import numpy as np
import pytest
import gymnasium as gym

import cypool

TASKS = ["Ant-v5", "HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "Humanoid-v5",
         "HumanoidStandup-v5", "InvertedPendulum-v5", "InvertedDoublePendulum-v5", "Reacher-v5",
         "Swimmer-v5", "Pusher-v5"]

# Non-default kwargs per task: every weight, range and observation switch moved off default.
VARIANTS = {
    "Ant-v5": dict(ctrl_cost_weight=0.3, contact_cost_weight=1e-3, healthy_reward=0.5,
                   healthy_z_range=(0.3, 0.9), contact_force_range=(-0.5, 0.5),
                   reset_noise_scale=0.2, exclude_current_positions_from_observation=False,
                   include_cfrc_ext_in_observation=False, terminate_when_unhealthy=True,
                   forward_reward_weight=2.0, frame_skip=3, main_body="torso"),
    "HalfCheetah-v5": dict(forward_reward_weight=0.7, ctrl_cost_weight=0.2, reset_noise_scale=0.3,
                           exclude_current_positions_from_observation=False),
    "Hopper-v5": dict(forward_reward_weight=1.5, ctrl_cost_weight=0.01, healthy_reward=0.5,
                      terminate_when_unhealthy=False, healthy_state_range=(-50.0, 50.0),
                      healthy_z_range=(0.8, 2.0), healthy_angle_range=(-0.3, 0.3),
                      reset_noise_scale=0.05, exclude_current_positions_from_observation=False),
    "Walker2d-v5": dict(forward_reward_weight=1.5, ctrl_cost_weight=0.01, healthy_reward=0.5,
                        healthy_z_range=(0.9, 1.9), healthy_angle_range=(-0.8, 0.8),
                        reset_noise_scale=0.05, exclude_current_positions_from_observation=False),
    "Humanoid-v5": dict(forward_reward_weight=1.0, ctrl_cost_weight=0.2, contact_cost_weight=1e-6,
                        contact_cost_range=(-np.inf, 5.0), healthy_reward=4.0,
                        healthy_z_range=(1.1, 2.0), reset_noise_scale=0.05,
                        include_cinert_in_observation=False, include_cvel_in_observation=False,
                        exclude_current_positions_from_observation=False),
    "HumanoidStandup-v5": dict(ctrl_cost_weight=0.2, impact_cost_weight=1e-6,
                               impact_cost_range=(-np.inf, 5.0), reset_noise_scale=0.05,
                               include_qfrc_actuator_in_observation=False,
                               include_cfrc_ext_in_observation=False,
                               exclude_current_positions_from_observation=False),
    "InvertedPendulum-v5": dict(reset_noise_scale=0.1),
    "InvertedDoublePendulum-v5": dict(healthy_reward=5.0, reset_noise_scale=0.2),
    "Reacher-v5": dict(reward_dist_weight=2.0, reward_control_weight=0.5),
    "Swimmer-v5": dict(forward_reward_weight=2.0, ctrl_cost_weight=1e-3, reset_noise_scale=0.3,
                       exclude_current_positions_from_observation=False),
    "Pusher-v5": dict(reward_near_weight=1.0, reward_dist_weight=2.0, reward_control_weight=0.2),
}


def rollout_equal(task, kwargs, *, num_envs, seed, steps, num_threads, max_episode_steps):
    ref = gym.make_vec(task, num_envs, vectorization_mode="sync",
                       max_episode_steps=max_episode_steps, **kwargs)
    env = cypool.make_vec(task, num_envs, num_threads=num_threads,
                          max_episode_steps=max_episode_steps, **kwargs)
    try:
        assert env.single_observation_space == ref.single_observation_space
        assert env.single_action_space == ref.single_action_space
        o_ref, i_ref = ref.reset(seed=seed)
        o, i = env.reset(seed=seed)
        assert np.array_equal(o, o_ref)
        assert o.dtype == o_ref.dtype
        compare_info(i, i_ref)
        rng = np.random.default_rng(seed)
        low, high = ref.single_action_space.low, ref.single_action_space.high
        dones = 0
        for t in range(steps):
            a = rng.uniform(low, high, ref.action_space.shape)
            a = a.astype(np.float32) if t % 2 else a
            r_ref = ref.step(a)
            r = env.step(a)
            for got, want in zip(r[:4], r_ref[:4]):
                assert got.dtype == want.dtype
                assert np.array_equal(got, want), f"step {t}"
            assert env.observation_space.contains(r[0]) or not np.isfinite(r[0]).all()
            compare_info(r[4], r_ref[4])
            dones += int(np.sum(r_ref[2] | r_ref[3]))
        return dones
    finally:
        env.close()
        ref.close()


def compare_info(got, want):
    for key, val in want.items():
        assert key in got, f"info key {key} missing"
        if key.startswith("_"):
            assert np.array_equal(got[key], val), key
            continue
        mask = want["_" + key]
        assert np.asarray(got[key]).dtype == np.asarray(val).dtype, key
        assert np.array_equal(np.asarray(got[key])[mask], np.asarray(val)[mask]), key


@pytest.mark.parametrize("task", TASKS)
def test_default_kwargs_exact(task):
    dones = rollout_equal(task, {}, num_envs=3, seed=11, steps=120, num_threads=2,
                          max_episode_steps=40)
    assert dones >= 3 * 2  # several episodes per env went through auto-reset


@pytest.mark.parametrize("task", TASKS)
def test_custom_kwargs_exact(task):
    rollout_equal(task, VARIANTS[task], num_envs=2, seed=3, steps=90, num_threads=1,
                  max_episode_steps=30)


@pytest.mark.parametrize("task", ["Ant-v5", "Hopper-v5", "Pusher-v5"])
def test_registered_time_limit_exact(task):
    # the registered limit (1000 / 100 steps) and natural terminations, over longer episodes
    rollout_equal(task, {}, num_envs=2, seed=5, steps=250, num_threads=2, max_episode_steps=None)


def test_results_independent_of_threads():
    runs = []
    for threads in (1, 2, 3):
        env = cypool.make_vec("Hopper-v5", 6, num_threads=threads, max_episode_steps=25)
        obs, _ = env.reset(seed=1)
        rng = np.random.default_rng(0)
        traj = [obs]
        for _ in range(60):
            out = env.step(rng.uniform(-1, 1, (6, 3)))
            traj += [out[0], out[1], out[2], out[3]]
        env.close()
        runs.append(traj)
    for other in runs[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(runs[0], other))
