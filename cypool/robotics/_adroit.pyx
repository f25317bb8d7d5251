"""Adroit hand (gymnasium_robotics.envs.adroit_hand: AdroitHandDoorEnv, AdroitHandHammerEnv,
AdroitHandPenEnv, AdroitHandRelocateEnv, gymnasium-robotics 1.4.2): the task kernels on
cypool's MuJoCo pool.

Each reset draws part of the *model* (the door's frame position, the nail board's height, the
pen target's orientation, the ball's and target's positions), so each env has its own copy of
the model (made in cypool.robotics.adroit, with the reference's actuator gain and bias edits),
named in its parameter row. The drawn values live in the env's task state (snapshots carry
them) and are written into the env's model at every reset and step.

Reset (MujocoEnv.reset, reset_model): mj_resetData; the task's draws (np_random.uniform, one
scalar each, in the reference's order); set_state(qpos0, 0) (mj_forward); Pen: the pen's and
target's lengths (np.linalg.norm of their sites' difference). reset(options={"initial_state_dict":
...}): then set_env_state (its model values, set_state(qpos, qvel)); what it sets beyond the
draws (Hammer's board x, y; Relocate's ball z) stays, in the task state, as in the model of the
reference's env.
Step: ctrl = act_mean + clip(action, -1, 1) * act_rng (float64; a float32 action is widened
exactly, as numpy does); mj_step x 5 and mj_rnePostConstraint; observation, reward, success.
Norms and dots are numpy's BLAS ddot (np_norm, e.dot), np.sum(qvel ** 2) numpy's pairwise sum,
and sin / cos / arctan2 numpy's own float64 loops (its SIMD loops differ from libm)."""
from libc.math cimport sqrt, INFINITY

cimport numpy as cnp

from cypool.mujoco._mj.mujoco cimport mjModel, mjData, mjtNum
from cypool.mujoco._task cimport (export_task, MjEnv, MjTask, sim_reset_data, sim_set_state,
                                  np_norm)
from cypool.mujoco._numeric cimport clip, uniform_fill, sum_sq

import numpy as np

cnp.import_array()

cdef enum:
    DOOR, HAMMER, PEN, RELOCATE

cdef enum:
    C_MAX_NU = 32, N_IDS = 8, C_MAX_NQ = 36, N_OPT_MODEL = 6

# Parameter row (one per env): task, reward, the env's model (address), the task's ids
# (layout per task in cypool.robotics.adroit.IDS), the action rescaling; the model's own
# values of what only reset(options={"initial_state_dict": ...}) changes (Hammer: the board's
# x, y; Relocate: the ball's z); that option for the env's next reset (a flag, qpos, qvel,
# the model values: Door's door_body_pos, Hammer's board_pos, Pen's desired_orien,
# Relocate's obj_pos then target_pos).
cdef enum:
    P_TASK, P_SPARSE, P_NSUB, P_MODEL, P_ID, P_MEAN = P_ID + N_IDS,
    P_RNG = P_MEAN + C_MAX_NU, P_BASE = P_RNG + C_MAX_NU, P_OPT = P_BASE + 2,
    P_OPT_QPOS, P_OPT_QVEL = P_OPT_QPOS + C_MAX_NQ, P_OPT_MODEL = P_OPT_QVEL + C_MAX_NQ,
    NPARAM = P_OPT_MODEL + N_OPT_MODEL

# task state: the values drawn into the model (Pen: the target's quaternion), Pen's lengths,
# the model values an initial_state_dict set beyond the draws (T_FIX_SET: set; else P_BASE's)
cdef enum:
    T_MODEL, T_PEN_LEN = T_MODEL + 5, T_TAR_LEN, T_FIX, T_FIX_SET = T_FIX + 2, NSTATE

TASK_IDS = dict(Door=DOOR, Hammer=HAMMER, Pen=PEN, Relocate=RELOCATE)
TASK_STATE = NSTATE
TASK_STATE_AT = dict(model=T_MODEL, fix=T_FIX, fix_set=T_FIX_SET)   # (cypool.envpool's Hammer)
MAX_NU = C_MAX_NU
PARAMS = dict(task=P_TASK, sparse=P_SPARSE, n_substeps=P_NSUB, model=P_MODEL, ids=P_ID,
              n_ids=N_IDS, mean=P_MEAN, rng=P_RNG, base=P_BASE, opt=P_OPT, opt_qpos=P_OPT_QPOS,
              opt_qvel=P_OPT_QVEL, opt_model=P_OPT_MODEL, max_nq=C_MAX_NQ, width=NPARAM)
