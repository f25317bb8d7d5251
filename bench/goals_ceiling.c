#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
/* The ceiling under HandReach's compute_reward (docs/robotics.md, "compute_reward's speed"):
 * one pass over its 256 x 15 goal pairs (2 x 30 KB) that only loads, subtracts, squares and
 * adds, best of 21 timings of 100,000 passes over the same arrays (warm, as bench.goals'
 * are). Run: gcc -O2 -mavx2 bench/goals_ceiling.c -o /tmp/goals_ceiling && /tmp/goals_ceiling
 * [rows] (128 rows, 30 KB, fit the 32 KB L1 cache; 256 do not). */
__attribute__((noinline)) static double pass(const double* a, const double* d, size_t m) {
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t k = 0; k + 16 <= m; k += 16) {
        __m256d x0 = _mm256_sub_pd(_mm256_loadu_pd(a + k), _mm256_loadu_pd(d + k));
        __m256d x1 = _mm256_sub_pd(_mm256_loadu_pd(a + k + 4), _mm256_loadu_pd(d + k + 4));
        __m256d x2 = _mm256_sub_pd(_mm256_loadu_pd(a + k + 8), _mm256_loadu_pd(d + k + 8));
        __m256d x3 = _mm256_sub_pd(_mm256_loadu_pd(a + k + 12), _mm256_loadu_pd(d + k + 12));
        s0 = _mm256_add_pd(s0, _mm256_mul_pd(x0, x0));
        s1 = _mm256_add_pd(s1, _mm256_mul_pd(x1, x1));
        s2 = _mm256_add_pd(s2, _mm256_mul_pd(x2, x2));
        s3 = _mm256_add_pd(s3, _mm256_mul_pd(x3, x3));
    }
    __m256d s = _mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3));
    double o[4]; _mm256_storeu_pd(o, s); return o[0] + o[1] + o[2] + o[3];
}
int main(int argc, char** argv) {
    size_t rows = argc > 1 ? atoi(argv[1]) : 256, m = rows * 15;
    double *a = aligned_alloc(64, m * 8), *d = aligned_alloc(64, m * 8);
    for (size_t k = 0; k < m; k++) { a[k] = k * 1e-3; d[k] = k * 2e-3; }
    double best = 1e9, acc = 0;
    for (int r = 0; r < 21; r++) {
        struct timespec t0, t1; int n = 100000;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < n; i++) {
            __asm__ volatile("" : : "r"(a), "r"(d) : "memory");  /* no pass hoisted */
            acc += pass(a, d, m);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n / 1e3;
        if (us < best) best = us;
    }
    printf("%zu rows: %.3f us per pass (best of 21), %.1f GB/s  [%g]\n", rows, best,
           2 * m * 8 / best / 1e3, acc);
}
