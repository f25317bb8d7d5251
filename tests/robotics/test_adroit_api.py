"""The Adroit ids' registry entries, spaces and limits against the installed reference; bad
kwargs, actions and reset options refused before any env moves; the kernels' rotations
(rotations.euler2quat, quat2euler: numpy's own sin, cos and arctan2 loops) against
gymnasium_robotics.utils.rotations on many values."""
import gymnasium as gym
import numpy as np
import pytest

import cypool

from _fetch_ref import reference  # noqa: E402
from gymnasium_robotics.utils import rotations  # noqa: E402

IDS = [f"AdroitHand{task}{suffix}-v1" for task in ("Door", "Hammer", "Pen", "Relocate")
       for suffix in ("", "Sparse")]


def test_registry_spaces_and_limit():
    assert set(IDS) <= set(cypool.list_envs())
    assert {i for i in gym.registry if i.startswith("AdroitHand")} == set(IDS)
    for env_id in IDS:
        assert cypool.registry.spec_of(env_id).max_episode_steps == \
            gym.spec(env_id).max_episode_steps == 200
    for env_id in ("AdroitHandDoor-v1", "AdroitHandHammerSparse-v1", "AdroitHandPen-v1",
                   "AdroitHandRelocate-v1"):
        env = cypool.make_vec(env_id, 1)
        ref = reference(env_id, 1)
        try:
            assert env.single_observation_space == ref.single_observation_space
            assert env.single_action_space == ref.single_action_space
        finally:
            env.close()
            ref.close()


def test_bad_kwargs_actions_and_options():
    with pytest.raises(ValueError, match="reward_type"):
        cypool.make_vec("AdroitHandDoor-v1", 1, reward_type="shaped")
    with pytest.raises(TypeError):
        cypool.make_vec("AdroitHandDoor-v1", 1, reward_type=1)
    with pytest.raises(TypeError):
        cypool.make_vec("AdroitHandDoor-v1", 1, frame_skip=2)
    env = cypool.make_vec("AdroitHandPen-v1", 2)
    try:
        with pytest.raises(ValueError, match="initial_state_dict"):
            env.reset(seed=0, options={"initial_state_dict": {}})
        env.reset(seed=0)
        with pytest.raises(ValueError, match="shape"):
            env.step(np.zeros((2, 28), np.float32))
        with pytest.raises(ValueError, match="NaN"):
            env.step(np.full((2, 24), np.nan, np.float32))
        with pytest.raises(TypeError):
            env.step(np.zeros((2, 24), np.complex64))
        env.step(np.zeros((2, 24), np.float32))      # still usable
    finally:
        env.close()


def test_rotations():
    from cypool.robotics import _adroit
    rng = np.random.default_rng(0)
    for e in np.concatenate([rng.uniform(-1, 1, (2000, 2)), rng.uniform(-4, 4, (2000, 2))]):
        euler = np.array([e[0], e[1], 0.0])
        assert np.array_equal(_adroit.euler2quat(*euler), rotations.euler2quat(euler)), e
    quats = np.concatenate([rng.normal(size=(3000, 4)),
                            [[1.0, 0, 0, 0], [0.0, 0, 0, 0], [0.5, 0.5, 0.5, 0.5],
                             [0.0, 1, 0, 0], [0.0, 0, 0, 1], [1e-9, 0, 0, 0]]])
    quats[:1000] /= np.linalg.norm(quats[:1000], axis=1, keepdims=True)
    for q in quats:
        with np.errstate(divide="ignore", invalid="ignore"):    # the zero quaternion
            ref = rotations.quat2euler(q)
        assert np.array_equal(_adroit.quat2euler(np.ascontiguousarray(q)),
                              ref), q


@pytest.mark.parametrize("env_id", ["AdroitHandRelocate-v1", "AdroitHandPen-v1"])
def test_snapshots_carry_the_drawn_model(env_id):
    """Each env's drawn model values (Relocate's ball and target, Pen's target orientation and
    lengths) live in its task state: env 0's snapshot restored into env 1 (and 1's into 0)
    continues as env 0 did, on env 1's own model copy."""
    env = cypool.make_vec(env_id, 2, num_threads=1)
    try:
        env.reset(seed=3)
        nu = env.single_action_space.shape[0]
        a = np.random.default_rng(0).uniform(-1, 1, (16, 2, nu)).astype(np.float32)
        env.step(a[0])
        ids = np.arange(2, dtype=np.int64)
        state = env.pool.engine.get_state(ids)
        first = [env.step(a[k])[:2] for k in range(1, 16)]
        first = [(o.copy(), r.copy()) for o, r in first]
        env.pool.engine.set_state(ids[::-1].copy(), state)
        for k in range(1, 16):
            o, r = env.step(a[k][::-1].copy())[:2]
            assert np.array_equal(o[::-1], first[k - 1][0]), k
            assert np.array_equal(r[::-1], first[k - 1][1]), k
    finally:
        env.close()
