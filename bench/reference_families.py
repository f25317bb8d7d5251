"""python -m bench.reference_families [--env MinAtar/Breakout-v1] [--envs 256] [--threads 2]

The families whose references are pure-Python gymnasium envs (MinAtar, MiniGrid/BabyAI,
Gymnasium-Robotics' mazes) against them, each system in its own process, random actions drawn
beforehand (the policy costs nothing):

  cypool      cypool.make_vec(id, N, num_threads=T)
  cypool-1    the same on one thread
  gym-sync    gymnasium.vector.SyncVectorEnv over gymnasium.make(id) (minatar, minigrid or
              gymnasium_robotics registered first): cypool's reference, seed for seed
  envpool     envpool.make_gymnasium(id, num_envs=N, num_threads=T), where EnvPool serves
              the id (MiniGrid/BabyAI: its own port, not seed-exact)

Reports env steps/s and cypool's ratio to each. E.g. ``--env MiniGrid-DoorKey-8x8-v0 --envs 16
--systems cypool gym-sync envpool``, ``--env PointMaze_UMaze-v3 --envs 16``, ``--env
FetchPush-v4 --envs 16``.
"""
import argparse
import json

from bench import _child


CHILD = r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
system, env_id, n, threads, seconds = sys.argv[1:6]
n, threads, seconds = int(n), int(threads), float(seconds)
if system.startswith("cypool"):
    import cypool
    env = cypool.make_vec(env_id, n, num_threads=1 if system == "cypool-1" else threads)
elif system == "envpool":
    import envpool
    env = envpool.make_gymnasium(env_id, num_envs=n, num_threads=threads, seed=0)
else:
    import gymnasium as gym
    if env_id.startswith("MinAtar/"):
        import minatar.gym
        minatar.gym.register_envs()
    elif env_id.startswith(("MiniGrid-", "BabyAI-")):
        import minigrid  # noqa: F401
    else:
        import gymnasium_robotics
        gym.register_envs(gymnasium_robotics)
        if env_id.startswith(("Fetch", "Hand", "FrankaKitchen")):  # the tests' PR #330 fix
            sys.path.insert(0, "tests/robotics")  # (these envs fail on MuJoCo >= 3.12)
            import _fetch_ref  # noqa: F401
    env = gym.vector.SyncVectorEnv([lambda: gym.make(env_id) for _ in range(n)])
env.reset(seed=0) if system != "envpool" else env.reset()
space = getattr(env, "single_action_space", None) or env.action_space
rng = np.random.default_rng(0)
if hasattr(space, "n"):
    acts = rng.integers(0, space.n, (64, n))
else:
    acts = rng.uniform(space.low, space.high, (64, n) + space.shape).astype(space.dtype)
for k in range(20):
    env.step(acts[k % 64])
calls, t0 = 0, time.perf_counter()
while True:
    for _ in range(10):
        env.step(acts[calls % 64])
        calls += 1
    dt = time.perf_counter() - t0
    if dt >= seconds:
        break
print(json.dumps({"steps_per_s": n * calls / dt, "batch_s": dt / calls}))
"""

SYSTEMS = ["cypool", "cypool-1", "gym-sync"]


def run_child(system, env_id, n, threads, seconds):
    return _child.run_child(CHILD, (system, env_id, n, threads, seconds), threads)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", default="MinAtar/Breakout-v1")
    ap.add_argument("--envs", type=int, nargs="+", default=[256])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--systems", nargs="+", default=SYSTEMS)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    results = {}
    print(f"{args.env}, {args.threads} threads")
    print(f"{'envs':>6} " + " ".join(f"{s:>12}" for s in args.systems)
          + "   cypool / each (env steps/s)")
    for n in args.envs:
        row = {s: run_child(s, args.env, n, args.threads, args.seconds) for s in args.systems}
        results[n] = row
        cells = [f"{'error':>12}" if "steps_per_s" not in row[s]
                 else f"{row[s]['steps_per_s'] / 1e6:11.3f}M" for s in args.systems]
        ours = row.get("cypool", {}).get("steps_per_s")
        ratios = [f"{s} {ours / row[s]['steps_per_s']:.1f}x" for s in args.systems
                  if s != "cypool" and ours and "steps_per_s" in row[s]]
        print(f"{n:>6} " + " ".join(cells) + "   " + ", ".join(ratios))
        for s in args.systems:
            if "error" in row[s]:
                print(f"       {s}: {row[s]['error']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"env": args.env, "threads": args.threads, "results": results}, f,
                      indent=1)


if __name__ == "__main__":
    main()
