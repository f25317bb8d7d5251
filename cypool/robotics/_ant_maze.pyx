"""AntMaze (gymnasium_robotics.envs.maze.ant_maze_v5 / ant_maze_v4.AntMazeEnv over
maze_v4.MazeEnv and gymnasium's Ant-v5 / Ant-v4, gymnasium-robotics 1.4.2; ant_maze_v3 over
maze.py's MazeEnv behind P_V3): task kernels on cypool's MuJoCo pool.

Reset (MazeEnv.reset, then the ant's reset): the goal and reset-cell draws of PointMaze (see
_point_maze.pyx) with maze_size_scaling 4; then mj_resetData and set_state(qpos0 with [:2] =
the reset position, 0). The ant's own reset noise is scaled by 0 (AntMazeEnv passes
reset_noise_scale=0.0), so its draws (from the ant env's own stream) add +0.0 and nothing
else: they are not made here.
Step: the Ant task's own step (cypool.mujoco.tasks.ant, called through its MjTask with its
parameter row, observation and info rows of this env), whose reward and termination AntMaze
discards; then the maze's: achieved goal = qpos[:2], reward from ||achieved - goal|| as
np.linalg.norm(axis=-1) computes it, success/termination from np.linalg.norm (numpy's BLAS
dot), then MazeEnv.update_goal.
"""
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.math cimport INFINITY, sqrt
from libc.stdint cimport uint64_t, uint8_t
from libc.string cimport strncpy

cimport numpy as cnp
from numpy.random cimport bitgen_t

from cypool.mujoco._task cimport (export_task, MjEnv, MjTask, MJ_TASK_ABI, sim_reset_data,
                                  sim_set_state, CP_ERRMSG_LEN)
from cypool.mujoco._numeric cimport clip, uniform_fill
from cypool.mujoco.tasks._common cimport obs_qpos_qvel, xy_info

import numpy as np

cnp.import_array()

# Parameter row: the maze's settings, the ant's own row (at P_ANT_AT, its layout), then the
# goal cells' (x, y) centres, then the reset cells' (at P_LOCS_AT).
cdef enum:
    P_DENSE, P_CONTINUING, P_RESET_TARGET, P_NOISE, P_SCALE, P_NGOAL, P_NRESET,
    P_ANT_AT,       # where the ant's parameter row starts
    P_LOCS_AT,      # where the cell centres start
    P_CFRC,         # the ant observes contact forces ...
    P_CFRC_FROM,    # ... from cfrc_ext[P_CFRC_FROM:] (v5: the world body's are left out)
    P_CF_LO, P_CF_HI,   # contact_force_range
    P_XY_INFO,      # the ant reports x_position, y_position, distance_from_origin at reset
    P_SUCCESS,      # the info column of "success" (after the ant's columns); -1: none (v3)
    P_RESET_LIM,    # reset cells must be farther than this from the goal
    P_V3,           # maze.py's step (gymnasium-robotics' v3 ids)
    P_OPT_GOAL, P_OPT_GX, P_OPT_GY,     # the next reset's given goal cell (flag, centre) ...
    P_OPT_RESET, P_OPT_RX, P_OPT_RY,    # ... and reset cell: reset(options=)
    NPARAM_FIXED

# task state: the current goal
cdef enum:
    T_GX, T_GY, NSTATE

# the Ant task's info columns x_position, y_position, distance_from_origin (ant.pyx's I_X..)
cdef enum:
    I_X, I_Y, I_DIST

include "_maze_draws.pxi"

TASK_STATE = NSTATE
NPARAM = NPARAM_FIXED
P_OPTIONS = P_OPT_GOAL   # the reset options' 6 columns start here

cdef const MjTask* ANT = NULL


def _load_ant():
    global ANT
    from cypool.mujoco.tasks import ant
    cap = ant.task_capsule()
    cdef const MjTask* t = <const MjTask*> PyCapsule_GetPointer(cap, "cypool.MjTask")
    if t.abi != MJ_TASK_ABI or t.size != sizeof(MjTask):
        raise RuntimeError("cypool.robotics: cypool.mujoco.tasks.ant was built against another "
                           "MjTask layout; rebuild cypool")
    ANT = t


_load_ant()


cdef inline double* _locs(MjEnv* e) noexcept nogil:
    return <double*> e.prm + <Py_ssize_t> e.prm[P_LOCS_AT]


cdef inline void _goal_obs(MjEnv* e) noexcept nogil:
    """achieved_goal (qpos[:2]) and desired_goal: the Dict's first two keys."""
    e.obs[0] = e.d.qpos[0]
    e.obs[1] = e.d.qpos[1]
    e.obs[2] = e.tstate[T_GX]
    e.obs[3] = e.tstate[T_GY]


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const double* prm = e.prm
    cdef MjEnv ant = e[0]
    cdef double pos[2]
    cdef Py_ssize_t k, j
    if maze_reset_draws(e, _locs(e), prm[P_RESET_LIM], pos):
        return 1
    if sim_reset_data(e):
        return 1
    # the ant's reset: init_qpos (qpos0, [:2] = reset position) + 0.0, init_qvel + 0.0
    for k in range(e.m.nq):
        e.qpos_buf[k] = e.m.qpos0[k]
    e.qpos_buf[0] = pos[0]
    e.qpos_buf[1] = pos[1]
    for k in range(e.m.nq):
        e.qpos_buf[k] = e.qpos_buf[k] + 0.0
    for k in range(e.m.nv):
        e.qvel_buf[k] = 0.0
    if sim_set_state(e, e.qpos_buf, e.qvel_buf):
        return 1
    _goal_obs(e)
    # observation: the Ant's (qpos[2:], qvel, clipped contact forces), after the goals
    ant.obs = e.obs + 4
    j = obs_qpos_qvel(&ant, 2, INFINITY)
    if prm[P_CFRC] != 0.0:
        for k in range(<Py_ssize_t> prm[P_CFRC_FROM], e.m.nbody * 6):
            ant.obs[j] = clip(e.d.cfrc_ext[k], prm[P_CF_LO], prm[P_CF_HI])
            j += 1
    if prm[P_XY_INFO] != 0.0:
        xy_info(e, I_X, I_Y, I_DIST)
    if prm[P_SUCCESS] >= 0.0:
        e.info[<Py_ssize_t> prm[P_SUCCESS]] = \
            dist_dot(e, e.obs[0] - e.tstate[T_GX], e.obs[1] - e.tstate[T_GY]) <= GOAL_RADIUS
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef MjEnv ant = e[0]
    cdef double ant_rew = 0.0
    cdef uint8_t ant_term = 0
    cdef int near
    ant.prm = e.prm + <Py_ssize_t> e.prm[P_ANT_AT]
    ant.obs = e.obs + 4          # the ant row excludes x, y: they are the achieved goal
    ant.rew = &ant_rew           # AntMaze discards the ant's reward and termination
    ant.term = &ant_term
    if ANT.step(&ant):
        return 1
    _goal_obs(e)
    if e.prm[P_V3] != 0.0:
        maze_step_v3(e, e.obs[0], e.obs[1], _locs(e))
        return 0
    near = maze_step(e, e.obs[0], e.obs[1], _locs(e))
    if near < 0:
        return 1
    e.info[<Py_ssize_t> e.prm[P_SUCCESS]] = near
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
