/* _cr_gfx.h -- exact re-implementation of the two pygame-ce 2.5.8 gfxdraw
 * calls CarRacing uses to draw its road:
 *
 *     pygame.gfxdraw.aapolygon(surf, pts, (r, g, b))
 *     pygame.gfxdraw.filled_polygon(surf, pts, (r, g, b))
 *
 * on a 32-bit XRGB8888 surface (pygame.Surface((w, h)) without a display:
 * 0x00RRGGBB per pixel, pitch = w pixels, clip rect = whole surface), bit
 * for bit, including the integer wrap-around quirks of the SDL_gfx code that
 * pygame-ce bundles.  Written from a reading of that code's behaviour.
 *
 * Thread safety: no globals, no static buffers, no allocation.  Each call
 * works on its own surface and on caller-provided scratch memory.
 *
 * Scratch contract: `scratch` must hold at least CR_GFX_SCRATCH_INTS(n) ints
 * (4 * n).  n must be >= 3 (any size; CarRacing uses 4).
 * Surface contract: 1 <= w, h <= 32767 (SDL_gfx keeps the clip edges in
 * 16-bit integers).  Little-endian host with IEEE single-precision floats
 * evaluated in single precision (x86-64 SSE, aarch64); do not build with
 * -ffast-math.
 *
 * Return value of the drawing functions: 0 when drawn, -1 when pygame would
 * have raised instead of drawing (n < 3, or a coordinate that is NaN,
 * infinite or outside the C long range [-2^63, 2^63)); nothing is drawn then.
 *
 * Known environment dependence of the reference: the filled polygon sorts its
 * scanline crossings with the C library's qsort() and a comparator that
 * returns a - b, which overflows (and so lies) when two crossings are more
 * than 2^31 apart in 16.16 fixed point (only possible with |coordinates| >
 * ~16000 after the 16-bit wrap).  glibc sorts such small arrays with a
 * top-down merge sort (verified against glibc 2.36 here); that is what is
 * reproduced.  pygame linked against a libc with another qsort (musl, macOS)
 * may order such rows differently.  Ordinary coordinates are unaffected.
 */
#ifndef CYPOOL_CR_GFX_H
#define CYPOOL_CR_GFX_H

#include <stddef.h>
#include <stdint.h>
#include <float.h>
#include <limits.h>

#include "_cr_surface.h"

#if INT_MAX != 2147483647
#error "_cr_gfx.h assumes a 32-bit int"
#endif

#if defined(FLT_EVAL_METHOD) && (FLT_EVAL_METHOD != 0) && (FLT_EVAL_METHOD != -1)
#error "_cr_gfx.h needs float expressions evaluated in single precision"
#endif

#define CR_GFX_SCRATCH_INTS(n) (4 * (n))

/* ---- small exact-arithmetic helpers (no signed overflow anywhere) ------- */

/* Reinterpret the low 16 bits as a signed 16-bit value, like a (Sint16) cast. */
static inline int cr_gfx_wrap16(uint32_t u)
{
    u &= 0xffffu;
    return (u & 0x8000u) ? (int)u - 0x10000 : (int)u;
}

/* Reinterpret 32 bits as a two's-complement int32 without relying on
   implementation-defined conversions. */
static inline int32_t cr_gfx_s32(uint32_t u)
{
    return (u < 0x80000000u) ? (int32_t)u : -(int32_t)(0xffffffffu - u) - 1;
}

/* Arithmetic shift right by 16 (floor division by 65536), as gcc's `>>` on a
   negative int does. */
static inline int32_t cr_gfx_asr16(int32_t v)
{
    return (v >= 0) ? (v >> 16) : -(int32_t)((~(uint32_t)v) >> 16) - 1;
}

/* float -> int32 as x86 cvttss2si does it: truncate, and give INT32_MIN
   ("integer indefinite") for NaN or anything out of range. */
static inline int32_t cr_gfx_cvtt(float f)
{
    if (f >= -2147483648.0f && f < 2147483648.0f)
        return (int32_t)f;
    return INT32_MIN;
}

/* Python float -> gfxdraw coordinate: int() truncates toward zero into a C
   long, then the value is cast to Sint16, i.e. only its low 16 bits count
   (40000 -> -25536, -70000 -> -4464).  Returns 0 where pygame would raise. */
