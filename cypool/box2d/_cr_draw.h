/* _cr_draw.h -- exact, thread-safe re-implementation of the pygame-ce 2.5.8
 * drawing operation that gymnasium's CarRacing-v3 uses for its car and panel:
 *
 *   pygame.draw.polygon(surf, (r, g, b), pts)      (filled, width 0)
 *
 * on a pygame.Surface((w, h)) (32-bit XRGB8888, pixel = 0x00RRGGBB) seen
 * through a cr_surface (_cr_surface.h).
 * The output is bit-identical to pygame-ce 2.5.8's x86-64 wheel, including the
 * float32 rounding of its scanline arithmetic and its 32-bit integer
 * wrap-around on absurd coordinates.  Written from the observed behaviour of
 * pygame-ce; no pygame source text is reused.
 *
 * Pure C99, also valid C++14.  Everything is `static inline`; no globals, no
 * static buffers, no allocation: the caller passes scratch memory, so any
 * number of threads may draw at once (on distinct surfaces) without the GIL.
 *
 * Floating point: the float expressions below must be evaluated in IEEE
 * single precision (FLT_EVAL_METHOD == 0, as on x86-64 SSE) and must not be
 * contracted into FMAs (build with -ffp-contract=off; -O3 is fine, -ffast-math
 * is not).
 *
 * Differences from pygame, all on inputs CarRacing can never produce:
 *  - pygame scans every row from the polygon's min y to max y even when
 *    they lie off the surface; this code only visits on-surface rows (off-
 *    surface rows draw nothing, so pixels are the same, but a polygon with
 *    y spanning 1e9 costs nothing here while pygame takes seconds).
 *  - a vertex whose y truncates to exactly INT_MAX (2147483647 <= y <
 *    2147483648) makes pygame's row loop never terminate; here it ends.
 */
#ifndef CYPOOL_CR_DRAW_H
#define CYPOOL_CR_DRAW_H

#include <stdint.h>
#include <string.h>
#include <math.h>
#include <float.h>

#include "_cr_surface.h"

#if defined(FLT_EVAL_METHOD) && (FLT_EVAL_METHOD == 1 || FLT_EVAL_METHOD == 2)
#error "_cr_draw.h needs float expressions evaluated in single precision (SSE, not x87)"
#endif

/* Ints of scratch memory cr_draw_polygon needs for n points. */
#define CR_DRAW_POLYGON_SCRATCH(n) (4 * (n))

/* ---- 32-bit two's-complement helpers ------------------------------------
 * pygame does its coordinate arithmetic in C `int` and the x86-64 code simply
 * wraps on overflow; signed overflow is UB in C, so do it on uint32_t. */
static inline int32_t cr__u2i(uint32_t u)
{
    /* well-defined two's-complement reinterpretation */
    return u <= 0x7fffffffu ? (int32_t)u : -(int32_t)(~u) - 1;
}
static inline int32_t cr__add(int32_t a, int32_t b) { return cr__u2i((uint32_t)a + (uint32_t)b); }
static inline int32_t cr__sub(int32_t a, int32_t b) { return cr__u2i((uint32_t)a - (uint32_t)b); }
static inline int32_t cr__mul(int32_t a, int32_t b) { return cr__u2i((uint32_t)a * (uint32_t)b); }

/* (int)double / (int)float as the x86-64 cvtt* instructions do it: truncate
 * toward zero, and anything out of int range (or NaN) becomes INT32_MIN. */
static inline int32_t cr__d2i(double d)
{
    if (d > -2147483649.0 && d < 2147483648.0) return (int32_t)d;
    return INT32_MIN;
}
static inline int32_t cr__f2i(float f)
{
    if (f >= -2147483648.0f && f < 2147483648.0f) return (int32_t)f;
    return INT32_MIN;
}

/* Fill pixels x1..x2 (either order) of row y, clipped to the surface and its written rows. */
static inline void cr__hline(const cr_surface *s, uint32_t c, int32_t x1, int32_t y, int32_t x2)
{
    if (y < s->ylo || y >= s->yhi) return;
    if (x2 < x1) { int32_t t = x1; x1 = x2; x2 = t; }
    if (x1 < 0) x1 = 0;
    if (x2 > s->w - 1) x2 = s->w - 1;
    if (x2 < 0 || x1 >= s->w) return;
    cr_fill(cr_surface_row(s, y) + x1, x2 - x1 + 1, c);
}

