# distutils: language = c++
"""BipedalWalker pool: gymnasium 1.4.0's BipedalWalker (BipedalWalker-v3,
BipedalWalkerHardcore-v3 via ``hardcore``) per env on Box2D's C++ core
(_bipedal_walker.hpp), on cypool's public env API.

Kernel contract: iteration i touches only env i's Box2D world (kept for the env's lifetime,
as gymnasium keeps its world across resets: its history changes the physics), its scratch
row, its rows of the outputs and its stream; no Python objects or GIL.

Draws from env i's stream, in gymnasium's order: reset: the terrain (``uniform(-1, 1)`` per
grass cell past the start pad; ``integers`` and ``random()`` for the obstacles and the
lengths of the stretches), the clouds (110 uniforms, drawn though never used here), one
``uniform(-5, 5)`` (the initial push); step: none.

Actions: float32 or float64, each env keeping its dtype: with float32 actions gymnasium's
reward is numpy float32 arithmetic (``reward -= 0.00035 * 80 * clip(|a|, 0, 1)``, NEP 50),
with float64 double arithmetic; the motors' settings are the same for both.
"""
from libc.stdint cimport int64_t, uint8_t
from libcpp cimport bool as cbool
cimport numpy as cnp

import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK, ST_ENGINE_ERROR, ERRMSG_LEN
from cypool.box2d._draws cimport Draws, numpy_draws

cnp.import_array()

cdef extern from "_bipedal_walker.hpp" namespace "cybw" nogil:
    cdef cppclass Env:
        double clouds[110]
        double scroll
        double lidar_p1[2]
        double lidar_p2[10][2]
        int64_t lidar_render
        int n_terrain
    int MAX_TERRAIN
    int drawlist_paths(Env* e, float* out, int cap, int* counts)
    int BW_OK
    int TERRAIN_LENGTH
    Env* alloc_envs(size_t n)
    void free_envs(Env* e)
    int reset(Env* e, cbool hardcore, const Draws& d, double* terrain_x, double* terrain_y,
              char* err, size_t errlen)
    int step(Env* e, const double* a, cbool f32, float* obs, double* reward,
             cbool* terminated, char* err, size_t errlen)


