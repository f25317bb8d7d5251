"""MinAtar 1.0.15's five games (Asterix, Breakout, Freeway, Seaquest, SpaceInvaders) as one
pool with a game switch, each env as ``minatar.gym.BaseEnv`` runs it.

Kernel contract: iteration i touches only env i's state (one ``G`` struct), its rows of the
outputs (Engine.row_of) and its stream; no allocation, Python objects or GIL.

Random stream: MinAtar's ``Environment`` draws everything (sticky actions and the game's own
draws) from one ``RandomState(seed)``; the spec's seed hook installs that MT19937 stream as
env i's bit generator. The draws, as RandomState makes them:
  rand()              random_standard_uniform: MT19937's 53-bit double (two 32-bit words)
  randint(low, high)  random_bounded_uint64_fill(off=low, rng=high-low-1, masked): one masked
                      32-bit rejection loop per value (no draw at all when rng == 0)
Step: one rand() < sticky_action_prob (drawn even at probability 0) keeps the last full
action (kept across episodes and reseeding, as Environment.last_action is); then the game.

Seaquest keeps Python lists that the reference mutates while iterating them in reverse and
from which it removes items by value (``list.remove``: the first equal item, which may be
another object than the one at hand): the ``Lst`` helpers reproduce both.

Snapshots: env i's own state is its ``G`` struct as bytes, range-checked before it is set.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memset, memmove, memcpy
from libc.stdio cimport snprintf
from cpython.pycapsule cimport PyCapsule_GetPointer
cimport numpy as cnp
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_standard_uniform

import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK, ST_ENGINE_ERROR, ERRMSG_LEN

cnp.import_array()

cdef extern from "numpy/random/distributions.h" nogil:
    void random_bounded_uint64_fill(bitgen_t* bitgen_state, uint64_t off, uint64_t rng,
                                    cnp.npy_intp cnt, bint use_masked, uint64_t* out)

# game codes
cdef enum:
    ASTERIX = 0
    BREAKOUT = 1
    FREEWAY = 2
    SEAQUEST = 3
    SPACE_INVADERS = 4

GAMES = ("asterix", "breakout", "freeway", "seaquest", "space_invaders")
CHANNELS = (4, 4, 7, 10, 6)
# Env.minimal_action_set() of each game (indices into 'n','l','u','r','d','f')
MINIMAL_ACTIONS = ((0, 1, 2, 3, 4), (0, 1, 3), (0, 2, 4), (0, 1, 2, 3, 4, 5), (0, 1, 3, 5))

# actions
cdef enum:
    A_N = 0
    A_L = 1
    A_U = 2
    A_R = 3
    A_D = 4
    A_F = 5

cdef enum:
    LCAP = 96         # items per Seaquest list (far above what a game reaches)
    W = 5             # fields per list item (unused ones stay 0, so equality is on all 5)


cdef struct Lst:
    int32_t n
    int32_t v[LCAP * W]


cdef struct G:
    int32_t last_action, terminal
    # Breakout
    int32_t ball_x, ball_y, ball_dir, pos, strike, last_x, last_y
    uint8_t brick[100]
    # Freeway: cars [x, y, timer, speed]; pos, move_timer, terminate_timer
    int32_t cars[32]
    int32_t move_timer, terminate_timer
    # Asterix: entities [x, y, lr, gold] and present flags
    int32_t player_x, player_y
    int32_t ent[32]
    uint8_t ent_on[8]
    int32_t spawn_speed, spawn_timer, move_speed, ramp_timer, ramp_index
    # Space Invaders (pos, move_timer unused names above reused: pos, ramp_index)
    uint8_t fb[100]
    uint8_t eb[100]
    uint8_t alien[100]
    int32_t alien_dir, enemy_move_interval, alien_move_timer, alien_shot_timer, shot_timer
    # Seaquest
    int32_t oxygen, diver_count, sub_x, sub_y, sub_or, e_spawn_speed, e_spawn_timer
    int32_t d_spawn_timer, surface
    Lst f_bullets, e_bullets, e_fish, e_subs, divers


cdef inline double rand(bitgen_t* rng) noexcept nogil:
    return random_standard_uniform(rng)


cdef inline int64_t randint(bitgen_t* rng, int64_t low, int64_t high) noexcept nogil:
    """RandomState.randint(low, high): the masked rejection path."""
    cdef uint64_t out = 0
    random_bounded_uint64_fill(rng, <uint64_t> low, <uint64_t> (high - low - 1), 1, True, &out)
    return <int64_t> out


cdef inline int32_t imax(int32_t a, int32_t b) noexcept nogil:
    return a if a > b else b


cdef inline int32_t imin(int32_t a, int32_t b) noexcept nogil:
    return a if a < b else b


# ---------------------------------------------------------------------------- Seaquest lists
cdef inline int32_t* item(Lst* l, int32_t k) noexcept nogil:
    return l.v + W * k


cdef inline int lst_append(Lst* l, int32_t a, int32_t b, int32_t c, int32_t d,
                           int32_t e) noexcept nogil:
    if l.n >= LCAP:
        return 1
    cdef int32_t* p = item(l, l.n)
    p[0] = a; p[1] = b; p[2] = c; p[3] = d; p[4] = e
    l.n += 1
    return 0


cdef inline void lst_del(Lst* l, int32_t j) noexcept nogil:
    memmove(item(l, j), item(l, j + 1), (l.n - j - 1) * W * sizeof(int32_t))
    l.n -= 1


cdef inline int32_t lst_remove(Lst* l, const int32_t* rec) noexcept nogil:
    """list.remove(rec): deletes the first item equal to rec; its index (-1: none)."""
    cdef int32_t j, k
    cdef int32_t* p
    for j in range(l.n):
        p = item(l, j)
        for k in range(W):
            if p[k] != rec[k]:
                break
        else:
            lst_del(l, j)
            return j
    return -1


cdef inline bint at(const int32_t* p, int32_t x, int32_t y) noexcept nogil:
    return p[0] == x and p[1] == y


cdef struct Cur:
    # the object a loop has at hand: item p of its list, or (p == -1) a detached copy
    int32_t p
    int32_t own[W]


cdef inline int32_t* cur_ptr(Lst* l, Cur* c) noexcept nogil:
    return item(l, c.p) if c.p >= 0 else c.own


cdef inline void cur_remove(Lst* l, Cur* c) noexcept nogil:
    """l.remove(obj) for the object at hand: the first equal item goes; if that was the
    object itself it lives on detached (the loop body may still read and write it)."""
    cdef int32_t rec[W]
    memcpy(rec, cur_ptr(l, c), W * sizeof(int32_t))
    cdef int32_t j = lst_remove(l, rec)
    if j == c.p:
        memcpy(c.own, rec, W * sizeof(int32_t))
        c.p = -1
    elif 0 <= j < c.p:
        c.p -= 1


# ---------------------------------------------------------------------------- Breakout
cdef void breakout_reset(G* g, bitgen_t* rng) noexcept nogil:
    g.ball_y = 3
    if randint(rng, 0, 2) == 0:
        g.ball_x = 0; g.ball_dir = 2
    else:
        g.ball_x = 9; g.ball_dir = 3
    g.pos = 4
    memset(g.brick, 0, 100)
    memset(g.brick + 10, 1, 30)
    g.strike = 0
    g.last_x = g.ball_x
    g.last_y = g.ball_y


cdef int32_t FLIP_X[4]
cdef int32_t FLIP_Y[4]
cdef int32_t PADDLE_EDGE[4]
FLIP_X[:] = [1, 0, 3, 2]
FLIP_Y[:] = [3, 2, 1, 0]
PADDLE_EDGE[:] = [2, 3, 0, 1]


cdef double breakout_step(G* g, int a) noexcept nogil:
    cdef double r = 0
    cdef int32_t nx, ny, k, cnt
    cdef bint strike_toggle = False
    if a == A_L:
        g.pos = imax(0, g.pos - 1)
    elif a == A_R:
        g.pos = imin(9, g.pos + 1)
    g.last_x = g.ball_x
    g.last_y = g.ball_y
    if g.ball_dir == 0:
        nx = g.ball_x - 1; ny = g.ball_y - 1
    elif g.ball_dir == 1:
        nx = g.ball_x + 1; ny = g.ball_y - 1
    elif g.ball_dir == 2:
        nx = g.ball_x + 1; ny = g.ball_y + 1
    else:
        nx = g.ball_x - 1; ny = g.ball_y + 1
    if nx < 0 or nx > 9:
        nx = 0 if nx < 0 else 9
        g.ball_dir = FLIP_X[g.ball_dir]
    if ny < 0:
        ny = 0
        g.ball_dir = FLIP_Y[g.ball_dir]
    elif g.brick[10 * ny + nx]:
        strike_toggle = True
        if not g.strike:
            r += 1
            g.strike = 1
            g.brick[10 * ny + nx] = 0
            ny = g.last_y
            g.ball_dir = FLIP_Y[g.ball_dir]
    elif ny == 9:
        cnt = 0
        for k in range(100):
            cnt += g.brick[k]
        if cnt == 0:
            memset(g.brick + 10, 1, 30)
        if g.ball_x == g.pos:
            g.ball_dir = FLIP_Y[g.ball_dir]
            ny = g.last_y
        elif nx == g.pos:
            g.ball_dir = PADDLE_EDGE[g.ball_dir]
            ny = g.last_y
        else:
            g.terminal = 1
    if not strike_toggle:
        g.strike = 0
    g.ball_x = nx
    g.ball_y = ny
    return r


cdef void breakout_obs(G* g, uint8_t* o) noexcept nogil:
    cdef int k
    o[(10 * g.ball_y + g.ball_x) * 4 + 1] = 1
    o[(90 + g.pos) * 4 + 0] = 1
    o[(10 * g.last_y + g.last_x) * 4 + 2] = 1
    for k in range(100):
        o[4 * k + 3] = g.brick[k]


# ---------------------------------------------------------------------------- Freeway
cdef void freeway_randomize(G* g, bitgen_t* rng, bint initialize) noexcept nogil:
    cdef uint64_t speeds[8]
    cdef int64_t s
    cdef int k
    cdef double u
    random_bounded_uint64_fill(rng, 1, 4, 8, True, speeds)   # randint(1, 6, 8)
    for k in range(8):
        u = rand(rng) - 0.5                                     # np.sign(rand(8) - 0.5)
        s = <int64_t> speeds[k] * (1 if u > 0 else (-1 if u < 0 else 0))
        if initialize:
            g.cars[4 * k] = 0
            g.cars[4 * k + 1] = k + 1
        g.cars[4 * k + 2] = <int32_t> (s if s >= 0 else -s)
        g.cars[4 * k + 3] = <int32_t> s


cdef void freeway_reset(G* g, bitgen_t* rng) noexcept nogil:
    freeway_randomize(g, rng, True)
    g.pos = 9
    g.move_timer = 3
    g.terminate_timer = 2500


cdef double freeway_step(G* g, int a, bitgen_t* rng) noexcept nogil:
    cdef double r = 0
    cdef int k
    cdef int32_t* c
    if a == A_U and g.move_timer == 0:
        g.move_timer = 3
        g.pos = imax(0, g.pos - 1)
    elif a == A_D and g.move_timer == 0:
        g.move_timer = 3
        g.pos = imin(9, g.pos + 1)
    if g.pos == 0:
        r += 1
        freeway_randomize(g, rng, False)
        g.pos = 9
    for k in range(8):
        c = g.cars + 4 * k
        if c[0] == 4 and c[1] == g.pos:
            g.pos = 9
        if c[2] == 0:
            c[2] = c[3] if c[3] >= 0 else -c[3]
            c[0] += 1 if c[3] > 0 else -1
            if c[0] < 0:
                c[0] = 9
            elif c[0] > 9:
                c[0] = 0
            if c[0] == 4 and c[1] == g.pos:
                g.pos = 9
        else:
            c[2] -= 1
    if g.move_timer > 0:
        g.move_timer -= 1
    g.terminate_timer -= 1
    if g.terminate_timer < 0:
        g.terminal = 1
    return r


cdef int freeway_obs(G* g, uint8_t* o) noexcept nogil:
    cdef int k, back, sp, trail = -1
    cdef int32_t* c
    o[(10 * g.pos + 4) * 7] = 1
    for k in range(8):
        c = g.cars + 4 * k
        o[(10 * c[1] + c[0]) * 7 + 1] = 1
        back = c[0] - 1 if c[3] > 0 else c[0] + 1
        if back < 0:
            back = 9
        elif back > 9:
            back = 0
        sp = c[3] if c[3] >= 0 else -c[3]
        if 1 <= sp <= 5:
            trail = 1 + sp
        if trail < 0:            # a speed of 0 (a draw of exactly 0.5): Python's NameError
            return 1
        o[(10 * c[1] + back) * 7 + trail] = 1   # else the trail of the car before, as Python
    return 0


# ---------------------------------------------------------------------------- Asterix
cdef void asterix_reset(G* g) noexcept nogil:
    g.player_x = 5
    g.player_y = 5
    memset(g.ent_on, 0, 8)
    g.shot_timer = 0
    g.spawn_speed = 10
    g.spawn_timer = 10
    g.move_speed = 5
    g.move_timer = 5
    g.ramp_timer = 100
    g.ramp_index = 0


cdef void asterix_spawn(G* g, bitgen_t* rng) noexcept nogil:
    cdef bint lr = rand(rng) < 0.5
    cdef bint gold = rand(rng) < 1.0 / 3.0
    cdef int32_t slots[8]
    cdef int n = 0, k, slot
    for k in range(8):
        if not g.ent_on[k]:
            slots[n] = k
            n += 1
    if n == 0:
        return
    slot = slots[randint(rng, 0, n)]
    g.ent_on[slot] = 1
    g.ent[4 * slot] = 0 if lr else 9
    g.ent[4 * slot + 1] = slot + 1
    g.ent[4 * slot + 2] = lr
    g.ent[4 * slot + 3] = gold


cdef double asterix_step(G* g, int a, bitgen_t* rng, bint ramping) noexcept nogil:
    cdef double r = 0
    cdef int k
    cdef int32_t* e
    if g.spawn_timer == 0:
        asterix_spawn(g, rng)
        g.spawn_timer = g.spawn_speed
    if a == A_L:
        g.player_x = imax(0, g.player_x - 1)
    elif a == A_R:
        g.player_x = imin(9, g.player_x + 1)
    elif a == A_U:
        g.player_y = imax(1, g.player_y - 1)
    elif a == A_D:
        g.player_y = imin(8, g.player_y + 1)
    for k in range(8):
        e = g.ent + 4 * k
        if g.ent_on[k] and at(e, g.player_x, g.player_y):
            if e[3]:
                g.ent_on[k] = 0
                r += 1
            else:
                g.terminal = 1
    if g.move_timer == 0:
        g.move_timer = g.move_speed
        for k in range(8):
            e = g.ent + 4 * k
            if g.ent_on[k]:
                e[0] += 1 if e[2] else -1
                if e[0] < 0 or e[0] > 9:
                    g.ent_on[k] = 0
                elif at(e, g.player_x, g.player_y):
                    if e[3]:
                        g.ent_on[k] = 0
                        r += 1
                    else:
                        g.terminal = 1
    g.spawn_timer -= 1
    g.move_timer -= 1
    if ramping and (g.spawn_speed > 1 or g.move_speed > 1):
        if g.ramp_timer >= 0:
            g.ramp_timer -= 1
        else:
            if g.move_speed > 1 and g.ramp_index % 2:
                g.move_speed -= 1
            if g.spawn_speed > 1:
                g.spawn_speed -= 1
            g.ramp_index += 1
            g.ramp_timer = 100
    return r


cdef void asterix_obs(G* g, uint8_t* o) noexcept nogil:
    cdef int k, back
    cdef int32_t* e
    o[(10 * g.player_y + g.player_x) * 4] = 1
    for k in range(8):
        if g.ent_on[k]:
            e = g.ent + 4 * k
            o[(10 * e[1] + e[0]) * 4 + (3 if e[3] else 1)] = 1
            back = e[0] - 1 if e[2] else e[0] + 1
            if 0 <= back <= 9:
                o[(10 * e[1] + back) * 4 + 2] = 1


# ---------------------------------------------------------------------------- Space Invaders
cdef void invaders_reset(G* g) noexcept nogil:
    cdef int y
    g.pos = 5
    memset(g.fb, 0, 100)
    memset(g.eb, 0, 100)
    memset(g.alien, 0, 100)
    for y in range(4):
        memset(g.alien + 10 * y + 2, 1, 6)
    g.alien_dir = -1
    g.enemy_move_interval = 12
    g.alien_move_timer = 12
    g.alien_shot_timer = 10
    g.ramp_index = 0
    g.shot_timer = 0


cdef double invaders_step(G* g, int a, bint ramping) noexcept nogil:
    cdef int k, y, x, cnt, col, best
    cdef uint8_t tmp[100]
    cdef bint left = False, right = False, bottom = False
    cdef double r = 0
    if a == A_F and g.shot_timer == 0:
        g.fb[90 + g.pos] = 1
        g.shot_timer = 5
    elif a == A_L:
        g.pos = imax(0, g.pos - 1)
    elif a == A_R:
        g.pos = imin(9, g.pos + 1)
    # friendly bullets up a row (np.roll -1 on rows, then the bottom row cleared)
    memmove(g.fb, g.fb + 10, 90)
    memset(g.fb + 90, 0, 10)
    # enemy bullets down a row
    memmove(g.eb + 10, g.eb, 90)
    memset(g.eb, 0, 10)
    if g.eb[90 + g.pos]:
        g.terminal = 1
    if g.alien[90 + g.pos]:
        g.terminal = 1
    if g.alien_move_timer == 0:
        cnt = 0
        for k in range(100):
            cnt += g.alien[k]
        g.alien_move_timer = imin(cnt, g.enemy_move_interval)
        for y in range(10):
            left = left or g.alien[10 * y]
            right = right or g.alien[10 * y + 9]
        for x in range(10):
            bottom = bottom or g.alien[90 + x]
        if (left and g.alien_dir < 0) or (right and g.alien_dir > 0):
            g.alien_dir = -g.alien_dir
            if bottom:
                g.terminal = 1
            memcpy(tmp, g.alien + 90, 10)            # np.roll(+1, rows): the last row wraps
            memmove(g.alien + 10, g.alien, 90)
            memcpy(g.alien, tmp, 10)
        else:
            memcpy(tmp, g.alien, 100)                # np.roll(dir, columns), dir = +-1
            for y in range(10):
                for x in range(10):
                    g.alien[10 * y + (x + g.alien_dir + 10) % 10] = tmp[10 * y + x]
        if g.alien[90 + g.pos]:
            g.terminal = 1
    if g.alien_shot_timer == 0:
        g.alien_shot_timer = 10
        # _nearest_alien: columns by |col - pos| (ties: the lower column), the lowest alien
        best = -1
        for k in range(19):          # pos, pos-1, pos+1, pos-2, pos+2, ...
            col = g.pos - (k + 1) // 2 if k % 2 else g.pos + k // 2
            if col < 0 or col > 9:
                continue
            for y in range(9, -1, -1):
                if g.alien[10 * y + col]:
                    best = 10 * y + col
                    break
            if best >= 0:
                break
        if best < 0:
            return -1.0          # no alien left: MinAtar's None[0] (TypeError); not reached
        g.eb[best] = 1
    for k in range(100):
        if g.alien[k] and g.fb[k]:
            r += 1
            g.alien[k] = 0
            g.fb[k] = 0
    if g.shot_timer > 0:
        g.shot_timer -= 1
    g.alien_move_timer -= 1
    g.alien_shot_timer -= 1
    cnt = 0
    for k in range(100):
        cnt += g.alien[k]
    if cnt == 0:
        if g.enemy_move_interval > 6 and ramping:
            g.enemy_move_interval -= 1
            g.ramp_index += 1
        for y in range(4):
            memset(g.alien + 10 * y + 2, 1, 6)
    return r


cdef void invaders_obs(G* g, uint8_t* o) noexcept nogil:
    cdef int k
    o[(90 + g.pos) * 6] = 1
    for k in range(100):
        o[6 * k + 1] = g.alien[k]
        o[6 * k + (2 if g.alien_dir < 0 else 3)] = g.alien[k]
        o[6 * k + 4] = g.fb[k]
        o[6 * k + 5] = g.eb[k]


# ---------------------------------------------------------------------------- Seaquest
cdef void seaquest_reset(G* g) noexcept nogil:
    g.oxygen = 200
    g.diver_count = 0
    g.sub_x = 5
    g.sub_y = 0
    g.sub_or = 0
    g.f_bullets.n = 0
    g.e_bullets.n = 0
    g.e_fish.n = 0
    g.e_subs.n = 0
    g.divers.n = 0
    g.e_spawn_speed = 20
    g.e_spawn_timer = 20
    g.d_spawn_timer = 30
    g.move_speed = 5
    g.ramp_index = 0
    g.shot_timer = 0
    g.surface = 1


cdef int seaquest_spawn_enemy(G* g, bitgen_t* rng) noexcept nogil:
    cdef bint lr = rand(rng) < 0.5
    cdef bint is_sub = rand(rng) < 1.0 / 3.0
    cdef int32_t x = 0 if lr else 9
    cdef int32_t y = <int32_t> randint(rng, 1, 9)
    cdef int k
    cdef int32_t* z
    for k in range(g.e_subs.n):
        z = item(&g.e_subs, k)
        if z[1] == y and z[2] != lr:
            return 0
    for k in range(g.e_fish.n):
        z = item(&g.e_fish, k)
        if z[1] == y and z[2] != lr:
            return 0
    if is_sub:
        return lst_append(&g.e_subs, x, y, lr, g.move_speed, 10)
    return lst_append(&g.e_fish, x, y, lr, g.move_speed, 0)


cdef int seaquest_spawn_diver(G* g, bitgen_t* rng) noexcept nogil:
    cdef bint lr = rand(rng) < 0.5
    cdef int32_t x = 0 if lr else 9
    cdef int32_t y = <int32_t> randint(rng, 1, 9)
    return lst_append(&g.divers, x, y, lr, 5, 0)


cdef inline int32_t floordiv(int32_t a, int32_t b) noexcept nogil:
    cdef int32_t q = a / b
    if (a % b != 0) and ((a < 0) != (b < 0)):
        q -= 1
    return q


cdef double seaquest_surface(G* g, bint ramping) noexcept nogil:
    cdef double r
    g.surface = 1
    if g.diver_count == 6:
        g.diver_count = 0
        r = floordiv(g.oxygen * 10, 200)
    else:
        r = 0
    g.oxygen = 200
    g.diver_count -= 1
    if ramping and (g.e_spawn_speed > 1 or g.move_speed > 2):
        if g.move_speed > 2 and g.ramp_index % 2:
            g.move_speed -= 1
        if g.e_spawn_speed > 1:
            g.e_spawn_speed -= 1
        g.ramp_index += 1
    return r


cdef int seaquest_step(G* g, int a, bitgen_t* rng, bint ramping, double* rew) noexcept nogil:
    """Returns 1 if a list overflowed (not reached in play)."""
    cdef double r = 0
    cdef int32_t idx, cur, k, j
    cdef int32_t* b
    cdef int32_t* x
    cdef int32_t rec[W]
    cdef bint removed
    cdef Cur c
    cdef Lst* L
    cdef int err = 0
    if g.e_spawn_timer == 0:
        err |= seaquest_spawn_enemy(g, rng)
        g.e_spawn_timer = g.e_spawn_speed
    if g.d_spawn_timer == 0:
        err |= seaquest_spawn_diver(g, rng)
        g.d_spawn_timer = 30
    if a == A_F and g.shot_timer == 0:
        err |= lst_append(&g.f_bullets, g.sub_x, g.sub_y, g.sub_or, 0, 0)
        g.shot_timer = 5
    elif a == A_L:
        g.sub_x = imax(0, g.sub_x - 1)
        g.sub_or = 0
    elif a == A_R:
        g.sub_x = imin(9, g.sub_x + 1)
        g.sub_or = 1
    elif a == A_U:
        g.sub_y = imax(0, g.sub_y - 1)
    elif a == A_D:
        g.sub_y = imin(8, g.sub_y + 1)

    # friendly bullets (reversed iteration: CPython's index walk over a shrinking list)
    L = &g.f_bullets
    idx = L.n - 1
    while 0 <= idx < L.n:
        cur = idx
        idx -= 1
        b = item(L, cur)
        b[0] += 1 if b[2] else -1
        if b[0] < 0 or b[0] > 9:
            memcpy(rec, b, W * sizeof(int32_t))
            lst_remove(L, rec)
        else:
            removed = False
            for k in range(g.e_fish.n):
                x = item(&g.e_fish, k)
                if at(x, b[0], b[1]):
                    memcpy(rec, x, W * sizeof(int32_t))
                    lst_remove(&g.e_fish, rec)
                    memcpy(rec, b, W * sizeof(int32_t))
                    lst_remove(L, rec)
                    r += 1
                    removed = True
                    break
            if not removed:
                for k in range(g.e_subs.n):
                    x = item(&g.e_subs, k)
                    if at(x, b[0], b[1]):
                        memcpy(rec, x, W * sizeof(int32_t))
                        lst_remove(&g.e_subs, rec)
                        memcpy(rec, b, W * sizeof(int32_t))
                        lst_remove(L, rec)
                        r += 1
                        break

    # divers
    L = &g.divers
    idx = L.n - 1
    while 0 <= idx < L.n:
        cur = idx
        idx -= 1
        b = item(L, cur)
        memcpy(rec, b, W * sizeof(int32_t))
        if at(b, g.sub_x, g.sub_y) and g.diver_count < 6:
            lst_remove(L, rec)
            g.diver_count += 1
        elif b[3] == 0:
            b[3] = 5
            b[0] += 1 if b[2] else -1
            memcpy(rec, b, W * sizeof(int32_t))
            if b[0] < 0 or b[0] > 9:
                lst_remove(L, rec)
            elif at(b, g.sub_x, g.sub_y) and g.diver_count < 6:
                lst_remove(L, rec)
                g.diver_count += 1
        else:
            b[3] -= 1

    # enemy subs: the object at hand outlives its removal (its shot timer is still read)
    L = &g.e_subs
    idx = L.n - 1
    while 0 <= idx < L.n:
        cur = idx
        idx -= 1
        c.p = cur
        b = cur_ptr(L, &c)
        if at(b, g.sub_x, g.sub_y):
            g.terminal = 1
        if b[3] == 0:
            b[3] = g.move_speed
            b[0] += 1 if b[2] else -1
            if b[0] < 0 or b[0] > 9:
                cur_remove(L, &c)
            elif at(b, g.sub_x, g.sub_y):
                g.terminal = 1
            else:
                for k in range(g.f_bullets.n):
                    x = item(&g.f_bullets, k)
                    if at(b, x[0], x[1]):
                        cur_remove(L, &c)
                        memcpy(rec, x, W * sizeof(int32_t))
                        lst_remove(&g.f_bullets, rec)
                        r += 1
                        break
        else:
            b[3] -= 1
        b = cur_ptr(L, &c)
        if b[4] == 0:
            b[4] = 10
            err |= lst_append(&g.e_bullets, b[0], b[1], b[2], 0, 0)
        else:
            b[4] -= 1

    # enemy bullets
    L = &g.e_bullets
    idx = L.n - 1
    while 0 <= idx < L.n:
        cur = idx
        idx -= 1
        b = item(L, cur)
        if at(b, g.sub_x, g.sub_y):
            g.terminal = 1
        b[0] += 1 if b[2] else -1
        if b[0] < 0 or b[0] > 9:
            memcpy(rec, b, W * sizeof(int32_t))
            lst_remove(L, rec)
        elif at(b, g.sub_x, g.sub_y):
            g.terminal = 1

    # enemy fish
    L = &g.e_fish
    idx = L.n - 1
    while 0 <= idx < L.n:
        cur = idx
        idx -= 1
        b = item(L, cur)
        if at(b, g.sub_x, g.sub_y):
            g.terminal = 1
        if b[3] == 0:
            b[3] = g.move_speed
            b[0] += 1 if b[2] else -1
            if b[0] < 0 or b[0] > 9:
                memcpy(rec, b, W * sizeof(int32_t))
                lst_remove(L, rec)
            elif at(b, g.sub_x, g.sub_y):
                g.terminal = 1
            else:
                for k in range(g.f_bullets.n):
                    x = item(&g.f_bullets, k)
                    if at(b, x[0], x[1]):
                        memcpy(rec, b, W * sizeof(int32_t))
                        lst_remove(L, rec)
                        memcpy(rec, x, W * sizeof(int32_t))
                        lst_remove(&g.f_bullets, rec)
                        r += 1
                        break
        else:
            b[3] -= 1

    if g.e_spawn_timer > 0:
        g.e_spawn_timer -= 1
    if g.d_spawn_timer > 0:
        g.d_spawn_timer -= 1
    if g.shot_timer > 0:
        g.shot_timer -= 1
    if g.oxygen <= 0:
        g.terminal = 1
    if g.sub_y > 0:
        g.oxygen -= 1
        g.surface = 0
    elif not g.surface:
        if g.diver_count == 0:
            g.terminal = 1
        else:
            r += seaquest_surface(g, ramping)
    rew[0] = r
    return err


cdef inline void trail(uint8_t* o, const int32_t* p, int ch) noexcept nogil:
    cdef int back = p[0] - 1 if p[2] else p[0] + 1
    if 0 <= back <= 9:
        o[(10 * p[1] + back) * 10 + ch] = 1


cdef int seaquest_obs(G* g, uint8_t* o) noexcept nogil:
    cdef int k, n, start, back
    cdef int32_t* p
    o[(10 * g.sub_y + g.sub_x) * 10] = 1
    back = g.sub_x - 1 if g.sub_or else g.sub_x + 1
    if back == -1:
        back = 9                 # numpy's index -1 (not reached: see the movement rules)
    if back > 9:
        return 1
    o[(10 * g.sub_y + back) * 10 + 1] = 1
    n = imax(0, g.oxygen) * 10 // 200
    for k in range(n):
        o[(90 + k) * 10 + 7] = 1
    start = 9 - g.diver_count            # state[9, 9 - diver_count:9]
    if start < 0:
        start = imax(0, start + 10)
    for k in range(start, 9):
        o[(90 + k) * 10 + 8] = 1
    for k in range(g.f_bullets.n):
        p = item(&g.f_bullets, k)
        o[(10 * p[1] + p[0]) * 10 + 2] = 1
    for k in range(g.e_bullets.n):
        p = item(&g.e_bullets, k)
        o[(10 * p[1] + p[0]) * 10 + 4] = 1
    for k in range(g.e_fish.n):
        p = item(&g.e_fish, k)
        o[(10 * p[1] + p[0]) * 10 + 5] = 1
        trail(o, p, 3)
    for k in range(g.e_subs.n):
        p = item(&g.e_subs, k)
        o[(10 * p[1] + p[0]) * 10 + 6] = 1
        trail(o, p, 3)
    for k in range(g.divers.n):
        p = item(&g.divers, k)
        o[(10 * p[1] + p[0]) * 10 + 9] = 1
        trail(o, p, 3)
    return 0


# ---------------------------------------------------------------------------- snapshots
cdef inline bint rng_ok(int64_t v, int64_t lo, int64_t hi) noexcept:
    return lo <= v <= hi


cdef bint bits_ok(const uint8_t* p, int n) noexcept:
    cdef int k
    for k in range(n):
        if p[k] > 1:
            return False
    return True


cdef bint lst_ok(Lst* l, int nf) noexcept:
    """n in [0, LCAP]; each item on the board, its direction a flag, fields past nf zero."""
    cdef int32_t k, f
    cdef int32_t* p
    if not rng_ok(l.n, 0, LCAP):
        return False
    for k in range(l.n):
        p = item(l, k)
        if not (rng_ok(p[0], 0, 9) and rng_ok(p[1], 0, 9) and rng_ok(p[2], 0, 1)):
            return False
        if nf > 3 and not rng_ok(p[3], 0, 1000):
            return False
        if nf > 4 and not rng_ok(p[4], 0, 1000):
            return False
        for f in range(nf, W):
            if p[f] != 0:
                return False
    return True


cdef str state_problem(int game, G* g):
    """What makes g a state the kernels cannot run safely (None: nothing): every value that
    indexes the board or a table is in range (a state MinAtar reaches always is)."""
    cdef int k
    cdef int32_t* c
    if not (rng_ok(g.last_action, 0, 5) and rng_ok(g.terminal, 0, 1)):
        return "last_action or terminal out of range"
    if game == BREAKOUT:
        if not (rng_ok(g.ball_x, 0, 9) and rng_ok(g.ball_y, 0, 8 + g.terminal)
                and rng_ok(g.last_x, 0, 9) and rng_ok(g.last_y, 0, 9)
                and rng_ok(g.pos, 0, 9) and rng_ok(g.ball_dir, 0, 3)
                and rng_ok(g.strike, 0, 1) and bits_ok(g.brick, 100)):
            return "a Breakout position, direction or brick out of range"
    elif game == FREEWAY:
        for k in range(8):
            c = g.cars + 4 * k
            if not (rng_ok(c[0], 0, 9) and rng_ok(c[1], 0, 9) and rng_ok(c[2], 0, 5)
                    and rng_ok(c[3], -5, 5)):
                return "a Freeway car out of range"
        if not (rng_ok(g.pos, 0, 9) and rng_ok(g.move_timer, 0, 3)
                and rng_ok(g.terminate_timer, -1, 2500)):
            return "the Freeway chicken or a timer out of range"
    elif game == ASTERIX:
        if not (rng_ok(g.player_x, 0, 9) and rng_ok(g.player_y, 0, 9)
                and bits_ok(g.ent_on, 8)):
            return "the Asterix player out of range"
        for k in range(8):
            c = g.ent + 4 * k
            if g.ent_on[k] and not (rng_ok(c[0], 0, 9) and rng_ok(c[1], 0, 9)
                                    and rng_ok(c[2], 0, 1) and rng_ok(c[3], 0, 1)):
                return "an Asterix entity out of range"
    elif game == SPACE_INVADERS:
        if not (rng_ok(g.pos, 0, 9) and (g.alien_dir == 1 or g.alien_dir == -1)
                and bits_ok(g.fb, 100) and bits_ok(g.eb, 100) and bits_ok(g.alien, 100)):
            return "a Space Invaders position, direction or map out of range"
    else:
        if not (rng_ok(g.sub_x, 0, 9) and rng_ok(g.sub_y, 0, 9) and rng_ok(g.sub_or, 0, 1)
                and rng_ok(g.oxygen, -1000000, 200) and rng_ok(g.diver_count, -1000000, 6)
                and rng_ok(g.surface, 0, 1)):
            return "the Seaquest submarine, oxygen or divers out of range"
        if not (lst_ok(&g.f_bullets, 3) and lst_ok(&g.e_bullets, 3) and lst_ok(&g.e_fish, 4)
                and lst_ok(&g.e_subs, 5) and lst_ok(&g.divers, 4)):
            return "a Seaquest list out of range"
    return None


# ---------------------------------------------------------------------------- the pool
def _per_env(kwargs):
    return float(kwargs["sticky_action_prob"]), bool(kwargs["difficulty_ramping"])


cdef class MinAtarPool(Engine):
    """num_envs envs of one MinAtar game (cypool.api pool; registered by cypool.minatar)."""
    cdef int game, nch
    cdef G* st
    cdef const int64_t* act
    cdef const double* sticky
    cdef const uint8_t* ramp
    cdef int64_t amap[6]
    cdef int64_t n_actions
    cdef readonly object states, actions, sticky_action_prob, difficulty_ramping
    cdef readonly object action_set, game_name
    cdef public object renderer

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        game = kwargs["game"]
        self.game = GAMES.index(game)
        self.game_name = game
        self.nch = CHANNELS[self.game]
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (10, 10, self.nch), np.bool_)], 0)
        aset = (MINIMAL_ACTIONS[self.game] if kwargs["use_minimal_action_set"]
                else tuple(range(6)))
        self.action_set = aset
        self.n_actions = len(aset)
        for k, v in enumerate(aset):
            self.amap[k] = v
        self.states = np.zeros((num_envs, sizeof(G)), np.uint8)
        self.st = <G*> cnp.PyArray_DATA(self.states)
        self.actions = np.zeros(num_envs, np.int64)
        self.act = <const int64_t*> cnp.PyArray_DATA(self.actions)
        p, ramp = _per_env(kwargs)
        self.sticky_action_prob = np.full(num_envs, p, np.float64)
        self.difficulty_ramping = np.full(num_envs, ramp, np.uint8)
        self.sticky = <const double*> cnp.PyArray_DATA(self.sticky_action_prob)
        self.ramp = <const uint8_t*> cnp.PyArray_DATA(self.difficulty_ramping)
        self.renderer = None

    def configure(self, ids, kwargs):
        """Envs ids (int64) take the complete kwargs (sticky_action_prob and
        difficulty_ramping are per env)."""
        p, ramp = _per_env(kwargs)
        self.sticky_action_prob[ids] = p
        self.difficulty_ramping[ids] = ramp

    cdef int _obs(self, G* g, EnvRow* r) noexcept nogil:
        cdef uint8_t* o = <uint8_t*> r.obs
        memset(o, 0, 100 * self.nch)
        if self.game == BREAKOUT:
            breakout_obs(g, o)
        elif self.game == FREEWAY:
            return freeway_obs(g, o)
        elif self.game == ASTERIX:
            asterix_obs(g, o)
        elif self.game == SPACE_INVADERS:
            invaders_obs(g, o)
        else:
            return seaquest_obs(g, o)
        return 0

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef G* g = self.st + i
        self.row_of(i, &r)
        if self.game == BREAKOUT:
            breakout_reset(g, r.rng)
        elif self.game == FREEWAY:
            freeway_reset(g, r.rng)
        elif self.game == ASTERIX:
            asterix_reset(g)
        elif self.game == SPACE_INVADERS:
            invaders_reset(g)
        else:
            seaquest_reset(g)
        g.terminal = 0
        if self._obs(g, &r):
            snprintf(r.err, ERRMSG_LEN, "MinAtar: a state MinAtar cannot show either")
            return ST_ENGINE_ERROR
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef G* g = self.st + i
        cdef int64_t ai = self.act[i]
        cdef int a
        cdef double rew = 0
        cdef int err = 0
        self.row_of(i, &r)
        if not 0 <= ai < self.n_actions:
            snprintf(r.err, ERRMSG_LEN, "action %lld is not in 0..%lld", <long long> ai,
                     <long long> (self.n_actions - 1))
            return ST_ENGINE_ERROR
        a = <int> self.amap[ai]
        if rand(r.rng) < self.sticky[i]:
            a = g.last_action
        g.last_action = a
        if not g.terminal:
            if self.game == BREAKOUT:
                rew = breakout_step(g, a)
            elif self.game == FREEWAY:
                rew = freeway_step(g, a, r.rng)
            elif self.game == ASTERIX:
                rew = asterix_step(g, a, r.rng, self.ramp[i])
            elif self.game == SPACE_INVADERS:
                rew = invaders_step(g, a, self.ramp[i])
                if rew < 0:
                    err = 1
            else:
                err = seaquest_step(g, a, r.rng, self.ramp[i], &rew)
        r.rew[0] = rew
        r.term[0] = g.terminal
        if err or self._obs(g, &r):
            snprintf(r.err, ERRMSG_LEN, "MinAtar: the game reached a state MinAtar itself "
                     "fails on (or a list outgrew its %d items)", <int> LCAP)
            return ST_ENGINE_ERROR
        return ST_OK

    # snapshots: env i's own state is its G struct, as bytes (checked before it is installed)
    def _env_state(self, Py_ssize_t i):
        return bytes(self.states[i])

    def _check_env_state(self, Py_ssize_t i, state):
        cdef G g
        if not isinstance(state, bytes) or len(state) != sizeof(G):
            raise ValueError(f"MinAtar state: must be {sizeof(G)} bytes (a state this pool "
                             f"gave), got {type(state).__name__}")
        memcpy(&g, <const char*> state, sizeof(G))
        problem = state_problem(self.game, &g)
        if problem is not None:
            raise ValueError(f"MinAtar {self.game_name} state: {problem}")
        return state

    def _set_env_state(self, Py_ssize_t i, state):
        self.states[i] = np.frombuffer(state, np.uint8)


def _draws_check(bit_generator, const int64_t[::1] kinds, const int64_t[::1] ns):
    """Test hook: the pool's draw helpers on bit_generator (an MT19937), in the order of
    kinds (0 rand(), 1 randint(2), 2 randint(1, 9), 3 randint(n), 4 randint(1, 6, 8),
    5 rand(8)), as float64 values."""
    cdef bitgen_t* rng = <bitgen_t*> PyCapsule_GetPointer(bit_generator.capsule,
                                                          "BitGenerator")
    cdef uint64_t v[8]
    cdef Py_ssize_t t
    cdef int k
    out = []
    for t in range(kinds.shape[0]):
        if kinds[t] == 0:
            out.append(rand(rng))
        elif kinds[t] == 1:
            out.append(float(randint(rng, 0, 2)))
        elif kinds[t] == 2:
            out.append(float(randint(rng, 1, 9)))
        elif kinds[t] == 3:
            out.append(float(randint(rng, 0, ns[t])))
        elif kinds[t] == 4:
            random_bounded_uint64_fill(rng, 1, 4, 8, True, v)
            for k in range(8):
                out.append(float(v[k]))
        else:
            for k in range(8):
                out.append(rand(rng))
    return np.array(out, np.float64)
