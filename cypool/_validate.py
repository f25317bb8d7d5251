"""Checks of user-facing arguments, shared by every entry point (make_vec, make_population,
the façade, the families, the Ray backend): a wrong type is a TypeError, a value out of
range a ValueError, and both name the argument. Nothing else in cypool hand-writes them."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any

import numpy as np

from cypool._core._engine import first_out_of_range

INT64_END = 2**63      # time limits and seeds are kept in int64
C_INT_END = 2**31      # values handed to C ints (frame_skip, noop_max, ...)
# The most envs one pool holds: env ids are reported as int32 (Atari's and EnvPool's
# info["env_id"]), so a larger pool could not name its envs. Memory binds far sooner.
MAX_NUM_ENVS = 2**31 - 1
# Bytes each env of any pool holds at the least once make_vec has built it (the Python
# per-env kwargs dicts and list slots, the engine's rows and counters): measured ~700 for
# CartPole, the smallest env; the families add their buffers and native state on top.
MIN_ENV_BYTES = 512
# Counts that drive a native loop which Ctrl-C cannot interrupt (one env's step or reset
# runs them to the end). No real use needs more; the bounds keep one env's op to about a
# second (a few for the heaviest MuJoCo models), so KeyboardInterrupt lands soon after.
# MuJoCo's leaves room for the slow steps the concurrency tests build (40,000 substeps).
MAX_MUJOCO_FRAME_SKIP = 100_000    # MuJoCo steps per env step (gymnasium's tasks: 2 to 5)
MAX_ATARI_FRAME_SKIP = 1_000       # emulator frames per agent step (EnvPool's default: 4)
MAX_ATARI_NOOP_MAX = 10_000        # no-op frames at a reset, at most (EnvPool's default: 30)


def is_int(v) -> bool:
    """An int or numpy integer, not a bool."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def is_number(v) -> bool:
    """A real number (int, float, numpy scalar), not a bool."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
        v, (bool, np.bool_))


def _interval(low, high, closed_high):
    if high is None:
        return f">= {low}"
    return f"in [{low}, {high}{']' if closed_high else ')'}"


def check_int(name: str, v, low: int | None = None, high: int | None = None, *,
              closed_high: bool = False, what: str = "an int") -> int:
    """``v`` as a Python int, in [low, high) (or [low, high] with closed_high)."""
    if not is_int(v):
        raise TypeError(f"{name} must be {what}, got {type(v).__name__} {v!r}")
    v = int(v)
    if (low is not None and v < low) or (high is not None and (
            v > high if closed_high else v >= high)):
        raise ValueError(f"{name} must be {_interval(low, high, closed_high)}, got {v}")
    return v


MAX_SEED = 2**63  # numpy's SeedSequence takes any non-negative int; keep seeds in int64


def check_seed(s, name: str = "seed", bound: int = MAX_SEED) -> int:
    """An env seed: an int in [0, bound), ``bound`` the family's ``seed_bound``."""
    s = check_int(name, s, what="an int or None")
    if not 0 <= s < bound:
        raise ValueError(f"{name} must be in [0, {_bound_str(bound)}), got {s}")
    return s


def parse_seeds(seed, n: int, bound: int = MAX_SEED) -> list:
    """One seed (int or None) per env of ``n`` from ``reset(seed=...)``'s forms, validated:
    None (every env keeps its stream), an int (env i gets ``seed + i``, so all ``n`` must be
    below ``bound``) or a list of ``n`` ints or None. Nothing is applied."""
    if seed is None:
        return [None] * n
    if is_int(seed):
        s = check_seed(seed, "seed", bound)
        if s + n > bound:
            raise ValueError(f"seed must leave room for num_envs={n} consecutive seeds below "
                             f"{_bound_str(bound)} (env i gets seed + i), got {s}")
        return [s + i for i in range(n)]
    if isinstance(seed, (list, tuple, np.ndarray)):
        if len(seed) != n:
            raise ValueError(f"seed list must have length num_envs={n}, got {len(seed)}")
        return [None if s is None else check_seed(s, "seed[i]", bound) for s in seed]
    raise TypeError(f"seed must be an int, a list of num_envs ints or None, "
                    f"got {type(seed).__name__}")


