"""Atari pool: one ALEInterface per env, EnvPool's preprocessing, gymnasium-exact frames.

Kernel contract: iteration i touches only env i's engine state, slots[i], and row i of each
output buffer; no shared writes, allocation, Python objects or GIL inside the loop.

Data flow: the façade validates the action indices and copies them into `actions` (int32);
Engine.run() calls env_step/env_reset below for each env on OpenMP threads. A step plays
frame_skip frames through the noexcept ALE shim, grabs the last two screens (grayscale or RGB
straight from ALE's palette), max-pools them, resizes with the precomputed OpenCV-equivalent
tables (_preprocess.pxd), and pushes the frame onto the stack that lives in env i's
observation row (so with copy=False the returned views are the stacks themselves: read
them, never write them). Every buffer is allocated at construction; the loop allocates
nothing.

Semantics, chosen so that with use_fire_reset=False, episodic_life=False, reward_clip=False
a pool is bit-identical to gymnasium's AtariPreprocessing + FrameStackObservation pipeline:
  * seeding (family.seed_env): ale-py's AtariEnv.seed_game: SeedSequence(seed) gives
    (np_seed, ale_seed); ALE's random_seed is int32(ale_seed), applied here by reloading the
    ROM at the env's next reset; the no-op generator is PCG64(SeedSequence(np_seed)).
  * reset: reset_game, then U[1, noop_max] no-ops drawn with numpy's bounded-integer
    algorithm from that generator (Generator.integers(1, noop_max + 1)); a game over during
    the no-ops restarts the game. With a FIRE reset (EnvPool's default), one no-op fewer and
    then FIRE, as EnvPool. The reset frame fills the whole stack.
  * step: frame_skip frames, rewards summed; the loop stops at a game over *before* grabbing
    that frame (gymnasium), so an early end repeats the stale buffers as gymnasium does.
  * per-env options: frame_skip, noop_max, use_fire_reset, episodic_life, reward_clip,
    max_episode_steps, repeat_action_probability, mode and difficulty live in each env's
    AleEnv (set_env_options, with the GIL held between batches), so that one pool can hold
    differently configured envs (populations). The kernel reads them at every step and reset:
    frame_skip, reward_clip, episodic_life and the time limit apply from the env's next step,
    noop_max and use_fire_reset from its next reset. repeat_action_probability, mode and
    difficulty are ALE settings: ALE copies the sticky probability into the StellaEnvironment
    that a ROM load builds (setFloat alone changes nothing), and applies the mode at
    reset_game. So a change of any of the three reloads the ROM at the env's next reset, the
    path a seeded reset takes: with a seed, that env then plays exactly the game of a pool
    built with those settings; without one, ALE's sticky-action generator carries on across
    the reload (cp_ale_reload_rom_keep_rng) instead of restarting from the last seed. Either
    way the console restarts: a new game, never an episodic-life continuation.
  * EnvPool's options on top: episodic_life ends the episode on a life loss and the next
    reset continues the same game (no reset_game, stack kept); reward_clip gives the sign;
    truncation at max_episode_steps agent steps since the game was reset, truncation winning
    over termination; info: lives, unclipped reward, terminated (real game over),
    elapsed_step (and the RAM when asked).
  * cypool's game score: at the step where a game ends (game over or the time limit: the
    next reset calls reset_game), the unclipped rewards summed over every step of the game
    (all its lives) and its agent steps; the counters restart with reset_game only.

Known departures, each deliberate:
  * from EnvPool: the no-op counts come from ale-py's seeding (PCG64 per env, reseedable by
    reset(seed=)) instead of EnvPool's mt19937 seeded once with seed + env_id (same
    distribution, other streams); a game over inside the frame skip keeps gymnasium's stale
    frame where EnvPool grabs the terminal frame un-pooled; a plain reset() in the middle of
    an episode restarts the game even with episodic_life (EnvPool's keeps playing).
  * from gymnasium: the time limit is EnvPool's (agent steps), not ALE's 108,000 frames
    counted with the no-ops; a game over during the no-ops of a *seeded* reset restarts the
    game without reseeding (gymnasium reseeds; no game ends within 30 frames of its start).
"""
from libc.limits cimport INT_MAX
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdio cimport snprintf
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memmove, memset
from libc.stddef cimport size_t
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC
cimport numpy as cnp
from numpy.random.c_distributions cimport random_bounded_uint64

import os

import numpy as np

from cypool._core._engine cimport Engine, EnvRow, ST_OK, ST_ENGINE_ERROR, ERRMSG_LEN
from cypool._core._engine import state_bytes, state_dict, state_int, state_seq
from cypool.atari._ale.ale_interface cimport ALEInterface
from cypool.atari._ale.version cimport ALE_VERSION
from cypool.atari._ale_shim cimport (
    CP_ALE_OK, CP_ALE_NUM_ACTIONS, CP_ALE_RAM_SIZE, CP_ALE_LOG_ERROR,
    cp_ale_last_error, cp_ale_set_log_level, cp_ale_create, cp_ale_destroy, cp_ale_set_int,
    cp_ale_set_float, cp_ale_load_rom, cp_ale_reload_rom_keep_rng, cp_ale_rom_info,
    cp_ale_set_mode, cp_ale_set_difficulty,
    cp_ale_reset_game, cp_ale_act, cp_ale_game_over, cp_ale_lives, cp_ale_screen_grayscale,
    cp_ale_screen_rgb, cp_ale_ram, cp_ale_minimal_actions, cp_ale_save_state,
    cp_ale_load_state, cp_ale_set_bool, cp_ale_screen_indices, cp_ale_screen_shape)
from cypool.atari._preprocess cimport (ResizePlan, resize_frame, max_into)

cnp.import_array()


