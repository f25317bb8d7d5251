"""``python -m cypool`` (the ``cypool`` command): how this cypool was built
(``cypool.show_config()``), then a short speed run on this machine: cypool's pool against
gymnasium's ``SyncVectorEnv`` of the same envs, in env steps per second."""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

__all__ = ["main"]


def _gym_atari(n):
    """gymnasium's counterpart of cypool's Atari defaults (ale-py with AtariPreprocessing and a
    4-frame stack, as EnvPool's options); None without OpenCV (AtariPreprocessing needs it)."""
    import gymnasium as gym

    try:
        import ale_py
        import cv2  # noqa: F401
    except ImportError:
        return None
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    gym.register_envs(ale_py)
    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)   # no banner amid the lines

    def make():
        e = gym.make("ALE/Pong-v5", frameskip=1, repeat_action_probability=0.0)
        return FrameStackObservation(AtariPreprocessing(e, noop_max=30, frame_skip=4), 4)

    return gym.vector.SyncVectorEnv([make] * n)


def _gym_vec(env_id, n):
    import gymnasium as gym

    if env_id == "Pong-v5":
        return _gym_atari(n)
    return gym.make_vec(env_id, n, vectorization_mode="sync")


def _rate(env, seconds, seed=0):
    """Env steps per second of ``env`` (a vector env) stepped with random actions for about
    ``seconds`` (actions drawn beforehand, so the policy costs nothing)."""
    env.action_space.seed(seed)
    actions = [env.action_space.sample() for _ in range(64)]
    env.reset(seed=seed)
    for a in actions[:8]:                          # warm up (first-step allocations, caches)
        env.step(a)
    steps, start = 0, time.perf_counter()
    deadline = start + seconds
    while True:
        for a in actions:
            env.step(a)
        steps += len(actions)
        now = time.perf_counter()
        if now >= deadline:
            return steps * env.num_envs / (now - start)


# pip's names of the modules the references import
_PIP_NAMES = {"cv2": "opencv-python-headless"}


def _measure(label, make, seconds, out):
    print(f"  {label} ...", end="", file=out, flush=True)
    try:
        env = make()
    except ImportError as e:                       # a reference's package is missing
        name = (e.name or "").split(".")[0]
        fix = f"pip install {_PIP_NAMES.get(name, name)}" if name else "pip install ."
        print(f" n/a ({type(e).__name__}: {e}; fix: {fix})", file=out, flush=True)
        return None
    except Exception as e:
        print(f" n/a ({type(e).__name__}: {e})", file=out, flush=True)
        return None
    if env is None:
        print(" n/a (needs OpenCV: pip install opencv-python-headless)", file=out, flush=True)
        return None
    try:
        rate = _rate(env, seconds)
    finally:
        env.close()
    print(f" {rate:,.0f} env steps/s", file=out, flush=True)
    return rate


def speed_table(env_ids, num_envs, seconds, out=sys.stdout):
    """Measure each id with cypool and with gymnasium; print and return the rows
    ``(env_id, cypool rate, gymnasium rate or None)``."""
    from cypool.make import make_vec

    rows = []
    for env_id in env_ids:
        ours = _measure(f"{env_id} cypool.make_vec({num_envs} envs)",
                        lambda: make_vec(env_id, num_envs), seconds, out)
        ref = _measure(f"{env_id} gymnasium SyncVectorEnv({num_envs} envs)",
                       lambda: _gym_vec(env_id, num_envs), seconds, out)
        rows.append((env_id, ours, ref))
    fmt = "{:<14} {:>6} {:>18} {:>20} {:>8}"
    print(file=out)
    print(fmt.format("env", "envs", "cypool steps/s", "gymnasium steps/s", "ratio"), file=out)
    for env_id, ours, ref in rows:
        ratio = f"{ours / ref:.1f}x" if ours and ref else "-"
        print(fmt.format(env_id, num_envs, f"{ours:,.0f}" if ours else "n/a",
                         f"{ref:,.0f}" if ref else "n/a", ratio), file=out)
    return rows


def _positive(kind):
    def parse(s):
        v = kind(s)
        if not v > 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {s}")
        return v
    return parse


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="cypool", description="Print how cypool was built, then a short speed run: cypool "
        "against gymnasium's SyncVectorEnv on Hopper-v5, CartPole-v1 and Pong-v5.")
    p.add_argument("--quick", action="store_true", help="about 1 s per measurement")
    p.add_argument("--envs", type=_positive(int), default=16, metavar="N",
                   help="envs per pool (default 16)")
    p.add_argument("--seconds", type=_positive(float), default=None, metavar="S",
                   help="seconds per measurement (default 2.5; 1 with --quick)")
    args = p.parse_args(argv)
    seconds = args.seconds if args.seconds is not None else (1.0 if args.quick else 2.5)

    from cypool.config import show_config
    from cypool.registry import list_envs

    show_config()
    ids = ["Hopper-v5", "CartPole-v1"] + (["Pong-v5"] if "Pong-v5" in list_envs() else [])
    from cypool._threads import resolve_num_threads

    print(f"\nspeed run: {args.envs} envs ({resolve_num_threads(None, args.envs)} threads for "
          f"cypool), {seconds:g} s per measurement, random actions")
    speed_table(ids, args.envs, seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
