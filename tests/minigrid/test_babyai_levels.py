"""BabyAI levels beyond GoToLocal (GoTo*, Open*, Pickup*, Unlock*, PutNext*) through make_vec
against gymnasium's SyncVectorEnv over minigrid 3.2.0's own envs, bit for bit: the Dict
observation (the mission a tuple of str), rewards, terminated, truncated, info, across
autoresets (a short max_steps regenerates the levels often); the verifiers' successes and
strict failures; the levels' kwargs; bad kwargs refused before any env is made."""
import contextlib
import io

import numpy as np
import pytest

import cypool
from cypool.minigrid.registration import ENV_IDS

from _babyai_ref import check_same, reference  # noqa: E402

minigrid = pytest.importorskip("minigrid")

# GoToLocal and its variants have their own tests (tests/minigrid/test_minigrid.py)
NEW_IDS = [i for i in ENV_IDS if i.startswith("BabyAI-") and not i.startswith("BabyAI-GoToLocal")]


def run(env_id, n, steps, kw=None, seed=0, p=(0.2, 0.2, 0.3, 0.1, 0.1, 0.1, 0.0)):
    """steps random actions on n envs of both; the number of successes and of failures
    (terminated with reward 0)."""
    kw = kw or {}
    env = cypool.make_vec(env_id, n, num_threads=1 + seed % 2, **kw)
    ref = reference(env_id, n, kw)
    wins = fails = 0
    try:
        quiet = contextlib.redirect_stdout(io.StringIO())   # minigrid prints its rejections
        with quiet:
            y = ref.reset(seed=seed)
        check_same(env.reset(seed=seed), y, "reset")
        rng = np.random.default_rng(seed)
        for t in range(steps):
            a = rng.choice(7, n, p=list(p))
            with quiet:
                y = ref.step(a)
            check_same(env.step(a), y, f"step {t}")
            wins += int(np.count_nonzero(y[1]))
            fails += int(np.count_nonzero(y[2] & (y[1] == 0)))
    finally:
        env.close()
        ref.close()
    return wins, fails


@pytest.mark.sweep(every=1)   # every id; every other one under ASan
@pytest.mark.parametrize("env_id", NEW_IDS)
def test_level_matches_minigrid(env_id):
    """Every newly served level: 3 envs, 80 steps, max_steps 20 (each env regenerates its
    level about 5 times)."""
    run(env_id, 3, 80, {"max_steps": 20}, seed=NEW_IDS.index(env_id))


@pytest.mark.parametrize("env_id", ["BabyAI-OneRoomS8-v0", "BabyAI-PutNextLocalS5N3-v0",
                                    "BabyAI-UnlockPickup-v0", "BabyAI-PickupDist-v0",
                                    "BabyAI-OpenDoorsOrderN2-v0"])
def test_default_max_steps_match_minigrid(env_id):
    """max_steps left None: RoomGridLevel's (the instruction's navigations * room_size ** 2
    * rooms: 64, 50 for PutNext's 2, UnlockPickup's 72, 49) or the level's own (720):
    truncations at minigrid's step."""
    run(env_id, 2, 80, seed=1)


def run_bot(env_id, n, steps, seed):
    """n envs driven by minigrid's BabyAIBot on the reference (a random action 1 time in 10,
    a new bot after each autoreset): the number of successes and of failures."""
    from minigrid.utils.baby_ai_bot import BabyAIBot

    env = cypool.make_vec(env_id, n, num_threads=2)
    ref = reference(env_id, n, {})
    quiet = contextlib.redirect_stdout(io.StringIO())
    wins = fails = 0
    try:
        with quiet:
            y = ref.reset(seed=seed)
        check_same(env.reset(seed=seed), y, "reset")
        bots = [BabyAIBot(e) for e in ref.envs]
        rng = np.random.default_rng(seed)
        for t in range(steps):
            a = rng.integers(0, 6, n)
            for i, bot in enumerate(bots):
                if bot is not None and rng.random() > 0.1:
                    try:
                        a[i] = bot.replan()
                    except Exception:       # the bot lost track: random actions
                        bots[i] = None
            with quiet:
                y = ref.step(a)
            check_same(env.step(a), y, f"step {t}")
            wins += int(np.count_nonzero(y[1]))
            fails += int(np.count_nonzero(y[2] & (y[1] == 0)))
            for i in range(n):                  # next step resets it: a bot after that
                bots[i] = (False if y[2][i] or y[3][i] else
                           BabyAIBot(ref.envs[i]) if bots[i] is False else bots[i])
    finally:
        env.close()
        ref.close()
    return wins, fails


