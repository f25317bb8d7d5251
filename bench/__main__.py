"""python -m bench [--quick] [--check bench/thresholds.json] [--tasks ...] [--systems ...]
python -m bench --instructions [--check bench/instructions.json | --write-baseline]

Runs every (task, system) pair in its own process, interleaving rounds so that drift hits all
systems alike, and reports medians: a Markdown table on stdout, a JSON file with every sample,
the machine and versions, and (full runs) PNG plots. --check compares ratios measured in this
run (cypool against a reference system, never absolute times) with committed thresholds.

--instructions instead counts instructions per env step of cypool's step path under valgrind
(bench/instructions.py, cypool.instructions) for the quick tasks and LunarLander-v3; there
--check compares the counts with a committed baseline (fails on growth over its tolerance, 3%)
and --write-baseline records them.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from importlib.util import find_spec

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MUJOCO = ["Ant-v5", "Hopper-v5", "Humanoid-v5", "InvertedPendulum-v5"]
ATARI = ["Pong-v5", "Breakout-v5"]
_POLICY = False   # --policy: also time cypool with a numpy MLP policy in the loop


def available_systems(task):
    systems = ["cypool", "gym-sync", "gym-async", "limit"]
    if _has_async():
        systems.insert(1, "cypool-async")
    if _POLICY:
        systems += ["cypool+policy"] + (["cypool-async+policy"] if _has_async() else [])
    if find_spec("envpool") is not None:
        systems += ["envpool", "envpool-async"]
    if task in ATARI:
        systems.append("ale-vector")
    return systems


def _has_async():
    import cypool

    return hasattr(cypool.VectorEnv, "send")


def _has_atari():
    try:
        import cypool.atari._pool  # noqa: F401
        return True
    except ImportError:
        return False


def _has_box2d():
    try:
        import cypool.box2d._lunar_lander  # noqa: F401
        return True
    except ImportError:
        return False


def instruction_tasks():
    """The tasks --instructions counts by default: the quick tasks, LunarLander-v3 where
    cypool was built with Box2D, and MinAtar's Breakout (a kernel of cypool's own)."""
    return (["Hopper-v5", "Ant-v5"] + (["Pong-v5"] if _has_atari() else [])
            + (["LunarLander-v3"] if _has_box2d() else []) + ["MinAtar/Breakout-v1"])


def run_one(spec, timeout):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    try:
        out = subprocess.run([sys.executable, "-m", "bench.systems", json.dumps(spec)],
                             capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def machine():
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    from cypool._threads import usable_cores

    return {"cores": usable_cores(), "cpu": cpu, "python": platform.python_version(),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS")}


def versions():
    out = {}
    for mod in ("cypool", "numpy", "gymnasium", "mujoco", "ale_py", "envpool"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:
            out[mod] = None
    try:
        out["git_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                                           text=True, cwd=ROOT).stdout.strip() or None
    except OSError:
        out["git_commit"] = None
    return out


def progress(done, total, label):
    width = 30
    filled = int(width * done / total)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label:<40}")
    sys.stderr.flush()


def measure(tasks, systems_for, num_envs, threads, rounds, seconds, batch_size):
    jobs = [(t, s) for t in tasks for s in systems_for(t)]
    samples = {j: [] for j in jobs}
    extra = {}
    total, done = len(jobs) * rounds, 0
    for r in range(rounds):
        order = jobs if r % 2 == 0 else jobs[::-1]   # interleave, alternating the order
        for task, system in order:
            progress(done, total, f"{task} {system}")
            spec = dict(system=system, task=task, num_envs=num_envs, num_threads=threads,
                        seconds=seconds, batch_size=batch_size)
            res = run_one(spec, timeout=60 + 10 * seconds)
            done += 1
            if "error" in res:
                extra[(task, system)] = res
                continue
            samples[(task, system)].append(res["steps_per_s"])
            extra[(task, system)] = res
    progress(total, total, "done")
    sys.stderr.write("\n")
    return samples, extra


def table(tasks, systems_for, med, threads):
    lines = ["| task | system | steps/s | × gym-sync | × envpool | efficiency |",
             "|---|---|---:|---:|---:|---:|"]
    for task in tasks:
        base = med.get((task, "gym-sync"))
        for system in systems_for(task):
            v = med.get((task, system))
            if v is None:
                lines.append(f"| {task} | {system} | failed | | | |")
                continue
            ep = med.get((task, "envpool" if not system.endswith("async") else "envpool-async"))
            lim = med.get((task, "limit"))
            r_sync = f"{v / base:.2f}" if base else ""
            r_ep = f"{v / ep:.2f}" if ep and system.startswith("cypool") else ""
            eff = (f"{v / (lim * threads):.0%}" if lim and system.startswith("cypool") else "")
            lines.append(f"| {task} | {system} | {v:,.0f} | {r_sync} | {r_ep} | {eff} |")
    return "\n".join(lines)


def check(path, med):
    with open(path) as f:
        thresholds = json.load(f)
    failures = []
    for rule in thresholds["ratios"]:
        num = med.get((rule["task"], rule["system"]))
        den = med.get((rule["task"], rule["reference"]))
        if num is None or den is None:
            if rule.get("optional"):
                continue
            failures.append(f"{rule['task']}: {rule['system']} or {rule['reference']} did not run")
            continue
        ratio = num / den
        status = "ok" if ratio >= rule["min"] else "FAIL"
        print(f"check {rule['task']:>20} {rule['system']} / {rule['reference']} = {ratio:.2f} "
              f"(min {rule['min']}) {status}")
        if ratio < rule["min"]:
            failures.append(f"{rule['task']}: {rule['system']} / {rule['reference']} = "
                            f"{ratio:.2f} < {rule['min']}")
    return failures


def _curve(system, task, points, seconds):
    """steps/s for each (num_envs, num_threads) point, one process per point."""
    out = []
    for n, t in points:
        res = run_one(dict(system=system, task=task, num_envs=n, num_threads=t,
                           seconds=seconds), timeout=180)
        out.append(res.get("steps_per_s", float("nan")))
    return out


def plots(tasks, args, out_dir):
    """Steps/s against num_envs (1..64, all threads) and against num_threads (16 envs)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [1, 2, 4, 8, 16, 32, 64]
    threads = sorted({1, 2, 4, 8, 16, args.threads} & set(range(1, args.threads + 1)))
    files = []
    for task in tasks:
        # one process per env for gym-async makes its large sizes meaningless on few cores
        systems = [s for s in available_systems(task) if s not in ("gym-async",)
                   and not s.endswith("async")]
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
        for system in systems:
            if system == "limit":
                continue
            a1.plot(sizes, _curve(system, task, [(n, min(n, args.threads)) for n in sizes],
                                  args.seconds / 2), marker="o", label=system)
            if system in ("cypool", "envpool"):
                a2.plot(threads, _curve(system, task, [(16, t) for t in threads],
                                        args.seconds / 2), marker="o", label=system)
        lim = _curve("limit", task, [(16, 1)], args.seconds / 2)[0]
        a2.plot(threads, [lim * t for t in threads], "k--", label="limit × threads")
        for ax, xl, title in ((a1, "num_envs", f"{args.threads} threads"),
                              (a2, "num_threads", "16 envs")):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel(xl)
            ax.set_ylabel("env steps/s")
            ax.set_title(f"{task}, {title}")
            ax.legend(fontsize=8)
        path = os.path.join(out_dir, f"scaling_{task}.png")
        fig.tight_layout()
        fig.savefig(path, dpi=80)
        plt.close(fig)
        files.append(path)
    return files


