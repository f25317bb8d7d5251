# cython: language_level=3
"""env.xla()'s native step: a sync whole-batch step (NEXT_STEP autoreset, no env_id) run by
the FFI handler with the GIL released, from XLA's action buffer to XLA's result buffers.

It does what VectorEnv.step does for such a batch, on the same engine and buffers: validate
every action (Discrete: integers in [0, n); MuJoCo's Box: finite, float32 or float64) before
any env moves, write them into the engine's action array (MuJoCo: with the per-env float32
flag), Enginself.engine.run_all() with every env's op (OP_RESET if it must reset, else OP_STEP), then
copy obs, reward, terminated, truncated and info["env_id"] / ["_env_id"] into the results,
cast to their declared dtypes. The façade's checks (open, reset, nothing in flight) and its
lock are taken in Python around the call (cypool.xla._bridge), which also raises the Python
path's exact error when this reports a bad action or a failed env, and fills the other info
keys from the engine's info rows with the Python path's own code.

The handler reaches it through the capsule `native_step_capsule()` (a C function pointer:
no Python object crosses the nogil boundary; `obj` is a borrowed NativeStep that the xla()
adapter keeps alive).
"""
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, \
    uint64_t
from libc.math cimport isfinite
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy
from cpython.pycapsule cimport PyCapsule_New
from cpython.dict cimport PyDict_GetItem
from cpython.ref cimport PyObject
cimport numpy as cnp

from cypool._core._engine cimport Engine, OP_STEP, OP_RESET, INFO_STEP, INFO_RESET, cp_load

import numpy as np

cnp.import_array()

# XLA_FFI_DataType (xla/ffi/api/c_api.h)
cdef enum:
    X_PRED = 1
    X_S8 = 2
    X_S16 = 3
    X_S32 = 4
    X_S64 = 5
    X_U8 = 6
    X_U16 = 7
    X_U32 = 8
    X_U64 = 9
    X_F32 = 11
    X_F64 = 12

# what the native step returns (the Python side turns each into the Python path's error)
cpdef enum:
    NATIVE_OK = 0
    NATIVE_BAD_ACTION = 1      # out of range / not finite / another dtype: no env moved
    NATIVE_FAILED = 2          # an env's op failed: EngineError, as env.step raises it
    NATIVE_NO_STREAM = 3       # an env has no random stream (never reset)
    NATIVE_BAD_CALL = 4        # buffers that do not match the declaration

# what the fast call returns to the handler (see _fast_call)
cpdef enum:
    FAST_DONE = 0              # stepped, results written, the env's lock released
    FAST_SLOW = 1              # nothing done (lock not held): take the Python route
    FAST_END = 16              # FAST_END + status: stepped and failed, lock held: END must run

# the role of each result buffer
cpdef enum:
    ROLE_PY = 0                # filled in Python afterwards (info keys from the engine's rows)
    ROLE_OBS = 1
    ROLE_REWARD = 2
    ROLE_TERM = 3
    ROLE_TRUNC = 4
    ROLE_ENV_ID = 5
    ROLE_ENV_ID_MASK = 6
    ROLE_INFO = 7              # an info key: columns of the engine's info rows, 0 where unset
    ROLE_INFO_MASK = 8         # its "_key" mask
    ROLE_WARN = 9              # MuJoCo's mujoco_warnings (its family's extra_info)
    ROLE_WARN_MASK = 10

_XLA = {np.dtype(np.bool_): X_PRED, np.dtype(np.int8): X_S8, np.dtype(np.int16): X_S16,
        np.dtype(np.int32): X_S32, np.dtype(np.int64): X_S64, np.dtype(np.uint8): X_U8,
        np.dtype(np.uint16): X_U16, np.dtype(np.uint32): X_U32, np.dtype(np.uint64): X_U64,
        np.dtype(np.float32): X_F32, np.dtype(np.float64): X_F64}


cdef inline bint _is_float(int t) noexcept nogil:
    return t == X_F32 or t == X_F64


cdef inline bint _known(int t) noexcept nogil:
    return (X_PRED <= t <= X_U64) or t == X_F32 or t == X_F64


cdef inline int64_t _get_i(const char* p, int t, int64_t k) noexcept nogil:
    if t == X_S64:
        return (<const int64_t*> p)[k]
    if t == X_S32:
        return (<const int32_t*> p)[k]
    if t == X_S16:
        return (<const int16_t*> p)[k]
    if t == X_S8:
        return (<const int8_t*> p)[k]
    if t == X_U64:
        return <int64_t> (<const uint64_t*> p)[k]
    if t == X_U32:
        return (<const uint32_t*> p)[k]
    if t == X_U16:
        return (<const uint16_t*> p)[k]
    return (<const uint8_t*> p)[k]          # U8, PRED


