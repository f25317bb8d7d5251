"""Kwarg kinds that carry their bounds (issue #41): cypool.api's Interval and Options, as
scikit-learn's parameter constraints. A spec declares each kwarg's range or options as data;
every way an env gets kwargs (make_vec, env_kwargs, populations, set_attr, gymnasium.make)
checks them before the spec's check_kwargs hook, with a TypeError for a value of another kind
and a ValueError naming the env, the kwarg, the range or options and the value. Built on
tests/spec/_counter.pyx (see test_spec.py), compiled as a user's package would be."""
import math
import pickle
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import cypool
import cypool.api
from cypool.api import FamilySpec, Interval, Kwarg, Options

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from _buildext import build_extension, import_built  # noqa: E402

ID = "SpecBounded-v0"


@pytest.fixture(scope="module")
def counter():
    out = build_extension("_counter", HERE / "_counter.pyx", cypool.api.extension_kwargs(),
                          Path.home() / ".cache" / "cypool" / "test-spec")
    return import_built("_counter", out)


def _spaces(kw):
    obs = gym.spaces.Tuple((gym.spaces.Discrete(kw["n"]),
                            gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)))
    return obs, gym.spaces.MultiDiscrete([3, 4])


KWARGS = {
    "n": Kwarg(7, kind=Interval("int", 2, 100), scope="pool"),
    "rate": Kwarg(0.5, kind=Interval("real", 0, 1, what="a rate")),
    "gain": Kwarg(1.0, kind=Interval("number", -2, 2, closed="neither", note="the gain's why")),
    "steps": Kwarg(3, kind=Interval("int", 1, None)),
    "mode": Kwarg("a", kind=Options(("a", "b"))),
    "quiet": Kwarg(False, kind=Options((False,), note="the kernels never print")),
    "level": Kwarg(None, kind=Interval("int", -1, None)),
    "weight": Kwarg(1.0, kind="real"),
}
SEEN = []


def _check(kw):
    SEEN.append(dict(kw))         # what the hook gets: values already checked and converted
    return None


@pytest.fixture
def bounded(counter):
    obs, act = _spaces({"n": 7})
    spec = FamilySpec(ID, counter.CounterPool, obs, act, kwargs=KWARGS, max_episode_steps=9,
                      check_kwargs=_check, spaces=_spaces)
    cypool.api.register_spec(spec)
    SEEN.clear()
    yield spec
    cypool.api.unregister_env(ID)


def test_constraints_are_exported_from_the_public_api():
    assert {"Interval", "Options"} <= set(cypool.api.__all__)
    assert cypool.api.Interval is Interval and cypool.api.Options is Options


def test_values_inside_are_taken_and_converted_by_kind(bounded):
    env = cypool.make_vec(ID, 2, n=np.int64(5), rate=np.float32(0.25), gain=np.int64(1),
                          steps=10**30, mode="b", quiet=np.False_, level=np.int32(-1),
                          weight=3)
    try:
        got = {k: env.get_attr(k)[0] for k in KWARGS}
        assert got == dict(n=5, rate=0.25, gain=1.0, steps=10**30, mode="b", quiet=False,
                           level=-1, weight=3)
        # int: an int; number: a float; real: kept as given (its type is the env's)
        assert type(got["n"]) is int and type(got["gain"]) is float
        assert type(got["rate"]) is np.float32 and type(got["weight"]) is int
        assert type(got["quiet"]) is bool and type(got["level"]) is int
        assert env.single_observation_space[0] == gym.spaces.Discrete(5)
        env.reset(seed=0)
        env.step(np.zeros((2, 2), np.int64))
    finally:
        env.close()
    assert SEEN and type(SEEN[-1]["n"]) is int and type(SEEN[-1]["gain"]) is float


def test_the_bounds_themselves(bounded):
    for kw in (dict(n=2), dict(n=100), dict(rate=0), dict(rate=1), dict(rate=5e-324),
               dict(gain=1.999), dict(gain=-1.999), dict(steps=1), dict(level=None),
               dict(level=2**40)):
        cypool.make_vec(ID, 1, **kw).close()


