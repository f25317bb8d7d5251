"""dm_control suite quadruped (dm_control/suite/quadruped.py): walk, run, fetch.

The models are dm_control's make_model (walk and run: the floor sized by the task; fetch:
walls and ball), written to a temporary file. Each episode places the body with dm_control's
_find_non_contacting_height (a full Physics.reset per 1 cm of height until nothing touches).
escape draws a new heightfield terrain into the model each episode (bumps from the task's
stream, smoothed with scipy.ndimage.zoom's cubic spline, times a bowl): each env has its own
copy of the model (and of its actuation-disabled twin); the bumps live in the env's task state
(snapshots carry them) and the terrain is rebuilt from them whenever the env's models hold
another one (scipy's spline prefilter and zoom replayed operation for operation)."""
from libc.math cimport M_PI, pow, INFINITY as INF
from libc.string cimport memcmp, memcpy
from cpython.pycapsule cimport PyCapsule_New
from cypool.mujoco._mj.mujoco cimport mjModel
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (NpMath, init_math, vec3_dot_mat3, rs_uniform, rs_gauss,
                                     dmc_reset_begin, after_reset, dmc_step, tolerance, SIG_LINEAR,
                                     P_NSUB, P_FIRST, T_TASK)
from cypool._core._numpy_loops cimport NpLoop, numpy_loop, np_unary

import numpy as np

from cypool.dm_control._config import (sigmoid_scale, sensor_adr, body_id, generated_model,
                                       dgemm_routine, env_models as _env_models,
                                       SIG_LINEAR as _L)

cdef enum:
    MAX_HINGE = 24
    N_IMU = 6
    N_FT = 24
    N_RF = 20
    BUMPS = 30          # escape: bump_res (terrain 2 * 30 m / 2 m bumps)
    RES = 201           # escape: the heightfield's rows and columns

cdef enum:
    P_FETCH = P_FIRST, P_SPEED, P_TORSO, P_ROOT_Q, P_ROOT_V, P_VELO, P_NHINGE, \
        P_HINGE_Q, P_HINGE_V = P_HINGE_Q + MAX_HINGE, P_IMU = P_HINGE_V + MAX_HINGE, \
        P_FT = P_IMU + N_IMU, P_LIN_SCALE = P_FT + N_FT, P_MOVE_SCALE, P_BALL, P_BALL_Q, \
        P_BALL_V, P_TARGET, P_WORKSPACE, P_SPAWN, P_ARENA, P_REACH, P_TARGET_R, P_ESCAPE, \
        P_RF, P_DEV20 = P_RF + N_RF, P_TERRAIN, P_HF_ADR, P_MODEL, P_MODEL_NOACT, P_HF, \
        P_HF_NOACT, P_BUILT, P_TABLE, P_BOWL, P_SMOOTH, NPARAM

# task state after the Gaussian cache (escape): the episode's bumps, 30 x 30
cdef enum:
    T_BUMPS = T_TASK

# escape's zoom table, per output coordinate (both axes alike): 4 input indices (mirrored at
# the edges), then 4 spline weights
cdef enum:
    Z_IDX = 0, Z_W = 4, Z_W_ = 8

# numpy's cblas_dgemm (3x3 @ 3x3 in ball_state)
ctypedef void (*dgemm32_t)(int order, int ta, int tb, int m, int n, int k, double alpha,
                           const double* a, int lda, const double* b, int ldb, double beta,
                           double* c, int ldc) noexcept nogil
ctypedef void (*dgemm64_t)(int order, int ta, int tb, long long m, long long n, long long k,
                           double alpha, const double* a, long long lda, const double* b,
                           long long ldb, double beta, double* c, long long ldc) noexcept nogil

cdef NpMath MM
init_math(&MM)
cdef NpLoop _ASINH = numpy_loop(np.arcsinh, "d->d")
cdef NpLoop _TANH = numpy_loop(np.tanh, "d->d")
# scipy.ndimage's cubic spline pole, sqrt(3) - 2
cdef double _POLE = -0.267949192431122706472553658494127633
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
TASKS = ("walk", "run", "escape", "fetch")
ENV_MODEL_TASKS = ("escape",)     # a model per env (env_models)
TASK_STATES = {"escape": T_TASK + BUMPS * BUMPS}
ENV_EXTRA_BYTES = {"escape": 8 * (RES * RES + BUMPS * BUMPS)}     # zoomed and built-from bumps
TIME_LIMIT = 20
CONTROL_TIMESTEP = .02
_SPEEDS = {"walk": 0.5, "run": 5}


