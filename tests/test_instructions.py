"""Instruction counts (cypool.instructions, python -m bench --instructions): exact, stable, and
the check fails on a real extra native cost in the step path.

The valgrind tests take about a minute together (none over 30 s); the full check (Hopper,
Ant, Pong, LunarLander) twice is a soak test:
`pytest -m soak tests/test_instructions.py`.
"""
import json
import os
import subprocess
import sys

import pytest

from _instr_factories import multiply_step
from cypool import instructions as ci

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NO_VALGRIND = ci.valgrind_available()
if NO_VALGRIND is None and os.environ.get("CYPOOL_SANITIZER") == "asan":
    # tools/sanitize.sh preloads libasan, which valgrind cannot run; the normal run counts
    NO_VALGRIND = "not under AddressSanitizer (valgrind cannot run its preloaded runtime)"
needs_valgrind = pytest.mark.skipif(NO_VALGRIND is not None,
                                    reason=f"needs valgrind: {NO_VALGRIND}")


def bench_instructions(tmp_path, *extra, inject=0):
    env = dict(os.environ, CYPOOL_BENCH_INJECT_ELEMENTS=str(inject))
    out = subprocess.run([sys.executable, "-m", "bench", "--instructions", "--tasks", "Hopper-v5",
                          "--steps", "30", "--out", str(tmp_path), *extra],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    return out


def latest_count(tmp_path):
    files = sorted(f for f in os.listdir(tmp_path) if f.startswith("instructions-"))
    with open(tmp_path / files[-1]) as f:
        return json.load(f)["counts"]["Hopper-v5"]["instructions_per_step"]


@needs_valgrind
def test_count_is_per_call_and_leaves_start_up_out():
    one = ci.count_instructions(multiply_step, 10, args=(100_000,))
    two = ci.count_instructions(multiply_step, 20, args=(100_000,))
    big = ci.count_instructions(multiply_step, 10, args=(200_000,))
    # per call, whatever the number of calls: start-up and the marker are not in it
    assert abs(two.per_step / one.per_step - 1) < 0.005
    assert 1.9 < big.per_step / one.per_step < 2.1
    # the work is in numpy; the Python side is the loop and the call
    assert one.groups["numpy"] > 0.9 * one.per_step
    assert 0 < one.python_side < 0.05 * one.per_step
    assert one.per_step == pytest.approx(one.python_side + one.native_side)


@needs_valgrind
def test_fast_start_up_counts_the_same_as_instrumenting_throughout():
    fast = ci.count_instructions(multiply_step, 10, args=(50_000,))
    slow = ci.count_instructions(multiply_step, 10, args=(50_000,), fast_startup=False)
    assert abs(fast.per_step / slow.per_step - 1) < 0.005


@needs_valgrind
def test_check_fails_on_an_injected_native_cost(tmp_path):
    base = tmp_path / "instructions.json"
    first = bench_instructions(tmp_path, "--write-baseline", str(base))
    assert first.returncode == 0, first.stdout + first.stderr
    clean = latest_count(tmp_path)

    again = bench_instructions(tmp_path, "--check", str(base))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "instruction check passed" in again.stdout
    assert abs(latest_count(tmp_path) / clean - 1) < 0.005   # two clean runs agree

    # size a numpy multiply to 5% of a step (16 env steps per call), counted the same way
    per_element = ci.count_instructions(multiply_step, 10, args=(100_000,)).per_step / 100_000
    elements = int(0.05 * clean * 16 / per_element)
    slow = bench_instructions(tmp_path, "--check", str(base), inject=elements)
    assert slow.returncode == 1, slow.stdout + slow.stderr
    assert "instruction check FAILED" in slow.stdout
    failure = [ln for ln in slow.stdout.splitlines() if ln.strip().startswith("Hopper-v5:")]
    assert failure and "over the baseline" in failure[0] and "numpy" in failure[0]
    grew = latest_count(tmp_path) / clean - 1
    assert 0.04 < grew < 0.065, grew


@needs_valgrind
def test_cli_guards_a_users_own_step(tmp_path):
    """`python -m cypool.instructions`, as README's "Use it in your CI" shows it: record a
    baseline on purpose, pass against it, then fail on 5% more native work per call."""
    base = str(tmp_path / "ci-instructions.json")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "tests"), ROOT, os.environ.get("PYTHONPATH", "")]))

    def cli(factory, *extra):
        return subprocess.run([sys.executable, "-m", "cypool.instructions",
                               f"_instr_factories:{factory}", "--name", "my-step", "--steps",
                               "10", *extra], capture_output=True, text=True, cwd=ROOT,
                              env=env, timeout=300)

    ok = cli("multiply_step", "--write-baseline", base, "--check", base)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "instruction check passed" in ok.stdout
    with open(base) as f:
        data = json.load(f)
    assert data["tolerance"] == 0.03 and data["counts"]["my-step"]["calls"] == 10

    slow = cli("multiply_step_5pc_more", "--check", base)
    assert slow.returncode == 1, slow.stdout + slow.stderr
    failure = [ln for ln in slow.stdout.splitlines() if ln.strip().startswith("my-step:")]
    assert failure and "over the baseline" in failure[0] and "numpy" in failure[0], slow.stdout


