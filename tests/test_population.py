"""cypool.population: (P, E) layout and zero-copy views (read-only, the episode ring too), the
seed tree, per-member task kwargs (checked bit for bit against gymnasium's own envs built with
each member's kwargs), member resets, and the per-env statistics against a Python reference."""
import numpy as np
import pytest
import gymnasium as gym
from gymnasium.vector import AutoresetMode

import cypool
from cypool.population import make_population

TASK = "Hopper-v5"
OBS, ACT = 11, 3


def tree_env(task, root, k, j, **kwargs):
    """gymnasium's env with the stream cypool's tree gives env (k, j) of a population."""
    env = gym.make(task, **kwargs)
    env.unwrapped._np_random = np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(root, spawn_key=(k, j))))
    return env


def actions(rng, P, E, dtype=np.float64):
    return rng.uniform(-1, 1, (P, E, ACT)).astype(dtype)


# ---------------------------------------------------------------------- layout
def test_shapes_and_zero_copy_views():
    P, E = 3, 4
    pop = make_population(TASK, P, E, seed=0, num_threads=2)
    e = pop.vec.pool.engine
    assert pop.num_envs == P * E and pop.vec.num_envs == P * E
    assert pop.observation_space.shape == (P, E, OBS)
    assert pop.action_space.shape == (P, E, ACT)
    assert pop.member_observation_space.shape == (E, OBS)
    obs, info = pop.reset()
    assert obs.shape == (P, E, OBS) and obs.base is not None
    assert np.shares_memory(obs, e.obs)
    assert info["x_position"].shape == (P, E)
    rng = np.random.default_rng(0)
    a = actions(rng, P, E)
    obs, rew, term, trunc, info = pop.step(a)
    for got, buf in [(obs, e.obs), (rew, e.reward), (term, e.terminated),
                     (trunc, e.truncated)]:
        assert got.shape[:2] == (P, E)
        assert np.shares_memory(got, buf)
    assert info["reward_ctrl"].shape == (P, E) and info["_reward_ctrl"].shape == (P, E)
    # member-major: row k·E + j of the flat pool is env (k, j)
    assert np.array_equal(obs.reshape(P * E, OBS), e.obs)
    assert np.array_equal(obs[1, 2], e.obs[1 * E + 2])
    assert np.array_equal(info["reward_ctrl"][2], -1e-3 * np.sum(a[2] ** 2, axis=1))
    # copy=True hands out fresh arrays
    twin = make_population(TASK, P, E, seed=0, copy=True)
    o2, _ = twin.reset()
    assert o2.shape == (P, E, OBS) and not np.shares_memory(o2, twin.vec.pool.engine.obs)
    twin.close()
    stats = pop.episode_statistics()
    assert stats["env_steps"].shape == (P, E)
    assert np.shares_memory(stats["last_return"], e.last_return)
    pop.close()


def test_population_views_are_read_only():
    pop = cypool.make_population("Hopper-v5", 2, 2)
    try:
        obs, _ = pop.reset(seed=0)
        with pytest.raises(ValueError, match="read-only"):
            obs[0, 0, 0] = 1.0
        out = pop.step(np.zeros((2, 2, 3)))
        with pytest.raises(ValueError, match="read-only"):
            out[1][...] = 0
    finally:
        pop.close()
    pop = cypool.make_population("Hopper-v5", 2, 2, member_batch=1)
    try:
        pop.async_reset(seed=0)
        obs, *_ = pop.recv()
        with pytest.raises(ValueError, match="read-only"):
            obs[...] = 0
    finally:
        pop.close()


def test_flat_and_pe_actions_step_alike():
    P, E = 2, 3
    a = actions(np.random.default_rng(1), P, E)
    out = []
    for acts in (a, a.reshape(P * E, ACT)):
        pop = make_population(TASK, P, E, seed=5, copy=True)
        pop.reset()
        out.append(pop.step(acts)[:2])
        pop.close()
    assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])
    pop = make_population(TASK, P, E, seed=5)
    pop.reset()
    with pytest.raises(ValueError, match="actions must have shape"):
        pop.step(np.zeros((P, E + 1, ACT)))
    pop.close()


def test_parity_mode_equals_gymnasium_sync():
    P, E, limit = 2, 3, 12
    ref = gym.make_vec(TASK, P * E, vectorization_mode="sync", max_episode_steps=limit)
    pop = make_population(TASK, P, E, seed_mode="parity", max_episode_steps=limit)
    o_ref, _ = ref.reset(seed=7)
    o, _ = pop.reset(seed=7)
    assert np.array_equal(o.reshape(P * E, OBS), o_ref)
    rng = np.random.default_rng(3)
    ends = 0
    for _ in range(30):
        a = actions(rng, P, E)
        want = ref.step(a.reshape(P * E, ACT))
        got = pop.step(a)
        for x, y in zip(got[:4], want[:4]):
            assert np.array_equal(x.reshape(y.shape), y)
        ends += int((want[2] | want[3]).sum())
    assert ends >= P * E          # autoresets happened
    ref.close()
    pop.close()


