"""python -m bench.population [--quick] [--task Hopper-v5] [--envs-per-member 16] [--check]
python -m bench.population --learner [--quick] [--rounds 5] [--plot docs/pbt_td3_scaling.png]

Populations of P members with E envs each, for P = 1, 2, 4, 8, 16:

1. Env stepping. One cypool pool of P·E envs (``cypool.population.make_population``) against
   P separate cypool pools of E envs and P separate gymnasium SyncVectorEnvs of E envs, each
   stepped once per round; reported as env steps per second per member, and as the cost
   ratio ``t(one pool of P·E) / (P · t(one pool of E))``, whose target is at most 1.1.
2. Training. Wall time of one ARS training iteration (examples/pbt_pendulum.py: a rollout of
   a fixed number of batch steps with one batched linear policy, then the update) for P
   members in one pool, against one agent (P = 1).
3. Members of different cost (member k at frame_skip 1 + k % 4, the largest P), each with its
   own MLP policy in the loop: agent steps/s per member, the population stepped in sync (one
   batched policy call for every member, then one step) against async members
   (member_batch=1: member k's policy runs as soon as k is back, while the others step).

``--learner`` runs instead the population *learner* benchmark of examples/pbt_td3.py
(``--bench`` there): seconds per TD3 training iteration (env steps + updates) for P members
trained by one batched learner on one pool, against P sequential one-agent learners, with the
share of policy inference, env stepping, buffer inserts and updates, and the arithmetic floor
(what P members would cost if they added only their env steps and their updates' matrix
products, at torch's speed on those shapes and at the core's large-matrix speed).

Every configuration is timed in each of ``--rounds`` interleaved rounds (the order reversed
every other round, so drift hits all alike); the medians (or, with ``--estimator min``, the
fastest rounds) are reported as Markdown. The cost ratios come from paired timings: the
E-env pool is timed just before and after each P·E pool, so both see the same load from
other processes; the P = 1 row times the E-env pool against itself and shows the noise.
On a shared machine, ``--threads 1 --clock cpu`` measures the work itself.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = 1.1


def _example(name="pbt_pendulum"):
    """examples/<name>.py as a module."""
    path = os.path.join(ROOT, "examples", f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_CLOCK = {"clock": time.perf_counter}


def _time_calls(fn, seconds, min_calls=5):
    """Seconds per call of fn(), over at least `seconds` and `min_calls` calls (on the wall
    clock, or with --clock cpu the process's CPU time)."""
    clock = _CLOCK["clock"]
    n, t0 = 0, clock()
    while True:
        fn()
        n += 1
        dt = clock() - t0
        if dt >= seconds and n >= min_calls:
            return dt / n


def _paired(base, fn, seconds, min_calls):
    """(t_base, t_fn, t_fn / mean of the base timings just before and after): adjacent
    timings share the machine's load, so their ratio survives other processes' noise."""
    a = _time_calls(base, seconds, min_calls)
    b = _time_calls(fn, seconds, min_calls)
    c = _time_calls(base, seconds, min_calls)
    return (a, c), b, b / ((a + c) / 2)


def _actions(space_low, space_high, shape, count, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(space_low, space_high, shape).astype(np.float32) for _ in range(count)]


class _Stepper:
    """A callable that steps one configuration once (every env once)."""

    def __init__(self, system, task, P, E, threads):
        import gymnasium as gym

        import cypool
        from cypool.population import make_population

        self.system, self.P, self.E = system, P, E
        if system == "cypool-pop":
            self.envs = [make_population(task, P, E, seed=0, num_threads=threads)]
            space = self.envs[0].single_action_space
            shape = (P, E) + space.shape
        elif system == "cypool-separate":
            self.envs = [cypool.make_vec(task, E, seed=k, num_threads=threads, copy=False)
                         for k in range(P)]
            space = self.envs[0].single_action_space
            shape = (E,) + space.shape
        else:   # gym-separate
            self.envs = [gym.make_vec(task, E, vectorization_mode="sync") for _ in range(P)]
            space = self.envs[0].single_action_space
            shape = (E,) + space.shape
        for k, env in enumerate(self.envs):
            env.reset(seed=k)
        self.acts = _actions(space.low, space.high, shape, 16, seed=P)
        self.i = 0

    def __call__(self):
        a = self.acts[self.i % len(self.acts)]
        self.i += 1
        for env in self.envs:
            env.step(a)

    def close(self):
        for env in self.envs:
            env.close()


def bench_stepping(task, E, pops, threads, rounds, seconds, systems, est):
    """Per-call times of every (system, P), and the paired cost ratios
    t(one pool of P·E) / (P · t(one pool of E)) per P."""
    steppers = {(s, P): _Stepper(s, task, P, E, threads) for s in systems for P in pops}
    for st in steppers.values():           # warm up: caches, thread teams, first resets
        _time_calls(st, 0.0, 5)
    base = steppers.get(("cypool-pop", 1)) or _Stepper("cypool-pop", task, 1, E, threads)
    samples = {key: [] for key in steppers}
    ratios = {P: [] for P in pops}
    keys = list(steppers)
    for r in range(rounds):
        for key in (keys if r % 2 == 0 else keys[::-1]):
            system, P = key
            _progress(f"step {system} P={P} round {r + 1}/{rounds}")
            if system == "cypool-pop":
                (a, c), b, ratio = _paired(base, steppers[key], seconds, 5)
                samples[key].append(b)
                ratios[P].append(ratio / P)
            else:
                samples[key].append(_time_calls(steppers[key], seconds))
    for st in set(steppers.values()) | {base}:
        st.close()
    return ({key: est(v) for key, v in samples.items()},
            {P: est(v) for P, v in ratios.items()}, samples, ratios)


def _run_members(pop, seconds, w1, w2):
    """Agent steps/s of each member over `seconds`, with each member's policy (a 256-unit
    MLP, weights w1[k], w2[k]) in the loop: sync evaluates every member's policy in one batched
    call and steps every member; async (member_batch=1) evaluates member k's policy as soon as
    k is back and sends it again, while the other members step."""
    P, E = pop.population_size, pop.envs_per_member
    counts = np.zeros(P, np.int64)
    clock = time.perf_counter
    if pop.is_async:
        pop.async_reset(seed=0)
        t0 = clock()
        while clock() - t0 < seconds:
            obs, *_, info = pop.recv()
            k = int(info["member_id"][0])
            h = np.tanh(obs[0].astype(np.float32) @ w1[k])
            pop.send(np.tanh(h @ w2[k])[None], [k])
            counts[k] += E
        elapsed = clock() - t0
        for _ in range(P):                   # drain: the members still in flight
            pop.recv()
    else:
        obs, _ = pop.reset(seed=0)
        t0 = clock()
        while clock() - t0 < seconds:
            h = np.tanh(np.matmul(obs.astype(np.float32), w1))
            obs = pop.step(np.tanh(np.matmul(h, w2)))[0]
            counts += E
        elapsed = clock() - t0
    return counts / elapsed


def bench_mixed_cost(task, E, P, threads, rounds, seconds, est):
    """Members of different cost (member k at frame_skip 1 + k % 4), each with its own policy
    in the loop: agent steps/s per member, sync against async members (member_batch=1)."""
    from cypool.population import make_population

    mk = [{"frame_skip": 1 + k % 4} for k in range(P)]
    pops = {mode: make_population(task, P, E, num_threads=threads, member_kwargs=mk,
                                  member_batch=None if mode == "sync" else 1)
            for mode in ("sync", "async")}
    space = pops["sync"].single_action_space
    obs_dim = pops["sync"].single_observation_space.shape[0]
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((P, obs_dim, 256)) / np.sqrt(obs_dim)).astype(np.float32)
    w2 = (rng.standard_normal((P, 256, space.shape[0])) / 16).astype(np.float32)
    samples = {mode: [] for mode in pops}
    for r in range(rounds):
        for mode in (("sync", "async") if r % 2 == 0 else ("async", "sync")):
            _progress(f"mixed-cost {mode} round {r + 1}/{rounds}")
            samples[mode].append(_run_members(pops[mode], seconds, w1, w2))
    for pop in pops.values():
        pop.close()
    return ({mode: np.array([est([x[k] for x in v]) for k in range(P)])
             for mode, v in samples.items()}, [m["frame_skip"] for m in mk])