@needs_valgrind
def test_lunar_lander_counts_box2d_as_the_engine():
    """LunarLander-v3 as the check counts it (fewer calls): Box2D's share of cypool's Box2D
    extension is the engine, the rest of it (kernel, Cython) cypool, and nothing is lost."""
    pytest.importorskip("cypool.box2d._lunar_lander", reason="cypool built without Box2D")
    # bench.instructions' own factory, in the child (ROOT need not be on this sys.path)
    res = ci.count_instructions("bench.instructions:make_step", 40, args=("LunarLander-v3",),
                                per_call=16, env={"PYTHONPATH": os.pathsep.join(
                                    [ROOT, os.environ.get("PYTHONPATH", "")])})
    box2d = {o: n for o, n in res.by_object.items() if o.endswith("(Box2D)")}
    assert len(box2d) == 1 and "/cypool/box2d/_lunar_lander" in next(iter(box2d))
    g = res.groups
    assert g["engine"] == pytest.approx(next(iter(box2d.values())) / (40 * 16))
    assert g["engine"] > g["cypool"] > 0 and g["python"] > 0
    assert sum(res.by_object.values()) == res.total
    assert res.per_step == pytest.approx(sum(g.values()))


@pytest.mark.soak
@needs_valgrind
def test_full_check_is_stable_across_runs(tmp_path):
    """`python -m bench --instructions --check bench/instructions.json` twice (~1 min each)."""
    counts = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-m", "bench", "--instructions", "--out",
                              str(tmp_path), "--check", os.path.join(ROOT, "bench",
                                                                      "instructions.json")],
                             capture_output=True, text=True, cwd=ROOT, timeout=900)
        assert out.returncode == 0, out.stdout + out.stderr
        files = sorted(f for f in os.listdir(tmp_path) if f.startswith("instructions-"))
        with open(tmp_path / files[-1]) as f:
            counts.append(json.load(f)["counts"])
    for task in counts[0]:
        a, b = (c[task]["instructions_per_step"] for c in counts)
        assert abs(a / b - 1) < 0.005, (task, a, b)


# ------------------------------------------------------------- without valgrind
def test_check_baseline_fails_on_growth_and_names_the_task(tmp_path, capsys):
    path = str(tmp_path / "base.json")
    ci.write_baseline({"Hopper-v5": 100_000.0, "Ant-v5": 200_000.0}, path, tolerance=0.03)
    assert ci.check_baseline({"Hopper-v5": 102_900.0, "Ant-v5": 150_000.0}, path) == []
    failures = ci.check_baseline({"Hopper-v5": 103_500.0, "Ant-v5": 200_000.0}, path)
    assert len(failures) == 1 and failures[0].startswith("Hopper-v5:") and "+3.5%" in failures[0]
    assert ci.check_baseline({"Pong-v5": 1.0}, path)[0].startswith("Pong-v5: no baseline")
    assert "-25.00%" in capsys.readouterr().out     # a fall is reported, not failed


def test_write_baseline_merges_tasks_and_settings(tmp_path):
    path = str(tmp_path / "base.json")
    ci.write_baseline({"Hopper-v5": 1.0}, path, settings={"steps": {"Hopper-v5": 10}})
    ci.write_baseline({"Ant-v5": 2.0}, path, settings={"steps": {"Ant-v5": 5}})
    with open(path) as f:
        data = json.load(f)
    assert set(data["counts"]) == {"Hopper-v5", "Ant-v5"}
    assert data["settings"]["steps"] == {"Hopper-v5": 10, "Ant-v5": 5}
    assert data["tolerance"] == ci.TOLERANCE == 0.03


