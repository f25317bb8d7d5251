"""Fetch (gymnasium_robotics.envs.fetch.fetch_env.MujocoFetchEnv and its Reach, Push, Slide and
PickAndPlace subclasses, gymnasium-robotics 1.4.2): the task kernels on cypool's MuJoCo pool.

The model's weld already has the identity relative pose that _env_setup's reset_mocap_welds
writes, and the settled state after _env_setup (its 10 x n_substeps mocap steps) is computed
once per pool in Python (cypool.robotics.fetch) and handed to the kernels in the parameter row.

Reset (_reset_sim, _sample_goal): mj_resetData; time, qpos, qvel <- the settled state; with an
object: xy = grip0[:2] + uniform(-obj_range, obj_range, 2) until ||xy - grip0[:2]|| >= 0.1
(np.linalg.norm: numpy's BLAS dot; at least one draw), object qpos[:2] <- xy; mj_forward; goal
= grip0 + uniform(-target_range, target_range, 3) (with an object: + target_offset, z <- the
object's settled height, and when target_in_the_air and uniform() < 0.5, z += uniform(0, 0.45)).
Step: action clipped to [-1, 1] in its dtype; position delta = action[:3] * 0.05 (in float32
for a float32 action, as numpy does); PickAndPlace's position actuators get ctrl = qpos + grip;
the mocap body is put on the welded body's pose, then moved by the delta and its quaternion
increased by (1, 0, 1, 0); mj_step x n_substeps; a blocked gripper's fingers are set to 0 and
mj_forward; the observation; reward and success from ||achieved - goal||
(np.linalg.norm(axis=-1): squares added left to right).
Site velocities are the Jacobians (mj_jacSite) times qvel by numpy's own BLAS dgemv call (as
``jacp @ qvel`` makes it), the object's Euler angles rotations.mat2euler with numpy's own
float64 arctan2 loop (numpy's SIMD arctan2 differs from libm's on AVX-512)."""
from libc.math cimport sqrt
from libc.stdint cimport int64_t, uintptr_t

cimport numpy as cnp

from cypool.mujoco._mj.mujoco cimport mjModel, mjData, mjtNum
from cypool.mujoco._task cimport (export_task, MjEnv, MjTask, sim_reset_data, sim_forward)
from cypool.mujoco._numeric cimport clip, uniform_fill

import ctypes

import numpy as np

cnp.import_array()

# mjData's fields the Fetch kernels read or write beyond cypool.mujoco._mj's declaration
cdef extern from "mujoco/mujoco.h" nogil:
    ctypedef struct FetchData "mjData":
        mjtNum time
        mjtNum* qpos
        mjtNum* qvel
        mjtNum* mocap_pos
        mjtNum* mocap_quat
        mjtNum* xpos
        mjtNum* xquat
        mjtNum* site_xpos
        mjtNum* site_xmat
    void mj_jacSite(const mjModel* m, const mjData* d, mjtNum* jacp, mjtNum* jacr, int site)

# Parameter row (one per env): flags and constants, the settled state, then the action
# (written by the family's load_actions before each step).
cdef enum:
    P_DENSE, P_HAS_OBJECT, P_BLOCK, P_IN_AIR, P_OBJ_RANGE, P_TARGET_RANGE, P_THRESHOLD,
    P_NSUB, P_DT, P_TIME0, P_HEIGHT, P_GRIP0, P_OFFSET = P_GRIP0 + 3,
    P_SITE_GRIP = P_OFFSET + 3, P_SITE_OBJECT, P_WELD_BODY, P_MOCAP, P_FINGER_L, P_FINGER_R,
    P_GRIP_QPOS, P_GRIP_QVEL = P_GRIP_QPOS + 2, P_OBJECT_QPOS = P_GRIP_QVEL + 2,
    P_NU, P_CTRL_QPOS, P_ACT = P_CTRL_QPOS + 2, P_STATE = P_ACT + 4

# task state: the goal
cdef enum:
    T_GOAL, NSTATE = 3

TASK_STATE = NSTATE
PARAMS = dict(dense=P_DENSE, has_object=P_HAS_OBJECT, block=P_BLOCK, in_air=P_IN_AIR,
              obj_range=P_OBJ_RANGE, target_range=P_TARGET_RANGE, threshold=P_THRESHOLD,
              n_substeps=P_NSUB, dt=P_DT, time0=P_TIME0, height=P_HEIGHT, grip0=P_GRIP0,
              offset=P_OFFSET, site_grip=P_SITE_GRIP, site_object=P_SITE_OBJECT,
              weld_body=P_WELD_BODY, mocap=P_MOCAP, finger_l=P_FINGER_L, finger_r=P_FINGER_R,
              grip_qpos=P_GRIP_QPOS, grip_qvel=P_GRIP_QVEL, object_qpos=P_OBJECT_QPOS,
              nu=P_NU, ctrl_qpos=P_CTRL_QPOS, act=P_ACT, state=P_STATE)
