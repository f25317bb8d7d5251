"""FrozenLake pool: gymnasium 1.4.0's FrozenLakeEnv (FrozenLake-v1, FrozenLake8x8-v1) per env,
on cypool's public env API.

Kernel contract: iteration i touches only env i's state row, its rows of the outputs
(Engine.row_of) and its stream; the tables are shared and read-only; no allocation, Python
objects or GIL.

The map (``desc`` or ``map_name``) is the pool's: every env has the same one (it sets the
observation space). ``is_slippery``, ``success_rate`` and ``reward_schedule`` are per env:
each distinct combination has its own transition table (cypool.toy_text._tables), env i
looks up variant[i]. Reset: one random() (categorical_sample over the S cells, uniform).
Step: one random() (categorical_sample over P[s][a], even for a single entry). Outputs: obs
int64 (the state), reward float64 (reward_schedule's value), terminated, info column 0 =
the entry's probability (1.0 at reset; gymnasium reports the int 1 there: see
cypool.toy_text's façade notes).

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


def _variant_key(kwargs):
    """The per-env kwargs that select a transition table, as the table builder uses them."""
    rs = kwargs["reward_schedule"]
    try:
        rs = tuple(rs)
    except TypeError:
        raise TypeError(f"FrozenLake: reward_schedule must be a sequence of 3 numbers, got "
                        f"{rs!r}") from None
    if len(rs) != 3 or not all(isinstance(x, (int, float, np.integer, np.floating))
                               for x in rs):
        raise ValueError(f"FrozenLake: reward_schedule must be 3 numbers (goal, hole, "
                         f"frozen), got {kwargs['reward_schedule']!r}")
    sr = kwargs["success_rate"]
    if not isinstance(sr, (int, float, np.integer, np.floating)) or isinstance(sr, bool):
        raise TypeError(f"FrozenLake: success_rate must be a number, got {sr!r}")
    return (bool(kwargs["is_slippery"]), float(sr), tuple(float(x) for x in rs))


cdef class FrozenLakePool(Engine):
    """num_envs FrozenLakes on one map (cypool.api pool; described by cypool.toy_text)."""
    cdef TabView tab
    cdef int64_t* st              # (num_envs, 2): s, lastaction
    cdef const int64_t* act
    cdef readonly object actions, states, desc, variants, init_cdf, map_kwargs
    # the render hook's state (cypool.toy_text._render): None until the first render
    cdef public object renderer
    cdef readonly Py_ssize_t nrow, ncol
    cdef object _arrays

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        self.desc = _tables.frozen_lake_desc(kwargs.get("desc"), kwargs.get("map_name"))
        self.nrow, self.ncol = self.desc.shape
        self.map_kwargs = (kwargs.get("desc"), kwargs.get("map_name"))
        self.init_cdf = _tables.frozen_lake_initial_cdf(self.desc)
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (), np.int64)], 1)
        self.actions = np.zeros(num_envs, np.int64)
        self.states = np.zeros((num_envs, 2), np.int64)
        self.states[:, 1] = -1
        self.act = <const int64_t*> cnp.PyArray_DATA(self.actions)
        self.st = <int64_t*> cnp.PyArray_DATA(self.states)
        desc = self.desc
        self.variants = _tables.Variants(
            num_envs, lambda key: _tables.frozen_lake_table(desc, *key))
        self._install(np.arange(num_envs, dtype=np.int64), _variant_key(kwargs))

    def _install(self, ids, key):
        stacked = self.variants.assign(ids, key)
        self._arrays = _view_arrays(stacked, self.init_cdf, self.variants.index)
        fill_view(&self.tab, self._arrays, self.nrow * self.ncol, 4)

    def configure(self, ids, kwargs):
        """Envs ids (int64) take the complete kwargs: their own is_slippery, success_rate
        and reward_schedule. The map is the pool's: a different desc or map_name is
        refused."""
        d, m = self.map_kwargs
        if not (_same_map(kwargs.get("desc"), d) and (d is not None
                                                      or kwargs.get("map_name") == m)):
            raise ValueError("FrozenLake: the map (desc, map_name) is the pool's: every env of "
                             "a pool has the same one")
        self._install(np.asarray(ids, np.int64), _variant_key(kwargs))

    def _family_signature(self):
        return (self.desc.shape, self.desc.tobytes())

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
        """A cell of this map and an action (cypool.toy_text._states)."""
        check_tabular("FrozenLake", state, self.nrow * self.ncol, 4)

    def _set_env_state(self, Py_ssize_t i, state):
        self.states[i] = state


def _same_map(a, b):
    if a is None or b is None:
        return a is None and b is None
    try:
        return np.array_equal(np.asarray(a, dtype="c"), np.asarray(b, dtype="c"))
    except (ValueError, TypeError, UnicodeEncodeError):
        return False
