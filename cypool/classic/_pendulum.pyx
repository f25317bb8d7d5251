"""Pendulum pool: gymnasium's PendulumEnv (v1) per env, rounding as numpy rounds gymnasium's
mixed float32/float64 arithmetic (its state is float64; the torque keeps the action's dtype).

Kernel contract: iteration i touches only env i's state row, slots[i] and row i of each
output buffer (through Engine.row_of); no allocation, Python objects or GIL.

Step, with u = clip(a, -2, 2) in the action's dtype (float32 by default; NaN passes):
  cost = (pow(an, 2) + 0.1 * pow(thdot, 2)) + 0.001 * u**2, an = ((th + pi) mod 2pi) - pi
         (numpy's floored remainder); for a float32 u the last term is float32:
         f32(f32(0.001) * powf(u, 2)) (NEP 50: the Python float takes u's dtype)
  thdot' = clip(thdot + (15 * sin(th) + 3 * u) * 0.05, -8, 8) (3 * u in u's dtype);
  th' = th + thdot' * 0.05
pow/powf are real libm calls (the module is built with -fno-builtin-pow: numpy's scalar
** calls them, and pow(x, 2) is not always x * x). Reset: th, thdot = U(-pi, pi), U(-1, 1).
"""
from libc.math cimport cos, sin, fmod, pow, powf, copysign
from libc.stdint cimport uint8_t
cimport numpy as cnp
from numpy.random.c_distributions cimport random_uniform

import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK
from cypool.api import state_float, state_int, state_seq

cnp.import_array()

cdef double PI = 3.141592653589793
cdef double MAX_SPEED = 8
cdef double MAX_TORQUE = 2.0
cdef double DT = 0.05


cdef inline double _remainder(double a, double b) noexcept nogil:
    """numpy's float64 a % b (floored; +0.0 for a zero remainder when b > 0)."""
    cdef double mod = fmod(a, b)
    if mod != 0:
        if (b < 0) != (mod < 0):
            mod += b
    else:
        mod = copysign(0.0, b)
    return mod


cdef class PendulumPool(Engine):
    """num_envs Pendulums (cypool.api pool; registered by cypool.classic)."""
    cdef double* state            # (num_envs, 2): th, thdot
    cdef double* act              # (num_envs, 1): the action, widened exactly to float64
    cdef uint8_t* f32             # the env's last action arrived as float32
    cdef double* gs               # env i's g
    cdef readonly object states, actions, act_f32, g
    cdef public object renderer   # cypool.classic._render's, built at the first render

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (3,), np.float32)], 0)
        self.states = np.zeros((num_envs, 2), np.float64)
        self.actions = np.zeros((num_envs, 1), np.float64)
        self.act_f32 = np.ones(num_envs, np.uint8)
        self.g = np.full(num_envs, float(kwargs["g"]), np.float64)
        self.state = <double*> cnp.PyArray_DATA(self.states)
        self.act = <double*> cnp.PyArray_DATA(self.actions)
        self.f32 = <uint8_t*> cnp.PyArray_DATA(self.act_f32)
        self.gs = <double*> cnp.PyArray_DATA(self.g)

    def configure(self, ids, kwargs):
        """Envs ids (int64) take the complete kwargs: their own g."""
        self.g[ids] = float(kwargs["g"])

    def set_actions(self, rows, a):
        """A validated (len(rows), 1) float32/float64 batch: each env keeps its action's dtype
        (widened exactly to float64; act_f32 says it was float32)."""
        self.actions[rows] = a
        self.act_f32[rows] = a.dtype == np.float32

    cdef inline void _obs(self, double* s, EnvRow* r) noexcept nogil:
        cdef float* obs = <float*> r.obs
        obs[0] = <float> cos(s[0])
        obs[1] = <float> sin(s[0])
        obs[2] = <float> s[1]

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef double* s = self.state + 2 * i
        self.row_of(i, &r)
        s[0] = random_uniform(r.rng, -PI, PI - (-PI))
        s[1] = random_uniform(r.rng, -1.0, 1.0 - (-1.0))
        self._obs(s, &r)
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef double* s = self.state + 2 * i
        cdef double th = s[0], thdot = s[1], an, costs, torque, newthdot
        cdef double k = 3 * self.gs[i] / (2 * 1.0)
        cdef double u = self.act[i]
        cdef float uf
        self.row_of(i, &r)
        if u < -MAX_TORQUE:
            u = -MAX_TORQUE
        elif u > MAX_TORQUE:
            u = MAX_TORQUE
        an = _remainder(th + PI, 2 * PI) - PI
        costs = pow(an, 2) + 0.1 * pow(thdot, 2)
        if self.f32[i]:
            uf = <float> u
            costs = costs + <double> (<float> 0.001 * powf(uf, 2))
            torque = <double> (<float> 3.0 * uf)
        else:
            costs = costs + 0.001 * pow(u, 2)
            torque = 3.0 * u
        newthdot = thdot + (k * sin(th) + torque) * DT
        if newthdot < -MAX_SPEED:
            newthdot = -MAX_SPEED
        elif newthdot > MAX_SPEED:
            newthdot = MAX_SPEED
        s[0] = th + newthdot * DT
        s[1] = newthdot
        r.rew[0] = -costs
        r.term[0] = 0
        self._obs(s, &r)
        return ST_OK

    def _env_state(self, Py_ssize_t i):
        return [float(self.state[2 * i]), float(self.state[2 * i + 1]), int(self.f32[i])]

    def _check_env_state(self, Py_ssize_t i, state):
        th, thdot, f32 = state_seq(state, "Pendulum state", 3)
        return [state_float(th, "Pendulum state[0]"), state_float(thdot, "Pendulum state[1]"),
                state_int(f32, "Pendulum state[2] (float32 action)", 0, 2)]

    def _set_env_state(self, Py_ssize_t i, state):
        self.state[2 * i], self.state[2 * i + 1], self.f32[i] = state
