"""cypool.multiagent.mamujoco_v1 against gymnasium-robotics 1.4.2's mamujoco_v1: the same
scenario, partition, seed and actions give the same agents, observations, rewards, flags,
infos and state, one env and a batch (next-step autoreset); scenarios whose observations
cypool does not reproduce are refused, and bad actions are refused before any env moves."""
import warnings

import numpy as np
import pytest

warnings.filterwarnings("ignore", message=".*reward functions were updated.*")
ref_m = pytest.importorskip("gymnasium_robotics").mamujoco_v1
from cypool.multiagent import mamujoco_v1 as cy_m  # noqa: E402

CASES = [("Ant", "2x4", {}), ("Ant", "4x2", dict(agent_obsk=2)),
         ("HalfCheetah", "6x1", {}), ("Hopper", "3x1", {}), ("Walker2d", "2x3", {}),
         ("Humanoid", "9|8", {}), ("HumanoidStandup", "9|8", {}), ("Swimmer", "2x1", {}),
         ("Ant", "2x4d", dict(agent_obsk=0, global_categories=("qpos",))),
         ("InvertedPendulum", None, {}), ("InvertedDoublePendulum", None, {}),
         ("Ant", None, {}), ("ManySegmentAnt", "2x3", {}),
         ("ManySegmentSwimmer", "4x2", {})]


def _same(got, want, what):
    assert list(got) == list(want), what
    for a in want:
        g, w = got[a], want[a]
        assert type(g) is type(w), (what, a, type(g), type(w))
        assert np.array_equal(g, w), f"{what}[{a}]"


def _actions(env, agents, rng):
    return {a: rng.uniform(-1, 1, env.action_space(a).shape).astype(np.float32)
            for a in agents}


@pytest.mark.parametrize("scenario, conf, kw", CASES)
def test_parallel_env_equals_the_reference(scenario, conf, kw):
    env, ref = cy_m.parallel_env(scenario, conf, **kw), ref_m.parallel_env(scenario, conf, **kw)
    assert env.possible_agents == ref.possible_agents
    for a in ref.possible_agents:
        assert env.observation_space(a) == ref.observation_space(a)
        assert env.action_space(a) == ref.action_space(a)
    rng = np.random.default_rng(0)
    got, want = env.reset(seed=5), ref.reset(seed=5)
    _same(got[0], want[0], "reset obs")
    for t in range(80):
        if not ref.agents:
            got, want = env.reset(), ref.reset()
            _same(got[0], want[0], "reset obs")
        acts = _actions(ref, ref.agents, rng)
        got, want = env.step(acts), ref.step(acts)
        for k, what in enumerate(("obs", "rewards", "terminations", "truncations")):
            _same(got[k], want[k], f"{what} at step {t}")
        for a in want[4]:
            assert set(got[4][a]) == set(want[4][a])
            for key, v in want[4][a].items():
                assert np.array_equal(got[4][a][key], v), (t, a, key)
        assert env.agents == ref.agents
        assert np.array_equal(env.state(), ref.state())
    env.close()


@pytest.mark.parametrize("scenario, conf, kw", [CASES[0], CASES[3], CASES[5], CASES[12]])
def test_batch_equals_a_loop_of_references(scenario, conf, kw):
    n = 3
    env = cy_m.vec_env(n, scenario, conf, num_threads=2, **kw)
    refs = [ref_m.parallel_env(scenario, conf, **kw) for _ in range(n)]
    obs = env.reset(seed=9)[0]
    last = [r.reset(seed=9 + i)[0] for i, r in enumerate(refs)]
    for a in env.possible_agents:
        assert np.array_equal(obs[a], np.stack([o[a] for o in last]))
    ended = [False] * n
    rng = np.random.default_rng(1)
    for t in range(60):
        acts = {a: rng.uniform(-1, 1, (n,) + sp.shape).astype(np.float32)
                for a, sp in env.action_spaces.items()}
        obs, rew, term, trunc, _ = env.step(acts)
        for i, r in enumerate(refs):
            if ended[i]:
                last[i], _ = r.reset()
                ended[i] = False
                for a in env.possible_agents:
                    assert rew[a][i] == 0 and not term[a][i] and not trunc[a][i]
            else:
                o, rw, tm, tr, _ = r.step({a: acts[a][i] for a in r.agents})
                last[i] = o
                for a in env.possible_agents:
                    assert rew[a][i] == rw[a] and term[a][i] == tm[a] and trunc[a][i] == tr[a]
                ended[i] = not r.agents
            for a in env.possible_agents:
                assert np.array_equal(obs[a][i], last[i][a]), (t, i, a)
    env.close()


@pytest.mark.parametrize("scenario, conf, match", [
    ("Pusher", "3p", "share the label"), ("Ant", "3x3", "unknown agent_conf"),
    ("ManySegmentAnt", "x", "unknown agent_conf"),
    ("Antt", "2x4", "unknown scenario")])
def test_what_is_not_served_is_refused(scenario, conf, match):
    with pytest.raises(ValueError, match=match):
        cy_m.parallel_env(scenario, conf)


def test_bad_actions_are_refused_before_any_env_moves():
    env = cy_m.vec_env(2, "Ant", "2x4")
    env.reset(seed=0)
    before = env.state()
    good = {a: np.zeros((2, 4), np.float32) for a in env.possible_agents}
    for edit, match in [(lambda d: d.pop("agent_1"), "missing"),
                        (lambda d: d.update(agent_0=np.zeros((2, 3), np.float32)), "shape"),
                        (lambda d: d["agent_0"].__setitem__((1, 2), np.nan), "NaN")]:
        acts = {a: v.copy() for a, v in good.items()}
        edit(acts)
        with pytest.raises(ValueError, match=match):
            env.step(acts)
        assert np.array_equal(env.state(), before)
    env.close()