def parse_env_ids(env_ids, n: int) -> np.ndarray:
    """``env_ids`` (None: every env) as distinct int64 ids in [0, n)."""
    if env_ids is None:
        return np.arange(n, dtype=np.int64)
    ids = np.asarray(env_ids)
    if ids.ndim != 1 or ids.size == 0:
        raise ValueError(f"env_ids must be a non-empty 1-D sequence, got shape {ids.shape}")
    if ids.dtype.kind not in "iu":
        raise TypeError(f"env_ids must be integers, got {ids.dtype}")
    if ids.min() < 0 or ids.max() >= n:
        raise ValueError(f"env_ids must be in [0, {n}), got {ids.tolist()}")
    seen = np.zeros(n, np.bool_)   # local: an interrupt leaves no state behind
    seen[ids] = True
    if int(np.count_nonzero(seen)) != ids.size:
        raise ValueError(f"env_ids must not repeat, got {ids.tolist()}")
    return ids.astype(np.int64)


def parse_reset_options(options, n: int, first: bool, extra=()) -> np.ndarray:
    """The envs ``reset(options=...)`` resets, as an (n,) bool mask: every env, or
    ``options["reset_mask"]`` (a copy; ``first``: the first reset, which must reset all).
    ``extra``: the family's own option keys (its ``reset_options`` checks their values)."""
    mask = np.ones(n, np.bool_)
    if options is None:
        return mask
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
    unknown = set(options) - {"reset_mask", *extra}
    if unknown:
        known = ", ".join(repr(k) for k in ("reset_mask", *extra))
        raise ValueError(f"unknown reset option(s) {sorted(unknown)}; this env takes only "
                         f"{known}")
    if "reset_mask" in options:
        rm = options["reset_mask"]
        if not isinstance(rm, np.ndarray):
            raise TypeError(f"options['reset_mask'] must be a numpy array, got "
                            f"{type(rm).__name__}")
        if rm.shape != (n,):
            raise ValueError(f"options['reset_mask'] must have shape ({n},), got {rm.shape}")
        if rm.dtype != np.bool_:
            raise TypeError(f"options['reset_mask'] must have dtype bool, got {rm.dtype}")
        if not rm.any():
            raise ValueError("options['reset_mask'] must contain at least one True value")
        if first and not rm.all():
            raise ValueError("the first reset must reset every env (no partial reset_mask)")
        mask = rm.copy()
    return mask


def _bound_str(bound: int) -> str:
    b = bound.bit_length() - 1
    return f"2**{b}" if bound == 1 << b else str(bound)


def check_number(name: str, v, low: float | None = None, high: float | None = None) -> float:
    """``v`` as a finite Python float in [low, high]."""
    if not is_number(v):
        raise TypeError(f"{name} must be a number, got {type(v).__name__} {v!r}")
    v = float(v)
    if not math.isfinite(v) or (low is not None and v < low) or (high is not None and v > high):
        rng = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be a finite number {rng}, got {v}")
    return v


def check_count(name: str, v, low: int, high: int, loop: str) -> int:
    """A count kwarg that drives a native loop (``loop`` says which), in [low, high]."""
    v = check_int(name, v, low)
    if v > high:
        raise ValueError(f"{name} must be <= {high}, got {v}: it is the number of {loop}, "
                         f"run natively without a Ctrl-C check; no real use needs more than "
                         f"{high}")
    return v


def loop_count(low: int, high: int, loop: str) -> Interval:
    """check_count's rule as a kwarg kind: an int in [low, high] that drives a native loop
    (``loop`` says which), its error saying why the bound exists."""
    return Interval("int", low, high, note=f"it is the number of {loop}, run natively "
                    f"without a Ctrl-C check; no real use needs more than {high}")


def check_num_envs(num_envs, name: str = "num_envs") -> int:
    """A pool size: an int in [1, MAX_NUM_ENVS] (TypeError / ValueError)."""
    return check_int(name, num_envs, 1, MAX_NUM_ENVS, closed_high=True)


