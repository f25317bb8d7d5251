# The observation Humanoid-v5 and HumanoidStandup-v5 share (both tasks build it the same way).
from cypool.mujoco._mj.mujoco cimport mjModel, mjData
from cypool.mujoco._task cimport MjEnv


cdef inline void humanoid_obs(MjEnv* e, bint exclude, bint cinert, bint cvel, bint qfrc,
                              bint cfrc) noexcept nogil:
    """qpos[2:] (or all of it), qvel, then cinert[1:], cvel[1:], qfrc_actuator[6:] and
    cfrc_ext[1:] behind their include_* flags, none of them clipped."""
    cdef const mjModel* m = e.m
    cdef mjData* d = e.d
    cdef Py_ssize_t k, j = 0, start = 2 if exclude else 0
    for k in range(start, m.nq):
        e.obs[j] = d.qpos[k]
        j += 1
    for k in range(m.nv):
        e.obs[j] = d.qvel[k]
        j += 1
    if cinert:
        for k in range(10, m.nbody * 10):
            e.obs[j] = d.cinert[k]
            j += 1
    if cvel:
        for k in range(6, m.nbody * 6):
            e.obs[j] = d.cvel[k]
            j += 1
    if qfrc:
        for k in range(6, m.nv):
            e.obs[j] = d.qfrc_actuator[k]
            j += 1
    if cfrc:
        for k in range(6, m.nbody * 6):
            e.obs[j] = d.cfrc_ext[k]
            j += 1
