"""Registration as a user's package meets it: register_task reaches gymnasium at once, the same
registration again (a reloaded package) is a no-op, another one needs replace=True, a family or
task registration that fails is a clear error and registers nothing, and an unknown id says how
a package's ids get registered."""
import dataclasses
import importlib
import sys
import textwrap

import gymnasium as gym
import numpy as np
import pytest

import cypool
import cypool.classic
import cypool.mujoco
from cypool import families
from cypool.api import register_env, register_spec, registered_spec, unregister_env
from cypool.mujoco import family as mujoco_family


@pytest.fixture
def my_task():
    yield "MyHopper-v0"
    cypool.mujoco.unregister_task("MyHopper-v0")


def test_register_task_registers_with_gymnasium_at_once(my_task):
    cypool.mujoco.register_task(my_task, "cypool.mujoco.tasks.hopper")
    spec = gym.spec(f"cypool/{my_task}")            # no register_all() needed
    assert spec.max_episode_steps == gym.spec("Hopper-v5").max_episode_steps
    env = gym.make_vec(f"cypool/{my_task}", 2)
    ref = cypool.make_vec("Hopper-v5", 2)
    try:
        assert np.array_equal(env.reset(seed=3)[0], ref.reset(seed=3)[0])
    finally:
        env.close()
        ref.close()
    one = gym.make(f"cypool/{my_task}")
    one.close()
    cypool.mujoco.unregister_task(my_task)
    assert f"cypool/{my_task}" not in gym.registry and my_task not in cypool.list_envs()


def test_register_task_again_is_a_no_op_and_another_module_needs_replace(my_task):
    cypool.mujoco.register_task(my_task, "cypool.mujoco.tasks.hopper")
    cypool.mujoco.register_task(my_task, "cypool.mujoco.tasks.hopper")     # no-op
    assert mujoco_family.user_task_module(my_task) == "cypool.mujoco.tasks.hopper"
    with pytest.raises(ValueError, match="already served.*replace=True"):
        cypool.mujoco.register_task(my_task, "cypool.mujoco.tasks.walker2d")
    assert mujoco_family.user_task_module(my_task) == "cypool.mujoco.tasks.hopper"
    cypool.mujoco.register_task(my_task, "cypool.mujoco.tasks.walker2d", replace=True)
    env = cypool.make_vec(my_task, 1)
    try:
        assert env.single_observation_space.shape == (17,)          # Walker2d's
    finally:
        env.close()
    with pytest.raises(ValueError, match="already served"):          # built-ins stay
        cypool.mujoco.register_task("Hopper-v5", "cypool.mujoco.tasks.walker2d", replace=True)
    with pytest.raises(TypeError, match="replace"):
        cypool.mujoco.register_task(my_task, "cypool.mujoco.tasks.hopper", replace=1)


def test_reloading_a_package_that_registers_at_import_is_a_no_op():
    before = {i: registered_spec(i) for i in cypool.classic.ENV_IDS}
    importlib.reload(cypool.classic)      # register_env of every classic id again, same args
    after = {i: registered_spec(i) for i in cypool.classic.ENV_IDS}
    assert after == {i: s for i, s in before.items()}  # the first registrations are kept
    assert all(after[i] is before[i] for i in before)
    env = cypool.make_vec("MountainCar-v0", 2)
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
    before = families.families()
    with pytest.raises(err, match=match):
        families.register_family(args.pop("name"), **args)
    assert families.families() == before
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


@pytest.fixture
def my_cart():
    yield "MyCart-v0"
    unregister_env("MyCart-v0")


