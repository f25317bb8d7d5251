"""Shadow Hand manipulation (gymnasium_robotics.envs.shadow_dexterous_hand.manipulate's
MujocoManipulateEnv and its Block, Egg and Pen tasks, gymnasium-robotics 1.4.2): the task
kernels on cypool's MuJoCo pool.

Reset (_reset_sim, no mj_resetData: the data carries over from the previous episode, its
qacc_warmstart included): time, qpos, qvel <- the state after _env_setup; mj_forward; the
object's quaternion turned by a random offset (z: uniform(-pi, pi) about z; parallel: that,
then one of 24 axis-aligned rotations drawn by integers(24); xyz: an angle and an axis drawn by
uniform(-1, 1, 3)), its position += normal(scale=0.005, size=3); the quaternion normalised;
10 x (ctrl <- the actuators' centres, mj_step x n_substeps); mj_forward; the whole reset
repeated until the object's centre site is above z = 0.04. Goal (_sample_goal): position =
the object's + uniform(range) (or the object's), quaternion drawn as above, normalised.
Step: action clipped to [-1, 1] in its dtype; ctrl = clip(centre + action * half range);
mj_step x n_substeps; observation [robot qpos, robot qvel, object qvel, object qpos]; success
and reward from _goal_distance (position: norm of the difference; rotation: 2 arccos of the
clipped w of q_a * conj(q_b), q_a's Euler z replaced by q_b's for the Pen).
Every norm of a whole vector is numpy's BLAS dot (e.dot); sin, cos, arccos and arctan2 are
numpy's own float64 loops (numpy's SIMD arccos differs from libm's on AVX-512)."""
from libc.math cimport sqrt
from libc.stdint cimport uint64_t
from libc.string cimport strncpy
from numpy.random cimport bitgen_t

cimport numpy as cnp

from cypool.mujoco._mj.mujoco cimport mjModel, mjData, mjtNum
from cypool.mujoco._task cimport (export_task, MjEnv, MjTask, sim_forward,
                                  sim_reset_data)
from cypool.mujoco._numeric cimport clip, uniform_fill, normal_fill

import numpy as np

cnp.import_array()

cdef extern from "mujoco/mujoco.h" nogil:
    ctypedef struct HandData "mjData":
        mjtNum time
        mjtNum* qpos
        mjtNum* qvel
        mjtNum* site_xpos
        mjtNum* sensordata

cdef extern from "numpy/random/distributions.h" nogil:
    void random_bounded_uint64_fill(bitgen_t* bitgen_state, uint64_t off, uint64_t rng,
                                    cnp.npy_intp cnt, bint use_masked, uint64_t* out)

# target_position / target_rotation modes
cdef enum:
    POS_IGNORE, POS_FIXED, POS_RANDOM
cdef enum:
    ROT_IGNORE, ROT_FIXED, ROT_XYZ, ROT_Z, ROT_PARALLEL

cdef enum:
    NU = 20, NROBOT_MAX = 32, NPARALLEL = 24, MAX_TRIES = 10000, NTOUCH_MAX = 128,
    NFINGER = 5, THUMB = 4

# Parameter row (one per env)
cdef enum:
    P_DENSE, P_TPOS, P_TROT, P_RAND_ROT, P_RAND_POS, P_IGNORE_Z, P_DIST_THR, P_ROT_THR,
    P_NSUB, P_TIME0, P_OBJ_QPOS, P_OBJ_QVEL, P_SITE, P_NROBOT,
    P_RANGE_LO, P_RANGE_HI = P_RANGE_LO + 3, P_ROBOT_QPOS = P_RANGE_HI + 3,
    P_ROBOT_QVEL = P_ROBOT_QPOS + NROBOT_MAX, P_CENTER = P_ROBOT_QVEL + NROBOT_MAX,
    P_HALF = P_CENTER + NU, P_LO = P_HALF + NU, P_HI = P_LO + NU, P_PARALLEL = P_HI + NU,
    P_NTOUCH = P_PARALLEL + 4 * NPARALLEL, P_TOUCH_BOOL, P_TOUCH_IDS,
    P_FINGER_SITES = P_TOUCH_IDS + NTOUCH_MAX, P_MEET = P_FINGER_SITES + NFINGER,
    P_INIT_GOAL = P_MEET + 3, P_ACT = P_INIT_GOAL + 3 * NFINGER, P_STATE = P_ACT + NU

