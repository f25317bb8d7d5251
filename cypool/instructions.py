"""Instructions per step, counted under valgrind: a speed-regression check that does not flake.

Wall-clock checks on shared CI machines need floors far below what is measured, so a small
slowdown passes them. The number of instructions a step executes does not depend on the load,
the clock or the core, so it can be held to a few percent. This module counts it with
valgrind's callgrind tool for any step function, splits it by the object file the instructions
ran in (the Python interpreter, numpy, cypool's extensions, the engine libraries, libc and the
like), and compares counts with a committed baseline file.

How a count is taken (`count_instructions`): a child process runs under
``valgrind --tool=callgrind --dump-before=_PyEval_GetSwitchInterval``. It builds the step
function (``factory(*args, **kwargs)``), calls it ``warmup`` times, then calls
``sys.getswitchinterval()`` (whose C implementation is the marker: callgrind writes its
counters out and zeroes them each time it is entered) around an empty loop and around a loop of
``steps`` calls. The counted loop's segment minus the empty loop's segment is the cost of
exactly ``steps`` calls: start-up, imports, construction, warm-up, the marker and teardown are
all left out. One thread (``OMP_NUM_THREADS=1``), ``PYTHONHASHSEED=0``, ``LD_BIND_NOW=1`` (no
lazy symbol binding inside the loop); the factory fixes the seeds and actions, so two runs give
the same count to well under 0.5%. By default everything before the loops runs uninstrumented
(``--instr-atstart=no``, several times faster: building 16 Pong envs costs 25 billion
instructions in ALE's palette set-up) and the parent switches instrumentation on with
``vgdb ... instrumentation on`` once the child is warm.

Use it in your own CI::

    # myproject/ci_bench.py: a module-level factory the child process can import
    def make_step():
        import numpy as np, cypool
        env = cypool.make_vec("Hopper-v5", 16, num_threads=1, seed=0)
        obs, _ = env.reset(seed=0)
        policy = load_policy()                      # yours
        def step():
            nonlocal obs
            obs = env.step(policy(obs))[0]
        return step

    # once, on purpose, and commit the file:
    python -m cypool.instructions myproject.ci_bench:make_step --name ppo-step \\
        --per-call 16 --steps 50 --write-baseline ci/instructions.json
    # in CI: exit 1 when the count grows by more than the baseline's tolerance (3%)
    python -m cypool.instructions myproject.ci_bench:make_step --name ppo-step \\
        --per-call 16 --steps 50 --check ci/instructions.json

or from Python (a pytest test, say)::

    from cypool.instructions import count_instructions, check_baseline
    res = count_instructions("myproject.ci_bench:make_step", steps=50, per_call=16)
    assert not check_baseline({"ppo-step": res}, "ci/instructions.json")

Counts depend on the build (compiler, flags, library versions) and on the CPU features
valgrind reports, so refresh the baseline when those change, on the machine that runs CI.
valgrind runs code about 50 times slower than native: count tens of steps, not thousands.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile

#: default allowed growth of a count over its baseline (a fraction: 0.03 is 3%)
TOLERANCE = 0.03
#: the C function callgrind dumps its counters before: ``sys.getswitchinterval()`` calls it
#: and nothing on a step path does; exported by CPython's shared library and executable
MARKER = "_PyEval_GetSwitchInterval"
#: object-file groups, in report order; "python" is the Python side, the rest native
GROUPS = ("python", "numpy", "cypool", "engine", "system", "other")

__all__ = ["TOLERANCE", "GROUPS", "InstructionCount", "ValgrindUnavailable", "CountError",
           "valgrind_available", "count_instructions", "check_baseline", "write_baseline",
           "format_table"]


class ValgrindUnavailable(RuntimeError):
    """valgrind (with its callgrind tool) is not installed or does not run here."""


class CountError(RuntimeError):
    """The child process failed, or its dumps were not the ones the marker should give."""


@dataclasses.dataclass
class InstructionCount:
    """Instructions of ``calls`` calls of a step function (start-up excluded).

    Attributes
    ----------
    calls : int
        Step calls counted.
    per_call : int
        Env steps per call (``num_envs`` for a vector env's ``step``).
    total : int
        Instructions of all counted calls.
    by_object : dict[str, int]
        ``total`` split by the object file the instructions ran in (full paths).
    """

    calls: int
    per_call: int
    total: int
    by_object: dict

    @property
    def per_step(self) -> float:
        """Instructions per env step: total / (calls * per_call)."""
        return self.total / (self.calls * self.per_call)

    @property
    def groups(self) -> dict:
        """Instructions per env step by group (see `GROUPS`, `group_of`)."""
        out = dict.fromkeys(GROUPS, 0.0)
        for obj, n in self.by_object.items():
            out[group_of(obj)] += n / (self.calls * self.per_call)
        return out

    @property
    def python_side(self) -> float:
        """Instructions per env step in the interpreter (libpython, the python executable and
        the standard library's extension modules)."""
        return self.groups["python"]

    @property
    def native_side(self) -> float:
        """Instructions per env step everywhere else (numpy, cypool, engines, libc...)."""
        return self.per_step - self.python_side

    def to_json(self) -> dict:
        return {"instructions_per_step": round(self.per_step, 1),
                "python": round(self.python_side, 1), "native": round(self.native_side, 1),
                "groups": {k: round(v, 1) for k, v in self.groups.items()},
                "calls": self.calls, "per_call": self.per_call}


def group_of(obj: str) -> str:
    """The group of an object file path: python, numpy, cypool, engine, system or other."""
    if obj.endswith(")") and " (" in obj:    # an engine's functions inside another object
        return "engine"
    base = os.path.basename(obj)
    if base.startswith(("libpython", "python")) or "/lib-dynload/" in obj:
        return "python"
    if "/cypool/" in obj:
        return "cypool"
    if "/numpy/" in obj or "/numpy.libs/" in obj:
        return "numpy"
    if base.startswith(("libmujoco", "libale", "_ale_py", "ale_py")) or "/ale_py/" in obj:
        return "engine"
    if base.startswith(("libc.", "libm.", "libmvec", "ld-linux", "libgomp", "libstdc++",
                        "libgcc_s", "libpthread", "libdl", "libffi", "libz.", "vgpreload")):
        return "system"
    return "other"


def valgrind_available(valgrind: str | None = None) -> str | None:
    """Why counting cannot run here (a reason to show, e.g. in a pytest skip), or None."""
    exe = valgrind or shutil.which("valgrind")
    if exe is None:
        return "valgrind is not installed (apt-get install valgrind)"
    try:
        out = subprocess.run([exe, "--tool=callgrind", "--version"], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"valgrind does not run: {e}"
    if out.returncode != 0:
        return f"valgrind's callgrind does not run: {out.stderr.strip()[-200:]}"
    return None


def _factory_ref(factory) -> str:
    if isinstance(factory, str):
        if ":" not in factory:
            raise ValueError(f"factory {factory!r} must be 'module:function'")
        return factory
    mod, name = getattr(factory, "__module__", None), getattr(factory, "__qualname__", "")
    if not mod or mod == "__main__" or "<" in name:
        raise ValueError("the factory must be importable by a child process: define it at "
                         "module level in an importable module, or pass 'module:function'")
    return f"{mod}:{name}"


def count_instructions(factory, steps: int = 50, *, args=(), kwargs=None, warmup: int = 5,
                       per_call: int = 1, env: dict | None = None, valgrind: str | None = None,
                       timeout: float = 900, fast_startup: bool = True,
                       keep_dir: str | None = None) -> InstructionCount:
    """Count the instructions of ``steps`` calls of a step function under callgrind.

    Parameters
    ----------
    factory : callable or str
        A module-level function (or ``"module:function"``) that the child process imports
        and calls as ``factory(*args, **kwargs)``; it builds everything (env, policy, fixed
        actions) and returns the zero-argument step function to count. Fix every seed in it.
    steps : int
        Step calls counted (after ``warmup`` uncounted ones). valgrind is ~50x slower than
        native: tens of calls are enough.
    args, kwargs
        Passed to the factory (pickled).
    warmup : int
        Uncounted calls first (first-call allocations, caches).
    per_call : int
        Env steps per call, so that ``per_step`` is per env step (``num_envs`` for a vector
        env).
    env : dict or None
        Extra environment variables for the child (``OMP_NUM_THREADS=1``,
        ``PYTHONHASHSEED=0`` and ``LD_BIND_NOW=1`` are set unless given here).
    valgrind : str or None
        The valgrind executable; default: ``valgrind`` on PATH.
    timeout : float
        Seconds before the child is killed.
    fast_startup : bool
        Run imports, construction and warm-up uninstrumented (``--instr-atstart=no``, ~5x
        faster than instrumented) and switch callgrind's instrumentation on with ``vgdb``
        just before the counted loops. The count is the same either way; when vgdb cannot
        reach the child it falls back to instrumenting from the start.
    keep_dir : str or None
        Keep callgrind's dumps there (for ``callgrind_annotate``) instead of a temporary
        folder: ``callgrind.out.3`` is the counted loop, ``callgrind.out.2`` the empty one.

    Returns
    -------
    InstructionCount

    Raises
    ------
    ValgrindUnavailable
        valgrind is missing or does not run.
    CountError
        The child failed, or the marker did not give the expected dumps.
    """
    if steps < 1 or warmup < 0 or per_call < 1:
        raise ValueError("steps and per_call must be >= 1 and warmup >= 0")
    reason = valgrind_available(valgrind)
    if reason:
        raise ValgrindUnavailable(reason)
    exe = valgrind or shutil.which("valgrind")
    vgdb = os.path.join(os.path.dirname(exe), "vgdb")
    if fast_startup and not os.access(vgdb, os.X_OK):
        fast_startup = False
    spec = {"factory": _factory_ref(factory), "args": tuple(args), "kwargs": dict(kwargs or {}),
            "steps": int(steps), "warmup": int(warmup), "sys_path": list(sys.path)}
    work = keep_dir or tempfile.mkdtemp(prefix="cypool-instr-")
    os.makedirs(work, exist_ok=True)
    try:
        spec_path = os.path.join(work, "spec.pkl")
        with open(spec_path, "wb") as f:
            pickle.dump(spec, f)
        child_env = dict(os.environ)
        child_env.update({"OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "LD_BIND_NOW": "1"})
        child_env.update(env or {})
        out_base = os.path.join(work, "callgrind.out")
        parts = _run_child(exe, vgdb if fast_startup else None, spec, spec_path, work,
                           child_env, timeout)
        if parts is None:   # vgdb could not switch instrumentation on: instrument throughout
            parts = _run_child(exe, None, spec, spec_path, work, child_env, timeout)
        if parts != ["callgrind.out.1", "callgrind.out.2", "callgrind.out.3"]:
            raise CountError(f"expected 3 callgrind dumps before {MARKER}, got {parts}: "
                             "this Python does not expose the marker symbol, or the step "
                             "calls sys.getswitchinterval() itself")
        empty = _self_cost_by_object(out_base + ".2")
        loop = _self_cost_by_object(out_base + ".3")
    finally:
        if keep_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    by_object = {o: loop.get(o, 0) - empty.get(o, 0) for o in set(loop) | set(empty)}
    by_object = {o: n for o, n in by_object.items() if n}
    return InstructionCount(calls=int(steps), per_call=int(per_call),
                            total=sum(by_object.values()), by_object=by_object)


_READY = "cypool-instructions: ready"


def _run_child(exe, vgdb, spec, spec_path, work, child_env, timeout):
    """One valgrind child; returns the sorted names of its numbered dumps, or None when
    `vgdb` was given and could not switch instrumentation on."""
    import threading

    out_base = os.path.join(work, "callgrind.out")
    go = os.path.join(work, "go")
    for name in os.listdir(work):
        if name.startswith("callgrind.out") or name == "go":
            os.remove(os.path.join(work, name))
    cmd = [exe, "--tool=callgrind", f"--dump-before={MARKER}", "--dump-instr=no",
           "--dump-line=no", f"--callgrind-out-file={out_base}"]
    if vgdb:
        cmd += ["--instr-atstart=no", "--vgdb=yes"]
    cmd += [sys.executable, os.path.abspath(__file__), "--_child", spec_path,
            go if vgdb else ""]
    err_path = os.path.join(work, "stderr.txt")
    with open(err_path, "w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True,
                                env=child_env)
        killed = threading.Event()

        def kill():
            killed.set()
            proc.kill()
        timer = threading.Timer(timeout, kill)
        timer.start()
        switched = True
        try:
            for line in proc.stdout:
                if vgdb and line.startswith(_READY):
                    pid = line.split()[-1]
                    try:
                        r = subprocess.run([vgdb, f"--pid={pid}", "instrumentation", "on"],
                                           capture_output=True, text=True, timeout=120)
                        switched = r.returncode == 0
                    except (OSError, subprocess.TimeoutExpired):
                        switched = False
                    with open(go, "w") as f:
                        f.write("go" if switched else "abort")
            rc = proc.wait()
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if killed.is_set():
            raise CountError(f"counting {spec['factory']} took over {timeout:.0f} s")
        if vgdb and not switched:
            return None
        if rc != 0:
            err.seek(0)
            tail = "\n".join(err.read().strip().splitlines()[-15:])
            raise CountError(f"counting {spec['factory']} failed (exit {rc}):\n{tail}")
    return sorted(n for n in os.listdir(work) if n.startswith("callgrind.out."))


def _is_box2d(fn: str) -> bool:
    """Box2D's own code, from a demangled function name: its classes and free functions all
    start with "b2" and have no namespace (b2World::Step, b2CollidePolygons, b2Free), and the
    std:: templates it instantiates on its own types (the pair sort in
    b2BroadPhase::UpdatePairs: ``void std::__introsort_loop<b2Pair*, ...>``) are its too;
    a template function's name may start with its return type.
    cypool's kernels (namespaces cyll::, cybw::, their b2ContactListener overrides included)
    and Cython's functions are not."""
    if fn.startswith("b2"):
        return True
    # a template function's demangled name starts with its return type:
    # "void b2BroadPhase::UpdatePairs<b2ContactManager>(b2ContactManager*)"
    name, bracket, args = fn.partition("<")
    words = name.split()
    if not (bracket and words):
        return False
    return words[-1].startswith("b2") or (words[-1].startswith("std::") and args.startswith("b2"))


#: functions statically linked into one of cypool's objects that belong to an engine: their
#: instructions are keyed "<object> (<engine>)" and grouped as "engine". Each entry: the
#: object's folder, a test on the demangled function name, the engine. ALE's code is in
#: namespace ale::; Box2D's static library (built from the box2d-py sdist, linked into each
#: of cypool's Box2D extensions) is told apart by `_is_box2d`.
_ENGINE_FUNCTIONS = (
    ("/cypool/atari/", lambda fn: "ale::" in fn, "ALE"),
    ("/cypool/box2d/", _is_box2d, "Box2D"),
)


def _self_cost_by_object(path: str) -> dict:
    """Instructions (Ir) per object file in one callgrind dump: the self cost of every
    function, summed by its ``ob=`` (ALE's functions inside cypool's Atari extension apart).
    Handles compressed names (``ob=(3) /lib...``, ``ob=(3)``) and skips the inclusive cost
    line that follows each ``calls=`` line."""
    names, out = {}, {}
    positions, ir_index, total_line = 1, 0, None
    ob, fn, key, skip_next = "???", "", "???", False
    with open(path) as f:
        for line in f:
            c = line[:1]
            if c.isdigit() or c in "+-*":
                if skip_next:
                    skip_next = False
                    continue
                parts = line.split()
                k = positions + ir_index
                if k < len(parts):
                    out[key] = out.get(key, 0) + int(parts[k])
                continue
            head, sep, rest = line.partition("=")
            if sep and head in ("ob", "fn"):
                if head == "ob":
                    ob = _name(names, "ob", rest.strip())
                else:
                    fn = _name(names, "fn", rest.strip())
                key = ob
                for where, is_engine, engine in _ENGINE_FUNCTIONS:
                    if where in ob and is_engine(fn):
                        key = f"{ob} ({engine})"
            elif sep and head == "calls":
                skip_next = True
            elif sep and head in ("cob", "cfn"):
                # defines compressed ids that later ob=/fn= lines refer to
                _name(names, head[1:], rest.strip())
            elif line.startswith("positions:"):
                positions = len(line.split(":", 1)[1].split())
            elif line.startswith("events:"):
                ir_index = line.split(":", 1)[1].split().index("Ir")
            elif line.startswith("totals:"):
                total_line = int(line.split()[1 + ir_index])
    if total_line is not None and sum(out.values()) != total_line:
        raise CountError(f"{path}: self costs sum to {sum(out.values())}, totals say "
                         f"{total_line}")
    return out


def _name(names: dict, table: str, s: str) -> str:
    """Resolve a possibly compressed name: '(3) /path' defines id 3, '(3)' refers to it."""
    if s.startswith("(") and ")" in s:
        key, rest = s[1:s.index(")")], s[s.index(")") + 1:].strip()
        if rest:
            names[(table, key)] = rest
            return rest
        return names.get((table, key), s)
    return s


def _child(spec_path: str, go: str = "") -> None:
    """Run inside valgrind: build the step, warm up, (wait for instrumentation,) then the
    marked loops."""
    with open(spec_path, "rb") as f:
        spec = pickle.load(f)
    sys.path[:] = spec["sys_path"]
    import gc
    import importlib

    mod, _, qual = spec["factory"].partition(":")
    obj = importlib.import_module(mod)
    for part in qual.split("."):
        obj = getattr(obj, part)
    step = obj(*spec["args"], **spec["kwargs"])
    if not callable(step):
        raise TypeError(f"{spec['factory']} returned {type(step).__name__}, not a step function")
    for _ in range(spec["warmup"]):
        step()
    gc.collect()
    mark = sys.getswitchinterval

    def run(k):
        for _ in range(k):
            step()

    if go:
        # the parent switches instrumentation on with vgdb, then writes `go`; keep running
        # code meanwhile so that valgrind's gdbserver polls (a sleeping process may not)
        print(f"{_READY} {os.getpid()}", flush=True)
        while not os.path.exists(go) or os.path.getsize(go) == 0:
            for _ in range(20000):
                pass
        with open(go) as f:
            if f.read() != "go":
                os._exit(3)
    def marked(k):
        mark()
        run(0)
        mark()
        run(k)
        mark()

    # called through map (C), so that the marked loops run in an interpreter activation that
    # began after instrumentation was switched on: Python code inlined into the activation
    # that was running at the switch can be attributed to "???" instead of libpython
    list(map(marked, [spec["steps"]]))
    sys.stdout.flush()
    os._exit(0)   # no teardown: nothing after the last marker is counted anyway


# ------------------------------------------------------------------------- baselines
def check_baseline(results: dict, path: str, tolerance: float | None = None) -> list:
    """Compare counts with a baseline file; return one message per failure (empty: pass).

    A count fails when it exceeds its baseline by more than ``tolerance`` (default: the
    file's ``"tolerance"``, else `TOLERANCE`), or when the baseline has no entry for it.
    Counts that fall are reported on stdout as improvements (refresh the baseline to keep
    them) and do not fail.

    Parameters
    ----------
    results : dict[str, InstructionCount or float]
        Name -> count (an InstructionCount, or instructions per step).
    path : str
        A file written by `write_baseline`.
    """
    with open(path) as f:
        base = json.load(f)
    tol = tolerance if tolerance is not None else base.get("tolerance", TOLERANCE)
    failures = []
    for name, res in results.items():
        now = res.per_step if isinstance(res, InstructionCount) else float(res)
        entry = base.get("counts", {}).get(name)
        if entry is None:
            failures.append(f"{name}: no baseline in {path} (refresh it on purpose)")
            continue
        was = float(entry["instructions_per_step"])
        if isinstance(res, InstructionCount) and entry.get("calls") not in (None, res.calls):
            # other calls visit other states (episode ends, resets): not the same quantity
            print(f"note: {name} counted {res.calls} calls, its baseline {entry['calls']}")
        change = now / was - 1
        status = "FAIL" if change > tol else "ok"
        print(f"check {name:>20} {now:,.0f} instructions/step, baseline {was:,.0f}: "
              f"{change:+.2%} (tolerance +{tol:.0%}) {status}")
        if change > tol:
            detail = ""
            if isinstance(res, InstructionCount) and "groups" in entry:
                grew = {g: v - entry["groups"].get(g, 0.0) for g, v in res.groups.items()}
                worst = max(grew, key=grew.get)
                detail = f"; most of it in {worst} (+{grew[worst]:,.0f})"
            failures.append(f"{name}: {now:,.0f} instructions per env step, {change:+.1%} over "
                            f"the baseline {was:,.0f} (tolerance {tol:.0%}){detail}")
    return failures


def write_baseline(results: dict, path: str, tolerance: float = TOLERANCE,
                   settings: dict | None = None, merge: bool = True) -> None:
    """Write (or update, with ``merge``) a baseline file with these counts."""
    data = {}
    if merge and os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    data.setdefault("comment", "Instructions per env step counted under valgrind (callgrind) "
                    "by cypool.instructions; a check fails when a count grows by more than "
                    "`tolerance`. Refresh on purpose, on the CI machine.")
    data["tolerance"] = tolerance
    if settings is not None:
        old = data.get("settings", {}) if merge else {}
        data["settings"] = {k: ({**old[k], **v} if isinstance(v, dict)
                                and isinstance(old.get(k), dict) else v)
                            for k, v in {**old, **settings}.items()}
    data["written"] = datetime.date.today().isoformat()
    counts = data.setdefault("counts", {})
    for name, res in results.items():
        counts[name] = (res.to_json() if isinstance(res, InstructionCount)
                        else {"instructions_per_step": float(res)})
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


def format_table(results: dict) -> str:
    """A Markdown table: instructions per env step, Python side, native side and groups."""
    lines = ["| name | instructions/step | Python side | native side | "
             + " | ".join(GROUPS[1:]) + " |",
             "|---|---:|---:|---:|" + "---:|" * (len(GROUPS) - 1)]
    for name, r in results.items():
        g = r.groups
        lines.append(f"| {name} | {r.per_step:,.0f} | {r.python_side:,.0f} "
                     f"({r.python_side / r.per_step:.0%}) | {r.native_side:,.0f} | "
                     + " | ".join(f"{g[k]:,.0f}" for k in GROUPS[1:]) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m cypool.instructions",
        description="Count instructions per step of FACTORY's step function under valgrind; "
                    "optionally check them against, or write, a baseline file.")
    p.add_argument("factory", help="module:function returning a zero-argument step function")
    p.add_argument("--name", help="the count's name in the baseline (default: FACTORY)")
    p.add_argument("--steps", type=int, default=50, help="step calls counted (default 50)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--per-call", type=int, default=1, help="env steps per call (num_envs)")
    p.add_argument("--check", metavar="BASELINE", help="exit 1 when the count grows by more "
                   "than the baseline's tolerance")
    p.add_argument("--write-baseline", metavar="BASELINE", help="record this count")
    p.add_argument("--tolerance", type=float, default=None,
                   help=f"allowed growth as a fraction (default: the file's, else {TOLERANCE})")
    a = p.parse_args(argv)
    reason = valgrind_available()
    if reason:
        print(f"cannot count instructions: {reason}", file=sys.stderr)
        return 2
    name = a.name or a.factory
    res = {name: count_instructions(a.factory, a.steps, warmup=a.warmup, per_call=a.per_call)}
    print(format_table(res))
    if a.write_baseline:
        write_baseline(res, a.write_baseline,
                       tolerance=a.tolerance if a.tolerance is not None else TOLERANCE)
        print(f"baseline written: {a.write_baseline}")
    if a.check:
        failures = check_baseline(res, a.check, a.tolerance)
        if failures:
            print("\ninstruction check FAILED:\n  " + "\n  ".join(failures))
            return 1
        print("\ninstruction check passed")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--_child":
        # run as a script by count_instructions (sys.path[0] is this folder; _child resets it)
        _child(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
