/* Work and result queues: the engine's worker team takes envs to step from here.
 *
 * Sync batches: the caller queues every env of the batch, steps envs from the queue itself,
 * and waits until all are done; workers that are awake help. Unlike an OpenMP barrier, a
 * worker the OS has descheduled never holds the batch up unless it holds an env.
 *
 * send() pushes env ids onto the work ring; the engine's worker threads pop ids, step those
 * envs, and push their ids onto the done ring (an item may also name a whole group of
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
#include <string.h>
#include <time.h>

/* Before sleeping on a condition variable, a thread spins this long watching for work or
 * results: a sync batch follows the previous one after only the façade's few tens of
 * microseconds, and waking a sleeping thread costs as much again. Bounded, so an idle pool
 * sleeps and an oversubscribed machine loses little. */
#define CP_SPIN_NS 200000L

/* Claiming work costs two lock round trips (about 0.1-0.3 us with the team contending),
 * more than a classic-control env's whole step: a sync batch of cheap envs is handed out in
 * ranges (cp_async_post_range) of about CP_CHUNK_NS of stepping, judged from the previous
 * batches' cost per env, and never more than a quarter of a thread's share, so the batch's
 * tail stays balanced; when that is a single env, the batch goes out as one id per item.
 * Async sends take one id at a time: results return one env at a time. A pop copies at most
 * CP_CHUNK_MAX ids. */
#define CP_CHUNK_NS 20000L
#define CP_CHUNK_MAX 256

/* A sync batch expected to cost less than this on one thread runs on the caller alone:
 * waking the team and collecting its results would cost more than it saves. */
#define CP_SERIAL_NS 30000L

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
  int64_t chunk;     /* ids a pop takes at most (set by the last push) */
  int64_t item_ns;   /* sync batches' recent cost per env, ns (0: not measured yet) */
  int back;          /* workers take from the back of the queue (a sync batch, see below) */
  /* a sync batch of cheap envs as a range job (cp_async_post_range): envs [r_lo, r_hi) are
   * unclaimed, r_done of r_n are finished; r_waiting: the caller sleeps on done_cv */
  int64_t r_lo, r_hi, r_done, r_n, r_chunk;
  int r_waiting;
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
  q->work_head = q->work_len = q->done_head = q->done_len = q->done_want = q->item_ns = 0;
  q->chunk = 1;
  q->back = 0;
  q->r_lo = q->r_hi = q->r_done = q->r_n = 0;
  q->r_chunk = 1;
  q->r_waiting = 0;
  q->stop = 0;
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->work_cv, NULL);
  pthread_cond_init(&q->done_cv, NULL);
  return 0;
}

/* Copy n ids into / out of a ring of cap slots starting at slot `at` (< 2 cap): two memcpy
 * at most, no division per id (a sync batch moves every env's id through the queues four
 * times; with % per id that was a third of a 4096-env CartPole batch). */
static inline void cp_ring_put(int64_t* ring, int64_t cap, int64_t at, const int64_t* src,
                               int64_t n) {
  if (at >= cap) at -= cap;
  int64_t first = cap - at < n ? cap - at : n;
  memcpy(ring + at, src, (size_t)first * sizeof(int64_t));
  if (n > first) memcpy(ring, src + first, (size_t)(n - first) * sizeof(int64_t));
}

static inline void cp_ring_get(const int64_t* ring, int64_t cap, int64_t at, int64_t* dst,
                               int64_t n) {
  if (at >= cap) at -= cap;
  int64_t first = cap - at < n ? cap - at : n;
  memcpy(dst, ring + at, (size_t)first * sizeof(int64_t));
  if (n > first) memcpy(dst + first, ring, (size_t)(n - first) * sizeof(int64_t));
}

static inline void cp_async_destroy(cp_async* q) {
  pthread_mutex_destroy(&q->mu);
  pthread_cond_destroy(&q->work_cv);
  pthread_cond_destroy(&q->done_cv);
  free(q->work);
  free(q->done);
}