# ---------------------------------------------------------------------- seed tree
def test_tree_streams_are_seedsequence_spawn_keys():
    P, E, root = 2, 2, 11
    assert np.random.SeedSequence(root).spawn(P)[1].spawn(E)[0].spawn_key == (1, 0)
    pop = make_population(TASK, P, E, seed=root)
    obs, _ = pop.reset()
    for k in range(P):
        for j in range(E):
            ref = tree_env(TASK, root, k, j)
            o_ref, _ = ref.reset()
            assert np.array_equal(obs[k, j], o_ref)
            ref.close()
    assert not np.array_equal(obs[0, 0], obs[0, 1])
    assert not np.array_equal(obs[0, 0], obs[1, 0])
    pop.close()


def member_run(P, k, member_kwargs, root=21, steps=25):
    """Observations and rewards of member k over a short run (other members get other
    actions)."""
    E = 3
    pop = make_population(TASK, P, E, member_kwargs=member_kwargs, seed=root,
                          max_episode_steps=10)
    obs, _ = pop.reset()
    out = [obs[k].copy()]
    rng_k = np.random.default_rng(100)
    rng_other = np.random.default_rng(P)
    for _ in range(steps):
        a = actions(rng_other, P, E)
        a[k] = rng_k.uniform(-1, 1, (E, ACT))
        obs, rew, term, trunc, _ = pop.step(a)
        out += [obs[k].copy(), rew[k].copy(), term[k].copy(), trunc[k].copy()]
    pop.close()
    return out


def test_member_streams_do_not_depend_on_population_size_or_other_kwargs():
    mine = {"reset_noise_scale": 0.05}
    small = member_run(2, 1, [{}, mine])
    large = member_run(5, 1, [{"ctrl_cost_weight": 0.5}, mine, {"frame_skip": 2},
                              {"reset_noise_scale": 0.2}, {"healthy_reward": 3.0}])
    assert len(small) == len(large)
    for x, y in zip(small, large):
        assert np.array_equal(x, y)
    # and member 1's settings matter: without them its run differs
    plain = member_run(2, 1, [{}, {}])
    assert not np.array_equal(small[0], plain[0])


def test_seed_forms_and_member_reseeding():
    P, E = 3, 2
    pop = make_population(TASK, P, E)
    # per-member roots: env (k, j) <- SeedSequence(seed[k], spawn_key=(j,))
    obs, _ = pop.reset(seed=[4, 4, 9])
    assert np.array_equal(obs[0], obs[1]) and not np.array_equal(obs[0], obs[2])
    want = gym.make(TASK)
    want.unwrapped._np_random = np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(9, spawn_key=(1,))))
    assert np.array_equal(obs[2, 1], want.reset()[0])
    same = make_population(TASK, P, E, seed=[4, 4, 9])      # the same, as the default seed
    assert np.array_equal(same.reset()[0], obs)
    same.close()
    # per-env seeds: SeedSequence(seed[k][j]), gymnasium's reset(seed=s)
    seeds = np.arange(P * E).reshape(P, E) + 50
    obs, _ = pop.reset(seed=seeds)
    assert np.array_equal(obs[2, 0], gym.make(TASK).reset(seed=54)[0])
    # reset_member(k, seed=root) gives member k what a full reset(seed=root) gives it
    full, _ = pop.reset(seed=3)
    full = full.copy()
    pop.step(np.zeros((P, E, ACT)))
    before = pop.step(np.zeros((P, E, ACT)))[0].copy()
    stats = pop.episode_statistics(copy=True)
    obs, info = pop.reset_member(1, seed=3)
    assert np.array_equal(obs[1], full[1])
    assert np.array_equal(obs[0], before[0]) and np.array_equal(obs[2], before[2])
    assert np.array_equal(info["_x_position"], np.repeat([False, True, False], E).reshape(P, E))
    after = pop.episode_statistics(copy=True)
    for key in ("length", "return", "env_steps"):
        assert np.array_equal(after[key][[0, 2]], stats[key][[0, 2]])
    assert (after["length"][1] == 0).all()
    # a member reset without a seed continues that member's streams
    o1, _ = pop.reset_member(1)
    assert not np.array_equal(o1[1], full[1])
    with pytest.raises(ValueError):
        pop.reset(seed=[1, 2])
    with pytest.raises(ValueError):
        pop.reset_member(P)
    pop.close()


