"""python -m bench.dmc [--tasks cheetah-run walker-walk humanoid-run] [--envs 16] [--threads 2]

The dm_control suite side by side, each system in its own process, one fixed action batch
(uniform in the action bounds, so the policy costs nothing):

  cypool     cypool.make_vec("dm_control/<domain>-<task>-v0", N, num_threads=T)
  dm_control a Python loop over N suite.load(domain, task) Environments (what cypool equals)
  envpool    envpool.make_gymnasium("<Domain><Task>-v1", num_envs=N, num_threads=T)

Episodes run to dm_control's time limits (autoresets included). Each system runs --repeat
times, interleaved, and its best rate counts (on a shared machine the best run is the one
least disturbed). Reports env steps/s and cypool's ratio to each system.

--pixels S: pixel observations, S x S frames from --camera (default 0, the camera pixel RL
papers use) after every step, under MUJOCO_GL (default egl):

  cypool     make_vec(..., from_pixels=True, width=S, height=S, camera_id=C): frames rendered
             on the worker threads, one GL context each
  dm_control pixels.Wrapper(env, render_kwargs=dict(width=S, height=S, camera_id=C)), i.e.
             physics.render after every step (the same frames, bit for bit)
  envpool    make_gymnasium(..., from_pixels=True, render_width=S, render_height=S,
             render_camera_id=C)
"""
import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, sys, time
import numpy as np
system, domain, task, n, threads, seconds, size, camera = sys.argv[1:9]
n, threads, seconds, size, camera = int(n), int(threads), float(seconds), int(size), int(camera)
rng = np.random.default_rng(0)
# pixels: a step is tens of milliseconds per env (llvmpipe), so fewer warm-up and timed calls
warm, chunk = (2, 1) if size else (20, 10)

def rate(step):
    for _ in range(warm):
        step()
    calls, t0 = 0, time.perf_counter()
    while True:
        for _ in range(chunk):
            step()
        calls += chunk
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return n * calls / dt

if system == "cypool":
    import cypool
    px = dict(from_pixels=True, width=size, height=size, camera_id=camera) if size else {}
    env = cypool.make_vec(f"dm_control/{domain}-{task}-v0", n, num_threads=threads, **px)
    env.reset(seed=0)
    sp = env.single_action_space
    a = rng.uniform(sp.low, sp.high, (n,) + sp.shape)
    r = rate(lambda: env.step(a))
elif system == "dm_control":
    from dm_control import suite
    envs = [suite.load(domain, task, task_kwargs={"random": i}) for i in range(n)]
    if size:
        from dm_control.suite.wrappers import pixels
        envs = [pixels.Wrapper(e, render_kwargs=dict(width=size, height=size,
                                                     camera_id=camera)) for e in envs]
    spec = envs[0].action_spec()
    a = rng.uniform(spec.minimum, spec.maximum, (n,) + spec.shape)
    for e in envs:
        e.reset()
    def step():
        for i, e in enumerate(envs):
            e.step(a[i])
    r = rate(step)
else:
    import envpool
    name = "".join(w if w.isupper() else w.capitalize() for w in domain.split("_")) + \
        "".join(w.capitalize() for w in task.split("_")) + "-v1"
    px = dict(from_pixels=True, render_width=size, render_height=size,
              render_camera_id=camera) if size else {}
    env = envpool.make_gymnasium(name, num_envs=n, num_threads=threads, seed=0, **px)
    env.reset()
    sp = env.action_space
    a = rng.uniform(sp.low, sp.high, (n,) + sp.shape)
    r = rate(lambda: env.step(a))
print(json.dumps({"rate": r}))
"""


def run(system, domain, task, n, threads, seconds, python, size=0, camera=0):
    env = dict(os.environ)
    if size:
        env.setdefault("MUJOCO_GL", "egl")
    out = subprocess.run([python, "-c", CHILD, system, domain, task, str(n), str(threads),
                          str(seconds), str(size), str(camera)], capture_output=True,
                         text=True, timeout=600, env=env)
    if out.returncode:
        # EnvPool's MuJoCo renderer reports on stdout before it aborts
        lines = [x for x in (out.stderr or out.stdout or "").splitlines() if x.strip()]
        return None, lines[-1] if lines else f"failed (exit status {out.returncode})"
    return json.loads(out.stdout.strip().splitlines()[-1])["rate"], None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", nargs="+", default=["cheetah-run", "walker-walk", "humanoid-run"])
    p.add_argument("--envs", type=int, default=16)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--systems", nargs="+", default=["cypool", "dm_control", "envpool"])
    p.add_argument("--python", default=sys.executable, help="interpreter of the children")
    p.add_argument("--pixels", type=int, default=0, metavar="S",
                   help="S x S pixel observations (0: state observations)")
    p.add_argument("--camera", type=int, default=0, help="the camera of --pixels")
    args = p.parse_args(argv)
    if args.pixels:
        print(f"pixels: {args.pixels}x{args.pixels} frames from camera {args.camera}, "
              f"MUJOCO_GL={os.environ.get('MUJOCO_GL', 'egl')}")
    print(f"{'task':<20}" + "".join(f"{s:>14}" for s in args.systems) + "   cypool / other")
    for name in args.tasks:
        domain, task = name.split("-", 1)
        rates = {s: None for s in args.systems}
        for _ in range(args.repeat):
            for s in args.systems:
                r, err = run(s, domain, task, args.envs, args.threads, args.seconds,
                             args.python, args.pixels, args.camera)
                if err:
                    print(f"  {s}: {err}", file=sys.stderr)
                elif rates[s] is None or r > rates[s]:
                    rates[s] = r
        cells = "".join(f"{r:>14,.0f}" if r else f"{'-':>14}" for r in rates.values())
        ratios = ", ".join(f"{rates['cypool'] / r:.2f}x {s}" for s, r in rates.items()
                           if s != "cypool" and r and rates.get("cypool"))
        print(f"{name:<20}{cells}   {ratios}", flush=True)


if __name__ == "__main__":
    main()