@pytest.mark.parametrize("env_id", [
    "BabyAI-GoToImpUnlock-v0", "BabyAI-GoToObjDoor-v0", "BabyAI-Unlock-v0",
    "BabyAI-UnlockLocal-v0", "BabyAI-OpenTwoDoors-v0", "BabyAI-OpenDoorsOrderN4-v0",
    "BabyAI-OpenDoorLoc-v0", "BabyAI-UnlockPickupDist-v0", "BabyAI-BlockedUnlockPickup-v0",
    "BabyAI-UnblockPickup-v0", "BabyAI-PickupDist-v0", "BabyAI-KeyCorridorS3R2-v0",
    "BabyAI-PutNextLocalS5N3-v0", "BabyAI-PutNextS4N1-v0",
    "BabyAI-MoveTwoAcrossS5N2-v0", "BabyAI-ActionObjDoor-v0"])
def test_verifiers_match_minigrid(env_id):
    """Driven by minigrid's bot, the GoTo, Open (locked doors, Before, After, locations),
    Pickup and PutNext (Before) verifiers succeed: successes reproduced,
    not only zeros."""
    wins, _ = run_bot(env_id, 3, 120, seed=NEW_IDS.index(env_id))
    assert wins > 0


@pytest.mark.parametrize("env_id", ["BabyAI-OpenDoorDebug-v0",
                                    "BabyAI-OpenDoorsOrderN2Debug-v0",
                                    "BabyAI-OpenDoorsOrderN4Debug-v0",
                                    "BabyAI-PickupDistDebug-v0"])
def test_strict_failures_match_minigrid(env_id):
    """The strict (debug) levels' failures (the wrong door opened, the wrong object picked
    up: terminated, reward 0), with random toggles and pickups."""
    _, fails = run(env_id, 8, 100, seed=5, p=(0.2, 0.2, 0.2, 0.2, 0, 0.2, 0))
    assert fails > 0


@pytest.mark.parametrize("env_id,kw", [
    ("BabyAI-GoTo-v0", {"room_size": 5, "num_rows": 2, "num_cols": 3, "num_dists": 4,
                        "doors_open": True}),
    ("BabyAI-OpenDoor-v0", {"select_by": "loc", "debug": True}),
    ("BabyAI-OpenTwoDoors-v0", {"first_color": "green", "strict": True}),
    ("BabyAI-OpenDoorsOrderN2-v0", {"num_doors": 3}),
    ("BabyAI-PutNextLocal-v0", {"room_size": 6, "num_objs": 3}),
    ("BabyAI-PutNextS5N1-v0", {"room_size": 6, "objs_per_room": 2, "start_carrying": True}),
    ("BabyAI-UnlockPickup-v0", {"distractors": True, "max_steps": 30}),
])
def test_level_kwargs_match_minigrid(env_id, kw):
    run(env_id, 3, 80, kw, seed=3)


@pytest.mark.parametrize("env_id,kw,exc", [
    ("BabyAI-OpenDoorsOrderN2-v0", {"num_doors": 5}, ValueError),
    ("BabyAI-OpenDoor-v0", {"select_by": "type"}, ValueError),
    ("BabyAI-OpenTwoDoors-v0", {"first_color": "pink"}, ValueError),
    ("BabyAI-PutNextLocal-v0", {"num_objs": 1}, ValueError),
    ("BabyAI-PutNextS4N1-v0", {"room_size": 3}, ValueError),
    ("BabyAI-PutNextS4N1-v0", {"objs_per_room": 10}, ValueError),
    ("BabyAI-GoTo-v0", {"num_rows": 5, "num_cols": 4}, ValueError),
    ("BabyAI-GoTo-v0", {"room_size": 12}, ValueError),
    ("BabyAI-GoTo-v0", {"num_dists": 0}, ValueError),
    ("BabyAI-GoTo-v0", {"doors_open": 1}, TypeError),
    ("BabyAI-PickupDist-v0", {"debug": "yes"}, TypeError),
    ("BabyAI-Unlock-v0", {"max_steps": 0}, ValueError),
    ("BabyAI-GoToDoor-v0", {"room_size": 5}, TypeError),
])
def test_bad_kwargs_refused(env_id, kw, exc):
    with pytest.raises(exc):
        cypool.make_vec(env_id, 2, **kw)
