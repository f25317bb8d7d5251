"""The Fetch ids (-v4, sparse and Dense) through cypool.make_vec against gymnasium's
SyncVectorEnv over gymnasium.make(id) of the installed gymnasium-robotics (its mujoco_utils
patched as Gymnasium-Robotics PR #330 does, see _fetch_ref.py), bit for bit: Dict observations,
rewards, terminated, truncated (the 50-step limit, autoresets) and info["is_success"], with a
policy that drives the gripper to the goal or to the block (contacts, moved blocks, successes)
plus noise and out-of-range (clipped) actions."""
import numpy as np
import pytest

import cypool

from _fetch_ref import assert_info, assert_same, reference  # noqa: E402

IDS = [f"Fetch{task}{suffix}-v4" for task in ("Reach", "Push", "Slide", "PickAndPlace")
       for suffix in ("", "Dense")]


def policy(rng, obs, dtype=np.float32):
    """Reach: towards the goal; with a block: towards the block (then the goal), the gripper
    opening and closing; noise and values beyond [-1, 1]."""
    x = obs["observation"]
    n = len(x)
    if x.shape[1] == 10:
        d = obs["desired_goal"] - x[:, :3]
    else:
        d = np.where(np.linalg.norm(x[:, 6:9], axis=1, keepdims=True) > 0.03, x[:, 6:9],
                     obs["desired_goal"] - obs["achieved_goal"])
    a = np.concatenate([12.0 * d, rng.uniform(-1, 1, (n, 1))], 1)
    return (a + rng.normal(0, 0.4, (n, 4))).astype(dtype)


def run(env_id, n, steps, seed, threads=1, mode="next_step", dtype=np.float32, attrs=None):
    mine = cypool.make_vec(env_id, n, num_threads=threads, autoreset_mode=mode)
    ref = reference(env_id, n, mode)
    seen = dict(success=0, trunc=0, moved=0)
    try:
        o, i = mine.reset(seed=seed)
        ro, ri = ref.reset(seed=seed)
        assert_same(o, ro, "reset obs")
        assert_info(i, ri, "reset")
        for name, values in (attrs or {}).items():
            mine.set_attr(name, values)
            ref.set_attr(name, values)
        rng = np.random.default_rng(seed)
        for t in range(steps):
            a = policy(rng, ro, dtype)
            x, y = mine.step(a), ref.step(a)
            assert_same(x[0], y[0], f"step {t} obs")
            for k, name in ((1, "reward"), (2, "terminated"), (3, "truncated")):
                assert_same(x[k], y[k], f"step {t} {name}")
            assert_info(x[4], y[4], f"step {t}")
            seen["success"] += int(y[4].get("is_success", np.zeros(1)).sum())
            seen["trunc"] += int(y[3].sum())
            seen["moved"] += int((np.abs(y[0]["achieved_goal"] - ro["achieved_goal"]).max(1)
                                  > 1e-3).sum())
            ro = y[0]
        return seen
    finally:
        mine.close()
        ref.close()


# seeds whose runs reach some goals (with a block too: sparse rewards of -0.0)
SEEDS = {"Reach": 3, "Push": 10, "Slide": 10, "PickAndPlace": 9}


@pytest.mark.parametrize("env_id", IDS)
def test_exact(env_id):
    """Two episodes and a bit of every id (autoresets at the 50-step limit)."""
    seen = run(env_id, 2, 110, seed=SEEDS[env_id[5:].split("-")[0].replace("Dense", "")])
    assert seen["trunc"] == 4
    assert seen["moved"] > 10
    assert seen["success"] > 0


def test_two_threads_same_step():
    """Same-step autoreset (final observations and infos) on two threads."""
    seen = run("FetchPush-v4", 4, 60, seed=8, threads=2, mode="same_step")
    assert seen["trunc"] == 4


def test_float64_actions_and_per_env_reward_types():
    """float64 actions (the 0.05 scaling in float64, not float32); reward types per env."""
    run("FetchPickAndPlace-v4", 3, 55, seed=5, dtype=np.float64,
        attrs=dict(reward_type=["dense", "sparse", "dense"]))


def test_bad_kwargs_and_actions():
    with pytest.raises(ValueError, match="reward_type"):
        cypool.make_vec("FetchReach-v4", 1, reward_type="Dense")
    with pytest.raises(TypeError):
        cypool.make_vec("FetchReach-v4", 1, n_substeps=10)
    env = cypool.make_vec("FetchReach-v4", 2)
    try:
        env.reset(seed=0)
        with pytest.raises(ValueError, match="shape"):
            env.step(np.zeros((2, 3), np.float32))
        with pytest.raises(ValueError, match="NaN"):
            env.step(np.full((2, 4), np.nan, np.float32))
        with pytest.raises(TypeError):
            env.step(np.zeros((2, 4), np.complex64))
    finally:
        env.close()


def test_registry_spaces_and_limit():
    import gymnasium as gym
    assert set(IDS) <= set(cypool.list_envs())
    for env_id in IDS:
        assert cypool.registry.spec_of(env_id).max_episode_steps == \
            gym.spec(env_id).max_episode_steps == 50
    for env_id in ("FetchReach-v4", "FetchSlideDense-v4"):
        env = cypool.make_vec(env_id, 1)
        ref = reference(env_id, 1)
        try:
            assert env.single_observation_space == ref.single_observation_space
            assert env.single_action_space == ref.single_action_space
        finally:
            env.close()
            ref.close()
