"""PointMaze (gymnasium_robotics.envs.maze.point_maze.PointMazeEnv over maze_v4.MazeEnv and
point.PointEnv, gymnasium-robotics 1.4.2): the task kernels on cypool's MuJoCo pool, and the
batched goal functions (compute_reward / compute_terminated / compute_truncated).

Reset (MazeEnv.reset, then PointEnv.reset): goal cell = integers(0, n_goal); goal = its centre
+ (uniform(-r, r) * s, uniform(-r, r) * s), x drawn first; reset cell: integers(0, n_reset)
drawn until ||cell - goal|| > 0.5 s (the first draw always happens); reset position = cell +
the same noise; mj_resetData; set_state(qpos0 with [:2] = reset position, 0).
Step: action clipped to [-1, 1]; qvel clipped to [-5, 5] and set_state (mj_forward); ctrl =
action, mj_step, mj_rnePostConstraint; the observation (desired_goal: the goal before the
update); reward from ||achieved - goal|| computed as np.linalg.norm(axis=-1) does (squares
added, no BLAS); terminated/success from np.linalg.norm without axis (numpy's BLAS dot); then
MazeEnv.update_goal.
"""
from libc.math cimport sqrt
from libc.stdint cimport uint64_t, int64_t, uintptr_t
from libc.string cimport strncpy

cimport numpy as cnp
from numpy.random cimport bitgen_t

from cypool.mujoco._task cimport (export_task, MjEnv, MjTask, sim_reset_data, sim_set_state,
                                  CP_ERRMSG_LEN)
from cypool.mujoco._numeric cimport clip, uniform_fill

import numpy as np

cnp.import_array()

cdef extern from "numpy/random/distributions.h" nogil:
    # Generator.integers(0, n) (int64): numpy's _rand_int64 for one value, rng = n - 1
    void random_bounded_uint64_fill(bitgen_t* bitgen_state, uint64_t off, uint64_t rng,
                                    cnp.npy_intp cnt, bint use_masked, uint64_t* out)

# Parameter row: flags, then the goal cells' (x, y) centres, then the reset cells'.
cdef enum:
    P_DENSE, P_CONTINUING, P_RESET_TARGET, P_NOISE, P_SCALE, P_NGOAL, P_NRESET, P_LOCS

# task state: the current goal
cdef enum:
    T_GX, T_GY, NSTATE

# reward threshold and goal radius of maze_v4 / point_maze
cdef double GOAL_RADIUS = 0.45
# a goal resampling loop that has not left the achieved goal's radius after this many draws
# is an error (gymnasium-robotics would loop on; with two cells or more it ends at once)
cdef long MAX_GOAL_DRAWS = 1000000

TASK_STATE = NSTATE
NPARAM_FIXED = P_LOCS


# ------------------------------------------------------------------------ numpy's exp
# np.exp of a float64: numpy's own "d->d" loop (its SIMD exp where the CPU has one, which
# differs from libm's on AVX-512), called without the GIL; each element's result does not
# depend on its position in a batch.
ctypedef void (*d_loop)(char** args, cnp.npy_intp* dims, cnp.npy_intp* steps,
                        void* data) noexcept nogil
cdef d_loop EXP_LOOP = NULL
cdef void* EXP_DATA = NULL


cdef int _exp_loop() except -1:
    global EXP_LOOP, EXP_DATA
    cdef cnp.ufunc uf = np.exp
    cdef int k
    sigs = (<object> uf).types      # the Python list: its order is the C arrays'
    if "d->d" not in sigs:
        raise RuntimeError("cypool.robotics: numpy's exp has no float64 loop")
    k = sigs.index("d->d")
    EXP_LOOP = <d_loop> uf.functions[k]
    EXP_DATA = uf.data[k]
    return 0


_exp_loop()


cdef inline void np_exp_n(const double* x, double* out, cnp.npy_intp n) noexcept nogil:
    cdef char* args[2]
    cdef cnp.npy_intp steps[2]
    args[0] = <char*> x
    args[1] = <char*> out
    steps[0] = 8
    steps[1] = 8
    EXP_LOOP(args, &n, steps, EXP_DATA)


# ------------------------------------------------------------------------ distances
cdef inline double dist_axis(double dx, double dy) noexcept nogil:
    """np.linalg.norm(v, axis=-1) of a float64 2-vector: sqrt(add.reduce(v * v))."""
    return sqrt(dx * dx + dy * dy)


cdef inline double dist_dot(MjEnv* e, double dx, double dy) noexcept nogil:
    """np.linalg.norm(v) of a float64 2-vector: sqrt(v.dot(v)), numpy's BLAS dot."""
    cdef double v[2]
    v[0] = dx
    v[1] = dy
    return sqrt(e.dot(v, v, 2))