def test_register_spec_same_no_op_other_raises_unless_replace(my_cart):
    base = registered_spec("CartPole-v1")
    spec = dataclasses.replace(base, env_id=my_cart, envpool=None)
    register_spec(spec)
    register_spec(dataclasses.replace(spec))                       # an equal copy: no-op
    assert registered_spec(my_cart) is spec
    longer = dataclasses.replace(spec, max_episode_steps=777)
    with pytest.raises(ValueError, match="already served.*replace=True"):
        register_spec(longer)
    assert gym.spec(f"cypool/{my_cart}").max_episode_steps == 500
    register_spec(longer, replace=True)
    assert registered_spec(my_cart) is longer
    assert gym.spec(f"cypool/{my_cart}").max_episode_steps == 777
    env = cypool.make_vec(my_cart, 1)
    try:
        assert env._make_args["max_episode_steps"] == 777
    finally:
        env.close()
    # a replacement that fails its checks leaves the old registration
    for bad in (dict(max_episode_steps=-3), dict(observation_space=gym.spaces.Text(4))):
        with pytest.raises((TypeError, ValueError)):
            register_spec(dataclasses.replace(spec, **bad), replace=True)
        assert registered_spec(my_cart) is longer and my_cart in cypool.list_envs()
        assert gym.spec(f"cypool/{my_cart}").max_episode_steps == 777
    with pytest.raises(ValueError, match="already served"):         # another family's id
        register_spec(dataclasses.replace(spec, env_id="Hopper-v5"), replace=True)


def test_register_env_equal_arguments_no_op(my_cart):
    base = registered_spec("CartPole-v1")

    def args(limit=500):
        return dict(observation_space=base.observation_space, action_space=base.action_space,
                    kwargs={"sutton_barto_reward": False}, max_episode_steps=limit)

    register_env(my_cart, base.pool, **args())
    register_env(my_cart, base.pool, **args())
    with pytest.raises(ValueError, match="already served"):
        register_env(my_cart, base.pool, **args(limit=100))
    register_env(my_cart, base.pool, replace=True, **args(limit=100))
    assert gym.spec(f"cypool/{my_cart}").max_episode_steps == 100


def test_unknown_id_says_how_a_package_registers_its_ids():
    with pytest.raises(ValueError, match="imported.*'pkg:cypool/Id'"):
        cypool.make_vec("NotImportedYet-v0", 1)


