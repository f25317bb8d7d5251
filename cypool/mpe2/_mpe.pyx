"""MPE2 pool: mpe2 1.1.1's particle worlds (core.World + a scenario) per env, each env a
whole multi-agent env (every agent acts in every step, as the reference's parallel_env).

Kernel contract: iteration i touches only env i's rows (state, scratch, actions, outputs);
no allocation, Python objects or GIL.

World.step, operation for operation in float64 (mpe2/_mpe_utils/core.py):
  force[a] = u[a] + 0.0 (movable agents; u = the action's move times the sensitivity)
  pairs (a, b > a) of colliding entities, in entity order: d = pos[a] - pos[b],
    dist = sqrt(d0*d0 + d1*d1), pen = logaddexp(0, -(dist - (s_a + s_b)) / k) * k,
    f = ((contact_force * d) / dist) * pen; force[a] = f + force[a], force[b] = -f + force[b]
  movable entities: pos += vel * dt; vel = vel * (1 - damping); vel += (force / mass) * dt;
    speed clipped to max_speed (vel / speed * max_speed)
  agent comm state: zeros (silent) or the comm action + 0.0
Entities are the agents then the landmarks (World.entities). Observations are computed in
float64 and cast to float32 (SimpleEnv.observe). Rewards: the scenario's, blended with
local_ratio where the env has one, then 0 + r (the parallel wrapper's int 0 accumulator).
"""
from libc.math cimport sqrt, exp, log1p, isnan
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.string cimport memset, memcpy
cimport numpy as cnp
from numpy.random.c_distributions cimport random_uniform

import numpy as np

from numpy.random cimport bitgen_t
from libc.stdio cimport snprintf
from cypool.api cimport Engine, EnvRow, ST_OK, ST_ENGINE_ERROR, ERRMSG_LEN
from cypool._core._numpy_loops cimport NpLoop, numpy_loop, np_unary, np_binary

cnp.import_array()

# scenarios
cdef enum:
    SC_SIMPLE = 0
    SC_SPREAD = 1
    SC_ADVERSARY = 2
    SC_TAG = 3
    SC_PUSH = 4
    SC_SPEAKER = 5
    SC_REFERENCE = 6
    SC_CRYPTO = 7
    SC_FORMATION = 8
    SC_LINE = 9
    SC_WORLDCOMM = 10
    SC_TREASURE = 11

SCENARIOS = {"simple_v3": SC_SIMPLE, "simple_spread_v3": SC_SPREAD,
             "simple_adversary_v3": SC_ADVERSARY, "simple_tag_v3": SC_TAG,
             "simple_push_v3": SC_PUSH, "simple_speaker_listener_v4": SC_SPEAKER,
             "simple_reference_v3": SC_REFERENCE, "simple_crypto_v3": SC_CRYPTO,
             "simple_formation_v1": SC_FORMATION, "simple_line_v1": SC_LINE,
             "simple_world_comm_v3": SC_WORLDCOMM, "collect_treasure_v1": SC_TREASURE}


cdef extern from "numpy/random/distributions.h" nogil:
    # Generator.integers(n) for int64 (as cypool/toy_text/_draws.pxi)
    void random_bounded_uint64_fill(bitgen_t* bitgen_state, uint64_t off, uint64_t rng,
                                    cnp.npy_intp cnt, bint use_masked, uint64_t* out)


# numpy's float64 scalar math (np.exp, np.cos, np.sin, np.arctan2): numpy's own loops (its
# AVX-512 exp and arctan2 where the CPU has them, not libm's), called through each ufunc's
# all-"d" inner loop (thread-safe, no GIL)
cdef NpLoop EXP = numpy_loop(np.exp, "d->d")
cdef NpLoop COS = numpy_loop(np.cos, "d->d")
cdef NpLoop SIN = numpy_loop(np.sin, "d->d")
cdef NpLoop ATAN2 = numpy_loop(np.arctan2, "dd->d")


cdef inline double np_exp(double x) noexcept nogil:
    return np_unary(EXP, x)


cdef inline double np_arctan2(double y, double x) noexcept nogil:
    return np_binary(ATAN2, y, x)


# np.linalg.norm of a 2-vector is sqrt(x.dot(x)), and numpy's dot is its BLAS's cblas_ddot
# (OpenBLAS's kernel, which uses FMA on x86-64): the same function, found in the library
# numpy loaded; without it, the FMA form OpenBLAS's Haswell/SkylakeX kernels compute
ctypedef double (*ddot_fn)(int64_t n, const double* x, int64_t incx, const double* y,
                           int64_t incy) noexcept nogil
cdef ddot_fn DDOT = NULL


def _find_ddot():
    import ctypes
    import glob
    import os
    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs, "libscipy_openblas64_*.so*"))):
        try:
            lib = ctypes.CDLL(path)
            return ctypes.cast(lib.scipy_cblas_ddot64_, ctypes.c_void_p).value
        except (OSError, AttributeError):
            continue
    return None


_ddot_addr = _find_ddot()
if _ddot_addr:
    DDOT = <ddot_fn> <size_t> _ddot_addr
HAVE_NUMPY_DDOT = DDOT != NULL


# numpy's PCG64 state (numpy/random/src/pcg64/pcg64.h): a 128-bit state and increment
ctypedef struct pcg64_random_t:
    uint64_t w[4]
ctypedef struct pcg64_state:
    pcg64_random_t* pcg_state
    int has_uint32
    uint32_t uinteger


cdef inline void copy_pcg64(bitgen_t* dst, bitgen_t* src) noexcept nogil:
    """dst = copy.deepcopy(src) of two PCG64 generators (the state and the cached half)."""
    cdef pcg64_state* d = <pcg64_state*> dst.state
    cdef pcg64_state* s = <pcg64_state*> src.state
    memcpy(d.pcg_state, s.pcg_state, sizeof(pcg64_random_t))
    d.has_uint32 = s.has_uint32
    d.uinteger = s.uinteger


# every numpy PCG64 shares these function pointers: copy_pcg64 reads a stream's state as
# PCG64's only after checking them (a snapshot may install another bit generator)
_PCG64_PROBE = np.random.PCG64(0)
cdef bitgen_t* _PCG64_BG = <bitgen_t*> PyCapsule_GetPointer(_PCG64_PROBE.capsule,
                                                           "BitGenerator")


cdef inline bint is_pcg64(const bitgen_t* bg) noexcept nogil:
    return bg.next_uint64 == _PCG64_BG.next_uint64 and bg.next_raw == _PCG64_BG.next_raw


def _copy_check(src, dst):
    """copy_pcg64 between two numpy PCG64s (tests compare their streams)."""
    copy_pcg64(<bitgen_t*> PyCapsule_GetPointer(dst.capsule, "BitGenerator"),
               <bitgen_t*> PyCapsule_GetPointer(src.capsule, "BitGenerator"))


cdef extern from "math.h" nogil:
    double fma(double x, double y, double z)
    double fabs(double x)


cdef double TWO_PI = 2 * np.pi
cdef double RAD5 = float(np.radians(5))


cdef double pairwise_sum(double* a, Py_ssize_t n) noexcept nogil:
    """numpy's pairwise summation of n contiguous doubles (np.add.reduce's inner sum)."""
    cdef double res
    cdef double r[8]
    cdef Py_ssize_t k, j, n2
    if n < 8:
        res = 0.0
        for k in range(n):
            res = res + a[k]
        return res
    if n <= 128:
        for j in range(8):
            r[j] = a[j]
        k = 8
        while k < n - (n % 8):
            for j in range(8):
                r[j] = r[j] + a[k + j]
            k += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while k < n:
            res = res + a[k]
            k += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2)


