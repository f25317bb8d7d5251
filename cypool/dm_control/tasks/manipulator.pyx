"""dm_control suite manipulator (dm_control/suite/manipulator.py): bring_ball, bring_peg.

The model is dm_control's make_model(use_peg, insert) (the unused props removed), written to
a temporary file. The target (ball or peg) is drawn into the model (body_pos, body_quat) each
episode by dm_control, and insert_ball and insert_peg move a colliding receptacle (cup, slot)
to the same pose. So each env has its own copy of the model (and of its actuation-disabled
twin), and every reset and step writes the target's pose, and the receptacle's, from the env's
task state into both (the model's own poses until the first draw since seeding, as a fresh
dm_control model has them): MuJoCo's kinematics then place their geoms where dm_control's do,
which frames draw. The observation and reward read the target's pose from the task state
where dm_control reads its xpos, xquat and site_xpos (a world-body child: its pose as given;
its sites placed as mj_kinematics places them, with MuJoCo's own mju_quat2Mat)."""
from libc.math cimport M_PI
from cpython.pycapsule cimport PyCapsule_New
from cypool.mujoco._mj.mujoco cimport mjModel
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (NpMath, init_math, rs_rand, rs_uniform, dmc_reset_begin,
                                     after_reset, dmc_step, tolerance, SIG_GAUSSIAN, P_NSUB,
                                     P_FIRST, T_TASK)
from cypool._core._numpy_loops cimport np_unary, np_binary

import numpy as np

from cypool.dm_control._config import (sigmoid_scale, sensor_adr, body_id, joint_qpos,
                                       generated_model, env_models as _env_models,
                                       SIG_GAUSSIAN as _G)

cdef extern from "mujoco/mujoco.h" nogil:
    void mju_quat2Mat(double res[9], const double quat[4])

cdef enum:
    P_ARM_Q = P_FIRST, P_ARM_V = P_ARM_Q + 8, P_ARM_LO = P_ARM_V + 8, P_ARM_HI = P_ARM_LO + 8, \
        P_FINGER = P_ARM_HI + 8, P_THUMB, P_OBJ_Q, P_OBJ_V = P_OBJ_Q + 3, \
        P_TOUCH = P_OBJ_V + 3, P_HAND = P_TOUCH + 5, P_BALL, P_BALL_SITE, P_GRASP, P_CDF0, \
        P_CDF1, P_CDF2, P_TARGET_Y, P_SCALE, P_PEG, P_PEG_SITE, P_PEG_TIP, P_PEG_GRASP, \
        P_PEG_PINCH, P_PINCH, P_TSITE_Z, P_TTIP_Z, P_INSERT, P_REC, P_MODEL, P_MODEL_NOACT, \
        P_BPOS, P_BPOS_NOACT, P_BQUAT, P_BQUAT_NOACT, P_REC0, P_TGT = P_REC0 + 4, P_TGT0, \
        NPARAM = P_TGT0 + 4

# task state after the Gaussian cache: the target's x, z, qw, qy
cdef enum:
    T_X = T_TASK, T_Z, T_QW, T_QY

cdef NpMath MM
init_math(&MM)

DOMAIN = "manipulator"
TASKS = ("bring_ball", "bring_peg", "insert_ball", "insert_peg")
ENV_MODEL_TASKS = TASKS      # a model per env (env_models)
TIME_LIMIT = 10
CONTROL_TIMESTEP = .01
_ARM_JOINTS = ["arm_root", "arm_shoulder", "arm_elbow", "arm_wrist", "finger", "fingertip",
               "thumb", "thumbtip"]
_TOUCH = ["palm_touch", "finger_touch", "thumb_touch", "fingertip_touch", "thumbtip_touch"]
cdef double _CLOSE = .01


def model_path(task, suite_dir):
    from dm_control.suite import manipulator
    return generated_model(task, manipulator.make_model(task.endswith("_peg"),
                                                         task.startswith("insert"))[0],
                           suite_dir)