def test_first_reset_must_cover_every_member():
    pop = make_population(TASK, 2, 2)
    with pytest.raises(ValueError, match="first reset"):
        pop.reset(members=[0])
    pop.close()


# ---------------------------------------------------------------------- per-member kwargs
MEMBERS = [
    {"ctrl_cost_weight": 0.5, "forward_reward_weight": 2.0},
    {},
    {"healthy_reward": 3.0, "frame_skip": 2, "reset_noise_scale": 0.05},
]


def test_member_kwargs_match_gymnasium_envs_built_with_them():
    P, E, root, steps = 3, 2, 8, 40
    pop = make_population(TASK, P, E, member_kwargs=MEMBERS, seed=root,
                          autoreset_mode=AutoresetMode.DISABLED)
    refs = [[tree_env(TASK, root, k, j, **MEMBERS[k]) for j in range(E)] for k in range(P)]
    obs, info = pop.reset()
    for k in range(P):
        for j in range(E):
            assert np.array_equal(obs[k, j], refs[k][j].reset()[0])
    # info carries each member's kwargs, per env
    assert np.array_equal(info["ctrl_cost_weight"], np.repeat([[0.5], [1e-3], [1e-3]], E, 1))
    assert np.array_equal(info["frame_skip"], np.repeat([[4], [4], [2]], E, 1))
    assert "healthy_z_range" not in info      # no member overrides it
    rng = np.random.default_rng(0)
    alive = np.ones((P, E), np.bool_)
    ended = 0
    for t in range(steps):
        if t == 8:     # run-time change: member 0's weight, member 2's frame skip
            pop.set_member_kwargs(0, ctrl_cost_weight=0.25)
            pop.set_member_kwargs(2, frame_skip=3)
            for j in range(E):
                refs[0][j].unwrapped._ctrl_cost_weight = 0.25
                refs[2][j].unwrapped.frame_skip = 3
        a = actions(rng, P, E, np.float32 if t % 2 else np.float64)
        mask = np.where(alive, 1.0, 0.0)[..., None].astype(a.dtype)
        if not alive.all():
            pop.reset(options={"reset_mask": ~alive})    # DISABLED: restart ended envs
            for k, j in zip(*np.nonzero(~alive)):
                refs[k][j].reset()
            alive[:] = True
        obs, rew, term, trunc, info = pop.step(a * mask)
        for k in range(P):
            for j in range(E):
                o, r, te, tr, inf = refs[k][j].step(a[k, j] * mask[k, j])
                assert np.array_equal(obs[k, j], o), (t, k, j)
                assert rew[k, j] == r and term[k, j] == te
                assert info["reward_ctrl"][k, j] == inf["reward_ctrl"]
                assert info["reward_survive"][k, j] == inf["reward_survive"]
                if te:
                    alive[k, j] = False
                    ended += 1
    assert ended >= 2                          # terminations and member restarts happened
    assert np.array_equal(info["ctrl_cost_weight"][:, 0], [0.25, 1e-3, 1e-3])
    assert np.array_equal(info["frame_skip"][:, 0], [4, 4, 3])
    assert pop.member_kwargs(2)["frame_skip"] == 3 and pop.member_kwargs(1)["frame_skip"] == 4
    pop.close()


def test_reward_terms_follow_each_members_weights():
    ws = [0.0, 1e-3, 0.1, 2.0]
    P, E = len(ws), 3
    pop = make_population(TASK, P, E, member_kwargs=[{"ctrl_cost_weight": w} for w in ws],
                          seed=1)
    pop.reset()
    a = actions(np.random.default_rng(2), P, E)
    _, rew, _, _, info = pop.step(a)
    for k, w in enumerate(ws):
        assert np.array_equal(info["reward_ctrl"][k], -(w * np.sum(np.square(a[k]), axis=1)))
    assert np.array_equal(rew, info["reward_forward"] + info["reward_survive"]
                          + info["reward_ctrl"])
    pop.close()


