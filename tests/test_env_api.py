"""cypool.api's registration contract: what register_env and each construction check of a
user's pool before any kernel runs (the envs' behaviour itself is tested by the classic
family, built on this API, and by examples/custom_env against a Python twin). A registration
that fails is a clear TypeError or ValueError naming what is wrong and leaves nothing
registered (list_envs(), gymnasium's registry, the family table)."""
import gymnasium as gym
import numpy as np
import pytest

import cypool
import cypool.api
from cypool import families
from cypool._core._engine import Engine

BOX = gym.spaces.Box(-1.0, 1.0, (3,), np.float64)


class Pool(Engine):
    """A pool whose buffers are set by the test (its kernels are never run here)."""
    obs = ((3,), np.float64)
    info_width = 0
    act = ((), np.int64)

    def __init__(self, num_envs, num_threads, max_episode_steps, kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs",) + self.obs], self.info_width)
        shape, dtype = self.act
        self.actions = np.zeros((num_envs,) + shape, dtype)
        self.seen = kwargs


@pytest.fixture
def register():
    ids = []

    def reg(env_id, pool=Pool, **kw):
        kw.setdefault("observation_space", BOX)
        kw.setdefault("action_space", gym.spaces.Discrete(3))
        cypool.api.register_env(env_id, pool, **kw)
        ids.append(env_id)
    yield reg
    for env_id in ids:
        cypool.api.unregister_env(env_id)


def test_a_registered_id_is_known_everywhere(register):
    register("ApiOk-v0", kwargs=dict(k=1, x=0.5, flag=False, name="a"), max_episode_steps=7)
    assert "ApiOk-v0" in cypool.list_envs()
    assert "cypool/ApiOk-v0" in gym.registry
    assert gym.registry["cypool/ApiOk-v0"].max_episode_steps == 7
    env = cypool.make_vec("ApiOk-v0", 2, x=np.float32(2), k=np.int64(3))
    assert env.single_observation_space == BOX
    assert env.get_attr("k") == (3, 3) and env.get_attr("x") == (2.0, 2.0)
    assert env.get_attr("flag") == (False, False) and env.get_attr("name") == ("a", "a")
    assert env.get_attr("max_episode_steps") == (7, 7)
    env.close()
    cypool.api.unregister_env("ApiOk-v0")
    assert "ApiOk-v0" not in cypool.list_envs() and "cypool/ApiOk-v0" not in gym.registry


@pytest.mark.parametrize("kw, err, match", [
    (dict(k=1.5), TypeError, "k must be an int"),
    (dict(k=True), TypeError, "k must be an int"),
    (dict(x="1"), TypeError, "x must be a number"),
    (dict(flag=1), TypeError, "flag must be a bool"),
    (dict(name=3), TypeError, "name must be a str"),
    (dict(kk=1), TypeError, "unexpected keyword argument 'kk'; did you mean k"),
    (dict(x=-1.0), ValueError, "x must be >= 0"),
])
def test_kwargs_are_checked_by_their_defaults_types(register, kw, err, match):
    def check(kw):
        if kw["x"] < 0:
            raise ValueError(f"x must be >= 0, got {kw['x']}")
    register("ApiKw-v0", kwargs=dict(k=1, x=0.5, flag=False, name="a"), check_kwargs=check)
    with pytest.raises(err, match=match):
        cypool.make_vec("ApiKw-v0", 2, **kw)


@pytest.mark.parametrize("attrs, match", [
    (dict(obs=((4,), np.float64)), "obs output"),
    (dict(obs=((3,), np.float32)), "obs output"),
    (dict(info_width=1), "1 info column\\(s\\); info_keys names 2"),
    (dict(info_width=2, act=((), np.float64)), "integer array of shape \\(2,\\)"),
    (dict(info_width=2, act=((2,), np.int64)), "integer array of shape \\(2,\\)"),
])
def test_a_pool_that_does_not_fit_its_spaces_is_refused(register, attrs, match):
    register("ApiBad-v0", type("BadPool", (Pool,), attrs), info_keys={"a": float, "b": int})
    with pytest.raises(TypeError, match=match):
        cypool.make_vec("ApiBad-v0", 2)


def test_box_actions_are_checked_before_they_reach_the_pool(register):
    register("ApiBox-v0", type("BoxPool", (Pool,), dict(act=((2,), np.float32))),
             action_space=gym.spaces.Box(-1, 1, (2,), np.float32))
    env = cypool.make_vec("ApiBox-v0", 2)
    fam = env.pool.family
    fam.load_actions(np.array([[0.5, 1.0], [2.0, -3.0]]))       # float64, not clipped
    assert np.array_equal(fam.engine.actions, [[0.5, 1.0], [2.0, -3.0]])
    for bad, err in ((np.zeros((2, 3)), ValueError), (np.zeros((2, 2), np.int64), TypeError),
                     (np.array([[np.nan, 0], [0, 0]]), ValueError)):
        with pytest.raises(err):
            fam.load_actions(bad)
    env.close()


def test_per_env_kwargs_need_configure(register):
    register("ApiShared-v0", kwargs=dict(k=1))
    with pytest.raises(ValueError, match="share their kwargs"):
        cypool.make_population("ApiShared-v0", 2, 1, member_kwargs=[dict(k=1), dict(k=2)])
    calls = []

    class Configurable(Pool):
        def configure(self, ids, kwargs):
            calls.append((ids.tolist(), kwargs["k"]))
    register("ApiConf-v0", Configurable, kwargs=dict(k=1))
    cypool.make_population("ApiConf-v0", 2, 2, member_kwargs=[dict(k=5), dict(k=7)]).close()
    assert calls[0] == ([0, 1, 2, 3], 1) and sorted(calls[1:]) == [([0], 5), ([1], 5),
                                                                   ([2], 7), ([3], 7)]


@pytest.mark.parametrize("kw, err, match", [
    (dict(api_version=2), ValueError, "API version 2"),
    (dict(pool="no_colon"), TypeError, "Engine subclass or 'module:Class'"),
    (dict(observation_space=gym.spaces.MultiBinary(3)), TypeError, "Box or Discrete"),
    (dict(action_space=gym.spaces.Discrete(3, start=1)), TypeError, "start at 0"),
    (dict(action_space=gym.spaces.Box(0, 1, (1,), np.int64)), TypeError, "float dtype"),
    (dict(max_episode_steps=0), ValueError, "max_episode_steps"),
    (dict(kwargs=dict(k=-1.0), check_kwargs=lambda kw: 1 / 0), ZeroDivisionError, "division"),
])
def test_registration_is_checked(register, kw, err, match):
    with pytest.raises(err, match=match):
        register("ApiReg-v0", **kw)
    assert "ApiReg-v0" not in cypool.list_envs()


def test_an_id_cannot_be_served_twice(register):
    with pytest.raises(ValueError, match="already served"):
        register("CartPole-v1")


@pytest.mark.parametrize("env_id", ["ApiSpaces-v0", "CartPole-v1", "Pendulum-v1"])
def test_pools_of_one_id_have_their_own_spaces(register, env_id):
    """Each pool gets its own copies of the registered spaces: seeding or sampling one pool's
    action_space leaves another pool's random stream alone."""
    if env_id == "ApiSpaces-v0":
        register(env_id, type("BoxPool", (Pool,), dict(act=((2,), np.float32))),
                 action_space=gym.spaces.Box(-1, 1, (2,), np.float32))
    a, b = cypool.make_vec(env_id, 2), cypool.make_vec(env_id, 2)
    try:
        assert a.single_action_space is not b.single_action_space
        assert a.single_observation_space is not b.single_observation_space
        assert a.single_action_space == b.single_action_space
        twin = cypool.make_vec(env_id, 1)
        twin.single_action_space.seed(0)
        want = [twin.single_action_space.sample() for _ in range(3)]
        twin.close()
        a.single_action_space.seed(0)
        got = [a.single_action_space.sample()]
        b.single_action_space.seed(123)            # another pool's seed and draws
        b.single_action_space.sample()
        got += [a.single_action_space.sample() for _ in range(2)]
        assert all(np.array_equal(x, y) for x, y in zip(got, want))
    finally:
        a.close()
        b.close()


def test_check_kwargs_may_return_normalised_kwargs(register):
    """check_kwargs returning a dict replaces the kwargs (a None default normalised), None
    keeps them; a dict with other names is refused."""
    seen = []

    class Seen(Pool):
        def configure(self, ids, kwargs):
            seen.append((ids.tolist(), dict(kwargs)))

    def norm(kw):
        if kw["level"] is None:
            return {**kw, "level": 0}
        if not isinstance(kw["level"], (int, float, np.floating)):
            raise TypeError(f"level must be a number, got {kw['level']!r}")
        return None
    register("ApiNorm-v0", Seen, kwargs=dict(level=None, k=1), check_kwargs=norm)
    env = cypool.make_vec("ApiNorm-v0", 2)
    assert env.get_attr("level") == (0, 0) and seen[-1] == ([0, 1], {"level": 0, "k": 1})
    env.set_attr("level", [np.float32(0.5)], env_ids=[1])
    assert env.get_attr("level") == (0, np.float32(0.5))
    assert type(seen[-1][1]["level"]) is np.float32
    with pytest.raises(TypeError, match="level must be a number"):
        env.set_attr("level", "x")
    env.close()
    pop = cypool.make_population("ApiNorm-v0", 2, 1, member_kwargs=[{"level": 0.5},
                                                                    {"level": np.float64(0.5)}],
                                 level=0.5)
    assert type(pop.member_kwargs(1)["level"]) is np.float64
    # equal values of other types are another member's own kwargs (a pool may compute
    # differently with each): configured
    assert seen[-1][0] == [1] and type(seen[-1][1]["level"]) is np.float64
    pop.close()
    with pytest.raises(TypeError, match="check_kwargs returned kwargs named"):
        register("ApiNormBad-v0", kwargs=dict(k=1), check_kwargs=lambda kw: {"j": 1})
    assert "ApiNormBad-v0" not in cypool.list_envs()


# ------------------------------------------------------------------ failed registrations
class StandInPool(Engine):
    """A stand-in pool with fitting buffers (its kernels are Engine's own)."""

    def __init__(self, num_envs, num_threads, max_episode_steps, kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (3,), np.float64)], 1)
        self.actions = np.zeros(num_envs, np.int64)