def configure(model, task):
    p = [0.0] * NPARAM
    peg = task.endswith("_peg")
    obj = "peg" if peg else "ball"
    for k, name in enumerate(_ARM_JOINTS):
        j = model.joint(name)
        p[P_ARM_Q + k] = int(j.qposadr[0])
        p[P_ARM_V + k] = int(j.dofadr[0])
        limited = bool(model.jnt_limited[j.id])
        p[P_ARM_LO + k] = float(model.jnt_range[j.id, 0]) if limited else -np.pi
        p[P_ARM_HI + k] = float(model.jnt_range[j.id, 1]) if limited else np.pi
    p[P_FINGER] = joint_qpos(model, "finger")
    p[P_THUMB] = joint_qpos(model, "thumb")
    for k, name in enumerate([f"{obj}_x", f"{obj}_z", f"{obj}_y"]):
        p[P_OBJ_Q + k] = joint_qpos(model, name)
        p[P_OBJ_V + k] = int(model.joint(name).dofadr[0])
    for k, name in enumerate(_TOUCH):
        p[P_TOUCH + k] = sensor_adr(model, name)
    p[P_HAND] = body_id(model, "hand")
    p[P_PEG] = peg
    p[P_BALL] = body_id(model, obj)
    p[P_GRASP] = model.site("grasp").id
    target = body_id(model, f"target_{obj}")
    if model.body_parentid[target] != 0 or np.any(model.body_quat[target] != [1, 0, 0, 0]):
        raise ValueError(f"manipulator: the target {obj} must hang from the world body, "
                         "unrotated")
    p[P_TARGET_Y] = float(model.body_pos[target, 1])
    p[P_TGT] = target
    p[P_TGT0], p[P_TGT0 + 1] = float(model.body_pos[target, 0]), float(model.body_pos[target, 2])
    p[P_TGT0 + 2], p[P_TGT0 + 3] = 1.0, 0.0
    if peg:
        for k, name in [(P_PEG_SITE, "peg"), (P_PEG_TIP, "peg_tip"),
                        (P_PEG_GRASP, "peg_grasp"), (P_PEG_PINCH, "peg_pinch"),
                        (P_PINCH, "pinch")]:
            p[k] = model.site(name).id
        for k, name in [(P_TSITE_Z, "target_peg"), (P_TTIP_Z, "target_peg_tip")]:
            s = model.site(name)
            if model.site_bodyid[s.id] != target or np.any(model.site_pos[s.id, :2] != 0):
                raise ValueError(f"manipulator: the site {name} must be on the target's z axis")
            p[k] = float(model.site_pos[s.id, 2])
    else:
        p[P_BALL_SITE] = model.site("ball").id
        s = model.site("target_ball")
        if model.site_bodyid[s.id] != target or np.any(model.site_pos[s.id] != 0):
            raise ValueError("manipulator: the target ball's site must be at its origin")
    # RandomState.choice's cdf for p=[_P_IN_HAND, _P_IN_TARGET, 1 - both]
    probs = np.array([.1, .1, 1 - .1 - .1])
    cdf = probs.cumsum()
    cdf /= cdf[-1]
    p[P_CDF0], p[P_CDF1], p[P_CDF2] = (float(x) for x in cdf)
    p[P_SCALE] = sigmoid_scale(_G, 0.1)
    if task.startswith("insert"):
        p[P_INSERT] = 1
        rec = body_id(model, "slot" if peg else "cup")
        p[P_REC] = rec
        p[P_REC0], p[P_REC0 + 1] = float(model.body_pos[rec, 0]), float(model.body_pos[rec, 2])
        p[P_REC0 + 2], p[P_REC0 + 3] = (float(model.body_quat[rec, 0]),
                                        float(model.body_quat[rec, 2]))
    layout = [("arm_pos", (8, 2)), ("arm_vel", (8,)), ("touch", (5,)), ("hand_pos", (4,)),
              ("object_pos", (4,)), ("object_vel", (3,)), ("target_pos", (4,))]
    return p, layout, []


def env_models(path, task, num_envs):
    """Each env's model and actuation-disabled twin, their body_pos and body_quat."""
    return _env_models(path, num_envs, (P_MODEL, P_MODEL_NOACT),
                       {"body_pos": (P_BPOS, P_BPOS_NOACT),
                        "body_quat": (P_BQUAT, P_BQUAT_NOACT)})


cdef void _place(const double* p, Py_ssize_t b, const double* v) noexcept nogil:
    """Body b's pose (x, z, qw, qy) into both of the env's models."""
    cdef Py_ssize_t k
    cdef double* pos
    cdef double* quat
    for k in range(2):
        pos = <double*> <size_t> p[P_BPOS if k == 0 else P_BPOS_NOACT]
        quat = <double*> <size_t> p[P_BQUAT if k == 0 else P_BQUAT_NOACT]
        pos[3 * b] = v[0]
        pos[3 * b + 2] = v[1]
        quat[4 * b] = v[2]
        quat[4 * b + 2] = v[3]