cdef class BipedalWalkerPool(Engine):
    """num_envs BipedalWalkers (cypool.api pool; described by cypool.box2d.registration)."""
    cdef Env* envs
    cdef double* act
    cdef uint8_t* f32
    cdef uint8_t* hc
    cdef double* scratch              # (num_envs, 2 * TERRAIN_LENGTH): terrain x, y
    cdef readonly object actions, act_f32, hardcore
    cdef object _scratch
    # gymnasium defines an infinite action (full torque, its sign's speed); NaN it does not
    # (NaN motor speeds): set_actions refuses NaN
    takes_nonfinite_actions = True

    def __cinit__(self):
        self.envs = NULL

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (24,), np.float32)], 0)
        self.actions = np.zeros((num_envs, 4), np.float64)
        self.act_f32 = np.ones(num_envs, np.uint8)
        self.hardcore = np.zeros(num_envs, np.uint8)
        self._scratch = np.zeros((num_envs, 2 * TERRAIN_LENGTH), np.float64)
        self.act = <double*> cnp.PyArray_DATA(self.actions)
        self.f32 = <uint8_t*> cnp.PyArray_DATA(self.act_f32)
        self.hc = <uint8_t*> cnp.PyArray_DATA(self.hardcore)
        self.scratch = <double*> cnp.PyArray_DATA(self._scratch)
        self.envs = alloc_envs(num_envs)
        if self.envs == NULL:
            raise MemoryError(f"cypool.box2d: cannot allocate {num_envs} BipedalWalker envs")
        self.configure(np.arange(num_envs, dtype=np.int64), kwargs)

    def __dealloc__(self):
        if self.envs != NULL:
            free_envs(self.envs)
            self.envs = NULL

    def configure(self, ids, kwargs):
        """Envs ids take the kwargs: hardcore (their terrain from their next reset)."""
        self.hardcore[ids] = bool(kwargs["hardcore"])

    def set_actions(self, rows, a):
        """A validated (len(rows), 4) float32/float64 batch: widened exactly to float64, each
        env remembering whether it was float32 (its reward's arithmetic). Infinite actions
        are gymnasium's full torque; NaN is refused (gymnasium would set NaN motor speeds,
        whose physics has no defined result)."""
        if np.isnan(a).any():
            raise ValueError("BipedalWalker: actions contain NaN (gymnasium would set NaN motor "
                             "speeds, with no defined result); infinite actions are taken as "
                             "full torque, as gymnasium clips them")
        self.actions[rows] = a
        self.act_f32[rows] = a.dtype == np.float32

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef double zeros[4]
        cdef double rew = 0.0
        cdef cbool term = False
        cdef double* tx = self.scratch + 2 * TERRAIN_LENGTH * i
        self.row_of(i, &r)
        if reset(self.envs + i, self.hc[i] != 0, numpy_draws(r.rng), tx, tx + TERRAIN_LENGTH, r.err,
                 ERRMSG_LEN) != BW_OK:
            return ST_ENGINE_ERROR
        zeros[0] = zeros[1] = zeros[2] = zeros[3] = 0.0
        # gymnasium's reset returns step(np.array([0, 0, 0, 0]))'s observation (int64 zeros)
        if step(self.envs + i, zeros, False, <float*> r.obs, &rew, &term, r.err,
                ERRMSG_LEN) != BW_OK:
            return ST_ENGINE_ERROR
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef cbool term = False
        self.row_of(i, &r)
        if step(self.envs + i, self.act + 4 * i, self.f32[i] != 0, <float*> r.obs, r.rew,
                &term, r.err, ERRMSG_LEN) != BW_OK:
            return ST_ENGINE_ERROR
        r.term[0] = term
        return ST_OK

    def render_data(self, Py_ssize_t i):
        """What gymnasium's render() reads of env i (cypool.box2d._render): the clouds'
        draws, scroll, the lidars' ends, lidar_render, the terrain's x and y, the number of
        obstacle bodies and the drawlist's vertices (float32, gymnasium's trans * v * SCALE)
        with each body's vertex count."""
        cdef Env* e = self.envs + i
        cdef int cap = (MAX_TERRAIN + 5) * 16
        cdef cnp.ndarray pts = np.zeros(cap, np.float32)
        cdef cnp.ndarray counts = np.zeros(MAX_TERRAIN + 5, np.int32)
        cdef int n = drawlist_paths(e, <float*> cnp.PyArray_DATA(pts), cap,
                                    <int*> cnp.PyArray_DATA(counts))
        if n < 0:
            raise RuntimeError("cypool.box2d: BipedalWalker drawlist too large")
        counts = counts[:n]
        return dict(
            clouds=np.array([e.clouds[k] for k in range(110)]), scroll=e.scroll,
            lidar_p1=(e.lidar_p1[0], e.lidar_p1[1]),
            lidar_p2=[(e.lidar_p2[k][0], e.lidar_p2[k][1]) for k in range(10)],
            lidar_render=int(e.lidar_render),
            terrain_x=self._scratch[i, :TERRAIN_LENGTH].copy(),
            terrain_y=self._scratch[i, TERRAIN_LENGTH:].copy(),
            n_obstacles=e.n_terrain - (TERRAIN_LENGTH - 1),
            points=pts[:2 * int(counts.sum())].reshape(-1, 2), counts=counts)

    def set_lidar_render(self, Py_ssize_t i, long long value):
        """gymnasium's render() advances env i's lidar_render (its reset zeroes it)."""
        self.envs[i].lidar_render = value

    def _env_state(self, Py_ssize_t i):
        raise TypeError(
            "cypool: a BipedalWalker env's state cannot be saved (get_state, pickle, "
            "deepcopy): its Box2D world (contacts, warm-start impulses, broad-phase tree, and "
            "the history of bodies it held, which gymnasium's world keeps across resets) has "
            "no exact serialisation. Keep the pool itself, or re-create it and reset with a "
            "seed.")

    # the three state hooks refuse alike (a pool defining only some is refused as incomplete)
    def _check_env_state(self, Py_ssize_t i, state):
        self._env_state(i)

    def _set_env_state(self, Py_ssize_t i, state):
        self._env_state(i)
