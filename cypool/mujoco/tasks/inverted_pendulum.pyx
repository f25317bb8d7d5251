"""InvertedPendulum-v5 (gymnasium.envs.mujoco.inverted_pendulum_v5) and, behind P_V4,
InvertedPendulum-v4 (inverted_pendulum_v4): kernels and configuration."""
from libc.math cimport fabs, INFINITY

from cypool.mujoco._mj.mujoco cimport mjModel
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, sim_step, reset_noisy
from cypool.mujoco._numeric cimport all_finite
from cypool.mujoco.tasks._common cimport obs_qpos_qvel

import numpy as np

from cypool.mujoco.tasks._config import param_row, NUMBER

# Parameter layout (one row per env).
cdef enum:
    P_FRAME_SKIP, P_NOISE, P_V4, NPARAM

# Info columns.
cdef enum:
    I_SURVIVE

ID = "InvertedPendulum-v5"
MAX_EPISODE_STEPS = 1000
DEFAULTS = dict(
    xml_file="inverted_pendulum.xml", frame_skip=2,
    default_camera_config={"trackbodyid": 0, "distance": 2.04}, reset_noise_scale=0.01,
)
# (key, width, dtype, reported on step, reported on reset). gymnasium's reward is a Python int,
# so SyncVectorEnv builds an int64 info array for it.
INFO = [
    ("reward_survive", 1, np.int64, True, False),
]


# (column, kwarg, kind) for _config.param_row
PARAMS = [(P_FRAME_SKIP, "frame_skip", NUMBER), (P_NOISE, "reset_noise_scale", NUMBER)]


def configure(model, kw, v4=False):
    """Parameter row and observation size for these kwargs on this (Python-bindings) model."""
    if model.nq + model.nv < 2:
        raise ValueError(f"xml_file: {ID} needs a model with nq + nv >= 2 (its termination reads "
                         f"observation[1]); {kw['xml_file']} has {model.nq + model.nv}")
    p = param_row(model, kw, NPARAM, PARAMS)
    p[P_V4] = v4
    return p, model.nq + model.nv


# InvertedPendulum-v4 (tasks/inverted_pendulum_v4.py): a reward of 1.0 on every step, the last
# too; no kwargs; an empty info
FIXED_V4 = tuple(DEFAULTS)
INFO_V4 = [(None, 1, np.float64, False, False)]


cdef void _obs(MjEnv* e) noexcept nogil:
    obs_qpos_qvel(e, 0, INFINITY)


cdef int _reset(MjEnv* e) noexcept nogil:
    if reset_noisy(e, e.prm[P_NOISE], False):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const mjModel* m = e.m
    cdef bint terminated
    if sim_step(e, <int> e.prm[P_FRAME_SKIP]):
        return 1
    _obs(e)
    terminated = not all_finite(e.obs, m.nq + m.nv) or fabs(e.obs[1]) > 0.2
    e.rew[0] = 0.0 if terminated and e.prm[P_V4] == 0 else 1.0
    e.term[0] = terminated
    e.info[I_SURVIVE] = e.rew[0]
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
