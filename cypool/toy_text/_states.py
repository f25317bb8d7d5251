"""The checks of the toy-text pools' env states (``set_state``, unpickling, deepcopy): each
pool's ``_check_env_state`` calls one of these, with the GIL, before any env changes (the
engine installs nothing until every env's state has passed).

A state is accepted only if it is one that play reaches, field by field, so that every
observation the env can produce from it (the state's own, and those of any steps after it)
lies inside the observation space: a tabular env's state is a cell of the map, Blackjack's
hands are hands that the rules deal and draw (their sums, counts and aces agree with their
first two cards). A refused state raises ValueError naming the field; the engine prefixes
"cypool: state k: env: ".
"""
from __future__ import annotations

from functools import lru_cache

__all__ = ["check_tabular", "check_taxi", "check_blackjack", "BLACKJACK_FIELDS"]


def _ints(family, state, fields):
    """state: a list of len(fields) Python ints (bools refused: not a count or an index)."""
    if not isinstance(state, list) or len(state) != len(fields):
        raise ValueError(f"not a {family} env state: a list of {len(fields)} ints "
                         f"({', '.join(fields)}) expected, got {_show(state)}")
    for name, x in zip(fields, state):
        if type(x) is not int:
            raise ValueError(f"{family} state field {name} must be an int, got {_show(x)}")


def _show(x):
    s = repr(x)
    return s if len(s) <= 80 else s[:77] + "..."


def _bound(family, name, x, lo, hi, why):
    if not lo <= x <= hi:
        raise ValueError(f"{family} state field {name} = {x} is outside [{lo}, {hi}] ({why})")


# ---------------------------------------------------------------- tabular envs
TABULAR_FIELDS = ("s", "lastaction")
TAXI_FIELDS = ("s", "lastaction", "fickle_step", "orientation")


def check_tabular(family, state, nS, nA):
    """FrozenLake, CliffWalking: [s, lastaction]. s is the observation (Discrete(nS)); every
    step from any cell goes to a cell of the table, lastaction (-1: none yet) is what
    rendering reads."""
    _ints(family, state, TABULAR_FIELDS)
    _bound(family, "s", state[0], 0, nS - 1, f"the observation space is Discrete({nS})")
    _bound(family, "lastaction", state[1], -1, nA - 1, "an action, or -1 before the first step")


def check_taxi(state):
    """Taxi: [s, lastaction, fickle_step, orientation]."""
    _ints("Taxi", state, TAXI_FIELDS)
    _bound("Taxi", "s", state[0], 0, 499, "the observation space is Discrete(500)")
    _bound("Taxi", "lastaction", state[1], -1, 5, "an action, or -1 before the first step")
    _bound("Taxi", "fickle_step", state[2], 0, 1, "a flag")
    _bound("Taxi", "orientation", state[3], 0, 3, "the last move action, 0 after a reset")


# ---------------------------------------------------------------- Blackjack
BLACKJACK_FIELDS = ("player_c0", "player_c1", "player_sum", "player_ace", "player_n",
                    "dealer_c0", "dealer_c1", "dealer_sum", "dealer_ace", "dealer_n", "suit",
                    "face")


def _sum_hand(raw, ace):
    return raw + 10 if ace and raw + 10 <= 21 else raw


@lru_cache(maxsize=None)
def _hands(c0, c1, dealer):
    """Every (raw sum, ace, card count) a hand dealt c0, c1 holds between two steps, and the
    most cards it holds: the player hits only while its hand is not bust (raw sum <= 21:
    its score is then <= 21); the dealer draws, at the player's stick, while its score is
    < 17, and stops there, so it holds 3 or more cards only once its score is >= 17."""
    start = (c0 + c1, int(c0 == 1 or c1 == 1), 2)
    seen, todo = {start}, [start]
    while todo:
        raw, ace, n = todo.pop()
        if (_sum_hand(raw, ace) >= 17) if dealer else raw > 21:
            continue
        for card in range(1, 11):
            h = (raw + card, int(ace or card == 1), n + 1)
            if h not in seen:
                seen.add(h)
                todo.append(h)
    if dealer:
        seen = {h for h in seen if h[2] == 2 or _sum_hand(h[0], h[1]) >= 17}
    return frozenset(seen), max(h[2] for h in seen)


def _ranges(xs):
    """Sorted ints as "a..b, c, d..e"."""
    out, lo = [], xs[0]
    for prev, x in zip(xs, xs[1:] + [None]):
        if x is None or x != prev + 1:
            out.append(str(lo) if lo == prev else f"{lo}..{prev}")
            lo = x
    return ", ".join(out)


def _check_hand(who, c0, c1, raw, ace, n):
    f = who + "_"
    for k, c in (("c0", c0), ("c1", c1)):
        _bound("Blackjack", f + k, c, 1, 10, "a card: 1 (ace) to 10")
    hands, most = _hands(c0, c1, who == "dealer")
    _bound("Blackjack", f + "n", n, 2, most, f"the cards a {who}'s hand dealt {c0}, {c1} can "
           "hold" + (" (the player draws only while not bust)" if who == "player" else
                     " (the dealer draws only while its score is below 17)"))
    _bound("Blackjack", f + "ace", ace, 0, 1, "a flag")
    if (c0 == 1 or c1 == 1) and not ace:
        raise ValueError(f"Blackjack state field {f}ace = 0, but the {who}'s hand holds an "
                         f"ace ({f}c0, {f}c1 = {c0}, {c1})")
    if (raw, ace, n) not in hands:
        sums = sorted(h[0] for h in hands if h[1:] == (ace, n))
        if not sums:
            raise ValueError(f"Blackjack state field {f}ace = {ace} does not fit a {who}'s "
                             f"hand of {n} cards dealt {c0}, {c1}")
        want = "one of " + _ranges(sums)
        raise ValueError(f"Blackjack state field {f}sum = {raw} is not the sum of a {who}'s "
                         f"hand of {n} cards dealt {c0}, {c1} with {f}ace = {ace} that play "
                         f"reaches ({want})")


def check_blackjack(state):
    """[player c0, c1, sum, ace, n; dealer c0, c1, sum, ace, n; suit; face]: each hand one
    that play reaches from its first two cards, the dealer's drawn only after the player
    stuck (so not against a bust player), the suit one of 4 and the face (J, Q, K) set
    exactly when the dealer shows a 10. Then the observation (score <= 31, the dealer's
    card 1..10, the usable ace) is inside Tuple(Discrete(32), Discrete(11), Discrete(2)),
    and so is every hit's: the player hits only a hand that is not bust (the kernel refuses
    to step a bust hand: its episode is over)."""
    _ints("Blackjack", state, BLACKJACK_FIELDS)
    _check_hand("player", *state[0:5])
    _check_hand("dealer", *state[5:10])
    if state[9] > 2 and state[2] > 21:
        raise ValueError(f"Blackjack state field dealer_n = {state[9]}: the dealer draws only "
                         f"after the player sticks, but the player's hand is bust "
                         f"(player_sum = {state[2]})")
    _bound("Blackjack", "suit", state[10], 0, 3, "the dealer's suit: C, D, H, S")
    if state[5] == 10:
        _bound("Blackjack", "face", state[11], 0, 2,
               "the face card (J, Q, K) of the dealer's 10")
    elif state[11] != -1:
        raise ValueError(f"Blackjack state field face = {state[11]} must be -1: the dealer "
                         f"shows {state[5]}, not a 10")
