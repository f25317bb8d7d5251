/* The goal kernels' loops (cypool/robotics/_goal_batch.pxi): squared distances of HER's
 * (n, g) goal rows, turned into rewards in the same pass (gl_rows2/3/15), and the helpers of
 * the kernels around them. On x86-64 CPUs with AVX2 (__builtin_cpu_supports, per call),
 * four rows go through 4-wide registers at a time, rows in lanes; other CPUs, and the rows
 * after the last group of four, take the plain loop.
 *
 * Exactness: every result is bit-identical on both paths. Sub, mul, add, sqrt and compares
 * are correctly rounded IEEE operations in any width; each row's sum keeps the reference's
 * order (only lanes are shuffled, never the operands of an add, and a + b == b + a
 * exactly); the build's -ffp-contract=off forbids fusing a multiply into an add, and the
 * target is "avx2" alone (no "fma"). Reads: rows [0, n) of each array and nothing past them
 * (a group of four reads its own 4 g values of each array only).
 * gl_rows* return whether a squared distance is NaN or infinite (on the bits: an all-ones
 * exponent plus 2**52 carries into bit 63), after which the caller checks the goals. */
#ifndef CYPOOL_GOAL_LOOPS_H
#define CYPOOL_GOAL_LOOPS_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <stddef.h>

#if defined(__GNUC__) && defined(__x86_64__) && !defined(CYPOOL_NO_AVX2)
#define GL_AVX2 1
#include <immintrin.h>
#define GL_TARGET __attribute__((target("avx2"), unused))
#endif

#if defined(__GNUC__)
#define GL_UNUSED __attribute__((unused))
#else
#define GL_UNUSED
#endif

#define GL_EXP 0x7ff0000000000000ULL
#define GL_ONE 0x0010000000000000ULL

/* What a kernel writes for each squared distance s. */
enum {
    GL_SPARSE_F = 0,    /* float32: s > bound ? -1 : -0 (Fetch, HandReach: -(d > threshold)) */
    GL_NEG_SQRT = 1,    /* float64: -sqrt(s) (-distance) */
    GL_WITHIN = 2       /* float64: s <= bound ? 1 : 0 (PointMaze: d <= 0.45) */
};

static inline uint64_t gl_bad(double s)
{
    uint64_t b;
    memcpy(&b, &s, sizeof b);
    return (b & GL_EXP) + GL_ONE;
}

static inline void gl_emit(double s, void* out, ptrdiff_t i, int mode, double bound)
{
    if (mode == GL_SPARSE_F)
        ((float*) out)[i] = s > bound ? -1.0f : -0.0f;
    else if (mode == GL_NEG_SQRT)
        ((double*) out)[i] = -sqrt(s);
    else
        ((double*) out)[i] = s <= bound ? 1.0 : 0.0;
}

/* The rows' sums of squares, in the reference's order. */
static inline double gl_row2(const double* a, const double* d)
{
    double dx = a[0] - d[0], dy = a[1] - d[1];
    return dx * dx + dy * dy;
}

static inline double gl_row3(const double* a, const double* d)
{
    double dx = a[0] - d[0], dy = a[1] - d[1], dz = a[2] - d[2];
    return (dx * dx + dy * dy) + dz * dz;
}

/* np.linalg.norm's sum over 15 values: numpy's pairwise sum, eight partial sums
 * ((q0+q1) + (q2+q3)) + ((q4+q5) + (q6+q7)), then q8 .. q14 one by one. */
static inline double gl_row15(const double* a, const double* d)
{
    double q[15];
    for (int k = 0; k < 15; k++)
        q[k] = (a[k] - d[k]) * (a[k] - d[k]);
    double r = ((q[0] + q[1]) + (q[2] + q[3])) + ((q[4] + q[5]) + (q[6] + q[7]));
    for (int k = 8; k < 15; k++)
        r = r + q[k];
    return r;
}

