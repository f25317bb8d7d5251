"""MuJoCo pool: one shared read-only mjModel, one mjData per env, a task's kernels per step.

Kernel contract: iteration i touches only env i's engine state, slots[i], and row i of each
output buffer; no shared writes, allocation, Python objects or GIL inside the loop.

Data flow: the façade copies the validated action batch into `actions` (float64, exact for
float32 input; `act_f32` remembers the input dtype for numpy-exact costs) and fills the ops;
Engine.run() calls env_step/env_reset below for each env on OpenMP threads; they hand the
task's kernels an MjEnv of pointers into env i's rows.
"""
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, strncpy
from libc.stdint cimport uint8_t, int64_t, uintptr_t
cimport numpy as cnp

import hashlib

import numpy as np

from cypool._core._engine cimport Engine, EnvRow, ST_OK, ST_ENGINE_ERROR, ERRMSG_LEN, CALLER_SLOT
from cypool.mujoco._mj.mujoco cimport (mjModel, mjData, mj_deleteModel, mj_deleteData,
                                       mj_version, mj_versionString, mjVERSION_HEADER,
                                       mjNWARNING, mj_copyModel, mjDSBL_ACTUATION)
from cypool.mujoco._task cimport (MjEnv, MjTask, MJ_TASK_ABI, MjGuard, cp_install_log_handler, cp_set_timers,
                                  cp_warning_count, cp_step, cp_reset_data, cp_set_state,
                                  cp_forward, cp_dmc_step, cp_step1,
                                  cp_load_xml, cp_make_data)
cdef extern from "_mj_guard.h" nogil:
    int cp_kinematics(const mjModel* m, mjData* d, char* err)
    mjModel* cp_copy_model(const mjModel* m, char* err)

from cypool._core._engine import state_bytes, state_dict, state_float, state_int, state_seq
from cypool._numpy_blas import ROUTINE as _DOT_ROUTINE

cnp.import_array()

cdef extern from "_mj_render.h" nogil:
    ctypedef struct cp_renderer:
        pass
    ctypedef struct cp_camera:
        int ready
        int set_distance, set_azimuth, set_elevation, set_lookat, set_trackbodyid
        double distance, azimuth, elevation
        double lookat[3]
        int trackbodyid
    enum:
        CP_GL_AUTO
        CP_GL_EGL
        CP_GL_OSMESA
        CP_GL_OK
        CP_GL_NO_BACKEND
        CP_GL_FAILED
        CP_GL_FORKED
        CP_GL_NO_MEMORY
    int cp_gl_inherited()
    int cp_gl_headroom(const mjModel* m, int width, int height, int ncontexts, char* err,
                       int errlen)
    int cp_renderer_create(mjModel* m, int backend, int width, int height,
                           const int* vis_flags, int nflags, int max_geom, cp_renderer** out,
                           char* err, int errlen)
    void cp_renderer_destroy(cp_renderer* r)
    int cp_renderer_backend(const cp_renderer* r)
    int cp_gl_backend()
    void cp_gl_set_libraries(const char* egl, const char* osmesa)
    int cp_render_frames(cp_renderer* r, const mjModel* const* ms, mjData** d, cp_camera* cams,
                         const long long* ids, long long n, int camera_id, int channels_first,
                         unsigned char* out, float* depth_out, char* err, int errlen)

# a family's hook run on each env set_state restores (set_restore_hook): a PyCapsule named
# "cypool.MjRestore" of a function that brings what the env's mjData buffer and task state do
# not carry (a model per env) in line with them
ctypedef void (*restore_fn)(MjEnv* e) noexcept nogil

_C_INT = 2**31         # the range of a C int field of an env state

# MUJOCO_GL values (the family parses the variable) and the names of the backends
GL_BACKENDS = {"auto": CP_GL_AUTO, "egl": CP_GL_EGL, "osmesa": CP_GL_OSMESA}
_GL_NAMES = {CP_GL_EGL: "egl", CP_GL_OSMESA: "osmesa"}
GL_INSTALL_HINT = (
    "Install a GL driver: Mesa's EGL (Debian/Ubuntu: apt-get install libegl1 libegl-mesa0 "
    "libgl1-mesa-dri; MUJOCO_GL=egl) or OSMesa (apt-get install libosmesa6; "
    "MUJOCO_GL=osmesa). With MUJOCO_GL unset cypool tries EGL, then OSMesa.")


def gl_backend():
    """The GL backend this process renders MuJoCo through ("egl" or "osmesa"), fixed by its
    first renderer; None before any."""
    return _GL_NAMES.get(cp_gl_backend())


def _set_gl_libraries(egl=None, osmesa=None):
    """Tests: the library file names dlopen tries for EGL and OSMesa (None: the defaults:
    libEGL.so.1, libEGL.so; libOSMesa.so.8, .so.6, .so). Only libraries not loaded yet."""
    cdef bytes e = (egl or "").encode()
    cdef bytes o = (osmesa or "").encode()
    cp_gl_set_libraries(e, o)


def gl_inherited():
    """True in a fork child of a process that had started OpenGL: MuJoCo rendering is
    refused here (the GL driver's threads do not exist in the child: it would hang)."""
    return bool(cp_gl_inherited())


def _gl_error(int rc, bytes msg):
    text = msg.split(b"\0", 1)[0].decode(errors="replace")
    if rc == CP_GL_FORKED:
        return RuntimeError(f"cypool: cannot render MuJoCo: {text}")
    if rc == CP_GL_NO_MEMORY:       # checked before any GL call (Mesa would crash instead)
        return MemoryError(f"cypool: cannot render MuJoCo: {text}")
    if rc == CP_GL_NO_BACKEND:
        return RuntimeError(f"cypool: cannot render MuJoCo: no OpenGL backend could make a "
                            f"context ({text}). {GL_INSTALL_HINT}")
    return RuntimeError(f"cypool: cannot render MuJoCo: {text}")

cdef MjGuard GUARD
GUARD.step = cp_step
GUARD.reset_data = cp_reset_data
GUARD.set_state = cp_set_state
GUARD.forward = cp_forward
GUARD.dmc_step = cp_dmc_step
GUARD.step1 = cp_step1

HEADER_VERSION = mjVERSION_HEADER

# numpy's float64 dot (its DOUBLE_dot): 0.0 plus cblas_ddot over chunks of CBLAS_INT_MAX/2 + 1
# when numpy has a BLAS, else a left-to-right sum. The routine is set once, at import.
ctypedef double (*ddot64_t)(int64_t n, const double* x, int64_t incx, const double* y,
                            int64_t incy) noexcept nogil
ctypedef double (*ddot32_t)(int n, const double* x, int incx, const double* y,
                            int incy) noexcept nogil
cdef ddot64_t DDOT64 = NULL
cdef ddot32_t DDOT32 = NULL


cdef double np_dot(const double* x, const double* y, Py_ssize_t n) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t k, chunk
    if DDOT64 != NULL:
        return s + DDOT64(n, x, 1, y, 1)   # chunks of 2**62: never more than one here
    if DDOT32 != NULL:
        while n > 0:
            chunk = n if n < 1073741824 else 1073741824
            s += DDOT32(<int> chunk, x, 1, y, 1)
            x += chunk
            y += chunk
            n -= chunk
        return s
    for k in range(n):
        s += x[k] * y[k]
    return s