def bench_training(task, E, pops, threads, rounds, horizon, D, est):
    """Seconds per ARS iteration for each P, and paired ratios to one agent (P = 1)."""
    from cypool.population import make_population

    ex = _example()
    K = E - 2 * D
    if K < 0:
        raise SystemExit(f"--envs-per-member must be at least 2·directions = {2 * D}")
    setups = {}
    for P in sorted(set(pops) | {1}):
        pop = make_population(task, P, E, seed=0, num_threads=threads,
                              max_episode_steps=10 * horizon)
        low, high = pop.single_action_space.low, pop.single_action_space.high
        od, ad = pop.single_observation_space.shape[0], low.shape[0]
        rng = np.random.default_rng(P)
        state = {"W": np.zeros((P, ad, od)), "lr": np.full(P, 0.02),
                 "sigma": np.full(P, 0.03)}

        def iteration(pop=pop, low=low, high=high, rng=rng, state=state, od=od, ad=ad, P=P):
            delta = rng.standard_normal((P, D, ad, od))
            pol = ex.member_policies(state["W"], state["sigma"], delta, K)
            ret, _ = ex.rollout(pop, pol, horizon, low, high, stop_when_done=False)
            state["W"] = ex.ars_update(state["W"], delta, ret, state["lr"])
        iteration()
        setups[P] = (pop, iteration)
    one = setups[1][1]
    samples = {P: [] for P in pops}
    ratios = {P: [] for P in pops}
    for r in range(rounds):
        for P in (pops if r % 2 == 0 else pops[::-1]):
            _progress(f"train P={P} round {r + 1}/{rounds}")
            _, b, ratio = _paired(one, setups[P][1], 0.0, 1)
            samples[P].append(b)
            ratios[P].append(ratio)
    for pop, _ in setups.values():
        pop.close()
    return ({P: est(v) for P, v in samples.items()}, {P: est(v) for P, v in ratios.items()},
            samples, ratios)