#define GL_PLAIN(G)                                                                       \
    static uint64_t gl_plain##G(const double* a, const double* d, void* out, ptrdiff_t i0, \
                                ptrdiff_t n, int mode, double bound)                      \
    {                                                                                     \
        uint64_t hit = 0;                                                                 \
        for (ptrdiff_t i = i0; i < n; i++) {                                              \
            double s = gl_row##G(a + G * i, d + G * i);                                   \
            hit |= gl_bad(s);                                                             \
            gl_emit(s, out, i, mode, bound);                                              \
        }                                                                                 \
        return hit;                                                                       \
    }
GL_PLAIN(2)
GL_PLAIN(3)
GL_PLAIN(15)

#ifdef GL_AVX2
GL_TARGET static inline __m256d gl_sq4(const double* a, const double* d)
{
    __m256d x = _mm256_sub_pd(_mm256_loadu_pd(a), _mm256_loadu_pd(d));
    return _mm256_mul_pd(x, x);
}

/* 4 rows of 2: hadd gives [s0, s2, s1, s3] (each dx*dx + dy*dy), put back in order. */
GL_TARGET static inline __m256d gl_sum4x2(const double* a, const double* d)
{
    __m256d h = _mm256_hadd_pd(gl_sq4(a, d), gl_sq4(a + 4, d + 4));
    return _mm256_permute4x64_pd(h, 0xD8);
}

/* 4 rows of 3: the squares t0 = [x0 y0 z0 x1], t1 = [y1 z1 x2 y2], t2 = [z2 x3 y3 z3] are
 * split into X, Y, Z (row i in lane i) by blends and one permute each; (X + Y) + Z. */
GL_TARGET static inline __m256d gl_sum4x3(const double* a, const double* d)
{
    __m256d t0 = gl_sq4(a, d), t1 = gl_sq4(a + 4, d + 4), t2 = gl_sq4(a + 8, d + 8);
    __m256d x = _mm256_blend_pd(_mm256_blend_pd(t0, t1, 0x4), t2, 0x2);  /* x0 y3 x2 x1 */
    __m256d y = _mm256_blend_pd(_mm256_blend_pd(t0, t1, 0x9), t2, 0x4);  /* y1 y0 y3 y2 */
    __m256d z = _mm256_blend_pd(_mm256_blend_pd(t0, t1, 0x2), t2, 0x9);  /* z2 z1 z0 z3 */
    x = _mm256_permute4x64_pd(x, 0x6C);
    y = _mm256_permute_pd(y, 0x5);
    z = _mm256_permute4x64_pd(z, 0xC6);
    return _mm256_add_pd(_mm256_add_pd(x, y), z);
}

/* [q0+q1 (rows 0..3)] + [q2+q3 (rows 0..3)] from the 4 rows' squares r0..r3 of 4 columns. */
GL_TARGET static inline __m256d gl_pairs4(__m256d r0, __m256d r1, __m256d r2, __m256d r3)
{
    __m256d h01 = _mm256_hadd_pd(r0, r1), h23 = _mm256_hadd_pd(r2, r3);
    return _mm256_add_pd(_mm256_permute2f128_pd(h01, h23, 0x20),
                         _mm256_permute2f128_pd(h01, h23, 0x31));
}

/* 4 rows' squares of 4 columns, transposed: c[k] = column k of rows 0..3. */
GL_TARGET static inline void gl_columns4(__m256d r0, __m256d r1, __m256d r2, __m256d r3,
                                         __m256d* c)
{
    __m256d u0 = _mm256_unpacklo_pd(r0, r1), u1 = _mm256_unpackhi_pd(r0, r1);
    __m256d u2 = _mm256_unpacklo_pd(r2, r3), u3 = _mm256_unpackhi_pd(r2, r3);
    c[0] = _mm256_permute2f128_pd(u0, u2, 0x20);
    c[1] = _mm256_permute2f128_pd(u1, u3, 0x20);
    c[2] = _mm256_permute2f128_pd(u0, u2, 0x31);
    c[3] = _mm256_permute2f128_pd(u1, u3, 0x31);
}

/* 4 rows of 15 (60 values): columns 0-3 and 4-7 through gl_pairs4, columns 8-10 and 11-14
 * (loaded from 11: a row's last load ends on its own last value) transposed for the tail. */
