"""Shared by the Fetch tests: gymnasium-robotics registered with gymnasium (the tests skip
without it), its Fetch envs made runnable on the installed MuJoCo, and the reference vector env.

gymnasium-robotics 1.4.2's mujoco_utils (set_joint_qpos, get_joint_qpos, ...) asserts
``joint_type in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)`` on the numpy int
``model.jnt_type[j]``: since MuJoCo's enums became their own type, ``enum == numpy int`` is
False and every Fetch env fails in its constructor. Upstream fixed it in Gymnasium-Robotics PR
#330 (not released). Here, in the tests only, mujoco_utils sees a ``mujoco`` whose
``mjtJoint`` holds plain ints (everything else is the real module), which compare as the
reference means them to."""
import types
import warnings

import gymnasium as gym
import mujoco
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    gymnasium_robotics = pytest.importorskip("gymnasium_robotics")
    from gymnasium_robotics.utils import mujoco_utils
gym.register_envs(gymnasium_robotics)

MODES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}


class _MujocoIntJoints(types.ModuleType):
    """The mujoco module, but mjtJoint's members as ints (Gymnasium-Robotics PR #330)."""

    def __init__(self):
        super().__init__("mujoco")
        self.mjtJoint = types.SimpleNamespace(**{
            name: int(getattr(mujoco.mjtJoint, name))
            for name in ("mjJNT_FREE", "mjJNT_BALL", "mjJNT_SLIDE", "mjJNT_HINGE")})

    def __getattr__(self, name):
        return getattr(mujoco, name)


def patch_reference():
    """Idempotent: mujoco_utils' joint-type comparisons work (PR #330's fix, tests only)."""
    if not isinstance(mujoco_utils.mujoco, _MujocoIntJoints):
        mujoco_utils.mujoco = _MujocoIntJoints()


patch_reference()


def reference(env_id, n, mode="next_step", **kwargs):
    """gymnasium's SyncVectorEnv over n gymnasium.make(env_id) envs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.vector.SyncVectorEnv([lambda: gym.make(env_id, **kwargs) for _ in range(n)],
                                        autoreset_mode=MODES[mode])


def assert_same(x, y, where="obs", ordered=True):
    """x (cypool's) equals y (gymnasium's): structure, key order, dtypes and values (a
    same-step final observation's keys are compared as a set: gymnasium-robotics' _get_obs
    has its own order)."""
    if isinstance(y, dict):
        assert isinstance(x, dict), where
        assert (list(x) == list(y)) if ordered else (sorted(x) == sorted(y)), (where, list(x))
        for k in y:
            assert_same(x[k], y[k], f"{where}[{k!r}]")
    elif isinstance(y, np.ndarray) and y.dtype == object:
        assert x.dtype == object and x.shape == y.shape, where
        for k, (u, v) in enumerate(zip(x, y)):
            if v is None:
                assert u is None, where
            else:
                assert_same(u, v, f"{where}[{k}]", ordered=False)
    else:
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype, (where, x.dtype, y.dtype)
        assert x.shape == y.shape, (where, x.shape, y.shape)
        assert np.array_equal(x, y), (where, x, y)


def assert_info(x, y, where):
    assert sorted(x) == sorted(y), (where, sorted(x), sorted(y))
    for k in y:
        assert_same(x[k], y[k], f"{where}: info[{k!r}]")