# the kernels' Jacobian scratch is on the stack: 3 x MAX_NV
cdef enum:
    C_MAX_NV = 64

MAX_NV = C_MAX_NV
cdef double EPS4 = np.finfo(np.float64).eps * 4.0

# ---------------------------------------------------------------- numpy's own float64 loops
from cypool._core._numpy_loops cimport NpLoop, numpy_loop, np_binary
include "_goal_batch.pxi"

cdef NpLoop ATAN2 = numpy_loop(np.arctan2, "dd->d")


cdef inline double np_atan2(double y, double x) noexcept nogil:
    """np.arctan2(y, x) of two float64 scalars."""
    return np_binary(ATAN2, y, x)


# numpy's matrix @ vector of float64 (its DOUBLE_gemv): cblas_dgemv(ColMajor, Trans, n, m, 1,
# A, n, x, 1, 0, y, 1) by the routine numpy's _multiarray_umath is linked against (found beside
# its ddot, cypool._numpy_blas); without a BLAS, numpy's plain loop from 0
ctypedef void (*dgemv64_t)(int order, int trans, int64_t m, int64_t n, double alpha,
                           const double* a, int64_t lda, const double* x, int64_t incx,
                           double beta, double* y, int64_t incy) noexcept nogil
ctypedef void (*dgemv32_t)(int order, int trans, int m, int n, double alpha,
                           const double* a, int lda, const double* x, int incx,
                           double beta, double* y, int incy) noexcept nogil
cdef dgemv64_t DGEMV64 = NULL
cdef dgemv32_t DGEMV32 = NULL
GEMV = None


def _set_gemv():
    global DGEMV64, DGEMV32, GEMV
    from numpy._core import _multiarray_umath

    from cypool._numpy_blas import ROUTINE
    if ROUTINE.kind != "blas":
        GEMV = "numpy-loop" if ROUTINE.kind == "numpy-loop" else "fallback"
        return
    name = ROUTINE.symbol.replace("ddot", "dgemv")
    try:
        address = ctypes.cast(getattr(ctypes.CDLL(_multiarray_umath.__file__), name),
                              ctypes.c_void_p).value
    except (OSError, AttributeError):
        address = None
    if not address:
        GEMV = "fallback"
        return
    if ROUTINE.ilp64:
        DGEMV64 = <dgemv64_t> <uintptr_t> address
    else:
        DGEMV32 = <dgemv32_t> <uintptr_t> address
    GEMV = name


_set_gemv()


cdef inline void np_gemv3(const double* a, const double* x, int n, double* y) noexcept nogil:
    """y = a @ x for a contiguous (3, n) float64 matrix and an n-vector, as numpy does it."""
    cdef int r, k
    if DGEMV64 != NULL:
        DGEMV64(102, 112, n, 3, 1.0, a, n, x, 1, 0.0, y, 1)
    elif DGEMV32 != NULL:
        DGEMV32(102, 112, n, 3, 1.0, a, n, x, 1, 0.0, y, 1)
    else:
        for r in range(3):
            y[r] = 0.0
            for k in range(n):
                y[r] += a[r * n + k] * x[k]


# ---------------------------------------------------------------- the kernels
cdef inline void _site_vel(MjEnv* e, int site, double* velp, double* velr) noexcept nogil:
    """get_site_xvelp / get_site_xvelr times dt (velr may be NULL)."""
    cdef double jac[3 * C_MAX_NV]
    cdef double v[3]
    cdef double dt = e.prm[P_DT]
    cdef FetchData* d = <FetchData*> e.d
    cdef int k, nv = e.m.nv
    mj_jacSite(e.m, e.d, jac, NULL, site)
    np_gemv3(jac, d.qvel, nv, v)
    for k in range(3):
        velp[k] = v[k] * dt
    if velr != NULL:
        mj_jacSite(e.m, e.d, NULL, jac, site)
        np_gemv3(jac, d.qvel, nv, v)
        for k in range(3):
            velr[k] = v[k] * dt


cdef inline void _mat2euler(const double* m, double* out) noexcept nogil:
    """rotations.mat2euler of a row-major 3 x 3 matrix."""
    cdef double cy = sqrt(m[8] * m[8] + m[5] * m[5])
    cdef bint cond = cy > EPS4
    out[2] = -np_atan2(m[1], m[0]) if cond else -np_atan2(-m[3], m[4])
    out[1] = -np_atan2(-m[2], cy)
    out[0] = -np_atan2(m[5], m[8]) if cond else 0.0


