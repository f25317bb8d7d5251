# Arithmetic that rounds exactly as numpy does, so rewards and observations are bit-identical to
# gymnasium's. Compiled without -ffast-math and with -ffp-contract=off (setup.py).
from libc.math cimport INFINITY
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_uniform, random_standard_normal


ctypedef fused real:
    float
    double


cdef inline real _sq(const double* a, Py_ssize_t k, double lo, double hi, real kind) noexcept nogil:
    """clip(a[k], lo, hi) converted to `kind`'s type, squared in that type."""
    cdef real f = <real> clip(a[k], lo, hi)
    return f * f


cdef inline real _pairwise_sq(const double* a, Py_ssize_t n, double lo, double hi,
                              real kind) noexcept nogil:
    """numpy's pairwise sum (blocks of 8 up to 128 elements, halves above) of the squares
    _sq(a, k, lo, hi), accumulated in `kind`'s type, computed as it goes: no buffer, so any
    length works."""
    cdef Py_ssize_t i, j, n2
    cdef real res
    cdef real r[8]
    if n < 8:
        res = 0.0
        for i in range(n):
            res += _sq(a, i, lo, hi, kind)
        return res
    if n <= 128:
        for j in range(8):
            r[j] = _sq(a, j, lo, hi, kind)
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                r[j] += _sq(a, i + j, lo, hi, kind)
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += _sq(a, i, lo, hi, kind)
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise_sq(a, n2, lo, hi, kind) + _pairwise_sq(a + n2, n - n2, lo, hi, kind)


cdef inline double sum_sq(const double* a, Py_ssize_t n, double lo, double hi) noexcept nogil:
    """np.sum(np.square(np.clip(a, lo, hi))) for float64 a; lo, hi = -INFINITY, INFINITY
    leaves every value as it is (NaN and -0.0 included)."""
    return 0.0 + _pairwise_sq(a, n, lo, hi, <double> 0.0)


cdef inline double ctrl_cost(double weight, const double* act, Py_ssize_t n, int f32) noexcept nogil:
    """weight * np.sum(np.square(action)), rounding as numpy does for the action's dtype: a
    float32 action is squared and summed in float32, and the Python-float weight then
    multiplies in float32 too (NEP 50)."""
    cdef float s
    if not f32:
        return weight * sum_sq(act, n, -INFINITY, INFINITY)
    s = <float> 0.0 + _pairwise_sq(act, n, -INFINITY, INFINITY, <float> 0.0)
    return <double> (<float> weight * s)


cdef inline double clip(double x, double lo, double hi) noexcept nogil:
    """np.clip for one value (NaN propagates)."""
    if x != x:
        return x
    if x < lo:
        x = lo
    if x > hi:
        x = hi
    return x


cdef inline void uniform_fill(bitgen_t* rng, double lo, double hi, double* out,
                              Py_ssize_t n) noexcept nogil:
    """Generator.uniform(lo, hi, n)."""
    cdef Py_ssize_t i
    cdef double rng_range = hi - lo
    for i in range(n):
        out[i] = random_uniform(rng, lo, rng_range)


cdef inline void normal_fill(bitgen_t* rng, double* out, Py_ssize_t n) noexcept nogil:
    """Generator.standard_normal(n)."""
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = random_standard_normal(rng)


cdef inline bint all_finite(const double* a, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        if a[i] - a[i] != 0.0:
            return False
    return True