cdef void _use_env_model(MjEnv* e) noexcept nogil:
    """Point e at this env's models and write the target's pose (x, z, qw, qy) into both, and
    insert's receptacle's (the same); the models' own before the first draw (qw != 0 once
    drawn: cos of an angle within (-pi/2, pi/2])."""
    cdef const double* p = e.prm
    e.m = <const mjModel*> <size_t> p[P_MODEL]
    e.m_noact = <const mjModel*> <size_t> p[P_MODEL_NOACT]
    if e.tstate[T_QW] == 0:
        _place(p, <Py_ssize_t> p[P_TGT], p + P_TGT0)
        if p[P_INSERT] != 0:
            _place(p, <Py_ssize_t> p[P_REC], p + P_REC0)
    else:
        _place(p, <Py_ssize_t> p[P_TGT], e.tstate + T_X)
        if p[P_INSERT] != 0:
            _place(p, <Py_ssize_t> p[P_REC], e.tstate + T_X)


cdef Py_ssize_t _pose(MjEnv* e, Py_ssize_t b, Py_ssize_t j) noexcept nogil:
    """body_2d_pose: xpos x, z, xquat qw, qy."""
    e.obs[j] = e.d.xpos[3 * b]
    e.obs[j + 1] = e.d.xpos[3 * b + 2]
    e.obs[j + 2] = e.d.xquat[4 * b]
    e.obs[j + 3] = e.d.xquat[4 * b + 2]
    return j + 4


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, j = 0
    cdef double q
    for k in range(8):
        q = e.d.qpos[<Py_ssize_t> p[P_ARM_Q + k]]
        e.obs[j] = np_unary(MM.sin, q)
        e.obs[j + 1] = np_unary(MM.cos, q)
        j += 2
    for k in range(8):
        e.obs[j] = e.d.qvel[<Py_ssize_t> p[P_ARM_V + k]]
        j += 1
    for k in range(5):
        e.obs[j] = np_unary(MM.log1p, e.d.sensordata[<Py_ssize_t> p[P_TOUCH + k]])
        j += 1
    j = _pose(e, <Py_ssize_t> p[P_HAND], j)
    j = _pose(e, <Py_ssize_t> p[P_BALL], j)
    for k in range(3):
        e.obs[j] = e.d.qvel[<Py_ssize_t> p[P_OBJ_V + k]]
        j += 1
    e.obs[j] = e.tstate[T_X] + 0.0
    e.obs[j + 1] = e.tstate[T_Z] + 0.0
    e.obs[j + 2] = e.tstate[T_QW]
    e.obs[j + 3] = e.tstate[T_QY]


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, g
    cdef double tx, tz, ta, ox, oz, oa, u, gx, gz
    cdef int kind
    _use_env_model(e)       # last episode's target and receptacle, as dm_control's model keeps
    if dmc_reset_begin(e):
        return 1
    while True:     # until nothing penetrates
        for k in range(8):
            e.d.qpos[<Py_ssize_t> p[P_ARM_Q + k]] = rs_uniform(e, p[P_ARM_LO + k],
                                                               p[P_ARM_HI + k])
        e.d.qpos[<Py_ssize_t> p[P_FINGER]] = e.d.qpos[<Py_ssize_t> p[P_THUMB]]
        tx = rs_uniform(e, -.4, .4)
        tz = rs_uniform(e, .1, .4)
        if p[P_INSERT] != 0:
            ta = rs_uniform(e, -M_PI / 3, M_PI / 3)
        else:
            ta = rs_uniform(e, -M_PI, M_PI)
        e.tstate[T_X] = tx
        e.tstate[T_Z] = tz
        e.tstate[T_QW] = np_unary(MM.cos, ta / 2)
        e.tstate[T_QY] = np_unary(MM.sin, ta / 2)
        _use_env_model(e)
        # choice(['in_hand', 'in_target', 'uniform'], p=...): searchsorted(cdf, u, 'right')
        u = rs_rand(e)
        kind = (p[P_CDF0] <= u) + (p[P_CDF1] <= u) + (p[P_CDF2] <= u)
        if kind == 1:
            ox, oz, oa = tx, tz, ta
        elif kind == 0:
            if after_reset(e):
                return 1
            g = <Py_ssize_t> p[P_GRASP]
            ox = e.d.site_xpos[3 * g]
            oz = e.d.site_xpos[3 * g + 2]
            gx = e.d.site_xmat[9 * g]
            gz = e.d.site_xmat[9 * g + 6]
            oa = M_PI - np_binary(MM.arctan2, gz, gx)
        else:
            ox = rs_uniform(e, -.5, .5)
            oz = rs_uniform(e, 0, .7)
            oa = rs_uniform(e, 0, 2 * M_PI)
            e.d.qvel[<Py_ssize_t> p[P_OBJ_V]] = rs_uniform(e, -5, 5)
        e.d.qpos[<Py_ssize_t> p[P_OBJ_Q]] = ox
        e.d.qpos[<Py_ssize_t> p[P_OBJ_Q + 1]] = oz
        e.d.qpos[<Py_ssize_t> p[P_OBJ_Q + 2]] = oa
        if after_reset(e):
            return 1
        if e.d.ncon == 0:
            break
    if after_reset(e):
        return 1
    _obs(e)
    return 0


