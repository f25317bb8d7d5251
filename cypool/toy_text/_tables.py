"""Transition tables of the tabular toy-text envs (FrozenLake, CliffWalking, Taxi), built in
Python/numpy at construction exactly as gymnasium 1.4.0 builds its ``P`` dicts, then laid out
for the nogil kernels.

A table holds, for every (state, action), up to K = 3 entries in gymnasium's order: the
float64 cumulative sum of their probabilities (``np.cumsum`` of the list, sequential), the
next state, the reward (float64), terminated and the probability itself (``info["prob"]``).
``categorical_sample`` draws one ``random()`` u and takes the first entry whose cumsum is > u,
or entry 0 when none is (u >= cdf[-1]).
"""
from __future__ import annotations

import numpy as np

K = 3          # most entries of one (state, action)


class Table:
    """Entries of every (state, action): arrays (nS, nA, K) and a count (nS, nA)."""

    def __init__(self, nS, nA):
        self.nS, self.nA = nS, nA
        self.cdf = np.zeros((nS, nA, K), np.float64)
        self.prob = np.zeros((nS, nA, K), np.float64)
        self.next = np.zeros((nS, nA, K), np.int64)
        self.reward = np.zeros((nS, nA, K), np.float64)
        self.term = np.zeros((nS, nA, K), np.uint8)
        self.count = np.zeros((nS, nA), np.int64)

    def set(self, s, a, entries):
        """entries: gymnasium's list of (prob, next_state, reward, terminated)."""
        if not 1 <= len(entries) <= K:
            raise ValueError(f"cypool: {len(entries)} transitions of one (state, action)")
        probs = np.asarray([e[0] for e in entries])
        cdf = np.cumsum(probs)                   # categorical_sample's, as it computes it
        n = len(entries)
        self.count[s, a] = n
        self.cdf[s, a, :n] = cdf
        for k, (p, s2, r, t) in enumerate(entries):
            self.prob[s, a, k] = p
            self.next[s, a, k] = s2
            self.reward[s, a, k] = r
            self.term[s, a, k] = bool(t)

    def arrays(self):
        return (self.cdf, self.prob, self.next, self.reward, self.term, self.count)


def initial_cdf(distrib):
    """categorical_sample's cumsum of an initial state distribution (float64)."""
    return np.cumsum(np.asarray(distrib, np.float64))


# ---------------------------------------------------------------- FrozenLake
FROZEN_LAKE_MAPS = {
    "4x4": ["SFFF", "FHFH", "FFFH", "HFFG"],
    "8x8": ["SFFFFFFF", "FFFFFFFF", "FFFHFFFF", "FFFFFHFF", "FFFHFFFF", "FHHFFFHF",
            "FHFFHFHF", "FFFHFFFG"],
}


def frozen_lake_desc(desc, map_name):
    """The map as gymnasium holds it: a 2-d array of 1-byte strings (``dtype="c"``). A
    random map (desc and map_name None) is refused: gymnasium draws it from OS entropy, so
    no seed reproduces it."""
    if desc is None:
        if map_name is None:
            raise ValueError("FrozenLake: desc=None with map_name=None asks for a random map "
                             "drawn from OS entropy (not reproducible); pass "
                             "desc=gymnasium.envs.toy_text.frozen_lake.generate_random_map("
                             "seed=...) instead")
        if map_name not in FROZEN_LAKE_MAPS:
            raise ValueError(f"FrozenLake: unknown map_name {map_name!r}; known: "
                             f"{sorted(FROZEN_LAKE_MAPS)}")
        desc = FROZEN_LAKE_MAPS[map_name]
    try:
        arr = np.asarray(desc, dtype="c")
    except (ValueError, TypeError, UnicodeEncodeError) as exc:
        raise ValueError(f"FrozenLake: desc must be a rectangular map of 1-byte letters "
                         f"({exc})") from None
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"FrozenLake: desc must be a non-empty rectangular map, got shape "
                         f"{arr.shape}")
    return arr


def frozen_lake_initial_cdf(desc):
    d = np.array(desc == b"S").astype("float64").ravel()
    with np.errstate(invalid="ignore", divide="ignore"):
        d /= d.sum()                 # no S: NaN, and categorical_sample gives state 0
    return initial_cdf(d)