cdef inline double np_norm2(double d0, double d1) noexcept nogil:
    """np.linalg.norm(np.array([d0, d1]))."""
    cdef double v[2]
    if DDOT != NULL:
        v[0] = d0
        v[1] = d1
        return sqrt(0.0 + DDOT(2, v, 1, v, 1))
    return sqrt(fma(d1, d1, d0 * d0))


def _norm_check(double[:, ::1] xs):
    out = np.empty(xs.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t k
    for k in range(xs.shape[0]):
        o[k] = np_norm2(xs[k, 0], xs[k, 1])
    return out


def _exp_check(double[::1] xs):
    """np_exp over xs (tests compare it with np.exp)."""
    out = np.empty(xs.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t k
    for k in range(xs.shape[0]):
        o[k] = np_exp(xs[k])
    return out

# every env's own state, row i of each (collect_treasure adds its world.np_random)
STATE_ARRAYS = ("positions", "velocities", "comms", "step_counts", "goals", "cam_ranges",
                "expected_positions", "alive_arr", "types", "holdings")

cdef double LOGE2 = 0.693147180559945309417232121458176568   # numpy's NPY_LOGE2


cdef inline double logaddexp(double x, double y) noexcept nogil:
    """numpy's npy_logaddexp (npymath), branch for branch, on libm's log1p/exp."""
    cdef double tmp
    if x == y:
        return x + LOGE2
    tmp = x - y
    if tmp > 0:
        return x + log1p(exp(-tmp))
    elif tmp <= 0:
        return y + log1p(exp(tmp))
    return tmp


cdef inline double dist2(double* p, double* q) noexcept nogil:
    """np.sqrt(np.sum(np.square(p - q))) over 2 elements."""
    cdef double d0 = p[0] - q[0], d1 = p[1] - q[1]
    return sqrt(d0 * d0 + d1 * d1)


cdef class MPEPool(Engine):
    """num_envs worlds of one scenario (built by cypool.mpe2.family)."""
    # layout (the same for every env of the pool)
    cdef readonly int scenario, n_agents, n_landmarks, n_entities, dim_c, continuous
    cdef readonly int act_width, info_terms
    cdef double dt, damping, contact_force, contact_margin
    cdef double* size
    cdef uint8_t* movable
    cdef uint8_t* collide
    cdef double* mass
    cdef double* max_speed        # < 0: none
    cdef double* accel            # < 0: none (sensitivity 5)
    cdef uint8_t* silent
    cdef int64_t* adim            # action size per agent (Discrete n, Box width)
    cdef int64_t* odim
    cdef uint8_t* adversary       # (A,)
    cdef double* lm_color         # (L, 3)
    cdef readonly object adversaries, lm_colors, goals
    cdef int64_t* goal            # (n, A): agent a's goal landmark (goal_b; adversary, push:
                                  # every agent's, in column 0)
    cdef readonly object sizes, movables, collides, masses, max_speeds, accels, silents
    cdef readonly object act_dims, obs_dims
    # per env
    cdef double* pos              # (n, E, 2)
    cdef double* vel              # (n, E, 2)
    cdef double* comm             # (n, A, dim_c)
    cdef int64_t* steps
    cdef double* force            # scratch (n, E, 2)
    cdef uint8_t* has_force       # scratch (n, E)
    cdef double* u                # scratch (n, A, 2)
    cdef double* cact             # scratch (n, A, dim_c)
    cdef double* rews             # scratch (n, A)
    cdef double* local_ratio      # per env; NaN: none
    cdef int64_t* max_cycles
    cdef uint8_t* curriculum
    cdef uint8_t* terminate_on_success
    cdef int64_t* act_i           # Discrete actions (n, A)
    cdef double* act_f            # Box actions (n, A, act_width)
    cdef uint8_t* act32           # (n, A): the Box action was float32
    cdef readonly object positions, velocities, comms, step_counts, local_ratios
    cdef readonly object max_cycles_arr, curricula, terminates, cam_ranges, rescaling
    cdef double* cam_range        # per env: max |coordinate| at its last reset (rendering)
    cdef readonly object actions, act_f32
    cdef object _scratch
    # formation, line: the assignment's scratch and results, per env
    cdef int lsa_n
    cdef double* lsa_cost         # (n, N * N)
    cdef double* lsa_work         # (n, 3 * (N + 1)): u, v, minv
    cdef int64_t* lsa_iwork       # (n, 3 * (N + 1)): p, way, used
    cdef double* expected         # (n, N, 2): the target positions (line: set at reset)
    cdef double* delta            # (n, N): the assigned distances
    cdef readonly object expected_positions, delta_dists
    cdef object fixed_local_ratio
    cdef int n_food, n_forests      # world_comm: landmarks = obstacles, food, forests
    # collect_treasure: collectors then deposits; the treasures are the landmarks
    cdef readonly int n_collectors, n_types
    cdef bitgen_t** wrng          # per env: world.np_random, a copy of the env's stream
                                  # taken at the start of each reset
    cdef uint8_t* alive           # (n, T)
    cdef int64_t* ttype           # (n, T)
    cdef int64_t* holding         # (n, A): the type a collector holds, -1: none
    cdef double* gbonus           # (n,): the step's collecting + deposit reward
    cdef double* skey             # scratch (n, max(A, T)): sort keys
    cdef int64_t* sidx            # scratch (n, max(A, T)): sorted indices
    cdef readonly object alive_arr, types, holdings, world_gens
    cdef object _wptrs
    cdef public object renderer

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs, layout):
        cdef int A = layout["n_agents"], L = layout["n_landmarks"]
        cdef int E = A + L
        cdef int dc = layout["dim_c"]
        obs_dims = layout["obs_dims"]
        outputs = [("obs" if k == 0 else f"obs.{name}", (int(obs_dims[k]),), np.float32)
                   for k, name in enumerate(layout["names"])]
        self.info_terms = layout["terminations"]
        self._init_engine(num_envs, num_threads, max_episode_steps, outputs,
                          A * (2 if self.info_terms else 1))
        self.scenario = SCENARIOS[layout["scenario"]]
        self.n_agents, self.n_landmarks, self.n_entities, self.dim_c = A, L, E, dc
        self.continuous = layout["continuous"]
        self.dt, self.damping, self.contact_force, self.contact_margin = layout["world"]
        self.sizes = np.ascontiguousarray(layout["size"], np.float64)
        self.movables = np.ascontiguousarray(layout["movable"], np.uint8)
        self.collides = np.ascontiguousarray(layout["collide"], np.uint8)
        self.masses = np.ascontiguousarray(layout["mass"], np.float64)
        self.max_speeds = np.ascontiguousarray(layout["max_speed"], np.float64)
        self.accels = np.ascontiguousarray(layout["accel"], np.float64)
        self.silents = np.ascontiguousarray(layout["silent"], np.uint8)
        self.act_dims = np.ascontiguousarray(layout["act_dims"], np.int64)
        self.obs_dims = np.ascontiguousarray(obs_dims, np.int64)
        self.size = <double*> cnp.PyArray_DATA(self.sizes)
        self.movable = <uint8_t*> cnp.PyArray_DATA(self.movables)
        self.collide = <uint8_t*> cnp.PyArray_DATA(self.collides)
        self.mass = <double*> cnp.PyArray_DATA(self.masses)
        self.max_speed = <double*> cnp.PyArray_DATA(self.max_speeds)
        self.accel = <double*> cnp.PyArray_DATA(self.accels)
        self.silent = <uint8_t*> cnp.PyArray_DATA(self.silents)
        self.adim = <int64_t*> cnp.PyArray_DATA(self.act_dims)
        self.odim = <int64_t*> cnp.PyArray_DATA(self.obs_dims)
        self.act_width = int(max(layout["act_dims"]))
        self.adversaries = np.ascontiguousarray(layout["adversary"], np.uint8)
        self.lm_colors = np.ascontiguousarray(np.reshape(layout["lm_color"], (L, 3)),
                                              np.float64)
        self.adversary = <uint8_t*> cnp.PyArray_DATA(self.adversaries)
        self.lm_color = <double*> cnp.PyArray_DATA(self.lm_colors)
        self.goals = np.zeros((num_envs, A), np.int64)
        self.goal = <int64_t*> cnp.PyArray_DATA(self.goals)
        n = num_envs
        self.positions = np.zeros((n, E, 2), np.float64)
        self.velocities = np.zeros((n, E, 2), np.float64)
        self.comms = np.zeros((n, A, max(dc, 1)), np.float64)
        self.step_counts = np.zeros(n, np.int64)
        sc = [np.zeros((n, E, 2)), np.zeros((n, E), np.uint8), np.zeros((n, A, 2)),
              np.zeros((n, A, max(dc, 1))), np.zeros((n, A))]
        self.lsa_n = A if self.scenario in (SC_FORMATION, SC_LINE) else 0
        N = max(self.lsa_n, 1)
        sc += [np.zeros((n, N * N)), np.zeros((n, 3 * (N + 1))),
               np.zeros((n, 3 * (N + 1)), np.int64)]
        self._scratch = sc
        self.lsa_cost = <double*> cnp.PyArray_DATA(sc[5])
        self.lsa_work = <double*> cnp.PyArray_DATA(sc[6])
        self.lsa_iwork = <int64_t*> cnp.PyArray_DATA(sc[7])
        self.expected_positions = np.zeros((n, N, 2))
        self.delta_dists = np.zeros((n, N))
        self.expected = <double*> cnp.PyArray_DATA(self.expected_positions)
        self.delta = <double*> cnp.PyArray_DATA(self.delta_dists)
        self.fixed_local_ratio = layout.get("local_ratio")
        self.n_food = layout.get("n_food", 0)
        self.n_collectors = layout.get("n_collectors", 0)
        self.n_types = layout.get("n_types", 0)
        T = max(L, 1)
        self.alive_arr = np.ones((n, T), np.uint8)
        self.types = np.zeros((n, T), np.int64)
        self.holdings = np.full((n, A), -1, np.int64)
        M = max(A, L, 1)
        sc += [np.zeros(n), np.zeros((n, M)), np.zeros((n, M), np.int64)]
        self.gbonus = <double*> cnp.PyArray_DATA(sc[8])
        self.skey = <double*> cnp.PyArray_DATA(sc[9])
        self.sidx = <int64_t*> cnp.PyArray_DATA(sc[10])
        self.alive = <uint8_t*> cnp.PyArray_DATA(self.alive_arr)
        self.ttype = <int64_t*> cnp.PyArray_DATA(self.types)
        self.holding = <int64_t*> cnp.PyArray_DATA(self.holdings)
        self.world_gens = []
        self._wptrs = np.zeros(max(n, 1), np.uintp)
        if self.scenario == SC_TREASURE:
            self.world_gens = [np.random.PCG64(0) for _ in range(n)]
            for k, g in enumerate(self.world_gens):
                self._wptrs[k] = <size_t> PyCapsule_GetPointer(g.capsule, "BitGenerator")
        self.wrng = <bitgen_t**> cnp.PyArray_DATA(self._wptrs)
        self.n_forests = layout.get("n_forests", 0)
        self.local_ratios = np.full(n, np.nan)
        self.max_cycles_arr = np.ones(n, np.int64)
        self.curricula = np.zeros(n, np.uint8)
        self.terminates = np.zeros(n, np.uint8)
        self.rescaling = np.ones(n, np.uint8)
        self.cam_ranges = np.zeros(n, np.float64)
        self.cam_range = <double*> cnp.PyArray_DATA(self.cam_ranges)
        if self.continuous:
            self.actions = np.zeros((n, A, self.act_width), np.float64)
        else:
            self.actions = np.zeros((n, A), np.int64)
        self.act_f32 = np.zeros((n, A), np.uint8)
        self.pos = <double*> cnp.PyArray_DATA(self.positions)
        self.vel = <double*> cnp.PyArray_DATA(self.velocities)
        self.comm = <double*> cnp.PyArray_DATA(self.comms)
        self.steps = <int64_t*> cnp.PyArray_DATA(self.step_counts)
        self.force = <double*> cnp.PyArray_DATA(sc[0])
        self.has_force = <uint8_t*> cnp.PyArray_DATA(sc[1])
        self.u = <double*> cnp.PyArray_DATA(sc[2])
        self.cact = <double*> cnp.PyArray_DATA(sc[3])
        self.rews = <double*> cnp.PyArray_DATA(sc[4])
        self.local_ratio = <double*> cnp.PyArray_DATA(self.local_ratios)
        self.max_cycles = <int64_t*> cnp.PyArray_DATA(self.max_cycles_arr)
        self.curriculum = <uint8_t*> cnp.PyArray_DATA(self.curricula)
        self.terminate_on_success = <uint8_t*> cnp.PyArray_DATA(self.terminates)
        if self.continuous:
            self.act_f = <double*> cnp.PyArray_DATA(self.actions)
        else:
            self.act_i = <int64_t*> cnp.PyArray_DATA(self.actions)
        self.act32 = <uint8_t*> cnp.PyArray_DATA(self.act_f32)
        self.renderer = None
        self.configure(np.arange(n, dtype=np.int64), kwargs)

    def configure(self, ids, kwargs):
        """Envs ids (int64) take the complete kwargs' per-env settings."""
        lr = kwargs["local_ratio"] if "local_ratio" in kwargs else self.fixed_local_ratio
        self.local_ratios[ids] = np.nan if lr is None else float(lr)
        self.max_cycles_arr[ids] = int(kwargs["max_cycles"])
        self.curricula[ids] = bool(kwargs.get("curriculum", False))
        self.terminates[ids] = bool(kwargs.get("terminate_on_success", False))
        self.rescaling[ids] = bool(kwargs.get("dynamic_rescaling", True))

    # ------------------------------------------------------------------ reset
    cdef void _uniform2(self, EnvRow* r, double* p, double low, double high) noexcept nogil:
        p[0] = random_uniform(r.rng, low, high - low)
        p[1] = random_uniform(r.rng, low, high - low)

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef int A = self.n_agents, E = self.n_entities, e, k
        cdef uint64_t g = 0
        cdef double cr = 0.0, v
        cdef int nf = self.n_food + self.n_forests
        cdef double* pos = self.pos + 2 * E * i
        cdef double* vel = self.vel + 2 * E * i
        cdef int dc = self.dim_c if self.dim_c > 0 else 1
        self.row_of(i, &r)
        if self.scenario == SC_TREASURE:
            if not is_pcg64(r.rng):
                snprintf(r.err, ERRMSG_LEN, "mpe2/collect_treasure_v1: the env's random "
                         "stream must be numpy's PCG64 (a snapshot installed another)")
                return ST_ENGINE_ERROR
            copy_pcg64(self.wrng[i], r.rng)     # world.np_random = deepcopy(np_random)
        memset(vel, 0, 2 * E * sizeof(double))
        memset(self.comm + dc * A * i, 0, dc * A * sizeof(double))
        if (self.scenario == SC_ADVERSARY or self.scenario == SC_PUSH
                or self.scenario == SC_SPEAKER or self.scenario == SC_REFERENCE
                or self.scenario == SC_CRYPTO):
            # goal = landmarks[int(np_random.integers(len(landmarks)))], drawn first
            # (simple_reference: agent 0's, then agent 1's; simple_crypto: the goal, then
            # the key's landmark)
            random_bounded_uint64_fill(r.rng, 0, self.n_landmarks - 1, 1, False, &g)
            self.goal[A * i] = <int64_t> g
            if self.scenario == SC_REFERENCE or self.scenario == SC_CRYPTO:
                random_bounded_uint64_fill(r.rng, 0, self.n_landmarks - 1, 1, False, &g)
                self.goal[A * i + 1] = <int64_t> g
        # agents then landmarks, each uniform(-1, 1, 2) (tag's landmarks: (-0.9, 0.9))
        for e in range(E):
            if self.scenario == SC_TREASURE and e >= A:
                break                   # the treasures: _treasure_reset
            if self.scenario == SC_TAG and e >= A:
                self._uniform2(&r, pos + 2 * e, -0.9, 0.9)
            elif self.scenario == SC_WORLDCOMM and e >= A:
                self._uniform2(&r, pos + 2 * e, -0.9, 0.9)
            elif self.scenario == SC_FORMATION and e >= A:
                self._uniform2(&r, pos + 2 * e, -0.5, 0.5)
            elif self.scenario == SC_LINE and e >= A:
                if e == A:
                    self._uniform2(&r, pos + 2 * e, -0.25, 0.25)
                    self._line_reset(i, &r)
            else:
                self._uniform2(&r, pos + 2 * e, -1.0, 1.0)
        if self.scenario == SC_TREASURE:
            self._treasure_reset(i, &r)
        if self.scenario == SC_WORLDCOMM:
            # then the food and the forests again (world.food, world.forests)
            for e in range(E - nf, E):
                self._uniform2(&r, pos + 2 * e, -0.9, 0.9)
        self.steps[i] = 0
        for k in range(2 * E):        # np.max(np.abs(all positions)), for the renderer
            v = pos[k] if pos[k] >= 0 else -pos[k]
            if k == 0 or v > cr:
                cr = v
        self.cam_range[i] = cr
        for k in range(A * (2 if self.info_terms else 1)):
            r.info[k] = 0.0
        if self._observe(i, &r):
            snprintf(r.err, ERRMSG_LEN, "mpe2: observation size mismatch (a cypool bug)")
            return ST_ENGINE_ERROR
        return ST_OK

    cdef void _treasure_reset(self, Py_ssize_t i, EnvRow* r) noexcept nogil:
        """collect_treasure's treasures: per treasure its type (integers(0, types)) then its
        position (uniform(-0.95, 0.95, 2)); nobody holds anything."""
        cdef int A = self.n_agents, L = self.n_landmarks, E = self.n_entities, t
        cdef double* pos = self.pos + 2 * E * i
        cdef uint64_t g = 0
        for t in range(A):
            self.holding[A * i + t] = -1
        for t in range(L):
            random_bounded_uint64_fill(r.rng, 0, self.n_types - 1, 1, False, &g)
            self.ttype[L * i + t] = <int64_t> g
            self._uniform2(r, pos + 2 * (A + t), -0.95, 0.95)
            self.alive[L * i + t] = 1

    cdef void _post_step(self, Py_ssize_t i) noexcept nogil:
        """collect_treasure's post_step: pick-ups (treasure order, first free collector),
        respawns of the treasures dead before it (world.np_random), deposits."""
        cdef int A = self.n_agents, L = self.n_landmarks, E = self.n_entities, C = self.n_collectors
        cdef int t, c, d
        cdef double* pos = self.pos + 2 * E * i
        cdef double col = 0.0, dep = 0.0, u
        cdef uint64_t g = 0
        cdef bitgen_t* w = self.wrng[i]
        for t in range(L):
            if self.alive[L * i + t]:
                for c in range(C):
                    if self.holding[A * i + c] < 0 and self._is_collision(i, A + t, c):
                        col = col + 5.0
                        self.alive[L * i + t] = 0
                        self.holding[A * i + c] = self.ttype[L * i + t]
                        pos[2 * (A + t)] = -999.0
                        pos[2 * (A + t) + 1] = -999.0
                        break
            else:
                u = random_uniform(w, 0.0, 1.0)
                if u <= 1.0:                    # respawn_prob
                    pos[2 * (A + t)] = random_uniform(w, -0.95, 0.95 - (-0.95))
                    pos[2 * (A + t) + 1] = random_uniform(w, -0.95, 0.95 - (-0.95))
                    random_bounded_uint64_fill(w, 0, self.n_types - 1, 1, False, &g)
                    self.ttype[L * i + t] = <int64_t> g
                    self.alive[L * i + t] = 1
        for c in range(C):
            if self.holding[A * i + c] >= 0:
                for d in range(C, A):
                    if d - C == self.holding[A * i + c] and self._is_collision(i, c, d):
                        dep = dep + 5.0
                        self.holding[A * i + c] = -1
                        break
        self.gbonus[i] = col + dep

    cdef void _line_reset(self, Py_ssize_t i, EnvRow* r) noexcept nogil:
        """simple_line: landmark 1 at 1.25 from landmark 0 in a random direction turned by
        5 degrees until it is inside the square; the targets evenly along that segment."""
        cdef int A = self.n_agents, E = self.n_entities, k, tries = 0
        cdef double* p0 = self.pos + 2 * E * i + 2 * A
        cdef double* ex = self.expected + 2 * A * i
        cdef double theta = random_uniform(r.rng, 0.0, TWO_PI - 0.0)
        cdef double c = np_unary(COS, theta)
        cdef double sn = np_unary(SIN, theta)
        cdef double l0 = p0[0] + 1.25 * c, l1 = p0[1] + 1.25 * sn, sep
        while not (fabs(l0) < 1.0 and fabs(l1) < 1.0) and tries < 100000:
            theta = theta + RAD5
            c = np_unary(COS, theta)
            sn = np_unary(SIN, theta)
            l0 = p0[0] + 1.25 * c
            l1 = p0[1] + 1.25 * sn
            tries += 1
        p0[2] = l0
        p0[3] = l1
        sep = 1.25 / (A - 1) if A > 1 else 0.0
        for k in range(A):
            ex[2 * k] = p0[0] + (k * sep) * c
            ex[2 * k + 1] = p0[1] + (k * sep) * sn

    # ------------------------------------------------------------------ step
    cdef void _set_actions(self, Py_ssize_t i) noexcept nogil:
        cdef int A = self.n_agents, dc = self.dim_c, a, k, mdim = 5
        cdef int dcs = dc if dc > 0 else 1
        cdef int W = self.act_width
        cdef int64_t act
        cdef double* u
        cdef double* c
        cdef double* f
        cdef double sens
        cdef float* g
        for a in range(A):
            u = self.u + 2 * (A * i + a)
            c = self.cact + dcs * (A * i + a)
            u[0] = 0.0
            u[1] = 0.0
            for k in range(dc):
                c[k] = 0.0
            if self.continuous:
                f = self.act_f + W * (A * i + a)
                if self.movable[a]:
                    if self.act32[A * i + a]:
                        # float32 action: numpy subtracts the float32 elements in float32
                        u[0] = u[0] + <double> (<float> f[2] - <float> f[1])
                        u[1] = u[1] + <double> (<float> f[4] - <float> f[3])
                    else:
                        u[0] = u[0] + (f[2] - f[1])
                        u[1] = u[1] + (f[4] - f[3])
                    f = f + mdim
                if not self.silent[a]:
                    for k in range(dc):
                        c[k] = f[k]
            else:
                act = self.act_i[A * i + a]
                if self.movable[a]:
                    k = act % mdim
                    act = act // mdim
                    if k == 1:
                        u[0] = -1.0
                    if k == 2:
                        u[0] = 1.0
                    if k == 3:
                        u[1] = -1.0
                    if k == 4:
                        u[1] = 1.0
                if not self.silent[a]:
                    c[act] = 1.0
            if self.movable[a]:
                sens = self.accel[a] if self.accel[a] >= 0 else 5.0
                u[0] = u[0] * sens
                u[1] = u[1] * sens

    cdef void _world_step(self, Py_ssize_t i) noexcept nogil:
        cdef int A = self.n_agents, E = self.n_entities, dc = self.dim_c, a, b, k
        cdef int dcs = dc if dc > 0 else 1
        cdef double* pos = self.pos + 2 * E * i
        cdef double* vel = self.vel + 2 * E * i
        cdef double* F = self.force + 2 * E * i
        cdef uint8_t* hasf = self.has_force + E * i
        cdef double* u = self.u + 2 * A * i
        cdef double d0, d1, dist, pen, kk = self.contact_margin, f0, f1, speed, ms
        for a in range(E):
            hasf[a] = 0
            F[2 * a] = 0.0
            F[2 * a + 1] = 0.0
        for a in range(A):
            if self.movable[a]:
                F[2 * a] = u[2 * a] + 0.0
                F[2 * a + 1] = u[2 * a + 1] + 0.0
                hasf[a] = 1
        for a in range(E):
            for b in range(a + 1, E):
                if not self.collide[a] or not self.collide[b]:
                    continue
                d0 = pos[2 * a] - pos[2 * b]
                d1 = pos[2 * a + 1] - pos[2 * b + 1]
                dist = sqrt(d0 * d0 + d1 * d1)
                pen = logaddexp(0.0, -(dist - (self.size[a] + self.size[b])) / kk) * kk
                f0 = self.contact_force * d0 / dist * pen
                f1 = self.contact_force * d1 / dist * pen
                if self.movable[a]:
                    if not hasf[a]:
                        hasf[a] = 1
                    F[2 * a] = f0 + F[2 * a]
                    F[2 * a + 1] = f1 + F[2 * a + 1]
                if self.movable[b]:
                    if not hasf[b]:
                        hasf[b] = 1
                    F[2 * b] = -f0 + F[2 * b]
                    F[2 * b + 1] = -f1 + F[2 * b + 1]
        for a in range(E):
            if not self.movable[a]:
                continue
            pos[2 * a] = pos[2 * a] + vel[2 * a] * self.dt
            pos[2 * a + 1] = pos[2 * a + 1] + vel[2 * a + 1] * self.dt
            vel[2 * a] = vel[2 * a] * (1 - self.damping)
            vel[2 * a + 1] = vel[2 * a + 1] * (1 - self.damping)
            if hasf[a]:
                vel[2 * a] = vel[2 * a] + (F[2 * a] / self.mass[a]) * self.dt
                vel[2 * a + 1] = vel[2 * a + 1] + (F[2 * a + 1] / self.mass[a]) * self.dt
            ms = self.max_speed[a]
            if ms >= 0:
                speed = sqrt(vel[2 * a] * vel[2 * a] + vel[2 * a + 1] * vel[2 * a + 1])
                if speed > ms:
                    vel[2 * a] = vel[2 * a] / speed * ms
                    vel[2 * a + 1] = vel[2 * a + 1] / speed * ms
        for a in range(A):
            for k in range(dc):
                if self.silent[a]:
                    self.comm[dcs * (A * i + a) + k] = 0.0
                else:
                    self.comm[dcs * (A * i + a) + k] = self.cact[dcs * (A * i + a) + k] + 0.0

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef int A = self.n_agents, a
        cdef double* rw = self.rews + A * i
        cdef double total = 0.0, g, lr
        cdef bint terminal
        self.row_of(i, &r)
        self._set_actions(i)
        self._world_step(i)
        if self.scenario == SC_TREASURE:
            self._post_step(i)
        lr = self.local_ratio[i]
        g = 0.0
        if not isnan(lr):
            g = self._global_reward(i)
        for a in range(A):
            rw[a] = self._reward(i, a)
            if not isnan(lr):
                rw[a] = g * (1 - lr) + rw[a] * lr
            rw[a] = 0.0 + rw[a]           # the parallel wrapper's int 0 + reward
            r.info[a] = rw[a]
            total = total + rw[a]
        r.rew[0] = total
        self.steps[i] += 1
        terminal = False
        if self.steps[i] >= self.max_cycles[i]:
            r.trunc[0] = 1
        else:
            terminal = self._is_terminal(i)
        r.term[0] = terminal
        if self.info_terms:
            for a in range(A):
                r.info[A + a] = 1.0 if terminal else 0.0
        if self._observe(i, &r):
            snprintf(r.err, ERRMSG_LEN, "mpe2: observation size mismatch (a cypool bug)")
            return ST_ENGINE_ERROR
        return ST_OK

    # ------------------------------------------------------------------ scenarios
    cdef bint _is_collision(self, Py_ssize_t i, int a, int b) noexcept nogil:
        cdef double* pos = self.pos + 2 * self.n_entities * i
        return dist2(pos + 2 * a, pos + 2 * b) < self.size[a] + self.size[b]

    cdef double _global_reward(self, Py_ssize_t i) noexcept nogil:
        cdef int A = self.n_agents, E = self.n_entities, l, a
        cdef double* pos = self.pos + 2 * E * i
        cdef double rew = 0.0, d, m
        if self.scenario == SC_SPREAD:
            for l in range(A, E):
                m = dist2(pos, pos + 2 * l)
                for a in range(1, A):
                    d = dist2(pos + 2 * a, pos + 2 * l)
                    if d < m:
                        m = d
                rew = rew - m
        elif self.scenario == SC_FORMATION or self.scenario == SC_LINE:
            rew = self._formation_reward(i)
        elif self.scenario == SC_REFERENCE:
            # sum(reward(agent) for agent in agents) / len(agents)
            rew = 0.0
            for a in range(A):
                rew = rew + self._reward(i, a)
            rew = rew / A
        return rew

    cdef double _goal_dist(self, Py_ssize_t i, int a) noexcept nogil:
        """sqrt(sum(square(agent.pos - agent.goal_a.pos)))."""
        cdef double* pos = self.pos + 2 * self.n_entities * i
        return dist2(pos + 2 * a, pos + 2 * (self.n_agents + self.goal[self.n_agents * i]))

    cdef double _min_good_goal_dist(self, Py_ssize_t i) noexcept nogil:
        """min(goal distance of the good agents), the first smallest (Python's min)."""
        cdef int b
        cdef bint first = True
        cdef double m = 0.0, d
        for b in range(self.n_agents):
            if self.adversary[b]:
                continue
            d = self._goal_dist(i, b)
            if first or d < m:
                m = d
                first = False
        return m

    cdef double _formation_reward(self, Py_ssize_t i) noexcept nogil:
        """-mean(clip(assigned distances, 0, 2)) of the agents to the targets: formation's
        circle of radius 0.5 about the landmark from the smallest agent angle, line's
        segment (set at reset); the assignment is linear_sum_assignment's (the optimum)."""
        cdef int N = self.lsa_n, E = self.n_entities, a, j
        cdef double* pos = self.pos + 2 * E * i
        cdef double* ex = self.expected + 2 * N * i
        cdef double* cost = self.lsa_cost + N * N * i
        cdef double* dl = self.delta + N * i
        cdef double ang, tmin = 0.0, sep, th, total
        cdef int64_t* col
        if self.scenario == SC_FORMATION:
            sep = TWO_PI / N
            for a in range(N):
                ang = np_arctan2(pos[2 * a + 1] - pos[2 * N + 1], pos[2 * a] - pos[2 * N])
                if ang < 0:
                    ang = ang + TWO_PI
                if a == 0 or ang < tmin:
                    tmin = ang
            for j in range(N):
                th = tmin + j * sep
                ex[2 * j] = pos[2 * N] + 0.5 * np_unary(COS, th)
                ex[2 * j + 1] = pos[2 * N + 1] + 0.5 * np_unary(SIN, th)
        for a in range(N):
            for j in range(N):
                cost[N * a + j] = np_norm2(pos[2 * a] - ex[2 * j],
                                           pos[2 * a + 1] - ex[2 * j + 1])
        col = self._assign(i)
        for a in range(N):
            dl[a] = cost[N * a + col[a]]
        total = 0.0
        for a in range(N):
            self.lsa_work[3 * (N + 1) * i + a] = dl[a] if dl[a] < 2.0 else 2.0
        total = pairwise_sum(self.lsa_work + 3 * (N + 1) * i, N)
        return -(total / N)

    cdef int64_t* _assign(self, Py_ssize_t i) noexcept nogil:
        """The minimum-cost assignment of the square cost matrix of env i (Hungarian method,
        shortest augmenting paths): col[row], in the first N entries of the int scratch."""
        cdef int N = self.lsa_n, row, j, j0, j1, i0
        cdef double* cost = self.lsa_cost + N * N * i
        cdef double* u = self.lsa_work + 3 * (N + 1) * i
        cdef double* v = u + (N + 1)
        cdef double* minv = v + (N + 1)
        cdef int64_t* p = self.lsa_iwork + 3 * (N + 1) * i
        cdef int64_t* way = p + (N + 1)
        cdef int64_t* used = way + (N + 1)
        cdef double cur, dlt, INF = 1e308 * 10
        for j in range(N + 1):
            u[j] = 0.0
            v[j] = 0.0
            p[j] = 0
            way[j] = 0
        for row in range(1, N + 1):
            p[0] = row
            j0 = 0
            for j in range(N + 1):
                minv[j] = INF
                used[j] = 0
            while True:
                used[j0] = 1
                i0 = <int> p[j0]
                dlt = INF
                j1 = 0
                for j in range(1, N + 1):
                    if not used[j]:
                        cur = cost[N * (i0 - 1) + (j - 1)] - u[i0] - v[j]
                        if cur < minv[j]:
                            minv[j] = cur
                            way[j] = j0
                        if minv[j] < dlt:
                            dlt = minv[j]
                            j1 = j
                for j in range(N + 1):
                    if used[j]:
                        u[p[j]] += dlt
                        v[j] -= dlt
                    else:
                        minv[j] -= dlt
                j0 = j1
                if p[j0] == 0 or j1 == 0:
                    break
            while j0:
                j1 = <int> way[j0]
                p[j0] = p[j1]
                j0 = j1
        # col[row - 1] = column - 1, written over `way` (done with it)
        for j in range(1, N + 1):
            if p[j] > 0:
                way[p[j] - 1] = j - 1
        for j in range(N):
            p[j] = way[j]
        return p

    cdef double _treasure_reward(self, Py_ssize_t i, int a) noexcept nogil:
        cdef int A = self.n_agents, L = self.n_landmarks, E = self.n_entities, C = self.n_collectors
        cdef int b
        cdef double* pos = self.pos + 2 * E * i
        cdef double rew = 0.0, m = 0.0, d, cx, cy
        cdef bint first = True
        cdef int64_t h
        if a < C:
            for b in range(C):
                if b != a and self._is_collision(i, a, b):
                    rew = rew - 5.0
            h = self.holding[A * i + a]
            if h < 0:
                for b in range(L):
                    if self.alive[L * i + b]:
                        d = dist2(pos + 2 * (A + b), pos + 2 * a)
                        if first or d < m:
                            m = d
                            first = False
            else:
                for b in range(C, A):
                    if b - C == h:
                        d = dist2(pos + 2 * b, pos + 2 * a)
                        if first or d < m:
                            m = d
                            first = False
            if not first:
                rew = rew - 0.1 * m
            return rew + self.gbonus[i]
        for b in range(C):
            if self.holding[A * i + b] == a - C:
                d = dist2(pos + 2 * b, pos + 2 * a)
                if first or d < m:
                    m = d
                    first = False
        if not first:
            rew = rew - 0.1 * m
        else:
            # np.mean of the collectors' positions (axis 0: row by row), then the norm
            cx = pos[0]
            cy = pos[1]
            for b in range(1, C):
                cx = cx + pos[2 * b]
                cy = cy + pos[2 * b + 1]
            cx = cx / C
            cy = cy / C
            rew = rew - 0.1 * np_norm2(cx - pos[2 * a], cy - pos[2 * a + 1])
        return rew + self.gbonus[i]

    cdef double _world_comm_reward(self, Py_ssize_t i, int a) noexcept nogil:
        cdef int A = self.n_agents, E = self.n_entities, b, c, p
        cdef int f0 = E - self.n_food - self.n_forests, f1 = E - self.n_forests
        cdef double* pos = self.pos + 2 * E * i
        cdef double rew = 0.0, m = 0.0, d, x, bx
        cdef bint first = True
        if self.adversary[a]:
            # -0.1 * min(distance to the good agents) + 5 per good-adversary collision
            for b in range(A):
                if not self.adversary[b]:
                    d = dist2(pos + 2 * b, pos + 2 * a)
                    if first or d < m:
                        m = d
                        first = False
            rew = rew - 0.1 * m
            if self.collide[a]:
                for b in range(A):
                    if self.adversary[b]:
                        continue
                    for c in range(A):
                        if self.adversary[c] and self._is_collision(i, b, c):
                            rew = rew + 5
            return rew
        if self.collide[a]:
            for b in range(A):
                if self.adversary[b] and self._is_collision(i, b, a):
                    rew = rew - 5
        for p in range(2):
            x = fabs(pos[2 * a + p])
            if x < 0.9:
                bx = 0.0
            elif x < 1.0:
                bx = (x - 0.9) * 10
            else:
                bx = np_exp(2 * x - 2)
                if 10 < bx:
                    bx = 10
            rew = rew - 2 * bx
        for b in range(f0, f1):
            if self._is_collision(i, a, b):
                rew = rew + 2
        for b in range(f0, f1):
            d = dist2(pos + 2 * b, pos + 2 * a)
            if b == f0 or d < m:
                m = d
        return rew - 0.05 * m

    cdef bint _c_nonzero(self, Py_ssize_t i, int b) noexcept nogil:
        """not (agent.state.c == np.zeros(dim_c)).all()"""
        cdef int k, dc = self.dim_c
        cdef double* c = self.comm + dc * (self.n_agents * i + b)
        for k in range(dc):
            if c[k] != 0.0:
                return True
        return False

    cdef double _c_goal_sq(self, Py_ssize_t i, int b) noexcept nogil:
        """np.sum(np.square(c - goal colour)): sequential from 0 (numpy's sum of < 8)."""
        cdef int k, dc = self.dim_c
        cdef double* c = self.comm + dc * (self.n_agents * i + b)
        cdef int64_t g = self.goal[self.n_agents * i]
        cdef double acc = 0.0, d
        for k in range(dc):
            d = c[k] - (1.0 if k == g else 0.0)
            acc = acc + d * d
        return acc

    cdef double _reward(self, Py_ssize_t i, int a) noexcept nogil:
        cdef int A = self.n_agents, E = self.n_entities, b, c, p
        cdef double* pos = self.pos + 2 * E * i
        cdef double rew = 0.0, d0, d1, x, bx
        if self.scenario == SC_SIMPLE:
            d0 = pos[2 * a] - pos[2 * A]
            d1 = pos[2 * a + 1] - pos[2 * A + 1]
            return -(d0 * d0 + d1 * d1)
        if self.scenario == SC_SPREAD:
            # curriculum stage 0 (the stage a new env starts in): no collision penalty
            if self.collide[a] and not self.curriculum[i]:
                for b in range(A):
                    if b != a and self._is_collision(i, b, a):
                        rew = rew - 1.0
            return rew
        if self.scenario == SC_ADVERSARY:
            if self.adversary[a]:
                return -self._goal_dist(i, a)
            # pos_rew + adv_rew, adv_rew = 0 + the adversaries' goal distances in order
            rew = 0.0
            for b in range(A):
                if self.adversary[b]:
                    rew = rew + self._goal_dist(i, b)
            return -self._min_good_goal_dist(i) + rew
        if self.scenario == SC_SPEAKER:
            # -sum(square(listener.pos - goal_b.pos)) of the speaker's goal, for both
            d0 = pos[2] - pos[2 * (A + self.goal[A * i])]
            d1 = pos[3] - pos[2 * (A + self.goal[A * i]) + 1]
            return -(d0 * d0 + d1 * d1)
        if self.scenario == SC_REFERENCE:
            # -dist(goal_a = the other agent, goal_b = agent a's landmark)
            return -dist2(pos + 2 * (1 - a), pos + 2 * (A + self.goal[A * i + a]))
        if self.scenario == SC_CRYPTO:
            if self.adversary[a]:
                if self._c_nonzero(i, a):
                    rew = rew - self._c_goal_sq(i, a)
                return rew
            # adv_rew + good_rew: the good listeners' and the adversaries' comm vs the goal
            for b in range(A):
                if not self.adversary[b] and b != 2 and self._c_nonzero(i, b):
                    rew = rew - self._c_goal_sq(i, b)
            d0 = 0.0
            for b in range(A):
                if self.adversary[b] and self._c_nonzero(i, b):
                    d0 = d0 + self._c_goal_sq(i, b)
            return d0 + rew
        if self.scenario == SC_PUSH:
            if self.adversary[a]:
                return self._min_good_goal_dist(i) - self._goal_dist(i, a)
            return -self._goal_dist(i, a)
        if self.scenario == SC_WORLDCOMM:
            return self._world_comm_reward(i, a)
        if self.scenario == SC_TREASURE:
            return self._treasure_reward(i, a)
        if self.scenario == SC_TAG:
            if self.adversary[a]:
                if self.collide[a]:
                    for b in range(A):
                        if self.adversary[b]:
                            continue
                        for c in range(A):
                            if self.adversary[c] and self._is_collision(i, b, c):
                                rew = rew + 10
                return rew
            if self.collide[a]:
                for b in range(A):
                    if self.adversary[b] and self._is_collision(i, b, a):
                        rew = rew - 10
            for p in range(2):
                x = pos[2 * a + p]
                if x < 0:
                    x = -x
                if x < 0.9:
                    bx = 0.0
                elif x < 1.0:
                    bx = (x - 0.9) * 10
                else:
                    bx = np_exp(2 * x - 2)
                    if 10 < bx:             # min(np.exp(2 * x - 2), 10)
                        bx = 10
                rew = rew - bx
            return rew
        return rew

    cdef bint _is_terminal(self, Py_ssize_t i) noexcept nogil:
        cdef int A = self.n_agents, E = self.n_entities, l, a, b
        cdef double* pos = self.pos + 2 * E * i
        cdef double m, d
        cdef bint caught
        if not self.terminate_on_success[i]:
            return False
        if self.scenario == SC_SPREAD:
            for l in range(A, E):
                m = dist2(pos, pos + 2 * l)
                for a in range(1, A):
                    d = dist2(pos + 2 * a, pos + 2 * l)
                    if d < m:
                        m = d
                if m >= 0.1:
                    return False
            return True
        if self.scenario == SC_FORMATION or self.scenario == SC_LINE:
            for a in range(A):
                if not (self.delta[A * i + a] < 0.05):
                    return False
            return True
        if self.scenario == SC_TAG:
            for a in range(A):
                if self.adversary[a]:
                    continue
                caught = False
                for b in range(A):
                    if self.adversary[b] and self._is_collision(i, a, b):
                        caught = True
                        break
                if not caught:
                    return False
            return True
        return False

    cdef int _observe(self, Py_ssize_t i, EnvRow* r) noexcept nogil:
        """Every agent's observation; the number of agents whose count of values is not the
        reference's observation size (0: all right; a kernel bug otherwise)."""
        cdef int a, bad = 0
        cdef float* o
        for a in range(self.n_agents):
            o = <float*> (r.obs if a == 0 else self.output_row(a, i))
            if self._obs_agent(i, a, o) != self.odim[a]:
                bad += 1
        return bad

    cdef int _obs_agent(self, Py_ssize_t i, int a, float* o) noexcept nogil:
        cdef int A = self.n_agents, E = self.n_entities, dc = self.dim_c, b, k, n
        cdef int dcs = dc if dc > 0 else 1
        cdef int sc = self.scenario
        cdef double* pos = self.pos + 2 * E * i
        cdef double* vel = self.vel + 2 * E * i
        cdef double* cm = self.comm + dcs * A * i
        cdef double* gp = pos + 2 * (A + self.goal[A * i])
        cdef bint adv = self.adversary[a]
        n = 0
        if sc == SC_WORLDCOMM:
            return self._world_comm_obs(i, a, o)
        if sc == SC_TREASURE:
            return self._treasure_obs(i, a, o)
        if sc == SC_CRYPTO:
            # alice: [goal colour, key]; bob: [key, alice's comm]; eve: [alice's comm]
            # (colours: one-hot landmark colours of size dim_c)
            if a == 2:
                for k in range(dc):
                    o[n] = 1.0 if k == self.goal[A * i] else 0.0
                    n += 1
            if a != 0:
                for k in range(dc):
                    o[n] = 1.0 if k == self.goal[A * i + 1] else 0.0
                    n += 1
            if a != 2:
                for k in range(dc):
                    o[n] = <float> cm[dcs * 2 + k]
                    n += 1
            return n
        if sc == SC_SPEAKER and a == 0:             # the speaker: its goal's colour
            for k in range(3):
                o[k] = <float> self.lm_color[3 * self.goal[A * i] + k]
            return 3
        if sc != SC_ADVERSARY:                      # own velocity
            o[0] = <float> vel[2 * a]
            o[1] = <float> vel[2 * a + 1]
            n = 2
        if sc == SC_SPREAD or sc == SC_TAG or sc == SC_FORMATION or sc == SC_LINE:
            o[n] = <float> pos[2 * a]
            o[n + 1] = <float> pos[2 * a + 1]
            n += 2
        if (sc == SC_ADVERSARY or sc == SC_PUSH) and not adv:
            o[n] = <float> (gp[0] - pos[2 * a])     # goal, relative
            o[n + 1] = <float> (gp[1] - pos[2 * a + 1])
            n += 2
        if sc == SC_PUSH and not adv:               # own colour: 0.25, goal's +0.5
            for k in range(3):
                o[n + k] = <float> (0.75 if k == self.goal[A * i] + 1 else 0.25)
            n += 3
        for b in range(A, E):                       # landmarks, relative
            o[n] = <float> (pos[2 * b] - pos[2 * a])
            o[n + 1] = <float> (pos[2 * b + 1] - pos[2 * a + 1])
            n += 2
        if sc == SC_PUSH and not adv:               # landmark colours
            for b in range(3 * self.n_landmarks):
                o[n] = <float> self.lm_color[b]
                n += 1
        if sc == SC_SIMPLE or sc == SC_FORMATION or sc == SC_LINE:
            return n
        if sc == SC_SPEAKER or sc == SC_REFERENCE:
            if sc == SC_REFERENCE:                  # its goal landmark's colour
                for k in range(3):
                    o[n + k] = <float> self.lm_color[3 * self.goal[A * i + a] + k]
                n += 3
            for b in range(A):                      # the other agents' comm
                if b == a:
                    continue
                for k in range(dc):
                    o[n] = <float> cm[dcs * b + k]
                    n += 1
            return n
        for b in range(A):                          # other agents, relative
            if b == a:
                continue
            o[n] = <float> (pos[2 * b] - pos[2 * a])
            o[n + 1] = <float> (pos[2 * b + 1] - pos[2 * a + 1])
            n += 2
        if sc == SC_SPREAD:                         # other agents' comm
            for b in range(A):
                if b == a:
                    continue
                for k in range(dc):
                    o[n] = <float> cm[dcs * b + k]
                    n += 1
        if sc == SC_TAG:                            # good agents' velocities
            for b in range(A):
                if b == a or self.adversary[b]:
                    continue
                o[n] = <float> vel[2 * b]
                o[n + 1] = <float> vel[2 * b + 1]
                n += 2
        return n

    cdef void _argsort(self, double* key, int64_t* idx, int n) noexcept nogil:
        """idx = the stable ascending order of key[idx] (Python's sorted by key)."""
        cdef int k, j
        cdef int64_t v
        for k in range(1, n):
            v = idx[k]
            j = k - 1
            while j >= 0 and key[idx[j]] > key[v]:
                idx[j + 1] = idx[j]
                j -= 1
            idx[j + 1] = v

    cdef int _treasure_obs(self, Py_ssize_t i, int a, float* o) noexcept nogil:
        """[pos, vel, (holding one-hot)], the other agents nearest first (relative position,
        velocity, [deposit one-hot, holding one-hot]), the treasures nearest first (relative
        position, type one-hot; zeros once picked up, sorted last)."""
        cdef int A = self.n_agents, L = self.n_landmarks, E = self.n_entities
        cdef int C = self.n_collectors, D = self.n_types, b, k, k2, n = 0, m = 0
        cdef int M = max(max(A, L), 1)
        cdef double* pos = self.pos + 2 * E * i
        cdef double* vel = self.vel + 2 * E * i
        cdef double* key = self.skey + M * i
        cdef int64_t* idx = self.sidx + M * i
        cdef int64_t h
        o[0] = <float> pos[2 * a]
        o[1] = <float> pos[2 * a + 1]
        o[2] = <float> vel[2 * a]
        o[3] = <float> vel[2 * a + 1]
        n = 4
        if a < C:
            for k in range(D):
                o[n + k] = 1.0 if k == self.holding[A * i + a] else 0.0
            n += D
        for b in range(A):
            key[b] = dist2(pos + 2 * b, pos + 2 * a)
            if b != a:
                idx[m] = b
                m += 1
        self._argsort(key, idx, m)
        for k in range(m):
            b = <int> idx[k]
            o[n] = <float> (pos[2 * b] - pos[2 * a])
            o[n + 1] = <float> (pos[2 * b + 1] - pos[2 * a + 1])
            o[n + 2] = <float> vel[2 * b]
            o[n + 3] = <float> vel[2 * b + 1]
            n += 4
            h = self.holding[A * i + b] if b < C else -1
            for k2 in range(D):
                o[n + k2] = 1.0 if (b >= C and k2 == b - C) else 0.0
                o[n + D + k2] = 1.0 if (b < C and k2 == h) else 0.0
            n += 2 * D
        for b in range(L):
            key[b] = (dist2(pos + 2 * (A + b), pos + 2 * a) if self.alive[L * i + b]
                      else 1e6)
            idx[b] = b
        self._argsort(key, idx, L)
        for k in range(L):
            b = <int> idx[k]
            if self.alive[L * i + b]:
                o[n] = <float> (pos[2 * (A + b)] - pos[2 * a])
                o[n + 1] = <float> (pos[2 * (A + b) + 1] - pos[2 * a + 1])
                for k2 in range(D):
                    o[n + 2 + k2] = 1.0 if k2 == self.ttype[L * i + b] else 0.0
            else:
                for k2 in range(2 + D):
                    o[n + k2] = 0.0
            n += 2 + D
        return n

    cdef int _world_comm_obs(self, Py_ssize_t i, int a, float* o) noexcept nogil:
        """[vel, pos, landmarks, others, (good others' vel), in_forest, (leader's comm)]:
        other agents seen only when both share a forest, neither is in one, or a is the
        leader; the good agents end with in_forest then the velocities, without comm."""
        cdef int A = self.n_agents, E = self.n_entities, dc = self.dim_c, b, f, k, n = 0
        cdef int w0 = E - self.n_forests, W = self.n_forests, pv
        cdef double* pos = self.pos + 2 * E * i
        cdef double* vel = self.vel + 2 * E * i
        cdef double* cm = self.comm + dc * A * i
        cdef bint any_in = False, any_oth, shared, seen, adv = self.adversary[a]
        cdef float* ov
        o[0] = <float> vel[2 * a]
        o[1] = <float> vel[2 * a + 1]
        o[2] = <float> pos[2 * a]
        o[3] = <float> pos[2 * a + 1]
        n = 4
        for b in range(A, E):
            o[n] = <float> (pos[2 * b] - pos[2 * a])
            o[n + 1] = <float> (pos[2 * b + 1] - pos[2 * a + 1])
            n += 2
        for f in range(W):
            if self._is_collision(i, a, w0 + f):
                any_in = True
        # other positions at n, their velocities after (2 per good other)
        pv = n + 2 * (A - 1)
        if not adv:
            pv += W                      # the good agents' in_forest comes before
        for b in range(A):
            if b == a:
                continue
            shared = False
            any_oth = False
            for f in range(W):
                if self._is_collision(i, b, w0 + f):
                    any_oth = True
                    if self._is_collision(i, a, w0 + f):
                        shared = True
            seen = shared or (not any_in and not any_oth) or a == 0
            o[n] = <float> (pos[2 * b] - pos[2 * a]) if seen else 0.0
            o[n + 1] = <float> (pos[2 * b + 1] - pos[2 * a + 1]) if seen else 0.0
            n += 2
            if not self.adversary[b]:
                o[pv] = <float> vel[2 * b] if seen else 0.0
                o[pv + 1] = <float> vel[2 * b + 1] if seen else 0.0
                pv += 2
        if adv:
            n = pv
        for f in range(W):
            o[n] = 1.0 if self._is_collision(i, a, w0 + f) else -1.0
            n += 1
        if not adv:
            return pv
        for k in range(dc):
            o[n] = <float> cm[k]
            n += 1
        return n

    # ------------------------------------------------------------------ snapshots
    state_arrays = STATE_ARRAYS



cdef class TreasurePool(MPEPool):
    """collect_treasure_v1's pool: MPEPool whose snapshots also hold each env's
    world.np_random (the PCG64 copy post_step draws respawns from)."""

    state_arrays = None

    def _env_state(self, Py_ssize_t i):
        out = {name: getattr(self, name)[i].tobytes() for name in STATE_ARRAYS}
        out["world_rng"] = self.world_gens[i].state
        return out

    def _check_env_state(self, Py_ssize_t i, state):
        from cypool.api import state_bytes, state_dict
        state_dict(state, "collect_treasure state", STATE_ARRAYS + ("world_rng",))
        out = {}
        for name in STATE_ARRAYS:
            a = getattr(self, name)
            out[name] = state_bytes(state[name], f"state[{name!r}]", a[i].nbytes)
        probe = np.random.PCG64(0)
        try:
            probe.state = state["world_rng"]
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(f"collect_treasure state['world_rng']: {exc}") from None
        out["world_rng"] = probe.state
        return out

    def _set_env_state(self, Py_ssize_t i, state):
        for name in STATE_ARRAYS:
            a = getattr(self, name)
            a[i] = np.frombuffer(state[name], a.dtype).reshape(a.shape[1:])
        self.world_gens[i].state = state["world_rng"]
