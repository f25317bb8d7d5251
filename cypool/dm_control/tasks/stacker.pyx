"""dm_control suite stacker (dm_control/suite/stacker.py): stack_2, stack_4.

The model is dm_control's make_model(n_boxes) (the unused boxes removed), written to a
temporary file. The target is drawn into the model (body_pos x and z) each episode by
dm_control. Each env keeps it in its task state, where the observation and reward read it
(for dm_control's xpos and site_xpos of the target: a world-body child, unrotated, its site
at its origin: its position as given), and has its own copy of the model (and of its
actuation-disabled twin) that every reset and step writes it into (the model's own position
until the first draw since seeding), so that frames draw the target where dm_control's
model puts it."""
from libc.math cimport M_PI, INFINITY as INF
from cpython.pycapsule cimport PyCapsule_New
from cypool.mujoco._mj.mujoco cimport mjModel
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (NpMath, init_math, rs_uniform, rs_masked, dmc_reset_begin,
                                     after_reset, dmc_step, tolerance, SIG_GAUSSIAN, P_NSUB,
                                     P_FIRST, T_TASK)
from cypool._core._numpy_loops cimport np_unary

import numpy as np

from cypool.dm_control._config import (sigmoid_scale, body_id, joint_qpos, generated_model,
                                       env_models as _env_models, SIG_GAUSSIAN as _G)

cdef enum:
    MAX_BOXES = 4

cdef enum:
    P_ARM_Q = P_FIRST, P_ARM_V = P_ARM_Q + 8, P_ARM_LO = P_ARM_V + 8, P_ARM_HI = P_ARM_LO + 8, \
        P_FINGER = P_ARM_HI + 8, P_THUMB, P_NBOX, P_BOX_Q, P_BOX_V = P_BOX_Q + 3 * MAX_BOXES, \
        P_BOX_BODY = P_BOX_V + 3 * MAX_BOXES, P_BOX_SITE = P_BOX_BODY + MAX_BOXES, \
        P_HAND = P_BOX_SITE + MAX_BOXES, P_GRASP, P_BOX_SIZE, P_TARGET_Y, P_SCALE, P_MODEL, \
        P_MODEL_NOACT, P_BPOS, P_BPOS_NOACT, P_TGT, P_TGT0, NPARAM = P_TGT0 + 2

# task state after the Gaussian cache: the target's x and z
cdef enum:
    T_X = T_TASK, T_Z

cdef NpMath MM
init_math(&MM)

DOMAIN = "stacker"
TASKS = ("stack_2", "stack_4")
ENV_MODEL_TASKS = TASKS      # a model per env (env_models)
TIME_LIMIT = 10
CONTROL_TIMESTEP = .01
_ARM_JOINTS = ["arm_root", "arm_shoulder", "arm_elbow", "arm_wrist", "finger", "fingertip",
               "thumb", "thumbtip"]
cdef double _CLOSE = .01


def _n_boxes(task):
    return int(task[len("stack_"):])


def model_path(task, suite_dir):
    from dm_control.suite import stacker
    return generated_model(task, stacker.make_model(_n_boxes(task))[0], suite_dir)


