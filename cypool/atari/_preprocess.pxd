# Frame preprocessing for the Atari kernels: max-pooling and resizing, as inline nogil C.
#
# The resize reproduces OpenCV's cv::resize arithmetic for uint8 images (the library
# gymnasium's AtariPreprocessing and EnvPool call) without linking OpenCV. The weight tables
# are computed once in Python (cypool/atari/resize.py, which explains each mode); the loops
# here only apply them, so they allocate nothing and need no GIL. One ResizePlan is shared,
# read-only, by every env of a pool; each env brings its own scratch buffers.
from libc.stdint cimport int32_t, uint8_t
from libc.string cimport memcmp, memcpy


cdef extern from "<math.h>" nogil:
    float rintf(float x)     # round half to even, as OpenCV's cvRound


cdef enum:
    RESIZE_AREA = 0     # INTER_AREA, general scale: float32 tap weights (table per axis)
    RESIZE_BOX = 1      # INTER_AREA, integer scale on both axes: block average
    RESIZE_TWOTAP = 2   # INTER_LINEAR (and INTER_AREA upscaling): 2 taps, 11-bit fixed point


ctypedef struct ResizePlan:
    int mode            # RESIZE_*
    int src_h, src_w    # the rows and columns read: the raw screen (210 x 160 for most
                        # games, up to 250 lines), or its top src_h rows (EnvPool's 210)
    int dst_h, dst_w
    # RESIZE_AREA: tx (ty) taps per output column (row), in source order; short tap lists are
    # padded with weight 0, which adds exactly 0.0f and so leaves the float sums unchanged.
    # RESIZE_TWOTAP: tx = ty = 2 and the weights are in xa/yb.
    int tx, ty
    const int32_t* xi   # (dst_w, tx) source column of each tap
    const int32_t* yi   # (dst_h, ty) source row of each tap
    const float* xw     # RESIZE_AREA weights
    const float* yw
    const int32_t* xa   # RESIZE_TWOTAP weights, sum 2048 per pixel
    const int32_t* yb
    # RESIZE_BOX: kx * ky source pixels per output pixel
    int kx, ky
    float inv_area      # (float)(1.0 / (kx * ky))
    int half_up         # 2x2 blocks round half up: OpenCV's SIMD path, (sum + 2) >> 2


cdef inline uint8_t _sat_f(float v) noexcept nogil:
    v = rintf(v)
    if v <= 0.0:
        return 0
    if v >= 255.0:
        return 255
    return <uint8_t> v


cdef inline uint8_t _sat_round(float v) noexcept nogil:
    """cvRound then saturate, for 0 <= v < 2**22, in a form the compiler vectorises: adding
    1.5 * 2**23 leaves no fraction bits, so the float addition itself rounds half to even
    (exact IEEE arithmetic; the build has no -ffast-math to fold it away)."""
    cdef float magic = 12582912.0      # a float: in double the sum would keep the fraction
    v = (v + magic) - magic
    if v >= 255.0:
        v = 255.0
    if v <= 0.0:
        v = 0.0
    return <uint8_t> <int> v


