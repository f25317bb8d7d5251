"""info["game_return"] / info["game_length"]: the game's unclipped score and agent steps at the
step where a game ends, whatever episodic_life and reward_clip do (a lost life ends an
"episode" for gymnasium's RecordEpisodeStatistics, which then counts lives and clipped rewards).
"""
import numpy as np
import pytest
import gymnasium as gym

import cypool

N = 4


def _ended(info):
    """(rows where a game ended, its return, its length) from a step's (final) info."""
    if "_game_length" not in info:
        return np.zeros(N, bool), None, None
    return info["_game_length"], info["game_return"], info["game_length"]


def test_game_score_equals_the_plain_game_pools_episode():
    """Without no-ops and FIRE at reset, an episodic-life reset leaves the emulator alone, so a
    pool with episodic_life=True, reward_clip=True plays exactly the games of one with both
    off, fed the same seeds and actions: there RecordEpisodeStatistics' episodes are the
    games. A time limit of 200 steps ends some games by truncation."""
    kw = dict(autoreset_mode="same_step", noop_max=0, use_fire_reset=False, seed=3,
              max_episode_steps=200)
    env = cypool.make_vec("Breakout-v5", N, episodic_life=True, reward_clip=True, **kw)
    ref = gym.wrappers.vector.RecordEpisodeStatistics(cypool.make_vec("Breakout-v5", N, **kw))
    try:
        env.reset(), ref.reset()
        rng = np.random.default_rng(0)
        games = lives_lost = truncated = 0
        for t in range(700):
            a = rng.integers(0, 4, N)
            _, rew, term, trunc, info = env.step(a)
            _, ref_rew, ref_term, ref_trunc, ref_info = ref.step(a)
            done = term | trunc
            step_info = info["final_info"] if done.any() else info
            # the same emulation: the episodic pool's raw rewards are the plain pool's rewards
            raw = np.where(done, info["final_info"]["raw_reward"], info["raw_reward"]) \
                if done.any() else info["raw_reward"]
            assert np.array_equal(raw, ref_rew), t
            assert np.array_equal(rew, np.sign(ref_rew)), t
            ended, ret, length = _ended(step_info)
            ref_done = ref_term | ref_trunc
            assert np.array_equal(ended & done, ref_done), t   # a game ends: the plain episode
            assert not (ended & ~done).any()
            lives_lost += int(np.count_nonzero(done & ~ended))
            if ref_done.any():
                m = ref_info["_episode"]
                assert np.array_equal(m, ref_done)
                assert np.array_equal(ret[m], ref_info["episode"]["r"][m]), t
                assert np.array_equal(length[m], ref_info["episode"]["l"][m]), t
                assert ret.dtype == np.float64 and length.dtype == np.int32
                games += int(m.sum())
                truncated += int(np.count_nonzero(ref_trunc))
        assert games >= 8 and truncated >= 2 and games - truncated >= 2, (games, truncated)
        assert lives_lost >= 3 * games
    finally:
        env.close(), ref.close()


def test_game_score_sums_raw_rewards_over_lives_next_step():
    """EnvPool's default resets (no-ops, FIRE) and next_step autoreset: the reference sums
    the per-step info["raw_reward"] since the game began and counts the steps (not the reset
    steps). SpaceInvaders pays 5 to 30 points per alien, so the clipped sum differs."""
    env = cypool.make_vec("SpaceInvaders-v5", N, episodic_life=True, reward_clip=True, seed=5)
    try:
        _, info = env.reset()
        assert "game_return" not in info and "game_length" not in info   # reset rows: none
        rng = np.random.default_rng(1)
        raw_sum, clipped_sum, steps = np.zeros(N), np.zeros(N), np.zeros(N, np.int64)
        prev_done = np.zeros(N, bool)
        games = lives = 0
        for t in range(900):
            _, rew, term, trunc, info = env.step(rng.integers(0, 6, N))
            stepped = ~prev_done                      # the others were autoreset steps
            raw_sum += np.where(stepped, info["raw_reward"], 0)
            clipped_sum += np.where(stepped, rew, 0)
            steps += stepped
            done = term | trunc
            ended, ret, length = _ended(info)
            assert np.array_equal(ended, stepped & (info["game_over"].astype(bool) | trunc)), t
            for i in np.flatnonzero(ended):
                assert ret[i] == raw_sum[i] and length[i] == steps[i] == info["elapsed_step"][i]
                assert clipped_sum[i] <= ret[i]
                games += 1
                raw_sum[i] = clipped_sum[i] = steps[i] = 0
            if not ended.any():
                assert ret is None or not ret.any()
            lives += int(np.count_nonzero(done & ~ended))
            prev_done = done
        assert games >= 2 and lives >= 2 * games
    finally:
        env.close()


def test_game_score_survives_a_state_snapshot():
    env = cypool.make_vec("Breakout-v5", 1, episodic_life=True, seed=0, noop_max=0,
                          use_fire_reset=False)
    try:
        env.reset()
        rng = np.random.default_rng(2)
        actions = rng.integers(0, 4, (800, 1))
        for a in actions[:60]:
            env.step(a)
        state = env.get_state()
        counters = state["envs"][0]["env"]["counters"]
        assert len(counters) == 6

        def with_counters(c):
            env0 = {**state["envs"][0], "env": {**state["envs"][0]["env"], "counters": c}}
            return {**state, "envs": [env0]}

        def play():
            for t, a in enumerate(actions[60:]):
                info = env.step(a)[4]
                if info.get("_game_length", [False])[0]:
                    return t, info["game_return"][0], info["game_length"][0]
            raise AssertionError("no game ended")

        first = play()
        env.set_state(state)
        assert play() == first
        env.set_state(with_counters(counters[:5]))   # a state from before game_return
        with pytest.raises(ValueError, match="game return"):
            env.set_state(with_counters((*counters[:5], float("nan"))))
    finally:
        env.close()
