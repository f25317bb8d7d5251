# distutils: language = c++
"""The CarRacing rasterisers (cypool/box2d/_cr_*.h) callable from Python, so that tests can
compare them with pygame. Test-only: tests/box2d/test_cr_rasterisers.py builds it (cached) with
the flags setup.py builds cypool.box2d's extensions with; it is not part of the package.

``gfx_polygon`` and ``draw_polygon`` draw on a C-contiguous uint32 canvas of shape (h, w)
(pixels 0x00RRGGBB, as a ``pygame.Surface((w, h))``), seen either as it is or upside down
(``flipped=True``: view row y is buffer row h-1-y), with only view rows ylo <= y < yhi written.
``smoothscale`` shrinks a uint32 (sh, sw) source to a new uint8 (dh, dw, 3) array through one
named path of _cr_smoothscale.h ("auto" = cr_smoothscale_rgb, "scalar", "sse2", "avx2");
``paths()`` lists the paths this build and CPU offer.
"""
import operator

import numpy as np

from libc.stddef cimport ptrdiff_t
from libc.stdint cimport uint8_t, uint16_t, uint32_t
from libc.stdlib cimport free, malloc

cdef extern from "_cr_surface.h" nogil:
    ctypedef struct cr_surface:  # only the fields used here
        int w, h
        int ylo, yhi
    cr_surface cr_surface_of(uint32_t* px, int w, int h)
    cr_surface cr_surface_flipped(uint32_t* px, int w, int h)

cdef extern from "_cr_gfx.h" nogil:
    int CR_GFX_SCRATCH_INTS(int n)
    int cr_gfx_aapolygon(const cr_surface* s, const double* xs, const double* ys, int n,
                         uint8_t r, uint8_t g, uint8_t b, int* scratch)
    int cr_gfx_filled_polygon(const cr_surface* s, const double* xs, const double* ys, int n,
                              uint8_t r, uint8_t g, uint8_t b, int* scratch)
    int cr_gfx_polygon(const cr_surface* s, const double* xs, const double* ys, int n,
                       uint8_t r, uint8_t g, uint8_t b, int* scratch)

cdef extern from "_cr_draw.h" nogil:
    int CR_DRAW_POLYGON_SCRATCH(int n)
    void cr_draw_polygon(const cr_surface* s, const double* xs, const double* ys, int n,
                         uint8_t r, uint8_t g, uint8_t b, int* scratch)

cdef extern from "_cr_smoothscale.h" nogil:
    size_t cr_smoothscale_scratch_bytes(int sw, int sh, int dw, int dh)
    void cr_smoothscale_rgb(const uint32_t* src, ptrdiff_t pitch, int sw, int sh, uint8_t* dst,
                            int dw, int dh, void* scratch)
    void cr_ss_shrink_x_scalar(const uint32_t* src, ptrdiff_t pitch, int sw, int sh,
                               uint8_t* out, size_t out_stride, int dw)
    void cr_ss_shrink_y_scalar(const uint8_t* inp, size_t in_stride, int n, int sh,
                               uint8_t* out, int dh, uint16_t* acc)
    void cr_ss_copy_rgb(const uint32_t* src, ptrdiff_t pitch, int sw, int sh, uint8_t* out)
    int cr_ss_use_avx2(int sw, int sh, int dw, int dh)
    void cr_smoothscale_band(int avx2, const uint32_t* row_y0, ptrdiff_t pitch, int sw, int y0,
                             int rows, int sh, int dw, int dh, void* scratch)
    void cr_smoothscale_finish(int avx2, int sw, int sh, uint8_t* dst, int dw, int dh,
                               void* scratch)

