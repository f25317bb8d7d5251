"""Blackjack pool: gymnasium 1.4.0's BlackjackEnv (Blackjack-v1) per env, on cypool's public
env API.

Kernel contract: iteration i touches only env i's state row, its rows of the outputs
(Engine.row_of) and its stream; no allocation, Python objects or GIL.

Cards: draw_card = int(np_random.choice(deck)), deck = [1..9, 10, 10, 10, 10], i.e.
Generator.integers(0, 13) for int64, which numpy computes with random_bounded_uint64_fill
(Lemire on 32-bit draws, the PCG64 stream's cached upper half used first), called here.
Reset draws, in order: dealer card 1, dealer card 2, player card 1, player card 2, the
dealer's suit (choice of 4), and only when the dealer shows 10 its face (choice of J/Q/K):
the last two serve rendering but are always drawn. Step: hit (1) draws one card, -1.0 and
terminated on a bust, else 0.0; stick (0) lets the dealer draw while its sum < 17, then
cmp(score(player), score(dealer)); sab: a player's natural against no dealer natural gives
1.0; else natural: a player's natural that wins gives 1.5. ``natural`` and ``sab`` are per
env (the registered Blackjack-v1 has sab=True; the class default is False).

Observation: ONE int64 output row of 3 (player sum, dealer's showing card, usable ace); the
façade presents it as gymnasium's Tuple: a tuple of the three (N,) int64 columns. No info.

Hands are kept as what the rules read of them: each hand's first two cards, raw sum, whether
it holds an ace, and its card count. Env state: (N, 12) int64: player c0, c1, sum, ace, n;
dealer c0, c1, sum, ace, n; suit (0..3 = C, D, H, S); face (0..2 = J, Q, K; -1 if the dealer
does not show 10). A state given to set_state must be one that play reaches
(cypool.toy_text._states.check_blackjack); a bust hand is never stepped (an EngineError: its
episode is over, whatever the engine's done flag says).
"""
from libc.stdio cimport snprintf
from libc.stdint cimport int64_t, uint8_t, uint64_t
cimport numpy as cnp
from numpy.random cimport bitgen_t

import numpy as np

from cypool.api cimport Engine, EnvRow, ST_OK, ST_ENGINE_ERROR, ERRMSG_LEN
from cypool.toy_text._states import check_blackjack

cnp.import_array()

include "_draws.pxi"

cdef int64_t[13] DECK = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10]

# the env state row
cdef enum:
    P_C0 = 0
    P_C1 = 1
    P_SUM = 2
    P_ACE = 3
    P_N = 4
    D_C0 = 5
    D_C1 = 6
    D_SUM = 7
    D_ACE = 8
    D_N = 9
    SUIT = 10
    FACE = 11
    NSTATE = 12

STATE_FIELDS = ("player_c0", "player_c1", "player_sum", "player_ace", "player_n",
                "dealer_c0", "dealer_c1", "dealer_sum", "dealer_ace", "dealer_n", "suit",
                "face")


cdef inline int64_t _draw_card(bitgen_t* rng) noexcept nogil:
    return DECK[choice(rng, 13)]


cdef inline void _add(int64_t* h, int64_t card) noexcept nogil:
    """Append card to the hand at h (c0, c1, sum, ace, n)."""
    if h[4] == 0:
        h[0] = card
    elif h[4] == 1:
        h[1] = card
    h[2] += card
    if card == 1:
        h[3] = 1
    h[4] += 1


cdef inline bint _usable_ace(const int64_t* h) noexcept nogil:
    return h[3] and h[2] + 10 <= 21


cdef inline int64_t _sum_hand(const int64_t* h) noexcept nogil:
    return h[2] + 10 if _usable_ace(h) else h[2]


cdef inline int64_t _score(const int64_t* h) noexcept nogil:
    cdef int64_t s = _sum_hand(h)
    return 0 if s > 21 else s


cdef inline bint _is_natural(const int64_t* h) noexcept nogil:
    """sorted(hand) == [1, 10]."""
    return h[4] == 2 and ((h[0] == 1 and h[1] == 10) or (h[0] == 10 and h[1] == 1))


