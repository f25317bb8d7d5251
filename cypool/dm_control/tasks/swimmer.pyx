"""dm_control suite swimmer (dm_control/suite/swimmer.py): swimmer6, swimmer15.

The model is dm_control's own, generated for n links by dm_control's _make_model and written
to a temporary file (its includes made absolute). The target's position is drawn into the
model each episode by dm_control (contacts are disabled, so it changes no physics); here each
env keeps it in its task state, read where dm_control reads the target's geom_xpos. After
each reset and step the kernel writes it into the env's geom_xpos and the target light's
light_xpos too (which MuJoCo recomputes from the shared model at the next step's kinematics,
and nothing reads before), so that frames draw them where dm_control's model puts them."""
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (NpMath, init_math, vec3_dot_mat3, rs_rand, rs_uniform,
                                     randomize_joints, dmc_reset_begin, after_reset, dmc_step,
                                     tolerance, SIG_LONG_TAIL, P_NSUB, P_FIRST, T_TASK)

from cypool.dm_control._config import (sigmoid_scale, body_id, generated_model,
                                       SIG_LONG_TAIL as _LT)

cdef enum:
    P_NOSE = P_FIRST, P_HEAD, P_TARGET_Z, P_SIZE, P_SCALE, P_TARGET, P_LIGHT, NPARAM

cdef NpMath MM
init_math(&MM)

DOMAIN = "swimmer"
TASKS = ("swimmer6", "swimmer15")
TIME_LIMIT = 30
CONTROL_TIMESTEP = .03


def model_path(task, suite_dir):
    from dm_control.suite import swimmer
    return generated_model(task, swimmer._make_model(int(task[len("swimmer"):])), suite_dir)


def configure(model, task):
    p = [0.0] * NPARAM
    p[P_NOSE] = model.geom("nose").id
    p[P_HEAD] = body_id(model, "head")
    target = model.geom("target").id
    if model.geom_bodyid[target] != 0:
        raise ValueError("swimmer: the target geom must be on the world body")
    p[P_TARGET_Z] = float(model.geom_pos[target, 2])
    light = model.light("target_light").id
    if model.light_bodyid[light] != 0:
        raise ValueError("swimmer: the target light must be on the world body")
    p[P_TARGET], p[P_LIGHT] = target, light
    p[P_SIZE] = float(model.geom_size[target, 0])
    p[P_SCALE] = sigmoid_scale(_LT, 0.1)
    n_vel = (model.nsensordata - 12) // 6
    layout = [("joints", (model.nq - 3,)), ("to_target", (2,)),
              ("body_velocities", (3 * n_vel,))]
    return p, layout, []


cdef void _to_target(MjEnv* e, double* out) noexcept nogil:
    """(geom_xpos[target] - geom_xpos[nose]).dot(xmat[head]), all three values."""
    cdef Py_ssize_t n = 3 * <Py_ssize_t> e.prm[P_NOSE], k
    cdef double v[3]
    # geom_xpos of a world-body geom: its position as given (1 * x + 0 * y + 0 * z + 0)
    v[0] = (e.tstate[T_TASK] + 0.0) - e.d.geom_xpos[n]
    v[1] = (e.tstate[T_TASK + 1] + 0.0) - e.d.geom_xpos[n + 1]
    v[2] = e.prm[P_TARGET_Z] - e.d.geom_xpos[n + 2]
    vec3_dot_mat3(&MM, v, e.d.xmat + 9 * <Py_ssize_t> e.prm[P_HEAD], out)


cdef void _draw_target(MjEnv* e) noexcept nogil:
    """The target's geom_xpos and its light's light_xpos (x, y) as dm_control's model gives
    them (for rendering)."""
    cdef Py_ssize_t t = 3 * <Py_ssize_t> e.prm[P_TARGET], l = 3 * <Py_ssize_t> e.prm[P_LIGHT]
    e.d.geom_xpos[t] = e.tstate[T_TASK]
    e.d.geom_xpos[t + 1] = e.tstate[T_TASK + 1]
    e.d.light_xpos[l] = e.tstate[T_TASK]
    e.d.light_xpos[l + 1] = e.tstate[T_TASK + 1]


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef Py_ssize_t k, j = 0, n_vel = (e.m.nsensordata - 12) // 6
    cdef double t[3]
    for k in range(3, e.m.nq):
        e.obs[j] = e.d.qpos[k]
        j += 1
    _to_target(e, t)
    e.obs[j] = t[0]
    e.obs[j + 1] = t[1]
    j += 2
    for k in range(n_vel):
        e.obs[j] = e.d.sensordata[12 + 6 * k]
        e.obs[j + 1] = e.d.sensordata[12 + 6 * k + 1]
        e.obs[j + 2] = e.d.sensordata[12 + 6 * k + 5]
        j += 3


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef double box
    if dmc_reset_begin(e):
        return 1
    randomize_joints(e)
    box = .3 if rs_rand(e) < .2 else 2
    e.tstate[T_TASK] = rs_uniform(e, -box, box)
    e.tstate[T_TASK + 1] = rs_uniform(e, -box, box)
    if after_reset(e):
        return 1
    _obs(e)
    _draw_target(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef double t[3]
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    _to_target(e, t)
    e.rew[0] = tolerance(&MM, np_norm(e, t, 2), 0, p[P_SIZE], 5 * p[P_SIZE], SIG_LONG_TAIL,
                         p[P_SCALE], True)
    e.term[0] = 0
    _obs(e)
    _draw_target(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
