"""Instructions per env step of cypool's step path, for `python -m bench --instructions`.

Each task's count is one valgrind (callgrind) child process through `cypool.instructions`:
`make_step` builds the pool the quick bench steps (16 envs, one thread, seed 0, the Atari
preprocessing every system gets), resets it with seed 0 and returns a step function that
steps it with the next of 64 fixed actions (seeded like bench.systems'). The counted loop is
`env.step` only: façade (validation, copies, autoreset policy), engine and kernel (for
LunarLander-v3 the kernel is cypool's C++ and the engine Box2D's core, linked statically into
the same extension: cypool.instructions tells Box2D's functions apart by name).

CYPOOL_BENCH_INJECT_ELEMENTS=N (test-only) adds a numpy multiply over a fixed float64 array of
N elements to every step: extra native work, so that tests/test_instructions.py can show the
check failing on a real regression without touching the library.
"""
import os
from concurrent.futures import ThreadPoolExecutor

from cypool.instructions import TOLERANCE, check_baseline, count_instructions, write_baseline

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE = os.path.join(HERE, "instructions.json")
NUM_ENVS = 16
#: step calls counted per task (each call is NUM_ENVS env steps): enough for resets to occur
#: in the counted loop, few enough that the whole check stays within ~3 minutes on 2 cores
STEPS = {"Hopper-v5": 200, "Ant-v5": 100, "Pong-v5": 40, "LunarLander-v3": 400,
         "MinAtar/Breakout-v1": 400}
WARMUP = 5
ATARI = ("Pong-v5", "Breakout-v5")


def make_step(task, num_envs=NUM_ENVS, seed=0, inject_elements=0):
    """The counted step function of one task (runs in the valgrind child)."""
    import numpy as np

    import cypool

    from bench.systems import _actions

    kw = {}
    if task in ATARI:   # as bench.systems: no FIRE reset, no clipping
        kw.update(use_fire_reset=False, episodic_life=False, reward_clip=False)
    env = cypool.make_vec(task, num_envs, num_threads=1, seed=seed, **kw)
    env.reset(seed=seed)
    actions = _actions(env.single_action_space, num_envs, 64, seed=seed)
    state = {"k": 0}
    envstep = env.step
    if inject_elements:
        extra = np.ones(int(inject_elements))

        def step():
            envstep(actions[state["k"] % 64])
            state["k"] += 1
            np.multiply(extra, 1.0, out=extra)      # the injected native cost
    else:
        def step():
            envstep(actions[state["k"] % 64])
            state["k"] += 1
    return step


def count_task(task, steps=None, inject_elements=None):
    if inject_elements is None:
        inject_elements = int(os.environ.get("CYPOOL_BENCH_INJECT_ELEMENTS", "0") or 0)
    root = os.path.dirname(HERE)
    return count_instructions("bench.instructions:make_step", steps or STEPS.get(task, 20),
                              args=(task,), kwargs={"inject_elements": inject_elements},
                              warmup=WARMUP, per_call=NUM_ENVS,
                              env={"PYTHONPATH": root + os.pathsep
                                   + os.environ.get("PYTHONPATH", "")})


def steps_for(tasks, steps=None):
    """{task: step calls}: `steps` (an int for every task, or a dict), else STEPS."""
    if isinstance(steps, dict):
        return {t: int(steps.get(t) or STEPS.get(t, 20)) for t in tasks}
    return {t: int(steps or STEPS.get(t, 20)) for t in tasks}


def baseline_steps(path):
    """The step calls per task a baseline was recorded with ({} when it does not say)."""
    import json

    try:
        with open(path) as f:
            return json.load(f).get("settings", {}).get("steps", {})
    except (OSError, ValueError):
        return {}


def count_tasks(tasks, steps=None, jobs=2):
    """{task: InstructionCount}, `jobs` valgrind children at a time (counts do not depend
    on how busy the machine is)."""
    per_task = steps_for(tasks, steps)
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        futures = {t: pool.submit(count_task, t, per_task[t]) for t in tasks}
        return {t: f.result() for t, f in futures.items()}


def settings(tasks, steps=None):
    return {"num_envs": NUM_ENVS, "num_threads": 1, "seed": 0, "warmup": WARMUP,
            "steps": steps_for(tasks, steps)}


__all__ = ["BASELINE", "TOLERANCE", "make_step", "count_task", "count_tasks", "check_baseline",
           "write_baseline", "settings", "steps_for", "baseline_steps"]
