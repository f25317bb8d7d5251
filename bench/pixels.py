"""python -m bench.pixels [--tasks Hopper-v5 Walker2d-v5] [--envs 16] [--threads 2] [--size 84]
[--seconds 8] [--frame 480]

Pixel observations (MuJoCo, EGL; the Gymnasium-Robotics ids too, e.g. PointMaze_UMaze-v3),
side by side in one run, each system in its own process:

  cypool       make_vec(task, N, from_pixels=True, width=S, height=S, num_threads=T)
  gym-sync     SyncVectorEnv of AddRenderObservation(render_only=True) envs (one thread)
  envpool      envpool.make_gymnasium(task, from_pixels=True, ...) with the system libEGL
               preloaded (without it EnvPool 1.2.5 aborts here)
  limit        the per-core limit: one context, a bare loop of mjv_updateScene + mjr_render +
               mjr_readPixels on one env (cypool's renderer, no physics)

and the cost of render() for a video frame (480x480 by default) per env, on T threads (the
workers draw, the caller helps) and on one. Reports env
steps/s (frames/s) and the ratios cypool/envpool and cypool/gym-sync. llvmpipe renders a
few tens of frames per second per core, so runs are short; treat the numbers as +-30%.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r"""
import json, os, sys, time
import numpy as np
os.environ.setdefault("MUJOCO_GL", "egl")
system, task, n, threads, size, seconds, frame = sys.argv[1:8]
n, threads, size, seconds, frame = int(n), int(threads), int(size), float(seconds), int(frame)
rng = np.random.default_rng(0)

def timed(step, make_action):
    step(make_action())                      # warm: contexts, first frames
    count, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        step(make_action())
        count += 1
    return count / (time.perf_counter() - t0)

out = {}
if system == "cypool":
    import cypool
    env = cypool.make_vec(task, n, num_threads=threads, from_pixels=True, width=size,
                          height=size)
    env.reset(seed=0)
    shape = (n,) + env.single_action_space.shape
    out["steps_per_s"] = n * timed(env.step, lambda: rng.uniform(-1, 1, shape))
    env.close()
    def render_cost(t):                      # render() of every env: seconds per frame
        video = cypool.make_vec(task, n, num_threads=t, render_mode="rgb_array",
                                width=frame, height=frame)
        video.reset(seed=0)
        video.render()                       # warm: the contexts, the cameras
        times = []
        for _ in range(3):
            t0 = time.perf_counter(); video.render(); times.append(time.perf_counter() - t0)
        video.close()
        return sorted(times)[1] / n
    out["render_s_per_env"] = render_cost(threads)
    out["render_s_per_env_1"] = render_cost(1)
elif system == "gym-sync":
    import gymnasium as gym
    try:                                     # the Gymnasium-Robotics ids
        import gymnasium_robotics
        gym.register_envs(gymnasium_robotics)
    except ImportError:
        pass
    from gymnasium.wrappers import AddRenderObservation
    env = gym.vector.SyncVectorEnv([
        lambda: AddRenderObservation(gym.make(task, render_mode="rgb_array", width=size,
                                              height=size), render_only=True)] * n)
    env.reset(seed=0)
    shape = (n,) + env.single_action_space.shape
    out["steps_per_s"] = n * timed(env.step, lambda: rng.uniform(-1, 1, shape).astype(np.float32))
    env.close()
elif system == "envpool":
    import envpool
    env = envpool.make_gymnasium(task, num_envs=n, num_threads=threads, from_pixels=True,
                                 render_width=size, render_height=size)
    env.reset()
    shape = (n,) + env.action_space.shape
    out["steps_per_s"] = n * timed(env.step, lambda: rng.uniform(-1, 1, shape))
    env.close()
elif system == "limit":
    import cypool
    env = cypool.make_vec(task, 1, num_threads=1, render_mode="rgb_array", width=size,
                          height=size)
    env.reset(seed=0)
    out["steps_per_s"] = timed(lambda a: env.render(), lambda: None)
    env.close()
print("RESULT " + json.dumps(out))
"""


def run(system, task, args):
    env = dict(os.environ, MUJOCO_GL="egl", PYTHONPATH=ROOT)
    if system == "envpool":
        env["LD_PRELOAD"] = "libEGL.so.1"
    cmd = [sys.executable, "-c", CHILD, system, task, str(args.envs), str(args.threads),
           str(args.size), str(args.seconds), str(args.frame)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"error": (p.stderr.strip().splitlines() or ["no output"])[-1][:200]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=["Hopper-v5", "Walker2d-v5"])
    ap.add_argument("--envs", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--size", type=int, default=84)
    ap.add_argument("--frame", type=int, default=480)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--systems", nargs="+", default=["cypool", "envpool", "gym-sync", "limit"])
    args = ap.parse_args(argv)
    rows = {}
    for task in args.tasks:
        rows[task] = {s: run(s, task, args) for s in args.systems}
    print(f"pixel observations {args.size}x{args.size}, {args.envs} envs, "
          f"{args.threads} threads (env steps/s)\n")
    print("| task | " + " | ".join(args.systems) + " | cypool/envpool | cypool/gym-sync | "
          f"render() {args.frame}² s/env, {args.threads} threads / 1 |")
    print("|---" * (len(args.systems) + 4) + "|")
    for task, res in rows.items():
        def fmt(s):
            r = res.get(s, {})
            return f"{r['steps_per_s']:.1f}" if "steps_per_s" in r else r.get("error", "-")

        def ratio(a, b):
            ra, rb = res.get(a, {}), res.get(b, {})
            if "steps_per_s" in ra and "steps_per_s" in rb:
                return f"{ra['steps_per_s'] / rb['steps_per_s']:.2f}"
            return "-"

        vid = res.get("cypool", {}).get("render_s_per_env")
        one = res.get("cypool", {}).get("render_s_per_env_1")
        print(f"| {task} | " + " | ".join(fmt(s) for s in args.systems) +
              f" | {ratio('cypool', 'envpool')} | {ratio('cypool', 'gym-sync')} | "
              f"{'-' if vid is None else f'{vid:.3f} / {one:.3f}'} |")
    return rows


if __name__ == "__main__":
    main()
