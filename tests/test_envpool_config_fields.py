"""Every id cypool.envpool serves has EnvPool 1.2.5's config fields (issue #40 item 4): the
test walks the installed EnvPool's registry and compares ``make_spec(id).config._fields``
(the namedtuple EnvPool's ``gen_config`` builds from its spec's ``_config_keys``), so an
EnvPool option cypool.envpool lacks (a ``TypeError: Config.__new__() got an unexpected
keyword argument`` in a user's script) fails here. Where cypool deliberately differs, the
field is listed below with the reason; the lists are checked to hold no stale entries."""
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import cypool.envpool as cep

sys.path.insert(0, str(Path(__file__).parent))
from _envpool_ref import real_envpool  # noqa: E402

# EnvPool options cypool.envpool does not serve, {id: {field: why}}: none. (Item 4 added
# CarRacing-v2/-v3's lap_complete_percent, the last one.)
NOT_SERVED = {}

# cypool.envpool options EnvPool's config lacks, {id: {field: why}}: additions, each an option
# of the env cypool runs; every EnvPool option of these ids is served too.
_GYM_KWARG = ("gymnasium's kwarg of the task cypool runs: cypool.envpool's MuJoCo options are "
              "gymnasium's kwargs (cypool/mujoco/envpool_names.py), and EnvPool's port has no "
              "such option")
_THRESHOLD = ("gymnasium's registered reward_threshold of the task (None where gymnasium has "
              "none), which cypool/mujoco/envpool_names.py reports for every MuJoCo id; "
              "EnvPool's spec of this task has no reward_threshold field")
_HUMANOID_OBS = {f"include_{k}_in_observation": _GYM_KWARG
                 for k in ("cinert", "cvel", "qfrc_actuator", "cfrc_ext")}
EXTRA = {
    "Ant-v5": {"include_cfrc_ext_in_observation": _GYM_KWARG, "main_body": _GYM_KWARG},
    **{i: {"healthy_z_max": _GYM_KWARG} for i in ("Hopper-v5", "Hopper-v4", "Hopper-v3")},
    **{i: {"reward_threshold": _THRESHOLD}
       for i in ("Walker2d-v5", "Walker2d-v4", "Walker2d-v3", "Humanoid-v4",
                 "HumanoidStandup-v4", "HumanoidStandup-v2")},
    "Humanoid-v5": {**_HUMANOID_OBS, "contact_cost_min": _GYM_KWARG,
                    "reward_threshold": _THRESHOLD},
    "HumanoidStandup-v5": {**_HUMANOID_OBS, "reward_threshold": _THRESHOLD},
}

def _fields(spec):
    return set(spec.config._fields)


def _tabled(task):
    """An id served from cypool.envpool's own tables of EnvPool's names (MiniGrid/BabyAI,
    Gymnasium-Robotics: cypool/_envpool_tables.py), not from its family's spec."""
    return isinstance(cep._served()[task], cep._Named)


def test_every_served_id_has_envpools_config_fields():
    ep = real_envpool()
    theirs_ids = set(ep.list_all_envs())
    missing, extra, unknown = {}, {}, []
    for task in cep.list_all_envs():
        if task not in theirs_ids:
            unknown.append(task)
            continue
        if _tabled(task):       # test_tabled_ids_have_envpools_config
            continue
        theirs, ours = _fields(ep.make_spec(task)), _fields(cep.make_spec(task))
        if theirs - ours:
            missing[task] = sorted(theirs - ours)
        if ours - theirs:
            extra[task] = sorted(ours - theirs)
    assert unknown == [], f"ids cypool.envpool serves that EnvPool 1.2.5 has not: {unknown}"
    assert missing == {k: sorted(v) for k, v in NOT_SERVED.items()}, \
        "EnvPool options cypool.envpool does not accept (serve them, or list them with why)"
    assert extra == {k: sorted(v) for k, v in EXTRA.items()}, \
        "cypool.envpool options EnvPool's config lacks (list each with why)"


