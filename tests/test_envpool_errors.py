"""cypool.envpool's errors: every bad id, option, action, env_id and call order raises a
clear TypeError/ValueError/RuntimeError naming what is wrong, and no message prints an
internal object (a repr in <...>, an address, cypool's FamilySpec/EnvPoolNames/Kwarg, a
family name like "env:CartPole-v1", a private module) or, for EnvPool's aliases of cypool
envs, cypool's own id instead of the one the user asked for."""
import re
import warnings

import numpy as np
import pytest

import cypool.envpool as ep
from cypool.errors import ClosedEnvError

INTERNAL = re.compile(r"<(?!U\d)[^>]*>|0x[0-9a-f]{6,}|FamilySpec|EnvPoolNames|Kwarg|InfoKey|"
                      r"SpecFamily|functools|partial\(|\benv:|object at|cypool\._|"
                      r"AutoresetMode\.|dtype\(|class '")


class Opaque:
    """A user value whose repr cannot be mistaken for an internal object."""

    def __repr__(self):
        return "OPAQUE"


VALUES = ["x", Opaque(), -3, 2.5, None, [1, 2], float("nan"), np.zeros(2)]
IDS = {"CartPole-v1": [], "Pendulum-v1": ["version"], "Acrobot-v1": [],
       "MountainCarContinuous-v0": [], "FrozenLake-v1": ["size"], "Taxi-v3": [],
       "Blackjack-v1": ["natural", "sab"], "tabular/CliffWalking-v0": ["is_slippery"],
       "Pong-v5": ["stack_num", "frame_skip", "noop_max", "episodic_life", "img_height",
                   "repeat_action_probability", "mode"],
       "Hopper-v5": ["frame_skip", "ctrl_cost_weight", "terminate_when_unhealthy",
                     "healthy_z_min", "post_constraint"]}
COMMON = ["num_envs", "batch_size", "num_threads", "seed", "env_seed", "max_episode_steps",
          "max_num_players", "gym_reset_return_info", "from_pixels"]
OK = (TypeError, ValueError, RuntimeError, NotImplementedError)


def check(exc, where):
    msg = str(exc)
    assert isinstance(exc, OK), (where, type(exc).__name__, msg)
    assert msg and not INTERNAL.search(msg), (where, msg)


def test_option_errors_print_no_internal_object():
    checked = 0
    for task_id, opts in IDS.items():
        for k in opts + COMMON:
            for v in VALUES:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        env = ep.make_gymnasium(task_id, num_envs=2, **{k: v})
                except Exception as exc:          # noqa: BLE001 - every error is checked
                    check(exc, f"{task_id} {k}={v!r}")
                    checked += 1
                else:
                    env.close()
    assert checked > 300


@pytest.mark.parametrize("task_id", ["Nope-v0", "Taxi-v4", "Pendulum-v0", "CliffWalking-v1x",
                                     "CartPole", 3, None])
def test_id_errors_print_no_internal_object(task_id):
    with pytest.raises(OK) as info:
        ep.make_gymnasium(task_id)
    check(info.value, task_id)


@pytest.mark.parametrize("task_id", ["CartPole-v1", "Pendulum-v1", "tabular/CliffWalking-v0",
                                     "Blackjack-v1", "Pong-v5", "Hopper-v5"])
def test_call_errors_print_no_internal_object(task_id):
    env = ep.make_gymnasium(task_id, num_envs=2)
    space = env.action_space
    good = np.zeros((2,) + space.shape, space.dtype)
    calls = {
        "step before reset": lambda: env.step(good),
        "send before reset": lambda: env.send(good),
    }
    for name, f in calls.items():
        with pytest.raises(OK) as info:
            f()
        check(info.value, name)
    env.reset()
    calls = {
        "list action": lambda: env.step([0, 0]),
        "shape": lambda: env.step(np.zeros((3,) + space.shape, space.dtype)),
        "complex": lambda: env.step(np.zeros((2,) + space.shape, np.complex64)),
        "object": lambda: env.step(np.array([Opaque(), Opaque()], dtype=object)),
        "str": lambda: env.step(np.array(["a", "b"])),
        "nan": lambda: env.step(np.full((2,) + space.shape, np.nan)),
        "env_id range": lambda: env.step(good[:1], np.array([5])),
        "env_id float": lambda: env.step(good[:1], np.array([0.5])),
        "env_id object": lambda: env.reset(env_id=Opaque()),
        "options": lambda: env.reset(options={"x": 1}),
        "options object": lambda: env.reset(options=Opaque()),
        "reset_mask": lambda: env.reset(options={"reset_mask": [1]}),
        "recv": lambda: env.recv(),
        "render": lambda: env.render(),
    }
    for name, f in calls.items():
        try:
            f()
        except Exception as exc:                  # noqa: BLE001
            check(exc, f"{task_id} {name}")
        else:
            # floats: NaN refused; a list converts as numpy converts it (an array-like, as
            # VectorEnv.step takes): [0, 0] is a valid batch of Discrete actions
            assert (name == "nan" and "Discrete" not in str(space)) or \
                (name == "list action" and "Discrete" in str(space)), name
    env.close()
    for name, f in {"step": lambda: env.step(good), "reset": lambda: env.reset(),
                    "send": lambda: env.send(good), "recv": lambda: env.recv(),
                    "async_reset": lambda: env.async_reset()}.items():
        with pytest.raises(ClosedEnvError, match=re.escape(f"this {task_id} env is closed")):
            f()