cdef inline uint64_t integers(bitgen_t* rng, uint64_t n) noexcept nogil:
    cdef uint64_t out = 0
    random_bounded_uint64_fill(rng, 0, n - 1, 1, False, &out)
    return out


cdef inline void noisy_cell(MjEnv* e, const double* cell, double* xy) noexcept nogil:
    """MazeEnv.add_xy_position_noise(cell.copy())."""
    cdef double noise[2]
    cdef double r = e.prm[P_NOISE]
    uniform_fill(e.rng, -r, r, noise, 1)
    uniform_fill(e.rng, -r, r, noise + 1, 1)
    xy[0] = cell[0] + noise[0] * e.prm[P_SCALE]
    xy[1] = cell[1] + noise[1] * e.prm[P_SCALE]


cdef inline void new_goal(MjEnv* e) noexcept nogil:
    """generate_target_goal, then its noise: the env's goal (task state)."""
    cdef uint64_t k = integers(e.rng, <uint64_t> e.prm[P_NGOAL])
    noisy_cell(e, e.prm + P_LOCS + 2 * k, e.tstate + T_GX)


cdef inline void _fail(MjEnv* e, const char* msg) noexcept nogil:
    strncpy(e.err, msg, CP_ERRMSG_LEN - 1)
    e.err[CP_ERRMSG_LEN - 1] = 0


cdef inline void _obs(MjEnv* e) noexcept nogil:
    """[achieved_goal, desired_goal, observation] (the Dict's sorted keys)."""
    cdef double* o = e.obs
    o[0] = e.d.qpos[0]
    o[1] = e.d.qpos[1]
    o[2] = e.tstate[T_GX]
    o[3] = e.tstate[T_GY]
    o[4] = e.d.qpos[0]
    o[5] = e.d.qpos[1]
    o[6] = e.d.qvel[0]
    o[7] = e.d.qvel[1]


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const double* prm = e.prm
    cdef Py_ssize_t n_goal = <Py_ssize_t> prm[P_NGOAL]
    cdef Py_ssize_t n_reset = <Py_ssize_t> prm[P_NRESET]
    cdef const double* rlocs = prm + P_LOCS + 2 * n_goal
    cdef const double* cell
    cdef double gx, gy, lim = 0.5 * prm[P_SCALE]
    cdef double pos[2]
    cdef Py_ssize_t k
    cdef bint reachable = False
    new_goal(e)
    gx = e.tstate[T_GX]
    gy = e.tstate[T_GY]
    # generate_reset_pos: draw until a cell is farther than 0.5 * scaling from the goal;
    # where none is, gymnasium-robotics loops forever: an error here
    for k in range(n_reset):
        if not (dist_dot(e, rlocs[2 * k] - gx, rlocs[2 * k + 1] - gy) <= lim):
            reachable = True
            break
    if not reachable:
        _fail(e, b"PointMaze: every reset cell is within 0.5 * maze_size_scaling of the "
                 b"goal (gymnasium-robotics would draw reset cells forever)")
        return 1
    cell = NULL
    pos[0] = gx
    pos[1] = gy
    while dist_dot(e, pos[0] - gx, pos[1] - gy) <= lim:
        cell = rlocs + 2 * integers(e.rng, <uint64_t> n_reset)
        pos[0] = cell[0]
        pos[1] = cell[1]
    noisy_cell(e, pos, pos)
    if sim_reset_data(e):
        return 1
    for k in range(e.m.nq):
        e.qpos_buf[k] = e.m.qpos0[k]
    e.qpos_buf[0] = pos[0]
    e.qpos_buf[1] = pos[1]
    for k in range(e.m.nv):
        e.qvel_buf[k] = 0.0
    if sim_set_state(e, e.qpos_buf, e.qvel_buf):
        return 1
    _obs(e)
    e.info[0] = dist_dot(e, e.obs[0] - gx, e.obs[1] - gy) <= GOAL_RADIUS
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* prm = e.prm
    cdef double ctrl[2]
    cdef double ax, ay, gx, gy, dist
    cdef bint near
    cdef long draws
    ctrl[0] = clip(e.act[0], -1.0, 1.0)
    ctrl[1] = clip(e.act[1], -1.0, 1.0)
    # PointEnv._clip_velocity: set_state(qpos, clip(qvel, -5, 5))
    e.qpos_buf[0] = e.d.qpos[0]
    e.qpos_buf[1] = e.d.qpos[1]
    e.qvel_buf[0] = clip(e.d.qvel[0], -5.0, 5.0)
    e.qvel_buf[1] = clip(e.d.qvel[1], -5.0, 5.0)
    if sim_set_state(e, e.qpos_buf, e.qvel_buf):
        return 1
    if e.guard.step(e.m, e.d, ctrl, 1, e.err):       # do_simulation(action, frame_skip=1)
        return 1
    _obs(e)
    ax = e.obs[0]
    ay = e.obs[1]
    gx = e.tstate[T_GX]
    gy = e.tstate[T_GY]
    dist = dist_axis(ax - gx, ay - gy)
    if prm[P_DENSE] != 0.0:
        dist = -dist
        np_exp_n(&dist, e.rew, 1)
    else:
        e.rew[0] = 1.0 if dist <= GOAL_RADIUS else 0.0
    near = dist_dot(e, ax - gx, ay - gy) <= GOAL_RADIUS
    e.term[0] = prm[P_CONTINUING] == 0.0 and near
    e.info[0] = near
    # update_goal
    if prm[P_CONTINUING] != 0.0 and prm[P_RESET_TARGET] != 0.0 and near \
            and prm[P_NGOAL] > 1:
        draws = 0
        while dist_dot(e, ax - e.tstate[T_GX], ay - e.tstate[T_GY]) <= GOAL_RADIUS:
            if draws == MAX_GOAL_DRAWS:
                _fail(e, b"PointMaze: no new goal outside the goal radius in 1e6 draws")
                return 1
            new_goal(e)
            draws += 1
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)