def test_tabled_ids_have_envpools_config():
    """The MiniGrid/BabyAI and Gymnasium-Robotics ids (issues #42, #43): every one's config,
    fields, order and defaults, is EnvPool's (read through the config make_spec builds its
    namedtuple from, without building a pool per id: make_spec itself is compared for a few
    ids in tests/test_envpool_minigrid.py and tests/test_envpool_robotics.py)."""
    ep = real_envpool()
    tabled = [t for t in cep.list_all_envs() if _tabled(t)]
    assert len(tabled) == 171 + 156
    differ = {}
    for task in tabled:
        theirs = ep.make_spec(task).config._asdict()
        ours = cep._config(task, {})[1]
        # base_path: cypool's directory, where EnvPool's order puts it or not
        ours.pop("base_path"), theirs.pop("base_path")
        if list(ours.items()) != list(theirs.items()):
            differ[task] = {k: (ours.get(k), theirs.get(k)) for k in {*ours, *theirs}
                            if ours.get(k) != theirs.get(k)} or "order"
    assert differ == {}


def test_atari_ids_take_envpools_spelling():
    """EnvPool spells TicTacToe3d-v5 where ale-py has TicTacToe3D: EnvPool's spelling is
    served (an EnvPool script's make() works) and the game is ale-py's."""
    env = cep.make("TicTacToe3d-v5", env_type="gymnasium", num_envs=1)
    env.reset()
    env.close()
    assert "TicTacToe3D-v5" not in cep.list_all_envs()


@pytest.mark.parametrize("task", ["Hopper-v5", "CheetahRun-v1", "WalkerWalk-v1"])
def test_pixel_configs_have_envpools_fields(task):
    ep = real_envpool()
    theirs = _fields(ep.make_spec(task, from_pixels=True))
    ours = _fields(cep.make_spec(task, from_pixels=True))
    assert ours - theirs == set(EXTRA.get(task, {})) and theirs - ours == set()


# ---------------------------------------------------------------- CarRacing's option
@pytest.mark.parametrize("task", ["CarRacing-v2", "CarRacing-v3"])
def test_car_racing_takes_lap_complete_percent(task):
    ep = real_envpool()
    real = ep.make_spec(task, lap_complete_percent=0.5).config
    spec = cep.make_spec(task, lap_complete_percent=0.5).config
    assert spec.lap_complete_percent == real.lap_complete_percent == 0.5
    # EnvPool reports its float32 0.95; cypool runs gymnasium's CarRacing, whose default is
    # the double 0.95
    assert cep.make_spec(task).config.lap_complete_percent == 0.95
    assert np.float32(ep.make_spec(task).config.lap_complete_percent) == np.float32(0.95)
    env = cep.make_gymnasium(task, num_envs=2, lap_complete_percent=0.5)
    try:
        assert env.config["lap_complete_percent"] == 0.5
        assert env.pool.pool.engine.lap_complete_percent.tolist() == [0.5, 0.5]
    finally:
        env.close()


def test_car_racing_lap_complete_percent_runs_as_gymnasiums():
    """The option reaches the dynamics: lap_complete_percent=0 ends the episode on the first
    step that touches the start tile, as in gymnasium's CarRacing with the same option."""
    a = np.array([[0.0, 0.5, 0.0], [0.1, 0.3, 0.0]], np.float32)
    with pytest.warns(UserWarning, match="lap_complete_percent"):
        env = cep.make_gymnasium("CarRacing-v3", num_envs=2, seed=5, lap_complete_percent=0.0)
    ref = gym.make_vec("CarRacing-v3", 2, vectorization_mode="sync", lap_complete_percent=0.0)
    dflt = cep.make_gymnasium("CarRacing-v3", num_envs=2, seed=5)
    try:
        o, _ = env.reset()
        assert np.array_equal(o, ref.reset(seed=5)[0])
        dflt.reset()
        ended = np.zeros(2, np.bool_)
        for _ in range(5):
            x, y, d = env.step(a), ref.step(a), dflt.step(a)
            assert np.array_equal(x[0], y[0])
            assert np.array_equal(x[1], y[1].astype(x[1].dtype))
            assert np.array_equal(x[2], y[2])
            assert not d[2].any()
            ended |= x[2]
            if ended.all():
                break
        assert ended.all()
    finally:
        env.close(), ref.close(), dflt.close()
