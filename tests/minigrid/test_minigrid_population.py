"""A population of MiniGrid/BabyAI envs: the Dict observation's arrays as (P, E, ...) and its
mission (a tuple of str per env, as gymnasium batches a Text space) as a tuple of one tuple
of E str per member, in sync (reset/step) and async (send/recv) use; against minigrid's envs
under SyncVectorEnv (seed_mode="parity": env i of the flat batch is seeded seed + i, as
SyncVectorEnv's reset(seed=) seeds them)."""
import gymnasium as gym
import numpy as np
import pytest

import cypool

pytest.importorskip("minigrid")

P, E = 2, 3
ENV_ID = "BabyAI-GoToLocal-v0"      # missions differ from env to env and episode to episode


def regroup(flat):
    return tuple(tuple(flat[m * E:(m + 1) * E]) for m in range(P))


def same(pop_obs, ref_obs):
    assert pop_obs["mission"] == regroup(ref_obs["mission"])
    for k in ("image", "direction"):
        assert pop_obs[k].shape == (P, E) + ref_obs[k].shape[1:]
        assert np.array_equal(pop_obs[k].reshape(ref_obs[k].shape), ref_obs[k])


def test_sync_population_regroups_missions():
    pop = cypool.make_population(ENV_ID, P, E, seed_mode="parity", max_steps=6)
    ref = gym.vector.SyncVectorEnv([lambda: gym.make(ENV_ID, max_steps=6)] * (P * E))
    try:
        o, _ = pop.reset(seed=11)
        r, _ = ref.reset(seed=11)
        same(o, r)
        rng = np.random.default_rng(0)
        seen = set()
        for _ in range(20):                 # several autoresets: new missions
            a = rng.integers(0, 7, P * E)
            o, rew, term, trunc, _ = pop.step(a.reshape(P, E))
            r, rrew, rterm, rtrunc, _ = ref.step(a)
            same(o, r)
            assert np.array_equal(rew.reshape(-1), rrew)
            assert np.array_equal(term.reshape(-1), rterm)
            assert np.array_equal(trunc.reshape(-1), rtrunc)
            seen.update(r["mission"])
        assert len(seen) > 3
    finally:
        pop.close()
        ref.close()


def test_async_recv_regroups_its_members_missions():
    pop = cypool.make_population(ENV_ID, P, E, seed_mode="parity", member_batch=1)
    ref = gym.vector.SyncVectorEnv([lambda: gym.make(ENV_ID)] * (P * E))
    try:
        pop.async_reset(seed=5)
        r, _ = ref.reset(seed=5)
        got = {}
        for _ in range(P):
            o, _, _, _, info = pop.recv()
            (m,) = info["member_id"]
            assert isinstance(o["mission"], tuple) and len(o["mission"]) == 1
            got[int(m)] = o["mission"][0]
        assert tuple(got[m] for m in range(P)) == regroup(r["mission"])
    finally:
        pop.close()
        ref.close()
