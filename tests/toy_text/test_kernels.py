"""The toy-text pools (cypool/toy_text) against gymnasium 1.4.0's envs, bit for bit, at the
engine level: the pool is driven directly (ops, run(), one PCG64(SeedSequence(seed + i))
stream per env, as the façade's _apply_seeds installs them and as SyncVectorEnv's
reset(seed=seed) seeds env i), with NEXT_STEP autoresets, random actions, several seeds and
per-env kwargs. Every step compares obs, reward, terminated, truncated and the info values
with np.array_equal, and each run ends by comparing every env's whole generator state
(PCG64 state and its cached 32-bit half) with the reference's: the same number and kind of
draws. Then the ids register() serves, through make_vec."""
import pickle

import gymnasium as gym
import numpy as np
import pytest

from cypool._core._engine import OPS
from cypool.toy_text import _tables
from cypool.toy_text.registration import SPECS
from cypool.toy_text._blackjack import BlackjackPool
from cypool.toy_text._cliff_walking import CliffWalkingPool
from cypool.toy_text._frozen_lake import FrozenLakePool
from cypool.toy_text._taxi import TaxiPool

POOLS = {"FrozenLake-v1": FrozenLakePool, "FrozenLake8x8-v1": FrozenLakePool,
         "Taxi-v4": TaxiPool, "CliffWalking-v1": CliffWalkingPool,
         "CliffWalkingSlippery-v1": CliffWalkingPool, "Blackjack-v1": BlackjackPool}
SEEDS = [0, 7, 123]
# each id's registered kwargs, time limit and action space
ENVS = {s.env_id: {"kwargs": {k: v.default for k, v in s.kwargs.items()},
                   "max_episode_steps": s.max_episode_steps, "action_space": s.action_space}
        for s in SPECS}


def pool_obs(pool):
    """The pool's observation rows (Blackjack's three outputs side by side)."""
    if "obs.1" not in pool.outputs:
        return pool.obs
    return np.stack([pool.outputs[k] for k in ("obs", "obs.1", "obs.2")], axis=1)


def make_pool(env_id, kw_per_env, pool_kw=None):
    """A pool of len(kw_per_env) envs of env_id; env i has the registered kwargs updated by
    pool_kw and kw_per_env[i]."""
    spec = ENVS[env_id]
    base = {**spec["kwargs"], **(pool_kw or {})}
    n = len(kw_per_env)
    pool = POOLS[env_id](n, 1, spec["max_episode_steps"] or 0, dict(base))
    pool.configure(np.arange(n, dtype=np.int64), dict(base))
    for i, kw in enumerate(kw_per_env):
        if kw:
            pool.configure(np.array([i], np.int64), {**base, **kw})
    return pool


def make_refs(env_id, kw_per_env, pool_kw=None):
    return [gym.make(env_id, **(pool_kw or {}), **kw) for kw in kw_per_env]


def seed(pool, s):
    for i in range(pool.num_envs):
        pool.set_generator(i, np.random.PCG64(np.random.SeedSequence(s + i)))


def run(pool, ops):
    pool.ops_arr[:] = ops
    pool.run()
    assert pool.failures() == []


def obs_of(env_id, o):
    return list(o) if env_id == "Blackjack-v1" else o


def check_info(env_id, pool, infos):
    """infos: gymnasium's per-env info dicts of this call."""
    if env_id == "Blackjack-v1":
        assert all(i == {} for i in infos)
        return
    prob = np.array([i["prob"] for i in infos], np.float64)
    assert np.array_equal(pool.info[:, 0], prob)
    if env_id == "Taxi-v4":
        mask = np.array([i["action_mask"] for i in infos])
        assert mask.dtype == np.int8
        assert np.array_equal(pool.info[:, 1:7].astype(np.int8), mask)
        assert np.array_equal(pool.info[:, 1:7], mask)         # exactly 0.0/1.0


def policy(env_id, rng, pool, n):
    a = rng.integers(0, ENVS[env_id]["action_space"].n, n)
    if env_id == "Taxi-v4":      # pick up and drop off more often than at random: fickle cases
        mask = pool.info[:, 1:7]
        u = rng.random(n)
        a = np.where((mask[:, 4] == 1) & (u < 0.8), 4, a)
        a = np.where((mask[:, 5] == 1) & (u < 0.3), 5, a)
    if env_id.startswith("CliffWalking"):   # mostly along row 2 to the goal: episodes end
        row, col = np.divmod(pool.obs, 12)
        greedy = np.where(row == 3, 0, np.where(row < 2, 2, np.where(col < 11, 1, 2)))
        a = np.where(rng.random(n) < 0.7, greedy, a)
    return a


