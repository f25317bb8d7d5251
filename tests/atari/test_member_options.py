"""Per-env ("per-member") Atari options: one pool holding differently configured envs.

The oracle is cypool itself with one configuration per pool (make_vec(game, n, **opts)),
which test_atari_exactness.py and test_atari_options.py hold bit-exact against gymnasium /
ale-py and EnvPool's semantics: env i of a mixed pool, seeded like env j of a single-config
pool with the same options and fed the same actions, must give exactly the same
observations, rewards, flags and info (np.array_equal, no tolerance).
"""
import numpy as np
import pytest

import cypool
from cypool.atari.family import (AtariFamily, DEFAULTS, MAX_EPISODE_STEPS, PER_ENV_OPTIONS,
                                 SHAPE_OPTIONS)
from cypool.vector import VectorEnv

INFO_KEYS = ("lives", "raw_reward", "game_over", "elapsed_step")


def mixed_pool(game, n, member_kwargs=None, *, num_threads=2, **kwargs):
    fam = AtariFamily(f"{game}-v5", n, num_threads, None, kwargs, member_kwargs=member_kwargs)
    return VectorEnv(fam, env_id=f"{game}-v5", autoreset_mode="next_step")


def check_rows(where, got, ref, rows, ref_rows=slice(None)):
    """got: a mixed pool's (obs, reward, term, trunc, info) or (obs, info); ref: the same
    from a single-config pool whose env ref_rows[j] (default: j) is the mixed pool's env
    rows[j]."""
    for k, (g, r) in enumerate(zip(got[:-1], ref[:-1])):
        assert np.array_equal(g[rows], r[ref_rows]), f"{where}: output {k} envs {rows}"
    gi, ri = got[-1], ref[-1]
    for key in INFO_KEYS:
        for name in (key, "_" + key):
            assert (name in gi) == (name in ri), f"{where}: info {name}"
            if name in ri:
                assert np.array_equal(gi[name][rows], ri[name][ref_rows]), \
                    f"{where}: info {name} {rows}"


def run_against(mixed, groups, seed, steps, actions_seed=0):
    """Step the mixed pool and each (reference pool, rows) group with the same actions, env
    rows[j] of the mixed pool seeded like env j of its reference; return the mixed pool's
    per-env counts of terminations and truncations."""
    n = mixed.num_envs
    got = mixed.reset(seed=seed)
    for ref, rows in groups:
        check_rows("reset", got, ref.reset(seed=[seed + i for i in rows]), rows)
    rng = np.random.default_rng(actions_seed)
    terms, truncs = np.zeros(n, int), np.zeros(n, int)
    for t in range(steps):
        a = rng.integers(0, mixed.single_action_space.n, n)
        got = mixed.step(a)
        for ref, rows in groups:
            check_rows(f"step {t}", got, ref.step(a[rows]), rows)
        terms += got[2]
        truncs += got[3]
    return terms, truncs


def close_all(*envs):
    for e in envs:
        e.close()


def test_member_frame_skip():
    """Envs 0-1 with frame_skip=4 (the pool's), envs 2-3 with 2: each pair is exactly a
    single-config pool of its own (episodic life, so that episodes end and autoreset)."""
    mixed = mixed_pool("Breakout", 4, [{}, {}, {"frame_skip": 2}, {"frame_skip": 2}],
                       episodic_life=True)
    fs4 = cypool.make_vec("Breakout-v5", 2, num_threads=1, episodic_life=True)
    fs2 = cypool.make_vec("Breakout-v5", 2, num_threads=1, episodic_life=True, frame_skip=2)
    try:
        assert [mixed.pool.family.engine.env_options(i)["frame_skip"] for i in range(4)] == \
            [4, 4, 2, 2]
        terms, _ = run_against(mixed, [(fs4, [0, 1]), (fs2, [2, 3])], seed=5, steps=150)
        assert terms[:2].sum() > 0 and terms[2:].sum() > 0   # episodes ended, were reset
    finally:
        close_all(mixed, fs4, fs2)