cdef double FLOAT_EPS = np.finfo(np.float64).eps
cdef double EPS4 = FLOAT_EPS * 4.0

# ---------------------------------------------------------------- numpy's own float64 loops
from cypool._core._numpy_loops cimport NpLoop, numpy_loop, np_unary, np_binary

cdef NpLoop SIN = numpy_loop(np.sin, "d->d")
cdef NpLoop COS = numpy_loop(np.cos, "d->d")
cdef NpLoop ATAN2 = numpy_loop(np.arctan2, "dd->d")


cdef inline double np_sin(double x) noexcept nogil:
    return np_unary(SIN, x)


cdef inline double np_cos(double x) noexcept nogil:
    return np_unary(COS, x)


cdef inline double np_atan2(double y, double x) noexcept nogil:
    return np_binary(ATAN2, y, x)


# ---------------------------------------------------------------- rotations
cdef void _euler2quat(double e0, double e1, double e2, double* q) noexcept nogil:
    """rotations.euler2quat of (e0, e1, e2)."""
    cdef double ai = e2 / 2, aj = -e1 / 2, ak = e0 / 2
    cdef double si = np_sin(ai), sj = np_sin(aj), sk = np_sin(ak)
    cdef double ci = np_cos(ai), cj = np_cos(aj), ck = np_cos(ak)
    cdef double cc = ci * ck, cs = ci * sk, sc = si * ck, ss = si * sk
    q[0] = cj * cc + sj * ss
    q[3] = cj * sc - sj * cs
    q[2] = -(cj * ss + sj * cc)
    q[1] = cj * cs - sj * sc


cdef void _quat2euler(const double* q, double* out) noexcept nogil:
    """rotations.quat2euler: quat2mat (np.sum of the squares left to right), mat2euler."""
    cdef double w = q[0], x = q[1], y = q[2], z = q[3]
    cdef double nq = ((w * w + x * x) + y * y) + z * z
    cdef double s = 2.0 / nq
    cdef double X = x * s, Y = y * s, Z = z * s
    cdef double wX = w * X, wY = w * Y, wZ = w * Z
    cdef double xX = x * X, xY = x * Y, xZ = x * Z
    cdef double yY = y * Y, yZ = y * Z, zZ = z * Z
    cdef double m[9]
    cdef double cy
    cdef bint cond
    cdef int k
    if nq > FLOAT_EPS:
        m[0] = 1.0 - (yY + zZ)
        m[1] = xY - wZ
        m[2] = xZ + wY
        m[3] = xY + wZ
        m[4] = 1.0 - (xX + zZ)
        m[5] = yZ - wX
        m[6] = xZ - wY
        m[7] = yZ + wX
        m[8] = 1.0 - (xX + yY)
    else:
        for k in range(9):
            m[k] = 1.0 if k % 4 == 0 else 0.0
    cy = sqrt(m[8] * m[8] + m[5] * m[5])
    cond = cy > EPS4
    out[2] = -np_atan2(m[1], m[0]) if cond else -np_atan2(-m[3], m[4])
    out[1] = -np_atan2(-m[2], cy)
    out[0] = -np_atan2(m[5], m[8]) if cond else 0.0


# ---------------------------------------------------------------- the kernels
cdef inline mjModel* _model(MjEnv* e) noexcept nogil:
    """Point e at this env's model."""
    cdef mjModel* m = <mjModel*> <size_t> e.prm[P_MODEL]
    e.m = m
    return m


cdef void _write_model(MjEnv* e, mjModel* m) noexcept nogil:
    """The env's drawn values into its model (reset_model's writes)."""
    cdef const double* ts = e.tstate + T_MODEL
    cdef const double* ids = e.prm + P_ID
    # what only an initial_state_dict changes: its values, else the model's own
    cdef const double* fix = e.prm + P_BASE
    cdef int task = <int> e.prm[P_TASK], k
    cdef Py_ssize_t b
    if e.tstate[T_FIX_SET] != 0.0:
        fix = e.tstate + T_FIX
    if task == DOOR:                        # body_pos[frame]
        b = 3 * <Py_ssize_t> ids[3]
        for k in range(3):
            m.body_pos[b + k] = ts[k]
    elif task == HAMMER:                    # body_pos[nail_board]: x, y fixed; z drawn
        b = 3 * <Py_ssize_t> ids[5]
        m.body_pos[b] = fix[0]
        m.body_pos[b + 1] = fix[1]
        m.body_pos[b + 2] = ts[0]
    elif task == PEN:                       # body_quat[target]
        b = 4 * <Py_ssize_t> ids[0]
        for k in range(4):
            m.body_quat[b + k] = ts[k]
    else:                                   # body_pos[Object] (z fixed), site_pos[target]
        b = 3 * <Py_ssize_t> ids[2]
        m.body_pos[b] = ts[0]
        m.body_pos[b + 1] = ts[1]
        m.body_pos[b + 2] = fix[0]
        b = 3 * <Py_ssize_t> ids[0]
        for k in range(3):
            m.site_pos[b + k] = ts[2 + k]