def test_copy_member_and_refused_kwargs():
    pop = make_population(TASK, 3, 2, member_kwargs=[{"ctrl_cost_weight": 0.7}, {}, {}],
                          seed=0)
    pop.reset()
    pop.copy_member(0, 2)
    assert pop.member_kwargs(2)["ctrl_cost_weight"] == 0.7
    _, _, _, _, info = pop.step(np.ones((3, 2, ACT)) * 0.5)
    assert np.array_equal(info["reward_ctrl"][:, 0], [-0.7 * 0.75, -1e-3 * 0.75, -0.7 * 0.75])
    params = pop.vec.pool.engine.params.copy()
    with pytest.raises(ValueError, match="observation size"):
        pop.set_member_kwargs(1, exclude_current_positions_from_observation=False)
    with pytest.raises(ValueError, match="xml_file"):
        pop.set_member_kwargs(1, xml_file="walker2d.xml")
    with pytest.raises(TypeError, match="unexpected keyword"):
        pop.set_member_kwargs(1, ctrl_cost=1.0)
    assert np.array_equal(pop.vec.pool.engine.params, params)     # nothing half-applied
    pop.close()
    with pytest.raises(ValueError, match="observation size"):
        make_population(TASK, 2, 1, member_kwargs=[
            {}, {"exclude_current_positions_from_observation": False}])
    with pytest.raises(ValueError, match="population_size=2"):
        make_population(TASK, 2, 1, member_kwargs=[{}])
    with pytest.raises(ValueError):
        make_population(TASK, 0, 1)


@pytest.mark.parametrize("mk", [[{1: 2}, {}], [{"ctrl_cost_weight": 0.1}, {(1,): 2}]])
def test_member_kwargs_keys_must_be_names(mk):
    with pytest.raises(TypeError, match=r"member_kwargs\[\d\] must map kwarg names"):
        cypool.make_population("Hopper-v5", 2, 1, member_kwargs=mk)


# ---------------------------------------------------------------------- statistics
def test_statistics_equal_a_python_reference():
    P, E, limit = 3, 4, 15
    pop = make_population(TASK, P, E, member_kwargs=MEMBERS, seed=3, max_episode_steps=limit)
    stats = pop.episode_statistics()             # views, read once, updated in place
    pop.reset()
    ret = np.zeros((P, E))
    length = np.zeros((P, E), np.int64)
    last_ret = np.zeros((P, E))
    last_len = np.zeros((P, E), np.int64)
    episodes = np.zeros((P, E), np.int64)
    steps = np.zeros((P, E), np.int64)
    done = np.zeros((P, E), np.bool_)
    rng = np.random.default_rng(4)
    for t in range(60):
        _, rew, term, trunc, _ = pop.step(actions(rng, P, E))
        # NEXT_STEP: an env that ended resets on this call (reward 0, no step counted)
        ret = np.where(done, 0.0, ret + rew)
        length = np.where(done, 0, length + 1)
        steps += ~done
        done = term | trunc
        episodes += done
        last_ret = np.where(done, ret, last_ret)
        last_len = np.where(done, length, last_len)
        for key, want in [("return", ret), ("length", length), ("last_return", last_ret),
                          ("last_length", last_len), ("episodes", episodes),
                          ("env_steps", steps)]:
            assert np.array_equal(stats[key], want), (t, key)
    assert episodes.min() >= 2
    ms = pop.member_statistics()
    assert np.array_equal(ms["episodes"], episodes.sum(1))
    assert np.array_equal(ms["env_steps"], steps.sum(1))
    assert np.allclose(ms["mean_last_return"], last_ret.mean(1), rtol=0, atol=1e-12)
    assert np.array_equal(ms["mean_last_length"], last_len.mean(1))
    # reset_member clears member 1's finished-episode stats only, keeps its env_steps
    pop.reset_member(1)
    assert (stats["episodes"][1] == 0).all() and (stats["last_return"][1] == 0).all()
    assert np.array_equal(stats["episodes"][[0, 2]], episodes[[0, 2]])
    assert np.array_equal(stats["env_steps"], steps)
    assert np.isnan(pop.member_statistics()["mean_last_return"][1])
    pop.close()


def test_same_step_final_obs_reshaped():
    P, E = 2, 2
    pop = make_population(TASK, P, E, seed=0, max_episode_steps=3,
                          autoreset_mode="same_step")
    pop.reset()
    for _ in range(3):
        obs, rew, term, trunc, info = pop.step(np.zeros((P, E, ACT)))
    assert trunc.all()
    assert info["final_obs"].shape == (P, E) and info["final_obs"][1, 0].shape == (OBS,)
    assert info["final_info"]["x_position"].shape == (P, E)
    pop.close()


@pytest.mark.filterwarnings("ignore:cypool. num_threads=4 exceeds:RuntimeWarning")
def test_results_do_not_depend_on_num_threads():
    P, E = 3, 4
    runs = []
    for threads in (1, 2, 4):
        pop = make_population(TASK, P, E, member_kwargs=MEMBERS, seed=6, num_threads=threads,
                              max_episode_steps=8, copy=True)
        out = [pop.reset()[0]]
        rng = np.random.default_rng(9)
        for _ in range(20):
            out += list(pop.step(actions(rng, P, E))[:4])
        out += list(pop.episode_statistics(copy=True).values())
        runs.append(out)
        pop.close()
    for other in runs[1:]:
        assert all(np.array_equal(x, y) for x, y in zip(runs[0], other))


