"""Atari populations: per-member options, parity seeds, the episode ring and async members,
checked bit for bit against single-config cypool pools (themselves held exact against
gymnasium / ale-py by test_atari_exactness.py)."""
import numpy as np
import pytest

import cypool
from cypool.population import make_population

GAME = "Breakout-v5"
BASE = dict(use_fire_reset=False, noop_max=5)
MEMBERS = [{"frame_skip": 2}, {}, {"repeat_action_probability": 0.25, "max_episode_steps": 30}]


def member_pools(P, E, root):
    """Member k as its own pool: env j seeded with root + k·E + j, as parity mode seeds."""
    pools = []
    for k, m in enumerate(MEMBERS[:P]):
        kw = {n: v for n, v in m.items() if n != "max_episode_steps"}
        pools.append(cypool.make_vec(GAME, E, num_threads=1, seed=root + k * E,
                                     max_episode_steps=m.get("max_episode_steps"),
                                     **BASE, **kw))
    return pools


def test_members_equal_single_config_pools():
    P, E, root, steps = 3, 2, 7, 60
    pop = make_population(GAME, P, E, member_kwargs=MEMBERS, seed=root, seed_mode="parity",
                          num_threads=2, episode_window=4, **BASE)
    refs = member_pools(P, E, root)
    obs, info = pop.reset()
    for k, ref in enumerate(refs):
        o, _ = ref.reset()
        assert np.array_equal(obs[k], o)
    assert np.array_equal(info["frame_skip"][:, 0], [2, 4, 4])
    assert np.array_equal(info["max_episode_steps"][:, 0], [27000, 27000, 30])
    rng = np.random.default_rng(0)
    for t in range(steps):
        a = rng.integers(0, 4, (P, E))
        obs, rew, term, trunc, info = pop.step(a)
        for k, ref in enumerate(refs):
            o, r, te, tr, inf = ref.step(a[k])
            assert np.array_equal(obs[k], o), (t, k)
            assert np.array_equal(rew[k], r) and np.array_equal(term[k], te)
            assert np.array_equal(trunc[k], tr), (t, k)
            assert np.array_equal(info["lives"][k], inf["lives"])
    # member 2's episodes are truncated at 30 steps: its ring holds them
    rec = pop.recent_episodes()
    assert rec["count"][2] == min(4, steps // 30) and (rec["length"][2][-rec["count"][2]:] == 30).all()
    # run-time change: member 1 takes member 0's settings and restarts
    pop.copy_member(0, 1, seed=3)
    assert pop.member_kwargs(1)["frame_skip"] == 2
    with pytest.raises(ValueError, match="img_height"):
        pop.set_member_kwargs(0, img_height=42)
    for ref in refs:
        ref.close()
    pop.close()


def test_async_members_equal_sync():
    P, E, cycles = 3, 2, 25
    kw = dict(member_kwargs=MEMBERS, seed=5, **BASE)
    sync = make_population(GAME, P, E, num_threads=1, **kw)
    obs, _ = sync.reset()
    rng = np.random.default_rng(1)
    acts = rng.integers(0, 4, (cycles, P, E))
    want = [[obs[k].copy()] for k in range(P)]
    for t in range(cycles):
        obs, rew, *_ = sync.step(acts[t])
        for k in range(P):
            want[k].append((obs[k].copy(), rew[k].copy()))
    sync.close()
    pop = make_population(GAME, P, E, num_threads=2, member_batch=1, **kw)
    pop.async_reset()
    got = [[] for _ in range(P)]
    while min(len(g) for g in got) < cycles + 1:
        obs, rew, _, _, info = pop.recv(timeout=30)
        k = int(info["member_id"][0])
        n = len(got[k])
        if n == 0:
            got[k].append(obs[0].copy())
        elif n <= cycles:
            got[k].append((obs[0].copy(), rew[0].copy()))
        pop.send(acts[min(n, cycles - 1)][k][None], [k])
    for k in range(P):
        assert np.array_equal(got[k][0], want[k][0])
        for t in range(1, cycles + 1):
            assert np.array_equal(got[k][t][0], want[k][t][0]), (k, t)
            assert np.array_equal(got[k][t][1], want[k][t][1]), (k, t)
    pop.close()


def test_evaluate_equals_single_env_pools():
    """evaluate(): env j of member k plays episodes j, j + E, ... from the tree stream
    SeedSequence(seed, spawn_key=(j,)); Atari seeds an env from a 63-bit int drawn from it,
    so a one-env make_vec pool seeded with that int replays the episodes."""
    import numpy as np

    P, E, K, seed = 2, 2, 3, 9
    members = [{"frame_skip": 2, "max_episode_steps": 25}, {"max_episode_steps": 150}]
    pop = make_population("Pong-v5", P, E, member_kwargs=members, seed=0, **BASE)
    pop.reset()

    def policy(obs):      # deterministic, from the frames only
        return (obs.reshape(obs.shape[0], obs.shape[1], -1).sum(-1) % 6).astype(np.int64)

    res = pop.evaluate(policy, episodes=K, seed=seed)
    for k, m in enumerate(members):
        kw = {n: v for n, v in m.items() if n != "max_episode_steps"}
        for j in range(E):
            s = int(np.random.SeedSequence(seed, spawn_key=(j,)).generate_state(1, np.uint64)[0]
                    >> np.uint64(1))
            ref = cypool.make_vec("Pong-v5", 1, seed=s, num_threads=1,
                                  max_episode_steps=m["max_episode_steps"],
                                  autoreset_mode="same_step", **BASE, **kw)
            obs, _ = ref.reset()
            for ep in range(j, K, E):
                total, n = 0.0, 0
                while True:
                    obs, r, te, tr, _ = ref.step(policy(obs[None])[0])
                    total += r[0]
                    n += 1
                    if te[0] or tr[0]:
                        break
                assert res["return"][k, ep] == total and res["length"][k, ep] == n, (k, ep)
            ref.close()
    assert (res["return"][1] != 0).any()       # long enough for points to be scored
    pop.close()
