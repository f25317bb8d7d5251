"""Swimmer-v5 (gymnasium.envs.mujoco.swimmer_v5): kernels and configuration."""
from libc.math cimport INFINITY

from cypool.mujoco._mj.mujoco cimport mjModel, mjData
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, sim_step, reset_noisy
from cypool.mujoco._numeric cimport ctrl_cost
from cypool.mujoco.tasks._common cimport obs_qpos_qvel, xy_info

import numpy as np

from cypool.mujoco.tasks._config import param_row, require, NUMBER, BOOL, DT

# Parameter layout (one row per env).
cdef enum:
    P_FRAME_SKIP, P_DT, P_FORWARD_W, P_CTRL_W, P_NOISE, P_EXCLUDE, NPARAM

# Info columns.
cdef enum:
    I_X, I_Y, I_DIST, I_VX, I_VY, I_FWD, I_CTRL

ID = "Swimmer-v5"
MAX_EPISODE_STEPS = 1000
DEFAULTS = dict(
    xml_file="swimmer.xml", frame_skip=4, default_camera_config=None,
    forward_reward_weight=1.0, ctrl_cost_weight=1e-4, reset_noise_scale=0.1,
    exclude_current_positions_from_observation=True,
)
# (key, width, dtype, reported on step, reported on reset); dtype "action": the action's
# keys computed with np.linalg.norm, i.e. numpy's BLAS dot (cypool._numpy_blas)
DOT_KEYS = ("distance_from_origin",)
INFO = [
    ("x_position", 1, np.float64, True, True),
    ("y_position", 1, np.float64, True, True),
    ("distance_from_origin", 1, np.float64, True, True),
    ("x_velocity", 1, np.float64, True, False),
    ("y_velocity", 1, np.float64, True, False),
    ("reward_forward", 1, np.float64, True, False),
    ("reward_ctrl", 1, "action", True, False),
]


# (column, kwarg, kind) for _config.param_row
PARAMS = [
    (P_FRAME_SKIP, "frame_skip", NUMBER),
    (P_DT, "frame_skip", DT),
    (P_FORWARD_W, "forward_reward_weight", NUMBER),
    (P_CTRL_W, "ctrl_cost_weight", NUMBER),
    (P_NOISE, "reset_noise_scale", NUMBER),
    (P_EXCLUDE, "exclude_current_positions_from_observation", BOOL),
]


def configure(model, kw):
    """Parameter row and observation size for these kwargs on this (Python-bindings) model."""
    require(ID, model, kw, [("nq", 2, "qpos[0:2]: x and y")])
    p = param_row(model, kw, NPARAM, PARAMS)
    return p, model.nq + model.nv - 2 * int(p[P_EXCLUDE])


cdef void _obs(MjEnv* e) noexcept nogil:
    obs_qpos_qvel(e, 2 if e.prm[P_EXCLUDE] != 0 else 0, INFINITY)


cdef int _reset(MjEnv* e) noexcept nogil:
    if reset_noisy(e, e.prm[P_NOISE], False):
        return 1
    _obs(e)
    xy_info(e, I_X, I_Y, I_DIST)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const mjModel* m = e.m
    cdef mjData* d = e.d
    cdef const double* p = e.prm
    cdef double x0 = d.qpos[0], y0 = d.qpos[1]
    cdef double vx, vy, fwd, ctrl
    if sim_step(e, <int> p[P_FRAME_SKIP]):
        return 1
    vx = (d.qpos[0] - x0) / p[P_DT]
    vy = (d.qpos[1] - y0) / p[P_DT]
    _obs(e)
    fwd = p[P_FORWARD_W] * vx
    ctrl = ctrl_cost(p[P_CTRL_W], e.act, m.nu, e.act_f32)
    e.rew[0] = fwd - ctrl
    e.term[0] = 0
    xy_info(e, I_X, I_Y, I_DIST)
    e.info[I_VX] = vx
    e.info[I_VY] = vy
    e.info[I_FWD] = fwd
    e.info[I_CTRL] = -ctrl
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