# ---------------------------------------------------------------------- per-member time limits
def test_member_max_episode_steps():
    P, E = 3, 2
    pop = make_population(TASK, P, E, seed=0, max_episode_steps=12,
                          member_kwargs=[{"max_episode_steps": 5}, {}, {"max_episode_steps": 9}],
                          num_threads=2)
    obs, info = pop.reset()
    assert np.array_equal(info["max_episode_steps"], np.repeat([[5], [12], [9]], E, 1))
    zero = np.zeros((P, E, ACT))
    first_trunc = np.full((P, E), -1)
    for t in range(1, 13):
        _, _, term, trunc, _ = pop.step(zero)
        assert not term.any()          # standing still: Hopper stays healthy this long
        first_trunc = np.where((first_trunc < 0) & trunc, t, first_trunc)
    assert np.array_equal(first_trunc, np.repeat([[5], [12], [9]], E, 1))
    pop.set_member_kwargs(1, max_episode_steps=3)
    assert pop.member_kwargs(1)["max_episode_steps"] == 3
    pop.reset()
    for t in range(3):
        _, _, _, trunc, info = pop.step(zero)
    assert trunc[1].all() and not trunc[[0, 2]].any()
    assert np.array_equal(info["max_episode_steps"][:, 0], [5, 3, 9])
    with pytest.raises(ValueError, match="max_episode_steps"):
        pop.set_member_kwargs(0, max_episode_steps=0)
    assert pop.member_kwargs(0)["max_episode_steps"] == 5       # nothing half-applied
    pop.close()
    with pytest.raises(TypeError, match="max_episode_steps"):      # a wrong type
        make_population(TASK, 2, 1, member_kwargs=[{"max_episode_steps": 2.5}, {}])


# ---------------------------------------------------------------------- ring of recent episodes
def test_episode_ring_equals_a_python_reference():
    P, E, K = 3, 4, 3
    pop = make_population(TASK, P, E, seed=5, num_threads=1, episode_window=K,
                          member_kwargs=[{"max_episode_steps": 4}, {"max_episode_steps": 7},
                                         {"max_episode_steps": 30}])
    pop.reset()
    finished = [[] for _ in range(P)]      # (return, length) in the order the kernel ends them
    ret = np.zeros((P, E))
    length = np.zeros((P, E), np.int64)
    done = np.zeros((P, E), np.bool_)
    rng = np.random.default_rng(6)
    for t in range(40):
        _, rew, term, trunc, _ = pop.step(actions(rng, P, E))
        ret = np.where(done, 0.0, ret + rew)
        length = np.where(done, 0, length + 1)
        done = term | trunc
        for k in range(P):
            for j in range(E):       # one thread: envs run in index order
                if done[k, j]:
                    finished[k].append((ret[k, j], length[k, j]))
        rec = pop.recent_episodes()
        for k in range(P):
            last = finished[k][-K:]
            n = len(last)
            assert rec["count"][k] == n
            assert np.array_equal(rec["return"][k, K - n:], [r for r, _ in last])
            assert np.array_equal(rec["length"][k, K - n:], [n_ for _, n_ in last])
            assert np.isnan(rec["return"][k, :K - n]).all()
    assert len(finished[0]) > 2 * K and min(len(f) for f in finished) >= 1   # ring wrapped
    ms = pop.member_statistics()
    for k in range(P):
        last = finished[k][-K:]
        want = np.mean([r for r, _ in last]) if last else np.nan
        assert np.allclose(ms["recent_return"][k], want, rtol=0, atol=1e-12, equal_nan=True)
    ring = pop.episode_ring
    assert np.shares_memory(ring["return"], pop.vec.pool.engine.ring_return)
    assert np.array_equal(ring["episodes"], [len(f) for f in finished])
    pop.reset_member(0)
    assert pop.recent_episodes()["count"][0] == 0
    assert pop.recent_episodes()["count"][1] == min(K, len(finished[1]))
    pop.close()


def test_population_episode_ring_is_read_only():
    pop = cypool.make_population("Hopper-v5", 2, 2, episode_window=4, max_episode_steps=3)
    try:
        pop.reset(seed=0)
        for _ in range(7):
            pop.step(np.zeros((2, 2, 3)))
        before = pop.member_statistics()["recent_return"].copy()
        ring = pop.episode_ring
        for key in ("return", "length", "episodes"):
            with pytest.raises(ValueError, match="read-only"):
                ring[key][...] = 0
        assert np.array_equal(pop.member_statistics()["recent_return"], before)
        pop.reset_member(0)               # the population itself still clears its ring
        assert pop.recent_episodes()["count"][0] == 0
    finally:
        pop.close()