# task state: the goal (manipulation: position, quaternion; reach: 5 fingertip positions)
cdef enum:
    T_GOAL, NSTATE = 3 * NFINGER

TASK_STATE = NSTATE
ACTION_SIZE = NU
NROBOT = NROBOT_MAX
PARAMS = dict(dense=P_DENSE, tpos=P_TPOS, trot=P_TROT, rand_rot=P_RAND_ROT,
              rand_pos=P_RAND_POS, ignore_z=P_IGNORE_Z, dist_thr=P_DIST_THR,
              rot_thr=P_ROT_THR, n_substeps=P_NSUB, time0=P_TIME0, obj_qpos=P_OBJ_QPOS,
              obj_qvel=P_OBJ_QVEL, site=P_SITE, nrobot=P_NROBOT, range_lo=P_RANGE_LO,
              range_hi=P_RANGE_HI, robot_qpos=P_ROBOT_QPOS, robot_qvel=P_ROBOT_QVEL,
              center=P_CENTER, half=P_HALF, lo=P_LO, hi=P_HI, parallel=P_PARALLEL,
              ntouch=P_NTOUCH, touch_bool=P_TOUCH_BOOL, touch_ids=P_TOUCH_IDS,
              finger_sites=P_FINGER_SITES, meet=P_MEET, init_goal=P_INIT_GOAL, act=P_ACT,
              state=P_STATE)
NTOUCH = NTOUCH_MAX
MODES_POS = dict(ignore=POS_IGNORE, fixed=POS_FIXED, random=POS_RANDOM)
MODES_ROT = dict(ignore=ROT_IGNORE, fixed=ROT_FIXED, xyz=ROT_XYZ, z=ROT_Z,
                 parallel=ROT_PARALLEL)

cdef double PI = np.pi
cdef double EPS4 = np.finfo(np.float64).eps * 4.0
cdef double FLOAT_EPS = np.finfo(np.float64).eps

# ---------------------------------------------------------------- numpy's own float64 loops
from cypool._core._numpy_loops cimport NpLoop, numpy_loop, np_unary, np_unary_n, np_binary
include "_goal_batch.pxi"

cdef NpLoop LOOPS[3]
cdef enum:
    L_SIN, L_COS, L_ACOS
LOOPS[L_SIN] = numpy_loop(np.sin, "d->d")
LOOPS[L_COS] = numpy_loop(np.cos, "d->d")
LOOPS[L_ACOS] = numpy_loop(np.arccos, "d->d")
cdef NpLoop ATAN2 = numpy_loop(np.arctan2, "dd->d")


cdef inline double np1(int k, double x) noexcept nogil:
    """numpy's float64 loop k on one value."""
    return np_unary(LOOPS[k], x)


cdef inline double np_atan2(double y, double x) noexcept nogil:
    return np_binary(ATAN2, y, x)


# ---------------------------------------------------------------- rotations
cdef inline void quat_mul(const double* a, const double* b, double* q) noexcept nogil:
    """rotations.quat_mul (q may alias neither a nor b)."""
    q[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]
    q[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2]
    q[2] = a[0] * b[2] + a[2] * b[0] + a[3] * b[1] - a[1] * b[3]
    q[3] = a[0] * b[3] + a[3] * b[0] + a[1] * b[2] - a[2] * b[1]


cdef inline void quat_from_angle_axis(MjEnv* e, double angle, double* axis,
                                      double* q) noexcept nogil:
    """manipulate.quat_from_angle_and_axis (axis normalised in place)."""
    cdef double n = sqrt(e.dot(axis, axis, 3))
    cdef double h = angle / 2.0
    cdef double s
    cdef int k
    for k in range(3):
        axis[k] = axis[k] / n
    q[0] = np1(L_COS, h)
    s = np1(L_SIN, h)
    for k in range(3):
        q[1 + k] = s * axis[k]
    n = sqrt(e.dot(q, q, 4))
    for k in range(4):
        q[k] = q[k] / n