def check_pool_size(num_envs, env_id: str = "", memory: bool = True) -> int:
    """num_envs in [1, MAX_NUM_ENVS] (ValueError beyond) and, with ``memory``, within what
    this process can hold at MIN_ENV_BYTES per env (MemoryError), before anything per env is
    built; the families check their own buffers and native state on top."""
    n = check_num_envs(num_envs)
    if memory:
        check_pool_memory(n, MIN_ENV_BYTES, f"{env_id} envs".lstrip())
    return n


def _read_int(path):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def available_memory() -> tuple[int, str] | None:
    """(bytes this process can still get, where that bound comes from): the least of
    RLIMIT_AS's headroom, the memory cgroup's headroom and /proc/meminfo's MemAvailable +
    SwapFree; None where none of them is known."""
    found = []
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            used = 0
            try:
                with open("/proc/self/status") as f:
                    for line in f:
                        if line.startswith("VmSize:"):
                            used = int(line.split()[1]) * 1024
            except (OSError, ValueError):
                pass
            found.append((max(soft - used, 0), "RLIMIT_AS"))
    except (ImportError, ValueError, OSError):
        pass
    for lim, cur in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                     ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                      "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit, usage = _read_int(lim), _read_int(cur)
        if limit is not None and usage is not None and limit < 2**60:
            found.append((max(limit - usage, 0), "the memory cgroup's limit"))
            break
    try:
        info = {}
        with open("/proc/meminfo") as f:
            for line in f:
                key, _, rest = line.partition(":")
                info[key] = int(rest.split()[0]) * 1024
        if "MemAvailable" in info:
            found.append((info["MemAvailable"] + info.get("SwapFree", 0),
                          "MemAvailable + SwapFree"))
    except (OSError, ValueError, IndexError):
        pass
    return min(found) if found else None


def check_pool_memory(num_envs: int, bytes_per_env: int, what: str = "envs") -> None:
    """MemoryError when ``num_envs`` envs of ``bytes_per_env`` each (a lower bound of what
    the pool will touch) exceed what this process can still get, before anything per env is
    built: an impossible pool fails at once instead of filling memory until the OOM killer
    ends this process or a neighbour."""
    need = int(num_envs) * int(bytes_per_env)
    avail = available_memory()
    if avail is None or need <= avail[0]:
        return
    gib = 2.0**30
    raise MemoryError(f"cypool: {num_envs} {what} need at least {need / gib:.3g} GiB "
                      f"({bytes_per_env} bytes per env), more than this process can get "
                      f"({avail[0] / gib:.3g} GiB, by {avail[1]}); use fewer envs, or spread "
                      f"them over processes or machines (backend='ray')")


def check_limit(v, name: str = "max_episode_steps") -> int:
    """A truncation limit: an int in [1, 2**63)."""
    return check_int(name, v, 1, INT64_END)


def check_discrete_actions(actions, n_actions: int, num_rows: int, env_ids=None) -> np.ndarray:
    """A batch of discrete actions: shape (num_rows,), an integer dtype (floats are refused,
    never rounded), values in [0, n_actions) (a ValueError names the envs); returned as an
    array, unchanged."""
    a = np.asarray(actions)
    if a.shape != (num_rows,):
        raise ValueError(f"actions must have shape ({num_rows},), got {a.shape}")
    if a.dtype.kind not in "iu":
        raise TypeError(f"actions must be integers (action indices in [0, {n_actions})), "
                        f"got {a.dtype}")
    if a.dtype == np.int64 and a.flags.c_contiguous:       # the common case, in one C pass
        if first_out_of_range(a, n_actions) < 0:
            return a
    bad = (a < 0) | (a >= n_actions)
    if bad.any():
        rows = np.flatnonzero(bad)
        envs = rows if env_ids is None else np.asarray(env_ids)[rows]
        raise ValueError(f"actions must be in [0, {n_actions}); got {a[rows].tolist()} for "
                         f"env(s) {envs.tolist()}")
    return a


def check_timeout(timeout) -> None:
    """recv's timeout: None or a number of seconds >= 0."""
    if timeout is None:
        return
    if not is_number(timeout):
        raise TypeError(f"timeout must be a number of seconds or None, got "
                        f"{type(timeout).__name__}")
    if not timeout >= 0:        # negative or NaN
        raise ValueError(f"timeout must be >= 0 seconds, got {timeout!r}")


