"""dm_control suite quadruped (dm_control/suite/quadruped.py): walk, run, fetch.

The models are dm_control's make_model (walk and run: the floor sized by the task; fetch:
walls and ball), written to a temporary file. Each episode places the body with dm_control's
_find_non_contacting_height (a full Physics.reset per 1 cm of height until nothing touches).
escape is not served: it draws a new heightfield terrain into the model each episode (a model
per env), smoothed with scipy.ndimage.zoom."""
from libc.math cimport M_PI, INFINITY as INF
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (NpMath, init_math, call_d, d_loop, _double_loop,
                                     vec3_dot_mat3, rs_uniform, rs_gauss, dmc_reset_begin,
                                     after_reset, dmc_step, tolerance, SIG_LINEAR, P_NSUB,
                                     P_FIRST)

import numpy as np

from cypool.dm_control._config import (sigmoid_scale, sensor_adr, body_id, generated_model,
                                       dgemm_routine, SIG_LINEAR as _L)

cdef enum:
    MAX_HINGE = 24
    N_IMU = 6
    N_FT = 24

cdef enum:
    P_FETCH = P_FIRST, P_SPEED, P_TORSO, P_ROOT_Q, P_ROOT_V, P_VELO, P_NHINGE, \
        P_HINGE_Q, P_HINGE_V = P_HINGE_Q + MAX_HINGE, P_IMU = P_HINGE_V + MAX_HINGE, \
        P_FT = P_IMU + N_IMU, P_LIN_SCALE = P_FT + N_FT, P_MOVE_SCALE, P_BALL, P_BALL_Q, \
        P_BALL_V, P_TARGET, P_WORKSPACE, P_SPAWN, P_ARENA, P_REACH, P_TARGET_R, NPARAM

# numpy's cblas_dgemm (3x3 @ 3x3 in ball_state)
ctypedef void (*dgemm32_t)(int order, int ta, int tb, int m, int n, int k, double alpha,
                           const double* a, int lda, const double* b, int ldb, double beta,
                           double* c, int ldc) noexcept nogil
ctypedef void (*dgemm64_t)(int order, int ta, int tb, long long m, long long n, long long k,
                           double alpha, const double* a, long long lda, const double* b,
                           long long ldb, double beta, double* c, long long ldc) noexcept nogil

cdef NpMath MM
init_math(&MM)
cdef void* _ASINH_DATA = NULL
cdef d_loop _ASINH = _double_loop(np.arcsinh, &_ASINH_DATA)
cdef dgemm32_t _DGEMM32 = NULL
cdef dgemm64_t _DGEMM64 = NULL


def _init_dgemm():
    global _DGEMM32, _DGEMM64
    address, ilp64 = dgemm_routine()
    if address and ilp64:
        _DGEMM64 = <dgemm64_t> <size_t> address
    elif address:
        _DGEMM32 = <dgemm32_t> <size_t> address


_init_dgemm()

DOMAIN = "quadruped"
TASKS = ("walk", "run", "fetch")
TIME_LIMIT = 20
CONTROL_TIMESTEP = .02
_SPEEDS = {"walk": 0.5, "run": 5}


def model_path(task, suite_dir):
    from dm_control.suite import quadruped
    if task == "fetch":
        xml = quadruped.make_model(walls_and_ball=True)
    else:
        xml = quadruped.make_model(floor_size=quadruped._DEFAULT_TIME_LIMIT * _SPEEDS[task])
    return generated_model(task, xml, suite_dir)


def _sensor_rows(model, types):
    """named.data.sensordata[names of the sensors of these types, in id order]."""
    rows = []
    types = [int(t) for t in types]
    for s in range(model.nsensor):
        if int(model.sensor_type[s]) in types:
            rows += range(int(model.sensor_adr[s]), int(model.sensor_adr[s] + model.sensor_dim[s]))
    return rows


