"""cypool.envpool's MiniGrid/BabyAI ids (issue #42): EnvPool 1.2.5's layout (spaces, dtypes,
info keys, options), checked against the installed EnvPool; the values are minigrid's
(seed-exact through cypool.make_vec and minigrid itself), not EnvPool's own port."""
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import cypool
import cypool.envpool as cep

sys.path.insert(0, str(Path(__file__).parent))
from _envpool_ref import real_envpool  # noqa: E402

IDS = ["MiniGrid-Empty-5x5-v0", "MiniGrid-DoorKey-8x8-v0", "MiniGrid-KeyCorridorS3R1-v0",
       "BabyAI-GoToLocalS8N7-v0"]
# EnvPool info keys cypool.envpool does not give (docs/migration.md): mission_id is EnvPool's
# own numbering, per generator
NOT_GIVEN = {"mission_id"}


def _layout(x):
    if isinstance(x, dict):
        return {k: _layout(v) for k, v in x.items()}
    a = np.asarray(x)
    return (a.dtype, a.shape)


@pytest.mark.parametrize("task", IDS)
def test_layout_is_envpools(task):
    ep = real_envpool()
    ours = cep.make_gymnasium(task, num_envs=2)
    theirs = ep.make_gymnasium(task, num_envs=2)
    try:
        assert ours.observation_space == theirs.observation_space
        assert list(ours.observation_space) == list(theirs.observation_space)
        assert ours.action_space == theirs.action_space
        assert type(theirs).__name__ in repr(ours)
        assert ours.config == {**theirs.config, "base_path": ours.config["base_path"]}
        (o, i), (ro, ri) = ours.reset(), theirs.reset()
        assert _layout(o) == _layout(ro)
        assert list(i) == [k for k in ri if k not in NOT_GIVEN]
        assert _layout({k: v for k, v in i.items() if k != "players"}) == \
            _layout({k: v for k, v in ri.items() if k not in NOT_GIVEN | {"players"}})
        a = np.ones(2, np.int64)
        x, y = ours.step(a), theirs.step(a)
        assert _layout(x[0]) == _layout(y[0])
        assert [np.asarray(v).dtype for v in x[1:4]] == [np.asarray(v).dtype for v in y[1:4]]
        assert list(x[4]) == [k for k in y[4] if k not in NOT_GIVEN]
    finally:
        ours.close(), theirs.close()


def _missions(obs):
    return [bytes(m).rstrip(b"\0").decode() for m in obs["mission"]]


@pytest.mark.parametrize("task", IDS)
def test_values_are_minigrids(task):
    """EnvPool's seeds (seed + i), minigrid's numbers: cypool.make_vec seeded alike, and
    minigrid's own env for the missions and agent_pos."""
    pytest.importorskip("minigrid")         # registers minigrid's ids with gymnasium
    env = cep.make_gymnasium(task, num_envs=2, seed=7)
    ref = cypool.make_vec(task, 2)
    one = gym.make(task)
    try:
        o, i = env.reset()
        r, _ = ref.reset(seed=[7, 8])
        assert np.array_equal(o["image"], r["image"])
        assert np.array_equal(o["direction"], np.asarray(r["direction"]))
        assert _missions(o) == list(r["mission"])
        for k in range(2):
            one.reset(seed=7 + k)
            assert _missions(o)[k] == one.unwrapped.mission
            assert i["agent_pos"][k].tolist() == list(one.unwrapped.agent_pos)
        rng = np.random.default_rng(0)
        for _ in range(20):
            a = rng.integers(0, 7, 2)
            x, y = env.step(a), ref.step(a)
            assert np.array_equal(x[0]["image"], y[0]["image"])
            assert np.array_equal(x[1], np.asarray(y[1], np.float32))
            assert np.array_equal(x[2], y[2]) and np.array_equal(x[3], y[3])
    finally:
        env.close(), ref.close(), one.close()


def test_max_episode_steps_is_minigrids_max_steps():
    env = cep.make_gymnasium("MiniGrid-Empty-5x5-v0", num_envs=1, max_episode_steps=3)
    ref = cypool.make_vec("MiniGrid-Empty-5x5-v0", 1, max_steps=3)
    try:
        assert env.config["max_episode_steps"] == 3
        env.reset(), ref.reset(seed=42)
        for k in range(5):
            x, y = env.step(np.array([0])), ref.step(np.array([0]))
            assert x[3].tolist() == y[3].tolist() == [k == 2]
            assert x[4]["elapsed_step"].tolist() == [(k + 1) % 4]
    finally:
        env.close(), ref.close()
    # BabyAI's 0: the env's own limit
    assert cep.make_spec("BabyAI-GoToLocal-v0").config.max_episode_steps == 0


def test_send_recv_with_batch_size():
    env = cep.make_gymnasium("MiniGrid-DoorKey-5x5-v0", num_envs=4, batch_size=2, seed=3)
    try:
        assert env.is_async
        env.async_reset()
        seen = []
        for _ in range(6):
            o, r, term, trunc, info = env.recv()
            ids = info["env_id"]
            assert ids.dtype == np.int32 and len(ids) == 2
            assert o["mission"].shape == (2, 96) and o["direction"].dtype == np.int32
            assert info["agent_pos"].shape == (2, 2) and r.dtype == np.float32
            seen += ids.tolist()
            env.send(np.full(2, 2, np.int64), ids)
        assert set(seen) == {0, 1, 2, 3}
    finally:
        env.close()


def test_refusals():
    ep = real_envpool()
    assert "MiniGrid-WFC-MazeSimple-v0" in ep.list_all_envs()
    with pytest.raises(ValueError, match="cypool does not run this minigrid env"):
        cep.make_gymnasium("MiniGrid-WFC-MazeSimple-v0")
    with pytest.raises(ValueError, match="cypool does not run this minigrid env"):
        cep.make_gymnasium("BabyAI-BossLevel-v0")
    with pytest.raises(ValueError, match=r"size=9 selects an EnvPool variant.*make_vec"):
        cep.make_gymnasium("MiniGrid-Empty-5x5-v0", size=9)
    with pytest.raises(ValueError, match="mission_bytes=64 selects an EnvPool variant"):
        cep.make_gymnasium("MiniGrid-Empty-5x5-v0", mission_bytes=64)
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_steps'"):
        cep.make_gymnasium("MiniGrid-Empty-5x5-v0", max_steps=3)
    with pytest.raises(ValueError, match="make_vec"):   # cypool's id, not EnvPool's
        cep.make_gymnasium("MiniGrid-MultiRoom-N4-S5-v1")
    with pytest.raises(ValueError, match="max_episode_steps"):
        cep.make_gymnasium("MiniGrid-Empty-5x5-v0", max_episode_steps=-1)
    # the defaults given explicitly are accepted (a tuple option as a list too)
    cep.make_spec("MiniGrid-Empty-5x5-v0", size=5, agent_start_pos=[1, 1], debug=False)


def test_every_served_id_is_envpools_and_cypools():
    ep = real_envpool()
    theirs = set(ep.list_all_envs())
    ours = [t for t in cep.list_all_envs() if t.startswith(("MiniGrid-", "BabyAI-"))]
    assert len(ours) == 107 and set(ours) <= theirs and set(ours) <= set(cypool.list_envs())
