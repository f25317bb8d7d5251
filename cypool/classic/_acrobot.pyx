"""Acrobot pool: gymnasium's AcrobotEnv (v1) per env, book dynamics, one RK4 step of dt = 0.2
per action, in float64 as gymnasium computes it.

Kernel contract: iteration i touches only env i's state row, slots[i] and row i of each
output buffer (through Engine.row_of); no allocation, Python objects or GIL.

State [th1, th2, dth1, dth2]. Reset: four U(-0.1, 0.1) draws from the env's PCG64 stream,
rounded to float32 (gymnasium stores them as a float32 array); the reset observation is
numpy's float32 cos/sin of those float32 values, which is not libm's double result rounded:
numpy's float32 loop (SIMD on FMA3 CPUs, libm's cosf/sinf on others) is called through the
pointer in the np.cos/np.sin ufunc objects, one value at a time as gymnasium calls it on
numpy scalars. Step: torque = [-1, 0, 1][a]; y = [state, torque] widened to float64;
k1 = f(y), k2 = f(y + 0.1 k1), k3 = f(y + 0.1 k2), k4 = f(y + 0.2 k3);
y' = y + (0.2 / 6.0) * (((k1 + 2 k2) + 2 k3) + k4), elementwise, unfused (f: _dsdt below,
gymnasium's expression order, its constants folded exactly; x**2 of a numpy float64 is libm's
pow, a real call: the module is built with -fno-builtin-pow). Angles wrapped into [-pi, pi]
by repeated +-2pi (not fmod), velocities bounded to +-4pi, +-9pi (NaN passes). terminated =
-cos(th1) - cos(th2 + th1) > 1; reward 0 if terminated, else -1; the observation after a step
is libm's double cos/sin rounded to float32.
"""
from libc.math cimport cos, sin, pow, isfinite
from libc.stdint cimport int64_t
cimport numpy as cnp
from numpy.random.c_distributions cimport random_uniform

import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK, NpLoop, numpy_loop, np_unary_f
from cypool.api import state_float, state_seq

cnp.import_array()

cdef double PI = 3.141592653589793
cdef double HALF_PI = 3.141592653589793 / 2.0
cdef double TWO_PI = 3.141592653589793 - (-3.141592653589793)   # wrap's M - m
cdef double MAX_VEL_1 = 4 * 3.141592653589793
cdef double MAX_VEL_2 = 9 * 3.141592653589793
cdef double DT = 0.2
cdef double[3] TORQUE = [-1.0, 0.0, 1.0]


# numpy's float32 cos/sin loops (the ufuncs' 'f->f' entries: the dispatched SIMD kernel numpy
# chose for this CPU at import, or its libm fallback)
cdef NpLoop COSF = numpy_loop(np.cos, "f->f")
cdef NpLoop SINF = numpy_loop(np.sin, "f->f")


def _f32_cos_sin(x):
    """numpy's float32 cos and sin of a float32 array as the kernel computes them (testing)."""
    cdef float[::1] xs = np.ascontiguousarray(x, np.float32)
    c = np.empty(xs.shape[0], np.float32)
    s = np.empty(xs.shape[0], np.float32)
    cdef float[::1] cv = c, sv = s
    cdef Py_ssize_t i
    with nogil:
        for i in range(xs.shape[0]):
            cv[i] = np_unary_f(COSF, xs[i])
            sv[i] = np_unary_f(SINF, xs[i])
    return c, s


cdef inline void _dsdt(const double* y, double* dy) noexcept nogil:
    """gymnasium's _dsdt (book): m1 = m2 = l1 = I1 = I2 = 1, lc1 = lc2 = 0.5, g = 9.8, so
    m1*lc1**2 = 0.25, l1**2 + lc2**2 = 1.25, 2*l1*lc2 = 1, m2*lc2*g = 0.5 * 9.8,
    (m1*lc1 + m2*l1)*g = 1.5 * 9.8, m2*l1*lc2 = 0.5, m2*lc2**2 + I2 = 1.25 (all exact in
    their Python evaluation order; multiplications by 1.0 dropped, being exact)."""
    cdef double th1 = y[0], th2 = y[1], w1 = y[2], w2 = y[3], a = y[4]
    cdef double c2 = cos(th2), s2 = sin(th2)
    cdef double d1 = ((0.25 + (1.25 + c2)) + 1.0) + 1.0
    cdef double d2 = (0.25 + 0.5 * c2) + 1.0
    cdef double phi2 = (0.5 * 9.8) * cos((th1 + th2) - HALF_PI)
    cdef double phi1 = ((((-0.5) * pow(w2, 2)) * s2 - (w2 * w1) * s2)
                        + (1.5 * 9.8) * cos(th1 - HALF_PI)) + phi2
    cdef double dd2 = (((a + (d2 / d1) * phi1) - (0.5 * pow(w1, 2)) * s2) - phi2) / (
        1.25 - pow(d2, 2) / d1)
    cdef double dd1 = (-(d2 * dd2 + phi1)) / d1
    dy[0] = w1
    dy[1] = w2
    dy[2] = dd1
    dy[3] = dd2
    dy[4] = 0.0