@pytest.mark.parametrize("kw,match", [
    (dict(n=1), rf"{ID}: n must be >= 2, got 1 \(allowed: \[2, 100\]\)"),
    (dict(n=101), rf"{ID}: n must be <= 100, got 101 \(allowed: \[2, 100\]\)"),
    (dict(rate=1.5), rf"{ID}: rate is a rate and must be in \[0, 1\], got 1.5"),
    (dict(rate=-1e-300), r"rate is a rate and must be in \[0, 1\], got -1e-300"),
    (dict(rate=math.nan), r"rate is a rate and must be in \[0, 1\], got nan"),
    (dict(rate=np.int64(2)), r"rate is a rate and must be in \[0, 1\]"),
    (dict(gain=2.0), r"gain must be < 2, got 2.0 \(allowed: \(-2, 2\)\): the gain's why"),
    (dict(gain=-2), r"gain must be > -2, got -2 \(allowed: \(-2, 2\)\): the gain's why"),
    (dict(gain=math.inf), r"gain must be a finite number in \(-2, 2\), got inf"),
    (dict(gain=-math.inf), r"gain must be a finite number in \(-2, 2\), got -inf"),
    (dict(gain=math.nan), r"gain must be a finite number in \(-2, 2\), got nan"),
    (dict(steps=0), rf"{ID}: steps must be >= 1, got 0$"),
    (dict(level=-2), r"level must be >= -1, got -2"),
    (dict(mode="c"), rf"{ID}: mode must be one of \['a', 'b'\], got 'c'"),
    (dict(quiet=True), rf"{ID}: quiet must be False, got True: the kernels never print"),
    (dict(quiet=np.True_), r"quiet must be False, got np.True_"),
])
def test_values_outside_are_a_value_error_naming_everything(bounded, kw, match):
    with pytest.raises(ValueError, match=match):
        cypool.make_vec(ID, 2, **kw)
    assert SEEN == []             # refused before the spec's hook


@pytest.mark.parametrize("kw,match", [
    (dict(n=7.0), rf"{ID}: n must be an int, got 7.0"),
    (dict(n=True), r"n must be an int, got True"),
    (dict(rate="0.5"), r"rate must be a number, got '0.5'"),
    (dict(rate=True), r"rate must be a number, got True"),
    (dict(gain=None), r"gain must be a number, got None"),
    (dict(steps=np.float64(3)), r"steps must be an int"),
    (dict(mode=1), r"mode must be a str, got 1"),
    (dict(quiet=0), r"quiet must be a bool, got 0"),        # never equal to False here
    (dict(level=1.5), r"level must be an int, got 1.5"),
    (dict(weight="x"), r"weight must be a number, got 'x'"),
])
def test_values_of_another_kind_are_a_type_error(bounded, kw, match):
    with pytest.raises(TypeError, match=match):
        cypool.make_vec(ID, 2, **kw)


def test_every_way_to_set_kwargs_checks_the_constraints(bounded):
    msg = r"rate is a rate and must be in \[0, 1\], got 2"
    with pytest.raises(ValueError, match=msg):
        cypool.make_vec(ID, 2, env_kwargs=[None, {"rate": 2}])
    with pytest.raises(ValueError, match=msg):
        cypool.make_population(ID, 2, 2, member_kwargs=[{}, {"rate": 2}])
    with pytest.raises(ValueError, match=msg):
        gym.make(f"cypool/{ID}", rate=2)
    env = cypool.make_vec(ID, 2, rate=0.25)
    try:
        with pytest.raises(ValueError, match=msg):
            env.set_attr("rate", [0.5, 2])
        assert env.get_attr("rate") == (0.25, 0.25)               # nothing changed
        with pytest.raises(TypeError, match="mode must be a str"):
            env.set_attr("mode", 3)
    finally:
        env.close()
    pop = cypool.make_population(ID, 2, 2)
    try:
        with pytest.raises(ValueError, match=msg):
            pop.set_member_kwargs(1, rate=2)
    finally:
        pop.close()


@pytest.mark.parametrize("closed,inside,outside", [
    ("both", (0, 10), (-1, 11)),
    ("left", (0, 9), (-1, 10)),
    ("right", (1, 10), (0, 11)),
    ("neither", (1, 9), (0, 10)),
])
def test_closed_says_which_bounds_belong(closed, inside, outside):
    iv = Interval("int", 0, 10, closed=closed)
    check = cypool.api.Kwarg(5, kind=iv).kind.check
    for v in inside:
        assert check("E", "k", v) == v
    for v in outside:
        with pytest.raises(ValueError, match=rf"E: k must be [<>]=? \d+, got {v} "):
            check("E", "k", v)
    left, right = {"both": "[]", "left": "[)", "right": "(]", "neither": "()"}[closed]
    assert str(iv) == f"{left}0, 10{right}"


def test_one_sided_and_unbounded_intervals():
    assert str(Interval("int", 1, None)) == ">= 1"
    assert str(Interval("int", 1, None, closed="neither")) == "> 1"
    assert str(Interval("number", None, 0.5)) == "<= 0.5"
    assert str(Interval("number", None, 0.5, closed="left")) == "< 0.5"
    finite = Interval("number")
    assert finite.check("E", "k", -1e308) == -1e308
    with pytest.raises(ValueError, match=r"E: k must be a finite number, got inf$"):
        finite.check("E", "k", math.inf)
    # "real" keeps the value as given, checked for finiteness and bounds
    real = Interval("real", 0, None, what="a count")
    assert type(real.check("E", "k", np.float32(3))) is np.float32
    assert real.check("E", "k", 10**400) == 10**400          # ints are finite, however big
    with pytest.raises(ValueError, match=r"E: k is a count and must be >= 0, got -1"):
        real.check("E", "k", -1)


