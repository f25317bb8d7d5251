"""cypool.pbt on synthetic fitness values: who is replaced, who is copied, how hyperparameters
are redrawn or perturbed, and what the lineage records."""
import json
import math

import numpy as np
import pytest

from cypool import pbt

SPACE = {
    "lr": pbt.LogUniform(1e-4, 1e-1, default=1e-3),
    "gamma": pbt.Uniform(0.9, 0.999, default=0.99, complement=True),
    "delay": pbt.IntUniform(1, 5, default=2),
    "clip": pbt.Choice((True, False), default=True),
}


def in_prior(hp):
    return (1e-4 <= hp["lr"] <= 1e-1 and 0.9 <= hp["gamma"] <= 0.999
            and hp["delay"] in range(1, 6) and hp["clip"] in (True, False))


# ---------------------------------------------------------------------- truncation
def fastpbrl_worst(f, bottom_frac):
    """fastpbrl's TruncationPBTExploit selection, written out."""
    threshold = sorted(f)[int(bottom_frac * len(f))]
    return {i for i, x in enumerate(f) if x < threshold}


@pytest.mark.parametrize("fitness", [
    [5.0, 1.0, 9.0, 3.0, 7.0, 2.0, 8.0, 0.0, 6.0, 4.0],
    [1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0],     # ties at the threshold
    [3.0, 0.0, 0.0, 3.0, -1.0, 3.0, 3.0, 3.0, 3.0, -2.0],
])
def test_truncation_replaces_members_strictly_below_the_threshold(fitness):
    t = pbt.PBT(SPACE, 10, protocol="truncation", bottom_frac=0.4, seed=0)
    old = [dict(h) for h in t.hyperparams]
    decisions = t.update(fitness)
    worst = fastpbrl_worst(fitness, 0.4)
    assert {d.dst for d in decisions} == worst
    for d in decisions:
        assert d.kind == "copy" and d.src not in worst
        assert fitness[d.src] > fitness[d.dst]
        assert d.before == old[d.dst] and d.after == t.hyperparams[d.dst]
        assert in_prior(d.after)
        assert d.changes == {n: (old[d.dst][n], d.after[n]) for n in SPACE
                             if old[d.dst][n] != d.after[n]}
    for k in set(range(10)) - worst:
        assert t.hyperparams[k] == old[k]
    if fitness[:5] == [1.0] * 5:
        assert decisions == []


def test_truncation_sources_are_uniform_over_the_rest():
    t = pbt.PBT(SPACE, 8, protocol="truncation", bottom_frac=0.25, seed=1)
    f = np.arange(8.0)                      # members 0 and 1 are the worst
    counts = np.zeros(8, int)
    for _ in range(600):
        for dst, src in t.select(f).items():
            assert dst in (0, 1)
            counts[src] += 1
    assert counts[:2].sum() == 0
    # 1200 draws over 6 sources: each near 200 (a binomial sd is ~13)
    assert np.all(np.abs(counts[2:] - 200) < 60), counts


