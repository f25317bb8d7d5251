"""MiniGrid pool: minigrid 3.2.0's MiniGridEnv and its grid generators, per env, in nogil C.

Kernel contract: iteration i touches only env i's grid, agent row, scratch row, its rows of
the outputs and its stream; no allocation, Python objects or GIL.

World: a grid of cells (h * w, row-major as minigrid's Grid.grid), each a Cell: the object's
type (0: None, else minigrid's OBJECT_TO_IDX), colour (COLOR_TO_IDX), state (a door's
encoding: 0 open, 1 closed, 2 locked), a box's contents (c*) and a tag (the objects an
instruction names: minigrid compares them by identity, and a tag moves with its object). The
agent row: x, y, dir, step_count, max_steps, mission code, then the generator's positions
(doors, targets, obstacles; BabyAI's instruction and verifier state, I_*); the carried
object is a Cell (type 0: nothing). BabyAI's marks: the positions each object description
tracks (obj_poss, one bit per description), updated on a drop as minigrid does.
Snapshots: state_arrays (grids, agents, carried, targets).

Generators (K_*): Empty, DoorKey, FourRooms, LavaGap, Crossing, Unlock, Memory, KeyCorridor,
MultiRoom, BabyAI (K_GOTOLOCAL: 96 levels, gen_babyai's V_*), DistShift, RedBlueDoors,
(Blocked)UnlockPickup, Dynamic-Obstacles, GoToDoor, GoToObject, Fetch, LockedRoom, PutNear,
Playground, ObstructedMaze (v0, v1); RoomGrid's
helpers (rg_*) for the room grids; each env's own step rules after the common step
(env_step).

Draws: each generator makes minigrid's draws in its order: _rand_int(low, high) is
Generator.integers(low, high) for int64, i.e. numpy's random_bounded_uint64_fill(off=low,
rng=high-low-1) (Lemire on buffered 32-bit draws; rng 0 draws nothing); place_obj draws x
then y until the cell is empty and not the agent's.

Outputs: "obs" the direction (int64), "obs.image" the (view, view, 3) uint8 encoding of the
agent's view, "obs.mission" the mission's code (int64, the registration's strings).
minigrid's observation wrappers (kwargs "_obs", the registration's wrappers kwarg) change
them: O_FULL (FullyObsWrapper: the whole (width, height, 3) grid, the agent's cell (10, red,
dir)), O_ONEHOT (OneHotPartialObsWrapper: 20 bits per cell), O_GOAL (DirectionObsWrapper
type "slope": "obs.goal_direction", float64, after "obs"), O_IMG (ImgObsWrapper: the image
alone, output "obs"), O_RGB / O_POV (RGBImgObsWrapper / RGBImgPartialObsWrapper:
the image is the frame minigrid's get_full_render / get_pov_render draws at the wrapper's
tile size, "_rgb_tile"). The reward wrappers ActionBonus and PositionBonus ("_bonus": their
kinds and scales in the order applied) add 1 / sqrt(count) (times PositionBonus' scale) to
each step's reward, their counts (per env, never cleared: the wrappers keep them across
episodes) in acounts ((position, dir, action)) and pcounts (position); NoDeath ("_bonus"
too, B_NODEATH) undoes a death. ViewSizeWrapper: the encoded view's size ("_obs_view");
SymbolicObsWrapper O_SYM, FlatObsWrapper O_FLAT, DictObservationSpaceWrapper O_WORDS (their
mission parts: per-code tables "_flat", "_words"); StochasticActionWrapper ("_stochastic")
draws from the env's stream before the step; ReseedWrapper ("_reseed") copies a seed's fresh
PCG64 state into the env's at each reset (reseeds: each env's place in the cycle).
"""
from libc.stdio cimport snprintf
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset
from libc.stdlib cimport llabs
from libc.math cimport INFINITY, NAN, sqrt
from cpython.pycapsule cimport PyCapsule_GetPointer
cimport numpy as cnp
from numpy.random cimport bitgen_t

import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK, ST_ENGINE_ERROR, ERRMSG_LEN

cnp.import_array()

cdef extern from "numpy/random/distributions.h" nogil:
    void random_bounded_uint64_fill(bitgen_t* bitgen_state, uint64_t off, uint64_t rng,
                                    cnp.npy_intp cnt, bint use_masked, uint64_t* out)
    uint64_t random_interval(bitgen_t* bitgen_state, uint64_t max)
    double random_standard_uniform(bitgen_t* bitgen_state)

# object types (minigrid's OBJECT_TO_IDX; 0 here is an empty cell, None)
cdef enum:
    T_NONE = 0
    T_EMPTY = 1
    T_WALL = 2
    T_FLOOR = 3
    T_DOOR = 4
    T_KEY = 5
    T_BALL = 6
    T_BOX = 7
    T_GOAL = 8
    T_LAVA = 9

# colours (COLOR_TO_IDX); COLOR_NAMES (sorted) is blue, green, grey, purple, red, yellow
cdef enum:
    C_RED = 0
    C_GREEN = 1
    C_BLUE = 2
    C_PURPLE = 3
    C_YELLOW = 4
    C_GREY = 5

# generators (registration.KINDS)
cdef enum:
    K_EMPTY = 0
    K_DOORKEY = 1
    K_FOURROOMS = 2
    K_LAVAGAP = 3
    K_CROSSING = 4
    K_UNLOCK = 5
    K_MEMORY = 6
    K_KEYCORRIDOR = 7
    K_MULTIROOM = 8
    K_GOTOLOCAL = 9
    K_DISTSHIFT = 10
    K_REDBLUE = 11
    K_UNLOCKPICKUP = 12
    K_BLOCKEDUNLOCK = 13
    K_DYNOBS = 14
    K_GOTODOOR = 15
    K_GOTOOBJECT = 16
    K_FETCH = 17
    K_LOCKEDROOM = 18
    K_PUTNEAR = 19
    K_PLAYGROUND = 20
    K_OBSTRUCTED = 21

# agent row
cdef enum:
    A_X = 0
    A_Y = 1
    A_DIR = 2
    A_STEPS = 3
    A_MAX = 4
    A_MISSION = 5
    A_X0 = 6          # the generator's positions (Unlock's door, Memory's success/failure,
    A_W = 80          # RedBlueDoors' doors, Dynamic-Obstacles' balls: up to 29; BabyAI's I_*)

# observation wrappers (the registration's wrappers kwarg)
cdef enum:
    O_FULL = 1
    O_ONEHOT = 2
    O_GOAL = 4
    O_IMG = 8
    O_RGB = 16          # RGBImgObsWrapper: the full frame (highlight per env)
    O_POV = 32          # RGBImgPartialObsWrapper: the agent's point of view
    O_FLAT = 64         # FlatObsWrapper: one uint8 row, the image then the mission's table row
    O_WORDS = 128       # DictObservationSpaceWrapper: "obs.mission" the mission's word row
    O_SYM = 256         # SymbolicObsWrapper: (width, height, 3) int64, (x, y, type or -1)
    N_AGENT = 5         # a tile's agent: none, or 1 + its direction
    N_TYPES = 11        # len(OBJECT_TO_IDX), len(COLOR_TO_IDX), len(STATE_TO_IDX)
    N_COLORS = 6
    N_STATES = 3
    T_AGENT = 10
    B_ACTION = 1        # ActionBonus, PositionBonus, NoDeath (the reward wrappers)
    B_POSITION = 2
    B_NODEATH = 3
    MAX_BONUS = 8       # reward wrappers; as many StochasticActionWrappers

# per-env config row: max_steps, see_through_walls, then the generator's parameters
cdef enum:
    P_MAX = 0
    P_SEE = 1
    P_0 = 2
    P_W = 10

# numpy's pcg64_state (numpy/random/src/pcg64/pcg64.h): ReseedWrapper copies a seed's fresh
# state (the 32 bytes of pcg_state, has_uint32, uinteger) into an env's PCG64
ctypedef struct PCGState:
    void* pcg_state
    int has_uint32
    uint32_t uinteger

cdef enum:
    PCG_BYTES = 32

cdef int64_t MAX_TRIES = 100000000    # place_obj: minigrid loops forever; we fail instead

ctypedef struct Cell:
    uint8_t type
    uint8_t color
    uint8_t state
    uint8_t ctype
    uint8_t ccolor
    uint8_t cstate
    uint8_t tag        # 1: the object a mission names (KeyCorridor's: minigrid compares identity)
    uint8_t oid        # BabyAI: a movable object's id (0: none), preCarrying's identity

ctypedef struct World:
    Cell* g
    int64_t* a
    Cell* carry
    bitgen_t* rng
    int64_t w
    int64_t h
    char* err
    uint8_t* marks          # BabyAI: the positions the instruction's objects had (obj_poss)
    int64_t last_x, last_y  # rg_add_object's position

cdef Cell WALL_CELL = Cell(T_WALL, C_GREY, 0, 0, 0, 0, 0, 0)
cdef int64_t DX[4]
cdef int64_t DY[4]
DX[:] = [1, 0, -1, 0]
DY[:] = [0, 1, 0, -1]


cdef inline int64_t rand_int(bitgen_t* rng, int64_t low, int64_t high) noexcept nogil:
    """Generator.integers(low, high) (int64), low < high."""
    cdef uint64_t out = 0
    random_bounded_uint64_fill(rng, <uint64_t> low, <uint64_t> (high - low - 1), 1, False,
                               &out)
    return <int64_t> out


cdef inline Cell* at(World* wd, int64_t x, int64_t y) noexcept nogil:
    return wd.g + y * wd.w + x


cdef inline void put(World* wd, int64_t x, int64_t y, uint8_t t, uint8_t c,
                     uint8_t s) noexcept nogil:
    cdef Cell* p = at(wd, x, y)
    p.type = t
    p.color = c
    p.state = s
    p.ctype = 0
    p.ccolor = 0
    p.cstate = 0
    p.tag = 0
    p.oid = 0


cdef inline void clear(World* wd, int64_t x, int64_t y) noexcept nogil:
    put(wd, x, y, T_NONE, 0, 0)


cdef inline void horz_wall(World* wd, int64_t x, int64_t y, int64_t length,
                           uint8_t t=T_WALL, uint8_t c=C_GREY) noexcept nogil:
    """Grid.horz_wall (length < 0: to the right edge)."""
    cdef int64_t k
    if length < 0:
        length = wd.w - x
    for k in range(length):
        put(wd, x + k, y, t, c, 0)


cdef inline void vert_wall(World* wd, int64_t x, int64_t y, int64_t length,
                           uint8_t t=T_WALL, uint8_t c=C_GREY) noexcept nogil:
    cdef int64_t k
    if length < 0:
        length = wd.h - y
    for k in range(length):
        put(wd, x, y + k, t, c, 0)


cdef inline void wall_rect(World* wd, int64_t x, int64_t y, int64_t w, int64_t h) noexcept nogil:
    horz_wall(wd, x, y, w)
    horz_wall(wd, x, y + h - 1, w)
    vert_wall(wd, x, y, h)
    vert_wall(wd, x + w - 1, y, h)


cdef inline int place_obj(World* wd, uint8_t t, uint8_t c, uint8_t s, int64_t tx, int64_t ty,
                          int64_t sx, int64_t sy, int64_t* px, int64_t* py,
                          bint reject_next_to=False, int64_t max_tries=-1) noexcept nogil:
    """MiniGridEnv.place_obj (sx < 0: the grid's size; max_tries < 0: minigrid's inf, here
    MAX_TRIES; reject_next_to: RoomGrid's reject_fn): 0, or 1 when it gives up."""
    cdef int64_t x, y, hx, hy, tries = 0
    if max_tries < 0:
        max_tries = MAX_TRIES
    if tx < 0:
        tx = 0
    if ty < 0:
        ty = 0
    if sx < 0:
        sx = wd.w
        sy = wd.h
    hx = tx + sx if tx + sx < wd.w else wd.w
    hy = ty + sy if ty + sy < wd.h else wd.h
    while True:
        if tries > max_tries:
            snprintf(wd.err, ERRMSG_LEN, "rejection sampling failed in place_obj")
            return 1
        tries += 1
        x = rand_int(wd.rng, tx, hx)
        y = rand_int(wd.rng, ty, hy)
        if at(wd, x, y).type != T_NONE:
            continue
        if x == wd.a[A_X] and y == wd.a[A_Y]:
            continue
        if reject_next_to and llabs(wd.a[A_X] - x) + llabs(wd.a[A_Y] - y) < 2:
            continue
        break
    if t != T_NONE:
        put(wd, x, y, t, c, s)
    px[0] = x
    py[0] = y
    return 0


cdef inline int place_agent(World* wd, int64_t tx, int64_t ty, int64_t sx, int64_t sy,
                            bint rand_dir, int64_t max_tries=-1) noexcept nogil:
    cdef int64_t x = 0, y = 0
    wd.a[A_X] = -1
    wd.a[A_Y] = -1
    if place_obj(wd, T_NONE, 0, 0, tx, ty, sx, sy, &x, &y, False, max_tries):
        return 1
    wd.a[A_X] = x
    wd.a[A_Y] = y
    if rand_dir:
        wd.a[A_DIR] = rand_int(wd.rng, 0, 4)
    return 0


cdef inline bint see_behind(const Cell* c) noexcept nogil:
    if c.type == T_WALL:
        return False
    if c.type == T_DOOR:
        return c.state == 0
    return True


# ---------------------------------------------------------------------------- generators
cdef int gen_empty(World* wd, const int64_t* p) noexcept nogil:
    """EmptyEnv: p = start x, start y (-1: place_agent), start dir."""
    wall_rect(wd, 0, 0, wd.w, wd.h)
    put(wd, wd.w - 2, wd.h - 2, T_GOAL, C_GREEN, 0)
    if p[0] >= 0:
        wd.a[A_X] = p[0]
        wd.a[A_Y] = p[1]
        wd.a[A_DIR] = p[2]
        return 0
    return place_agent(wd, 0, 0, -1, -1, True)


cdef int gen_doorkey(World* wd, const int64_t* p) noexcept nogil:
    cdef int64_t split, door, x = 0, y = 0
    wall_rect(wd, 0, 0, wd.w, wd.h)
    put(wd, wd.w - 2, wd.h - 2, T_GOAL, C_GREEN, 0)
    split = rand_int(wd.rng, 2, wd.w - 2)
    vert_wall(wd, split, 0, -1)
    if place_agent(wd, 0, 0, split, wd.h, True):
        return 1
    door = rand_int(wd.rng, 1, wd.h - 2)
    put(wd, split, door, T_DOOR, C_YELLOW, 2)
    return place_obj(wd, T_KEY, C_YELLOW, 0, 0, 0, split, wd.h, &x, &y)


cdef int gen_fourrooms(World* wd, const int64_t* p) noexcept nogil:
    """FourRoomsEnv: p = agent x, y (-1: place_agent), goal x, y (-1: place_obj)."""
    cdef int64_t i, j, xl, yt, xr, yb, rw = wd.w // 2, rh = wd.h // 2, x = 0, y = 0
    horz_wall(wd, 0, 0, -1)
    horz_wall(wd, 0, wd.h - 1, -1)
    vert_wall(wd, 0, 0, -1)
    vert_wall(wd, wd.w - 1, 0, -1)
    for j in range(2):
        for i in range(2):
            xl = i * rw
            yt = j * rh
            xr = xl + rw
            yb = yt + rh
            if i + 1 < 2:
                vert_wall(wd, xr, yt, rh)
                clear(wd, xr, rand_int(wd.rng, yt + 1, yb))
            if j + 1 < 2:
                horz_wall(wd, xl, yb, rw)
                clear(wd, rand_int(wd.rng, xl + 1, xr), yb)
    if p[0] >= 0:
        wd.a[A_X] = p[0]
        wd.a[A_Y] = p[1]
        clear(wd, p[0], p[1])
        wd.a[A_DIR] = rand_int(wd.rng, 0, 4)
    elif place_agent(wd, 0, 0, -1, -1, True):
        return 1
    if p[2] >= 0:
        put(wd, p[2], p[3], T_GOAL, C_GREEN, 0)
        return 0
    return place_obj(wd, T_GOAL, C_GREEN, 0, 0, 0, -1, -1, &x, &y)


cdef int gen_lavagap(World* wd, const int64_t* p) noexcept nogil:
    """LavaGapEnv (lava obstacles): the gap's column and row."""
    cdef int64_t gx, gy
    wall_rect(wd, 0, 0, wd.w, wd.h)
    wd.a[A_X] = 1
    wd.a[A_Y] = 1
    wd.a[A_DIR] = 0
    put(wd, wd.w - 2, wd.h - 2, T_GOAL, C_GREEN, 0)
    gx = rand_int(wd.rng, 2, wd.w - 2)
    gy = rand_int(wd.rng, 1, wd.h - 1)
    vert_wall(wd, gx, 1, wd.h - 2, T_LAVA, C_RED)
    clear(wd, gx, gy)
    return 0


cdef inline void shuffle(bitgen_t* rng, int64_t* x, int64_t n) noexcept nogil:
    """Generator.shuffle of a list: Fisher-Yates from the end, random_interval(i)."""
    cdef int64_t i, j, t
    for i in range(n - 1, 0, -1):
        j = <int64_t> random_interval(rng, <uint64_t> i)
        t = x[i]
        x[i] = x[j]
        x[j] = t


cdef inline void sort_small(int64_t* x, int64_t n) noexcept nogil:
    cdef int64_t i, j, t
    for i in range(1, n):
        t = x[i]
        j = i - 1
        while j >= 0 and x[j] > t:
            x[j + 1] = x[j]
            j -= 1
        x[j + 1] = t


