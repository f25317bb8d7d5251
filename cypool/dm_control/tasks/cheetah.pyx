"""dm_control suite cheetah (dm_control/suite/cheetah.py): run."""
from libc.math cimport INFINITY as INF
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, sim_dmc_step
from cypool.dm_control._dmc cimport (NpMath, init_math, rs_uniform, dmc_reset_begin,
                                     after_reset, dmc_step, tolerance, SIG_LINEAR, P_NSUB,
                                     P_FIRST)

from cypool.dm_control._config import sigmoid_scale, sensor_adr, SIG_LINEAR as _LIN

cdef enum:
    P_SPEED = P_FIRST, P_SCALE, NPARAM

cdef NpMath MM
init_math(&MM)

DOMAIN = "cheetah"
TASKS = ("run",)
TIME_LIMIT = 10
CONTROL_TIMESTEP = None
cdef double _RUN_SPEED = 10


def configure(model, task):
    """(parameter row without n_sub_steps, observation layout, constant model edits)."""
    p = [0.0] * NPARAM
    p[P_SPEED] = sensor_adr(model, "torso_subtreelinvel")
    p[P_SCALE] = sigmoid_scale(_LIN, 0)
    return p, [("position", (model.nq - 1,)), ("velocity", (model.nv,))], []


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef Py_ssize_t k, j = 0
    for k in range(1, e.m.nq):
        e.obs[j] = e.d.qpos[k]
        j += 1
    for k in range(e.m.nv):
        e.obs[j] = e.d.qvel[k]
        j += 1


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef Py_ssize_t j
    if dmc_reset_begin(e):
        return 1
    # qpos[is_limited] = uniform(lower, upper): one array draw over the limited joints
    for j in range(e.m.njnt):
        if e.m.jnt_limited[j]:
            e.d.qpos[e.m.jnt_qposadr[j]] = rs_uniform(e, e.m.jnt_range[2 * j],
                                                      e.m.jnt_range[2 * j + 1])
    if sim_dmc_step(e, 200):        # settle (its first mj_step2 uses the stale forward)
        return 1
    e.d.time = 0
    if after_reset(e):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    e.rew[0] = tolerance(&MM, e.d.sensordata[<Py_ssize_t> p[P_SPEED]], _RUN_SPEED, INF,
                         _RUN_SPEED, SIG_LINEAR, p[P_SCALE], True)
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