cdef inline void quat2euler(const double* q, double* out) noexcept nogil:
    """rotations.quat2euler: mat2euler(quat2mat(q))."""
    cdef double w = q[0], x = q[1], y = q[2], z = q[3]
    cdef double nq = w * w + x * x + y * y + z * z
    cdef double s = 2.0 / nq
    cdef double X = x * s, Y = y * s, Z = z * s
    cdef double m[9]
    cdef double cy
    cdef bint cond
    if nq > FLOAT_EPS:
        m[0] = 1.0 - (y * Y + z * Z)
        m[1] = x * Y - w * Z
        m[2] = x * Z + w * Y
        m[3] = x * Y + w * Z
        m[4] = 1.0 - (x * X + z * Z)
        m[5] = y * Z - w * X
        m[6] = x * Z - w * Y
        m[7] = y * Z + w * X
        m[8] = 1.0 - (x * X + y * Y)
    else:
        m[0] = 1.0
        m[1] = 0.0
        m[2] = 0.0
        m[3] = 0.0
        m[4] = 1.0
        m[5] = 0.0
        m[6] = 0.0
        m[7] = 0.0
        m[8] = 1.0
    cy = sqrt(m[8] * m[8] + m[5] * m[5])
    cond = cy > EPS4
    out[2] = -np_atan2(m[1], m[0]) if cond else -np_atan2(-m[3], m[4])
    out[1] = -np_atan2(-m[2], cy)
    out[0] = -np_atan2(m[5], m[8]) if cond else 0.0


cdef inline void euler2quat(const double* eu, double* q) noexcept nogil:
    """rotations.euler2quat."""
    cdef double ai = eu[2] / 2, aj = -eu[1] / 2, ak = eu[0] / 2
    cdef double si = np1(L_SIN, ai), sj = np1(L_SIN, aj), sk = np1(L_SIN, ak)
    cdef double ci = np1(L_COS, ai), cj = np1(L_COS, aj), ck = np1(L_COS, ak)
    cdef double cc = ci * ck, cs = ci * sk, sc = si * ck, ss = si * sk
    q[0] = cj * cc + sj * ss
    q[3] = cj * sc - sj * cs
    q[2] = -(cj * ss + sj * cc)
    q[1] = cj * cs - sj * sc


cdef inline void goal_distance(const double* p, const double* a, const double* b,
                               double* d_pos, double* d_rot) noexcept nogil:
    """BaseManipulateEnv._goal_distance of two 7-vector goals."""
    cdef double w
    goal_pos_w(p, a, b, d_pos, &w)
    d_rot[0] = 0.0 if p[P_TROT] == ROT_IGNORE else 2 * np1(L_ACOS, w)


cdef inline double pos_sq(const double* a, const double* b) noexcept nogil:
    """d_pos's sum of squares: the goals' positions' differences squared, added in order."""
    cdef double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2]
    return dx * dx + dy * dy + dz * dz


cdef inline double rot_w(const double* qa, const double* b) noexcept nogil:
    """w of quat_mul(qa, quat_conjugate(goal b's quaternion)), before the clip."""
    cdef double cb[4]
    cdef double qd[4]
    cdef int k
    cb[0] = b[3]
    for k in range(1, 4):
        cb[k] = -b[3 + k]
    quat_mul(qa, cb, qd)
    return qd[0]


cdef inline void goal_pos_w(const double* p, const double* a, const double* b,
                            double* d_pos, double* w_out) noexcept nogil:
    """_goal_distance's d_pos and the w its d_rot is 2 arccos of (0 with no rotation)."""
    cdef double qa[4]
    cdef double ea[3]
    cdef double eb[3]
    cdef int k
    d_pos[0] = 0.0
    w_out[0] = 0.0
    if p[P_TPOS] != POS_IGNORE:
        d_pos[0] = sqrt(pos_sq(a, b))
    if p[P_TROT] != ROT_IGNORE:
        for k in range(4):
            qa[k] = a[3 + k]
        if p[P_IGNORE_Z] != 0.0:
            quat2euler(a + 3, ea)
            quat2euler(b + 3, eb)
            ea[2] = eb[2]
            euler2quat(ea, qa)
        w_out[0] = clip(rot_w(qa, b), -1.0, 1.0)