# ---------------------------------------------------------------------- async: whole members
def _policy(obs):
    """Deterministic and elementwise exact, so the same trajectory gives the same actions."""
    return np.clip(obs[..., 2:2 + ACT] * 3.0, -1, 1)


@pytest.mark.parametrize("member_batch,threads", [(1, 2), (2, 2), (2, 1)])
def test_async_members_follow_the_sync_trajectories(member_batch, threads):
    P, E, cycles = 4, 3, 60
    kw = dict(seed=11, max_episode_steps=25,
              member_kwargs=[{}, {"frame_skip": 2}, {"ctrl_cost_weight": 0.3}, {}])
    sync = make_population(TASK, P, E, num_threads=1, **kw)
    obs, _ = sync.reset()
    want = [[obs[k].copy()] for k in range(P)]
    for t in range(cycles):
        obs, rew, term, trunc, _ = sync.step(_policy(obs))
        for k in range(P):
            want[k].append((obs[k].copy(), rew[k].copy(), term[k].copy(), trunc[k].copy()))
    sync.close()
    pop = make_population(TASK, P, E, num_threads=threads, member_batch=member_batch, **kw)
    assert pop.is_async
    pop.async_reset()
    got = [[] for _ in range(P)]
    while min(len(g) for g in got) < cycles + 1:
        obs, rew, term, trunc, info = pop.recv(timeout=30)
        members = info["member_id"]
        assert obs.shape == (member_batch, E, OBS) and rew.shape == (member_batch, E)
        assert info["member_id"].shape == (member_batch,)
        assert info["x_position"].shape == (member_batch, E)
        if member_batch == 1:     # zero-copy: the member's own rows of the pool's buffers
            k = members[0]
            assert np.shares_memory(obs, pop.vec.pool.engine.obs)
            assert np.array_equal(obs[0], pop.vec.pool.engine.obs[k * E:(k + 1) * E])
        for b, k in enumerate(members):
            if len(got[k]) == 0:
                got[k].append(obs[b].copy())
            elif len(got[k]) <= cycles:
                got[k].append((obs[b].copy(), rew[b].copy(), term[b].copy(), trunc[b].copy()))
        pop.send(_policy(obs), members)       # every member keeps going until all are seen
    for k in range(P):
        assert np.array_equal(got[k][0], want[k][0])
        for t in range(1, cycles + 1):
            for x, y in zip(got[k][t], want[k][t]):
                assert np.array_equal(x, y), (k, t)
    pop.close()


def test_async_member_errors_and_state_machine():
    P, E = 3, 2
    pop = make_population(TASK, P, E, seed=0, member_batch=1, num_threads=2)
    with pytest.raises(RuntimeError, match="reset"):
        pop.send(np.zeros((1, E, ACT)), [0])
    pop.async_reset()
    with pytest.raises(ValueError, match="in flight"):
        pop.async_reset()
    obs, *_, info = pop.recv(timeout=10)
    k = int(info["member_id"][0])
    with pytest.raises(ValueError, match="in flight"):      # another member is still pending
        pop.send(np.zeros((1, E, ACT)), [(k + 1) % P])
    with pytest.raises(ValueError, match="in flight"):
        pop.set_member_kwargs((k + 1) % P, ctrl_cost_weight=0.1)
    with pytest.raises(ValueError, match="member must be in"):
        pop.send(np.zeros((1, E, ACT)), [P])
    with pytest.raises(ValueError, match="repeat"):
        pop.send(np.zeros((2, E, ACT)), [k, k])
    with pytest.raises(ValueError, match="member blocks"):
        pop.send(np.zeros((2, E, ACT)), [k])
    with pytest.raises(ValueError, match="shape"):
        pop.send(np.zeros((1, E + 1, ACT)), [k])
    with pytest.raises(ValueError, match="member by member"):     # the flat façade refuses
        pop.vec.send(np.zeros((E, ACT)), np.arange(E))
    pop.set_member_kwargs(k, ctrl_cost_weight=0.1)                # idle member: allowed
    pop.send(np.zeros((1, E, ACT)), [k])                          # default ids work too
    for _ in range(P):
        pop.recv(timeout=10)
    with pytest.raises(ValueError, match="needs 1 member"):       # nothing in flight: no hang
        pop.recv(timeout=1)
    obs, info = pop.reset()                                       # sync reset in async mode
    assert obs.shape == (P, E, OBS)
    pop.step(np.zeros((P, E, ACT)))                               # send every member + recv 1
    pop.close()
    sync = make_population(TASK, P, E, seed=0)
    with pytest.raises(ValueError, match="async population"):
        sync.recv()
    with pytest.raises(ValueError, match="member_batch"):
        make_population(TASK, P, E, member_batch=P + 1)
    sync.close()


