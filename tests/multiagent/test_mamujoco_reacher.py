"""MaMuJoCo's Reacher (cypool.multiagent.mamujoco_v1) against gymnasium-robotics 1.4.2's
mamujoco_v1: its agents observe sin and cos of joint angles (numpy's float64 ufunc loops, as
the reference's scalars) and the fingertip-minus-target position; the same seed and actions
give the same observations, rewards, flags, infos and state, one env and a batch, through the
50-step truncation and the resets after it."""
import warnings

import numpy as np
import pytest

warnings.filterwarnings("ignore", message=".*reward functions were updated.*")
ref_m = pytest.importorskip("gymnasium_robotics").mamujoco_v1
from cypool.multiagent import mamujoco_v1 as cy_m  # noqa: E402


def _same(got, want, what):
    assert list(got) == list(want), what
    for a in want:
        assert type(got[a]) is type(want[a]), (what, a, type(got[a]), type(want[a]))
        assert np.array_equal(got[a], want[a]), f"{what}[{a}]"


def _same_infos(got, want, what):
    assert list(got) == list(want), what
    for a in want:
        assert set(got[a]) == set(want[a]), (what, a)
        for key, v in want[a].items():
            assert type(got[a][key]) is type(v), (what, a, key)
            assert np.array_equal(got[a][key], v), (what, a, key)


@pytest.mark.parametrize("conf, kw", [("2x1", dict(agent_obsk=0)), ("2x1", {}),
                                      ("2x1", dict(agent_obsk=2)), (None, {}),
                                      ("2x1", dict(local_categories=[
                                          ["qvel", "fingertip_dist"],
                                          ["qpos", "qvel", "fingertip_dist"]]))])
def test_parallel_env_equals_the_reference(conf, kw):
    env, ref = cy_m.parallel_env("Reacher", conf, **kw), ref_m.parallel_env("Reacher", conf, **kw)
    assert env.possible_agents == ref.possible_agents
    for a in ref.possible_agents:
        assert env.observation_space(a) == ref.observation_space(a)
        assert env.action_space(a) == ref.action_space(a)
    rng = np.random.default_rng(0)
    got, want = env.reset(seed=5), ref.reset(seed=5)
    _same(got[0], want[0], "reset obs")
    _same_infos(got[1], want[1], "reset infos")
    for t in range(120):
        if not ref.agents:
            got, want = env.reset(), ref.reset()
            _same(got[0], want[0], f"reset obs at step {t}")
        acts = {a: rng.uniform(-1, 1, ref.action_space(a).shape).astype(np.float32)
                for a in ref.agents}
        got, want = env.step(acts), ref.step(acts)
        for k, what in enumerate(("obs", "rewards", "terminations", "truncations")):
            _same(got[k], want[k], f"{what} at step {t}")
        _same_infos(got[4], want[4], f"infos at step {t}")
        assert env.agents == ref.agents
        assert np.array_equal(env.state(), ref.state())
    env.close()


@pytest.mark.parametrize("kw", [{}, dict(agent_obsk=0)])
def test_batch_equals_a_loop_of_references(kw):
    n = 3
    env = cy_m.vec_env(n, "Reacher", "2x1", num_threads=2, **kw)
    refs = [ref_m.parallel_env("Reacher", "2x1", **kw) for _ in range(n)]
    obs = env.reset(seed=9)[0]
    last = [r.reset(seed=9 + i)[0] for i, r in enumerate(refs)]
    for a in env.possible_agents:
        assert np.array_equal(obs[a], np.stack([o[a] for o in last]))
    ended = [False] * n
    rng = np.random.default_rng(1)
    for t in range(110):                        # two truncations (50 steps) and restarts
        acts = {a: rng.uniform(-1, 1, (n,) + sp.shape).astype(np.float32)
                for a, sp in env.action_spaces.items()}
        obs, rew, term, trunc, _ = env.step(acts)
        state = env.state()
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
            assert np.array_equal(state[i], r.state()), (t, i)
    env.close()


def test_sines_use_numpys_loops_on_any_layout():
    """The batch takes sin/cos of a strided (num_envs, nq) block; the reference of a numpy
    scalar: numpy's float64 loop gives the same bits either way."""
    x = np.random.default_rng(2).normal(0.0, 3.0, (4000, 7))
    for f in (np.sin, np.cos):
        block = f(x[:, 1:5])
        assert np.array_equal(block, np.array([[f(np.float64(v)) for v in row]
                                               for row in x[:, 1:5]]))


def test_observations_beyond_those_are_refused():
    """A factorization whose observation is none of cypool's (here a tanh) is refused."""
    obsk = pytest.importorskip("gymnasium_robotics.envs.multiagent_mujoco.obsk")
    j0 = obsk.Node("joint0", -4, -4, 0, extra_obs={"qpos": lambda d: np.tanh(d.qpos[-4:-3])})
    j1 = obsk.Node("joint1", -3, -3, 1)
    fact = dict(partition=[(j0,), (j1,)], edges=[obsk.HyperEdge(j0, j1)], globals=[])
    with pytest.raises(ValueError, match="not served"):
        cy_m.parallel_env("Reacher", "2x1", agent_factorization=fact)