MIXED = [
    dict(),
    dict(noop_max=5, reward_clip=True, use_fire_reset=False),
    dict(repeat_action_probability=0.25, episodic_life=True, zero_discount_on_life_loss=True),
    dict(episodic_life=True, mode=4, difficulty=1, noop_max=0),
]
LIMITS = [None, 40, None, 60]


def test_member_mixed_options():
    """Four envs, four configurations (no-ops, FIRE reset, reward clipping, sticky actions,
    episodic life, mode, difficulty, time limit): each env is exactly a one-env pool built
    with its options."""
    mixed = mixed_pool("Breakout", 4, MIXED)
    fam = mixed.pool.family
    for i, lim in enumerate(LIMITS):
        if lim is not None:
            fam.set_max_episode_steps(np.array([i], np.int64), lim)
    refs = [cypool.make_vec("Breakout-v5", 1, num_threads=1,
                            max_episode_steps=lim or MAX_EPISODE_STEPS, **kw)
            for kw, lim in zip(MIXED, LIMITS)]
    try:
        for i, (kw, lim) in enumerate(zip(MIXED, LIMITS)):
            assert mixed.pool.env_kw[i] == fam.merged_kwargs(kw)   # the pool's record
            assert mixed.pool.limits()[i] == (lim or MAX_EPISODE_STEPS)
            assert mixed.get_attr("frame_skip")[i] == fam.merged_kwargs(kw)["frame_skip"]
        terms, truncs = run_against(mixed, [(r, [i]) for i, r in enumerate(refs)],
                                    seed=11, steps=200)
        assert truncs[1] > 0 and truncs[3] > 0 and truncs[0] == truncs[2] == 0
        assert terms[2] > 0                       # life losses end episodes there
    finally:
        close_all(mixed, *refs)


def test_member_pong_reward_clip_and_frame_skip():
    """Pong, where rewards are +-1 points: frame_skip and reward_clip per env."""
    members = [{"frame_skip": 3}, {"reward_clip": True}, {}]
    mixed = mixed_pool("Pong", 3, members, num_threads=1)
    refs = [cypool.make_vec("Pong-v5", 1, num_threads=1, **kw) for kw in members]
    try:
        run_against(mixed, [(r, [i]) for i, r in enumerate(refs)], seed=2, steps=120)
    finally:
        close_all(mixed, *refs)


RUNTIME = dict(frame_skip=2, noop_max=7, repeat_action_probability=0.25, mode=4, difficulty=1,
               episodic_life=True, reward_clip=True)


def test_configure_subset_leaves_others_and_applies():
    """configure_envs on envs 2-3 mid-episode: envs 0-1 stay bit-identical to an untouched
    pool; envs 2-3 change (frame_skip from their next step), and after a seeded reset they
    are exactly a pool built with the new options and seeded the same."""
    n = 4
    touched = mixed_pool("Breakout", n)
    plain = cypool.make_vec("Breakout-v5", n, num_threads=1)
    built = cypool.make_vec("Breakout-v5", 2, num_threads=1, max_episode_steps=30, **RUNTIME)
    fam = touched.pool.family
    rng = np.random.default_rng(3)
    try:
        check_rows("reset", touched.reset(seed=20), plain.reset(seed=20), list(range(n)))
        for t in range(20):
            a = rng.integers(0, 4, n)
            check_rows(f"step {t}", touched.step(a), plain.step(a), list(range(n)))
        ids = np.array([2, 3], np.int64)
        fam.configure_envs(ids, fam.merged_kwargs(RUNTIME))
        fam.set_max_episode_steps(ids, 30)
        for i in range(n):
            opts = fam.engine.env_options(i)
            if i < 2:
                assert opts == fam.engine.env_options(0) and opts["frame_skip"] == 4
            else:
                assert opts == {**RUNTIME, "use_fire_reset": True, "max_episode_steps": 30}
        differs = False
        for t in range(30):
            a = rng.integers(0, 4, n)
            got, ref = touched.step(a), plain.step(a)
            check_rows(f"after configure, step {t}", got, ref, [0, 1], [0, 1])
            differs |= not np.array_equal(got[0][2:], ref[0][2:])
        assert differs
        # seeded reset of envs 2-3 only: the new settings in full (ROM reloaded)
        mask = np.array([False, False, True, True])
        got = touched.reset(seed=[None, None, 50, 51], options={"reset_mask": mask})
        check_rows("seeded reset", got, built.reset(seed=50), [2, 3])
        truncs = 0
        for t in range(60):
            a = rng.integers(0, 4, n)
            got = touched.step(a)
            check_rows(f"reconfigured, step {t}", got, built.step(a[2:]), [2, 3])
            check_rows(f"untouched, step {t}", got, plain.step(a), [0, 1], [0, 1])
            truncs += got[3][2:].sum()
        assert truncs > 0                         # the new time limit (30) was reached
    finally:
        close_all(touched, plain, built)


