"""dm_control suite finger (dm_control/suite/finger.py): spin, turn_easy, turn_hard.

Turn draws the target's position into the model (site_pos) each episode; here the model is
shared, so each env keeps its target in its task state, and the observation uses it where
dm_control reads the target's framepos sensor (a world-body site: its position as given).
After each reset and step the kernel writes it into the env's site_xpos too (which MuJoCo
recomputes from the shared model at the next step's kinematics, before the sensors read it),
so that frames draw the target where dm_control's model puts it."""
from libc.math cimport M_PI
from cypool.mujoco._task cimport export_task, MjEnv, MjTask, np_norm
from cypool.dm_control._dmc cimport (NpMath, init_math, rs_uniform, randomize_joints,
                                     dmc_reset_begin, after_reset, dmc_step, P_NSUB, P_FIRST,
                                     T_TASK)
from cypool._core._numpy_loops cimport np_unary

import numpy as np

from cypool.dm_control._config import sensor_adr

cdef enum:
    P_PROX = P_FIRST, P_DIST, P_TIP, P_SPINNER, P_PROX_V, P_DIST_V, P_HINGE_V, P_TOUCH_TOP, \
        P_TOUCH_BOTTOM, P_TURN, P_HINGE_X, P_HINGE_Z, P_RADIUS, P_TARGET_SIZE, P_TARGET_SITE, NPARAM

cdef NpMath MM
init_math(&MM)

DOMAIN = "finger"
TASKS = ("spin", "turn_easy", "turn_hard")
TIME_LIMIT = 20
CONTROL_TIMESTEP = .02
cdef double _SPIN_VELOCITY = 15.0
_NAMES = {P_PROX: "proximal", P_DIST: "distal", P_TIP: "tip", P_SPINNER: "spinner",
          P_PROX_V: "proximal_velocity", P_DIST_V: "distal_velocity",
          P_HINGE_V: "hinge_velocity", P_TOUCH_TOP: "touchtop", P_TOUCH_BOTTOM: "touchbottom"}


_TARGET_SIZES = {"turn_easy": 0.07, "turn_hard": 0.03}


def configure(model, task):
    import mujoco
    p = [0.0] * NPARAM
    for col, name in _NAMES.items():
        p[col] = sensor_adr(model, name)
    layout = [("position", (4,)), ("velocity", (3,)), ("touch", (2,))]
    if task == "spin":
        # Spin.initialize_episode's model edits: the same every episode
        edits = [("site_rgba", 4 * model.site("target").id + 3, 0.0),
                 ("site_rgba", 4 * model.site("tip").id + 3, 0.0),
                 ("dof_damping", int(model.joint("hinge").dofadr[0]), .03)]
        return p, layout, edits
    if model.site_bodyid[model.site("target").id] != 0:
        raise ValueError("finger turn: the target site must be on the world body")
    # the hinge's anchor does not move (its body hangs from the world body)
    d = mujoco.MjData(model)
    mujoco.mj_forward(model, d)
    p[P_TURN] = 1
    p[P_HINGE_X], p[P_HINGE_Z] = (float(x) for x in d.joint("hinge").xanchor[[0, 2]])
    p[P_RADIUS] = float(model.geom_size[model.geom("cap1").id].sum())
    p[P_TARGET_SIZE] = _TARGET_SIZES[task]
    p[P_TARGET_SITE] = model.site("target").id
    layout += [("target_position", (2,)), ("dist_to_target", ())]
    return p, layout, [("site_size", 3 * model.site("target").id, _TARGET_SIZES[task])]


cdef void _obs(MjEnv* e) noexcept nogil:
    cdef const double* s = e.d.sensordata
    cdef const double* p = e.prm
    cdef Py_ssize_t tip = <Py_ssize_t> p[P_TIP], sp = <Py_ssize_t> p[P_SPINNER]
    e.obs[0] = s[<Py_ssize_t> p[P_PROX]]
    e.obs[1] = s[<Py_ssize_t> p[P_DIST]]
    e.obs[2] = s[tip] - s[sp]
    e.obs[3] = s[tip + 2] - s[sp + 2]
    e.obs[4] = s[<Py_ssize_t> p[P_PROX_V]]
    e.obs[5] = s[<Py_ssize_t> p[P_DIST_V]]
    e.obs[6] = s[<Py_ssize_t> p[P_HINGE_V]]
    e.obs[7] = np_unary(MM.log1p, s[<Py_ssize_t> p[P_TOUCH_TOP]])
    e.obs[8] = np_unary(MM.log1p, s[<Py_ssize_t> p[P_TOUCH_BOTTOM]])
    if p[P_TURN] != 0:
        e.obs[9] = e.tstate[T_TASK] - s[sp]
        e.obs[10] = e.tstate[T_TASK + 1] - s[sp + 2]
        e.obs[11] = _dist_to_target(e)


cdef void _draw_target(MjEnv* e) noexcept nogil:
    """Turn: the target's site_xpos (x, z) as dm_control's model gives it (for rendering)."""
    cdef Py_ssize_t t
    if e.prm[P_TURN] != 0:
        t = 3 * <Py_ssize_t> e.prm[P_TARGET_SITE]
        e.d.site_xpos[t] = e.tstate[T_TASK]
        e.d.site_xpos[t + 2] = e.tstate[T_TASK + 1]


cdef double _dist_to_target(MjEnv* e) noexcept nogil:
    """norm(target_position - tip_position) - target radius."""
    cdef const double* s = e.d.sensordata
    cdef const double* p = e.prm
    cdef Py_ssize_t tip = <Py_ssize_t> p[P_TIP], sp = <Py_ssize_t> p[P_SPINNER]
    cdef double v[2]
    v[0] = (e.tstate[T_TASK] - s[sp]) - (s[tip] - s[sp])
    v[1] = (e.tstate[T_TASK + 1] - s[sp + 2]) - (s[tip + 2] - s[sp + 2])
    return np_norm(e, v, 2) - p[P_TARGET_SIZE]


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef int attempt
    cdef bint found = False
    cdef const double* p = e.prm
    cdef double angle
    if dmc_reset_begin(e):
        return 1
    if p[P_TURN] != 0:
        angle = rs_uniform(e, -M_PI, M_PI)
        e.tstate[T_TASK] = p[P_HINGE_X] + p[P_RADIUS] * np_unary(MM.sin, angle)
        e.tstate[T_TASK + 1] = p[P_HINGE_Z] + p[P_RADIUS] * np_unary(MM.cos, angle)
    for attempt in range(1000):     # _set_random_joint_angles
        randomize_joints(e)
        if after_reset(e):
            return 1
        if e.d.ncon == 0:
            found = True
            break
    if not found:
        _fail(e.err)
        return 1
    if after_reset(e):
        return 1
    _obs(e)
    _draw_target(e)
    return 0


cdef void _fail(char* err) noexcept nogil:
    cdef const char* msg = b"Could not find a collision-free state after 1000 attempts"
    cdef Py_ssize_t k = 0
    while msg[k] != 0 and k < 200:
        err[k] = msg[k]
        k += 1
    err[k] = 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    if dmc_step(e, <int> p[P_NSUB]):
        return 1
    if p[P_TURN] != 0:
        e.rew[0] = 1.0 if _dist_to_target(e) <= 0 else 0.0
    else:
        e.rew[0] = 1.0 if e.d.sensordata[<Py_ssize_t> p[P_HINGE_V]] <= -_SPIN_VELOCITY else 0.0
    e.term[0] = 0
    _obs(e)
    _draw_target(e)
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule(task):
    return export_task(&TASK)
