/* Exact, thread-safe reimplementation of the bytes that
 *     np.transpose(pygame.surfarray.pixels3d(pygame.transform.smoothscale(src, (dw, dh))), (1, 0, 2))
 * gives with pygame-ce 2.5.8 when its smoothscale backend is "SSE2" (x86-64) or "NEON" (ARM, which
 * runs the same SSE2 routines through a translation layer), for shrinking a 32-bit XRGB8888 surface.
 *
 * Written from the behaviour of pygame-ce's area-averaging shrink filters; the arithmetic is the
 * SSE2 one, done lane by lane in plain C so every CPU produces the same bytes.  (pygame's "GENERIC"
 * C filter uses a different fixed point, 0x10000 per pixel with 32-bit products, and gives
 * different bytes; it is NOT the one reproduced here.)
 *
 * The model, per colour channel (channels never interact; the surface's unused X byte is filtered
 * by pygame too but never reaches pixels3d, so it is skipped here):
 *   - one source pixel is worth ONE = 0x4000 "units"; one output pixel spans
 *     space = ONE * src_len / dst_len units (integer division, so slightly less than exact), and
 *     recip = (uint16)(0x40000000 / space) is the 0.16 fixed-point factor that turns a sum over
 *     one span back into an average;
 *   - walking the source, a counter starts at `space`; while it is > ONE the whole pixel is added
 *     raw (0..255) to a 16-bit accumulator (wraps modulo 65536, as _mm_add_epi16 does) and the
 *     counter drops by ONE; otherwise the pixel straddles the boundary: with c = counter and
 *     f = ONE - c, v = pixel << 2 (so v*c >> 16 == pixel*c/ONE, in pixel units),
 *         out   = hi16(((uint16)(acc + hi16(v * c))) * recip)         (_mm_mulhi_epu16)
 *         acc   = hi16(v * f)                                          (carry to the next span)
 *         counter = space - f
 *     and out is stored through _mm_packus_epi16, i.e. read as int16 and clamped to 0..255;
 *   - X is shrunk first (every row; the accumulator restarts at 0 on each row) into a temporary
 *     image of 8-bit pixels, then Y is shrunk column-wise with one 16-bit accumulator per
 *     byte of a row (starting at 0).  A direction whose size does not change is not filtered
 *     at all; if neither changes the source is copied.
 * Outputs are exactly dst_len per direction: because space*dst_len <= ONE*src_len the last span
 * closes on or before the last source pixel; source pixels after it are ignored (pygame adds them
 * into an accumulator that is never written).
 *
 * Paths: where the compiler targets SSE2 (every x86-64 build) the two passes use SSE2 intrinsics
 * that perform the same per-lane operations; elsewhere (e.g. aarch64), or with
 * -DCR_SMOOTHSCALE_NO_SSE2, the portable scalar passes run. Both give the same bytes.
 *
 * Limits: 1 <= dw <= sw, 1 <= dh <= sh, sw and sh < 131072 (ONE*sw must fit an int, as in pygame).
 * C99 and C++14; no globals, no allocation: the caller passes `scratch`.
 */
#ifndef CYPOOL_CR_SMOOTHSCALE_H
#define CYPOOL_CR_SMOOTHSCALE_H

#include <stddef.h>
#include <stdint.h>

#define CR_SS_ONE 0x4000 /* one source pixel, in counter units (pygame's SSE2 filters) */

/* _mm_mulhi_epu16 on one lane. */
static inline uint16_t cr_ss_mulhi(uint16_t a, uint16_t b)
{
    return (uint16_t)(((uint32_t)a * (uint32_t)b) >> 16);
}

/* _mm_packus_epi16 on one lane: the 16-bit value is signed there, so >= 0x8000 becomes 0. */
static inline uint8_t cr_ss_packus(uint16_t v)
{
    return (uint8_t)(v >= 0x8000u ? 0u : (v > 255u ? 255u : v));
}

/* Bytes of scratch cr_smoothscale_rgb needs, suitably aligned for uint16_t (any malloc'd or
   16-byte-aligned buffer is fine):
     dw*3 uint16_t (Y accumulator line)  +  dw*sh*3 bytes (the X-shrunk image, RGB bytes).
   The same formula for every case, even those that need less (sizes that do not change). */
static inline size_t cr_smoothscale_scratch_bytes(int sw, int sh, int dw, int dh)
{
    (void)sw;
    (void)dh;
    return (size_t)dw * 3u * sizeof(uint16_t) + (size_t)dw * (size_t)sh * 3u;
}

