# Kernels Humanoid-v5 and HumanoidStandup-v5 share: the observation, the tendon info and the
# two costs, which both tasks compute the same way.
from libc.math cimport INFINITY
from cypool.mujoco._mj.mujoco cimport mjModel, mjData
from cypool.mujoco._task cimport MjEnv
from cypool.mujoco._numeric cimport sum_sq, clip
from cypool.mujoco.tasks._common cimport obs_append, obs_qpos_qvel, cfrc_sum_sq


cdef inline void humanoid_obs(MjEnv* e, bint exclude, bint cinert, bint cvel, bint qfrc,
                              bint cfrc, bint v4) noexcept nogil:
    """qpos[2:] (or all of it), qvel, then cinert[1:], cvel[1:], qfrc_actuator[6:] and
    cfrc_ext[1:] behind their include_* flags, none of them clipped; v4 (gymnasium's v4
    classes) keeps the world body and the root's actuator forces: cinert, cvel,
    qfrc_actuator and cfrc_ext whole."""
    cdef const mjModel* m = e.m
    cdef mjData* d = e.d
    cdef Py_ssize_t j = obs_qpos_qvel(e, 2 if exclude else 0, INFINITY)
    cdef Py_ssize_t b = 0 if v4 else 1
    if cinert:
        j = obs_append(e, j, d.cinert, 10 * b, m.nbody * 10)
    if cvel:
        j = obs_append(e, j, d.cvel, 6 * b, m.nbody * 6)
    if qfrc:
        j = obs_append(e, j, d.qfrc_actuator, 6 * b, m.nv)
    if cfrc:
        obs_append(e, j, d.cfrc_ext, 6 * b, m.nbody * 6)


cdef inline Py_ssize_t humanoid_obs_dim(Py_ssize_t nq, Py_ssize_t nv, Py_ssize_t nbody,
                                        bint exclude, bint cinert, bint cvel, bint qfrc,
                                        bint cfrc, bint v4) noexcept nogil:
    """The number of values humanoid_obs writes, for configure."""
    cdef Py_ssize_t nb = nbody if v4 else nbody - 1
    cdef Py_ssize_t nqfrc = nv if v4 else max(nv - 6, 0)
    return (nq + nv - 2 * exclude + nb * 10 * cinert + nb * 6 * cvel + nqfrc * qfrc
            + nb * 6 * cfrc)


cdef inline void tendon_info(MjEnv* e, Py_ssize_t i_len) noexcept nogil:
    """tendon_length, then tendon_velocity: ntendon columns each, from column i_len."""
    cdef Py_ssize_t k, n = e.m.ntendon
    for k in range(n):
        e.info[i_len + k] = e.d.ten_length[k]
        e.info[i_len + n + k] = e.d.ten_velocity[k]


cdef inline double humanoid_ctrl_cost(MjEnv* e, double weight) noexcept nogil:
    """weight * np.sum(np.square(data.ctrl)): data.ctrl is float64 whatever the action dtype."""
    return weight * sum_sq(e.d.ctrl, e.m.nu, -INFINITY, INFINITY)


cdef inline double humanoid_contact_cost(MjEnv* e, double weight, double lo,
                                         double hi) noexcept nogil:
    """np.clip(weight * np.sum(np.square(cfrc_ext)), lo, hi): the cost is clipped, not the
    forces (Ant clips the forces)."""
    return clip(weight * cfrc_sum_sq(e, -INFINITY, INFINITY), lo, hi)