def test_pkg_colon_form_imports_the_package(tmp_path, monkeypatch):
    # a user's package that registers its id at import, named in gymnasium's 'pkg:id' form
    (tmp_path / "my_cart_pkg.py").write_text(textwrap.dedent("""
        from cypool.api import register_env, registered_spec
        _b = registered_spec("CartPole-v1")
        register_env("PkgCart-v0", _b.pool, observation_space=_b.observation_space,
                     action_space=_b.action_space, kwargs={"sutton_barto_reward": False},
                     max_episode_steps=500, module="my_cart_pkg")
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        env = gym.make_vec("my_cart_pkg:cypool/PkgCart-v0", 2)
        env.close()
        one = gym.make("my_cart_pkg:cypool/PkgCart-v0")
        one.close()
        importlib.reload(sys.modules["my_cart_pkg"])                 # registers again: no-op
    finally:
        unregister_env("PkgCart-v0")
        sys.modules.pop("my_cart_pkg", None)


# ids with a namespace of their own (dm_control/<domain>-<task>-v0): gymnasium's ids hold one
# namespace, so they are registered as cypool-<namespace>/<name> (issue #40 item 9)
NAMESPACED = [i for i in cypool.list_envs() if "/" in i]


def test_every_id_is_registered_under_its_gym_id():
    from gymnasium.envs.registration import parse_env_id

    from cypool._validate import env_id_of
    from cypool.registration import default_max_episode_steps, gym_id

    assert NAMESPACED, "no namespaced ids: nothing here is tested"
    for env_id in cypool.list_envs():
        name = gym_id(env_id)
        ns, _, _ = parse_env_id(name)
        if "/" in env_id:
            head, _, tail = env_id.rpartition("/")
            assert name == f"cypool-{head}/{tail}" and ns == f"cypool-{head}", name
        else:
            assert name == f"cypool/{env_id}" and ns == "cypool", name
        spec = gym.spec(name)
        assert spec.max_episode_steps == default_max_episode_steps(env_id), env_id
        assert spec.vector_entry_point is not None
        assert env_id_of(name) == env_id
    assert gym_id("dm_control/cartpole-swingup-v0") == "cypool-dm_control/cartpole-swingup-v0"
    assert env_id_of("cypool/dm_control/cartpole-swingup-v0") == "dm_control/cartpole-swingup-v0"
    # cypool registers nothing in another package's namespace (Shimmy's dm_control/, ale-py's
    # ALE/): each of its names is under cypool/ or cypool-<namespace>/
    n = 0
    for spec in gym.registry.values():
        if getattr(spec.entry_point, "func", None) is not None and \
                spec.entry_point.func.__module__ == "cypool.registration":
            assert spec.namespace == "cypool" or spec.namespace.startswith("cypool-"), spec.id
            n += 1
    assert n >= len(cypool.list_envs())


def test_slash_form_is_gymnasiums_error_and_cypools_make_takes_every_form():
    bad = "cypool/dm_control/cartpole-swingup-v0"
    with pytest.raises(gym.error.Error, match="Malformed environment ID"):
        gym.make(bad)                                  # gymnasium refuses it before cypool
    with pytest.raises(gym.error.Error, match="Malformed environment ID"):
        gym.make_vec(bad, 2)
    # cypool's own entry points take the id, its gymnasium name, and the slash form alike
    ref = cypool.make_vec("dm_control/cartpole-swingup-v0", 2).reset(seed=3)[0]
    for given in (bad, "cypool-dm_control/cartpole-swingup-v0"):
        env = cypool.make_vec(given, 2)
        assert env.env_id == "dm_control/cartpole-swingup-v0"
        obs = env.reset(seed=3)[0]
        assert all(np.array_equal(obs[k], ref[k]) for k in ref)
        env.close()
        one = cypool.SingleEnv(given)
        o1 = one.reset(seed=3)[0]
        assert all(np.array_equal(o1[k], ref[k][0]) for k in ref)
        one.close()
    assert cypool.SingleEnv("cypool/CartPole-v1").reset(seed=0)[0].shape == (4,)


def test_gym_id_refuses_what_gymnasium_cannot_parse():
    from cypool.registration import gym_id

    with pytest.raises(ValueError, match="no gymnasium form"):
        gym_id("a.b/Env-v0")                 # gymnasium's namespaces hold no '.'
    with pytest.raises(ValueError, match="no gymnasium form"):
        gym_id("a/b/Env-v0")
    with pytest.raises(TypeError):
        gym_id(None)


def test_make_vec_of_a_namespaced_id_through_gymnasium():
    pytest.importorskip("dm_control.suite", reason="dm_control is a test dependency")
    env_id = "dm_control/cartpole-swingup-v0"
    name = cypool.registration.gym_id(env_id)
    ref = cypool.make_vec(env_id, 3)
    pool = gym.make_vec(name, 3)                              # the vector entry point
    sync = gym.make_vec(name, 3, vectorization_mode="sync")   # 3 x gymnasium.make(name)
    try:
        assert isinstance(pool, cypool.VectorEnv) and pool.env_id == env_id
        outs = [e.reset(seed=0)[0] for e in (ref, pool, sync)]   # env i seeded 0 + i in each
        for o in outs[1:]:
            assert sorted(o) == sorted(outs[0])
            assert all(np.array_equal(o[k], outs[0][k]) for k in o)
        rng = np.random.default_rng(0)
        for t in range(50):
            a = rng.uniform(-1, 1, size=(3, 1))
            outs = [e.step(a) for e in (ref, pool, sync)]
            for o in outs[1:]:
                assert all(np.array_equal(o[0][k], outs[0][0][k]) for k in o[0]), t
                for x, y in zip(o[1:4], outs[0][1:4]):
                    assert np.array_equal(x, y), t
    finally:
        for e in (ref, pool, sync):
            e.close()
