"""Registers the MiniGrid ids (imported by cypool.entry): one FamilySpec each, served by
cypool.minigrid._minigrid's MiniGridPool (imported at the first make).

Each id is minigrid 3.2.0's: same id, kwargs and defaults as minigrid registers them, no
time limit of gymnasium's (the env truncates itself at ``max_steps``). The observation is
minigrid's Dict (gymnasium orders its keys): ``direction`` (int64), ``image`` (the
(view, view, 3) uint8 encoding) and ``mission``, a Text leaf: the kernel writes a mission
code, and the pool maps codes to the cached str objects of ``MISSIONS`` (a batch is a tuple
of str, as gymnasium's SyncVectorEnv batches minigrid's MissionSpace); BabyAI's codes encode
the instruction (``_mission``), each str made at its first use, then cached.

Kwargs: the grid's size and ``agent_view_size`` are per pool (they size the grids and the
image); ``max_steps``, ``see_through_walls`` and the generators' start positions are per
env. Rendering: ``render_mode="rgb_array"`` with minigrid's ``tile_size`` and ``agent_pov``
(per pool), ``highlight`` (per env) and ``screen_size`` (human mode only: checked, unused);
the kernel blits the tiles cypool.minigrid._tiles draws once per tile size.

``wrappers`` (make scope): the minigrid.wrappers the user would have applied, innermost
first, computed in the kernel (``_WRAPPERS``, ``check_wrappers``): Img-, FullyObs-,
OneHotPartialObs-, DirectionObs-, ViewSize-, Symbolic-, Flat- and
DictObservationSpaceWrapper change the observation (and its space; the last two's mission
parts are tables made once per mission code), RGBImgObsWrapper and RGBImgPartialObsWrapper
make it the frame (drawn in the kernel), ActionBonus, PositionBonus and NoDeath the reward,
StochasticActionWrapper the action, ReseedWrapper the resets' streams; any other is refused
(docs/minigrid.md).

A new id: a generator in _minigrid.pyx (``K_*``, ``generate``, its step rules in
``env_step``), its missions in ``MISSIONS``, its kwargs check and config row in
``_GENERATORS`` and its spec in ``SPECS`` below.
"""
from __future__ import annotations

import string

import gymnasium as gym
import numpy as np

from cypool import registry
from cypool.api import Built, FamilySpec, Kwarg, register_spec
from cypool._core.spec import TextLeaf

_MODULE = "cypool.minigrid.registration"
_POOL = "cypool.minigrid._minigrid:MiniGridPool"

# the generators of _minigrid.pyx (K_*)
(K_EMPTY, K_DOORKEY, K_FOURROOMS, K_LAVAGAP, K_CROSSING, K_UNLOCK, K_MEMORY, K_KEYCORRIDOR,
 K_MULTIROOM, K_GOTOLOCAL, K_DISTSHIFT, K_REDBLUE, K_UNLOCKPICKUP, K_BLOCKEDUNLOCK,
 K_DYNOBS, K_GOTODOOR, K_GOTOOBJECT, K_FETCH, K_LOCKEDROOM, K_PUTNEAR, K_PLAYGROUND,
 K_OBSTRUCTED) = range(22)
T_WALL, T_KEY, T_LAVA = 2, 5, 9
_OBJ_TYPES = ("key", "ball", "box")             # T_KEY + k
_COLORS = ("red", "green", "blue", "purple", "yellow", "grey")     # COLOR_TO_IDX order

# each generator's missions, by code (the kernel writes the code)
MISSIONS = {
    K_EMPTY: ("get to the green goal square",),
    K_DOORKEY: ("use the key to open the door and then get to the goal",),
    K_FOURROOMS: ("reach the goal",),
    K_LAVAGAP: ("avoid the lava and get to the green goal square",),
    K_CROSSING: ("avoid the lava and get to the green goal square",
                 "find the opening and get to the green goal square"),
    K_UNLOCK: ("open the door",),
    K_MEMORY: ("go to the matching object at the end of the hallway",),
    K_KEYCORRIDOR: tuple(f"pick up the {c} {t}" for t in _OBJ_TYPES for c in _COLORS),
    K_MULTIROOM: ("traverse the rooms to get to the goal",),
    K_DISTSHIFT: ("get to the green goal square",),
    K_REDBLUE: ("open the red door then the blue door",),
    K_DYNOBS: ("get to the green goal square",),
    K_GOTODOOR: tuple(f"go to the {c} door" for c in _COLORS),
    K_PLAYGROUND: ("",),
    K_OBSTRUCTED: ("pick up the blue ball",),
    K_LOCKEDROOM: tuple(f"get the {lc} key from the {kc} room, unlock the {lc} door and go "
                        "to the goal" for lc in _COLORS for kc in _COLORS),
    K_PUTNEAR: tuple(f"put the {mc} {mt} near the {tc} {tt}" for mt in _OBJ_TYPES
                     for mc in _COLORS for tt in _OBJ_TYPES for tc in _COLORS),
    K_GOTOOBJECT: tuple(f"go to the {c} {t}" for t in _OBJ_TYPES for c in _COLORS),
    K_FETCH: tuple(f"{s} {c} {t}" for s in ("get a", "go get a", "fetch a", "go fetch a",
                                             "you must fetch a")
                   for t in ("key", "ball") for c in _COLORS),
    K_UNLOCKPICKUP: tuple(f"pick up the {c} {t}" for t in _OBJ_TYPES for c in _COLORS),
    K_BLOCKEDUNLOCK: tuple(f"pick up the {c} {t}" for t in _OBJ_TYPES for c in _COLORS),
}


# BabyAI (K_GOTOLOCAL): the kernel writes the instruction's code in two words (_minigrid.pyx
# gen_babyai): root + 4 * (leaf a + 490000 * leaf b), leaf = action + 4 * (desc + 350 * desc
# fixed), desc = ((type * 7 + colour + 1) * 5 + loc + 1) * 2 + (more than one object
# matched); the second word 0, or for a Before/After of Ands (LevelGen): sub + 4 * (leaf c +
# 490000 * leaf d), sub's bit 0 (1): instr_a an And of two leaves, else one, bit 1 instr_b
_ACTIONS = ("go to ", "open ", "pick up ", "put ")
_DESC_TYPES = (None, "key", "ball", "box", "door")
_LOCS = (None, " on your left", " on your right", " in front of you", " behind you")


def _desc_surface(code):
    """ObjDesc.surface."""
    code, many = divmod(code, 2)
    code, loc = divmod(code, 5)
    t, c = divmod(code, 7)
    s = _DESC_TYPES[t] or "object"
    if c:
        s = f"{_COLORS[c - 1]} {s}"
    return ("a " if many else "the ") + s + (_LOCS[loc] or "")


def _leaf_surface(code):
    code, action = divmod(code, 4)
    fixed, move = divmod(code, 350)
    if action == 3:
        return f"put {_desc_surface(move)} next to {_desc_surface(fixed)}"
    return _ACTIONS[action] + _desc_surface(move)


def _mission(code):
    """The mission (surface) of a BabyAI instruction code (an int: the second word 0, or
    the pair of words)."""
    code, code2 = code if isinstance(code, tuple) else (code, 0)
    code, root = divmod(code, 4)
    b, a = divmod(code, 490000)
    if root == 0:
        return _leaf_surface(a)
    sep = (", then ", " after you ", " and ")[root - 1]
    if not code2:
        return _leaf_surface(a) + sep + _leaf_surface(b)
    code2, sub = divmod(code2, 4)
    leaves = iter((a, b, *divmod(code2, 490000)[::-1]))
    parts = [(_leaf_surface(next(leaves)) + " and " + _leaf_surface(next(leaves)))
             if sub >> k & 1 else _leaf_surface(next(leaves)) for k in (0, 1)]
    return parts[0] + sep + parts[1]


class _Missions(dict):
    """code (an int, or the pair of words) -> mission str, each made once (then the cached
    str)."""

    def __missing__(self, code):
        s = self[code] = _mission(code)
        return s


class _MissionLeaf(TextLeaf):
    """A TextLeaf whose strings are made on first use (BabyAI's codes are too many to list);
    one per pool."""

    def __init__(self, name):
        self.name = name
        self.strings = _Missions()

    def __call__(self, outputs, fn):
        codes = fn(outputs[self.name])          # (2,) per env
        s = self.strings
        if codes.ndim == 1:
            a, b = codes.tolist()
            return s[(a, b) if b else a]
        return tuple([s[(a, b) if b else a] for a, b in codes.tolist()])

_MAX_SIZE = 512         # grids are (size * size) cells per env
_MAX_VIEW = 255         # the image is (view, view, 3) per env

# gymnasium's Text over the characters minigrid's missions use
_CHARSET = string.ascii_letters + string.digits + " ,.'"


def _int(env_id, name, v, low, high=None):
    # an int or numpy integer, never a bool (cypool's "int" kind; minigrid asserts
    # isinstance(max_steps, int), which a numpy integer fails: taken here as its int)
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{env_id}: {name} must be an int, got {v!r}")
    if v < low or (high is not None and v > high):
        rng = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{env_id}: {name} must be {rng}, got {v}")
    return int(v)


def _pos(env_id, name, v, low, high):
    """None or an (x, y) pair of ints in [low, high]."""
    if v is None:
        return None
    if not isinstance(v, (tuple, list, np.ndarray)) or len(v) != 2:
        raise TypeError(f"{env_id}: {name} must be None or an (x, y) pair of ints, got {v!r}")
    return tuple(_int(env_id, f"{name}[{k}]", x, low, high) for k, x in enumerate(v))