def env_id_of(env_id) -> str:
    """``env_id`` without gymnasium's ``cypool/`` or ``cypool-`` prefix (a TypeError if not a
    str): ``cypool/Hopper-v5`` and ``cypool-dm_control/cheetah-run-v0`` (gymnasium's names,
    ``cypool.registration.gym_id``), and ``cypool/dm_control/cheetah-run-v0``, the form
    gymnasium refuses, name ``Hopper-v5`` and ``dm_control/cheetah-run-v0``."""
    if not isinstance(env_id, str):
        what = type(env_id).__name__
        hint = ""
        spec = getattr(env_id, "spec", None)
        if getattr(spec, "id", None):       # a gymnasium env (or vector env) made already
            hint = (f": cypool makes the envs itself from an id, e.g. "
                    f"cypool.make_vec({spec.id!r}, num_envs) instead of passing a {what}")
        raise TypeError(f"env_id must be a str (an id of cypool.list_envs()), got {what}"
                        f"{hint}")
    if env_id.startswith("cypool/") or env_id.startswith("cypool-") and "/" in env_id:
        return env_id[len("cypool/"):]
    return env_id


def gym_id(env_id: str) -> str:
    """The id ``gymnasium.make``/``gymnasium.make_vec`` take for cypool's ``env_id``.

    ``cypool/<env_id>`` for an id without a namespace (``gym_id("Hopper-v5") ==
    "cypool/Hopper-v5"``); for an id with one, the ``/`` after ``cypool`` becomes ``-``:
    ``gym_id("dm_control/cartpole-swingup-v0") == "cypool-dm_control/cartpole-swingup-v0"``
    (gymnasium allows one namespace per id, so ``cypool/dm_control/...`` is malformed to it).
    The name after the last ``/`` is the cypool id's own, and no id without a namespace can
    land in a ``cypool-<namespace>`` one, so the two forms never collide. A ValueError if
    gymnasium cannot parse the result (e.g. a namespace holding '.')."""
    if not isinstance(env_id, str) or not env_id:
        raise TypeError(f"gym_id: env_id must be a non-empty str, got {env_id!r}")
    ns, sep, name = env_id.rpartition("/")
    want_ns = f"cypool-{ns}" if sep else "cypool"
    out = f"{want_ns}/{name}"
    from gymnasium.envs.registration import parse_env_id
    from gymnasium.error import Error

    try:
        parsed_ns = parse_env_id(out)[0]
    except Error:
        parsed_ns = None
    if parsed_ns != want_ns:
        raise ValueError(f"gym_id: cypool's id {env_id!r} has no gymnasium form ({out!r} is "
                         "not one gymnasium parses); make it with cypool.make_vec or "
                         "cypool.SingleEnv")
    return out


def env_kwargs_list(env_kwargs, n):
    """env_kwargs as n dicts with str keys (None: n empty dicts)."""
    if env_kwargs is None:
        return [{} for _ in range(n)]
    if isinstance(env_kwargs, (dict, str)) or not isinstance(env_kwargs, Sequence):
        raise TypeError("env_kwargs must be a list of num_envs dicts (or None)")
    if len(env_kwargs) != n:
        raise ValueError(f"env_kwargs must have num_envs={n} entries, got {len(env_kwargs)}")
    out = []
    for i, d in enumerate(env_kwargs):
        d = {} if d is None else d
        if not isinstance(d, dict) or any(not isinstance(k, str) for k in d):
            raise TypeError(f"env_kwargs[{i}] must be a dict of kwarg names (str) to values "
                            f"or None, got {d!r}")
        out.append(dict(d))
    return out


# ---------------------------------------------------------------------------- kwarg kinds
def _kind_bool(v):
    return bool(v) if isinstance(v, (bool, np.bool_)) else None


def _kind_int(v):
    return int(v) if is_int(v) else None


def _kind_number(v):
    return float(v) if is_number(v) else None


def _kind_real(v):
    return v if is_number(v) else None


def _kind_str(v):
    return v if isinstance(v, str) else None