@pytest.mark.parametrize("task_id,cypool_id,option", [
    ("CliffWalking-v0", "CliffWalking-v1", dict(is_slippery="x")),
    ("tabular/CliffWalking-v0", "CliffWalking-v1", dict(is_slippery=2.5)),
    ("tabular/Blackjack-v0", "Blackjack-v1", dict(sab=None)),
])
def test_alias_errors_name_the_envpool_id(task_id, cypool_id, option):
    with pytest.raises(TypeError) as info:
        ep.make_gymnasium(task_id, num_envs=2, **option)
    assert str(info.value).startswith(f"{task_id}:"), str(info.value)
    assert cypool_id not in str(info.value) or cypool_id in task_id


def test_closed_alias_names_the_envpool_id():
    env = ep.make_gymnasium("Taxi-v3", num_envs=2)
    env.reset()
    env.close()
    with pytest.raises(ClosedEnvError) as info:
        env.step(np.zeros(2, np.int64))
    assert "Taxi-v3" in str(info.value) and "Taxi-v4" not in str(info.value)


# ------------------------------------------------------------------ env ids and Atari actions
@pytest.fixture(scope="module")
def pong4():
    env = ep.make("Pong-v5", "gymnasium", num_envs=4)
    env.reset()
    yield env
    env.close()


@pytest.mark.parametrize("ids,exc,match", [
    ([-1], ValueError, r"env_id must be in \[0, 4\).*-1"),
    ([7], ValueError, r"env_id must be in \[0, 4\).*7"),
    ([1, 1], ValueError, "repeat"),
    ([0.5], TypeError, "env_id must be"),
    ([True], TypeError, "env_id must be"),
    (np.array([2**64 - 1], np.uint64), ValueError, "env_id must be in"),
])
def test_envpool_env_ids_are_checked_in_every_entry_point(pong4, ids, exc, match):
    before = pong4.pool.pool.engine.elapsed().copy()
    n = len(np.asarray(ids).reshape(-1))
    with pytest.raises(exc, match=match):
        pong4.reset(np.asarray(ids))
    with pytest.raises(exc, match=match):
        pong4.step(np.zeros(n, np.int64), np.asarray(ids))
    with pytest.raises(exc, match=match):
        pong4.send(np.zeros(n, np.int64), np.asarray(ids))
    assert np.array_equal(pong4.pool.pool.engine.elapsed(), before)      # no env moved
    obs, info = pong4.reset(np.array([3, 0]))                           # still usable
    assert info["env_id"].tolist() == [3, 0]


@pytest.mark.parametrize("bad", [2**31, 2**32 + 1, -2**32 + 2, 6])
def test_envpool_atari_actions_are_checked_before_any_cast(pong4, bad):
    before = pong4.pool.pool.engine.elapsed().copy()
    with pytest.raises(ValueError, match=r"actions must be in \[0, 6\).*" + str(bad)):
        pong4.step(np.array([bad, 0, 0, 0], np.int64))
    with pytest.raises(TypeError, match="integers"):
        pong4.step(np.array([1.7, 0, 0, 0]))                    # never truncated to 1
    assert np.array_equal(pong4.pool.pool.engine.elapsed(), before)
    pong4.step(np.array([1, 0, 0, 0], np.int64))
    pong4.step(np.array([1, 0, 0, 0], np.int32))