# ---------------------------------------------------------------- the kernels
cdef void _obs(MjEnv* e) noexcept nogil:
    """[achieved_goal, desired_goal, observation] (the Dict's sorted keys): _get_obs."""
    cdef const double* p = e.prm
    cdef HandData* d = <HandData*> e.d
    cdef double* o = e.obs
    cdef double* x = e.obs + 14
    cdef int k, n = <int> p[P_NROBOT], nt = <int> p[P_NTOUCH]
    cdef int oq = <int> p[P_OBJ_QPOS], ov = <int> p[P_OBJ_QVEL]
    cdef double v
    for k in range(7):
        o[k] = d.qpos[oq + k]
        o[7 + k] = e.tstate[T_GOAL + k]
    for k in range(n):
        x[k] = d.qpos[<int> p[P_ROBOT_QPOS + k]]
        x[n + k] = d.qvel[<int> p[P_ROBOT_QVEL + k]]
    for k in range(6):
        x[2 * n + k] = d.qvel[ov + k]
    for k in range(7):
        x[2 * n + 6 + k] = d.qpos[oq + k]
    # touch sensors: sensordata indexed by the sensor ids (every sensor has dimension 1)
    for k in range(nt):
        v = d.sensordata[<int> p[P_TOUCH_IDS + k]]
        if p[P_TOUCH_BOOL] != 0.0:
            v = 1.0 if v > 0.0 else 0.0
        x[2 * n + 13 + k] = v


cdef inline int _draw_quat(MjEnv* e, int mode, double* q) noexcept nogil:
    """The random rotation of _reset_sim's offset and _sample_goal's target (mode z, parallel
    or xyz), drawn from the env's stream."""
    cdef const double* p = e.prm
    cdef double angle
    cdef double axis[3]
    cdef double z[4]
    cdef uint64_t j = 0
    uniform_fill(e.rng, -PI, PI, &angle, 1)
    if mode == ROT_XYZ:
        uniform_fill(e.rng, -1.0, 1.0, axis, 3)
    else:
        axis[0] = 0.0
        axis[1] = 0.0
        axis[2] = 1.0
    if mode != ROT_PARALLEL:
        quat_from_angle_axis(e, angle, axis, q)
        return 0
    quat_from_angle_axis(e, angle, axis, z)
    random_bounded_uint64_fill(e.rng, 0, NPARALLEL - 1, 1, False, &j)
    quat_mul(z, p + P_PARALLEL + 4 * <int> j, q)
    return 0


