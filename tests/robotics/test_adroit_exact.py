"""The Adroit hand ids (AdroitHand{Door,Hammer,Pen,Relocate}-v1 and ...Sparse-v1) through
cypool.make_vec against gymnasium's SyncVectorEnv over gymnasium.make(id) of the installed
gymnasium-robotics, bit for bit: observations, rewards, terminated, truncated (autoresets) and
info["success"] (an object array of numpy bools, None where an env has none; Relocate's a
bool array), with random actions beyond [-1, 1] (clipped) in float32 and float64."""
import warnings

import gymnasium as gym
import numpy as np
import pytest

import cypool

from _fetch_ref import MODES, assert_info, assert_same, reference  # noqa: E402

TASKS = ("Door", "Hammer", "Pen", "Relocate")
IDS = [f"AdroitHand{task}{suffix}-v1" for task in TASKS for suffix in ("", "Sparse")]
NU = dict(Door=28, Hammer=26, Pen=24, Relocate=30)


def run(env_id, n, steps, seed, threads=1, mode="next_step", dtype=np.float32, limit=None,
        env_kwargs=None, scale=1.2):
    kw = {} if limit is None else dict(max_episode_steps=limit)
    mine = cypool.make_vec(env_id, n, num_threads=threads, autoreset_mode=mode,
                           env_kwargs=env_kwargs, **kw)
    if env_kwargs is None:
        ref = reference(env_id, n, mode, **kw)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = gym.vector.SyncVectorEnv(
                [lambda e=e: gym.make(env_id, **kw, **e) for e in env_kwargs],
                autoreset_mode=MODES[mode])
    nu = NU[env_id[10:].split("-")[0].replace("Sparse", "")]
    seen = dict(success=0, trunc=0, rewards=set())
    try:
        o, i = mine.reset(seed=seed)
        ro, ri = ref.reset(seed=seed)
        assert_same(o, ro, "reset obs")
        assert_info(i, ri, "reset")
        rng = np.random.default_rng(seed)
        for t in range(steps):
            a = rng.uniform(-scale, scale, (n, nu)).astype(dtype)
            x, y = mine.step(a), ref.step(a)
            assert_same(x[0], y[0], f"step {t} obs")
            for k, name in ((1, "reward"), (2, "terminated"), (3, "truncated")):
                assert_same(x[k], y[k], f"step {t} {name}")
            assert_info(x[4], y[4], f"step {t}")
            if "success" in y[4]:
                seen["success"] += sum(bool(v) for v in y[4]["success"] if v is not None)
            seen["trunc"] += int(y[3].sum())
            seen["rewards"].update(np.round(y[1]).tolist())
        return seen
    finally:
        mine.close()
        ref.close()


@pytest.mark.parametrize("env_id", IDS)
def test_exact(env_id):
    """Every id: two envs over an autoreset (a 40-step limit)."""
    seen = run(env_id, 2, 50, seed=1, limit=40)
    assert seen["trunc"] == 2


@pytest.mark.parametrize("env_id", ["AdroitHandPen-v1", "AdroitHandPenSparse-v1"])
def test_pen_successes(env_id):
    """Small actions keep the pen in the hand: successes (success True, the +10, +50 bonuses
    and the sparse 10.0)."""
    seen = run(env_id, 2, 50, seed=7, limit=40, scale=0.3)
    assert seen["success"] > 0


def test_default_limit_two_threads():
    """The 200-step limit, on two threads."""
    seen = run("AdroitHandDoor-v1", 2, 205, seed=4, threads=2)
    assert seen["trunc"] == 2


def test_same_step_float64_per_env_reward_types():
    """Same-step autoreset (final observations and infos), float64 actions, reward types per
    env (the reference takes any case)."""
    seen = run("AdroitHandHammer-v1", 3, 30, seed=7, mode="same_step", dtype=np.float64,
               limit=12, env_kwargs=[{}, dict(reward_type="SPARSE"),
                                     dict(reward_type="Dense")])
    assert seen["trunc"] == 6


