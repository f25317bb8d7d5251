"""CartPole pool: gymnasium's CartPoleEnv (v0/v1) per env, in double precision as gymnasium
computes it (its state is a float64 array; the observation is that state as float32).

Kernel contract: iteration i touches only env i's state row, slots[i] and row i of each
output buffer (through Engine.row_of); no allocation, Python objects or GIL.

Step (gymnasium's euler integrator, right-hand sides from the old state):
  F = +10 if a == 1 else -10; c, s = cos(theta), sin(theta)   (libm: numpy's float64 cos/sin)
  temp = (F + (pml * (theta_dot * theta_dot)) * s) / M
  theta_acc = (g * s - c * temp) / (l * (4/3 - (m_pole * (c * c)) / M))
  x_acc = temp - ((pml * theta_acc) * c) / M
  x += tau * x_dot; x_dot += tau * x_acc; theta += tau * theta_dot; theta_dot += tau * theta_acc
Reset: four draws U(-0.05, 0.05) from the env's PCG64 stream (Generator.uniform's formula).
"""
from libc.math cimport cos, sin
from libc.stdint cimport int64_t, uint8_t
cimport numpy as cnp
from numpy.random.c_distributions cimport random_uniform

import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK
from cypool.api import state_float, state_seq

cnp.import_array()

# gymnasium's CartPoleEnv constants, in the order it computes them
cdef double GRAVITY = 9.8
cdef double MASSPOLE = 0.1
cdef double TOTAL_MASS = 0.1 + 1.0
cdef double LENGTH = 0.5
cdef double POLEMASS_LENGTH = 0.1 * 0.5
cdef double FORCE_MAG = 10.0
cdef double TAU = 0.02
cdef double THETA_THRESHOLD = 12 * 2 * 3.141592653589793 / 360
cdef double X_THRESHOLD = 2.4
THETA_THRESHOLD_RADIANS = THETA_THRESHOLD


cdef class CartPolePool(Engine):
    """num_envs CartPoles (cypool.api pool; registered by cypool.classic)."""
    cdef double* state            # (num_envs, 4): x, x_dot, theta, theta_dot
    cdef int64_t* act
    cdef uint8_t* sutton_barto    # env i's sutton_barto_reward
    cdef readonly object states, actions, sutton_barto_reward
    cdef public object renderer   # cypool.classic._render's, built at the first render

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (4,), np.float32)], 0)
        self.states = np.zeros((num_envs, 4), np.float64)
        self.actions = np.zeros(num_envs, np.int64)
        self.sutton_barto_reward = np.full(num_envs, bool(kwargs["sutton_barto_reward"]),
                                           np.uint8)
        self.state = <double*> cnp.PyArray_DATA(self.states)
        self.act = <int64_t*> cnp.PyArray_DATA(self.actions)
        self.sutton_barto = <uint8_t*> cnp.PyArray_DATA(self.sutton_barto_reward)

    def configure(self, ids, kwargs):
        """Envs ids (int64) take the complete kwargs: their own sutton_barto_reward."""
        self.sutton_barto_reward[ids] = bool(kwargs["sutton_barto_reward"])

    cdef inline void _obs(self, double* s, EnvRow* r) noexcept nogil:
        cdef float* obs = <float*> r.obs
        cdef int k
        for k in range(4):
            obs[k] = <float> s[k]

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef double* s = self.state + 4 * i
        cdef int k
        self.row_of(i, &r)
        for k in range(4):
            s[k] = random_uniform(r.rng, -0.05, 0.05 - (-0.05))
        self._obs(s, &r)
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef double* s = self.state + 4 * i
        cdef double x = s[0], x_dot = s[1], theta = s[2], theta_dot = s[3]
        cdef double force = FORCE_MAG if self.act[i] == 1 else -FORCE_MAG
        cdef double costheta = cos(theta), sintheta = sin(theta)
        cdef double temp, thetaacc, xacc
        cdef bint terminated
        self.row_of(i, &r)
        temp = (force + POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / TOTAL_MASS
        thetaacc = (GRAVITY * sintheta - costheta * temp) / (
            LENGTH * (4.0 / 3.0 - MASSPOLE * (costheta * costheta) / TOTAL_MASS))
        xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
        s[0] = x + TAU * x_dot
        s[1] = x_dot + TAU * xacc
        s[2] = theta + TAU * theta_dot
        s[3] = theta_dot + TAU * thetaacc
        terminated = (s[0] < -X_THRESHOLD or s[0] > X_THRESHOLD
                      or s[2] < -THETA_THRESHOLD or s[2] > THETA_THRESHOLD)
        r.term[0] = terminated
        if self.sutton_barto[i]:
            r.rew[0] = -1.0 if terminated else 0.0
        else:
            r.rew[0] = 1.0
        self._obs(s, &r)
        return ST_OK

    def _env_state(self, Py_ssize_t i):
        return [float(self.state[4 * i + k]) for k in range(4)]

    def _check_env_state(self, Py_ssize_t i, state):
        return [state_float(v, f"CartPole state[{k}]")
                for k, v in enumerate(state_seq(state, "CartPole state", 4))]

    def _set_env_state(self, Py_ssize_t i, state):
        cdef int k
        for k in range(4):
            self.state[4 * i + k] = state[k]
