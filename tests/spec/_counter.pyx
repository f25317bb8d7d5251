"""Counter: a tiny pool on the public env API with a Tuple observation, MultiDiscrete actions
and info keys whose dtype follows the first reporting env (tests/spec/test_spec.py).

Env i holds c in [0, n): reset draws c = floor(U * n) from its stream; a step with actions
(a0, a1) sets c = (c + a0 + a1) % n and terminates when c == 0. Observation: ("obs" = c as
int64, "obs.1" = [c, -c] as float32 after a reset, [a0, a1] after a step); reward c; info
columns: prob (1 at a reset, 0.25 * a0 after a step), mask (3 columns: reset [1, 0, 1], step
[a0, a1, c % 2]).
"""
from libc.stdint cimport int64_t
cimport numpy as cnp
from numpy.random.c_distributions cimport random_standard_uniform

import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK

cnp.import_array()


cdef class CounterPool(Engine):
    cdef int64_t* c
    cdef int64_t* act
    cdef int64_t n
    cdef readonly object counts, actions

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        self.n = kwargs["n"]
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (), np.int64), ("obs.1", (2,), np.float32)], 4)
        self.counts = np.zeros(num_envs, np.int64)
        self.actions = np.zeros((num_envs, 2), np.int64)
        self.c = <int64_t*> cnp.PyArray_DATA(self.counts)
        self.act = <int64_t*> cnp.PyArray_DATA(self.actions)

    cdef void _write(self, Py_ssize_t i, EnvRow* r, float x0, float x1) noexcept nogil:
        cdef float* second = <float*> self.output_row(1, i)
        (<int64_t*> r.obs)[0] = self.c[i]
        second[0] = x0
        second[1] = x1

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        self.row_of(i, &r)
        self.c[i] = <int64_t> (random_standard_uniform(r.rng) * self.n)
        self._write(i, &r, self.c[i], -self.c[i])
        r.info[0] = 1.0
        r.info[1] = 1.0
        r.info[2] = 0.0
        r.info[3] = 1.0
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef int64_t a0 = self.act[2 * i], a1 = self.act[2 * i + 1]
        self.row_of(i, &r)
        self.c[i] = (self.c[i] + a0 + a1) % self.n
        self._write(i, &r, a0, a1)
        r.rew[0] = self.c[i]
        r.term[0] = self.c[i] == 0
        r.info[0] = 0.25 * a0
        r.info[1] = a0
        r.info[2] = a1
        r.info[3] = self.c[i] % 2
        return ST_OK

    def _env_state(self, Py_ssize_t i):
        return int(self.c[i])

    def _check_env_state(self, Py_ssize_t i, state):
        if not isinstance(state, int):
            raise ValueError("counter: not a Counter env state")

    def _set_env_state(self, Py_ssize_t i, state):
        self.c[i] = state