cdef inline void _sub3(const double* a, const double* b, double* out) noexcept nogil:
    out[0] = a[0] - b[0]
    out[1] = a[1] - b[1]
    out[2] = a[2] - b[2]


cdef inline double _dist(MjEnv* e, const double* a, const double* b) noexcept nogil:
    """np.linalg.norm(a - b) of 3-vectors."""
    cdef double v[3]
    _sub3(a, b, v)
    return np_norm(e, v, 3)


cdef inline void _orien(MjEnv* e, int top, int bottom, double length,
                        double* out) noexcept nogil:
    """(site_xpos[top] - site_xpos[bottom]) / length."""
    cdef const double* sx = e.d.site_xpos
    cdef int k
    for k in range(3):
        out[k] = (sx[3 * top + k] - sx[3 * bottom + k]) / length


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const double* ids = e.prm + P_ID
    cdef mjData* d = e.d
    cdef const mjModel* m = e.m
    cdef double* o = e.obs
    cdef const double* sx = d.site_xpos
    cdef const double* a
    cdef const double* b
    cdef const double* c
    cdef double oo[3]
    cdef double dor[3]
    cdef int task = <int> e.prm[P_TASK], k, j = 0, nq = m.nq, nv = m.nv
    cdef double door
    if task == DOOR:            # ids: hinge dof adr, S_grasp, S_handle, frame
        for k in range(1, nq - 2):
            o[j] = d.qpos[k]
            j += 1
        o[j] = d.qpos[nq - 1]
        door = d.qpos[<Py_ssize_t> ids[0]]
        o[j + 1] = door
        j += 2
        a = sx + 3 * <Py_ssize_t> ids[1]        # palm
        b = sx + 3 * <Py_ssize_t> ids[2]        # handle
        for k in range(3):
            o[j + k] = a[k]
            o[j + 3 + k] = b[k]
            o[j + 6 + k] = a[k] - b[k]
        o[j + 9] = 1.0 if door > 1.0 else -1.0
    elif task == HAMMER:        # ids: S_target, S_grasp, Object, tool, nail_goal, board, S_nail
        for k in range(nq - 6):
            o[j] = d.qpos[k]
            j += 1
        for k in range(nv - 6, nv):
            o[j] = clip(d.qvel[k], -1.0, 1.0)
            j += 1
        a = sx + 3 * <Py_ssize_t> ids[1]
        b = d.xpos + 3 * <Py_ssize_t> ids[2]
        c = sx + 3 * <Py_ssize_t> ids[0]
        for k in range(3):
            o[j + k] = a[k]
            o[j + 3 + k] = b[k]
        _quat2euler(d.xquat + 4 * <Py_ssize_t> ids[2], o + j + 6)
        for k in range(3):
            o[j + 9 + k] = c[k]
        o[j + 12] = clip(d.sensordata[<Py_ssize_t> ids[6]], -1.0, 1.0)
    elif task == PEN:           # ids: target, S_grasp, Object, eps_ball, tops and bottoms
        for k in range(nq - 6):
            o[j] = d.qpos[k]
            j += 1
        a = d.xpos + 3 * <Py_ssize_t> ids[2]
        b = sx + 3 * <Py_ssize_t> ids[3]
        _orien(e, <int> ids[4], <int> ids[5], e.tstate[T_PEN_LEN], oo)
        _orien(e, <int> ids[6], <int> ids[7], e.tstate[T_TAR_LEN], dor)
        for k in range(3):
            o[j + k] = a[k]
        for k in range(6):
            o[j + 3 + k] = d.qvel[nv - 6 + k]
        for k in range(3):
            o[j + 9 + k] = oo[k]
            o[j + 12 + k] = dor[k]
            o[j + 15 + k] = a[k] - b[k]
            o[j + 18 + k] = oo[k] - dor[k]
    else:                       # ids: target site, S_grasp, Object
        for k in range(nq - 6):
            o[j] = d.qpos[k]
            j += 1
        a = sx + 3 * <Py_ssize_t> ids[1]        # palm
        b = d.xpos + 3 * <Py_ssize_t> ids[2]    # object
        c = sx + 3 * <Py_ssize_t> ids[0]        # target
        for k in range(3):
            o[j + k] = a[k] - b[k]
            o[j + 3 + k] = a[k] - c[k]
            o[j + 6 + k] = b[k] - c[k]


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const double* ids = e.prm + P_ID
    cdef double* ts = e.tstate
    cdef mjModel* m = _model(e)
    cdef double u[2]
    cdef int task = <int> e.prm[P_TASK], k
    if sim_reset_data(e):
        return 1
    if task == DOOR:
        uniform_fill(e.rng, -0.3, -0.2, ts + T_MODEL, 1)
        uniform_fill(e.rng, 0.25, 0.35, ts + T_MODEL + 1, 1)
        uniform_fill(e.rng, 0.252, 0.35, ts + T_MODEL + 2, 1)
    elif task == HAMMER:
        uniform_fill(e.rng, 0.1, 0.25, ts + T_MODEL, 1)
    elif task == PEN:
        uniform_fill(e.rng, -1.0, 1.0, u, 2)
        _euler2quat(u[0], u[1], 0.0, ts + T_MODEL)
    else:
        uniform_fill(e.rng, -0.15, 0.15, ts + T_MODEL, 1)
        uniform_fill(e.rng, -0.15, 0.3, ts + T_MODEL + 1, 1)
        uniform_fill(e.rng, -0.2, 0.2, ts + T_MODEL + 2, 2)
        uniform_fill(e.rng, 0.15, 0.35, ts + T_MODEL + 4, 1)
    _write_model(e, m)
    for k in range(m.nv):
        e.qvel_buf[k] = 0.0
    if sim_set_state(e, m.qpos0, e.qvel_buf):
        return 1
    if task == PEN:
        ts[T_PEN_LEN] = _dist(e, e.d.site_xpos + 3 * <Py_ssize_t> ids[4],
                              e.d.site_xpos + 3 * <Py_ssize_t> ids[5])
        ts[T_TAR_LEN] = _dist(e, e.d.site_xpos + 3 * <Py_ssize_t> ids[6],
                              e.d.site_xpos + 3 * <Py_ssize_t> ids[7])
    if e.prm[P_OPT] != 0.0 and _set_env_state(e, m, task):
        return 1
    _obs(e)
    return 0


