"""MountainCarContinuous pool: gymnasium's Continuous_MountainCarEnv (v0) per env, with the
mixed float32/float64 arithmetic numpy does in gymnasium's step.

Kernel contract: iteration i touches only env i's state row, slots[i] and row i of each
output buffer (through Engine.row_of); no allocation, Python objects or GIL.

Types. gymnasium's state is a float64 array after reset and a float32 one after every step;
its step mixes numpy float32 scalars (F32), numpy float64 scalars (F64) and Python floats
(PY, weak under NEP 50). Each value below carries its type, and every operation and
comparison runs in numpy's result type: F64 with anything is float64; F32 with F32 or PY is
float32 (the PY operand rounded to float32 first); PY with PY is double. So:
  force = a (the action's dtype), or the Python float -1.0 / 1.0 where a is outside [-1, 1]
  v += force * 0.0015 - 0.0025 * cos(3 * p)   (3 * p in p's type; cos of its double value)
  v = 0.07 / -0.07 (PY) where v > 0.07 / v < -0.07 (compared in v's type)
  p += v; p = 0.6 / -1.2 (PY) where p > 0.6 / p < -1.2; v = 0 where p == -1.2 and v < 0
  terminated = p >= 0.45 and v >= goal_velocity (the goal velocity's own type counts)
  reward = (100.0 if terminated else 0.0) - pow(a, 2) * 0.1 (a unclipped, as a double; libm's
  pow, a real call: the module is built with -fno-builtin-pow, as math.pow calls it)
The state and observation are then f32([p, v]). Reset: p = U(-0.6, -0.4) from the env's PCG64
stream, v = 0, stored as float64 (the first step runs on it).
"""
from libc.math cimport cos, pow
from libc.stdint cimport uint8_t
cimport numpy as cnp
from numpy.random.c_distributions cimport random_uniform

import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK
from cypool.api import state_float, state_int, state_seq

cnp.import_array()

# numpy types of the step's values (goal_velocity's type: see _goal_type)
cdef enum:
    T64 = 0        # numpy float64 scalar
    T32 = 1        # numpy float32 scalar
    TPY = 2        # Python float (or int): weak, takes a numpy operand's type


cdef inline int _join(int a, int b) noexcept nogil:
    """numpy's result type of an operation between values of types a and b."""
    if a == T64 or b == T64:
        return T64
    if a == T32 or b == T32:
        return T32
    return TPY


cdef inline double _add(double x, double y, int t) noexcept nogil:
    cdef float f
    if t == T32:
        f = <float> x + <float> y
        return f
    return x + y


cdef inline double _sub(double x, double y, int t) noexcept nogil:
    cdef float f
    if t == T32:
        f = <float> x - <float> y
        return f
    return x - y


cdef inline double _mul(double x, double y, int t) noexcept nogil:
    cdef float f
    if t == T32:
        f = <float> x * <float> y
        return f
    return x * y


cdef inline bint _gt(double x, double y, int t) noexcept nogil:
    if t == T32:
        return <float> x > <float> y
    return x > y


cdef inline bint _lt(double x, double y, int t) noexcept nogil:
    if t == T32:
        return <float> x < <float> y
    return x < y


cdef inline bint _ge(double x, double y, int t) noexcept nogil:
    if t == T32:
        return <float> x >= <float> y
    return x >= y


cdef inline bint _eq(double x, double y, int t) noexcept nogil:
    if t == T32:
        return <float> x == <float> y
    return x == y


def _goal_type(g):
    """The numpy type goal_velocity takes part in numpy's comparison with: T32 for a numpy
    float32, T64 for another numpy scalar (float64, integers), TPY for a Python number."""
    return (T32 if isinstance(g, np.float32) else T64) if isinstance(g, np.generic) else TPY


cdef inline void _bound(double* x, int* t, double low, double high) noexcept nogil:
    """gymnasium's `if x > high: x = high` then `if x < low: x = low`, with numpy's
    comparison in x's type; a bound taken is a Python float (TPY)."""
    if _gt(x[0], high, _join(t[0], TPY)):
        x[0] = high
        t[0] = TPY
    if _lt(x[0], low, _join(t[0], TPY)):
        x[0] = low
        t[0] = TPY