def frozen_lake_table(desc, is_slippery, success_rate, reward_schedule):
    """FrozenLakeEnv.__init__'s P (frozen_lake.py:249-301)."""
    nrow, ncol = desc.shape
    nS = nrow * ncol
    t = Table(nS, 4)
    fail_rate = (1.0 - success_rate) / 2.0

    def inc(row, col, a):
        if a == 0:
            col = max(col - 1, 0)
        elif a == 1:
            row = min(row + 1, nrow - 1)
        elif a == 2:
            col = min(col + 1, ncol - 1)
        elif a == 3:
            row = max(row - 1, 0)
        return row, col

    def outcome(row, col, a):
        r2, c2 = inc(row, col, a)
        letter = desc[r2, c2]
        terminated = bytes(letter) in b"GH"
        reward = reward_schedule[b"GHF".index(letter if letter in b"GHF" else b"F")]
        return r2 * ncol + c2, reward, terminated

    for row in range(nrow):
        for col in range(ncol):
            s = row * ncol + col
            letter = desc[row, col]
            for a in range(4):
                if letter in b"GH":
                    t.set(s, a, [(1.0, s, 0, True)])
                elif is_slippery:
                    t.set(s, a, [(success_rate if b == a else fail_rate, *outcome(row, col, b))
                                 for b in [(a - 1) % 4, a, (a + 1) % 4]])
                else:
                    t.set(s, a, [(1.0, *outcome(row, col, a))])
    return t


# ---------------------------------------------------------------- CliffWalking
CLIFF_SHAPE = (4, 12)
CLIFF_START = 36


def cliff_table(is_slippery):
    """CliffWalkingEnv.__init__'s P (cliffwalking.py:166-197). Actions 0 up, 1 right, 2 down,
    3 left."""
    nrow, ncol = CLIFF_SHAPE
    deltas_of = {0: (-1, 0), 1: (0, 1), 2: (1, 0), 3: (0, -1)}
    t = Table(nrow * ncol, 4)
    for s in range(nrow * ncol):
        row, col = divmod(s, ncol)
        for a in range(4):
            moves = [a] if not is_slippery else [(a - 1) % 4, a, (a + 1) % 4]
            p = 1 / len(moves)
            entries = []
            for m in moves:
                dr, dc = deltas_of[m]
                r2 = max(min(row + dr, nrow - 1), 0)
                c2 = max(min(col + dc, ncol - 1), 0)
                if r2 == nrow - 1 and 1 <= c2 <= ncol - 2:          # the cliff
                    entries.append((p, CLIFF_START, -100, False))
                else:
                    entries.append((p, r2 * ncol + c2, -1, (r2, c2) == (nrow - 1, ncol - 1)))
            t.set(s, a, entries)
    return t


def cliff_initial_cdf():
    d = np.zeros(CLIFF_SHAPE[0] * CLIFF_SHAPE[1])
    d[CLIFF_START] = 1.0
    return initial_cdf(d)


# ---------------------------------------------------------------- Taxi
TAXI_MAP = [
    "+---------+",
    "|R: | : :G|",
    "| : | : : |",
    "| : : : : |",
    "| | : | : |",
    "|Y| : |B: |",
    "+---------+",
]
TAXI_LOCS = [(0, 0), (0, 4), (4, 0), (4, 3)]


def taxi_encode(row, col, pass_idx, dest_idx):
    return ((row * 5 + col) * 5 + pass_idx) * 4 + dest_idx


def taxi_decode(s):
    return s // 100, s // 20 % 5, s // 4 % 5, s % 4


def _open(row, c2):
    return TAXI_MAP[1 + row][c2] == ":"


def _pickup(taxi_loc, pass_idx, reward):
    if pass_idx < 4 and taxi_loc == TAXI_LOCS[pass_idx]:
        return 4, reward
    return pass_idx, -10


def _dropoff(taxi_loc, pass_idx, dest_idx, reward):
    if taxi_loc == TAXI_LOCS[dest_idx] and pass_idx == 4:
        return dest_idx, 20, True
    if taxi_loc in TAXI_LOCS and pass_idx == 4:
        return TAXI_LOCS.index(taxi_loc), reward, False
    return pass_idx, -10, False


def _dry(row, col, pass_idx, dest_idx, action):
    """taxi.py:_build_dry_transitions."""
    taxi_loc = (row, col)
    new_row, new_col, new_pass = row, col, pass_idx
    reward, terminated = -1, False
    if action == 0:
        new_row = min(row + 1, 4)
    elif action == 1:
        new_row = max(row - 1, 0)
    if action == 2 and _open(row, 2 * col + 2):
        new_col = min(col + 1, 4)
    elif action == 3 and _open(row, 2 * col):
        new_col = max(col - 1, 0)
    elif action == 4:
        new_pass, reward = _pickup(taxi_loc, new_pass, reward)
    elif action == 5:
        new_pass, reward, terminated = _dropoff(taxi_loc, new_pass, dest_idx, reward)
    return [(1.0, taxi_encode(new_row, new_col, new_pass, dest_idx), reward, terminated)]


def _calc_new_position(row, col, move):
    dr, dc = move
    new_row = max(0, min(row + dr, 4))
    new_col = max(0, min(col + dc, 4))
    if dc == 1 and not _open(new_row, 2 * new_col):
        return row, col
    if dc == -1 and not _open(new_row, 2 * new_col + 2):
        return row, col
    return new_row, new_col


