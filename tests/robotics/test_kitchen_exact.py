"""FrankaKitchen-v1 through cypool.make_vec against gymnasium's SyncVectorEnv over
gymnasium.make of the installed gymnasium-robotics (mujoco_utils patched as Gymnasium-Robotics
PR #330 does, see _fetch_ref.py), bit for bit: the Dict observation (noisy observation,
per-task achieved and desired goals), rewards, terminated, truncated and the three info lists,
across autoresets, on one and several threads.

The arm alone hardly moves the kitchen's objects, so the completion tests move the goals
instead: the reference and cypool both read the module's OBS_ELEMENT_GOALS when an env is
made, and the tests put some goals at the objects' reset state (completed at the first step),
the kettle's one where its settling crosses the 0.3 threshold a few steps in, and the
bottom burner's far away (never completed)."""
import numpy as np
import pytest

import cypool

from _fetch_ref import assert_info, assert_same, reference  # noqa: E402

from gymnasium_robotics.envs.franka_kitchen import kitchen_env as kenv  # noqa: E402

ID = "FrankaKitchen-v1"


def run(n, steps, seed, threads=1, mode="next_step", dtype=np.float64, limit=None, attrs=None,
        **kw):
    extra = {} if limit is None else dict(max_episode_steps=limit)
    mine = cypool.make_vec(ID, n, num_threads=threads, autoreset_mode=mode, **extra, **kw)
    ref = reference(ID, n, mode, **extra, **kw)
    seen = dict(reward=0.0, late=0, term=0, trunc=0)
    try:
        assert mine.single_observation_space == ref.single_observation_space
        assert mine.single_action_space == ref.single_action_space
        o, i = mine.reset(seed=seed)
        ro, ri = ref.reset(seed=seed)
        assert_same(o, ro, "reset obs")
        assert_info(i, ri, "reset")
        for name, values in (attrs or {}).items():
            mine.set_attr(name, values)
            ref.set_attr(name, values)
        rng = np.random.default_rng(seed)
        for t in range(steps):
            a = rng.uniform(-1.6, 1.6, (n, 9)).astype(dtype)
            x, y = mine.step(a), ref.step(a)
            assert_same(x[0], y[0], f"step {t} obs")
            for k, name in ((1, "reward"), (2, "terminated"), (3, "truncated")):
                assert_same(x[k], y[k], f"step {t} {name}")
            assert_info(x[4], y[4], f"step {t}")
            seen["reward"] += float(y[1].sum())
            seen["late"] += int((y[1][1:] > 0).sum()) if t > 1 else 0
            seen["term"] += int(y[2].sum())
            seen["trunc"] += int(y[3].sum())
        return seen
    finally:
        mine.close()
        ref.close()


@pytest.fixture
def near_goals(monkeypatch):
    """Goals near the reset state (see the module's docstring), read from the reference."""
    ref = reference(ID, 1)
    o, _ = ref.reset(seed=0)
    start = {k: v[0].copy() for k, v in o["achieved_goal"].items()}
    kettle = []
    for _ in range(6):
        kettle.append(ref.step(np.zeros((1, 9)))[0]["achieved_goal"]["kettle"][0].copy())
    ref.close()
    for task, value in start.items():
        monkeypatch.setitem(kenv.OBS_ELEMENT_GOALS, task, value + 0.05)
    # the kettle: 0.3 - a little from where it is after 4 steps, along its settling
    move = kettle[4] - start["kettle"]
    monkeypatch.setitem(kenv.OBS_ELEMENT_GOALS, "kettle",
                        kettle[4] + move / np.linalg.norm(move) * 0.2995)
    monkeypatch.setitem(kenv.OBS_ELEMENT_GOALS, "bottom burner",
                        start["bottom burner"] + 1.0)


def test_default_goals_truncation_two_threads():
    """The default kwargs (no task completes): noise, control, 12-step truncations."""
    seen = run(3, 26, seed=4, threads=2, limit=12)
    assert seen["trunc"] == 6 and seen["reward"] == 0


@pytest.mark.parametrize("remove,terminate", [(True, True), (False, True), (True, False),
                                              (False, False)])
def test_completions(near_goals, remove, terminate):
    """Rewards, the three info lists and termination, whether completed tasks are removed
    and whether completing every task terminates; float32 actions."""
    seen = run(2, 14, seed=7, threads=2, dtype=np.float32, limit=9,
               remove_task_when_completed=remove, terminate_on_tasks_completed=terminate,
               tasks_to_complete=["kettle", "microwave", "light switch", "hinge cabinet"])
    assert seen["reward"] > 0 and seen["late"] > 0
    assert (seen["term"] > 0) == terminate


def test_all_tasks_noise_ratios_three_threads(near_goals):
    """Every task (the bottom burner never completes), other noise ratios, 3 threads."""
    seen = run(4, 12, seed=11, threads=3, limit=10, robot_noise_ratio=0.5,
               object_noise_ratio=0.02)
    assert seen["reward"] > 0 and seen["term"] == 0


def test_termination_autoreset_same_step(near_goals):
    """Tasks all done at once: terminated, then autoreset (next-step and same-step)."""
    for mode in ("next_step", "same_step"):
        seen = run(2, 6, seed=3, mode=mode, tasks_to_complete=["microwave", "slide cabinet"])
        assert seen["term"] >= 4


def test_per_env_settings(near_goals):
    """set_attr of KitchenEnv's own settings, per env, between steps (as the reference reads
    them at every step)."""
    seen = run(3, 10, seed=2, threads=2, limit=8,
               tasks_to_complete=["kettle", "top burner", "slide cabinet"],
               attrs=dict(terminate_on_tasks_completed=[True, False, True],
                          remove_task_when_completed=[False, True, True],
                          object_noise_ratio=[0.0, 0.01, 0.0005]))
    assert seen["reward"] > 0 and seen["term"] > 0
