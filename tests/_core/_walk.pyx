"""Walk: the smallest env family, built by the test suite against cypool's installed engine
headers (cypool.get_include()), to test the engine without a simulator.

One env is a point on a line: reset puts it at U(-0.5, 0.5); a step moves it by the action
plus 0.1 * (U(0, 1) - 0.5), rewards -|x|, and terminates once |x| >= the env's bound. Outputs:
"obs" = [x, x * x] (float64) and "pix" = four uint8 "pixels" of |x|; info row = [x, action].
The per-thread hooks record which thread runs each slot, so tests can check the slots.
"""
from libc.math cimport fabs
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdio cimport snprintf
cimport numpy as cnp
from numpy.random.c_distributions cimport random_standard_uniform

import numpy as np

from cypool._core._engine cimport Engine, EnvRow, ST_OK, ST_ENGINE_ERROR, ERRMSG_LEN

cnp.import_array()

cdef extern from "<pthread.h>" nogil:
    ctypedef unsigned long pthread_t
    pthread_t pthread_self()

cdef enum:
    MAX_SLOTS = 64


cdef class WalkPool(Engine):
    cdef double* x
    cdef double* act
    cdef double* bound
    cdef int64_t* slot_steps_p
    cdef int64_t* slot_inits_p
    cdef int64_t* slot_finis_p
    cdef int64_t* slot_foreign_p
    cdef uint64_t* slot_owner_p
    cdef int fail_slot
    cdef readonly object pos, actions, bounds
    cdef readonly object slot_steps, slot_inits, slot_finis, slot_foreign, slot_owner

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 double bound, int fail_slot=-1):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (2,), np.float64), ("pix", (4,), np.uint8)], 2)
        self.pos = np.zeros(num_envs)
        self.actions = np.zeros(num_envs)
        self.bounds = np.full(num_envs, bound)
        self.x = <double*> cnp.PyArray_DATA(self.pos)
        self.act = <double*> cnp.PyArray_DATA(self.actions)
        self.bound = <double*> cnp.PyArray_DATA(self.bounds)
        self.slot_steps = np.zeros(MAX_SLOTS, np.int64)     # env steps and resets per slot
        self.slot_inits = np.zeros(MAX_SLOTS, np.int64)     # thread_init calls per slot
        self.slot_finis = np.zeros(MAX_SLOTS, np.int64)     # thread_fini calls per slot
        self.slot_foreign = np.zeros(MAX_SLOTS, np.int64)   # team slot ran on another thread
        self.slot_owner = np.zeros(MAX_SLOTS, np.uint64)    # the thread that ran thread_init
        self.slot_steps_p = <int64_t*> cnp.PyArray_DATA(self.slot_steps)
        self.slot_inits_p = <int64_t*> cnp.PyArray_DATA(self.slot_inits)
        self.slot_finis_p = <int64_t*> cnp.PyArray_DATA(self.slot_finis)
        self.slot_foreign_p = <int64_t*> cnp.PyArray_DATA(self.slot_foreign)
        self.slot_owner_p = <uint64_t*> cnp.PyArray_DATA(self.slot_owner)
        self.fail_slot = fail_slot

    cdef int thread_init(self, int slot) noexcept nogil:
        if slot >= MAX_SLOTS or slot == self.fail_slot:
            snprintf(self.slot_err + slot * ERRMSG_LEN, ERRMSG_LEN, "walk: slot %d refuses",
                     slot)
            return ST_ENGINE_ERROR
        self.slot_inits_p[slot] += 1
        self.slot_owner_p[slot] = <uint64_t> pthread_self()
        return ST_OK

    cdef void thread_fini(self, int slot) noexcept nogil:
        self.slot_finis_p[slot] += 1

    cdef inline void _note(self, int slot) noexcept nogil:
        self.slot_steps_p[slot] += 1
        if slot > 0 and self.slot_owner_p[slot] != <uint64_t> pthread_self():
            self.slot_foreign_p[slot] += 1

    cdef void _write(self, Py_ssize_t i, EnvRow* r, double a) noexcept nogil:
        cdef double* obs = <double*> r.obs
        cdef uint8_t* pix = <uint8_t*> self.output_row(1, i)
        cdef double v = self.x[i]
        cdef int k
        obs[0] = v
        obs[1] = v * v
        for k in range(4):
            pix[k] = <uint8_t> (<int64_t> (fabs(v) * 40.0 * (k + 1)) % 256)
        r.info[0] = v
        r.info[1] = a

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        self.row_of(i, &r)
        self._note(slot)
        self.x[i] = random_standard_uniform(r.rng) - 0.5
        self._write(i, &r, 0.0)
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef double a = self.act[i]
        self.row_of(i, &r)
        self._note(slot)
        if a != a:
            snprintf(r.err, ERRMSG_LEN, "walk: env %d got a NaN action", <int> i)
            return ST_ENGINE_ERROR
        self.x[i] = self.x[i] + a + 0.1 * (random_standard_uniform(r.rng) - 0.5)
        r.rew[0] = -fabs(self.x[i])
        r.term[0] = fabs(self.x[i]) >= self.bound[i]
        self._write(i, &r, a)
        return ST_OK

    # the family's part of an env's state: its position
    def _env_state(self, Py_ssize_t i):
        return float(self.x[i])

    def _check_env_state(self, Py_ssize_t i, state):
        if not isinstance(state, float):
            raise ValueError("walk: not a Walk env state")

    def _set_env_state(self, Py_ssize_t i, state):
        self.x[i] = state