# name -> (converter returning None for a value of another kind, what the error calls it)
KWARG_KINDS = {
    "bool": (_kind_bool, "a bool"),
    "int": (_kind_int, "an int"),
    "number": (_kind_number, "a number"),
    # a number kept as given: for values whose type the env computes in (MuJoCo's
    # healthy_reward: an int gives gymnasium's int64 info)
    "real": (_kind_real, "a number"),
    "str": (_kind_str, "a str"),
    "any": (lambda v: v, "anything"),
}


def kind_of_default(default) -> str:
    """The kind a kwarg takes from its default's type (None and other types: "any")."""
    if isinstance(default, (bool, np.bool_)):
        return "bool"
    if is_int(default):
        return "int"
    if is_number(default):
        return "number"
    if isinstance(default, str):
        return "str"
    return "any"


def _convert(env_id, name, value, kind):
    convert, what = KWARG_KINDS[kind]
    out = convert(value)
    if out is None and kind != "any":
        raise TypeError(f"{env_id}: {name} must be {what}, got {value!r}")
    return out


_BRACKETS = {"both": "[]", "left": "[)", "right": "(]", "neither": "()"}


def _bound_ok(b) -> bool:
    return b is None or is_number(b)


@dataclass(frozen=True)
class Interval:
    """A kwarg kind with bounds (``Kwarg(default, kind=Interval(...))``): a value of
    ``kind`` between ``low`` and ``high``, as scikit-learn's ``Interval`` constraint.

    kind
        ``"int"`` (an int or numpy integer, not a bool; the env gets an int), ``"number"`` (a
        real number, not a bool; the env gets a float) or ``"real"`` (a real number, not a
        bool, kept as given: for values whose type the env computes in). A ``"number"`` or
        ``"real"`` value must be finite (NaN and infinities are a ValueError).
    low, high
        The bounds; None: no bound on that side.
    closed
        Which bounds the interval holds: ``"both"`` (``[low, high]``), ``"left"``
        (``[low, high)``), ``"right"`` (``(low, high]``) or ``"neither"``.
    what
        Optional name of what the values are, for the error (``"a probability"``: "p is a
        probability and must be in [0, 1], got 1.5").
    note
        Optional reason the error ends with (why the bound exists).

    A value of another kind is a TypeError; one outside the interval a ValueError naming the
    env, the kwarg, the bound it crosses, the interval and the value.
    """

    kind: str
    low: Any = None
    high: Any = None
    _: KW_ONLY
    closed: str = "both"
    what: str | None = None
    note: str | None = None

    def __post_init__(self):
        if self.kind not in ("int", "number", "real"):
            raise ValueError(f"Interval kind must be 'int', 'number' or 'real', got "
                             f"{self.kind!r}")
        if not (_bound_ok(self.low) and _bound_ok(self.high)):
            raise TypeError(f"Interval bounds must be numbers or None, got {self.low!r}, "
                            f"{self.high!r}")
        if self.closed not in _BRACKETS:
            raise ValueError(f"Interval closed must be one of {list(_BRACKETS)}, got "
                             f"{self.closed!r}")
        if any(b is not None and not math.isfinite(b) for b in (self.low, self.high)):
            raise ValueError("Interval bounds must be finite (None: no bound)")
        if self.low is not None and self.high is not None and not self.low <= self.high:
            raise ValueError(f"Interval low must be <= high, got {self.low!r}, {self.high!r}")

    def __str__(self):
        """The interval as the errors write it: ``[1, 1000]``, ``>= 0``, ``(-12, 0)``."""
        left, right = _BRACKETS[self.closed]
        if self.low is not None and self.high is not None:
            return f"{left}{self.low}, {self.high}{right}"
        if self.low is not None:
            return f"{'>=' if left == '[' else '>'} {self.low}"
        if self.high is not None:
            return f"{'<=' if right == ']' else '<'} {self.high}"
        return "any"

    def _fault(self, v):
        """None when ``v`` (of the kind) lies in the interval, else what it must be."""
        if self.kind != "int" and not is_int(v) and not math.isfinite(v):
            both = self.low is not None and self.high is not None
            return "a finite number" + (f" in {self}" if both else "" if str(self) == "any"
                                        else f" {self}")
        left, right = _BRACKETS[self.closed]
        if self.low is not None and (v < self.low if left == "[" else v <= self.low):
            return f"{'>=' if left == '[' else '>'} {self.low}"
        if self.high is not None and (v > self.high if right == "]" else v >= self.high):
            return f"{'<=' if right == ']' else '<'} {self.high}"
        return None

    def check(self, env_id, name, value):
        """``value`` converted to the kind and checked (TypeError / ValueError)."""
        out = _convert(env_id, name, value, self.kind)
        fault = self._fault(out)
        if fault is None:
            return out
        both = self.low is not None and self.high is not None
        if self.what is not None:        # the whole interval: "is a probability and must be"
            want = f"in {self}" if both else "a finite number" if str(self) == "any" else str(
                self)
            msg = f"{env_id}: {name} is {self.what} and must be {want}, got {value!r}"
        else:                            # the bound crossed, then the interval
            msg = f"{env_id}: {name} must be {fault}, got {value!r}"
            if both and not fault.startswith("a finite"):
                msg += f" (allowed: {self})"
        raise ValueError(msg + (f": {self.note}" if self.note else ""))


