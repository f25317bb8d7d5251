"""dm_control suite fish (dm_control/suite/fish.py): upright. (swim draws its target into the
model each episode, and the target geom collides with the fish: a per-env model, not served
yet.)"""
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (NpMath, init_math, rs_uniform, rs_gauss, dmc_reset_begin,
                                     after_reset, dmc_step, tolerance, SIG_GAUSSIAN, P_NSUB,
                                     P_FIRST)

from cypool.dm_control._config import sigmoid_scale, joint_qpos, body_id, SIG_GAUSSIAN as _G

cdef enum:
    P_ROOT = P_FIRST, P_TORSO, P_SCALE, P_JOINTS, NPARAM = P_JOINTS + 7

cdef NpMath MM
init_math(&MM)

DOMAIN = "fish"
TASKS = ("upright",)
TIME_LIMIT = 40
CONTROL_TIMESTEP = .04
_JOINTS = ["tail1", "tail_twist", "tail2", "finright_roll", "finright_pitch", "finleft_roll",
           "finleft_pitch"]


def configure(model, task):
    p = [0.0] * NPARAM
    p[P_ROOT] = joint_qpos(model, "root")
    p[P_TORSO] = body_id(model, "torso")
    p[P_SCALE] = sigmoid_scale(_G, 0.1)
    for k, name in enumerate(_JOINTS):
        p[P_JOINTS + k] = joint_qpos(model, name)
    layout = [("joint_angles", (7,)), ("upright", ()), ("velocity", (model.nv,))]
    return p, layout, []


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, j = 0
    for k in range(7):
        e.obs[j] = e.d.qpos[<Py_ssize_t> p[P_JOINTS + k]]
        j += 1
    e.obs[j] = e.d.xmat[9 * <Py_ssize_t> p[P_TORSO] + 8]
    j += 1
    for k in range(e.m.nv):
        e.obs[j] = e.d.qvel[k]
        j += 1


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, root = <Py_ssize_t> p[P_ROOT]
    cdef double q[4]
    cdef double nrm
    if dmc_reset_begin(e):
        return 1
    for k in range(4):
        q[k] = rs_gauss(e)
    nrm = np_norm(e, q, 4)
    for k in range(4):
        e.d.qpos[root + 3 + k] = q[k] / nrm
    for k in range(7):
        e.d.qpos[<Py_ssize_t> p[P_JOINTS + k]] = rs_uniform(e, -.2, .2)
    if after_reset(e):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    e.rew[0] = tolerance(&MM, e.d.xmat[9 * <Py_ssize_t> p[P_TORSO] + 8], 1, 1, 1, SIG_GAUSSIAN,
                         p[P_SCALE], True)
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
