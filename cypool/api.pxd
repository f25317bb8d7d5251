# cypool's public env API for Cython, version 1 (cypool.api.API_VERSION): what an env pool
# written in a user's own package cimports. Build it with cypool.api.extension_kwargs() and
# register it with cypool.api.register_env; docs/custom_envs.md is the tutorial and the rules.
#
#   from cypool.api cimport Engine, EnvRow, ST_OK, ST_ENGINE_ERROR, ERRMSG_LEN
#
# Engine: the base class of every pool. A pool's __init__(num_envs, num_threads,
#   max_episode_steps, kwargs) calls self._init_engine(num_envs, num_threads,
#   max_episode_steps, [("obs", shape, dtype)], info_width) and owns an `actions` array;
#   it overrides the two kernels below (and, optionally, the per-thread hooks).
#   cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil
#   cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil
#   cdef int thread_init(self, int slot) noexcept nogil     # once per thread slot; ST_OK
#   cdef void thread_fini(self, int slot) noexcept nogil
#   cdef int env_job(self, Py_ssize_t i, int slot) noexcept nogil  # optional: run_job's
# EnvRow: env i's rows, from self.row_of(i, &row): obs, info, rew, term, trunc, its numpy
#   random stream rng (a bitgen_t*, for numpy.random.c_distributions) and err, the
#   ERRMSG_LEN-byte message of a failed status.
# Snapshots (get_state/set_state, pickling, deepcopy) need the pool to say what its envs'
#   own state is: the def hooks _env_state/_check_env_state/_set_env_state, or a class
#   attribute state_arrays = ("positions", ...) naming per-env numpy arrays (() for none);
#   a pool with neither still runs, but its snapshots raise TypeError (see cypool/api.py).
# ST_OK / ST_ENGINE_ERROR: what a kernel returns; ST_ENGINE_ERROR with a message in row.err
#   raises cypool.EngineError after the batch, naming the env.
from numpy.random cimport bitgen_t
from cypool._core._engine cimport Engine, EnvRow, ST_OK, ST_ENGINE_ERROR, ERRMSG_LEN, CALLER_SLOT
# Numpy's own ufunc inner loops, called without the GIL, give numpy's results bit for bit
# (its SIMD loops differ from libm's in the last bit for some values; an addition beside
# version 1, which it leaves unchanged; cypool/_core/_numpy_loops.pxd):
#   cdef NpLoop COS = numpy_loop(np.cos, "d->d")     # at import; "dd->d", "f->f" alike
#   np_unary(COS, x), np_unary_n(COS, xs, out, n), np_binary(ATAN2, y, x), np_unary_f(COSF, x)
from cypool._core._numpy_loops cimport (NpLoop, numpy_loop, np_unary, np_unary_n, np_binary,
                                        np_unary_f)
