# Draws from an env's numpy stream as gymnasium's Generator calls make them (numpy's C
# distributions), for the Box2D pools and their kernels' cyb2::Draws (_box2d_kernel.hpp).
from libc.stdint cimport int64_t, uint64_t
cimport numpy as cnp
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_uniform, random_standard_uniform

cdef extern from "numpy/random/distributions.h" nogil:
    void random_bounded_uint64_fill(bitgen_t* bitgen_state, uint64_t off, uint64_t rng,
                                    cnp.npy_intp cnt, bint use_masked, uint64_t* out)

cdef extern from "_box2d_kernel.hpp" namespace "cyb2" nogil:
    cdef struct Draws:
        void* state
        double (*uniform)(void* state, double low, double high) noexcept nogil
        double (*random)(void* state) noexcept nogil
        int64_t (*integers)(void* state, int64_t low, int64_t high) noexcept nogil


cdef inline double uniform(bitgen_t* rng, double low, double high) noexcept nogil:
    # Generator.uniform(low, high)
    return random_uniform(rng, low, high - low)


cdef inline int64_t integers(bitgen_t* rng, int64_t low, int64_t high) noexcept nogil:
    # Generator.integers(low, high) for int64: rng = high - low - 1 (0: nothing drawn),
    # offset low, Lemire's method
    cdef uint64_t out = 0
    random_bounded_uint64_fill(rng, <uint64_t> low, <uint64_t> (high - low - 1), 1, False,
                               &out)
    return <int64_t> out


cdef inline double _uniform(void* state, double low, double high) noexcept nogil:
    return uniform(<bitgen_t*> state, low, high)


cdef inline double _random(void* state) noexcept nogil:
    return random_standard_uniform(<bitgen_t*> state)


cdef inline int64_t _integers(void* state, int64_t low, int64_t high) noexcept nogil:
    return integers(<bitgen_t*> state, low, high)


cdef inline Draws numpy_draws(bitgen_t* rng) noexcept nogil:
    cdef Draws d
    d.state = rng
    d.uniform = _uniform
    d.random = _random
    d.integers = _integers
    return d
