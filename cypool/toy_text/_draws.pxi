# gymnasium's integer draws, shared by the toy-text pools that make them (Taxi, Blackjack).
# Included by each pool module (after its cimports of uint64_t, bitgen_t and numpy).
cdef extern from "numpy/random/distributions.h" nogil:
    # Generator.integers(low, high) for int64 (numpy's _rand_int64 calls this, checked in
    # numpy 2.4's _bounded_integers: rng = high - low - 1, one value)
    void random_bounded_uint64_fill(bitgen_t* bitgen_state, uint64_t off, uint64_t rng,
                                    cnp.npy_intp cnt, bint use_masked, uint64_t* out)


cdef inline uint64_t choice(bitgen_t* rng, uint64_t n) noexcept nogil:
    """Generator.choice(a list of n) = integers(0, n): Lemire on 32-bit draws, the stream's
    cached upper half included."""
    cdef uint64_t out = 0
    random_bounded_uint64_fill(rng, 0, n - 1, 1, False, &out)
    return out
