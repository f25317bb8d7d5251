/* Work and result queues: the engine's worker team takes envs to step from here.
 *
 * Sync batches: the caller queues every env of the batch, steps envs from the queue itself,
 * and waits until all are done; workers that are awake help. Unlike an OpenMP barrier, a
 * worker the OS has descheduled never holds the batch up unless it holds an env.
 *
 * send() pushes env ids onto the work ring; the engine's worker threads pop one id at a time,
 * step that env, and push its id onto the done ring (an item may also name a whole group of
 * envs, encoded as -(group + 1): a population member, stepped by one thread); recv() waits
 * (in slices, so the caller can check for Ctrl-C) until enough ids are done and takes them in
 * completion order. Each env is in at most one ring at a time (the façade's state machine),
 * so rings of num_envs slots never overflow.
 */
#ifndef CYPOOL_ASYNC_H
#define CYPOOL_ASYNC_H
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Before sleeping on a condition variable, a thread spins this long watching for work or
 * results: a sync batch follows the previous one after only the façade's few tens of
 * microseconds, and waking a sleeping thread costs as much again. Bounded, so an idle pool
 * sleeps and an oversubscribed machine loses little. */
#define CP_SPIN_NS 200000L

static inline long cp_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

static inline void cp_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Spin until *counter >= want (read without the lock: a hint only) or the time is up. */
static inline void cp_spin_until(const int64_t* counter, int64_t want, const int* stop) {
  long until = cp_now_ns() + CP_SPIN_NS;
  for (int k = 0;; k++) {
    if (__atomic_load_n(counter, __ATOMIC_ACQUIRE) >= want || __atomic_load_n(stop, __ATOMIC_ACQUIRE))
      return;
    cp_cpu_relax();
    if ((k & 63) == 63 && cp_now_ns() > until) return;
  }
}

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t work_cv; /* workers wait here for ids */
  pthread_cond_t done_cv; /* recv waits here for results */
  int64_t* work;
  int64_t* done;
  int64_t cap, work_head, work_len, done_head, done_len;
  int64_t done_want; /* results the waiter in wait_done needs (0: nobody waits) */
  int stop;
} cp_async;

static inline int cp_async_init(cp_async* q, int64_t cap) {
  q->work = (int64_t*)malloc(sizeof(int64_t) * cap);
  q->done = (int64_t*)malloc(sizeof(int64_t) * cap);
  if (!q->work || !q->done) {
    free(q->work);
    free(q->done);
    return -1;
  }
  q->cap = cap;
  q->work_head = q->work_len = q->done_head = q->done_len = q->done_want = 0;
  q->stop = 0;
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->work_cv, NULL);
  pthread_cond_init(&q->done_cv, NULL);
  return 0;
}

static inline void cp_async_destroy(cp_async* q) {
  pthread_mutex_destroy(&q->mu);
  pthread_cond_destroy(&q->work_cv);
  pthread_cond_destroy(&q->done_cv);
  free(q->work);
  free(q->done);
}

static inline void cp_async_push_work(cp_async* q, const int64_t* ids, int64_t n) {
  pthread_mutex_lock(&q->mu);
  for (int64_t k = 0; k < n; k++) q->work[(q->work_head + q->work_len + k) % q->cap] = ids[k];
  /* lengths are stored atomically: spinning threads read them without the lock */
  __atomic_store_n(&q->work_len, q->work_len + n, __ATOMIC_RELEASE);
  if (n == 1)
    pthread_cond_signal(&q->work_cv);
  else
    pthread_cond_broadcast(&q->work_cv);
  pthread_mutex_unlock(&q->mu);
}

/* Block until an id is queued (0) or the queue is stopped (-1). */
static inline int cp_async_pop_work(cp_async* q, int64_t* id) {
  cp_spin_until(&q->work_len, 1, &q->stop);
  pthread_mutex_lock(&q->mu);
  while (q->work_len == 0 && !q->stop) pthread_cond_wait(&q->work_cv, &q->mu);
  if (q->stop) {
    pthread_mutex_unlock(&q->mu);
    return -1;
  }
  *id = q->work[q->work_head];
  q->work_head = (q->work_head + 1) % q->cap;
  __atomic_store_n(&q->work_len, q->work_len - 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&q->mu);
  return 0;
}