static inline void cp_push_locked(cp_async* q, const int64_t* ids, int64_t n, int64_t chunk,
                                  int back) {
  pthread_mutex_lock(&q->mu);
  cp_ring_put(q->work, q->cap, q->work_head + q->work_len, ids, n);
  q->chunk = chunk < 1 ? 1 : (chunk > CP_CHUNK_MAX ? CP_CHUNK_MAX : chunk);
  q->back = back;
  /* lengths are stored atomically: spinning threads read them without the lock */
  __atomic_store_n(&q->work_len, q->work_len + n, __ATOMIC_RELEASE);
  if (n == 1)
    pthread_cond_signal(&q->work_cv);
  else
    pthread_cond_broadcast(&q->work_cv);
  pthread_mutex_unlock(&q->mu);
}

/* Queue n ids; pops take up to `chunk` of them at a time (1: one by one), oldest first. */
static inline void cp_async_push_work(cp_async* q, const int64_t* ids, int64_t n, int64_t chunk) {
  cp_push_locked(q, ids, n, chunk, 0);
}

/* Queue a sync batch's n ids, which the caller works through alongside the team: the caller
 * takes chunks from the front, the workers from the back, so that from one batch to the
 * next each env tends to be stepped by the same thread and its state stays in that core's
 * cache (dynamic chunks alone moved a 4096-env CartPole batch's states between the cores
 * every batch: two threads were slower than one). */
static inline void cp_async_push_sync(cp_async* q, const int64_t* ids, int64_t n, int64_t chunk) {
  cp_push_locked(q, ids, n, chunk, 1);
}

/* Under the lock: move up to min(chunk, CP_CHUNK_MAX) queued ids to out. */
static inline int64_t cp_take_work_locked(cp_async* q, int64_t* out) {
  int64_t n = q->work_len < q->chunk ? q->work_len : q->chunk;
  cp_ring_get(q->work, q->cap, q->work_head, out, n);
  q->work_head = (q->work_head + n) % q->cap;
  __atomic_store_n(&q->work_len, q->work_len - n, __ATOMIC_RELEASE);
  return n;
}

/* Under the lock: move up to min(chunk, CP_CHUNK_MAX) of the newest queued ids to out. */
static inline int64_t cp_take_work_back_locked(cp_async* q, int64_t* out) {
  int64_t n = q->work_len < q->chunk ? q->work_len : q->chunk;
  cp_ring_get(q->work, q->cap, q->work_head + q->work_len - n, out, n);
  __atomic_store_n(&q->work_len, q->work_len - n, __ATOMIC_RELEASE);
  return n;
}

static inline int cp_range_pending(const cp_async* q) {
  return __atomic_load_n(&q->r_hi, __ATOMIC_ACQUIRE) > __atomic_load_n(&q->r_lo, __ATOMIC_ACQUIRE);
}

/* A worker's bounded spin before it sleeps: until ids are queued, a range job has envs left
 * or the queue stops (read without the lock: a hint only). */
static inline void cp_spin_work(const cp_async* q) {
  long until = cp_now_ns() + CP_SPIN_NS;
  for (int k = 0;; k++) {
    if (__atomic_load_n(&q->work_len, __ATOMIC_ACQUIRE) > 0 || cp_range_pending(q) ||
        __atomic_load_n(&q->stop, __ATOMIC_ACQUIRE))
      return;
    cp_cpu_relax();
    if ((k & 63) == 63 && cp_now_ns() > until) return;
  }
}

/* Block until ids are queued or a range job has envs left. Ids: take up to a chunk of them
 * into out (CP_CHUNK_MAX slots) and return their count; a range job: return 0 (claim its
 * envs with cp_async_claim_range); -1 once the queue is stopped. A worker's pop. */
static inline int64_t cp_async_pop_work(cp_async* q, int64_t* out) {
  cp_spin_work(q);
  pthread_mutex_lock(&q->mu);
  while (q->work_len == 0 && q->r_hi <= q->r_lo && !q->stop)
    pthread_cond_wait(&q->work_cv, &q->mu);
  int64_t n = q->stop ? -1
              : q->work_len == 0 ? 0
              : (q->back ? cp_take_work_back_locked(q, out) : cp_take_work_locked(q, out));
  pthread_mutex_unlock(&q->mu);
  return n;
}

/* A sync batch of every env, 0..n-1, each with its op already set, handed out as ranges of
 * `chunk` envs instead of ids: one lock round trip per chunk and no id copied. Passing a
 * 4096-env CartPole batch's ids through the rings cost more than stepping it: the caller
 * wrote them, a worker read them, and its results went back the same way, every line
 * crossing between the cores. The caller claims from the low end, the workers from the
 * high end, so each env tends to stay on one core (see cp_async_push_sync). */