_RAINY_MOVES = {
    0: ((1, 0), (0, 1), (0, -1)),
    1: ((-1, 0), (0, -1), (0, 1)),
    2: ((0, 1), (-1, 0), (1, 0)),
    3: ((0, -1), (1, 0), (-1, 0)),
}


def _rainy(row, col, pass_idx, dest_idx, action, rainy_probability, lateral):
    """taxi.py:_build_rainy_transitions."""
    taxi_loc = left_pos = right_pos = (row, col)
    new_row, new_col, new_pass = row, col, pass_idx
    reward, terminated = -1, False
    if ((action == 0 and row < 4) or (action == 1 and row > 0)
            or (action == 2 and _open(row, 2 * col + 2))
            or (action == 3 and _open(row, 2 * col))):
        dr, dc = _RAINY_MOVES[action][0]
        new_row = max(0, min(row + dr, 4))
        new_col = max(0, min(col + dc, 4))
        left_pos = _calc_new_position(row, col, _RAINY_MOVES[action][1])
        right_pos = _calc_new_position(row, col, _RAINY_MOVES[action][2])
    elif action == 4:
        new_pass, reward = _pickup(taxi_loc, new_pass, reward)
    elif action == 5:
        new_pass, reward, terminated = _dropoff(taxi_loc, new_pass, dest_idx, reward)
    intended = taxi_encode(new_row, new_col, new_pass, dest_idx)
    if action <= 3:
        left = taxi_encode(left_pos[0], left_pos[1], new_pass, dest_idx)
        right = taxi_encode(right_pos[0], right_pos[1], new_pass, dest_idx)
        return [(rainy_probability, intended, -1, terminated),
                (lateral, left, -1, terminated), (lateral, right, -1, terminated)]
    return [(1.0, intended, reward, terminated)]


def taxi_table(is_rainy, rainy_probability):
    """TaxiEnv.__init__'s P (taxi.py:319-371)."""
    lateral = (1.0 - rainy_probability) / 2.0
    t = Table(500, 6)
    for row in range(5):
        for col in range(5):
            for pass_idx in range(5):
                for dest_idx in range(4):
                    s = taxi_encode(row, col, pass_idx, dest_idx)
                    for a in range(6):
                        if is_rainy:
                            t.set(s, a, _rainy(row, col, pass_idx, dest_idx, a,
                                               rainy_probability, lateral))
                        else:
                            t.set(s, a, _dry(row, col, pass_idx, dest_idx, a))
    return t


def taxi_initial_cdf():
    d = np.zeros(500)
    for row in range(5):
        for col in range(5):
            for pass_idx in range(5):
                for dest_idx in range(4):
                    if pass_idx < 4 and pass_idx != dest_idx:
                        d[taxi_encode(row, col, pass_idx, dest_idx)] += 1
    d /= d.sum()
    return initial_cdf(d)


def taxi_action_masks():
    """TaxiEnv.action_mask of every state: (500, 6) float64 of 0/1."""
    m = np.zeros((500, 6), np.float64)
    for s in range(500):
        row, col, pass_loc, dest_idx = taxi_decode(s)
        m[s, 0] = row < 4
        m[s, 1] = row > 0
        m[s, 2] = col < 4 and _open(row, 2 * col + 2)
        m[s, 3] = col > 0 and _open(row, 2 * col)
        m[s, 4] = pass_loc < 4 and (row, col) == TAXI_LOCS[pass_loc]
        m[s, 5] = pass_loc == 4 and ((row, col) == TAXI_LOCS[dest_idx]
                                     or (row, col) in TAXI_LOCS)
    return m


class Variants:
    """The distinct tables a pool's envs use (per-env kwargs), stacked (V, nS, nA, K) for the
    kernels; env i uses variant ``index[i]``. Unused variants are dropped on every change."""

    def __init__(self, num_envs, build):
        self.build = build               # key -> Table
        self.keys = []
        self.tables = []
        self.index = np.zeros(num_envs, np.int64)
        self.stacked = None

    def assign(self, ids, key):
        if key not in self.keys:
            self.keys.append(key)
            self.tables.append(self.build(key))
        self.index[ids] = self.keys.index(key)
        used = sorted(set(self.index.tolist()))
        if len(used) < len(self.keys):
            remap = {old: new for new, old in enumerate(used)}
            self.keys = [self.keys[k] for k in used]
            self.tables = [self.tables[k] for k in used]
            self.index[:] = [remap[int(v)] for v in self.index]
        self.stacked = tuple(np.ascontiguousarray(np.stack(col))
                             for col in zip(*(t.arrays() for t in self.tables)))
        return self.stacked
