"""Corridor-v0's pool: a walker on cells 0..size-1 who wants to reach the last cell.

Reset: the walker starts at floor(u * (size // 2)), u ~ U[0, 1) from the env's stream.
Step: action 0 moves left, 1 right; with probability `slip` (a second draw, u < slip) the
walker stays put instead. Reward 1 at the goal (which terminates), else -step_cost.
Observation: [position / (size - 1), slip] as float32; info "distance": cells left.
Kernel contract: iteration i touches only env i's rows (cypool's rule for every pool).
"""
from libc.stdint cimport int64_t
from numpy.random.c_distributions cimport random_standard_uniform
import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK


cdef class CorridorPool(Engine):
    cdef readonly object actions, positions
    cdef int64_t[::1] act, pos, size
    cdef double[::1] slip, step_cost
    cdef object _params

    def __init__(self, num_envs, num_threads, max_episode_steps, kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (2,), np.float32)], 1)
        self.actions = np.zeros(num_envs, np.int64)
        self.positions = np.zeros(num_envs, np.int64)
        self.act, self.pos = self.actions, self.positions
        self._params = (np.zeros(num_envs, np.int64), np.zeros(num_envs), np.zeros(num_envs))
        self.size, self.slip, self.step_cost = self._params

    def configure(self, ids, kwargs):           # per-env parameters (population members)
        self._params[0][ids] = kwargs["size"]
        self._params[1][ids] = kwargs["slip"]
        self._params[2][ids] = kwargs["step_cost"]

    cdef void _write(self, Py_ssize_t i, EnvRow* r) noexcept nogil:
        cdef float* obs = <float*> r.obs
        obs[0] = <float> (<double> self.pos[i] / <double> (self.size[i] - 1))
        obs[1] = <float> self.slip[i]
        r.info[0] = <double> (self.size[i] - 1 - self.pos[i])

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        self.row_of(i, &r)
        self.pos[i] = <int64_t> (random_standard_uniform(r.rng) * <double> (self.size[i] // 2))
        self._write(i, &r)
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef int64_t p = self.pos[i]
        self.row_of(i, &r)
        if not random_standard_uniform(r.rng) < self.slip[i]:
            p = p + 1 if self.act[i] == 1 else p - 1
        self.pos[i] = min(max(p, 0), self.size[i] - 1)
        r.term[0] = self.pos[i] == self.size[i] - 1
        r.rew[0] = 1.0 if r.term[0] else -self.step_cost[i]
        self._write(i, &r)
        return ST_OK

    def _env_state(self, Py_ssize_t i):         # for get_state/set_state and pickling
        return int(self.pos[i])

    def _check_env_state(self, Py_ssize_t i, state):
        if not isinstance(state, int):
            raise ValueError("not a Corridor env state")

    def _set_env_state(self, Py_ssize_t i, state):
        self.pos[i] = state
