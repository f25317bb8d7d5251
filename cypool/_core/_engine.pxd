# The engine every env family shares: slots, batch buffers and the stepping kernel.
from libc.stdint cimport int32_t, int64_t, uint8_t
from numpy.random cimport bitgen_t

# What the kernel does to env i in one call (ops[i]).
cdef enum:
    OP_NONE = 0        # leave env i and its rows alone
    OP_STEP = 1        # step with action row i
    OP_RESET = 2       # reset: reward 0, flags cleared, reset info (reset() and NEXT_STEP autoreset)
    OP_STEP_RESET = 3  # step; if the episode ends, save the final rows and reset now (SAME_STEP)
    OP_JOB = 4         # run_job's: the family's env_job, nothing else of env i is touched

# Status codes a family's env_step/env_reset return; raised as Python errors after the batch.
cdef enum:
    ST_OK = 0
    ST_ENGINE_ERROR = 1

# Which info keys row i holds after the call (the `_key` masks are built from this).
cdef enum:
    INFO_NONE = 0
    INFO_STEP = 1
    INFO_RESET = 2

cdef enum:
    ERRMSG_LEN = 256

# Thread slots: every thread that steps envs has one, so per-thread state (scratch buffers, GL
# contexts) has a home. Slot 0 is the caller of a sync batch (any Python thread holding the
# façade's lock: state kept there must not be bound to one OS thread); slots 1..num_workers
# are the worker team's threads, each its own OS thread for the pool's life.
cdef enum:
    CALLER_SLOT = 0

# What a family's kernel may touch of env i, handed to it by Engine.row_of(i, &row): its rows
# of the batch buffers, its random stream and its error message buffer. Kernels use these
# (and output_row for outputs after "obs"), never the Engine's fields themselves.
ctypedef struct EnvRow:
    char* obs              # row i of output 0 ("obs")
    double* info           # row i of the info matrix (the family's info width)
    double* rew            # reward
    uint8_t* term          # terminated
    uint8_t* trunc         # truncated: the engine sets it from the env's time limit; a family
                           # with its own limit (Atari) writes it in env_step
    bitgen_t* rng          # env i's numpy stream
    char* err              # ERRMSG_LEN bytes: the message of a failed status


ctypedef struct Slot:
    int64_t elapsed        # steps since the last reset (truncation counter)
    int64_t limit          # truncate when elapsed reaches this (0: never)
    int32_t status         # ST_* of the last op
    char errmsg[ERRMSG_LEN]  # message when status != ST_OK


cdef extern from "_async.h" nogil:
    ctypedef struct cp_async:
        pass
    int cp_async_init(cp_async* q, int64_t cap)
    void cp_async_destroy(cp_async* q)
    enum: CP_CHUNK_MAX
    void cp_async_push_work(cp_async* q, const int64_t* ids, int64_t n, int64_t chunk)
    void cp_async_push_sync(cp_async* q, const int64_t* ids, int64_t n, int64_t chunk)
    int64_t cp_async_pop_work(cp_async* q, int64_t* out)
    int64_t cp_async_try_pop_work(cp_async* q, int64_t* out)
    void cp_async_post_range(cp_async* q, int64_t n, int64_t chunk)
    int64_t cp_async_claim_range(cp_async* q, int low, int64_t* first)
    void cp_async_range_done(cp_async* q, int64_t n)
    void cp_async_wait_range(cp_async* q)
    void cp_async_push_done(cp_async* q, const int64_t* ids, int64_t n)
    int64_t cp_async_sync_chunk(const cp_async* q, int64_t n, int threads)
    int cp_async_use_team(const cp_async* q, int64_t n)
    void cp_async_note_batch(cp_async* q, int64_t n, int threads, long ns)
    long cp_now_ns()
    int64_t cp_async_wait_done(cp_async* q, int64_t want, int timeout_ms)
    int64_t cp_async_take_done(cp_async* q, int64_t* out, int64_t n)
    void cp_async_stop(cp_async* q)
    int64_t cp_fetch_add(int64_t* p, int64_t v)
    int64_t cp_load(const int64_t* p)
    void cp_store(int64_t* p, int64_t v)
    int64_t cp_add(int64_t* p, int64_t v)
    int cp_team_size()