# ---------------------------------------------------------------------- evaluation
def test_evaluate_matches_gymnasium_episodes():
    P, E, K, seed, limit = 3, 2, 5, 21, 15
    members = [{"ctrl_cost_weight": 0.5}, {"frame_skip": 2}, {"max_episode_steps": 6}]
    pop = make_population(TASK, P, E, seed=0, member_kwargs=members, max_episode_steps=limit)
    pop.reset()
    scale = np.array([1.0, 2.0, 0.5])[:, None, None]
    policy = lambda obs: np.clip(obs[..., 2:2 + ACT] * scale, -1, 1)  # noqa: E731
    res = pop.evaluate(policy, episodes=K, seed=seed)
    assert res["return"].shape == (P, K) and res["length"].shape == (P, K)
    for k in range(P):
        kw = {n: v for n, v in members[k].items() if n != "max_episode_steps"}
        cap = members[k].get("max_episode_steps", limit)
        for j in range(E):
            env = gym.make(TASK, max_episode_steps=cap, **kw)
            env.unwrapped._np_random = np.random.Generator(
                np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(j,))))
            for ep in range(j, K, E):          # env j plays episodes j, j + E, ...
                obs, _ = env.reset()
                total, n, over = 0.0, 0, False
                while not over:
                    obs, r, te, tr, _ = env.step(np.clip(obs[2:2 + ACT] * scale[k, 0, 0], -1, 1))
                    total += r
                    n += 1
                    over = te or tr
                assert res["return"][k, ep] == total, (k, ep)
                assert res["length"][k, ep] == n
    again = pop.evaluate(policy, episodes=K, seed=seed)       # same seed: same results
    assert np.array_equal(again["return"], res["return"])
    pop.close()


def test_evaluate_leaves_training_alone():
    P, E = 2, 3
    pop = make_population(TASK, P, E, seed=4)
    pop.reset()
    rng = np.random.default_rng(0)
    for _ in range(5):
        pop.step(actions(rng, P, E))
    obs = pop.vec.pool.engine.obs.copy()
    stats = pop.episode_statistics(copy=True)
    res = pop.evaluate(lambda o: np.zeros((P, E, ACT)), episodes=1)
    assert np.array_equal(pop.vec.pool.engine.obs, obs)
    for key, v in pop.episode_statistics(copy=True).items():
        assert np.array_equal(v, stats[key]), key
    assert np.isfinite(res["return"]).all()
    with pytest.raises(ValueError, match="shape"):
        pop.evaluate(lambda o: np.zeros((P, ACT)), episodes=1)
    with pytest.raises(TypeError, match="callable"):
        pop.evaluate(None)
    pop.close()


