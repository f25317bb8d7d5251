"""MuJoCo and Atari are served by FamilySpecs, like every family: their specs are found in
the registry, carry their EnvPool names, and work through the spec route (register_spec) as a
user's spec would; cypool.envpool imports no family."""
import ast
import dataclasses
import pathlib
import weakref

import numpy as np
import pytest

import cypool
from cypool.api import FamilySpec, SpecFamily, register_spec, unregister_env
from cypool.registry import spec_of

ROOT = pathlib.Path(cypool.__file__).parent


@pytest.mark.parametrize("env_id", ["Hopper-v5", "Pong-v5"])
def test_builtin_ids_have_specs(env_id):
    spec = spec_of(env_id)
    assert isinstance(spec, FamilySpec) and spec.env_id == env_id
    assert spec.envpool is not None and spec.envpool.ids == (env_id,)
    env = cypool.make_vec(env_id, 2)
    try:
        assert type(env.unwrapped.pool.family) is SpecFamily
    finally:
        env.close()


def test_mujoco_spec_through_register_spec():
    """Hopper-v5's spec under another id, registered as a user's spec: the same trajectories
    as Hopper-v5, per-env kwargs included."""
    spec = dataclasses.replace(spec_of("Hopper-v5"), env_id="SpecHopper-v0", envpool=None)
    register_spec(spec)
    try:
        kw = [{}, {"ctrl_cost_weight": 0.5}, {"forward_reward_weight": 2.0}]
        a = cypool.make_vec("SpecHopper-v0", 3, env_kwargs=kw, num_threads=1)
        b = cypool.make_vec("Hopper-v5", 3, env_kwargs=kw, num_threads=1)
        try:
            for x, y in zip(a.reset(seed=3)[:1], b.reset(seed=3)[:1]):
                assert np.array_equal(x, y)
            rng = np.random.default_rng(0)
            for _ in range(60):
                act = rng.uniform(-1, 1, (3, 3))
                for x, y in zip(a.step(act)[:4], b.step(act)[:4]):
                    assert np.array_equal(x, y)
            assert a.get_attr("ctrl_cost_weight") == b.get_attr("ctrl_cost_weight")
        finally:
            a.close()
            b.close()
    finally:
        unregister_env("SpecHopper-v0")


def test_make_scope_kwargs_are_the_pools():
    """A render setting given per env is refused (it was dropped silently); the pool's own
    value is fine."""
    with pytest.raises(ValueError, match="width"):
        cypool.make_vec("Hopper-v5", 2, env_kwargs=[{}, {"width": 64}])
    cypool.make_vec("Hopper-v5", 2, width=64, env_kwargs=[{}, {"width": 64}]).close()


def test_limit_none_is_the_registered_one():
    env = cypool.make_vec("Taxi-v4", 2, max_episode_steps=7)
    try:
        fam = env.unwrapped.pool.family
        fam.set_max_episode_steps(np.array([1]), None)
        assert fam.engine.max_episode_steps_of().tolist() == [7, 200]
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ["Hopper-v5", "Pong-v5"])
def test_family_freed_on_close_without_gc(env_id):
    """The hooks bound to a family hold it weakly: no reference cycle keeps the engine."""
    import gc

    env = cypool.make_vec(env_id, 2)
    ref = weakref.ref(env.unwrapped.pool.family)
    gc.disable()
    try:
        env.close()
        del env
        assert ref() is None
    finally:
        gc.enable()


def _imported(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return names


def test_envpool_imports_no_family():
    from cypool.entry import BUILTIN_FAMILIES

    families = tuple(m.removesuffix(".registration") for m in BUILTIN_FAMILIES)
    assert "cypool.box2d" in families and "cypool.mujoco" in families
    bad = [n for n in _imported(ROOT / "envpool.py") if n.startswith(families)]
    assert bad == []