cdef inline double _get_f(const char* p, int t, int64_t k) noexcept nogil:
    if t == X_F64:
        return (<const double*> p)[k]
    if t == X_F32:
        return (<const float*> p)[k]
    return <double> _get_i(p, t, k)


cdef inline void _put_i(char* p, int t, int64_t k, int64_t v) noexcept nogil:
    if t == X_S64:
        (<int64_t*> p)[k] = v
    elif t == X_S32:
        (<int32_t*> p)[k] = <int32_t> v
    elif t == X_S16:
        (<int16_t*> p)[k] = <int16_t> v
    elif t == X_S8:
        (<int8_t*> p)[k] = <int8_t> v
    elif t == X_U64:
        (<uint64_t*> p)[k] = <uint64_t> v
    elif t == X_U32:
        (<uint32_t*> p)[k] = <uint32_t> v
    elif t == X_U16:
        (<uint16_t*> p)[k] = <uint16_t> v
    elif t == X_PRED:
        (<uint8_t*> p)[k] = v != 0
    else:
        (<uint8_t*> p)[k] = <uint8_t> v


cdef inline void _put_f(char* p, int t, int64_t k, double v) noexcept nogil:
    if t == X_F64:
        (<double*> p)[k] = v
    elif t == X_F32:
        (<float*> p)[k] = <float> v
    elif t == X_PRED:
        (<uint8_t*> p)[k] = v != 0
    else:
        _put_i(p, t, k, <int64_t> v)


cdef inline int64_t _size(int t) noexcept nogil:
    if t == X_S64 or t == X_U64 or t == X_F64:
        return 8
    if t == X_S32 or t == X_U32 or t == X_F32:
        return 4
    if t == X_S16 or t == X_U16:
        return 2
    return 1


cdef void _convert(const char* src, int st, char* dst, int dt, int64_t n) noexcept nogil:
    """dst[k] = src[k] as numpy's astype(dst dtype) gives it for the values results hold."""
    cdef int64_t k
    if st == dt:                                # the usual case: the same dtype
        memcpy(dst, src, n * _size(st))
    elif dt == X_F64:
        for k in range(n):
            (<double*> dst)[k] = _get_f(src, st, k)
    elif dt == X_F32:
        for k in range(n):
            (<float*> dst)[k] = <float> _get_f(src, st, k)
    elif dt == X_PRED:
        for k in range(n):
            (<uint8_t*> dst)[k] = _get_f(src, st, k) != 0 if _is_float(st) else \
                _get_i(src, st, k) != 0
    elif _is_float(st):
        for k in range(n):
            _put_i(dst, dt, k, <int64_t> _get_f(src, st, k))
    else:
        for k in range(n):
            _put_i(dst, dt, k, _get_i(src, st, k))


