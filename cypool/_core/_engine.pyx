"""The shared stepping engine.

Kernel contract: iteration i touches only env i's engine state, slots[i], and row i of each
output buffer; no shared writes, allocation, Python objects or GIL inside the loop.

Data flow: the façade validates input and fills `ops` (and the family's action buffer) with the
GIL held; `run()` releases the GIL and runs `run_one(i, ops[i])` for every env: with one
thread as a plain loop, otherwise the caller and the worker team take envs from a queue; the family's `env_step`/`env_reset` write the observation, reward, terminated and info
rows; `run_one` does the bookkeeping every family shares (elapsed steps, truncation, episode
statistics, same-step autoreset); statuses are scanned once the GIL is back.

The worker team is one OpenMP parallel region, entered with the GIL released by a Python
thread that does nothing else and lives as long as the engine; its threads block on the work
queue (_async.h). OpenMP rather than hand-made native threads because run_one is a Cython
method: inside a parallel block each thread calls it directly, with no C trampoline or
reference counting, and OMP_* settings apply. A queue rather than `prange` for sync batches
because a prange ends in a barrier that waits for every thread: when the cores are shared
(a learner's threads, other processes) a descheduled thread stalls every batch for a
scheduler time slice (measured on 2 busy cores: Hopper, 16 envs, 2 threads: 2.5k steps/s
with prange against 12k with one thread). With the queue the caller steps envs itself and
only waits for envs a worker has actually taken.

Async (send/recv): the same run_one, fed by the same queue; the caller does not step envs.
A queue item is one env, or a whole group of envs (a population member: `set_groups`), which
one thread steps in turn so that the member comes back complete.

Thread slots: slot 0 is whoever runs a sync batch (the caller); slots 1..num_workers are the
team's threads. A family's `thread_init(slot)` runs once per slot before that slot steps any
env (the team's in their own threads when the team starts, the caller's when the engine
starts), `thread_fini(slot)` once when the engine stops; `env_step`/`env_reset` are told the
slot of the thread running them.

Outputs: a family declares named per-env buffers (`_init_engine(outputs=...)`); the engine
allocates each with its `final_` twin and saves every one at a same-step autoreset.

State: `get_state(ids)`/`set_state(ids, states)` capture and restore an env's whole dynamic
state (the engine's bookkeeping, its random stream, its output and info rows, and the
family's part through `_env_state`/`_set_env_state`), as plain picklable values. set_state
checks and converts every field of every state before it installs any (the family parts,
which only an emulator can fully check, first, undone if one is refused). run, step_all,
submit and submit_groups refuse an op for an env with no random stream (never seeded): one C
pass over the envs with the GIL held, before the batch is released.
"""
from cython.parallel cimport parallel, threadid
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdlib cimport calloc, free, malloc
from libc.stdio cimport snprintf
from libc.string cimport memcpy, memset
cimport numpy as cnp

import threading
import time

import numpy as np

cnp.import_array()

# The engine's constants, for Python code (the façade): defined once, in _engine.pxd.
OPS = {"none": OP_NONE, "step": OP_STEP, "reset": OP_RESET, "step_reset": OP_STEP_RESET}
INFO_KINDS = {"none": INFO_NONE, "step": INFO_STEP, "reset": INFO_RESET}
STATE_VERSION = 1          # layout of get_state()'s values


cdef inline char* _data(object a):
    return <char*> cnp.PyArray_DATA(<cnp.ndarray> a)


cdef inline void _set_status(Slot* s, int st, int64_t* n_failed) noexcept nogil:
    """An env's op finished with status st; a failure is counted (Engine.failures)."""
    s.status = st
    if st != ST_OK:
        cp_fetch_add(n_failed, 1)


cdef void _mark(const int64_t* items, Py_ssize_t n, Py_ssize_t group_size, uint8_t* flags,
                uint8_t value) noexcept nogil:
    """flags[env] = value for every env of these queue items (an env id, or -(g + 1) for the
    group_size envs of group g)."""
    cdef Py_ssize_t k, r
    cdef int64_t it
    for k in range(n):
        it = items[k]
        if it >= 0:
            flags[it] = value
        else:
            for r in range((-it - 1) * group_size, (-it) * group_size):
                flags[r] = value


_NO_KERNEL = "the pool has no"


cdef int _no_kernel(char* err, const char* name) noexcept nogil:
    snprintf(err, ERRMSG_LEN,
             "the pool has no %s kernel: env_reset and env_step are cdef nogil methods, "
             "overridden only by a cdef class compiled with Cython (a Python subclass of "
             "Engine cannot; see cypool.api)", name)
    return ST_ENGINE_ERROR


cdef Py_ssize_t _first_unseeded(bitgen_t** rng, const uint8_t* ops, Py_ssize_t n) noexcept:
    """The first env with an op in `ops` and no random stream, or -1: a kernel would
    dereference its NULL generator. Runs with the GIL, before a batch is released."""
    cdef Py_ssize_t i
    for i in range(n):
        if rng[i] == NULL and ops[i] != OP_NONE:
            return i
    return -1


cdef Py_ssize_t _first_unseeded_item(bitgen_t** rng, const int64_t* items, Py_ssize_t n,
                                     Py_ssize_t group_size, Py_ssize_t num_envs) noexcept:
    """_first_unseeded over queue items (env ids, or -(g + 1) for group g's envs)."""
    cdef Py_ssize_t k, r
    cdef int64_t it
    for k in range(n):
        it = items[k]
        if it >= 0:
            if it < num_envs and rng[it] == NULL:
                return it
        else:
            for r in range((-it - 1) * group_size, (-it) * group_size):
                if 0 <= r < num_envs and rng[r] == NULL:
                    return r
    return -1


def _no_stream(Py_ssize_t i):
    return RuntimeError(f"cypool: env {i} has no random stream: it was never reset (reset() "
                        "the pool, or give every env a state with set_state(), before "
                        "stepping)")


# ---------------------------------------------------------------------- state checks
# Checks of one field of a state (get_state's values, or a family's part): each returns the
# value as a plain Python value of the kind the field holds, or raises ValueError("<what>:
# ..."). set_state parses a whole state with them before it changes anything, so that what
# it then installs cannot fail half-way. Families use them in _check_env_state.
def _show(v):
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def state_int(v, str what, low, high):
    """An int (numpy integers too, no bool) in [low, high)."""
    if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
        raise ValueError(f"{what}: must be an int, got {type(v).__name__} {_show(v)}")
    v = int(v)
    if not low <= v < high:
        raise ValueError(f"{what}: must be in [{low}, {high}), got {_show(v)}")
    return v


