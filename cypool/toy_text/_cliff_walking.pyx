"""CliffWalking pool: gymnasium 1.4.0's CliffWalkingEnv (CliffWalking-v1,
CliffWalkingSlippery-v1 via is_slippery) per env, on cypool's public env API.

Kernel contract: iteration i touches only env i's state row, its rows of the outputs
(Engine.row_of) and its stream; the tables are shared and read-only; no allocation, Python
objects or GIL.

4x12 grid, start 36, goal 47, cliff (3, 1..10): stepping on it gives -100 and teleports to
the start without terminating. ``is_slippery`` is per env (two tables at most). Reset: one
random() (categorical_sample over a one-hot distribution: always 36). Step: one random().
Outputs: obs int64, reward float64, terminated, info column 0 = the entry's probability
(1.0 at reset; gymnasium reports the int 1 there). No time limit of its own.

Env state: (N, 2) int64: the state s and lastaction (-1 for None; for rendering).
"""
from libc.stdio cimport snprintf
from libc.stdint cimport int64_t, uint8_t
cimport numpy as cnp
from numpy.random cimport bitgen_t

import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK, ST_ENGINE_ERROR, ERRMSG_LEN
from cypool.toy_text import _tables
from cypool.toy_text._states import check_tabular

cnp.import_array()

include "_tabular.pxi"

NS = 48


cdef class CliffWalkingPool(Engine):
    """num_envs CliffWalkings (cypool.api pool; described by cypool.toy_text)."""
    cdef TabView tab
    cdef int64_t* st              # (num_envs, 2): s, lastaction
    cdef const int64_t* act
    cdef readonly object actions, states, variants, init_cdf
    # the render hook's state (cypool.toy_text._render): None until the first render
    cdef public object renderer
    cdef object _arrays

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (), np.int64)], 1)
        self.init_cdf = _tables.cliff_initial_cdf()
        self.actions = np.zeros(num_envs, np.int64)
        self.states = np.zeros((num_envs, 2), np.int64)
        self.states[:, 1] = -1
        self.act = <const int64_t*> cnp.PyArray_DATA(self.actions)
        self.st = <int64_t*> cnp.PyArray_DATA(self.states)
        self.variants = _tables.Variants(num_envs, _tables.cliff_table)
        self._install(np.arange(num_envs, dtype=np.int64), bool(kwargs["is_slippery"]))

    def _install(self, ids, key):
        stacked = self.variants.assign(ids, key)
        self._arrays = _view_arrays(stacked, self.init_cdf, self.variants.index)
        fill_view(&self.tab, self._arrays, NS, 4)

    def configure(self, ids, kwargs):
        """Envs ids (int64) take the complete kwargs: their own is_slippery."""
        self._install(np.asarray(ids, np.int64), bool(kwargs["is_slippery"]))

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        self.row_of(i, &r)
        return tab_env_reset(&self.tab, self.st + 2 * i, &r)

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        self.row_of(i, &r)
        return tab_env_step(&self.tab, i, self.st + 2 * i, self.act[i], &r)

    def _env_state(self, Py_ssize_t i):
        return [int(self.states[i, 0]), int(self.states[i, 1])]

    def _check_env_state(self, Py_ssize_t i, state):
        """A cell of the grid and an action (cypool.toy_text._states)."""
        check_tabular("CliffWalking", state, NS, 4)

    def _set_env_state(self, Py_ssize_t i, state):
        self.states[i] = state