cdef int _set_env_state(MjEnv* e, mjModel* m, int task) noexcept nogil:
    """reset(options={"initial_state_dict": ...}) after reset_model: set_env_state (the model
    values, then set_state(qpos, qvel)); Pen's lengths stay reset_model's, as in the
    reference. The option serves this one reset: its flag is cleared (env i's own row)."""
    cdef double* prm = <double*> e.prm          # env i's row; only the option flag changes
    cdef const double* v = prm + P_OPT_MODEL
    cdef double* ts = e.tstate
    cdef int k
    prm[P_OPT] = 0.0
    if task == DOOR:                            # door_body_pos
        for k in range(3):
            ts[T_MODEL + k] = v[k]
    elif task == HAMMER:                        # board_pos
        ts[T_FIX] = v[0]
        ts[T_FIX + 1] = v[1]
        ts[T_FIX_SET] = 1.0
        ts[T_MODEL] = v[2]
    elif task == PEN:                           # desired_orien (the target's body_quat)
        for k in range(4):
            ts[T_MODEL + k] = v[k]
    else:                                       # obj_pos, target_pos
        ts[T_MODEL] = v[0]
        ts[T_MODEL + 1] = v[1]
        ts[T_FIX] = v[2]
        ts[T_FIX_SET] = 1.0
        for k in range(3):
            ts[T_MODEL + 2 + k] = v[3 + k]
    _write_model(e, m)
    return sim_set_state(e, prm + P_OPT_QPOS, prm + P_OPT_QVEL)


