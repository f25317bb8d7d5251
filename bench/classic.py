"""python -m bench.classic [--env CartPole-v1] [--envpool-id ID] [--envs 16 256 4096] [--threads 2]

Cheap envs (classic control, toy text), side by side in one run, each system in its own
process (a fixed action batch, so the policy costs nothing). Toy text:
``--env Taxi-v4 --envpool-id Taxi-v3 --envs 16 1024 --systems cypool gym-sync envpool``
(EnvPool serves Taxi-v3, the same game without v4's options); ``--env FrozenLake-v1``.
Box2D: ``--env LunarLander-v3 --envpool-id LunarLander-v2 --envs 16 --systems cypool cypool-1
gym-sync envpool`` (also ``--env CarRacing-v3 --envpool-id CarRacing-v3``) (EnvPool's LunarLander-v2 is its port of the same game, with its own
random numbers).

  cypool        make_vec(id, N, num_threads=T)
  cypool-1      the same on one thread (no worker team)
  gym-vector    gymnasium's numpy-vectorised env (vectorization_mode="vector_entry_point":
                CartPoleVectorEnv; another algorithm, not cypool's reference)
  gym-sync      gymnasium.make_vec(id, N, vectorization_mode="sync"): cypool's reference
  envpool      envpool.make_gymnasium(id, num_envs=N, num_threads=T)

Reports env steps/s, cypool's ratio to each system, and cypool's per-batch overhead: the
time of one step() of a single env on one thread (the façade's fixed cost per batch, in us).
"""
import argparse
import json

from bench import _child


CHILD = r"""
import json, sys, time
import numpy as np
system, env_id, n, threads, seconds, envpool_id = sys.argv[1:7]
n, threads, seconds = int(n), int(threads), float(seconds)

def rate(step, action, per_call):
    for _ in range(50):
        step(action)
    calls, t0 = 0, time.perf_counter()
    while True:
        for _ in range(20):
            step(action)
        calls += 20
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return per_call * calls / dt, dt / calls

if system.startswith("cypool"):
    import cypool
    env = cypool.make_vec(env_id, n, num_threads=1 if system == "cypool-1" else threads)
elif system == "gym-vector":
    import gymnasium as gym
    env = gym.make_vec(env_id, n, vectorization_mode="vector_entry_point")
elif system == "gym-sync":
    import gymnasium as gym
    env = gym.make_vec(env_id, n, vectorization_mode="sync")
else:
    import envpool
    env = envpool.make_gymnasium(envpool_id, num_envs=n, num_threads=threads, seed=0)
env.reset(seed=0) if system != "envpool" else env.reset()
space = env.single_action_space if hasattr(env, "single_action_space") else env.action_space
if hasattr(space, "n"):
    action = np.ones(n, np.int64)
else:
    action = np.zeros((n,) + space.shape, space.dtype)
steps, per_batch = rate(env.step, action, n)
print(json.dumps({"steps_per_s": steps, "batch_s": per_batch}))
"""

SYSTEMS = ["cypool", "cypool-1", "gym-vector", "gym-sync", "envpool"]


def run_child(system, env_id, n, threads, seconds, envpool_id=None):
    return _child.run_child(CHILD, (system, env_id, n, threads, seconds, envpool_id or env_id),
                            threads)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", default="CartPole-v1")
    ap.add_argument("--envpool-id", default=None, help="EnvPool's id for it (default: --env)")
    ap.add_argument("--envs", type=int, nargs="+", default=[16, 256, 4096])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--systems", nargs="+", default=SYSTEMS)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    results = {}
    overhead = run_child("cypool-1", args.env, 1, 1, args.seconds)
    print(f"{args.env}, {args.threads} threads; cypool's per-batch overhead (one env, one "
          f"thread): {overhead.get('batch_s', float('nan')) * 1e6:.1f} us")
    print(f"{'envs':>6} " + " ".join(f"{s:>12}" for s in args.systems)
          + "   cypool / each (env steps/s)")
    for n in args.envs:
        row = {s: run_child(s, args.env, n, args.threads, args.seconds, args.envpool_id)
               for s in args.systems}
        results[n] = row
        cells = []
        for s in args.systems:
            r = row[s]
            if "steps_per_s" not in r:
                cells.append(f"{'error':>12}")
            elif r["steps_per_s"] < 1e5:    # CarRacing: thousands, not millions
                cells.append(f"{r['steps_per_s'] / 1e3:11.2f}k")
            else:
                cells.append(f"{r['steps_per_s'] / 1e6:11.2f}M")
        ours = row.get("cypool", {}).get("steps_per_s")
        ratios = [f"{s} {ours / row[s]['steps_per_s']:.2f}x" for s in args.systems
                  if s != "cypool" and ours and "steps_per_s" in row[s]]
        print(f"{n:>6} " + " ".join(cells) + "   " + ", ".join(ratios))
        for s in args.systems:
            if "error" in row[s]:
                print(f"       {s}: {row[s]['error']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"env": args.env, "threads": args.threads, "overhead": overhead,
                       "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