cdef class NativeStep:
    cdef Engine engine
    cdef object keep              # the arrays whose memory the pointers below are
    cdef char* act_p              # the engine's action array (num_envs * per_env elements)
    cdef int act_t
    cdef int64_t per_env          # action elements per env
    cdef int64_t n_discrete       # > 0: Discrete(n) actions; 0: Box
    cdef uint8_t* f32_p           # MuJoCo's per-env "actions were float32" flags (Box)
    cdef char* src_p[5]           # by role: obs, reward, terminated, truncated
    cdef int src_t[5]
    cdef int64_t src_n[5]         # elements for the whole batch
    cdef int* roles
    cdef int64_t* cols            # per result: first info column, width, on_step | on_reset<<1
    cdef int64_t* widths
    cdef int* when
    cdef int64_t* ref_cols        # a mask also needs this info column > 0 (-1: no)
    cdef int n_roles
    cdef const double* info_p     # the engine's info rows (num_envs, info_w), float64
    cdef int64_t info_w
    cdef const uint8_t* kind_p    # which keys each row holds (INFO_STEP / INFO_RESET)
    cdef const int64_t* warn_p    # MuJoCo's warning counts, or NULL
    # the fast call's view of the env (bind()): the xla() adapter (which holds the env
    # weakly), the env's lock's methods and its in-flight flags
    cdef object port
    cdef object lock_acquire
    cdef object lock_release
    cdef object flight_keep
    cdef const uint8_t* flight_p

    def __cinit__(self):
        self.roles = NULL
        self.cols = NULL
        self.widths = NULL
        self.when = NULL
        self.ref_cols = NULL
        self.flight_p = NULL

    def __dealloc__(self):
        free(self.ref_cols)
        free(self.roles)
        free(self.cols)
        free(self.widths)
        free(self.when)

    def __init__(self, Engine engine, actions, act_f32, int64_t n_discrete, sources, roles,
                 info=None, kinds=None, warnings=None):
        """``actions``: the engine's action array; ``act_f32``: MuJoCo's flag array or None;
        ``n_discrete``: n of a Discrete space, 0 for Box; ``sources``: the engine's obs,
        reward, terminated and truncated arrays; ``roles``: per result leaf, ROLE_* or
        (ROLE_INFO / ROLE_INFO_MASK, first column, width, on_step, on_reset); ``info``,
        ``kinds``: the engine's info rows and kinds; ``warnings``: MuJoCo's counts (int64)."""
        cdef cnp.ndarray a
        self.engine = engine
        keep = [actions, act_f32, *sources, info, kinds, warnings]
        for x in keep:
            if x is not None and not (isinstance(x, np.ndarray) and x.flags.c_contiguous):
                raise ValueError("cypool xla: the engine's buffers are not C-contiguous arrays")
        self.keep = keep
        a = actions
        if a.dtype not in _XLA or len(a) != engine.num_envs:
            raise ValueError(f"cypool xla: unsupported action array {actions.dtype}")
        self.act_p = <char*> cnp.PyArray_DATA(a)
        self.act_t = _XLA[a.dtype]
        self.per_env = a.size // engine.num_envs
        self.n_discrete = n_discrete
        self.f32_p = NULL
        if act_f32 is not None:
            if act_f32.dtype.itemsize != 1 or len(act_f32) != engine.num_envs:
                raise ValueError("cypool xla: unsupported act_f32 array")
            self.f32_p = <uint8_t*> cnp.PyArray_DATA(act_f32)
        for r, src in enumerate(sources):
            a = src
            if a.dtype not in _XLA:
                raise ValueError(f"cypool xla: unsupported output dtype {a.dtype}")
            self.src_p[r] = <char*> cnp.PyArray_DATA(a)
            self.src_t[r] = _XLA[a.dtype]
            self.src_n[r] = a.size
        self.n_roles = len(roles)
        cdef size_t m = max(1, self.n_roles)
        self.roles = <int*> malloc(sizeof(int) * m)
        self.when = <int*> malloc(sizeof(int) * m)
        self.cols = <int64_t*> malloc(sizeof(int64_t) * m)
        self.widths = <int64_t*> malloc(sizeof(int64_t) * m)
        self.ref_cols = <int64_t*> malloc(sizeof(int64_t) * m)
        if self.roles == NULL or self.when == NULL or self.cols == NULL or \
                self.widths == NULL or self.ref_cols == NULL:
            raise MemoryError()
        self.info_p, self.kind_p, self.warn_p, self.info_w = NULL, NULL, NULL, 0
        if info is not None:
            if info.dtype != np.float64 or info.ndim != 2 or kinds.dtype != np.uint8 or \
                    len(info) != engine.num_envs or len(kinds) != engine.num_envs:
                raise ValueError("cypool xla: unsupported info rows")
            self.info_p = <const double*> cnp.PyArray_DATA(info)
            self.info_w = info.shape[1]
            self.kind_p = <const uint8_t*> cnp.PyArray_DATA(kinds)
        if warnings is not None:
            if warnings.dtype != np.int64 or len(warnings) != engine.num_envs:
                raise ValueError("cypool xla: unsupported warnings array")
            self.warn_p = <const int64_t*> cnp.PyArray_DATA(warnings)
        for r, role in enumerate(roles):
            col, width, flags, ref = 0, 1, 0, -1
            if isinstance(role, tuple):
                role, col, width, on_step, on_reset, *rest = role
                ref = rest[0] if rest else -1
                flags = bool(on_step) | (bool(on_reset) << 1)
                if self.info_p == NULL or col < 0 or width < 1 or col + width > self.info_w \
                        or ref >= self.info_w:
                    raise ValueError("cypool xla: an info key outside the info rows")
            if role in (ROLE_WARN, ROLE_WARN_MASK) and self.warn_p == NULL:
                raise ValueError("cypool xla: mujoco_warnings without a warnings array")
            self.roles[r], self.cols[r], self.widths[r], self.when[r] = role, col, width, flags
            self.ref_cols[r] = ref

    @property
    def address(self):
        return <Py_ssize_t> <void*> self

    def bind(self, port):
        """Let the fast call (_fast_call) do VectorEnv.step's checks itself: ``port`` is the
        xla() adapter (cypool/xla/__init__.py) of the env whose engine this steps, which
        holds it weakly; its in-flight flags (the Pool's) are read directly."""
        flight = port.in_flight
        if not isinstance(flight, np.ndarray) or flight.dtype != np.bool_ or \
                flight.shape != (self.engine.num_envs,) or not flight.flags.c_contiguous:
            raise ValueError("cypool xla: the env's in-flight flags are not a bool array")
        lock = port.lock
        self.port = port
        self.lock_acquire = lock.acquire
        self.lock_release = lock.release
        self.flight_keep = flight
        self.flight_p = <const uint8_t*> cnp.PyArray_DATA(flight)

    cdef int fast(self, const char* act, int act_t, int64_t act_n, int n_out, char** outs,
                  const int* out_t, const int64_t* out_n) except -1:
        """With the GIL: VectorEnv.step's checks under its lock, the nogil step, the lock
        released. Whatever is not the plain case (a closed env, envs in flight, a bad action,
        no random stream) is left to the Python route, which raises the Python path's
        error: FAST_SLOW, with nothing stepped and the lock not held. A failed env:
        FAST_END + status with the lock held (the Python END reports it and releases)."""
        cdef int st
        cdef Py_ssize_t i
        cdef bint keep = False
        if self.flight_p == NULL:
            return FAST_SLOW
        self.lock_acquire()
        try:
            if not self.port.steppable():
                return FAST_SLOW
            for i in range(self.engine.num_envs):
                if self.flight_p[i]:
                    return FAST_SLOW
            with nogil:
                st = self.step(act, act_t, act_n, n_out, outs, out_t, out_n)
            if st == NATIVE_OK:
                return FAST_DONE
            if st == NATIVE_FAILED:
                keep = True
                return FAST_END + st
            return FAST_SLOW         # refused before any env moved: the Python route reports
        finally:
            if not keep:
                self.lock_release()

    cdef int load(self, const char* act, int t, int64_t n) noexcept nogil:
        """Validate every action, then write them all (nothing written on a bad one)."""
        cdef int64_t k, v
        cdef double x
        if n != self.engine.num_envs * self.per_env or not _known(t):
            return NATIVE_BAD_CALL
        if self.n_discrete > 0:
            if _is_float(t) or t == X_PRED:
                return NATIVE_BAD_ACTION
            for k in range(n):
                v = _get_i(act, t, k)
                if v < 0 or v >= self.n_discrete or (t == X_U64 and
                                                     (<const uint64_t*> act)[k] >> 63):
                    return NATIVE_BAD_ACTION
            for k in range(n):
                _put_i(self.act_p, self.act_t, k, _get_i(act, t, k))
            return NATIVE_OK
        if t != X_F32 and t != X_F64:
            return NATIVE_BAD_ACTION
        for k in range(n):
            if not isfinite(_get_f(act, t, k)):
                return NATIVE_BAD_ACTION
        _convert(act, t, self.act_p, self.act_t, n)
        if self.f32_p != NULL:
            for k in range(self.engine.num_envs):
                self.f32_p[k] = t == X_F32
        return NATIVE_OK

    cdef int step(self, const char* act, int act_t, int64_t act_n, int n_out, char** outs,
                  const int* out_t, const int64_t* out_n) noexcept nogil:
        cdef Py_ssize_t i
        cdef int r, role, st
        cdef int64_t w
        if n_out != self.n_roles:
            return NATIVE_BAD_CALL
        for r in range(n_out):
            if not _known(out_t[r]):
                return NATIVE_BAD_CALL
            role = self.roles[r]
            if ROLE_OBS <= role <= ROLE_TRUNC and out_n[r] != self.src_n[role - 1]:
                return NATIVE_BAD_CALL
            if role >= ROLE_ENV_ID and out_n[r] != self.engine.num_envs * \
                    (self.widths[r] if role == ROLE_INFO else 1):
                return NATIVE_BAD_CALL
        for i in range(self.engine.num_envs):
            if self.engine.rng[i] == NULL:
                return NATIVE_NO_STREAM
        st = self.load(act, act_t, act_n)
        if st != NATIVE_OK:
            return st
        for i in range(self.engine.num_envs):          # VectorEnv.step: Engine.step_all(True, OP_STEP)
            self.engine.ops[i] = OP_RESET if self.engine.done[i] else OP_STEP
        self.engine.run_all()
        if cp_load(&self.engine.n_failed) != 0:
            return NATIVE_FAILED
        for r in range(n_out):
            role = self.roles[r]
            if ROLE_OBS <= role <= ROLE_TRUNC:
                _convert(self.src_p[role - 1], self.src_t[role - 1], outs[r], out_t[r],
                         out_n[r])
            elif role == ROLE_ENV_ID:
                for i in range(self.engine.num_envs):
                    _put_i(outs[r], out_t[r], i, i)
            elif role == ROLE_ENV_ID_MASK:
                for i in range(self.engine.num_envs):
                    _put_i(outs[r], out_t[r], i, 1)
            elif role == ROLE_INFO or role == ROLE_INFO_MASK:
                self.info_out(r, outs[r], out_t[r])
            elif role == ROLE_WARN or role == ROLE_WARN_MASK:
                for i in range(self.engine.num_envs):   # where a step warned, else 0 / False
                    w = self.warn_p[i] if (self.kind_p[i] == INFO_STEP and
                                           self.warn_p[i] > 0) else 0
                    _put_i(outs[r], out_t[r], i, w if role == ROLE_WARN else w > 0)
        return NATIVE_OK

    cdef void info_out(self, int r, char* out, int t) noexcept nogil:
        """VectorEnv._info_dict for one key: its columns on the rows that hold it (on a step
        or a reset, as the key says), 0 elsewhere; or its mask."""
        cdef Py_ssize_t i
        cdef int64_t j, w = self.widths[r], col = self.cols[r], ref = self.ref_cols[r]
        cdef int flags = self.when[r]
        cdef bint has
        cdef uint8_t kd
        for i in range(self.engine.num_envs):
            kd = self.kind_p[i]
            has = (kd == INFO_STEP and (flags & 1)) or (kd == INFO_RESET and (flags & 2))
            if self.roles[r] == ROLE_INFO_MASK:
                if ref >= 0:                   # Atari: game_length's mask, only at a game's end
                    has = has and self.info_p[i * self.info_w + ref] > 0
                _put_i(out, t, i, has)
            else:
                for j in range(w):
                    _put_f(out, t, i * w + j,
                           self.info_p[i * self.info_w + col + j] if has else 0.0)


