"""cypool.multiagent's batch (vec_env) against n mpe2 parallel_envs stepped in a loop: env i
seeded s + i, next-step autoreset (the step after an env's end restarts it, ignoring its
actions: rewards 0, flags False), reset_mask, any thread count; and the flat view against
SuperSuit's concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(env), n), row for row."""
import numpy as np
import pytest
import supersuit as ss

from _ma_ref import MODULES, ours, random_action, random_batch, reference

pytestmark = pytest.mark.skipif(not MODULES, reason="no mpe2 module served")


class _Loop:
    """The reference batch: n parallel_envs, next-step autoreset done by hand."""

    def __init__(self, name, n, **kw):
        self.envs = [reference(name).parallel_env(**kw) for _ in range(n)]
        self.agents = self.envs[0].possible_agents
        self.ended = [False] * n
        self.last = [None] * n

    def reset(self, seed, mask=None):
        for i, e in enumerate(self.envs):
            if mask is None or mask[i]:
                self.last[i], _ = e.reset(seed=None if seed is None else seed + i)
                self.ended[i] = False
        return {a: np.stack([o[a] for o in self.last]) for a in self.agents}

    def step(self, actions):
        n = len(self.envs)
        rew = {a: np.zeros(n) for a in self.agents}
        term = {a: np.zeros(n, bool) for a in self.agents}
        trunc = {a: np.zeros(n, bool) for a in self.agents}
        for i, e in enumerate(self.envs):
            if self.ended[i]:
                self.last[i], _ = e.reset()
                self.ended[i] = False
                continue
            o, r, t, tr, _ = e.step({a: actions[a][i] for a in e.agents})
            self.last[i] = o
            for a in self.agents:
                rew[a][i], term[a][i], trunc[a][i] = r[a], t[a], tr[a]
            self.ended[i] = not e.agents
        return ({a: np.stack([o[a] for o in self.last]) for a in self.agents}, rew, term,
                trunc)


def _same(got, want, what):
    assert list(got) == list(want), what
    for a in want:
        assert got[a].dtype == want[a].dtype or what != "obs", (what, a)
        assert np.array_equal(got[a], want[a]), f"{what}[{a}]"


@pytest.mark.parametrize("name", MODULES)
@pytest.mark.parametrize("threads", [1, 2])
def test_batch_equals_a_loop_of_references(name, threads):
    n, kw = 5, dict(max_cycles=6)
    env = ours(name).vec_env(n, num_threads=threads, **kw)
    ref = _Loop(name, n, **kw)
    rng = np.random.default_rng(7)
    _same(env.reset(seed=40)[0], ref.reset(40), "obs")
    for t in range(20):
        acts = random_batch(env.action_spaces, n, rng)
        got, want = env.step(acts), ref.step(acts)
        for g, w, what in zip(got, want, ("obs", "rew", "term", "trunc")):
            _same(g, w, f"{what} at step {t}")
        for a in env.possible_agents:
            assert np.array_equal(env.active[a], ~np.array(ref.ended))
        if t == 9:      # a partial reset with new seeds
            mask = np.array([True, False, True, False, False])
            _same(env.reset(seed=90, options={"reset_mask": mask})[0], ref.reset(90, mask),
                  "obs after reset_mask")
    env.close()


@pytest.mark.parametrize("name", MODULES)
def test_flat_view_equals_supersuit(name):
    n, kw = 3, dict(max_cycles=5)
    ref_par = reference(name).parallel_env(**kw)
    agents = ref_par.possible_agents
    sp = [ref_par.observation_space(a) for a in agents]
    if any(s != sp[0] for s in sp) or any(
            ref_par.action_space(a) != ref_par.action_space(agents[0]) for a in agents):
        with pytest.raises(ValueError, match="cannot share rows"):
            ours(name).vec_env(n, **kw).as_vector_env()
        return
    ref = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(ref_par), n, num_cpus=0,
                                base_class="gymnasium")
    flat = ours(name).vec_env(n, **kw).as_vector_env()
    assert flat.num_envs == ref.num_envs == n * len(agents)
    assert flat.observation_space == ref.observation_space
    assert flat.action_space == ref.action_space
    o1, i1 = flat.reset(seed=5)
    o2, i2 = ref.reset(seed=5)
    assert np.array_equal(o1, o2) and o1.dtype == o2.dtype and i1 == i2
    rng = np.random.default_rng(1)
    for t in range(12):
        acts = np.stack([random_action(ref.action_space, rng) for _ in range(ref.num_envs)])
        got, want = flat.step(acts), ref.step(acts)
        for g, w in zip(got[:4], want[:4]):
            assert g.dtype == w.dtype and np.array_equal(g, w), t
        assert [sorted(d) for d in got[4]] == [sorted(d) for d in want[4]]
        for g, w in zip(got[4], want[4]):
            if "terminal_observation" in w:
                assert np.array_equal(g["terminal_observation"], w["terminal_observation"])
    flat.close()