/* pygame sorts the scanline crossings with libc qsort() and a comparator that
 * returns a - b (which wraps, so it is not a consistent order once crossings
 * are > 2^31 apart).  glibc's qsort on small arrays is a top-down merge sort;
 * mirror it step for step so even the wrapped comparisons give the same order.
 * For sane coordinates this is just an ordinary sort. */
static inline void cr__msort(int32_t *b, int n, int32_t *tmp)
{
    int n1, n2, k;
    int32_t *b1, *b2, *t;
    if (n <= 1) return;
    if (n == 2) { /* the merge of two singles: the right one first only if not (a <= b) */
        if (cr__sub(b[0], b[1]) > 0) { int32_t x = b[0]; b[0] = b[1]; b[1] = x; }
        return;
    }
    n1 = n / 2;
    n2 = n - n1;
    b1 = b;
    b2 = b + n1;
    cr__msort(b1, n1, tmp);
    cr__msort(b2, n2, tmp);
    t = tmp;
    while (n1 > 0 && n2 > 0) {
        if (cr__sub(*b1, *b2) <= 0) { *t++ = *b1++; --n1; }
        else { *t++ = *b2++; --n2; }
    }
    for (k = 0; k < n1; ++k) *t++ = b1[k];
    /* b2's leftovers are already in place */
    memcpy(b, tmp, (size_t)(n - n2) * sizeof(int32_t));
}

/* pygame's 3-point path: walk the two sides from the top vertex, slopes in
 * float computed through double. */
static inline void cr__filltri(const cr_surface *s, uint32_t c, const int32_t *xs,
                               const int32_t *ys)
{
    int32_t p0x = xs[0], p0y = ys[0], p1x = xs[1], p1y = ys[1], p2x = xs[2], p2y = ys[2], t;
    float d1, d2, d3;
    int32_t y, ylo, yhi;
#define CR__SWAP(a, b) (t = (a), (a) = (b), (b) = t)
    /* sort by y (three compare-swaps, in pygame's order) */
    if (p1y < p0y) { CR__SWAP(p0x, p1x); CR__SWAP(p0y, p1y); }
    if (p2y < p1y) {
        CR__SWAP(p1x, p2x); CR__SWAP(p1y, p2y);
        if (p1y < p0y) { CR__SWAP(p0x, p1x); CR__SWAP(p0y, p1y); }
    }
    /* flat triangle whose first two points coincide: swap the distinct one in */
    if (p0y == p1y && p1y == p2y && p0x == p1x && p1x != p2x) {
        CR__SWAP(p1x, p2x); CR__SWAP(p1y, p2y);
    }
#undef CR__SWAP
    /* slopes: int difference -> double, +1e-17 avoids /0, rounded to float */
    d1 = (float)((double)cr__sub(p2x, p0x) / ((double)cr__sub(p2y, p0y) + 1e-17));
    d2 = (float)((double)cr__sub(p1x, p0x) / ((double)cr__sub(p1y, p0y) + 1e-17));
    d3 = (float)((double)cr__sub(p2x, p1x) / ((double)cr__sub(p2y, p1y) + 1e-17));
    /* pygame visits p0y..p2y; rows off the surface (or the written rows) draw nothing */
    ylo = p0y > s->ylo ? p0y : s->ylo;
    yhi = p2y < s->yhi - 1 ? p2y : s->yhi - 1;
    for (y = ylo; y <= yhi; ++y) {
        float dy0 = (float)cr__sub(y, p0y);
        int32_t xa = cr__add(p0x, cr__f2i(dy0 * d1));
        int32_t xb;
        if (y < p1y) {
            xb = cr__add(p0x, cr__f2i(dy0 * d2));
        } else {
            float dy1 = (float)cr__sub(y, p1y);
            xb = cr__add(p1x, cr__f2i(dy1 * d3));
        }
        cr__hline(s, c, xa, y, xb);
    }
}

