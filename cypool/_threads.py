"""How many threads a pool uses."""
import os
import warnings

from cypool._validate import check_int


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
    num_threads = check_int("num_threads", num_threads, 1, what="an int or None")
    cores = usable_cores()
    if num_threads > cores:
        warnings.warn(f"cypool: num_threads={num_threads} exceeds the {cores} usable cores; "
                      "threads will compete for them", RuntimeWarning, stacklevel=3)
    return min(num_threads, num_envs)