def model_path(task, suite_dir):
    from dm_control.suite import quadruped
    if task == "fetch":
        xml = quadruped.make_model(walls_and_ball=True)
    elif task == "escape":
        xml = quadruped.make_model(floor_size=40, terrain=True, rangefinders=True)
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
    if task == "escape":
        p[P_ESCAPE] = 1
        rf = _sensor_rows(model, (mujoco.mjtSensor.mjSENS_RANGEFINDER,))
        res = int(model.hfield_nrow[0])
        bump_res = int(2 * model.hfield_size[0, 0] / 2)     # quadruped._TERRAIN_BUMP_SCALE
        if (len(rf) != N_RF or model.nhfield != 1 or res != RES
                or model.hfield_ncol[0] != RES or bump_res != BUMPS):
            raise ValueError("quadruped: escape's rangefinders or heightfield changed")
        for k, r in enumerate(rf):
            p[P_RF + k] = r
        p[P_DEV20] = float(np.cos(np.deg2rad(20)))
        p[P_TERRAIN] = float(model.hfield_size[0, 0])
        p[P_HF_ADR] = int(model.hfield_adr[0])
        p[P_WORKSPACE] = model.site("workspace").id
        layout += [("origin", (3,)), ("rangefinder", (N_RF,))]
    return p, layout, []


def _zoom_table():
    """scipy.ndimage.zoom(order=3, mode='constant') of BUMPS to RES points per axis: for each
    output coordinate, its 4 input indices (the spline's boundary mode, mirror, at the edges)
    and 4 cubic B-spline weights, computed as ni_interpolation.c and ni_splines.c compute them
    (Python's float arithmetic is IEEE double, operation for operation)."""
    import math
    zoom = float(BUMPS - 1) / float(RES - 1)     # np.divide(29, 200)
    table = np.zeros((RES, Z_W_), np.float64)
    for k in range(RES):
        cc = float(k) * zoom + 0.0
        if not 0 <= cc <= BUMPS - 1:
            raise ValueError("quadruped: a zoom coordinate outside the bumps")
        start = int(math.floor(cc)) - 1
        for h in range(4):
            idx = start + h
            if idx < 0:
                idx = -idx
            elif idx > BUMPS - 1:
                idx = 2 * (BUMPS - 1) - idx
            table[k, Z_IDX + h] = idx
        x = cc - math.floor(cc)
        y, z = x, 1.0 - x
        w = [0.0] * 4
        w[1] = (y * y * (y - 2.0) * 3.0 + 4.0) / 6.0
        w[2] = (z * z * (z - 2.0) * 3.0 + 4.0) / 6.0
        w[0] = z * z * z / 6.0
        w[3] = 1.0
        for i in range(3):
            w[3] -= w[i]
        table[k, Z_W:Z_W + 4] = w
    return table


def _bowl():
    """Escape's bowl shape, as dm_control computes it (numpy)."""
    row_grid, col_grid = np.ogrid[-1:1:RES * 1j, -1:1:RES * 1j]
    radius = np.clip(np.sqrt(col_grid**2 + row_grid**2), .04, 1)
    return np.ascontiguousarray(.5 - np.cos(2 * np.pi * radius) / 2, dtype=np.float64)


def env_models(path, task, num_envs):
    """escape: each env's model and actuation-disabled twin, their hfield_data, and the
    shared zoom table and bowl, with a per-env record of the bumps its models' terrain was
    built from."""
    keep, cols = _env_models(path, num_envs, (P_MODEL, P_MODEL_NOACT),
                             {"hfield_data": (P_HF, P_HF_NOACT)})
    _check_zoom()
    table, bowl = _zoom_table(), _bowl()
    built = np.full((num_envs, BUMPS * BUMPS), np.nan)     # nothing built yet
    smooth = np.zeros((num_envs, RES * RES))                # each env's zoomed bumps
    keep += [table, bowl, built, smooth]
    cols[P_TABLE] = np.full(num_envs, float(table.ctypes.data))
    cols[P_BOWL] = np.full(num_envs, float(bowl.ctypes.data))
    cols[P_BUILT] = built.ctypes.data + np.arange(num_envs, dtype=np.float64) * built.strides[0]
    cols[P_SMOOTH] = (smooth.ctypes.data
                      + np.arange(num_envs, dtype=np.float64) * smooth.strides[0])
    for col in (P_TABLE, P_BOWL, P_BUILT, P_SMOOTH):
        if not np.all(cols[col] == np.round(cols[col])) or cols[col].max() >= 2.0**53:
            raise ValueError("quadruped: an address does not fit a float64 exactly")
    return keep, cols