cdef int _native_step(void* obj, const void* act, int act_t, int64_t act_n, int n_out,
                      void** outs, const int* out_t, const int64_t* out_n) noexcept nogil:
    return (<NativeStep> obj).step(<const char*> act, act_t, act_n, n_out, <char**> outs,
                                   out_t, out_n)


# token (cypool.xla._bridge.register) -> its NativeStep, for the fast call
cdef dict _bound = {}


def bind(token, NativeStep native, port):
    native.bind(port)
    _bound[token] = native


def unbind(token):
    _bound.pop(token, None)


def _bound_values():
    """The NativeSteps the fast route can reach (for tests)."""
    return list(_bound.values())


cdef int _fast_call(int64_t token, const void* act, int act_t, int64_t act_n, int n_out,
                    void** outs, const int* out_t, const int64_t* out_n) except -1:
    """Called by the handler with the GIL held: FAST_DONE, FAST_SLOW, FAST_END + status (see
    NativeStep.fast), or -1 with a Python exception set."""
    cdef PyObject* o = PyDict_GetItem(_bound, token)
    if o == NULL:
        return FAST_SLOW
    return (<NativeStep> o).fast(<const char*> act, act_t, act_n, n_out, <char**> outs, out_t,
                                 out_n)


def fast_call_capsule():
    """The C entry ``int (int64_t token, const void* action, int action_xla_type, int64_t
    action_count, int n_out, void** outs, const int* out_xla_types, const int64_t*
    out_counts)``, called with the GIL held (see _fast_call)."""
    return PyCapsule_New(<void*> _fast_call, b"cypool.xla.fast_call", NULL)


def native_step_capsule():
    """The C entry ``int (void* obj, const void* action, int action_xla_type, int64_t
    action_count, int n_out, void** outs, const int* out_xla_types, const int64_t*
    out_counts)``, nogil; ``obj`` is ``NativeStep.address``."""
    return PyCapsule_New(<void*> _native_step, b"cypool.xla.native_step", NULL)
