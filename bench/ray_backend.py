"""python -m bench.ray_backend [--quick] [--ray-address ADDR] [--envs N] [--workers W] [--tasks ...]

The Ray backend against the local pool at equal total envs: env steps per second and time
per batch, and the Ray backend's overhead per batch (its time per batch minus the local
pool's). Systems, each stepping N envs with the same fixed actions:

    local        cypool.make_vec(task, N, num_threads=C)              one process, C threads
    ray 1x       1 actor with C threads                                the cost of the hop alone
    ray Wx       W actors with C/W threads each                        the same cores, split
    ray Wx async W actors, batch_size=N/2: recv the first half, send it back

C is the CPUs of the local machine (or of the cluster, --ray-address). Rounds alternate the
systems so that drift hits all alike; the table gives medians. Without --ray-address a local
Ray instance is started (no dashboard, 200 MB object store) and shut down at the end.
Prints a Markdown table; --json writes every sample.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

import cypool
from cypool._threads import usable_cores


def _has_atari():
    try:
        import cypool.atari._pool  # noqa: F401
        return True
    except ImportError:
        return False


def _actions(env, rows, seed=0):
    sp = env.single_action_space
    rng = np.random.default_rng(seed)
    if hasattr(sp, "n"):
        return rng.integers(0, sp.n, rows)
    return rng.uniform(sp.low, sp.high, (rows, *sp.shape)).astype(sp.dtype)


def _time_sync(env, steps, warmup):
    a = _actions(env, env.num_envs)
    env.reset(seed=0)
    for _ in range(warmup):
        env.step(a)
    t0 = time.perf_counter()
    for _ in range(steps):
        env.step(a)
    dt = time.perf_counter() - t0
    return env.num_envs * steps / dt, dt / steps


def _time_async(env, steps, warmup):
    bs = env.batch_size
    a = _actions(env, bs)
    env.async_reset(seed=0)
    for _ in range(warmup):
        *_, info = env.recv()
        env.send(a, info["env_id"])
    t0 = time.perf_counter()
    for _ in range(steps):
        *_, info = env.recv()
        env.send(a, info["env_id"])
    dt = time.perf_counter() - t0
    env.reset(seed=0)       # waits for the envs still in flight (not timed)
    return bs * steps / dt, dt / steps


def _make(system, task, n, cores, workers, address):
    from cypool.distributed import make_ray_vec

    if system == "local":
        return cypool.make_vec(task, n, num_threads=cores)
    # The three Ray systems live side by side (rounds alternate them) but only one steps at
    # a time: each actor reserves a third of its threads' CPUs so that all of them fit.
    if system == "ray 1x":
        return make_ray_vec(task, n, num_workers=1, num_threads=cores, ray_address=address,
                            num_cpus_per_worker=cores / 3)
    per = max(1, cores // workers)
    bs = n // 2 if system.endswith("async") else None
    return make_ray_vec(task, n, num_workers=workers, num_threads=per, batch_size=bs,
                        ray_address=address, num_cpus_per_worker=per / 3)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.ray_backend", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer steps and rounds (CI)")
    p.add_argument("--ray-address", default=None, help="a running cluster (default: start one)")
    p.add_argument("--envs", type=int, default=16, help="total envs N (default 16)")
    p.add_argument("--workers", type=int, default=2, help="Ray actors W (default 2)")
    p.add_argument("--cores", type=int, default=None,
                   help="C: threads of the local pool and CPUs split among the actors "
                        "(default: usable cores, or the cluster's CPUs with --ray-address)")
    p.add_argument("--tasks", nargs="+", default=None)
    p.add_argument("--json", default=None, help="write every sample here")
    args = p.parse_args(argv)

    import ray

    started = False
    if args.ray_address is None and not ray.is_initialized():
        ray.init(num_cpus=args.cores or usable_cores(), object_store_memory=200 * 2**20,
                 include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        started = True
    elif not ray.is_initialized():
        ray.init(address=args.ray_address, log_to_driver=False, logging_level="ERROR")
    cores = args.cores or (usable_cores() if started or args.ray_address is None
                           else int(ray.cluster_resources().get("CPU", 1)))
    w = args.workers
    tasks = args.tasks or (["InvertedPendulum-v5", "Hopper-v5", "Humanoid-v5"]
                           + (["Pong-v5"] if _has_atari() else []))
    systems = ["local", "ray 1x", f"ray {w}x", f"ray {w}x async"]
    steps = 100 if args.quick else 400
    rounds = 2 if args.quick else 3
    samples = {}
    for task in tasks:
        n_steps = steps // 4 if task.startswith(("Pong", "Breakout")) else steps
        envs = {s: _make(s, task, args.envs, cores, w, args.ray_address) for s in systems}
        for _ in range(rounds):
            for s, env in envs.items():
                timer = _time_async if env.is_async else _time_sync
                sps, per_batch = timer(env, n_steps, warmup=max(5, n_steps // 10))
                samples.setdefault((task, s), []).append((sps, per_batch))
        for env in envs.values():
            env.close()

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nRay backend vs local pool: N={args.envs} envs, C={cores} cores, W={w} workers; "
          f"{'quick, ' if args.quick else ''}median of {rounds} rounds; "
          f"{platform.processor() or platform.machine()}, load average {load:.1f}\n")
    print("| task | system | actors x threads | batch | env steps/s | ms/batch | "
          "vs local | overhead ms/batch |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for task in tasks:
        base = statistics.median(b for _, b in samples[(task, "local")])
        base_sps = statistics.median(s for s, _ in samples[(task, "local")])
        for s in systems:
            sps = statistics.median(x for x, _ in samples[(task, s)])
            pb = statistics.median(b for _, b in samples[(task, s)])
            layout = {"local": f"1 x {cores}", "ray 1x": f"1 x {cores}"}.get(
                s, f"{w} x {max(1, cores // w)}")
            batch = args.envs // 2 if s.endswith("async") else args.envs
            # overhead: time per batch beyond the local pool's for the same rows
            over = pb - base * batch / args.envs
            rows.append({"task": task, "system": s, "steps_per_s": sps, "s_per_batch": pb,
                         "overhead_s": over})
            print(f"| {task} | {s} | {layout} | {batch} | {sps:,.0f} | {pb * 1e3:.3f} | "
                  f"{sps / base_sps:.2f}x | {'—' if s == 'local' else f'{over * 1e3:+.3f}'} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"envs": args.envs, "workers": w, "cores": cores, "load": load,
                       "python": sys.version.split()[0], "ray": ray.__version__, "rows": rows,
                       "samples": {f"{t}|{s}": v for (t, s), v in samples.items()}}, f,
                      indent=1)
    if started:
        ray.shutdown()


if __name__ == "__main__":
    main()
