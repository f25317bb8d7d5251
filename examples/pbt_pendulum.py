"""Population-based training of linear policies on InvertedPendulum-v5, all members in one
cypool pool, with a numpy learner vectorised over the population.

    python examples/pbt_pendulum.py [--iterations 30] [--population 8] [--protocol truncation]
                                    [--tune-frame-skip] [--out pbt_pendulum]

The learner is Augmented Random Search (Mania et al. 2018, "V1": no state normalisation): each
member holds a linear policy ``a = clip(W obs)`` and, each iteration, rolls out D antithetic
perturbations ``W ± sigma·delta`` on 2·D envs and the unperturbed W on K more envs (the
member's fitness), then steps ``W += lr / (D·std(returns)) · sum_d (r+_d - r-_d) delta_d``.
Every member's rollout shares one ``(P, E, ...)`` batch: one einsum computes every action,
one ``pop.step`` steps every env.

PBT tunes ``lr`` and ``sigma`` (and, with --tune-frame-skip, the env's ``frame_skip``, an
env-side setting held per member in C and changed with ``set_member_kwargs``). Every
``--pbt-every`` iterations the fitness (mean unperturbed return) goes to ``cypool.pbt.PBT``;
each replaced member copies its source's weights (every iteration starts all envs afresh
with ``pop.reset()``, so no member reset is needed here; a learner that keeps episodes
running across rounds would call ``pop.reset_member(dst)``).

Writes ``<out>.png`` (per-member returns and the hyperparameter lineage) and
``<out>_lineage.json``, and prints the best and mean return per iteration.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from cypool import pbt
from cypool.population import make_population

TASK = "InvertedPendulum-v5"


def member_policies(W, sigma, delta, K):
    """(P, E, act, obs) policies: W + sigma·delta, W - sigma·delta, then K copies of W."""
    P, D = delta.shape[:2]
    s = sigma[:, None, None, None]
    return np.concatenate([W[:, None] + s * delta, W[:, None] - s * delta,
                           np.repeat(W[:, None], K, axis=1)], axis=1)


def rollout(pop, policies, horizon, low, high, stop_when_done=True):
    """Run one episode per env (steps after an env's episode ends are not counted);
    return the (P, E) episode returns and the number of batch steps taken."""
    obs, _ = pop.reset()
    ret = np.zeros(obs.shape[:2])
    alive = np.ones(obs.shape[:2], np.bool_)
    steps = 0
    for _ in range(horizon):
        act = np.clip(np.einsum("peij,pej->pei", policies, obs), low, high)
        obs, rew, term, trunc, _ = pop.step(act)
        steps += 1
        ret += rew * alive
        alive &= ~(term | trunc)
        if stop_when_done and not alive.any():
            break
    return ret, steps


def ars_update(W, delta, ret, lr):
    """One ARS V1 step per member, all members at once."""
    D = delta.shape[1]
    r_plus, r_minus = ret[:, :D], ret[:, D:2 * D]
    spread = np.concatenate([r_plus, r_minus], axis=1).std(axis=1) + 1e-8
    step = np.einsum("pd,pdij->pij", r_plus - r_minus, delta)
    return W + (lr / (D * spread))[:, None, None] * step


def plot(path, returns, lineage, space, copies):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    P = returns.shape[1]
    it = np.arange(returns.shape[0])
    names = list(space)
    fig, axes = plt.subplots(1 + len(names), 1, figsize=(9, 3.2 * (1 + len(names))),
                             sharex=True)
    colors = plt.cm.tab10(np.arange(P) % 10)
    ax = axes[0]
    for k in range(P):
        ax.plot(it, returns[:, k], color=colors[k], lw=1, alpha=0.8, label=f"member {k}")
    ax.plot(it, returns.max(axis=1), color="k", lw=2.5, label="best")
    for (i, dst, src) in copies:
        ax.plot(i, returns[i, dst], "x", color=colors[dst], ms=7)
    ax.set_ylabel("return (unperturbed policy)")
    ax.set_title(f"PBT on {TASK}: per-member returns (x: member replaced by a copy)")
    ax.legend(fontsize=7, ncol=5, loc="upper left")
    rounds_at = list(lineage["at"]) + [returns.shape[0] - 1]
    for ax, name in zip(axes[1:], names):
        vals = lineage["values"][name]          # (rounds + 1, P)
        vals = np.concatenate([vals, vals[-1:]])
        for k in range(P):
            ax.step(rounds_at, vals[:, k], where="post", color=colors[k], lw=1.2)
        for (i, dst, src) in copies:           # o: dst's new value, labelled with its source
            r = rounds_at.index(i)
            ax.plot(i, vals[r, dst], "o", color=colors[dst], ms=4)
            ax.annotate(f"<{src}", (i, vals[r, dst]), fontsize=7, color=colors[dst],
                        xytext=(3, 2), textcoords="offset points")
        if isinstance(space[name], pbt.LogUniform):
            ax.set_yscale("log")
        ax.set_ylabel(name)
    axes[-1].set_xlabel("iteration")
    axes[1].set_title("hyperparameter lineage (o <k: copied member k's weights, then "
                      "explored)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--population", type=int, default=8)
    ap.add_argument("--directions", type=int, default=4, help="ARS directions D per member")
    ap.add_argument("--eval-envs", type=int, default=4, help="envs K running the unperturbed W")
    ap.add_argument("--horizon", type=int, default=1000)
    ap.add_argument("--pbt-every", type=int, default=3)
    ap.add_argument("--protocol", choices=["truncation", "replace_worst"], default="truncation")
    ap.add_argument("--tune-frame-skip", action="store_true",
                    help="also tune the env's frame_skip (per-member kwargs in C)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="pbt_pendulum")
    args = ap.parse_args(argv)

    P, D, K = args.population, args.directions, args.eval_envs
    E = 2 * D + K
    space = {"lr": pbt.LogUniform(1e-3, 1.0, default=0.02),
             "sigma": pbt.LogUniform(1e-3, 1.0, default=0.03)}
    if args.tune_frame_skip:
        space["frame_skip"] = pbt.IntUniform(1, 4, default=2)
    kw = dict(protocol=args.protocol, seed=args.seed)
    if args.protocol == "truncation":
        kw.update(bottom_frac=0.25, initial="prior")
    else:
        kw.update(frac=0.25, mutation_rate=0.5, initial="prior")
    trainer = pbt.PBT(space, P, **kw)
    hp = trainer.hyperparams
    member_kwargs = [{"frame_skip": h["frame_skip"]} for h in hp] \
        if args.tune_frame_skip else None
    pop = make_population(TASK, P, E, member_kwargs=member_kwargs, seed=args.seed,
                          max_episode_steps=args.horizon, num_threads=args.threads)
    low, high = pop.single_action_space.low, pop.single_action_space.high
    obs_dim, act_dim = pop.single_observation_space.shape[0], low.shape[0]
    rng = np.random.default_rng(args.seed)
    W = np.zeros((P, act_dim, obs_dim))
    returns, copies, at = [], [], [0]
    t_start = time.perf_counter()
    print(f"{TASK}: P={P} members x E={E} envs ({D} directions x 2 + {K} eval) in one pool, "
          f"{pop.num_threads} threads, protocol={args.protocol}")
    print("iter  best_return  mean_return  batch_steps  seconds")
    for i in range(args.iterations):
        t0 = time.perf_counter()
        lr = np.array([h["lr"] for h in hp])
        sigma = np.array([h["sigma"] for h in hp])
        delta = rng.standard_normal((P, D, act_dim, obs_dim))
        ret, steps = rollout(pop, member_policies(W, sigma, delta, K), args.horizon, low, high)
        fitness = ret[:, 2 * D:].mean(axis=1)
        returns.append(fitness)
        W = ars_update(W, delta, ret, lr)
        print(f"{i:4d}  {fitness.max():11.1f}  {fitness.mean():11.1f}  {steps:11d}  "
              f"{time.perf_counter() - t0:7.2f}")
        if (i + 1) % args.pbt_every == 0 and i + 1 < args.iterations:
            decisions = trainer.update(fitness, step=int(pop.member_statistics()["env_steps"]
                                                         .sum()))
            for d in decisions:
                if d.kind == "copy":
                    W[d.dst] = W[d.src]
                    copies.append((i, d.dst, d.src))
                if args.tune_frame_skip and "frame_skip" in d.changes:
                    # env side: the member's rows of the pool's parameter matrix, in C; the
                    # next iteration's reset starts its episodes under the new setting
                    pop.set_member_kwargs(d.dst, frame_skip=d.after["frame_skip"])
            hp = trainer.hyperparams
            at.append(i)
            moved = ", ".join(f"{d.dst}<-{d.src}" for d in decisions if d.kind == "copy")
            print(f"      PBT round {trainer.lineage.rounds}: {moved or 'no copies'}")
    wall = time.perf_counter() - t_start
    returns = np.array(returns)
    stats = pop.member_statistics()
    print(f"best return: first iteration {returns[0].max():.1f}, last {returns[-1].max():.1f}; "
          f"population mean {returns[0].mean():.1f} -> {returns[-1].mean():.1f}")
    print(f"env steps per member: {stats['env_steps'].tolist()}; total "
          f"{int(stats['env_steps'].sum())} in {wall:.1f} s "
          f"({stats['env_steps'].sum() / wall:.0f} env steps/s with the learner)")
    print("final hyperparameters:", json.dumps(hp))
    # fitness on fresh episodes: 10 per member from fixed seeds, on a separate pool
    final = pop.evaluate(lambda o: np.clip(np.einsum("pao,peo->pea", W, o), low, high),
                         episodes=10, seed=args.seed + 1)["return"].mean(axis=1)
    print(f"evaluation, 10 episodes per member: best {final.max():.1f}, "
          f"mean {final.mean():.1f}")
    values = {n: trainer.lineage.history(n) for n in space}
    plot(f"{args.out}.png", returns, {"at": at, "values": values}, space, copies)
    with open(f"{args.out}_lineage.json", "w") as f:
        f.write(trainer.lineage.to_json())
    print(f"wrote {args.out}.png and {args.out}_lineage.json")
    pop.close()
    return returns


if __name__ == "__main__":
    main()