cdef double _close(MjEnv* e, const double* v) noexcept nogil:
    """_is_close(np.linalg.norm(v))."""
    return tolerance(&MM, np_norm(e, v, 3), 0, _CLOSE, _CLOSE * 2, SIG_GAUSSIAN,
                     e.prm[P_SCALE], True)


cdef double _distance_close(MjEnv* e, Py_ssize_t s1, Py_ssize_t s2) noexcept nogil:
    """_is_close(site_distance(s1, s2)): the norm of site1 - site2."""
    cdef double v[3]
    cdef Py_ssize_t k
    for k in range(3):
        v[k] = e.d.site_xpos[3 * s1 + k] - e.d.site_xpos[3 * s2 + k]
    return _close(e, v)


cdef void _target_site(MjEnv* e, double z, double* out) noexcept nogil:
    """site_xpos of a target site at (0, 0, z) in the target's frame, as mj_kinematics
    computes it: xpos + xmat @ pos, xmat = mju_quat2Mat(xquat)."""
    cdef double q[4]
    cdef double mat[9]
    cdef double pos[3]
    cdef double x[3]
    cdef Py_ssize_t k
    q[0] = e.tstate[T_QW]
    q[1] = 0.0
    q[2] = e.tstate[T_QY]
    q[3] = 0.0
    mju_quat2Mat(mat, q)
    pos[0] = 0.0
    pos[1] = 0.0
    pos[2] = z
    x[0] = e.tstate[T_X] + 0.0
    x[1] = e.prm[P_TARGET_Y]
    x[2] = e.tstate[T_Z] + 0.0
    for k in range(3):
        out[k] = (mat[3 * k] * pos[0] + mat[3 * k + 1] * pos[1] + mat[3 * k + 2] * pos[2]) \
            + x[k]


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t b = 3 * <Py_ssize_t> p[P_BALL_SITE], k, s
    cdef double v[3]
    cdef double t[3]
    cdef double grasping, bringing
    _use_env_model(e)
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    if p[P_PEG] != 0:
        grasping = (_distance_close(e, <Py_ssize_t> p[P_PEG_GRASP], <Py_ssize_t> p[P_GRASP])
                    + _distance_close(e, <Py_ssize_t> p[P_PEG_PINCH],
                                      <Py_ssize_t> p[P_PINCH])) / 2
        # site_distance('peg', 'target_peg'): peg - target
        s = 3 * <Py_ssize_t> p[P_PEG_SITE]
        _target_site(e, p[P_TSITE_Z], t)
        for k in range(3):
            v[k] = e.d.site_xpos[s + k] - t[k]
        bringing = _close(e, v)
        # site_distance('target_peg_tip', 'peg_tip'): target tip - peg tip
        s = 3 * <Py_ssize_t> p[P_PEG_TIP]
        _target_site(e, p[P_TTIP_Z], t)
        for k in range(3):
            v[k] = t[k] - e.d.site_xpos[s + k]
        bringing = (bringing + _close(e, v)) / 2
        # max(bringing, grasping / 3)
        grasping = grasping / 3
        e.rew[0] = grasping if grasping > bringing else bringing
    else:
        # site_distance('ball', 'target_ball'): ball - target (the target site's xpos: its
        # pose)
        v[0] = e.d.site_xpos[b] - (e.tstate[T_X] + 0.0)
        v[1] = e.d.site_xpos[b + 1] - p[P_TARGET_Y]
        v[2] = e.d.site_xpos[b + 2] - (e.tstate[T_Z] + 0.0)
        e.rew[0] = _close(e, v)
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)


cdef void _restored(MjEnv* e) noexcept nogil:
    """set_state: the env's models get the restored target's (and receptacle's) pose now."""
    _use_env_model(e)


def restore_hook(task):
    """The engine's set_state hook (MjPool.set_restore_hook)."""
    return PyCapsule_New(<void*> _restored, "cypool.MjRestore", NULL)
