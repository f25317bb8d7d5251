# The fast path of the goal functions (compute_reward on the batch HER sends): two
# C-contiguous, aligned, native-order float64 arrays of one shape (n, g) are read in place;
# anything else (other dtypes, layouts, shapes, a single pair) returns None from the
# kernels' batch_* functions and takes the family's general numpy path. A family's kernel is
# a goal_kernel run by run_goal_batch (finiteness first, in the same pass); GoalCall binds one
# to a pool's setting for env.call's fast path. Needs `cimport numpy as cnp` and
# `import numpy as np` in the includer.
from libc.math cimport sqrt, nextafter, INFINITY
from libc.stdint cimport uint64_t
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM


cdef inline bint goal_batch(object a, object d, Py_ssize_t g) noexcept:
    """Whether (a, d) is such a pair of (n, g) batches."""
    if type(a) is not cnp.ndarray or type(d) is not cnp.ndarray:
        return False
    cdef cnp.ndarray x = <cnp.ndarray> a
    cdef cnp.ndarray y = <cnp.ndarray> d
    if cnp.PyArray_NDIM(x) != 2 or cnp.PyArray_NDIM(y) != 2:
        return False
    if cnp.PyArray_TYPE(x) != cnp.NPY_DOUBLE or cnp.PyArray_TYPE(y) != cnp.NPY_DOUBLE:
        return False
    if not (cnp.PyArray_ISBEHAVED_RO(x) and cnp.PyArray_ISBEHAVED_RO(y)
            and cnp.PyArray_IS_C_CONTIGUOUS(x) and cnp.PyArray_IS_C_CONTIGUOUS(y)):
        return False
    return (cnp.PyArray_DIM(x, 1) == g and cnp.PyArray_DIM(y, 1) == g
            and cnp.PyArray_DIM(x, 0) == cnp.PyArray_DIM(y, 0))


ctypedef struct GoalRows:
    cnp.npy_intp n                  # rows
    const double* a                 # achieved goals, n x g
    const double* d                 # desired goals, n x g


cdef inline object goal_rows(object a, object d, Py_ssize_t g, int typenum, GoalRows* r):
    """The (n,) output array of numpy type typenum for the batch (a, d), r filled in; None
    when (a, d) is not such a batch."""
    if not goal_batch(a, d, g):
        return None
    r.n = cnp.PyArray_DIM(<cnp.ndarray> a, 0)
    r.a = <const double*> cnp.PyArray_DATA(<cnp.ndarray> a)
    r.d = <const double*> cnp.PyArray_DATA(<cnp.ndarray> d)
    return cnp.PyArray_EMPTY(1, &r.n, typenum, 0)


cdef inline bint all_finite(const double* x, Py_ssize_t m) noexcept nogil:
    """Whether no value of x is NaN or infinite (an all-ones exponent), on the bits: the
    exponent field plus 2**52 carries into bit 63 only when it is all ones. An and, an add
    and an or per value, which the compiler vectorises (isfinite's early exit is not)."""
    cdef const uint64_t* b = <const uint64_t*> x
    cdef uint64_t hit = 0
    cdef Py_ssize_t k
    for k in range(m):
        hit |= (b[k] & 0x7ff0000000000000ULL) + 0x0010000000000000ULL
    return (hit >> 63) == 0


cdef inline int first_nonfinite(const double* a, const double* d, Py_ssize_t m) noexcept nogil:
    """0 when every value of both m-value arrays is finite, else 1 (a) or 2 (d)."""
    if not all_finite(a, m):
        return 1
    return 0 if all_finite(d, m) else 2


cdef inline int goals_behind(const double* x, Py_ssize_t m, const GoalRows* r,
                             Py_ssize_t g) noexcept nogil:
    """0 when the m results x are finite or come from finite goals (squares that overflow);
    else first_nonfinite's code of r's (n, g) goals. For kernels whose result is NaN or
    infinite for every NaN or infinite goal: they check fewer values than the goals."""
    if all_finite(x, m):
        return 0
    return first_nonfinite(r.a, r.d, g * r.n)


cdef inline double sqrt_at_most(double t) noexcept nogil:
    """The largest double s with sqrt(s) <= t (t >= 0, finite): sqrt is correctly rounded, so
    monotone, and sqrt(s) > t exactly when s > this bound. The sparse rewards compare squared
    distances with it and take no square root."""
    cdef double s = t * t
    while s > 0.0 and sqrt(s) > t:
        s = nextafter(s, 0.0)
    while sqrt(nextafter(s, INFINITY)) <= t:
        s = nextafter(s, INFINITY)
    return s