def test_ale_settings_apply_at_next_reset():
    """repeat_action_probability=1 drops every action: once an unseeded reset has reloaded
    the ROM, env 0's frames no longer depend on the actions, while env 1 (unchanged) and env
    0 before that reset still do."""
    pools = [mixed_pool("Breakout", 2, num_threads=1) for _ in range(2)]
    try:
        for p in pools:
            p.reset(seed=7)
            p.pool.family.configure_envs(np.array([0], np.int64),
                                         p.pool.family.merged_kwargs(
                                             {"repeat_action_probability": 1.0}))
        # the episode in progress still plays the actions it is given
        a = [np.array([1, 1]), np.array([3, 3])]
        obs = [p.step(x)[0] for p, x in zip(pools, a)]
        for _ in range(10):
            obs = [p.step(x)[0] for p, x in zip(pools, [np.array([2, 2]), np.array([3, 3])])]
        assert not np.array_equal(obs[0][0], obs[1][0])
        obs = [p.reset()[0] for p in pools]
        assert np.array_equal(obs[0][0], obs[1][0])
        rng = np.random.default_rng(0)
        for t in range(40):
            x0, x1 = rng.integers(0, 4, 2), rng.integers(0, 4, 2)
            x0[1], x1[1] = 3, 2
            o0, o1 = pools[0].step(x0)[0], pools[1].step(x1)[0]
            assert np.array_equal(o0[0], o1[0]), f"step {t}"
        assert not np.array_equal(o0[1], o1[1])
    finally:
        close_all(*pools)


@pytest.mark.parametrize("kwargs,exc", [
    (dict(frame_skip=0), ValueError),
    (dict(frame_skip=2.0), TypeError),
    (dict(noop_max=-1), ValueError),
    (dict(episodic_life=1), TypeError),
    (dict(repeat_action_probability=1.5), ValueError),
    (dict(mode=3), ValueError),                       # not one of Breakout's modes
    (dict(frame_skip=2, difficulty=7), ValueError),   # a good value with a bad one
    (dict(frame_skip=2, framskip=3), TypeError),
    (dict(max_episode_steps=100), TypeError),
])
def test_bad_values_raise_before_any_change(kwargs, exc):
    env = mixed_pool("Breakout", 3, num_threads=1)
    fam = env.pool.family
    try:
        opts = [fam.engine.env_options(i) for i in range(3)]
        with pytest.raises(exc):
            fam.configure_envs(np.array([0, 2], np.int64), kwargs)
        assert [fam.engine.env_options(i) for i in range(3)] == opts
        assert env.pool.env_kw == [fam.kwargs] * 3       # nor the pool's record
    finally:
        env.close()


def test_bad_ids_and_limits():
    env = mixed_pool("Breakout", 3, num_threads=1)
    fam = env.pool.family
    try:
        for ids, exc in [(np.array([0, 3]), ValueError), (np.array([-1]), ValueError),
                         (np.array([0.0]), TypeError), (np.zeros((1, 1), np.int64), TypeError)]:
            with pytest.raises(exc):
                fam.configure_envs(ids, {"frame_skip": 2})
            with pytest.raises(exc):
                fam.set_max_episode_steps(ids, 5)
        for limit, exc in [(0, ValueError), (-5, ValueError), (1.5, TypeError),
                           (True, TypeError)]:
            with pytest.raises(exc):
                fam.set_max_episode_steps(np.array([1], np.int64), limit)
        assert fam.engine.max_episode_steps_of().tolist() == [MAX_EPISODE_STEPS] * 3
        fam.set_max_episode_steps(np.array([1], np.int64), 9)
        assert fam.engine.max_episode_steps_of().tolist() == [27000, 9, 27000]
        fam.set_max_episode_steps(np.array([1], np.int64), None)
        assert fam.engine.max_episode_steps_of().tolist() == [MAX_EPISODE_STEPS] * 3
    finally:
        env.close()