def configure(model, task):
    p = [0.0] * NPARAM
    n = _n_boxes(task)
    if not 1 <= n <= MAX_BOXES:
        raise ValueError(f"stacker: 1 to {MAX_BOXES} boxes, got {n}")
    for k, name in enumerate(_ARM_JOINTS):
        j = model.joint(name)
        p[P_ARM_Q + k] = int(j.qposadr[0])
        p[P_ARM_V + k] = int(j.dofadr[0])
        limited = bool(model.jnt_limited[j.id])
        p[P_ARM_LO + k] = float(model.jnt_range[j.id, 0]) if limited else -np.pi
        p[P_ARM_HI + k] = float(model.jnt_range[j.id, 1]) if limited else np.pi
    p[P_FINGER] = joint_qpos(model, "finger")
    p[P_THUMB] = joint_qpos(model, "thumb")
    p[P_NBOX] = n
    for b in range(n):
        # qpos: x, z, y (the draws' order); qvel: x, y, z (the observation's order)
        for k, dim in enumerate("xzy"):
            p[P_BOX_Q + 3 * b + k] = joint_qpos(model, f"box{b}_{dim}")
        for k, dim in enumerate("xyz"):
            p[P_BOX_V + 3 * b + k] = int(model.joint(f"box{b}_{dim}").dofadr[0])
        p[P_BOX_BODY + b] = body_id(model, f"box{b}")
        p[P_BOX_SITE + b] = model.site(f"box{b}").id
    p[P_HAND] = body_id(model, "hand")
    p[P_GRASP] = model.site("grasp").id
    target = body_id(model, "target")
    s = model.site("target")
    if model.body_parentid[target] != 0 or np.any(model.body_quat[target] != [1, 0, 0, 0]) \
            or model.site_bodyid[s.id] != target or np.any(model.site_pos[s.id] != 0):
        raise ValueError("stacker: the target must hang from the world body, unrotated, its "
                         "site at its origin")
    p[P_BOX_SIZE] = float(model.geom_size[model.geom("target").id, 0])
    p[P_TARGET_Y] = float(model.body_pos[target, 1])
    p[P_TGT] = target
    p[P_TGT0], p[P_TGT0 + 1] = float(model.body_pos[target, 0]), float(model.body_pos[target, 2])
    p[P_SCALE] = sigmoid_scale(_G, 0.1)
    layout = [("arm_pos", (8, 2)), ("arm_vel", (8,)), ("touch", (model.nsensordata,)),
              ("hand_pos", (4,)), ("box_pos", (n, 4)), ("box_vel", (3 * n,)),
              ("target_pos", (2,))]
    return p, layout, []


def env_models(path, task, num_envs):
    """Each env's model and actuation-disabled twin, their body_pos."""
    return _env_models(path, num_envs, (P_MODEL, P_MODEL_NOACT),
                       {"body_pos": (P_BPOS, P_BPOS_NOACT)})


cdef void _use_env_model(MjEnv* e) noexcept nogil:
    """Point e at this env's models and write the target's position (x, z) into both; the
    models' own before the first draw (z > 0 once drawn: an odd number of box sizes)."""
    cdef const double* p = e.prm
    cdef Py_ssize_t t = 3 * <Py_ssize_t> p[P_TGT], k
    cdef const double* v = p + P_TGT0 if e.tstate[T_Z] == 0 else e.tstate + T_X
    cdef double* pos
    e.m = <const mjModel*> <size_t> p[P_MODEL]
    e.m_noact = <const mjModel*> <size_t> p[P_MODEL_NOACT]
    for k in range(2):
        pos = <double*> <size_t> p[P_BPOS if k == 0 else P_BPOS_NOACT]
        pos[t] = v[0]
        pos[t + 2] = v[1]