def configure(model, task):
    import mujoco
    p = [0.0] * NPARAM
    fetch = task == "fetch"
    p[P_FETCH] = fetch
    p[P_SPEED] = _SPEEDS.get(task, 0)
    p[P_TORSO] = body_id(model, "torso")
    root = model.joint("root")
    if model.jnt_type[root.id] != int(mujoco.mjtJoint.mjJNT_FREE):
        raise ValueError("quadruped: the root joint must be free")
    p[P_ROOT_Q] = int(root.qposadr[0])
    p[P_ROOT_V] = int(root.dofadr[0])
    p[P_VELO] = sensor_adr(model, "velocimeter")
    hinges = np.flatnonzero(model.jnt_type == int(mujoco.mjtJoint.mjJNT_HINGE))
    if len(hinges) > MAX_HINGE:
        raise ValueError(f"quadruped: at most {MAX_HINGE} hinges")
    p[P_NHINGE] = len(hinges)
    for k, j in enumerate(hinges):
        p[P_HINGE_Q + k] = int(model.jnt_qposadr[j])
        p[P_HINGE_V + k] = int(model.jnt_dofadr[j])
    imu = _sensor_rows(model, (mujoco.mjtSensor.mjSENS_GYRO,
                               mujoco.mjtSensor.mjSENS_ACCELEROMETER))
    ft = _sensor_rows(model, (mujoco.mjtSensor.mjSENS_FORCE, mujoco.mjtSensor.mjSENS_TORQUE))
    if len(imu) != N_IMU or len(ft) != N_FT:
        raise ValueError("quadruped: the model's IMU and force/torque sensors changed")
    for k, r in enumerate(imu):
        p[P_IMU + k] = r
    for k, r in enumerate(ft):
        p[P_FT + k] = r
    # _upright_reward(deviation_angle=0): bounds (cos(deg2rad(0)), inf), margin 1 + that
    if float(np.cos(np.deg2rad(0))) != 1.0:
        raise ValueError("quadruped: cos(0) != 1")
    p[P_LIN_SCALE] = sigmoid_scale(_L, 0)
    p[P_MOVE_SCALE] = sigmoid_scale(_L, 0.5)
    layout = [("egocentric_state", (2 * len(hinges) + model.na,)), ("torso_velocity", (3,)),
              ("torso_upright", ()), ("imu", (N_IMU,)), ("force_torque", (N_FT,))]
    if fetch:
        ball = model.joint("ball_root")
        if model.jnt_type[ball.id] != int(mujoco.mjtJoint.mjJNT_FREE):
            raise ValueError("quadruped: the ball's joint must be free")
        p[P_BALL] = body_id(model, "ball")
        p[P_BALL_Q] = int(ball.qposadr[0])
        p[P_BALL_V] = int(ball.dofadr[0])
        p[P_TARGET] = model.site("target").id
        p[P_WORKSPACE] = model.site("workspace").id
        floor = model.geom("floor").id
        p[P_SPAWN] = float(0.9 * model.geom_size[floor, 0])
        p[P_ARENA] = float(model.geom_size[floor, 0] * np.sqrt(2))
        p[P_REACH] = float(model.site_size[model.site("workspace").id, 0]
                           + model.geom_size[model.geom("ball").id, 0])
        p[P_TARGET_R] = float(model.site_size[model.site("target").id, 0])
        layout += [("ball_state", (9,)), ("target_position", (3,))]
    return p, layout, []


cdef void _mat3_dot_mat3(const double* a, const double* b, double* c) noexcept nogil:
    """a.dot(b) for C-contiguous 3x3 float64 matrices, as numpy computes it: cblas_dgemm
    (RowMajor, NoTrans, NoTrans) through numpy's own BLAS; a plain sum without one."""
    cdef Py_ssize_t i, j, k
    if _DGEMM64 != NULL:
        _DGEMM64(101, 111, 111, 3, 3, 3, 1.0, a, 3, b, 3, 0.0, c, 3)
    elif _DGEMM32 != NULL:
        _DGEMM32(101, 111, 111, 3, 3, 3, 1.0, a, 3, b, 3, 0.0, c, 3)
    else:
        for i in range(3):
            for j in range(3):
                c[3 * i + j] = 0.0
                for k in range(3):
                    c[3 * i + j] += a[3 * i + k] * b[3 * k + j]


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, j = 0, t = <Py_ssize_t> p[P_TORSO], nh = <Py_ssize_t> p[P_NHINGE]
    cdef Py_ssize_t bq, bv, rv, s, b
    cdef double a[9]
    cdef double v[3]
    for k in range(nh):
        e.obs[j] = e.d.qpos[<Py_ssize_t> p[P_HINGE_Q + k]]
        j += 1
    for k in range(nh):
        e.obs[j] = e.d.qvel[<Py_ssize_t> p[P_HINGE_V + k]]
        j += 1
    for k in range(e.m.na):
        e.obs[j] = e.d.act[k]
        j += 1
    for k in range(3):
        e.obs[j] = e.d.sensordata[<Py_ssize_t> p[P_VELO] + k]
        j += 1
    e.obs[j] = e.d.xmat[9 * t + 8]
    j += 1
    for k in range(N_IMU):
        e.obs[j] = e.d.sensordata[<Py_ssize_t> p[P_IMU + k]]
        j += 1
    for k in range(N_FT):
        e.obs[j] = call_d(_ASINH, _ASINH_DATA, e.d.sensordata[<Py_ssize_t> p[P_FT + k]])
        j += 1
    if p[P_FETCH] != 0:
        b = <Py_ssize_t> p[P_BALL]
        bv = <Py_ssize_t> p[P_BALL_V]
        rv = <Py_ssize_t> p[P_ROOT_V]
        for k in range(3):
            a[k] = e.d.xpos[3 * b + k] - e.d.xpos[3 * t + k]
            a[3 + k] = e.d.qvel[bv + k] - e.d.qvel[rv + k]
            a[6 + k] = e.d.qvel[bv + 3 + k]
        _mat3_dot_mat3(a, e.d.xmat + 9 * t, e.obs + j)
        j += 9
        s = <Py_ssize_t> p[P_TARGET]
        for k in range(3):
            v[k] = e.d.site_xpos[3 * s + k] - e.d.xpos[3 * t + k]
        vec3_dot_mat3(&MM, v, e.d.xmat + 9 * t, e.obs + j)


