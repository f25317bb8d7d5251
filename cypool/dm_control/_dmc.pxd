# What every dm_control task kernel shares: numpy's legacy RandomState draws, dm_control's
# physics calls (reset, after_reset, step), its joint randomizer and rewards.tolerance, each
# rounding as dm_control's numpy code does. Compiled with -ffp-contract=off and
# -fno-builtin-pow (numpy's float64 scalar x**2 is libm's pow, which gcc would fold to x*x).
cimport numpy as cnp
from libc.math cimport sqrt, log, pow, fabs, INFINITY, M_PI
from cypool.mujoco._mj.mujoco cimport (mjModel, mjData, mjJNT_FREE, mjJNT_BALL, mjJNT_SLIDE,
                                       mjJNT_HINGE, mju_axisAngle2Quat)
from cypool.mujoco._task cimport (MjEnv, sim_reset_data, sim_forward, sim_dmc_step, np_norm)
from cypool._core._numpy_loops cimport NpLoop, numpy_loop, np_unary


# MjEnv.tstate layout: the legacy RandomState's Gaussian cache, then the task's own values
cdef enum:
    T_HAS_GAUSS = 0
    T_GAUSS = 1
    T_RESTORED = 2      # 1.0 after set_state (MjPool.set_restore_slot): rebuild the arena first
    T_TASK = 3

# ------------------------------------------------------------------ numpy float64 ufunc loops
# numpy's float64 exp/log1p/sin/cos/arctan2 (the all-'d' entry of the ufunc: the SIMD kernel
# numpy dispatched for this CPU, which differs from glibc's on AVX-512 for exp and log1p),
# called one value at a time (cypool/_core/_numpy_loops.pxd: np_unary, np_binary).

# cblas_dgemv, LP64 and ILP64
ctypedef void (*dgemv32_t)(int order, int trans, int m, int n, double alpha, const double* a,
                           int lda, const double* x, int incx, double beta, double* y,
                           int incy) noexcept nogil
ctypedef void (*dgemv64_t)(int order, int trans, long long m, long long n, double alpha,
                           const double* a, long long lda, const double* x, long long incx,
                           double beta, double* y, long long incy) noexcept nogil

ctypedef struct NpMath:
    dgemv32_t dgemv32
    dgemv64_t dgemv64
    NpLoop exp
    NpLoop log1p
    NpLoop sin
    NpLoop cos
    NpLoop arctan2


cdef inline int init_math(NpMath* mm) except -1:
    import numpy as np
    from cypool.dm_control._config import dgemv_routine
    address, ilp64 = dgemv_routine()
    mm.dgemv32 = NULL
    mm.dgemv64 = NULL
    if address and ilp64:
        mm.dgemv64 = <dgemv64_t> <size_t> address
    elif address:
        mm.dgemv32 = <dgemv32_t> <size_t> address
    mm.exp = numpy_loop(np.exp, "d->d")
    mm.log1p = numpy_loop(np.log1p, "d->d")
    mm.sin = numpy_loop(np.sin, "d->d")
    mm.cos = numpy_loop(np.cos, "d->d")
    mm.arctan2 = numpy_loop(np.arctan2, "dd->d")
    return 0


cdef inline void vec3_dot_mat3(NpMath* mm, const double* v, const double* a,
                               double* out) noexcept nogil:
    """v.dot(a) for a float64 3-vector and a C-contiguous 3x3 matrix, as numpy computes it:
    cblas_dgemv(RowMajor, Trans, 3, 3, 1.0, a, 3, v, 1, 0.0, out, 1) (cblasfuncs.c's vector
    times matrix), through numpy's own BLAS; a left-to-right sum without one."""
    cdef Py_ssize_t i, j
    if mm.dgemv64 != NULL:
        mm.dgemv64(101, 112, 3, 3, 1.0, a, 3, v, 1, 0.0, out, 1)
    elif mm.dgemv32 != NULL:
        mm.dgemv32(101, 112, 3, 3, 1.0, a, 3, v, 1, 0.0, out, 1)
    else:
        for j in range(3):
            out[j] = 0.0
            for i in range(3):
                out[j] += v[i] * a[3 * i + j]