# The SSE2 and AVX2 passes exist only where the header compiles them: thin shims that are
# always defined, plus flags saying whether they do anything.
cdef extern from *:
    """
    #include "_cr_smoothscale.h"
    #ifdef CR_SS_HAVE_SSE2
    #define CRCHK_HAVE_SSE2 1
    static void crchk_shrink_x_sse2(const uint32_t *src, ptrdiff_t pitch, int sw, int sh,
                                    uint8_t *out, size_t out_stride, int dw)
    { cr_ss_shrink_x_sse2(src, pitch, sw, sh, out, out_stride, dw); }
    static void crchk_shrink_y_sse2(const uint8_t *in, size_t in_stride, int n, int sh,
                                    uint8_t *out, int dh, uint16_t *acc)
    { cr_ss_shrink_y_sse2(in, in_stride, n, sh, out, dh, acc); }
    #else
    #define CRCHK_HAVE_SSE2 0
    static void crchk_shrink_x_sse2(const uint32_t *, ptrdiff_t, int, int, uint8_t *, size_t,
                                    int) {}
    static void crchk_shrink_y_sse2(const uint8_t *, size_t, int, int, uint8_t *, int,
                                    uint16_t *) {}
    #endif
    #ifdef CR_SS_HAVE_AVX2
    #define CRCHK_HAVE_AVX2 1
    static int crchk_cpu_avx2(void) { return __builtin_cpu_supports("avx2") ? 1 : 0; }
    static void crchk_scale_avx2(const uint32_t *src, ptrdiff_t pitch, int sw, int sh,
                                 uint8_t *dst, int dw, int dh, void *scratch)
    { cr_ss_scale_avx2(src, pitch, sw, sh, dst, dw, dh, scratch); }
    #else
    #define CRCHK_HAVE_AVX2 0
    static int crchk_cpu_avx2(void) { return 0; }
    static void crchk_scale_avx2(const uint32_t *, ptrdiff_t, int, int, uint8_t *, int, int,
                                 void *) {}
    #endif
    """
    const int CRCHK_HAVE_SSE2
    const int CRCHK_HAVE_AVX2
    int crchk_cpu_avx2() nogil
    void crchk_shrink_x_sse2(const uint32_t* src, ptrdiff_t pitch, int sw, int sh,
                             uint8_t* out, size_t out_stride, int dw) nogil
    void crchk_shrink_y_sse2(const uint8_t* inp, size_t in_stride, int n, int sh,
                             uint8_t* out, int dh, uint16_t* acc) nogil
    void crchk_scale_avx2(const uint32_t* src, ptrdiff_t pitch, int sw, int sh, uint8_t* dst,
                          int dw, int dh, void* scratch) nogil

ctypedef void (*shrink_x_fn)(const uint32_t*, ptrdiff_t, int, int, uint8_t*, size_t,
                            int) noexcept nogil
ctypedef void (*shrink_y_fn)(const uint8_t*, size_t, int, int, uint8_t*, int,
                            uint16_t*) noexcept nogil

cdef enum:
    MAX_POINTS = 64
    SCRATCH_INTS = 4 * MAX_POINTS  # >= CR_GFX_SCRATCH_INTS(n), CR_DRAW_POLYGON_SCRATCH(n)
    MAX_SIDE = 32767               # _cr_gfx.h keeps the clip edges in 16-bit integers
    MAX_SRC_SIDE = 131071          # _cr_smoothscale.h: ONE * side must fit an int

cdef enum:
    GFX_AA = 0
    GFX_FILLED = 1
    GFX_BOTH = 2

cdef enum:
    SS_AUTO = 0
    SS_SCALAR = 1
    SS_SSE2 = 2
    SS_AVX2 = 3

_GFX = {"aapolygon": GFX_AA, "filled": GFX_FILLED, "both": GFX_BOTH}
_PATHS = {"auto": SS_AUTO, "scalar": SS_SCALAR, "sse2": SS_SSE2, "avx2": SS_AVX2}


def paths():
    """The smoothscale paths this build offers on this CPU ("auto" not included)."""
    out = ["scalar"]
    if CRCHK_HAVE_SSE2:
        out.append("sse2")
    if CRCHK_HAVE_AVX2 and crchk_cpu_avx2():
        out.append("avx2")
    return out


cdef object _int(v, str name):
    if isinstance(v, bool):
        raise TypeError(f"{name} must be an int, got bool")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{name} must be an int, got {type(v).__name__}") from None


