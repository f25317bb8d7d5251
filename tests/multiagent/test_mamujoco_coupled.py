"""MaMuJoCo's CoupledHalfCheetah (cypool.multiagent.mamujoco_v1 on the task
cypool/robotics/_coupled_half_cheetah.pyx, the installed gymnasium-robotics' own model)
against gymnasium-robotics 1.4.2's mamujoco_v1: the same seed and actions give the same
observations, rewards, flags, infos and state, one env and a batch, through the 1000-step
truncation.

The reference reads ``data.ten_J[0][:2]``: MuJoCo's dense (ntendon, nv) tendon Jacobian. The
installed MuJoCo (4.x) keeps ten_J sparse (``data.ten_J`` is its nonzeros), and the
reference then fails at construction (IndexError: invalid index to scalar variable). The
reference here runs on an mjData whose ``ten_J`` reads the dense matrix
(``mujoco.mju_sparse2dense``): everything else, physics, rewards, resets, build_obs, is the
installed reference's own code."""
import warnings

import numpy as np
import pytest

warnings.filterwarnings("ignore", message=".*reward functions were updated.*")
warnings.filterwarnings("ignore", message=".*settotalmass.*")
gr = pytest.importorskip("gymnasium_robotics")
mujoco = pytest.importorskip("mujoco")
from gymnasium_robotics.envs.multiagent_mujoco import mujoco_multi  # noqa: E402
from _coupled_ref import Coupled as _Coupled  # noqa: E402
from cypool.multiagent import mamujoco_v1 as cy_m  # noqa: E402

ref_m = gr.mamujoco_v1


@pytest.fixture
def ref(monkeypatch):
    monkeypatch.setattr(mujoco_multi, "CoupledHalfCheetahEnv", _Coupled)
    return lambda *a, **kw: ref_m.parallel_env("CoupledHalfCheetah", *a, **kw)


def test_the_unpatched_reference_needs_a_dense_ten_J():
    """Why the reference runs on _coupled_ref.DenseTenJ: if this starts passing, the shim can
    go."""
    with pytest.raises(IndexError):
        ref_m.parallel_env("CoupledHalfCheetah", "1p1")


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


@pytest.mark.parametrize("conf, kw, steps", [
    ("1p1", dict(agent_obsk=0), 60), ("1p1", {}, 1010), ("1p1", dict(agent_obsk=2), 60),
    (None, {}, 60), ("1p1", dict(global_categories=("qvel",)), 60)])
def test_parallel_env_equals_the_reference(ref, conf, kw, steps):
    env, r = cy_m.parallel_env("CoupledHalfCheetah", conf, **kw), ref(conf, **kw)
    assert env.possible_agents == r.possible_agents
    for a in r.possible_agents:
        assert env.observation_space(a) == r.observation_space(a)
        assert env.action_space(a) == r.action_space(a)
    rng = np.random.default_rng(0)
    got, want = env.reset(seed=5), r.reset(seed=5)
    _same(got[0], want[0], "reset obs")
    _same_infos(got[1], want[1], "reset infos")
    truncated = False
    for t in range(steps):
        if not r.agents:
            got, want = env.reset(), r.reset()
            _same(got[0], want[0], f"reset obs at step {t}")
        acts = {a: rng.uniform(-1.2, 1.2, r.action_space(a).shape).astype(np.float32)
                for a in r.agents}
        got, want = env.step(acts), r.step(acts)
        for k, what in enumerate(("obs", "rewards", "terminations", "truncations")):
            _same(got[k], want[k], f"{what} at step {t}")
        _same_infos(got[4], want[4], f"infos at step {t}")
        truncated |= any(want[3].values())
        assert env.agents == r.agents
        assert np.array_equal(env.state(), r.state())
    assert truncated == (steps > 1000)
    env.close()


def test_batch_equals_a_loop_of_references(ref):
    n = 3
    env = cy_m.vec_env(n, "CoupledHalfCheetah", "1p1", num_threads=2)
    refs = [ref("1p1") for _ in range(n)]
    obs = env.reset(seed=9)[0]
    last = [r.reset(seed=9 + i)[0] for i, r in enumerate(refs)]
    for a in env.possible_agents:
        assert np.array_equal(obs[a], np.stack([o[a] for o in last]))
    rng = np.random.default_rng(1)
    for t in range(50):
        acts = {a: rng.uniform(-1, 1, (n,) + sp.shape).astype(np.float32)
                for a, sp in env.action_spaces.items()}
        obs, rew, term, trunc, infos = env.step(acts)
        state = env.state()
        for i, r in enumerate(refs):
            o, rw, tm, tr, inf = r.step({a: acts[a][i] for a in r.agents})
            for a in env.possible_agents:
                assert np.array_equal(obs[a][i], o[a]), (t, i, a)
                assert rew[a][i] == rw[a] and term[a][i] == tm[a] and trunc[a][i] == tr[a]
                for key, v in inf[a].items():
                    assert infos[a][key][i] == v, (t, i, a, key)
            assert np.array_equal(state[i], r.state()), (t, i)
    env.close()


def test_task_kwargs_are_refused():
    with pytest.raises(ValueError, match="takes no task kwargs"):
        cy_m.parallel_env("CoupledHalfCheetah", "1p1", frame_skip=2)
