"""cypool.envpool's MiniGrid/BabyAI ids (issue #42): EnvPool 1.2.5's layout (spaces, dtypes,
info keys, options), checked against the installed EnvPool; the values are minigrid's
(seed-exact through cypool.make_vec and minigrid itself), not EnvPool's own port."""
import re
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import cypool
import cypool.envpool as cep
from cypool._envpool_minigrid import NUMBERED

sys.path.insert(0, str(Path(__file__).parent))
from _envpool_ref import real_envpool  # noqa: E402

IDS = ["MiniGrid-Empty-5x5-v0", "MiniGrid-DoorKey-8x8-v0", "MiniGrid-KeyCorridorS3R1-v0",
       "MiniGrid-GoToDoor-5x5-v0", "BabyAI-GoToLocalS8N7-v0", "BabyAI-PutNextLocal-v0",
       "BabyAI-KeyCorridorS3R1-v0", "BabyAI-OpenDoorsOrderN2-v0", "BabyAI-UnlockPickup-v0",
       "BabyAI-MoveTwoAcrossS5N2-v0", "BabyAI-PutNextS5N2Carrying-v0", "BabyAI-BossLevel-v0"]


def _not_given(task):
    """EnvPool info keys cypool.envpool does not give (docs/migration.md): mission_id where
    EnvPool numbers the missions (cypool._envpool_minigrid.NUMBERED)."""
    cfg = cep._config(task, {})[1]
    return {"mission_id"} if cfg["env_name"] in NUMBERED else set()


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
        NOT_GIVEN = _not_given(task)
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
        cep.make_gymnasium("MiniGrid-WFC-RoomsFabric-v0")
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
    assert len(ours) == 171 and set(ours) <= theirs and set(ours) <= set(cypool.list_envs())
    # every other EnvPool MiniGrid/BabyAI id is one cypool does not run, refused
    rest = {t for t in theirs if t.startswith(("MiniGrid-", "BabyAI-"))} - set(ours)
    assert rest and not rest & set(cypool.list_envs())
    for t in rest:
        with pytest.raises(ValueError, match="cypool does not run this minigrid env"):
            cep.make_spec(t)


_ALIASES = {"numObjs": "num_objs", "minNumRooms": "min_num_rooms",
            "maxNumRooms": "max_num_rooms", "maxRoomSize": "max_room_size"}


def test_envpools_defaults_are_minigrids_registration():
    """Each served id's EnvPool config agrees with minigrid's registration of the id it runs:
    every kwarg minigrid registers (size, room_size, num_dists, objs_per_room, select_by,
    start_carrying, ...) has EnvPool's value (None: EnvPool's '' or (-1, -1)), and the MiniGrid
    ids' max_episode_steps is minigrid's max_steps (BabyAI's 0: the env's own limit, see
    test_babyai_own_limit_is_envpools). EnvPool's config also lists options its BabyAI port
    fixes per level (room_size 8, num_rows 3 on GoToLocal, ...): nominal, not compared."""
    pytest.importorskip("minigrid")
    differ = {}
    for task in [t for t in cep.list_all_envs() if t.startswith(("MiniGrid-", "BabyAI-"))]:
        cfg = cep._config(task, {})[1]
        for k, v in gym.spec(task).kwargs.items():
            k = _ALIASES.get(k, k)
            if not isinstance(v, (int, str, bool, tuple, type(None))):
                continue        # LavaCrossing's obstacle_type: the class (EnvPool's name)
            want = {"agent_start_pos": (-1, -1)}.get(k, "") if v is None else v
            if cfg[k] != want:
                differ[task, k] = (v, cfg[k])
        if task.startswith("MiniGrid-"):
            steps = gym.make(task).unwrapped.max_steps
            if steps != cfg["max_episode_steps"]:
                differ[task, "max_steps"] = (steps, cfg["max_episode_steps"])
    assert differ == {}


@pytest.mark.parametrize("task", ["BabyAI-GoToObjS4-v0", "BabyAI-OpenRedDoor-v0",
                                  "BabyAI-PickupLoc-v0", "BabyAI-PutNextS4N1-v0"])
def test_babyai_own_limit_is_envpools(task):
    """max_episode_steps 0: the level's own max_steps, where EnvPool truncates too (turning
    left never ends an episode otherwise)."""
    ep = real_envpool()
    ours = cep.make_gymnasium(task, num_envs=2, seed=1)
    theirs = ep.make_gymnasium(task, num_envs=2, seed=1)
    try:
        ours.reset(), theirs.reset()
        cuts = [[], []]
        for _ in range(140):
            for k, env in enumerate((ours, theirs)):
                _, _, term, trunc, info = env.step(np.zeros(2, np.int64))
                assert not term.any()
                cuts[k] += info["elapsed_step"][trunc].tolist()
        assert cuts[0] and sorted(set(cuts[0])) == sorted(set(cuts[1]))
    finally:
        ours.close(), theirs.close()