cdef inline double _wrap(double x) noexcept nogil:
    """gymnasium's wrap(x, -pi, pi): repeated subtraction/addition of 2pi (an infinite x,
    which gymnasium would loop on forever, is left as it is)."""
    if not isfinite(x):
        return x
    while x > PI:
        x = x - TWO_PI
    while x < -PI:
        x = x + TWO_PI
    return x


cdef inline double _bound(double x, double hi) noexcept nogil:
    """gymnasium's bound(x, -hi, hi) = min(max(x, -hi), hi) (NaN passes through)."""
    if -hi > x:
        x = -hi
    if hi < x:
        x = hi
    return x


cdef class AcrobotPool(Engine):
    """num_envs Acrobots (cypool.api pool; registered by cypool.classic)."""
    cdef double* state            # (num_envs, 4): th1, th2, dth1, dth2
    cdef int64_t* act
    cdef readonly object states, actions
    cdef public object renderer   # cypool.classic._render's, built at the first render

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (6,), np.float32)], 0)
        self.states = np.zeros((num_envs, 4), np.float64)
        self.actions = np.zeros(num_envs, np.int64)
        self.state = <double*> cnp.PyArray_DATA(self.states)
        self.act = <int64_t*> cnp.PyArray_DATA(self.actions)

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef double* s = self.state + 4 * i
        cdef float* obs
        cdef float th1, th2
        cdef int k
        self.row_of(i, &r)
        for k in range(4):
            s[k] = <double> <float> random_uniform(r.rng, -0.1, 0.1 - (-0.1))
        obs = <float*> r.obs
        th1 = <float> s[0]
        th2 = <float> s[1]
        obs[0] = np_unary_f(COSF, th1)
        obs[1] = np_unary_f(SINF, th1)
        obs[2] = np_unary_f(COSF, th2)
        obs[3] = np_unary_f(SINF, th2)
        obs[4] = <float> s[2]
        obs[5] = <float> s[3]
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef double* s = self.state + 4 * i
        cdef double y[5]
        cdef double yt[5]
        cdef double k1[5]
        cdef double k2[5]
        cdef double k3[5]
        cdef double k4[5]
        cdef double dt2 = DT / 2.0
        cdef float* obs
        cdef int j
        self.row_of(i, &r)
        for j in range(4):
            y[j] = s[j]
        y[4] = TORQUE[self.act[i]]
        _dsdt(y, k1)
        for j in range(5):
            yt[j] = y[j] + dt2 * k1[j]
        _dsdt(yt, k2)
        for j in range(5):
            yt[j] = y[j] + dt2 * k2[j]
        _dsdt(yt, k3)
        for j in range(5):
            yt[j] = y[j] + DT * k3[j]
        _dsdt(yt, k4)
        for j in range(4):
            s[j] = y[j] + (DT / 6.0) * (((k1[j] + 2 * k2[j]) + 2 * k3[j]) + k4[j])
        s[0] = _wrap(s[0])
        s[1] = _wrap(s[1])
        s[2] = _bound(s[2], MAX_VEL_1)
        s[3] = _bound(s[3], MAX_VEL_2)
        r.term[0] = (-cos(s[0])) - cos(s[1] + s[0]) > 1.0
        r.rew[0] = 0.0 if r.term[0] else -1.0
        obs = <float*> r.obs
        obs[0] = <float> cos(s[0])
        obs[1] = <float> sin(s[0])
        obs[2] = <float> cos(s[1])
        obs[3] = <float> sin(s[1])
        obs[4] = <float> s[2]
        obs[5] = <float> s[3]
        return ST_OK

    def _env_state(self, Py_ssize_t i):
        return [float(self.state[4 * i + k]) for k in range(4)]

    def _check_env_state(self, Py_ssize_t i, state):
        return [state_float(v, f"Acrobot state[{k}]")
                for k, v in enumerate(state_seq(state, "Acrobot state", 4))]

    def _set_env_state(self, Py_ssize_t i, state):
        for k in range(4):
            self.state[4 * i + k] = state[k]
