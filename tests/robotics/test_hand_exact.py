"""The Shadow Hand ids (HandReach-v3, HandManipulate{Block,Egg,Pen}*-v1 with their touch-sensor
variants, sparse and Dense) through cypool.make_vec against gymnasium's SyncVectorEnv over
gymnasium.make(id) of the installed gymnasium-robotics (its mujoco_utils patched as
Gymnasium-Robotics PR #330 does, see _fetch_ref.py), bit for bit: Dict observations, rewards,
terminated, truncated (the time limits, autoresets: the next reset continues the episode's
MuJoCo data, as the reference's _reset_sim does) and info["is_success"], with random actions
beyond [-1, 1] (clipped)."""
import gymnasium as gym
import numpy as np
import pytest

import cypool
from cypool.robotics.hand import HAND

from _fetch_ref import assert_info, assert_same, reference  # noqa: E402

IDS = sorted(HAND)


def run(env_id, n, steps, seed, threads=1, mode="next_step", dtype=np.float32, attrs=None,
        limit=None):
    kw = {} if limit is None else dict(max_episode_steps=limit)
    mine = cypool.make_vec(env_id, n, num_threads=threads, autoreset_mode=mode, **kw)
    ref = reference(env_id, n, mode, **kw)
    seen = dict(success=0, trunc=0, zero_reward=0)
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
            a = rng.uniform(-1.2, 1.2, (n, 20)).astype(dtype)
            x, y = mine.step(a), ref.step(a)
            assert_same(x[0], y[0], f"step {t} obs")
            for k, name in ((1, "reward"), (2, "terminated"), (3, "truncated")):
                assert_same(x[k], y[k], f"step {t} {name}")
            assert_info(x[4], y[4], f"step {t}")
            seen["success"] += int(y[4].get("is_success", np.zeros(1)).sum())
            seen["trunc"] += int(y[3].sum())
            seen["zero_reward"] += int((y[1] == 0).sum())
        return seen
    finally:
        mine.close()
        ref.close()


@pytest.mark.parametrize("env_id,seed", [
    ("HandManipulateBlockRotateZ-v1", 3), ("HandManipulateBlockRotateParallelDense-v1", 1),
    ("HandManipulateBlockRotateXYZ-v1", 2), ("HandManipulateBlockFullDense-v1", 4),
    ("HandManipulateEggRotate-v1", 5), ("HandManipulatePenDense-v1", 6),
    ("HandManipulateBlockRotateZ_ContinuousTouchSensorsDense-v1", 7), ("HandReach-v3", 8)])
def test_exact_episodes(env_id, seed):
    """A whole episode and a bit of representative ids (the registered time limits)."""
    steps = 56 if env_id.startswith("HandReach") else 104
    seen = run(env_id, 2, steps, seed)
    assert seen["trunc"] == 2


def test_rotate_z_successes():
    """Sparse rewards of 0 and successes (RotateZ under random actions reaches some)."""
    seen = run("HandManipulateBlockRotateZ-v1", 2, 60, seed=3)
    assert seen["success"] > 0 and seen["zero_reward"] == seen["success"]


@pytest.mark.sweep(every=1)   # every id; every other one under ASan
@pytest.mark.parametrize("env_id", IDS)
def test_every_id_briefly(env_id):
    """Every id: two short episodes per env (a 4-step limit: autoresets, goal resamples)."""
    seen = run(env_id, 2, 9, seed=11, limit=4)
    assert seen["trunc"] == 4


def test_two_threads_same_step():
    """Same-step autoreset (final observations and infos) on two threads."""
    seen = run("HandManipulateBlockRotateParallel-v1", 4, 12, seed=8, threads=2,
               mode="same_step", limit=5)
    assert seen["trunc"] == 8


def test_float64_actions_and_per_env_reward_types():
    """float64 actions; reward types per env."""
    run("HandManipulateEgg-v1", 3, 12, seed=5, dtype=np.float64, limit=6,
        attrs=dict(reward_type=["dense", "sparse", "dense"]))
    run("HandReach-v3", 2, 8, seed=5, dtype=np.float64, limit=5,
        attrs=dict(reward_type=["sparse", "dense"]))


def test_bad_kwargs_and_actions():
    with pytest.raises(ValueError, match="reward_type"):
        cypool.make_vec("HandManipulateBlockRotateZ-v1", 1, reward_type="Dense")
    for bad in ("n_substeps", "target_rotation", "touch_get_obs", "relative_control"):
        with pytest.raises(TypeError):
            cypool.make_vec("HandManipulateBlockRotateZ-v1", 1, **{bad: 10})
    env = cypool.make_vec("HandReach-v3", 2)
    try:
        env.reset(seed=0)
        with pytest.raises(ValueError, match="shape"):
            env.step(np.zeros((2, 4), np.float32))
        with pytest.raises(ValueError, match="NaN"):
            env.step(np.full((2, 20), np.nan, np.float32))
        with pytest.raises(TypeError):
            env.step(np.zeros((2, 20), np.complex64))
    finally:
        env.close()


def test_registry_spaces_and_limit():
    """Every mujoco-bindings Hand id of the reference is served, with its time limit; spaces
    equal the reference's."""
    newest = {i for i in gym.registry if i.startswith("Hand")
              and "MujocoPy" not in str(gym.registry[i].entry_point)}
    assert newest == set(IDS)
    assert set(IDS) <= set(cypool.list_envs())
    for env_id in IDS:
        assert cypool.registry.spec_of(env_id).max_episode_steps == \
            gym.spec(env_id).max_episode_steps
    for env_id in ("HandReachDense-v3", "HandManipulatePenRotate-v1",
                   "HandManipulateEgg_BooleanTouchSensors-v1"):
        env = cypool.make_vec(env_id, 1)
        ref = reference(env_id, 1)
        try:
            assert env.single_observation_space == ref.single_observation_space
            assert env.single_action_space == ref.single_action_space
        finally:
            env.close()
            ref.close()
