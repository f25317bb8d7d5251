# numpy's own float64 ufunc loops, called from nogil code (included by the robotics kernels).
# The references compute np.exp, np.sin, np.arctan2, ... with numpy's loops, which may be SIMD
# code whose last bit differs from libm's (on an AVX-512 CPU: arctan2 for ~7% of values,
# arccos ~10%, exp ~5%); calling the same loop gives the same bits. The lookup goes through the
# ufunc's Python `types` list, whose order is its C arrays' (numpy 2.5's Cython declaration has
# no C `types` field). Needs `cimport numpy as cnp` and `import numpy as np` in the includer.

ctypedef void (*np_loop_fn)(char** args, cnp.npy_intp* dims, cnp.npy_intp* steps,
                            void* data) noexcept nogil

cdef struct NpLoop:
    np_loop_fn fn
    void* data


cdef NpLoop numpy_loop(object ufunc, str sig) except *:
    """ufunc's loop for the type signature sig ("d->d", "dd->d")."""
    cdef cnp.ufunc uf = ufunc
    cdef NpLoop loop
    sigs = (<object> uf).types
    if sig not in sigs:
        raise RuntimeError(f"cypool.robotics: numpy's {ufunc.__name__} has no {sig} loop")
    k = sigs.index(sig)
    loop.fn = <np_loop_fn> uf.functions[k]
    loop.data = uf.data[k]
    return loop


cdef inline void np_unary_n(NpLoop loop, const double* x, double* out,
                            cnp.npy_intp n) noexcept nogil:
    """A "d->d" loop over n contiguous values."""
    cdef char* args[2]
    cdef cnp.npy_intp steps[2]
    args[0] = <char*> x
    args[1] = <char*> out
    steps[0] = 8
    steps[1] = 8
    loop.fn(args, &n, steps, loop.data)


cdef inline double np_unary(NpLoop loop, double x) noexcept nogil:
    """A "d->d" loop on one value (as a numpy scalar call runs it)."""
    cdef double out = 0.0
    np_unary_n(loop, &x, &out, 1)
    return out


cdef inline double np_binary(NpLoop loop, double x, double y) noexcept nogil:
    """A "dd->d" loop on one pair of values."""
    cdef double a = x, b = y, out = 0.0
    cdef char* args[3]
    cdef cnp.npy_intp steps[3]
    cdef cnp.npy_intp n = 1
    args[0] = <char*> &a
    args[1] = <char*> &b
    args[2] = <char*> &out
    steps[0] = 8
    steps[1] = 8
    steps[2] = 8
    loop.fn(args, &n, steps, loop.data)
    return out
