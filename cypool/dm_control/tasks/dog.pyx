"""dm_control suite dog (dm_control/suite/dog.py): stand, walk, trot, run, fetch.

The models are dm_control's make_model (the floor sized by the task; fetch keeps the ball,
target and walls), written to a temporary file with the asset folders made absolute (the
same mesh and texture files dm_control hands MuJoCo as assets)."""
from libc.math cimport M_PI, sqrt, INFINITY as INF
from cypool.mujoco._mj.mujoco cimport mjModel, mjData
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (NpMath, init_math, vec3_dot_mat3, np_sum, rs_uniform,
                                     rs_gauss, dmc_reset_begin, after_reset, dmc_step, tolerance,
                                     SIG_GAUSSIAN, SIG_LINEAR, SIG_RECIPROCAL, P_NSUB, P_FIRST,
                                     T_TASK)
from cypool._core._numpy_loops cimport np_unary

import numpy as np

from cypool.dm_control._config import (sigmoid_scale, sensor_adr, body_id, generated_model,
                                       SIG_GAUSSIAN as _G, SIG_LINEAR as _L,
                                       SIG_RECIPROCAL as _R)

cdef extern from "mujoco/mujoco.h" nogil:
    void mj_objectVelocity(const mjModel* m, const mjData* d, int objtype, int objid,
                           double res[6], int flg_local)

cdef enum:
    MAX_HINGE = 96
    MAX_ACT = 48

cdef enum:
    P_KIND = P_FIRST, P_SPEED, P_MARGIN, P_NHINGE, P_HINGE_Q, \
        P_HINGE_V = P_HINGE_Q + MAX_HINGE, P_ACT_LO = P_HINGE_V + MAX_HINGE, \
        P_ACT_HI = P_ACT_LO + MAX_ACT, P_ROOT_Q = P_ACT_HI + MAX_ACT, P_TORSO, P_PELVIS, \
        P_SKULL, P_LINVEL, P_ACCEL, P_VELO, P_GYRO, P_FORCE, P_TOUCH = P_FORCE + 4, \
        P_WEIGHT = P_TOUCH + 4, P_MIN_COS, P_GAUSS_SCALE, P_LIN_SCALE, P_TOUCH_SCALE, \
        P_REC_SCALE, P_BALL_Q, P_BALL_V, P_BALL_GEOM, P_TARGET_GEOM, P_HEAD_SITE, P_UPPER, \
        P_LOWER, P_OBJ_SITE, P_OBJ_GEOM, P_RADIUS, P_GRAVITY, P_BITE_R, P_TARGET_R, P_FLOOR, \
        NPARAM

cdef enum:
    K_STAND, K_MOVE, K_FETCH

# task state after the Gaussian cache: the stand heights of torso and pelvis
cdef enum:
    T_STAND = T_TASK

cdef NpMath MM
init_math(&MM)

DOMAIN = "dog"
TASKS = ("stand", "walk", "trot", "run", "fetch")
TIME_LIMIT = 15
CONTROL_TIMESTEP = .015
_SPEEDS = {"stand": 1, "walk": 1, "trot": 3, "run": 9}     # stand: the walk's floor


def model_path(task, suite_dir):
    from dm_control.suite import dog
    if task == "fetch":
        xml = dog.make_model(10, False)
    else:
        xml = dog.make_model(_SPEEDS[task] * dog._DEFAULT_TIME_LIMIT, True)
    for attr in (b"meshdir", b"texturedir"):
        old = attr + b'="dog_assets/"'
        if old not in xml:
            raise ValueError(f"dog: the model's {attr.decode()} changed")
        xml = xml.replace(old, attr + f'="{suite_dir}/dog_assets/"'.encode())
    return generated_model(f"dog-{task}", xml, suite_dir)


