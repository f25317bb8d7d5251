"""The per-core limit: a single-thread C loop over the bare engine (no preprocessing, no
bookkeeping), in env steps per second."""
import time


def steps_per_second(task, seconds):
    if task in ("Pong-v5", "Breakout-v5"):
        return _ale(task, seconds)
    return _mujoco(task, seconds)


def _mujoco(task, seconds):
    """One thread stepping 16 envs of the task through cypool's engine alone (mj_step,
    observations, rewards, resets, all in one nogil call per batch; no façade): the same
    states the benchmarked systems visit, which a fixed mj_step loop does not reproduce
    (random actions end most Humanoid episodes within a few dozen steps)."""
    import numpy as np

    import cypool

    env = cypool.make_vec(task, 16, num_threads=1, seed=0)
    env.reset()
    engine, family = env.unwrapped._engine, env.unwrapped._family
    rng = np.random.default_rng(0)
    space = env.single_action_space
    acts = [rng.uniform(space.low, space.high, (16,) + space.shape) for _ in range(64)]
    ops = engine.ops_arr
    done = np.zeros(16, bool)
    n, k, t0 = 0, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        family.load_actions(acts[k % 64], None)
        ops[:] = np.where(done, 2, 1)          # reset envs that ended, step the others
        engine.run()
        done = engine.terminated | engine.truncated
        n += 16
        k += 1
    env.close()
    return n / (time.perf_counter() - t0)


def _ale(task, seconds):
    from cypool.atari import _pool

    return _pool.per_core_limit(task.replace("-v5", ""), seconds)