cdef Py_ssize_t _pose(MjEnv* e, Py_ssize_t b, Py_ssize_t j) noexcept nogil:
    """body_2d_pose: xpos x, z, xquat qw, qy."""
    e.obs[j] = e.d.xpos[3 * b]
    e.obs[j + 1] = e.d.xpos[3 * b + 2]
    e.obs[j + 2] = e.d.xquat[4 * b]
    e.obs[j + 3] = e.d.xquat[4 * b + 2]
    return j + 4


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, b, j = 0, n = <Py_ssize_t> p[P_NBOX]
    cdef double q
    for k in range(8):
        q = e.d.qpos[<Py_ssize_t> p[P_ARM_Q + k]]
        e.obs[j] = np_unary(MM.sin, q)
        e.obs[j + 1] = np_unary(MM.cos, q)
        j += 2
    for k in range(8):
        e.obs[j] = e.d.qvel[<Py_ssize_t> p[P_ARM_V + k]]
        j += 1
    for k in range(e.m.nsensordata):
        e.obs[j] = np_unary(MM.log1p, e.d.sensordata[k])
        j += 1
    j = _pose(e, <Py_ssize_t> p[P_HAND], j)
    for b in range(n):
        j = _pose(e, <Py_ssize_t> p[P_BOX_BODY + b], j)
    for k in range(3 * n):
        e.obs[j] = e.d.qvel[<Py_ssize_t> p[P_BOX_V + k]]
        j += 1
    e.obs[j] = e.tstate[T_X] + 0.0
    e.obs[j + 1] = e.tstate[T_Z] + 0.0


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, b, n = <Py_ssize_t> p[P_NBOX]
    cdef double height
    _use_env_model(e)       # last episode's target, as dm_control's model keeps it
    if dmc_reset_begin(e):
        return 1
    while True:     # until nothing penetrates
        for k in range(8):
            e.d.qpos[<Py_ssize_t> p[P_ARM_Q + k]] = rs_uniform(e, p[P_ARM_LO + k],
                                                               p[P_ARM_HI + k])
        e.d.qpos[<Py_ssize_t> p[P_FINGER]] = e.d.qpos[<Py_ssize_t> p[P_THUMB]]
        # 2 * randint(n_boxes) + 1, a Python int, times the box size
        height = <double> (2 * <long> rs_masked(e, <unsigned long> (n - 1)) + 1)
        e.tstate[T_Z] = p[P_BOX_SIZE] * height
        e.tstate[T_X] = rs_uniform(e, -.37, .37)
        _use_env_model(e)
        for b in range(n):
            e.d.qpos[<Py_ssize_t> p[P_BOX_Q + 3 * b]] = rs_uniform(e, .1, .3)
            e.d.qpos[<Py_ssize_t> p[P_BOX_Q + 3 * b + 1]] = rs_uniform(e, 0, .7)
            e.d.qpos[<Py_ssize_t> p[P_BOX_Q + 3 * b + 2]] = rs_uniform(e, 0, 2 * M_PI)
        if after_reset(e):
            return 1
        if e.d.ncon == 0:
            break
    if after_reset(e):
        return 1
    _obs(e)
    return 0


cdef double _target_distance(MjEnv* e, Py_ssize_t s) noexcept nogil:
    """site_distance(site, 'target'): the norm of site - target (the target site's xpos: its
    body's position as given)."""
    cdef double v[3]
    v[0] = e.d.site_xpos[3 * s] - (e.tstate[T_X] + 0.0)
    v[1] = e.d.site_xpos[3 * s + 1] - e.prm[P_TARGET_Y]
    v[2] = e.d.site_xpos[3 * s + 2] - (e.tstate[T_Z] + 0.0)
    return np_norm(e, v, 3)


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t b, n = <Py_ssize_t> p[P_NBOX]
    cdef double dmin, d, close, far
    _use_env_model(e)
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    # Python's min over the boxes: a later value replaces the current one only if smaller
    dmin = _target_distance(e, <Py_ssize_t> p[P_BOX_SITE])
    for b in range(1, n):
        d = _target_distance(e, <Py_ssize_t> p[P_BOX_SITE + b])
        if d < dmin:
            dmin = d
    close = tolerance(&MM, dmin, 0, 0, 2 * p[P_BOX_SIZE], SIG_GAUSSIAN, p[P_SCALE], True)
    far = tolerance(&MM, _target_distance(e, <Py_ssize_t> p[P_GRASP]), .1, INF, _CLOSE,
                    SIG_GAUSSIAN, p[P_SCALE], True)
    e.rew[0] = close * far
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)


cdef void _restored(MjEnv* e) noexcept nogil:
    """set_state: the env's models get the restored target's position now."""
    _use_env_model(e)


def restore_hook(task):
    """The engine's set_state hook (MjPool.set_restore_hook)."""
    return PyCapsule_New(<void*> _restored, "cypool.MjRestore", NULL)
