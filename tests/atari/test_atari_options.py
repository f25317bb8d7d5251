"""EnvPool's Atari options, one by one, with real assertions.

Most checks run cypool against EnvPoolRef (atari_helpers.py): EnvPool's semantics written
again in plain Python over a bare ale-py emulator and numpy resizes (INTER_AREA and
INTER_LINEAR from OpenCV's definitions), fed the same actions; every observation, reward,
flag and info value must be equal. Targeted assertions spell out what each option means.
"""
import numpy as np
import pytest

import cypool
from cypool.atari.family import MAX_EPISODE_STEPS

from atari_helpers import derived_seeds, bare_ale, resize_frame, run_against_envpool_ref


def test_defaults_match_envpool():
    env = cypool.make_vec("Breakout-v5", 2)
    try:
        assert env.single_observation_space.shape == (4, 84, 84)
        assert env.single_observation_space.dtype == np.uint8
        assert env.observation_space.shape == (2, 4, 84, 84)
        assert env.single_action_space.n == 4
        fam = env.pool.family
        assert fam.engine.max_steps == MAX_EPISODE_STEPS == 27000
        assert fam.engine.fire_on_reset
        assert fam.kwargs["noop_max"] == 30 and fam.kwargs["frame_skip"] == 4
        obs, info = env.reset(seed=3)
        assert set(k for k in info if not k.startswith("_")) == {
            "env_id", "lives", "raw_reward", "game_over", "elapsed_step"}
        assert info["env_id"].dtype == np.int32 and info["env_id"].tolist() == [0, 1]
        assert info["lives"].dtype == np.int32 and info["lives"].tolist() == [5, 5]
        assert info["raw_reward"].dtype == np.float32
        assert info["game_over"].dtype == np.int32
        assert info["elapsed_step"].tolist() == [0, 0]
        assert info["_lives"].all()
        # the stack is filled with the reset frame
        assert all(np.array_equal(obs[i, k], obs[i, 0]) for i in range(2) for k in range(4))
        for t in range(1, 6):
            prev = obs
            obs, _, _, _, info = env.step(np.array([1, 3]))
            assert info["elapsed_step"].tolist() == [t, t]
            assert np.array_equal(obs[:, :3], prev[:, 1:])     # oldest frame first
    finally:
        env.close()


@pytest.mark.parametrize("game,fire", [("Breakout", True), ("Freeway", False)])
def test_default_reset_noops_then_fire(game, fire):
    """EnvPool's reset: U[1, 30] no-ops (one fewer when FIRE is pressed), then FIRE if the
    game has it; the frame after that fills the stack. Replayed on a bare emulator."""
    from cypool.atari.games import rom_of

    env = cypool.make_vec(f"{game}-v5", 3)
    try:
        assert env.pool.family.engine.fire_on_reset == fire
        obs, _ = env.reset(seed=40)
        counts = []
        for i in range(3):
            rng, ale_seed = derived_seeds(40 + i)
            ale = bare_ale(rom_of(f"{game}-v5"), ale_seed)
            ale.reset_game()
            noops = int(rng.integers(1, 31)) - int(fire)
            counts.append(noops)
            for _ in range(noops):
                ale.act(0)
            if fire:
                ale.act(1)
            frame = resize_frame(ale.getScreenGrayscale(), 84, 84)[0]
            assert all(np.array_equal(obs[i, k], frame) for k in range(4)), f"env {i}"
        assert len(set(counts)) > 1            # the count really is drawn per env
    finally:
        env.close()


def test_envpool_defaults_trajectory():
    stats = run_against_envpool_ref("Breakout", 2, 200, seed=1)
    assert stats["game_over"] > 0


def test_episodic_life_trajectory():
    stats = run_against_envpool_ref("Breakout", 2, 220, seed=2, episodic_life=True)
    assert stats["life_loss"] > 0 and stats["game_over"] > 0


def test_episodic_life_continues_the_game():
    env = cypool.make_vec("Breakout-v5", 1, episodic_life=True)
    try:
        obs, info = env.reset(seed=0)
        lives, rng = 5, np.random.default_rng(1)
        seen_loss = seen_over = False
        for _ in range(2000):
            prev, prev_info = obs, info
            obs, r, term, trunc, info = env.step(rng.integers(0, 4, 1))
            if not term[0]:
                continue
            if info["game_over"][0]:            # real game over: the next reset restarts
                seen_over = True
                obs, *_, info = env.step(np.array([0]))
                assert info["lives"][0] == 5 and info["elapsed_step"][0] == 0
                assert all(np.array_equal(obs[0, k], obs[0, 0]) for k in range(4))
                break
            seen_loss = True
            assert info["lives"][0] == prev_info["lives"][0] - 1
            lost_at, steps = info["lives"][0], info["elapsed_step"][0]
            terminal = obs
            obs, r, term, trunc, info = env.step(np.array([0]))   # the autoreset
            assert r[0] == 0 and not term[0] and not trunc[0]
            assert info["lives"][0] == lost_at                    # same game goes on
            assert info["elapsed_step"][0] == steps               # EnvPool's step count
            assert np.array_equal(obs[0, :3], terminal[0, 1:])    # the stack is kept
        assert seen_loss and seen_over
    finally:
        env.close()


def test_reward_clip():
    env = cypool.make_vec("MsPacman-v5", 2, reward_clip=True)
    try:
        env.reset(seed=0)
        big = 0
        rng = np.random.default_rng(0)
        for _ in range(150):
            _, r, _, _, info = env.step(rng.integers(0, 9, 2))
            assert np.array_equal(r, np.sign(info["raw_reward"]))
            big += int((info["raw_reward"] > 1).sum())
        assert big > 0                         # MsPacman scores 10 per pellet
    finally:
        env.close()
    run_against_envpool_ref("MsPacman", 1, 100, seed=3, reward_clip=True)


