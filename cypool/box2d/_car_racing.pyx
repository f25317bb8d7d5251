# distutils: language = c++
"""CarRacing pool: gymnasium 1.4.0's CarRacing-v3 per env on Box2D's C++ core
(_car_racing.hpp), its 96 x 96 frames drawn by cypool's copies of pygame's rasterisers, on
cypool's public env API.

Kernel contract: iteration i touches only env i's Box2D world (one per env for its lifetime,
as gymnasium's), its parameters, its rows of the outputs and its stream, and the canvas of
the calling thread slot (made by thread_init on the slot's own thread); no Python objects or
GIL.

Draws from env i's stream, in gymnasium's order: reset: with domain_randomize 6
``uniform(0, 210)`` and ``integers(3)``, then per track try 12 x (``uniform(0, 2 pi / 12)``,
``uniform(50, 150)``); steps draw nothing.

Info: ``lap_finished`` on the steps that end an episode (gymnasium's dict has it only there):
the kernel writes 0 (absent), 1 (False: off the playfield) or 2 (True: lap done) and the
family's extra_info turns that into gymnasium's bool array and mask.
"""
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t
from libc.stdio cimport snprintf
from libc.stdlib cimport calloc, free
from libcpp cimport bool as cbool
cimport numpy as cnp

import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK, ST_ENGINE_ERROR, ERRMSG_LEN
from cypool.box2d._draws cimport Draws, numpy_draws
from cypool.box2d._cr_text import score_glyph_table

cnp.import_array()

cdef extern from "_car_racing.hpp" nogil:
    ctypedef struct cr_glyph_table:
        const uint8_t* cells
        const int32_t* pair_adv
        const int32_t* last_adv
        const int32_t* ink_right
        const uint32_t* palette
        int32_t height
        int32_t cell_w

cdef extern from "_car_racing.hpp" namespace "cycr" nogil:
    cdef struct Poly:
        double x[4]
        double y[4]
        int tile
        uint8_t rgb[3]
    cdef struct Particle:
        cbool grass
        int n
        float pts[30][2]
    cdef cppclass Env:
        double reward, t
        double road_color[3]
        double bg_color[3]
        double grass_color[3]
        double tile_color[2500][3]
        int n_poly
        Poly road_poly[5000]
        Particle particles[30]
        int64_t n_particles
    cbool car_state(Env* e, double* scal, float* xf, float* verts, int* counts)
    cdef struct Params:
        double lap_complete_percent
        cbool domain_randomize, continuous
    cdef cppclass Canvas:
        pass
    int CR_OK
    void set_draw_whole_road(cbool on)
    Env* alloc_envs(size_t n)
    void free_envs(Env* e)
    Canvas* canvas_new()
    void canvas_free(Canvas* c)
    int reset(Env* e, const Params& p, const Draws& d, Canvas* cv, const cr_glyph_table* g,
              uint8_t* obs, char* err, size_t errlen)
    int step(Env* e, const Params& p, int64_t action, const double* a, Canvas* cv,
             const cr_glyph_table* g, uint8_t* obs, double* reward, cbool* terminated,
             int8_t* lap_finished, char* err, size_t errlen)


_GLYPHS = None


def _draw_whole_road(cbool on):
    """Test switch: draw the road's rows under the panel too (the path taken when a bar rises
    above the panel). Process-wide; flip it only between steps."""
    set_draw_whole_road(on)


def _score_glyphs():
    """The score's glyph table (cypool.box2d._cr_text), built once per process from
    pygame's font (about 0.7 s) and checked there against font.render."""
    global _GLYPHS
    if _GLYPHS is None:
        _GLYPHS = score_glyph_table()
    return _GLYPHS


cdef size_t _data(object a, object dtype, int ndim) except 0:
    if not (isinstance(a, np.ndarray) and a.dtype == dtype and a.ndim == ndim
            and a.flags.c_contiguous):
        raise RuntimeError("cypool.box2d: CarRacing's score glyph table is malformed")
    return <size_t> cnp.PyArray_DATA(a)


