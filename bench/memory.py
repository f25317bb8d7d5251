"""python -m bench.memory [--tasks Pong-v5 Ant-v5] [--envs 64] [--threads 2]
python -m bench.memory --scaling [--tasks Pong-v5 Ant-v5] [--plot docs/startup_scaling.png]

Start-up and memory, each system in its own fresh process: the time to make the pool and
run its first reset, and the resident memory it adds per env (RSS after the first reset
minus RSS after importing the libraries, divided by the number of envs), for

  cypool      cypool.make_vec(task, N, num_threads=T); reset(seed=0)
  envpool     envpool.make_gymnasium(task, num_envs=N, num_threads=T); reset()
  ale-vector  ale_py.vector_env.AtariVectorEnv (Atari only), N envs, T threads
  gym-sync    gymnasium SyncVectorEnv (MuJoCo: gymnasium's env; Atari: ale-py's with
              AtariPreprocessing + FrameStackObservation, frameskip 1)

Also cypool on one thread, for the parallel start-up ratio.

``--scaling``: make + first reset of cypool and EnvPool against num_envs (16, 64, 256) and
threads (1, 2, or ``--scaling-threads``), each point in a fresh process, as a Markdown table
and, with ``--plot``, a figure (seconds against num_envs, one line per system and thread
count, log-log).
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
system, task, n, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
atari = not task.split("-")[0] in ("Ant", "Hopper", "Humanoid", "HalfCheetah", "Walker2d")

def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])

import numpy as np, gymnasium as gym
if system.startswith("cypool"):
    import cypool
    import cypool.mujoco
    if atari:
        import cypool.atari._pool
elif system == "envpool":
    import envpool
elif system == "ale-vector":
    from ale_py.vector_env import AtariVectorEnv
else:
    import ale_py
    gym.register_envs(ale_py)
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation
base = rss_kb()
t0 = time.perf_counter()
if system.startswith("cypool"):
    env = cypool.make_vec(task, n, num_threads=threads)
    env.reset(seed=0)
elif system == "envpool":
    env = envpool.make_gymnasium(task, num_envs=n, num_threads=threads)
    env.reset()
elif system == "ale-vector":
    env = AtariVectorEnv(task.split("-")[0].lower(), num_envs=n, num_threads=threads)
    env.reset(seed=0)
elif atari:
    def make():
        e = gym.make("ALE/" + task, frameskip=1)
        return FrameStackObservation(AtariPreprocessing(e), 4)
    env = gym.vector.SyncVectorEnv([make] * n)
    env.reset(seed=0)
else:
    env = gym.vector.SyncVectorEnv([lambda: gym.make(task)] * n)
    env.reset(seed=0)
elapsed = time.perf_counter() - t0
print("RESULT " + json.dumps({"seconds": elapsed, "mb_per_env": (rss_kb() - base) / 1024 / n}))
"""


def run(system, task, n, threads):
    cmd = [sys.executable, "-c", CHILD, system, task, str(n), str(threads)]
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"error": (p.stderr.strip().splitlines() or ["no output"])[-1][:160]}


def scaling(tasks, sizes, threads, plot):
    """make + first reset against num_envs and threads, cypool and EnvPool."""
    rows = []
    print("make + first reset (seconds) against num_envs\n")
    print("| task | system | threads | " + " | ".join(f"{n} envs" for n in sizes)
          + " | cypool / envpool |")
    print("|---|---|---:|" + "---:|" * len(sizes) + "---|")
    for task in tasks:
        res = {}
        for system in ("cypool", "envpool"):
            for t in threads:
                res[system, t] = [run(system, task, n, t) for n in sizes]
        for (system, t), points in res.items():
            cells = [f"{p['seconds']:.2f}" if "error" not in p else p["error"] for p in points]
            ratio = ""
            if system == "cypool":
                ratio = " / ".join(
                    f"{p['seconds'] / q['seconds']:.2f}"
                    if "error" not in p and "error" not in q else "-"
                    for p, q in zip(points, res["envpool", t]))
            print(f"| {task} | {system} | {t} | " + " | ".join(cells) + f" | {ratio} |")
            rows.append((task, system, t, points))
    if plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(tasks), figsize=(5 * len(tasks), 4), squeeze=False)
        for ax, task in zip(axes[0], tasks):
            for (tk, system, t, points) in rows:
                if tk != task:
                    continue
                ok = [(n, p["seconds"]) for n, p in zip(sizes, points) if "error" not in p]
                if ok:
                    ax.plot(*zip(*ok), marker="o", linestyle="-" if system == "cypool" else "--",
                            label=f"{system}, {t} thread{'s' if t > 1 else ''}")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("num_envs")
            ax.set_ylabel("make + first reset (s)")
            ax.set_title(task)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
        fig.tight_layout()
        fig.savefig(plot, dpi=100)
        print(f"\nplot: {plot}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=["Pong-v5", "Ant-v5"])
    ap.add_argument("--envs", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--scaling", action="store_true",
                    help="make + first reset against num_envs and threads (cypool, EnvPool)")
    ap.add_argument("--scaling-envs", default="16,64,256")
    ap.add_argument("--scaling-threads", default="1,2")
    ap.add_argument("--plot", default=None, help="--scaling: write the figure here")
    args = ap.parse_args(argv)
    if args.scaling:
        return scaling(args.tasks, [int(x) for x in args.scaling_envs.split(",")],
                       [int(x) for x in args.scaling_threads.split(",")], args.plot)
    print(f"make + first reset, {args.envs} envs, {args.threads} threads\n")
    print("| task | system | seconds | MB per env | × envpool (time) |")
    print("|---|---|---:|---:|---:|")
    for task in args.tasks:
        atari = task.split("-")[0] not in ("Ant", "Hopper", "Humanoid", "HalfCheetah",
                                           "Walker2d")
        systems = [("cypool", args.threads), ("cypool 1 thread", 1), ("envpool", args.threads)]
        if atari:
            systems.append(("ale-vector", args.threads))
        systems.append(("gym-sync", 1))
        res = {name: run(name.split()[0], task, args.envs, t) for name, t in systems}
        ref = res.get("envpool", {}).get("seconds")
        for name, _ in systems:
            r = res[name]
            if "error" in r:
                print(f"| {task} | {name} | {r['error']} | | |")
                continue
            ratio = f"{r['seconds'] / ref:.2f}" if ref else "-"
            print(f"| {task} | {name} | {r['seconds']:.2f} | {r['mb_per_env']:.2f} | {ratio} |")


if __name__ == "__main__":
    main()
