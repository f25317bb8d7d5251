# distutils: language = c++
"""LunarLander pool: gymnasium 1.4.0's LunarLander (LunarLander-v3, LunarLanderContinuous-v3)
per env on Box2D's C++ core (_lunar_lander.hpp), on cypool's public env API.

Kernel contract: iteration i touches only env i's Box2D world (its own b2World, created at
each reset as gymnasium does), its parameters, its rows of the outputs and its stream; no
Python objects or GIL.

Draws from env i's stream (numpy's C distributions, as Generator's methods make them):
reset: 12 ``uniform(0, H/2)`` (terrain), 2 ``uniform(-1000, 1000)`` (initial force), with wind
2 ``integers(-9999, 9999)`` (wind and torque phases), then the reset's own step; step: 2
``uniform(-1, 1)`` (engine dispersion), drawn at every step whatever the action.

Particles (gymnasium creates them only when rendering) never touch the lander's island, so
they change no observation or reward; they are not simulated. Box2D's assertions (pybox2d's
AssertionError) and float32 overflows of forces (SWIG's OverflowError) are EngineErrors.
"""
from libc.stdint cimport int64_t, uint8_t
from libcpp cimport bool as cbool
cimport numpy as cnp

import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK, ST_ENGINE_ERROR, ERRMSG_LEN
from cypool.box2d._draws cimport integers, uniform

cnp.import_array()

cdef extern from "_lunar_lander.hpp" namespace "cyll" nogil:
    cdef cppclass Env:
        cbool particles_on
        double smooth_y[11]
    void render_tick(Env* e)
    size_t n_particles(Env* e)
    void render_points(Env* e, float* centres, double* ttl, float* out, int* counts)
    cdef struct Params:
        double gravity, wind_power, turbulence_power
        cbool enable_wind, continuous
    int LL_OK
    void debug_bodies(Env* e, float* out)
    Env* alloc_envs(size_t n)
    void free_envs(Env* e)
    int reset(Env* e, const Params& p, const double* heights, double fx, double fy,
              int64_t wind, int64_t torque, char* err, size_t errlen)
    int step(Env* e, const Params& p, int64_t action, double a0, double a1, double d0,
             double d1, float* obs, double* reward, cbool* terminated, char* err,
             size_t errlen)

cdef double H_HALF = 400.0 / 30.0 / 2     # uniform(0, H / 2)