# ALE prints a banner and per-load notes at Info level; keep stderr for real errors.
cp_ale_set_log_level(CP_ALE_LOG_ERROR)

cdef enum:
    MAX_MODES = 256        # more modes than any game has
    # columns of the info matrix
    INFO_LIVES = 0
    INFO_REWARD = 1
    INFO_TERMINATED = 2
    INFO_ELAPSED = 3
    INFO_GAME_RETURN = 4   # at a game's end (game over or time limit): its unclipped return
    INFO_GAME_LENGTH = 5   # ... and its agent steps (>= 1); both 0 on every other row
    INFO_RAM = 6           # CP_ALE_RAM_SIZE columns, only with ram_info
INFO_COLUMNS = {"lives": INFO_LIVES, "reward": INFO_REWARD, "terminated": INFO_TERMINATED,
                "elapsed_step": INFO_ELAPSED, "game_return": INFO_GAME_RETURN,
                "game_length": INFO_GAME_LENGTH, "ram": INFO_RAM}
RAM_SIZE = CP_ALE_RAM_SIZE
# The options each env holds for itself (AlePool.set_env_options); the others (stack_num,
# frame size, colour, action set, resize, ram_info) shape the buffers and are pool-wide.
ENV_OPTIONS = ("frame_skip", "noop_max", "episodic_life", "reward_clip", "use_fire_reset",
               "repeat_action_probability", "mode", "difficulty")


def ale_version():
    """Version of the ALE core linked into this module."""
    return ALE_VERSION.decode()


# ALE's screen size per ROM (MD5 of its bytes -> (height, width)), probed once per process.
_SCREEN_SHAPES = {}


cdef tuple _probe_screen(bytes path):
    """ALE's screen size for the ROM at path, from a console that loads it: its display
    properties (a PAL cartridge's 250 lines, detected by running it) are settled by a load."""
    cdef ALEInterface* ale = NULL
    cdef int rc, h = 0, w = 0
    try:
        rc = cp_ale_create(&ale)
        if rc == CP_ALE_OK:
            rc = cp_ale_load_rom(ale, path)
        if rc == CP_ALE_OK:
            rc = cp_ale_screen_shape(ale, &h, &w)
        if rc != CP_ALE_OK:
            raise RuntimeError(f"cypool: ALE cannot use the ROM {path.decode()}: "
                               f"{cp_ale_last_error().decode()}")
    finally:
        cp_ale_destroy(ale)
    if h <= 0 or w <= 0:
        raise RuntimeError(f"cypool: ALE gives the ROM {path.decode()} a {h} x {w} screen")
    return h, w


def screen_shape(str name, bytes rom_bytes, str path=None):
    """(height, width) of ALE's screen for a game's verified ROM bytes: 210 x 160 for most
    games, more lines for 13 (250 for the PAL cartridges: Pacman, Adventure, ...; Carnival
    214, Pooyan 220, JourneyEscape 230). Every env of a pool plays one ROM, so a pool reads
    it once: from ALE itself, one ROM load (~0.1 s) per ROM and process.
    path: a file holding exactly these bytes (a RomCopy's), else a private copy is made."""
    from cypool.atari import games
    import hashlib

    key = hashlib.md5(rom_bytes).hexdigest()
    shape = _SCREEN_SHAPES.get(key)
    if shape is None:
        if path is None:
            copy = games.RomCopy(name, rom_bytes)
            try:
                shape = _probe_screen(copy.path.encode())
            finally:
                copy.close()
        else:
            shape = _probe_screen(path.encode())
        _SCREEN_SHAPES[key] = shape
    return shape


# Per-env state, one C struct per env (calloc'd array), touched only by the thread running
# that env. The option fields are written only by AlePool.set_env_options /
# set_max_episode_steps, with the GIL held and no batch running that env.
ctypedef struct AleEnv:
    ALEInterface* ale
    # options
    int frame_skip         # emulator frames per agent step (>= 1)
    int noop_max           # a reset plays U[1, noop_max] no-ops (0: none)
    int use_fire_reset     # the option as given
    int fire_reset         # press FIRE at reset: use_fire_reset and the game has FIRE
    int episodic_life      # a life loss ends the episode; the next reset continues the game
    int reward_clip        # reward = sign(reward)
    int64_t max_steps      # truncate at this many agent steps since the game was reset (0: none)
    double sticky          # ALE's repeat_action_probability      } ALE settings, applied by
    int mode               # game mode (-1: the game's default)   } a ROM (re)load at the
    int difficulty         # difficulty (-1: the game's default)  } env's next reset
    int reload_pending     # one of those three changed since the ROM was loaded
    # state
    uint8_t* buf0          # the step's last frame (and the reset frame); holds the pooled max
    uint8_t* buf1          # the frame before it (zeroed at reset, as gymnasium does)
    float* hsum            # resize scratch: horizontal sums, src_h x dst_w floats
    float* acc             # resize scratch: one output row of floats
    int lives              # lives after the last step or reset
    int64_t game_steps     # agent steps since the game was last reset (EnvPool's elapsed_step)
    double game_return     # unclipped reward summed over those steps (every life of the game)
    int life_lost          # the last step ended an episode by losing a life (episodic_life)
    int loaded             # a ROM is loaded
    int seed_pending       # apply ale_seed (reload the ROM) at the next reset
    int32_t ale_seed


cdef inline double _sign(double x) noexcept nogil:
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