@dataclass(frozen=True)
class Options:
    """A kwarg kind of a closed set of values (``Kwarg(default, kind=Options(...))``), as
    scikit-learn's ``StrOptions``.

    values
        The values taken (any equal value: ``Options(("cypool", "envpool"))``,
        ``Options((False,))``); kept as a tuple.
    kind
        The kind a value must have first (a TypeError otherwise): a name of ``KWARG_KINDS``
        (its value is converted, as that kind converts it); None: the kind every one of
        ``values`` has (``"bool"``, ``"int"``, ``"number"``, ``"str"``; else ``"any"``);
        ``"any"``: no type check, anything that equals none of the values is a ValueError.
    note
        Optional reason the error ends with.

    A value equal to none of them is a ValueError naming the env, the kwarg, the options and
    the value. A bool never equals an int option, nor an int a bool one.
    """

    values: tuple
    _: KW_ONLY
    kind: str | None = None
    note: str | None = None

    def __post_init__(self):
        if isinstance(self.values, (str, bytes)) or not isinstance(
                self.values, (tuple, list, set, frozenset)):
            raise TypeError(f"Options values must be a tuple (or list or set) of values, got "
                            f"{self.values!r}")
        values = tuple(self.values)
        if not values:
            raise ValueError("Options needs at least one value")
        kinds = {kind_of_default(v) for v in values}
        kind = self.kind if self.kind is not None else (kinds.pop() if len(kinds) == 1
                                                         else "any")
        if kind not in KWARG_KINDS:
            raise ValueError(f"Options kind must be one of {sorted(KWARG_KINDS)} or None, got "
                             f"{kind!r}")
        for v in values:
            if kind != "any" and KWARG_KINDS[kind][0](v) is None:
                raise TypeError(f"Options value {v!r} is not of kind {kind!r}")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "kind", kind)

    def _holds(self, v) -> bool:
        flag = isinstance(v, (bool, np.bool_))
        for o in self.values:
            if isinstance(o, (bool, np.bool_)) != flag:
                continue
            try:
                if bool(o == v):
                    return True
            except (TypeError, ValueError):     # e.g. an array compared elementwise
                continue
        return False

    def check(self, env_id, name, value):
        """``value`` converted to the kind and checked (TypeError / ValueError)."""
        out = _convert(env_id, name, value, self.kind)
        if self._holds(out):
            return out
        want = (f"{self.values[0]!r}" if len(self.values) == 1
                else f"one of {list(self.values)}")
        raise ValueError(f"{env_id}: {name} must be {want}, got {value!r}"
                         + (f": {self.note}" if self.note else ""))


KWARG_CONSTRAINTS = (Interval, Options)


def check_kwarg(env_id, name, value, default, kind=None):
    """``value`` of kwarg ``name`` converted to its kind (bool, int, float, str; "real" and
    "any" as it is) and checked against its constraint (an :class:`Interval` or
    :class:`Options` kind), or a TypeError (a value of another kind) / ValueError (outside
    the constraint) naming the env and the kwarg. A None value is accepted where the default
    is None."""
    kind = kind or kind_of_default(default)
    if value is None and default is None:
        return None
    if isinstance(kind, KWARG_CONSTRAINTS):
        return kind.check(env_id, name, value)
    return _convert(env_id, name, value, kind)
