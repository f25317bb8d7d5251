"""Bad input to the public registration API (cypool.api.register_env, cypool.families.
register_family, cypool.mujoco.register_task) and to VectorEnv.call: a clear TypeError or
ValueError naming what is wrong, and a registration that fails leaves nothing registered
(list_envs(), gymnasium's registry, the family table, the MuJoCo task table)."""
import gymnasium as gym
import numpy as np
import pytest

import cypool
import cypool.api
from cypool import families
from cypool._core._engine import Engine
from cypool.mujoco import family as mujoco_family

BOX = gym.spaces.Box(-1.0, 1.0, (3,), np.float64)


class Pool(Engine):
    """A stand-in pool with fitting buffers (its kernels are Engine's own)."""

    def __init__(self, num_envs, num_threads, max_episode_steps, kwargs):
        self._init_engine(num_envs, num_threads, max_episode_steps,
                          [("obs", (3,), np.float64)], 1)
        self.actions = np.zeros(num_envs, np.int64)


class NoInit(Pool):
    """Forgets self._init_engine."""

    def __init__(self, num_envs, num_threads, max_episode_steps, kwargs):
        self.actions = np.zeros(num_envs, np.int64)


def _register(env_id, pool=Pool, **kw):
    kw.setdefault("observation_space", BOX)
    kw.setdefault("action_space", gym.spaces.Discrete(3))
    cypool.api.register_env(env_id, pool, **kw)


def _nothing_registered(env_id):
    return (env_id not in cypool.list_envs() and f"cypool/{env_id}" not in gym.registry
            and f"env:{env_id}" not in families._FAMILIES)


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
        assert all(m.startswith("pool test_api_hardening.Pool has no env_reset kernel")
                   for m in err.value.messages), err.value.messages
    finally:
        env.close()


@pytest.mark.parametrize("kw, err, match", [
    (dict(name=""), TypeError, "name"),
    (dict(api_version="1"), TypeError, "api_version must be an int, got '1'"),
    (dict(module=5), TypeError, "module"),
    (dict(make=None), TypeError, "make must be callable"),
])
def test_bad_family_registrations_register_nothing(kw, err, match):
    args = dict(name="hard-family", env_ids=lambda: ["HardFam-v0"], make=lambda *a: None)
    args.update(kw)
    before = dict(families._FAMILIES)
    with pytest.raises(err, match=match):
        families.register_family(args.pop("name"), **args)
    assert families._FAMILIES == before
    assert "HardFam-v0" not in cypool.list_envs()


@pytest.mark.parametrize("env_id, module, err, match", [
    ("HardTask-v0", 5, TypeError, "module must be"),
    ("HardTask-v0", "", TypeError, "module must be"),
    ("HardTask-v0", "cypool.no_such_task_module", ImportError, "no_such_task_module"),
    ("HardTask-v0", "collections", TypeError, "lacks"),
    ("bad id!", "cypool.mujoco.tasks.hopper", ValueError, "env_id"),
])
def test_bad_task_registrations_register_nothing(env_id, module, err, match):
    before = dict(mujoco_family.TASKS)
    with pytest.raises(err, match=match):
        mujoco_family.register_task(env_id, module)
    assert mujoco_family.TASKS == before and env_id not in cypool.list_envs()


@pytest.mark.parametrize("name, args", [
    ("step", (np.zeros(2, np.int64),)), ("step", ()), ("reset", ()), ("reset", (0,)),
    ("close", ()),
])
def test_call_of_a_pool_method_points_at_it(name, args):
    """SyncVectorEnv.call runs a method of each sub-env; a cypool pool steps and resets all
    its envs at once, so call("step", ...) is refused naming env.step (nothing moves)."""
    env = cypool.make_vec("CartPole-v1", 2)
    try:
        env.reset(seed=0)
        before = env.pool.engine.obs.copy()
        with pytest.raises(ValueError, match=f"env\\.{name}\\("):
            env.call(name, *args)
        assert np.array_equal(env.pool.engine.obs, before) and not env._closed
    finally:
        env.close()


def test_call_of_an_unknown_name_with_arguments_is_an_attribute_error():
    env = cypool.make_vec("CartPole-v1", 2)
    try:
        with pytest.raises(AttributeError, match="no attribute 'nothing'"):
            env.call("nothing", 1)
        with pytest.raises(TypeError, match="takes no arguments"):
            env.call("max_episode_steps", 1)
        assert env.call("max_episode_steps") == (500, 500)
    finally:
        env.close()