def memory_table(tasks, systems_for, args):
    """Construction time and resident memory at 64 envs, and memory per env: (RSS at 64 envs - RSS at
    1 env) / 63, so the interpreter and imported libraries do not count."""
    lines = ["| task | system | construct 64 envs (s) | RSS at 64 envs (MiB) | per env (MiB) |",
             "|---|---|---:|---:|---:|"]
    for task in tasks:
        for system in systems_for(task):
            if system == "limit":
                continue
            one, big = (run_one(dict(system=system, task=task, num_envs=n, seconds=0.5,
                                     num_threads=min(n, args.threads), batch_size=max(1, n // 2)),
                                timeout=600) for n in (1, 64))
            if "error" in one or "error" in big:
                lines.append(f"| {task} | {system} | failed | | |")
                continue
            per_env = (big["peak_rss_kb"] - one["peak_rss_kb"]) / 1024 / 63
            lines.append(f"| {task} | {system} | {big['construct_s']:.2f} | "
                         f"{big['peak_rss_kb'] / 1024:.0f} | {per_env:.2f} |")
    return "\n".join(lines)


def _is_instruction_baseline(path):
    try:
        with open(path) as f:
            return "counts" in json.load(f)
    except (OSError, ValueError):
        return False


def instructions_main(args):
    """--instructions: count, print, save, then check against or write the baseline."""
    from cypool.instructions import format_table, valgrind_available

    from bench import instructions as bi

    if args.check and not _is_instruction_baseline(args.check):
        print(f"{args.check} is not an instruction baseline (no \"counts\"): with "
              "--instructions, --check takes bench/instructions.json; the wall-clock check "
              "is `python -m bench --quick --check bench/thresholds.json`", file=sys.stderr)
        return 2
    reason = valgrind_available()
    if reason:
        print(f"cannot count instructions: {reason}", file=sys.stderr)
        return 2
    tasks = args.tasks or instruction_tasks()
    # a check counts as many steps as its baseline did (the states visited depend on it)
    steps = args.steps or (bi.baseline_steps(args.check) if args.check else None)
    t0 = datetime.datetime.now()
    res = bi.count_tasks(tasks, steps, jobs=args.jobs)
    secs = (datetime.datetime.now() - t0).total_seconds()
    print(f"\ncypool instructions per env step, {datetime.date.today()}, valgrind callgrind, "
          f"{bi.NUM_ENVS} envs, 1 thread, seed 0 ({secs:.0f} s)\n")
    print(format_table(res))
    os.makedirs(args.out, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = os.path.join(args.out, f"instructions-{stamp}.json")
    with open(path, "w") as f:
        json.dump({"date": stamp, "machine": machine(), "versions": versions(),
                   "settings": bi.settings(tasks, steps),
                   "counts": {t: r.to_json() for t, r in res.items()},
                   "by_object": {t: r.by_object for t, r in res.items()}}, f, indent=1)
    print(f"\ncounts: {path}")
    if args.write_baseline:
        bi.write_baseline(res, args.write_baseline, settings=bi.settings(tasks, steps))
        print(f"baseline written: {args.write_baseline}")
    if args.check:
        failures = bi.check_baseline(res, args.check)
        if failures:
            print("\ninstruction check FAILED (instruction-count regression):\n  "
                  + "\n  ".join(failures))
            return 1
        print("\ninstruction check passed")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="short run for CI (< 90 s)")
    p.add_argument("--check", metavar="FILE",
                   help="wall-clock run: thresholds file (bench/thresholds.json), fail when a "
                        "ratio is below its floor; with --instructions: baseline file "
                        "(bench/instructions.json), fail when a count grows over its tolerance")
    p.add_argument("--instructions", action="store_true",
                   help="count instructions per env step under valgrind instead of timing")
    p.add_argument("--write-baseline", metavar="FILE", nargs="?", const="bench/instructions.json",
                   help="with --instructions: record the counts (default "
                        "bench/instructions.json)")
    p.add_argument("--steps", type=int, default=None,
                   help="with --instructions: step calls counted per task (default: per task)")
    p.add_argument("--jobs", type=int, default=2,
                   help="with --instructions: valgrind processes at a time (default 2)")
    p.add_argument("--tasks", nargs="*")
    p.add_argument("--systems", nargs="*")
    p.add_argument("--num-envs", type=int, default=16)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--batch-size", type=int, default=8, help="for the async systems")
    p.add_argument("--rounds", type=int, default=None)
    p.add_argument("--seconds", type=float, default=None)
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--plots", action="store_true", help="also draw scaling plots (slow)")
    p.add_argument("--policy", action="store_true",
                   help="also time cypool sync and async with a numpy MLP policy in the loop")
    p.add_argument("--memory", action="store_true",
                   help="also measure construction time and peak RSS per env at 64 envs")
    args = p.parse_args(argv)
    global _POLICY
    _POLICY = args.policy
    from cypool._threads import usable_cores

    args.threads = args.threads or usable_cores()
    if args.instructions:
        return instructions_main(args)
    if args.write_baseline:
        p.error("--write-baseline needs --instructions")
    if args.check and _is_instruction_baseline(args.check):
        p.error(f"{args.check} is an instruction baseline: use --instructions --check "
                f"{args.check}")
    if args.quick:
        tasks = args.tasks or (["Hopper-v5", "Ant-v5"] + (["Pong-v5"] if _has_atari() else []))
        rounds, seconds = args.rounds or 3, args.seconds or 1.5
        default_systems = ["cypool", "gym-sync", "envpool"]
    else:
        tasks = args.tasks or (MUJOCO + (ATARI if _has_atari() else []))
        rounds, seconds = args.rounds or 5, args.seconds or 3.0
        default_systems = None
    args.seconds = seconds

    def systems_for(task):
        avail = available_systems(task)
        wanted = args.systems or default_systems or avail
        return [s for s in wanted if s in avail]

    samples, extra = measure(tasks, systems_for, args.num_envs, args.threads, rounds, seconds,
                             args.batch_size)
    med = {k: statistics.median(v) for k, v in samples.items() if v}
    print(f"\ncypool bench, {datetime.date.today()}, {machine()['cpu']}, "
          f"{args.threads} threads, {args.num_envs} envs, median of {rounds} rounds\n")
    print(table(tasks, systems_for, med, args.threads))
    errors = {f"{t} {s}": v["error"] for (t, s), v in extra.items() if "error" in v}
    for k, v in errors.items():
        print(f"\n{k}: {v}")
    os.makedirs(args.out, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    result = {"date": stamp, "machine": machine(), "versions": versions(),
              "settings": {"num_envs": args.num_envs, "threads": args.threads, "rounds": rounds,
                           "seconds": seconds, "quick": args.quick},
              "samples": {f"{t}|{s}": v for (t, s), v in samples.items()},
              "median": {f"{t}|{s}": v for (t, s), v in med.items()},
              "runs": {f"{t}|{s}": v for (t, s), v in extra.items()}}
    path = os.path.join(args.out, f"bench-{stamp}.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    print(f"\nsamples: {path}")
    if args.memory:
        print("\n" + memory_table(tasks, systems_for, args))
    if args.plots:
        for f in plots(tasks, args, args.out):
            print(f"plot: {f}")
    if args.check:
        failures = check(args.check, med)
        if failures:
            print("\nbench check FAILED (speed regression):\n  " + "\n  ".join(failures))
            return 1
        print("\nbench check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