cdef inline double _distance(const double* a, const double* b) noexcept nogil:
    """goal_distance: np.linalg.norm(a - b, axis=-1) of 3-vectors."""
    cdef double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2]
    return sqrt(dx * dx + dy * dy + dz * dz)


cdef void _obs(MjEnv* e) noexcept nogil:
    """[achieved_goal, desired_goal, observation] (the Dict's sorted keys): _get_obs."""
    cdef const double* p = e.prm
    cdef FetchData* d = <FetchData*> e.d
    cdef double* o = e.obs
    cdef double* x = e.obs + 6
    cdef const double* grip = d.site_xpos + 3 * <int> p[P_SITE_GRIP]
    cdef const double* obj
    cdef double dt = p[P_DT]
    cdef double gvel[3]
    cdef int k, so
    _site_vel(e, <int> p[P_SITE_GRIP], gvel, NULL)
    for k in range(3):
        o[3 + k] = e.tstate[T_GOAL + k]
        x[k] = grip[k]
    if p[P_HAS_OBJECT] == 0.0:
        for k in range(3):
            o[k] = grip[k]
        x[3] = d.qpos[<int> p[P_GRIP_QPOS]]
        x[4] = d.qpos[<int> p[P_GRIP_QPOS + 1]]
        for k in range(3):
            x[5 + k] = gvel[k]
        x[8] = d.qvel[<int> p[P_GRIP_QVEL]] * dt
        x[9] = d.qvel[<int> p[P_GRIP_QVEL + 1]] * dt
        return
    so = <int> p[P_SITE_OBJECT]
    obj = d.site_xpos + 3 * so
    for k in range(3):
        o[k] = obj[k]
        x[3 + k] = obj[k]
        x[6 + k] = obj[k] - grip[k]
    x[9] = d.qpos[<int> p[P_GRIP_QPOS]]
    x[10] = d.qpos[<int> p[P_GRIP_QPOS + 1]]
    _mat2euler(d.site_xmat + 9 * so, x + 11)
    _site_vel(e, so, x + 14, x + 17)
    for k in range(3):
        x[14 + k] = x[14 + k] - gvel[k]
        x[20 + k] = gvel[k]
    x[23] = d.qvel[<int> p[P_GRIP_QVEL]] * dt
    x[24] = d.qvel[<int> p[P_GRIP_QVEL + 1]] * dt


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef FetchData* d = <FetchData*> e.d
    cdef const double* g0 = p + P_GRIP0
    cdef double xy[2]
    cdef double v[2]
    cdef double u
    cdef int k, adr
    if sim_reset_data(e):
        return 1
    d.time = p[P_TIME0]
    for k in range(e.m.nq):
        d.qpos[k] = p[P_STATE + k]
    for k in range(e.m.nv):
        d.qvel[k] = p[P_STATE + e.m.nq + k]
    if p[P_HAS_OBJECT] != 0.0:
        xy[0] = g0[0]
        xy[1] = g0[1]
        v[0] = 0.0
        v[1] = 0.0
        while sqrt(e.dot(v, v, 2)) < 0.1:
            uniform_fill(e.rng, -p[P_OBJ_RANGE], p[P_OBJ_RANGE], xy, 2)
            xy[0] = g0[0] + xy[0]
            xy[1] = g0[1] + xy[1]
            v[0] = xy[0] - g0[0]
            v[1] = xy[1] - g0[1]
        adr = <int> p[P_OBJECT_QPOS]
        d.qpos[adr] = xy[0]
        d.qpos[adr + 1] = xy[1]
    if sim_forward(e, False):
        return 1
    # _sample_goal
    uniform_fill(e.rng, -p[P_TARGET_RANGE], p[P_TARGET_RANGE], e.tstate + T_GOAL, 3)
    for k in range(3):
        e.tstate[T_GOAL + k] = g0[k] + e.tstate[T_GOAL + k]
    if p[P_HAS_OBJECT] != 0.0:
        for k in range(3):
            e.tstate[T_GOAL + k] = e.tstate[T_GOAL + k] + p[P_OFFSET + k]
        e.tstate[T_GOAL + 2] = p[P_HEIGHT]
        if p[P_IN_AIR] != 0.0:
            uniform_fill(e.rng, 0.0, 1.0, &u, 1)
            if u < 0.5:
                uniform_fill(e.rng, 0.0, 0.45, &u, 1)
                e.tstate[T_GOAL + 2] = e.tstate[T_GOAL + 2] + u
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef FetchData* d = <FetchData*> e.d
    cdef double a[4]
    cdef double ctrl[2]
    cdef double dist
    cdef double* mp
    cdef double* mq
    cdef const double* bx
    cdef const double* bq
    cdef int k, body, nu = <int> p[P_NU]
    for k in range(4):
        a[k] = clip(p[P_ACT + k], -1.0, 1.0)
    # _set_action: pos_ctrl *= 0.05 in the action's dtype
    for k in range(3):
        if e.act_f32:
            a[k] = <double> (<float> a[k] * <float> 0.05)
        else:
            a[k] = a[k] * 0.05
    if p[P_BLOCK] != 0.0:
        a[3] = 0.0
    # ctrl_set_action: position actuators (biastype != 0) are relative to their joint's qpos
    for k in range(nu):
        ctrl[k] = d.qpos[<int> p[P_CTRL_QPOS + k]] + a[3]
    # mocap_set_action: reset_mocap2body_xpos, then the deltas
    body = <int> p[P_WELD_BODY]
    mp = d.mocap_pos + 3 * <int> p[P_MOCAP]
    mq = d.mocap_quat + 4 * <int> p[P_MOCAP]
    bx = d.xpos + 3 * body
    bq = d.xquat + 4 * body
    for k in range(3):
        mp[k] = bx[k]
    for k in range(4):
        mq[k] = bq[k]
    for k in range(3):
        mp[k] = mp[k] + a[k]
    mq[0] = mq[0] + 1.0
    mq[1] = mq[1] + 0.0
    mq[2] = mq[2] + 1.0
    mq[3] = mq[3] + 0.0
    # mj_step(nstep=n_substeps) (cypool's guarded step also runs mj_rnePostConstraint, which
    # only fills the acceleration and force outputs that every mj_step recomputes)
    if e.guard.step(e.m, e.d, ctrl, <int> p[P_NSUB], e.err):
        return 1
    if p[P_BLOCK] != 0.0:                       # _step_callback
        d.qpos[<int> p[P_FINGER_L]] = 0.0
        d.qpos[<int> p[P_FINGER_R]] = 0.0
        if sim_forward(e, False):
            return 1
    _obs(e)
    dist = _distance(e.obs, e.tstate + T_GOAL)
    e.info[0] = 1.0 if dist < p[P_THRESHOLD] else 0.0
    if p[P_DENSE] != 0.0:
        e.rew[0] = -dist
    else:
        e.rew[0] = -1.0 if dist > p[P_THRESHOLD] else -0.0
    e.term[0] = 0
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)