SHAPE_CHANGES = dict(stack_num=2, img_height=64, img_width=64, gray_scale=False,
                     full_action_space=True, use_inter_area_resize=False, ram_info=True,
                     info_keys="envpool", screen_rows=200)


def test_option_lists():
    """Every option is either per env or pool-wide; the test below covers each pool-wide one."""
    assert set(SHAPE_CHANGES) == set(SHAPE_OPTIONS)
    assert set(PER_ENV_OPTIONS) | set(SHAPE_OPTIONS) == set(DEFAULTS)
    assert not set(PER_ENV_OPTIONS) & set(SHAPE_OPTIONS)


@pytest.mark.parametrize("name", sorted(SHAPE_CHANGES))
def test_shape_options_refused(name):
    kw = {name: SHAPE_CHANGES[name]}
    with pytest.raises(ValueError, match=name):
        AtariFamily("Breakout-v5", 2, 1, None, {}, member_kwargs=[{}, kw])
    env = mixed_pool("Breakout", 2, num_threads=1)
    fam = env.pool.family
    try:
        before = fam.engine.env_options(1)
        with pytest.raises(ValueError, match=name):
            fam.configure_envs(np.array([1], np.int64), {"frame_skip": 2, **kw})
        assert fam.engine.env_options(1) == before
        # the pool's own value, repeated, is fine
        fam.configure_envs(np.array([1], np.int64), {name: fam.kwargs[name]})
    finally:
        env.close()


def test_member_kwargs_checked():
    with pytest.raises(ValueError, match="one dict per env"):
        AtariFamily("Breakout-v5", 2, 1, None, {}, member_kwargs=[{}])
    with pytest.raises(TypeError):
        AtariFamily("Breakout-v5", 2, 1, None, {}, member_kwargs=[{}, None])
    with pytest.raises(ValueError, match="mode"):
        AtariFamily("Breakout-v5", 2, 1, None, {}, member_kwargs=[{}, {"mode": 3}])
    with pytest.raises(TypeError, match="set_max_episode_steps"):
        AtariFamily("Breakout-v5", 2, 1, None, {},
                    member_kwargs=[{}, {"max_episode_steps": 10}])
    # a member override of the pool's kwargs, back to the default
    fam = AtariFamily("Breakout-v5", 2, 1, None, {"frame_skip": 3},
                      member_kwargs=[{}, {"frame_skip": 4}])
    assert [fam.engine.env_options(i)["frame_skip"] for i in range(2)] == [3, 4]


def test_unseeded_reload_keeps_the_sticky_stream():
    """A sticky-probability change applied by an unseeded reset keeps ALE's generator where
    it was (it is not reseeded from the env's last seed): three pools switch env 0 to
    p=0.5 after 10, 10 and 11 steps of the same game; after the reset the first two
    (same history) play the same game, the third (4 more frames drawn) another."""
    pools = [mixed_pool("Breakout", 1, num_threads=1) for _ in range(3)]
    try:
        for p, played in zip(pools, (10, 10, 11)):
            p.reset(seed=4)
            for _ in range(played):
                p.step(np.array([0]))
            p.pool.family.configure_envs(np.array([0], np.int64),
                                         p.pool.family.merged_kwargs(
                                             {"repeat_action_probability": 0.5}))
            p.reset()
        obs = [None] * 3
        rng = np.random.default_rng(1)
        same = True
        for t in range(60):
            a = rng.integers(0, 4, 1)
            obs = [p.step(a)[0] for p in pools]
            assert np.array_equal(obs[0], obs[1]), f"step {t}"
            same &= np.array_equal(obs[0], obs[2])
        assert not same
    finally:
        close_all(*pools)