def state_float(v, str what):
    """A real number (int, float, numpy scalar; no bool), as a float."""
    if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(
            v, (bool, np.bool_)):
        raise ValueError(f"{what}: must be a number, got {type(v).__name__} {_show(v)}")
    try:
        return float(v)
    except OverflowError:
        raise ValueError(f"{what}: {_show(v)} does not fit a double") from None


def state_bool(v, str what):
    """A bool (or numpy bool)."""
    if not isinstance(v, (bool, np.bool_)):
        raise ValueError(f"{what}: must be a bool, got {type(v).__name__} {_show(v)}")
    return bool(v)


def state_bytes(v, str what, size=None):
    """A bytes object (of `size` bytes, when given)."""
    if not isinstance(v, bytes):
        raise ValueError(f"{what}: must be bytes, got {type(v).__name__}")
    if size is not None and len(v) != size:
        raise ValueError(f"{what}: must be {size} bytes, got {len(v)}")
    return v


def state_seq(v, str what, Py_ssize_t n):
    """A list or tuple of n items, as a list."""
    if not isinstance(v, (list, tuple)):
        raise ValueError(f"{what}: must be a list or tuple of {n}, got {type(v).__name__}")
    if len(v) != n:
        raise ValueError(f"{what}: must have {n} items, got {len(v)}")
    return list(v)


def state_dict(v, str what, keys):
    """A dict with exactly these keys."""
    if not isinstance(v, dict):
        raise ValueError(f"{what}: must be a dict, got {type(v).__name__}")
    missing = [k for k in keys if k not in v]
    extra = [k for k in v if k not in keys]
    if missing or extra:
        raise ValueError(f"{what}: " + "; ".join(
            ([f"missing {missing}"] if missing else []) + ([f"unknown {extra}"] if extra else [])))
    return v


_STATE_HOOKS = ("_env_state", "_check_env_state", "_set_env_state")
_STATE_FIELDS = ("version", "signature", "elapsed", "done", "episode", "rng", "rows", "step",
                 "info", "env")
_I64 = 2**63


def _same_signature(a, b):
    try:
        return type(a) is tuple and bool(a == b)
    except Exception:            # a value with no truth (an edited array): not ours
        return False


def _parse_bitgen(v):
    kind, rng_state = state_seq(v, "rng", 2)
    if not isinstance(kind, str):
        raise ValueError(f"rng: the bit generator's name must be a str, got {_show(kind)}")
    bg_class = getattr(np.random, kind, None)
    if not (isinstance(bg_class, type) and issubclass(bg_class, np.random.BitGenerator)
            and bg_class is not np.random.BitGenerator):
        raise ValueError(f"rng: unknown bit generator {_show(kind)}")
    try:
        bg = bg_class()
        bg.state = rng_state
    except Exception as exc:    # numpy's own check of the state: TypeError, ValueError, ...
        raise ValueError(f"rng: not a {kind} state ({type(exc).__name__}: {exc})") from None
    return bg


