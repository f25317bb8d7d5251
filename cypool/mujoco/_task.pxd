# The interface between the MuJoCo pool and one task (tasks/*.pyx).
#
# A task module defines two `noexcept nogil` functions over an MjEnv and exports them as an
# MjTask through a capsule (`task_capsule()`); the pool calls them for one env at a time,
# from any OpenMP thread. They may only touch the MjEnv they are given.
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport uint8_t
from numpy.random cimport bitgen_t
from cypool.mujoco._mj.mujoco cimport mjModel, mjData, mjtNum
from libc.math cimport sqrt
from cypool.mujoco._numeric cimport uniform_fill, normal_fill

# Guarded MuJoCo calls (_mj_guard.c, linked into the pool module only, so that one
# thread-local jump buffer serves every task): reached through these pointers.
ctypedef struct MjGuard:
    int (*step)(const mjModel* m, mjData* d, const mjtNum* ctrl, int nframe, char* err) noexcept nogil
    int (*reset_data)(const mjModel* m, mjData* d, char* err) noexcept nogil
    int (*set_state)(const mjModel* m, mjData* d, const mjtNum* qpos, const mjtNum* qvel,
                     char* err) noexcept nogil
    # dm_control's physics calls (cypool.dm_control): mj_forward, and Physics.step(nstep)
    int (*forward)(const mjModel* m, mjData* d, char* err) noexcept nogil
    int (*dmc_step)(const mjModel* m, mjData* d, int nstep, char* err) noexcept nogil
    # mj_step1 alone (after a restore: the arena the legacy step's mj_step2 reads); appended,
    # so task modules built before it keep their layout
    int (*step1)(const mjModel* m, mjData* d, char* err) noexcept nogil

# numpy's float64 dot of two contiguous n-vectors, as v.dot(w) computes it: through the BLAS
# routine numpy itself calls (cypool._numpy_blas), so that the result is numpy's on every CPU.
ctypedef double (*np_dot_fn)(const double* x, const double* y, Py_ssize_t n) noexcept nogil

ctypedef struct MjEnv:
    const MjGuard* guard # guarded MuJoCo calls; use the sim_* helpers below
    np_dot_fn dot        # numpy's float64 dot; use np_norm below
    const mjModel* m     # shared by every env of the pool, read-only
    mjData* d            # this env's simulation state
    bitgen_t* rng        # this env's numpy PCG64 stream (reset noise)
    const double* prm    # this env's task parameters (layout: the task's P_* constants)
    const double* act    # this env's action, nu values (float32 inputs are widened exactly)
    int act_f32          # the action arrived as float32: numpy computes costs on it in float32
    double* obs          # this env's observation row
    double* info         # this env's info row (layout: the task's INFO list)
    double* rew          # this env's reward
    uint8_t* term        # this env's terminated flag
    char* err            # message buffer (CP_ERRMSG_LEN) for a failed status
    double* qpos_buf     # this env's scratch: nq values (a reset's new qpos)
    double* qvel_buf     # this env's scratch: nv values (a reset's new qvel)
    const mjModel* m_noact  # m with actuation disabled (dm_control's reset-time mj_forward)
    double* tstate       # this env's persistent task state (the pool's task_state width;
                         # kept in env snapshots), e.g. a legacy RandomState's cached Gaussian

ctypedef int (*mj_task_fn)(MjEnv* e) noexcept nogil

# Version of the MjEnv/MjTask layout: a task module built against another layout is refused
# when a pool reads its capsule (abi and size are checked), instead of being called wrongly.
cdef enum:
    MJ_TASK_ABI = 2

ctypedef struct MjTask:
    int abi              # MJ_TASK_ABI of the headers the task was built with (export_task)
    int size             # sizeof(MjTask) there
    mj_task_fn reset     # mj_resetData, draw noise, set_state; write obs and reset info
    mj_task_fn step      # do_simulation(act, frame_skip); write obs, reward, terminated, info


