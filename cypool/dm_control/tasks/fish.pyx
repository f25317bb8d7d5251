"""dm_control suite fish (dm_control/suite/fish.py): upright, swim.

swim draws its target's position into the model each episode, and the target geom collides
with the fish: each env has its own copy of the model (and of its actuation-disabled twin);
the target's position lives in the env's task state (snapshots carry it) and every reset and
step writes it into the env's models (the model's own position until the first draw since
seeding, as a fresh dm_control model has it)."""
from cypool.mujoco._mj.mujoco cimport mjModel
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (NpMath, init_math, vec3_dot_mat3, rs_uniform, rs_gauss,
                                     dmc_reset_begin, after_reset, dmc_step, tolerance,
                                     SIG_GAUSSIAN, P_NSUB, P_FIRST, T_TASK)

from cypool.dm_control._config import (sigmoid_scale, joint_qpos, body_id,
                                       env_models as _env_models, SIG_GAUSSIAN as _G)

cdef enum:
    P_ROOT = P_FIRST, P_TORSO, P_SCALE, P_JOINTS, P_SWIM = P_JOINTS + 7, P_TARGET, P_MOUTH, \
        P_RADII, P_MODEL, P_MODEL_NOACT, P_GEOM_POS, P_GEOM_POS_NOACT, P_TARGET0, \
        NPARAM = P_TARGET0 + 3

# task state after the Gaussian cache (swim): the target's position, drawn (0, 0, 0: not yet)
cdef enum:
    T_TARGET = T_TASK

cdef NpMath MM
init_math(&MM)

DOMAIN = "fish"
TASKS = ("upright", "swim")
ENV_MODEL_TASKS = ("swim",)     # a model per env (env_models)
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
    if task == "swim":
        p[P_SWIM] = 1
        target = model.geom("target").id
        mouth = model.geom("mouth").id
        p[P_TARGET] = target
        p[P_MOUTH] = mouth
        # geom_size[['mouth', 'target'], 0].sum(): two values, added in order from -0.0
        p[P_RADII] = float(model.geom_size[[mouth, target], 0].sum())
        for k in range(3):
            p[P_TARGET0 + k] = float(model.geom_pos[target, k])
        layout.insert(2, ("target", (3,)))
        return p, layout, []
    # upright hides the target each episode (geom_rgba alpha 0), before any frame
    return p, layout, [("geom_rgba", 4 * model.geom("target").id + 3, 0.0)]


def env_models(path, task, num_envs):
    """swim: each env's model and actuation-disabled twin, and their geom_pos arrays."""
    if task != "swim":
        return None, {}
    return _env_models(path, num_envs, (P_MODEL, P_MODEL_NOACT),
                       {"geom_pos": (P_GEOM_POS, P_GEOM_POS_NOACT)})


cdef void _use_env_model(MjEnv* e) noexcept nogil:
    """swim: point e at this env's models and write its target's position into both."""
    cdef const double* p = e.prm
    cdef Py_ssize_t t = 3 * <Py_ssize_t> p[P_TARGET], k
    cdef double* g = <double*> <size_t> p[P_GEOM_POS]
    cdef double* g2 = <double*> <size_t> p[P_GEOM_POS_NOACT]
    cdef const double* src = e.tstate + T_TARGET
    e.m = <const mjModel*> <size_t> p[P_MODEL]
    e.m_noact = <const mjModel*> <size_t> p[P_MODEL_NOACT]
    if src[2] == 0:     # z is drawn in [.1, .3)
        src = p + P_TARGET0
    for k in range(3):
        g[t + k] = src[k]
        g2[t + k] = src[k]


cdef void _mouth_to_target(MjEnv* e, double* out) noexcept nogil:
    """(geom_xpos target - geom_xpos mouth) . geom_xmat mouth."""
    cdef const double* p = e.prm
    cdef Py_ssize_t t = <Py_ssize_t> p[P_TARGET], m = <Py_ssize_t> p[P_MOUTH], k
    cdef double v[3]
    for k in range(3):
        v[k] = e.d.geom_xpos[3 * t + k] - e.d.geom_xpos[3 * m + k]
    vec3_dot_mat3(&MM, v, e.d.geom_xmat + 9 * m, out)


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, j = 0
    for k in range(7):
        e.obs[j] = e.d.qpos[<Py_ssize_t> p[P_JOINTS + k]]
        j += 1
    e.obs[j] = e.d.xmat[9 * <Py_ssize_t> p[P_TORSO] + 8]
    j += 1
    if p[P_SWIM] != 0:
        _mouth_to_target(e, e.obs + j)
        j += 3
    for k in range(e.m.nv):
        e.obs[j] = e.d.qvel[k]
        j += 1


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef Py_ssize_t k, root = <Py_ssize_t> p[P_ROOT]
    cdef double q[4]
    cdef double nrm
    if p[P_SWIM] != 0:
        _use_env_model(e)       # last episode's target, as dm_control's model keeps it
    if dmc_reset_begin(e):
        return 1
    for k in range(4):
        q[k] = rs_gauss(e)
    nrm = np_norm(e, q, 4)
    for k in range(4):
        e.d.qpos[root + 3 + k] = q[k] / nrm
    for k in range(7):
        e.d.qpos[<Py_ssize_t> p[P_JOINTS + k]] = rs_uniform(e, -.2, .2)
    if p[P_SWIM] != 0:
        e.tstate[T_TARGET] = rs_uniform(e, -.4, .4)
        e.tstate[T_TARGET + 1] = rs_uniform(e, -.4, .4)
        e.tstate[T_TARGET + 2] = rs_uniform(e, .1, .3)
        _use_env_model(e)
    if after_reset(e):
        return 1
    _obs(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef double v[3]
    cdef double in_target, radii = p[P_RADII]
    if p[P_SWIM] != 0:
        _use_env_model(e)
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    if p[P_SWIM] != 0:
        _mouth_to_target(e, v)
        in_target = tolerance(&MM, np_norm(e, v, 3), 0, radii, 2 * radii, SIG_GAUSSIAN,
                              p[P_SCALE], True)
        e.rew[0] = (7 * in_target + 0.5 * (e.d.xmat[9 * <Py_ssize_t> p[P_TORSO] + 8] + 1)) / 8
    else:
        e.rew[0] = tolerance(&MM, e.d.xmat[9 * <Py_ssize_t> p[P_TORSO] + 8], 1, 1, 1,
                             SIG_GAUSSIAN, p[P_SCALE], True)
    e.term[0] = 0
    _obs(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
