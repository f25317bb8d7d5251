"""python -m bench.multiagent [--module simple_spread_v3 | mamujoco:Ant:2x4] [--envs 16 256]

Multi-agent envs side by side in one run, each system in its own process, with a fixed
action batch (the policy costs nothing):

  cypool       cypool.multiagent.mpe2.<module>.vec_env(N, num_threads=T) (MaMuJoCo:
               cypool.multiagent.mamujoco_v1.vec_env(N, scenario, agent_conf))
  reference    N reference parallel_envs (mpe2's, or gymnasium_robotics.mamujoco_v1's)
               stepped in a Python loop (what MARL users run today), each reset when its
               agents are all done
  supersuit    SuperSuit's concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(env), N) (one
               process, num_cpus=0), the flat layout CleanRL uses

Reports env steps/s (one env step = one step of every agent of one env) and cypool's ratio
to each system.
"""
import argparse
import json

from bench import _child


CHILD = r"""
import importlib, json, sys, time
import numpy as np
system, module, n, threads, seconds = sys.argv[1:6]
n, threads, seconds = int(n), int(threads), float(seconds)
mamujoco = module.startswith("mamujoco:")
kw = {} if mamujoco else dict(max_cycles=25)

def reference_env():
    if mamujoco:
        from gymnasium_robotics import mamujoco_v1
        _, scenario, conf = module.split(":")
        return mamujoco_v1.parallel_env(scenario, conf)
    return importlib.import_module(f"mpe2.{module}").parallel_env(**kw)

def one_action(space):
    return 1 if hasattr(space, "n") else np.zeros(space.shape, space.dtype)

def rate(step):
    for _ in range(30):
        step()
    calls, t0 = 0, time.perf_counter()
    while True:
        for _ in range(10):
            step()
        calls += 10
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return n * calls / dt

if system == "cypool":
    if mamujoco:
        from cypool.multiagent import mamujoco_v1
        _, scenario, conf = module.split(":")
        env = mamujoco_v1.vec_env(n, scenario, conf, num_threads=threads)
    else:
        mod = getattr(importlib.import_module("cypool.multiagent.mpe2"), module)
        env = mod.vec_env(n, num_threads=threads, **kw)
    env.reset(seed=0)
    acts = {a: np.stack([one_action(sp)] * n) for a, sp in env.action_spaces.items()}
    step = lambda: env.step(acts)
elif system == "reference":
    envs = [reference_env() for _ in range(n)]
    for i, e in enumerate(envs):
        e.reset(seed=i)
    def step():
        for e in envs:
            if not e.agents:
                e.reset()
            else:
                e.step({a: one_action(e.action_space(a)) for a in e.agents})
else:
    import supersuit as ss
    par = reference_env()
    env = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(par), n, num_cpus=0,
                                base_class="gymnasium")
    env.reset(seed=0)
    acts = np.stack([one_action(env.action_space)] * env.num_envs)
    step = lambda: env.step(acts)
print(json.dumps({"steps_per_s": rate(step)}))
"""

SYSTEMS = ["cypool", "reference", "supersuit"]


def run_child(system, module, n, threads, seconds):
    return _child.run_child(CHILD, (system, module, n, threads, seconds), threads)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--module", default="simple_spread_v3")
    ap.add_argument("--envs", type=int, nargs="+", default=[16, 256])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--systems", nargs="+", default=SYSTEMS)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    results = {}
    print(f"mpe2 {args.module}, {args.threads} threads (env steps/s)")
    print(f"{'envs':>6} " + " ".join(f"{s:>12}" for s in args.systems) + "   cypool / each")
    for n in args.envs:
        row = {s: run_child(s, args.module, n, args.threads, args.seconds)
               for s in args.systems}
        results[n] = row
        cells = [f"{row[s]['steps_per_s'] / 1e3:11.1f}k" if "steps_per_s" in row[s]
                 else f"{'error':>12}" for s in args.systems]
        ours = row.get("cypool", {}).get("steps_per_s")
        ratios = [f"{s} {ours / row[s]['steps_per_s']:.1f}x" for s in args.systems
                  if s != "cypool" and ours and "steps_per_s" in row[s]]
        print(f"{n:>6} " + " ".join(cells) + "   " + ", ".join(ratios))
        for s in args.systems:
            if "error" in row[s]:
                print(f"       {s}: {row[s]['error']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"module": args.module, "threads": args.threads, "results": results},
                      f, indent=1)


if __name__ == "__main__":
    main()