cdef class Engine:
    cdef readonly Py_ssize_t num_envs
    cdef readonly int num_threads
    cdef readonly int64_t max_episode_steps
    cdef Slot* slots
    cdef bitgen_t** rng          # one generator per env; the objects live in self._gens
    cdef list _gens
    # raw views of the buffers below, hoisted for the kernel
    cdef uint8_t* ops
    # named output buffers (the family's declaration: name, per-env shape, dtype), each with a
    # final_ twin that same-step autoreset fills; output 0 is "obs"
    cdef int n_out
    cdef char** out_p
    cdef char** fout_p
    cdef Py_ssize_t* out_row     # bytes per env row of each output
    cdef readonly tuple output_names
    cdef readonly dict outputs, final_outputs
    cdef char* obs_p             # output 0, hoisted
    cdef char* fobs_p
    cdef Py_ssize_t obs_row
    cdef double* rew
    cdef uint8_t* term
    cdef uint8_t* trunc
    cdef uint8_t* info_kind
    cdef uint8_t* final_mask
    cdef uint8_t* done            # env must reset before its next step (ended or failed)
    cdef double* info_p
    cdef double* finfo_p
    cdef Py_ssize_t info_w       # doubles per info row
    cdef readonly object ops_arr, obs, reward, terminated, truncated, info, info_kind_arr
    cdef readonly object final_obs, final_info, final_mask_arr, done_arr
    # episode statistics, written by the kernel, readable as arrays without a copy
    cdef double* ep_ret
    cdef int64_t* ep_len
    cdef double* last_ret
    cdef int64_t* last_len
    cdef int64_t* n_episodes
    cdef int64_t* n_steps
    cdef readonly object episode_return, episode_length, last_return, last_length
    cdef readonly object episodes, env_steps
    # groups (population members): env i belongs to group i // group_size; each group keeps a
    # ring of its last ring_k finished episodes, written by whichever thread ends them
    cdef readonly Py_ssize_t group_size, num_groups, ring_k
    cdef double* ring_ret
    cdef int64_t* ring_len
    cdef int64_t* group_eps
    cdef readonly object ring_return, ring_length, group_episodes
    # the worker team: queues, the thread hosting the team, scratch ids for sync batches
    cdef cp_async* aq
    cdef object _worker
    cdef readonly int num_workers
    cdef int64_t* batch_ids
    # thread slots: status and message of each slot's thread_init; team start-up handshake
    cdef readonly int num_slots
    cdef int* slot_status
    cdef char* slot_err          # ERRMSG_LEN bytes per slot
    cdef int caller_ready        # slot 0 initialised (and not yet finalised)
    cdef int64_t team_entered    # team threads past thread_init (atomic)
    cdef int64_t team_size       # threads the team's parallel region really has
    cdef int64_t n_failed        # envs whose op failed since the last run_all began (atomic)
    cdef int64_t n_queued        # items submit() queued that take_ready() has not taken

    # a family's hooks: per env (on thread slot `slot`), and once per thread slot
    cdef void row_of(self, Py_ssize_t i, EnvRow* r) noexcept nogil
    cdef char* output_row(self, int k, Py_ssize_t i) noexcept nogil
    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil
    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil
    cdef int thread_init(self, int slot) noexcept nogil
    cdef void thread_fini(self, int slot) noexcept nogil
    cdef void run_one(self, Py_ssize_t i, int op, int slot) noexcept nogil
    cdef void run_item(self, int64_t item, int slot) noexcept nogil
    cdef void save_final(self, Py_ssize_t i) noexcept nogil
    cdef void end_episode(self, Py_ssize_t i) noexcept nogil
    cdef void run_all(self) noexcept nogil
    cdef void run_ranges(self, int low, int slot) noexcept nogil
    cdef void run_with_team(self) noexcept nogil
    cdef void worker_loop(self, int slot) noexcept nogil
    cdef int env_job(self, Py_ssize_t i, int slot) noexcept nogil
    cdef int64_t run_job_ids(self, const int64_t* ids, Py_ssize_t n) noexcept nogil
