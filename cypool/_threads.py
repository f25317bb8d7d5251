"""How many threads a pool uses."""
import os
import warnings


def usable_cores():
    """CPUs this process may run on: the affinity mask, capped by a cgroup v2 CPU quota."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:
        n = os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            n = min(n, max(1, int(int(quota) // int(period))))
    except (OSError, ValueError):
        pass
    return max(1, n)


def resolve_num_threads(num_threads, num_envs):
    """None: OMP_NUM_THREADS if set, else the usable cores; never more threads than envs."""
    if num_threads is None:
        env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
        num_threads = int(env) if env.isdigit() and int(env) > 0 else usable_cores()
        return max(1, min(num_threads, num_envs))
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise TypeError(f"num_threads must be an int or None, got {type(num_threads).__name__}")
    if num_threads < 1:
        raise ValueError(f"num_threads must be >= 1, got {num_threads}")
    cores = usable_cores()
    if num_threads > cores:
        warnings.warn(f"cypool: num_threads={num_threads} exceeds the {cores} usable cores; "
                      "threads will compete for them", RuntimeWarning, stacklevel=3)
    return min(num_threads, num_envs)