cdef int gen_crossing(World* wd, const int64_t* p) noexcept nogil:
    """CrossingEnv: p = num_crossings, obstacle type (T_LAVA red / T_WALL grey). Rivers are
    coded as position (vertical) or -position (horizontal) in the shuffled list."""
    cdef int64_t rivers[512]
    cdef int64_t path[512]
    cdef int64_t lv[260]
    cdef int64_t lh[260]
    cdef int64_t n = 0, k, nv = 0, nh = 0, i, j, room_i = 0, room_j = 0
    cdef uint8_t t = <uint8_t> p[1]
    cdef uint8_t c = C_RED if t == T_LAVA else C_GREY
    wall_rect(wd, 0, 0, wd.w, wd.h)
    wd.a[A_X] = 1
    wd.a[A_Y] = 1
    wd.a[A_DIR] = 0
    put(wd, wd.w - 2, wd.h - 2, T_GOAL, C_GREEN, 0)
    for i in range(2, wd.h - 2, 2):
        rivers[n] = i
        n += 1
    for j in range(2, wd.w - 2, 2):
        rivers[n] = -j
        n += 1
    shuffle(wd.rng, rivers, n)
    if n > p[0]:
        n = p[0]
    lv[0] = 0
    lh[0] = 0
    for k in range(n):
        if rivers[k] > 0:
            nv += 1
            lv[nv] = rivers[k]
        else:
            nh += 1
            lh[nh] = -rivers[k]
    sort_small(lv + 1, nv)
    sort_small(lh + 1, nh)
    lv[nv + 1] = wd.h - 1
    lh[nh + 1] = wd.w - 1
    for i in range(1, wd.w - 1):
        for k in range(nh):
            put(wd, i, lh[1 + k], t, c, 0)
    for k in range(nv):
        for j in range(1, wd.h - 1):
            put(wd, lv[1 + k], j, t, c, 0)
    # path: h (1) once per vertical river, v (0) once per horizontal one
    for k in range(nv + nh):
        path[k] = 1 if k < nv else 0
    shuffle(wd.rng, path, nv + nh)
    for k in range(nv + nh):
        if path[k]:
            i = lv[room_i + 1]
            j = lh[room_j] + 1 + rand_int(wd.rng, 0, lh[room_j + 1] - lh[room_j] - 1)
            room_i += 1
        else:
            i = lv[room_i] + 1 + rand_int(wd.rng, 0, lv[room_i + 1] - lv[room_i] - 1)
            j = lh[room_j + 1]
            room_j += 1
        clear(wd, i, j)
    return 0


