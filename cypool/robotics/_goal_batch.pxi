# The fast path of the goal functions (compute_reward on the batch HER sends): two
# C-contiguous, aligned, native-order float64 arrays of one shape (n, g) are read in place;
# anything else (other dtypes, layouts, shapes, a single pair) returns None from the
# kernels' batch_* functions and takes the family's general numpy path. goal_rows gives a
# batch's rows and output array; first_nonfinite is checked in the kernel's nogil pass. Needs
# `cimport numpy as cnp` and `import numpy as np` in the includer.
from libc.stdint cimport uint64_t


cdef inline bint goal_batch(object a, object d, Py_ssize_t g) noexcept:
    """Whether (a, d) is such a pair of (n, g) batches."""
    if type(a) is not np.ndarray or type(d) is not np.ndarray:
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


cdef inline object nonfinite_error(int which):
    """The general path's error for a NaN or infinite goal."""
    return ValueError(f"{'achieved_goal' if which == 1 else 'desired_goal'} contains NaN "
                      "or infinite values")
