"""PointMaze (gymnasium_robotics.envs.maze.point_maze.PointMazeEnv over maze_v4.MazeEnv and
point.PointEnv, gymnasium-robotics 1.4.2): the task kernels on cypool's MuJoCo pool, and the
batched goal functions (compute_reward / compute_terminated / compute_truncated).

Reset (MazeEnv.reset, then PointEnv.reset): goal cell = integers(0, n_goal); goal = its centre
+ (uniform(-r, r) * s, uniform(-r, r) * s), x drawn first; reset cell: integers(0, n_reset)
drawn until ||cell - goal|| > 0.5 s (the first draw always happens); reset position = cell +
the same noise; mj_resetData; set_state(qpos0 with [:2] = reset position, 0). A goal_cell /
reset_cell reset option replaces that cell's draw (not its noise; a given reset cell has no
distance check).
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

# Parameter row: flags; the next reset's given goal / reset cell (reset(options=): a flag,
# the cell centre's x, y); then the goal cells' (x, y) centres, then the reset cells'.
cdef enum:
    P_DENSE, P_CONTINUING, P_RESET_TARGET, P_NOISE, P_SCALE, P_NGOAL, P_NRESET,
    P_OPT_GOAL, P_OPT_GX, P_OPT_GY, P_OPT_RESET, P_OPT_RX, P_OPT_RY, P_LOCS

# task state: the current goal
cdef enum:
    T_GX, T_GY, NSTATE

TASK_STATE = NSTATE
NPARAM_FIXED = P_LOCS
P_OPTIONS = P_OPT_GOAL   # the reset options' 6 columns start here

include "_maze_draws.pxi"
include "_goal_batch.pxi"


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
    cdef double pos[2]
    cdef Py_ssize_t k
    if maze_reset_draws(e, e.prm + P_LOCS, 0.5 * e.prm[P_SCALE], pos):
        return 1
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
    e.info[0] = dist_dot(e, e.obs[0] - e.tstate[T_GX], e.obs[1] - e.tstate[T_GY]) \
        <= GOAL_RADIUS
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef double ctrl[2]
    cdef int near
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
    near = maze_step(e, e.obs[0], e.obs[1], e.prm + P_LOCS)   # reward, term, update_goal
    if near < 0:
        return 1
    e.info[0] = near
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


cdef int _rewards(const GoalRows* r, void* out, double* work,
                  const double* prm) noexcept nogil:
    """MazeEnv.compute_reward (prm: dense, sqrt_at_most(GOAL_RADIUS)): sparse
    float64(distance <= 0.45), dense np.exp(-distance) by numpy's own exp loop (work: the
    -distances). A NaN or infinite goal makes its row's squared distance NaN or infinite: the
    goals are checked only then."""
    cdef bint dense = prm[0] != 0.0
    cdef int hit = gl_rows2(r.a, r.d, work if dense else out, r.n,
                            GL_NEG_SQRT if dense else GL_WITHIN, prm[1])
    if hit:
        hit = first_nonfinite(r.a, r.d, 2 * r.n)
        if hit:
            return hit
    if dense and r.n:
        np_exp_n(work, <double*> out, r.n)
    return 0


def batch_rewards(object a, object d, bint dense):
    """MazeEnv.compute_reward of a HER batch (see _goal_batch.pxi), or None."""
    cdef double prm[2]
    prm[0], prm[1] = dense, sqrt_at_most(GOAL_RADIUS)
    return run_goal_batch(a, d, 2, cnp.NPY_DOUBLE, 1 if dense else 0, _rewards, prm)


def rewards_call(bint dense, Py_ssize_t n, general):
    """batch_rewards bound for a pool of n envs (a GoalCall; general: the other calls)."""
    return goal_call(_rewards, 2, cnp.NPY_DOUBLE, 1 if dense else 0,
                     (dense, sqrt_at_most(GOAL_RADIUS)), n, general)
