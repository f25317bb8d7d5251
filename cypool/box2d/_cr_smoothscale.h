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
   16-byte-aligned buffer is fine): the larger of
     dw*3 uint16_t (Y accumulator line)  +  dw*sh*3 bytes (the X-shrunk image, RGB bytes)   [SSE2, scalar]
     dw * roundup8(sh) * 4 + 32 bytes (the X-shrunk image transposed, XRGB dwords)         [AVX2]
   The same formula for every case and CPU, even those that need less. */
static inline size_t cr_smoothscale_scratch_bytes(int sw, int sh, int dw, int dh)
{
    /* SSE2 / scalar layout */
    const size_t a = (size_t)dw * 3u * sizeof(uint16_t) + (size_t)dw * (size_t)sh * 3u;
    /* AVX2 layout: the X-shrunk image transposed, dw lines of sh XRGB dwords padded to a multiple
       of 8, plus 32 bytes to align it */
    const size_t b = (size_t)dw * (((size_t)sh + 7u) & ~(size_t)7u) * 4u + 32u;
    (void)sw;
    (void)dh;
    return a > b ? a : b;
}

/* Shrink each row of the XRGB source from sw to dw pixels; rows are written as dw*3 RGB bytes,
   `out_stride` bytes apart. Lane-by-lane form, the portable reference. */
static inline void cr_ss_shrink_x_scalar(const uint32_t *src, ptrdiff_t pitch, int sw, int sh, uint8_t *out,
                                         size_t out_stride, int dw)
{
    const int space = CR_SS_ONE * sw / dw;
    const uint16_t recip = (uint16_t)(0x40000000 / space);
    int y;
    for (y = 0; y < sh; y++) {
        const uint32_t *row = src + (ptrdiff_t)y * pitch;
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
static inline void cr_ss_shrink_x_sse2(const uint32_t *src, ptrdiff_t pitch, int sw, int sh, uint8_t *out,
                                       size_t out_stride, int dw)
{
    const int space = CR_SS_ONE * sw / dw;
    const __m128i recip = _mm_set1_epi16((short)(uint16_t)(0x40000000 / space));
    const __m128i zero = _mm_setzero_si128();
    int y;
    for (y = 0; y < sh; y += 2) {
        const uint32_t *r0 = src + (ptrdiff_t)y * pitch;
        const uint32_t *r1 = (y + 1 < sh) ? r0 + pitch : r0; /* odd height: last row twice */
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

#if defined(CR_SS_HAVE_SSE2) && !defined(CR_SMOOTHSCALE_NO_AVX2) && defined(__x86_64__) && \
    (defined(__GNUC__) || defined(__clang__))
/* AVX2 form, compiled for AVX2 with a target attribute (the package is built without -mavx2) and
   chosen at run time with __builtin_cpu_supports("avx2").  Same per-lane arithmetic again.

   One routine does both passes: it shrinks `rows` lines of `len` XRGB dwords to `olen` and writes
   the result TRANSPOSED (output line j holds output pixel j of every input line).  Pass 1 takes
   the source (sh lines of sw) to a temporary image of dw lines of sh dwords; pass 2 takes those
   dw lines to dh, and its transposed output is the final (dh, dw) image, stored as RGB bytes.
   The Y shrink is thereby the same walk as the X shrink (the two formulas are the same per lane;
   the X byte is filtered as a 4th lane, as pygame does, and dropped at the end).

   Eight lines are done at once, one line per 32-bit lane: 4x8 blocks of the input are loaded and
   transposed into a small buffer of "columns" (one __m256i = one input pixel of 8 lines), then the
   span walk adds whole columns and finishes a span at each straddling column.  A column is split
   into two registers of 16-bit lanes, (B, R) = v & 0x00FF and (G, X) = v >> 8, so every channel
   has its own 16-bit lane and the adds wrap exactly like _mm_add_epi16.  packus_epi16 is
   max(0, min(255, .)) on signed 16-bit lanes. */
#include <immintrin.h>
#include <string.h>
#define CR_SS_HAVE_AVX2 1
#define CR_SS_CHUNK 64 /* columns transposed at a time (64 * 32 bytes of stack) */

/* Columns c..c+3 of line lo in the low 128 bits, of line hi in the high ones. */
__attribute__((target("avx2"))) static inline __m256i cr_ss_load_pair(const uint32_t *lo, const uint32_t *hi, int c)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(lo + c))),
                                   _mm_loadu_si128((const __m128i *)(const void *)(hi + c)), 1);
}