def configure(model, task):
    import mujoco
    p = [0.0] * NPARAM
    p[P_KIND] = K_STAND if task == "stand" else K_FETCH if task == "fetch" else K_MOVE
    if p[P_KIND] == K_MOVE:
        p[P_SPEED] = _SPEEDS[task]
        p[P_MARGIN] = max(1.0, _SPEEDS[task])
    hinges = np.flatnonzero(model.jnt_type == int(mujoco.mjtJoint.mjJNT_HINGE))
    if len(hinges) > MAX_HINGE or model.nu > MAX_ACT or model.nu != model.na:
        raise ValueError(f"dog: at most {MAX_HINGE} hinges and {MAX_ACT} actuators, each "
                         "with an activation")
    p[P_NHINGE] = len(hinges)
    for k, j in enumerate(hinges):
        p[P_HINGE_Q + k] = int(model.jnt_qposadr[j])
        p[P_HINGE_V + k] = int(model.jnt_dofadr[j])
    for k in range(model.nu):
        p[P_ACT_LO + k] = float(model.actuator_ctrlrange[k, 0])
        p[P_ACT_HI + k] = float(model.actuator_ctrlrange[k, 1])
    root = model.joint("root")
    if model.jnt_type[root.id] != int(mujoco.mjtJoint.mjJNT_FREE) or root.dofadr[0] != 0:
        raise ValueError("dog: the root joint must be the first, free joint")
    p[P_ROOT_Q] = int(root.qposadr[0])
    p[P_TORSO] = body_id(model, "torso")
    p[P_PELVIS] = body_id(model, "pelvis")
    p[P_SKULL] = body_id(model, "skull")
    p[P_LINVEL] = sensor_adr(model, "torso_linvel")
    p[P_ACCEL] = sensor_adr(model, "accelerometer")
    p[P_VELO] = sensor_adr(model, "velocimeter")
    p[P_GYRO] = sensor_adr(model, "gyro")
    for k, name in enumerate(["foot_L", "foot_R", "hand_L", "hand_R"]):
        if model.sensor(name).dim[0] != 3:
            raise ValueError(f"dog: the sensor {name} must be 3-D")
        p[P_FORCE + k] = sensor_adr(model, name)
    for k, name in enumerate(["palm_L", "palm_R", "sole_L", "sole_R"]):
        if model.sensor(name).dim[0] != 1:
            raise ValueError(f"dog: the sensor {name} must be 1-D")
        p[P_TOUCH + k] = sensor_adr(model, name)
    p[P_WEIGHT] = float(-model.opt.gravity[2] * model.body_subtreemass[int(p[P_TORSO])])
    p[P_MIN_COS] = float(np.cos(np.deg2rad(30)))
    p[P_GAUSS_SCALE] = sigmoid_scale(_G, 0.1)
    p[P_LIN_SCALE] = sigmoid_scale(_L, 0)
    p[P_TOUCH_SCALE] = sigmoid_scale(_L, 0.9)
    p[P_REC_SCALE] = sigmoid_scale(_R, 0.1)
    nh = len(hinges)
    layout = [("joint_angles", (nh,)), ("joint_velocites", (nh,)),
              ("torso_pelvis_height", (2,)), ("z_projection", (9,)),
              ("torso_com_velocity", (3,)), ("inertial_sensors", (9,)),
              ("foot_forces", (12,)), ("touch_sensors", (4,)), ("actuator_state", (model.na,))]
    if task == "fetch":
        ball = model.joint("ball_root")
        p[P_BALL_Q] = int(ball.qposadr[0])
        p[P_BALL_V] = int(ball.dofadr[0])
        p[P_BALL_GEOM] = model.geom("ball").id
        p[P_TARGET_GEOM] = model.geom("target").id
        p[P_HEAD_SITE] = model.site("head").id
        p[P_UPPER] = model.site("upper_bite").id
        p[P_LOWER] = model.site("lower_bite").id
        p[P_OBJ_SITE] = int(mujoco.mjtObj.mjOBJ_SITE)
        p[P_OBJ_GEOM] = int(mujoco.mjtObj.mjOBJ_GEOM)
        floor = model.geom("floor").id
        p[P_RADIUS] = float(0.75 * model.geom_size[floor, 0])
        p[P_GRAVITY] = float(-model.opt.gravity[2])
        p[P_BITE_R] = float(model.site_size[model.site("upper_bite").id, 0])
        p[P_TARGET_R] = float(model.geom_size[model.geom("target").id, 0])
        p[P_FLOOR] = float(model.geom_size[floor, 0])
        layout += [("ball_state", (6,)), ("target_position", (3,))]
    return p, layout, []


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, i, j = 0, nh = <Py_ssize_t> p[P_NHINGE], t = <Py_ssize_t> p[P_TORSO]
    cdef Py_ssize_t a, h, g
    cdef Py_ssize_t bodies[3]
    cdef double v[3]
    cdef double hv[6]
    cdef double bv[6]
    for k in range(nh):
        e.obs[j] = e.d.qpos[<Py_ssize_t> p[P_HINGE_Q + k]]
        j += 1
    for k in range(nh):
        e.obs[j] = e.d.qvel[<Py_ssize_t> p[P_HINGE_V + k]]
        j += 1
    e.obs[j] = e.d.xpos[3 * t + 2]
    e.obs[j + 1] = e.d.xpos[3 * <Py_ssize_t> p[P_PELVIS] + 2]
    j += 2
    bodies[0] = <Py_ssize_t> p[P_SKULL]
    bodies[1] = t
    bodies[2] = <Py_ssize_t> p[P_PELVIS]
    for i in range(3):
        for k in range(3):
            e.obs[j] = e.d.xmat[9 * bodies[i] + 6 + k]
            j += 1
    vec3_dot_mat3(&MM, e.d.sensordata + <Py_ssize_t> p[P_LINVEL], e.d.xmat + 9 * t, e.obs + j)
    j += 3
    for i in range(3):      # accelerometer, velocimeter, gyro
        a = <Py_ssize_t> p[P_ACCEL if i == 0 else P_VELO if i == 1 else P_GYRO]
        for k in range(3):
            e.obs[j] = e.d.sensordata[a + k]
            j += 1
    for i in range(4):
        for k in range(3):
            e.obs[j] = e.d.sensordata[<Py_ssize_t> p[P_FORCE + i] + k]
            j += 1
    for i in range(4):
        e.obs[j] = e.d.sensordata[<Py_ssize_t> p[P_TOUCH + i]]
        j += 1
    for k in range(e.m.na):
        e.obs[j] = e.d.act[k]
        j += 1
    if p[P_KIND] == K_FETCH:
        h = <Py_ssize_t> p[P_HEAD_SITE]
        g = <Py_ssize_t> p[P_BALL_GEOM]
        for k in range(3):
            v[k] = e.d.geom_xpos[3 * g + k] - e.d.site_xpos[3 * h + k]
        vec3_dot_mat3(&MM, v, e.d.site_xmat + 9 * h, e.obs + j)
        j += 3
        # object_velocity: MuJoCo's (angular, linear), the linear half
        mj_objectVelocity(e.m, e.d, <int> p[P_OBJ_SITE], <int> h, hv, 0)
        mj_objectVelocity(e.m, e.d, <int> p[P_OBJ_GEOM], <int> g, bv, 0)
        for k in range(3):
            v[k] = bv[3 + k] - hv[3 + k]
        vec3_dot_mat3(&MM, v, e.d.site_xmat + 9 * h, e.obs + j)
        j += 3
        g = <Py_ssize_t> p[P_TARGET_GEOM]
        for k in range(3):
            v[k] = e.d.geom_xpos[3 * g + k] - e.d.site_xpos[3 * h + k]
        vec3_dot_mat3(&MM, v, e.d.site_xmat + 9 * h, e.obs + j)


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, r = <Py_ssize_t> p[P_ROOT_Q], bq, bv
    cdef double az, vh, vv, hs, d0, d1
    if dmc_reset_begin(e):
        return 1
    # Stand.initialize_episode: Physics.reset again, the stand heights, then the draws
    if dmc_reset_begin(e):
        return 1
    e.tstate[T_STAND] = e.d.xpos[3 * <Py_ssize_t> p[P_TORSO] + 2] * 0.9
    e.tstate[T_STAND + 1] = e.d.xpos[3 * <Py_ssize_t> p[P_PELVIS] + 2] * 0.9
    az = rs_uniform(e, 0, 2 * M_PI)
    e.d.qpos[r + 3] = np_unary(MM.cos, az / 2)
    e.d.qpos[r + 4] = 0
    e.d.qpos[r + 5] = 0
    e.d.qpos[r + 6] = np_unary(MM.sin, az / 2)
    e.d.qvel[0] = 2 * rs_gauss(e)
    e.d.qvel[1] = 2 * rs_gauss(e)
    e.d.qvel[5] = 2 * rs_gauss(e)
    for k in range(e.m.nu):
        e.d.act[k] = rs_uniform(e, p[P_ACT_LO + k], p[P_ACT_HI + k])
    if p[P_KIND] == K_FETCH:
        bq = <Py_ssize_t> p[P_BALL_Q]
        bv = <Py_ssize_t> p[P_BALL_V]
        az = rs_uniform(e, 0, 2 * M_PI)
        e.d.qpos[bq] = p[P_RADIUS] * np_unary(MM.sin, az)
        e.d.qpos[bq + 1] = p[P_RADIUS] * np_unary(MM.cos, az)
        e.d.qpos[bq + 2] = 0.05
        vh = rs_uniform(e, 0, 3)
        vv = sqrt(2 * p[P_GRAVITY] * vh)
        hs = rs_uniform(e, 0, 5)
        d0 = -np_unary(MM.sin, az) + 0.05 * rs_gauss(e)
        d1 = -np_unary(MM.cos, az) + 0.05 * rs_gauss(e)
        e.d.qvel[bv] = hs * d0
        e.d.qvel[bv + 1] = hs * d1
        e.d.qvel[bv + 2] = vv
    if after_reset(e):
        return 1
    _obs(e)
    return 0