def test_parser_takes_self_costs_by_object(tmp_path):
    """Compressed names, calls= lines (their next line is inclusive, not self, cost) and ALE's
    functions inside cypool's Atari extension counted as the engine."""
    dump = tmp_path / "callgrind.out.3"
    dump.write_text("\n".join([
        "version: 1", "creator: callgrind-3.19.0", "positions: line", "events: Ir",
        "summary: 1111", "",
        "ob=(1) /usr/lib/libpython3.11.so.1.0", "fl=(1) ceval.c", "fn=(1) _PyEval_EvalFrameDefault",
        "0 100", "cob=(2) /x/cypool/atari/_pool.cpython-311-x86_64-linux-gnu.so", "cfi=(2) ???",
        "cfn=(2) ale::ALEInterface::act(int)", "calls=1 0", "0 1000", "",
        "ob=(2)", "fl=(2)", "fn=(2)", "0 900",
        "fn=(3) __pyx_f_6cypool_5atari_5_pool_resize", "0 60", "",
        "ob=(1)", "fl=(1)", "fn=(1)", "0 51", "", "totals: 1111", ""]))
    costs = ci._self_cost_by_object(str(dump))
    ale = "/x/cypool/atari/_pool.cpython-311-x86_64-linux-gnu.so"
    assert costs == {"/usr/lib/libpython3.11.so.1.0": 151, f"{ale} (ALE)": 900, ale: 60}
    res = ci.InstructionCount(calls=1, per_call=1, total=1111, by_object=costs)
    assert res.groups["engine"] == 900 and res.groups["cypool"] == 60
    assert res.python_side == 151 and res.native_side == 960


def test_parser_counts_box2d_functions_as_the_engine(tmp_path):
    """Box2D's static library is linked into cypool's Box2D extensions: its functions (b2...,
    templates returning a type, std:: templates on its types) count as the engine; cypool's
    kernel (cyll::, its b2ContactListener override included) and Cython's code as cypool."""
    so = "/x/cypool/box2d/_lunar_lander.cpython-311-x86_64-linux-gnu.so"
    dump = tmp_path / "callgrind.out.3"
    dump.write_text("\n".join([
        "version: 1", "creator: callgrind-3.19.0", "positions: line", "events: Ir",
        "summary: 63", "",
        f"ob=(1) {so}", "fl=(1) ???", "fn=(1) b2World::Step(b2TimeStep const&)", "0 1",
        "fn=(2) void b2BroadPhase::UpdatePairs<b2ContactManager>(b2ContactManager*)", "0 2",
        "fn=(3) void std::__introsort_loop<b2Pair*, long>(b2Pair*, b2Pair*, long)", "0 4",
        "fn=(4) cyll::Listener::BeginContact(b2Contact*)", "0 8",
        "fn=(5) __pyx_f_6cypool_5box2d_13_lunar_lander_step", "0 16",
        "fn=(6) std::deque<cyll::Particle>::_M_push_back_aux(cyll::Particle const&)", "0 32",
        "", "totals: 63", ""]))
    assert ci._self_cost_by_object(str(dump)) == {f"{so} (Box2D)": 7, so: 56}
    assert not ci._is_box2d("cyll::Env::reset(std::vector<b2Vec2>&)")


def test_factory_must_be_importable():
    with pytest.raises(ValueError, match="importable"):
        ci._factory_ref(lambda: None)
    with pytest.raises(ValueError, match="module:function"):
        ci._factory_ref("no_colon")
    assert ci._factory_ref(multiply_step).endswith(":multiply_step")


def test_check_kinds_are_not_mixed(tmp_path):
    """--check takes the thresholds file for the wall-clock run and the baseline with
    --instructions; the wrong one is refused with a message saying which."""
    thresholds = os.path.join(ROOT, "bench", "thresholds.json")
    baseline = os.path.join(ROOT, "bench", "instructions.json")
    wrong = subprocess.run([sys.executable, "-m", "bench", "--instructions", "--check",
                            thresholds], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert wrong.returncode == 2 and "not an instruction baseline" in wrong.stderr
    wrong = subprocess.run([sys.executable, "-m", "bench", "--quick", "--check", baseline],
                           capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert wrong.returncode == 2 and "--instructions --check" in wrong.stderr