/* out: when rgb is NULL, output pixel j of line y goes to tout[j * tout_stride + y] (tout_stride
   must be >= rows rounded up to 8: whole groups of 8 are stored); else to rgb[(j * rows + y) * 3]
   as R, G, B bytes. Line r is at in + r * in_stride; reads stay inside [0, len) of each line. */
__attribute__((target("avx2"))) static inline void cr_ss_shrink_t_avx2(const uint32_t *in, ptrdiff_t in_stride,
                                                                       int rows, int len, int olen, uint32_t *tout,
                                                                       size_t tout_stride, uint8_t *rgb)
{
    const int space = CR_SS_ONE * len / olen;
    const __m256i recip = _mm256_set1_epi16((short)(uint16_t)(0x40000000 / space));
    const __m256i lo8 = _mm256_set1_epi16(0x00FF);
    const __m256i zero = _mm256_setzero_si256();
    /* XRGB dwords -> R, G, B bytes: 12 bytes per 128-bit half, then the two halves joined */
    const __m256i to_rgb = _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1, 2, 1, 0, 6, 5,
                                            4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
    __m256i buf[CR_SS_CHUNK];
    int y0;
    for (y0 = 0; y0 < rows; y0 += 8) {
        const int nv = rows - y0 < 8 ? rows - y0 : 8; /* valid lines; the others repeat the last */
        const uint32_t *p[8];
        __m256i aBR = zero, aGX = zero; /* span accumulators */
        int counter = space, i = 0, j = 0, c0, r;
        /* span j: whole columns [i, s), straddling column s, which gets weight cs */
        int nfull = (counter - 1) / CR_SS_ONE;
        int s = nfull;
        int cs = counter - nfull * CR_SS_ONE;
        for (r = 0; r < 8; r++) p[r] = in + (ptrdiff_t)(y0 + (r < nv ? r : nv - 1)) * in_stride;
        for (c0 = 0; c0 < len && j < olen; c0 += CR_SS_CHUNK) {
            const int c1 = len - c0 < CR_SS_CHUNK ? len : c0 + CR_SS_CHUNK;
            int c;
            /* transpose columns [c0, c1) into buf: lines 0-3 in the low half, 4-7 in the high one */
            for (c = c0; c + 4 <= c1; c += 4) {
                const __m256i a0 = cr_ss_load_pair(p[0], p[4], c);
                const __m256i a1 = cr_ss_load_pair(p[1], p[5], c);
                const __m256i a2 = cr_ss_load_pair(p[2], p[6], c);
                const __m256i a3 = cr_ss_load_pair(p[3], p[7], c);
                const __m256i t0 = _mm256_unpacklo_epi32(a0, a1), t1 = _mm256_unpackhi_epi32(a0, a1);
                const __m256i t2 = _mm256_unpacklo_epi32(a2, a3), t3 = _mm256_unpackhi_epi32(a2, a3);
                buf[c - c0 + 0] = _mm256_unpacklo_epi64(t0, t2);
                buf[c - c0 + 1] = _mm256_unpackhi_epi64(t0, t2);
                buf[c - c0 + 2] = _mm256_unpacklo_epi64(t1, t3);
                buf[c - c0 + 3] = _mm256_unpackhi_epi64(t1, t3);
            }
            for (; c < c1; c++) { /* the last len % 4 columns */
                uint32_t t[8];
                for (r = 0; r < 8; r++) t[r] = p[r][c];
                buf[c - c0] = _mm256_loadu_si256((const __m256i *)(const void *)t);
            }
            for (;;) {
                const int e = s < c1 ? s : c1;
                for (; i < e; i++) { /* whole columns */
                    const __m256i v = buf[i - c0];
                    aBR = _mm256_add_epi16(aBR, _mm256_and_si256(v, lo8));
                    aGX = _mm256_add_epi16(aGX, _mm256_srli_epi16(v, 8));
                }
                if (s >= c1) break; /* the span goes on in the next chunk */
                {                   /* column i == s straddles the end of span j */
                    const int f = CR_SS_ONE - cs;
                    const __m256i v = buf[i - c0];
                    const __m256i vBR = _mm256_slli_epi16(_mm256_and_si256(v, lo8), 2);
                    const __m256i vGX = _mm256_slli_epi16(_mm256_srli_epi16(v, 8), 2);
                    const __m256i cc = _mm256_set1_epi16((short)cs), ff = _mm256_set1_epi16((short)f);
                    __m256i dBR = _mm256_mulhi_epu16(_mm256_add_epi16(_mm256_mulhi_epu16(vBR, cc), aBR), recip);
                    __m256i dGX = _mm256_mulhi_epu16(_mm256_add_epi16(_mm256_mulhi_epu16(vGX, cc), aGX), recip);
                    __m256i w;
                    aBR = _mm256_mulhi_epu16(vBR, ff);
                    aGX = _mm256_mulhi_epu16(vGX, ff);
                    dBR = _mm256_min_epi16(_mm256_max_epi16(dBR, zero), lo8); /* packus */
                    dGX = _mm256_min_epi16(_mm256_max_epi16(dGX, zero), lo8);
                    w = _mm256_or_si256(dBR, _mm256_slli_epi16(dGX, 8)); /* XRGB dwords again */
                    if (rgb == NULL) {
                        _mm256_storeu_si256((__m256i *)(void *)(tout + (size_t)j * tout_stride + (size_t)y0), w);
                    } else {
                        uint8_t *o = rgb + ((size_t)j * (size_t)rows + (size_t)y0) * 3u;
                        w = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(w, to_rgb), join);
                        if (nv == 8) {
                            _mm_storeu_si128((__m128i *)(void *)o, _mm256_castsi256_si128(w));
                            _mm_storel_epi64((__m128i *)(void *)(o + 16), _mm256_extracti128_si256(w, 1));
                        } else {
                            uint8_t tb[32];
                            _mm256_storeu_si256((__m256i *)(void *)tb, w);
                            memcpy(o, tb, (size_t)nv * 3u);
                        }
                    }
                    i++;
                    j++;
                    if (j == olen) break;
                    counter = space - f;
                    nfull = (counter - 1) / CR_SS_ONE;
                    s = i + nfull;
                    cs = counter - nfull * CR_SS_ONE;
                }
            }
        }
    }
}