def bench_learner(args):
    """examples/pbt_td3.py --bench with this command's --quick, --populations, --rounds,
    --threads, --json and --plot."""
    argv = ["--bench", "--bench-populations", args.populations]
    if args.quick:
        argv.append("--quick")
    if args.rounds:
        argv += ["--bench-rounds", str(args.rounds)]
    if args.threads:
        argv += ["--threads", str(args.threads)]
    if args.json:
        argv += ["--json", args.json]
    if args.plot:
        argv += ["--plot", args.plot]
    _example("pbt_td3").main(argv)
    return 0


def _progress(msg):
    sys.stderr.write(f"\r{msg:<60}")
    sys.stderr.flush()


def main(argv=None):
    from cypool._threads import resolve_num_threads, usable_cores

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short timings, 3 rounds")
    ap.add_argument("--task", default="Hopper-v5")
    ap.add_argument("--train-task", default="InvertedPendulum-v5")
    ap.add_argument("--envs-per-member", type=int, default=16)
    ap.add_argument("--populations", default="1,2,4,8,16")
    ap.add_argument("--threads", type=int, default=None,
                    help="OpenMP threads of every cypool pool (default: usable cores)")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=None, help="per timing")
    ap.add_argument("--horizon", type=int, default=None,
                    help="batch steps per training iteration")
    ap.add_argument("--no-gym", action="store_true", help="skip the gymnasium baseline")
    ap.add_argument("--estimator", choices=["median", "min"], default="median",
                    help="how the rounds' timings combine (min: least disturbed by other load)")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="cpu: the process's CPU time, robust to other load on the machine; "
                    "meaningful with --threads 1 (idle OpenMP threads spin)")
    ap.add_argument("--json", default=None, help="also write every sample here")
    ap.add_argument("--check", action="store_true",
                    help=f"exit 1 unless every P meets the {TARGET} x P target")
    ap.add_argument("--learner", action="store_true",
                    help="only the TD3 population learner benchmark (examples/pbt_td3.py "
                    "--bench): seconds per training iteration against P")
    ap.add_argument("--plot", default=None, help="--learner: write its figure here")
    args = ap.parse_args(argv)
    if args.learner:
        return bench_learner(args)
    E = args.envs_per_member
    pops = [int(p) for p in args.populations.split(",")]
    rounds = args.rounds or (3 if args.quick else 7)
    seconds = args.seconds or (0.2 if args.quick else 0.5)
    horizon = args.horizon or (50 if args.quick else 200)
    threads = args.threads
    systems = ["cypool-pop", "cypool-separate"] + ([] if args.no_gym else ["gym-separate"])
    if 1 not in pops:
        pops = [1] + pops

    est = min if args.estimator == "min" else statistics.median
    _CLOCK["clock"] = time.process_time if args.clock == "cpu" else time.perf_counter
    t_step, r_step, s_step, rs_step = bench_stepping(args.task, E, pops, threads, rounds,
                                                     seconds, systems, est)
    t_train, r_train, s_train, rs_train = bench_training(args.train_task, E, pops, threads,
                                                         rounds, horizon, D=4, est=est)
    P_mixed = max(pops)
    mixed, skips = bench_mixed_cost(args.task, E, P_mixed, threads, rounds, seconds * 4, est)
    sys.stderr.write("\n")

    cores = usable_cores()
    print(f"## Population benchmark ({args.task} stepping, {args.train_task} training)\n")
    t_lo, t_hi = resolve_num_threads(threads, E), resolve_num_threads(threads, max(pops) * E)
    print(f"E = {E} envs per member; cypool threads = {t_lo} (E envs) to {t_hi} (P·E envs); "
          f"{cores} usable cores; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}; "
          f"{args.clock} clock; {rounds} rounds of {seconds} s timings, {args.estimator} of "
          f"the rounds; ratios "
          f"from paired timings (the E-env pool timed just before and after).\n")
    print("### Env stepping: env steps/s per member (E envs each)\n")
    head = "| P | one cypool pool of P·E | P cypool pools of E |"
    rule = "|---:|---:|---:|"
    if "gym-separate" in systems:
        head += " P gymnasium SyncVectorEnvs of E |"
        rule += "---:|"
    head += f" cost ratio t(P·E) / (P·t(E)) | ≤ {TARGET} |"
    rule += "---:|:---:|"
    print(head)
    print(rule)
    ok_all = True
    for P in pops:
        row = f"| {P} |"
        for s in systems:
            row += f" {E / t_step[(s, P)]:,.0f} |"
        ok = r_step[P] <= TARGET
        ok_all &= ok
        row += f" {r_step[P]:.2f} | {'yes' if ok else 'NO'} |"
        print(row)
    print()
    print(f"Target check (stepping P·E envs in one pool costs at most {TARGET} × P × the cost "
          f"of E envs): {'PASS' if ok_all else 'FAIL'} (worst ratio "
          f"{max(r_step.values()):.2f}; the P = 1 row times the E-env pool against itself, "
          f"so its distance from 1.00 is the noise)\n")
    print(f"### Training: time per ARS iteration ({horizon} batch steps + update, "
          f"{args.train_task})\n")
    print("| P | seconds per iteration | × one agent | per member vs one agent |")
    print("|---:|---:|---:|---:|")
    for P in pops:
        print(f"| {P} | {t_train[P]:.3f} | {r_train[P]:.2f} | {r_train[P] / P:.2f} |")
    print()
    print(f"### Members of different cost, policy in the loop: {P_mixed} members, member k "
          f"at frame_skip 1 + k % 4, {args.task}\n")
    print("Agent steps/s (env steps of a member, whatever its frame skip), each member with "
          "its own 256-unit MLP policy. Sync: one batched policy call for every member, then "
          "one step of every member. Async members (member_batch=1): member k's policy runs "
          "as soon as k is back, while the other members step.\n")
    print("| frame_skip | sync: steps/s per member | async members: steps/s per member | "
          "async / sync |")
    print("|---:|---:|---:|---:|")
    for fs in sorted(set(skips)):
        idx = [k for k, f in enumerate(skips) if f == fs]
        a, b = mixed["sync"][idx].mean(), mixed["async"][idx].mean()
        print(f"| {fs} | {a:,.0f} | {b:,.0f} | {b / a:.2f} |")
    tot_s, tot_a = mixed["sync"].sum(), mixed["async"].sum()
    print(f"| all ({P_mixed} members) | {tot_s:,.0f} | {tot_a:,.0f} | {tot_a / tot_s:.2f} |")
    print()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"task": args.task, "train_task": args.train_task, "E": E,
                       "threads": threads, "cores": cores, "rounds": rounds,
                       "seconds": seconds, "horizon": horizon,
                       "step_seconds": {f"{s}|{P}": v for (s, P), v in s_step.items()},
                       "step_ratios": {str(P): v for P, v in rs_step.items()},
                       "train_seconds": {str(P): v for P, v in s_train.items()},
                       "train_ratios": {str(P): v for P, v in rs_train.items()},
                       "mixed_cost": {m: v.tolist() for m, v in mixed.items()}}, f, indent=1)
    if args.check and not ok_all:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
