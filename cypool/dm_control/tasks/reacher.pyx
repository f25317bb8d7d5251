"""dm_control suite reacher (dm_control/suite/reacher.py): easy, hard.

The target's position is drawn per episode into the model (geom_pos) by dm_control; here the
model is shared, so each env keeps its target in its task state, and the observation uses it
where dm_control reads the target's geom_xpos (a world-body geom: its position as given).
After each reset and step the kernel writes it into the env's geom_xpos too (which MuJoCo
recomputes from the shared model at the next step's kinematics, and nothing reads before),
so that frames draw the target where dm_control's model puts it."""
from libc.math cimport M_PI
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (NpMath, init_math, rs_uniform, randomize_joints,
                                     dmc_reset_begin, after_reset, dmc_step, tolerance,
                                     SIG_GAUSSIAN, P_NSUB, P_FIRST, T_TASK)
from cypool._core._numpy_loops cimport np_unary

import numpy as np

cdef enum:
    P_FINGER = P_FIRST, P_RADII, P_TARGET, NPARAM

cdef NpMath MM
init_math(&MM)

DOMAIN = "reacher"
TASKS = ("easy", "hard")
TIME_LIMIT = 20
CONTROL_TIMESTEP = None
_TARGET_SIZE = {"easy": .05, "hard": .015}


def configure(model, task):
    p = [0.0] * NPARAM
    target = model.geom("target").id
    finger = model.geom("finger").id
    p[P_FINGER] = finger
    if model.geom_bodyid[target] != 0:
        raise ValueError("reacher: the target geom must be on the world body")
    p[P_TARGET] = target
    sizes = model.geom_size[:, 0].copy()
    sizes[target] = _TARGET_SIZE[task]
    p[P_RADII] = float(sizes[[target, finger]].sum())
    layout = [("position", (model.nq,)), ("to_target", (2,)), ("velocity", (model.nv,))]
    return p, layout, [("geom_size", 3 * target, _TARGET_SIZE[task])]


cdef void _to_target(MjEnv* e, double* v) noexcept nogil:
    cdef Py_ssize_t f = 3 * <Py_ssize_t> e.prm[P_FINGER]
    v[0] = e.tstate[T_TASK] - e.d.geom_xpos[f]
    v[1] = e.tstate[T_TASK + 1] - e.d.geom_xpos[f + 1]


cdef void _draw_target(MjEnv* e) noexcept nogil:
    """The target's geom_xpos as dm_control's model gives it (for rendering)."""
    cdef Py_ssize_t t = 3 * <Py_ssize_t> e.prm[P_TARGET]
    e.d.geom_xpos[t] = e.tstate[T_TASK]
    e.d.geom_xpos[t + 1] = e.tstate[T_TASK + 1]


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef Py_ssize_t k, j = 0
    for k in range(e.m.nq):
        e.obs[j] = e.d.qpos[k]
        j += 1
    _to_target(e, e.obs + j)
    j += 2
    for k in range(e.m.nv):
        e.obs[j] = e.d.qvel[k]
        j += 1


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef double angle, radius
    if dmc_reset_begin(e):
        return 1
    randomize_joints(e)
    angle = rs_uniform(e, 0, 2 * M_PI)
    radius = rs_uniform(e, .05, .20)
    # geom_xpos of a world-body geom: 1 * pos + 0 * ... + world origin, pos itself
    e.tstate[T_TASK] = radius * np_unary(MM.sin, angle) + 0.0
    e.tstate[T_TASK + 1] = radius * np_unary(MM.cos, angle) + 0.0
    if after_reset(e):
        return 1
    _obs(e)
    _draw_target(e)
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef double v[2]
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    _to_target(e, v)
    e.rew[0] = tolerance(&MM, np_norm(e, v, 2), 0, p[P_RADII], 0, SIG_GAUSSIAN, 0, True)
    e.term[0] = 0
    _obs(e)
    _draw_target(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