def _set_dot(routine):
    global DDOT64, DDOT32
    DDOT64 = NULL
    DDOT32 = NULL
    if routine.kind == "blas":
        if routine.ilp64:
            DDOT64 = <ddot64_t> <uintptr_t> routine.address
        else:
            DDOT32 = <ddot32_t> <uintptr_t> routine.address


_set_dot(_DOT_ROUTINE)


def dot(x, y):
    """np_dot on two float64 vectors (for tests): what the kernels compute for x.dot(y)."""
    cdef const double[::1] a = np.ascontiguousarray(x, dtype=np.float64)
    cdef const double[::1] b = np.ascontiguousarray(y, dtype=np.float64)
    if a.shape[0] != b.shape[0]:
        raise ValueError("dot: x and y must have the same length")
    if a.shape[0] == 0:
        return 0.0
    return np_dot(&a[0], &b[0], a.shape[0])


def runtime_version():
    """(mj_version(), mj_versionString()) of the loaded libmujoco."""
    return mj_version(), mj_versionString().decode()


def install_log_handler():
    cp_install_log_handler()


def set_timers(bint on):
    """MuJoCo's stage timers (MjData.timer, via mjcb_time) on or off, process-wide."""
    cp_set_timers(on)


cdef class MjPool(Engine):
    """num_envs MuJoCo envs of one task. Built by cypool.mujoco.family; not public."""
    cdef mjModel* m
    cdef mjModel* m_noact     # m with mjDSBL_ACTUATION (dm_control's reset-time mj_forward)
    cdef mjData** d
    # the model each env last stepped with (m, or a copy the task keeps per env: dm_control's
    # per-episode models), which its frames are drawn with
    cdef const mjModel** env_m
    cdef double* tstate       # task_state doubles per env (MjEnv.tstate), in env snapshots
    cdef readonly Py_ssize_t task_state
    # the task-state slot a restored env gets 1.0 in (-1: none; set_restore_slot), so that a
    # task can rebuild what its mjData buffer does not carry
    cdef Py_ssize_t restore_slot
    cdef restore_fn restore_hook
    cdef double* flat         # obs_split: each env's whole observation, split after a kernel
    cdef Py_ssize_t obs_dim
    cdef Py_ssize_t n_split
    cdef Py_ssize_t* split_len
    cdef Py_ssize_t* perm       # obs_perm: the split reads the task's element perm[j]
    cdef MjTask task
    cdef double* prm
    cdef Py_ssize_t prm_w
    cdef double* act
    cdef Py_ssize_t nu
    cdef uint8_t* f32_p
    cdef readonly object params, actions, warnings, act_f32
    cdef int* warn_before
    cdef long long* warn_p
    cdef double* scratch      # nq + nv doubles per env (MjEnv.qpos_buf, qvel_buf)
    cdef Py_ssize_t scratch_w
    cdef bytes _model_digest  # identifies the model in state signatures
    # rendering (render_rgb): the GL context, made at the first render, and each env's camera
    cdef cp_renderer* renderer
    cdef cp_camera* cams
    cdef int r_width, r_height, r_camera_id, r_max_geom
    cdef object r_flags
    cdef const int* r_flags_p   # r_flags' data, for thread_init
    cdef int r_nflags
    cdef int pixels             # from_pixels: every step and reset renders the env's obs
    cdef int chw                # pixels: channels-first observations (3, height, width)
    cdef int r_backend          # pixels: the GL backend the thread slots' renderers use
    cdef cp_renderer** slot_r   # each thread slot's renderer (pixels: made by thread_init;
                                # else a worker's, made at its first render() frame)
    cdef unsigned char** job_rgb    # render_frames: where env_job writes env i's frame,
    cdef float** job_depth          # its depth buffer (NULL: not asked for),
    cdef char* job_msg              # and env i's failure message (ERRMSG_LEN bytes per env)
    cdef int job_room               # render_frames checked the memory for the workers' contexts
    cdef int job_armed              # render_frames' run_job is running: job_rgb etc. are set
    # setup_render_prep: what the reference's render callback does before each frame
    cdef int rp_forward, rp_offset
    cdef Py_ssize_t rp_nq, rp_nv, rp_ns, rp_nt
    cdef object rp_keep             # the arrays the pointers below read
    cdef const int64_t* rp_qadr
    cdef const int64_t* rp_vadr
    cdef const int64_t* rp_sid
    cdef const int64_t* rp_soff
    cdef const int64_t* rp_tadr
    cdef const int64_t* rp_tsite
    cdef const float* rp_trgba
    cdef const int64_t* rp_kind     # per value: 0 a constant, 1 task state, 2 observation
    cdef const int64_t* rp_idx
    cdef const double* rp_add
    cdef double* rp_last            # offset: each env's placed sites' last model positions
    cdef Py_ssize_t n_scr           # scratch slots: the thread slots, then render_frames'
    cdef mjModel** scr_m            # per scratch slot: a copy of m (site kinematics, colours)
    cdef mjData** scr_d

    def __cinit__(self, *args, **kwargs):
        self.m = NULL
        self.m_noact = NULL
        self.d = NULL
        self.env_m = NULL
        self.restore_hook = NULL
        self.tstate = NULL
        self.flat = NULL
        self.split_len = NULL
        self.perm = NULL
        self.n_split = 0
        self.warn_before = NULL
        self.scratch = NULL
        self.renderer = NULL
        self.cams = NULL
        self.slot_r = NULL
        self.job_rgb = NULL
        self.job_depth = NULL
        self.job_msg = NULL
        self.pixels = 0
        self.chw = 0
        self.r_backend = CP_GL_AUTO

    def __init__(self, str xml_path, Py_ssize_t num_envs, int num_threads,
                 long long max_episode_steps, task_capsule, params, Py_ssize_t obs_dim,
                 Py_ssize_t info_width, tuple pixels=None, bint channels_first=False,
                 Py_ssize_t task_state=0, obs_split=None, obs_perm=None):
        """pixels: (height, width) for pixel observations (from_pixels): the observation
        output is the env's rendered frame ((3, height, width) with channels_first), drawn
        on the worker's thread after the step or reset, and the task's state observation
        goes to a second output, "state" (with obs_split, "state", "state.<key>", ...:
        state_outputs gives them by their obs_split names).
        task_state: doubles of persistent state per env the task keeps (MjEnv.tstate).
        obs_split: [(output name, shape), ...] whose sizes add up to obs_dim: the task writes
        its whole observation and the pool splits it into one output per item (a Dict
        observation; the first name must be "obs").
        obs_perm: with obs_split, a permutation of range(obs_dim): the outputs, concatenated,
        hold the task's elements obs_perm[0], obs_perm[1], ... (a flat observation in another
        key order than the task writes)."""
        cdef char err[1000]
        cdef Py_ssize_t i
        cdef MjTask* task
        cdef bytes path = xml_path.encode()
        err[0] = 0
        self.m = cp_load_xml(path, err, 1000)
        if self.m == NULL:
            msg = err.decode(errors="replace")
            if "allocate" in msg.lower() or "memory" in msg.lower():
                raise MemoryError(f"cypool: out of memory loading {xml_path}: {msg}")
            raise ValueError(f"cypool: MuJoCo could not load {xml_path}: {msg}")
        self.m_noact = mj_copyModel(NULL, self.m)
        if self.m_noact == NULL:
            raise MemoryError(f"cypool: out of memory copying the model of {xml_path}")
        self.m_noact.opt.disableflags |= mjDSBL_ACTUATION
        self.obs_dim = obs_dim
        if obs_split is not None:
            outputs = [(name, tuple(shape), np.float64) for name, shape in obs_split]
            sizes = [int(np.prod(shape, dtype=np.int64)) for _, shape in obs_split]
            if sum(sizes) != obs_dim or outputs[0][0] != "obs":
                raise ValueError("cypool: obs_split must start with 'obs' and cover obs_dim")
            self.n_split = len(sizes)
            self.split_len = <Py_ssize_t*> calloc(self.n_split, sizeof(Py_ssize_t))
            self.flat = <double*> calloc(num_envs * obs_dim + 1, sizeof(double))
            if self.split_len == NULL or self.flat == NULL:
                raise MemoryError("cypool: cannot allocate the observation buffers")
            for i in range(self.n_split):
                self.split_len[i] = sizes[i]
            if obs_perm is not None:
                perm = np.asarray(obs_perm)
                if perm.dtype.kind not in "iu" or perm.shape != (obs_dim,) or not \
                        np.array_equal(np.sort(perm), np.arange(obs_dim)):
                    raise ValueError("cypool: obs_perm must be a permutation of "
                                     f"range({obs_dim})")
                self.perm = <Py_ssize_t*> calloc(obs_dim + 1, sizeof(Py_ssize_t))
                if self.perm == NULL:
                    raise MemoryError("cypool: cannot allocate the observation permutation")
                for i in range(obs_dim):
                    self.perm[i] = perm[i]
        elif obs_perm is not None:
            raise ValueError("cypool: obs_perm needs obs_split")
        else:
            outputs = [("obs", (obs_dim,), np.float64)]
        if pixels is not None:
            # the frame is the observation; the task's state observation goes to "state"
            # (obs_split's outputs renamed "state", "state.<key>": state_outputs)
            shape = (3, pixels[0], pixels[1]) if channels_first else (pixels[0], pixels[1], 3)
            outputs = [("obs", shape, np.uint8)] + [("state" + name[3:], sh, dt)
                                                    for name, sh, dt in outputs]
            self.pixels = 1
            self.chw = channels_first
            # one renderer per thread slot (made by thread_init in the slot's own thread)
            self.slot_r = <cp_renderer**> calloc(num_threads + 2, sizeof(cp_renderer*))
            if self.slot_r == NULL:
                raise MemoryError("cypool: cannot allocate the renderers")
        self.n_scr = num_threads + 3
        self._init_engine(num_envs, num_threads, max_episode_steps, outputs, info_width)
        self.d = <mjData**> calloc(num_envs, sizeof(mjData*))
        self.env_m = <const mjModel**> calloc(num_envs, sizeof(mjModel*))
        self.warn_before = <int*> calloc(num_envs, sizeof(int))
        self.scratch_w = self.m.nq + self.m.nv
        self.scratch = <double*> calloc(num_envs * self.scratch_w + 1, sizeof(double))
        if task_state < 0:
            raise ValueError("cypool: task_state must be >= 0")
        self.task_state = task_state
        self.restore_slot = -1
        self.tstate = <double*> calloc(num_envs * task_state + 1, sizeof(double))
        if self.d == NULL or self.warn_before == NULL or self.scratch == NULL or \
                self.tstate == NULL or self.env_m == NULL:
            raise MemoryError("cypool: cannot allocate MuJoCo data")
        for i in range(num_envs):
            err[0] = 0
            self.d[i] = cp_make_data(self.m, err)
            self.env_m[i] = self.m
            if self.d[i] == NULL:
                raise MemoryError(f"cypool: out of memory creating MuJoCo data for env {i} of "
                                  f"{num_envs} ({err.decode(errors='replace')})")
        task = <MjTask*> PyCapsule_GetPointer(task_capsule, "cypool.MjTask")
        # layout 1 is a prefix of layout 2 (2 appends fields to MjEnv and MjGuard), so a task
        # built against 1 runs unchanged
        if (task.abi != MJ_TASK_ABI and task.abi != 1) or task.size != sizeof(MjTask):
            raise ImportError(f"cypool: the task module was built against MjTask layout "
                              f"{task.abi} ({task.size} bytes), this cypool uses "
                              f"{MJ_TASK_ABI} ({sizeof(MjTask)} bytes): rebuild it")
        self.task = task[0]
        self.set_params(params)
        self.nu = self.m.nu
        self.actions = np.zeros((num_envs, self.nu), np.float64)
        self.act = <double*> cnp.PyArray_DATA(self.actions)
        self.act_f32 = np.zeros(num_envs, np.uint8)
        self.f32_p = <uint8_t*> cnp.PyArray_DATA(self.act_f32)
        self.warnings = np.zeros(num_envs, np.int64)
        self.warn_p = <long long*> cnp.PyArray_DATA(self.warnings)

    def __dealloc__(self):
        cdef Py_ssize_t i
        cp_renderer_destroy(self.renderer)      # before the model it was made for
        free(self.cams)
        if self.slot_r != NULL and self.slot_status == NULL:
            cp_renderer_destroy(self.slot_r[0])     # made by open_pixel_renderer, never used
        free(self.slot_r)       # the slots' renderers were freed by thread_fini (or leak)
        free(self.job_rgb)
        free(self.job_depth)
        free(self.job_msg)
        if self.scr_m != NULL:
            for i in range(self.n_scr):
                self._free_scratch(i)
        free(self.scr_m)
        free(self.scr_d)
        if self.d != NULL:
            for i in range(self.num_envs):
                if self.d[i] != NULL:
                    mj_deleteData(self.d[i])
            free(self.d)
        free(self.warn_before)
        free(<void*> self.env_m)
        free(self.scratch)
        free(self.tstate)
        free(self.flat)
        free(self.split_len)
        free(self.perm)
        if self.m_noact != NULL:
            mj_deleteModel(self.m_noact)
        if self.m != NULL:
            mj_deleteModel(self.m)

    def set_params(self, params):
        """Per-env task parameters, float64 (num_envs, P), held in C for the kernels."""
        arr = np.ascontiguousarray(params, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[0] != self.num_envs:
            raise ValueError("cypool: params must be (num_envs, P)")
        self.params = arr
        self.prm = <double*> cnp.PyArray_DATA(arr)
        self.prm_w = arr.shape[1]

    def set_actions(self, cnp.ndarray actions, ids, bint f32):
        """Copy validated action rows (float32 or float64) for envs `ids` (None: all) into C;
        the rows' dtype is remembered per env for numpy-exact costs."""
        if ids is None:
            self.actions[...] = actions
            self.act_f32[:] = f32
        else:
            self.actions[ids] = actions
            self.act_f32[ids] = f32

    # model fields a task may set before any env runs (dm_control's constant model edits:
    # finger's hinge damping, reacher's target size), on both models
    _MODEL_FIELDS = ("dof_damping", "geom_size", "geom_pos", "site_size", "site_pos",
                     "site_rgba")

    def model_set(self, str field, Py_ssize_t index, double value):
        """model.<field>.flat[index] = value in the pool's model (and its actuation-disabled
        copy). Call only before the pool's first reset: the model is shared by every env."""
        cdef mjModel* mm
        cdef Py_ssize_t n
        cdef int which
        if self.scr_m != NULL:
            for n in range(self.n_scr):
                if self.scr_m[n] != NULL:
                    raise RuntimeError("cypool: model_set after the pool copied its model "
                                       "to render")
        sizes = {"dof_damping": self.m.nv, "geom_size": 3 * self.m.ngeom,
                 "geom_pos": 3 * self.m.ngeom, "site_size": 3 * self.m.nsite,
                 "site_pos": 3 * self.m.nsite, "site_rgba": 4 * self.m.nsite,
                 "geom_rgba": 4 * self.m.ngeom}
        if field not in sizes:
            raise ValueError(f"cypool: model_set: unknown field {field!r}")
        n = sizes[field]
        if not 0 <= index < n:
            raise IndexError(f"cypool: model_set: {field} index {index} out of range ({n})")
        for which in range(2):
            mm = self.m if which == 0 else self.m_noact
            if field == "dof_damping":
                mm.dof_damping[index] = value
            elif field == "geom_size":
                mm.geom_size[index] = value
            elif field == "geom_pos":
                mm.geom_pos[index] = value
            elif field == "site_size":
                mm.site_size[index] = value
            elif field == "site_pos":
                mm.site_pos[index] = value
            elif field == "site_rgba":
                mm.site_rgba[index] = <float> value
            else:
                mm.geom_rgba[index] = <float> value

    @property
    def state_outputs(self):
        """The outputs of the task's observation by their names without from_pixels ("obs",
        obs_split's "obs.<key>"), wherever they are ("state", "state.<key>" with it)."""
        if not self.pixels:
            return self.outputs
        return {"obs" + k[5:]: v for k, v in self.outputs.items() if k.startswith("state")}

    def task_state_of(self, Py_ssize_t i):
        """A copy of env i's task state (MjEnv.tstate)."""
        self._check_ids(np.array([i], np.int64))
        return np.array(<double[:self.task_state + 1]> (self.tstate + i * self.task_state))[
            :self.task_state]

    def data_sizes(self):
        """{field: doubles per env} of the mjData arrays :meth:`read_data` copies."""
        m = self.m
        return {"qpos": m.nq, "qvel": m.nv, "cinert": 10 * m.nbody, "cvel": 6 * m.nbody,
                "qfrc_actuator": m.nv, "cfrc_ext": 6 * m.nbody, "xpos": 3 * m.nbody}

    def read_data(self, fields, double[:, ::1] out):
        """Copy the mjData arrays ``fields`` (names of :meth:`data_sizes`) of every env, each
        row the fields concatenated in the given order, into ``out`` (num_envs, total): what
        the env's data holds after its last step or reset (call with no env in flight)."""
        cdef Py_ssize_t i, k, off, nf, total = 0
        cdef int codes[7]
        cdef Py_ssize_t lens[7]
        cdef mjData* d
        cdef const double* src
        sizes = self.data_sizes()
        names = list(sizes)
        fields = list(fields)
        if not 0 < len(fields) <= 7 or len(set(fields)) != len(fields):
            raise ValueError(f"cypool: read_data takes 1 to 7 distinct fields, got {fields}")
        nf = len(fields)
        for k in range(nf):
            if fields[k] not in sizes:
                raise ValueError(f"cypool: unknown mjData field {fields[k]!r} (known: {names})")
            codes[k] = names.index(fields[k])
            lens[k] = sizes[fields[k]]
            total += lens[k]
        if out.shape[0] != self.num_envs or out.shape[1] != total:
            raise ValueError(f"cypool: read_data needs an out of shape ({self.num_envs}, "
                             f"{total}), got ({out.shape[0]}, {out.shape[1]})")
        for i in range(self.num_envs):
            if self.env_m[i] != self.m:
                raise ValueError("cypool: read_data needs one model for every env")
        for i in range(self.num_envs):
            d = self.d[i]
            off = 0
            for k in range(nf):
                if codes[k] == 0:
                    src = d.qpos
                elif codes[k] == 1:
                    src = d.qvel
                elif codes[k] == 2:
                    src = d.cinert
                elif codes[k] == 3:
                    src = d.cvel
                elif codes[k] == 4:
                    src = d.qfrc_actuator
                elif codes[k] == 5:
                    src = d.cfrc_ext
                else:
                    src = d.xpos
                memcpy(&out[i, off], src, lens[k] * sizeof(double))
                off += lens[k]

    def clear_task_state(self, Py_ssize_t i):
        """Zero env i's task state (a seeded reset of a dm_control env: a new RandomState
        has no cached Gaussian)."""
        cdef Py_ssize_t k
        self._check_ids(np.array([i], np.int64))
        for k in range(self.task_state):
            self.tstate[i * self.task_state + k] = 0.0

    cdef inline void _split_obs(self, Py_ssize_t i) noexcept nogil:
        cdef const double* src = self.flat + i * self.obs_dim
        cdef const Py_ssize_t* perm = self.perm
        cdef double* dst
        cdef Py_ssize_t k, j, off = 0
        for k in range(self.n_split):
            dst = <double*> self.output_row(k + self.pixels, i)
            if perm == NULL:
                for j in range(self.split_len[k]):
                    dst[j] = src[off + j]
            else:
                for j in range(self.split_len[k]):
                    dst[j] = src[perm[off + j]]
            off += self.split_len[k]

    cdef inline void _env(self, Py_ssize_t i, MjEnv* e) noexcept nogil:
        cdef EnvRow r
        self.row_of(i, &r)
        e.guard = &GUARD
        e.dot = np_dot
        e.m = self.m
        e.d = self.d[i]
        e.rng = r.rng
        e.prm = self.prm + i * self.prm_w
        e.act = self.act + i * self.nu
        e.act_f32 = self.f32_p[i]
        e.obs = self._obs_row(i, &r)
        e.info = r.info
        e.rew = r.rew
        e.term = r.term
        e.err = r.err
        e.qpos_buf = self.scratch + i * self.scratch_w
        e.qvel_buf = e.qpos_buf + self.m.nq
        e.m_noact = self.m_noact
        e.tstate = self.tstate + i * self.task_state

    cdef inline double* _obs_row(self, Py_ssize_t i, EnvRow* r) noexcept nogil:
        """Where env i's task writes its whole observation."""
        if self.flat != NULL:
            return self.flat + i * self.obs_dim
        if self.pixels:
            return <double*> self.output_row(1, i)
        return <double*> r.obs

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef MjEnv e
        cdef int st
        self._env(i, &e)
        st = self.task.reset(&e)
        self.env_m[i] = e.m
        if st == 0 and self.flat != NULL:
            self._split_obs(i)
        self.warn_before[i] = cp_warning_count(self.d[i])
        self.warn_p[i] = 0
        if st == 0 and self.pixels:
            return self._render_obs(i, slot)
        return ST_OK if st == 0 else ST_ENGINE_ERROR

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef MjEnv e
        cdef int st, w
        self._env(i, &e)
        st = self.task.step(&e)
        self.env_m[i] = e.m
        if st == 0 and self.flat != NULL:
            self._split_obs(i)
        w = cp_warning_count(self.d[i])
        self.warn_p[i] = w - self.warn_before[i]
        self.warn_before[i] = w
        if st == 0 and self.pixels:
            return self._render_obs(i, slot)
        return ST_OK if st == 0 else ST_ENGINE_ERROR

    cdef int _render_obs(self, Py_ssize_t i, int slot) noexcept nogil:
        """from_pixels: env i's observation is its frame, rendered on this slot's context
        (AddRenderObservation: the frame after the step or reset)."""
        return ST_OK if self._draw(self.slot_r[slot], i, slot, self.chw,
                                   <unsigned char*> self.output_row(0, i), NULL,
                                   self.slots[i].errmsg, ERRMSG_LEN) == 0 else ST_ENGINE_ERROR

    cdef int thread_init(self, int slot) noexcept nogil:
        cdef const int* flags = NULL
        if not self.pixels:
            return ST_OK
        if self.scr_m != NULL and self._scratch(slot, self.slot_err + slot * ERRMSG_LEN) != 0:
            return ST_ENGINE_ERROR
        if self.slot_r[slot] != NULL:       # slot 0: open_pixel_renderer
            return ST_OK
        if self.r_nflags > 0:
            flags = self.r_flags_p
        return ST_OK if cp_renderer_create(
            self.m, self.r_backend, self.r_width, self.r_height, flags, self.r_nflags,
            self.r_max_geom, &self.slot_r[slot], self.slot_err + slot * ERRMSG_LEN,
            ERRMSG_LEN) == CP_GL_OK else ST_ENGINE_ERROR

    cdef void thread_fini(self, int slot) noexcept nogil:
        if self.slot_r != NULL:
            cp_renderer_destroy(self.slot_r[slot])
            self.slot_r[slot] = NULL
        self._free_scratch(slot)

    cdef int env_job(self, Py_ssize_t i, int slot) noexcept nogil:
        """render_frames' frame of env i (to job_rgb[i], job_depth[i]) on thread slot `slot`:
        the caller draws on render()'s context, a worker on its slot's (made here at its
        first frame through the caller's backend, freed by thread_fini); a failure's message
        goes to env i's row of job_msg."""
        cdef char* err
        cdef cp_renderer* rd = self.renderer
        cdef Py_ssize_t s = self.n_scr - 1
        cdef const int* flags = NULL
        if not self.job_armed:          # run_job called from outside render_frames
            return ST_ENGINE_ERROR
        err = self.job_msg + i * ERRMSG_LEN
        err[0] = 0
        if slot != CALLER_SLOT:
            s = slot
            if self.slot_r[slot] == NULL:
                if self.r_nflags > 0:
                    flags = self.r_flags_p
                if cp_renderer_create(self.m, self.r_backend, self.r_width, self.r_height,
                                      flags, self.r_nflags, self.r_max_geom,
                                      &self.slot_r[slot], err, ERRMSG_LEN) != CP_GL_OK:
                    return ST_ENGINE_ERROR
            rd = self.slot_r[slot]
        if self.scr_m != NULL and self._scratch(s, err) != 0:
            return ST_ENGINE_ERROR
        return ST_OK if self._draw(rd, i, s, 0, self.job_rgb[i], self.job_depth[i], err,
                                   ERRMSG_LEN) == 0 else ST_ENGINE_ERROR

    # ------------------------------------------------------------------ state
    # An env's MuJoCo state is its whole mjData buffer (every array: the integration state
    # and the derived quantities a task reads before stepping, such as Humanoid's centre of
    # mass), its time and warning counters: restored into another mjData of the same model,
    # the next step is bit-identical. The arena (contacts, constraints) is rebuilt by every
    # step and is not kept.
    def _family_signature(self):
        if self._model_digest is None:
            self._model_digest = hashlib.sha256(
                (<char*> self.m.buffer)[:self.m.nbuffer]).digest()
        return ("mujoco", self.m.nq, self.m.nv, self.m.na, self.m.nu,
                int(self.d[0].nbuffer), self._model_digest)

    def _env_state(self, Py_ssize_t i):
        cdef mjData* d = self.d[i]
        cdef int k
        if self.m.nplugin > 0:
            raise ValueError("cypool: env states of models with plugins are not supported "
                             "(a plugin's state lives outside mjData)")
        out = {"buffer": (<char*> d.buffer)[:d.nbuffer], "time": d.time,
               "warnings": [(d.warning[k].lastinfo, d.warning[k].number)
                            for k in range(mjNWARNING)],
               "warn": (self.warn_before[i], int(self.warn_p[i])),
               "act_f32": int(self.f32_p[i])}
        if self.task_state:
            out["task_state"] = (<char*> (self.tstate + i * self.task_state))[
                :8 * self.task_state]
        if self.rp_offset:      # the placed sites' positions of the env's last frame
            out["render_state"] = (<char*> (self.rp_last + i * 3 * self.rp_ns))[
                :24 * self.rp_ns]
        return out

    def _check_env_state(self, Py_ssize_t i, state):
        cdef int k
        if self.m.nplugin > 0:
            raise ValueError("env states of models with plugins are not supported")
        w = "MuJoCo state"
        keys = ("buffer", "time", "warnings", "warn", "act_f32")
        keys += ("task_state",) if self.task_state else ()
        st = state_dict(state, w, keys + (("render_state",) if self.rp_offset else ()))
        warnings = []
        for k, pair in enumerate(state_seq(st["warnings"], f"{w} warnings", mjNWARNING)):
            lastinfo, number = state_seq(pair, f"{w} warnings[{k}]", 2)
            warnings.append((state_int(lastinfo, f"{w} warnings[{k}][0]", -_C_INT, _C_INT),
                             state_int(number, f"{w} warnings[{k}][1]", -_C_INT, _C_INT)))
        before, count = state_seq(st["warn"], f"{w} warn", 2)
        return {"buffer": state_bytes(st["buffer"], f"{w} buffer", self.d[i].nbuffer),
                "time": state_float(st["time"], f"{w} time"),
                "warnings": warnings,
                "warn": (state_int(before, f"{w} warn[0]", -_C_INT, _C_INT),
                         state_int(count, f"{w} warn[1]", -2**63, 2**63)),
                "act_f32": state_int(st["act_f32"], f"{w} act_f32", 0, 2),
                "task_state": state_bytes(st["task_state"], f"{w} task_state",
                                          8 * self.task_state) if self.task_state else b"",
                "render_state": state_bytes(st["render_state"], f"{w} render_state",
                                            24 * self.rp_ns) if self.rp_offset else b""}

    def _set_env_state(self, Py_ssize_t i, state):
        cdef mjData* d = self.d[i]
        cdef const char* buf = state["buffer"]
        cdef int k
        memcpy(d.buffer, buf, d.nbuffer)
        d.time = state["time"]
        for k, (lastinfo, number) in enumerate(state["warnings"]):
            d.warning[k].lastinfo = lastinfo
            d.warning[k].number = number
        self.warn_before[i], self.warn_p[i] = state["warn"]
        self.f32_p[i] = state["act_f32"]
        cdef const char* ts = state["task_state"]
        cdef const char* rs = state["render_state"]
        if self.rp_offset:
            memcpy(self.rp_last + i * 3 * self.rp_ns, rs, 24 * self.rp_ns)
        if self.task_state:
            memcpy(self.tstate + i * self.task_state, ts, 8 * self.task_state)
            if self.restore_slot >= 0:
                self.tstate[i * self.task_state + self.restore_slot] = 1.0
        cdef MjEnv e
        if self.restore_hook != NULL:
            self._env(i, &e)
            self.restore_hook(&e)
            self.env_m[i] = e.m

    def set_restore_slot(self, Py_ssize_t slot):
        """Mark each env restored by set_state with 1.0 in its task state's ``slot`` (a task
        whose next step needs more than the mjData buffer carries clears it)."""
        if not 0 <= slot < self.task_state:
            raise ValueError(f"cypool: restore slot {slot} outside the task state "
                             f"({self.task_state} doubles)")
        self.restore_slot = slot

    def set_restore_hook(self, capsule):
        """Run the function in ``capsule`` (a PyCapsule "cypool.MjRestore") on each env that
        set_state restores, after its state is in place (its models made to match it)."""
        self.restore_hook = <restore_fn> PyCapsule_GetPointer(capsule, "cypool.MjRestore")

    # ------------------------------------------------------------------ rendering
    def setup_render(self, int width, int height, int camera_id, dict camera_config,
                     visual_options, int max_geom):
        """How render_rgb renders (gymnasium's MujocoEnv render kwargs, checked by the
        family): frame size, camera (-1: gymnasium's FREE camera, configured by the task's
        default_camera_config at each env's first render), visual flags, scene size. The
        GL context is made at the first render."""
        cdef Py_ssize_t i
        cdef cp_camera* c
        if self.cams == NULL:
            self.cams = <cp_camera*> calloc(self.num_envs, sizeof(cp_camera))
            if self.cams == NULL:
                raise MemoryError("cypool: cannot allocate the cameras")
        self.r_width, self.r_height, self.r_camera_id = width, height, camera_id
        self.r_max_geom = max_geom
        self.r_flags = np.ascontiguousarray(
            [(int(k), int(bool(v))) for k, v in dict(visual_options or {}).items()] or
            np.zeros((0, 2)), np.intc).reshape(-1, 2)
        self.r_nflags = <int> self.r_flags.shape[0]
        self.r_flags_p = <const int*> cnp.PyArray_DATA(self.r_flags)
        for i in range(self.num_envs):
            c = &self.cams[i]
            c.ready = 0
            c.set_distance = "distance" in camera_config
            c.set_azimuth = "azimuth" in camera_config
            c.set_elevation = "elevation" in camera_config
            c.set_lookat = "lookat" in camera_config
            c.set_trackbodyid = "trackbodyid" in camera_config
            c.distance = camera_config.get("distance", 0.0)
            c.azimuth = camera_config.get("azimuth", 0.0)
            c.elevation = camera_config.get("elevation", 0.0)
            if c.set_lookat:
                c.lookat[0], c.lookat[1], c.lookat[2] = [float(x) for x in
                                                         camera_config["lookat"]]
            c.trackbodyid = camera_config.get("trackbodyid", -1)

    def open_pixel_renderer(self, int backend):
        """from_pixels: make the caller's thread slot's GL context now, through `backend`
        (GL_BACKENDS), so that a missing GL driver is a full error message here; the worker
        slots make theirs when the team starts, through the backend this one fixed."""
        cdef char err[1024]
        cdef int rc
        cdef const int* flags = NULL
        if not self.pixels or self.slot_r[0] != NULL:
            return
        if self.cams == NULL:
            raise RuntimeError("cypool: this pool was not set up to render")
        if self.r_nflags > 0:
            flags = self.r_flags_p
        err[0] = 0
        with nogil:
            rc = cp_renderer_create(self.m, backend, self.r_width, self.r_height, flags,
                                    self.r_nflags, self.r_max_geom, &self.slot_r[0], err, 1024)
        if rc != CP_GL_OK:
            raise _gl_error(rc, err[:1024])
        self.r_backend = cp_renderer_backend(self.slot_r[0])

    @property
    def render_backend(self):
        """The GL backend this pool renders through ("egl", "osmesa"), None before its
        first GL context."""
        if self.pixels and self.slot_r != NULL and self.slot_r[0] != NULL:
            return _GL_NAMES.get(cp_renderer_backend(self.slot_r[0]))
        if self.renderer != NULL:
            return _GL_NAMES.get(cp_renderer_backend(self.renderer))
        return None

    def start_workers(self, int count):
        """The engine's; from_pixels: each worker slot makes its GL context as it starts,
        so first the room for all of them is checked (a MemoryError, nothing started)."""
        cdef char err[1024]
        cdef int rc = 0
        if self.pixels and count > 0:
            err[0] = 0
            with nogil:
                rc = cp_gl_headroom(self.m, self.r_width, self.r_height, count, err, 1024)
            if rc:
                raise _gl_error(CP_GL_NO_MEMORY, err[:1024])
        try:
            Engine.start_workers(self, count)
        except RuntimeError as exc:     # a slot's own check (contexts made at once)
            if self.pixels and "not enough memory for" in str(exc):
                raise MemoryError(str(exc)) from None
            raise

    def stop_workers(self):
        """The engine's, then render()'s GL context is freed too (the pool is closing; a
        later render() would make a new one)."""
        Engine.stop_workers(self)
        cp_renderer_destroy(self.renderer)
        self.renderer = NULL

    def _forget_team(self):
        """The engine's (in a child of os.fork()); render()'s GL context is the parent's and
        is left alone too (leaked, never destroyed here)."""
        Engine._forget_team(self)
        self.renderer = NULL

    @property
    def worker_renderers(self):
        """How many worker threads hold a GL context (from_pixels: all; render(): those
        that drew a frame)."""
        cdef int k, n = 0
        if self.slot_r != NULL:
            for k in range(1, self.num_threads + 2):     # slot_r's worker entries
                n += self.slot_r[k] != NULL
        return n

    @property
    def has_renderer(self):
        """render_rgb made its GL context (the first render reads MUJOCO_GL)."""
        return self.renderer != NULL

    def render_rgb(self, const int64_t[::1] ids, int backend=CP_GL_AUTO):
        """(len(ids), height, width, 3) uint8 frames of envs `ids`, rendered (GIL released,
        as render_frames draws them) as gymnasium's MujocoRenderer renders rgb_array. The
        first call makes the GL context through `backend` (GL_BACKENDS). Call with no batch
        running these envs."""
        return self.render_frames(ids, True, False, backend)[0]

    def render_frames(self, const int64_t[::1] ids, bint rgb, bint depth,
                      int backend=CP_GL_AUTO):
        """(rgb, depth) of envs `ids`, each None unless asked for: rgb as render_rgb's, depth
        (len(ids), height, width) float32, the depth buffer gymnasium's depth_array reads
        (one render gives both, as gymnasium's rgbd_tuple). Each env's frame follows what
        setup_render_prep says the reference does before it, as from_pixels' frames do.
        Drawn by run_job: on the worker threads, each on its own GL context, with this thread
        on render()'s (made at the first call, through `backend`); on this thread alone when
        the pool has no team or a send() is outstanding. An env listed twice is drawn once."""
        cdef char err[1024]
        cdef int rc = 0
        cdef Py_ssize_t k, i, n = ids.shape[0]
        cdef Py_ssize_t plane = <Py_ssize_t> self.r_height * self.r_width
        cdef const int[:, ::1] flags
        if self.cams == NULL:
            raise RuntimeError("cypool: this pool was not set up to render")
        self._check_ids(ids)
        err[0] = 0
        if self.renderer == NULL:
            flags = self.r_flags
            rc = cp_renderer_create(self.m, backend, self.r_width, self.r_height,
                                    &flags[0, 0] if flags.shape[0] else NULL,
                                    <int> flags.shape[0], self.r_max_geom, &self.renderer,
                                    err, 1024)
            if rc != CP_GL_OK:
                raise _gl_error(rc, err[:1024])
            if not self.pixels:         # the workers' contexts follow this one's backend
                self.r_backend = cp_renderer_backend(self.renderer)
        self._job_buffers()
        if self.num_workers > 0 and not self.pixels and not self.job_room and n > 1:
            with nogil:
                rc = cp_gl_headroom(self.m, self.r_width, self.r_height, self.num_workers,
                                    err, 1024)
            if rc:
                raise _gl_error(CP_GL_NO_MEMORY, err[:1024])
            self.job_room = 1
        uniq, inverse = np.unique(np.asarray(ids), return_inverse=True)
        cdef const int64_t[::1] u = uniq if len(uniq) < n else ids
        cdef Py_ssize_t m = u.shape[0]
        out = np.empty((m, self.r_height, self.r_width, 3), np.uint8) if rgb else None
        dep = np.empty((m, self.r_height, self.r_width), np.float32) if depth else None
        cdef unsigned char* o = <unsigned char*> cnp.PyArray_DATA(out) if rgb else NULL
        cdef float* dp = <float*> cnp.PyArray_DATA(dep) if depth else NULL
        for k in range(m):
            i = u[k]
            self.job_rgb[i] = o + 3 * plane * k if o != NULL else NULL
            self.job_depth[i] = dp + plane * k if dp != NULL else NULL
        self.job_armed = 1
        try:
            failed = self.run_job(u)
        finally:
            self.job_armed = 0
            for k in range(m):          # no pointer into these arrays outlives the call
                self.job_rgb[u[k]] = NULL
                self.job_depth[u[k]] = NULL
        if failed:
            for k in range(m):
                if self.job_msg[u[k] * ERRMSG_LEN] != 0:
                    msg = (self.job_msg + u[k] * ERRMSG_LEN)[:ERRMSG_LEN].split(b"\0", 1)[0]
                    raise RuntimeError(f"cypool: rendering env {u[k]} failed: "
                                       f"{msg.decode(errors='replace')}")
            raise RuntimeError("cypool: rendering failed")
        if m < n:                       # an env listed twice: its frame, copied
            out = out[inverse] if rgb else None
            dep = dep[inverse] if depth else None
        return out, dep

    def _job_buffers(self):
        """render_frames' per-env destinations and messages, and the slots' renderers."""
        if self.job_msg == NULL:
            self.job_rgb = <unsigned char**> calloc(self.num_envs, sizeof(unsigned char*))
            self.job_depth = <float**> calloc(self.num_envs, sizeof(float*))
            self.job_msg = <char*> calloc(self.num_envs * ERRMSG_LEN, 1)
            if self.job_rgb == NULL or self.job_depth == NULL or self.job_msg == NULL:
                free(self.job_rgb)
                free(self.job_depth)
                free(self.job_msg)
                self.job_rgb = NULL
                self.job_depth = NULL
                self.job_msg = NULL
                raise MemoryError("cypool: cannot allocate the render buffers")
        if self.slot_r == NULL:
            self.slot_r = <cp_renderer**> calloc(self.num_threads + 2, sizeof(cp_renderer*))
            if self.slot_r == NULL:
                raise MemoryError("cypool: cannot allocate the renderers")

    # ------------------------------------------------------------------ render callbacks
    def setup_render_prep(self, bint forward=False, qpos=(), qvel=(), sites=(),
                          offset_sites=None, touch=None):
        """What each env's frame follows (gymnasium-robotics' render callbacks), in order:
        qpos / qvel [(address, value), ...] written into the env's data (kept, as the
        reference's callback keeps its target joint there); mj_forward if ``forward``;
        sites [(site id, (value, value, value)), ...], visual sites on bodies welded to the
        world, their world positions (MuJoCo's, from those model positions on a copy of the
        model) written into the env's data. With ``offset_sites`` (a site id per placed
        site), a placed site's model position is its value less its offset site's world
        minus model position, computed with the positions the env's last frame gave the
        placed sites (the reference's model keeps them: its "Visualize target" callbacks).
        touch (sensordata indices (k,), site ids (k,), rgba (2, 4)): site j is drawn in
        rgba[1] where the env's sensordata[index j] != 0, else rgba[0] (on a copy of the
        model). A value is ("const", x), ("task", k[, add]) (task state double k) or
        ("obs", k[, add]) (element k of the task's observation), plus ``add`` if nonzero.
        Call before the pool starts."""
        if self.slot_status != NULL:
            raise RuntimeError("cypool: setup_render_prep must come before the pool starts")
        m = self.m
        kinds, idx, add = [], [], []

        def value(v):
            if not isinstance(v, tuple) or len(v) not in (2, 3) or \
                    v[0] not in ("const", "task", "obs"):
                raise ValueError(f"cypool: render value {v!r} is not (kind, index[, add])")
            kind = ("const", "task", "obs").index(v[0])
            if kind == 0:
                kinds.append(0)
                idx.append(0)
                add.append(float(v[1]))
                return
            k = int(v[1])
            if not 0 <= k < (self.task_state if kind == 1 else self.obs_dim):
                raise ValueError(f"cypool: render value {v!r} outside the "
                                 f"{'task state' if kind == 1 else 'observation'}")
            kinds.append(kind)
            idx.append(k)
            add.append(float(v[2]) if len(v) == 3 else 0.0)

        def addresses(items, size, what):
            out = []
            for a, v in items:
                if not 0 <= int(a) < size:
                    raise ValueError(f"cypool: {what} address {a} outside the model")
                out.append(int(a))
                value(v)
            return np.array(out, np.int64)

        def welded(s):
            return 0 <= s < m.nsite and m.body_weldid[m.site_bodyid[s]] == 0

        qa = addresses(qpos, m.nq, "qpos")
        va = addresses(qvel, m.nv, "qvel")
        sid = []
        for s, vals in sites:
            if not welded(int(s)) or len(vals) != 3:
                raise ValueError(f"cypool: render site {s}: a site on a body welded to the "
                                 "world, with 3 values")
            sid.append(int(s))
            for v in vals:
                value(v)
        sid = np.array(sid, np.int64)
        if len(sid) > 32:
            raise ValueError("cypool: at most 32 render sites")
        soff = np.zeros(len(sid), np.int64)
        if offset_sites is not None:
            soff = np.array(offset_sites, np.int64).reshape(-1)
            if len(soff) != len(sid) or not all(welded(int(o)) for o in soff):
                raise ValueError("cypool: offset_sites must be a site on a body welded to "
                                 "the world per placed site")
        ta, ts, tc = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((2, 4), np.float32)
        if touch is not None:
            ta, ts = np.array(touch[0], np.int64), np.array(touch[1], np.int64)
            tc = np.ascontiguousarray(touch[2], np.float32)
            if ta.ndim != 1 or ts.shape != ta.shape or tc.shape != (2, 4) or \
                    any(not 0 <= a < m.nsensordata for a in ta) or \
                    any(not 0 <= t < m.nsite for t in ts):
                raise ValueError("cypool: bad touch sites for rendering")
        kinds, idx, add = (np.array(kinds, np.int64), np.array(idx, np.int64),
                           np.array(add, np.float64))
        last = np.zeros((self.num_envs, len(sid), 3))
        for j in range(len(sid)):   # the model's positions until an env's first frame
            last[:, j] = [m.site_pos[3 * sid[j] + c] for c in range(3)]
        self.rp_keep = (qa, va, sid, soff, ta, ts, tc, kinds, idx, add, last)
        self.rp_forward, self.rp_offset = forward, offset_sites is not None
        self.rp_nq, self.rp_nv, self.rp_ns, self.rp_nt = len(qa), len(va), len(sid), len(ta)
        self.rp_qadr = <const int64_t*> cnp.PyArray_DATA(qa)
        self.rp_vadr = <const int64_t*> cnp.PyArray_DATA(va)
        self.rp_sid = <const int64_t*> cnp.PyArray_DATA(sid)
        self.rp_soff = <const int64_t*> cnp.PyArray_DATA(soff)
        self.rp_tadr = <const int64_t*> cnp.PyArray_DATA(ta)
        self.rp_tsite = <const int64_t*> cnp.PyArray_DATA(ts)
        self.rp_trgba = <const float*> cnp.PyArray_DATA(tc)
        self.rp_kind = <const int64_t*> cnp.PyArray_DATA(kinds)
        self.rp_idx = <const int64_t*> cnp.PyArray_DATA(idx)
        self.rp_add = <const double*> cnp.PyArray_DATA(add)
        self.rp_last = <double*> cnp.PyArray_DATA(last)
        if (len(sid) or len(ta)) and self.scr_m == NULL:
            self.scr_m = <mjModel**> calloc(self.n_scr, sizeof(mjModel*))
            self.scr_d = <mjData**> calloc(self.n_scr, sizeof(mjData*))
            if self.scr_m == NULL or self.scr_d == NULL:
                raise MemoryError("cypool: cannot allocate the render scratch")

    cdef int _scratch(self, Py_ssize_t s, char* err) noexcept nogil:
        """Scratch slot s's copy of the model and its data, made once."""
        if self.scr_m[s] != NULL:
            return 0
        self.scr_m[s] = cp_copy_model(self.m, err)
        if self.scr_m[s] == NULL:
            return 1
        self.scr_d[s] = cp_make_data(self.scr_m[s], err)
        if self.scr_d[s] == NULL:
            mj_deleteModel(self.scr_m[s])
            self.scr_m[s] = NULL
            return 1
        return 0

    cdef void _free_scratch(self, Py_ssize_t s) noexcept nogil:
        if self.scr_m != NULL and self.scr_m[s] != NULL:
            mj_deleteData(self.scr_d[s])
            mj_deleteModel(self.scr_m[s])
            self.scr_m[s] = NULL
            self.scr_d[s] = NULL

    cdef inline double _value(self, Py_ssize_t k, const double* ts,
                              const double* ob) noexcept nogil:
        cdef double v
        if self.rp_kind[k] == 0:
            return self.rp_add[k]
        v = ts[self.rp_idx[k]] if self.rp_kind[k] == 1 else ob[self.rp_idx[k]]
        if self.rp_add[k] != 0.0:
            v += self.rp_add[k]
        return v

    cdef int _prep(self, Py_ssize_t i, Py_ssize_t s, char* err) noexcept nogil:
        """setup_render_prep's writes into env i's data (on scratch slot s's model copy)."""
        cdef mjData* d = self.d[i]
        cdef const double* ts = self.tstate + i * self.task_state
        cdef EnvRow r
        cdef const double* ob
        cdef Py_ssize_t j, c, k = self.rp_nq + self.rp_nv, ns = self.rp_ns
        cdef mjModel* sm
        cdef mjData* sd
        cdef double* last
        cdef double off[96]
        self.row_of(i, &r)
        ob = self._obs_row(i, &r)
        for j in range(self.rp_nq):
            d.qpos[self.rp_qadr[j]] = self._value(j, ts, ob)
        for j in range(self.rp_nv):
            d.qvel[self.rp_vadr[j]] = self._value(self.rp_nq + j, ts, ob)
        if self.rp_forward and cp_forward(self.env_m[i], d, err) != 0:
            return 1
        if ns == 0:
            return 0
        sm, sd = self.scr_m[s], self.scr_d[s]
        if sm == NULL:
            strncpy(err, b"no copy of the model on this thread to place the sites", 200)
            return 1
        last = self.rp_last + i * ns * 3
        if self.rp_offset:
            for j in range(ns):
                for c in range(3):
                    sm.site_pos[3 * self.rp_sid[j] + c] = last[3 * j + c]
            if cp_kinematics(sm, sd, err) != 0:
                return 1
            for j in range(ns):
                for c in range(3):
                    off[3 * j + c] = (sd.site_xpos[3 * self.rp_soff[j] + c] -
                                      sm.site_pos[3 * self.rp_soff[j] + c])
            for j in range(ns):     # in order, as the reference assigns them
                for c in range(3):
                    last[3 * j + c] = self._value(k + 3 * j + c, ts, ob) - off[3 * j + c]
                    sm.site_pos[3 * self.rp_sid[j] + c] = last[3 * j + c]
        else:
            for j in range(ns):
                for c in range(3):
                    sm.site_pos[3 * self.rp_sid[j] + c] = self._value(k + 3 * j + c, ts, ob)
        if cp_kinematics(sm, sd, err) != 0:
            return 1
        for j in range(ns):
            for c in range(3):
                d.site_xpos[3 * self.rp_sid[j] + c] = sd.site_xpos[3 * self.rp_sid[j] + c]
        return 0

    cdef int _draw(self, cp_renderer* rd, Py_ssize_t i, Py_ssize_t s, int chw,
                   unsigned char* rgb, float* depth, char* err, int errlen) noexcept nogil:
        """Env i's frame on renderer rd after setup_render_prep's writes (scratch slot s):
        0, or 1 with the message in err."""
        cdef const mjModel* ml[1]
        cdef long long zero = 0
        cdef mjData* d = self.d[i]
        cdef mjModel* sm
        cdef Py_ssize_t j, c
        cdef const float* col
        if self._prep(i, s, err) != 0:
            return 1
        ml[0] = self.env_m[i]
        if self.rp_nt:          # the touch colours, on this slot's copy of the model
            sm = self.scr_m[s]
            if sm == NULL:
                strncpy(err, b"no copy of the model on this thread to colour", 200)
                return 1
            for j in range(self.rp_nt):
                col = self.rp_trgba + (4 if d.sensordata[self.rp_tadr[j]] != 0.0 else 0)
                for c in range(4):
                    sm.site_rgba[4 * self.rp_tsite[j] + c] = col[c]
            ml[0] = sm
        return cp_render_frames(rd, ml, self.d + i, self.cams + i, &zero, 1,
                                self.r_camera_id, chw, rgb, depth, err, errlen)
