"""Population-based training: exploit and explore, with a lineage record.

Two protocols, as the population libraries run them (see docs in the module's classes):

``"truncation"`` (fastpbrl's ``TruncationPBTExploit``)
    Sort the fitness values; the threshold is the value at index ``int(bottom_frac·N)``.
    Members *strictly below* it are replaced: each copies a uniformly random member among the
    others (or among the top ``ceil(top_frac·N)`` when ``top_frac`` is set, as in the original
    PBT's bottom-20%-copy-top-20%), then explores by redrawing every hyperparameter from its
    prior (``explore="redraw"``, fastpbrl) or by perturbing the copied values
    (``explore="perturb"``). ``0 < int(bottom_frac·N) <= N/2`` is required.

``"replace_worst"`` (Sample Factory's ``PopulationBasedTraining``)
    With ``k = ceil(frac·N)``, the best k are kept as they are. Each of the worst k copies a
    random member of the best k if the fitness gap exceeds both ``min_gap_abs`` and
    ``min_gap_rel`` (relative to the source's fitness). Every member outside the best k then
    perturbs its (possibly copied) hyperparameters: each one mutates with probability
    ``mutation_rate``; a float is multiplied or divided (coin flip) by U[perturb_range]; a
    complement parameter (a discount) has ``1 - x`` perturbed instead; an int is rounded;
    a choice moves to a random other option; a mutating value that is not its default goes
    back to the default with probability ``reset_prob``. Member 0 is never perturbed
    (``keep_reference=True``), so one member keeps the default settings unless replaced.

The caller owns the models: :meth:`PBT.update` returns the decisions (who copies whom) and
the new hyperparameters; the caller copies weights, optimizer state and, for env-side
settings, :meth:`cypool.population.PopulationEnv.copy_member`/``set_member_kwargs``.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

__all__ = ["Uniform", "LogUniform", "IntUniform", "Choice", "PBT", "Decision", "Lineage"]

_EPS = 1e-8


# ---------------------------------------------------------------------- priors
class _Prior:
    default = None

    def sample(self, rng: np.random.Generator):
        raise NotImplementedError

    def perturb(self, x, factor: float, up: bool, rng: np.random.Generator):
        raise NotImplementedError


@dataclass(frozen=True)
class Uniform(_Prior):
    """A float hyperparameter drawn from U[low, high].

    ``complement=True`` perturbs ``1 - x`` (a discount factor: 0.99 moves to 0.988 or 0.992,
    never past 1); ``clip=True`` keeps perturbed values inside [low, high].
    """
    low: float
    high: float
    default: float | None = None
    complement: bool = False
    clip: bool = True

    def __post_init__(self):
        if not (np.isfinite(self.low) and np.isfinite(self.high) and self.low <= self.high):
            raise ValueError(f"need finite low <= high, got ({self.low}, {self.high})")

    def sample(self, rng):
        return float(rng.uniform(self.low, self.high))

    def _mul(self, x, factor, up):
        return x * factor if up else x / factor

    def perturb(self, x, factor, up, rng):
        if self.complement:
            y = 1.0 - self._mul(1.0 - float(x), factor, up)
        else:
            y = self._mul(float(x), factor, up)
        return float(np.clip(y, self.low, self.high)) if self.clip else y


@dataclass(frozen=True)
class LogUniform(Uniform):
    """A positive float drawn log-uniformly from [low, high] (learning rates, scales)."""

    def __post_init__(self):
        super().__post_init__()
        if self.low <= 0:
            raise ValueError(f"LogUniform needs low > 0, got {self.low}")

    def sample(self, rng):
        return float(np.exp(rng.uniform(np.log(self.low), np.log(self.high))))


@dataclass(frozen=True)
class IntUniform(_Prior):
    """An int drawn uniformly from {low, ..., high} (both included); a perturbation scales it
    and rounds, moving at least one step, within [low, high]."""
    low: int
    high: int
    default: int | None = None

    def __post_init__(self):
        if self.low > self.high:
            raise ValueError(f"need low <= high, got ({self.low}, {self.high})")

    def sample(self, rng):
        return int(rng.integers(self.low, self.high + 1))

    def perturb(self, x, factor, up, rng):
        y = int(round(x * factor if up else x / factor))
        if y == x:
            y = x + (1 if up else -1)
        return int(min(max(y, self.low), self.high))


@dataclass(frozen=True)
class Choice(_Prior):
    """One of ``options`` (bools, strings, numbers); a perturbation picks another option."""
    options: tuple
    default: Any = None

    def __post_init__(self):
        if len(self.options) == 0:
            raise ValueError("Choice needs at least one option")
        object.__setattr__(self, "options", tuple(self.options))

    def sample(self, rng):
        return self.options[int(rng.integers(len(self.options)))]

    def perturb(self, x, factor, up, rng):
        others = [o for o in self.options if o != x]
        return others[int(rng.integers(len(others)))] if others else x


# ---------------------------------------------------------------------- records
@dataclass
class Decision:
    """What one PBT round did to member ``dst``.

    ``src``: the member it copied (weights and hyperparameters), or None when it kept its
    own. ``kind``: ``"copy"`` (exploit; the caller copies src's weights into dst),
    ``"perturb"`` (replace_worst: kept its weights, perturbed its hyperparameters).
    ``before``/``after``: dst's hyperparameters; ``changes``: ``{name: (old, new)}`` for the
    names whose value changed from dst's old ones.
    """
    round: int
    dst: int
    src: int | None
    kind: str
    fitness_dst: float
    fitness_src: float | None
    before: dict
    after: dict
    changes: dict = field(default_factory=dict)
    step: int | None = None

    def as_dict(self):
        return {"round": self.round, "step": self.step, "dst": self.dst, "src": self.src,
                "kind": self.kind, "fitness_dst": self.fitness_dst,
                "fitness_src": self.fitness_src, "before": self.before, "after": self.after,
                "changes": {k: list(v) for k, v in self.changes.items()}}


class Lineage:
    """Every hyperparameter value each member had, round by round, and who copied whom.

    ``events``: the :class:`Decision` of every member touched, in order. ``hyperparams[r][k]``
    is member k's dict after round r (``r = 0``: the initial draw). ``fitness[r]`` is the
    fitness passed to round r + 1 (one entry per :meth:`PBT.update`).
    """

    def __init__(self, initial: list[dict]):
        self.events: list[Decision] = []
        self.hyperparams: list[list[dict]] = [[dict(h) for h in initial]]
        self.fitness: list[list[float]] = []
        self.steps: list[int | None] = [None]

    @property
    def rounds(self) -> int:
        return len(self.hyperparams) - 1

    def history(self, name: str) -> np.ndarray:
        """``(rounds + 1, P)`` values of hyperparameter ``name`` (object dtype for
        non-numbers)."""
        vals = [[h[name] for h in row] for row in self.hyperparams]
        numeric = all(isinstance(v, (int, float, np.integer, np.floating))
                      and not isinstance(v, (bool, np.bool_)) for row in vals for v in row)
        return np.array(vals, dtype=np.float64 if numeric else object)

    def parents(self, member: int) -> list[tuple[int, int]]:
        """(round, src) for every copy into ``member``, oldest first."""
        return [(e.round, e.src) for e in self.events if e.dst == member and e.kind == "copy"]

    def ancestry(self, member: int, round: int | None = None) -> list[tuple[int, int]]:
        """The chain of (round, member) whose weights ``member`` holds after ``round``
        (default: the latest), walking copies backwards to round 0."""
        r = self.rounds if round is None else round
        chain = [(r, member)]
        m = member
        for e in reversed(self.events):
            if e.round > r or e.kind != "copy" or e.dst != m:
                continue
            chain.append((e.round - 1, e.src))
            m, r = e.src, e.round - 1
        return chain

    def to_json(self) -> str:
        return json.dumps({"hyperparams": self.hyperparams, "fitness": self.fitness,
                           "steps": self.steps, "events": [e.as_dict() for e in self.events]},
                          default=_jsonable)


def _jsonable(x):
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


# ---------------------------------------------------------------------- PBT
_PROTOCOLS = ("truncation", "replace_worst")


class PBT:
    """Exploit/explore over a population of ``population_size`` members.

    Parameters
    ----------
    space : mapping name -> prior
        The hyperparameters: :class:`Uniform`, :class:`LogUniform`, :class:`IntUniform`,
        :class:`Choice`. Their ``default`` (if any) is the value the reference member starts
        with (replace_worst) and where ``reset_prob`` sends a mutating value.
    population_size : int
        N, at least 2.
    protocol : {"truncation", "replace_worst"}
        See the module docstring.
    bottom_frac : float
        truncation: the replaced fraction, ``0 < int(bottom_frac·N) <= N/2`` (fastpbrl's
        class default 0.3; its train_pbt.py uses 0.4).
    top_frac : float or None
        truncation: sources are the top ``ceil(top_frac·N)``; None (fastpbrl): any member not
        replaced.
    explore : {"redraw", "perturb"} or None
        truncation: how a copy explores (default "redraw", fastpbrl). replace_worst always
        perturbs.
    frac : float
        replace_worst: k = ceil(frac·N) best and worst members, ``0 < frac <= 0.5``
        (Sample Factory's default 0.3).
    mutation_rate, perturb_range, reset_prob : float, (float, float), float
        Perturbation: each hyperparameter mutates with probability ``mutation_rate`` (Sample
        Factory 0.15), by a factor from U[perturb_range] (1.1, 1.5); ``reset_prob`` (0.01) sends
        it back to its default. Original PBT's explore (Jaderberg et al., x0.8 or x1.2) is
        about ``mutation_rate=1, perturb_range=(1.2, 1.2)`` (here /1.2 rather than x0.8).
    min_gap_abs, min_gap_rel : float
        replace_worst: a worst member copies only if the gap to the source exceeds both
        (Sample Factory 1e-6 and 0.1).
    keep_reference : bool
        replace_worst: member 0 is never perturbed (Sample Factory).
    initial : "prior", "default" or list of dicts
        The starting hyperparameters: drawn from the priors (default for truncation), or
        member 0 at the defaults and the others perturbed from them (default for
        replace_worst when every prior has a default), or given.
    seed : int or None
        Seed of the protocol's random choices.
    """

    def __init__(self, space: Mapping[str, _Prior], population_size: int, *,
                 protocol: str = "truncation", bottom_frac: float = 0.3,
                 top_frac: float | None = None, explore: str | None = None, frac: float = 0.3,
                 mutation_rate: float = 0.15, perturb_range=(1.1, 1.5), reset_prob: float = 0.01,
                 min_gap_abs: float = 1e-6, min_gap_rel: float = 0.1,
                 keep_reference: bool = True, initial=None, seed: int | None = None):
        if not space:
            raise ValueError("space must name at least one hyperparameter")
        for name, prior in space.items():
            if not isinstance(prior, _Prior):
                raise TypeError(f"space[{name!r}] must be a cypool.pbt prior, got "
                                f"{type(prior).__name__}")
        if isinstance(population_size, bool) or not isinstance(population_size, int) \
                or population_size < 2:
            raise ValueError(f"population_size must be an int >= 2, got {population_size!r}")
        if protocol not in _PROTOCOLS:
            raise ValueError(f"protocol must be one of {_PROTOCOLS}, got {protocol!r}")
        N = population_size
        if protocol == "truncation":
            nb = int(bottom_frac * N)
            if not 0 < nb <= N / 2:
                raise ValueError(f"bottom_frac={bottom_frac} gives int(bottom_frac*N)={nb} "
                                 f"members with N={N}; it must be in (0, N/2]")
            if top_frac is not None and not 0 < top_frac <= 1 - nb / N:
                raise ValueError(f"top_frac must be in (0, 1 - bottom], got {top_frac}")
            explore = "redraw" if explore is None else explore
            if explore not in ("redraw", "perturb"):
                raise ValueError(f"explore must be 'redraw' or 'perturb', got {explore!r}")
        else:
            if not 0 < frac <= 0.5:
                raise ValueError(f"frac must be in (0, 0.5], got {frac}")
            if explore not in (None, "perturb"):
                raise ValueError("replace_worst explores by perturbing")
            explore = "perturb"
        lo, hi = perturb_range
        if not 1.0 <= lo <= hi:
            raise ValueError(f"perturb_range must satisfy 1 <= low <= high, got {perturb_range}")
        if not 0 <= mutation_rate <= 1 or not 0 <= reset_prob <= 1:
            raise ValueError("mutation_rate and reset_prob must be probabilities")
        self.space = dict(space)
        self.population_size = N
        self.protocol = protocol
        self.bottom_frac, self.top_frac, self.frac = bottom_frac, top_frac, frac
        self.explore = explore
        self.mutation_rate, self.perturb_range, self.reset_prob = \
            mutation_rate, (float(lo), float(hi)), reset_prob
        self.min_gap_abs, self.min_gap_rel = min_gap_abs, min_gap_rel
        self.keep_reference = keep_reference
        self.rng = np.random.default_rng(seed)
        self.hyperparams = self._initial(initial)
        self.lineage = Lineage(self.hyperparams)

    # ------------------------------------------------------------------ draws
    def sample(self) -> dict:
        """One draw from the priors."""
        return {name: p.sample(self.rng) for name, p in self.space.items()}

    def perturb(self, hp: Mapping[str, Any], *, mutation_rate: float | None = None) -> dict:
        """A perturbed copy of ``hp`` (see the module docstring)."""
        rate = self.mutation_rate if mutation_rate is None else mutation_rate
        out = dict(hp)
        lo, hi = self.perturb_range
        for name, prior in self.space.items():
            if self.rng.random() >= rate:
                continue
            x = out[name]
            if prior.default is not None and x != prior.default \
                    and self.rng.random() < self.reset_prob:
                out[name] = prior.default
                continue
            factor = float(self.rng.uniform(lo, hi))
            up = bool(self.rng.random() < 0.5)
            out[name] = prior.perturb(x, factor, up, self.rng)
        return out

    def _initial(self, initial):
        N = self.population_size
        if isinstance(initial, (list, tuple)):
            if len(initial) != N:
                raise ValueError(f"initial must have {N} dicts, got {len(initial)}")
            out = []
            for k, h in enumerate(initial):
                if set(h) != set(self.space):
                    raise ValueError(f"initial[{k}] must name exactly {sorted(self.space)}")
                out.append(dict(h))
            return out
        has_defaults = all(p.default is not None for p in self.space.values())
        if initial is None:
            initial = "default" if self.protocol == "replace_worst" and has_defaults \
                else "prior"
        if initial == "prior":
            return [self.sample() for _ in range(N)]
        if initial == "default":
            if not has_defaults:
                raise ValueError("initial='default' needs a default for every hyperparameter")
            d = {name: p.default for name, p in self.space.items()}
            return [dict(d)] + [self.perturb(d) for _ in range(N - 1)]
        raise ValueError(f"initial must be 'prior', 'default' or a list of dicts, got "
                         f"{initial!r}")

    # ------------------------------------------------------------------ selection
    def select(self, fitness) -> dict[int, int | None]:
        """``{dst: src}`` for this fitness: src is the member dst copies, None for a member
        that only explores (replace_worst). Members not in the dict are left alone. Uses the
        protocol's random choices; :meth:`update` calls it."""
        f = self._check_fitness(fitness)
        N = self.population_size
        if self.protocol == "truncation":
            nb = int(self.bottom_frac * N)
            threshold = np.sort(f)[nb]
            worst = np.flatnonzero(f < threshold)
            rest = np.flatnonzero(f >= threshold)
            if self.top_frac is not None:
                nt = math.ceil(self.top_frac * N)
                order = np.argsort(-f, kind="stable")
                rest = np.sort(order[:nt])
            return {int(w): int(self.rng.choice(rest)) for w in worst}
        k = math.ceil(self.frac * N)
        order = np.argsort(-f, kind="stable")      # best first; ties: lower member id first
        best, worst = order[:k], order[N - k:]
        out: dict[int, int | None] = {}
        for p in range(N):
            if p in best:
                continue
            src = None
            if p in worst:
                cand = int(self.rng.choice(best))
                gap = f[cand] - f[p]
                rel = abs(gap / (f[cand] + _EPS))
                if abs(gap) > self.min_gap_abs and rel > self.min_gap_rel:
                    src = cand
            out[p] = src
        return out

    def _check_fitness(self, fitness):
        f = np.asarray(fitness, dtype=np.float64)
        if f.shape != (self.population_size,):
            raise ValueError(f"fitness must have shape ({self.population_size},), got "
                             f"{f.shape}")
        if np.isnan(f).any():
            raise ValueError(f"fitness has NaN for member(s) {np.flatnonzero(np.isnan(f))}")
        return f

    # ------------------------------------------------------------------ one round
    def update(self, fitness, *, step: int | None = None) -> list[Decision]:
        """Run one exploit/explore round on ``fitness`` (``(N,)``, higher is better).

        Returns the decisions, one per member touched, ordered by ``dst``; for each
        ``kind == "copy"`` the caller copies member ``src``'s weights into ``dst``. The new
        hyperparameters are in :attr:`hyperparams` (and each decision's ``after``); the
        lineage records them. ``step`` (e.g. env steps so far) is stored with the round.
        """
        f = self._check_fitness(fitness)
        plan = self.select(f)
        rnd = self.lineage.rounds + 1
        old = [dict(h) for h in self.hyperparams]
        new = [dict(h) for h in self.hyperparams]
        decisions = []
        for dst in sorted(plan):
            src = plan[dst]
            base = old[src] if src is not None else old[dst]
            if self.protocol == "truncation":
                hp = self.sample() if self.explore == "redraw" else self.perturb(base)
            elif dst == 0 and self.keep_reference:
                hp = dict(base)
            else:
                hp = self.perturb(base)
            new[dst] = hp
            changes = {n: (old[dst][n], hp[n]) for n in self.space if old[dst][n] != hp[n]}
            decisions.append(Decision(
                round=rnd, dst=dst, src=src, kind="copy" if src is not None else "perturb",
                fitness_dst=float(f[dst]), fitness_src=None if src is None else float(f[src]),
                before=old[dst], after=dict(hp), changes=changes, step=step))
        self.hyperparams = new
        self.lineage.events.extend(decisions)
        self.lineage.hyperparams.append([dict(h) for h in new])
        self.lineage.fitness.append([float(x) for x in f])
        self.lineage.steps.append(step)
        return decisions