cdef void _spline_line(double* c, Py_ssize_t n) noexcept nogil:
    """ni_splines.c's apply_filter for order 3 (one pole) with the mirror initialisations."""
    cdef double z = _POLE, gain = 1.0, z_i, z_n_1
    cdef Py_ssize_t i
    gain *= (1.0 - z) * (1.0 - 1.0 / z)
    for i in range(n):
        c[i] *= gain
    z_i = z
    z_n_1 = pow(z, <double> (n - 1))
    c[0] = c[0] + z_n_1 * c[n - 1]
    for i in range(1, n - 1):
        c[0] += z_i * (c[i] + z_n_1 * c[n - 1 - i])
        z_i *= z
    c[0] /= 1 - z_n_1 * z_n_1
    for i in range(1, n):
        c[i] += z * c[i - 1]
    c[n - 1] = (z * c[n - 2] + c[n - 1]) * z / (z * z - 1)
    i = n - 2
    while i >= 0:
        c[i] = z * (c[i + 1] - c[i])
        i -= 1


cdef void _zoom(const double* bumps, const double* tab, double* out) noexcept nogil:
    """out (RES x RES) = scipy.ndimage.zoom(bumps (BUMPS x BUMPS), RES / BUMPS): the spline
    prefilter along axis 0, then axis 1, then each output point's 4 x 4 sum (input rows
    outer, columns inner; each term (c * w_row) * w_col)."""
    cdef double c[BUMPS * BUMPS]
    cdef double line[BUMPS]
    cdef Py_ssize_t i, j, a, b
    cdef const double* ti
    cdef const double* tj
    cdef double t, coeff
    memcpy(c, bumps, sizeof(double) * BUMPS * BUMPS)
    for j in range(BUMPS):
        for i in range(BUMPS):
            line[i] = c[i * BUMPS + j]
        _spline_line(line, BUMPS)
        for i in range(BUMPS):
            c[i * BUMPS + j] = line[i]
    for i in range(BUMPS):
        _spline_line(c + i * BUMPS, BUMPS)
    for i in range(RES):
        ti = tab + i * Z_W_
        for j in range(RES):
            tj = tab + j * Z_W_
            t = 0.0
            for a in range(4):
                for b in range(4):
                    coeff = c[<Py_ssize_t> ti[Z_IDX + a] * BUMPS + <Py_ssize_t> tj[Z_IDX + b]]
                    coeff *= ti[Z_W + a]
                    coeff *= tj[Z_W + b]
                    t += coeff
            out[i * RES + j] = t


def zoom_bumps(bumps):
    """The kernel's zoom of a (BUMPS, BUMPS) float64 array (checked against scipy's own when
    an escape pool is built)."""
    cdef const double[:, ::1] src = np.ascontiguousarray(bumps, dtype=np.float64)
    cdef const double[:, ::1] tab = _zoom_table()
    cdef double[:, ::1] out = np.empty((RES, RES), np.float64)
    if src.shape[0] != BUMPS or src.shape[1] != BUMPS:
        raise ValueError(f"quadruped: bumps must be ({BUMPS}, {BUMPS})")
    _zoom(&src[0, 0], &tab[0, 0], &out[0, 0])
    return np.asarray(out)


def _check_zoom():
    """Refuse escape where scipy's zoom is not the one the kernel replays (another scipy)."""
    from scipy import ndimage
    bumps = np.random.RandomState(0).uniform(.15, 1, (BUMPS, BUMPS))
    if not np.array_equal(zoom_bumps(bumps), ndimage.zoom(bumps, RES / float(BUMPS))):
        import scipy
        raise RuntimeError(f"cypool: quadruped escape replays scipy 1.17's ndimage.zoom, and "
                           f"scipy {scipy.__version__}'s differs: escape is not exact here")


