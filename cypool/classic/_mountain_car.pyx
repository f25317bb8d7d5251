"""MountainCar pool: gymnasium's MountainCarEnv (v0) per env, in double precision as gymnasium
computes it (its state is a pair of float64 values; the observation is that pair as float32).

Kernel contract: iteration i touches only env i's state row, slots[i] and row i of each
output buffer (through Engine.row_of); no allocation, Python objects or GIL.

Step: v += (a - 1) * force + cos(3 * p) * (-gravity) (the right-hand side summed first);
v = clip(v, -max_speed, max_speed); p += v; p = clip(p, min_position, max_position); a car
at the left wall moving left stops; terminated = p >= goal_position and v >= goal_velocity;
reward -1. Reset: p = U(-0.6, -0.4) from the env's PCG64 stream, v = 0.
"""
from libc.math cimport cos
from libc.stdint cimport int64_t
cimport numpy as cnp
from numpy.random.c_distributions cimport random_uniform

import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK
from cypool.api import state_float, state_seq

cnp.import_array()

cdef double MIN_POSITION = -1.2
cdef double MAX_POSITION = 0.6
cdef double MAX_SPEED = 0.07
cdef double GOAL_POSITION = 0.5
cdef double FORCE = 0.001
cdef double GRAVITY = 0.0025


cdef inline double _clip(double x, double lo, double hi) noexcept nogil:
    """np.clip of a float64 scalar (NaN passes through)."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


cdef class MountainCarPool(Engine):
    """num_envs MountainCars (cypool.api pool; registered by cypool.classic)."""
    cdef double* state            # (num_envs, 2): position, velocity
    cdef int64_t* act
    cdef double* goal             # env i's goal_velocity
    cdef readonly object states, actions, goal_velocity
    cdef public object renderer   # cypool.classic._render's, built at the first render

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (2,), np.float32)], 0)
        self.states = np.zeros((num_envs, 2), np.float64)
        self.actions = np.zeros(num_envs, np.int64)
        self.goal_velocity = np.full(num_envs, float(kwargs["goal_velocity"]), np.float64)
        self.state = <double*> cnp.PyArray_DATA(self.states)
        self.act = <int64_t*> cnp.PyArray_DATA(self.actions)
        self.goal = <double*> cnp.PyArray_DATA(self.goal_velocity)

    def configure(self, ids, kwargs):
        """Envs ids (int64) take the complete kwargs: their own goal_velocity."""
        self.goal_velocity[ids] = float(kwargs["goal_velocity"])

    cdef inline void _obs(self, double* s, EnvRow* r) noexcept nogil:
        cdef float* obs = <float*> r.obs
        obs[0] = <float> s[0]
        obs[1] = <float> s[1]

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef double* s = self.state + 2 * i
        self.row_of(i, &r)
        s[0] = random_uniform(r.rng, -0.6, -0.4 - (-0.6))
        s[1] = 0.0
        self._obs(s, &r)
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef double* s = self.state + 2 * i
        cdef double position = s[0], velocity = s[1]
        self.row_of(i, &r)
        velocity = velocity + ((self.act[i] - 1) * FORCE + cos(3 * position) * (-GRAVITY))
        velocity = _clip(velocity, -MAX_SPEED, MAX_SPEED)
        position = position + velocity
        position = _clip(position, MIN_POSITION, MAX_POSITION)
        if position == MIN_POSITION and velocity < 0:
            velocity = 0.0
        s[0] = position
        s[1] = velocity
        r.term[0] = position >= GOAL_POSITION and velocity >= self.goal[i]
        r.rew[0] = -1.0
        self._obs(s, &r)
        return ST_OK

    def _env_state(self, Py_ssize_t i):
        return [float(self.state[2 * i]), float(self.state[2 * i + 1])]

    def _check_env_state(self, Py_ssize_t i, state):
        return [state_float(v, f"MountainCar state[{k}]")
                for k, v in enumerate(state_seq(state, "MountainCar state", 2))]

    def _set_env_state(self, Py_ssize_t i, state):
        self.state[2 * i], self.state[2 * i + 1] = state
