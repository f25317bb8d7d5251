"""The per-core limit: a single-thread C loop over the bare engine (no preprocessing, no
bookkeeping), in env steps per second."""
import os
import time


def steps_per_second(task, seconds):
    if task in ("Pong-v5", "Breakout-v5"):
        return _ale(task, seconds)
    import gymnasium as gym
    import mujoco
    import numpy as np

    from cypool.mujoco.family import task_module, xml_path

    mod = task_module(task)
    m = mujoco.MjModel.from_xml_path(xml_path(mod.DEFAULTS["xml_file"]))
    d = mujoco.MjData(m)
    frame_skip = mod.DEFAULTS["frame_skip"]
    d.ctrl[:] = 0.1
    chunk = 200 * frame_skip
    mujoco.mj_step(m, d, nstep=chunk)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        mujoco.mj_step(m, d, nstep=chunk)      # the loop runs in C inside the binding
        n += chunk
        if not np.isfinite(d.qacc).all():
            mujoco.mj_resetData(m, d)
    return n / frame_skip / (time.perf_counter() - t0)


def _ale(task, seconds):
    from cypool.atari import _pool

    return _pool.per_core_limit(task.replace("-v5", ""), seconds)
