"""mpe2's particle worlds against the reference ``mpe2.<module>.parallel_env`` stepped in a
Python loop over n envs (env i reset with seed s + i, then reset() at each episode end, as
the VectorEnv autoresets on the next step): observations, per-agent rewards, the summed
reward, terminations and truncations, bit for bit, across several episodes, with discrete
and continuous (float32 and float64, out-of-bounds clipped) actions, on 1 and 2 threads."""
import importlib
import warnings

import numpy as np
import pytest

import cypool

# (module, kwargs of the run): a short max_cycles so that episodes end and autoreset
CASES = [
    ("simple_spread_v3", {}),
    ("simple_spread_v3", {"N": 4, "local_ratio": 0.25}),
    ("simple_spread_v3", {"curriculum": True, "terminate_on_success": True, "N": 1}),
    ("simple_v3", {}),
    ("simple_adversary_v3", {}),
    ("simple_adversary_v3", {"N": 3}),
    ("simple_tag_v3", {}),
    ("simple_tag_v3", {"num_good": 2, "num_adversaries": 2, "num_obstacles": 1,
                       "curriculum": True, "terminate_on_success": True}),
    ("simple_push_v3", {}),
    ("simple_speaker_listener_v4", {}),
    ("simple_reference_v3", {}),
    ("simple_reference_v3", {"local_ratio": 0.9}),
    ("simple_crypto_v3", {}),
    ("simple_formation_v1", {}),
    ("simple_formation_v1", {"N": 9}),
    ("simple_line_v1", {}),
    ("simple_line_v1", {"N": 1, "terminate_on_success": True}),
    ("simple_world_comm_v3", {}),
    ("simple_world_comm_v3", {"num_good": 1, "num_adversaries": 2, "num_obstacles": 0,
                              "num_food": 3, "num_forests": 3}),
    ("collect_treasure_v1", {}),
    ("collect_treasure_v1", {"num_collectors": 3, "num_deposits": 3, "num_treasures": 9}),
]


def _actions(rng, space, n, t):
    out = {}
    for name, sp in space.spaces.items():
        if hasattr(sp, "n"):
            out[name] = rng.integers(0, sp.n, n)
        else:        # out of [0, 1] now and then: clipped as ClipOutOfBoundsWrapper does
            a = rng.uniform(-0.3, 1.3, (n, sp.shape[0]))
            out[name] = a.astype(np.float32) if t % 2 else a
    return out


def run_pair(module, kw, n=3, threads=1, steps=30, seed=11, max_cycles=7, policy=None):
    kw = {"max_cycles": max_cycles, **kw}
    env = cypool.make_vec(f"mpe2/{module}", n, num_threads=threads, **kw)
    mod = importlib.import_module(f"mpe2.{module}")
    refs = [mod.parallel_env(**kw) for _ in range(n)]
    agents = list(env.single_observation_space.spaces)
    try:
        assert agents == refs[0].possible_agents
        for k in agents:
            assert env.single_observation_space[k] == refs[0].observation_space(k)
            assert env.single_action_space[k] == refs[0].action_space(k)
        obs, info = env.reset(seed=seed)
        ref_obs = [r.reset(seed=seed + i)[0] for i, r in enumerate(refs)]
        for k in agents:
            assert obs[k].dtype == np.float32
            assert np.array_equal(obs[k], np.stack([o[k] for o in ref_obs])), k
        # (a width-1 info key is one column: shape (n,) for a one-agent scenario)
        assert np.array_equal(info["rewards"].reshape(n, -1), np.zeros((n, len(agents))))
        rng = np.random.default_rng(seed)
        ends = 0
        for t in range(steps):
            act = (_actions(rng, env.single_action_space, n, t) if policy is None
                   else policy(env, rng, t))
            obs, rew, term, trunc, info = env.step(act)
            rews = info["rewards"].reshape(n, -1)
            terms = info["terminations"].reshape(n, -1) if "terminations" in info else None
            for i, r in enumerate(refs):
                if not r.agents:                    # ended last step: autoreset now
                    o = r.reset()[0]
                    for k in agents:
                        assert np.array_equal(obs[k][i], o[k]), (t, i, k)
                    assert rew[i] == 0 and not term[i] and not trunc[i]
                    continue
                o, rw, tm, tc, _ = r.step({k: act[k][i] for k in agents})
                for j, k in enumerate(agents):
                    assert np.array_equal(obs[k][i], o[k]), (t, i, k, obs[k][i], o[k])
                    assert rews[i, j] == rw[k], (t, i, k)
                    if terms is not None:
                        assert terms[i, j] == tm[k]
                    assert tm[k] == term[i] and tc[k] == trunc[i], (t, i, k)
                total = 0.0
                for k in agents:
                    total += rw[k]
                assert rew[i] == total, (t, i)
                ends += bool(term[i] or trunc[i])
        assert ends >= n                            # at least one episode end per env
    finally:
        env.close()
        for r in refs:
            r.close()


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.parametrize("module,kw", CASES)
def test_matches_reference(module, kw, continuous):
    run_pair(module, {**kw, "continuous_actions": continuous})


