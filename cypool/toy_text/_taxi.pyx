"""Taxi pool: gymnasium 1.4.0's TaxiEnv (Taxi-v4) per env, on cypool's public env API.

Kernel contract: iteration i touches only env i's state row, its rows of the outputs
(Engine.row_of) and its stream; the tables are shared and read-only; no allocation, Python
objects or GIL.

State ((row*5+col)*5+pass)*4+dest, 500 states. Every kwarg is per env: ``is_rainy`` and
``rainy_probability`` select a transition table (cypool.toy_text._tables), ``fickle_passenger``
and ``fickle_probability`` are read by the kernels. Reset: one random() (categorical_sample
over the 300 start states, whose float64 cumsum ends at 0.9999999999999961 < 1: a draw above
it gives state 0, as gymnasium's argmax does), then, only for a fickle passenger, one random()
< fickle_probability sets fickle_step. Step: one random() (categorical_sample over P[s][a]);
then, if fickle_step and the passenger was aboard before the step and the taxi's row or
column changed, fickle_step clears and the destination is redrawn among the other three:
Generator.choice(list of 3) = integers(0, 3), which numpy computes with
random_bounded_uint64_fill (Lemire on 32-bit draws, the PCG64 stream's cached upper half
used first), called here. Outputs: obs int64, reward float64, terminated, info columns:
0 = the entry's probability (1.0 at reset, a float in gymnasium too), 1..6 = action_mask(s)
as 0.0/1.0 (gymnasium: int8).

Env state: (N, 4) int64: s, lastaction (-1 for None), fickle_step, taxi_orientation (the
last move action, 0 after reset; gymnasium updates it when rendering).
"""
from libc.stdio cimport snprintf
from libc.stdint cimport int64_t, uint8_t, uint64_t
cimport numpy as cnp
from numpy.random cimport bitgen_t

import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK, ST_ENGINE_ERROR, ERRMSG_LEN
from cypool.toy_text import _tables
from cypool.toy_text._states import check_taxi

cnp.import_array()

include "_tabular.pxi"

include "_draws.pxi"


def _variant_key(kwargs):
    rp = kwargs["rainy_probability"]
    if not isinstance(rp, (int, float, np.integer, np.floating)) or isinstance(rp, bool):
        raise TypeError(f"Taxi: rainy_probability must be a number, got {rp!r}")
    return (True, float(rp)) if kwargs["is_rainy"] else (False, 0.8)   # dry: rp unused


def _fickle(kwargs):
    fp = kwargs["fickle_probability"]
    if not isinstance(fp, (int, float, np.integer, np.floating)) or isinstance(fp, bool):
        raise TypeError(f"Taxi: fickle_probability must be a number, got {fp!r}")
    return bool(kwargs["fickle_passenger"]), float(fp)


cdef class TaxiPool(Engine):
    """num_envs Taxis (cypool.api pool; described by cypool.toy_text)."""
    cdef TabView tab
    cdef int64_t* st              # (num_envs, 4): s, lastaction, fickle_step, orientation
    cdef const int64_t* act
    cdef const uint8_t* fickle    # (num_envs,) fickle_passenger
    cdef const double* fickle_p   # (num_envs,) fickle_probability
    cdef const double* masks      # (500, 6) action_mask of every state
    cdef readonly object actions, states, variants, init_cdf, action_masks
    # the render hook's state (cypool.toy_text._render): None until the first render
    cdef public object renderer
    cdef readonly object fickle_passenger, fickle_probability
    cdef object _arrays

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (), np.int64)], 7)
        self.init_cdf = _tables.taxi_initial_cdf()
        self.action_masks = np.ascontiguousarray(_tables.taxi_action_masks())
        self.masks = <const double*> cnp.PyArray_DATA(self.action_masks)
        self.actions = np.zeros(num_envs, np.int64)
        self.states = np.zeros((num_envs, 4), np.int64)
        self.states[:, 1] = -1
        self.act = <const int64_t*> cnp.PyArray_DATA(self.actions)
        self.st = <int64_t*> cnp.PyArray_DATA(self.states)
        f, fp = _fickle(kwargs)
        self.fickle_passenger = np.full(num_envs, f, np.uint8)
        self.fickle_probability = np.full(num_envs, fp, np.float64)
        self.fickle = <const uint8_t*> cnp.PyArray_DATA(self.fickle_passenger)
        self.fickle_p = <const double*> cnp.PyArray_DATA(self.fickle_probability)
        self.variants = _tables.Variants(num_envs, lambda key: _tables.taxi_table(*key))
        self._install(np.arange(num_envs, dtype=np.int64), _variant_key(kwargs))

    def _install(self, ids, key):
        stacked = self.variants.assign(ids, key)
        self._arrays = _view_arrays(stacked, self.init_cdf, self.variants.index)
        fill_view(&self.tab, self._arrays, 500, 6)

    def configure(self, ids, kwargs):
        """Envs ids (int64) take the complete kwargs (every Taxi kwarg is per env)."""
        ids = np.asarray(ids, np.int64)
        key = _variant_key(kwargs)
        f, fp = _fickle(kwargs)
        self._install(ids, key)
        self.fickle_passenger[ids] = f
        self.fickle_probability[ids] = fp

    cdef inline void _out(self, EnvRow* r, int64_t s, double prob) noexcept nogil:
        cdef int k
        (<int64_t*> r.obs)[0] = s
        r.info[0] = prob
        for k in range(6):
            r.info[1 + k] = self.masks[6 * s + k]

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef int64_t* st = self.st + 4 * i
        self.row_of(i, &r)
        st[0] = tab_reset(&self.tab, r.rng)
        st[1] = -1
        st[2] = self.fickle[i] and random_standard_uniform(r.rng) < self.fickle_p[i]
        st[3] = 0
        self._out(&r, st[0], 1.0)
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef int64_t* st = self.st + 4 * i
        cdef int64_t a = self.act[i]
        cdef int64_t s0 = st[0], s, old_dest
        cdef uint64_t j = 0
        cdef Py_ssize_t e
        self.row_of(i, &r)
        if bad_action(&r, a, 6):
            return ST_ENGINE_ERROR
        e = tab_entry(&self.tab, i, s0, a, r.rng)
        s = self.tab.nxt[e]
        st[1] = a
        if a <= 3:
            st[3] = a
        # the passenger was aboard (s0's pass == 4) and the taxi moved (row or column)
        if (self.fickle[i] and st[2] and (s0 // 4) % 5 == 4
                and (s // 100 != s0 // 100 or (s // 20) % 5 != (s0 // 20) % 5)):
            st[2] = 0
            j = choice(r.rng, 3)
            old_dest = s0 % 4
            # [d for d in range(4) if d != old_dest][j]
            s = s - s % 4 + (<int64_t> j if <int64_t> j < old_dest else <int64_t> j + 1)
        st[0] = s
        r.rew[0] = self.tab.rew[e]
        r.term[0] = self.tab.term[e]
        self._out(&r, s, self.tab.prob[e])
        return ST_OK

    def _env_state(self, Py_ssize_t i):
        return [int(x) for x in self.states[i]]

    def _check_env_state(self, Py_ssize_t i, state):
        """A state of the 500, an action, a flag, a move (cypool.toy_text._states)."""
        check_taxi(state)

    def _set_env_state(self, Py_ssize_t i, state):
        self.states[i] = state