cdef void _build_terrain(MjEnv* e) noexcept nogil:
    """hfield_data = (bowl * zoom(bumps)).ravel() as float32, in both models; the bumps
    recorded as the ones the models' terrain comes from."""
    cdef const double* p = e.prm
    cdef const double* bumps = e.tstate + T_BUMPS
    cdef const double* bowl = <const double*> <size_t> p[P_BOWL]
    cdef float* hf = (<float*> <size_t> p[P_HF]) + <Py_ssize_t> p[P_HF_ADR]
    cdef float* hf2 = (<float*> <size_t> p[P_HF_NOACT]) + <Py_ssize_t> p[P_HF_ADR]
    cdef double* sm = <double*> <size_t> p[P_SMOOTH]
    cdef Py_ssize_t k
    cdef float v
    _zoom(bumps, <const double*> <size_t> p[P_TABLE], sm)
    for k in range(RES * RES):
        v = <float> (bowl[k] * sm[k])
        hf[k] = v
        hf2[k] = v
    memcpy(<double*> <size_t> p[P_BUILT], bumps, sizeof(double) * BUMPS * BUMPS)


cdef void _use_env_model(MjEnv* e) noexcept nogil:
    """escape: point e at this env's models, their terrain rebuilt if it is not the one of
    the env's bumps (a snapshot, another env's state)."""
    cdef const double* p = e.prm
    e.m = <const mjModel*> <size_t> p[P_MODEL]
    e.m_noact = <const mjModel*> <size_t> p[P_MODEL_NOACT]
    if memcmp(<const double*> <size_t> p[P_BUILT], e.tstate + T_BUMPS,
              sizeof(double) * BUMPS * BUMPS) != 0:
        _build_terrain(e)


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
        e.obs[j] = np_unary(_ASINH, e.d.sensordata[<Py_ssize_t> p[P_FT + k]])
        j += 1
    if p[P_ESCAPE] != 0:
        for k in range(3):      # origin: -torso_pos . torso_frame
            v[k] = -e.d.xpos[3 * t + k]
        vec3_dot_mat3(&MM, v, e.d.xmat + 9 * t, e.obs + j)
        j += 3
        for k in range(N_RF):   # where(reading == -1, 1, tanh(reading))
            a[0] = e.d.sensordata[<Py_ssize_t> p[P_RF + k]]
            e.obs[j] = 1.0 if a[0] == -1.0 else np_unary(_TANH, a[0])
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
    if p[P_ESCAPE] != 0:
        e.m = <const mjModel*> <size_t> p[P_MODEL]
        e.m_noact = <const mjModel*> <size_t> p[P_MODEL_NOACT]
    if dmc_reset_begin(e):
        return 1
    if p[P_ESCAPE] != 0:
        for k in range(BUMPS * BUMPS):
            e.tstate[T_BUMPS + k] = rs_uniform(e, .15, 1)
        _build_terrain(e)
    if p[P_FETCH] != 0:
        az = rs_uniform(e, 0, 2 * M_PI)
        q[0] = np_unary(MM.cos, az / 2)
        q[1] = 0.0
        q[2] = 0.0
        q[3] = np_unary(MM.sin, az / 2)
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
    cdef double v[3]
    if p[P_ESCAPE] != 0:
        _use_env_model(e)
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    if p[P_ESCAPE] != 0:
        # _upright_reward(deviation_angle=20) * the escape reward
        upright = tolerance(&MM, e.d.xmat[9 * t + 8], p[P_DEV20], INF, 1 + p[P_DEV20],
                            SIG_LINEAR, p[P_LIN_SCALE], True)
        s = 3 * <Py_ssize_t> p[P_WORKSPACE]
        for b in range(3):
            v[b] = e.d.site_xpos[s + b]
        e.rew[0] = upright * tolerance(&MM, np_norm(e, v, 3), p[P_TERRAIN], INF,
                                       p[P_TERRAIN], SIG_LINEAR, p[P_LIN_SCALE], True)
        e.term[0] = 0
        _obs(e)
        return 0
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


cdef void _restored(MjEnv* e) noexcept nogil:
    """set_state: escape's models get the terrain of the restored bumps now (frames rendered
    before the next step draw it)."""
    if e.prm[P_ESCAPE] != 0:
        _use_env_model(e)


def restore_hook(task):
    """The engine's set_state hook (MjPool.set_restore_hook), or None."""
    return PyCapsule_New(<void*> _restored, "cypool.MjRestore", NULL) \
        if task == "escape" else None