cdef inline void neg_sqrt(double* x, Py_ssize_t n) noexcept nogil:
    """x = -sqrt(x), in a loop of its own so that it runs on packed square roots."""
    cdef Py_ssize_t i
    for i in range(n):
        x[i] = -sqrt(x[i])


cdef inline object nonfinite_error(int which):
    """The general path's error for a NaN or infinite goal."""
    return ValueError(f"{'achieved_goal' if which == 1 else 'desired_goal'} contains NaN "
                      "or infinite values")


# A family's goal function on a checked batch: r's n rows into out (n values of the batch's
# output type), work (the kernel's scratch: `work` doubles per row), prm its settings; 0, or
# first_nonfinite's code for a batch with NaN or infinite goals. A kernel whose results are
# non-finite for every such goal may check its results instead and the goals only then:
# squared distances take a sixth (Fetch) to a fifteenth (HandReach) of the goals' values.
ctypedef int (*goal_kernel)(const GoalRows* r, void* out, double* work,
                            const double* prm) noexcept nogil

# Batches of fewer values than this run without releasing the GIL: the kernels take well
# under a microsecond on HER's batches, less than releasing and taking back the GIL costs
cdef enum:
    GIL_FREE_VALUES = 1 << 16
    GOAL_PRM = 4                    # settings a GoalCall keeps
    GOAL_CHUNK = 256                # rows of squared distances on a kernel's stack


cdef object run_goal_batch(object a, object d, Py_ssize_t g, int typenum, Py_ssize_t work,
                           goal_kernel kernel, const double* prm):
    """kernel's (n,) results of type typenum on the batch (a, d) of (n, g) goals, or None
    when (a, d) is not such a batch; NaN/inf goals raise the general path's ValueError."""
    cdef GoalRows r
    out = goal_rows(a, d, g, typenum, &r)
    if out is None:
        return None
    cdef cnp.npy_intp nw = work * r.n
    scratch = cnp.PyArray_EMPTY(1, &nw, cnp.NPY_DOUBLE, 0) if nw else None
    cdef double* w = <double*> cnp.PyArray_DATA(scratch) if nw else NULL
    cdef void* o = cnp.PyArray_DATA(out)
    cdef int bad
    if (g + work) * r.n < GIL_FREE_VALUES:
        bad = kernel(&r, o, w, prm)
    else:
        with nogil:
            bad = kernel(&r, o, w, prm)
    if bad:
        raise nonfinite_error(bad)
    return out


cdef class GoalCall:
    """A goal function bound to one setting for a pool of `n` envs (Pool.bind_method, the
    fast path of env.call): called as the reference's compute_reward(achieved_goal,
    desired_goal, info), HER's batch runs in the kernel and the result is given once per env;
    any other call is general(*args, **kwargs)'s (the family's per-env tuple)."""
    cdef goal_kernel kernel
    cdef double prm[GOAL_PRM]
    cdef Py_ssize_t g, work, n
    cdef int typenum
    cdef object general

    def __call__(self, *args, **kwargs):
        if not kwargs and 2 <= len(args) <= 3:
            out = run_goal_batch(args[0], args[1], self.g, self.typenum, self.work,
                                 self.kernel, self.prm)
            if out is not None:
                return repeated(out, self.n)
        return self.general(*args, **kwargs)


cdef tuple repeated(object x, Py_ssize_t n):
    """(x,) * n, built in place."""
    cdef tuple t = PyTuple_New(n)
    cdef Py_ssize_t i
    for i in range(n):
        Py_INCREF(x)
        PyTuple_SET_ITEM(t, i, x)
    return t


cdef GoalCall goal_call(goal_kernel kernel, Py_ssize_t g, int typenum, Py_ssize_t work,
                        prm, Py_ssize_t n, object general):
    """A GoalCall of kernel with settings prm (at most GOAL_PRM numbers)."""
    if len(prm) > GOAL_PRM or n < 0:
        raise ValueError("goal_call: too many settings or a negative pool size")
    cdef GoalCall c = GoalCall.__new__(GoalCall)
    c.kernel, c.g, c.typenum, c.work, c.n, c.general = kernel, g, typenum, work, n, general
    cdef Py_ssize_t k
    for k in range(len(prm)):
        c.prm[k] = prm[k]
    return c