GL_TARGET static inline __m256d gl_sum4x15(const double* a, const double* d)
{
    __m256d c[8];
    __m256d p0 = gl_pairs4(gl_sq4(a, d), gl_sq4(a + 15, d + 15), gl_sq4(a + 30, d + 30),
                           gl_sq4(a + 45, d + 45));
    __m256d p1 = gl_pairs4(gl_sq4(a + 4, d + 4), gl_sq4(a + 19, d + 19),
                           gl_sq4(a + 34, d + 34), gl_sq4(a + 49, d + 49));
    gl_columns4(gl_sq4(a + 8, d + 8), gl_sq4(a + 23, d + 23), gl_sq4(a + 38, d + 38),
                gl_sq4(a + 53, d + 53), c);
    gl_columns4(gl_sq4(a + 11, d + 11), gl_sq4(a + 26, d + 26), gl_sq4(a + 41, d + 41),
                gl_sq4(a + 56, d + 56), c + 4);
    __m256d r = _mm256_add_pd(p0, p1);
    r = _mm256_add_pd(r, c[0]);             /* q8 */
    r = _mm256_add_pd(r, c[1]);
    r = _mm256_add_pd(r, c[2]);             /* q10 */
    r = _mm256_add_pd(r, c[4]);             /* q11 (c[3] is q11 too) */
    r = _mm256_add_pd(r, c[5]);
    r = _mm256_add_pd(r, c[6]);
    return _mm256_add_pd(r, c[7]);          /* q14 */
}

GL_TARGET static inline void gl_emit4(__m256d s, void* out, ptrdiff_t i, int mode,
                                      double bound)
{
    __m256d b = _mm256_set1_pd(bound);
    if (mode == GL_SPARSE_F) {
        __m256d m = _mm256_cmp_pd(s, b, _CMP_GT_OQ);
        __m256d v = _mm256_blendv_pd(_mm256_set1_pd(-0.0), _mm256_set1_pd(-1.0), m);
        _mm_storeu_ps((float*) out + i, _mm256_cvtpd_ps(v));
    } else if (mode == GL_NEG_SQRT) {
        _mm256_storeu_pd((double*) out + i,
                         _mm256_xor_pd(_mm256_sqrt_pd(s), _mm256_set1_pd(-0.0)));
    } else {
        __m256d m = _mm256_cmp_pd(s, b, _CMP_LE_OQ);
        _mm256_storeu_pd((double*) out + i, _mm256_and_pd(m, _mm256_set1_pd(1.0)));
    }
}

GL_TARGET static inline __m256i gl_bad4(__m256d s)
{
    return _mm256_add_epi64(_mm256_and_si256(_mm256_castpd_si256(s),
                                             _mm256_set1_epi64x(GL_EXP)),
                            _mm256_set1_epi64x(GL_ONE));
}

GL_TARGET static inline uint64_t gl_or4(__m256i h)
{
    __m128i o = _mm_or_si128(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    return (uint64_t) _mm_cvtsi128_si64(o) | (uint64_t) _mm_extract_epi64(o, 1);
}

GL_TARGET static ptrdiff_t gl_wide_nonfinite(const double* x, ptrdiff_t m, uint64_t* hit)
{
    __m256i h0 = _mm256_setzero_si256(), h1 = h0, h2 = h0, h3 = h0;
    ptrdiff_t k = 0;
    for (; k + 16 <= m; k += 16) {
        h0 = _mm256_or_si256(h0, gl_bad4(_mm256_loadu_pd(x + k)));
        h1 = _mm256_or_si256(h1, gl_bad4(_mm256_loadu_pd(x + k + 4)));
        h2 = _mm256_or_si256(h2, gl_bad4(_mm256_loadu_pd(x + k + 8)));
        h3 = _mm256_or_si256(h3, gl_bad4(_mm256_loadu_pd(x + k + 12)));
    }
    *hit |= gl_or4(_mm256_or_si256(_mm256_or_si256(h0, h1), _mm256_or_si256(h2, h3)));
    return k;
}

GL_TARGET static ptrdiff_t gl_wide_sqrt(double* x, ptrdiff_t n)
{
    ptrdiff_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm256_storeu_pd(x + i, _mm256_sqrt_pd(_mm256_loadu_pd(x + i)));
    return i;
}

#define GL_WIDE(G)                                                                        \
    GL_TARGET static ptrdiff_t gl_wide##G(const double* a, const double* d, void* out,    \
                                          ptrdiff_t n, int mode, double bound,            \
                                          uint64_t* hit)                                  \
    {                                                                                     \
        __m256i h = _mm256_setzero_si256();                                               \
        ptrdiff_t i = 0;                                                                  \
        for (; i + 4 <= n; i += 4) {                                                      \
            __m256d s = gl_sum4x##G(a + G * i, d + G * i);                                \
            h = _mm256_or_si256(h, gl_bad4(s));                                           \
            gl_emit4(s, out, i, mode, bound);                                             \
        }                                                                                 \
        *hit |= gl_or4(h);                                                                \
        return i;                                                                         \
    }