def test_options_compare_values_of_their_kind():
    ints = Options((1, 2))
    assert ints.kind == "int" and ints.check("E", "k", np.int64(2)) == 2
    with pytest.raises(TypeError, match="k must be an int, got True"):
        ints.check("E", "k", True)                  # a bool is no int, though True == 1
    mixed = Options((None, "x", 3))
    assert mixed.kind == "any" and mixed.check("E", "k", None) is None
    for bad in (True, 4, "y", [3], np.array([3, 3])):
        with pytest.raises(ValueError, match=r"E: k must be one of \[None, 'x', 3\]"):
            mixed.check("E", "k", bad)
    names = Options(("cypool", "envpool"), kind="any")       # no type check: a ValueError
    with pytest.raises(ValueError, match=r"must be one of \['cypool', 'envpool'\], got 5"):
        names.check("E", "k", 5)
    assert Options({"b", "a"}).kind == "str"


@pytest.mark.parametrize("make,exc,match", [
    (lambda: Interval("float"), ValueError, "Interval kind must be"),
    (lambda: Interval("int", 5, 1), ValueError, "low must be <= high"),
    (lambda: Interval("int", "a"), TypeError, "bounds must be numbers"),
    (lambda: Interval("int", True), TypeError, "bounds must be numbers"),
    (lambda: Interval("number", math.nan), ValueError, "bounds must be finite"),
    (lambda: Interval("int", 0, 1, "both"), TypeError, "positional"),     # closed: keyword
    (lambda: Interval("int", 0, 1, closed="open"), ValueError, "closed must be one of"),
    (lambda: Options(()), ValueError, "at least one value"),
    (lambda: Options("ab"), TypeError, "must be a tuple"),
    (lambda: Options((1, "a"), kind="int"), TypeError, "not of kind 'int'"),
    (lambda: Options((1,), kind="integer"), ValueError, "Options kind must be one of"),
    (lambda: Kwarg(0, kind=Interval("int", 1, 10)), ValueError,
     r"Kwarg: default must be >= 1, got 0"),
    (lambda: Kwarg(1.5, kind=Interval("int", 1, 10)), TypeError, "default must be an int"),
    (lambda: Kwarg("c", kind=Options(("a", "b"))), ValueError, "default must be one of"),
    (lambda: Kwarg(1, kind="integer"), ValueError, "kind must be one of"),
])
def test_malformed_constraints_are_refused_when_declared(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_a_spec_with_constraints_registers_again_and_pickles(bounded, counter):
    obs, act = _spaces({"n": 7})
    again = FamilySpec(ID, counter.CounterPool, obs, act, kwargs=dict(KWARGS),
                       max_episode_steps=9, check_kwargs=_check, spaces=_spaces)
    cypool.api.register_spec(again)               # equal constraints: the same registration
    assert pickle.loads(pickle.dumps(KWARGS)) == KWARGS
    assert hash(KWARGS["n"]) == hash(Kwarg(7, kind=Interval("int", 2, 100), scope="pool"))
    other = FamilySpec(ID, counter.CounterPool, obs, act,
                       kwargs={**KWARGS, "n": Kwarg(7, kind=Interval("int", 2, 50),
                                                    scope="pool")},
                       max_episode_steps=9, check_kwargs=_check, spaces=_spaces)
    with pytest.raises(ValueError, match="already served"):
        cypool.api.register_spec(other)           # other bounds: another spec


def test_string_kinds_are_unchanged_and_real_keeps_the_type():
    from cypool._validate import check_kwarg

    assert check_kwarg("E", "k", np.int64(3), 1) == 3 and type(
        check_kwarg("E", "k", np.int64(3), 1)) is int
    assert type(check_kwarg("E", "k", 3, 1.0)) is float                 # "number"
    assert type(check_kwarg("E", "k", np.float32(3), 1.0, "real")) is np.float32
    assert check_kwarg("E", "k", math.inf, 1.0, "real") == math.inf     # no bounds, no check
    with pytest.raises(TypeError, match="E: k must be a number, got True"):
        check_kwarg("E", "k", True, 1.0, "real")
    assert check_kwarg("E", "k", [1], None) == [1]                       # None default: any


@pytest.mark.parametrize("env_id,name,kind", [
    ("Pong-v5", "frame_skip", Interval), ("Pong-v5", "info_keys", Options),
    ("Pong-v5", "repeat_action_probability", Interval), ("Hopper-v5", "frame_skip", Interval),
    ("Hopper-v5", "width", Interval), ("LunarLander-v3", "gravity", Interval),
    ("CarRacing-v3", "verbose", Options), ("FrozenLake-v1", "success_rate", Interval),
    ("Taxi-v4", "rainy_probability", Interval),
])
def test_builtin_families_declare_their_bounds_as_kinds(env_id, name, kind):
    from cypool.registry import spec_of

    assert isinstance(spec_of(env_id).kwargs[name].kind, kind)
