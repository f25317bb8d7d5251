"""reset(options={"initial_state_dict": d}) on the Adroit ids (the reference's reset_model
draws, then set_env_state) against gymnasium-robotics 1.4.2: make_vec (one dict for every env,
as SyncVectorEnv passes it; one per env with reset_mask), gymnasium.make("cypool/<id>"), the
model values it sets beyond the draws (Hammer's board x, y, Relocate's ball z) kept by later
resets and snapshots; bad dicts refused before any env moves."""
import warnings

import gymnasium as gym
import numpy as np
import pytest

import cypool
from cypool.registration import gym_id

from _fetch_ref import assert_info, assert_same, reference  # noqa: E402

NU = dict(Door=28, Hammer=26, Pen=24, Relocate=30)
KEYS = {"Door": ("door_body_pos",), "Hammer": ("board_pos",), "Pen": ("desired_orien",),
        "Relocate": ("obj_pos", "target_pos")}


def ref_env(env_id, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.make(env_id, **kw)


def state_dict(task, seed, steps=6):
    """A reachable state of the reference env, in set_env_state's keys; the model values
    moved off their draws (and off the model's own fixed values)."""
    env = ref_env(f"AdroitHand{task}-v1")
    try:
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            env.step(rng.uniform(-1, 1, NU[task]).astype(np.float32))
        s = env.unwrapped.get_env_state()
    finally:
        env.close()
    d = {k: s[k] for k in ("qpos", "qvel") + KEYS[task]}
    shift = {"Door": [0.01, -0.02, 0.005], "Hammer": [0.01, -0.02, 0.003],
             "Relocate": [0.02, 0.01, 0.015]}
    if task in shift:
        d[KEYS[task][0]] = d[KEYS[task][0]] + shift[task]
    else:
        d["desired_orien"] = d["desired_orien"] * 1.0 + [0.0, 0.1, -0.05, 0.0]
    return d


def steps(mine, ref, nu, k, seed, where):
    rng = np.random.default_rng(seed)
    for t in range(k):
        a = rng.uniform(-1, 1, (mine.num_envs, nu)).astype(np.float32)
        x, y = mine.step(a), ref.step(a)
        for j, name in enumerate(("obs", "reward", "terminated", "truncated")):
            assert_same(x[j], y[j], f"{where} step {t} {name}")
        assert_info(x[4], y[4], f"{where} step {t}")


@pytest.mark.parametrize("task", ["Door", "Hammer", "Pen", "Relocate"])
def test_one_dict_for_every_env(task):
    """The option's reset, steps through an autoreset (which draws again, with the option's
    fixed values kept), plain resets after it."""
    env_id, n = f"AdroitHand{task}-v1", 2
    d = state_dict(task, 3)
    mine = cypool.make_vec(env_id, n, num_threads=2, max_episode_steps=4)
    ref = reference(env_id, n, "next_step", max_episode_steps=4)
    try:
        for seed, options in ((1, {"initial_state_dict": d}), (None, None),
                              (None, {"initial_state_dict": d}), (2, {})):
            o, i = mine.reset(seed=seed, options=options)
            ro, ri = ref.reset(seed=seed, options=options)
            assert_same(o, ro, f"reset {seed}")
            assert_info(i, ri, f"reset {seed}")
            steps(mine, ref, NU[task], 6, 0 if seed is None else seed, f"after {seed}")
    finally:
        mine.close()
        ref.close()


def test_one_dict_per_env_and_reset_mask():
    env_id, n, task = "AdroitHandRelocate-v1", 3, "Relocate"
    ds = [state_dict(task, s) for s in (4, 5, 6)]
    mine = cypool.make_vec(env_id, n, num_threads=2)
    refs = [ref_env(env_id) for _ in range(n)]
    try:
        o, _ = mine.reset(seed=3, options={"initial_state_dict": [ds[0], None, ds[2]]})
        for k, env in enumerate(refs):
            opt = None if k == 1 else {"initial_state_dict": ds[k]}
            ro, _ = env.reset(seed=3 + k, options=opt)
            assert np.array_equal(o[k], ro), k
        # a partial reset: env 1 takes its dict, env 2 none; env 0 does not move
        mask = np.array([False, True, True])
        before = o.copy()
        o, _ = mine.reset(options={"reset_mask": mask,
                                   "initial_state_dict": [ds[2], ds[1], None]})
        assert np.array_equal(o[0], before[0])
        assert np.array_equal(o[1], refs[1].reset(options={"initial_state_dict": ds[1]})[0])
        assert np.array_equal(o[2], refs[2].reset()[0])
        rng = np.random.default_rng(1)
        for t in range(4):
            a = rng.uniform(-1, 1, (n, NU[task])).astype(np.float32)
            x = mine.step(a)
            for k, env in enumerate(refs):
                y = env.step(a[k])
                assert np.array_equal(x[0][k], y[0]) and x[1][k] == y[1], (t, k)
    finally:
        mine.close()
        for env in refs:
            env.close()


@pytest.mark.parametrize("task", ["Hammer", "Pen"])
def test_single_env(task):
    env_id = f"AdroitHand{task}-v1"
    d = state_dict(task, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine = gym.make(gym_id(env_id))
    ref = ref_env(env_id)
    try:
        rng = np.random.default_rng(0)
        for seed, options in ((5, {"initial_state_dict": d}), (None, None)):
            x, y = mine.reset(seed=seed, options=options), ref.reset(seed=seed, options=options)
            assert np.array_equal(x[0], y[0]) and x[1] == y[1] == {}
            for t in range(3):
                a = rng.uniform(-1, 1, NU[task]).astype(np.float32)
                x, y = mine.step(a), ref.step(a)
                assert np.array_equal(x[0], y[0]) and x[1:4] == y[1:4], t
                assert x[4] == y[4], t
    finally:
        mine.close()
        ref.close()


def test_snapshot_keeps_the_dicts_fixed_values():
    """A snapshot from before the option's reset restores the model's own board x, y."""
    env_id, task = "AdroitHandHammer-v1", "Hammer"
    mine = cypool.make_vec(env_id, 1)
    ref = reference(env_id, 1, "next_step")
    try:
        mine.reset(seed=2)
        ref.reset(seed=2)
        snap = mine.get_state()
        mine.reset(options={"initial_state_dict": state_dict(task, 9)})
        mine.set_state(snap)
        a = np.full((1, NU[task]), 0.3, np.float32)
        for t in range(3):
            x, y = mine.step(a), ref.step(a)
            assert_same(x[0], y[0], f"step {t}")
    finally:
        mine.close()
        ref.close()


@pytest.mark.parametrize("edit, match", [
    (lambda d: None, "must be a dict"),
    (lambda d: [d], "one dict"),
    (lambda d: {k: v for k, v in d.items() if k != "qvel"}, "exactly the keys"),
    (lambda d: {**d, "target_pos": np.zeros(3)}, "exactly the keys"),   # get_env_state's
    (lambda d: {**d, "qpos": d["qpos"][:-1]}, "shape"),
    (lambda d: {**d, "qpos": d["qpos"].tolist()}, "numpy array"),
    (lambda d: {**d, "board_pos": np.zeros((1, 3))}, "shape"),
    (lambda d: {**d, "qvel": np.full(33, np.nan)}, "NaN"),
    (lambda d: {**d, "qpos": d["qpos"].astype(np.complex128)}, "float64"),
    (lambda d: {**d, "board_pos": "abc"}, "float64"),
    (lambda d: {**d, "board_pos": [0.1, 0.2, None]}, "NaN")])
def test_bad_dicts_refused_before_any_env_moves(edit, match):
    env_id = "AdroitHandHammer-v1"
    bad = edit(state_dict("Hammer", 1, steps=1))
    mine = cypool.make_vec(env_id, 2)
    ref = reference(env_id, 2, "next_step")
    try:
        mine.reset(seed=1)
        ref.reset(seed=1)
        with pytest.raises(ValueError, match=match):
            mine.reset(options={"initial_state_dict": bad})
        o, _ = mine.reset()
        ro, _ = ref.reset()
        assert_same(o, ro, "reset after the refused one")
    finally:
        mine.close()
        ref.close()


def test_lists_and_int_values_taken_as_the_reference_takes_them():
    """A list model value (cast as Box.contains casts it) and an int array (cast safely);
    qpos and qvel must be arrays (the reference's set_state reads their shape)."""
    env_id = "AdroitHandDoor-v1"
    d = state_dict("Door", 2)
    d = {"qpos": d["qpos"], "qvel": np.zeros(30, np.int64),
         "door_body_pos": d["door_body_pos"].tolist()}
    mine = cypool.make_vec(env_id, 1)
    ref = reference(env_id, 1, "next_step")
    try:
        o, _ = mine.reset(seed=0, options={"initial_state_dict": d})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ro, _ = ref.reset(seed=0, options={"initial_state_dict": d})
        assert_same(o, ro, "reset")
        steps(mine, ref, NU["Door"], 3, 0, "lists")
    finally:
        mine.close()
        ref.close()