cdef int _reset_sim(MjEnv* e) noexcept nogil:
    """One try of MujocoManipulateEnv._reset_sim: -1 on a MuJoCo error, else is_on_palm."""
    cdef const double* p = e.prm
    cdef HandData* d = <HandData*> e.d
    cdef int k, mode = <int> p[P_TROT], oq = <int> p[P_OBJ_QPOS]
    cdef double pos[3]
    cdef double quat[4]
    cdef double off[4]
    cdef double q[4]
    cdef double noise[3]
    cdef double ctrl[NU]
    cdef double n
    d.time = p[P_TIME0]
    for k in range(e.m.nq):
        d.qpos[k] = p[P_STATE + k]
    for k in range(e.m.nv):
        d.qvel[k] = p[P_STATE + e.m.nq + k]
    if sim_forward(e, False):
        return -1
    for k in range(3):
        pos[k] = d.qpos[oq + k]
    for k in range(4):
        quat[k] = d.qpos[oq + 3 + k]
    if p[P_RAND_ROT] != 0.0 and mode != ROT_FIXED:
        _draw_quat(e, ROT_XYZ if mode == ROT_IGNORE else mode, off)
        quat_mul(quat, off, q)
        for k in range(4):
            quat[k] = q[k]
    if p[P_RAND_POS] != 0.0 and p[P_TPOS] != POS_FIXED:
        normal_fill(e.rng, noise, 3)
        for k in range(3):
            pos[k] = pos[k] + (0.0 + 0.005 * noise[k])
    n = sqrt(e.dot(quat, quat, 4))
    for k in range(4):
        quat[k] = quat[k] / n
    for k in range(3):
        d.qpos[oq + k] = pos[k]
    for k in range(4):
        d.qpos[oq + 3 + k] = quat[k]
    for k in range(NU):
        ctrl[k] = clip(p[P_CENTER + k] + 0.0 * p[P_HALF + k], p[P_LO + k], p[P_HI + k])
    for k in range(10):
        if e.guard.step(e.m, e.d, ctrl, <int> p[P_NSUB], e.err):
            return -1
    if sim_forward(e, False):
        return -1
    return 1 if d.site_xpos[3 * <int> p[P_SITE] + 2] > 0.04 else 0


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef HandData* d = <HandData*> e.d
    cdef double* g = e.tstate + T_GOAL
    cdef double off[3]
    cdef double q[4]
    cdef double n
    cdef int k, st, tries = 0, oq = <int> p[P_OBJ_QPOS], mode = <int> p[P_TROT]
    while True:
        st = _reset_sim(e)
        if st < 0:
            return 1
        if st == 1:
            break
        tries += 1
        if tries >= MAX_TRIES:        # the reference would loop for ever
            strncpy(e.err, b"the object fell off the palm in 10000 reset tries", 200)
            return 1
    # _sample_goal
    if p[P_TPOS] == POS_RANDOM:
        for k in range(3):
            uniform_fill(e.rng, p[P_RANGE_LO + k], p[P_RANGE_HI + k], off + k, 1)
        for k in range(3):
            g[k] = d.qpos[oq + k] + off[k]
    else:
        for k in range(3):
            g[k] = d.qpos[oq + k]
    if mode == ROT_IGNORE or mode == ROT_FIXED:   # refused in Python (the reference fails)
        for k in range(4):
            q[k] = d.qpos[oq + 3 + k]
    else:
        _draw_quat(e, mode, q)
    n = sqrt(e.dot(q, q, 4))
    for k in range(4):
        g[3 + k] = q[k] / n
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef double ctrl[NU]
    cdef double a, d_pos, d_rot
    cdef float ok
    cdef int k
    for k in range(NU):
        a = clip(p[P_ACT + k], -1.0, 1.0)
        ctrl[k] = clip(p[P_CENTER + k] + a * p[P_HALF + k], p[P_LO + k], p[P_HI + k])
    if e.guard.step(e.m, e.d, ctrl, <int> p[P_NSUB], e.err):
        return 1
    _obs(e)
    goal_distance(p, e.obs, e.tstate + T_GOAL, &d_pos, &d_rot)
    ok = (<float> (d_pos < p[P_DIST_THR])) * (<float> (d_rot < p[P_ROT_THR]))
    e.info[0] = ok
    if p[P_DENSE] != 0.0:
        e.rew[0] = -(10.0 * d_pos + d_rot)
    else:
        e.rew[0] = <double> (ok - <float> 1.0)
    e.term[0] = 0
    return 0


# ---------------------------------------------------------------- HandReach
cdef void _reach_obs(MjEnv* e) noexcept nogil:
    """[achieved_goal, desired_goal, observation]: the five fingertips, the goal, then robot
    qpos, robot qvel and the fingertips."""
    cdef const double* p = e.prm
    cdef HandData* d = <HandData*> e.d
    cdef double* o = e.obs
    cdef int k, j, n = <int> p[P_NROBOT]
    cdef double* x = e.obs + 6 * NFINGER
    for j in range(NFINGER):
        for k in range(3):
            o[3 * j + k] = d.site_xpos[3 * <int> p[P_FINGER_SITES + j] + k]
    for k in range(3 * NFINGER):
        o[3 * NFINGER + k] = e.tstate[T_GOAL + k]
    for k in range(n):
        x[k] = d.qpos[<int> p[P_ROBOT_QPOS + k]]
        x[n + k] = d.qvel[<int> p[P_ROBOT_QVEL + k]]
    for k in range(3 * NFINGER):
        x[2 * n + k] = o[k]


cdef inline double _sq15(const double* a, const double* b) noexcept nogil:
    """np.linalg.norm(a - b, axis=-1)'s sum of squares of 15-vectors: numpy's pairwise sum
    (eight partial sums, then the last seven in order)."""
    cdef double s[3 * NFINGER]
    cdef double res
    cdef int k
    for k in range(3 * NFINGER):
        s[k] = (a[k] - b[k]) * (a[k] - b[k])
    res = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
    for k in range(8, 3 * NFINGER):
        res = res + s[k]
    return res


cdef inline double _norm15(const double* a, const double* b) noexcept nogil:
    """np.linalg.norm(a - b, axis=-1) of 15-vectors."""
    return sqrt(_sq15(a, b))