def _poke(env, ref, edit):
    """Both sides' qpos edited alike, between steps: each reference env's MjData.qpos and
    cypool's env snapshot (its mjData buffer, qpos first) get ``edit(model, qpos)``'s qpos."""
    import mujoco
    ids = np.arange(env.num_envs, dtype=np.int64)
    states = env.pool.engine.get_state(ids)
    for i, st in enumerate(states):
        r = ref.envs[i].unwrapped
        nq = r.model.nq
        buf = bytearray(st["env"]["buffer"])
        q = np.frombuffer(buf, np.float64, count=nq)
        assert np.array_equal(q, r.data.qpos)
        new = edit(r.model, r.data.qpos.copy(), mujoco)
        q[:] = new
        r.data.qpos[:] = new
        st["env"]["buffer"] = bytes(buf)
    env.pool.engine.set_state(ids, states)


def _door(model, qpos, mujoco):
    qpos[model.jnt_qposadr[model.joint("door_hinge").id]] = 1.45
    return qpos


def _site_dist(model, qpos, mujoco, a, b, body=False):
    d = mujoco.MjData(model)
    d.qpos[:] = qpos
    mujoco.mj_forward(model, d)
    pa = d.xpos[model.body(a).id] if body else d.site_xpos[model.site(a).id]
    return pa, d.site_xpos[model.site(b).id]


def _hammer(model, qpos, mujoco):
    """The nail driven to its goal, the hammer lifted."""
    nail = model.jnt_qposadr[model.joint("nail_dir").id]
    best = min(np.linspace(-0.01, 0.09, 401), key=lambda v: np.linalg.norm(np.subtract(
        *_site_dist(model, np.r_[qpos[:nail], v, qpos[nail + 1:]], mujoco, "S_target",
                    "nail_goal"))))
    qpos[nail] = best
    qpos[model.jnt_qposadr[model.joint("OBJTz").id]] += 0.1
    return qpos


def _relocate(model, qpos, mujoco):
    """The ball moved onto its target."""
    obj, target = _site_dist(model, qpos, mujoco, "Object", "target", body=True)
    adr = model.jnt_qposadr[model.joint("OBJTx").id]
    qpos[adr:adr + 3] += target - obj
    return qpos


@pytest.mark.parametrize("env_id", ["AdroitHandDoor-v1", "AdroitHandDoorSparse-v1",
                                    "AdroitHandHammer-v1", "AdroitHandHammerSparse-v1",
                                    "AdroitHandRelocate-v1", "AdroitHandRelocateSparse-v1"])
def test_successes_from_edited_states(env_id):
    """Door opened, nail driven (hammer lifted), ball on its target: the same qpos edit on
    both sides (see _poke), then steps: success True and the dense rewards' bonuses."""
    task = env_id[10:].split("-")[0].replace("Sparse", "")
    edit = dict(Door=_door, Hammer=_hammer, Relocate=_relocate)[task]
    mine = cypool.make_vec(env_id, 2, num_threads=1)
    ref = reference(env_id, 2)
    successes = 0
    try:
        mine.reset(seed=11)
        ref.reset(seed=11)
        rng = np.random.default_rng(0)
        nu = NU[task]
        for t in range(8):
            if t == 2:
                _poke(mine, ref, edit)
            a = rng.uniform(-0.2, 0.2, (2, nu)).astype(np.float32)
            x, y = mine.step(a), ref.step(a)
            assert_same(x[0], y[0], f"step {t} obs")
            for k, name in ((1, "reward"), (2, "terminated"), (3, "truncated")):
                assert_same(x[k], y[k], f"step {t} {name}")
            assert_info(x[4], y[4], f"step {t}")
            successes += sum(bool(v) for v in y[4]["success"])
            if t == 2 and not env_id.endswith("Sparse-v1"):
                assert (y[1] > 10).all(), y[1]            # the bonuses
    finally:
        mine.close()
        ref.close()
    assert successes >= 2