def _common(env_id, kw, default_steps):
    """The MiniGridEnv kwargs: agent_view_size (odd, >= 3, as minigrid asserts),
    max_steps (None: the env's default; >= 1: a reward divides by it, and 0 or a negative
    limit would end every episode at its first step), see_through_walls."""
    _int(env_id, "agent_view_size", kw["agent_view_size"], 3, _MAX_VIEW)
    if kw["agent_view_size"] % 2 != 1:
        raise ValueError(f"{env_id}: agent_view_size must be odd (the agent sits at the "
                         f"middle of the view's bottom row), got {kw['agent_view_size']}")
    if kw["max_steps"] is not None:
        _int(env_id, "max_steps", kw["max_steps"], 1)
    if "see_through_walls" in kw and not isinstance(kw["see_through_walls"], (bool, np.bool_)):
        raise TypeError(f"{env_id}: see_through_walls must be a bool, got "
                        f"{kw['see_through_walls']!r}")


def _steps_given(env_id, kw):
    """FourRooms, Playground: max_steps has an int default and no None (minigrid asserts
    an int)."""
    _common(env_id, kw, None)
    if kw["max_steps"] is None:
        raise TypeError(f"{env_id}: max_steps must be an int, got None")


def _size(env_id, kw, low):
    return _int(env_id, "size", kw["size"], low, _MAX_SIZE)


# --------------------------------------------------------------------------- generators
# each: (kind, shape(kw) -> (width, height), check(env_id, kw), config(kw) -> row)
# the config row: max_steps, see_through_walls, then the generator's parameters (P_0...)

def _empty_check(env_id, kw):
    size = _size(env_id, kw, 4 if kw["agent_start_pos"] is None else 3)
    _common(env_id, kw, 4 * size ** 2)
    _pos(env_id, "agent_start_pos", kw["agent_start_pos"], 1, size - 2)
    _int(env_id, "agent_start_dir", kw["agent_start_dir"], 0, 3)


def _empty_config(kw):
    size = kw["size"]
    steps = kw["max_steps"] if kw["max_steps"] is not None else 4 * size ** 2
    pos = kw["agent_start_pos"]
    x, y = (-1, -1) if pos is None else (int(pos[0]), int(pos[1]))
    return [steps, 1, x, y, int(kw["agent_start_dir"])]


def _doorkey_check(env_id, kw):
    _size(env_id, kw, 5)                # _rand_int(2, size - 2) needs size >= 5
    _common(env_id, kw, None)


def _doorkey_config(kw):
    size = kw["size"]
    steps = kw["max_steps"] if kw["max_steps"] is not None else 10 * size ** 2
    return [steps, int(kw["see_through_walls"])]


def _fourrooms_check(env_id, kw):
    _steps_given(env_id, kw)
    _pos(env_id, "agent_pos", kw["agent_pos"], 1, 17)
    _pos(env_id, "goal_pos", kw["goal_pos"], 1, 17)


def _fourrooms_config(kw):
    a = kw["agent_pos"] if kw["agent_pos"] is not None else (-1, -1)
    g = kw["goal_pos"] if kw["goal_pos"] is not None else (-1, -1)
    return [kw["max_steps"], int(kw["see_through_walls"]), int(a[0]), int(a[1]),
            int(g[0]), int(g[1])]


def _steps_or(kw, default):
    return kw["max_steps"] if kw["max_steps"] is not None else default


def _lavagap_check(env_id, kw):
    _size(env_id, kw, 5)                # minigrid asserts width >= 5 and height >= 5
    _common(env_id, kw, None)


def _crossing_check(env_id, kw):
    size = _size(env_id, kw, 3)
    if size % 2 != 1:
        raise ValueError(f"{env_id}: size must be odd (the rivers sit on even rows and "
                         f"columns; minigrid asserts it), got {size}")
    _common(env_id, kw, None)
    _int(env_id, "num_crossings", kw["num_crossings"], 0)
    ot = kw["obstacle_type"]
    if not isinstance(ot, str) or ot.lower() not in ("lava", "wall"):
        raise ValueError(f"{env_id}: obstacle_type must be 'lava' or 'wall' (minigrid's "
                         f"Lava or Wall classes are not taken), got {ot!r}")


def _crossing_config(kw):
    t = T_LAVA if kw["obstacle_type"].lower() == "lava" else T_WALL
    return [_steps_or(kw, 4 * kw["size"] ** 2), 0, int(kw["num_crossings"]), t]


def _memory_check(env_id, kw):
    size = _size(env_id, kw, 7)
    if size % 2 != 1:
        raise ValueError(f"{env_id}: size must be odd (the hallway is the middle row; "
                         f"minigrid asserts it), got {size}")
    _common(env_id, kw, None)
    if not isinstance(kw["random_length"], (bool, np.bool_)):
        raise TypeError(f"{env_id}: random_length must be a bool, got {kw['random_length']!r}")


def _keycorridor_check(env_id, kw):
    # the pool's RoomGrid holds up to 16 rooms (3 columns)
    _int(env_id, "num_rows", kw["num_rows"], 1, 5)
    _int(env_id, "room_size", kw["room_size"], 3, 100)
    _common(env_id, kw, None)
    if kw["obj_type"] not in _OBJ_TYPES:
        raise ValueError(f"{env_id}: obj_type must be one of {_OBJ_TYPES}, got "
                         f"{kw['obj_type']!r}")


def _keycorridor_shape(kw):
    s = kw["room_size"] - 1
    return 3 * s + 1, kw["num_rows"] * s + 1


def _multiroom_check(env_id, kw):
    # numRooms <= 16: the pool's room list (minigrid has no bound; its layout search grows
    # with the count)
    lo = _int(env_id, "minNumRooms", kw["minNumRooms"], 1, 16)
    _int(env_id, "maxNumRooms", kw["maxNumRooms"], lo, 16)
    _int(env_id, "maxRoomSize", kw["maxRoomSize"], 4, _MAX_SIZE)
    _int(env_id, "width", kw["width"], 3, _MAX_SIZE)
    _int(env_id, "height", kw["height"], 3, _MAX_SIZE)
    _common(env_id, kw, None)


# BabyAI's levels (K_GOTOLOCAL's variants, _minigrid.pyx V_*)
(V_GOTO, V_REDBALL, V_REDBLUE, V_IMPUNLOCK, V_DOOR, V_OBJDOOR, V_OPEN, V_OPENRED, V_OPENDOOR,
 V_OPENTWO, V_OPENORDER, V_PICKUP, V_UNBLOCKPICKUP, V_PICKUPDIST, V_PICKUPABOVE, V_UNLOCK,
 V_UNLOCKLOCAL, V_KEYINBOX, V_UNLOCKPICKUP, V_BLOCKEDUNLOCKPICKUP, V_UNLOCKTOUNLOCK,
 V_PUTNEXTLOCAL, V_PUTNEXT, V_ACTIONOBJDOOR, V_FINDOBJ, V_KEYCORRIDOR, V_ONEROOM,
 V_MOVETWO, V_PICKUPLOC, V_LEVELGEN) = range(30)
# the kwarg that is the config's n (the objects / doors) and its range, per variant
_BABYAI_N = {V_PUTNEXTLOCAL: ("num_objs", 2, 18), V_PUTNEXT: ("objs_per_room", 1, 9),
             V_OPENORDER: ("num_doors", 2, 4), V_GOTO: ("num_dists", 1, 64),
             V_MOVETWO: ("objs_per_room", 2, 9), V_LEVELGEN: ("num_dists", 1, 64)}
_BABYAI_FLAGS = ("doors_open", "distractors", "start_carrying", "_grey")
_BABYAI_STRICT = ("debug", "strict")


def _babyai_shape(kw):
    """RoomGrid's grid: (num_cols * (room_size - 1) + 1, num_rows * (room_size - 1) + 1)."""
    rs = kw["room_size"]
    return (kw["num_cols"] * (rs - 1) + 1, kw["num_rows"] * (rs - 1) + 1)


def _color(env_id, kw, name):
    if kw.get(name) is not None and kw[name] not in _COLORS:
        raise ValueError(f"{env_id}: {name} must be None or one of {_COLORS}, got "
                         f"{kw[name]!r}")


def _gotolocal_check(env_id, kw):
    # the pool's reachability test works on at most 32 * 32 cells, its room grid on at most
    # 16 rooms
    v = kw["_variant"]
    _int(env_id, "room_size", kw["room_size"], 4 if v == V_PUTNEXT else 3, 32)
    _int(env_id, "num_rows", kw["num_rows"], 1, 16)
    _int(env_id, "num_cols", kw["num_cols"], 1, 16)
    if kw["num_rows"] * kw["num_cols"] > 16:
        raise ValueError(f"{env_id}: at most 16 rooms (num_rows * num_cols), got "
                         f"{kw['num_rows']} * {kw['num_cols']}")
    w, h = _babyai_shape(kw)
    if w * h > 1024:
        raise ValueError(f"{env_id}: the grid ({w} x {h}) must hold at most 1024 cells")
    # num_dists >= 1 where minigrid picks the instruction among the distractors; PutNext's
    # objects all unique (18 kinds); OpenDoorsOrder's doors on one room's 4 walls
    name, low, high = _BABYAI_N.get(v, ("num_dists", 0, 64))
    if name in kw:
        _int(env_id, name, kw[name], low, high)
    for name in (*_BABYAI_FLAGS, *_BABYAI_STRICT):
        if name in kw:
            _bool(env_id, kw, name)
    if kw.get("select_by", None) not in (None, "color", "loc"):
        raise ValueError(f"{env_id}: select_by must be None, 'color' or 'loc', got "
                         f"{kw['select_by']!r}")
    if "obj_type" in kw and kw["obj_type"] not in _OBJ_TYPES:
        raise ValueError(f"{env_id}: obj_type must be one of {_OBJ_TYPES}, got "
                         f"{kw['obj_type']!r}")
    _color(env_id, kw, "first_color")
    _color(env_id, kw, "second_color")
    if v == V_LEVELGEN:
        _levelgen_check(env_id, kw)
    _common(env_id, kw, None)