def drive(env_id, kw_per_env, s, steps, pool_kw=None, counters=None):
    """Run pool and references side by side; returns the pool and the references."""
    n = len(kw_per_env)
    pool = make_pool(env_id, kw_per_env, pool_kw)
    refs = make_refs(env_id, kw_per_env, pool_kw)
    seed(pool, s)
    run(pool, OPS["reset"])
    got = [r.reset(seed=s + i) for i, r in enumerate(refs)]
    want_obs = np.array([obs_of(env_id, o) for o, _ in got], np.int64)
    assert np.array_equal(pool_obs(pool), want_obs)
    check_info(env_id, pool, [i for _, i in got])
    rng = np.random.default_rng(s + 1000)
    done = np.zeros(n, bool)
    ends = 0
    for _ in range(steps):
        a = policy(env_id, rng, pool, n)
        pool.actions[:] = a
        run(pool, np.where(done, OPS["reset"], OPS["step"]))
        obs, rew, term, trunc, infos = [], [], [], [], []
        for i, r in enumerate(refs):
            if done[i]:
                o, info = r.reset()
                obs.append(obs_of(env_id, o))
                rew.append(0.0), term.append(False), trunc.append(False), infos.append(info)
            else:
                fickle_before = env_id == "Taxi-v4" and r.unwrapped.fickle_step
                o, rw, t, tr, info = r.step(int(a[i]))
                obs.append(obs_of(env_id, o))
                rew.append(rw), term.append(t), trunc.append(tr), infos.append(info)
                if counters is not None:
                    if fickle_before and not r.unwrapped.fickle_step:
                        counters["fickle"] = counters.get("fickle", 0) + 1
                    counters[rw] = counters.get(rw, 0) + 1
        assert np.array_equal(pool_obs(pool), np.array(obs, np.int64))
        assert np.array_equal(pool.reward, np.array(rew, np.float64))
        assert np.array_equal(pool.terminated, np.array(term, bool))
        assert np.array_equal(pool.truncated, np.array(trunc, bool))
        check_info(env_id, pool, infos)
        done = pool.terminated | pool.truncated
        ends += int(done.sum())
    for i, r in enumerate(refs):           # the same draws, to the cached 32-bit half
        assert pool.generator(i).state == r.unwrapped.np_random.bit_generator.state, i
    assert ends >= n
    return pool, refs


@pytest.mark.parametrize("s", SEEDS)
@pytest.mark.parametrize("env_id,pool_kw,per_env", [
    ("FrozenLake-v1", None, [{}, {"is_slippery": False}, {"success_rate": 0.5},
                             {"reward_schedule": (5, -1, 0.5)},
                             {"success_rate": 0.5, "reward_schedule": (5, -1, 0.5)}]),
    ("FrozenLake8x8-v1", None, [{}, {}, {"is_slippery": False}, {"success_rate": 0.5}]),
    # a 5x3 map with two S cells (uniform start over them) and a letter that counts as F
    ("FrozenLake-v1", {"desc": ["SFH", "FFF", "HSX", "FFG", "FHF"]},
     [{}, {"is_slippery": False}, {"reward_schedule": (5, -1, 0.5)}]),
    ("CliffWalking-v1", None, [{}, {}, {"is_slippery": True}]),
    ("CliffWalkingSlippery-v1", None, [{}, {}, {"is_slippery": False}]),
    ("Taxi-v4", None, [{}, {"is_rainy": True}, {"fickle_passenger": True},
                       {"is_rainy": True, "fickle_passenger": True},
                       {"is_rainy": True, "fickle_passenger": True, "rainy_probability": 0.6,
                        "fickle_probability": 0.9},
                       {"fickle_passenger": True, "fickle_probability": 1.0}]),
    ("Blackjack-v1", None, [{}, {"sab": False}, {"sab": False, "natural": True},
                            {"natural": True}]),
])
def test_matches_gymnasium(env_id, pool_kw, per_env, s):
    steps = 400 if env_id != "Taxi-v4" else 700
    counters = {}
    drive(env_id, per_env, s, steps, pool_kw, counters)
    if env_id == "Taxi-v4":
        assert counters.get("fickle", 0) > 0           # destinations were redrawn
        assert counters.get(20, 0) > 0 or counters.get(-10, 0) > 0


def test_blackjack_natural_pays_1_5():
    counters = {}
    drive("Blackjack-v1", [{"sab": False, "natural": True}] * 4, 5, 1500, counters=counters)
    assert counters.get(1.5, 0) > 0


@pytest.mark.parametrize("is_rainy,rp", [(False, 0.8), (True, 0.8), (True, 0.6)])
def test_taxi_tables_are_gymnasiums_P(is_rainy, rp):
    ref = gym.make("Taxi-v4", is_rainy=is_rainy, rainy_probability=rp).unwrapped
    t = _tables.taxi_table(is_rainy, rp)
    for s in range(500):
        for a in range(6):
            entries = ref.P[s][a]
            n = len(entries)
            assert t.count[s, a] == n
            assert np.array_equal(t.cdf[s, a, :n], np.cumsum([e[0] for e in entries]))
            assert [(float(p), int(s2), float(r), bool(d)) for p, s2, r, d in entries] == [
                (t.prob[s, a, k], t.next[s, a, k], t.reward[s, a, k], bool(t.term[s, a, k]))
                for k in range(n)]
    assert np.array_equal(_tables.taxi_initial_cdf(), np.cumsum(ref.initial_state_distrib))
    assert np.array_equal(_tables.taxi_action_masks(),
                          np.array([ref.action_mask(s) for s in range(500)]))