cdef class BlackjackPool(Engine):
    """num_envs Blackjacks (cypool.api pool; described by cypool.toy_text)."""
    cdef int64_t* st              # (num_envs, NSTATE)
    cdef const int64_t* act
    cdef const uint8_t* nat
    cdef const uint8_t* sab_p
    cdef readonly object actions, states, natural, sab
    # the render hook's state (cypool.toy_text._render): None until the first render
    cdef public object renderer

    def __init__(self, Py_ssize_t num_envs, int num_threads, long long max_episode_steps,
                 kwargs):
        # gymnasium's Tuple observation, one output per item (cypool.api.FamilySpec's layout)
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (), np.int64), ("obs.1", (), np.int64),
                           ("obs.2", (), np.int64)], 0)
        self.actions = np.zeros(num_envs, np.int64)
        self.states = np.zeros((num_envs, NSTATE), np.int64)
        self.states[:, FACE] = -1
        self.natural = np.full(num_envs, bool(kwargs["natural"]), np.uint8)
        self.sab = np.full(num_envs, bool(kwargs["sab"]), np.uint8)
        self.act = <const int64_t*> cnp.PyArray_DATA(self.actions)
        self.st = <int64_t*> cnp.PyArray_DATA(self.states)
        self.nat = <const uint8_t*> cnp.PyArray_DATA(self.natural)
        self.sab_p = <const uint8_t*> cnp.PyArray_DATA(self.sab)

    def configure(self, ids, kwargs):
        """Envs ids (int64) take the complete kwargs: their own natural and sab."""
        ids = np.asarray(ids, np.int64)
        self.natural[ids] = bool(kwargs["natural"])
        self.sab[ids] = bool(kwargs["sab"])

    cdef inline void _obs(self, Py_ssize_t i, EnvRow* r, const int64_t* st) noexcept nogil:
        (<int64_t*> r.obs)[0] = _sum_hand(st + P_C0)
        (<int64_t*> self.output_row(1, i))[0] = st[D_C0]
        (<int64_t*> self.output_row(2, i))[0] = _usable_ace(st + P_C0)

    cdef int env_reset(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef int64_t* st = self.st + NSTATE * i
        cdef int k
        self.row_of(i, &r)
        for k in range(NSTATE):
            st[k] = 0
        _add(st + D_C0, _draw_card(r.rng))
        _add(st + D_C0, _draw_card(r.rng))
        _add(st + P_C0, _draw_card(r.rng))
        _add(st + P_C0, _draw_card(r.rng))
        st[SUIT] = <int64_t> choice(r.rng, 4)
        st[FACE] = <int64_t> choice(r.rng, 3) if st[D_C0] == 10 else -1
        self._obs(i, &r, st)
        return ST_OK

    cdef int env_step(self, Py_ssize_t i, int slot) noexcept nogil:
        cdef EnvRow r
        cdef int64_t* st = self.st + NSTATE * i
        cdef int64_t a = self.act[i]
        cdef double reward
        self.row_of(i, &r)
        if a != 0 and a != 1:
            snprintf(r.err, ERRMSG_LEN, "action %lld is not in Discrete(2)", <long long> a)
            return ST_ENGINE_ERROR
        if st[P_SUM] > 21:
            # a bust hand ended its episode (the engine resets it next): only a state set
            # by hand steps it again (done cleared, or a SAME_STEP pool); a hit from it
            # would leave Discrete(32)
            snprintf(r.err, ERRMSG_LEN, "the player's hand is bust (sum %lld): its episode "
                     "is over; reset the env", <long long> st[P_SUM])
            return ST_ENGINE_ERROR
        if a:
            _add(st + P_C0, _draw_card(r.rng))
            if _sum_hand(st + P_C0) > 21:
                r.term[0] = 1
                reward = -1.0
            else:
                r.term[0] = 0
                reward = 0.0
        else:
            r.term[0] = 1
            while _sum_hand(st + D_C0) < 17:
                _add(st + D_C0, _draw_card(r.rng))
            reward = (<double> (_score(st + P_C0) > _score(st + D_C0))
                      - <double> (_score(st + P_C0) < _score(st + D_C0)))
            if self.sab_p[i] and _is_natural(st + P_C0) and not _is_natural(st + D_C0):
                reward = 1.0
            elif (not self.sab_p[i] and self.nat[i] and _is_natural(st + P_C0)
                  and reward == 1.0):
                reward = 1.5
        r.rew[0] = reward
        self._obs(i, &r, st)
        return ST_OK

    def _env_state(self, Py_ssize_t i):
        return [int(x) for x in self.states[i]]

    def _check_env_state(self, Py_ssize_t i, state):
        """Hands that play reaches, field by field (cypool.toy_text._states): every
        observation from the state on is inside the observation space."""
        check_blackjack(state)

    def _set_env_state(self, Py_ssize_t i, state):
        self.states[i] = state