static inline void cp_async_post_range(cp_async* q, int64_t n, int64_t chunk) {
  pthread_mutex_lock(&q->mu);
  q->r_chunk = chunk < 1 ? 1 : chunk;
  q->r_n = n;
  __atomic_store_n(&q->r_done, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&q->r_lo, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&q->r_hi, n, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&q->work_cv);
  pthread_mutex_unlock(&q->mu);
}

/* Claim up to a chunk of the range job's envs, from the low end (low != 0: the caller) or
 * the high end: their count (0: none left), the first in *first. */
static inline int64_t cp_async_claim_range(cp_async* q, int low, int64_t* first) {
  pthread_mutex_lock(&q->mu);
  int64_t left = q->r_hi - q->r_lo;
  int64_t n = left < q->r_chunk ? left : q->r_chunk;
  if (n <= 0) {
    n = 0;
  } else if (low) {
    *first = q->r_lo;
    __atomic_store_n(&q->r_lo, q->r_lo + n, __ATOMIC_RELEASE);
  } else {
    __atomic_store_n(&q->r_hi, q->r_hi - n, __ATOMIC_RELEASE);
    *first = q->r_hi;
  }
  pthread_mutex_unlock(&q->mu);
  return n;
}

/* n envs of the range job are finished; the last wakes the caller if it sleeps. */
static inline void cp_async_range_done(cp_async* q, int64_t n) {
  pthread_mutex_lock(&q->mu);
  __atomic_store_n(&q->r_done, q->r_done + n, __ATOMIC_RELEASE);
  if (q->r_waiting && q->r_done >= q->r_n) pthread_cond_signal(&q->done_cv);
  pthread_mutex_unlock(&q->mu);
}

/* Wait until every env of the range job is finished (or the queue stops). */
static inline void cp_async_wait_range(cp_async* q) {
  cp_spin_until(&q->r_done, q->r_n, &q->stop);
  pthread_mutex_lock(&q->mu);
  q->r_waiting = 1;
  while (q->r_done < q->r_n && !q->stop) pthread_cond_wait(&q->done_cv, &q->mu);
  q->r_waiting = 0;
  pthread_mutex_unlock(&q->mu);
}

/* Take up to a chunk of queued ids (0 if none, at once): the caller of a sync batch works
 * through the queue alongside the workers. */
static inline int64_t cp_async_try_pop_work(cp_async* q, int64_t* out) {
  pthread_mutex_lock(&q->mu);
  int64_t n = cp_take_work_locked(q, out);
  pthread_mutex_unlock(&q->mu);
  return n;
}

static inline void cp_async_push_done(cp_async* q, const int64_t* ids, int64_t n) {
  pthread_mutex_lock(&q->mu);
  cp_ring_put(q->done, q->cap, q->done_head + q->done_len, ids, n);
  __atomic_store_n(&q->done_len, q->done_len + n, __ATOMIC_RELEASE);
  /* wake the waiter once, when its batch is complete: a wake-up per result would cost the
   * stepping threads a context switch each */
  if (q->done_want > 0 && q->done_len >= q->done_want) pthread_cond_signal(&q->done_cv);
  pthread_mutex_unlock(&q->mu);
}

/* The chunk for a sync batch of n envs on `threads` threads (see CP_CHUNK_NS). */
static inline int64_t cp_async_sync_chunk(const cp_async* q, int64_t n, int threads) {
  int64_t c = q->item_ns > 0 ? CP_CHUNK_NS / q->item_ns : 1;
  int64_t share = n / (4 * (int64_t)threads);
  if (c > share) c = share;
  return c < 1 ? 1 : c;
}

/* Whether a sync batch of n envs should use the team (yes until a cost is measured). */
static inline int cp_async_use_team(const cp_async* q, int64_t n) {
  return q->item_ns == 0 || q->item_ns * n >= CP_SERIAL_NS;
}

/* Record a sync batch's wall time (ns) for n envs on `threads` threads (caller only). */
static inline void cp_async_note_batch(cp_async* q, int64_t n, int threads, long ns) {
  if (n <= 0) return;
  int64_t per = (int64_t)ns * threads / n;
  if (per < 1) per = 1;
  q->item_ns = q->item_ns > 0 ? (3 * q->item_ns + per) / 4 : per;
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
  cp_ring_get(q->done, q->cap, q->done_head, out, n);
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