# ------------------------------------------------------------------ legacy RandomState
# e.rng is numpy's MT19937 seeded as RandomState(seed) seeds it (_legacy_seeding): its
# next_double is RandomState's 53-bit double, next_uint32 its raw word.
cdef inline double rs_rand(MjEnv* e) noexcept nogil:
    """random.rand()."""
    return e.rng.next_double(e.rng.state)


cdef inline double rs_uniform(MjEnv* e, double lo, double hi) noexcept nogil:
    """random.uniform(lo, hi): lo + (hi - lo) * double (the range computed first)."""
    cdef double rng = hi - lo
    return lo + rng * rs_rand(e)


cdef inline double rs_gauss(MjEnv* e) noexcept nogil:
    """random.randn() / standard_normal(): the polar method, one value cached for the next
    call (the cache lives in e.tstate and survives resets, as RandomState's does)."""
    cdef double x1, x2, r2, f
    if e.tstate[T_HAS_GAUSS] != 0:
        e.tstate[T_HAS_GAUSS] = 0.0
        f = e.tstate[T_GAUSS]
        e.tstate[T_GAUSS] = 0.0
        return f
    while True:
        x1 = 2.0 * rs_rand(e) - 1.0
        x2 = 2.0 * rs_rand(e) - 1.0
        r2 = x1 * x1 + x2 * x2
        if r2 < 1.0 and r2 != 0.0:
            break
    f = sqrt(-2.0 * log(r2) / r2)
    e.tstate[T_GAUSS] = f * x1
    e.tstate[T_HAS_GAUSS] = 1.0
    return f * x2


cdef inline unsigned long rs_masked(MjEnv* e, unsigned long rng) noexcept nogil:
    """A value in [0, rng] by masked rejection on 32-bit words (RandomState.randint for
    ranges below 2**32, shuffle, choice without p)."""
    cdef unsigned long mask = rng, v
    if rng == 0:
        return 0
    mask |= mask >> 1
    mask |= mask >> 2
    mask |= mask >> 4
    mask |= mask >> 8
    mask |= mask >> 16
    while True:
        v = e.rng.next_uint32(e.rng.state) & mask
        if v <= rng:
            return v


# ------------------------------------------------------------------ physics
cdef inline int dmc_reset_begin(MjEnv* e) noexcept nogil:
    """Physics.reset(): mj_resetData, then mj_forward with actuation disabled."""
    if sim_reset_data(e):
        return 1
    return sim_forward(e, True)


cdef inline int after_reset(MjEnv* e) noexcept nogil:
    """Physics.after_reset(): mj_forward with actuation disabled."""
    return sim_forward(e, True)


cdef inline int dmc_step(MjEnv* e, int n_sub) noexcept nogil:
    """Task.before_step (ctrl <- action, unclipped) and Physics.step(n_sub_steps)."""
    cdef Py_ssize_t k
    if e.tstate[T_RESTORED] != 0:
        # restored from a snapshot (its mjData buffer): mj_step1 rebuilds the contacts and
        # constraint rows the last one left in the arena, which mj_step2 reads; with the
        # snapshot's ctrl, as the last mj_step1 ran
        e.tstate[T_RESTORED] = 0.0
        if e.guard.step1(e.m, e.d, e.err):
            return 1
    for k in range(e.m.nu):
        e.d.ctrl[k] = e.act[k]
    return sim_dmc_step(e, n_sub)