static inline int cr_gfx_coord(double v, int *out)
{
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
        return 0;
    *out = cr_gfx_wrap16((uint32_t)(uint64_t)(int64_t)v);
    return 1;
}

/* ---- pixel level --------------------------------------------------------- */

/* _putPixelAlpha for a 32-bit surface without alpha channel.  alpha 255 is a
   plain store; otherwise each channel is moved toward the colour by
   (diff * alpha) >> 8, with the difference taken in wrapping uint32 maths on
   the masked channel (so a negative difference borrows from the bits above;
   the final mask keeps the channel).  The result never keeps bits 24..31. */
static inline void cr_gfx_put(const cr_surface *s, int x, int y,
                              uint32_t c, uint32_t alpha)
{
    uint32_t *p, d, R, G, B;
    if (x < 0 || x > s->w - 1 || y < s->ylo || y >= s->yhi)
        return;
    p = cr_surface_row(s, y) + x;
    if (alpha == 255u) {
        *p = c;
        return;
    }
    d = *p;
    R = ((d & 0xff0000u) + (((((c & 0xff0000u) - (d & 0xff0000u)) >> 16) * alpha >> 8) << 16)) & 0xff0000u;
    G = ((d & 0x00ff00u) + (((((c & 0x00ff00u) - (d & 0x00ff00u)) >> 8) * alpha >> 8) << 8)) & 0x00ff00u;
    B = ((d & 0x0000ffu) + ((((c & 0x0000ffu) - (d & 0x0000ffu)) * alpha) >> 8)) & 0x0000ffu;
    *p = R | G | B;
}

/* hlineColor with an opaque colour: endpoints in either order, clipped. */
static inline void cr_gfx_hline(const cr_surface *s, int x1, int x2, int y,
                                uint32_t c)
{
    int t;
    uint32_t *row;
    if (x1 > x2) { t = x1; x1 = x2; x2 = t; }
    if (x2 < 0 || x1 > s->w - 1 || y < s->ylo || y >= s->yhi)
        return;
    if (x1 < 0) x1 = 0;
    if (x2 > s->w - 1) x2 = s->w - 1;
    row = cr_surface_row(s, y);
    cr_fill(row + x1, x2 - x1 + 1, c);
}

/* vlineColor with an opaque colour: endpoints in either order, clipped. */
static inline void cr_gfx_vline(const cr_surface *s, int x, int y1, int y2,
                                uint32_t c)
{
    int y, t;
    if (y1 > y2) { t = y1; y1 = y2; y2 = t; }
    if (x < 0 || x > s->w - 1 || y2 < s->ylo || y1 >= s->yhi)
        return;
    if (y1 < s->ylo) y1 = s->ylo;
    if (y2 > s->yhi - 1) y2 = s->yhi - 1;
    for (y = y1; y <= y2; y++)
        cr_surface_row(s, y)[x] = c;
}

/* ---- anti-aliased line (SDL_gfx _aalineColor, draw_endpoint = 0) --------- */

static inline int cr_gfx_outcode(int x, int y, int right, int bottom)
{
    int code = 0;
    if (x < 0) code |= 1;            /* left */
    else if (x > right) code |= 2;   /* right */
    if (y < 0) code |= 8;            /* top */
    else if (y > bottom) code |= 4;  /* bottom */
    return code;
}

/* Cohen-Sutherland clip as SDL_gfx does it: slope in single-precision float,
   offsets truncated by cvttss2si, coordinates stored back into Sint16 (so
   they wrap).  When the first point is inside, the two points are swapped,
   and the swap is visible to the caller (it decides which end gets the opaque
   "first pixel").  Returns 1 to draw.  The reference loops until accept or
   reject; the iteration cap only guards against a wrap-induced cycle, which
   would hang pygame itself. */