@pytest.mark.parametrize("module", sorted({m for m, _ in CASES}))
def test_two_threads(module):
    run_pair(module, {}, n=5, threads=2, steps=16, max_cycles=5)


def test_tag_out_of_bounds_penalty():
    """Long tag episodes: the prey leaves [-0.9, 0.9] (bound()'s linear and np.exp parts)."""
    run_pair("simple_tag_v3", {"continuous_actions": True}, n=4, threads=2, steps=45,
             max_cycles=25)


def _seek(env):
    """Discrete moves towards each agent's target (from the pool's state): collectors to
    the nearest live treasure, or to their deposit once they hold one; deposits stay."""
    eng = env.pool.engine
    pos, C, A = eng.positions, eng.n_collectors, eng.n_agents
    out = {}
    for k, name in enumerate(env.single_action_space.spaces):
        acts = np.zeros(env.num_envs, np.int64)
        for i in range(env.num_envs):
            if k >= C:
                continue
            h = eng.holdings[i, k]
            if h >= 0:
                target = pos[i, C + h]
            else:
                live = [A + t for t in range(eng.n_landmarks) if eng.alive_arr[i, t]]
                if not live:
                    continue
                target = min((pos[i, e] for e in live),
                             key=lambda p: np.hypot(*(p - pos[i, k])))
            d = target - pos[i, k]
            if abs(d[0]) > abs(d[1]):
                acts[i] = 2 if d[0] > 0 else 1
            else:
                acts[i] = 4 if d[1] > 0 else 3
        out[name] = acts
    return out


def test_collect_treasure_deliveries():
    """Collectors steered to treasures and deposits: pick-ups, respawns (world.np_random)
    and deliveries all happen, bit for bit with the reference."""
    count = {"picks": 0, "deliveries": 0}
    last = {}

    def policy(env, rng, t):
        eng = env.pool.engine
        if last:                                  # what the previous step did
            same = (eng.step_counts == last["steps"] + 1)[:, None]
            count["picks"] += int(((last["h"] < 0) & (eng.holdings >= 0) & same).sum())
            count["deliveries"] += int(((last["h"] >= 0) & (eng.holdings < 0) & same).sum())
        last["h"], last["steps"] = eng.holdings.copy(), eng.step_counts.copy()
        return _seek(env)

    run_pair("collect_treasure_v1", {"num_collectors": 3, "num_deposits": 1,
                                     "num_treasures": 6}, n=3, threads=2, steps=60,
             max_cycles=40, policy=policy)
    assert count["picks"] >= 3 and count["deliveries"] >= 1, count


def test_gymnasium_make_single_env():
    """gymnasium.make's single env (one dict of actions, as a list of one dict) against the
    reference."""
    import gymnasium as gym
    from cypool.registration import gym_id
    from mpe2 import simple_push_v3

    env = gym.make(gym_id("mpe2/simple_push_v3"), continuous_actions=True, max_cycles=4)
    ref = simple_push_v3.parallel_env(continuous_actions=True, max_cycles=4)
    try:
        obs, _ = env.reset(seed=3)
        ref_obs, _ = ref.reset(seed=3)
        assert all(np.array_equal(obs[k], ref_obs[k]) for k in ref_obs)
        env.action_space.seed(1)
        for _ in range(4):
            a = env.action_space.sample()
            o, r, te, tr, info = env.step(a)
            ro, rr, rte, rtr, _ = ref.step(a)
            assert all(np.array_equal(o[k], ro[k]) for k in ro)
            assert np.array_equal(info["rewards"], np.array(list(rr.values())))
            assert tr == all(rtr.values()) and te == all(rte.values())
        assert tr
    finally:
        env.close()
        ref.close()