cdef inline void resize_plane(const ResizePlan* p, const uint8_t* src, int stride,
                              uint8_t* dst, float* hsum, float* acc) noexcept nogil:
    """One channel: src pixel (y, x) at src[(y * src_w + x) * stride]; dst is (dst_h, dst_w)
    contiguous. Scratch: hsum holds src_h * dst_w floats, acc dst_w floats."""
    cdef int sy, dy, dx, t, k, b, y0, y1
    cdef int W = p.dst_w, tx = p.tx, ty = p.ty, kx = p.kx, ky = p.ky
    cdef Py_ssize_t row_len = <Py_ssize_t> p.src_w * stride
    # this channel's bytes of a row end at the last pixel, not at the row's end (colour)
    cdef Py_ssize_t cmp_len = (<Py_ssize_t> p.src_w - 1) * stride + 1
    cdef const uint8_t* row
    cdef const uint8_t* r1
    cdef const float* hrow
    cdef float* h
    cdef float hs, wy
    cdef int s, h0, h1, v
    cdef uint8_t* out
    if p.mode == RESIZE_AREA:
        # OpenCV's ResizeArea_Invoker, reorganised without changing one float operation:
        # the horizontal sum of a source row (float, over its taps in source order, from 0)
        # does not depend on which output row uses it, so it is computed once per source
        # row, and once per run of identical rows (Atari screens repeat most rows: 90% in
        # Breakout); then each output row sums its rows' weighted sums in source order,
        # the first one starting the accumulator, and rounds with cvRound.
        for sy in range(p.src_h):
            row = src + sy * row_len
            h = hsum + sy * W
            if sy > 0 and memcmp(row, row - row_len, cmp_len) == 0:
                memcpy(h, h - W, W * sizeof(float))
                continue
            for dx in range(W):
                b = dx * tx
                hs = 0.0
                for k in range(tx):
                    hs = hs + <float> row[p.xi[b + k] * stride] * p.xw[b + k]
                h[dx] = hs
        for dy in range(p.dst_h):
            wy = p.yw[dy * ty]
            hrow = hsum + p.yi[dy * ty] * W
            for dx in range(W):
                acc[dx] = wy * hrow[dx]
            for t in range(1, ty):
                wy = p.yw[dy * ty + t]
                if wy == 0.0:
                    break                       # padding: real taps are never 0
                hrow = hsum + p.yi[dy * ty + t] * W
                for dx in range(W):
                    acc[dx] = acc[dx] + wy * hrow[dx]
            out = dst + dy * W
            for dx in range(W):
                out[dx] = _sat_round(acc[dx])
    elif p.mode == RESIZE_BOX:
        # OpenCV's resizeAreaFast_: an integer block sum times a float reciprocal, except
        # 2x2 blocks, which its vector code rounds half up.
        for dy in range(p.dst_h):
            out = dst + dy * W
            for dx in range(W):
                s = 0
                for t in range(ky):
                    row = src + (dy * ky + t) * row_len + dx * kx * stride
                    for k in range(kx):
                        s = s + row[k * stride]
                if p.half_up:
                    out[dx] = <uint8_t> ((s + 2) >> 2)
                else:
                    out[dx] = _sat_f(<float> s * p.inv_area)
    else:
        # OpenCV's linear resize for 8U: a horizontal fixed-point pass (weights * 2048), then
        # the vertical pass as its vector code computes it: (h >> 4) * b >> 16, summed,
        # rounded by (x + 2) >> 2.
        for dy in range(p.dst_h):
            y0 = p.yi[2 * dy]
            y1 = p.yi[2 * dy + 1]
            row = src + y0 * row_len
            r1 = src + y1 * row_len
            out = dst + dy * W
            for dx in range(W):
                h0 = (row[p.xi[2 * dx] * stride] * p.xa[2 * dx]
                      + row[p.xi[2 * dx + 1] * stride] * p.xa[2 * dx + 1])
                h1 = (r1[p.xi[2 * dx] * stride] * p.xa[2 * dx]
                      + r1[p.xi[2 * dx + 1] * stride] * p.xa[2 * dx + 1])
                v = (((h0 >> 4) * p.yb[2 * dy]) >> 16) + (((h1 >> 4) * p.yb[2 * dy + 1]) >> 16)
                v = (v + 2) >> 2
                out[dx] = 0 if v < 0 else (255 if v > 255 else <uint8_t> v)


cdef inline void resize_frame(const ResizePlan* p, const uint8_t* src, int channels,
                              uint8_t* dst, float* hsum, float* acc) noexcept nogil:
    """A raw screen, (src_h, src_w) gray or (src_h, src_w, 3) RGB, to a channel-first
    (channels, dst_h, dst_w) frame. OpenCV resizes each channel with the same arithmetic."""
    cdef int c
    cdef Py_ssize_t plane = <Py_ssize_t> p.dst_h * p.dst_w
    for c in range(channels):
        resize_plane(p, src + c, channels, dst + c * plane, hsum, acc)


cdef inline void max_into(uint8_t* a, const uint8_t* b, Py_ssize_t n) noexcept nogil:
    """a = max(a, b) elementwise (gymnasium's np.maximum(buf0, buf1, out=buf0))."""
    cdef Py_ssize_t k
    for k in range(n):
        a[k] = b[k] if b[k] > a[k] else a[k]    # a select, which compilers vectorise (pmaxub)