cdef class CarRacingPool(Engine):
    """num_envs CarRacings (cypool.api pool; described by cypool.box2d.registration)."""
    cdef Env* envs
    cdef Params* params
    cdef Canvas** slot_cv
    cdef int n_slots
    cdef bint continuous
    cdef const int64_t* act_d
    cdef const double* act_c
    cdef cr_glyph_table glyph_struct
    cdef const cr_glyph_table* glyphs
    cdef object _glyphs             # owns the arrays glyph_struct points into
    cdef readonly object actions
    cdef object _params
    # inf is defined (gymnasium clips gas, and steer and brake saturate); NaN is refused
    takes_nonfinite_actions = True

    def __cinit__(self):
        self.envs = NULL
        self.slot_cv = NULL

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (96, 96, 3), np.uint8)], 1)
        self.continuous = bool(kwargs["continuous"])
        if self.continuous:
            self.actions = np.zeros((num_envs, 3), np.float64)
            self.act_c = <const double*> cnp.PyArray_DATA(self.actions)
        else:
            self.actions = np.zeros(num_envs, np.int64)
            self.act_d = <const int64_t*> cnp.PyArray_DATA(self.actions)
        self._params = np.zeros(num_envs, np.dtype([("lap_complete_percent", "f8"),
                                                    ("domain_randomize", "u1"),
                                                    ("continuous", "u1")], align=True))
        if self._params.dtype.itemsize != sizeof(Params):
            raise RuntimeError("cypool.box2d: CarRacing Params layout mismatch")
        self._params["continuous"] = self.continuous
        self.params = <Params*> cnp.PyArray_DATA(self._params)
        self._set_glyphs(_score_glyphs())
        # one canvas per thread slot, as MuJoCo's renderers (slots 0..num_threads + 1)
        self.n_slots = max(num_threads, 1) + 2
        self.slot_cv = <Canvas**> calloc(self.n_slots, sizeof(Canvas*))
        if self.slot_cv == NULL:
            raise MemoryError("cypool.box2d: cannot allocate CarRacing's canvases")
        self.envs = alloc_envs(num_envs)
        if self.envs == NULL:
            raise MemoryError(f"cypool.box2d: cannot allocate {num_envs} CarRacing envs")
        self.configure(np.arange(num_envs, dtype=np.int64), kwargs)

    def __dealloc__(self):
        cdef int k
        if self.envs != NULL:
            free_envs(self.envs)
            self.envs = NULL
        if self.slot_cv != NULL:
            for k in range(self.n_slots):   # freed by thread_fini unless the team never ran
                canvas_free(self.slot_cv[k])
            free(self.slot_cv)
            self.slot_cv = NULL

    cdef _set_glyphs(self, dict t):
        self._glyphs = t
        self.glyph_struct.cells = <const uint8_t*> _data(t["cells"], np.uint8, 3)
        self.glyph_struct.pair_adv = <const int32_t*> _data(t["pair_adv"], np.int32, 2)
        self.glyph_struct.last_adv = <const int32_t*> _data(t["last_adv"], np.int32, 1)
        self.glyph_struct.ink_right = <const int32_t*> _data(t["ink_right"], np.int32, 1)
        self.glyph_struct.palette = <const uint32_t*> _data(t["palette"], np.uint32, 1)
        self.glyph_struct.height = int(t["height"])
        self.glyph_struct.cell_w = int(t["cell_w"])
        if (t["cells"].shape != (11, self.glyph_struct.height, self.glyph_struct.cell_w)
                or t["pair_adv"].shape != (11, 11) or t["palette"].shape != (256,)):
            raise RuntimeError("cypool.box2d: CarRacing's score glyph table has unexpected "
                               "shapes")
        self.glyphs = &self.glyph_struct

    cdef int thread_init(self, int slot) noexcept nogil:
        if slot >= self.n_slots:
            return ST_ENGINE_ERROR
        if self.slot_cv[slot] == NULL:
            self.slot_cv[slot] = canvas_new()
        return ST_OK if self.slot_cv[slot] != NULL else ST_ENGINE_ERROR

    cdef void thread_fini(self, int slot) noexcept nogil:
        if slot < self.n_slots:
            canvas_free(self.slot_cv[slot])
            self.slot_cv[slot] = NULL

    @property
    def lap_complete_percent(self):
        return self._params["lap_complete_percent"].copy()

    @property
    def domain_randomize(self):
        return self._params["domain_randomize"].astype(bool)

    def configure(self, ids, kwargs):
        """Envs ids take the (checked) kwargs, from their next reset."""
        self._params["lap_complete_percent"][ids] = float(kwargs["lap_complete_percent"])
        self._params["domain_randomize"][ids] = bool(kwargs["domain_randomize"])

    def set_actions(self, rows, a):
        """A validated (len(rows), 3) float32/float64 batch, widened exactly to float64 (as
        gymnasium's action.astype(np.float64)). Infinite values are defined (gas is clipped,
        steering and braking saturate); NaN is refused (gymnasium would give Box2D NaN motor
        speeds and forces, with no defined result)."""
        if np.isnan(a).any():
            raise ValueError("CarRacing: actions contain NaN (gymnasium would give Box2D NaN "
                             "motor speeds and forces, with no defined result); infinite "
                             "actions are defined and taken")
        self.actions[rows] = a

    cdef inline Canvas* _canvas(self, int slot, char* err) noexcept nogil:
        """The slot's canvas, made by thread_init before the slot steps any env."""
        cdef Canvas* cv = self.slot_cv[slot] if slot < self.n_slots else NULL
        if cv == NULL:
            snprintf(err, ERRMSG_LEN, "CarRacing: thread slot %d has no canvas", slot)
        return cv

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        self.row_of(i, &r)
        cdef Canvas* cv = self._canvas(slot, r.err)
        if cv == NULL:
            return ST_ENGINE_ERROR
        if reset(self.envs + i, self.params[i], numpy_draws(r.rng), cv, self.glyphs, <uint8_t*> r.obs, r.err,
                 ERRMSG_LEN) != CR_OK:
            return ST_ENGINE_ERROR
        r.info[0] = 0
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef cbool term = False
        cdef int8_t lap = -1
        cdef int64_t a = 0
        cdef const double* ac = NULL
        self.row_of(i, &r)
        cdef Canvas* cv = self._canvas(slot, r.err)
        if cv == NULL:
            return ST_ENGINE_ERROR
        if self.continuous:
            ac = self.act_c + 3 * i
        else:
            a = self.act_d[i]
        if step(self.envs + i, self.params[i], a, ac, cv, self.glyphs, <uint8_t*> r.obs,
                r.rew, &term, &lap, r.err, ERRMSG_LEN) != CR_OK:
            return ST_ENGINE_ERROR
        r.term[0] = term
        r.info[0] = lap + 1
        return ST_OK

    def render_data(self, Py_ssize_t i):
        """What gymnasium's render() reads of env i (cypool.box2d._render): t, the score,
        the colours, road_poly (vertices and colours, a tile's as its listener left it), the
        car's float32 state, transforms and fixture vertices, and the skid particles (the
        deque's, oldest first: grass flag and float32 points). None before the first
        reset."""
        cdef Env* e = self.envs + i
        cdef Py_ssize_t k, j
        scal = np.zeros(15, np.float64)
        xf = np.zeros((5, 4), np.float32)
        verts = np.zeros((5, 4, 8, 2), np.float32)
        counts = np.zeros((5, 4), np.int32)
        if not car_state(e, <double*> cnp.PyArray_DATA(scal), <float*> cnp.PyArray_DATA(xf),
                         <float*> cnp.PyArray_DATA(verts), <int*> cnp.PyArray_DATA(counts)):
            return None
        road = []
        for k in range(e.n_poly):
            p = &e.road_poly[k]
            colour = ([e.tile_color[p.tile][j] for j in range(3)] if p.tile >= 0
                      else [int(p.rgb[j]) for j in range(3)])
            road.append(([(p.x[j], p.y[j]) for j in range(4)], colour))
        particles = []
        for k in range(max(0, e.n_particles - 30), e.n_particles):
            q = &e.particles[k % 30]
            particles.append((bool(q.grass), [(float(q.pts[j][0]), float(q.pts[j][1]))
                                              for j in range(q.n)]))
        return dict(t=e.t, reward=e.reward, bg_color=[e.bg_color[j] for j in range(3)],
                    grass_color=[e.grass_color[j] for j in range(3)], road_poly=road,
                    car=scal, transforms=xf, vertices=verts, counts=counts,
                    particles=particles)

    def _env_state(self, Py_ssize_t i):
        raise TypeError(
            "cypool: a CarRacing env's state cannot be saved (get_state, pickle, deepcopy): "
            "its Box2D world (contacts, warm-start impulses, broad-phase tree, and the history "
            "of bodies it held, which gymnasium's world keeps across resets) has no exact "
            "serialisation. Keep the pool itself, or re-create it and reset with a seed.")

    # the three state hooks refuse alike (a pool defining only some is refused as incomplete)
    def _check_env_state(self, Py_ssize_t i, state):
        self._env_state(i)

    def _set_env_state(self, Py_ssize_t i, state):
        self._env_state(i)