cdef void _fail(char* err) noexcept nogil:
    cdef const char* msg = b"Failed to find a non-contacting configuration."
    cdef Py_ssize_t k = 0
    while msg[k] != 0 and k < 200:
        err[k] = msg[k]
        k += 1
    err[k] = 0


cdef int _place(MjEnv* e, const double* quat, double x, double y) noexcept nogil:
    """_find_non_contacting_height: from z = 0, a reset_context (Physics.reset, the root's
    pose, after_reset) per 0.01 of height until no contact (at most 10000 tries)."""
    cdef Py_ssize_t k, r = <Py_ssize_t> e.prm[P_ROOT_Q]
    cdef double z = 0.0
    cdef int attempts = 0
    while True:
        if dmc_reset_begin(e):
            return 1
        e.d.qpos[r] = x
        e.d.qpos[r + 1] = y
        e.d.qpos[r + 2] = z
        for k in range(4):
            e.d.qpos[r + 3 + k] = quat[k]
        if after_reset(e):
            return 1
        z += 0.01
        attempts += 1
        if attempts > 10000:
            _fail(e.err)
            return 1
        if e.d.ncon == 0:
            return 0


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, bq, bv
    cdef double q[4]
    cdef double nrm, az, r, x, y
    if dmc_reset_begin(e):
        return 1
    if p[P_FETCH] != 0:
        az = rs_uniform(e, 0, 2 * M_PI)
        q[0] = call_d(MM.cos, MM.cos_data, az / 2)
        q[1] = 0.0
        q[2] = 0.0
        q[3] = call_d(MM.sin, MM.sin_data, az / 2)
        r = p[P_SPAWN]
        x = rs_uniform(e, -r, r)
        y = rs_uniform(e, -r, r)
        if _place(e, q, x, y):
            return 1
        bq = <Py_ssize_t> p[P_BALL_Q]
        bv = <Py_ssize_t> p[P_BALL_V]
        e.d.qpos[bq] = rs_uniform(e, -r, r)
        e.d.qpos[bq + 1] = rs_uniform(e, -r, r)
        e.d.qpos[bq + 2] = 2
        e.d.qvel[bv] = 5 * rs_gauss(e)
        e.d.qvel[bv + 1] = 5 * rs_gauss(e)
    else:
        for k in range(4):
            q[k] = rs_gauss(e)
        nrm = np_norm(e, q, 4)
        for k in range(4):
            q[k] = q[k] / nrm
        if _place(e, q, 0.0, 0.0):
            return 1
    if after_reset(e):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t t = <Py_ssize_t> p[P_TORSO], b, s
    cdef double upright, move, reach, fetch, speed = p[P_SPEED]
    cdef double v[2]
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    upright = tolerance(&MM, e.d.xmat[9 * t + 8], 1.0, INF, 1 + 1.0, SIG_LINEAR,
                        p[P_LIN_SCALE], True)
    if p[P_FETCH] != 0:
        b = 3 * <Py_ssize_t> p[P_BALL]
        s = 3 * <Py_ssize_t> p[P_WORKSPACE]
        v[0] = e.d.site_xpos[s] - e.d.xpos[b]
        v[1] = e.d.site_xpos[s + 1] - e.d.xpos[b + 1]
        reach = tolerance(&MM, np_norm(e, v, 2), 0, p[P_REACH], p[P_ARENA], SIG_LINEAR,
                          p[P_LIN_SCALE], True)
        s = 3 * <Py_ssize_t> p[P_TARGET]
        v[0] = e.d.site_xpos[s] - e.d.xpos[b]
        v[1] = e.d.site_xpos[s + 1] - e.d.xpos[b + 1]
        fetch = tolerance(&MM, np_norm(e, v, 2), 0, p[P_TARGET_R], p[P_ARENA], SIG_LINEAR,
                          p[P_LIN_SCALE], True)
        e.rew[0] = upright * (reach * (0.5 + 0.5 * fetch))
    else:
        move = tolerance(&MM, e.d.sensordata[<Py_ssize_t> p[P_VELO]], speed, INF, speed,
                         SIG_LINEAR, p[P_MOVE_SCALE], True)
        e.rew[0] = upright * move
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
