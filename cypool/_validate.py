"""Checks of user-facing arguments, shared by every entry point (make_vec, make_population,
the façade, the families, the Ray backend): a wrong type is a TypeError, a value out of
range a ValueError, and both name the argument. Nothing else in cypool hand-writes them."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from cypool._core._engine import first_out_of_range

INT64_END = 2**63      # time limits and seeds are kept in int64
C_INT_END = 2**31      # values handed to C ints (frame_skip, noop_max, ...)


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


def check_number(name: str, v, low: float | None = None, high: float | None = None) -> float:
    """``v`` as a finite Python float in [low, high]."""
    if not is_number(v):
        raise TypeError(f"{name} must be a number, got {type(v).__name__} {v!r}")
    v = float(v)
    if not math.isfinite(v) or (low is not None and v < low) or (high is not None and v > high):
        rng = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be a finite number {rng}, got {v}")
    return v


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
    """``env_id`` without gymnasium's ``cypool/`` namespace (a TypeError if not a str)."""
    if not isinstance(env_id, str):
        raise TypeError(f"env_id must be a str, got {type(env_id).__name__}")
    return env_id[len("cypool/"):] if env_id.startswith("cypool/") else env_id


def check_num_envs(num_envs) -> int:
    return check_int("num_envs", num_envs, 1)


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


def _kind_str(v):
    return v if isinstance(v, str) else None


# name -> (converter returning None for a value of another kind, what the error calls it)
KWARG_KINDS = {
    "bool": (_kind_bool, "a bool"),
    "int": (_kind_int, "an int"),
    "number": (_kind_number, "a number"),
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


def check_kwarg(env_id, name, value, default, kind=None):
    """``value`` of kwarg ``name`` converted to its kind (bool, int, float, str; "any" as it
    is), or a TypeError naming the env and the kwarg. A None value is accepted where the
    default is None."""
    kind = kind or kind_of_default(default)
    if value is None and default is None:
        return None
    convert, what = KWARG_KINDS[kind]
    out = convert(value)
    if out is None and kind != "any":
        raise TypeError(f"{env_id}: {name} must be {what}, got {value!r}")
    return out
