/* OpenMP shim: the same calls compile with or without OpenMP (CYPOOL_NO_OPENMP builds). */
#ifndef CYPOOL_OMP_SHIM_H
#define CYPOOL_OMP_SHIM_H
#ifdef _OPENMP
#include <omp.h>
static inline int cp_omp_built(void) { return 1; }
static inline int cp_omp_max_threads(void) { return omp_get_max_threads(); }
static inline int cp_omp_thread_num(void) { return omp_get_thread_num(); }
static inline int cp_omp_version(void) { return _OPENMP; }
#else
static inline int cp_omp_built(void) { return 0; }
static inline int cp_omp_max_threads(void) { return 1; }
static inline int cp_omp_thread_num(void) { return 0; }
static inline int cp_omp_version(void) { return 0; }
#endif
#endif
