"""python -m bench.xla [--envs 16] [--threads 2] [--steps 200] [--ids Pong-v5 Hopper-v5 CartPole-v1]

env.xla() side by side, the systems' runs interleaved in one process: the time of one jitted ``lax.scan``
of ``--steps`` env steps (a fixed action batch, so the policy costs nothing; the compile is
excluded), against a Python ``step`` loop over the same actions.

  cypool-xla      cypool.make_vec(id, N, num_threads=T).xla(): step inside lax.scan
  cypool-python   the same env, ``env.step(a)`` in a Python loop
  envpool-xla     envpool.make_gymnasium(id, num_envs=N, num_threads=T).xla() (EnvPool's own
                  XLA custom calls); a failure is recorded with its exact error
  cypool-envpool-xla  (not run by default) cypool.envpool.make_gymnasium(...).xla(), EnvPool's
                  API on cypool: its calls take the handler's Python route

Hopper runs with jax_enable_x64 (float64 actions, as EnvPool's MuJoCo needs: without x64
its xla() corrupts the heap). Reports env steps/s (the median round) and cypool-xla's speed
ratio to each: per round, the other's time over cypool-xla's (the two measured next to each
other, so a load change on a shared machine weighs on both), the median over the rounds with
its quartiles.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r"""
import json, sys, time
import numpy as np
systems, env_id, n, threads, steps, reps = sys.argv[1:7]
systems, n, threads, steps, reps = systems.split(","), int(n), int(threads), int(steps), int(reps)
import jax
jax.config.update("jax_enable_x64", env_id.startswith("Hopper"))
rng = np.random.default_rng(0)
if env_id.startswith("Hopper"):
    acts = rng.uniform(-1, 1, (steps, n, 3))
else:
    acts = rng.integers(0, 6 if env_id.startswith("Pong") else 2, (steps, n)).astype(np.int32)
A = jax.device_put(acts)

def make(system):
    if system in ("envpool-xla", "cypool-envpool-xla"):
        if system == "envpool-xla":
            import envpool
        else:
            import cypool.envpool as envpool
        env = envpool.make_gymnasium(env_id, num_envs=n, num_threads=threads)
        env.async_reset()
        handle, recv, send, step = env.xla()
        handle, _ = recv(handle)
    else:
        import cypool
        env = cypool.make_vec(env_id, num_envs=n, num_threads=threads)
        env.reset(seed=0)
        if system == "cypool-python":
            def run():
                for a in acts:
                    env.step(a)
            return run
        handle, recv, send, step = env.xla()
    def body(h, a):
        h, out = step(h, a)
        return h, out[1]
    scan = jax.jit(lambda h, A: jax.lax.scan(body, h, A))
    state = [handle, env]                        # xla() holds its env weakly
    def run():
        h, r = scan(state[0], A)
        jax.block_until_ready(r)
        state[0] = h
    return run

out = {}
runs = {}
for s in systems:
    try:
        runs[s] = make(s)
        runs[s]()                                # compile / warm up
    except Exception as exc:                     # e.g. EnvPool's xla() with this jax
        out[s] = {"error": f"{type(exc).__name__}: {exc}"}
times = {s: [] for s in runs}
names = list(runs)
for k in range(reps):                            # interleaved, the order rotated each round:
    for s in names[k % len(names):] + names[:k % len(names)]:    # the same load for each
        t0 = time.perf_counter()
        runs[s]()
        times[s].append(time.perf_counter() - t0)
for s in runs:
    t = np.array(times[s])
    out[s] = {"sps": steps * n / float(np.median(t)), "best_sps": steps * n / float(t.min())}
if "cypool-xla" in runs:                         # per round: the two runs side by side
    base = np.array(times["cypool-xla"])
    for s in runs:
        if s != "cypool-xla":
            out[s]["ratio"] = float(np.median(np.array(times[s]) / base))
            out[s]["ratio_range"] = [float(x) for x in np.percentile(np.array(times[s]) / base,
                                                                     [25, 75])]
print(json.dumps(out))
"""


def run_all(systems, env_id, n, threads, steps, reps):
    """Every system in one child process, their timed runs interleaved (a busy machine's
    load then weighs on each alike); a crash of the child is every system's error."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", CHILD, ",".join(systems), env_id, str(n),
                        str(threads), str(steps), str(reps)], capture_output=True, text=True,
                       env=env, timeout=900)
    for line in r.stdout.splitlines()[::-1]:
        if line.startswith("{"):
            return json.loads(line)
    err = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
    named = [ln for ln in err if "Error" in ln or "error" in ln]
    msg = f"exit {r.returncode}: " + ((named or err or ["no output"])[-1])
    return {s: {"error": msg} for s in systems}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ids", nargs="+", default=["Pong-v5", "Hopper-v5", "CartPole-v1"])
    p.add_argument("--envs", type=int, default=16)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--systems", nargs="+",
                   default=["cypool-xla", "cypool-python", "envpool-xla"])
    p.add_argument("--json", help="write the results here")
    a = p.parse_args(argv)
    results = {}
    print(f"jitted lax.scan of {a.steps} steps, {a.envs} envs, {a.threads} threads; env "
          f"steps/s, median of {a.reps} interleaved rounds; cypool-xla's ratio: the median of "
          f"the rounds' ratios [quartiles]")
    for env_id in a.ids:
        load0 = os.getloadavg()[0]
        row = run_all(a.systems, env_id, a.envs, a.threads, a.steps, a.reps)
        row["load_average"] = [load0, os.getloadavg()[0]]   # a shared machine's other jobs
        results[env_id] = row
        base = row.get("cypool-xla", {}).get("sps")
        cells = []
        for s in a.systems:
            r = row[s]
            if "sps" in r:
                ratio = (f" (cypool-xla {r['ratio']:.2f}x [{r['ratio_range'][0]:.2f}-"
                         f"{r['ratio_range'][1]:.2f}])") if base and "ratio" in r else ""
                cells.append(f"{s} {r['sps']:,.0f}{ratio}")
            else:
                cells.append(f"{s} FAILED: {r['error']}")
        print(f"{env_id:12s} " + " | ".join(cells) +
              f" (load average {row['load_average'][0]:.1f}-{row['load_average'][1]:.1f})",
              flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    main()
