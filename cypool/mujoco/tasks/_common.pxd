# Kernel pieces several tasks share, written once so that their arithmetic cannot drift apart.
from cypool.mujoco._mj.mujoco cimport mjData
from cypool.mujoco._task cimport MjEnv, np_norm
from cypool.mujoco._numeric cimport sum_sq, clip


cdef inline Py_ssize_t obs_append(MjEnv* e, Py_ssize_t j, const double* src, Py_ssize_t lo,
                                  Py_ssize_t hi) noexcept nogil:
    """obs[j:] = src[lo:hi]; returns the index after the last value written."""
    cdef Py_ssize_t k
    for k in range(lo, hi):
        e.obs[j] = src[k]
        j += 1
    return j


cdef inline Py_ssize_t obs_qpos_qvel(MjEnv* e, Py_ssize_t start, double vmax) noexcept nogil:
    """obs[:j] = qpos[start:], clip(qvel, -vmax, vmax); returns j. vmax = INFINITY leaves qvel
    as it is (clip to +-inf returns every value, NaN and -0.0 included, unchanged)."""
    cdef Py_ssize_t k, j = obs_append(e, 0, e.d.qpos, start, e.m.nq)
    for k in range(e.m.nv):
        e.obs[j] = clip(e.d.qvel[k], -vmax, vmax)
        j += 1
    return j


cdef inline void xy_info(MjEnv* e, Py_ssize_t i_x, Py_ssize_t i_y,
                         Py_ssize_t i_dist) noexcept nogil:
    """x_position, y_position and distance_from_origin: qpos[0], qpos[1] and their norm."""
    e.info[i_x] = e.d.qpos[0]
    e.info[i_y] = e.d.qpos[1]
    e.info[i_dist] = np_norm(e, e.d.qpos, 2)


cdef inline double cfrc_sum_sq(MjEnv* e, double lo, double hi) noexcept nogil:
    """np.sum(np.square(np.clip(cfrc_ext, lo, hi))) over every body; lo, hi = -INFINITY,
    INFINITY for the unclipped forces."""
    return sum_sq(e.d.cfrc_ext, e.m.nbody * 6, lo, hi)


cdef inline double body_dist(MjEnv* e, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """np.linalg.norm(xpos[a] - xpos[b]) for bodies a and b."""
    cdef const double* xpos = e.d.xpos
    cdef double v[3]
    cdef Py_ssize_t k
    for k in range(3):
        v[k] = xpos[3 * a + k] - xpos[3 * b + k]
    return np_norm(e, v, 3)