def pcg64_next_random_is(value64, inc_seed=5):
    """A PCG64 whose next 64-bit output is value64 (numpy's PCG64 steps the 128-bit LCG
    state, then outputs XSL-RR of it: the post-step state (hi=0, lo=value64) has rotation 0
    and output value64), built by stepping that state back once."""
    mult = 47026247687942121848144207491837523525       # PCG's default 128-bit multiplier
    bg = np.random.PCG64(inc_seed)
    st = bg.state
    inc = st["state"]["inc"]
    st["state"]["state"] = ((value64 - inc) * pow(mult, -1, 1 << 128)) % (1 << 128)
    st["has_uint32"], st["uinteger"] = 0, 0
    bg.state = st
    return bg


def test_taxi_start_draw_above_the_cumsum_gives_state_0():
    """Taxi's start cumsum ends at 0.9999999999999961: a random() above it matches no entry
    and gymnasium's argmax gives state 0 (passenger at R, destination R), a start state the
    distribution gives no weight."""
    cdf = _tables.taxi_initial_cdf()
    assert cdf[-1] == 0.9999999999999961
    bg = pcg64_next_random_is((1 << 64) - 1)
    u = np.random.Generator(pcg64_next_random_is((1 << 64) - 1)).random()
    assert u >= cdf[-1]
    ref = gym.make("Taxi-v4", fickle_passenger=True)
    ref.reset(seed=0)
    ref.unwrapped.np_random = np.random.Generator(pcg64_next_random_is((1 << 64) - 1))
    o, info = ref.unwrapped.reset()
    assert o == 0
    pool = make_pool("Taxi-v4", [{"fickle_passenger": True}, {}])
    pool.set_generator(0, bg)
    pool.set_generator(1, np.random.PCG64(np.random.SeedSequence(1)))
    run(pool, OPS["reset"])
    assert pool.obs[0] == 0
    assert np.array_equal(pool.info[0, 1:7], info["action_mask"])
    rng = np.random.default_rng(0)
    for _ in range(50):                    # and the episode goes on as gymnasium's
        a = int(rng.integers(0, 6))
        pool.actions[:] = a
        run(pool, [OPS["step"], OPS["none"]])
        o, r, t, _, info = ref.unwrapped.step(a)
        assert (pool.obs[0], pool.reward[0], pool.terminated[0], pool.info[0, 0]) == (
            o, r, t, info["prob"])
    assert pool.generator(0).state == ref.unwrapped.np_random.bit_generator.state


@pytest.mark.parametrize("env_id,kw", [
    ("FrozenLake-v1", [{}, {"success_rate": 0.5}]),
    ("CliffWalkingSlippery-v1", [{}, {}]),
    ("Taxi-v4", [{"is_rainy": True, "fickle_passenger": True, "fickle_probability": 1.0}] * 2),
    ("Blackjack-v1", [{}, {"natural": True, "sab": False}]),
])
def test_env_state_snapshots_replay(env_id, kw):
    """get_state mid-run, into a fresh pool (and through pickle): the same futures."""
    pool = make_pool(env_id, kw)
    seed(pool, 3)
    run(pool, OPS["reset"])
    rng = np.random.default_rng(0)
    nA = ENVS[env_id]["action_space"].n

    def go(p, acts):
        out = []
        done = p.done_arr.copy()
        for a in acts:
            p.actions[:] = a
            run(p, np.where(done, OPS["reset"], OPS["step"]))
            out.append((pool_obs(p).copy(), p.reward.copy(), p.terminated.copy(),
                        p.info.copy()))
            done = p.terminated | p.truncated
        return out

    go(pool, rng.integers(0, nA, (37, len(kw))))
    snap = pickle.loads(pickle.dumps(pool.get_state(None)))
    acts = rng.integers(0, nA, (200, len(kw)))
    a = go(pool, acts)
    twin = make_pool(env_id, kw)
    twin.set_state(None, snap)
    b = go(twin, acts)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            assert np.array_equal(u, v)
    with pytest.raises(ValueError):
        twin.set_state([0], [{**snap[0], "env": [1]}])


def test_bad_actions_and_kwargs_are_refused():
    pool = make_pool("FrozenLake-v1", [{}])
    seed(pool, 0)
    run(pool, OPS["reset"])
    pool.actions[:] = 4
    pool.ops_arr[:] = OPS["step"]
    pool.run()
    assert "action 4" in pool.failures()[0][1]
    with pytest.raises(ValueError, match="pool"):
        pool.configure(np.array([0]), {**ENVS["FrozenLake-v1"]["kwargs"], "map_name": "8x8"})
    with pytest.raises(ValueError, match="reward_schedule"):
        make_pool("FrozenLake-v1", [{"reward_schedule": (1, 0)}])
    with pytest.raises(ValueError, match="random map"):
        make_pool("FrozenLake-v1", [{}], {"map_name": None})
    with pytest.raises(ValueError, match="rectangular"):
        make_pool("FrozenLake-v1", [{}], {"desc": ["SFF", "FG"]})