/* Exactly pygame.draw.polygon(surf, (r,g,b), pts) (width 0) on a 32-bit
 * XRGB8888 surface (pygame.Surface((w, h)), 0x00RRGGBB) seen through s,
 * pts = n (x, y) Python floats given as xs[i], ys[i].
 * n >= 3 (pygame raises for fewer; here n < 3 draws nothing).
 * scratch: at least CR_DRAW_POLYGON_SCRATCH(n) = 4*n ints, caller-owned,
 * contents ignored on entry and clobbered. */
static inline void cr_draw_polygon(const cr_surface *s, const double *xs, const double *ys, int n,
                                   uint8_t r, uint8_t g, uint8_t b, int *scratch)
{
    const uint32_t c = ((uint32_t)r << 16) | ((uint32_t)g << 8) | (uint32_t)b;
    int32_t *vx = (int32_t *)scratch; /* [0, n)   truncated x */
    int32_t *vy = vx + n;             /* [n, 2n)  truncated y */
    int32_t *cross = vy + n;          /* [2n, 3n) scanline crossings */
    int32_t *tmp = cross + n;         /* [3n, 4n) merge-sort buffer */
    int32_t miny, maxy, y, ylo, yhi;
    int i;

    if (n < 3 || s->w <= 0 || s->h <= 0) return;
    /* pygame converts each float coordinate with a C (int) cast */
    for (i = 0; i < n; ++i) {
        vx[i] = cr__d2i(xs[i]);
        vy[i] = cr__d2i(ys[i]);
    }
    if (n == 3) {
        cr__filltri(s, c, vx, vy);
        return;
    }

    miny = maxy = vy[0];
    for (i = 1; i < n; ++i) {
        if (vy[i] < miny) miny = vy[i];
        if (vy[i] > maxy) maxy = vy[i];
    }
    if (miny == maxy) {
        /* all on one row: a single span from min x to max x */
        int32_t minx = vx[0], maxx = vx[0];
        for (i = 1; i < n; ++i) {
            if (vx[i] < minx) minx = vx[i];
            if (vx[i] > maxx) maxx = vx[i];
        }
        cr__hline(s, c, minx, miny, maxx);
        return;
    }

    /* Scanline fill.  Each non-horizontal edge (oriented top->bottom) crosses
     * row y when y1 <= y < y2; on the last row (maxy) edges ending there count
     * too.  The crossing offset is computed in float and rounded down for the
     * 1st, 3rd, ... crossing found in vertex order and up for the 2nd, 4th,
     * ... (before sorting!).  Crossings are then sorted and paired.  Rows that
     * are off the surface (or not written) produce no pixels, so they are skipped. */
    ylo = miny > s->ylo ? miny : s->ylo;
    yhi = maxy < s->yhi - 1 ? maxy : s->yhi - 1;
    for (y = ylo; y <= yhi; ++y) {
        int k = 0;
        for (i = 0; i < n; ++i) {
            int ip = i ? i - 1 : n - 1;
            int32_t x1, y1, x2, y2;
            if (vy[ip] < vy[i]) {
                x1 = vx[ip]; y1 = vy[ip]; x2 = vx[i]; y2 = vy[i];
            } else if (vy[ip] > vy[i]) {
                x1 = vx[i]; y1 = vy[i]; x2 = vx[ip]; y2 = vy[ip];
            } else {
                continue; /* horizontal edges: handled below */
            }
            if ((y >= y1 && y < y2) || (y == maxy && y2 == maxy)) {
                /* int product (wraps) -> float, divided in float */
                float f = (float)cr__mul(cr__sub(y, y1), cr__sub(x2, x1)) /
                          (float)cr__sub(y2, y1);
                f = (k % 2 == 0) ? floorf(f) : ceilf(f);
                cross[k++] = cr__add(cr__f2i(f), x1);
            }
        }
        cr__msort(cross, k, tmp);
        /* k is always even for a closed polygon */
        for (i = 0; i + 1 < k; i += 2) cr__hline(s, c, cross[i], y, cross[i + 1]);
    }

    /* A horizontal edge strictly between the top and bottom rows can be a
     * lower boundary that the half-open rule above leaves unpainted: paint
     * every such edge explicitly. */
    for (i = 0; i < n; ++i) {
        int ip = i ? i - 1 : n - 1;
        y = vy[i];
        if (miny < y && vy[ip] == y && y < maxy) cr__hline(s, c, vx[i], y, vx[ip]);
    }
}

#endif /* CYPOOL_CR_DRAW_H */