def _babyai_config(kw):
    """[max_steps, see_through_walls, variant, num_rows, num_cols, room_size, n, flag, sel,
    strict]; max_steps < 0: RoomGridLevel's own, the number of navigations the instruction
    needs times room_size ** 2 * num_rows * num_cols (the kernel multiplies)."""
    v = kw["_variant"]
    steps = kw["max_steps"]
    if steps is None:               # the class's k * room_size ** 2, or RoomGridLevel's
        steps = kw["room_size"] ** 2 * (kw["_steps"] or -kw["num_rows"] * kw["num_cols"])
    if v == V_LEVELGEN:
        return [steps, 0, v, kw["num_rows"], kw["num_cols"], kw["room_size"],
                kw["num_dists"], *_levelgen_config(*(kw[k] for k in _LG_KWARGS))]
    n = kw.get(_BABYAI_N.get(v, ("num_dists",))[0], 0)
    sel = {None: -1, "color": 0, "loc": 1}[kw.get("select_by")] if v == V_OPENDOOR else 0
    if v == V_OPENTWO:
        n, sel = (-1 if kw[k] is None else _COLORS.index(kw[k])
                  for k in ("first_color", "second_color"))
    if v == V_GOTO:
        sel = int(kw.get("_goto_obj", False))
    if v == V_KEYCORRIDOR:
        n = T_KEY + _OBJ_TYPES.index(kw["obj_type"])
    flag = any(bool(kw.get(k, False)) for k in _BABYAI_FLAGS)
    strict = any(bool(kw.get(k, False)) for k in _BABYAI_STRICT)
    return [steps, 0, v, kw["num_rows"], kw["num_cols"], kw["room_size"], n, int(flag), sel,
            int(strict)]


_LG_ACTIONS = {"goto": 0, "open": 1, "pickup": 2, "putnext": 3}      # _minigrid.pyx L_*
_LG_INSTRS = {"action": 1, "and": 2, "seq": 3}
_LG_ALL = (("goto", "pickup", "open", "putnext"), ("action", "and", "seq"))
# LevelGen's own kwargs and defaults; each level fixes some (minigrid: a TypeError if given)
_LG_KWARGS = ("locked_room_prob", "locations", "unblocking", "implicit_unlock", "action_kinds",
              "instr_kinds")
_LG_DEFAULTS = dict(zip(_LG_KWARGS, (0.5, True, True, True, *_LG_ALL)))


def _levelgen_check(env_id, kw):
    """LevelGen's kwargs: locked_room_prob a real number; the flags bools; action_kinds (1 to
    4) and instr_kinds (1 to 3) lists of its kinds, repeats allowed (rand_elem draws one)."""
    p = kw["locked_room_prob"]
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, float, np.integer,
                                                             np.floating)):
        raise TypeError(f"{env_id}: locked_room_prob must be a real number, got {p!r}")
    for name in ("locations", "unblocking", "implicit_unlock"):
        _bool(env_id, kw, name)
    for name, table, most in (("action_kinds", _LG_ACTIONS, 4), ("instr_kinds", _LG_INSTRS, 3)):
        kinds = kw[name]
        if isinstance(kinds, str) or not isinstance(kinds, (list, tuple)):
            raise TypeError(f"{env_id}: {name} must be a list of kinds ({', '.join(table)}), "
                            f"got {kinds!r}")
        if not 1 <= len(kinds) <= most or any(k not in table for k in kinds):
            raise ValueError(f"{env_id}: {name} must be 1 to {most} of {tuple(table)}, got "
                             f"{kinds!r}")


def _levelgen_config(prob, locations, unblocking, implicit_unlock, actions, instrs):
    """LevelGen's config: locked_room_prob's float64 bits, the LG_* flags, the kinds (in
    order: action_kinds base-5 digits 1 + L_*, instr_kinds base-4 digits, times 625)."""
    kinds = sum((_LG_ACTIONS[a] + 1) * 5 ** k for k, a in enumerate(actions))
    kinds += 625 * sum(_LG_INSTRS[a] * 4 ** k for k, a in enumerate(instrs))
    return [int(np.float64(prob).view(np.int64)),
            int(locations) | 2 * int(unblocking) | 4 * int(implicit_unlock), kinds]


def _start(kw, name_pos="agent_start_pos", name_dir="agent_start_dir"):
    pos = kw[name_pos]
    x, y = (-1, -1) if pos is None else (int(pos[0]), int(pos[1]))
    return [x, y, int(kw[name_dir])]


def _distshift_check(env_id, kw):
    w = _int(env_id, "width", kw["width"], 3, _MAX_SIZE)
    h = _int(env_id, "height", kw["height"], 3, _MAX_SIZE)
    _common(env_id, kw, None)
    _pos(env_id, "agent_start_pos", kw["agent_start_pos"], 1, min(w, h) - 2)
    _int(env_id, "agent_start_dir", kw["agent_start_dir"], 0, 3)
    _int(env_id, "strip2_row", kw["strip2_row"], 1, h - 2)


def _dynobs_check(env_id, kw):
    # size <= 50: the pool keeps up to 29 balls' positions (n_obstacles <= size / 2 + 1)
    size = _size(env_id, kw, 4 if kw["agent_start_pos"] is None else 3)
    if size > 50:
        raise ValueError(f"{env_id}: size must be <= 50 (the pool tracks at most 29 "
                         f"obstacles), got {size}")
    _common(env_id, kw, None)
    _pos(env_id, "agent_start_pos", kw["agent_start_pos"], 1, size - 2)
    _int(env_id, "agent_start_dir", kw["agent_start_dir"], 0, 3)
    _int(env_id, "n_obstacles", kw["n_obstacles"], 0)


def _dynobs_config(kw):
    size, n = kw["size"], kw["n_obstacles"]
    n = int(n) if n <= size / 2 + 1 else int(size / 2)      # DynamicObstaclesEnv's rule
    return [_steps_or(kw, 4 * size ** 2), 1, *_start(kw), n]


def _objs_check(env_id, kw, low_size, most):
    """numObjs: >= 1 (one is the target), at most `most` distinct ones, and room left for
    the agent (minigrid would loop forever)."""
    size = _size(env_id, kw, low_size)
    _common(env_id, kw, None)
    free = (size - 2) ** 2 - 1
    _int(env_id, "numObjs", kw["numObjs"], 1, min(most, free))