cdef class LunarLanderPool(Engine):
    """num_envs LunarLanders (cypool.api pool; described by cypool.box2d.registration)."""
    cdef Env* envs
    cdef Params* params
    cdef bint continuous
    cdef const int64_t* act_d
    cdef const double* act_c
    cdef readonly object actions
    cdef object _params
    # gymnasium's np.clip(action, -1, 1) defines them: inf is clipped, NaN fires no engine
    takes_nonfinite_actions = True

    def __cinit__(self):
        self.envs = NULL

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (8,), np.float32)], 0)
        self.continuous = bool(kwargs["continuous"])
        if self.continuous:
            self.actions = np.zeros((num_envs, 2), np.float64)
            self.act_c = <const double*> cnp.PyArray_DATA(self.actions)
        else:
            self.actions = np.zeros(num_envs, np.int64)
            self.act_d = <const int64_t*> cnp.PyArray_DATA(self.actions)
        # one Params struct per env: gravity, wind_power, turbulence_power, enable_wind,
        # continuous (numpy's aligned struct matches the C++ layout: 3 doubles, 2 bools)
        self._params = np.zeros(num_envs, np.dtype([("gravity", "f8"), ("wind_power", "f8"),
                                                    ("turbulence_power", "f8"),
                                                    ("enable_wind", "u1"),
                                                    ("continuous", "u1")], align=True))
        if self._params.dtype.itemsize != sizeof(Params):
            raise RuntimeError("cypool.box2d: Params layout mismatch")
        self._params["continuous"] = self.continuous
        self.params = <Params*> cnp.PyArray_DATA(self._params)
        self.envs = alloc_envs(num_envs)
        if self.envs == NULL:
            raise MemoryError(f"cypool.box2d: cannot allocate {num_envs} LunarLander envs")
        self.configure(np.arange(num_envs, dtype=np.int64), kwargs)

    def set_actions(self, rows, a):
        """A (len(rows), 2) float32/float64 batch (NaN and inf included: the kernel clips as
        gymnasium does), widened exactly to float64 (called for the continuous id only)."""
        self.actions[rows] = a

    def __dealloc__(self):
        if self.envs != NULL:
            free_envs(self.envs)
            self.envs = NULL

    @property
    def gravity(self):
        return self._params["gravity"].copy()

    @property
    def wind_power(self):
        return self._params["wind_power"].copy()

    @property
    def turbulence_power(self):
        return self._params["turbulence_power"].copy()

    @property
    def enable_wind(self):
        return self._params["enable_wind"].astype(bool)

    def configure(self, ids, kwargs):
        """Envs ids take the (checked) kwargs: gravity and enable_wind at their next reset,
        wind_power and turbulence_power at their next step (as gymnasium reads them)."""
        self._params["gravity"][ids] = float(kwargs["gravity"])
        self._params["wind_power"][ids] = float(kwargs["wind_power"])
        self._params["turbulence_power"][ids] = float(kwargs["turbulence_power"])
        self._params["enable_wind"][ids] = bool(kwargs["enable_wind"])

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef double heights[12]
        cdef double fx, fy, d0, d1, rew = 0.0
        cdef int64_t wind = 0, torque = 0
        cdef int k
        cdef cbool term = False
        cdef const Params* p = self.params + i
        self.row_of(i, &r)
        for k in range(12):
            heights[k] = uniform(r.rng, 0.0, H_HALF)
        fx = uniform(r.rng, -1000.0, 1000.0)
        fy = uniform(r.rng, -1000.0, 1000.0)
        if p.enable_wind:
            wind = integers(r.rng, -9999, 9999)
            torque = integers(r.rng, -9999, 9999)
        if reset(self.envs + i, p[0], heights, fx, fy, wind, torque, r.err,
                 ERRMSG_LEN) != LL_OK:
            return ST_ENGINE_ERROR
        # gymnasium's reset returns step(noop)'s observation
        d0 = uniform(r.rng, -1.0, 1.0)
        d1 = uniform(r.rng, -1.0, 1.0)
        if step(self.envs + i, p[0], 0, 0.0, 0.0, d0, d1, <float*> r.obs, &rew, &term,
                r.err, ERRMSG_LEN) != LL_OK:
            return ST_ENGINE_ERROR
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef double d0, d1, a0 = 0.0, a1 = 0.0
        cdef int64_t a = 0
        cdef cbool term = False
        self.row_of(i, &r)
        if self.continuous:
            a0 = self.act_c[2 * i]
            a1 = self.act_c[2 * i + 1]
        else:
            a = self.act_d[i]
        d0 = uniform(r.rng, -1.0, 1.0)
        d1 = uniform(r.rng, -1.0, 1.0)
        if step(self.envs + i, self.params[i], a, a0, a1, d0, d1, <float*> r.obs, r.rew,
                &term, r.err, ERRMSG_LEN) != LL_OK:
            return ST_ENGINE_ERROR
        r.term[0] = term
        return ST_OK

    def bodies(self, Py_ssize_t i):
        """Env i's lander, left and right leg: x, y, angle, vx, vy, angular velocity (float32
        Box2D values; for tests and inspection)."""
        out = np.zeros(18, np.float32)
        debug_bodies(self.envs + i, <float*> cnp.PyArray_DATA(out))
        return out.reshape(3, 6)

    def set_render_mode(self, mode):
        """With a render mode gymnasium's envs make particles (bodies in their worlds, drawn
        by render()); they change nothing else, so without one none are made."""
        cdef Py_ssize_t i
        for i in range(self.num_envs):
            self.envs[i].particles_on = mode is not None

    def render_data(self, Py_ssize_t i):
        """What gymnasium's render() reads of env i: the terrain's smooth_y, the particles'
        centres (float32 trans * pos * SCALE) and ttl, and the lander's and legs' vertices
        (float32 trans * v * SCALE) with their counts."""
        cdef Env* e = self.envs + i
        cdef Py_ssize_t n = n_particles(e)
        centres = np.zeros((n, 2), np.float32)
        ttl = np.zeros(n, np.float64)
        pts = np.zeros((3 * 8, 2), np.float32)
        counts = np.zeros(3, np.int32)
        render_points(e, <float*> cnp.PyArray_DATA(centres), <double*> cnp.PyArray_DATA(ttl),
                      <float*> cnp.PyArray_DATA(pts), <int*> cnp.PyArray_DATA(counts))
        return dict(smooth_y=[e.smooth_y[k] for k in range(11)], centres=centres, ttl=ttl,
                    points=pts[:int(counts.sum())], counts=counts)

    def render_tick(self, Py_ssize_t i):
        """What render() does to env i's particles: ttl -= 0.15 each, then the ones in front
        with a negative ttl are destroyed."""
        render_tick(self.envs + i)

    def _env_state(self, Py_ssize_t i):
        raise TypeError(
            "cypool: a LunarLander env's state cannot be saved (get_state, pickle, deepcopy): "
            "its Box2D world (contacts, warm-start impulses, broad-phase tree) has no exact "
            "serialisation. Keep the pool itself, or re-create it and reset with a seed.")

    # the three state hooks refuse alike (a pool defining only some is refused as incomplete)
    def _check_env_state(self, Py_ssize_t i, state):
        self._env_state(i)

    def _set_env_state(self, Py_ssize_t i, state):
        self._env_state(i)