cdef object _image(a, str name, str dims, int max_side):
    """a, checked to be a C-contiguous 2-D uint32 array of 1..max_side per side."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(a).__name__}")
    if a.dtype != np.uint32:
        raise TypeError(f"{name} must have dtype uint32, got {a.dtype}")
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-D {dims}, got shape {a.shape}")
    if not a.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous")
    h, w = a.shape
    if not (1 <= h <= max_side and 1 <= w <= max_side):
        raise ValueError(f"{name} shape {a.shape} must be between 1 and {max_side} per side")
    return a


cdef object _canvas(canvas):
    _image(canvas, "canvas", "(h, w)", MAX_SIDE)
    if not canvas.flags.writeable:
        raise ValueError("canvas must be writeable")
    return canvas


cdef tuple _points(xs, ys):
    for name, a in (("xs", xs), ("ys", ys)):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{name} must be a numpy array, got {type(a).__name__}")
        if a.dtype != np.float64:
            raise TypeError(f"{name} must have dtype float64, got {a.dtype}")
        if a.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    if xs.shape[0] != ys.shape[0]:
        raise ValueError(f"xs and ys must have the same length, got {xs.shape[0]} and "
                         f"{ys.shape[0]}")
    n = xs.shape[0]
    if not 3 <= n <= MAX_POINTS:
        raise ValueError(f"the polygon must have 3 to {MAX_POINTS} points, got {n}")
    return np.ascontiguousarray(xs), np.ascontiguousarray(ys)


cdef tuple _rgb(rgb):
    try:
        vals = tuple(rgb)
    except TypeError:
        raise TypeError(f"rgb must be a sequence of 3 ints, got {type(rgb).__name__}") from None
    if len(vals) != 3:
        raise ValueError(f"rgb must have 3 values, got {len(vals)}")
    out = tuple(_int(v, "rgb value") for v in vals)
    for v in out:
        if not 0 <= v <= 255:
            raise ValueError(f"rgb values must be in 0..255, got {out}")
    return out


cdef tuple _window(ylo, yhi, int h):
    lo = _int(ylo, "ylo")
    hi = h if yhi is None else _int(yhi, "yhi")
    if not 0 <= lo <= hi <= h:
        raise ValueError(f"window must satisfy 0 <= ylo <= yhi <= h, got ylo={lo}, yhi={hi}, "
                         f"h={h}")
    return lo, hi


cdef cr_surface _surface(uint32_t* px, int w, int h, bint flipped, int ylo, int yhi) noexcept:
    cdef cr_surface s
    if flipped:
        s = cr_surface_flipped(px, w, h)
    else:
        s = cr_surface_of(px, w, h)
    s.ylo = ylo
    s.yhi = yhi
    return s


cdef tuple _polygon_args(canvas, xs, ys, rgb, ylo, yhi):
    """The checked arguments of gfx_polygon and draw_polygon: canvas, xs, ys, r, g, b and the
    window (lo, hi)."""
    canvas = _canvas(canvas)
    xs, ys = _points(xs, ys)
    r, g, b = _rgb(rgb)
    lo, hi = _window(ylo, yhi, canvas.shape[0])
    return canvas, xs, ys, r, g, b, lo, hi


def gfx_polygon(canvas, xs, ys, rgb, which, flipped=False, ylo=0, yhi=None):
    """pygame.gfxdraw.aapolygon ("aapolygon"), filled_polygon ("filled") or both in that order
    ("both", cr_gfx_polygon) of the points (xs[i], ys[i]) in colour rgb on canvas (h, w),
    upside down if flipped, writing only view rows [ylo, yhi). Returns the C return code
    (0 drawn, -1 where pygame would raise)."""
    cdef int r, g, b, lo, hi
    canvas, xs, ys, r, g, b, lo, hi = _polygon_args(canvas, xs, ys, rgb, ylo, yhi)
    if not isinstance(which, str) or which not in _GFX:
        raise ValueError(f"which must be one of {sorted(_GFX)}, got {which!r}")
    cdef int kind = _GFX[which]
    cdef int h = canvas.shape[0], w = canvas.shape[1]
    cdef uint32_t[:, ::1] cv = canvas
    cdef const double[::1] xv = xs
    cdef const double[::1] yv = ys
    cdef int n = xv.shape[0]
    cdef int scratch[SCRATCH_INTS]
    if CR_GFX_SCRATCH_INTS(n) > SCRATCH_INTS:
        raise ValueError(f"_cr_gfx.h wants {CR_GFX_SCRATCH_INTS(n)} scratch ints for {n} points")
    cdef cr_surface s = _surface(&cv[0, 0], w, h, bool(flipped), lo, hi)
    cdef const double* px = &xv[0]
    cdef const double* py = &yv[0]
    cdef int rc
    with nogil:
        if kind == GFX_AA:
            rc = cr_gfx_aapolygon(&s, px, py, n, <uint8_t>r, <uint8_t>g, <uint8_t>b, scratch)
        elif kind == GFX_FILLED:
            rc = cr_gfx_filled_polygon(&s, px, py, n, <uint8_t>r, <uint8_t>g, <uint8_t>b, scratch)
        else:
            rc = cr_gfx_polygon(&s, px, py, n, <uint8_t>r, <uint8_t>g, <uint8_t>b, scratch)
    return rc


def draw_polygon(canvas, xs, ys, rgb, flipped=False, ylo=0, yhi=None):
    """pygame.draw.polygon(surf, rgb, points) (filled) on canvas (h, w), upside down if
    flipped, writing only view rows [ylo, yhi)."""
    cdef int r, g, b, lo, hi
    canvas, xs, ys, r, g, b, lo, hi = _polygon_args(canvas, xs, ys, rgb, ylo, yhi)
    cdef int h = canvas.shape[0], w = canvas.shape[1]
    cdef uint32_t[:, ::1] cv = canvas
    cdef const double[::1] xv = xs
    cdef const double[::1] yv = ys
    cdef int n = xv.shape[0]
    cdef int scratch[SCRATCH_INTS]
    if CR_DRAW_POLYGON_SCRATCH(n) > SCRATCH_INTS:
        raise ValueError(f"_cr_draw.h wants {CR_DRAW_POLYGON_SCRATCH(n)} scratch ints for "
                         f"{n} points")
    cdef cr_surface s = _surface(&cv[0, 0], w, h, bool(flipped), lo, hi)
    cdef const double* px = &xv[0]
    cdef const double* py = &yv[0]
    with nogil:
        cr_draw_polygon(&s, px, py, n, <uint8_t>r, <uint8_t>g, <uint8_t>b, scratch)


def smoothscale(src, dw, dh, path="auto", flipped=False):
    """np.transpose(pixels3d(pygame.transform.smoothscale(surf, (dw, dh))), (1, 0, 2)) under
    pygame's SSE2 backend, for surf = src (uint32 (sh, sw), 0x00RRGGBB; read bottom row first
    if flipped), through one path: "auto" (cr_smoothscale_rgb), "scalar", "sse2" or "avx2"
    (see paths()). Returns a new uint8 array (dh, dw, 3)."""
    _image(src, "src", "(sh, sw)", MAX_SRC_SIDE)
    cdef int sh = src.shape[0], sw = src.shape[1]
    pdw, pdh = _int(dw, "dw"), _int(dh, "dh")
    if not (1 <= pdw <= sw and 1 <= pdh <= sh):
        raise ValueError(f"only shrinking is supported: need 1 <= dw <= {sw} and "
                         f"1 <= dh <= {sh}, got dw={pdw}, dh={pdh}")
    cdef int odw = pdw, odh = pdh
    if not isinstance(path, str) or path not in _PATHS:
        raise ValueError(f"path must be one of {sorted(_PATHS)}, got {path!r}")
    cdef int p = _PATHS[path]
    if p == SS_SSE2 and not CRCHK_HAVE_SSE2:
        raise ValueError("path 'sse2' is not compiled in this build")
    if p == SS_AVX2:
        if not CRCHK_HAVE_AVX2:
            raise ValueError("path 'avx2' is not compiled in this build")
        if not crchk_cpu_avx2():
            raise ValueError("path 'avx2' needs a CPU with AVX2")
        if not (odw < sw and odh < sh):
            raise ValueError(f"path 'avx2' needs dw < sw and dh < sh, got ({sw}, {sh}) -> "
                             f"({odw}, {odh})")

    cdef const uint32_t[:, ::1] sv = src
    out = np.empty((odh, odw, 3), np.uint8)
    cdef uint8_t[:, :, ::1] ov = out
    cdef const uint32_t* s0 = &sv[sh - 1, 0] if flipped else &sv[0, 0]
    cdef ptrdiff_t pitch = -<ptrdiff_t>sw if flipped else <ptrdiff_t>sw
    cdef uint8_t* dst = &ov[0, 0, 0]
    # malloc's alignment (16 bytes) is more than the header's uint16_t; the AVX2 path aligns
    # its part to 32 bytes inside the buffer itself
    cdef size_t nbytes = cr_smoothscale_scratch_bytes(sw, sh, odw, odh)
    cdef void* scratch = malloc(nbytes)
    if scratch == NULL:
        raise MemoryError(f"cannot allocate {nbytes} bytes of smoothscale scratch")
    cdef uint16_t* acc = <uint16_t*>scratch
    cdef uint8_t* tmp = <uint8_t*>scratch + <size_t>odw * 3 * sizeof(uint16_t)
    cdef size_t n = <size_t>odw * 3
    cdef shrink_x_fn fx
    cdef shrink_y_fn fy
    if p == SS_SSE2:
        fx = crchk_shrink_x_sse2
        fy = crchk_shrink_y_sse2
    else:
        fx = cr_ss_shrink_x_scalar
        fy = cr_ss_shrink_y_scalar
    try:
        with nogil:
            if p == SS_AUTO:
                cr_smoothscale_rgb(s0, pitch, sw, sh, dst, odw, odh, scratch)
            elif p == SS_AVX2:
                crchk_scale_avx2(s0, pitch, sw, sh, dst, odw, odh, scratch)
            elif odh == sh:
                # cr_smoothscale_rgb's composition with the chosen passes
                if odw == sw:
                    cr_ss_copy_rgb(s0, pitch, sw, sh, dst)
                else:
                    fx(s0, pitch, sw, sh, dst, n, odw)
            else:
                if odw == sw:
                    cr_ss_copy_rgb(s0, pitch, sw, sh, tmp)
                else:
                    fx(s0, pitch, sw, sh, tmp, n, odw)
                fy(tmp, n, <int>n, sh, dst, odh, acc)
    finally:
        free(scratch)
    return out


def smoothscale_bands(src, dw, dh, int band_rows, flipped=False, avx2=None):
    """smoothscale(src, dw, dh) through cr_smoothscale_band and cr_smoothscale_finish (the path
    CarRacing takes): the rows in bands of band_rows (a multiple of 8), the last band first,
    for shrinking both ways (dw < sw and dh < sh). avx2: None (the header's choice for this
    CPU), False (the SSE2 or scalar passes) or True (refused where the CPU or build lacks it)."""
    _image(src, "src", "(sh, sw)", MAX_SRC_SIDE)
    cdef int sh = src.shape[0], sw = src.shape[1]
    pdw, pdh = _int(dw, "dw"), _int(dh, "dh")
    if not (1 <= pdw < sw and 1 <= pdh < sh):
        raise ValueError(f"bands need 1 <= dw < {sw} and 1 <= dh < {sh}, got {pdw}, {pdh}")
    if band_rows <= 0 or band_rows % 8:
        raise ValueError(f"band_rows must be a positive multiple of 8, got {band_rows}")
    cdef int odw = pdw, odh = pdh, y0, rows
    cdef int use = cr_ss_use_avx2(sw, sh, odw, odh)
    if avx2 is not None:
        if avx2 and not use:
            raise ValueError("the AVX2 pass is not available in this build or on this CPU")
        use = 1 if avx2 else 0
    cdef const uint32_t[:, ::1] sv = src
    out = np.empty((odh, odw, 3), np.uint8)
    cdef uint8_t[:, :, ::1] ov = out
    cdef const uint32_t* s0 = &sv[sh - 1, 0] if flipped else &sv[0, 0]
    cdef ptrdiff_t pitch = -<ptrdiff_t>sw if flipped else <ptrdiff_t>sw
    cdef size_t nbytes = cr_smoothscale_scratch_bytes(sw, sh, odw, odh)
    cdef void* scratch = malloc(nbytes)
    if scratch == NULL:
        raise MemoryError(f"cannot allocate {nbytes} bytes of smoothscale scratch")
    try:
        with nogil:
            y0 = ((sh - 1) // band_rows) * band_rows
            while y0 >= 0:
                rows = band_rows if y0 + band_rows <= sh else sh - y0
                cr_smoothscale_band(use, s0 + y0 * pitch, pitch, sw, y0, rows, sh, odw, odh,
                                    scratch)
                y0 -= band_rows
            cr_smoothscale_finish(use, sw, sh, &ov[0, 0, 0], odw, odh, scratch)
    finally:
        free(scratch)
    return out