class NoInit(StandInPool):
    """Forgets self._init_engine."""

    def __init__(self, num_envs, num_threads, max_episode_steps, kwargs):
        self.actions = np.zeros(num_envs, np.int64)


def _register(env_id, pool=StandInPool, **kw):
    kw.setdefault("observation_space", BOX)
    kw.setdefault("action_space", gym.spaces.Discrete(3))
    cypool.api.register_env(env_id, pool, **kw)


def _nothing_registered(env_id):
    return (env_id not in cypool.list_envs() and f"cypool/{env_id}" not in gym.registry
            and f"env:{env_id}" not in {f.name for f in families.families()})


@pytest.fixture
def cleanup():
    ids = []
    yield ids
    for env_id in ids:
        cypool.api.unregister_env(env_id)


@pytest.mark.parametrize("env_id", ["bad id!", "ns/Hard-v0", "Hard v0", "Hard-v0\n"])
def test_a_malformed_id_registers_nothing(env_id):
    with pytest.raises(ValueError, match="env_id"):
        _register(env_id)
    assert _nothing_registered(env_id)


def test_a_failing_gymnasium_registration_registers_nothing(cleanup):
    """gymnasium refuses an unversioned id next to a versioned one of the same name (a
    check of its own, after cypool's): the family registered first is taken back."""
    _register("HardVer-v0")
    cleanup.append("HardVer-v0")
    with pytest.raises(ValueError, match="gymnasium"):
        _register("HardVer")
    assert _nothing_registered("HardVer")
    assert "HardVer-v0" in cypool.list_envs()         # the first one is untouched