/* Pop an id if one is queued (0), else return -1 at once: the caller of a sync batch works
 * through the queue alongside the workers. */
static inline int cp_async_try_pop_work(cp_async* q, int64_t* id) {
  pthread_mutex_lock(&q->mu);
  if (q->work_len == 0) {
    pthread_mutex_unlock(&q->mu);
    return -1;
  }
  *id = q->work[q->work_head];
  q->work_head = (q->work_head + 1) % q->cap;
  __atomic_store_n(&q->work_len, q->work_len - 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&q->mu);
  return 0;
}

static inline void cp_async_push_done(cp_async* q, int64_t id) {
  pthread_mutex_lock(&q->mu);
  q->done[(q->done_head + q->done_len) % q->cap] = id;
  __atomic_store_n(&q->done_len, q->done_len + 1, __ATOMIC_RELEASE);
  /* wake the waiter once, when its batch is complete: a wake-up per result would cost the
   * stepping threads a context switch each */
  if (q->done_want > 0 && q->done_len >= q->done_want) pthread_cond_signal(&q->done_cv);
  pthread_mutex_unlock(&q->mu);
}

/* Wait at most timeout_ms (forever if < 0) for `want` results; return how many are ready. */
static inline int64_t cp_async_wait_done(cp_async* q, int64_t want, int timeout_ms) {
  if (timeout_ms < 0) cp_spin_until(&q->done_len, want, &q->stop);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_nsec += (long)timeout_ms * 1000000L;
  until.tv_sec += until.tv_nsec / 1000000000L;
  until.tv_nsec %= 1000000000L;
  pthread_mutex_lock(&q->mu);
  q->done_want = want;
  while (q->done_len < want && !q->stop) {
    if (timeout_ms < 0) {
      pthread_cond_wait(&q->done_cv, &q->mu);
    } else if (pthread_cond_timedwait(&q->done_cv, &q->mu, &until) == ETIMEDOUT) {
      break;
    }
  }
  q->done_want = 0;
  int64_t n = q->done_len;
  pthread_mutex_unlock(&q->mu);
  return n;
}

/* Take the n oldest results (n <= ready). */
static inline int64_t cp_async_take_done(cp_async* q, int64_t* out, int64_t n) {
  pthread_mutex_lock(&q->mu);
  if (n > q->done_len) n = q->done_len;
  for (int64_t k = 0; k < n; k++) out[k] = q->done[(q->done_head + k) % q->cap];
  q->done_head = (q->done_head + n) % q->cap;
  __atomic_store_n(&q->done_len, q->done_len - n, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&q->mu);
  return n;
}

/* Atomic *p += v, returning the old value (group episode counters). */
static inline int64_t cp_fetch_add(int64_t* p, int64_t v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/* The team's start-up handshake: counters written by the team's threads, read by the
 * thread that started it. */
static inline int64_t cp_load(const int64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void cp_store(int64_t* p, int64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline int64_t cp_add(int64_t* p, int64_t v) {
  return __atomic_add_fetch(p, v, __ATOMIC_ACQ_REL);
}

/* Threads of the enclosing OpenMP parallel region (1 outside one, or without OpenMP). */
#ifdef _OPENMP
#include <omp.h>
static inline int cp_team_size(void) { return omp_get_num_threads(); }
#else
static inline int cp_team_size(void) { return 1; }
#endif

/* Wake every worker and waiter; workers exit after the env they are stepping. */
static inline void cp_async_stop(cp_async* q) {
  pthread_mutex_lock(&q->mu);
  __atomic_store_n(&q->stop, 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&q->work_cv);
  pthread_cond_broadcast(&q->done_cv);
  pthread_mutex_unlock(&q->mu);
}
#endif