/* The AVX2 passes' temporary image in scratch: dw lines of sh XRGB dwords, each line padded to
   sh8 = sh rounded up to 8, 32-byte aligned. */
static inline uint32_t *cr_ss_avx2_tmp(void *scratch)
{
    return (uint32_t *)(void *)((uint8_t *)scratch + ((32u - ((uintptr_t)scratch & 31u)) & 31u));
}

static inline size_t cr_ss_sh8(int sh) { return ((size_t)sh + 7u) & ~(size_t)7u; }
#endif /* AVX2 */

/* Pass selection: SSE2 form where the compiler targets SSE2 (all x86-64), else the scalar one. */
static inline void cr_ss_shrink_x(const uint32_t *src, ptrdiff_t pitch, int sw, int sh, uint8_t *out,
                                  size_t out_stride, int dw)
{
#ifdef CR_SS_HAVE_SSE2
    cr_ss_shrink_x_sse2(src, pitch, sw, sh, out, out_stride, dw);
#else
    cr_ss_shrink_x_scalar(src, pitch, sw, sh, out, out_stride, dw);
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

/* Banded form, for a source drawn a band of rows at a time, when shrinking both ways (dw < sw and
   dh < sh): cr_smoothscale_band X-shrinks source rows y0 .. y0+rows-1 (row_y0 is row y0, the next
   row is row_y0 + pitch; y0 a multiple of 8) into scratch, bands in any order; once every row is
   done, cr_smoothscale_finish shrinks Y into dst. Together they give cr_smoothscale_rgb's bytes.
   `avx2` picks the form for both calls: cr_ss_use_avx2(sw, sh, dw, dh), or 0 for the SSE2 (or
   scalar) passes. */
static inline int cr_ss_use_avx2(int sw, int sh, int dw, int dh)
{
#ifdef CR_SS_HAVE_AVX2
    return dw < sw && dh < sh && __builtin_cpu_supports("avx2");
#else
    (void)sw, (void)sh, (void)dw, (void)dh;
    return 0;
#endif
}

static inline void cr_smoothscale_band(int avx2, const uint32_t *row_y0, ptrdiff_t pitch, int sw, int y0,
                                       int rows, int sh, int dw, int dh, void *scratch)
{
    const size_t n = (size_t)dw * 3u;
    (void)avx2, (void)sh, (void)dh;
#ifdef CR_SS_HAVE_AVX2
    if (avx2) { /* X: columns y0.. of the (dw, sh) temporary image */
        cr_ss_shrink_t_avx2(row_y0, pitch, rows, sw, dw, cr_ss_avx2_tmp(scratch) + y0, cr_ss_sh8(sh), NULL);
        return;
    }
#endif
    cr_ss_shrink_x(row_y0, pitch, sw, rows, (uint8_t *)scratch + n * sizeof(uint16_t) + (size_t)y0 * n, n, dw);
}

static inline void cr_smoothscale_finish(int avx2, int sw, int sh, uint8_t *dst, int dw, int dh, void *scratch)
{
    const size_t n = (size_t)dw * 3u;
    (void)avx2, (void)sw;
#ifdef CR_SS_HAVE_AVX2
    if (avx2) { /* Y: (dw, sh) -> (dh, dw) RGB */
        cr_ss_shrink_t_avx2(cr_ss_avx2_tmp(scratch), (ptrdiff_t)cr_ss_sh8(sh), dw, sh, dh, NULL, 0, dst);
        return;
    }
#endif
    cr_ss_shrink_y((uint8_t *)scratch + n * sizeof(uint16_t), n, (int)n, sh, dst, dh, (uint16_t *)scratch);
}

#ifdef CR_SS_HAVE_AVX2
/* Both passes with the AVX2 routine (dw < sw and dh < sh): the whole source as one band. */
static inline void cr_ss_scale_avx2(const uint32_t *src, ptrdiff_t pitch, int sw, int sh, uint8_t *dst, int dw,
                                    int dh, void *scratch)
{
    cr_smoothscale_band(1, src, pitch, sw, 0, sh, sh, dw, dh, scratch);
    cr_smoothscale_finish(1, sw, sh, dst, dw, dh, scratch);
}
#endif

/* The source's R, G, B bytes, row after row (dw == sw). */
static inline void cr_ss_copy_rgb(const uint32_t *src, ptrdiff_t pitch, int sw, int sh, uint8_t *out)
{
    int x, y;
    for (y = 0; y < sh; y++) {
        const uint32_t *row = src + (ptrdiff_t)y * pitch;
        for (x = 0; x < sw; x++) {
            const uint32_t p = row[x];
            out[0] = (uint8_t)(p >> 16);
            out[1] = (uint8_t)(p >> 8);
            out[2] = (uint8_t)p;
            out += 3;
        }
    }
}

/* Exactly np.transpose(pixels3d(pygame.transform.smoothscale(src, (dw, dh))), (1, 0, 2)) for a
   32-bit XRGB8888 source surface (pygame.Surface((sw, sh)), 0x00RRGGBB): row y of the source is at
   src + y * pitch (pitch in pixels, >= sw in magnitude; negative for a source read upside down).
   dst is dh*dw*3 bytes, row-major (y, x, rgb). Shrinking in both directions (dw <= sw, dh <= sh).
   scratch: cr_smoothscale_scratch_bytes(sw, sh, dw, dh) bytes, uint16_t-aligned, owned by the
   calling thread for the duration of the call (contents on entry do not matter). */
static inline void cr_smoothscale_rgb(const uint32_t *src, ptrdiff_t pitch, int sw, int sh, uint8_t *dst, int dw,
                                      int dh, void *scratch)
{
    uint16_t *acc = (uint16_t *)scratch;
    uint8_t *tmp = (uint8_t *)scratch + (size_t)dw * 3u * sizeof(uint16_t);
    const size_t n = (size_t)dw * 3u;
    if (dw <= 0 || dh <= 0) return;
#ifdef CR_SS_HAVE_AVX2
    if (dw < sw && dh < sh && __builtin_cpu_supports("avx2")) {
        cr_ss_scale_avx2(src, pitch, sw, sh, dst, dw, dh, scratch);
        return;
    }
#endif
    if (dh == sh) {
        if (dw == sw) /* pygame copies the surface */
            cr_ss_copy_rgb(src, pitch, sw, sh, dst);
        else
            cr_ss_shrink_x(src, pitch, sw, sh, dst, n, dw);
        return;
    }
    if (dw == sw) /* Y only: filter the source's own bytes */
        cr_ss_copy_rgb(src, pitch, sw, sh, tmp);
    else
        cr_ss_shrink_x(src, pitch, sw, sh, tmp, n, dw);
    cr_ss_shrink_y(tmp, n, (int)n, sh, dst, dh, acc);
}

#endif /* CYPOOL_CR_SMOOTHSCALE_H */