/* Shrink each row of the XRGB source from sw to dw pixels; rows are written as dw*3 RGB bytes,
   `out_stride` bytes apart. Lane-by-lane form, the portable reference. */
static inline void cr_ss_shrink_x_scalar(const uint32_t *src, int sw, int sh, uint8_t *out, size_t out_stride,
                                  int dw)
{
    const int space = CR_SS_ONE * sw / dw;
    const uint16_t recip = (uint16_t)(0x40000000 / space);
    int y;
    for (y = 0; y < sh; y++) {
        const uint32_t *row = src + (size_t)y * (size_t)sw;
        uint8_t *o = out + (size_t)y * out_stride;
        /* 32-bit sums here are taken modulo 65536 where used: the same as 16-bit wrapping adds */
        uint32_t ar = 0, ag = 0, ab = 0;
        int counter = space;
        int i = 0, j;
        for (j = 0; j < dw; j++) {
            /* whole pixels inside this span: the number of steps for which `counter > ONE` holds */
            const int nfull = (counter - 1) / CR_SS_ONE;
            const int stop = i + nfull;
            uint32_t p;
            uint16_t c, f, vr, vg, vb;
            for (; i < stop; i++) {
                p = row[i];
                ar += (p >> 16) & 0xFFu;
                ag += (p >> 8) & 0xFFu;
                ab += p & 0xFFu;
            }
            counter -= nfull * CR_SS_ONE;
            /* pixel i straddles the end of span j (i < sw: see the header note) */
            p = row[i++];
            c = (uint16_t)counter;
            f = (uint16_t)(CR_SS_ONE - counter);
            vr = (uint16_t)(((p >> 16) & 0xFFu) << 2);
            vg = (uint16_t)(((p >> 8) & 0xFFu) << 2);
            vb = (uint16_t)((p & 0xFFu) << 2);
            o[0] = cr_ss_packus(cr_ss_mulhi((uint16_t)(ar + cr_ss_mulhi(vr, c)), recip));
            o[1] = cr_ss_packus(cr_ss_mulhi((uint16_t)(ag + cr_ss_mulhi(vg, c)), recip));
            o[2] = cr_ss_packus(cr_ss_mulhi((uint16_t)(ab + cr_ss_mulhi(vb, c)), recip));
            o += 3;
            ar = cr_ss_mulhi(vr, f);
            ag = cr_ss_mulhi(vg, f);
            ab = cr_ss_mulhi(vb, f);
            counter = space - (int)f;
        }
    }
}

/* Shrink an image of sh rows of n bytes (n = width*3, rows `in_stride` apart) to dh rows of n
   bytes (packed). acc: n uint16_t. Every byte is its own lane. */
static inline void cr_ss_shrink_y_scalar(const uint8_t *in, size_t in_stride, int n, int sh, uint8_t *out, int dh,
                                  uint16_t *acc)
{
    const int space = CR_SS_ONE * sh / dh;
    const uint16_t recip = (uint16_t)(0x40000000 / space);
    int counter = space;
    int y, k, oy = 0;
    for (k = 0; k < n; k++) acc[k] = 0;
    for (y = 0; y < sh && oy < dh; y++) {
        const uint8_t *row = in + (size_t)y * in_stride;
        if (counter > CR_SS_ONE) { /* whole row inside this span */
            for (k = 0; k < n; k++) acc[k] = (uint16_t)(acc[k] + row[k]);
            counter -= CR_SS_ONE;
        } else { /* row straddles the end of output row oy */
            const uint16_t c = (uint16_t)counter;
            const uint16_t f = (uint16_t)(CR_SS_ONE - counter);
            uint8_t *o = out + (size_t)oy * (size_t)n;
            for (k = 0; k < n; k++) {
                const uint16_t v = (uint16_t)(row[k] << 2);
                const uint16_t s = (uint16_t)(acc[k] + cr_ss_mulhi(v, c));
                o[k] = cr_ss_packus(cr_ss_mulhi(s, recip));
                acc[k] = cr_ss_mulhi(v, f);
            }
            oy++;
            counter = space - (int)f;
        }
    }
}

#if defined(__SSE2__) && !defined(CR_SMOOTHSCALE_NO_SSE2)
/* Faster x86-64 form of the two passes with the very instructions whose per-lane arithmetic the
   scalar code spells out (16-bit adds that wrap, mulhi_epu16, packus_epi16), so its bytes are
   identical to the scalar path's (the test harness checks both against pygame). */