cdef class AlePool(Engine):
    """num_envs emulators of one game. Built by cypool.atari.family; not public."""
    cdef AleEnv* envs
    cdef ResizePlan plan
    cdef object _plan_arrays          # keeps the plan's tables alive
    cdef bytes _rom                   # the ROM file's path, as given (messages, signature)
    cdef bytes _load_path             # where ALE reads the verified bytes: _rom_copy.path
    cdef readonly object _rom_copy    # games.RomCopy of the verified bytes, for the pool's life
    cdef const char* rom_c            # _load_path
    cdef int32_t* act_p
    cdef readonly object actions      # (num_envs,) int32 action indices, set by the façade
    cdef int aset[CP_ALE_NUM_ACTIONS]     # ALE action id of each action index
    cdef readonly int n_actions
    cdef int has_fire                 # the action set has FIRE (action id 1)
    cdef int fire_reset               # the pool's use_fire_reset and has_fire
    cdef int ram_info, channels
    cdef readonly int raw_h, raw_w    # ALE's screen of this pool's game (screen_shape)
    cdef Py_ssize_t raw_size, frame_size
    cdef readonly int stack_num
    cdef readonly int64_t max_steps   # the truncation limit the pool was built with (0: none);
                                      # each env's own: env_options(i)["max_episode_steps"]
    cdef list _modes, _difficulties

    def __cinit__(self, *args, **kwargs):
        self.envs = NULL

    def __init__(self, str rom_path, Py_ssize_t num_envs, int num_threads,
                 long long max_episode_steps, dict cfg, dict plan, Py_ssize_t info_width,
                 bytes rom_bytes=None):
        """cfg: frame_skip, noop_max, stack_num, gray_scale, img_height, img_width,
        episodic_life, reward_clip, use_fire_reset, full_action_space,
        repeat_action_probability, mode, difficulty (-1: the game's default), ram_info.
        Every env starts with cfg's per-env options (ENV_OPTIONS) and max_episode_steps.
        plan: resize.make_plan from the top plan["src_h"] rows of ALE's screen (screen_shape)
        to (img_height, img_width).
        rom_bytes: the contents of rom_path as the caller verified them (games.read_rom);
        None reads the file here. ALE only ever reads a private copy of these bytes, so a
        file changed after construction changes nothing."""
        cdef Py_ssize_t i
        cdef int h = cfg["img_height"], w = cfg["img_width"]
        self.stack_num = cfg["stack_num"]
        self.channels = 1 if cfg["gray_scale"] else 3
        self.ram_info = cfg["ram_info"]
        if max_episode_steps < 0:
            raise ValueError("cypool: max_episode_steps must be >= 0")
        self.max_steps = max_episode_steps
        self.frame_size = <Py_ssize_t> self.channels * h * w
        from cypool.atari import games
        self._rom = rom_path.encode()
        if rom_bytes is None:
            with open(rom_path, "rb") as f:
                rom_bytes = f.read()
        self._rom_copy = games.RomCopy(os.path.basename(rom_path), rom_bytes)
        self._load_path = self._rom_copy.path.encode()
        self.rom_c = self._load_path
        # The raw buffers hold ALE's whole screen; the plan may read only its top rows
        # (EnvPool's 210 of a 250-line screen), never more.
        self.raw_h, self.raw_w = screen_shape(os.path.basename(rom_path), rom_bytes,
                                              self._rom_copy.path)
        if not (0 < plan["src_h"] <= self.raw_h and plan["src_w"] == self.raw_w):
            raise ValueError(f"cypool: a resize plan from {plan['src_h']} x {plan['src_w']} "
                             f"pixels does not fit ALE's {self.raw_h} x {self.raw_w} screen")
        self.raw_size = <Py_ssize_t> self.raw_h * self.raw_w * self.channels
        self._set_plan(plan)
        # Truncation is done here (EnvPool counts steps since the game was reset, which an
        # episodic-life reset does not restart), so the engine's own limit is off.
        self._init_engine(num_envs, num_threads, 0,
                          [("obs", (self.stack_num * self.channels, h, w), np.uint8)],
                          info_width)
        self.actions = np.zeros(num_envs, np.int32)
        self.act_p = <int32_t*> cnp.PyArray_DATA(self.actions)
        self.envs = <AleEnv*> calloc(num_envs, sizeof(AleEnv))
        if self.envs == NULL:
            raise MemoryError("cypool: cannot allocate the Atari envs")
        for i in range(num_envs):
            self.envs[i].buf0 = <uint8_t*> calloc(self.raw_size, 1)
            self.envs[i].buf1 = <uint8_t*> calloc(self.raw_size, 1)
            self.envs[i].hsum = <float*> calloc(self.raw_h * max(w, 1), sizeof(float))
            self.envs[i].acc = <float*> calloc(max(w, 1), sizeof(float))
            if (self.envs[i].buf0 == NULL or self.envs[i].buf1 == NULL
                    or self.envs[i].hsum == NULL or self.envs[i].acc == NULL):
                raise MemoryError("cypool: cannot allocate the Atari frame buffers")
        self._create(cfg["full_action_space"], cfg["use_fire_reset"])
        everyone = np.arange(num_envs, dtype=np.int64)
        self.set_env_options(everyone, {k: cfg[k] for k in ENV_OPTIONS})
        self.set_max_episode_steps(everyone, max_episode_steps)

    def _set_plan(self, dict plan):
        arrays = {k: np.ascontiguousarray(plan[k]) for k in ("xi", "yi", "xw", "yw", "xa", "yb")}
        for k in ("xi", "yi", "xa", "yb"):
            arrays[k] = np.ascontiguousarray(arrays[k], dtype=np.int32)
        for k in ("xw", "yw"):
            arrays[k] = np.ascontiguousarray(arrays[k], dtype=np.float32)
        self._plan_arrays = arrays
        self.plan.mode = plan["mode"]
        self.plan.src_h = plan["src_h"]
        self.plan.src_w = plan["src_w"]
        self.plan.dst_h = plan["dst_h"]
        self.plan.dst_w = plan["dst_w"]
        self.plan.tx = plan["tx"]
        self.plan.ty = plan["ty"]
        self.plan.kx = plan["kx"]
        self.plan.ky = plan["ky"]
        self.plan.inv_area = plan["inv_area"]
        self.plan.half_up = plan["half_up"]
        self.plan.xi = <const int32_t*> cnp.PyArray_DATA(arrays["xi"])
        self.plan.yi = <const int32_t*> cnp.PyArray_DATA(arrays["yi"])
        self.plan.xw = <const float*> cnp.PyArray_DATA(arrays["xw"])
        self.plan.yw = <const float*> cnp.PyArray_DATA(arrays["yw"])
        self.plan.xa = <const int32_t*> cnp.PyArray_DATA(arrays["xa"])
        self.plan.yb = <const int32_t*> cnp.PyArray_DATA(arrays["yb"])

    def _create(self, bint full_action_space, bint use_fire_reset):
        """Create the emulators and read the game's action sets, modes and difficulties
        from ALE's game table. No ROM is loaded yet: every env loads it at its first reset,
        which always brings a seed (the façade seeds each env before its first reset), and
        a load costs ~0.1 s (ALE rebuilds its colour-averaging palette), so loading here
        too would double the start-up time; the first reset loads in parallel."""
        cdef Py_ssize_t i, n = self.num_envs
        cdef int rc = CP_ALE_OK
        cdef int minimal[CP_ALE_NUM_ACTIONS]
        cdef int legal[CP_ALE_NUM_ACTIONS]
        cdef int modes[MAX_MODES]
        cdef int diffs[MAX_MODES]
        cdef size_t n_min = 0, n_legal = 0, n_modes = 0, n_diffs = 0
        rc = cp_ale_rom_info(self.rom_c, minimal, &n_min, legal, &n_legal, modes, MAX_MODES,
                             &n_modes, diffs, MAX_MODES, &n_diffs)
        if rc != CP_ALE_OK:
            raise RuntimeError(f"cypool: ALE cannot use the ROM {self._rom.decode()}: "
                               f"{cp_ale_last_error().decode()}")
        self._modes = [modes[k] for k in range(n_modes)]
        self._difficulties = [diffs[k] for k in range(n_diffs)]
        if full_action_space:
            memcpy(self.aset, legal, n_legal * sizeof(int))
            self.n_actions = <int> n_legal
        else:
            memcpy(self.aset, minimal, n_min * sizeof(int))
            self.n_actions = <int> n_min
        # EnvPool presses FIRE at reset when action 1 (FIRE) is in the game's action set.
        self.has_fire = 0
        for i in range(self.n_actions):
            if self.aset[i] == 1:
                self.has_fire = 1
        self.fire_reset = self.has_fire and use_fire_reset
        with nogil:
            for i in range(n):
                rc = cp_ale_create(&self.envs[i].ale)
                if rc != CP_ALE_OK:
                    break
        if rc != CP_ALE_OK:
            raise RuntimeError(f"cypool: cannot create an ALE emulator: "
                               f"{cp_ale_last_error().decode()}")

    def _check_choice(self, name, value, allowed):
        if value not in allowed:
            raise ValueError(f"{name}={value} is not offered by this game; it has "
                             f"{name}s {allowed}")

    @property
    def available_modes(self):
        return list(self._modes)

    @property
    def available_difficulties(self):
        return list(self._difficulties)

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.envs != NULL:
            for i in range(self.num_envs):
                cp_ale_destroy(self.envs[i].ale)
                free(self.envs[i].buf0)
                free(self.envs[i].buf1)
                free(self.envs[i].hsum)
                free(self.envs[i].acc)
            free(self.envs)
        if self._rom_copy is not None:     # the ROM copy goes with the pool (a cycle's
            self._rom_copy.close()         # collection may have cleared it: then it closes
                                           # itself)

    # ------------------------------------------------------------------ Python side
    @property
    def action_set(self):
        """ALE action ids of the action indices 0..n_actions-1."""
        return [self.aset[k] for k in range(self.n_actions)]

    @property
    def fire_on_reset(self):
        """The pool's default: a reset presses FIRE (env i's own: env_options(i))."""
        return bool(self.fire_reset)

    def set_env_options(self, const int64_t[::1] ids, dict options):
        """Set per-env options (keys: any of ENV_OPTIONS, values already validated by the
        family; mode/difficulty -1 or None: the game's default) of envs `ids`. Everything is
        checked before any env changes. Call with no batch running these envs. frame_skip,
        reward_clip, episodic_life apply from the env's next step; noop_max, use_fire_reset
        from its next reset; a changed repeat_action_probability, mode or difficulty reloads
        the ROM at its next reset (see the module docstring)."""
        cdef Py_ssize_t k
        cdef AleEnv* e
        cdef int reload
        unknown = [key for key in options if key not in ENV_OPTIONS]
        if unknown:
            raise ValueError(f"cypool: {unknown} cannot differ between the envs of an Atari "
                             f"pool; per-env options are {list(ENV_OPTIONS)}")
        self._check_ids(ids)
        vals = {}
        for key in ("frame_skip", "noop_max"):
            if key in options:
                v = options[key]
                low = 1 if key == "frame_skip" else 0
                if not low <= v <= INT_MAX:
                    raise ValueError(f"{key} must be in [{low}, {INT_MAX}], got {v}")
                vals[key] = int(v)
        for key in ("episodic_life", "reward_clip", "use_fire_reset"):
            if key in options:
                vals[key] = 1 if options[key] else 0
        if "repeat_action_probability" in options:
            p = float(options["repeat_action_probability"])
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"repeat_action_probability must be in [0, 1], got {p}")
            vals["repeat_action_probability"] = p
        for key, allowed in (("mode", self._modes), ("difficulty", self._difficulties)):
            if key in options:
                v = options[key]
                v = -1 if v is None else int(v)
                if v != -1:
                    self._check_choice(key, v, allowed)
                vals[key] = v
        for k in range(ids.shape[0]):
            e = &self.envs[ids[k]]
            if "frame_skip" in vals:
                e.frame_skip = vals["frame_skip"]
            if "noop_max" in vals:
                e.noop_max = vals["noop_max"]
            if "episodic_life" in vals:
                e.episodic_life = vals["episodic_life"]
            if "reward_clip" in vals:
                e.reward_clip = vals["reward_clip"]
            if "use_fire_reset" in vals:
                e.use_fire_reset = vals["use_fire_reset"]
                e.fire_reset = e.use_fire_reset and self.has_fire
            reload = 0
            if "repeat_action_probability" in vals:
                reload |= e.sticky != vals["repeat_action_probability"]
                e.sticky = vals["repeat_action_probability"]
            if "mode" in vals:
                reload |= e.mode != vals["mode"]
                e.mode = vals["mode"]
            if "difficulty" in vals:
                reload |= e.difficulty != vals["difficulty"]
                e.difficulty = vals["difficulty"]
            if reload and e.loaded:
                e.reload_pending = 1

    def set_max_episode_steps(self, const int64_t[::1] ids, int64_t limit):
        """Atari's own truncation limit of envs `ids` (0: none), in agent steps since the game
        was reset (EnvPool's elapsed_step, which an episodic-life reset does not restart),
        from their next step on. Replaces the engine's limit (counted since the last reset),
        which an Atari pool keeps off."""
        cdef Py_ssize_t k
        if limit < 0:
            raise ValueError("cypool: max_episode_steps must be >= 0")
        self._check_ids(ids)
        for k in range(ids.shape[0]):
            self.envs[ids[k]].max_steps = limit

    def max_episode_steps_of(self):
        """Every env's truncation limit (0: none), as a fresh int64 array."""
        cdef Py_ssize_t i
        return np.array([self.envs[i].max_steps for i in range(self.num_envs)], np.int64)

    def env_options(self, Py_ssize_t i):
        """Env i's per-env options, as set (the ALE settings among them apply from the ROM
        reload at its next reset when they changed): ENV_OPTIONS plus max_episode_steps
        (0: none); mode/difficulty -1 is the game's default."""
        cdef AleEnv* e
        if not 0 <= i < self.num_envs:
            raise IndexError(f"cypool: env id {i} out of range [0, {self.num_envs})")
        e = &self.envs[i]
        return dict(frame_skip=e.frame_skip, noop_max=e.noop_max,
                    episodic_life=bool(e.episodic_life), reward_clip=bool(e.reward_clip),
                    use_fire_reset=bool(e.use_fire_reset),
                    repeat_action_probability=e.sticky, mode=e.mode,
                    difficulty=e.difficulty, max_episode_steps=e.max_steps)

    def set_ale_seed(self, Py_ssize_t i, int seed):
        """ALE's random_seed for env i, applied (ROM reload) at its next reset."""
        self.envs[i].ale_seed = seed
        self.envs[i].seed_pending = 1

    def set_actions(self, actions, ids):
        """Copy validated action indices for envs `ids` (None: all)."""
        if ids is None:
            self.actions[:] = actions
        else:
            self.actions[ids] = actions

    def lives(self):
        return np.array([self.envs[i].lives for i in range(self.num_envs)], np.int32)

    def render_rgb(self, const int64_t[::1] ids):
        """The full-resolution RGB screens (len(ids), raw_h, raw_w, 3) uint8 of envs `ids`
        (210 lines for most games): ALE's screen of each env's last emulated frame (gymnasium's
        AtariEnv.render()). Call with no batch running these envs; each must have been reset
        once."""
        cdef Py_ssize_t k, n = ids.shape[0]
        cdef size_t frame = <size_t> self.raw_h * self.raw_w * 3
        cdef int rc = CP_ALE_OK
        self._check_ids(ids)
        for k in range(n):
            if not self.envs[ids[k]].loaded:
                raise ValueError(f"cypool: env {ids[k]} has no screen yet (reset it first)")
        out = np.empty((n, self.raw_h, self.raw_w, 3), np.uint8)
        cdef uint8_t* base = <uint8_t*> cnp.PyArray_DATA(out)
        with nogil:
            for k in range(n):
                rc = cp_ale_screen_rgb(self.envs[ids[k]].ale, base + k * frame, frame)
                if rc != CP_ALE_OK:
                    break
        if rc != CP_ALE_OK:
            raise RuntimeError(f"cypool: ALE getScreenRGB: {cp_ale_last_error().decode()}")
        return out

    def game_steps(self):
        return np.array([self.envs[i].game_steps for i in range(self.num_envs)], np.int64)

    # ------------------------------------------------------------------ kernel
    cdef int _fail(self, EnvRow* r, const char* where) noexcept nogil:
        snprintf(r.err, ERRMSG_LEN, "ALE %s: %s", where, cp_ale_last_error())
        return ST_ENGINE_ERROR

    cdef inline int _grab(self, AleEnv* e, uint8_t* out) noexcept nogil:
        if self.channels == 1:
            return cp_ale_screen_grayscale(e.ale, out, self.raw_size)
        return cp_ale_screen_rgb(e.ale, out, self.raw_size)

    cdef int _info(self, EnvRow* r, AleEnv* e, double raw_reward, int over,
                   int game_end) noexcept nogil:
        cdef double* row = r.info
        cdef uint8_t ram[CP_ALE_RAM_SIZE]
        cdef int k
        row[INFO_LIVES] = e.lives
        row[INFO_REWARD] = raw_reward
        row[INFO_TERMINATED] = over
        row[INFO_ELAPSED] = <double> e.game_steps
        if game_end:
            row[INFO_GAME_RETURN] = e.game_return
            row[INFO_GAME_LENGTH] = <double> e.game_steps
        else:
            row[INFO_GAME_RETURN] = 0.0
            row[INFO_GAME_LENGTH] = 0.0
        if self.ram_info:
            if cp_ale_ram(e.ale, ram, CP_ALE_RAM_SIZE) != CP_ALE_OK:
                return self._fail(r, "getRAM")
            for k in range(CP_ALE_RAM_SIZE):
                row[INFO_RAM + k] = ram[k]
        return ST_OK

    cdef void _push(self, EnvRow* r, AleEnv* e, int push_all) noexcept nogil:
        """Resize buf0 into the newest stack slot of obs row i (oldest frame first). A full
        push (reset) copies it into every slot; otherwise the older frames shift down by one
        (a memmove of a few tens of kB, cheaper than any bookkeeping for a ring)."""
        cdef uint8_t* row = <uint8_t*> r.obs
        cdef Py_ssize_t f = self.frame_size, k
        cdef uint8_t* newest = row + (self.stack_num - 1) * f
        if not push_all and self.stack_num > 1:
            memmove(row, row + f, (self.stack_num - 1) * f)
        resize_frame(&self.plan, e.buf0, self.channels, newest, e.hsum, e.acc)
        if push_all:
            for k in range(self.stack_num - 1):
                memcpy(row + k * f, newest, f)

    cdef int _load(self, EnvRow* r, AleEnv* e) noexcept nogil:
        """ale-py's seed_game + load_game: the seed and the settings take effect by loading
        the ROM; a settings change without a new seed keeps ALE's stream."""
        if cp_ale_set_float(e.ale, b"repeat_action_probability",
                            <float> e.sticky) != CP_ALE_OK:
            return self._fail(r, "setFloat(repeat_action_probability)")
        if e.seed_pending or not e.loaded:
            if cp_ale_set_int(e.ale, b"random_seed", e.ale_seed) != CP_ALE_OK:
                return self._fail(r, "setInt(random_seed)")
            if cp_ale_load_rom(e.ale, self.rom_c) != CP_ALE_OK:
                return self._fail(r, "loadROM")
        elif cp_ale_reload_rom_keep_rng(e.ale) != CP_ALE_OK:
            return self._fail(r, "loadROM")
        if e.mode >= 0 and cp_ale_set_mode(e.ale, e.mode) != CP_ALE_OK:
            return self._fail(r, "setMode")
        if e.difficulty >= 0 and cp_ale_set_difficulty(e.ale, e.difficulty) != CP_ALE_OK:
            return self._fail(r, "setDifficulty")
        e.loaded = 1
        e.seed_pending = 0
        e.reload_pending = 0
        e.life_lost = 0
        return ST_OK

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow row
        cdef EnvRow* r = &row
        cdef AleEnv* e = &self.envs[i]
        cdef int over = 0, frame_r = 0, push_all = 1, k, noops = 0
        cdef int noop_max = e.noop_max, fire = e.fire_reset
        cdef int64_t max_steps = e.max_steps
        self.row_of(i, r)
        if e.seed_pending or not e.loaded or e.reload_pending:
            if self._load(r, e) != ST_OK:
                return ST_ENGINE_ERROR
        if cp_ale_game_over(e.ale, 0, &over) != CP_ALE_OK:
            return self._fail(r, "game_over")
        # EnvPool's episodic life: after a life loss the same game goes on (no reset_game,
        # stack kept); a game over or the time limit resets it.
        if (e.episodic_life and e.life_lost and not over
                and not (max_steps > 0 and e.game_steps >= max_steps)):
            push_all = 0
        else:
            if cp_ale_reset_game(e.ale) != CP_ALE_OK:
                return self._fail(r, "reset_game")
            e.game_steps = 0
            e.game_return = 0.0
        e.life_lost = 0
        if noop_max > 0:
            # Generator.integers(1, noop_max + 1): numpy's bounded-integer draw on [1, noop_max]
            noops = <int> random_bounded_uint64(r.rng, 1, <uint64_t> (noop_max - 1),
                                                0, False)
        if fire and noops > 0:
            noops -= 1                      # EnvPool: U[1, noop_max] - 1 no-ops, then FIRE
        for k in range(noops):
            if cp_ale_act(e.ale, 0, 1.0, &frame_r) != CP_ALE_OK:
                return self._fail(r, "act")
            if cp_ale_game_over(e.ale, 0, &over) != CP_ALE_OK:
                return self._fail(r, "game_over")
            if over:
                if cp_ale_reset_game(e.ale) != CP_ALE_OK:
                    return self._fail(r, "reset_game")
                e.game_steps = 0
                e.game_return = 0.0
                push_all = 1
        if fire:
            if cp_ale_act(e.ale, 1, 1.0, &frame_r) != CP_ALE_OK:
                return self._fail(r, "act")
        if self._grab(e, e.buf0) != CP_ALE_OK:
            return self._fail(r, "getScreen")
        memset(e.buf1, 0, self.raw_size)
        self._push(r, e, push_all)
        if cp_ale_lives(e.ale, &e.lives) != CP_ALE_OK:
            return self._fail(r, "lives")
        if cp_ale_game_over(e.ale, 0, &over) != CP_ALE_OK:
            return self._fail(r, "game_over")
        return self._info(r, e, 0.0, over, 0)

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow row
        cdef EnvRow* r = &row
        cdef AleEnv* e = &self.envs[i]
        cdef int a = self.aset[self.act_p[i]]
        cdef int t, frame_r = 0, over = 0, lives = 0, fs = e.frame_skip
        cdef int life_loss, truncated
        cdef int64_t max_steps = e.max_steps
        cdef double reward = 0.0
        self.row_of(i, r)
        for t in range(fs):
            if cp_ale_act(e.ale, a, 1.0, &frame_r) != CP_ALE_OK:
                return self._fail(r, "act")
            reward += frame_r
            if cp_ale_game_over(e.ale, 0, &over) != CP_ALE_OK:
                return self._fail(r, "game_over")
            if over:
                break                       # gymnasium: the terminal frame is not grabbed
            if t == fs - 2:
                if self._grab(e, e.buf1) != CP_ALE_OK:
                    return self._fail(r, "getScreen")
            elif t == fs - 1:
                if self._grab(e, e.buf0) != CP_ALE_OK:
                    return self._fail(r, "getScreen")
        if fs > 1:
            max_into(e.buf0, e.buf1, self.raw_size)
        self._push(r, e, 0)
        if cp_ale_lives(e.ale, &lives) != CP_ALE_OK:
            return self._fail(r, "lives")
        e.game_steps += 1
        e.game_return += reward
        life_loss = e.episodic_life and 0 < lives < e.lives
        truncated = max_steps > 0 and e.game_steps >= max_steps
        r.trunc[0] = truncated
        r.term[0] = (over or life_loss) and not truncated
        e.life_lost = life_loss and not over
        e.lives = lives
        r.rew[0] = _sign(reward) if e.reward_clip else reward
        # the game ends here (the next reset restarts it): game over or the time limit
        return self._info(r, e, reward, over, over or truncated)

    # ------------------------------------------------------------------ state
    # An env's Atari state: ALE's own serialized state (console, game, sticky-action stream),
    # the two screen buffers a step max-pools (an early game over reuses them), and the
    # bookkeeping of lives, game steps and pending seeds. Its options stay the env's own.
    def _family_signature(self):
        return ("atari", self._rom, self.channels, int(self.raw_size), self.stack_num)

    def _env_state(self, Py_ssize_t i):
        cdef AleEnv* e = &self.envs[i]
        cdef char* data = NULL
        cdef size_t size = 0
        ale = None
        if e.loaded:
            if cp_ale_save_state(e.ale, &data, &size) != CP_ALE_OK:
                raise RuntimeError(f"cypool: ALE cannot save env {i}'s state: "
                                   f"{cp_ale_last_error().decode()}")
            try:
                ale = data[:size]
            finally:
                free(data)
        return {"ale": ale, "buf0": (<char*> e.buf0)[:self.raw_size],
                "buf1": (<char*> e.buf1)[:self.raw_size],
                "counters": (e.lives, e.game_steps, e.life_lost, e.seed_pending, e.ale_seed,
                             e.game_return)}

    def _check_env_state(self, Py_ssize_t i, state):
        # ALE's own bytes can only be checked by loading them: set_state undoes a refusal
        w = "Atari state"
        st = state_dict(state, w, ("ale", "buf0", "buf1", "counters"))
        counters = st["counters"]
        if isinstance(counters, (list, tuple)) and len(counters) == 5:
            counters = (*counters, 0.0)     # a state from before game_return was kept
        lives, steps, lost, pending, seed, ret = state_seq(counters, f"{w} counters", 6)
        if isinstance(ret, bool) or not isinstance(ret, (int, float)) or not np.isfinite(ret):
            raise ValueError(f"{w} game return: must be a finite number, got {ret!r}")
        return {"ale": None if st["ale"] is None else state_bytes(st["ale"], f"{w} ale"),
                "buf0": state_bytes(st["buf0"], f"{w} buf0", self.raw_size),
                "buf1": state_bytes(st["buf1"], f"{w} buf1", self.raw_size),
                "counters": (state_int(lives, f"{w} lives", -2**31, 2**31),
                             state_int(steps, f"{w} game steps", 0, 2**63),
                             state_int(lost, f"{w} life lost", 0, 2),
                             state_int(pending, f"{w} seed pending", 0, 2),
                             state_int(seed, f"{w} ALE seed", -2**31, 2**31),
                             float(ret))}

    def _set_env_state(self, Py_ssize_t i, state):
        cdef AleEnv* e = &self.envs[i]
        cdef bytes ale = state["ale"]
        cdef int rc
        cdef EnvRow row
        self.row_of(i, &row)
        if ale is not None:
            if not e.loaded or e.reload_pending:     # a ROM with this env's own settings
                e.seed_pending = 1
                with nogil:
                    rc = self._load(&row, e)
                if rc != ST_OK:
                    raise RuntimeError(f"cypool: env {i}: {row.err.decode()}")
            if cp_ale_load_state(e.ale, ale, len(ale)) != CP_ALE_OK:   # bytes it refuses
                raise ValueError(f"ALE cannot restore env {i}'s state: "
                                 f"{cp_ale_last_error().decode()}")
        memcpy(e.buf0, <const char*> state["buf0"], self.raw_size)
        memcpy(e.buf1, <const char*> state["buf1"], self.raw_size)
        (e.lives, e.game_steps, e.life_lost, e.seed_pending, e.ale_seed,
         e.game_return) = state["counters"]
        if ale is None:
            e.seed_pending = 1      # never loaded there: the next reset loads with ale_seed


