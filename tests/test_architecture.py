"""The shape of the Python layers (docs/architecture.md): code reaches another object's private
attributes only where listed here, with its reason, and the ports that native steppers use
(VectorEnv.native_port, EnvPoolEnv.native_port) hold their env weakly."""
import ast
import gc
from pathlib import Path

import numpy as np
import pytest

import cypool
import cypool.envpool as cep

ROOT = Path(cypool.__file__).parent
# the classes that read their own class's fields for code outside it (docs/architecture.md)
PORTS = {"NativePort", "EnvPoolPort"}
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
    ("dm_control/_config.py", "m._address"): "mujoco's MjModel pointer",
    ("dm_control/_config.py", "m_noact._address"): "mujoco's MjModel pointer",
    ("dm_control/family.py", "bg._legacy_seeding"): "numpy's RandomState seeding, as "
                                                    "dm_control seeds",
}
NAMEDTUPLE = {"_replace", "_asdict", "_fields", "_make"}


def _reaches(path):
    tree = ast.parse(path.read_text())
    modules = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            modules |= {(a.asname or a.name).split(".")[0] for a in n.names}
    out = []

    def visit(node, in_port):
        if isinstance(node, ast.ClassDef):
            in_port = in_port or node.name in PORTS
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and \
                not node.attr.startswith("__") and node.attr not in NAMEDTUPLE and not in_port:
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")) and \
                    not (isinstance(base, ast.Name) and base.id in modules):
                out.append(ast.unparse(node))
        for child in ast.iter_child_nodes(node):
            visit(child, in_port)
    visit(tree, False)
    return out


def test_private_reaches_are_the_listed_ones():
    found = {(str(p.relative_to(ROOT)), e) for p in ROOT.rglob("*.py") for e in _reaches(p)}
    assert found - set(ALLOWED) == set(), "new reaches into private attributes"
    assert set(ALLOWED) - found == set(), "listed reaches that are gone: drop them here"
    assert len([k for k in ALLOWED if not k[0].startswith(("box2d", "dm_control"))]) <= 8


def test_xla_reads_no_private_field():
    for p in (ROOT / "xla").glob("*.py"):
        assert _reaches(p) == [], p


@pytest.mark.parametrize("make", [
    lambda: cypool.make_vec("CartPole-v1", 2, num_threads=1),
    lambda: cep.make_gymnasium("CartPole-v1", num_envs=2, num_threads=1),
])
def test_a_port_holds_its_env_weakly(make):
    env = make()
    port = env.native_port()
    port.check_open()
    assert port.env() is env
    if hasattr(port, "steppable"):
        assert not port.steppable()             # not reset yet
        env.reset(seed=0)
        assert port.steppable()
        assert port.in_flight.dtype == np.bool_ and not port.in_flight.any()
    env.close()
    with pytest.raises(cypool.ClosedEnvError):
        port.check_open()
    del env
    gc.collect()
    assert port.env() is None
    if hasattr(port, "steppable"):
        assert not port.steppable()
    with pytest.raises(ReferenceError, match="garbage-collected"):
        port.check_open()
