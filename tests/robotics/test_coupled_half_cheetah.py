"""CoupledHalfCheetah-v0, a robotics id (MaMuJoCo's CoupledHalfCheetahEnv as one env), made
by id alone: through cypool.make_vec without cypool.multiagent, and equal to a gymnasium
SyncVectorEnv of the installed gymnasium-robotics 1.4.2 class (on an mjData whose ten_J
reads MuJoCo's dense tendon Jacobian: tests/multiagent/test_mamujoco_coupled.py says why)."""
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest

import cypool

warnings.filterwarnings("ignore", message=".*reward functions were updated.*")
pytest.importorskip("gymnasium_robotics")
mujoco = pytest.importorskip("mujoco")
from _coupled_ref import Coupled as _Coupled  # noqa: E402

ID = "CoupledHalfCheetah-v0"


def _reference(n):
    return gym.vector.SyncVectorEnv(
        [lambda: gym.wrappers.TimeLimit(_Coupled(), 1000) for _ in range(n)])


def test_made_by_id_without_the_multiagent_front_end():
    code = ("import sys, numpy as np, cypool\n"
            f"env = cypool.make_vec({ID!r}, 2, num_threads=1)\n"
            "obs, _ = env.reset(seed=0)\n"
            "obs = env.step(np.zeros((2, 12), np.float32))[0]\n"
            "assert obs.shape == (2, 40), obs.shape\n"
            "assert 'cypool.multiagent' not in sys.modules\n"
            "env.close()\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_registry_and_limit():
    from cypool.robotics import _coupled_half_cheetah as task

    assert ID in cypool.list_envs()
    assert cypool.registry.family_for(ID).name == "robotics"
    assert cypool.registry.spec_of(ID).max_episode_steps == task.MAX_EPISODE_STEPS == 1000
    assert gym.spec(f"cypool/{ID}").max_episode_steps == 1000


def test_equals_the_reference_class():
    n = 2
    env, ref = cypool.make_vec(ID, n, num_threads=2), _reference(n)
    try:
        assert env.single_observation_space == ref.single_observation_space
        assert env.single_action_space == ref.single_action_space
        got, want = env.reset(seed=3), ref.reset(seed=3)
        assert np.array_equal(got[0], want[0])
        rng = np.random.default_rng(0)
        for t in range(40):
            a = rng.uniform(-1.2, 1.2, (n, 12)).astype(np.float32)
            got, want = env.step(a), ref.step(a)
            for k in range(4):
                assert got[k].dtype == want[k].dtype, (t, k)
                assert np.array_equal(got[k], want[k]), (t, k)
            assert sorted(got[4]) == sorted(want[4]), t
            for key, v in want[4].items():
                assert got[4][key].dtype == v.dtype, (t, key)
                assert np.array_equal(got[4][key], v), (t, key)
    finally:
        env.close()
        ref.close()
