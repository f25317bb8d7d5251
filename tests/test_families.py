"""The family registry: a family registered from outside the library gets make_vec,
gymnasium registration and list_envs with no change to library code."""
import gymnasium as gym
import numpy as np
import pytest

import cypool
from cypool import families
from cypool.families import Family, FAMILY_API_VERSION, register_family, unregister_family


class _ShortHopper:
    """A family made of an existing one: 'ShortHopper-v0' is Hopper-v5 with a 20-step limit
    and a heavier control cost, served by the MuJoCo family's engine."""

    @staticmethod
    def make(env_id, num_envs, num_threads, max_episode_steps, kwargs, member_kwargs=None):
        from cypool.mujoco.family import MujocoFamily
        kw = {"ctrl_cost_weight": 0.5, **kwargs}
        members = None if member_kwargs is None else [
            {"ctrl_cost_weight": 0.5, **m} for m in member_kwargs]
        return MujocoFamily("Hopper-v5", num_envs, num_threads, max_episode_steps, kw,
                            member_kwargs=members)


@pytest.fixture
def short_hopper():
    register_family("short-hopper", env_ids=lambda: ["ShortHopper-v0"], make=_ShortHopper.make,
                    default_max_episode_steps=lambda env_id: 20)
    yield
    unregister_family("short-hopper")
    gym.registry.pop("cypool/ShortHopper-v0", None)


def test_registered_family_is_served(short_hopper):
    assert "ShortHopper-v0" in cypool.list_envs()
    env = cypool.make_vec("ShortHopper-v0", 3, seed=0)
    ref = cypool.make_vec("Hopper-v5", 3, seed=0, ctrl_cost_weight=0.5, max_episode_steps=20)
    try:
        assert isinstance(env.unwrapped, cypool.VectorEnv)
        o, _ = env.reset(seed=4)
        o_ref, _ = ref.reset(seed=4)
        assert np.array_equal(o, o_ref)
        truncated_at = None
        for t in range(25):
            a = np.full((3, 3), 0.3)
            out, out_ref = env.step(a), ref.step(a)
            for x, y in zip(out[:4], out_ref[:4]):
                assert np.array_equal(x, y)
            if out[3].any() and truncated_at is None:
                truncated_at = t
        assert truncated_at == 19          # the family's default limit, 20 steps
    finally:
        env.close()
        ref.close()


def test_registered_family_in_gymnasium_and_populations(short_hopper):
    cypool.registration.register_all()
    env = gym.make_vec("cypool/ShortHopper-v0", num_envs=2)
    env.reset(seed=0)
    env.close()
    pop = cypool.make_population("ShortHopper-v0", 2, 2,
                                 member_kwargs=[{}, {"ctrl_cost_weight": 0.1}])
    ref = cypool.make_population("Hopper-v5", 2, 2, max_episode_steps=20,
                                 member_kwargs=[{"ctrl_cost_weight": 0.5},
                                                {"ctrl_cost_weight": 0.1}])
    try:
        o, _ = pop.reset(seed=0)
        o_ref, _ = ref.reset(seed=0)
        assert np.array_equal(o, o_ref)
        for _ in range(22):
            out, out_ref = pop.step(np.full((2, 2, 3), 0.2)), ref.step(np.full((2, 2, 3), 0.2))
            for x, y in zip(out[:4], out_ref[:4]):
                assert np.array_equal(x, y)
    finally:
        pop.close()
        ref.close()


def test_family_objects_follow_the_protocol():
    for env_id in ("Hopper-v5", "Pong-v5"):
        env = cypool.make_vec(env_id, 1)
        try:
            assert isinstance(env.pool.family, Family)
        finally:
            env.close()


def test_register_family_rejects_bad_entries():
    with pytest.raises(ValueError, match="already registered"):
        register_family("mujoco", env_ids=list, make=_ShortHopper.make)
    with pytest.raises(ValueError, match="API version"):
        register_family("x", env_ids=list, make=_ShortHopper.make, api_version=FAMILY_API_VERSION + 1)
    with pytest.raises(TypeError, match="make must be callable"):
        register_family("x", env_ids=list, make=None)
    assert "x" not in {f.name for f in families.families()}


def test_unknown_id_suggests_close_matches():
    with pytest.raises(ValueError, match="did you mean Hopper-v5"):
        cypool.make_vec("Hoper-v5")


def test_gymnasium_make_builds_one_env():
    env = gym.make("cypool/Hopper-v5")
    try:
        assert isinstance(env.unwrapped, cypool.SingleEnv)
    finally:
        env.close()