cdef int _reach_reset(MjEnv* e) noexcept nogil:
    """MujocoRobotEnv._reset_sim, then BaseHandReachEnv._sample_goal."""
    cdef const double* p = e.prm
    cdef HandData* d = <HandData*> e.d
    cdef double* g = e.tstate + T_GOAL
    cdef double meet[3]
    cdef double z[3]
    cdef double od[3]
    cdef double n, u
    cdef uint64_t finger = 0
    cdef int k, i, idx
    if sim_reset_data(e):
        return 1
    d.time = p[P_TIME0]
    for k in range(e.m.nq):
        d.qpos[k] = p[P_STATE + k]
    for k in range(e.m.nv):
        d.qvel[k] = p[P_STATE + e.m.nq + k]
    if sim_forward(e, False):
        return 1
    random_bounded_uint64_fill(e.rng, 0, NFINGER - 2, 1, False, &finger)   # choice of 4
    normal_fill(e.rng, z, 3)
    for k in range(3):
        meet[k] = p[P_MEET + k] + (0.0 + 0.005 * z[k])
    for k in range(3 * NFINGER):
        g[k] = p[P_INIT_GOAL + k]
    for i in range(2):
        idx = THUMB if i == 0 else <int> finger
        for k in range(3):
            od[k] = meet[k] - g[3 * idx + k]
        n = sqrt(e.dot(od, od, 3))
        for k in range(3):
            od[k] = od[k] / n
        for k in range(3):
            g[3 * idx + k] = meet[k] - 0.005 * od[k]
    uniform_fill(e.rng, 0.0, 1.0, &u, 1)
    if u < 0.1:
        for k in range(3 * NFINGER):
            g[k] = p[P_INIT_GOAL + k]
    _reach_obs(e)
    return 0


cdef int _reach_step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef double ctrl[NU]
    cdef double a, dist
    cdef int k
    for k in range(NU):
        a = clip(p[P_ACT + k], -1.0, 1.0)
        ctrl[k] = clip(p[P_CENTER + k] + a * p[P_HALF + k], p[P_LO + k], p[P_HI + k])
    if e.guard.step(e.m, e.d, ctrl, <int> p[P_NSUB], e.err):
        return 1
    _reach_obs(e)
    dist = _norm15(e.obs, e.tstate + T_GOAL)
    e.info[0] = 1.0 if dist < p[P_DIST_THR] else 0.0
    if p[P_DENSE] != 0.0:
        e.rew[0] = -dist
    else:
        e.rew[0] = -1.0 if dist > p[P_DIST_THR] else -0.0
    e.term[0] = 0
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step
cdef MjTask REACH
REACH.reset = _reach_reset
REACH.step = _reach_step


def task_capsule(reach=False):
    """The manipulation task's capsule, or HandReach's."""
    return export_task(&REACH if reach else &TASK)


def distance(const double[::1] prm, const double[:, ::1] a, const double[:, ::1] b):
    """goal_distance over rows (for compute_reward and tests): (d_pos, d_rot) arrays."""
    if a.shape[1] != 7 or b.shape[1] != 7 or a.shape[0] != b.shape[0] or \
            prm.shape[0] <= P_IGNORE_Z:
        raise ValueError("distance: (n, 7) goals and a parameter row")
    n = a.shape[0]
    dp = np.empty(n)
    dr = np.empty(n)
    cdef double[::1] vp = dp
    cdef double[::1] vr = dr
    cdef Py_ssize_t i
    for i in range(n):
        goal_distance(&prm[0], &a[i, 0], &b[i, 0], &vp[i], &vr[i])
    return dp, dr


cdef int _reach_rewards(const GoalRows* r, void* out, double* work,
                        const double* prm) noexcept nogil:
    """BaseHandReachEnv.compute_reward (prm: sqrt_at_most(threshold), dense): dense -distance
    (float64), sparse -(distance > threshold) as float32. A NaN or infinite goal makes its
    row's squared distance NaN or infinite: the goals are checked only then."""
    if gl_rows15(r.a, r.d, out, r.n, GL_NEG_SQRT if prm[1] != 0.0 else GL_SPARSE_F, prm[0]):
        return first_nonfinite(r.a, r.d, 3 * NFINGER * r.n)
    return 0