# ---------------------------------------------------------------------- bench helper
cdef double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


def per_core_limit(str game, double seconds):
    """The per-core limit of an env step, in env steps per second: one bare ALE on this
    thread, each step `act` x4 plus two grayscale screen grabs (what any Atari pipeline must
    do), random minimal-set actions, reset_game at game over; no preprocessing."""
    from cypool.atari import games

    name = game if game.endswith(games.SUFFIX) else game + games.SUFFIX
    cdef bytes path = games.rom_path(games.rom_of(name)).encode()
    cdef ALEInterface* ale = NULL
    cdef int actions[CP_ALE_NUM_ACTIONS]
    cdef size_t count = 0
    cdef uint8_t* b0 = NULL
    cdef uint8_t* b1 = NULL
    cdef int rc, r = 0, over = 0, t, h = 0, w = 0
    cdef size_t size = 0
    cdef uint64_t steps = 0, lcg = 12345
    cdef double t0, t1 = 0.0
    try:
        rc = cp_ale_create(&ale)
        if rc == CP_ALE_OK:
            rc = cp_ale_load_rom(ale, path)
        if rc == CP_ALE_OK:
            rc = cp_ale_minimal_actions(ale, actions, CP_ALE_NUM_ACTIONS, &count)
        if rc == CP_ALE_OK:
            rc = cp_ale_screen_shape(ale, &h, &w)
        if rc != CP_ALE_OK:
            raise RuntimeError(f"cypool: ALE: {cp_ale_last_error().decode()}")
        size = <size_t> h * w
        b0 = <uint8_t*> malloc(size)
        b1 = <uint8_t*> malloc(size)
        if b0 == NULL or b1 == NULL:
            raise MemoryError()
        with nogil:
            t0 = _now()
            while rc == CP_ALE_OK:
                lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL
                for t in range(4):
                    rc = rc | cp_ale_act(ale, actions[(lcg >> 33) % count], 1.0, &r)
                    if t == 2:
                        rc = rc | cp_ale_screen_grayscale(ale, b1, size)
                    elif t == 3:
                        rc = rc | cp_ale_screen_grayscale(ale, b0, size)
                rc = rc | cp_ale_game_over(ale, 0, &over)
                if over:
                    rc = rc | cp_ale_reset_game(ale)
                steps += 1
                if steps % 16 == 0:
                    t1 = _now()
                    if t1 - t0 >= seconds:
                        break
        if rc != CP_ALE_OK:
            raise RuntimeError(f"cypool: ALE: {cp_ale_last_error().decode()}")
        return steps / (t1 - t0)
    finally:
        cp_ale_destroy(ale)
        free(b0)
        free(b1)


