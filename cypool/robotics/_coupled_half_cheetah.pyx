"""MaMuJoCo's CoupledHalfCheetah (gymnasium-robotics 1.4.2's CoupledHalfCheetahEnv: two half
cheetahs joined by a spatial tendon, on the package's own coupled_half_cheetah.xml) as a
cypool MuJoCo task (the shape cypool.mujoco.register_task takes), served as the robotics id
CoupledHalfCheetah-v0 (coupled_half_cheetah.py), which cypool.multiagent.mamujoco_v1
partitions among agents (the model is gymnasium-robotics', so the task lives in its family
folder).

The observation is the reference's _get_obs: qpos[1:9], qpos[10:18], qvel, the tendon
Jacobian's row 0 at dofs 0, 1, 9 and 10, ten_length[0], ten_velocity[0]. The reference reads
``data.ten_J[0][:2]``, a dense (ntendon, nv) Jacobian; the installed MuJoCo (4.x) keeps ten_J
sparse (the row's structure in mjModel's ten_J_rownnz/rowadr/colind), so the kernel reads the
dense row's values out of it, as mju_sparse2dense would (0 where the row has no entry)."""
import os
from importlib.util import find_spec

import numpy as np

from cypool.mujoco._mj.mujoco cimport mjModel, mjData, mjtNum
from cypool.mujoco.api cimport MjEnv, MjTask, export_task, sim_step, reset_noisy, ctrl_cost

from cypool.mujoco.tasks._config import param_row, NUMBER, DT

cdef extern from "mujoco/mujoco.h" nogil:
    # the tendon fields cypool's mujoco.pxd does not declare, on the same C structs
    ctypedef struct _TenModel "mjModel":
        int* ten_J_rownnz
        int* ten_J_rowadr
        int* ten_J_colind
    ctypedef struct _TenData "mjData":
        mjtNum* ten_J

API_VERSION = 1

cdef enum:
    P_FRAME_SKIP, P_DT, P_FORWARD_W, P_CTRL_W, P_NOISE, NPARAM

cdef enum:
    I_X1, I_X2, I_VX1, I_VX2, I_RUN, I_CTRL1, I_CTRL2

cdef enum:
    HALF = 9          # each cheetah's qpos/qvel: rootx, rootz, rooty and six joints
    NOBS = 40


def _asset():
    spec = find_spec("gymnasium_robotics")     # the installed package's model, not imported
    if spec is None or spec.origin is None:
        return None
    return os.path.join(os.path.dirname(spec.origin), "envs", "multiagent_mujoco", "assets",
                        "coupled_half_cheetah.xml")


ID = "CoupledHalfCheetah-v0"
MAX_EPISODE_STEPS = 1000          # the reference's TimeLimit
DEFAULTS = dict(xml_file=_asset(), frame_skip=5, forward_reward_weight=1.0,
                ctrl_cost_weight=0.1, reset_noise_scale=0.1)
# the reference's step info (its reset info is empty); the costs in the action's dtype
INFO = [
    ("x_position1", 1, np.float64, True, False),
    ("x_position2", 1, np.float64, True, False),
    ("x_velocity1", 1, np.float64, True, False),
    ("x_velocity2", 1, np.float64, True, False),
    ("reward_run", 1, np.float64, True, False),
    ("reward_ctrl1", 1, "action", True, False),
    ("reward_ctrl2", 1, "action", True, False),
]
PARAMS = [
    (P_FRAME_SKIP, "frame_skip", NUMBER),
    (P_DT, "frame_skip", DT),
    (P_FORWARD_W, "forward_reward_weight", NUMBER),
    (P_CTRL_W, "ctrl_cost_weight", NUMBER),
    (P_NOISE, "reset_noise_scale", NUMBER),
]


def configure(model, kw):
    if model.nq != 2 * HALF or model.nv != 2 * HALF or model.nu != 12 or model.ntendon < 1:
        raise ValueError(f"xml_file: {ID} needs two half cheetahs (nq = nv = 18, nu = 12) and "
                         f"a tendon; {kw['xml_file']} has nq = {model.nq}, nv = {model.nv}, "
                         f"nu = {model.nu}, ntendon = {model.ntendon}")
    return param_row(model, kw, NPARAM, PARAMS), NOBS


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const _TenModel* tm = <const _TenModel*> e.m
    cdef const mjtNum* ten_J = (<_TenData*> e.d).ten_J
    cdef mjData* d = e.d
    cdef double* o = e.obs
    cdef int k, c, adr = tm.ten_J_rowadr[0], nnz = tm.ten_J_rownnz[0]
    for k in range(8):
        o[k] = d.qpos[1 + k]
        o[8 + k] = d.qpos[HALF + 1 + k]
    for k in range(2 * HALF):
        o[16 + k] = d.qvel[k]
    for k in range(4):
        o[34 + k] = 0.0
    for k in range(nnz):
        c = tm.ten_J_colind[adr + k]
        if c == 0 or c == 1:
            o[34 + c] = ten_J[adr + k]
        elif c == HALF or c == HALF + 1:
            o[36 + c - HALF] = ten_J[adr + k]
    o[38] = d.ten_length[0]
    o[39] = d.ten_velocity[0]


cdef int _reset(MjEnv* e) noexcept nogil:
    if reset_noisy(e, e.prm[P_NOISE], True):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef mjData* d = e.d
    cdef const double* p = e.prm
    cdef double x1 = d.qpos[0], x2 = d.qpos[HALF]
    cdef double v1, v2, fwd, c1, c2, cost
    if sim_step(e, <int> p[P_FRAME_SKIP]):
        return 1
    v1 = (d.qpos[0] - x1) / p[P_DT]
    v2 = (d.qpos[HALF] - x2) / p[P_DT]
    c1 = ctrl_cost(p[P_CTRL_W], e.act, 6, e.act_f32)
    c2 = ctrl_cost(p[P_CTRL_W], e.act + 6, 6, e.act_f32)
    fwd = p[P_FORWARD_W] * (v1 + v2) / 2.0
    _obs(e)
    if e.act_f32:            # float32 costs: their mean stays float32 (NEP 50)
        cost = <double> (<float> (<float> c1 + <float> c2) / <float> 2.0)
    else:
        cost = (c1 + c2) / 2.0
    e.rew[0] = fwd - cost
    e.term[0] = 0
    e.info[I_X1] = d.qpos[0]
    e.info[I_X2] = d.qpos[HALF]
    e.info[I_VX1] = v1
    e.info[I_VX2] = v2
    e.info[I_RUN] = fwd
    e.info[I_CTRL1] = c1
    e.info[I_CTRL2] = c2
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