static inline int cr_gfx_clip_line(int w, int h, int *px1, int *py1,
                                   int *px2, int *py2)
{
    int x1 = *px1, y1 = *py1, x2 = *px2, y2 = *py2;
    int right = w - 1, bottom = h - 1, iter, t;
    for (iter = 0; iter < 256; iter++) {
        int c1 = cr_gfx_outcode(x1, y1, right, bottom);
        int c2 = cr_gfx_outcode(x2, y2, right, bottom);
        float m;
        if (!(c1 | c2)) {
            *px1 = x1; *py1 = y1; *px2 = x2; *py2 = y2;
            return 1;
        }
        if (c1 & c2)
            return 0;
        if (!c1) {
            t = x1; x1 = x2; x2 = t;
            t = y1; y1 = y2; y2 = t;
            t = c1; c1 = c2; c2 = t;
        }
        m = (x2 != x1) ? (float)(y2 - y1) / (float)(x2 - x1) : 1.0f;
        if (c1 & 1) {
            y1 = cr_gfx_wrap16((uint32_t)y1 + (uint32_t)cr_gfx_cvtt((float)(0 - x1) * m));
            x1 = 0;
        } else if (c1 & 2) {
            y1 = cr_gfx_wrap16((uint32_t)y1 + (uint32_t)cr_gfx_cvtt((float)(right - x1) * m));
            x1 = right;
        } else if (c1 & 4) {
            if (x2 != x1)
                x1 = cr_gfx_wrap16((uint32_t)x1 + (uint32_t)cr_gfx_cvtt((float)(bottom - y1) / m));
            y1 = bottom;
        } else if (c1 & 8) {
            if (x2 != x1)
                x1 = cr_gfx_wrap16((uint32_t)x1 + (uint32_t)cr_gfx_cvtt((float)(0 - y1) / m));
            y1 = 0;
        }
    }
    return 0;
}

/* One polygon edge.  Quirks kept on purpose:
   - vertical/horizontal edges are solid lines including both ends;
   - otherwise the (post-clip, possibly swapped) first point is drawn opaque,
     then a Wu loop runs from the upper end, skipping both ends, so the upper
     end itself only gets an opaque pixel if it is the "first" point;
   - pair weights are wgt and 255 - wgt, turned into alpha (255 * weight) >> 8
     (so at most 254: Wu pixels always blend);
   - the error step is ((minor << 16) / major) << 16 in 32 bits, which is 0
     for an exact 45-degree edge: the minor axis then advances every step. */
static inline void cr_gfx_aaline(const cr_surface *s, int x1, int y1,
                                 int x2, int y2, uint32_t c)
{
    int xx0, yy0, xx1, yy1, dx, dy, t, xdir;
    uint32_t erracc = 0, erradj, prev, wgt;

    if (!cr_gfx_clip_line(s->w, s->h, &x1, &y1, &x2, &y2))
        return;
    xx0 = x1; yy0 = y1; xx1 = x2; yy1 = y2;
    if (yy0 > yy1) {
        t = yy0; yy0 = yy1; yy1 = t;
        t = xx0; xx0 = xx1; xx1 = t;
    }
    dx = xx1 - xx0;
    dy = yy1 - yy0;

    if (dx == 0) {
        if (dy > 0)
            cr_gfx_vline(s, x1, yy0, yy0 + dy, c);
        else
            cr_gfx_put(s, x1, y1, c, 255u);
        return;
    }
    if (dy == 0) {
        cr_gfx_hline(s, xx0, xx0 + dx, y1, c);
        return;
    }

    if (dx >= 0) {
        xdir = 1;
    } else {
        xdir = -1;
        dx = -dx;
    }

    cr_gfx_put(s, x1, y1, c, 255u);

    if (dy > dx) {
        /* y-major: x steps by xdir whenever the accumulator wraps */
        int xnext = xx0 + xdir;
        erradj = (uint32_t)((dx << 16) / dy) << 16;
        while (--dy) {
            prev = erracc;
            erracc += erradj;
            if (erracc <= prev) {
                xx0 = xnext;
                xnext += xdir;
            }
            yy0++;
            wgt = (erracc >> 24) & 255u;
            cr_gfx_put(s, xx0, yy0, c, (255u * (255u - wgt)) >> 8);
            cr_gfx_put(s, xnext, yy0, c, (255u * wgt) >> 8);
        }
    } else {
        /* x-major: y steps down whenever the accumulator wraps */
        int ynext = yy0 + 1;
        erradj = (uint32_t)((dy << 16) / dx) << 16;
        while (--dx) {
            prev = erracc;
            erracc += erradj;
            if (erracc <= prev) {
                yy0 = ynext;
                ynext++;
            }
            xx0 += xdir;
            wgt = (erracc >> 24) & 255u;
            cr_gfx_put(s, xx0, yy0, c, (255u * (255u - wgt)) >> 8);
            cr_gfx_put(s, xx0, ynext, c, (255u * wgt) >> 8);
        }
    }
    /* draw_endpoint is 0 for polygons: the last pixel is left out. */
}