def test_truncation_top_frac_and_perturb_explore():
    t = pbt.PBT(SPACE, 10, protocol="truncation", bottom_frac=0.2, top_frac=0.2,
                explore="perturb", mutation_rate=1.0, reset_prob=0.0, seed=2)
    f = np.array([0.0, 9.0, 1.0, 8.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    for _ in range(30):
        plan = t.select(f)
        assert set(plan) == {0, 2} and set(plan.values()) <= {1, 3}
    old = [dict(h) for h in t.hyperparams]
    for d in t.update(f):
        src = old[d.src]
        ratio = d.after["lr"] / src["lr"]
        # perturbed from the source's values (clipped to the prior's range)
        assert 1.1 - 1e-12 <= max(ratio, 1 / ratio) <= 1.5 + 1e-12 or d.after["lr"] in (1e-4, 1e-1)
        assert d.after["clip"] != src["clip"]


@pytest.mark.parametrize("frac", [0.05, 0.6, 0.0])
def test_truncation_fraction_must_select_between_one_and_half(frac):
    with pytest.raises(ValueError, match="bottom_frac"):
        pbt.PBT(SPACE, 10, protocol="truncation", bottom_frac=frac)


# ---------------------------------------------------------------------- replace_worst
def test_replace_worst_follows_sample_factory():
    N = 10
    t = pbt.PBT(SPACE, N, protocol="replace_worst", frac=0.3, mutation_rate=1.0,
                reset_prob=0.0, seed=3)
    # member 0 starts at the defaults, the others perturbed from them
    assert t.hyperparams[0] == {n: p.default for n, p in SPACE.items()}
    assert all(t.hyperparams[k] != t.hyperparams[0] for k in range(1, N))
    f = np.array([0.5, 10.0, 9.0, 8.0, 5.0, 4.5, 4.0, 3.5, 0.1, 0.2])
    # k = ceil(0.3·10) = 3: best {1, 2, 3}, worst {0, 8, 9}
    old = [dict(h) for h in t.hyperparams]
    decisions = {d.dst: d for d in t.update(f)}
    assert set(decisions) == set(range(N)) - {1, 2, 3}
    for k in (1, 2, 3):
        assert t.hyperparams[k] == old[k]
    for k in (0, 8, 9):
        assert decisions[k].kind == "copy" and decisions[k].src in (1, 2, 3)
    for k in (4, 5, 6, 7):
        assert decisions[k].kind == "perturb" and decisions[k].src is None
        assert t.hyperparams[k] != old[k]           # mutation_rate=1 moves every value
    # member 0 is the reference: it copies but is never perturbed
    assert t.hyperparams[0] == old[decisions[0].src]
    assert t.hyperparams[8] != old[decisions[8].src]


def test_replace_worst_needs_a_clear_gap():
    t = pbt.PBT(SPACE, 4, protocol="replace_worst", frac=0.25, seed=4)
    # worst is 3 (95 vs best 100): relative gap 0.05 < 0.1, so it keeps its weights
    d = {x.dst: x for x in t.update([100.0, 99.0, 98.0, 95.0])}
    assert d[3].src is None and d[3].kind == "perturb"
    d = {x.dst: x for x in t.update([100.0, 99.0, 98.0, 80.0])}
    assert d[3].src == 0 and d[3].kind == "copy"
    # absolute gap below 1e-6 never copies, whatever the relative gap
    d = {x.dst: x for x in t.update([1e-7, 0.0, 0.0, 0.0])}
    assert all(x.src is None for x in d.values())


def test_replace_worst_fraction_bounds():
    with pytest.raises(ValueError, match="frac"):
        pbt.PBT(SPACE, 10, protocol="replace_worst", frac=0.6)


# ---------------------------------------------------------------------- perturbation
def test_perturb_rules():
    t = pbt.PBT(SPACE, 2, mutation_rate=1.0, reset_prob=0.0, seed=5, protocol="truncation",
                bottom_frac=0.5)
    base = {"lr": 1e-2, "gamma": 0.99, "delay": 3, "clip": False}
    for _ in range(200):
        p = t.perturb(base)
        r = p["lr"] / base["lr"]
        assert 1.1 <= max(r, 1 / r) <= 1.5 + 1e-12
        c = (1 - p["gamma"]) / (1 - base["gamma"])
        assert (1.1 - 1e-9 <= max(c, 1 / c) <= 1.5 + 1e-9) or p["gamma"] in (0.9, 0.999)
        assert p["delay"] != 3 and 1 <= p["delay"] <= 5
        assert p["clip"] is True
    # clipping at the prior's bounds, and the way back to the default
    assert t.perturb({**base, "lr": 1e-1 * 1.0})["lr"] <= 1e-1
    back = pbt.PBT(SPACE, 2, mutation_rate=1.0, reset_prob=1.0, seed=6, bottom_frac=0.5)
    assert back.perturb({**base, "gamma": 0.95}) == \
        {"lr": 1e-3, "gamma": 0.99, "delay": 2, "clip": True}
    # a value at its default is perturbed, not reset
    assert back.perturb({**base, "gamma": 0.99})["gamma"] != 0.99
    none = pbt.PBT(SPACE, 2, mutation_rate=0.0, seed=6, bottom_frac=0.5)
    assert none.perturb(base) == base
    # each value mutates with probability mutation_rate
    some = pbt.PBT({"x": pbt.Uniform(0.0, 100.0)}, 2, mutation_rate=0.15, seed=7,
                   bottom_frac=0.5)
    moved = sum(some.perturb({"x": 50.0})["x"] != 50.0 for _ in range(2000))
    assert 220 < moved < 380


def test_priors_sample_in_range():
    rng = np.random.default_rng(0)
    lu = pbt.LogUniform(1e-4, 1.0)
    x = np.array([lu.sample(rng) for _ in range(4000)])
    assert x.min() >= 1e-4 and x.max() <= 1.0
    # log-uniform: a quarter of the draws per decade
    assert abs(np.mean(x < 1e-3) - 0.25) < 0.03
    iu = pbt.IntUniform(1, 4)
    assert set(iu.sample(rng) for _ in range(200)) == {1, 2, 3, 4}
    with pytest.raises(ValueError):
        pbt.LogUniform(0.0, 1.0)
    with pytest.raises(TypeError):
        pbt.PBT({"x": (0, 1)}, 4)


# ---------------------------------------------------------------------- lineage
def test_lineage_records_every_round():
    t = pbt.PBT(SPACE, 6, protocol="truncation", bottom_frac=0.34, seed=8)
    init = [dict(h) for h in t.hyperparams]
    rounds = [np.array([0.0, 1, 2, 3, 4, 5]), np.array([5.0, 4, 3, 2, 1, 0]),
              np.array([3.0, 0, 5, 1, 4, 2])]
    all_decisions = []
    for i, f in enumerate(rounds):
        all_decisions += t.update(f, step=1000 * (i + 1))
    lin = t.lineage
    assert lin.rounds == 3 and lin.hyperparams[0] == init
    assert lin.steps == [None, 1000, 2000, 3000]
    assert lin.fitness == [f.tolist() for f in rounds]
    assert lin.events == all_decisions and [e.round for e in lin.events] == [1, 1, 2, 2, 3, 3]
    assert {e.dst for e in lin.events if e.round == 1} == {0, 1}
    assert {e.dst for e in lin.events if e.round == 2} == {4, 5}
    h = lin.history("lr")
    assert h.shape == (4, 6)
    assert np.array_equal(h[-1], [x["lr"] for x in t.hyperparams])
    for e in lin.events:      # every change is visible in the per-round values
        for name, (old, new) in e.changes.items():
            assert lin.hyperparams[e.round - 1][e.dst][name] == old
            assert lin.hyperparams[e.round][e.dst][name] == new
    # ancestry walks the copies back to round 0
    last = lin.events[-1]
    chain = lin.ancestry(last.dst)
    assert chain[0] == (3, last.dst) and chain[1] == (2, last.src)
    assert lin.parents(last.dst)[-1] == (3, last.src)
    data = json.loads(lin.to_json())
    assert len(data["events"]) == len(lin.events) and data["hyperparams"][0][0] == \
        json.loads(json.dumps(init[0]))


def test_same_seed_same_decisions_and_bad_fitness():
    f = np.array([3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0])
    a = pbt.PBT(SPACE, 8, bottom_frac=0.25, seed=9)
    b = pbt.PBT(SPACE, 8, bottom_frac=0.25, seed=9)
    da, db = a.update(f), b.update(f)
    assert [(d.dst, d.src, d.after) for d in da] == [(d.dst, d.src, d.after) for d in db]
    with pytest.raises(ValueError, match="NaN"):
        a.update(np.where(np.arange(8) == 2, np.nan, f))
    with pytest.raises(ValueError, match="shape"):
        a.update(f[:5])
    assert a.lineage.rounds == 1


def test_ancestry_chain_on_a_scripted_history():
    t = pbt.PBT({"x": pbt.Uniform(0, 1)}, 4, bottom_frac=0.25, top_frac=0.25, seed=0)
    t.update([0.0, 1.0, 2.0, 3.0])        # 0 <- 3
    t.update([5.0, 1.0, 0.0, 3.0])        # 2 <- 0
    t.update([0.0, 9.0, 5.0, 3.0])        # 0 <- 1
    assert t.lineage.ancestry(2) == [(3, 2), (1, 0), (0, 3)]
    assert t.lineage.ancestry(0) == [(3, 0), (2, 1)]
    assert t.lineage.parents(0) == [(1, 3), (3, 1)]
    assert not math.isnan(t.lineage.history("x")[0, 0])