#include <emmintrin.h>
#define CR_SS_HAVE_SSE2 1

/* Two rows per 128-bit register (low half row y, high half row y+1), four 16-bit lanes per pixel
   (B, G, R, X). A span's number of whole pixels is the same for every row, so it is computed
   from the counter instead of testing the counter at every pixel. */
static inline void cr_ss_shrink_x_sse2(const uint32_t *src, int sw, int sh, uint8_t *out, size_t out_stride,
                                       int dw)
{
    const int space = CR_SS_ONE * sw / dw;
    const __m128i recip = _mm_set1_epi16((short)(uint16_t)(0x40000000 / space));
    const __m128i zero = _mm_setzero_si128();
    int y;
    for (y = 0; y < sh; y += 2) {
        const uint32_t *r0 = src + (size_t)y * (size_t)sw;
        const uint32_t *r1 = (y + 1 < sh) ? r0 + sw : r0; /* odd height: last row twice */
        uint8_t *o0 = out + (size_t)y * out_stride;
        uint8_t *o1 = (y + 1 < sh) ? o0 + out_stride : o0;
        __m128i acc = zero;
        int counter = space;
        int i = 0, j;
        for (j = 0; j < dw; j++) {
            const int nfull = (counter - 1) / CR_SS_ONE; /* times `counter > ONE` holds */
            const int stop = i + nfull;
            __m128i px, v, d;
            uint32_t w0, w1;
            int f;
            for (; i < stop; i++) {
                px = _mm_unpacklo_epi32(_mm_cvtsi32_si128((int)r0[i]), _mm_cvtsi32_si128((int)r1[i]));
                acc = _mm_add_epi16(acc, _mm_unpacklo_epi8(px, zero));
            }
            counter -= nfull * CR_SS_ONE;
            f = CR_SS_ONE - counter;
            px = _mm_unpacklo_epi32(_mm_cvtsi32_si128((int)r0[i]), _mm_cvtsi32_si128((int)r1[i]));
            i++;
            v = _mm_slli_epi16(_mm_unpacklo_epi8(px, zero), 2);
            d = _mm_add_epi16(_mm_mulhi_epu16(v, _mm_set1_epi16((short)counter)), acc);
            acc = _mm_mulhi_epu16(v, _mm_set1_epi16((short)f));
            d = _mm_packus_epi16(_mm_mulhi_epu16(d, recip), zero);
            w0 = (uint32_t)_mm_cvtsi128_si32(d); /* 0xXXRRGGBB of row y */
            w1 = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(d, 4));
            o0[0] = (uint8_t)(w0 >> 16);
            o0[1] = (uint8_t)(w0 >> 8);
            o0[2] = (uint8_t)w0;
            o1[0] = (uint8_t)(w1 >> 16);
            o1[1] = (uint8_t)(w1 >> 8);
            o1[2] = (uint8_t)w1;
            o0 += 3;
            o1 += 3;
            counter = space - f;
        }
    }
}

/* Eight byte lanes per step; the last n % 8 lanes go through the scalar formulas. */
static inline void cr_ss_shrink_y_sse2(const uint8_t *in, size_t in_stride, int n, int sh, uint8_t *out, int dh,
                                       uint16_t *acc)
{
    const int space = CR_SS_ONE * sh / dh;
    const uint16_t recip16 = (uint16_t)(0x40000000 / space);
    const __m128i recip = _mm_set1_epi16((short)recip16);
    const __m128i zero = _mm_setzero_si128();
    const int n8 = n & ~7;
    int counter = space;
    int y, k, oy = 0;
    for (k = 0; k < n; k++) acc[k] = 0;
    for (y = 0; y < sh && oy < dh; y++) {
        const uint8_t *row = in + (size_t)y * in_stride;
        if (counter > CR_SS_ONE) {
            for (k = 0; k < n8; k += 8) {
                const __m128i px = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(const void *)(row + k)), zero);
                __m128i *a = (__m128i *)(void *)(acc + k);
                _mm_storeu_si128(a, _mm_add_epi16(_mm_loadu_si128(a), px));
            }
            for (; k < n; k++) acc[k] = (uint16_t)(acc[k] + row[k]);
            counter -= CR_SS_ONE;
        } else {
            const uint16_t c16 = (uint16_t)counter;
            const uint16_t f16 = (uint16_t)(CR_SS_ONE - counter);
            const __m128i c = _mm_set1_epi16((short)c16);
            const __m128i f = _mm_set1_epi16((short)f16);
            uint8_t *o = out + (size_t)oy * (size_t)n;
            for (k = 0; k < n8; k += 8) {
                const __m128i v = _mm_slli_epi16(
                    _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(const void *)(row + k)), zero), 2);
                __m128i *a = (__m128i *)(void *)(acc + k);
                __m128i d = _mm_add_epi16(_mm_mulhi_epu16(v, c), _mm_loadu_si128(a));
                _mm_storeu_si128(a, _mm_mulhi_epu16(v, f));
                d = _mm_packus_epi16(_mm_mulhi_epu16(d, recip), zero);
                _mm_storel_epi64((__m128i *)(void *)(o + k), d);
            }
            for (; k < n; k++) {
                const uint16_t v = (uint16_t)(row[k] << 2);
                o[k] = cr_ss_packus(cr_ss_mulhi((uint16_t)(acc[k] + cr_ss_mulhi(v, c16)), recip16));
                acc[k] = cr_ss_mulhi(v, f16);
            }
            oy++;
            counter = space - (int)f16;
        }
    }
}
#endif /* SSE2 */

