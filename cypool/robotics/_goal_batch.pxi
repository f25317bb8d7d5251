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


cdef extern from "_goal_loops.h" nogil:
    # the kernels' row loops (AVX2 where the CPU has it): rows [0, n) of (a, d), g = 2, 3
    # or 15 values each, written to out as mode says; whether a squared distance is NaN or
    # infinite
    enum:
        GL_SPARSE_F     # float32 s > bound ? -1 : -0
        GL_NEG_SQRT     # float64 -sqrt(s)
        GL_WITHIN       # float64 s <= bound ? 1 : 0
    int gl_rows2(const double* a, const double* d, void* out, Py_ssize_t n, int mode,
                 double bound)
    int gl_rows3(const double* a, const double* d, void* out, Py_ssize_t n, int mode,
                 double bound)
    int gl_rows15(const double* a, const double* d, void* out, Py_ssize_t n, int mode,
                  double bound)
    # whether any of the m values of x is NaN or infinite
    int gl_nonfinite(const double* x, Py_ssize_t m)
    # x = sqrt(x), n values (packed square roots)
    void gl_sqrt_n(double* x, Py_ssize_t n)
    # o = 0 where s <= bound and 2 r < rbound (r NULL: true), else -1 (float32)
    void gl_both_within(const double* s, double bound, const double* r, double rbound,
                        float* o, Py_ssize_t n)


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


cdef inline int first_nonfinite(const double* a, const double* d, Py_ssize_t m) noexcept nogil:
    """0 when every value of both m-value arrays is finite, else 1 (a) or 2 (d)."""
    if gl_nonfinite(a, m):
        return 1
    return 2 if gl_nonfinite(d, m) else 0


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


cdef inline double sqrt_below(double t) noexcept nogil:
    """The largest double s with sqrt(s) < t (t finite; -inf when t <= 0): sqrt(s) < t
    exactly when sqrt(s) <= the double before t."""
    return sqrt_at_most(nextafter(t, 0.0)) if t > 0.0 else -INFINITY


cdef inline object nonfinite_error(int which):
    """The general path's error for a NaN or infinite goal."""
    return ValueError(f"{'achieved_goal' if which == 1 else 'desired_goal'} contains NaN "
                      "or infinite values")


# A family's goal function on a checked batch: r's n rows into out (n values of the batch's
# output type), work (the kernel's scratch: `work` doubles per row), prm its settings; 0, or
# first_nonfinite's code for a batch with NaN or infinite goals. A kernel whose results are
# non-finite for every such goal may check its results instead and the goals only then
# (the gl_rows loops do, in the same pass): squared distances take a sixth (Fetch) to a
# fifteenth (HandReach) of the goals' values.
ctypedef int (*goal_kernel)(const GoalRows* r, void* out, double* work,
                            const double* prm) noexcept nogil

# Batches of fewer values than this run without releasing the GIL: the kernels take well
# under a microsecond on HER's batches, less than releasing and taking back the GIL costs
cdef enum:
    GIL_FREE_VALUES = 1 << 16
    GOAL_PRM = 5                    # settings a GoalCall keeps
    GOAL_STACK_WORK = 1024          # scratch doubles taken on the stack (3 x 256 rows)


cdef object run_goal_batch(object a, object d, Py_ssize_t g, int typenum, Py_ssize_t work,
                           goal_kernel kernel, const double* prm):
    """kernel's (n,) results of type typenum on the batch (a, d) of (n, g) goals, or None
    when (a, d) is not such a batch; NaN/inf goals raise the general path's ValueError."""
    cdef GoalRows r
    out = goal_rows(a, d, g, typenum, &r)
    if out is None:
        return None
    cdef cnp.npy_intp nw = work * r.n
    cdef double small[GOAL_STACK_WORK]         # HER's batches' scratch: no array to make
    scratch = cnp.PyArray_EMPTY(1, &nw, cnp.NPY_DOUBLE, 0) if nw > GOAL_STACK_WORK else None
    cdef double* w = <double*> cnp.PyArray_DATA(scratch) if nw > GOAL_STACK_WORK else small
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
    """A goal function bound to one setting for a pool of `n` envs. Its bound method
    `compute_reward` is Pool.bind_method's (the fast path of env.call; a method takes a fast
    call: no argument tuple or keyword dict is made): called as the reference's
    compute_reward(achieved_goal, desired_goal, info), HER's batch runs in the kernel and the
    result is given once per env; other goals go to general(achieved_goal, desired_goal,
    info) (the family's per-env tuple)."""
    cdef goal_kernel kernel
    cdef double prm[GOAL_PRM]
    cdef Py_ssize_t g, work, n
    cdef int typenum
    cdef object general

    def compute_reward(self, achieved_goal, desired_goal, info=None):
        out = run_goal_batch(achieved_goal, desired_goal, self.g, self.typenum, self.work,
                             self.kernel, self.prm)
        if out is None:
            return self.general(achieved_goal, desired_goal, info)
        return repeated(out, self.n)


cdef tuple repeated(object x, Py_ssize_t n):
    """(x,) * n, built in place."""
    cdef tuple t = PyTuple_New(n)
    cdef Py_ssize_t i
    for i in range(n):
        Py_INCREF(x)
        PyTuple_SET_ITEM(t, i, x)
    return t


cdef object goal_call(goal_kernel kernel, Py_ssize_t g, int typenum, Py_ssize_t work,
                      prm, Py_ssize_t n, object general):
    """GoalCall(kernel with settings prm, at most GOAL_PRM numbers).compute_reward."""
    if len(prm) > GOAL_PRM or n < 0:
        raise ValueError("goal_call: too many settings or a negative pool size")
    cdef GoalCall c = GoalCall.__new__(GoalCall)
    c.kernel, c.g, c.typenum, c.work, c.n, c.general = kernel, g, typenum, work, n, general
    cdef Py_ssize_t k
    for k in range(len(prm)):
        c.prm[k] = prm[k]
    return c.compute_reward