cdef class Engine:
    """Base of every family pool. Subclasses allocate their observation buffers through
    `_init_buffers` and implement `env_reset`/`env_step`."""

    def __cinit__(self, *args, **kwargs):
        self.slots = NULL
        self.rng = NULL
        self.ring_ret = NULL
        self.ring_len = NULL
        self.group_eps = NULL
        self.aq = NULL
        self.batch_ids = NULL
        self.out_p = NULL
        self.fout_p = NULL
        self.out_row = NULL
        self.slot_status = NULL
        self.slot_err = NULL

    def __dealloc__(self):
        if self.aq != NULL:
            # stop_workers() never ran (interpreter teardown): wake the team and leave the
            # queue allocated, since a worker may still touch it; a leak, not a crash
            cp_async_stop(self.aq)
        free(self.slots)
        free(self.rng)
        free(self.batch_ids)
        free(self.out_p)
        free(self.fout_p)
        free(self.out_row)
        free(self.slot_status)
        free(self.slot_err)

    def _init_engine(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                     list outputs, Py_ssize_t info_width):
        """outputs: [(name, per-env shape, dtype), ...], "obs" first: the env's rows the
        kernels write, each with a final_ twin."""
        cdef Py_ssize_t i
        cdef int k
        if not outputs or outputs[0][0] != "obs":
            raise ValueError("cypool: a family's outputs start with 'obs'")
        names = tuple(o[0] for o in outputs)
        if len(set(names)) != len(names):
            raise ValueError(f"cypool: output names must be unique, got {names}")
        # before any per-env allocation (a MemoryError, not pages the OOM killer reaps
        # later): each env's outputs and their final_ twins, its two info rows, its slot,
        # stream pointer, batch id, flags and counters (the family's own state comes on top)
        from cypool._validate import check_pool_memory
        per_env = (sizeof(Slot) + sizeof(bitgen_t*) + 2 * sizeof(int64_t) + 6
                   + 8 * 7 + 16 * max(info_width, 1))
        for _, shape, dtype in outputs:
            per_env += 2 * int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        check_pool_memory(num_envs, per_env, f"envs of a {type(self).__name__}")
        self.num_envs = num_envs
        self.num_threads = num_threads
        self.max_episode_steps = max_episode_steps
        self.slots = <Slot*> calloc(num_envs, sizeof(Slot))
        self.rng = <bitgen_t**> calloc(num_envs, sizeof(bitgen_t*))
        self.batch_ids = <int64_t*> calloc(num_envs, sizeof(int64_t))
        if self.slots == NULL or self.rng == NULL or self.batch_ids == NULL:
            raise MemoryError("cypool: cannot allocate env slots")
        self._gens = [None] * num_envs
        n = num_envs
        for i in range(n):
            self.slots[i].limit = max_episode_steps
        self.ops_arr = np.zeros(n, np.uint8)
        self.n_out = len(outputs)
        self.out_p = <char**> calloc(self.n_out, sizeof(char*))
        self.fout_p = <char**> calloc(self.n_out, sizeof(char*))
        self.out_row = <Py_ssize_t*> calloc(self.n_out, sizeof(Py_ssize_t))
        if self.out_p == NULL or self.fout_p == NULL or self.out_row == NULL:
            raise MemoryError("cypool: cannot allocate the output table")
        self.output_names = names
        self.outputs = {}
        self.final_outputs = {}
        for k, (name, shape, dtype) in enumerate(outputs):
            a = np.zeros((n,) + tuple(shape), dtype)
            f = np.zeros((n,) + tuple(shape), dtype)
            self.outputs[name] = a
            self.final_outputs[name] = f
            self.out_p[k] = _data(a)
            self.fout_p[k] = _data(f)
            self.out_row[k] = a.strides[0] if a.ndim and n else a.itemsize
        self.obs = self.outputs["obs"]
        self.final_obs = self.final_outputs["obs"]
        self.reward = np.zeros(n, np.float64)
        self.terminated = np.zeros(n, np.bool_)
        self.truncated = np.zeros(n, np.bool_)
        self.info_kind_arr = np.zeros(n, np.uint8)
        self.final_mask_arr = np.zeros(n, np.bool_)
        self.done_arr = np.zeros(n, np.bool_)
        self.info = np.zeros((n, max(info_width, 1)), np.float64)
        self.final_info = np.zeros((n, max(info_width, 1)), np.float64)
        self.ops = <uint8_t*> _data(self.ops_arr)
        self.obs_p = self.out_p[0]
        self.fobs_p = self.fout_p[0]
        self.obs_row = self.out_row[0]
        self.rew = <double*> _data(self.reward)
        self.term = <uint8_t*> _data(self.terminated)
        self.trunc = <uint8_t*> _data(self.truncated)
        self.info_kind = <uint8_t*> _data(self.info_kind_arr)
        self.final_mask = <uint8_t*> _data(self.final_mask_arr)
        self.done = <uint8_t*> _data(self.done_arr)
        self.info_p = <double*> _data(self.info)
        self.finfo_p = <double*> _data(self.final_info)
        self.info_w = self.info.shape[1]
        self.episode_return = np.zeros(n, np.float64)
        self.episode_length = np.zeros(n, np.int64)
        self.last_return = np.zeros(n, np.float64)
        self.last_length = np.zeros(n, np.int64)
        self.episodes = np.zeros(n, np.int64)
        self.env_steps = np.zeros(n, np.int64)
        self.ep_ret = <double*> _data(self.episode_return)
        self.ep_len = <int64_t*> _data(self.episode_length)
        self.last_ret = <double*> _data(self.last_return)
        self.last_len = <int64_t*> _data(self.last_length)
        self.n_episodes = <int64_t*> _data(self.episodes)
        self.n_steps = <int64_t*> _data(self.env_steps)

    def set_generator(self, Py_ssize_t i, bit_generator):
        """Give env i its random stream (a numpy BitGenerator, e.g. PCG64); the engine keeps a
        reference so the C state stays alive."""
        cdef bitgen_t* bg = <bitgen_t*> PyCapsule_GetPointer(bit_generator.capsule, "BitGenerator")
        self._gens[i] = bit_generator
        self.rng[i] = bg

    def generator(self, Py_ssize_t i):
        return self._gens[i]

    def _check_ids(self, const int64_t[::1] ids):
        """IndexError unless every id names an env of the pool."""
        cdef Py_ssize_t k
        for k in range(ids.shape[0]):
            if not 0 <= ids[k] < self.num_envs:
                raise IndexError(f"cypool: env id {ids[k]} out of range [0, {self.num_envs})")

    def set_max_episode_steps(self, const int64_t[::1] ids, int64_t limit):
        """Truncation limit of envs `ids` (0: none), from their next step on."""
        cdef Py_ssize_t k
        if limit < 0:
            raise ValueError("cypool: max_episode_steps must be >= 0")
        self._check_ids(ids)
        for k in range(ids.shape[0]):
            self.slots[ids[k]].limit = limit

    def max_episode_steps_of(self):
        """Every env's truncation limit (0: none), as a fresh array."""
        cdef Py_ssize_t i
        return np.array([self.slots[i].limit for i in range(self.num_envs)], np.int64)

    cdef void row_of(self, Py_ssize_t i, EnvRow* r) noexcept nogil:
        """Env i's row (see EnvRow), for the family's kernels."""
        r.obs = self.obs_p + i * self.obs_row
        r.info = self.info_p + i * self.info_w
        r.rew = self.rew + i
        r.term = self.term + i
        r.trunc = self.trunc + i
        r.rng = self.rng[i]
        r.err = self.slots[i].errmsg

    cdef char* output_row(self, int k, Py_ssize_t i) noexcept nogil:
        """Env i's row of output k (the order of _init_engine's outputs)."""
        return self.out_p[k] + i * self.out_row[k]

    # Engine's own kernels run only for a pool that overrides neither: a Python subclass
    # cannot (they are cdef methods), so say so instead of failing with no message.
    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        return _no_kernel(self.slots[i].errmsg, b"env_reset")

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        return _no_kernel(self.slots[i].errmsg, b"env_step")

    cdef int thread_init(self, int slot) noexcept nogil:
        """Set up thread slot `slot`'s state, on the thread that will use it; nonzero (with
        a message in slot_err + slot * ERRMSG_LEN) refuses to start the engine."""
        return ST_OK

    cdef void thread_fini(self, int slot) noexcept nogil:
        """Free slot `slot`'s state (on its own thread for the team's slots)."""
        pass

    cdef int env_job(self, Py_ssize_t i, int slot) noexcept nogil:
        """A family's side job on env i (run_job: MjPool draws frames), on thread slot
        `slot`: it changes nothing a batch reads or writes of env i (rows, flags, status,
        errmsg); ST_OK, or nonzero with the message kept where the family reads it."""
        return ST_ENGINE_ERROR

    cdef void save_final(self, Py_ssize_t i) noexcept nogil:
        """Copy env i's rows of every output and of info into their final_ twins."""
        cdef int k
        for k in range(self.n_out):
            memcpy(self.fout_p[k] + i * self.out_row[k], self.out_p[k] + i * self.out_row[k],
                   self.out_row[k])
        memcpy(self.finfo_p + i * self.info_w, self.info_p + i * self.info_w,
               self.info_w * sizeof(double))

    cdef void run_one(self, Py_ssize_t i, int op, int slot) noexcept nogil:
        cdef Slot* s = &self.slots[i]
        cdef int st = ST_OK
        if op == OP_JOB:        # run_job's: env i's rows, flags and status are left alone
            if self.env_job(i, slot) != ST_OK:
                cp_fetch_add(&self.n_failed, 1)
            return
        self.final_mask[i] = 0
        s.errmsg[0] = 0
        if op == OP_NONE:
            self.info_kind[i] = INFO_NONE
            return
        if op == OP_RESET:
            st = self.env_reset(i, slot)
            self.rew[i] = 0.0
            self.term[i] = 0
            self.trunc[i] = 0
            s.elapsed = 0
            self.ep_ret[i] = 0.0
            self.ep_len[i] = 0
            self.info_kind[i] = INFO_RESET
            self.done[i] = st != ST_OK
            _set_status(s, st, &self.n_failed)
            return
        self.trunc[i] = 0
        st = self.env_step(i, slot)
        s.elapsed += 1
        self.ep_ret[i] += self.rew[i]
        self.ep_len[i] += 1
        self.n_steps[i] += 1
        self.info_kind[i] = INFO_STEP
        if s.limit > 0 and s.elapsed >= s.limit:
            self.trunc[i] = 1
        if st == ST_OK and (self.term[i] or self.trunc[i]):
            self.end_episode(i)
            if op == OP_STEP_RESET:
                self.save_final(i)
                self.final_mask[i] = 1
                st = self.env_reset(i, slot)
                s.elapsed = 0
                self.ep_ret[i] = 0.0
                self.ep_len[i] = 0
                self.info_kind[i] = INFO_RESET
                self.done[i] = st != ST_OK
                _set_status(s, st, &self.n_failed)
                return
        self.done[i] = st != ST_OK or self.term[i] or self.trunc[i]
        _set_status(s, st, &self.n_failed)

    cdef void end_episode(self, Py_ssize_t i) noexcept nogil:
        """Statistics of env i's finished episode (its running return/length are final)."""
        cdef Py_ssize_t g, k
        self.n_episodes[i] += 1
        self.last_ret[i] = self.ep_ret[i]
        self.last_len[i] = self.ep_len[i]
        if self.ring_k > 0:
            g = i // self.group_size
            # the group's envs may end episodes on several threads at once: claim a ring slot
            k = g * self.ring_k + cp_fetch_add(&self.group_eps[g], 1) % self.ring_k
            self.ring_ret[k] = self.ep_ret[i]
            self.ring_len[k] = self.ep_len[i]

    cdef void run_item(self, int64_t item, int slot) noexcept nogil:
        """One queue item: env `item`, or every env of group -(item + 1)."""
        cdef Py_ssize_t i, first
        if item >= 0:
            self.run_one(item, self.ops[item], slot)
            return
        first = (-item - 1) * self.group_size
        for i in range(first, first + self.group_size):
            self.run_one(i, self.ops[i], slot)

    cdef void run_all(self) noexcept nogil:
        cdef Py_ssize_t i, n = self.num_envs
        cdef uint8_t* ops = self.ops
        cdef long t0
        cp_store(&self.n_failed, 0)
        if self.aq != NULL and n > 1 and cp_async_use_team(self.aq, n):
            self.run_with_team()
        else:
            t0 = cp_now_ns()
            for i in range(n):
                self.run_one(i, ops[i], CALLER_SLOT)
            if self.aq != NULL:
                cp_async_note_batch(self.aq, n, 1, cp_now_ns() - t0)

    cdef void run_ranges(self, int low, int slot) noexcept nogil:
        """Claim and run chunks of the posted range job until none is left: from the low
        end (the caller) or the high end (a worker)."""
        cdef int64_t i, first = 0
        cdef uint8_t* ops = self.ops
        cdef int64_t got = cp_async_claim_range(self.aq, low, &first)
        while got > 0:
            for i in range(first, first + got):
                self.run_one(i, ops[i], slot)
            cp_async_range_done(self.aq, got)
            got = cp_async_claim_range(self.aq, low, &first)

    cdef void run_with_team(self) noexcept nogil:
        cdef Py_ssize_t i, k = 0, n = self.num_envs
        cdef int64_t j, got
        cdef int64_t buf[CP_CHUNK_MAX]
        cdef int threads = self.num_workers + 1
        cdef long t0 = cp_now_ns()
        cdef uint8_t* ops = self.ops
        cdef int64_t chunk = cp_async_sync_chunk(self.aq, n, threads)
        if chunk > 1:
            # cheap envs: the batch as ranges of envs (see cp_async_post_range)
            cp_async_post_range(self.aq, n, chunk)
            self.run_ranges(1, CALLER_SLOT)
            cp_async_wait_range(self.aq)
            cp_async_note_batch(self.aq, n, threads, cp_now_ns() - t0)
            return
        # resets first: they can be long (ALE plays its start-up frames), and a long job taken
        # last leaves the other threads idle
        for i in range(n):
            if ops[i] == OP_RESET:
                self.batch_ids[k] = i
                k += 1
            elif ops[i] == OP_NONE:
                self.run_one(i, OP_NONE, CALLER_SLOT)
        for i in range(n):
            if ops[i] != OP_RESET and ops[i] != OP_NONE:
                self.batch_ids[k] = i
                k += 1
        cp_async_push_sync(self.aq, self.batch_ids, k, 1)
        got = cp_async_try_pop_work(self.aq, buf)
        while got > 0:
            for j in range(got):
                self.run_one(buf[j], ops[buf[j]], CALLER_SLOT)
            cp_async_push_done(self.aq, buf, got)
            got = cp_async_try_pop_work(self.aq, buf)
        cp_async_wait_done(self.aq, k, -1)
        cp_async_take_done(self.aq, self.batch_ids, k)
        cp_async_note_batch(self.aq, k, threads, cp_now_ns() - t0)

    # ------------------------------------------------------------------ thread slots, team
    def start_workers(self, int count):
        """Set up the caller's thread slot, then start a team of `count` worker threads
        (slots 1..count) and wait until each has run its thread_init. Once; count 0 starts
        no team. If any slot's thread_init fails, whatever started is stopped again and a
        RuntimeError names the slots and their messages."""
        cdef int st
        cdef int64_t entered, size
        if self.slot_status != NULL:
            return
        count = max(count, 0)
        self.slot_status = <int*> calloc(count + 1, sizeof(int))
        self.slot_err = <char*> calloc((count + 1) * ERRMSG_LEN, 1)
        if self.slot_status == NULL or self.slot_err == NULL:
            raise MemoryError("cypool: cannot allocate the thread slots")
        self.num_slots = 1
        with nogil:
            st = self.thread_init(CALLER_SLOT)
        self.slot_status[CALLER_SLOT] = st
        if st != ST_OK:
            raise RuntimeError(f"cypool: setting up the caller's thread slot failed: "
                               f"{self._slot_message(CALLER_SLOT)}")
        self.caller_ready = 1
        if count < 1:
            return
        self.aq = <cp_async*> malloc(sizeof(cp_async))
        if self.aq == NULL or cp_async_init(self.aq, self.num_envs) != 0:
            free(self.aq)
            self.aq = NULL
            raise MemoryError("cypool: cannot allocate the async queues")
        self.num_workers = count
        cp_store(&self.team_entered, 0)
        cp_store(&self.team_size, 0)
        self._worker = threading.Thread(target=self._worker_main, name="cypool-workers",
                                        daemon=True)
        self._worker.start()
        while True:                  # the team's threads run thread_init before taking work
            with nogil:
                entered = cp_load(&self.team_entered)
                size = cp_load(&self.team_size)
            if size > 0 and entered >= size:
                break
            if not self._worker.is_alive():
                raise RuntimeError("cypool: the worker team's thread ended while starting")
            time.sleep(0.0002)
        self.num_workers = <int> size       # OpenMP may give fewer threads than asked
        self.num_slots = 1 + self.num_workers
        bad = [k for k in range(1, self.num_slots) if self.slot_status[k] != ST_OK]
        if bad:
            msgs = "; ".join(f"slot {k}: {self._slot_message(k)}" for k in bad)
            self.stop_workers()
            raise RuntimeError(f"cypool: setting up worker threads failed ({msgs})")

    def _slot_message(self, int slot):
        return (self.slot_err + slot * ERRMSG_LEN)[:ERRMSG_LEN].split(b"\0", 1)[0].decode(
            "utf-8", "replace") or "(no message)"

    def _worker_main(self):
        cdef int nt = self.num_workers
        with nogil, parallel(num_threads=nt):
            self.worker_loop(1 + threadid())

    cdef void worker_loop(self, int slot) noexcept nogil:
        cdef int64_t k, got
        cdef int64_t buf[CP_CHUNK_MAX]
        cdef int st
        if slot == 1:
            cp_store(&self.team_size, cp_team_size())
        st = self.thread_init(slot)
        self.slot_status[slot] = st
        cp_add(&self.team_entered, 1)
        got = cp_async_pop_work(self.aq, buf)
        while got >= 0:
            if got == 0:                 # a sync batch's range job: claim from the high end
                self.run_ranges(0, slot)
            else:
                for k in range(got):
                    self.run_item(buf[k], slot)
                cp_async_push_done(self.aq, buf, got)
            got = cp_async_pop_work(self.aq, buf)
        if st == ST_OK:
            self.thread_fini(slot)

    def submit(self, const int64_t[::1] ids, uint8_t[::1] in_flight=None):
        """Queue these envs (their ops_arr entries are set) for the workers. With `in_flight`
        (a uint8 view of the façade's per-env flags) they are marked in flight in the same
        native call, so that no KeyboardInterrupt can fall between queueing and marking."""
        self._check_team()
        if in_flight is not None and in_flight.shape[0] != self.num_envs:
            raise ValueError("cypool: in_flight must have num_envs entries")
        cdef Py_ssize_t bad = _first_unseeded_item(self.rng, &ids[0], ids.shape[0],
                                                   self.group_size, self.num_envs)
        if bad >= 0:
            raise _no_stream(bad)
        cdef uint8_t* flags = &in_flight[0] if in_flight is not None else NULL
        with nogil:
            if flags != NULL:
                _mark(&ids[0], ids.shape[0], self.group_size, flags, 1)
            cp_async_push_work(self.aq, &ids[0], ids.shape[0], 1)
            cp_add(&self.n_queued, ids.shape[0])

    def submit_groups(self, groups, uint8_t[::1] in_flight=None):
        """Queue whole groups (see set_groups); each comes back as the item -(group + 1).
        `in_flight`: as in submit, for every env of the groups."""
        self._check_team()
        if self.group_size < 1:
            raise RuntimeError("cypool: submit_groups() before set_groups()")
        if in_flight is not None and in_flight.shape[0] != self.num_envs:
            raise ValueError("cypool: in_flight must have num_envs entries")
        items = -np.asarray(groups, np.int64) - 1
        cdef const int64_t[::1] it = items
        cdef Py_ssize_t bad = _first_unseeded_item(self.rng, &it[0], it.shape[0],
                                                   self.group_size, self.num_envs)
        if bad >= 0:
            raise _no_stream(bad)
        cdef uint8_t* flags = &in_flight[0] if in_flight is not None else NULL
        with nogil:
            if flags != NULL:
                _mark(&it[0], it.shape[0], self.group_size, flags, 1)
            cp_async_push_work(self.aq, &it[0], it.shape[0], 1)
            cp_add(&self.n_queued, it.shape[0])

    def set_groups(self, Py_ssize_t group_size, Py_ssize_t ring_k):
        """Split the envs into groups of `group_size` consecutive envs (population members),
        each recording its last `ring_k` finished episodes (0: no ring). Call it with no work
        queued: the ring arrays are replaced."""
        if group_size < 1 or self.num_envs % group_size:
            raise ValueError("cypool: group_size must divide num_envs")
        if ring_k < 0:
            raise ValueError("cypool: ring_k must be >= 0")
        g = self.num_envs // group_size
        self.ring_return = np.zeros((g, max(ring_k, 1)), np.float64)
        self.ring_length = np.zeros((g, max(ring_k, 1)), np.int64)
        self.group_episodes = np.zeros(g, np.int64)
        self.ring_ret = <double*> _data(self.ring_return)
        self.ring_len = <int64_t*> _data(self.ring_length)
        self.group_eps = <int64_t*> _data(self.group_episodes)
        self.group_size = group_size
        self.num_groups = g
        self.ring_k = ring_k

    def wait_ready(self, int64_t want, int timeout_ms):
        """Wait up to timeout_ms (GIL released) for `want` finished envs; return how many."""
        cdef int64_t n
        self._check_team()
        with nogil:
            n = cp_async_wait_done(self.aq, want, timeout_ms)
        return n

    def take_ready(self, int64_t n, uint8_t[::1] in_flight=None):
        """The n envs (or group items) that finished first, in completion order. With
        `in_flight` their envs are marked idle there in the same native call: taken results
        and the façade's flags cannot disagree, whatever interrupt follows."""
        self._check_team()
        if in_flight is not None and in_flight.shape[0] != self.num_envs:
            raise ValueError("cypool: in_flight must have num_envs entries")
        out = np.empty(n, np.int64)
        cdef int64_t[::1] o = out
        cdef uint8_t* flags = &in_flight[0] if in_flight is not None else NULL
        cdef int64_t got = 0
        if n > 0:
            got = cp_async_take_done(self.aq, &o[0], n)
            cp_add(&self.n_queued, -got)
            if flags != NULL:
                _mark(&o[0], got, self.group_size, flags, 0)
        return out[:got]

    def take_ready_groups(self, int64_t n, uint8_t[::1] in_flight=None):
        """take_ready for a pool driven group by group (submit_groups): the group ids, in
        completion order. The queue's encoding of groups (-(g + 1)) stays in this file."""
        items = self.take_ready(n, in_flight)
        if (items >= 0).any():
            raise RuntimeError("cypool: an env item was queued in a pool driven by groups")
        return -items - 1

    def _check_team(self):
        if self.aq == NULL:
            raise RuntimeError("cypool: the pool's worker team is stopped (env closed)")

    def _forget_team(self):
        """In a child of os.fork(): drop the parent's worker team without touching it. Its
        threads do not exist in the child and its locks and condition variables may be in any
        state (pthread_cond_destroy would wait forever for waiters that are gone), so the
        queue is leaked, never stopped or destroyed here; no thread_fini runs either (the
        slots' state belongs to the parent's threads)."""
        self.aq = NULL
        self._worker = None
        self.num_workers = 0
        self.caller_ready = 0
        self.n_queued = 0

    def stop_workers(self):
        """Stop the workers (each finishes the env it is stepping, then runs thread_fini in
        its own thread), join their thread, and finalise the caller's slot."""
        if self.aq != NULL:
            cp_async_stop(self.aq)
            if self._worker is not None:
                self._worker.join()
                self._worker = None
            cp_async_destroy(self.aq)
            free(self.aq)
            self.aq = NULL
            self.num_workers = 0
            self.n_queued = 0
        if self.caller_ready:
            self.caller_ready = 0
            with nogil:
                self.thread_fini(CALLER_SLOT)

    # ------------------------------------------------------------------ sync
    def run(self):
        """Apply ops_arr[i] to every env i with the GIL released."""
        cdef Py_ssize_t bad = _first_unseeded(self.rng, self.ops, self.num_envs)
        if bad >= 0:
            raise _no_stream(bad)
        with nogil:
            self.run_all()

    def step_all(self, bint reset_done, int op):
        """Every env: OP_RESET if reset_done and it must reset (NEXT_STEP autoreset), else
        `op`; then run. One native call for the façade's whole-batch step."""
        cdef Py_ssize_t i
        if op != OP_STEP and op != OP_STEP_RESET:
            raise ValueError(f"cypool: step_all's op must be a step op, got {op}")
        for i in range(self.num_envs):       # every env gets an op
            if self.rng[i] == NULL:
                raise _no_stream(i)
        with nogil:
            for i in range(self.num_envs):
                self.ops[i] = OP_RESET if reset_done and self.done[i] else op
            self.run_all()

    def run_job(self, const int64_t[::1] ids):
        """env_job on each env of `ids` (distinct; none in flight), the GIL released: on the
        worker team with the caller helping, where there is a team and no send() is
        outstanding (its results share the queue), else on the calling thread. Returns how
        many envs' jobs failed. No batch output, flag or counter changes."""
        cdef Py_ssize_t k, n = ids.shape[0]
        cdef int64_t failed
        self._check_ids(ids)
        seen = np.zeros(self.num_envs, np.uint8)
        cdef uint8_t[::1] sv = seen
        for k in range(n):
            if sv[ids[k]]:
                raise ValueError(f"cypool: run_job: env {ids[k]} is given twice")
            sv[ids[k]] = 1
        if n == 0:
            return 0
        old = np.empty(n, np.uint8)
        cdef uint8_t[::1] ov = old
        with nogil:
            for k in range(n):
                ov[k] = self.ops[ids[k]]
                self.ops[ids[k]] = OP_JOB
            failed = self.run_job_ids(&ids[0], n)
            for k in range(n):
                self.ops[ids[k]] = ov[k]
        return failed

    cdef int64_t run_job_ids(self, const int64_t* ids, Py_ssize_t n) noexcept nogil:
        """run_job's core: envs ids (ops set to OP_JOB); the number of failed jobs. The
        failure count of the last batch (n_failed) is put back after."""
        cdef int64_t j, got, failed
        cdef int64_t buf[CP_CHUNK_MAX]
        cdef int64_t saved = cp_load(&self.n_failed)
        cdef Py_ssize_t k
        cp_store(&self.n_failed, 0)
        if self.aq != NULL and n > 1 and cp_load(&self.n_queued) == 0:
            cp_async_push_sync(self.aq, ids, n, 1)
            got = cp_async_try_pop_work(self.aq, buf)
            while got > 0:
                for j in range(got):
                    self.run_one(buf[j], OP_JOB, CALLER_SLOT)
                cp_async_push_done(self.aq, buf, got)
                got = cp_async_try_pop_work(self.aq, buf)
            cp_async_wait_done(self.aq, n, -1)
            cp_async_take_done(self.aq, self.batch_ids, n)
        else:
            for k in range(n):
                self.run_one(ids[k], OP_JOB, CALLER_SLOT)
        failed = cp_load(&self.n_failed)
        cp_store(&self.n_failed, saved)
        return failed

    def _sync_plan(self):
        """How the next sync batch of every env would run, from the cost measured so far:
        "caller" (no team, or too cheap to wake it), "ranges" (cheap envs, handed out as
        ranges) or "ids" (one env per queue item). For tests and profiling."""
        cdef int threads = self.num_workers + 1
        if self.aq == NULL or self.num_envs <= 1 or not cp_async_use_team(self.aq, self.num_envs):
            return "caller"
        return "ranges" if cp_async_sync_chunk(self.aq, self.num_envs, threads) > 1 else "ids"

    def failures(self, ids=None):
        """(env id, message) of the envs among `ids` (None: those with an op in ops_arr) whose
        last op failed. A C loop: it runs after every batch."""
        cdef Py_ssize_t i, k, n = self.num_envs
        cdef const int64_t[::1] idv
        out = []
        if ids is None:
            if cp_load(&self.n_failed) == 0:      # counted by run_one: nothing to scan
                return out
            for i in range(n):
                if self.ops[i] != OP_NONE and self.slots[i].status != ST_OK:
                    out.append((i, self._message(i)))
            return out
        idv = np.ascontiguousarray(ids, np.int64)
        for k in range(idv.shape[0]):
            i = idv[k]
            if i < 0 or i >= n:
                raise IndexError(f"cypool: env id {i} out of range [0, {n})")
            if self.slots[i].status != ST_OK:
                out.append((i, self._message(i)))
        return out

    def _message(self, Py_ssize_t i):
        """Env i's failure message; Engine's own kernels' (see _no_kernel) name the class
        that did not override them."""
        msg = self.slots[i].errmsg.decode("utf-8", "replace")
        if msg.startswith(_NO_KERNEL):
            cls = type(self)
            msg = f"pool {cls.__module__}.{cls.__qualname__} has no" + msg[len(_NO_KERNEL):]
        return msg

    def elapsed(self):
        cdef Py_ssize_t i
        return np.array([self.slots[i].elapsed for i in range(self.num_envs)], np.int64)

    # ------------------------------------------------------------------ state
    # How a pool says what its envs' own state is, for get_state/set_state, pickling and
    # deepcopy: the three state hooks below (API version 1), or the names of the per-env
    # arrays that hold it (`state_arrays = ("positions", ...)`: row i of each is env i's),
    # or `state_arrays = ()`: none beyond the engine's rows, stream and counters. A pool
    # that says nothing may keep state the engine cannot see, so its snapshots are refused
    # (it still builds and runs: version 1 pools without hooks are unchanged otherwise).
    state_arrays = None

    def _state_mode(self):
        """"hooks", "partial" (some of them), "arrays" (state_arrays, () included) or None
        (nothing declared); TypeError
        for a declaration that cannot work (hooks and state_arrays both, a name that is not
        a writable numeric array of one row per env)."""
        cls = type(self)
        where = f"cypool: pool {cls.__module__}.{cls.__qualname__}"
        hooks = [h for h in _STATE_HOOKS if getattr(cls, h) is not getattr(Engine, h)]
        names = cls.state_arrays
        if names is not None:
            if hooks:
                raise TypeError(f"{where} defines both state hooks ({', '.join(hooks)}) and "
                                "state_arrays; define one of the two")
            if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names):
                raise TypeError(f"{where}: state_arrays must be a tuple of attribute names "
                                f"(str), got {names!r}")
            for name in names:
                a = getattr(self, name, None)
                if (not isinstance(a, np.ndarray) or a.ndim < 1
                        or a.shape[0] != self.num_envs or a.dtype.kind not in "biufc"
                        or not a.flags.writeable):
                    got = type(a).__name__ if not isinstance(a, np.ndarray) else \
                        f"array {a.shape} {a.dtype}"
                    raise TypeError(
                        f"{where}: state_arrays names {name!r}, which must be a writable "
                        f"numeric numpy array with one row per env ({self.num_envs}) that "
                        f"Python can read (a `cdef readonly object` or `public` attribute), "
                        f"got {got}")
            return "arrays"
        if not hooks:
            return None
        return "hooks" if len(hooks) == len(_STATE_HOOKS) else "partial"

    def _check_snapshot(self):
        """TypeError unless the pool said what its envs' own state is (see state_arrays)."""
        mode = self._state_mode()
        cls = type(self)
        if mode == "partial":
            hooks = [h for h in _STATE_HOOKS if getattr(cls, h) is not getattr(Engine, h)]
            missing = [h for h in _STATE_HOOKS if h not in hooks]
            raise TypeError(f"cypool: pool {cls.__module__}.{cls.__qualname__} defines "
                            f"{', '.join(hooks)} but not {', '.join(missing)}: snapshots "
                            "need all three state hooks (_env_state, _check_env_state, "
                            "_set_env_state)")
        if mode is None:
            raise TypeError(
                f"cypool: pool {cls.__module__}.{cls.__qualname__} does not say what state "
                "its envs keep, so get_state/set_state, pickling and copy.deepcopy would "
                "lose it: define its state hooks _env_state(i), _check_env_state(i, state) "
                "and _set_env_state(i, state); or name the arrays that hold it as a class "
                "attribute, state_arrays = ('positions', ...) (row i of each is env i's "
                "state); or, if its obs rows, random stream and counters are all its state, "
                "declare state_arrays = () (docs/custom_envs.md)")

    def state_signature(self):
        """What two engines must share for the env states of one to fit the envs of the
        other: the engine class, its outputs and info width, and the family's own part
        (`_family_signature`)."""
        outs = tuple((name, self.outputs[name].shape[1:], self.outputs[name].dtype.str)
                     for name in self.output_names)
        return (type(self).__name__, outs, int(self.info_w)) + tuple(self._family_signature())

    def _family_signature(self):
        """A family's part of state_signature (e.g. its model's sizes)."""
        return ()

    def _env_state(self, Py_ssize_t i):
        """A family's part of env i's state: plain picklable values (None: nothing). The
        default: row i of each of state_arrays, as bytes."""
        names = type(self).state_arrays
        if not names:
            return None
        return {name: getattr(self, name)[i].tobytes() for name in names}

    def _check_env_state(self, Py_ssize_t i, state):
        """Raise ValueError unless a family part `state` fits env i; change nothing. The
        check must be complete: every value _set_env_state would refuse or fail to convert
        is refused here. It may return the part converted to plain values (installed
        instead of `state`); None installs `state` as it is."""
        names = type(self).state_arrays
        if not names:
            if state is not None:
                raise ValueError("this family keeps no env state of its own")
            return None
        state_dict(state, "state_arrays", names)
        out = {}
        for name in names:
            a = getattr(self, name)
            raw = state_bytes(state[name], f"state_arrays[{name!r}]", a[i].nbytes)
            if a.dtype == np.bool_ and np.frombuffer(raw, np.uint8).max(initial=0) > 1:
                raise ValueError(f"state_arrays[{name!r}]: not bools")
            out[name] = raw
        return out

    def _set_env_state(self, Py_ssize_t i, state):
        """Install a family part checked by _check_env_state (or, to undo a failed
        set_state, one _env_state returned)."""
        names = type(self).state_arrays
        if names:
            for name in names:
                a = getattr(self, name)
                a[i] = np.frombuffer(state[name], a.dtype).reshape(a.shape[1:])

    def get_state(self, ids):
        """The whole dynamic state of envs `ids` (one dict each, plain picklable values): the
        engine's bookkeeping (steps since reset, must-reset flag, episode statistics), the
        env's random stream, its rows of every output, reward, flags and info, and the
        family's part. Configuration (kwargs, time limits) is not part of it. Call it with
        no batch running these envs; every env must have been reset once."""
        cdef Py_ssize_t i
        self._check_snapshot()
        idx = self._id_list(ids)
        sig = self.state_signature()
        out = []
        for i in idx:
            gen = self._gens[i]
            if gen is None:
                raise ValueError(f"cypool: env {i} has no state yet (it was never reset)")
            out.append({
                "version": STATE_VERSION, "signature": sig,
                "elapsed": int(self.slots[i].elapsed), "done": bool(self.done[i]),
                "episode": (float(self.ep_ret[i]), int(self.ep_len[i]),
                            float(self.last_ret[i]), int(self.last_len[i]),
                            int(self.n_episodes[i]), int(self.n_steps[i])),
                "rng": (type(gen).__name__, gen.state),
                "rows": {name: self.outputs[name][i].tobytes() for name in self.output_names},
                "step": (float(self.rew[i]), bool(self.term[i]), bool(self.trunc[i]),
                         int(self.info_kind[i])),
                "info": self.info[i].tobytes(),
                "env": self._env_state(i),
            })
        return out

    def set_state(self, ids, states):
        """Give envs `ids` the states `states` (from get_state of this engine or of one with
        the same state_signature; any env's state fits any env). Every field of every state
        is checked and converted first (ValueError "cypool: state k: <field>: ..."), and only
        then installed, so a bad state changes no env. Call it with no batch running these
        envs."""
        cdef Py_ssize_t i, k
        self._check_snapshot()
        idx = self._id_list(ids)
        if not isinstance(states, (list, tuple)):
            raise ValueError(f"cypool: states must be a list of env states, got "
                             f"{type(states).__name__}")
        states = list(states)
        if len(states) != len(idx):
            raise ValueError(f"cypool: {len(idx)} env ids but {len(states)} states")
        sig = self.state_signature()
        parsed = []
        for k, i in enumerate(idx):
            try:
                parsed.append(self._parse_state(i, states[k], sig))
            except ValueError as exc:
                raise ValueError(f"cypool: state {k}: {exc}") from None
        # the family parts first: the only step that may still fail (a third-party pool's
        # incomplete check, an emulator refusing its bytes); undone on failure
        old = [self._env_state(i) for i in idx]
        k = 0
        try:
            for k in range(len(idx)):
                self._set_env_state(idx[k], parsed[k][7])
        except BaseException as exc:
            for j in range(k + 1):
                self._set_env_state(idx[j], old[j])
            if isinstance(exc, (ValueError, TypeError)):
                raise ValueError(f"cypool: state {k}: env: {exc}") from None
            raise
        for k, i in enumerate(idx):
            self._install_state(i, parsed[k])

    def _parse_state(self, Py_ssize_t i, st, sig):
        """One env state, every field checked against this engine and converted to plain
        values (ValueError "<field>: ..."); the tuple _install_state installs."""
        if not isinstance(st, dict):
            raise ValueError(f"not an env state of this cypool (a dict), got "
                             f"{type(st).__name__}")
        version = st.get("version")
        if type(version) is not int or version != STATE_VERSION:
            raise ValueError(f"version: not an env state of this cypool (version "
                             f"{STATE_VERSION}), got {_show(version)}")
        if not _same_signature(st.get("signature"), sig):
            raise ValueError(f"signature: the state comes from a different kind of env "
                             f"({_show(st.get('signature'))}); this pool's envs are {sig!r}")
        for f in _STATE_FIELDS:
            if f not in st:
                raise ValueError(f"{f}: missing")
        extra = [f for f in st if f not in _STATE_FIELDS]
        if extra:
            raise ValueError(f"unknown field(s) {extra}")
        elapsed = state_int(st["elapsed"], "elapsed", 0, _I64)
        done = state_bool(st["done"], "done")
        ep = state_seq(st["episode"], "episode", 6)
        episode = (state_float(ep[0], "episode[0] (return)"),
                   state_int(ep[1], "episode[1] (length)", 0, _I64),
                   state_float(ep[2], "episode[2] (last return)"),
                   state_int(ep[3], "episode[3] (last length)", 0, _I64),
                   state_int(ep[4], "episode[4] (episodes)", 0, _I64),
                   state_int(ep[5], "episode[5] (env steps)", 0, _I64))
        gen = _parse_bitgen(st["rng"])
        rows = state_dict(st["rows"], "rows", self.output_names)
        arrays = []
        for name in self.output_names:
            out = self.outputs[name]
            raw = state_bytes(rows[name], f"rows[{name!r}]", out[i].nbytes)
            a = np.frombuffer(raw, out.dtype).reshape(out.shape[1:])
            if out.dtype == np.bool_ and np.frombuffer(raw, np.uint8).max(initial=0) > 1:
                raise ValueError(f"rows[{name!r}]: not bools")
            arrays.append(a)
        sp = state_seq(st["step"], "step", 4)
        step = (state_float(sp[0], "step[0] (reward)"),
                state_bool(sp[1], "step[1] (terminated)"),
                state_bool(sp[2], "step[2] (truncated)"),
                state_int(sp[3], "step[3] (info kind)", INFO_NONE, INFO_RESET + 1))
        info = np.frombuffer(state_bytes(st["info"], "info", self.info[i].nbytes), np.float64)
        try:
            part = self._check_env_state(i, st["env"])
        except (ValueError, TypeError) as exc:
            raise ValueError(f"env: {exc}") from None
        return (elapsed, done, episode, gen, arrays, step, info,
                st["env"] if part is None else part)

    def _install_state(self, Py_ssize_t i, parsed):
        """The engine's part of a state _parse_state checked (plain values: cannot fail)."""
        cdef int k
        elapsed, done, episode, gen, arrays, step, info, _ = parsed
        self.slots[i].elapsed = elapsed
        self.done[i] = done
        (self.ep_ret[i], self.ep_len[i], self.last_ret[i], self.last_len[i],
         self.n_episodes[i], self.n_steps[i]) = episode
        self.set_generator(i, gen)
        for k, name in enumerate(self.output_names):
            self.outputs[name][i] = arrays[k]
        self.rew[i], self.term[i], self.trunc[i], self.info_kind[i] = step
        self.info[i] = info

    def _id_list(self, ids):
        arr = np.arange(self.num_envs, dtype=np.int64) if ids is None else \
            np.ascontiguousarray(np.atleast_1d(ids), dtype=np.int64)
        if arr.ndim != 1:
            raise ValueError("cypool: env ids must be one-dimensional")
        self._check_ids(arr)
        if np.unique(arr).size != arr.size:
            raise ValueError("cypool: env ids must be distinct")
        return [int(i) for i in arr]


def first_out_of_range(const int64_t[::1] a, int64_t n):
    """The first index of `a` whose value is outside [0, n), or -1 (the check of a discrete
    action batch: one C pass instead of three numpy ones)."""
    cdef Py_ssize_t k
    for k in range(a.shape[0]):
        if a[k] < 0 or a[k] >= n:
            return k
    return -1