cdef int gen_memory(World* wd, const int64_t* p) noexcept nogil:
    """MemoryEnv: p = random_length. A_X0.. = success x, y, failure x, y."""
    cdef int64_t w = wd.w, h = wd.h, up = h // 2 - 2, lo = h // 2 + 2, end, i, j
    cdef int64_t start, other
    cdef uint8_t o0, o1
    horz_wall(wd, 0, 0, -1)
    horz_wall(wd, 0, h - 1, -1)
    vert_wall(wd, 0, 0, -1)
    vert_wall(wd, w - 1, 0, -1)
    end = rand_int(wd.rng, 4, w - 2) if p[0] else w - 3
    for i in range(1, 5):
        put(wd, i, up, T_WALL, C_GREY, 0)
        put(wd, i, lo, T_WALL, C_GREY, 0)
    put(wd, 4, up + 1, T_WALL, C_GREY, 0)
    put(wd, 4, lo - 1, T_WALL, C_GREY, 0)
    for i in range(5, end):
        put(wd, i, up + 1, T_WALL, C_GREY, 0)
        put(wd, i, lo - 1, T_WALL, C_GREY, 0)
    for j in range(h):
        if j != h // 2:
            put(wd, end, j, T_WALL, C_GREY, 0)
        put(wd, end + 2, j, T_WALL, C_GREY, 0)
    wd.a[A_X] = rand_int(wd.rng, 1, end + 1)
    wd.a[A_Y] = h // 2
    wd.a[A_DIR] = 0
    start = rand_int(wd.rng, 0, 2)            # [Key, Ball]
    put(wd, 1, h // 2 - 1, T_KEY if start == 0 else T_BALL, C_GREEN, 0)
    other = rand_int(wd.rng, 0, 2)            # [[Ball, Key], [Key, Ball]]
    o0 = T_BALL if other == 0 else T_KEY
    o1 = T_KEY if other == 0 else T_BALL
    put(wd, end + 1, h // 2 - 2, o0, C_GREEN, 0)
    put(wd, end + 1, h // 2 + 2, o1, C_GREEN, 0)
    if (start == 0) == (o0 == T_KEY):
        wd.a[A_X0] = end + 1
        wd.a[A_X0 + 1] = h // 2 - 1
        wd.a[A_X0 + 2] = end + 1
        wd.a[A_X0 + 3] = h // 2 + 1
    else:
        wd.a[A_X0] = end + 1
        wd.a[A_X0 + 1] = h // 2 + 1
        wd.a[A_X0 + 2] = end + 1
        wd.a[A_X0 + 3] = h // 2 - 1
    return 0


# ---------------------------------------------------------------------------- RoomGrid
cdef enum:
    MAX_ROOMS = 16

ctypedef struct Room:
    int64_t tx, ty, sx, sy
    int64_t dpx[4]          # door_pos (-1: None)
    int64_t dpy[4]
    int64_t nb[4]           # neighbour room index (-1: None)
    uint8_t doors[4]        # a door or a removed wall there (minigrid: Door or True)
    uint8_t locked

ctypedef struct RoomGrid:
    Room r[MAX_ROOMS]
    int64_t rows, cols, rs

# COLOR_NAMES (sorted) -> COLOR_TO_IDX
cdef uint8_t NAME_COLOR[6]
NAME_COLOR[:] = [C_BLUE, C_GREEN, C_GREY, C_PURPLE, C_RED, C_YELLOW]


cdef inline uint8_t rand_color(World* wd) noexcept nogil:
    return NAME_COLOR[rand_int(wd.rng, 0, 6)]


cdef void rg_gen(World* wd, RoomGrid* rg) noexcept nogil:
    """RoomGrid._gen_grid: the rooms' walls, their door positions (drawn in minigrid's
    order), the agent at the middle room's centre facing right."""
    cdef int64_t i, j, k, s = rg.rs - 1
    cdef Room* m
    for j in range(rg.rows):
        for i in range(rg.cols):
            m = &rg.r[j * rg.cols + i]
            m.tx = i * s
            m.ty = j * s
            m.sx = rg.rs
            m.sy = rg.rs
            m.locked = 0
            for k in range(4):
                m.dpx[k] = -1
                m.dpy[k] = -1
                m.nb[k] = -1
                m.doors[k] = 0
            wall_rect(wd, m.tx, m.ty, m.sx, m.sy)
    for j in range(rg.rows):
        for i in range(rg.cols):
            m = &rg.r[j * rg.cols + i]
            if i < rg.cols - 1:
                m.nb[0] = j * rg.cols + i + 1
                m.dpx[0] = m.tx + m.sx - 1
                m.dpy[0] = rand_int(wd.rng, m.ty + 1, m.ty + m.sy - 1)
            if j < rg.rows - 1:
                m.nb[1] = (j + 1) * rg.cols + i
                m.dpx[1] = rand_int(wd.rng, m.tx + 1, m.tx + m.sx - 1)
                m.dpy[1] = m.ty + m.sy - 1
            if i > 0:
                m.nb[2] = j * rg.cols + i - 1
                m.dpx[2] = rg.r[m.nb[2]].dpx[0]
                m.dpy[2] = rg.r[m.nb[2]].dpy[0]
            if j > 0:
                m.nb[3] = (j - 1) * rg.cols + i
                m.dpx[3] = rg.r[m.nb[3]].dpx[1]
                m.dpy[3] = rg.r[m.nb[3]].dpy[1]
    wd.a[A_X] = (rg.cols // 2) * s + rg.rs // 2
    wd.a[A_Y] = (rg.rows // 2) * s + rg.rs // 2
    wd.a[A_DIR] = 0


cdef int64_t rg_add_door(World* wd, RoomGrid* rg, int64_t i, int64_t j, int64_t k, int c,
                         int locked) noexcept nogil:
    """RoomGrid.add_door (k, c, locked < 0: drawn): the door's colour."""
    cdef Room* m = &rg.r[j * rg.cols + i]
    if k < 0:
        while True:
            k = rand_int(wd.rng, 0, 4)
            if m.nb[k] >= 0 and not m.doors[k]:
                break
    if c < 0:
        c = rand_color(wd)
    if locked < 0:
        locked = rand_int(wd.rng, 0, 2) == 0
    m.locked = locked
    put(wd, m.dpx[k], m.dpy[k], T_DOOR, <uint8_t> c, 2 if locked else 1)
    m.doors[k] = 1
    rg.r[m.nb[k]].doors[(k + 2) % 4] = 1
    return c


cdef int rg_add_object(World* wd, RoomGrid* rg, int64_t i, int64_t j, int t, int c,
                       uint8_t tag=0) noexcept nogil:
    """RoomGrid.add_object (t, c < 0: drawn): place_in_room, reject_next_to, 1000 tries."""
    cdef Room* m = &rg.r[j * rg.cols + i]
    cdef int64_t x = 0, y = 0
    wd.last_x = -1
    if t < 0:
        t = T_KEY + rand_int(wd.rng, 0, 3)        # ["key", "ball", "box"]
    if c < 0:
        c = rand_color(wd)
    if place_obj(wd, <uint8_t> t, <uint8_t> c, 0, m.tx, m.ty, m.sx, m.sy, &x, &y, True, 1000):
        return 1
    at(wd, x, y).tag = tag
    wd.last_x = x
    wd.last_y = y
    return 0


cdef void rg_remove_wall(World* wd, RoomGrid* rg, int64_t i, int64_t j, int64_t k) noexcept nogil:
    cdef Room* m = &rg.r[j * rg.cols + i]
    cdef int64_t q
    if k == 0:
        for q in range(1, m.sy - 1):
            clear(wd, m.tx + m.sx - 1, m.ty + q)
    elif k == 1:
        for q in range(1, m.sx - 1):
            clear(wd, m.tx + q, m.ty + m.sy - 1)
    elif k == 2:
        for q in range(1, m.sy - 1):
            clear(wd, m.tx, m.ty + q)
    else:
        for q in range(1, m.sx - 1):
            clear(wd, m.tx + q, m.ty)
    m.doors[k] = 1
    rg.r[m.nb[k]].doors[(k + 2) % 4] = 1


cdef int rg_place_agent(World* wd, RoomGrid* rg, int64_t i, int64_t j) noexcept nogil:
    """RoomGrid.place_agent(i, j): until the cell ahead is empty or a wall. minigrid loops
    forever where every free cell is boxed in by objects (LevelGen's crowded small rooms:
    SynthS5R2); here 1000000 placements, then a failure (the level starts over)."""
    cdef Room* m = &rg.r[j * rg.cols + i]
    cdef const Cell* f
    cdef int64_t n
    for n in range(1000000):
        if place_agent(wd, m.tx, m.ty, m.sx, m.sy, True, 1000):
            return 1
        f = at(wd, wd.a[A_X] + DX[wd.a[A_DIR]], wd.a[A_Y] + DY[wd.a[A_DIR]])
        if f.type == T_NONE or f.type == T_WALL:
            return 0
    return 1


cdef int rg_connect_all(World* wd, RoomGrid* rg) noexcept nogil:
    """RoomGrid.connect_all(COLOR_NAMES, 5000)."""
    cdef int64_t n = rg.rows * rg.cols, itrs = 0, i, j, k, q, top, count, cur
    cdef int64_t stack[4 * MAX_ROOMS + 1]
    cdef uint8_t seen[MAX_ROOMS]
    cdef Room* m
    cdef int64_t s = rg.rs - 1
    cdef int64_t start = (wd.a[A_Y] // s) * rg.cols + wd.a[A_X] // s
    while True:
        if itrs > 5000:
            snprintf(wd.err, ERRMSG_LEN, "connect_all failed")
            return 1
        itrs += 1
        for q in range(n):
            seen[q] = 0
        count = 0
        top = 1
        stack[0] = start
        while top > 0:
            top -= 1
            cur = stack[top]
            if seen[cur]:
                continue
            seen[cur] = 1
            count += 1
            for k in range(4):
                if rg.r[cur].doors[k] and not seen[rg.r[cur].nb[k]]:
                    stack[top] = rg.r[cur].nb[k]
                    top += 1
        if count == n:
            return 0
        i = rand_int(wd.rng, 0, rg.cols)
        j = rand_int(wd.rng, 0, rg.rows)
        k = rand_int(wd.rng, 0, 4)
        m = &rg.r[j * rg.cols + i]
        if m.dpx[k] < 0 or m.doors[k]:
            continue
        if m.locked or rg.r[m.nb[k]].locked:
            continue
        rg_add_door(wd, rg, i, j, k, rand_color(wd), 0)


cdef int gen_unlock(World* wd, const int64_t* p) noexcept nogil:
    """UnlockEnv: RoomGrid 1 x 2 of 6; A_X0, A_X0 + 1: the door's position."""
    cdef RoomGrid rg
    cdef int64_t c
    rg.rows = 1
    rg.cols = 2
    rg.rs = 6
    rg_gen(wd, &rg)
    c = rg_add_door(wd, &rg, 0, 0, 0, -1, 1)
    wd.a[A_X0] = rg.r[0].dpx[0]
    wd.a[A_X0 + 1] = rg.r[0].dpy[0]
    if rg_add_object(wd, &rg, 0, 0, T_KEY, <int> c):
        return 1
    return rg_place_agent(wd, &rg, 0, 0)


cdef int gen_keycorridor(World* wd, const int64_t* p) noexcept nogil:
    """KeyCorridorEnv: p = num_rows, room_size, the object's type; the mission code is
    (type - T_KEY) * 6 + colour."""
    cdef RoomGrid rg
    cdef int64_t j, room, c, oc
    cdef Cell* o
    rg.rows = p[0]
    rg.cols = 3
    rg.rs = p[1]
    rg_gen(wd, &rg)
    for j in range(1, rg.rows):
        rg_remove_wall(wd, &rg, 1, j, 3)
    room = rand_int(wd.rng, 0, rg.rows)
    c = rg_add_door(wd, &rg, 2, room, 2, -1, 1)
    oc = rand_color(wd)
    if rg_add_object(wd, &rg, 2, room, <int> p[2], <int> oc, 1):
        return 1
    wd.a[A_MISSION] = (p[2] - T_KEY) * 6 + oc
    if rg_add_object(wd, &rg, 0, rand_int(wd.rng, 0, rg.rows), T_KEY, <int> c):
        return 1
    if rg_place_agent(wd, &rg, 1, rg.rows // 2):
        return 1
    return rg_connect_all(wd, &rg)


# ---------------------------------------------------------------------------- MultiRoom
cdef enum:
    MAX_MR = 32
    MR_OUTER_TRIES = 1000000

ctypedef struct MRoom:
    int64_t tx, ty, sx, sy, ex, ey

ctypedef struct MRList:
    MRoom r[MAX_MR]
    int64_t n


cdef bint mr_place_room(World* wd, int64_t num_left, MRList* lst, int64_t min_sz,
                        int64_t max_sz, int64_t entry_wall, int64_t ex,
                        int64_t ey) noexcept nogil:
    """MultiRoomEnv._placeRoom, its draws in order (recursion depth <= numRooms)."""
    cdef int64_t sx, sy, tx, ty, k, q, x, y, exit_wall, nx = 0, ny = 0
    cdef int64_t walls[3]
    cdef MRoom* m
    sx = rand_int(wd.rng, min_sz, max_sz + 1)
    sy = rand_int(wd.rng, min_sz, max_sz + 1)
    if lst.n == 0:
        tx = ex
        ty = ey
    elif entry_wall == 0:
        tx = ex - sx + 1
        ty = rand_int(wd.rng, ey - sy + 2, ey)
    elif entry_wall == 1:
        tx = rand_int(wd.rng, ex - sx + 2, ex)
        ty = ey - sy + 1
    elif entry_wall == 2:
        tx = ex
        ty = rand_int(wd.rng, ey - sy + 2, ey)
    else:
        tx = rand_int(wd.rng, ex - sx + 2, ex)
        ty = ey
    if tx < 0 or ty < 0:
        return False
    if tx + sx > wd.w or ty + sy >= wd.h:
        return False
    for k in range(lst.n - 1):
        m = &lst.r[k]
        if not (tx + sx < m.tx or m.tx + m.sx <= tx or ty + sy < m.ty or m.ty + m.sy <= ty):
            return False
    if lst.n >= MAX_MR:                 # the registration bounds numRooms well below
        return False
    m = &lst.r[lst.n]
    m.tx = tx
    m.ty = ty
    m.sx = sx
    m.sy = sy
    m.ex = ex
    m.ey = ey
    lst.n += 1
    if num_left == 1:
        return True
    for k in range(8):
        q = 0
        for x in range(4):
            if x != entry_wall:
                walls[q] = x
                q += 1
        exit_wall = walls[rand_int(wd.rng, 0, 3)]
        if exit_wall == 0:
            nx = tx + sx - 1
            ny = ty + rand_int(wd.rng, 1, sy - 1)
        elif exit_wall == 1:
            nx = tx + rand_int(wd.rng, 1, sx - 1)
            ny = ty + sy - 1
        elif exit_wall == 2:
            nx = tx
            ny = ty + rand_int(wd.rng, 1, sy - 1)
        else:
            nx = tx + rand_int(wd.rng, 1, sx - 1)
            ny = ty
        if mr_place_room(wd, num_left - 1, lst, min_sz, max_sz, (exit_wall + 2) % 4, nx, ny):
            break
    return True


cdef int gen_multiroom(World* wd, const int64_t* p) noexcept nogil:
    """MultiRoomEnv: p = minNumRooms, maxNumRooms, maxRoomSize."""
    cdef MRList best, cur
    cdef int64_t num, tries = 0, idx, i, j, prev = -1, c, q, x = 0, y = 0
    cdef MRoom* m
    cdef uint8_t avail[6]
    best.n = 0
    num = rand_int(wd.rng, p[0], p[1] + 1)
    while best.n < num:
        tries += 1
        if tries > MR_OUTER_TRIES:
            snprintf(wd.err, ERRMSG_LEN, "MultiRoom: no layout of %lld rooms found",
                     <long long> num)
            return 1
        cur.n = 0
        i = rand_int(wd.rng, 0, wd.w - 2)
        j = rand_int(wd.rng, 0, wd.w - 2)
        mr_place_room(wd, num, &cur, 4, p[2], 2, i, j)
        if cur.n > best.n:
            best = cur
    for idx in range(best.n):
        m = &best.r[idx]
        for i in range(m.sx):
            put(wd, m.tx + i, m.ty, T_WALL, C_GREY, 0)
            put(wd, m.tx + i, m.ty + m.sy - 1, T_WALL, C_GREY, 0)
        for j in range(m.sy):
            put(wd, m.tx, m.ty + j, T_WALL, C_GREY, 0)
            put(wd, m.tx + m.sx - 1, m.ty + j, T_WALL, C_GREY, 0)
        if idx > 0:
            # sorted(set(COLOR_NAMES) - {prev}): the names in order, less the previous
            q = 0
            for i in range(6):
                if NAME_COLOR[i] != prev:
                    avail[q] = NAME_COLOR[i]
                    q += 1
            c = avail[rand_int(wd.rng, 0, q)]
            put(wd, m.ex, m.ey, T_DOOR, <uint8_t> c, 1)
            prev = c
    m = &best.r[0]
    if place_agent(wd, m.tx, m.ty, m.sx, m.sy, True):
        return 1
    m = &best.r[best.n - 1]
    return place_obj(wd, T_GOAL, C_GREEN, 0, m.tx, m.ty, m.sx, m.sy, &x, &y)


# ---------------------------------------------------------------------------- BabyAI
cdef enum:
    MAX_LOCAL = 32 * 32
    GEN_RESTARTS = 1000000


cdef bint objs_reachable(World* wd) noexcept nogil:
    """RoomGridLevel.check_objs_reachable: every object (not a wall) is reached from the
    agent through empty cells and doors (wd.w * wd.h <= MAX_LOCAL)."""
    cdef uint8_t seen[MAX_LOCAL]
    cdef int64_t stack[4 * MAX_LOCAL + 4]
    cdef int64_t top = 0, q, x, y
    cdef const Cell* c
    memset(seen, 0, MAX_LOCAL)
    stack[0] = wd.a[A_Y] * wd.w + wd.a[A_X]
    top = 1
    while top > 0:
        top -= 1
        q = stack[top]
        if q < 0:
            continue
        if seen[q]:
            continue
        seen[q] = 1
        c = wd.g + q
        if c.type != T_NONE and c.type != T_DOOR:
            continue
        x = q % wd.w
        y = q // wd.w
        stack[top] = q + 1 if x + 1 < wd.w else -1
        stack[top + 1] = q - 1 if x > 0 else -1
        stack[top + 2] = q + wd.w if y + 1 < wd.h else -1
        stack[top + 3] = q - wd.w if y > 0 else -1
        top += 4
    for q in range(wd.w * wd.h):
        if wd.g[q].type != T_NONE and wd.g[q].type != T_WALL and not seen[q]:
            return False
    return True


cdef void mark_targets(World* wd) noexcept nogil:
    """Instr.update_objs_poss: the positions of the instruction's objects still on the grid
    (tagged at reset; a carried one is not on it)."""
    cdef int64_t q
    for q in range(wd.w * wd.h):
        wd.marks[q] = wd.g[q].tag


# BabyAI levels (K_GOTOLOCAL). Config p = variant (V_*), num_rows, num_cols, room_size, n (the
# distractors, objects or doors; OpenTwoDoors: the first colour, -1 drawn), flag
# (doors_open, GoToRedBallGrey's grey, distractors, start_carrying), sel (GoToObj's flag;
# OpenDoor's select_by: -1 drawn, 0 colour, 1 loc; OpenTwoDoors: the second colour),
# strict (the levels' debug / strict).
cdef enum:
    V_GOTO = 0          # GoToLocal, GoTo, GoToOpen, GoToObj, GoToObjMaze*
    V_REDBALL = 1       # GoToRedBall, GoToRedBallNoDists, GoToRedBallGrey
    V_REDBLUE = 2       # GoToRedBlueBall
    V_IMPUNLOCK = 3     # GoToImpUnlock
    V_DOOR = 4          # GoToDoor
    V_OBJDOOR = 5       # GoToObjDoor
    V_OPEN = 6
    V_OPENRED = 7
    V_OPENDOOR = 8
    V_OPENTWO = 9
    V_OPENORDER = 10
    V_PICKUP = 11
    V_UNBLOCKPICKUP = 12
    V_PICKUPDIST = 13
    V_PICKUPABOVE = 14
    V_UNLOCK = 15
    V_UNLOCKLOCAL = 16
    V_KEYINBOX = 17
    V_UNLOCKPICKUP = 18
    V_BLOCKEDUNLOCKPICKUP = 19
    V_UNLOCKTOUNLOCK = 20
    V_PUTNEXTLOCAL = 21
    V_PUTNEXT = 22
    V_ACTIONOBJDOOR = 23
    V_FINDOBJ = 24
    V_KEYCORRIDOR = 25      # BabyAI's KeyCorridor (n: the object's type)
    V_ONEROOM = 26
    V_MOVETWO = 27          # MoveTwoAcross
    V_PICKUPLOC = 28        # PickupLoc (LevelGen: one pickup action, a random description)
    V_LEVELGEN = 29         # LevelGen (GoToSeq, Synth*, *Boss*): p[5] locked_room_prob (the
    #                         double's bits), p[6] LG_* flags, p[7] the kinds (lg_kinds)
    LG_LOCATIONS = 1
    LG_UNBLOCKING = 2
    LG_IMPLICIT = 4
    MAX_OBJS = 96

# the instruction (agent row): the root (R_*), Before/After/And's a_done and b_done, the
# carried object's cur_pos, PutNext's object to carry at reset, up to 4 action leaves
# (L_*, desc move, desc fixed, strict, preCarrying: -1 None, else the object's id) and 8
# object descriptions (type: 0 any; colour, loc: -1 any; the number of objects matched):
# description d tags its objects with bit d (Cell.tag) and marks their positions (marks).
# A Before/After root's parts (I_SUB: bit 0 instr_a, bit 1 instr_b an And of two leaves,
# else one leaf; the leaves in order, a's then b's) and those Ands' a_done, b_done (I_AND);
# the mission's second word (I_MIS2: LevelGen's sequences of Ands)
cdef enum:
    R_ONE = 0
    R_BEFORE = 1
    R_AFTER = 2
    R_AND = 3
    L_GOTO = 0
    L_OPEN = 1
    L_PICKUP = 2
    L_PUTNEXT = 3
    I_ROOT = A_X0
    I_ADONE = A_X0 + 1
    I_BDONE = A_X0 + 2
    I_CX = A_X0 + 3
    I_CY = A_X0 + 4
    I_START = A_X0 + 5      # 1: PutNext's start_carrying, its object at (I_SX, I_SY)
    I_SX = A_X0 + 6
    I_SY = A_X0 + 7
    I_NAVS = A_X0 + 8
    I_NDESC = A_X0 + 9
    I_LEAF = A_X0 + 10      # 4 x 5
    I_DESC = A_X0 + 30      # 8 x 4
    I_NLEAF = A_X0 + 62
    I_SUB = A_X0 + 63
    I_AND = A_X0 + 64       # 2 x 2
    I_MIS2 = A_X0 + 68
    I_END = A_X0 + 69
    LEAF_W = 5
    DESC_W = 4
    MISSION_DESC = 350      # the mission code's radixes (registration._mission)
    MISSION_LEAF = 4 * 350 * 350


ctypedef struct Objs:
    int64_t n
    int64_t t[MAX_OBJS]
    int64_t c[MAX_OBJS]
    int64_t x[MAX_OBJS]
    int64_t y[MAX_OBJS]


cdef inline int objs_add(World* wd, Objs* o, int64_t t, int64_t c, int64_t x,
                         int64_t y) noexcept nogil:
    if o.n >= MAX_OBJS:
        snprintf(wd.err, ERRMSG_LEN, "BabyAI: more than %d objects", <int> MAX_OBJS)
        return 1
    o.t[o.n] = t
    o.c[o.n] = c
    o.x[o.n] = x
    o.y[o.n] = y
    o.n += 1
    return 0


cdef inline int bb_add_object(World* wd, RoomGrid* rg, Objs* room_objs, int64_t i, int64_t j,
                              int t, int c) noexcept nogil:
    """RoomGrid.add_object, the object kept in room_objs (the rooms' objs): 0, 1 when the
    placement failed (the level starts over), 2 on an engine error."""
    if rg_add_object(wd, rg, i, j, t, c):
        return 1
    if objs_add(wd, room_objs, at(wd, wd.last_x, wd.last_y).type,
                at(wd, wd.last_x, wd.last_y).color, wd.last_x, wd.last_y):
        return 2
    return 0


cdef int rg_add_distractors(World* wd, RoomGrid* rg, Objs* all_objs, Objs* dists,
                            int64_t i, int64_t j, int64_t num, bint unique) noexcept nogil:
    """RoomGrid.add_distractors (i, j < 0: a random room per object): 0, 1 when a placement
    failed (minigrid's RecursionError: the level starts over), 2 on an engine error."""
    cdef int64_t c, t, ri, rj, q
    cdef bint dup
    dists.n = 0
    while dists.n < num:
        c = rand_color(wd)
        t = T_KEY + rand_int(wd.rng, 0, 3)
        if unique:
            dup = False
            for q in range(all_objs.n):
                if all_objs.t[q] == t and all_objs.c[q] == c:
                    dup = True
            if dup:
                continue
        ri = i if i >= 0 else rand_int(wd.rng, 0, rg.cols)
        rj = j if j >= 0 else rand_int(wd.rng, 0, rg.rows)
        if rg_add_object(wd, rg, ri, rj, <int> t, <int> c):
            return 1
        if objs_add(wd, all_objs, t, c, wd.last_x, wd.last_y):
            return 2
        if objs_add(wd, dists, t, c, wd.last_x, wd.last_y):
            return 2
    return 0


cdef inline int rg_random_agent(World* wd, RoomGrid* rg) noexcept nogil:
    """RoomGrid.place_agent() (a random room)."""
    cdef int64_t i = rand_int(wd.rng, 0, rg.cols)
    return rg_place_agent(wd, rg, i, rand_int(wd.rng, 0, rg.rows))


cdef int rg_connect_excluding(World* wd, RoomGrid* rg, int64_t excl) noexcept nogil:
    """RoomGrid.connect_all(door_colors=COLOR_NAMES without colour excl) (excl < 0: all)."""
    cdef int64_t n = rg.rows * rg.cols, itrs = 0, i, j, k, q, top, count, cur, c
    cdef int64_t stack[4 * MAX_ROOMS + 1]
    cdef uint8_t seen[MAX_ROOMS]
    cdef uint8_t cols[6]
    cdef int64_t nc = 0
    cdef Room* m
    cdef int64_t s = rg.rs - 1
    cdef int64_t start = (wd.a[A_Y] // s) * rg.cols + wd.a[A_X] // s
    for q in range(6):
        if NAME_COLOR[q] != excl:
            cols[nc] = NAME_COLOR[q]
            nc += 1
    while True:
        if itrs > 5000:
            return 1
        itrs += 1
        for q in range(n):
            seen[q] = 0
        count = 0
        top = 1
        stack[0] = start
        while top > 0:
            top -= 1
            cur = stack[top]
            if seen[cur]:
                continue
            seen[cur] = 1
            count += 1
            for k in range(4):
                if rg.r[cur].doors[k] and not seen[rg.r[cur].nb[k]]:
                    stack[top] = rg.r[cur].nb[k]
                    top += 1
        if count == n:
            return 0
        i = rand_int(wd.rng, 0, rg.cols)
        j = rand_int(wd.rng, 0, rg.rows)
        k = rand_int(wd.rng, 0, 4)
        m = &rg.r[j * rg.cols + i]
        if m.dpx[k] < 0 or m.doors[k]:
            continue
        if m.locked or rg.r[m.nb[k]].locked:
            continue
        c = cols[rand_int(wd.rng, 0, nc)]
        rg_add_door(wd, rg, i, j, k, <int> c, 0)


cdef void rand_colors(World* wd, int64_t k, int64_t* out) noexcept nogil:
    """_rand_subset(COLOR_NAMES, k): colour indices."""
    cdef uint8_t lst[6]
    cdef int64_t n = 6, q, idx
    for q in range(6):
        lst[q] = NAME_COLOR[q]
    for q in range(k):
        idx = rand_int(wd.rng, 0, n)
        out[q] = lst[idx]
        n -= 1
        while idx < n:
            lst[idx] = lst[idx + 1]
            idx += 1


cdef inline void set_desc(World* wd, int64_t d, int64_t t, int64_t c, int64_t loc) noexcept nogil:
    wd.a[I_DESC + d * DESC_W] = t
    wd.a[I_DESC + d * DESC_W + 1] = c
    wd.a[I_DESC + d * DESC_W + 2] = loc
    if d + 1 > wd.a[I_NDESC]:
        wd.a[I_NDESC] = d + 1


cdef inline void set_leaf(World* wd, int64_t l, int64_t kind, int64_t d1, int64_t d2,
                          int64_t strict) noexcept nogil:
    cdef int64_t* f = wd.a + I_LEAF + l * LEAF_W
    f[0] = kind
    f[1] = d1
    f[2] = d2
    f[3] = strict
    f[4] = -1


cdef inline void one(World* wd, int64_t kind, int64_t t, int64_t c, int64_t loc=-1,
                     int64_t strict=0) noexcept nogil:
    """A one-action instruction on one description (type, colour, loc)."""
    wd.a[I_ROOT] = R_ONE
    set_desc(wd, 0, t, c, loc)
    set_leaf(wd, 0, kind, 0, 0, strict)


cdef bint desc_has(World* wd, RoomGrid* rg, int64_t d, int64_t q) noexcept nogil:
    """Whether description d matches cell q (ObjDesc.find_matching_objs: walls too, the
    location relative to the agent's room, position and direction now)."""
    cdef int64_t x, y, vx, vy, dot1, dot2, s = rg.rs - 1
    cdef int64_t t = wd.a[I_DESC + d * DESC_W], c = wd.a[I_DESC + d * DESC_W + 1]
    cdef int64_t loc = wd.a[I_DESC + d * DESC_W + 2]
    cdef int64_t ax = wd.a[A_X], ay = wd.a[A_Y], dr = wd.a[A_DIR]
    cdef int64_t rx = (ax // s) * s, ry = (ay // s) * s
    cdef const Cell* cl = wd.g + q
    if cl.type == T_NONE:
        return False
    if t != 0 and cl.type != t:
        return False
    if c >= 0 and cl.color != c:
        return False
    if loc >= 0:
        x = q % wd.w
        y = q // wd.w
        if x < rx or y < ry or x >= rx + rg.rs or y >= ry + rg.rs:
            return False
        vx = x - ax
        vy = y - ay
        dot1 = vx * DX[dr] + vy * DY[dr]
        dot2 = vx * (-DY[dr]) + vy * DX[dr]
        return ((loc == 0 and dot2 < 0) or (loc == 1 and dot2 > 0)
                or (loc == 2 and dot1 > 0) or (loc == 3 and dot1 < 0))
    return True


cdef void match_descs(World* wd, RoomGrid* rg) noexcept nogil:
    """ObjDesc.find_matching_objs for every description: tag bit d on the cells matched
    (walls too: minigrid matches any cell), their number."""
    cdef int64_t d, q
    for q in range(wd.w * wd.h):
        wd.g[q].tag = 0
    for d in range(wd.a[I_NDESC]):
        wd.a[I_DESC + d * DESC_W + 3] = 0
        for q in range(wd.w * wd.h):
            if desc_has(wd, rg, d, q):
                wd.g[q].tag |= <uint8_t> (1 << d)
                wd.a[I_DESC + d * DESC_W + 3] += 1


cdef bint putnext_invalid(World* wd, int64_t l) noexcept nogil:
    """validate_instrs for a PutNextInstr (leaf l): an object matching both descriptions,
    or an object to move already next to a fixed one."""
    cdef int64_t* f = wd.a + I_LEAF + l * LEAF_W
    cdef uint8_t bm = <uint8_t> (1 << f[1]), bf = <uint8_t> (1 << f[2])
    cdef int64_t q, r
    for q in range(wd.w * wd.h):
        if wd.g[q].tag & bm and wd.g[q].tag & bf:
            return True
    for q in range(wd.w * wd.h):
        if not wd.g[q].tag & bm:
            continue
        for r in range(wd.w * wd.h):
            if (wd.g[r].tag & bf and llabs(q % wd.w - r % wd.w) + llabs(q // wd.w - r // wd.w)
                    == 1):
                return True
    return False


cdef int64_t leaf_code(World* wd, int64_t l) noexcept nogil:
    cdef int64_t* f = wd.a + I_LEAF + l * LEAF_W
    cdef int64_t code = desc_code(wd, f[1])
    if f[0] == L_PUTNEXT:
        code += MISSION_DESC * desc_code(wd, f[2])
    return f[0] + 4 * code


cdef int64_t desc_code(World* wd, int64_t d) noexcept nogil:
    cdef int64_t* e = wd.a + I_DESC + d * DESC_W
    cdef int64_t t = 0 if e[0] == 0 else (4 if e[0] == T_DOOR else e[0] - T_KEY + 1)
    return ((t * 7 + e[1] + 1) * 5 + e[2] + 1) * 2 + (1 if e[3] > 1 else 0)


ctypedef struct LevelGen:
    int64_t ak[4]           # action_kinds (L_*), in the level's order
    int64_t nak
    int64_t flags           # LG_*
    int64_t li, lj          # the locked room (-1: None)


cdef int lg_obj(World* wd, RoomGrid* rg, LevelGen* lg, int64_t ntypes) noexcept nogil:
    """LevelGen.rand_obj, the next description: types OBJ_TYPES (ntypes 4: box, ball, key,
    door), OBJ_TYPES_NOT_DOOR (3) or ["door"] (1); 0, or 1 (RecursionError: start over)."""
    cdef int64_t d = wd.a[I_NDESC], tries, c, t, loc, q, n, s = rg.rs - 1
    cdef int64_t tx = lg.li * s, ty = lg.lj * s
    cdef bint free
    for tries in range(101):
        c = rand_int(wd.rng, 0, 7)                  # [None, *COLOR_NAMES]
        t = T_DOOR if ntypes == 1 else T_BOX - rand_int(wd.rng, 0, ntypes)
        loc = -1
        if lg.flags & LG_LOCATIONS and rand_int(wd.rng, 0, 2) == 0:
            loc = rand_int(wd.rng, 0, 4)            # LOC_NAMES
        set_desc(wd, d, t, -1 if c == 0 else NAME_COLOR[c - 1], loc)
        n = 0
        free = False                                # a match outside the locked room
        for q in range(wd.w * wd.h):
            if desc_has(wd, rg, d, q):
                n += 1
                if not (tx <= q % wd.w < tx + rg.rs and ty <= q // wd.w < ty + rg.rs):
                    free = True
        if n == 0:
            continue
        if not lg.flags & LG_IMPLICIT and lg.li >= 0 and not free:
            continue
        return 0
    return 1


cdef int lg_action(World* wd, RoomGrid* rg, LevelGen* lg, int64_t l) noexcept nogil:
    """rand_instr's "action": leaf l; 0, or 1 (start over)."""
    cdef int64_t k = lg.ak[rand_int(wd.rng, 0, lg.nak)], d = wd.a[I_NDESC]
    if k == L_GOTO:
        if lg_obj(wd, rg, lg, 4):
            return 1
    elif k == L_PICKUP:
        if lg_obj(wd, rg, lg, 3):
            return 1
    elif k == L_OPEN:
        if lg_obj(wd, rg, lg, 1):
            return 1
    elif lg_obj(wd, rg, lg, 3) or lg_obj(wd, rg, lg, 4):
        return 1
    set_leaf(wd, l, k, d, d + 1 if k == L_PUTNEXT else d, 0)
    return 0


cdef int levelgen(World* wd, RoomGrid* rg, const int64_t* p) noexcept nogil:
    """LevelGen.gen_mission and validate_instrs' key rule: 0; 1: start over; 2: engine error.
    instr_kinds: base-4 digits of p[7] // 625 (1 action, 2 and, 3 seq), action_kinds:
    base-5 digits of p[7] % 625 (1 + L_*)."""
    cdef LevelGen lg
    cdef Objs objs
    cdef Objs dists
    cdef double prob
    cdef int64_t ik[3]
    cdef int64_t nik = 0, i, j, k, c = 0, q, d, part, l, sub, s = rg.rs - 1, code
    cdef uint8_t lockc[6]
    cdef int rc
    memcpy(&prob, &p[5], sizeof(double))
    lg.flags = p[6]
    lg.nak = 0
    code = p[7] % 625
    while code and lg.nak < 4:
        lg.ak[lg.nak] = code % 5 - 1
        lg.nak += 1
        code //= 5
    code = p[7] // 625
    while code and nik < 3:
        ik[nik] = code % 4
        nik += 1
        code //= 4
    if lg.nak == 0 or nik == 0:
        snprintf(wd.err, ERRMSG_LEN, "LevelGen: no action or instruction kinds")
        return 2
    lg.li = -1
    lg.lj = -1
    objs.n = 0
    if random_standard_uniform(wd.rng) < prob:     # add_locked_room
        while True:
            i = rand_int(wd.rng, 0, rg.cols)
            j = rand_int(wd.rng, 0, rg.rows)
            k = rand_int(wd.rng, 0, 4)
            if rg.r[j * rg.cols + i].nb[k] < 0:
                continue
            c = rg_add_door(wd, rg, i, j, k, -1, 1)
            break
        lg.li = i
        lg.lj = j
        while True:
            i = rand_int(wd.rng, 0, rg.cols)
            j = rand_int(wd.rng, 0, rg.rows)
            if i == lg.li and j == lg.lj:
                continue
            if rg_add_object(wd, rg, i, j, T_KEY, <int> c):
                return 1
            break
    if rg_connect_all(wd, rg):
        return 1
    rc = rg_add_distractors(wd, rg, &objs, &dists, -1, -1, p[4], False)
    if rc:
        return rc
    while True:
        if rg_random_agent(wd, rg):
            return 1
        if wd.a[A_X] // s != lg.li or wd.a[A_Y] // s != lg.lj:
            break
    if not lg.flags & LG_UNBLOCKING and not objs_reachable(wd):
        return 1
    # rand_instr
    k = ik[rand_int(wd.rng, 0, nik)]
    if k == 1:
        wd.a[I_ROOT] = R_ONE
        if lg_action(wd, rg, &lg, 0):
            return 1
        wd.a[I_NLEAF] = 1
    elif k == 2:
        wd.a[I_ROOT] = R_AND
        if lg_action(wd, rg, &lg, 0) or lg_action(wd, rg, &lg, 1):
            return 1
        wd.a[I_NLEAF] = 2
    else:
        l = 0
        sub = 0
        for part in range(2):                       # ["action", "and"]
            if rand_int(wd.rng, 0, 2) == 1:
                if lg_action(wd, rg, &lg, l) or lg_action(wd, rg, &lg, l + 1):
                    return 1
                sub |= 1 << part
                l += 2
            else:
                if lg_action(wd, rg, &lg, l):
                    return 1
                l += 1
        wd.a[I_ROOT] = R_BEFORE if rand_int(wd.rng, 0, 2) == 0 else R_AFTER
        wd.a[I_SUB] = sub
        wd.a[I_NLEAF] = l
    if lg.flags & LG_UNBLOCKING:    # no key of a locked door's colour named
        k = 0
        for q in range(wd.w * wd.h):
            if wd.g[q].type == T_DOOR and wd.g[q].state == 2 and k < 6:
                lockc[k] = wd.g[q].color
                k += 1
        for d in range(wd.a[I_NDESC]):
            if wd.a[I_DESC + d * DESC_W] != T_KEY:
                continue
            for q in range(k):
                if wd.a[I_DESC + d * DESC_W + 1] == lockc[q]:
                    return 1
    return 0


cdef int babyai_mission(World* wd, RoomGrid* rg, const int64_t* p) noexcept nogil:
    """One try of the level's gen_mission (after RoomGrid._gen_grid), the instruction in the
    agent row: 0; 1: rejected (start over); 2: engine error."""
    cdef Objs objs
    cdef Objs dists
    cdef Objs objs_r
    cdef int64_t v = p[0], k, q, i, j, li, lj, c, c2, t, s = rg.rs - 1
    cdef int64_t cols[6]
    cdef int64_t dpos[4]
    cdef int rc
    cdef Room* m
    objs.n = 0
    if v == V_GOTO or v == V_REDBALL or v == V_REDBLUE or v == V_OPEN or v == V_PICKUP \
            or v == V_UNBLOCKPICKUP or v == V_PUTNEXTLOCAL:
        if rg_random_agent(wd, rg):
            return 1
        if (v == V_GOTO or v == V_OPEN or v == V_PICKUP or v == V_UNBLOCKPICKUP) \
                and rg_connect_all(wd, rg):
            return 1
        if v == V_REDBALL:
            rc = bb_add_object(wd, rg, &objs, 0, 0, T_BALL, C_RED)
            if rc:
                return rc
        # GoToObj (sel): all_unique (no repeat drawn: no object yet), no reachability test
        rc = rg_add_distractors(wd, rg, &objs, &dists, -1, -1, p[4],
                                (v == V_GOTO and p[6] != 0) or v == V_PUTNEXTLOCAL)
        if rc:
            return rc
        if v == V_REDBALL and p[5]:             # GoToRedBallGrey: the distractors go grey
            for q in range(dists.n):
                at(wd, dists.x[q], dists.y[q]).color = C_GREY
        if v == V_REDBLUE:
            for q in range(dists.n):
                if dists.t[q] == T_BALL and (dists.c[q] == C_RED or dists.c[q] == C_BLUE):
                    return 1
            c = C_RED if rand_int(wd.rng, 0, 2) == 0 else C_BLUE
            if rg_add_object(wd, rg, 0, 0, T_BALL, <int> c):
                return 1
            one(wd, L_GOTO, T_BALL, c)
        if v == V_UNBLOCKPICKUP:
            if objs_reachable(wd):
                return 1
        elif not (v == V_GOTO and p[6] != 0) and not objs_reachable(wd):
            return 1
        if v == V_GOTO or v == V_PICKUP or v == V_UNBLOCKPICKUP:
            k = rand_int(wd.rng, 0, dists.n)
            one(wd, L_GOTO if v == V_GOTO else L_PICKUP, dists.t[k], dists.c[k])
            if v == V_GOTO and p[5]:            # open_all_doors
                for q in range(wd.w * wd.h):
                    if wd.g[q].type == T_DOOR:
                        wd.g[q].state = 0
        elif v == V_REDBALL:
            one(wd, L_GOTO, T_BALL, C_RED)
        elif v == V_OPEN:                       # every room's doors, each seen twice
            k = 0
            for i in range(rg.cols):
                for j in range(rg.rows):
                    for q in range(4):
                        k += rg.r[j * rg.cols + i].doors[q] != 0
            k = rand_int(wd.rng, 0, k)
            for i in range(rg.cols):
                for j in range(rg.rows):
                    m = &rg.r[j * rg.cols + i]
                    for q in range(4):
                        if m.doors[q]:
                            if k == 0:
                                one(wd, L_OPEN, T_DOOR, at(wd, m.dpx[q], m.dpy[q]).color)
                            k -= 1
        elif v == V_PUTNEXTLOCAL:
            i = rand_int(wd.rng, 0, dists.n)
            j = rand_int(wd.rng, 0, dists.n - 1)
            if j >= i:
                j += 1
            wd.a[I_ROOT] = R_ONE
            set_desc(wd, 0, dists.t[i], dists.c[i], -1)
            set_desc(wd, 1, dists.t[j], dists.c[j], -1)
            set_leaf(wd, 0, L_PUTNEXT, 0, 1, 0)
        return 0
    if v == V_IMPUNLOCK or v == V_UNLOCK:
        li = rand_int(wd.rng, 0, rg.cols)
        lj = rand_int(wd.rng, 0, rg.rows)
        c = rg_add_door(wd, rg, li, lj, -1, -1, 1)
        # minigrid compares the key's room to the locked one with `is` on numpy ints: never
        # the same, so one draw and the key may sit in the locked room
        i = rand_int(wd.rng, 0, rg.cols)
        rc = bb_add_object(wd, rg, &objs, i, rand_int(wd.rng, 0, rg.rows), T_KEY, <int> c)
        if rc:
            return rc
        if v == V_UNLOCK and rand_int(wd.rng, 0, 2) == 0:
            if rg_connect_excluding(wd, rg, c):
                return 1
        elif rg_connect_all(wd, rg):
            return 1
        for i in range(rg.cols):                # every room (the same `is` test)
            for j in range(rg.rows):
                rc = rg_add_distractors(wd, rg, &objs, &dists, i, j, 2 if v == V_IMPUNLOCK
                                        else 3, False)
                if rc:
                    return rc
        while True:
            if rg_random_agent(wd, rg):
                return 1
            if wd.a[A_X] // s != li or wd.a[A_Y] // s != lj:
                break
        if not objs_reachable(wd):
            return 1
        if v == V_UNLOCK:
            one(wd, L_OPEN, T_DOOR, c)
            return 0
        rc = rg_add_distractors(wd, rg, &objs, &dists, li, lj, 1, False)
        if rc:
            return rc
        one(wd, L_GOTO, dists.t[0], dists.c[0])
        return 0
    if v == V_DOOR:
        for q in range(4):
            cols[q] = rg_add_door(wd, rg, 1, 1, -1, -1, -1)
        if rg_place_agent(wd, rg, 1, 1):
            return 1
        one(wd, L_GOTO, T_DOOR, cols[rand_int(wd.rng, 0, 4)])
        return 0
    if v == V_OBJDOOR:
        if rg_place_agent(wd, rg, 1, 1):
            return 1
        rc = rg_add_distractors(wd, rg, &objs, &dists, 1, 1, 8, False)
        if rc:
            return rc
        for q in range(4):
            c = rg_add_door(wd, rg, 1, 1, -1, -1, -1)
            objs_add(wd, &dists, T_DOOR, c, 0, 0)
        if not objs_reachable(wd):
            return 1
        k = rand_int(wd.rng, 0, dists.n)
        one(wd, L_GOTO, dists.t[k], dists.c[k])
        return 0
    if v == V_OPENRED:
        rg_add_door(wd, rg, 0, 0, 0, C_RED, 0)
        if rg_place_agent(wd, rg, 0, 0):
            return 1
        one(wd, L_OPEN, T_DOOR, C_RED)
        return 0
    if v == V_OPENDOOR:
        rand_colors(wd, 4, cols)
        for q in range(4):
            rg_add_door(wd, rg, 1, 1, q, <int> cols[q], 0)
        k = p[6] if p[6] >= 0 else rand_int(wd.rng, 0, 2)
        if k == 0:
            one(wd, L_OPEN, T_DOOR, cols[0], -1, p[7])
        else:
            one(wd, L_OPEN, T_DOOR, -1, rand_int(wd.rng, 0, 4), p[7])
        return rg_place_agent(wd, rg, 1, 1)
    if v == V_OPENTWO:
        rand_colors(wd, 2, cols)
        c = p[4] if p[4] >= 0 else cols[0]
        c2 = p[6] if p[6] >= 0 else cols[1]
        rg_add_door(wd, rg, 1, 1, 2, <int> c, 0)
        rg_add_door(wd, rg, 1, 1, 0, <int> c2, 0)
        if rg_place_agent(wd, rg, 1, 1):
            return 1
        wd.a[I_ROOT] = R_BEFORE
        set_desc(wd, 0, T_DOOR, c, -1)
        set_desc(wd, 1, T_DOOR, c2, -1)
        set_leaf(wd, 0, L_OPEN, 0, 0, p[7])
        set_leaf(wd, 1, L_OPEN, 1, 1, 0)
        return 0
    if v == V_OPENORDER:
        rand_colors(wd, p[4], cols)
        for q in range(p[4]):
            rg_add_door(wd, rg, 1, 1, -1, <int> cols[q], 0)
        if rg_place_agent(wd, rg, 1, 1):
            return 1
        i = rand_int(wd.rng, 0, p[4])
        j = rand_int(wd.rng, 0, p[4] - 1)
        if j >= i:
            j += 1
        k = rand_int(wd.rng, 0, 3)
        wd.a[I_ROOT] = R_ONE if k == 0 else (R_BEFORE if k == 1 else R_AFTER)
        set_desc(wd, 0, T_DOOR, cols[i], -1)
        set_leaf(wd, 0, L_OPEN, 0, 0, p[7])
        if k:
            set_desc(wd, 1, T_DOOR, cols[j], -1)
            set_leaf(wd, 1, L_OPEN, 1, 1, p[7])
        return 0
    if v == V_PICKUPDIST:
        rc = rg_add_distractors(wd, rg, &objs, &dists, -1, -1, 5, True)
        if rc:
            return rc
        if rg_place_agent(wd, rg, 0, 0):
            return 1
        k = rand_int(wd.rng, 0, dists.n)
        q = rand_int(wd.rng, 0, 3)              # type, color, both
        one(wd, L_PICKUP, 0 if q == 1 else dists.t[k], -1 if q == 0 else dists.c[k], -1,
            p[7])
        return 0
    if v == V_PICKUPABOVE:
        rc = bb_add_object(wd, rg, &objs, 1, 0, -1, -1)
        if rc:
            return rc
        t = objs.t[0]
        c = objs.c[0]
        rg_add_door(wd, rg, 1, 1, 3, -1, 0)
        if rg_place_agent(wd, rg, 1, 1) or rg_connect_all(wd, rg):
            return 1
        one(wd, L_PICKUP, t, c)
        return 0
    if v == V_UNLOCKLOCAL or v == V_KEYINBOX:
        c = rg_add_door(wd, rg, 1, 1, -1, -1, 1)
        if v == V_UNLOCKLOCAL:
            rc = bb_add_object(wd, rg, &objs, 1, 1, T_KEY, <int> c)
            if rc:
                return rc
            if p[5]:
                rc = rg_add_distractors(wd, rg, &objs, &dists, 1, 1, 3, True)
                if rc:
                    return rc
        else:
            if rg_add_object(wd, rg, 1, 1, T_BOX, rand_color(wd)):
                return 1
            at(wd, wd.last_x, wd.last_y).ctype = T_KEY
            at(wd, wd.last_x, wd.last_y).ccolor = <uint8_t> c
        if rg_place_agent(wd, rg, 1, 1):
            return 1
        one(wd, L_OPEN, T_DOOR, -1)
        return 0
    if v == V_UNLOCKPICKUP or v == V_BLOCKEDUNLOCKPICKUP:
        rc = bb_add_object(wd, rg, &objs, 1, 0, T_BOX, -1)
        if rc:
            return rc
        t = objs.c[0]
        c = rg_add_door(wd, rg, 0, 0, 0, -1, 1)
        if v == V_BLOCKEDUNLOCKPICKUP:
            put(wd, rg.r[0].dpx[0] - 1, rg.r[0].dpy[0], T_BALL, rand_color(wd), 0)
        rc = bb_add_object(wd, rg, &objs, 0, 0, T_KEY, <int> c)
        if rc:
            return rc
        if v == V_UNLOCKPICKUP and p[5]:
            rc = rg_add_distractors(wd, rg, &objs, &dists, -1, -1, 4, True)
            if rc:
                return rc
        if rg_place_agent(wd, rg, 0, 0):
            return 1
        one(wd, L_PICKUP, T_BOX, t if v == V_UNLOCKPICKUP else -1)
        return 0
    if v == V_UNLOCKTOUNLOCK:
        rand_colors(wd, 2, cols)
        rg_add_door(wd, rg, 0, 0, 0, <int> cols[0], 1)
        rc = bb_add_object(wd, rg, &objs, 2, 0, T_KEY, <int> cols[0])
        if rc:
            return rc
        rg_add_door(wd, rg, 1, 0, 0, <int> cols[1], 1)
        rc = bb_add_object(wd, rg, &objs, 1, 0, T_KEY, <int> cols[1])
        if rc:
            return rc
        if rg_add_object(wd, rg, 0, 0, T_BALL, -1):
            return 1
        if rg_place_agent(wd, rg, 1, 0):
            return 1
        one(wd, L_PICKUP, T_BALL, -1)
        return 0
    if v == V_PUTNEXT:
        if rg_place_agent(wd, rg, 0, 0):
            return 1
        rc = rg_add_distractors(wd, rg, &objs, &dists, 0, 0, p[4], True)
        if rc:
            return rc
        rc = rg_add_distractors(wd, rg, &objs, &objs_r, 1, 0, p[4], True)
        if rc:
            return rc
        rg_remove_wall(wd, rg, 0, 0, 0)
        i = rand_int(wd.rng, 0, dists.n)
        j = rand_int(wd.rng, 0, objs_r.n)
        dpos[0] = dists.t[i]
        dpos[1] = dists.c[i]
        dpos[2] = dists.x[i]
        dpos[3] = dists.y[i]
        wd.a[I_ROOT] = R_ONE
        if rand_int(wd.rng, 0, 2) == 0:         # swap
            set_desc(wd, 0, objs_r.t[j], objs_r.c[j], -1)
            set_desc(wd, 1, dpos[0], dpos[1], -1)
            wd.a[I_SX] = objs_r.x[j]
            wd.a[I_SY] = objs_r.y[j]
        else:
            set_desc(wd, 0, dpos[0], dpos[1], -1)
            set_desc(wd, 1, objs_r.t[j], objs_r.c[j], -1)
            wd.a[I_SX] = dpos[2]
            wd.a[I_SY] = dpos[3]
        set_leaf(wd, 0, L_PUTNEXT, 0, 1, 0)
        wd.a[I_START] = p[5]
        return 0
    if v == V_ACTIONOBJDOOR:
        rc = rg_add_distractors(wd, rg, &objs, &dists, 1, 1, 5, True)
        if rc:
            return rc
        for q in range(4):
            c = rg_add_door(wd, rg, 1, 1, -1, -1, 0)
            objs_add(wd, &dists, T_DOOR, c, 0, 0)
        if rg_place_agent(wd, rg, 1, 1):
            return 1
        k = rand_int(wd.rng, 0, dists.n)
        if rand_int(wd.rng, 0, 2) == 0:
            one(wd, L_GOTO, dists.t[k], dists.c[k])
        else:
            one(wd, L_OPEN if dists.t[k] == T_DOOR else L_PICKUP, dists.t[k], dists.c[k])
        return 0
    if v == V_FINDOBJ:
        i = rand_int(wd.rng, 0, rg.rows)
        j = rand_int(wd.rng, 0, rg.cols)
        rc = bb_add_object(wd, rg, &objs, i, j, -1, -1)
        if rc:
            return rc
        if rg_place_agent(wd, rg, 1, 1) or rg_connect_all(wd, rg):
            return 1
        one(wd, L_PICKUP, objs.t[0], -1)
        return 0
    if v == V_KEYCORRIDOR:
        for j in range(1, rg.rows):
            rg_remove_wall(wd, rg, 1, j, 3)
        k = rand_int(wd.rng, 0, rg.rows)
        c = rg_add_door(wd, rg, 2, k, 2, -1, 1)
        if rg_add_object(wd, rg, 2, k, <int> p[4], -1):
            return 1
        if rg_add_object(wd, rg, 0, rand_int(wd.rng, 0, rg.rows), T_KEY, <int> c):
            return 1
        if rg_place_agent(wd, rg, 1, rg.rows // 2) or rg_connect_all(wd, rg):
            return 1
        one(wd, L_PICKUP, p[4], -1)
        return 0
    if v == V_ONEROOM:
        if rg_add_object(wd, rg, 0, 0, T_BALL, -1) or rg_random_agent(wd, rg):
            return 1
        one(wd, L_PICKUP, T_BALL, -1)
        return 0
    if v == V_MOVETWO:
        if rg_place_agent(wd, rg, 0, 0):
            return 1
        rc = rg_add_distractors(wd, rg, &objs, &dists, 0, 0, p[4], True)
        if rc:
            return rc
        rc = rg_add_distractors(wd, rg, &objs, &objs_r, 1, 0, p[4], True)
        if rc:
            return rc
        rg_remove_wall(wd, rg, 0, 0, 0)
        i = rand_int(wd.rng, 0, dists.n)         # objs_l = _rand_subset(objs_l, 2)
        li = rand_int(wd.rng, 0, dists.n - 1)
        if li >= i:
            li += 1
        j = rand_int(wd.rng, 0, objs_r.n)        # objs_r = _rand_subset(objs_r, 2)
        lj = rand_int(wd.rng, 0, objs_r.n - 1)
        if lj >= j:
            lj += 1
        wd.a[I_ROOT] = R_BEFORE                 # put a next to b, then c next to d
        set_desc(wd, 0, dists.t[i], dists.c[i], -1)
        set_desc(wd, 1, objs_r.t[j], objs_r.c[j], -1)
        set_desc(wd, 2, objs_r.t[lj], objs_r.c[lj], -1)
        set_desc(wd, 3, dists.t[li], dists.c[li], -1)
        set_leaf(wd, 0, L_PUTNEXT, 0, 1, 0)
        set_leaf(wd, 1, L_PUTNEXT, 2, 3, 0)
        return 0
    if v == V_LEVELGEN:
        return levelgen(wd, rg, p)
    if v == V_PICKUPLOC:
        # LevelGen.gen_mission: _rand_float(0, 1) < locked_room_prob (0): the draw only;
        # connect_all (one room: nothing)
        random_standard_uniform(wd.rng)
        rc = rg_add_distractors(wd, rg, &objs, &dists, -1, -1, p[4], False)
        if rc:
            return rc
        if rg_random_agent(wd, rg) or not objs_reachable(wd):
            return 1
        # rand_obj(types=["box", "ball", "key"]): until a description matches an object
        for q in range(101):
            c = rand_int(wd.rng, 0, 7)              # [None, *COLOR_NAMES]
            t = T_BOX - rand_int(wd.rng, 0, 3)
            k = rand_int(wd.rng, 0, 4) if rand_int(wd.rng, 0, 2) == 0 else -1
            one(wd, L_PICKUP, t, -1 if c == 0 else NAME_COLOR[c - 1], k)
            match_descs(wd, rg)
            if wd.a[I_DESC + 3] > 0:
                return 0
        return 1                                    # RecursionError: start over
    snprintf(wd.err, ERRMSG_LEN, "unknown BabyAI level %lld", <long long> v)
    return 2


cdef int gen_babyai(World* wd, const int64_t* p) noexcept nogil:
    """RoomGridLevel._gen_grid's loop (a failed placement, connect_all or a rejected sample
    starts over), the instruction's descriptions matched (tags, marks: the objects and
    positions each tracks), the verifier's state reset, the mission code (registration's
    _mission decodes it), the number of navigations (num_navs_needed), each movable object
    an id (Cell.oid: preCarrying's identity)."""
    cdef RoomGrid rg
    cdef int64_t restarts = 0, q, l, n, nid = 0
    cdef int rc
    rg.rows = p[1]
    rg.cols = p[2]
    rg.rs = p[3]
    while True:
        restarts += 1
        if restarts > GEN_RESTARTS:
            snprintf(wd.err, ERRMSG_LEN, "BabyAI: no valid layout found")
            return 1
        memset(wd.g, 0, wd.w * wd.h * sizeof(Cell))
        for q in range(I_ROOT, I_END):
            wd.a[q] = 0
        rg_gen(wd, &rg)
        rc = babyai_mission(wd, &rg, p)
        if rc == 2:
            return 1
        if rc == 1:
            continue
        match_descs(wd, &rg)
        if wd.a[I_NLEAF] == 0:
            wd.a[I_NLEAF] = 1 if wd.a[I_ROOT] == R_ONE else 2
        for l in range(wd.a[I_NLEAF]):
            if wd.a[I_LEAF + l * LEAF_W] == L_PUTNEXT and putnext_invalid(wd, l):
                break
        else:
            break
    mark_targets(wd)
    for q in range(wd.w * wd.h):
        if wd.g[q].type == T_KEY or wd.g[q].type == T_BALL or wd.g[q].type == T_BOX:
            nid += 1
            wd.g[q].oid = <uint8_t> (nid if nid < 256 else 255)
    wd.a[I_CX] = -1
    wd.a[I_CY] = -1
    n = wd.a[I_NLEAF]
    wd.a[I_NAVS] = 0
    wd.a[A_MISSION] = wd.a[I_ROOT]
    for l in range(n):
        wd.a[I_NAVS] += 2 if wd.a[I_LEAF + l * LEAF_W] == L_PUTNEXT else 1
    wd.a[A_MISSION] += 4 * leaf_code(wd, 0)
    if n >= 2:
        wd.a[A_MISSION] += 4 * MISSION_LEAF * leaf_code(wd, 1)
    if wd.a[I_SUB]:             # the second word: I_SUB + 4 * (leaf 2 + MISSION_LEAF * leaf 3)
        wd.a[I_MIS2] = wd.a[I_SUB] + 4 * leaf_code(wd, 2)
        if n == 4:
            wd.a[I_MIS2] += 4 * MISSION_LEAF * leaf_code(wd, 3)
    return 0


cdef void babyai_start(World* wd) noexcept nogil:
    """PutNext's start_carrying, after the reset's observation (as minigrid's reset): the
    object to move leaves the grid for the agent's hands (its cur_pos stays)."""
    cdef Cell* c
    if wd.a[I_START]:
        c = at(wd, wd.a[I_SX], wd.a[I_SY])
        wd.carry[0] = c[0]
        clear(wd, wd.a[I_SX], wd.a[I_SY])
        wd.a[I_CX] = wd.a[I_SX]
        wd.a[I_CY] = wd.a[I_SY]


cdef inline int64_t carried_id(World* wd) noexcept nogil:
    return -1 if wd.carry.type == T_NONE else wd.carry.oid


cdef int verify_leaf(World* wd, int64_t l, int64_t action) noexcept nogil:
    """ActionInstr.verify_action: 0 continue, 1 success, 2 failure."""
    cdef int64_t* f = wd.a + I_LEAF + l * LEAF_W
    cdef int64_t d = wd.a[A_DIR], fx = wd.a[A_X] + DX[d], fy = wd.a[A_Y] + DY[d], pre, q
    cdef int64_t px = -1, py = -1
    cdef uint8_t tag = 0
    cdef const Cell* front = &WALL_CELL
    cdef bint found = False
    if 0 <= fx < wd.w and 0 <= fy < wd.h:
        front = at(wd, fx, fy)
    if f[0] == L_GOTO:
        return 1 if front != &WALL_CELL and wd.marks[fy * wd.w + fx] & (1 << f[1]) else 0
    if f[0] == L_OPEN:
        if action != 5:
            return 0
        if front.type == T_DOOR and front.tag & (1 << f[1]) and front.state == 0:
            return 1
        if f[3] and front.type == T_DOOR:
            return 2
        return 0
    pre = f[4]
    f[4] = carried_id(wd)
    if f[0] == L_PICKUP:
        if action != 3:
            return 0
        if pre == -1 and wd.carry.type != T_NONE and wd.carry.tag & (1 << f[1]):
            return 1
        if f[3] and wd.carry.type != T_NONE:
            return 2
        return 0
    # PutNext
    if f[3] and action == 3 and wd.carry.type != T_NONE:
        return 2
    if action != 4 or pre < 1:
        return 0
    for q in range(wd.w * wd.h):
        if wd.g[q].type != T_NONE and wd.g[q].oid == pre:
            px = q % wd.w
            py = q // wd.w
            tag = wd.g[q].tag
            found = True
            break
    if not found and wd.carry.type != T_NONE and wd.carry.oid == pre:
        px = wd.a[I_CX]
        py = wd.a[I_CY]
        tag = wd.carry.tag
        found = True
    if not found or not tag & (1 << f[1]):
        return 0
    for q in range(wd.w * wd.h):
        if wd.marks[q] & (1 << f[2]) and llabs(q % wd.w - px) + llabs(q // wd.w - py) == 1:
            return 1
    return 0


cdef int verify_and(World* wd, int64_t done, int64_t l, int64_t action) noexcept nogil:
    """AndInstr.verify of leaves l, l + 1 (a_done, b_done at done, done + 1): 0 or 1."""
    if not wd.a[done]:
        wd.a[done] = verify_leaf(wd, l, action) == 1
    if not wd.a[done + 1]:
        wd.a[done + 1] = verify_leaf(wd, l + 1, action) == 1
    return 1 if wd.a[done] and wd.a[done + 1] else 0


cdef int verify_part(World* wd, int64_t b, int64_t action) noexcept nogil:
    """A Before/After root's instr_a (b 0) or instr_b (b 1): a leaf or an And (I_SUB)."""
    cdef int64_t sub = wd.a[I_SUB], l = 0
    if b:
        l = 2 if sub & 1 else 1
    if sub & (1 << b):
        return verify_and(wd, I_AND + 2 * b, l, action)
    return verify_leaf(wd, l, action)


cdef int verify_instr(World* wd, int64_t action) noexcept nogil:
    """instrs.verify(action): 0 continue, 1 success, 2 failure."""
    cdef int64_t root = wd.a[I_ROOT]
    cdef int r
    if root == R_ONE:
        return verify_leaf(wd, 0, action)
    if root == R_AND:
        return verify_and(wd, I_ADONE, 0, action)
    # Before: a then b; After: b then a
    if (wd.a[I_ADONE] if root == R_BEFORE else wd.a[I_BDONE]):
        r = verify_part(wd, 1 if root == R_BEFORE else 0, action)
        return r
    r = verify_part(wd, 0 if root == R_BEFORE else 1, action)
    if r == 1:
        wd.a[I_ADONE if root == R_BEFORE else I_BDONE] = 1
        return verify_instr(wd, action)
    return r


# ---------------------------------------------------------------------------- more
cdef int gen_distshift(World* wd, const int64_t* p) noexcept nogil:
    """DistShiftEnv: p = start x, y (-1: place_agent), dir, strip2_row."""
    cdef int64_t i
    wall_rect(wd, 0, 0, wd.w, wd.h)
    put(wd, wd.w - 2, 1, T_GOAL, C_GREEN, 0)
    for i in range(wd.w - 6):
        put(wd, 3 + i, 1, T_LAVA, C_RED, 0)
        put(wd, 3 + i, p[3], T_LAVA, C_RED, 0)
    if p[0] >= 0:
        wd.a[A_X] = p[0]
        wd.a[A_Y] = p[1]
        wd.a[A_DIR] = p[2]
        return 0
    return place_agent(wd, 0, 0, -1, -1, True)


cdef int gen_redblue(World* wd, const int64_t* p) noexcept nogil:
    """RedBlueDoorEnv (width 2 * size): A_X0..: the red door's x, y, the blue door's."""
    cdef int64_t s = wd.h, y
    wall_rect(wd, 0, 0, 2 * s, s)
    wall_rect(wd, s // 2, 0, s, s)
    if place_agent(wd, s // 2, 0, s, s, True):
        return 1
    y = rand_int(wd.rng, 1, s - 1)
    put(wd, s // 2, y, T_DOOR, C_RED, 1)
    wd.a[A_X0] = s // 2
    wd.a[A_X0 + 1] = y
    y = rand_int(wd.rng, 1, s - 1)
    put(wd, s // 2 + s - 1, y, T_DOOR, C_BLUE, 1)
    wd.a[A_X0 + 2] = s // 2 + s - 1
    wd.a[A_X0 + 3] = y
    return 0


cdef int gen_unlockpickup(World* wd, const int64_t* p, bint blocked) noexcept nogil:
    """UnlockPickupEnv / BlockedUnlockPickupEnv: the box to pick up is tagged; mission code
    (box - T_KEY) * 6 + its colour."""
    cdef RoomGrid rg
    cdef int64_t c, bc
    rg.rows = 1
    rg.cols = 2
    rg.rs = 6
    rg_gen(wd, &rg)
    bc = rand_color(wd)
    if rg_add_object(wd, &rg, 1, 0, T_BOX, <int> bc, 1):
        return 1
    wd.a[A_MISSION] = (T_BOX - T_KEY) * 6 + bc
    c = rg_add_door(wd, &rg, 0, 0, 0, -1, 1)
    if blocked:
        put(wd, rg.r[0].dpx[0] - 1, rg.r[0].dpy[0], T_BALL, rand_color(wd), 0)
    if rg_add_object(wd, &rg, 0, 0, T_KEY, <int> c):
        return 1
    return rg_place_agent(wd, &rg, 0, 0)


cdef int gen_dynobs(World* wd, const int64_t* p) noexcept nogil:
    """DynamicObstaclesEnv: p = start x, y (-1: place_agent), dir, n_obstacles; the balls'
    positions at A_X0 + 2k (each drawn with place_obj(max_tries=100))."""
    cdef int64_t k, x = 0, y = 0
    wall_rect(wd, 0, 0, wd.w, wd.h)
    put(wd, wd.w - 2, wd.h - 2, T_GOAL, C_GREEN, 0)
    if p[0] >= 0:
        wd.a[A_X] = p[0]
        wd.a[A_Y] = p[1]
        wd.a[A_DIR] = p[2]
    elif place_agent(wd, 0, 0, -1, -1, True):
        return 1
    for k in range(p[3]):
        if place_obj(wd, T_BALL, C_BLUE, 0, 0, 0, -1, -1, &x, &y, False, 100):
            return 1
        wd.a[A_X0 + 2 * k] = x
        wd.a[A_X0 + 2 * k + 1] = y
    return 0


cdef void move_obstacles(World* wd, int64_t n) noexcept nogil:
    """DynamicObstaclesEnv.step: each ball to a free cell of the 3 x 3 square around it
    (place_obj, 100 tries; a ball that finds none stays)."""
    cdef int64_t k, ox, oy, x = 0, y = 0
    for k in range(n):
        ox = wd.a[A_X0 + 2 * k]
        oy = wd.a[A_X0 + 2 * k + 1]
        if place_obj(wd, T_BALL, C_BLUE, 0, ox - 1, oy - 1, 3, 3, &x, &y, False, 100):
            continue
        clear(wd, ox, oy)
        wd.a[A_X0 + 2 * k] = x
        wd.a[A_X0 + 2 * k + 1] = y


cdef int gen_gotodoor(World* wd, const int64_t* p) noexcept nogil:
    """GoToDoorEnv: A_X0, A_X0 + 1: the target door; mission code: its colour."""
    cdef int64_t w, h, k, q, n = 0, c
    cdef int64_t dx[4]
    cdef int64_t dy[4]
    cdef int64_t cols[4]
    cdef bint dup
    w = rand_int(wd.rng, 5, wd.w + 1)
    h = rand_int(wd.rng, 5, wd.h + 1)
    wall_rect(wd, 0, 0, w, h)
    dx[0] = rand_int(wd.rng, 2, w - 2)
    dy[0] = 0
    dx[1] = rand_int(wd.rng, 2, w - 2)
    dy[1] = h - 1
    dx[2] = 0
    dy[2] = rand_int(wd.rng, 2, h - 2)
    dx[3] = w - 1
    dy[3] = rand_int(wd.rng, 2, h - 2)
    while n < 4:
        c = rand_color(wd)
        dup = False
        for q in range(n):
            dup = dup or cols[q] == c
        if dup:
            continue
        cols[n] = c
        n += 1
    for k in range(4):
        put(wd, dx[k], dy[k], T_DOOR, <uint8_t> cols[k], 1)
    if place_agent(wd, 0, 0, w, h, True):
        return 1
    k = rand_int(wd.rng, 0, 4)
    wd.a[A_X0] = dx[k]
    wd.a[A_X0 + 1] = dy[k]
    wd.a[A_MISSION] = cols[k]
    return 0


cdef int gen_gotoobject(World* wd, const int64_t* p) noexcept nogil:
    """GoToObjectEnv: p = numObjs (distinct type and colour); A_X0, A_X0 + 1: the target;
    mission code (type - T_KEY) * 6 + colour."""
    cdef int64_t n = 0, q, t, c, x = 0, y = 0
    cdef int64_t ot[18]
    cdef int64_t oc[18]
    cdef int64_t ox[18]
    cdef int64_t oy[18]
    cdef bint dup
    wall_rect(wd, 0, 0, wd.w, wd.h)
    while n < p[0]:
        t = T_KEY + rand_int(wd.rng, 0, 3)
        c = rand_color(wd)
        dup = False
        for q in range(n):
            dup = dup or (ot[q] == t and oc[q] == c)
        if dup:
            continue
        if place_obj(wd, <uint8_t> t, <uint8_t> c, 0, 0, 0, -1, -1, &x, &y):
            return 1
        ot[n] = t
        oc[n] = c
        ox[n] = x
        oy[n] = y
        n += 1
    if place_agent(wd, 0, 0, -1, -1, True):
        return 1
    q = rand_int(wd.rng, 0, n)
    wd.a[A_X0] = ox[q]
    wd.a[A_X0 + 1] = oy[q]
    wd.a[A_MISSION] = (ot[q] - T_KEY) * 6 + oc[q]
    return 0


cdef int gen_fetch(World* wd, const int64_t* p) noexcept nogil:
    """FetchEnv: p = numObjs (keys and balls); A_X0, A_X0 + 1: the target's type and
    colour; mission code syntax * 12 + (key 0, ball 1) * 6 + colour."""
    cdef int64_t n, t, c, x = 0, y = 0, q, syntax
    cdef int64_t tt = 0, tc = 0
    horz_wall(wd, 0, 0, -1)
    horz_wall(wd, 0, wd.h - 1, -1)
    vert_wall(wd, 0, 0, -1)
    vert_wall(wd, wd.w - 1, 0, -1)
    # the objects' (type, colour) are kept in the agent row's spare slots while drawing
    for n in range(p[0]):
        t = T_KEY + rand_int(wd.rng, 0, 2)
        c = rand_color(wd)
        if place_obj(wd, <uint8_t> t, <uint8_t> c, 0, 0, 0, -1, -1, &x, &y):
            return 1
        wd.a[A_X0 + 2 + 2 * n] = t
        wd.a[A_X0 + 3 + 2 * n] = c
    if place_agent(wd, 0, 0, -1, -1, True):
        return 1
    q = rand_int(wd.rng, 0, p[0])
    tt = wd.a[A_X0 + 2 + 2 * q]
    tc = wd.a[A_X0 + 3 + 2 * q]
    syntax = rand_int(wd.rng, 0, 5)
    wd.a[A_X0] = tt
    wd.a[A_X0 + 1] = tc
    wd.a[A_MISSION] = syntax * 12 + (tt - T_KEY) * 6 + tc
    return 0


cdef int gen_lockedroom(World* wd, const int64_t* p) noexcept nogil:
    """LockedRoomEnv: six rooms (L0, R0, L1, R1, L2, R2); mission code: the locked room's
    colour * 6 + the key room's colour."""
    cdef int64_t w = wd.w, h = wd.h, lw = wd.w // 2 - 2, rw = wd.w // 2 + 2
    cdef int64_t i, j, n, rh = wd.h // 3 + 1, rwid = wd.w // 2 - 1, locked, key, q, c
    cdef int64_t tx[6]
    cdef int64_t ty[6]
    cdef int64_t dx[6]
    cdef int64_t dy[6]
    cdef int64_t col[6]
    cdef uint8_t avail[6]
    cdef uint8_t used[6]
    for i in range(w):
        put(wd, i, 0, T_WALL, C_GREY, 0)
        put(wd, i, h - 1, T_WALL, C_GREY, 0)
    for j in range(h):
        put(wd, 0, j, T_WALL, C_GREY, 0)
        put(wd, w - 1, j, T_WALL, C_GREY, 0)
    for j in range(h):
        put(wd, lw, j, T_WALL, C_GREY, 0)
        put(wd, rw, j, T_WALL, C_GREY, 0)
    for n in range(3):
        j = n * (h // 3)
        for i in range(lw):
            put(wd, i, j, T_WALL, C_GREY, 0)
        for i in range(rw, w):
            put(wd, i, j, T_WALL, C_GREY, 0)
        tx[2 * n] = 0
        ty[2 * n] = j
        dx[2 * n] = lw
        dy[2 * n] = j + 3
        tx[2 * n + 1] = rw
        ty[2 * n + 1] = j
        dx[2 * n + 1] = rw
        dy[2 * n + 1] = j + 3
    locked = rand_int(wd.rng, 0, 6)
    i = rand_int(wd.rng, tx[locked] + 1, tx[locked] + rwid - 1)
    j = rand_int(wd.rng, ty[locked] + 1, ty[locked] + rh - 1)
    put(wd, i, j, T_GOAL, C_GREEN, 0)
    for q in range(6):
        used[q] = 0
    for n in range(6):
        # sorted(colours left): COLOR_NAMES order, less those taken
        c = 0
        for q in range(6):
            if not used[q]:
                avail[c] = <uint8_t> q
                c += 1
        q = avail[rand_int(wd.rng, 0, c)]
        used[q] = 1
        col[n] = NAME_COLOR[q]
        put(wd, dx[n], dy[n], T_DOOR, <uint8_t> col[n], 2 if n == locked else 1)
    while True:
        key = rand_int(wd.rng, 0, 6)
        if key != locked:
            break
    i = rand_int(wd.rng, tx[key] + 1, tx[key] + rwid - 1)
    j = rand_int(wd.rng, ty[key] + 1, ty[key] + rh - 1)
    put(wd, i, j, T_KEY, <uint8_t> col[locked], 0)
    if place_agent(wd, lw, 0, rw - lw, h, True):
        return 1
    wd.a[A_MISSION] = col[locked] * 6 + col[key]
    return 0


cdef int gen_putnear(World* wd, const int64_t* p) noexcept nogil:
    """PutNearEnv: p = numObjs (distinct, none within one cell of another); A_X0..: the
    object to move's type and colour, the target's position; mission code
    ((move type * 6 + colour) * 3 + target type) * 6 + colour (types from T_KEY)."""
    cdef int64_t n = 0, q, t, c, x, y, tries, hx = wd.w, hy = wd.h, mi, ti
    cdef int64_t ot[18]
    cdef int64_t oc[18]
    cdef int64_t ox[18]
    cdef int64_t oy[18]
    cdef bint dup, near
    horz_wall(wd, 0, 0, -1)
    horz_wall(wd, 0, wd.h - 1, -1)
    vert_wall(wd, 0, 0, -1)
    vert_wall(wd, wd.w - 1, 0, -1)
    while n < p[0]:
        t = T_KEY + rand_int(wd.rng, 0, 3)
        c = rand_color(wd)
        dup = False
        for q in range(n):
            dup = dup or (ot[q] == t and oc[q] == c)
        if dup:
            continue
        tries = 0
        while True:                       # place_obj(obj, reject_fn=near_obj)
            tries += 1
            if tries > MAX_TRIES:
                snprintf(wd.err, ERRMSG_LEN, "rejection sampling failed in place_obj")
                return 1
            x = rand_int(wd.rng, 0, hx)
            y = rand_int(wd.rng, 0, hy)
            if at(wd, x, y).type != T_NONE:
                continue
            if x == wd.a[A_X] and y == wd.a[A_Y]:
                continue
            near = False
            for q in range(n):
                near = near or (llabs(x - ox[q]) <= 1 and llabs(y - oy[q]) <= 1)
            if near:
                continue
            break
        put(wd, x, y, <uint8_t> t, <uint8_t> c, 0)
        ot[n] = t
        oc[n] = c
        ox[n] = x
        oy[n] = y
        n += 1
    if place_agent(wd, 0, 0, -1, -1, True):
        return 1
    mi = rand_int(wd.rng, 0, n)
    while True:
        ti = rand_int(wd.rng, 0, n)
        if ti != mi:
            break
    wd.a[A_X0] = ot[mi]
    wd.a[A_X0 + 1] = oc[mi]
    wd.a[A_X0 + 2] = ox[ti]
    wd.a[A_X0 + 3] = oy[ti]
    wd.a[A_MISSION] = (((ot[mi] - T_KEY) * 6 + oc[mi]) * 3 + ot[ti] - T_KEY) * 6 + oc[ti]
    return 0


cdef int gen_playground(World* wd, const int64_t* p) noexcept nogil:
    """PlaygroundEnv: 3 x 3 rooms with a door of a random colour in each inner wall, the
    agent, then 12 random objects."""
    cdef int64_t i, j, xl, yt, xr, yb, rw = wd.w // 3, rh = wd.h // 3, y, x, k, t, c
    cdef int64_t px = 0, py = 0
    horz_wall(wd, 0, 0, -1)
    horz_wall(wd, 0, wd.h - 1, -1)
    vert_wall(wd, 0, 0, -1)
    vert_wall(wd, wd.w - 1, 0, -1)
    for j in range(3):
        for i in range(3):
            xl = i * rw
            yt = j * rh
            xr = xl + rw
            yb = yt + rh
            if i + 1 < 3:
                vert_wall(wd, xr, yt, rh)
                y = rand_int(wd.rng, yt + 1, yb - 1)
                put(wd, xr, y, T_DOOR, rand_color(wd), 1)
            if j + 1 < 3:
                horz_wall(wd, xl, yb, rw)
                x = rand_int(wd.rng, xl + 1, xr - 1)
                put(wd, x, yb, T_DOOR, rand_color(wd), 1)
    if place_agent(wd, 0, 0, -1, -1, True):
        return 1
    for k in range(12):
        t = T_KEY + rand_int(wd.rng, 0, 3)
        c = rand_color(wd)
        if place_obj(wd, <uint8_t> t, <uint8_t> c, 0, 0, 0, -1, -1, &px, &py):
            return 1
    return 0


cdef int om_door(World* wd, RoomGrid* rg, int64_t i, int64_t j, int64_t k, int64_t c,
                 bint locked, bint blocked) noexcept nogil:
    """ObstructedMazeEnv.add_door's door (RoomGrid.add_door) and blocking ball (green)."""
    cdef Room* m = &rg.r[j * rg.cols + i]
    rg_add_door(wd, rg, i, j, k, <int> c, locked)
    if blocked:
        put(wd, m.dpx[k] - DX[k], m.dpy[k] - DY[k], T_BALL, C_GREEN, 0)
    return 0


cdef int om_key(World* wd, RoomGrid* rg, int64_t i, int64_t j, int64_t c,
                bint in_box) noexcept nogil:
    """The key of colour c, in a grey box when in_box, placed in room (i, j)."""
    if not in_box:
        return rg_add_object(wd, rg, i, j, T_KEY, <int> c)
    if rg_add_object(wd, rg, i, j, T_BOX, C_GREY):
        return 1
    at(wd, wd.last_x, wd.last_y).ctype = T_KEY
    at(wd, wd.last_x, wd.last_y).ccolor = <uint8_t> c
    return 0


cdef int gen_obstructed(World* wd, const int64_t* p) noexcept nogil:
    """ObstructedMaze: p = variant (0: 1Dlhb, 1: Full, 2: Full_V1), key_in_box, blocked,
    num_quarters, agent room i, j. The blue ball to pick up is tagged."""
    cdef RoomGrid rg
    cdef int64_t dc[6]
    cdef uint8_t used[6]
    cdef int64_t n, q, c, idx, i, k, si, sj, ball
    cdef int64_t SIDE_I[4]
    cdef int64_t SIDE_J[4]
    cdef int64_t CORNER_I[4]
    cdef int64_t CORNER_J[4]
    SIDE_I[:] = [2, 1, 0, 1]
    SIDE_J[:] = [1, 2, 1, 0]
    CORNER_I[:] = [2, 2, 0, 0]
    CORNER_J[:] = [0, 2, 2, 0]
    rg.rows = 1 if p[0] == 0 else 3
    rg.cols = 2 if p[0] == 0 else 3
    rg.rs = 6
    rg_gen(wd, &rg)
    # _rand_subset(COLOR_NAMES, 6): one draw from the names left, each in turn
    for q in range(6):
        used[q] = 0
    for n in range(6):
        idx = rand_int(wd.rng, 0, 6 - n)
        c = -1
        for q in range(6):
            if not used[q]:
                c += 1
                if c == idx:
                    used[q] = 1
                    dc[n] = NAME_COLOR[q]
                    break
    if p[0] == 0:
        om_door(wd, &rg, 0, 0, 0, dc[0], True, p[2] != 0)
        if om_key(wd, &rg, 0, 0, dc[0], p[1] != 0):
            return 1
        if rg_add_object(wd, &rg, 1, 0, T_BALL, C_BLUE, 1):
            return 1
        return rg_place_agent(wd, &rg, 0, 0)
    for i in range(p[3]):
        si = SIDE_I[i]
        sj = SIDE_J[i]
        om_door(wd, &rg, 1, 1, i, dc[i], False, False)
        for k in range(-1, 2, 2):
            om_door(wd, &rg, si, sj, (i + k + 4) % 4, dc[(i + k + 6) % 6], True, p[2] != 0)
            if p[0] == 1 and om_key(wd, &rg, si, sj, dc[(i + k + 6) % 6], p[1] != 0):
                return 1
        if p[0] == 2:
            for k in range(-1, 2, 2):
                if om_key(wd, &rg, si, sj, dc[(i + k + 6) % 6], p[1] != 0):
                    return 1
    ball = rand_int(wd.rng, 0, p[3])
    if rg_add_object(wd, &rg, CORNER_I[ball], CORNER_J[ball], T_BALL, C_BLUE, 1):
        return 1
    return rg_place_agent(wd, &rg, p[4], p[5])


cdef int generate(int kind, World* wd, const int64_t* p) noexcept nogil:
    if kind == K_EMPTY:
        return gen_empty(wd, p)
    if kind == K_DOORKEY:
        return gen_doorkey(wd, p)
    if kind == K_FOURROOMS:
        return gen_fourrooms(wd, p)
    if kind == K_LAVAGAP:
        return gen_lavagap(wd, p)
    if kind == K_CROSSING:
        wd.a[A_MISSION] = p[1] == T_WALL
        return gen_crossing(wd, p)
    if kind == K_UNLOCK:
        return gen_unlock(wd, p)
    if kind == K_MEMORY:
        return gen_memory(wd, p)
    if kind == K_KEYCORRIDOR:
        return gen_keycorridor(wd, p)
    if kind == K_MULTIROOM:
        return gen_multiroom(wd, p)
    if kind == K_GOTOLOCAL:
        return gen_babyai(wd, p)
    if kind == K_DISTSHIFT:
        return gen_distshift(wd, p)
    if kind == K_REDBLUE:
        return gen_redblue(wd, p)
    if kind == K_UNLOCKPICKUP or kind == K_BLOCKEDUNLOCK:
        return gen_unlockpickup(wd, p, kind == K_BLOCKEDUNLOCK)
    if kind == K_DYNOBS:
        return gen_dynobs(wd, p)
    if kind == K_GOTODOOR:
        return gen_gotodoor(wd, p)
    if kind == K_GOTOOBJECT:
        return gen_gotoobject(wd, p)
    if kind == K_FETCH:
        return gen_fetch(wd, p)
    if kind == K_LOCKEDROOM:
        return gen_lockedroom(wd, p)
    if kind == K_PUTNEAR:
        return gen_putnear(wd, p)
    if kind == K_PLAYGROUND:
        return gen_playground(wd, p)
    if kind == K_OBSTRUCTED:
        return gen_obstructed(wd, p)
    snprintf(wd.err, ERRMSG_LEN, "unknown MiniGrid generator %d", kind)
    return 1


# ---------------------------------------------------------------------- the observation
cdef inline uint8_t* emit(uint8_t* img, uint8_t t, uint8_t c, uint8_t st,
                          bint hot) noexcept nogil:
    """One cell's encoding (type, colour, state) at img, or OneHotPartialObsWrapper's bits
    (type, N_TYPES + colour, N_TYPES + N_COLORS + state); the next cell's address."""
    if not hot:
        img[0] = t
        img[1] = c
        img[2] = st
        return img + 3
    memset(img, 0, N_TYPES + N_COLORS + N_STATES)
    img[t] = 1
    img[N_TYPES + c] = 1
    img[N_TYPES + N_COLORS + st] = 1
    return img + N_TYPES + N_COLORS + N_STATES


cdef inline uint8_t* emit_cell(uint8_t* img, const Cell* c, bint hot) noexcept nogil:
    """WorldObj.encode (None: empty; only a door has a state)."""
    if c.type == T_NONE:
        return emit(img, T_EMPTY, 0, 0, hot)
    return emit(img, c.type, c.color, c.state if c.type == T_DOOR else 0, hot)


cdef double goal_slope(World* wd) noexcept nogil:
    """DirectionObsWrapper(type="slope"): dy / dx from the agent to the first Goal in
    row-major order (0 at the goal; signed infinity for dx 0). No goal moves, so the cell
    found now is the one the wrapper found at reset (the registration refuses ids without
    a goal)."""
    cdef int64_t q, dx, dy
    for q in range(wd.w * wd.h):
        if wd.g[q].type == T_GOAL:
            dx = q % wd.w - wd.a[A_X]
            dy = q // wd.w - wd.a[A_Y]
            if dx == 0 and dy == 0:
                return 0.0
            if dx == 0:
                return INFINITY if dy > 0 else -INFINITY
            return <double> dy / <double> dx
    return NAN


# ---------------------------------------------------------------------------- the pool
cdef class MiniGridPool(Engine):
    """num_envs MiniGrid envs of one generator (cypool.api pool; described by
    cypool.minigrid.registration)."""
    cdef readonly object actions, grids, agents, carried, config, scratch, targets
    cdef const int64_t* act
    cdef Cell* g
    cdef int64_t* a
    cdef Cell* carry
    cdef const int64_t* cfg
    cdef uint8_t* vis
    cdef uint8_t* marks
    cdef readonly int kind, obs_mode
    cdef readonly int64_t width, height, view
    cdef int o_dir, o_goal, o_img, o_mis
    cdef readonly object acounts, pcounts
    cdef int64_t* acnt
    cdef int64_t* pcnt
    cdef int64_t astride, pstride
    cdef int n_bonus
    cdef int bkind[MAX_BONUS]
    cdef double bscale[MAX_BONUS]
    cdef int64_t bmask[MAX_BONUS]   # NoDeath's types (bit OBJECT_TO_IDX)
    cdef int bstage[MAX_BONUS]      # the action it sees: acts[bstage] (see env_step)
    cdef int n_stoch                # StochasticActionWrappers, outermost first
    cdef double sprob[MAX_BONUS]
    cdef int64_t sact[MAX_BONUS]    # random_action (-1: integers(n_actions))
    cdef readonly int64_t n_actions, oview
    cdef readonly object reseeds, seed_states, seed_gen
    cdef int64_t* ridx              # per env: ReseedWrapper's next index
    cdef const uint8_t* sstates     # per seed: PCG64(SeedSequence(seed))'s state bytes
    cdef int64_t n_seeds, vstride
    cdef readonly object flat_table, word_table
    cdef const uint8_t* ftab        # per mission code: FlatObsWrapper's mission bytes
    cdef const int64_t* wtab        # per mission code: DictObservationSpaceWrapper's words
    cdef int64_t frow, wrow, n_mis, img_bytes
    cdef void* pcg_next             # PCG64's next_uint64 (the envs' generator must be one)
    cdef readonly object highlights, obs_tiles
    cdef uint8_t* hl                # per env: RGBImgObsWrapper's highlight (the env's kwarg)
    cdef const uint8_t* otiles      # the RGB wrappers' tiles (_tiles.tiles(ots))
    cdef readonly int64_t ots
    cdef uint16_t lut[10 * N_COLORS * N_STATES]
    state_arrays = ("grids", "agents", "carried", "targets", "acounts", "pcounts", "reseeds")

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        """kwargs: the pool's complete kwargs plus "_kind", "_width", "_height", "_config"
        (the registration's; cypool.minigrid.registration.build)."""
        v = int(kwargs["agent_view_size"])
        self.kind = int(kwargs["_kind"])
        self.width = int(kwargs["_width"])
        self.height = int(kwargs["_height"])
        self.view = v
        self.oview = int(kwargs.get("_obs_view", v))     # ViewSizeWrapper's (encoded image)
        mode = self.obs_mode = int(kwargs.get("_obs", 0))
        if mode & O_FULL and mode & O_ONEHOT:     # the agent's direction: 4 states, 3 bits
            raise ValueError("MiniGridPool: no one-hot encoding of the full grid")
        shape = (self.width, self.height) if mode & O_FULL else (self.oview, self.oview)
        shape += (N_TYPES + N_COLORS + N_STATES if mode & O_ONEHOT else 3,)
        self.ots = int(kwargs.get("_rgb_tile", 0))
        if mode & (O_RGB | O_POV):
            from cypool.minigrid._tiles import tiles

            if mode & (O_FULL | O_ONEHOT) or (mode & O_RGB and mode & O_POV):
                raise ValueError("MiniGridPool: one image mode at a time")
            self.obs_tiles = tiles(self.ots)
            self.otiles = <const uint8_t*> cnp.PyArray_DATA(self.obs_tiles)
            t = self.ots
            shape = ((self.height * t, self.width * t, 3) if mode & O_RGB
                     else (v * t, v * t, 3))
        from cypool.minigrid._tiles import LUT

        for k, x in enumerate(LUT.ravel().tolist()):
            self.lut[k] = x
        idt = np.uint8
        if mode & O_SYM:
            if mode & (O_FULL | O_ONEHOT | O_RGB | O_POV | O_FLAT):
                raise ValueError("MiniGridPool: one image mode at a time")
            shape, idt = (self.width, self.height, 3), np.int64
        self.img_bytes = int(np.prod(shape))
        self.frow = self.wrow = self.n_mis = 0
        cdef cnp.ndarray tab
        if mode & O_FLAT:
            self.flat_table = tab = np.ascontiguousarray(kwargs["_flat"], np.uint8)
            self.n_mis, self.frow = tab.shape[0], tab.shape[1]
            self.ftab = <const uint8_t*> cnp.PyArray_DATA(tab)
        if mode & O_WORDS:
            self.word_table = tab = np.ascontiguousarray(kwargs["_words"], np.int64)
            self.n_mis, self.wrow = tab.shape[0], tab.shape[1]
            self.wtab = <const int64_t*> cnp.PyArray_DATA(tab)
        if mode & O_FLAT:
            outputs = [("obs", (self.img_bytes + self.frow,), np.uint8)]
        elif mode & O_IMG:
            outputs = [("obs", shape, idt)]
        else:
            outputs = [("obs", (), np.int64)]
            if mode & O_GOAL:
                outputs.append(("obs.goal_direction", (), np.float64))
            # BabyAI: two words (the second: LevelGen's sequences of Ands)
            outputs += [("obs.image", shape, idt),
                        ("obs.mission", (self.wrow,) if mode & O_WORDS else
                         (2,) if self.kind == K_GOTOLOCAL else (), np.int64)]
        names = [o[0] for o in outputs]
        self.o_img = names.index("obs" if mode & (O_IMG | O_FLAT) else "obs.image")
        self.o_dir = names.index("obs") if not mode & (O_IMG | O_FLAT) else -1
        self.o_goal = names.index("obs.goal_direction") if "obs.goal_direction" in names else -1
        self.o_mis = names.index("obs.mission") if "obs.mission" in names else -1
        self._init_engine(num_envs, num_threads, max_episode_steps, outputs, 0)
        self.actions = np.zeros(num_envs, np.int64)
        self.grids = np.zeros((num_envs, self.height * self.width, sizeof(Cell)), np.uint8)
        self.agents = np.zeros((num_envs, A_W), np.int64)
        self.carried = np.zeros((num_envs, sizeof(Cell)), np.uint8)
        self.config = np.zeros((num_envs, P_W), np.int64)
        self.vstride = max(v, self.oview) ** 2
        self.scratch = np.zeros((num_envs, self.vstride), np.uint8)
        self.targets = np.zeros((num_envs, self.height * self.width), np.uint8)
        self.marks = <uint8_t*> cnp.PyArray_DATA(self.targets)
        self.act = <const int64_t*> cnp.PyArray_DATA(self.actions)
        self.g = <Cell*> cnp.PyArray_DATA(self.grids)
        self.a = <int64_t*> cnp.PyArray_DATA(self.agents)
        self.carry = <Cell*> cnp.PyArray_DATA(self.carried)
        self.cfg = <const int64_t*> cnp.PyArray_DATA(self.config)
        self.vis = <uint8_t*> cnp.PyArray_DATA(self.scratch)
        self.highlights = np.ones(num_envs, np.uint8)
        self.hl = <uint8_t*> cnp.PyArray_DATA(self.highlights)
        bonus = list(kwargs.get("_bonus", ()))
        if len(bonus) > MAX_BONUS:
            raise ValueError(f"MiniGridPool: at most {MAX_BONUS} bonus wrappers")
        self.n_bonus = len(bonus)
        for k, item in enumerate(bonus):
            b, scale, mask, stage = (tuple(item) + (0, 0))[:4]
            self.bkind[k] = int(b)
            self.bscale[k] = float(scale)
            self.bmask[k] = int(mask)
            self.bstage[k] = int(stage)
        kinds = [int(item[0]) for item in bonus]
        self.n_actions = int(kwargs.get("_n_actions", 7))
        stoch = list(kwargs.get("_stochastic", ()))
        if len(stoch) > MAX_BONUS:
            raise ValueError(f"MiniGridPool: at most {MAX_BONUS} stochastic action wrappers")
        self.n_stoch = len(stoch)
        for k, (prob, ra) in enumerate(stoch):
            self.sprob[k] = float(prob)
            self.sact[k] = int(ra)
        for k in range(self.n_bonus):
            if not 0 <= self.bstage[k] <= self.n_stoch:
                raise ValueError("MiniGridPool: a reward wrapper's action stage is out of range")
        reseed = kwargs.get("_reseed")
        seeds, start = reseed if reseed is not None else ((), 0)
        self.n_seeds = len(seeds)
        self.seed_states = np.zeros((max(len(seeds), 1), PCG_BYTES), np.uint8)
        self.seed_gen = np.random.PCG64(0)
        cdef bitgen_t* tb = <bitgen_t*> PyCapsule_GetPointer(self.seed_gen.capsule,
                                                             "BitGenerator")
        self.pcg_next = <void*> tb.next_uint64
        cdef cnp.ndarray ss = self.seed_states
        cdef uint8_t* sp = <uint8_t*> cnp.PyArray_DATA(ss)
        for k, sd in enumerate(seeds):      # gymnasium's reset(seed=sd): a fresh PCG64
            self.seed_gen = np.random.PCG64(np.random.SeedSequence(int(sd)))
            tb = <bitgen_t*> PyCapsule_GetPointer(self.seed_gen.capsule, "BitGenerator")
            memcpy(sp + <Py_ssize_t> k * PCG_BYTES, (<PCGState*> tb.state).pcg_state,
                   PCG_BYTES)
        self.sstates = sp
        self.reseeds = np.full(num_envs, start, np.int64)
        self.ridx = <int64_t*> cnp.PyArray_DATA(self.reseeds)
        cells = self.width * self.height
        self.astride = cells * 4 * 7 if B_ACTION in kinds else 0
        self.pstride = cells if B_POSITION in kinds else 0
        self.acounts = np.zeros((num_envs, self.astride), np.int64)
        self.pcounts = np.zeros((num_envs, self.pstride), np.int64)
        self.acnt = <int64_t*> cnp.PyArray_DATA(self.acounts)
        self.pcnt = <int64_t*> cnp.PyArray_DATA(self.pcounts)
        self.configure(np.arange(num_envs, dtype=np.int64), kwargs)

    def _family_signature(self):
        return (self.kind, self.width, self.height, self.obs_mode, self.ots,
                tuple(self.bkind[k] for k in range(self.n_bonus)),
                tuple(self.bscale[k] for k in range(self.n_bonus)),
                tuple(self.bmask[k] for k in range(self.n_bonus)),
                tuple(self.bstage[k] for k in range(self.n_bonus)), self.oview,
                tuple((self.sprob[k], self.sact[k]) for k in range(self.n_stoch)),
                self.n_seeds, bytes(self.seed_states),
                None if self.flat_table is None else self.flat_table.tobytes(),
                None if self.word_table is None else self.word_table.tobytes())

    def configure(self, ids, kwargs):
        """Envs ids take the config row kwargs["_config"] (max_steps, see_through_walls, the
        generator's parameters: cypool.minigrid.registration) and kwargs["_highlight"]."""
        row = np.asarray(kwargs["_config"], np.int64)
        self.config[np.asarray(ids, np.int64), :row.size] = row
        self.highlights[np.asarray(ids, np.int64)] = bool(kwargs.get("_highlight", True))

    cdef inline void world(self, Py_ssize_t i, EnvRow* r, World* wd) noexcept nogil:
        wd.g = self.g + i * self.width * self.height
        wd.a = self.a + i * A_W
        wd.carry = self.carry + i
        wd.rng = r.rng
        wd.w = self.width
        wd.h = self.height
        wd.err = r.err
        wd.marks = self.marks + i * self.width * self.height

    cdef uint8_t* vis_mask(self, Py_ssize_t i, World* wd, int64_t v) noexcept nogil:
        """Grid.process_vis of env i's view of size v (all ones with see_through_walls),
        m[x * v + y] for view cell (x, y), in env i's scratch row."""
        cdef int64_t hs = v // 2
        cdef int64_t d = wd.a[A_DIR], ax = wd.a[A_X], ay = wd.a[A_Y]
        cdef int64_t dx = DX[d], dy = DY[d], rx = -DY[d], ry = DX[d]
        cdef uint8_t* m = self.vis + i * self.vstride
        cdef int64_t x, y
        if self.cfg[i * P_W + P_SEE] != 0:
            memset(m, 1, v * v)
            return m
        memset(m, 0, v * v)
        m[hs * v + v - 1] = 1
        for y in range(v - 1, -1, -1):
            for x in range(v - 1):
                if not m[x * v + y]:
                    continue
                if not see_behind(self.view_cell(wd, x, y, ax, ay, dx, dy, rx, ry, v)):
                    continue
                m[(x + 1) * v + y] = 1
                if y > 0:
                    m[(x + 1) * v + y - 1] = 1
                    m[x * v + y - 1] = 1
            for x in range(v - 1, 0, -1):
                if not m[x * v + y]:
                    continue
                if not see_behind(self.view_cell(wd, x, y, ax, ay, dx, dy, rx, ry, v)):
                    continue
                m[(x - 1) * v + y] = 1
                if y > 0:
                    m[(x - 1) * v + y - 1] = 1
                    m[x * v + y - 1] = 1
        return m

    cdef void gen_obs(self, Py_ssize_t i, World* wd) noexcept nogil:
        """MiniGridEnv.gen_obs: the view's cells (grid slice rotated so that the agent is at
        (v // 2, v - 1) facing up; outside the grid a grey wall), process_vis unless
        see_through_walls, the carried object at the agent's cell, encoded [x, y, :]; or the
        RGB wrappers' frame. The encoded view is ViewSizeWrapper's size (oview); the frames
        and their highlight the env's agent_view_size (view), as minigrid."""
        cdef int64_t v = self.oview, hs = self.oview // 2
        cdef int64_t d = wd.a[A_DIR], ax = wd.a[A_X], ay = wd.a[A_Y]
        cdef int64_t dx = DX[d], dy = DY[d], rx = -DY[d], ry = DX[d]
        cdef uint8_t* m
        cdef uint8_t* img = <uint8_t*> self.output_row(self.o_img, i)
        cdef const Cell* c
        cdef bint hot = (self.obs_mode & O_ONEHOT) != 0
        cdef int64_t x, y, q
        cdef int64_t* sym
        if self.o_dir >= 0:
            (<int64_t*> self.output_row(self.o_dir, i))[0] = d
        q = wd.a[A_MISSION]
        if self.o_mis >= 0 and self.wrow:        # the mission's word row (zeros: no code)
            if 0 <= q < self.n_mis:
                memcpy(self.output_row(self.o_mis, i), self.wtab + q * self.wrow,
                       self.wrow * sizeof(int64_t))
            else:
                memset(self.output_row(self.o_mis, i), 0, self.wrow * sizeof(int64_t))
        elif self.o_mis >= 0:
            (<int64_t*> self.output_row(self.o_mis, i))[0] = q
            if self.kind == K_GOTOLOCAL:         # BabyAI's second word (LevelGen's Ands)
                (<int64_t*> self.output_row(self.o_mis, i))[1] = wd.a[I_MIS2]
        if self.frow:                            # after the image: the mission's one-hot
            if 0 <= q < self.n_mis:
                memcpy(img + self.img_bytes, self.ftab + q * self.frow, self.frow)
            else:
                memset(img + self.img_bytes, 0, self.frow)
        if self.o_goal >= 0:
            (<double*> self.output_row(self.o_goal, i))[0] = goal_slope(wd)
        if self.obs_mode & O_SYM:
            # SymbolicObsWrapper: [x, y] = (x, y, OBJECT_TO_IDX or -1), the agent's cell 10
            sym = <int64_t*> img
            for x in range(wd.w):
                for y in range(wd.h):
                    sym[0] = x
                    sym[1] = y
                    c = at(wd, x, y)
                    sym[2] = (T_AGENT if x == ax and y == ay else
                              -1 if c.type == T_NONE else c.type)
                    sym += 3
            return
        if self.obs_mode & O_FULL:
            # FullyObsWrapper: Grid.encode() indexed [x, y], the agent's cell overwritten
            for x in range(wd.w):
                for y in range(wd.h):
                    if x == ax and y == ay:
                        img = emit(img, T_AGENT, C_RED, <uint8_t> d, hot)
                    else:
                        img = emit_cell(img, at(wd, x, y), hot)
            return
        if self.obs_mode & (O_RGB | O_POV):
            m = self.vis_mask(i, wd, self.view)
        else:
            m = self.vis_mask(i, wd, v)
        if self.obs_mode & O_RGB:
            self.draw_full(wd, m, img, self.otiles, self.ots, self.hl[i] != 0)
            return
        if self.obs_mode & O_POV:
            self.draw_pov(wd, m, img, self.otiles, self.ots)
            return
        for x in range(v):
            for y in range(v):
                if not m[x * v + y]:
                    img = emit(img, 0, 0, 0, hot)
                else:
                    if x == hs and y == v - 1:
                        c = wd.carry
                    else:
                        c = self.view_cell(wd, x, y, ax, ay, dx, dy, rx, ry, v)
                    img = emit_cell(img, c, hot)

    cdef inline int64_t tile_of(self, const Cell* c) noexcept nogil:
        """The object's tile in _tiles' table (0: nothing)."""
        if c.type < T_WALL or c.type > T_LAVA or c.color >= N_COLORS:
            return 0
        return self.lut[(c.type * N_COLORS + c.color) * N_STATES
                        + (c.state if c.state < N_STATES else 0)]

    cdef inline void blit(self, uint8_t* out, int64_t stride, int64_t col, int64_t row,
                          const uint8_t* tab, int64_t ts, int64_t obj, int64_t agent,
                          bint hl) noexcept nogil:
        """Tile (obj, agent, hl) of tab at the frame's cell (col, row); stride: a pixel
        row's bytes."""
        cdef const uint8_t* src = tab + ((obj * N_AGENT + agent) * 2 + hl) * ts * ts * 3
        cdef uint8_t* dst = out + row * ts * stride + col * ts * 3
        cdef int64_t k
        for k in range(ts):
            memcpy(dst + k * stride, src + k * ts * 3, ts * 3)

    cdef void draw_full(self, World* wd, const uint8_t* m, uint8_t* out, const uint8_t* tab,
                        int64_t ts, bint highlight) noexcept nogil:
        """get_full_render: the (h * ts, w * ts, 3) frame of the grid, the agent's triangle
        on its cell, the cells its view sees (m) highlighted when highlight."""
        cdef int64_t v = self.view, hs = self.view // 2, x, y, f, s, vx, vy
        cdef int64_t d = wd.a[A_DIR], ax = wd.a[A_X], ay = wd.a[A_Y]
        cdef int64_t dx = DX[d], dy = DY[d], rx = -DY[d], ry = DX[d]
        cdef int64_t stride = wd.w * ts * 3
        cdef bint hl
        for y in range(wd.h):
            for x in range(wd.w):
                hl = False
                if highlight:
                    # the view cell (vx, vy) at world (x, y): x - ax = dx * f + rx * s, ...
                    f = (x - ax) * dx + (y - ay) * dy
                    s = (x - ax) * rx + (y - ay) * ry
                    vx = s + hs
                    vy = v - 1 - f
                    hl = 0 <= vx < v and 0 <= vy < v and m[vx * v + vy] != 0
                self.blit(out, stride, x, y, tab, ts, self.tile_of(at(wd, x, y)),
                          1 + d if x == ax and y == ay else 0, hl)

    cdef void draw_pov(self, World* wd, const uint8_t* m, uint8_t* out, const uint8_t* tab,
                       int64_t ts) noexcept nogil:
        """get_pov_render: the (v * ts, v * ts, 3) frame of the view (cells m hides empty),
        the carried object under the agent facing up at (v // 2, v - 1), every cell m shows
        highlighted (whatever highlight says, as minigrid)."""
        cdef int64_t v = self.view, hs = self.view // 2, x, y, obj
        cdef int64_t d = wd.a[A_DIR], ax = wd.a[A_X], ay = wd.a[A_Y]
        cdef int64_t dx = DX[d], dy = DY[d], rx = -DY[d], ry = DX[d]
        cdef int64_t stride = v * ts * 3
        for y in range(v):
            for x in range(v):
                if x == hs and y == v - 1:
                    self.blit(out, stride, x, y, tab, ts, self.tile_of(wd.carry), 1 + 3,
                              m[x * v + y] != 0)
                elif not m[x * v + y]:
                    self.blit(out, stride, x, y, tab, ts, 0, 0, False)
                else:
                    obj = self.tile_of(self.view_cell(wd, x, y, ax, ay, dx, dy, rx, ry, v))
                    self.blit(out, stride, x, y, tab, ts, obj, 0, True)

    def agent_pos(self, ids):
        """The agents' (x, y) of envs ids (an (n, 2) int64 copy): minigrid's agent_pos."""
        return np.asarray(self.agents)[np.asarray(ids, np.int64)][:, A_X:A_Y + 1].copy()

    def render_frames(self, ids, int64_t tile_size, bint highlight, bint agent_pov):
        """minigrid's render() of envs ids (rgb_array): (len(ids), H, W, 3) uint8, the full
        frame (get_full_render) or the agent's view (agent_pov)."""
        from cypool.minigrid._tiles import tiles

        cdef cnp.ndarray idx = np.ascontiguousarray(ids, np.int64)
        cdef const int64_t* ip = <const int64_t*> cnp.PyArray_DATA(idx)
        cdef Py_ssize_t n = idx.shape[0], k, i
        cdef int64_t v = self.view
        table = tiles(tile_size)
        cdef const uint8_t* tab = <const uint8_t*> cnp.PyArray_DATA(table)
        shape = (v * tile_size, v * tile_size) if agent_pov else (
            self.height * tile_size, self.width * tile_size)
        out = np.empty((n, shape[0], shape[1], 3), np.uint8)
        cdef uint8_t* o = <uint8_t*> cnp.PyArray_DATA(out)
        cdef Py_ssize_t size = shape[0] * shape[1] * 3
        cdef World wd
        cdef uint8_t* m
        for k in range(n):
            if ip[k] < 0 or ip[k] >= self.num_envs:
                raise IndexError(f"env {ip[k]} is not in 0..{self.num_envs - 1}")
            if not 0 <= self.a[ip[k] * A_W + A_DIR] <= 3:
                raise RuntimeError(f"env {ip[k]} has not been reset: nothing to render")
        with nogil:
            for k in range(n):
                i = ip[k]
                self.view_world(i, &wd)
                m = self.vis_mask(i, &wd, v)
                if agent_pov:
                    self.draw_pov(&wd, m, o + k * size, tab, tile_size)
                else:
                    self.draw_full(&wd, m, o + k * size, tab, tile_size, highlight)
        return list(out)

    cdef inline void view_world(self, Py_ssize_t i, World* wd) noexcept nogil:
        """Env i's world for drawing (no stream, no error buffer)."""
        wd.g = self.g + i * self.width * self.height
        wd.a = self.a + i * A_W
        wd.carry = self.carry + i
        wd.rng = NULL
        wd.w = self.width
        wd.h = self.height
        wd.err = NULL
        wd.marks = self.marks + i * self.width * self.height

    cdef inline const Cell* view_cell(self, World* wd, int64_t x, int64_t y, int64_t ax,
                                      int64_t ay, int64_t dx, int64_t dy, int64_t rx,
                                      int64_t ry, int64_t v) noexcept nogil:
        cdef int64_t f = v - 1 - y, s = x - v // 2
        cdef int64_t wx = ax + dx * f + rx * s, wy = ay + dy * f + ry * s
        if wx < 0 or wy < 0 or wx >= wd.w or wy >= wd.h:
            return &WALL_CELL
        return at(wd, wx, wy)

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef World wd
        cdef const int64_t* p = self.cfg + i * P_W
        cdef PCGState* st
        self.row_of(i, &r)
        if self.n_seeds:        # ReseedWrapper: reset(seed=seeds[idx]), idx cycling
            if r.rng == NULL or <void*> r.rng.next_uint64 != self.pcg_next:
                snprintf(r.err, ERRMSG_LEN, "ReseedWrapper: the env's generator is not PCG64")
                return ST_ENGINE_ERROR
            st = <PCGState*> r.rng.state
            memcpy(st.pcg_state, self.sstates + self.ridx[i] * PCG_BYTES, PCG_BYTES)
            st.has_uint32 = 0
            st.uinteger = 0
            self.ridx[i] = (self.ridx[i] + 1) % self.n_seeds
        self.world(i, &r, &wd)
        memset(wd.g, 0, wd.w * wd.h * sizeof(Cell))
        memset(wd.carry, 0, sizeof(Cell))
        wd.a[A_X] = -1
        wd.a[A_Y] = -1
        wd.a[A_DIR] = -1
        wd.a[A_MISSION] = 0
        if generate(self.kind, &wd, p + P_0):
            return ST_ENGINE_ERROR
        wd.a[A_STEPS] = 0
        wd.a[A_MAX] = p[P_MAX]
        if self.kind == K_GOTOLOCAL and p[P_MAX] < 0:  # RoomGridLevel: per instruction
            wd.a[A_MAX] = -p[P_MAX] * wd.a[I_NAVS]
        self.gen_obs(i, &wd)
        if self.kind == K_GOTOLOCAL:
            babyai_start(&wd)
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef World wd
        cdef int64_t a = self.act[i], fx, fy, d, q
        cdef int64_t* cnt
        cdef int b
        cdef int64_t acts[MAX_BONUS + 1]
        cdef bint dying[MAX_BONUS]
        cdef const Cell* cur
        cdef bint not_clear = False, red0 = False, blue0 = False, red1, blue1
        cdef bint carried0 = False
        cdef Cell* f
        cdef Cell* k
        self.row_of(i, &r)
        if a < 0 or a > 6:
            snprintf(r.err, ERRMSG_LEN, "action %lld is not in 0..6", <long long> a)
            return ST_ENGINE_ERROR
        # StochasticActionWrappers, outermost first, each drawing from the env's np_random
        # (gymnasium's Wrapper.np_random): random() < prob keeps the action, else
        # random_action or integers(n); acts[k]: the action after the k outermost
        acts[0] = a
        for b in range(self.n_stoch):
            if random_standard_uniform(r.rng) < self.sprob[b]:
                acts[b + 1] = acts[b]
            elif self.sact[b] >= 0:
                acts[b + 1] = self.sact[b]
            else:
                acts[b + 1] = rand_int(r.rng, 0, self.n_actions)
        a = acts[self.n_stoch]
        self.world(i, &r, &wd)
        # NoDeath: forward (the action it sees) into a listed type, read before the step
        d = wd.a[A_DIR]
        fx = wd.a[A_X] + DX[d]
        fy = wd.a[A_Y] + DY[d]
        for b in range(self.n_bonus):
            dying[b] = False
            if (self.bkind[b] == B_NODEATH and acts[self.bstage[b]] == 2
                    and 0 <= fx < wd.w and 0 <= fy < wd.h):
                f = at(&wd, fx, fy)
                dying[b] = f.type != T_NONE and (self.bmask[b] >> f.type) & 1
        if self.kind == K_MEMORY and a == 3:    # MemoryEnv: pickup acts as toggle
            a = 5
        k = wd.carry
        wd.a[A_STEPS] += 1
        r.rew[0] = 0.0
        r.term[0] = 0
        d = wd.a[A_DIR]
        fx = wd.a[A_X] + DX[d]
        fy = wd.a[A_Y] + DY[d]
        if fx < 0 or fy < 0 or fx >= wd.w or fy >= wd.h:   # minigrid's Grid.get asserts
            snprintf(r.err, ERRMSG_LEN, "the agent faces (%lld, %lld), outside the grid",
                     <long long> fx, <long long> fy)
            return ST_ENGINE_ERROR
        f = at(&wd, fx, fy)
        carried0 = wd.carry.type != T_NONE
        if self.kind == K_DYNOBS:
            not_clear = f.type != T_NONE and f.type != T_GOAL
            move_obstacles(&wd, self.cfg[i * P_W + P_0 + 3])
        elif self.kind == K_REDBLUE:
            red0 = at(&wd, wd.a[A_X0], wd.a[A_X0 + 1]).state == 0
            blue0 = at(&wd, wd.a[A_X0 + 2], wd.a[A_X0 + 3]).state == 0
        if a == 0:                              # left
            wd.a[A_DIR] = (d + 3) % 4
        elif a == 1:                            # right
            wd.a[A_DIR] = (d + 1) % 4
        elif a == 2:                            # forward
            if (f.type == T_NONE or f.type == T_GOAL or f.type == T_FLOOR
                    or f.type == T_LAVA or (f.type == T_DOOR and f.state == 0)):
                wd.a[A_X] = fx
                wd.a[A_Y] = fy
            if f.type == T_GOAL:
                r.term[0] = 1
                r.rew[0] = 1.0 - 0.9 * (<double> wd.a[A_STEPS] / <double> wd.a[A_MAX])
            elif f.type == T_LAVA:
                r.term[0] = 1
        elif a == 3:                            # pickup
            if (f.type == T_KEY or f.type == T_BALL or f.type == T_BOX) and k.type == T_NONE:
                k[0] = f[0]
                clear(&wd, fx, fy)
        elif a == 4:                            # drop
            if f.type == T_NONE and k.type != T_NONE:
                f[0] = k[0]
                memset(k, 0, sizeof(Cell))
        elif a == 5:                            # toggle
            if f.type == T_DOOR:
                if f.state == 2:
                    if k.type == T_KEY and k.color == f.color:
                        f.state = 0
                elif f.state == 0:
                    f.state = 1
                else:
                    f.state = 0
            elif f.type == T_BOX:
                put(&wd, fx, fy, f.ctype, f.ccolor, f.cstate)
        if self.kind == K_GOTOLOCAL:
            if a == 4:                          # RoomGridLevel: update_objs_poss on drop
                mark_targets(&wd)
            if a == 3 and not carried0 and k.type != T_NONE:
                wd.a[I_CX] = -1                 # a picked-up object's cur_pos
                wd.a[I_CY] = -1
            b = verify_instr(&wd, a)
            if b == 1:
                r.rew[0] = 1.0 - 0.9 * (<double> wd.a[A_STEPS] / <double> wd.a[A_MAX])
                r.term[0] = 1
            elif b == 2:
                r.rew[0] = 0.0
                r.term[0] = 1
        elif self.kind == K_UNLOCK:
            if a == 5 and at(&wd, wd.a[A_X0], wd.a[A_X0 + 1]).state == 0:
                r.rew[0] = 1.0 - 0.9 * (<double> wd.a[A_STEPS] / <double> wd.a[A_MAX])
                r.term[0] = 1
        elif (self.kind == K_KEYCORRIDOR or self.kind == K_UNLOCKPICKUP
              or self.kind == K_BLOCKEDUNLOCK or self.kind == K_OBSTRUCTED):
            if a == 3 and k.type != T_NONE and k.tag:
                r.rew[0] = 1.0 - 0.9 * (<double> wd.a[A_STEPS] / <double> wd.a[A_MAX])
                r.term[0] = 1
        elif self.kind == K_MEMORY:
            if wd.a[A_X] == wd.a[A_X0] and wd.a[A_Y] == wd.a[A_X0 + 1]:
                r.rew[0] = 1.0 - 0.9 * (<double> wd.a[A_STEPS] / <double> wd.a[A_MAX])
                r.term[0] = 1
            if wd.a[A_X] == wd.a[A_X0 + 2] and wd.a[A_Y] == wd.a[A_X0 + 3]:
                r.rew[0] = 0.0
                r.term[0] = 1
        elif self.kind == K_GOTODOOR or self.kind == K_GOTOOBJECT:
            if a == 5:
                r.term[0] = 1
            if a == 6:
                fx = wd.a[A_X] - wd.a[A_X0]
                fy = wd.a[A_Y] - wd.a[A_X0 + 1]
                if (fx == 0 and llabs(fy) == 1) or (fy == 0 and llabs(fx) == 1):
                    r.rew[0] = 1.0 - 0.9 * (<double> wd.a[A_STEPS] / <double> wd.a[A_MAX])
                r.term[0] = 1
        elif self.kind == K_FETCH:
            if k.type != T_NONE:
                if k.type == wd.a[A_X0] and k.color == wd.a[A_X0 + 1]:
                    r.rew[0] = 1.0 - 0.9 * (<double> wd.a[A_STEPS] / <double> wd.a[A_MAX])
                else:
                    r.rew[0] = 0.0
                r.term[0] = 1
        elif self.kind == K_PUTNEAR:
            if a == 3 and k.type != T_NONE:
                if k.type != wd.a[A_X0] or k.color != wd.a[A_X0 + 1]:
                    r.term[0] = 1
            if a == 4 and carried0:
                # the object dropped is in front (the drop succeeded) and near the target
                if (k.type == T_NONE and llabs(fx - wd.a[A_X0 + 2]) <= 1
                        and llabs(fy - wd.a[A_X0 + 3]) <= 1):
                    r.rew[0] = 1.0 - 0.9 * (<double> wd.a[A_STEPS] / <double> wd.a[A_MAX])
                r.term[0] = 1
        elif self.kind == K_DYNOBS:
            if a == 2 and not_clear:
                r.rew[0] = -1.0
                r.term[0] = 1
        elif self.kind == K_REDBLUE:
            red1 = at(&wd, wd.a[A_X0], wd.a[A_X0 + 1]).state == 0
            blue1 = at(&wd, wd.a[A_X0 + 2], wd.a[A_X0 + 3]).state == 0
            if blue1:
                r.rew[0] = (1.0 - 0.9 * (<double> wd.a[A_STEPS] / <double> wd.a[A_MAX])
                            if red0 else 0.0)
                r.term[0] = 1
            elif red1 and blue0:
                r.rew[0] = 0.0
                r.term[0] = 1
        r.trunc[0] = wd.a[A_STEPS] >= wd.a[A_MAX]
        for b in range(self.n_bonus):
            # the wrappers key on the position after the step and the action as given
            q = wd.a[A_Y] * wd.w + wd.a[A_X]
            if self.bkind[b] == B_NODEATH:
                # un-terminate a death: forward into a listed cell or standing on one
                cur = at(&wd, wd.a[A_X], wd.a[A_Y])
                if r.term[0] and (dying[b] or (cur.type != T_NONE
                                               and (self.bmask[b] >> cur.type) & 1)):
                    r.term[0] = 0
                    r.rew[0] += self.bscale[b]
            elif self.bkind[b] == B_ACTION:
                cnt = (self.acnt + i * self.astride + (q * 4 + wd.a[A_DIR]) * 7
                       + acts[self.bstage[b]])
                cnt[0] += 1
                r.rew[0] += 1.0 / sqrt(<double> cnt[0])
            else:
                cnt = self.pcnt + i * self.pstride + q
                cnt[0] += 1
                r.rew[0] += (1.0 / sqrt(<double> cnt[0])) * self.bscale[b]
        self.gen_obs(i, &wd)
        return ST_OK
