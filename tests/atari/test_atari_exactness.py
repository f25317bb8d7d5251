"""Trajectory exactness against gymnasium's Atari pipeline (issue #3's acceptance), bit for bit.

Reference: SyncVectorEnv of FrameStackObservation(AtariPreprocessing(ALE/<Game>-v5 with
frameskip=1, repeat_action_probability=p, max_num_frames_per_episode=108000), noop_max=k, ...).
cypool: make_vec(<Game>-v5, use_fire_reset=False, reward_clip=False, episodic_life=False, ...).
Both are reset with the same seed, fed the same random actions across auto-resets and a
mid-run reseed; observations, rewards, terminated and truncated must be np.array_equal, and so
must lives and the console RAM. The variants move every option the reference shares with
cypool (no-ops, sticky actions, frame skip, stack, size, colour, mode, difficulty) and run on
one and two threads. gymnasium's wrapper needs OpenCV (the reference only; cypool never
imports it).
"""
import numpy as np
import pytest

import cypool

from atari_helpers import as_gym_obs, gym_reference

pytest.importorskip("cv2", reason="gymnasium's AtariPreprocessing (the reference) needs OpenCV")

# (game, num_envs, steps, threads, options); options hold noop_max (k), p and the rest.
CASES = [
    ("Breakout", 3, 300, 2, dict(noop_max=30, p=0.25)),
    ("Breakout", 2, 250, 1, dict(noop_max=0, p=0.0)),
    ("Breakout", 2, 200, 2, dict(noop_max=1, p=0.25, mode=4, difficulty=1)),
    ("Pong", 2, 150, 2, dict(noop_max=30, p=0.25)),
    ("MsPacman", 2, 150, 2, dict(noop_max=10, p=0.25, frame_skip=3, stack=2, size=(64, 48))),
    ("SpaceInvaders", 2, 120, 1, dict(noop_max=5, p=0.1, frame_skip=2, stack=3,
                                      size=(105, 80), gray=False)),
    ("Breakout", 2, 200, 2, dict(noop_max=3, p=0.25, frame_skip=1, stack=1, size=(100, 120))),
    ("Seaquest", 1, 100, 1, dict(noop_max=30, p=0.25, size=(250, 200))),
]


def _cypool_kwargs(o):
    h, w = o.get("size", (84, 84))
    kw = dict(use_fire_reset=False, reward_clip=False, episodic_life=False,
              noop_max=o["noop_max"], repeat_action_probability=o["p"],
              frame_skip=o.get("frame_skip", 4), stack_num=o.get("stack", 4), img_height=h,
              img_width=w, gray_scale=o.get("gray", True), ram_info=True)
    for k in ("mode", "difficulty"):
        if k in o:
            kw[k] = o[k]
    return kw


def _ref_kwargs(o):
    return {k: v for k, v in o.items() if k in ("frame_skip", "stack", "size", "gray", "mode",
                                                 "difficulty")}


@pytest.mark.parametrize("game,n,steps,threads,o", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matches_gymnasium(game, n, steps, threads, o):
    gray, stack = o.get("gray", True), o.get("stack", 4)
    ref = gym_reference(game, n, noop_max=o["noop_max"], p=o["p"], **_ref_kwargs(o))
    env = cypool.make_vec(f"{game}-v5", n, num_threads=threads, **_cypool_kwargs(o))
    try:
        assert env.single_action_space == ref.single_action_space
        assert as_gym_obs(env.observation_space.sample(), gray, stack).shape == \
            ref.observation_space.shape
        rng = np.random.default_rng(0)
        ends = 0

        def check(tag, a, b):
            assert np.array_equal(a, b), f"{tag} differs"

        for t in range(steps + 1):
            if t in (0, steps // 2):
                seed = 5 + t
                o_ref, i_ref = ref.reset(seed=seed)
                obs, info = env.reset(seed=seed)
                check(f"reset obs (t={t})", as_gym_obs(obs, gray, stack), o_ref)
                check("reset lives", info["lives"], i_ref["lives"])
                continue
            a = rng.integers(0, env.single_action_space.n, n)
            r_ref = ref.step(a)
            r = env.step(a)
            check(f"obs at step {t}", as_gym_obs(r[0], gray, stack), r_ref[0])
            for name, x, y in zip(("reward", "terminated", "truncated"), r[1:4], r_ref[1:4]):
                check(f"{name} at step {t}", x, y)
            check(f"lives at step {t}", r[4]["lives"], r_ref[4]["lives"])
            ram = np.stack([e.unwrapped.ale.getRAM() for e in ref.envs])
            check(f"RAM at step {t}", r[4]["ram"], ram)
            ends += int(r_ref[2].sum() + r_ref[3].sum())
        if game == "Breakout" and n * steps >= 600:
            assert ends > 0, "the rollout should cross an auto-reset"
    finally:
        env.close()
        ref.close()