/* ---- polygon entry points on 16-bit coordinates -------------------------- */

/* aapolygonColor: edges i-1 -> i for i = 1..n-1, then n-1 -> 0. */
static inline void cr_gfx_aapolygon_i(const cr_surface *s,
                                      const int *vx, const int *vy, int n,
                                      uint32_t c)
{
    int i, miny = vy[0], maxy = vy[0], small = 1;
    for (i = 0; i < n; i++) {
        if (vy[i] < miny) miny = vy[i];
        if (vy[i] > maxy) maxy = vy[i];
        if (vx[i] < -16000 || vx[i] > 16000 || vy[i] < -16000 || vy[i] > 16000) small = 0;
    }
    /* Nothing to store when the edges stay off the written rows. With coordinates this small
       clipping cannot wrap, so the pixels lie within a row of the edges' extent. */
    if (small && (maxy + 2 < s->ylo || miny - 2 >= s->yhi))
        return;
    for (i = 1; i < n; i++)
        cr_gfx_aaline(s, vx[i - 1], vy[i - 1], vx[i], vy[i], c);
    cr_gfx_aaline(s, vx[n - 1], vy[n - 1], vx[0], vy[0], c);
}

/* qsort comparator of the reference: a - b in wrapping int32, tested <= 0. */
static inline int cr_gfx_cmp_le(int a, int b)
{
    uint32_t d = (uint32_t)a - (uint32_t)b;
    return d == 0u || (d & 0x80000000u) != 0u;
}

/* glibc's small-array qsort: top-down merge sort, left half n/2, stable
   (takes from the left run when cmp <= 0).  Reproduced because the
   comparator can be inconsistent (see header comment). */
static inline void cr_gfx_msort(int *b, int n, int *tmp)
{
    int n1, n2, i, j, k;
    if (n <= 1)
        return;
    if (n == 2) { /* the merge of two singles: the right one first only if not (a <= b) */
        if (!cr_gfx_cmp_le(b[0], b[1])) {
            k = b[0]; b[0] = b[1]; b[1] = k;
        }
        return;
    }
    n1 = n / 2;
    n2 = n - n1;
    cr_gfx_msort(b, n1, tmp);
    cr_gfx_msort(b + n1, n2, tmp);
    i = 0; j = n1; k = 0;
    while (i < n1 && j < n) {
        if (cr_gfx_cmp_le(b[i], b[j]))
            tmp[k++] = b[i++];
        else
            tmp[k++] = b[j++];
    }
    while (i < n1)
        tmp[k++] = b[i++];
    for (i = 0; i < k; i++)   /* the tail of the right run is already in place */
        b[i] = tmp[i];
}

/* filledPolygonColor: scanline fill between miny and maxy.  An edge counts
   on row y when y1 <= y < y2, or on the last row when y1 < y == y2.  The
   crossing is ((65536*(y-y1))/(y2-y1))*(x2-x1) + 65536*x1 in wrapping int32;
   spans round (v+1) and (v-1) to nearest via (v >> 16) + bit 15, and are
   handed to hline as Sint16 (so they wrap too).  `ints` and `tmp` need n
   ints each (int is 32 bits on every supported target). */