cdef int _manipulate_rewards(const GoalRows* r, void* out, double* work,
                             const double* prm) noexcept nogil:
    """BaseManipulateEnv.compute_reward (prm: tpos, trot, threshold, dense, sqrt_below(
    threshold)) for a target without ignore_z_target_rotation: dense -(10 d_pos + d_rot)
    (float64), sparse float32(d_pos < threshold) * float32(d_rot < 0.1) - 1, which is 0 when
    both hold, else -1 (work: squared d_pos then d_pos, w, arccos rows). Sparse rewards take
    no square root: d_pos < threshold exactly when its square is <= sqrt_below(threshold).
    The squared distance and the quaternion product's w are computed for every row, even for
    an ignored part: a NaN or infinite goal value makes one of them NaN or infinite, so they
    are checked (2 values a row, not 14) and the goals only then."""
    cdef cnp.npy_intp n = r.n
    cdef const double* pa = r.a
    cdef const double* pd = r.d
    cdef double* od = <double*> out
    cdef float* of = <float*> out
    cdef double* sq = work
    cdef double* w = sq + n
    cdef double* ac = w + n             # the products' w before the clip, then arccos(w)
    cdef bint dense = prm[3] != 0.0
    cdef bint no_rot = prm[1] == ROT_IGNORE
    cdef cnp.npy_intp i
    cdef int bad
    for i in range(n):                  # goal_pos_w's two parts, for every row
        sq[i] = pos_sq(pa + 7 * i, pd + 7 * i)
        ac[i] = rot_w(pa + 7 * i + 3, pd + 7 * i)
        w[i] = clip(ac[i], -1.0, 1.0)
    if gl_nonfinite(sq, n) or gl_nonfinite(ac, n):
        bad = first_nonfinite(pa, pd, 7 * n)    # (every value, ignored parts too)
        if bad:
            return bad
    if prm[0] == POS_IGNORE:
        for i in range(n):
            sq[i] = 0.0
    if not no_rot and n:
        np_unary_n(LOOPS[L_ACOS], w, ac, n)
    if dense:
        gl_sqrt_n(sq, n)
        for i in range(n):
            od[i] = -(10.0 * sq[i] + (0.0 if no_rot else 2 * ac[i]))
    else:
        gl_both_within(sq, prm[4], NULL if no_rot else ac, 0.1, of, n)
    return 0


def batch_reach_rewards(object a, object d, double threshold, bint dense):
    """BaseHandReachEnv.compute_reward of a HER batch (see _goal_batch.pxi), or None."""
    cdef double prm[2]
    prm[0], prm[1] = sqrt_at_most(threshold), dense
    return run_goal_batch(a, d, 3 * NFINGER, cnp.NPY_DOUBLE if dense else cnp.NPY_FLOAT, 0,
                          _reach_rewards, prm)


def batch_manipulate_rewards(object a, object d, int tpos, int trot, double threshold,
                             bint dense):
    """BaseManipulateEnv.compute_reward of a HER batch (see _goal_batch.pxi) for a target
    without ignore_z_target_rotation (the Pen's batches keep the reference's own row-2
    quirk on numpy's path), or None."""
    cdef double prm[5]
    prm[0], prm[1], prm[2], prm[3] = tpos, trot, threshold, dense
    prm[4] = sqrt_below(threshold)
    return run_goal_batch(a, d, 7, cnp.NPY_DOUBLE if dense else cnp.NPY_FLOAT, 3,
                          _manipulate_rewards, prm)


def reach_rewards_call(double threshold, bint dense, Py_ssize_t n, general):
    """batch_reach_rewards bound for a pool of n envs (a GoalCall; general: other calls)."""
    return goal_call(_reach_rewards, 3 * NFINGER, cnp.NPY_DOUBLE if dense else cnp.NPY_FLOAT,
                     0, (sqrt_at_most(threshold), dense), n, general)


def manipulate_rewards_call(int tpos, int trot, double threshold, bint dense, Py_ssize_t n,
                            general):
    """batch_manipulate_rewards bound for a pool of n envs (a GoalCall)."""
    return goal_call(_manipulate_rewards, 7, cnp.NPY_DOUBLE if dense else cnp.NPY_FLOAT, 3,
                     (tpos, trot, threshold, dense, sqrt_below(threshold)), n, general)