def _putnear_check(env_id, kw):
    # 2..18 distinct objects, none within a cell of another: at most ceil((size - 2) / 2)
    # squared fit (a random placement that finds no cell fails after MAX_TRIES draws, where
    # minigrid would loop forever)
    size = _size(env_id, kw, 4)
    _common(env_id, kw, None)
    _int(env_id, "numObjs", kw["numObjs"], 2, min(18, ((size - 1) // 2) ** 2))


def _bool(env_id, kw, name):
    if not isinstance(kw[name], (bool, np.bool_)):
        raise TypeError(f"{env_id}: {name} must be a bool, got {kw[name]!r}")


def _obstructed_check(env_id, kw):
    _common(env_id, kw, None)
    _bool(env_id, kw, "key_in_box")
    _bool(env_id, kw, "blocked")
    if "num_quarters" in kw:            # the 3 x 3 mazes (1Dlhb: 2 rooms visited, fixed)
        _int(env_id, "num_rooms_visited", kw["num_rooms_visited"], 1)
        _int(env_id, "num_quarters", kw["num_quarters"], 1, 4)
        _pos(env_id, "agent_room", kw["agent_room"], 0, 2)


def _obstructed_config(kw, variant):
    room = kw.get("agent_room", (0, 0))
    return [_steps_or(kw, 4 * kw.get("num_rooms_visited", 2) * 6 ** 2), 0, variant,
            int(kw["key_in_box"]), int(kw["blocked"]), kw.get("num_quarters", 1),
            int(room[0]), int(room[1])]


_GENERATORS = {
    K_EMPTY: (lambda kw: (kw["size"], kw["size"]), _empty_check, _empty_config),
    K_DOORKEY: (lambda kw: (kw["size"], kw["size"]), _doorkey_check, _doorkey_config),
    K_FOURROOMS: (lambda kw: (19, 19), _fourrooms_check, _fourrooms_config),
    K_LAVAGAP: (lambda kw: (kw["size"], kw["size"]), _lavagap_check,
                lambda kw: [_steps_or(kw, 4 * kw["size"] ** 2), 0]),
    K_CROSSING: (lambda kw: (kw["size"], kw["size"]), _crossing_check, _crossing_config),
    K_UNLOCK: (lambda kw: (11, 6), lambda env_id, kw: _common(env_id, kw, None),
               lambda kw: [_steps_or(kw, 8 * 6 ** 2), 0]),
    K_MEMORY: (lambda kw: (kw["size"], kw["size"]), _memory_check,
               lambda kw: [_steps_or(kw, 5 * kw["size"] ** 2), 0, int(kw["random_length"])]),
    K_MULTIROOM: (lambda kw: (kw["width"], kw["height"]), _multiroom_check,
                  lambda kw: [_steps_or(kw, kw["maxNumRooms"] * 20), int(kw["see_through_walls"]),
                              kw["minNumRooms"], kw["maxNumRooms"], kw["maxRoomSize"]]),
    K_GOTOLOCAL: (_babyai_shape, _gotolocal_check, _babyai_config),
    K_DISTSHIFT: (lambda kw: (kw["width"], kw["height"]), _distshift_check,
                  lambda kw: [_steps_or(kw, 4 * kw["width"] * kw["height"]), 1, *_start(kw),
                              kw["strip2_row"]]),
    K_REDBLUE: (lambda kw: (2 * kw["size"], kw["size"]),
                lambda env_id, kw: (_size(env_id, kw, 3), _common(env_id, kw, None)),
                lambda kw: [_steps_or(kw, 20 * kw["size"] ** 2),
                            int(kw["see_through_walls"])]),
    K_UNLOCKPICKUP: (lambda kw: (11, 6), lambda env_id, kw: _common(env_id, kw, None),
                     lambda kw: [_steps_or(kw, 8 * 6 ** 2), 0]),
    K_BLOCKEDUNLOCK: (lambda kw: (11, 6), lambda env_id, kw: _common(env_id, kw, None),
                      lambda kw: [_steps_or(kw, 16 * 6 ** 2), 0]),
    K_DYNOBS: (lambda kw: (kw["size"], kw["size"]), _dynobs_check, _dynobs_config),
    K_GOTODOOR: (lambda kw: (kw["size"], kw["size"]),
                 lambda env_id, kw: (_size(env_id, kw, 5), _common(env_id, kw, None)),
                 lambda kw: [_steps_or(kw, 4 * kw["size"] ** 2), 1]),
    K_GOTOOBJECT: (lambda kw: (kw["size"], kw["size"]),
                   lambda env_id, kw: _objs_check(env_id, kw, 3, 18),
                   lambda kw: [_steps_or(kw, 5 * kw["size"] ** 2), 1, kw["numObjs"]]),
    # Fetch: up to 27 objects (the agent row's spare slots)
    K_FETCH: (lambda kw: (kw["size"], kw["size"]),
              lambda env_id, kw: _objs_check(env_id, kw, 3, 27),
              lambda kw: [_steps_or(kw, 5 * kw["size"] ** 2), 1, kw["numObjs"]]),
    # LockedRoom: size >= 12 (the doors sit 3 cells into rooms of size // 3 + 1)
    K_LOCKEDROOM: (lambda kw: (kw["size"], kw["size"]),
                   lambda env_id, kw: (_size(env_id, kw, 12), _common(env_id, kw, None)),
                   lambda kw: [_steps_or(kw, 10 * kw["size"]), int(kw["see_through_walls"])]),
    K_PUTNEAR: (lambda kw: (kw["size"], kw["size"]), _putnear_check,
                lambda kw: [_steps_or(kw, 5 * kw["size"]), 1, kw["numObjs"]]),
    K_PLAYGROUND: (lambda kw: (19, 19), _steps_given,
                   lambda kw: [kw["max_steps"], int(kw["see_through_walls"])]),
    # ObstructedMaze: variant 0 (1Dlhb: 1 x 2 rooms), 1 (Full), 2 (Full_V1): 3 x 3 rooms
    K_OBSTRUCTED: (lambda kw: (11, 6) if "num_quarters" not in kw else (16, 16),
                   _obstructed_check, None),
    K_KEYCORRIDOR: (_keycorridor_shape, _keycorridor_check,
                    lambda kw: [_steps_or(kw, 30 * kw["room_size"] ** 2), 0, kw["num_rows"],
                                kw["room_size"], T_KEY + _OBJ_TYPES.index(kw["obj_type"])]),
}


# --------------------------------------------------------------------------- wrappers
# the pool's observation modes (_minigrid.pyx O_*)
O_FULL, O_ONEHOT, O_GOAL, O_IMG, O_RGB, O_POV, O_FLAT, O_WORDS = 1, 2, 4, 8, 16, 32, 64, 128
O_SYM = 256
O_FRAME = O_RGB | O_POV
# the generators whose grids hold a Goal (DirectionObsWrapper raises at reset without one)
_GOAL_KINDS = {K_EMPTY, K_DOORKEY, K_FOURROOMS, K_LAVAGAP, K_CROSSING, K_MULTIROOM,
               K_DISTSHIFT, K_DYNOBS, K_LOCKEDROOM}
# minigrid.wrappers' name -> (its kwargs: the values served; None: checked by the code)
_WRAPPERS = {
    "FullyObsWrapper": {},
    "OneHotPartialObsWrapper": {"tile_size": None},      # any: the encoding ignores it
    "DirectionObsWrapper": {"type": ("slope",)},
    "ImgObsWrapper": {},
    "ActionBonus": {},
    "PositionBonus": {"scale": None},                   # checked by _scale
    "RGBImgObsWrapper": {"tile_size": None},            # checked by _tile_size
    "RGBImgPartialObsWrapper": {"tile_size": None},
    "ViewSizeWrapper": {"agent_view_size": None},
    "NoDeath": {"no_death_types": None, "death_cost": None},
    "ReseedWrapper": {"seeds": None, "seed_idx": None},
    "StochasticActionWrapper": {"prob": None, "random_action": None},
    "FlatObsWrapper": {"maxStrLen": None},
    "DictObservationSpaceWrapper": {"max_words_in_mission": None, "word_dict": None},
    "SymbolicObsWrapper": {},
}
B_ACTION, B_POSITION, B_NODEATH = 1, 2, 3               # _minigrid.pyx B_*
MAX_BONUS = 8
_SUPPORTED = ", ".join(f"minigrid.wrappers.{n}" for n in _WRAPPERS)
# minigrid's OBJECT_TO_IDX names (NoDeath tests `cell.type in no_death_types`)
_TYPE_NAMES = ("unseen", "empty", "wall", "floor", "door", "key", "ball", "box", "goal",
               "lava", "agent")


def _wrapper_name(cls):
    """The minigrid.wrappers name of cls (compared by identity), or None."""
    import minigrid.wrappers as mw

    for name in _WRAPPERS:
        if getattr(mw, name, None) is cls:
            return name
    return None


def _scale(env_id, v, what="PositionBonus scale"):
    """A Python int or float (numpy's float64 is one), which the wrapper uses in float64 (a
    float32 would make the reward a float32)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float)):
        raise TypeError(f"{env_id}: {what} must be an int or float, got {v!r}")
    try:
        return float(v)
    except OverflowError:
        raise ValueError(f"{env_id}: {what} {v} is too large for a float") from None


def _tile_size(env_id, name, v):
    """A tile size: an int in [1, MAX_TILE_SIZE] (the pool keeps every tile at that size)."""
    from cypool.minigrid._tiles import MAX_TILE_SIZE

    return _int(env_id, name, v, 1, MAX_TILE_SIZE)


def _no_death_mask(env_id, types):
    """NoDeath's types as a bit mask of OBJECT_TO_IDX (bit t: `name in no_death_types`, what
    the wrapper tests, for any container: a str tests substrings, as in minigrid)."""
    try:
        mask = sum(1 << t for t, name in enumerate(_TYPE_NAMES) if name in types)
        goal = "goal" in types
    except TypeError:
        raise TypeError(f"{env_id}: NoDeath no_death_types must be a tuple of minigrid type "
                        f"names, got {types!r}") from None
    if goal:
        raise ValueError(f"{env_id}: NoDeath: goal cannot be a death cell (minigrid asserts)")
    return mask


def _seeds(env_id, kw):
    """ReseedWrapper's seeds (Python ints >= 0) and its first index (seeds[seed_idx], a
    negative index from the end, then cycling)."""
    seeds = kw.get("seeds", (0,))
    try:
        seeds = list(seeds)
    except TypeError:
        raise TypeError(f"{env_id}: ReseedWrapper seeds must be a sequence of ints, "
                        f"got {seeds!r}") from None
    if not seeds:
        raise ValueError(f"{env_id}: ReseedWrapper seeds is empty (minigrid raises at reset)")
    for k, s in enumerate(seeds):        # gymnasium's np_random: a Python int >= 0
        if isinstance(s, bool) or not isinstance(s, int):
            raise TypeError(f"{env_id}: ReseedWrapper seeds[{k}] must be a Python int "
                            f"(gymnasium's reset(seed=) raises), got {s!r}")
        if s < 0:
            raise ValueError(f"{env_id}: ReseedWrapper seeds[{k}] must be >= 0, got {s}")
    idx = _int(env_id, "ReseedWrapper seed_idx", kw.get("seed_idx", 0), -len(seeds),
               len(seeds) - 1)
    return seeds, idx % len(seeds)


def _flat_table(env_id, kind, length):
    """FlatObsWrapper's mission part for each of the id's mission codes: the lowered
    mission's characters one-hot (a..z, space, comma: 28 codes) in (length, 28), flattened.
    A mission minigrid would fail on (longer than maxStrLen, another character) is refused
    here, at make."""
    table = np.zeros((len(MISSIONS[kind]), length * 28), np.uint8)
    for code, mission in enumerate(MISSIONS[kind]):
        if len(mission) > length:
            raise ValueError(f"{env_id}: FlatObsWrapper maxStrLen={length} is shorter than "
                             f"the mission {mission!r} ({len(mission)} chars; minigrid "
                             "raises AssertionError when it comes)")
        for k, ch in enumerate(mission.lower()):
            if "a" <= ch <= "z":
                c = ord(ch) - ord("a")
            elif ch in " ,":
                c = 26 + " ,".index(ch)
            else:
                raise ValueError(f"{env_id}: FlatObsWrapper cannot encode {ch!r} of the "
                                 f"mission {mission!r}")
            table[code, k * 28 + c] = 1
    return table


def _word_table(env_id, kind, max_words, word_dict):
    """DictObservationSpaceWrapper's mission for each of the id's mission codes: the words'
    indices (word_dict's, + 1), 0-padded to max_words. A mission minigrid would fail on (an
    unknown word, max_words words or more) is refused here, at make."""
    table = np.zeros((len(MISSIONS[kind]), max_words), np.int64)
    for code, mission in enumerate(MISSIONS[kind]):
        words = mission.replace(",", " , ").split()
        for w in words:
            if w not in word_dict:
                raise ValueError(f"{env_id}: DictObservationSpaceWrapper: the mission "
                                 f"{mission!r} has the unknown word {w!r}")
        if len(words) >= max_words:
            raise ValueError(f"{env_id}: DictObservationSpaceWrapper max_words_in_mission="
                             f"{max_words} must exceed the words of {mission!r} "
                             f"({len(words)}; minigrid asserts)")
        table[code, :len(words)] = [word_dict[w] + 1 for w in words]
    return table


def _word_dict(env_id, d):
    from minigrid.wrappers import DictObservationSpaceWrapper

    if d is None:
        return DictObservationSpaceWrapper.get_minigrid_words()
    if not isinstance(d, dict) or not all(
            isinstance(k, str) and isinstance(v, (int, np.integer))
            and not isinstance(v, (bool, np.bool_)) and -2 ** 63 <= v < 2 ** 63 - 1
            for k, v in d.items()):
        raise TypeError(f"{env_id}: DictObservationSpaceWrapper word_dict must be None or a "
                        "dict of str words to int indices")
    return {k: int(v) for k, v in d.items()}


def check_wrappers(env_id, kind, wrappers, view=7, n_actions=7):
    """(mode, bonus, tile, extra) for ``wrappers``: a list or tuple of minigrid.wrappers
    classes or ``(class, kwargs)`` pairs, innermost first: the pool's observation mode (O_*
    bits), its reward wrappers ((B_*, scale, NoDeath's type mask, the index of the action
    each sees: 0 the user's, k after the k outermost StochasticActionWrappers), in the order
    applied), the RGB wrappers' tile size (0: none) and ``extra``: "view" (the encoded
    image's view size: ViewSizeWrapper's, else ``view``), "stochastic" ((prob,
    random_action or -1), outermost first), "reseed" (None or (seeds, first index)),
    "flat" (FlatObsWrapper's mission table) and "words" (DictObservationSpaceWrapper's
    mission table, its vocabulary's size).
    TypeError for a malformed item, ValueError for a wrapper, kwarg or order the pool cannot
    compute (a wrapper minigrid would crash on: anything after ImgObsWrapper, OneHot twice
    or after FullyObsWrapper, OneHot after an RGB wrapper, RGBImgPartialObsWrapper after a
    wrapper that changed the image's shape)."""
    extra = {"view": view, "stochastic": [], "reseed": None, "flat": None, "words": None}
    if wrappers is None:
        return 0, [], 0, extra
    if not isinstance(wrappers, (list, tuple)):
        raise TypeError(f"{env_id}: wrappers must be a list of minigrid.wrappers classes or "
                        f"(class, kwargs) pairs, innermost first, got {wrappers!r}")
    mode, bonus, tile, oview = 0, [], 0, view
    items = []
    for k, item in enumerate(wrappers):
        cls, kw = item, {}
        if isinstance(item, (tuple, list)):
            if len(item) != 2 or not isinstance(item[1], dict):
                raise TypeError(f"{env_id}: wrappers[{k}] must be a wrapper class or a "
                                f"(class, kwargs dict) pair, got {item!r}")
            cls, kw = item
        name = _wrapper_name(cls)
        if name is None:
            what = getattr(cls, "__qualname__", None) or repr(cls)
            mod = getattr(cls, "__module__", None)
            what = f"{mod}.{what}" if isinstance(cls, type) and mod else what
            raise ValueError(f"{env_id}: wrappers[{k}] is {what}, which cypool cannot compute "
                             f"in the pool; supported: {_SUPPORTED} (apply other wrappers "
                             "to the vector env yourself)")
        for arg, value in kw.items():
            allowed = _WRAPPERS[name].get(arg, ())
            if arg not in _WRAPPERS[name] or (allowed is not None and not (
                    isinstance(value, str) and value in allowed)):
                raise ValueError(f"{env_id}: {name} kwarg {arg}={value!r} is not served "
                                 f"(served: {_WRAPPERS[name] or 'none'})")
        items.append((name, kw))
    # the action each wrapper sees: after the StochasticActionWrappers outside it
    n_stoch = sum(name == "StochasticActionWrapper" for name, _ in items)
    outer = n_stoch
    for k, (name, kw) in enumerate(items):
        if name == "StochasticActionWrapper":
            outer -= 1
            prob = _scale(env_id, kw.get("prob", 0.9), "StochasticActionWrapper prob")
            ra = kw.get("random_action", None)
            if ra is not None:
                ra = _int(env_id, "StochasticActionWrapper random_action", ra, 0,
                          n_actions - 1)
            extra["stochastic"].insert(0, (prob, -1 if ra is None else ra))
            continue
        if name == "ReseedWrapper":
            extra["reseed"] = _seeds(env_id, kw)
            continue
        if name in ("ActionBonus", "PositionBonus", "NoDeath"):    # reward wrappers: anywhere
            outer_seen = outer          # the Stochastic wrappers outside it
            if name == "NoDeath":
                if "no_death_types" not in kw:
                    raise TypeError(f"{env_id}: NoDeath needs no_death_types")
                mask = _no_death_mask(env_id, kw["no_death_types"])
                cost = _scale(env_id, kw.get("death_cost", -1.0), "NoDeath death_cost")
                bonus.append((B_NODEATH, cost, mask, outer_seen))
                continue
            b = B_ACTION if name == "ActionBonus" else B_POSITION
            if any(b == c[0] for c in bonus):
                raise ValueError(f"{env_id}: {name} twice (the pool keeps one count table "
                                 "of each)")
            bonus.append((b, _scale(env_id, kw.get("scale", 1)), 0, outer_seen))
            continue
        if mode & (O_IMG | O_FLAT):
            last = "ImgObsWrapper" if mode & O_IMG else "FlatObsWrapper"
            raise ValueError(f"{env_id}: wrappers[{k}] {name} comes after {last}, whose "
                             "observation is one array (minigrid's wrapper would crash); "
                             f"put {last} last")
        if name in ("FlatObsWrapper", "DictObservationSpaceWrapper"):
            if kind == K_GOTOLOCAL:
                raise ValueError(f"{env_id}: {name} on a BabyAI level is not served (minigrid: "
                                 "not applicable to BabyAI, whose missions need their own "
                                 "language)")
            if mode & O_WORDS:
                raise ValueError(f"{env_id}: {name} after DictObservationSpaceWrapper would "
                                 "read its word indices as a str (minigrid crashes)")
        if name == "ImgObsWrapper":
            mode |= O_IMG
        elif name == "SymbolicObsWrapper":  # (x, y, type or -1) per cell, int64
            mode = (mode | O_SYM) & ~(O_FULL | O_ONEHOT | O_FRAME)
        elif name == "FlatObsWrapper":      # the image flattened + the mission one-hot
            if mode & O_SYM:
                raise ValueError(f"{env_id}: FlatObsWrapper after SymbolicObsWrapper would "
                                 "cast its int64 symbols (-1 included) into its uint8 array")
            length = _int(env_id, "FlatObsWrapper maxStrLen", kw.get("maxStrLen", 96), 0,
                          4096)
            extra["flat"] = _flat_table(env_id, kind, length)
            mode = (mode | O_FLAT) & ~O_GOAL
        elif name == "DictObservationSpaceWrapper":     # its space: image, direction, mission
            words = _word_dict(env_id, kw.get("word_dict"))
            n = _int(env_id, "DictObservationSpaceWrapper max_words_in_mission",
                     kw.get("max_words_in_mission", 50), 1, 4096)
            extra["words"] = (_word_table(env_id, kind, n, words), len(words))
            mode = (mode | O_WORDS) & ~O_GOAL
        elif name == "ViewSizeWrapper":     # the encoded partial view at its size
            v = kw.get("agent_view_size", 7)
            v = _int(env_id, "ViewSizeWrapper agent_view_size", v, 3, _MAX_VIEW)
            if v % 2 != 1:
                raise ValueError(f"{env_id}: ViewSizeWrapper agent_view_size must be odd "
                                 f"(minigrid asserts), got {v}")
            oview = v
            mode &= ~(O_FULL | O_ONEHOT | O_FRAME | O_SYM)
        elif name == "FullyObsWrapper":     # replaces the image, whatever it was
            mode = (mode | O_FULL) & ~(O_ONEHOT | O_FRAME | O_SYM)
        elif name == "RGBImgObsWrapper":    # replaces the image by the full frame
            tile = _tile_size(env_id, f"{name} tile_size", kw.get("tile_size", 8))
            mode = (mode | O_RGB) & ~(O_FULL | O_ONEHOT | O_POV | O_SYM)
        elif name == "RGBImgPartialObsWrapper":
            if mode & (O_FULL | O_FRAME | O_SYM) or oview != view:
                raise ValueError(f"{env_id}: RGBImgPartialObsWrapper after a wrapper that "
                                 "changed the image's shape (FullyObsWrapper, an RGB "
                                 "wrapper, SymbolicObsWrapper or ViewSizeWrapper): "
                                 "minigrid's observation space "
                                 "would not be its frame's shape; put "
                                 "RGBImgPartialObsWrapper first")
            tile = _tile_size(env_id, f"{name} tile_size", kw.get("tile_size", 8))
            mode = (mode | O_POV) & ~O_ONEHOT
        elif name == "OneHotPartialObsWrapper":
            if mode & O_SYM:
                raise ValueError(f"{env_id}: OneHotPartialObsWrapper after SymbolicObsWrapper "
                                 "would read coordinates and -1 as (type, colour, state) "
                                 "codes (minigrid raises IndexError)")
            if mode & O_FRAME:
                raise ValueError(f"{env_id}: OneHotPartialObsWrapper after an RGB wrapper "
                                 "would read pixels as (type, colour, state) codes (minigrid "
                                 "raises IndexError)")
            if mode & O_ONEHOT:
                raise ValueError(f"{env_id}: OneHotPartialObsWrapper twice: the second would "
                                 "read one-hot bits as a (type, colour, state) encoding")
            if mode & O_FULL:
                raise ValueError(f"{env_id}: OneHotPartialObsWrapper after FullyObsWrapper: "
                                 "the agent's cell holds its direction (0..3) as the state, "
                                 "which has 3 one-hot bits (minigrid raises IndexError when "
                                 "the agent faces up); put OneHotPartialObsWrapper first")
            mode |= O_ONEHOT
        elif name == "DirectionObsWrapper":
            if kind not in _GOAL_KINDS:
                raise ValueError(f"{env_id}: DirectionObsWrapper needs a Goal in the grid "
                                 f"(minigrid raises at reset); {env_id} has none")
            if mode & O_GOAL:
                raise ValueError(f"{env_id}: DirectionObsWrapper twice")
            mode |= O_GOAL
    if len(bonus) > MAX_BONUS:
        raise ValueError(f"{env_id}: at most {MAX_BONUS} reward wrappers (ActionBonus, "
                         "PositionBonus, NoDeath)")
    if len(extra["stochastic"]) > MAX_BONUS:
        raise ValueError(f"{env_id}: at most {MAX_BONUS} StochasticActionWrappers")
    if mode & O_IMG:
        mode &= ~O_GOAL                     # ImgObsWrapper drops goal_direction
    extra["view"] = oview
    return mode, bonus, (tile if mode & O_FRAME else 0), extra


# --------------------------------------------------------------------------- spec hooks
def _spaces(kw, kind, mode=0, tile=0, oview=None, extra=None):
    v = oview or kw["agent_view_size"]
    shape = _GENERATORS[kind][0](kw) if mode & O_FULL else (v, v)
    shape += (20 if mode & O_ONEHOT else 3,)
    if mode & O_RGB:                    # (height * tile, width * tile, 3)
        w, h = _GENERATORS[kind][0](kw)
        shape = (h * tile, w * tile, 3)
    elif mode & O_POV:                  # (RGBImgPartialObsWrapper: no ViewSizeWrapper)
        shape = (v * tile, v * tile, 3)
    image = gym.spaces.Box(0, 255, shape, np.uint8)
    if mode & O_SYM:                    # SymbolicObsWrapper's bounds
        w, h = _GENERATORS[kind][0](kw)
        low = np.zeros((w, h, 3), np.int64)
        low[:, :, 2] = -1
        high = np.empty((w, h, 3), np.int64)
        high[:, :, 0], high[:, :, 1], high[:, :, 2] = w - 1, h - 1, 10
        image = gym.spaces.Box(low, high, dtype=np.int64)
    if mode & O_FLAT:
        return gym.spaces.Box(0, 255, (int(np.prod(shape)) + extra["flat"].shape[1],),
                              np.uint8)
    if mode & O_IMG:
        return image
    spaces = {"image": image, "direction": gym.spaces.Discrete(4),
              "mission": gym.spaces.Text(max_length=256, charset=_CHARSET)}
    if mode & O_WORDS:
        table, n_words = extra["words"]
        spaces["mission"] = gym.spaces.MultiDiscrete([n_words + 1] * table.shape[1])
    if mode & O_GOAL:           # DirectionObsWrapper(type="slope"): unbounded
        spaces["goal_direction"] = gym.spaces.Box(-np.inf, np.inf, (), np.float64)
    return gym.spaces.Dict(spaces)


def _with(variant, kw):
    """A BabyAI level's kwargs: its fixed values (the spec's variant dict) under the user's."""
    return {**variant, **kw} if isinstance(variant, dict) else kw


def _config(kind, variant, kw):
    kw = _with(variant, kw)
    if kind == K_OBSTRUCTED:
        return _obstructed_config(kw, variant)
    return _GENERATORS[kind][2](kw)


def _build(kind, variant, fam, num_envs, num_threads, max_episode_steps, env_kwargs):
    from cypool.minigrid._minigrid import MiniGridPool

    kw = _with(variant, fam.kwargs)
    n_actions = 3 if kind == K_DYNOBS else 7
    mode, bonus, tile, extra = check_wrappers(fam.env_id, kind, fam.make_kwargs["wrappers"],
                                              kw["agent_view_size"], n_actions)
    w, h = _GENERATORS[kind][0](kw)
    engine = MiniGridPool(num_envs, num_threads, max_episode_steps,
                          {"agent_view_size": kw["agent_view_size"], "_kind": kind,
                           "_width": w, "_height": h, "_config": _config(kind, variant, kw),
                           "_highlight": kw["highlight"], "_obs": mode, "_bonus": bonus,
                           "_rgb_tile": tile, "_obs_view": extra["view"],
                           "_stochastic": extra["stochastic"], "_reseed": extra["reseed"],
                           "_n_actions": n_actions, "_flat": extra["flat"],
                           "_words": extra["words"] and extra["words"][0]})
    structure = None                    # Img-, FlatObsWrapper: one Box, output "obs"
    if not mode & (O_IMG | O_FLAT):
        structure = {"direction": "obs", "image": "obs.image",
                     "mission": ("obs.mission" if mode & O_WORDS else
                                 _MissionLeaf("obs.mission") if kind == K_GOTOLOCAL
                                 else TextLeaf("obs.mission", MISSIONS[kind]))}
        if mode & O_GOAL:
            structure["goal_direction"] = "obs.goal_direction"
        structure = ("dict", {k: structure[k] for k in sorted(structure)})
    return Built(engine, observation_space=_spaces(kw, kind, mode, tile, extra["view"], extra),
                 obs_structure=structure)


def _configure(kind, variant, fam, ids, kwargs):
    fam.engine.configure(ids, {"_config": _config(kind, variant, kwargs),
                               "_highlight": kwargs["highlight"]})


def _check_render(env_id, kw):
    """minigrid's rendering kwargs: tile_size an int in [1, MAX_TILE_SIZE], highlight and
    agent_pov bools, screen_size (human mode's window) None or an int >= 1."""
    _tile_size(env_id, "tile_size", kw["tile_size"])
    _bool(env_id, kw, "highlight")
    _bool(env_id, kw, "agent_pov")
    if kw["screen_size"] is not None:
        _int(env_id, "screen_size", kw["screen_size"], 1)


def _check(env_id, kind, variant, kw):
    _check_render(env_id, kw)
    _GENERATORS[kind][1](env_id, _with(variant, kw))


def _render(env_id, engine, ids, mode, kw):
    """rgb_array frames: minigrid's render() (get_frame(highlight, tile_size, agent_pov))."""
    if mode != "rgb_array":
        raise ValueError(f"{env_id}: cannot render {mode!r} (only 'rgb_array')")
    return engine.render_frames(ids, kw["tile_size"], bool(kw["highlight"]),
                                bool(kw["agent_pov"]))


def _spec(env_id, kind, kwargs, n_actions=7, variant=None):
    from functools import partial

    kwargs = {**kwargs, "agent_view_size": Kwarg(7, kind="any", scope="pool"),
              "tile_size": Kwarg(32, kind="any", scope="pool"),
              "agent_pov": Kwarg(False, kind="any", scope="pool"),
              "highlight": Kwarg(True, kind="any"), "screen_size": Kwarg(640, kind="any"),
              "wrappers": Kwarg(None, kind="any", scope="make")}
    default = _with(variant, {name: k.default for name, k in kwargs.items()
                              if k.scope != "make"})
    return FamilySpec(
        env_id, _POOL, _spaces(default, kind), gym.spaces.Discrete(n_actions), kwargs=kwargs,
        max_episode_steps=None, check_kwargs=partial(_check, env_id, kind, variant),
        build=partial(_build, kind, variant), configure=partial(_configure, kind, variant),
        render=partial(_render, env_id), render_modes=("rgb_array",), render_fps=10,
        module=_MODULE)


def _steps(default=None):
    return Kwarg(default, kind="any")


def _empty(env_id, size, random):
    return _spec(env_id, K_EMPTY, {
        "size": Kwarg(size, kind="any", scope="pool"),
        "agent_start_pos": Kwarg(None if random else (1, 1), kind="any"),
        "agent_start_dir": Kwarg(0, kind="any"),
        "max_steps": _steps()})


_ONE_ROOM = {"num_rows": 1, "num_cols": 1}


def _babyai(env_id, variant, kwargs, fixed=None, steps=None):
    """A BabyAI level: its class's kwargs (``kwargs``: name -> default; the grid's sizes per
    pool) and max_steps; ``fixed``: what the class sets itself (no kwargs); ``steps``: the
    class's max_steps default, steps * room_size ** 2 (None: RoomGridLevel's, per
    instruction)."""
    pool = ("room_size", "num_rows", "num_cols")
    values = {"room_size": 8, "num_rows": 3, "num_cols": 3, **(fixed or {}),
              "_variant": variant, "_steps": steps}
    spec_kw = {name: Kwarg(d, kind="any", scope="pool" if name in pool else "env")
               for name, d in kwargs.items()}
    spec_kw["max_steps"] = _steps()
    return _spec(env_id, K_GOTOLOCAL, spec_kw, variant=values)


def _levelgen(env_id, sizes, fixed):
    """A LevelGen level: ``sizes`` (room_size, num_rows, num_cols, num_dists; None: all
    fixed) and LevelGen's own kwargs at their defaults, but those the class fixes."""
    sizes = {"room_size": 8, "num_rows": 3, "num_cols": 3, "num_dists": 18} \
        if sizes == {} else (sizes or {})
    free = {k: d for k, d in _LG_DEFAULTS.items() if k not in fixed}
    return _babyai(env_id, V_LEVELGEN, {**sizes, **free}, fixed=fixed)


def _doorkey(env_id, size):
    return _spec(env_id, K_DOORKEY, {
        "size": Kwarg(size, kind="any", scope="pool"), "max_steps": _steps(),
        "see_through_walls": Kwarg(False)})


SPECS = (
    _empty("MiniGrid-Empty-5x5-v0", 5, False),
    _empty("MiniGrid-Empty-Random-5x5-v0", 5, True),
    _empty("MiniGrid-Empty-6x6-v0", 6, False),
    _empty("MiniGrid-Empty-Random-6x6-v0", 6, True),
    _empty("MiniGrid-Empty-8x8-v0", 8, False),
    _empty("MiniGrid-Empty-16x16-v0", 16, False),
    _doorkey("MiniGrid-DoorKey-5x5-v0", 5),
    _doorkey("MiniGrid-DoorKey-6x6-v0", 6),
    _doorkey("MiniGrid-DoorKey-8x8-v0", 8),
    _doorkey("MiniGrid-DoorKey-16x16-v0", 16),
    _spec("MiniGrid-FourRooms-v0", K_FOURROOMS, {
        "agent_pos": Kwarg(None, kind="any"), "goal_pos": Kwarg(None, kind="any"),
        "max_steps": _steps(100), "see_through_walls": Kwarg(False)}),
    *(_spec(f"MiniGrid-{name}S{size}N{n}-v0", K_CROSSING, {
        "size": Kwarg(size, kind="any", scope="pool"), "num_crossings": Kwarg(n, kind="any"),
        "obstacle_type": Kwarg(ot, kind="any"), "max_steps": _steps()})
      for name, ot in (("LavaCrossing", "lava"), ("SimpleCrossing", "wall"))
      for size, n in ((9, 1), (9, 2), (9, 3), (11, 5))),
    *(_spec(f"MiniGrid-LavaGapS{size}-v0", K_LAVAGAP, {
        "size": Kwarg(size, kind="any", scope="pool"), "max_steps": _steps()})
      for size in (5, 6, 7)),
    *(_spec(f"MiniGrid-KeyCorridorS{s}R{r}-v0", K_KEYCORRIDOR, {
        "num_rows": Kwarg(r, kind="any", scope="pool"), "obj_type": Kwarg("ball", kind="any"),
        "room_size": Kwarg(s, kind="any", scope="pool"), "max_steps": _steps()})
      for s, r in ((3, 1), (3, 2), (3, 3), (4, 3), (5, 3), (6, 3))),
    *(_spec(f"MiniGrid-MemoryS{size}{'Random' if rnd else ''}-v0", K_MEMORY, {
        "size": Kwarg(size, kind="any", scope="pool"), "random_length": Kwarg(rnd, kind="any"),
        "max_steps": _steps()})
      for size, rnd in ((17, True), (13, True), (13, False), (11, False), (9, False),
                        (7, False))),
    _spec("MiniGrid-Unlock-v0", K_UNLOCK, {"max_steps": _steps()}),
    *(_spec(f"MiniGrid-MultiRoom-{name}", K_MULTIROOM, {
        "minNumRooms": Kwarg(n, kind="any"), "maxNumRooms": Kwarg(n, kind="any"),
        "maxRoomSize": Kwarg(s, kind="any"), "width": Kwarg(25, kind="any", scope="pool"),
        "height": Kwarg(25, kind="any", scope="pool"), "max_steps": _steps(),
        "see_through_walls": Kwarg(False)})
      # N4-S5-v0 is minigrid's legacy id: 6 rooms
      for name, n, s in (("N2-S4-v0", 2, 4), ("N4-S5-v0", 6, 5), ("N4-S5-v1", 4, 5),
                         ("N6-v0", 6, 10))),
    *(_babyai(f"BabyAI-GoToLocal{name}-v0", V_GOTO, {"room_size": s, "num_dists": n},
              fixed=_ONE_ROOM)
      for name, s, n in (("", 8, 8), ("S5N2", 5, 2), ("S6N2", 6, 2), ("S6N3", 6, 3),
                         ("S6N4", 6, 4), ("S7N4", 7, 4), ("S7N5", 7, 5), ("S8N2", 8, 2),
                         ("S8N3", 8, 3), ("S8N4", 8, 4), ("S8N5", 8, 5), ("S8N6", 8, 6),
                         ("S8N7", 8, 7))),
    *(_babyai(f"BabyAI-GoToRedBall{name}-v0", V_REDBALL, {"room_size": 8, "num_dists": 7},
              fixed={**_ONE_ROOM, "_grey": grey})
      for name, grey in (("Grey", True), ("", False))),
    _babyai("BabyAI-GoToRedBallNoDists-v0", V_REDBALL, {}, fixed={**_ONE_ROOM, "num_dists": 0}),
    *(_babyai(f"BabyAI-GoToObj{name}", V_GOTO, {"room_size": s},
              fixed={**_ONE_ROOM, "num_dists": 1, "_goto_obj": True})
      for name, s in (("-v0", 8), ("S4-v0", 4), ("S6-v1", 6))),
    *(_babyai(f"BabyAI-GoTo{name}-v0", V_GOTO, {
        "room_size": s, "num_rows": r, "num_cols": r, "num_dists": n, "doors_open": o})
      for name, s, r, n, o in (
          ("", 8, 3, 18, False), ("Open", 8, 3, 18, True), ("ObjMaze", 8, 3, 1, False),
          ("ObjMazeOpen", 8, 3, 1, True), ("ObjMazeS4R2", 4, 2, 1, False),
          ("ObjMazeS4", 4, 3, 1, False), ("ObjMazeS5", 5, 3, 1, False),
          ("ObjMazeS6", 6, 3, 1, False), ("ObjMazeS7", 7, 3, 1, False))),
    _babyai("BabyAI-GoToRedBlueBall-v0", V_REDBLUE, {"room_size": 8, "num_dists": 7},
            fixed=_ONE_ROOM),
    _babyai("BabyAI-GoToImpUnlock-v0", V_IMPUNLOCK, {}),
    _babyai("BabyAI-GoToDoor-v0", V_DOOR, {}, fixed={"room_size": 7}),
    _babyai("BabyAI-GoToObjDoor-v0", V_OBJDOOR, {}),
    _babyai("BabyAI-Open-v0", V_OPEN, {}, fixed={"num_dists": 18}),
    _babyai("BabyAI-OpenRedDoor-v0", V_OPENRED, {}, fixed={"room_size": 5, "num_rows": 1,
                                                          "num_cols": 2}),
    *(_babyai(f"BabyAI-OpenDoor{name}-v0", V_OPENDOOR, {"debug": debug, "select_by": sel})
      for name, debug, sel in (("", False, None), ("Debug", True, None),
                               ("Color", False, "color"), ("Loc", False, "loc"))),
    *(_babyai(f"BabyAI-Open{name}-v0", V_OPENTWO, {
        "first_color": first, "second_color": second, "strict": strict},
        fixed={"room_size": 6}, steps=20)
      for name, first, second, strict in (("TwoDoors", None, None, False),
                                          ("RedBlueDoors", "red", "blue", False),
                                          ("RedBlueDoorsDebug", "red", "blue", True))),
    *(_babyai(f"BabyAI-OpenDoorsOrderN{n}{'Debug' if debug else ''}-v0", V_OPENORDER, {
        "num_doors": n, "debug": debug}, fixed={"room_size": 6}, steps=20)
      for debug in (False, True) for n in (2, 4)),
    _babyai("BabyAI-Pickup-v0", V_PICKUP, {}, fixed={"num_dists": 18}),
    _babyai("BabyAI-UnblockPickup-v0", V_UNBLOCKPICKUP, {}, fixed={"num_dists": 20}),
    *(_babyai(f"BabyAI-PickupDist{name}-v0", V_PICKUPDIST, {"debug": debug},
              fixed={**_ONE_ROOM, "room_size": 7})
      for name, debug in (("", False), ("Debug", True))),
    _babyai("BabyAI-PickupAbove-v0", V_PICKUPABOVE, {}, fixed={"room_size": 6}, steps=8),
    _babyai("BabyAI-Unlock-v0", V_UNLOCK, {}),
    *(_babyai(f"BabyAI-UnlockLocal{name}-v0", V_UNLOCKLOCAL, {"distractors": d})
      for name, d in (("", False), ("Dist", True))),
    _babyai("BabyAI-KeyInBox-v0", V_KEYINBOX, {}),
    # UnlockPickup: minigrid tests `max is None` (the builtin): RoomGridLevel's max_steps
    *(_babyai(f"BabyAI-UnlockPickup{name}-v0", V_UNLOCKPICKUP, {"distractors": d},
              fixed={"room_size": 6, "num_rows": 1, "num_cols": 2})
      for name, d in (("", False), ("Dist", True))),
    _babyai("BabyAI-BlockedUnlockPickup-v0", V_BLOCKEDUNLOCKPICKUP, {},
            fixed={"room_size": 6, "num_rows": 1, "num_cols": 2}, steps=16),
    _babyai("BabyAI-UnlockToUnlock-v0", V_UNLOCKTOUNLOCK, {},
            fixed={"room_size": 6, "num_rows": 1, "num_cols": 3}, steps=30),
    *(_babyai(f"BabyAI-PutNextLocal{name}-v0", V_PUTNEXTLOCAL, {"room_size": s, "num_objs": n},
              fixed=_ONE_ROOM)
      for name, s, n in (("", 8, 8), ("S5N3", 5, 3), ("S6N4", 6, 4))),
    *(_babyai(f"BabyAI-PutNextS{s}N{n}{'Carrying' if c else ''}-v0", V_PUTNEXT, {
        "room_size": s, "objs_per_room": n, "start_carrying": c},
        fixed={"num_rows": 1, "num_cols": 2}, steps=8)
      for s, n, c in ((4, 1, False), (5, 2, False), (5, 1, False), (6, 3, False),
                      (7, 4, False), (5, 2, True), (6, 3, True), (7, 4, True))),
    _babyai("BabyAI-ActionObjDoor-v0", V_ACTIONOBJDOOR, {}, fixed={"room_size": 7}),
    *(_babyai(f"BabyAI-FindObjS{s}-v0", V_FINDOBJ, {"room_size": s}, steps=20)
      for s in (5, 6, 7)),
    *(_babyai(f"BabyAI-KeyCorridor{name}-v0", V_KEYCORRIDOR, {
        "num_rows": r, "obj_type": "ball", "room_size": s}, steps=30)
      for name, s, r in (("", 6, 3), ("S3R1", 3, 1), ("S3R2", 3, 2), ("S3R3", 3, 3),
                         ("S4R3", 4, 3), ("S5R3", 5, 3), ("S6R3", 6, 3))),
    *(_babyai(f"BabyAI-OneRoomS{s}-v0", V_ONEROOM, {"room_size": s}, fixed=_ONE_ROOM)
      for s in (8, 12, 16, 20)),
    _babyai("BabyAI-PickupLoc-v0", V_PICKUPLOC, {"room_size": 8},
            fixed={**_ONE_ROOM, "num_dists": 8}),
    # LevelGen's levels: each class's own kwargs (and LevelGen's it passes on) and what it fixes
    *(_levelgen(f"BabyAI-GoToSeq{name}-v0", {
        "room_size": s, "num_rows": r, "num_cols": r, "num_dists": n},
        fixed=dict(action_kinds=("goto",), locked_room_prob=0, locations=False,
                   unblocking=False))
      for name, s, r, n in (("", 8, 3, 18), ("S5R2", 5, 2, 4))),
    *(_levelgen(f"BabyAI-Synth{name}-v0", {
        "room_size": s, "num_rows": r, "num_cols": 3, "num_dists": 18},
        fixed=dict(instr_kinds=("action",), locations=False, unblocking=True,
                   implicit_unlock=False))
      for name, s, r in (("", 8, 3), ("S5R2", 5, 2))),
    *(_levelgen(f"BabyAI-{name}-v0", {}, fixed=fixed) for name, fixed in (
        ("SynthLoc", dict(instr_kinds=("action",), locations=True, unblocking=True,
                          implicit_unlock=False)),
        ("SynthSeq", dict(locations=True, unblocking=True, implicit_unlock=False)),
        ("BossLevel", {}),
        ("BossLevelNoUnlock", dict(locked_room_prob=0, implicit_unlock=False)))),
    _levelgen("BabyAI-MiniBossLevel-v0", None, fixed=dict(
        room_size=5, num_rows=2, num_cols=2, num_dists=7, locked_room_prob=0.25)),
    *(_babyai(f"BabyAI-MoveTwoAcrossS{s}N{n}-v0", V_MOVETWO, {
        "room_size": s, "objs_per_room": n}, fixed={"num_rows": 1, "num_cols": 2}, steps=16)
      for s, n in ((5, 2), (8, 9))),
    *(_spec(f"MiniGrid-DistShift{k}-v0", K_DISTSHIFT, {
        "width": Kwarg(9, kind="any", scope="pool"), "height": Kwarg(7, kind="any", scope="pool"),
        "agent_start_pos": Kwarg((1, 1), kind="any"), "agent_start_dir": Kwarg(0, kind="any"),
        "strip2_row": Kwarg(row, kind="any"), "max_steps": _steps()})
      for k, row in ((1, 2), (2, 5))),
    *(_spec(f"MiniGrid-RedBlueDoors-{s}x{s}-v0", K_REDBLUE, {
        "size": Kwarg(s, kind="any", scope="pool"), "max_steps": _steps(),
        "see_through_walls": Kwarg(False)}) for s in (6, 8)),
    _spec("MiniGrid-UnlockPickup-v0", K_UNLOCKPICKUP, {"max_steps": _steps()}),
    _spec("MiniGrid-BlockedUnlockPickup-v0", K_BLOCKEDUNLOCK, {"max_steps": _steps()}),
    # Dynamic-Obstacles: Discrete(3) actions (minigrid maps an action >= 3 to left; cypool's
    # action check refuses it)
    *(_spec(f"MiniGrid-Dynamic-Obstacles-{name}-v0", K_DYNOBS, {
        "size": Kwarg(s, kind="any", scope="pool"),
        "agent_start_pos": Kwarg(None if rnd else (1, 1), kind="any"),
        "agent_start_dir": Kwarg(0, kind="any"), "n_obstacles": Kwarg(n, kind="any"),
        "max_steps": _steps()}, n_actions=3)
      for name, s, rnd, n in (("5x5", 5, False, 2), ("Random-5x5", 5, True, 2),
                              ("6x6", 6, False, 3), ("Random-6x6", 6, True, 3),
                              ("8x8", 8, False, 4), ("16x16", 16, False, 8))),
    *(_spec(f"MiniGrid-GoToDoor-{s}x{s}-v0", K_GOTODOOR, {
        "size": Kwarg(s, kind="any", scope="pool"), "max_steps": _steps()}) for s in (5, 6, 8)),
    *(_spec(f"MiniGrid-GoToObject-{s}x{s}-N2-v0", K_GOTOOBJECT, {
        "size": Kwarg(s, kind="any", scope="pool"), "numObjs": Kwarg(2, kind="any"),
        "max_steps": _steps()}) for s in (6, 8)),
    *(_spec(f"MiniGrid-Fetch-{s}x{s}-N{n}-v0", K_FETCH, {
        "size": Kwarg(s, kind="any", scope="pool"), "numObjs": Kwarg(n, kind="any"),
        "max_steps": _steps()}) for s, n in ((5, 2), (6, 2), (8, 3))),
    _spec("MiniGrid-LockedRoom-v0", K_LOCKEDROOM, {
        "size": Kwarg(19, kind="any", scope="pool"), "max_steps": _steps(),
        "see_through_walls": Kwarg(False)}),
    *(_spec(f"MiniGrid-PutNear-{s}x{s}-N{n}-v0", K_PUTNEAR, {
        "size": Kwarg(s, kind="any", scope="pool"), "numObjs": Kwarg(n, kind="any"),
        "max_steps": _steps()}) for s, n in ((6, 2), (8, 3))),
    _spec("MiniGrid-Playground-v0", K_PLAYGROUND, {
        "max_steps": _steps(100), "see_through_walls": Kwarg(False)}),
    *(_spec(f"MiniGrid-ObstructedMaze-{name}-v0", K_OBSTRUCTED, {
        "key_in_box": Kwarg(box), "blocked": Kwarg(blocked), "max_steps": _steps()},
        variant=0)
      for name, box, blocked in (("1Dl", False, False), ("1Dlh", True, False),
                                 ("1Dlhb", True, True))),
    *(_spec(f"MiniGrid-ObstructedMaze-{name}-v{v}", K_OBSTRUCTED, {
        "agent_room": Kwarg(room, kind="any"), "key_in_box": Kwarg(box),
        "blocked": Kwarg(blocked), "num_quarters": Kwarg(q, kind="any"),
        "num_rooms_visited": Kwarg(visited, kind="any"), "max_steps": _steps()},
        variant=1 + v)
      for v, name, room, box, blocked, q, visited in (
          (0, "2Dl", (2, 1), False, False, 1, 4), (0, "2Dlh", (2, 1), True, False, 1, 4),
          (0, "2Dlhb", (2, 1), True, True, 1, 4), (0, "1Q", (1, 1), True, True, 1, 5),
          (0, "2Q", (2, 1), True, True, 2, 11), (0, "Full", (1, 1), True, True, 4, 25),
          (1, "2Dlhb", (2, 1), True, True, 1, 4), (1, "1Q", (1, 1), True, True, 1, 5),
          (1, "2Q", (2, 1), True, True, 2, 11), (1, "Full", (1, 1), True, True, 4, 25))),
)

ENV_IDS = tuple(s.env_id for s in SPECS)

for _spec_ in SPECS:
    register_spec(_spec_)
del _spec_

# minigrid's wave-function-collapse ids: their layouts come from minigrid.envs.wfc's pattern
# solver (about 2,400 lines: patterns read from the package's PNG images, a wave whose
# observations draw from np_random, networkx components and node choices), which cypool does
# not reimplement: make_vec refuses them with that reason
WFC_IDS = ("MiniGrid-WFC-MazeSimple-v0", "MiniGrid-WFC-DungeonMazeScaled-v0",
           "MiniGrid-WFC-RoomsFabric-v0", "MiniGrid-WFC-ObstaclesBlackdots-v0",
           "MiniGrid-WFC-ObstaclesAngular-v0", "MiniGrid-WFC-ObstaclesHogs3-v0")
registry.refuse_ids({eid: (
    "minigrid generates its layouts with a wave-function-collapse solver "
    "(minigrid.envs.wfc: pattern images, a wave drawing from np_random, networkx graph "
    "components), which cypool does not reimplement; use gymnasium.make(" + repr(eid) +
    ") from minigrid (pip install \"minigrid[wfc]\") for it") for eid in WFC_IDS})
