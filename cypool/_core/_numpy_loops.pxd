# numpy's own ufunc inner loops, called from nogil code: every family that needs numpy's float
# math bit for bit cimports them from here, or from cypool.api (public: classic control and
# users' envs). References compute np.exp, np.sin, np.arctan2, ... with numpy's loops, which
# may be SIMD code whose last bit differs from libm's (on an AVX-512 CPU: float64 arctan2 for
# ~7% of values, arccos ~10%, exp ~5%; float32 cos/sin on FMA3 CPUs); calling the same loop
# gives the same bits. Each element's result does not depend on
# its position, so one value at a time equals numpy's scalar (and array) call.
# The lookup goes through the ufunc's Python `types` list, whose order is its C arrays':
# numpy 2.5's Cython declaration of ufunc has no C `types` field, so `uf.types` would be that
# list read as type numbers (a crash at import).
# Only inline functions and types: nothing is imported at run time.
cimport numpy as cnp

ctypedef void (*np_loop_fn)(char** args, cnp.npy_intp* dims, cnp.npy_intp* steps,
                            void* data) noexcept nogil

cdef struct NpLoop:
    np_loop_fn fn
    void* data


cdef inline NpLoop numpy_loop(object ufunc, str sig) except *:
    """ufunc's inner loop for the type signature sig ("d->d", "dd->d", "f->f"); an
    ImportError (modules resolve their loops at import) if numpy has none."""
    cdef cnp.ufunc uf = ufunc
    cdef NpLoop loop
    cdef int k
    sigs = list((<object> uf).types)
    if sig in sigs:
        k = sigs.index(sig)
        if 0 <= k < uf.ntypes and uf.functions[k] != NULL:
            loop.fn = <np_loop_fn> <void*> uf.functions[k]
            loop.data = uf.data[k]
            return loop
    raise ImportError(f"cypool: numpy's {ufunc.__name__} has no {sig} loop")


cdef inline void np_unary_n(NpLoop loop, const double* x, double* out,
                            cnp.npy_intp n) noexcept nogil:
    """A "d->d" loop over n contiguous values."""
    cdef char* args[2]
    cdef cnp.npy_intp steps[2]
    args[0] = <char*> x
    args[1] = <char*> out
    steps[0] = sizeof(double)
    steps[1] = sizeof(double)
    loop.fn(args, &n, steps, loop.data)


cdef inline double np_unary(NpLoop loop, double x) noexcept nogil:
    """A "d->d" loop on one value (as a numpy scalar call runs it)."""
    cdef double out = 0.0
    np_unary_n(loop, &x, &out, 1)
    return out


cdef inline double np_binary(NpLoop loop, double x, double y) noexcept nogil:
    """A "dd->d" loop on one pair of values (np.arctan2(x, y))."""
    cdef double a = x, b = y, out = 0.0
    cdef char* args[3]
    cdef cnp.npy_intp steps[3]
    cdef cnp.npy_intp n = 1
    args[0] = <char*> &a
    args[1] = <char*> &b
    args[2] = <char*> &out
    steps[0] = sizeof(double)
    steps[1] = sizeof(double)
    steps[2] = sizeof(double)
    loop.fn(args, &n, steps, loop.data)
    return out


cdef inline float np_unary_f(NpLoop loop, float x) noexcept nogil:
    """An "f->f" loop on one float32 value."""
    cdef float out = 0
    cdef char* args[2]
    cdef cnp.npy_intp steps[2]
    cdef cnp.npy_intp n = 1
    args[0] = <char*> &x
    args[1] = <char*> &out
    steps[0] = sizeof(float)
    steps[1] = sizeof(float)
    loop.fn(args, &n, steps, loop.data)
    return out
