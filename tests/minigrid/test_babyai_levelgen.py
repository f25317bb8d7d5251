"""BabyAI's LevelGen levels (GoToSeq, Synth, SynthLoc, SynthSeq, MiniBossLevel, BossLevel,
BossLevelNoUnlock) through make_vec against gymnasium's SyncVectorEnv over minigrid 3.2.0's
own envs, bit for bit: the Dict observation (image, direction, the mission a tuple of str),
rewards, terminated, truncated, info, across many autoresets (a short max_steps regenerates
the levels often: locked rooms, rejections, And / Before / After of up to 4 actions); the
verifiers' successes (And, Before, After, their nested Ands) driven by minigrid's bot."""
import contextlib
import io

import gymnasium as gym
import numpy as np
import pytest

import cypool

from _babyai_ref import check_same, reference  # noqa: E402

minigrid = pytest.importorskip("minigrid")

LEVELGEN_IDS = ["BabyAI-GoToSeq-v0", "BabyAI-GoToSeqS5R2-v0", "BabyAI-Synth-v0",
                "BabyAI-SynthS5R2-v0", "BabyAI-SynthLoc-v0", "BabyAI-SynthSeq-v0",
                "BabyAI-MiniBossLevel-v0", "BabyAI-BossLevel-v0", "BabyAI-BossLevelNoUnlock-v0"]


def run(env_id, n, steps, kw, seed, bot=False):
    """steps on n envs of both, random actions (weighted to forward, pickup, drop, toggle) or
    minigrid's BabyAIBot on the reference (a random action 1 time in 10, a new bot after
    each autoreset); the missions of the episodes won."""
    from minigrid.utils.baby_ai_bot import BabyAIBot

    env = cypool.make_vec(env_id, n, num_threads=1 + seed % 2, **kw)
    ref = reference(env_id, n, kw)
    quiet = contextlib.redirect_stdout(io.StringIO())   # minigrid prints its rejections
    won = []
    try:
        with quiet:
            y = ref.reset(seed=seed)
        check_same(env.reset(seed=seed), y, "reset")
        bots = [BabyAIBot(e) if bot else None for e in ref.envs]
        rng = np.random.default_rng(seed)
        for t in range(steps):
            a = rng.choice(7, n, p=[0.15, 0.15, 0.35, 0.1, 0.1, 0.1, 0.05])
            for i, b in enumerate(bots):
                if b and rng.random() > 0.1:
                    try:
                        a[i] = b.replan()
                    except Exception:       # the bot lost track: random actions
                        bots[i] = None
            mission = y[0]["mission"]
            with quiet:
                y = ref.step(a)
            check_same(env.step(a), y, f"step {t}")
            won += [mission[i] for i in np.flatnonzero(y[1])]
            if bot:                         # next step resets it: a bot after that
                for i in range(n):
                    bots[i] = (False if y[2][i] or y[3][i] else
                               BabyAIBot(ref.envs[i]) if bots[i] is False else bots[i])
    finally:
        env.close()
        ref.close()
    return won


# minigrid itself loops forever on some seeds (RoomGrid.place_agent when every free cell of
# the room drawn is boxed in by objects: SynthS5R2's 18 distractors in 3 x 3 rooms, seed 3)
SEEDS = dict(zip(LEVELGEN_IDS, (0, 1, 2, 13, 4, 5, 6, 7, 8)))


@pytest.mark.parametrize("env_id", LEVELGEN_IDS)
def test_levelgen_matches_minigrid(env_id):
    """3 envs, 150 random steps, max_steps 6: about 75 levels generated per id."""
    run(env_id, 3, 150, {"max_steps": 6}, seed=SEEDS[env_id])


@pytest.mark.parametrize("env_id,kw", [
    ("BabyAI-GoToSeq-v0", {"room_size": 5, "num_rows": 2, "num_cols": 3, "num_dists": 3}),
    ("BabyAI-SynthS5R2-v0", {"num_dists": 6, "max_steps": 9}),
    ("BabyAI-BossLevel-v0", {"room_size": 6, "num_rows": 2, "num_dists": 10, "max_steps": 8}),
    # LevelGen's own kwargs, where the class passes them on
    ("BabyAI-BossLevel-v0", {"locked_room_prob": 1.0, "action_kinds": ["pickup", "goto"],
                             "instr_kinds": ["seq", "seq", "action"], "locations": False,
                             "max_steps": 8}),
    ("BabyAI-SynthS5R2-v0", {"locked_room_prob": 0.9, "action_kinds": ("open", "putnext"),
                             "max_steps": 8}),
    ("BabyAI-GoToSeq-v0", {"implicit_unlock": False, "instr_kinds": ["and"], "max_steps": 8}),
    ("BabyAI-MiniBossLevel-v0", {"unblocking": False, "instr_kinds": ["action", "and"],
                                 "max_steps": 8}),
    ("BabyAI-BossLevelNoUnlock-v0", {"locations": False, "unblocking": False,
                                     "max_steps": 8}),
])
def test_levelgen_kwargs_match_minigrid(env_id, kw):
    run(env_id, 3, 80, kw, seed=7)


@pytest.mark.parametrize("env_id,seed,steps,kinds", [
    ("BabyAI-GoToSeqS5R2-v0", 1, 300, (", then ", " after you ", " and ")),
    ("BabyAI-SynthS5R2-v0", 12, 200, ("go to ", "pick up ", "open ")),
    ("BabyAI-MiniBossLevel-v0", 3, 300, (", then ", " after you ", " and ", "put ", "pick up ",
                                         "open ")),
    ("BabyAI-BossLevel-v0", 4, 200, ())])
def test_levelgen_verifier_successes_match_minigrid(env_id, seed, steps, kinds):
    """Driven by minigrid's bot (4 envs), the instructions succeed (rewards 1 - 0.9 * step
    / max_steps reproduced, not only zeros), among them the kinds listed (Before, After,
    And, nested in sequences of up to 4 actions; PutNext, Pickup, Open)."""
    won = run(env_id, 4, steps, {}, seed, bot=True)
    assert won
    for k in kinds:
        assert any(k in m for m in won), (k, won)


def test_levelgen_bad_kwargs_refused():
    with pytest.raises(ValueError):
        cypool.make_vec("BabyAI-GoToSeq-v0", 2, num_dists=0)
    with pytest.raises(TypeError):
        cypool.make_vec("BabyAI-MiniBossLevel-v0", 2, room_size=6)
    # what a class fixes itself is no kwarg (minigrid: "got multiple values")
    for env_id, kw in (("BabyAI-GoToSeq-v0", {"action_kinds": ["goto"]}),
                       ("BabyAI-Synth-v0", {"instr_kinds": ["action"]}),
                       ("BabyAI-BossLevelNoUnlock-v0", {"locked_room_prob": 0.5}),
                       ("BabyAI-MiniBossLevel-v0", {"locked_room_prob": 0.5})):
        with pytest.raises(TypeError):
            gym.make(env_id, **kw)
        with pytest.raises(TypeError):
            cypool.make_vec(env_id, 2, **kw)
    for kw, err in (({"action_kinds": ["fly"]}, ValueError), ({"action_kinds": []}, ValueError),
                    ({"action_kinds": "goto"}, TypeError),
                    ({"instr_kinds": ["seq"] * 4}, ValueError),
                    ({"locked_room_prob": "1"}, TypeError),
                    ({"locked_room_prob": True}, TypeError), ({"locations": 2}, TypeError)):
        with pytest.raises(err):
            cypool.make_vec("BabyAI-BossLevel-v0", 2, **kw)