# ------------------------------------------------------------------------ goal functions
# numpy's float64 dot of two 2-vectors as cypool's MuJoCo pool resolves it (cypool._numpy_blas):
# 0.0 + cblas_ddot where numpy has a BLAS, else a left-to-right sum
ctypedef double (*ddot64_t)(int64_t n, const double* x, int64_t incx, const double* y,
                            int64_t incy) noexcept nogil
ctypedef double (*ddot32_t)(int n, const double* x, int incx, const double* y,
                            int incy) noexcept nogil
cdef ddot64_t DDOT64 = NULL
cdef ddot32_t DDOT32 = NULL


def _set_dot():
    global DDOT64, DDOT32
    from cypool._numpy_blas import ROUTINE
    if ROUTINE.kind == "blas":
        if ROUTINE.ilp64:
            DDOT64 = <ddot64_t> <uintptr_t> ROUTINE.address
        else:
            DDOT32 = <ddot32_t> <uintptr_t> ROUTINE.address


_set_dot()


cdef inline double dot_self(const double* v, Py_ssize_t n) noexcept nogil:
    """v.dot(v) of a contiguous float64 vector, as numpy computes it (DOUBLE_dot)."""
    cdef double s = 0.0
    cdef Py_ssize_t k, chunk
    if DDOT64 != NULL:
        return s + DDOT64(n, v, 1, v, 1)
    if DDOT32 != NULL:
        while n > 0:
            chunk = n if n < 1073741824 else 1073741824
            s += DDOT32(<int> chunk, v, 1, v, 1)
            v += chunk
            n -= chunk
        return s
    for k in range(n):
        s += v[k] * v[k]
    return s


def norm_all(const double[::1] v):
    """np.linalg.norm(v) of a flat float64 vector: sqrt(v.dot(v))."""
    cdef double s = 0.0
    if v.shape[0]:
        with nogil:
            s = dot_self(&v[0], v.shape[0])
    return sqrt(s)


def goal_distances(const double[:, ::1] a, const double[:, ::1] d, bint dot):
    """||a - d|| per row of two (B, 2) float64 arrays: as np.linalg.norm(v, axis=-1)
    computes it (dot False), or as np.linalg.norm(v) of each row alone (dot True: numpy's
    BLAS dot)."""
    cdef Py_ssize_t n = a.shape[0], i
    out = np.empty(n, np.float64)
    cdef double[::1] o = out
    cdef double v[2]
    with nogil:
        for i in range(n):
            v[0] = a[i, 0] - d[i, 0]
            v[1] = a[i, 1] - d[i, 1]
            o[i] = sqrt(dot_self(v, 2)) if dot else dist_axis(v[0], v[1])
    return out


def dense_rewards(const double[::1] dist):
    """np.exp(-dist) by numpy's own float64 exp loop."""
    cdef Py_ssize_t n = dist.shape[0], i
    neg = np.empty(n, np.float64)
    out = np.empty(n, np.float64)
    cdef double[::1] m = neg
    cdef double[::1] o = out
    with nogil:
        for i in range(n):
            m[i] = -dist[i]
        if n:
            np_exp_n(&m[0], &o[0], n)
    return out