static inline void cr_gfx_filled_polygon_i(const cr_surface *s,
                                           const int *vx, const int *vy, int n,
                                           uint32_t c, int *ints, int *tmp)
{
    int i, y, miny, maxy, ylo, yhi, cnt;
    miny = maxy = vy[0];
    for (i = 1; i < n; i++) {
        if (vy[i] < miny) miny = vy[i];
        else if (vy[i] > maxy) maxy = vy[i];
    }
    /* rows outside the written window would be rejected by hline anyway */
    ylo = miny < s->ylo ? s->ylo : miny;
    yhi = maxy > s->yhi - 1 ? s->yhi - 1 : maxy;
    for (y = ylo; y <= yhi; y++) {
        cnt = 0;
        for (i = 0; i < n; i++) {
            int a = i ? i - 1 : n - 1, b = i;
            int x1, y1, x2, y2;
            if (vy[a] < vy[b]) {
                x1 = vx[a]; y1 = vy[a]; x2 = vx[b]; y2 = vy[b];
            } else if (vy[a] > vy[b]) {
                x1 = vx[b]; y1 = vy[b]; x2 = vx[a]; y2 = vy[a];
            } else {
                continue;
            }
            if ((y >= y1 && y < y2) || (y == maxy && y > y1 && y <= y2)) {
                int32_t q = cr_gfx_s32(65536u * (uint32_t)(y - y1)) / (y2 - y1);
                ints[cnt++] = cr_gfx_s32((uint32_t)q * (uint32_t)(x2 - x1) +
                                         65536u * (uint32_t)x1);
            }
        }
        cr_gfx_msort(ints, cnt, tmp);
        for (i = 0; i + 1 < cnt; i += 2) {
            int32_t xa = cr_gfx_s32((uint32_t)ints[i] + 1u);
            int32_t xb = cr_gfx_s32((uint32_t)ints[i + 1] - 1u);
            xa = cr_gfx_asr16(xa) + (int32_t)(((uint32_t)xa & 32768u) >> 15);
            xb = cr_gfx_asr16(xb) + (int32_t)(((uint32_t)xb & 32768u) >> 15);
            cr_gfx_hline(s, cr_gfx_wrap16((uint32_t)xa),
                         cr_gfx_wrap16((uint32_t)xb), y, c);
        }
    }
}

/* ---- public API on Python-float coordinates ------------------------------ */

/* Converts the points (pygame's int() + Sint16 cast) into scratch[0..2n). */
static inline int cr_gfx_points(const double *xs, const double *ys, int n,
                                int *scratch)
{
    int i;
    if (n < 3)
        return 0;
    for (i = 0; i < n; i++)
        if (!cr_gfx_coord(xs[i], &scratch[i]) || !cr_gfx_coord(ys[i], &scratch[n + i]))
            return 0;
    return 1;
}

static inline uint32_t cr_gfx_rgb(uint8_t r, uint8_t g, uint8_t b)
{
    return ((uint32_t)r << 16) | ((uint32_t)g << 8) | (uint32_t)b;
}

/* pygame.gfxdraw.aapolygon(surf, pts, (r, g, b)).  scratch: 4*n ints. */
static inline int cr_gfx_aapolygon(const cr_surface *s,
                                   const double *xs, const double *ys, int n,
                                   uint8_t r, uint8_t g, uint8_t b, int *scratch)
{
    if (!cr_gfx_points(xs, ys, n, scratch))
        return -1;
    cr_gfx_aapolygon_i(s, scratch, scratch + n, n, cr_gfx_rgb(r, g, b));
    return 0;
}

/* pygame.gfxdraw.filled_polygon(surf, pts, (r, g, b)).  scratch: 4*n ints. */
static inline int cr_gfx_filled_polygon(const cr_surface *s,
                                        const double *xs, const double *ys,
                                        int n, uint8_t r, uint8_t g, uint8_t b,
                                        int *scratch)
{
    if (!cr_gfx_points(xs, ys, n, scratch))
        return -1;
    cr_gfx_filled_polygon_i(s, scratch, scratch + n, n,
                            cr_gfx_rgb(r, g, b), scratch + 2 * n,
                            scratch + 3 * n);
    return 0;
}

/* aapolygon followed by filled_polygon with the same points and colour
   (what CarRacing does per road/grass polygon).  scratch: 4*n ints. */
static inline int cr_gfx_polygon(const cr_surface *s,
                                 const double *xs, const double *ys, int n,
                                 uint8_t r, uint8_t g, uint8_t b, int *scratch)
{
    uint32_t c = cr_gfx_rgb(r, g, b);
    if (!cr_gfx_points(xs, ys, n, scratch))
        return -1;
    cr_gfx_aapolygon_i(s, scratch, scratch + n, n, c);
    cr_gfx_filled_polygon_i(s, scratch, scratch + n, n, c,
                            scratch + 2 * n,
                            scratch + 3 * n);
    return 0;
}

#endif /* CYPOOL_CR_GFX_H */