cdef bint _reward(MjEnv* e, double* reward) noexcept nogil:
    """The step's reward (dense: the reference's sum, in its order) and success."""
    cdef const double* ids = e.prm + P_ID
    cdef mjData* d = e.d
    cdef const double* sx = d.site_xpos
    cdef const double* palm
    cdef const double* obj
    cdef const double* tgt
    cdef const double* head
    cdef const double* goal
    cdef double oo[3]
    cdef double dor[3]
    cdef bint sparse = e.prm[P_SPARSE] != 0.0, ok
    cdef int task = <int> e.prm[P_TASK]
    cdef double gd, r, sim
    if task == DOOR:
        gd = d.qpos[<Py_ssize_t> ids[0]]
        ok = gd >= 1.35
        if sparse:
            r = 10.0 if ok else -0.1
        else:
            r = 0.1 * _dist(e, sx + 3 * <Py_ssize_t> ids[1], sx + 3 * <Py_ssize_t> ids[2])
            r = r + -0.1 * (gd - 1.57) * (gd - 1.57)
            r = r + -1e-05 * sum_sq(d.qvel, e.m.nv, -INFINITY, INFINITY)
            if gd > 0.2:
                r = r + 2.0
            if gd > 1.0:
                r = r + 8.0
            if gd > 1.35:
                r = r + 10.0
    elif task == HAMMER:
        obj = d.xpos + 3 * <Py_ssize_t> ids[2]
        palm = sx + 3 * <Py_ssize_t> ids[1]
        head = sx + 3 * <Py_ssize_t> ids[3]
        tgt = sx + 3 * <Py_ssize_t> ids[0]         # the nail
        goal = sx + 3 * <Py_ssize_t> ids[4]
        gd = _dist(e, tgt, goal)
        ok = gd < 0.01
        if sparse:
            r = 10.0 if ok else -0.1
        else:
            r = 0.1 * _dist(e, palm, obj)
            r = r - _dist(e, head, tgt)
            r = r - 10.0 * _dist(e, tgt, goal)
            r = r - 1e-2 * np_norm(e, d.qvel, e.m.nv)
            if obj[2] > 0.04 and head[2] > 0.04:
                r = r + 2.0
            if gd < 0.020:
                r = r + 25.0
            if gd < 0.010:
                r = r + 75.0
    elif task == PEN:
        obj = d.xpos + 3 * <Py_ssize_t> ids[2]
        gd = _dist(e, obj, sx + 3 * <Py_ssize_t> ids[3])
        _orien(e, <int> ids[4], <int> ids[5], e.tstate[T_PEN_LEN], oo)
        _orien(e, <int> ids[6], <int> ids[7], e.tstate[T_TAR_LEN], dor)
        sim = e.dot(oo, dor, 3)
        ok = gd < 0.075 and sim > 0.95
        if sparse:
            r = 10.0 if ok else -0.1
        else:
            r = -gd + sim
            if gd < 0.075 and sim > 0.9:
                r = r + 10.0
            if gd < 0.075 and sim > 0.95:
                r = r + 50.0
            if obj[2] < 0.075:
                r = r - 5.0
    else:
        obj = d.xpos + 3 * <Py_ssize_t> ids[2]
        palm = sx + 3 * <Py_ssize_t> ids[1]
        tgt = sx + 3 * <Py_ssize_t> ids[0]
        gd = _dist(e, obj, tgt)
        ok = gd < 0.1
        if sparse:
            r = 10.0 if ok else -0.1
        else:
            r = 0.1 * _dist(e, palm, obj)
            if obj[2] > 0.04:
                r = r + 1.0
                r = r + -0.5 * _dist(e, palm, tgt)
                r = r + -0.5 * _dist(e, obj, tgt)
            if gd < 0.1:
                r = r + 10.0
            if gd < 0.05:
                r = r + 20.0
    reward[0] = r
    return ok


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef mjModel* m = _model(e)
    cdef double ctrl[C_MAX_NU]
    cdef int k
    _write_model(e, m)
    for k in range(m.nu):
        ctrl[k] = p[P_MEAN + k] + clip(e.act[k], -1.0, 1.0) * p[P_RNG + k]
    if e.guard.step(m, e.d, ctrl, <int> p[P_NSUB], e.err):
        return 1
    _obs(e)
    e.info[0] = 1.0 if _reward(e, e.rew) else 0.0
    e.term[0] = 0
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)


def euler2quat(double e0, double e1, double e2):
    """_euler2quat (for tests): rotations.euler2quat of one Euler triple."""
    out = np.empty(4)
    cdef double[::1] o = out
    _euler2quat(e0, e1, e2, &o[0])
    return out


def quat2euler(const double[::1] quat):
    """_quat2euler (for tests): rotations.quat2euler of one quaternion (4,)."""
    if quat.shape[0] != 4:
        raise ValueError("quat2euler: a (4,) quaternion")
    out = np.empty(3)
    cdef double[::1] o = out
    _quat2euler(&quat[0], &o[0])
    return out
