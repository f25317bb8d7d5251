"""The shape of the Python layers (docs/architecture.md), measured on the tree:

- code reaches another object's private attributes only where listed here, with its reason
  (at most 10, no exemption for any class);
- no class subclasses cypool's VectorEnv: front ends are siblings over the Pool's public
  methods;
- no module outside a family folder names a family module, except cypool/entry.py;
- no class named ``*Family`` outside cypool/_core/;
- no import loop, function-level imports counted, and no module imports the package face;
- tests read ``env._engine`` / ``_family`` / ``_pool`` at most 10 times;
- xla's adapter holds its env weakly.
"""
import ast
import gc
import re
from pathlib import Path

import numpy as np
import pytest

import cypool

ROOT = Path(cypool.__file__).parent
TESTS = Path(__file__).parent
FAMILIES = ("atari", "box2d", "classic", "dm_control", "minatar", "minigrid", "mpe2", "mujoco",
            "robotics", "toy_text")
# (file, expression): why it is allowed
ALLOWED = {
    ("_core/pool.py", "self.engine._forget_team"): "the fork hook: a child forgets the "
                                                   "parent's worker team",
    ("vector.py", "env._orphan_in_child"): "the module's at-fork hook, over its live pools",
    ("_core/spec.py", "engine._state_mode"): "a user engine's state declaration checked when "
                                             "a spec family is built",
    ("population.py", "self._eval._follow"): "a population keeps its evaluation population "
                                             "in step",
    ("population.py", "pop._load_snapshot"): "unpickling a population",
    # other libraries' internals, called as the reference calls them (exactness)
    ("box2d/_render.py", "stand_in._clean_particles"): "gymnasium's LunarLander render",
    ("box2d/_render.py", "car_racing.CarRacing._render"): "gymnasium's CarRacing render (its "
                                                          "render() is _render(render_mode))",
    ("_mujoco_import.py", "model._address"): "mujoco's MjModel pointer (dm_control's and "
                                             "Adroit's per-env models)",
    ("dm_control/family.py", "bg._legacy_seeding"): "numpy's RandomState seeding, as "
                                                    "dm_control seeds",
}
NAMEDTUPLE = {"_replace", "_asdict", "_fields", "_make"}


def _modules():
    out = {}
    for p in ROOT.rglob("*.py"):
        parts = ("cypool",) + p.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def _reaches(path):
    tree = ast.parse(path.read_text())
    modules = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            modules |= {(a.asname or a.name).split(".")[0] for a in n.names}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and \
                not node.attr.startswith("__") and node.attr not in NAMEDTUPLE:
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")) and \
                    not (isinstance(base, ast.Name) and base.id in modules):
                out.append(ast.unparse(node))
    return out


def test_private_reaches_are_the_listed_ones():
    found = {(str(p.relative_to(ROOT)), e) for p in ROOT.rglob("*.py") for e in _reaches(p)}
    assert found - set(ALLOWED) == set(), "new reaches into private attributes"
    assert set(ALLOWED) - found == set(), "listed reaches that are gone: drop them here"
    assert len(ALLOWED) <= 10


def test_no_class_subclasses_cypools_vector_env():
    for p in ROOT.rglob("*.py"):
        for n in ast.walk(ast.parse(p.read_text())):
            if isinstance(n, ast.ClassDef):
                bases = {ast.unparse(b) for b in n.bases}
                assert not bases & {"VectorEnv", "cypool.VectorEnv", "vector.VectorEnv"}, \
                    (p, n.name)


def test_only_entry_names_family_modules():
    rx = re.compile(r"\bcypool\.(%s)\b" % "|".join(FAMILIES))
    bad = set()
    for p in ROOT.rglob("*.py"):
        rel = p.relative_to(ROOT)
        if rel.parts[0] in FAMILIES or str(rel) == "entry.py":
            continue
        bad |= {(str(rel), m.group(0)) for m in rx.finditer(p.read_text())}
    assert bad == set(), "front ends reach families by id alone"


def test_family_classes_live_in_core():
    found = set()
    for p in ROOT.rglob("*.py"):
        if p.relative_to(ROOT).parts[0] == "_core":
            continue
        found |= {n.name for n in ast.walk(ast.parse(p.read_text()))
                  if isinstance(n, ast.ClassDef) and n.name.endswith("Family")}
    assert found == set(), found


def _imports(name, path, mods):
    """The cypool modules ``name`` imports, at module or function level."""
    out = set()
    pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for n in ast.walk(ast.parse(path.read_text())):
        if isinstance(n, ast.Import):
            out |= {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            base = n.module or ""
            if n.level:
                up = pkg.split(".")[:len(pkg.split(".")) - n.level + 1]
                base = ".".join(up + ([n.module] if n.module else []))
            for a in n.names:
                out.add(f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base)
    return {m for m in out if m in mods and m != name}


def test_no_import_loops_and_no_import_of_the_package_face():
    mods = _modules()
    graph = {m: _imports(m, p, mods) for m, p in mods.items()}
    face = sorted(m for m, deps in graph.items() if "cypool" in deps)
    assert face == [], "modules importing the package face (import cypool)"
    # a cycle: some module reaches itself
    for start in graph:
        seen, todo = set(), list(graph[start])
        while todo:
            m = todo.pop()
            assert m != start, f"import loop through {start}"
            if m not in seen:
                seen.add(m)
                todo += graph[m]


def test_tests_read_few_internals():
    rx = re.compile(r"\b\w+\._(engine|family|pool)\b")
    hits = [(p.name, m.group(0)) for p in TESTS.rglob("*.py")
            for m in rx.finditer(p.read_text())
            if not m.group(0).startswith(("_core.", "atari.", "mujoco.", "box2d.", "classic.",
                                          "toy_text.", "dm_control.", "xla."))]
    assert len(hits) <= 10, hits


def test_xla_reads_no_private_field():
    for p in (ROOT / "xla").glob("*.py"):
        assert _reaches(p) == [], p


@pytest.mark.parametrize("envpool", [False, True])
def test_an_xla_adapter_holds_its_env_weakly(envpool):
    pytest.importorskip("jax", reason="jax is a test dependency")
    import cypool.envpool as cep

    env = cep.make_gymnasium("CartPole-v1", num_envs=2, num_threads=1) if envpool else \
        cypool.make_vec("CartPole-v1", 2, num_threads=1)
    adapter = env.xla()[1].adapter
    assert adapter.env() is env
    if not envpool:
        assert not adapter.steppable()             # not reset yet
        env.reset(seed=0)
        assert adapter.steppable()
        assert adapter.in_flight.dtype == np.bool_ and not adapter.in_flight.any()
    env.close()
    with pytest.raises(cypool.ClosedEnvError):
        adapter.check_open()
    del env
    gc.collect()
    assert not adapter.steppable()
    with pytest.raises(Exception, match="garbage-collected"):
        adapter.check_open()
