"""python -m bench.goals [--env FetchPush-v4 ...] [--batch 256] [--rounds 15] [--json F]

compute_reward on a batch of goals, as hindsight relabelling calls it (SB3's HerReplayBuffer:
``env.env_method("compute_reward", achieved, desired, infos, indices=[0])``), per call:

  cypool        env.call("compute_reward", a, d, info) on a 16-env cypool pool: one result
                per env, computed once per distinct reward_type (here one kernel pass, through
                the pool's bound method: Pool.bind_method)
  reference     the reference env's own compute_reward(a, d, info) (what env_method runs on
                one env of a DummyVecEnv / SyncVectorEnv)
  ref-sync      gymnasium's SyncVectorEnv.call("compute_reward", ...) over 16 reference envs
                (one call per env, the drop-in's own call)
  cypool-1row   cypool's call on a 1-row batch: the dispatch alone (env.call, the checks of
                the arrays, the output array, the per-env tuple), the floor under every batch

Goals are drawn around the envs' own goals (rewards of both kinds); results are checked equal
to the reference's before timing. Rounds interleave the systems; medians are reported with
cypool's ratio to each.
"""
import argparse
import json
import statistics
import sys
import time
import warnings

import numpy as np

IDS = ["FetchPush-v4", "HandManipulateBlockRotateZ-v1", "HandReach-v3", "PointMaze_UMaze-v3"]
NUM_ENVS = 16


def _reference_envs(env_id, n):
    import gymnasium as gym
    import gymnasium_robotics

    sys.path.insert(0, "tests/robotics")
    import _fetch_ref  # noqa: F401  (patches the reference: Gymnasium-Robotics PR #330)

    gym.register_envs(gymnasium_robotics)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.vector.SyncVectorEnv([lambda: gym.make(env_id) for _ in range(n)])


def _per_call(fn, budget=0.05):
    """Seconds per call of fn, timed over ~budget seconds."""
    n, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
        if t >= budget:
            return t / n
        n *= 2


def measure(env_id, batch, rounds):
    import cypool

    env = cypool.make_vec(env_id, NUM_ENVS)
    ref = _reference_envs(env_id, NUM_ENVS)
    obs, _ = env.reset(seed=0)
    ref.reset(seed=0)
    rng = np.random.default_rng(0)
    g = obs["desired_goal"][rng.integers(0, NUM_ENVS, batch)]
    a = g + rng.normal(0, 1, g.shape) * np.exp(rng.uniform(-9, 0, (batch, 1)))
    if g.shape[1] == 7:
        a[:, 3:] /= np.linalg.norm(a[:, 3:], axis=-1, keepdims=True)
    info = {}
    one = ref.envs[0].unwrapped
    a1, g1 = a[:1].copy(), g[:1].copy()
    assert np.array_equal(env.call("compute_reward", a, g, info)[0],
                          one.compute_reward(a, g, info))
    systems = {
        "cypool": lambda: env.call("compute_reward", a, g, info),
        "reference": lambda: one.compute_reward(a, g, info),
        "ref-sync": lambda: ref.call("compute_reward", a, g, info),
        "cypool-1row": lambda: env.call("compute_reward", a1, g1, info),
    }
    samples = {k: [] for k in systems}
    for _ in range(rounds):
        for k, fn in systems.items():
            samples[k].append(_per_call(fn))
    env.close()
    ref.close()
    return {k: statistics.median(v) for k, v in samples.items()}, samples


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", nargs="+", default=IDS)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--json")
    args = p.parse_args(argv)
    out = {}
    print(f"compute_reward on a {args.batch}-goal batch (median µs per call; cypool's ratio)")
    print("| id | cypool | reference | ref-sync (16 envs) | cypool 1-row | × reference "
          "| × ref-sync |")
    print("|---|---|---|---|---|---|---|")
    for env_id in args.env:
        med, samples = measure(env_id, args.batch, args.rounds)
        out[env_id] = dict(median_s=med, samples_s=samples)
        c = med["cypool"]
        print(f"| {env_id} | {c * 1e6:.2f} | {med['reference'] * 1e6:.1f} | "
              f"{med['ref-sync'] * 1e6:.1f} | {med['cypool-1row'] * 1e6:.2f} | "
              f"{med['reference'] / c:.1f}× | {med['ref-sync'] / c:.1f}× |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(batch=args.batch, num_envs=NUM_ENVS, results=out), f, indent=1)


if __name__ == "__main__":
    main()