GL_WIDE(2)
GL_WIDE(3)
GL_WIDE(15)
#endif

/* Whether any of the m values of x is NaN or infinite (the goals' check). Four independent
 * accumulators: one would chain every or onto the last. */
GL_UNUSED static int gl_nonfinite(const double* x, ptrdiff_t m)
{
    uint64_t hit = 0;
    ptrdiff_t k = 0;
#ifdef GL_AVX2
    if (m >= 16 && __builtin_cpu_supports("avx2"))
        k = gl_wide_nonfinite(x, m, &hit);
#endif
    uint64_t h0 = 0, h1 = 0;
    for (; k + 2 <= m; k += 2) {
        h0 |= gl_bad(x[k]);
        h1 |= gl_bad(x[k + 1]);
    }
    if (k < m)
        h0 |= gl_bad(x[k]);
    return (int) ((hit | h0 | h1) >> 63);
}

/* x = sqrt(x) in place, n values. */
GL_UNUSED static void gl_sqrt_n(double* x, ptrdiff_t n)
{
    ptrdiff_t i = 0;
#ifdef GL_AVX2
    if (n >= 4 && __builtin_cpu_supports("avx2"))
        i = gl_wide_sqrt(x, n);
#endif
    for (; i < n; i++)
        x[i] = sqrt(x[i]);
}

/* HandManipulate sparse: o[i] = 0 when s[i] <= bound and 2 r[i] < rbound (r NULL: no
 * rotation, true), else -1 (float32: d_pos < threshold and d_rot < 0.1); branch-free. */
GL_UNUSED static void gl_both_within(const double* s, double bound, const double* r,
                                     double rbound, float* o, ptrdiff_t n)
{
    if (r == NULL) {
        for (ptrdiff_t i = 0; i < n; i++)
            o[i] = s[i] <= bound ? 0.0f : -1.0f;
        return;
    }
    for (ptrdiff_t i = 0; i < n; i++)
        o[i] = ((s[i] <= bound) & (2 * r[i] < rbound)) ? 0.0f : -1.0f;
}


/* The kernels: rows [0, n) of (a, d), g values each, into out as mode says; whether a
 * squared distance is NaN or infinite. */
#define GL_ROWS(G)                                                                        \
    GL_UNUSED static int gl_rows##G(const double* a, const double* d, void* out,          \
                                    ptrdiff_t n, int mode, double bound)                  \
    {                                                                                     \
        uint64_t hit = 0;                                                                 \
        ptrdiff_t i = 0;                                                                  \
        GL_WIDE_CALL(G)                                                                   \
        hit |= gl_plain##G(a, d, out, i, n, mode, bound);                                 \
        return (int) (hit >> 63);                                                         \
    }
#ifdef GL_AVX2
#define GL_WIDE_CALL(G)                                                                   \
    if (n >= 4 && __builtin_cpu_supports("avx2"))                                        \
        i = gl_wide##G(a, d, out, n, mode, bound, &hit);
#else
#define GL_WIDE_CALL(G)
#endif
GL_ROWS(2)
GL_ROWS(3)
GL_ROWS(15)

#endif