cdef double _norm_diff(MjEnv* e, const double* a, const double* b) noexcept nogil:
    """np.linalg.norm(a - b) of two 3-vectors."""
    cdef double v[3]
    cdef Py_ssize_t k
    for k in range(3):
        v[k] = a[k] - b[k]
    return np_norm(e, v, 3)


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t i, t = <Py_ssize_t> p[P_TORSO]
    cdef Py_ssize_t bodies[3]
    cdef double f[10]
    cdef double v[3]
    cdef double touch[4]
    cdef double rew, up, lo, bt
    cdef int n = 6
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    # Stand.get_reward_factors: torso, pelvis, upright (skull, torso, pelvis), touch
    f[0] = tolerance(&MM, e.d.xpos[3 * t + 2], e.tstate[T_STAND], INF, e.tstate[T_STAND],
                     SIG_GAUSSIAN, p[P_GAUSS_SCALE], True)
    f[1] = tolerance(&MM, e.d.xpos[3 * <Py_ssize_t> p[P_PELVIS] + 2], e.tstate[T_STAND + 1],
                     INF, e.tstate[T_STAND + 1], SIG_GAUSSIAN, p[P_GAUSS_SCALE], True)
    bodies[0] = <Py_ssize_t> p[P_SKULL]
    bodies[1] = t
    bodies[2] = <Py_ssize_t> p[P_PELVIS]
    for i in range(3):
        f[2 + i] = tolerance(&MM, e.d.xmat[9 * bodies[i] + 8], p[P_MIN_COS], INF,
                             p[P_MIN_COS] + 1, SIG_LINEAR, p[P_LIN_SCALE], False)
    for i in range(4):
        touch[i] = e.d.sensordata[<Py_ssize_t> p[P_TOUCH + i]]
    f[5] = tolerance(&MM, np_sum(touch, 4), p[P_WEIGHT], INF, p[P_WEIGHT], SIG_LINEAR,
                     p[P_TOUCH_SCALE], True)
    if p[P_KIND] == K_MOVE:
        vec3_dot_mat3(&MM, e.d.sensordata + <Py_ssize_t> p[P_LINVEL], e.d.xmat + 9 * t, v)
        f[6] = (4 * tolerance(&MM, v[0], p[P_SPEED], 2 * p[P_SPEED], p[P_MARGIN], SIG_LINEAR,
                              p[P_LIN_SCALE], True) + 1) / 5
        n = 7
    elif p[P_KIND] == K_FETCH:
        up = _norm_diff(e, e.d.geom_xpos + 3 * <Py_ssize_t> p[P_BALL_GEOM],
                        e.d.site_xpos + 3 * <Py_ssize_t> p[P_UPPER])
        lo = _norm_diff(e, e.d.geom_xpos + 3 * <Py_ssize_t> p[P_BALL_GEOM],
                        e.d.site_xpos + 3 * <Py_ssize_t> p[P_LOWER])
        f[6] = tolerance(&MM, 0.5 * (up + lo), 0, p[P_BITE_R], 2, SIG_RECIPROCAL,
                         p[P_REC_SCALE], True)
        f[6] = (6 * f[6] + 1) / 7
        bt = _norm_diff(e, e.d.geom_xpos + 3 * <Py_ssize_t> p[P_BALL_GEOM],
                        e.d.geom_xpos + 3 * <Py_ssize_t> p[P_TARGET_GEOM])
        f[7] = (tolerance(&MM, bt, 0, p[P_TARGET_R], p[P_FLOOR], SIG_RECIPROCAL,
                          p[P_REC_SCALE], True) + 1) / 2
        if bt < 2 * p[P_TARGET_R]:
            f[6] = 1.0
        n = 8
    rew = f[0]      # np.prod: in order
    for i in range(1, n):
        rew = rew * f[i]
    e.rew[0] = rew
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
