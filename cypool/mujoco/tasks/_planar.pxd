# Kernels Hopper-v5 and Walker2d-v5 share: the same observation, rewards, info and reset; the
# health check differs only in Hopper's extra state-range test. P_V4 (Hopper-v4, Walker2d-v4):
# the healthy reward is paid whenever terminate_when_unhealthy holds, as gymnasium's v4 does.
from cypool.mujoco._mj.mujoco cimport mjModel, mjData
from cypool.mujoco._task cimport MjEnv, sim_step, reset_noisy
from cypool.mujoco._numeric cimport ctrl_cost
from cypool.mujoco.tasks._common cimport obs_qpos_qvel

# Parameter layout (one row per env); Walker2d leaves P_STATE_LO/HI unused.
cdef enum:
    P_FRAME_SKIP, P_DT, P_FORWARD_W, P_CTRL_W, P_HEALTHY_REWARD, P_TERMINATE, P_STATE_LO,
    P_STATE_HI, P_Z_LO, P_Z_HI, P_ANGLE_LO, P_ANGLE_HI, P_NOISE, P_EXCLUDE, P_V4, NPARAM

# Info columns.
cdef enum:
    I_X, I_Z_DIST, I_VX, I_FWD, I_CTRL, I_SURVIVE


cdef inline void planar_obs(MjEnv* e) noexcept nogil:
    """qpos[1:] (or all of it), clip(qvel, -10, 10)."""
    obs_qpos_qvel(e, 1 if e.prm[P_EXCLUDE] != 0 else 0, 10.0)


cdef inline bint planar_healthy(MjEnv* e, bint state_range) noexcept nogil:
    """Strict z and angle ranges; with state_range (Hopper), first every element of
    state_vector()[2:] strictly inside the state range."""
    cdef const mjModel* m = e.m
    cdef mjData* d = e.d
    cdef const double* p = e.prm
    cdef double lo = p[P_STATE_LO], hi = p[P_STATE_HI], z = d.qpos[1], angle = d.qpos[2]
    cdef Py_ssize_t k
    if state_range:
        for k in range(2, m.nq):
            if not (lo < d.qpos[k] and d.qpos[k] < hi):
                return False
        for k in range(m.nv):
            if not (lo < d.qvel[k] and d.qvel[k] < hi):
                return False
    return (p[P_Z_LO] < z and z < p[P_Z_HI]) and (p[P_ANGLE_LO] < angle and angle < p[P_ANGLE_HI])


cdef inline void planar_position_info(MjEnv* e) noexcept nogil:
    e.info[I_X] = e.d.qpos[0]
    e.info[I_Z_DIST] = e.d.qpos[1] - e.m.qpos0[1]


cdef inline int planar_reset(MjEnv* e) noexcept nogil:
    if reset_noisy(e, e.prm[P_NOISE], False):
        return 1
    planar_obs(e)
    planar_position_info(e)
    return 0


cdef inline int planar_step(MjEnv* e, bint state_range) noexcept nogil:
    cdef const mjModel* m = e.m
    cdef mjData* d = e.d
    cdef const double* p = e.prm
    cdef double x0 = d.qpos[0]
    cdef double vx, fwd, healthy, ctrl
    cdef bint is_healthy
    if sim_step(e, <int> p[P_FRAME_SKIP]):
        return 1
    vx = (d.qpos[0] - x0) / p[P_DT]
    planar_obs(e)
    fwd = p[P_FORWARD_W] * vx
    is_healthy = planar_healthy(e, state_range)
    healthy = (1.0 if (is_healthy or (p[P_V4] != 0 and p[P_TERMINATE] != 0)) else 0.0) \
        * p[P_HEALTHY_REWARD]
    ctrl = ctrl_cost(p[P_CTRL_W], e.act, m.nu, e.act_f32)
    e.rew[0] = (fwd + healthy) - ctrl
    e.term[0] = (not is_healthy) and p[P_TERMINATE] != 0
    planar_position_info(e)
    e.info[I_VX] = vx
    e.info[I_FWD] = fwd
    e.info[I_CTRL] = -ctrl
    e.info[I_SURVIVE] = healthy
    return 0