/* Pass selection: SSE2 form where the compiler targets SSE2 (all x86-64), else the scalar one. */
static inline void cr_ss_shrink_x(const uint32_t *src, int sw, int sh, uint8_t *out, size_t out_stride, int dw)
{
#ifdef CR_SS_HAVE_SSE2
    cr_ss_shrink_x_sse2(src, sw, sh, out, out_stride, dw);
#else
    cr_ss_shrink_x_scalar(src, sw, sh, out, out_stride, dw);
#endif
}

static inline void cr_ss_shrink_y(const uint8_t *in, size_t in_stride, int n, int sh, uint8_t *out, int dh,
                                  uint16_t *acc)
{
#ifdef CR_SS_HAVE_SSE2
    cr_ss_shrink_y_sse2(in, in_stride, n, sh, out, dh, acc);
#else
    cr_ss_shrink_y_scalar(in, in_stride, n, sh, out, dh, acc);
#endif
}

/* Exactly np.transpose(pixels3d(pygame.transform.smoothscale(src, (dw, dh))), (1, 0, 2)) for a
   32-bit XRGB8888 source surface (pygame.Surface((sw, sh)), 0x00RRGGBB, pitch sw pixels):
   dst is dh*dw*3 bytes, row-major (y, x, rgb). Shrinking in both directions (dw <= sw, dh <= sh).
   scratch: cr_smoothscale_scratch_bytes(sw, sh, dw, dh) bytes, uint16_t-aligned, owned by the
   calling thread for the duration of the call (contents on entry do not matter). */
static inline void cr_smoothscale_rgb(const uint32_t *src, int sw, int sh, uint8_t *dst, int dw, int dh,
                                      void *scratch)
{
    uint16_t *acc = (uint16_t *)scratch;
    uint8_t *tmp = (uint8_t *)scratch + (size_t)dw * 3u * sizeof(uint16_t);
    const size_t n = (size_t)dw * 3u;
    if (dw <= 0 || dh <= 0) return;
    if (dh == sh) {
        if (dw == sw) { /* pygame copies the surface */
            size_t i, total = (size_t)sw * (size_t)sh;
            for (i = 0; i < total; i++) {
                const uint32_t p = src[i];
                dst[3 * i + 0] = (uint8_t)(p >> 16);
                dst[3 * i + 1] = (uint8_t)(p >> 8);
                dst[3 * i + 2] = (uint8_t)p;
            }
        } else {
            cr_ss_shrink_x(src, sw, sh, dst, n, dw);
        }
        return;
    }
    if (dw == sw) { /* Y only: filter the source's own bytes */
        size_t i, total = (size_t)sw * (size_t)sh;
        for (i = 0; i < total; i++) {
            const uint32_t p = src[i];
            tmp[3 * i + 0] = (uint8_t)(p >> 16);
            tmp[3 * i + 1] = (uint8_t)(p >> 8);
            tmp[3 * i + 2] = (uint8_t)p;
        }
    } else {
        cr_ss_shrink_x(src, sw, sh, tmp, n, dw);
    }
    cr_ss_shrink_y(tmp, n, (int)n, sh, dst, dh, acc);
}

#endif /* CYPOOL_CR_SMOOTHSCALE_H */