cdef inline void randomize_joints(MjEnv* e) noexcept nogil:
    """randomizers.randomize_limited_and_rotational_joints, joint by joint in model order."""
    cdef const mjModel* m = e.m
    cdef double* qpos = e.d.qpos
    cdef Py_ssize_t j, k, a
    cdef int t
    cdef double lo, hi, nrm, angle
    cdef double v[4]
    for j in range(m.njnt):
        t = m.jnt_type[j]
        a = m.jnt_qposadr[j]
        lo = m.jnt_range[2 * j]
        hi = m.jnt_range[2 * j + 1]
        if m.jnt_limited[j]:
            if t == mjJNT_HINGE or t == mjJNT_SLIDE:
                qpos[a] = rs_uniform(e, lo, hi)
            elif t == mjJNT_BALL:
                for k in range(3):
                    v[k] = rs_gauss(e)
                nrm = np_norm(e, v, 3)
                for k in range(3):
                    v[k] = v[k] / nrm
                angle = rs_rand(e) * hi
                mju_axisAngle2Quat(qpos + a, v, angle)
        else:
            if t == mjJNT_HINGE:
                qpos[a] = rs_uniform(e, -M_PI, M_PI)
            elif t == mjJNT_BALL:
                for k in range(4):
                    v[k] = rs_gauss(e)
                nrm = np_norm(e, v, 4)
                for k in range(4):
                    qpos[a + k] = v[k] / nrm
            elif t == mjJNT_FREE:
                for k in range(4):
                    v[k] = rs_rand(e)
                nrm = np_norm(e, v, 4)
                for k in range(4):
                    qpos[a + 3 + k] = v[k] / nrm


# ------------------------------------------------------------------ rewards.tolerance
cdef enum:
    SIG_GAUSSIAN, SIG_LINEAR, SIG_QUADRATIC, SIG_LONG_TAIL, SIG_RECIPROCAL


cdef inline double tolerance(NpMath* mm, double x, double lower, double upper, double margin,
                             int sigmoid, double scale, bint scalar) noexcept nogil:
    """rewards.tolerance(x, (lower, upper), margin, sigmoid) for one value; `scale` is the
    sigmoid's scale as dm_control computes it from value_at_margin (in numpy, by the family),
    `scalar`: x is a numpy scalar (its **2 is libm's pow) rather than an array element
    (np.square)."""
    cdef double d, y
    cdef bint in_bounds = lower <= x and x <= upper
    if margin == 0:
        return 1.0 if in_bounds else 0.0
    if in_bounds:
        return 1.0
    d = ((lower - x) if x < lower else (x - upper)) / margin
    y = d * scale
    if sigmoid == SIG_GAUSSIAN:
        return np_unary(mm.exp, -0.5 * (pow(y, 2.0) if scalar else y * y))
    if sigmoid == SIG_LINEAR:
        return 1 - y if fabs(y) < 1 else 0.0
    if sigmoid == SIG_LONG_TAIL:
        return 1 / ((pow(y, 2.0) if scalar else y * y) + 1)
    if sigmoid == SIG_RECIPROCAL:
        return 1 / (fabs(d) * scale + 1)
    # quadratic
    return 1 - (pow(y, 2.0) if scalar else y * y) if fabs(y) < 1 else 0.0


# every task's parameter row starts with its n_sub_steps
cdef enum:
    P_NSUB = 0
    P_FIRST = 1


cdef inline double np_sum(const double* a, Py_ssize_t n) noexcept nogil:
    """a.sum() of a contiguous float64 array as numpy adds it (pairwise: sequential below 8
    elements, eight accumulators up to 128, halves above)."""
    cdef Py_ssize_t i, j, n2
    cdef double res
    cdef double r[8]
    if n < 8:
        res = -0.0
        for i in range(n):
            res += a[i]
        return res
    if n <= 128:
        for j in range(8):
            r[j] = a[j]
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                r[j] += a[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += a[i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return np_sum(a, n2) + np_sum(a + n2, n - n2)


cdef inline double small_control_mean(NpMath* mm, MjEnv* e, double scale) noexcept nogil:
    """rewards.tolerance(physics.control(), margin=1, value_at_margin=0,
    sigmoid='quadratic').mean() (nu <= 64)."""
    cdef double v[64]
    cdef Py_ssize_t k, n = e.m.nu
    for k in range(n):
        v[k] = tolerance(mm, e.d.ctrl[k], 0, 0, 1, SIG_QUADRATIC, scale, False)
    return np_sum(v, n) / n