# ---------------------------------------------------------------------- test hook
def _bare_ale_screens(str rom, int seed, actions, bint color_averaging):
    """Test hook, not API: drive one bare emulator of the ALE linked into this module the
    way ale-py's ALEInterface is driven (its default settings, with random_seed=seed,
    repeat_action_probability=0 and color_averaging as given, then loadROM), apply each
    action of `actions` (ids in [0, 18)) with act(a), reset_game at game over, and return
    (indices, rgb, rewards): getScreen() and getScreenRGB() after the load and after every
    step, shapes (n + 1, H, W) and (n + 1, H, W, 3) (ALE's screen, 210 x 160 mostly), and
    each step's reward. tests/atari/test_phosphor_blend.py compares them with ale-py's."""
    cdef int[::1] acts = np.ascontiguousarray(actions, dtype=np.intc)
    cdef Py_ssize_t n = acts.shape[0], t
    cdef bytes path = rom.encode()
    cdef uint8_t[:, :, ::1] idx_v
    cdef uint8_t[:, :, :, ::1] rgb_v
    rewards = np.zeros(n, np.int64)
    cdef int64_t[::1] rew_v = rewards
    cdef ALEInterface* ale = NULL
    cdef int rc, r = 0, over = 0, h = 0, w = 0
    cdef size_t size = 0
    try:
        rc = cp_ale_create(&ale)
        if rc == CP_ALE_OK:
            rc = cp_ale_set_int(ale, b"random_seed", seed)
        if rc == CP_ALE_OK:
            rc = cp_ale_set_float(ale, b"repeat_action_probability", 0.0)
        if rc == CP_ALE_OK:
            rc = cp_ale_set_bool(ale, b"color_averaging", color_averaging)
        if rc == CP_ALE_OK:
            rc = cp_ale_load_rom(ale, path)
        if rc == CP_ALE_OK:
            rc = cp_ale_screen_shape(ale, &h, &w)
        if rc != CP_ALE_OK:
            raise RuntimeError(f"cypool: ALE: {cp_ale_last_error().decode()}")
        size = <size_t> h * w
        indices = np.zeros((n + 1, h, w), np.uint8)
        rgb = np.zeros((n + 1, h, w, 3), np.uint8)
        idx_v = indices
        rgb_v = rgb
        rc = cp_ale_screen_indices(ale, &idx_v[0, 0, 0], size)
        if rc == CP_ALE_OK:
            rc = cp_ale_screen_rgb(ale, &rgb_v[0, 0, 0, 0], size * 3)
        t = 0
        while rc == CP_ALE_OK and t < n:
            rc = cp_ale_act(ale, acts[t], 1.0, &r)
            rew_v[t] = r
            if rc == CP_ALE_OK:
                rc = cp_ale_screen_indices(ale, &idx_v[t + 1, 0, 0], size)
            if rc == CP_ALE_OK:
                rc = cp_ale_screen_rgb(ale, &rgb_v[t + 1, 0, 0, 0], size * 3)
            if rc == CP_ALE_OK:
                rc = cp_ale_game_over(ale, 1, &over)
            if rc == CP_ALE_OK and over:
                rc = cp_ale_reset_game(ale)
            t += 1
        if rc != CP_ALE_OK:
            raise RuntimeError(f"cypool: ALE: {cp_ale_last_error().decode()}")
        return indices, rgb, rewards
    finally:
        cp_ale_destroy(ale)