def site_velocity(const double[:, ::1] jac, const double[::1] qvel):
    """np_gemv3 (for tests): what the kernels compute for ``jac @ qvel``, jac (3, n)."""
    if jac.shape[0] != 3 or jac.shape[1] != qvel.shape[0] or qvel.shape[0] == 0:
        raise ValueError("site_velocity: jac must be (3, n) and qvel (n,), n > 0")
    out = np.empty(3)
    cdef double[::1] o = out
    np_gemv3(&jac[0, 0], &qvel[0], <int> qvel.shape[0], &o[0])
    return out


def mat2euler(const double[::1] mat):
    """_mat2euler (for tests): rotations.mat2euler of one row-major 3 x 3 matrix (9,)."""
    if mat.shape[0] != 9:
        raise ValueError("mat2euler: a flat (9,) matrix")
    out = np.empty(3)
    cdef double[::1] o = out
    _mat2euler(&mat[0], &o[0])
    return out


cdef int _rewards(const GoalRows* r, void* out, double* work,
                  const double* prm) noexcept nogil:
    """BaseFetchEnv.compute_reward (prm: sqrt_at_most(threshold), dense): dense -distance
    (float64), sparse -(distance > threshold) as float32 (-1 or -0). A NaN or infinite goal
    makes its row's squared distance NaN or infinite: the goals are checked only then."""
    if gl_rows3(r.a, r.d, out, r.n, GL_NEG_SQRT if prm[1] != 0.0 else GL_SPARSE_F, prm[0]):
        return first_nonfinite(r.a, r.d, 3 * r.n)
    return 0


def batch_rewards(object a, object d, double threshold, bint dense):
    """BaseFetchEnv.compute_reward of a HER batch (see _goal_batch.pxi), or None."""
    cdef double prm[2]
    prm[0], prm[1] = sqrt_at_most(threshold), dense
    return run_goal_batch(a, d, 3, cnp.NPY_DOUBLE if dense else cnp.NPY_FLOAT, 0, _rewards,
                          prm)


def rewards_call(double threshold, bint dense, Py_ssize_t n, general):
    """batch_rewards bound for a pool of n envs (a GoalCall; general: the other calls)."""
    return goal_call(_rewards, 3, cnp.NPY_DOUBLE if dense else cnp.NPY_FLOAT, 0,
                     (sqrt_at_most(threshold), dense), n, general)