def test_async_members_stress_no_lost_or_duplicated_member():
    """Random subsets of idle members sent, recv of 1-3 members at a time: every send comes
    back exactly once, none starves, no hang (each recv bounded by a timeout)."""
    rng = np.random.default_rng(0)
    P, E = 6, 2
    for member_batch in (1, 3):
        pop = make_population("InvertedPendulum-v5", P, E, seed=0, num_threads=2,
                              member_batch=member_batch, max_episode_steps=5)
        pop.async_reset()
        sent = np.ones(P, int)
        received = np.zeros(P, int)
        idle = []
        for _ in range(1500):
            *_, info = pop.recv(timeout=10)
            members = info["member_id"]
            assert np.unique(members).size == members.size
            received[members] += 1
            idle += members.tolist()
            rng.shuffle(idle)
            in_flight = P - len(idle)
            k = int(rng.integers(max(1, member_batch - in_flight), len(idle) + 1))
            go, idle = np.array(idle[:k]), idle[k:]
            pop.send(np.zeros((k, E, 1)), go)
            sent[go] += 1
        for _ in range((P - len(idle)) // member_batch):
            *_, info = pop.recv(timeout=10)
            received[info["member_id"]] += 1
        in_flight = sent - received
        assert (in_flight >= 0).all() and (in_flight <= 1).all()
        assert in_flight.sum() < member_batch
        if in_flight.sum():                              # too few for a batch: raise, no hang
            with pytest.raises(ValueError, match="in flight"):
                pop.recv(timeout=10)
        assert received.min() > 100                          # nobody starved
        pop.close()


def test_rejected_population_calls_leave_every_env_untouched():
    P, E = 3, 2
    pop = make_population(TASK, P, E, seed=1, member_batch=1, num_threads=2)
    pop.async_reset()
    for _ in range(P):
        pop.recv(timeout=10)
    e = pop.vec.pool.engine
    before = (e.obs.copy(), e.elapsed(), e.env_steps.copy(), e.params.copy(),
              [e.generator(i).state["state"]["state"] for i in range(P * E)])
    bad = [
        lambda: pop.send(np.full((1, E, ACT), np.nan), [0]),
        lambda: pop.send(np.zeros((1, E, ACT + 1)), [0]),
        lambda: pop.send(np.zeros((1, E, ACT)), [-1]),
        lambda: pop.send(np.zeros((1, E, ACT)), [0.5]),
        lambda: pop.send(np.zeros((2, E, ACT)), [1, 1]),
        lambda: pop.send(np.zeros((1, E, ACT), dtype=complex), [0]),
        lambda: pop.set_member_kwargs(0, frame_skip=0),
        lambda: pop.set_member_kwargs(0, max_episode_steps=-3),
        lambda: pop.set_member_kwargs(0, no_such_kwarg=1.0),
        lambda: pop.evaluate(lambda o: np.zeros((P, E, ACT)), episodes=0),
        lambda: pop.reset_member(P),
        lambda: pop.recv(timeout=1),                    # nothing in flight
    ]
    for call in bad:
        with pytest.raises((ValueError, TypeError)):
            call()
    after = (e.obs, e.elapsed(), e.env_steps, e.params,
             [e.generator(i).state["state"]["state"] for i in range(P * E)])
    for x, y in zip(before, after):
        assert np.array_equal(np.asarray(x), np.asarray(y))
    assert not pop.vec.pool.in_flight.any()
    pop.send(np.zeros((P, E, ACT)), np.arange(P))     # still usable
    for _ in range(P):
        pop.recv(timeout=10)
    pop.close()


def test_async_member_reset_and_partial_reset_refused():
    P, E, root = 3, 2, 17
    ref = make_population(TASK, P, E, seed=root)
    want, _ = ref.reset()
    want = want.copy()
    ref.close()
    pop = make_population(TASK, P, E, seed=5, member_batch=1, num_threads=2)
    with pytest.raises(ValueError, match="first reset"):
        pop.async_reset(members=[0])
    pop.async_reset()
    obs, *_, info = pop.recv(timeout=10)
    k = int(info["member_id"][0])
    others = [m for m in range(P) if m != k]
    with pytest.raises(ValueError, match="in flight"):      # would drop the others' results
        pop.reset(members=k)
    with pytest.raises(ValueError, match="in flight"):
        pop.async_reset(members=[others[0]])
    pop.step(np.zeros((1, E, ACT)), [k])                     # k goes round once more
    e = pop.vec.pool.engine
    e.episodes[:] = 3                                        # as if episodes had ended
    e.group_episodes[:] = 3
    e.ring_return[:] = 1.5
    pop.clear_member_statistics(k)
    assert (e.episodes[k * E:(k + 1) * E] == 0).all() and e.group_episodes[k] == 0
    assert (e.ring_return[k] == 0).all()
    assert (np.delete(e.episodes, np.s_[k * E:(k + 1) * E]) == 3).all()
    assert (np.delete(e.group_episodes, k) == 3).all()
    with pytest.raises(ValueError, match="member must be in"):
        pop.clear_member_statistics(P)
    # drain, then queue a seeded reset of one idle member: it restarts exactly as member k of
    # a population reset with that root
    for _ in range(P - 1):                                   # step() received one already
        pop.recv(timeout=10)
    pop.async_reset(members=[k], seed=root)
    obs, _, _, _, info = pop.recv(timeout=10)
    assert int(info["member_id"][0]) == k and "reward_ctrl" not in info
    assert np.array_equal(obs[0], want[k])
    assert not pop.vec.pool.in_flight.any()
    obs, _ = pop.reset()                                     # nothing in flight: allowed
    assert obs.shape == (P, E, OBS)
    pop.close()


def test_population_reset_with_members_in_flight():
    """A full reset while members step: they finish before any env gets its new random
    stream (it was replaced under a running worker), and the reset equals a fresh one."""
    pop = cypool.make_population("Hopper-v5", 4, 2, member_batch=2, num_threads=2)
    fresh = cypool.make_population("Hopper-v5", 4, 2, num_threads=1)
    try:
        want, _ = fresh.reset(seed=5)
        for _ in range(100):
            pop.async_reset(seed=0)
            got, _ = pop.reset(seed=5)
            assert np.array_equal(got, want)
    finally:
        pop.close()
        fresh.close()