def test_max_episode_steps_truncates():
    env = cypool.make_vec("Pong-v5", 2, max_episode_steps=30)
    try:
        env.reset(seed=0)
        for t in range(1, 31):
            obs, r, term, trunc, info = env.step(np.array([0, 1]))
            assert trunc.tolist() == [t == 30] * 2 and not term.any()
            assert info["elapsed_step"].tolist() == [t, t]
        obs, r, term, trunc, info = env.step(np.array([0, 1]))
        assert info["elapsed_step"].tolist() == [0, 0] and not trunc.any()
        assert all(np.array_equal(obs[i, k], obs[i, 0]) for i in range(2) for k in range(4))
    finally:
        env.close()
    # with episodic life the limit counts the game's steps across life losses, and a
    # truncation wins over a termination at the same step (EnvPool)
    stats = run_against_envpool_ref("Breakout", 2, 120, seed=4, episodic_life=True,
                                    max_episode_steps=37)
    assert stats["trunc"] > 0 and stats["life_loss"] > 0


@pytest.mark.parametrize("options", [
    dict(stack_num=1, frame_skip=1),
    dict(stack_num=2, frame_skip=2, img_height=64, img_width=48),
    dict(stack_num=3, frame_skip=3, img_height=105, img_width=80),
    dict(img_height=100, img_width=120, noop_max=0),
    dict(use_inter_area_resize=False),
    dict(use_inter_area_resize=False, img_height=120, img_width=100, stack_num=2),
    dict(gray_scale=False, stack_num=2, noop_max=5),
    dict(gray_scale=False, use_inter_area_resize=False, img_height=64, img_width=64),
    dict(full_action_space=True, repeat_action_probability=0.25),
    dict(use_fire_reset=False, noop_max=1),
], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_option_trajectories(options):
    """Each option against EnvPoolRef, whose resizes are numpy implementations of OpenCV's
    INTER_AREA / INTER_LINEAR applied to the raw screens of a bare emulator."""
    run_against_envpool_ref("SpaceInvaders", 2, 60, seed=7, **options)


def test_shapes_of_options():
    env = cypool.make_vec("Pong-v5", 2, stack_num=3, gray_scale=False, img_height=50,
                          img_width=40, full_action_space=True)
    try:
        assert env.single_observation_space.shape == (9, 50, 40)   # EnvPool: channel-first
        assert env.single_action_space.n == 18
        obs, _ = env.reset(seed=0)
        assert obs.shape == (2, 9, 50, 40) and obs.dtype == np.uint8
        assert obs[:, 0:3].std() > 0                                # colour planes differ
        assert not np.array_equal(obs[:, 0], obs[:, 1])
    finally:
        env.close()


def test_ram_info():
    env = cypool.make_vec("Breakout-v5", 2, ram_info=True, use_fire_reset=False, noop_max=0)
    try:
        obs, info = env.reset(seed=9)
        assert info["ram"].shape == (2, 128) and info["ram"].dtype == np.uint8
        for i in range(2):
            _, ale_seed = derived_seeds(9 + i)
            ale = bare_ale("breakout", ale_seed)
            ale.reset_game()
            assert np.array_equal(info["ram"][i], ale.getRAM())
            for _ in range(4):
                ale.act(3)
            assert not np.array_equal(info["ram"][i], ale.getRAM())
        _, _, _, _, info = env.step(np.array([2, 2]))
        assert "ram" in info and info["_ram"].all()
    finally:
        env.close()


def test_results_independent_of_threads():
    kw = dict(episodic_life=True, reward_clip=True, repeat_action_probability=0.25,
              max_episode_steps=90)
    outs = []
    for threads in (1, 2):
        env = cypool.make_vec("Breakout-v5", 4, num_threads=threads, **kw)
        rng = np.random.default_rng(5)
        traj = [env.reset(seed=11)[0]]
        for _ in range(120):
            o, r, te, tr, info = env.step(rng.integers(0, 4, 4))
            traj += [o, r, te, tr, info["lives"], info["elapsed_step"]]
        env.close()
        outs.append(traj)
    assert all(np.array_equal(a, b) for a, b in zip(*outs))


def test_same_step_final_obs():
    """SAME_STEP returns the reset frame at once and the terminal frame in final_obs, equal to
    NEXT_STEP's two steps."""
    kw = dict(max_episode_steps=15)
    nxt = cypool.make_vec("Breakout-v5", 1, **kw)
    same = cypool.make_vec("Breakout-v5", 1, autoreset_mode="same_step", **kw)
    try:
        nxt.reset(seed=2)
        same.reset(seed=2)
        rng = np.random.default_rng(0)
        for _ in range(40):
            a = rng.integers(0, 4, 1)
            o1, r1, te1, tr1, _ = nxt.step(a)
            o2, r2, te2, tr2, info = same.step(a)
            assert (r1[0], te1[0], tr1[0]) == (r2[0], te2[0], tr2[0])
            if te1[0] or tr1[0]:
                assert np.array_equal(info["final_obs"][0], o1[0])
                o1, *_ = nxt.step(a)                # NEXT_STEP's reset step
            assert np.array_equal(o1, o2)
    finally:
        nxt.close()
        same.close()


def test_mode_and_difficulty():
    env = cypool.make_vec("Breakout-v5", 1, mode=4, difficulty=1)
    env.close()
    env = cypool.make_vec("Breakout-v5", 1, mode=-1, difficulty=None)   # EnvPool's default
    env.close()


def test_zero_discount_on_life_loss_is_accepted():
    # EnvPool's option only changes dm_env's discount, which gymnasium's API has not.
    run_against_envpool_ref("Breakout", 1, 50, seed=0, zero_discount_on_life_loss=True)