@pytest.mark.parametrize("kw, err, match", [
    (dict(info_keys=["a"]), TypeError, "info_keys must be a dict"),
    (dict(info_keys={"a": "no such dtype"}), TypeError, "info_keys\\['a'\\]"),
    (dict(info_keys={"a": str}), TypeError, "info_keys\\['a'\\]"),
    (dict(info_keys={"a": object}), TypeError, "info_keys\\['a'\\]"),
    (dict(kwargs=[("k", 1)]), TypeError, "kwargs must be a dict"),
    (dict(api_version="1"), TypeError, "api_version must be an int, got '1'"),
    (dict(api_version=1.0), TypeError, "api_version must be an int"),
    (dict(module=5), TypeError, "module"),
    (dict(pool=Engine), TypeError, "Engine itself"),
    (dict(pool=dict), TypeError, "Engine subclass"),
    (dict(render_fps="30"), TypeError, "render_fps"),
])
def test_bad_registrations_are_clear_and_register_nothing(kw, err, match):
    with pytest.raises(err, match=match):
        _register("HardReg-v0", **kw)
    assert _nothing_registered("HardReg-v0")


def test_a_pool_that_never_called_init_engine_is_refused(cleanup):
    _register("HardNoInit-v0", NoInit)
    cleanup.append("HardNoInit-v0")
    with pytest.raises(TypeError, match=r"pool NoInit: its __init__ did not call "
                                        r"self\._init_engine\("):
        cypool.make_vec("HardNoInit-v0", 2)


def test_a_module_class_that_is_no_pool_is_refused(cleanup):
    _register("HardNotPool-v0", "collections:OrderedDict")
    _register("HardMissing-v0", "collections:NoSuchPool")
    cleanup += ["HardNotPool-v0", "HardMissing-v0"]
    with pytest.raises(TypeError, match="Engine subclass"):
        cypool.make_vec("HardNotPool-v0", 2)
    with pytest.raises(ImportError, match="collections has no NoSuchPool"):
        cypool.make_vec("HardMissing-v0", 2)


def test_a_python_subclass_of_engine_has_no_kernels(cleanup):
    """env_reset/env_step are cdef nogil methods: a Python class cannot override them, so
    Engine's own run; they fail with a message that says so (was an empty message)."""
    _register("HardPyPool-v0")
    cleanup.append("HardPyPool-v0")
    env = cypool.make_vec("HardPyPool-v0", 2)
    try:
        with pytest.raises(cypool.EngineError, match="cdef class") as err:
            env.reset(seed=0)
        assert err.value.env_ids == [0, 1]
        assert all(m.startswith("pool test_env_api.StandInPool has no env_reset kernel")
                   for m in err.value.messages), err.value.messages
    finally:
        env.close()