cdef inline object export_task(MjTask* task):
    """The capsule a task module's task_capsule() returns: stamps the layout version."""
    task.abi = MJ_TASK_ABI
    task.size = sizeof(MjTask)
    return PyCapsule_New(task, "cypool.MjTask", NULL)


cdef inline int sim_step(MjEnv* e, int nframe) noexcept nogil:
    """gymnasium's do_simulation(action, nframe): ctrl <- action, mj_step x nframe,
    mj_rnePostConstraint. Nonzero on a MuJoCo fatal error (message in e.err)."""
    return e.guard.step(e.m, e.d, e.act, nframe, e.err)


cdef inline int sim_reset_data(MjEnv* e) noexcept nogil:
    """mj_resetData."""
    return e.guard.reset_data(e.m, e.d, e.err)


cdef inline int sim_set_state(MjEnv* e, const double* qpos, const double* qvel) noexcept nogil:
    """gymnasium's set_state: qpos, qvel <- given, then mj_forward."""
    return e.guard.set_state(e.m, e.d, qpos, qvel, e.err)


cdef inline int sim_forward(MjEnv* e, bint noact) noexcept nogil:
    """mj_forward, on the model with actuation disabled when noact."""
    return e.guard.forward(e.m_noact if noact else e.m, e.d, e.err)


cdef inline int sim_dmc_step(MjEnv* e, int nstep) noexcept nogil:
    """dm_control's legacy Physics.step(nstep) (ctrl as it is)."""
    return e.guard.dmc_step(e.m, e.d, nstep, e.err)


cdef inline double np_norm(MjEnv* e, const double* v, Py_ssize_t n) noexcept nogil:
    """np.linalg.norm(v) of a contiguous float64 vector: sqrt(v.dot(v)), the dot by numpy's
    own routine."""
    return sqrt(e.dot(v, v, n))


cdef inline int reset_noisy(MjEnv* e, double s, bint normal_qvel) noexcept nogil:
    """The reset most gymnasium tasks share: mj_resetData; qpos = init_qpos + U(-s, s, nq);
    qvel = init_qvel + (s * N(0, 1, nv) if normal_qvel else U(-s, s, nv)), drawn in that
    order from the env's stream; set_state."""
    cdef const mjModel* m = e.m
    cdef double* qpos = e.qpos_buf
    cdef double* qvel = e.qvel_buf
    cdef Py_ssize_t k
    if sim_reset_data(e):
        return 1
    uniform_fill(e.rng, -s, s, qpos, m.nq)
    if normal_qvel:
        normal_fill(e.rng, qvel, m.nv)
        for k in range(m.nv):
            qvel[k] = s * qvel[k]
    else:
        uniform_fill(e.rng, -s, s, qvel, m.nv)
    for k in range(m.nq):
        qpos[k] = m.qpos0[k] + qpos[k]
    for k in range(m.nv):
        qvel[k] = 0.0 + qvel[k]
    return sim_set_state(e, qpos, qvel)


cdef extern from "_mj_guard.h" nogil:
    int CP_ERRMSG_LEN
    void cp_install_log_handler()
    void cp_set_timers(int on)
    int cp_step(const mjModel* m, mjData* d, const mjtNum* ctrl, int nframe, char* err)
    int cp_reset_data(const mjModel* m, mjData* d, char* err)
    int cp_set_state(const mjModel* m, mjData* d, const mjtNum* qpos, const mjtNum* qvel,
                     char* err)
    mjModel* cp_load_xml(const char* path, char* err, int errlen)
    mjData* cp_make_data(const mjModel* m, char* err)
    int cp_warning_count(const mjData* d)
    int cp_forward(const mjModel* m, mjData* d, char* err)
    int cp_dmc_step(const mjModel* m, mjData* d, int nstep, char* err)
    int cp_step1(const mjModel* m, mjData* d, char* err)
