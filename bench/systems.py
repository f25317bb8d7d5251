"""One timed run of one system, in its own process: `python -m bench.systems JSON_SPEC`.

Every system gets the same task, settings and pre-generated actions; the run prints one JSON
line with env steps per second. CYPOOL_BENCH_SLOWDOWN_US (test-only) adds a delay to every
cypool step, so the regression check can be shown to fail.
"""
import json
import os
import sys
import time

import numpy as np

ATARI = ("Pong-v5", "Breakout-v5")


def _actions(space, num_envs, count, seed=0):
    rng = np.random.default_rng(seed)
    if hasattr(space, "n"):
        return [rng.integers(0, space.n, num_envs) for _ in range(count)]
    low, high = space.low, space.high
    return [rng.uniform(low, high, (num_envs,) + space.shape).astype(np.float32)
            for _ in range(count)]


def _make(system, task, n, threads, batch):
    """Return (step_fn(actions), single action space, reset_fn)."""
    if system in ("cypool+policy", "cypool-async+policy"):
        return _with_policy(system.split("+")[0], task, n, threads, batch)
    if system in ("cypool", "cypool-async"):
        import cypool

        kw = {} if system == "cypool" else {"batch_size": batch}
        if task in ATARI:   # the preprocessing every system gets: no FIRE reset, no clipping
            kw.update(use_fire_reset=False, episodic_life=False, reward_clip=False)
        env = cypool.make_vec(task, n, num_threads=threads, **kw)
        delay = float(os.environ.get("CYPOOL_BENCH_SLOWDOWN_US", "0")) * 1e-6
        if system == "cypool-async":
            env.async_reset()

            def step(a):
                _, _, _, _, info = env.recv()
                env.send(a[: len(info["env_id"])], info["env_id"])
        elif delay:
            def step(a):
                time.sleep(delay)
                env.step(a)
        else:
            step = env.step
        if system == "cypool":
            env.reset(seed=0)
        return step, env.single_action_space, env
    if system in ("gym-sync", "gym-async"):
        import gymnasium as gym

        mode = system.split("-")[1]
        if task in ATARI:
            import ale_py
            from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

            gym.register_envs(ale_py)
            game = task.replace("-v5", "")

            def fn():
                e = gym.make(f"ALE/{game}-v5", frameskip=1, repeat_action_probability=0.0)
                return FrameStackObservation(AtariPreprocessing(e, frame_skip=4), 4)
            env = (gym.vector.SyncVectorEnv if mode == "sync" else gym.vector.AsyncVectorEnv)(
                [fn] * n)
        else:
            env = gym.make_vec(task, n, vectorization_mode=mode)
        env.reset(seed=0)
        return env.step, env.single_action_space, env
    if system in ("envpool", "envpool-async"):
        import envpool

        b = n if system == "envpool" else batch
        kw = {"use_inter_area_resize": True, "episodic_life": False, "reward_clip": False,
              "use_fire_reset": False} if task in ATARI else {}
        env = envpool.make_gymnasium(task, num_envs=n, batch_size=b, num_threads=threads,
                                     seed=0, **kw)
        space = env.action_space
        if system == "envpool-async":
            env.async_reset()

            def step(a):
                info = env.recv()[-1]
                env.send(a[: len(info["env_id"])], info["env_id"])
            return step, space, env
        env.reset()
        return env.step, space, env
    if system == "ale-vector":
        from ale_py.vector_env import AtariVectorEnv

        game = task.replace("-v5", "").lower()
        env = AtariVectorEnv(game=game, num_envs=n, num_threads=threads,
                             batch_size=n, repeat_action_probability=0.0)
        env.reset(seed=0)
        return env.step, env.single_action_space, env
    raise ValueError(f"unknown system {system}")


def _with_policy(system, task, n, threads, batch):
    """cypool with a policy in the loop: a small numpy MLP (two 256-unit layers) evaluated on
    every batch of observations in the calling thread. Async overlaps it with stepping."""
    import cypool

    kw = {} if system == "cypool" else {"batch_size": batch}
    if task in ATARI:
        kw.update(use_fire_reset=False, episodic_life=False, reward_clip=False)
    env = cypool.make_vec(task, n, num_threads=threads, **kw)
    space = env.single_action_space
    obs_dim = int(np.prod(env.single_observation_space.shape))
    out_dim = space.n if hasattr(space, "n") else int(np.prod(space.shape))
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((obs_dim, 256)).astype(np.float32) / np.sqrt(obs_dim)
    w2 = rng.standard_normal((256, 256)).astype(np.float32) / 16
    w3 = rng.standard_normal((256, out_dim)).astype(np.float32) / 16

    def policy(obs):
        h = np.tanh(obs.reshape(len(obs), -1).astype(np.float32) @ w1)
        y = np.tanh(np.tanh(h @ w2) @ w3)
        return y.argmax(1) if hasattr(space, "n") else y

    if system == "cypool":
        state = {"obs": env.reset(seed=0)[0]}

        def step(_):
            state["obs"] = env.step(policy(state["obs"]))[0]
    else:
        env.async_reset(seed=0)

        def step(_):
            obs, _, _, _, info = env.recv()
            env.send(policy(obs), info["env_id"])
    return step, space, env


def _rss_kb(pid):
    """Resident memory of a process now (Linux /proc)."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except OSError:
        return 0


def _children(pid):
    """Every descendant (subprocess systems: gym-async's workers)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        out += kids
        todo += kids
    return out


def run(spec):
    system, task = spec["system"], spec["task"]
    n, threads, seconds = spec["num_envs"], spec["num_threads"], spec["seconds"]
    batch = spec.get("batch_size") or n
    if system == "limit":
        from bench.limit import steps_per_second

        return {"steps_per_s": steps_per_second(task, seconds)}
    t0 = time.perf_counter()
    step, space, env = _make(system, task, n, threads, batch)
    construct_s = time.perf_counter() - t0
    acts = _actions(space, n, 64)
    rows = batch if system.endswith("async") else n
    end = time.perf_counter() + min(0.5, seconds / 4)
    k = 0
    while time.perf_counter() < end:          # warm-up
        step(acts[k % 64])
        k += 1
    k, t0 = 0, time.perf_counter()
    while True:
        step(acts[k % 64])
        k += 1
        if k % 8 == 0 and time.perf_counter() - t0 >= seconds:
            break
    elapsed = time.perf_counter() - t0
    rss_kb = _rss_kb(os.getpid()) + sum(_rss_kb(c) for c in _children(os.getpid()))
    return {"steps_per_s": k * rows / elapsed, "construct_s": construct_s, "peak_rss_kb": rss_kb}


if __name__ == "__main__":
    print(json.dumps(run(json.loads(sys.argv[1]))))