cdef class MountainCarContinuousPool(Engine):
    """num_envs MountainCarContinuous envs (cypool.api pool; registered by cypool.classic)."""
    cdef double* state            # (num_envs, 2): position, velocity
    cdef uint8_t* s32             # 1: the state is gymnasium's float32 array (after a step)
    cdef double* act              # (num_envs, 1): the force, widened exactly to float64
    cdef uint8_t* f32             # the env's last action arrived as float32
    cdef double* goal             # env i's goal_velocity, its value as a double
    cdef uint8_t* gtype           # env i's: T64 (numpy float64, integers), T32 (float32), TPY
    cdef readonly object states, state_f32, actions, act_f32, goal_velocity, goal_type
    cdef public object renderer   # cypool.classic._render's, built at the first render

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (2,), np.float32)], 0)
        self.states = np.zeros((num_envs, 2), np.float64)
        self.state_f32 = np.zeros(num_envs, np.uint8)
        self.actions = np.zeros((num_envs, 1), np.float64)
        self.act_f32 = np.ones(num_envs, np.uint8)
        self.goal_velocity = np.zeros(num_envs, np.float64)
        self.goal_type = np.zeros(num_envs, np.uint8)
        self.state = <double*> cnp.PyArray_DATA(self.states)
        self.s32 = <uint8_t*> cnp.PyArray_DATA(self.state_f32)
        self.act = <double*> cnp.PyArray_DATA(self.actions)
        self.f32 = <uint8_t*> cnp.PyArray_DATA(self.act_f32)
        self.goal = <double*> cnp.PyArray_DATA(self.goal_velocity)
        self.gtype = <uint8_t*> cnp.PyArray_DATA(self.goal_type)
        self.configure(np.arange(num_envs, dtype=np.int64), kwargs)

    def configure(self, ids, kwargs):
        """Envs ids (int64) take the complete kwargs: their own goal_velocity, its value and
        the type numpy compares it in."""
        g = kwargs["goal_velocity"]
        self.goal_velocity[ids] = float(g)
        self.goal_type[ids] = _goal_type(g)

    def set_actions(self, rows, a):
        """A validated (len(rows), 1) float32/float64 batch: each env keeps its force's dtype
        (widened exactly to float64; act_f32 says it was float32). Forces whose square
        overflows float64 are refused before anything is written (gymnasium's math.pow(a, 2)
        raises OverflowError)."""
        with np.errstate(over="ignore"):
            if not np.isfinite(np.square(a, dtype=np.float64)).all():
                raise ValueError("actions whose square overflows float64 (gymnasium's "
                                 "math.pow(a, 2) raises OverflowError)")
        self.actions[rows] = a
        self.act_f32[rows] = a.dtype == np.float32

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef double* s = self.state + 2 * i
        cdef float* obs
        self.row_of(i, &r)
        s[0] = random_uniform(r.rng, -0.6, -0.4 - (-0.6))
        s[1] = 0.0
        self.s32[i] = 0
        obs = <float*> r.obs
        obs[0] = <float> s[0]
        obs[1] = <float> s[1]
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef double* s = self.state + 2 * i
        cdef double p = s[0], v = s[1]
        cdef int tp = T32 if self.s32[i] else T64
        cdef int tv = tp
        cdef double a = self.act[i]
        cdef int ta = T32 if self.f32[i] else T64
        cdef double force = a, acc, dv, t3p
        cdef int tf = ta, t
        cdef bint term
        cdef float* obs
        self.row_of(i, &r)
        # force = min(max(a, -1.0), 1.0): Python's max/min return the bound object (exact
        # in float32, so the comparisons are the same in either type)
        if -1.0 > force:
            force = -1.0
            tf = TPY
        if 1.0 < force:
            force = 1.0
            tf = TPY
        # velocity += force * power - 0.0025 * math.cos(3 * position)
        acc = _mul(force, 0.0015, tf)
        t3p = _mul(3.0, p, tp)
        dv = _sub(acc, 0.0025 * cos(t3p), _join(tf, TPY))
        t = _join(tv, _join(tf, TPY))
        v = _add(v, dv, t)
        tv = t
        _bound(&v, &tv, -0.07, 0.07)
        t = _join(tp, tv)
        p = _add(p, v, t)
        tp = t
        _bound(&p, &tp, -1.2, 0.6)
        if _eq(p, -1.2, _join(tp, TPY)) and v < 0:
            v = 0.0
            tv = TPY
        term = _ge(p, 0.45, _join(tp, TPY)) and _ge(v, self.goal[i],
                                                     _join(tv, self.gtype[i]))
        r.term[0] = term
        r.rew[0] = (100.0 if term else 0.0) - pow(a, 2) * 0.1
        obs = <float*> r.obs
        obs[0] = <float> p
        obs[1] = <float> v
        s[0] = obs[0]
        s[1] = obs[1]
        self.s32[i] = 1
        return ST_OK

    def _env_state(self, Py_ssize_t i):
        return [float(self.state[2 * i]), float(self.state[2 * i + 1]), int(self.s32[i])]

    def _check_env_state(self, Py_ssize_t i, state):
        p, v, s32 = state_seq(state, "MountainCarContinuous state", 3)
        return [state_float(p, "MountainCarContinuous state[0]"),
                state_float(v, "MountainCarContinuous state[1]"),
                state_int(s32, "MountainCarContinuous state[2] (float32 state)", 0, 2)]

    def _set_env_state(self, Py_ssize_t i, state):
        self.state[2 * i], self.state[2 * i + 1], self.s32[i] = state