def test_mission_id_is_envpools():
    """mission_id: EnvPool's (measured: a function of the mission; -1 on BabyAI ids, 0 on
    the MiniGrid generators it does not number), given where it is that constant."""
    ep = real_envpool()
    for task in ["MiniGrid-Empty-5x5-v0", "MiniGrid-KeyCorridorS3R1-v0",
                 "MiniGrid-LockedRoom-v0", "MiniGrid-Playground-v0", "BabyAI-GoToLocal-v0",
                 "BabyAI-OneRoomS8-v0", "BabyAI-Open-v0", "BabyAI-PutNextS4N1-v0"]:
        ours = cep.make_gymnasium(task, num_envs=3, seed=2)
        theirs = ep.make_gymnasium(task, num_envs=3, seed=2)
        try:
            got = [ours.reset()[1]["mission_id"], theirs.reset()[1]["mission_id"]]
            for _ in range(5):
                a = np.full(3, 2, np.int64)
                got += [ours.step(a)[4]["mission_id"], theirs.step(a)[4]["mission_id"]]
            assert {int(v) for g in got[1::2] for v in g} == {int(v) for g in got[::2]
                                                              for v in g}, task
            assert got[0].dtype == got[1].dtype == np.int32
        finally:
            ours.close(), theirs.close()
    assert "mission_id" not in cep.make_gymnasium("MiniGrid-Fetch-5x5-N2-v0").reset()[1]


def test_every_served_id_makes_steps_and_is_make_vecs():
    """Every served id: EnvPool's seeds through cypool.envpool, the values of cypool.make_vec
    (seed-exact with minigrid) over a few steps."""
    ids = [t for t in cep.list_all_envs() if t.startswith(("MiniGrid-", "BabyAI-"))]
    rng = np.random.default_rng(1)
    for task in ids:
        env = cep.make_gymnasium(task, num_envs=2, seed=11)
        ref = cypool.make_vec(task, 2)
        try:
            o, i = env.reset()
            r, _ = ref.reset(seed=[11, 12])
            assert o["mission"].shape == (2, env.config["mission_bytes"]), task
            assert _missions(o) == list(r["mission"]), task
            assert np.array_equal(o["image"], r["image"]), task
            for _ in range(3):
                a = rng.integers(0, env.action_space.n, 2)
                x, y = env.step(a), ref.step(a)
                assert np.array_equal(x[0]["image"], y[0]["image"]), task
                assert np.array_equal(x[0]["direction"], y[0]["direction"]), task
                assert np.array_equal(x[1], np.asarray(y[1], np.float32)), task
                assert np.array_equal(x[2], y[2]) and np.array_equal(x[3], y[3]), task
                assert x[4]["agent_pos"].shape == (2, 2), task
        finally:
            env.close(), ref.close()


def _form(mission):
    """A mission with its colours and object types abstracted (EnvPool's draws are not
    minigrid's, so its missions are compared by form)."""
    mission = re.sub(r"\b(red|green|blue|purple|yellow|grey)\b", "C", mission)
    return re.sub(r"\b(key|ball|box|door)\b", "T", mission)


@pytest.mark.parametrize("task", ["BabyAI-KeyCorridorS3R1-v0", "BabyAI-OpenDoorsOrderN2-v0",
                                  "BabyAI-PutNextS5N2-v0", "BabyAI-MoveTwoAcrossS5N2-v0",
                                  "BabyAI-UnlockPickup-v0", "BabyAI-OpenDoorLoc-v0"])
def test_babyai_missions_are_envpools_strings(task):
    """EnvPool's BabyAI mission is the instruction's surface (minigrid's string) as bytes: its
    missions' forms are among minigrid's (cypool.make_vec over 200 seeds)."""
    ep = real_envpool()
    theirs = ep.make_gymnasium(task, num_envs=16, seed=0)
    ours = cypool.make_vec(task, 200)
    try:
        o, _ = theirs.reset()
        forms = {_form(bytes(m).rstrip(b"\0").decode()) for m in o["mission"]}
        assert forms <= {_form(m) for m in ours.reset(seed=0)[0]["mission"]}
    finally:
        theirs.close(), ours.close()
