"""Pools that keep state of their own (each env's position, in an array the kernels write),
declared for snapshots in each of the ways cypool.api offers, or not at all; and one whose
whole state is the engine's (its obs row). Compiled as a user's package would be
(tests/spec/test_user_snapshots.py)."""
from libc.stdint cimport int64_t
from numpy.random.c_distributions cimport random_standard_uniform
import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK


cdef class _Walker(Engine):
    cdef readonly object actions, positions
    cdef int64_t[::1] act, pos

    def __init__(self, num_envs, num_threads, max_episode_steps, kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (1,), np.float64)], 0)
        self.actions = np.zeros(num_envs, np.int64)
        self.positions = np.zeros(num_envs, np.int64)
        self.act, self.pos = self.actions, self.positions

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        self.row_of(i, &r)
        self.pos[i] = <int64_t> (random_standard_uniform(r.rng) * 10.0)
        (<double*> r.obs)[0] = <double> self.pos[i]
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        self.row_of(i, &r)
        self.pos[i] += 1 if self.act[i] == 1 else -1
        if random_standard_uniform(r.rng) < 0.25:
            self.pos[i] += 3
        (<double*> r.obs)[0] = <double> self.pos[i]
        r.rew[0] = <double> self.pos[i]
        r.term[0] = self.pos[i] >= 40
        return ST_OK


cdef class HiddenPool(_Walker):
    """Keeps state, declares nothing: snapshots are refused."""


cdef class ArrayPool(_Walker):
    """Names the array that holds its state: cypool saves row i of it."""
    state_arrays = ("positions",)


cdef class HookPool(_Walker):
    """The state hooks of API version 1."""

    def _env_state(self, Py_ssize_t i):
        return int(self.pos[i])

    def _check_env_state(self, Py_ssize_t i, state):
        if type(state) is not int:
            raise ValueError("not a position")

    def _set_env_state(self, Py_ssize_t i, state):
        self.pos[i] = state


cdef class BothPool(HookPool):
    """Hooks and state arrays at once: ambiguous, refused at construction."""
    state_arrays = ("positions",)


cdef class HalfHookPool(_Walker):
    """Only one of the three hooks."""

    def _env_state(self, Py_ssize_t i):
        return int(self.pos[i])


cdef class BadArrayPool(_Walker):
    """Names something that is not a per-env array."""
    state_arrays = ("nowhere",)


cdef class RowPool(Engine):
    """Its whole state is its obs row (the engine saves it): declared stateless."""
    state_arrays = ()
    cdef readonly object actions
    cdef int64_t[::1] act

    def __init__(self, num_envs, num_threads, max_episode_steps, kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (1,), np.float64)], 0)
        self.actions = np.zeros(num_envs, np.int64)
        self.act = self.actions

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        self.row_of(i, &r)
        (<double*> r.obs)[0] = <double> <int64_t> (random_standard_uniform(r.rng) * 10.0)
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        self.row_of(i, &r)
        (<double*> r.obs)[0] += 1.0 if self.act[i] == 1 else -1.0
        r.rew[0] = (<double*> r.obs)[0]
        r.term[0] = (<double*> r.obs)[0] >= 40.0
        return ST_OK
