"""Ray and EnvPool reach a test only through tests/_ray_ref.py and tests/_envpool_ref.py.

Both load compiled code of their own that reports or aborts in the ASan run (libasan
preloaded, tools/sanitize.sh), and whether a Ray process gets far enough to report varies
from run to run. The helpers skip there with the reason; a test importing either directly
would pass the normal run and fail CI's ASan pass only now and then. This check runs in
both passes. Imports inside strings (scripts a test runs in a child process) are not seen
here: those scripts call the helpers' guard before they start."""
import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
HELPERS = {"ray": "_ray_ref.py", "envpool": "_envpool_ref.py"}


def _direct_uses(path):
    """(line, package) of each `import ray`/`import envpool...`, `from ... import`, or
    importorskip/import_module of either, in the test module at `path`."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) \
                and ast.unparse(node.func).endswith(("importorskip", "import_module")):
            names = [node.args[0].value]
        for name in names:
            top = name.split(".")[0]
            if top in HELPERS:
                out.append((node.lineno, top))
    return out


def test_ray_and_envpool_come_from_the_helpers():
    found = [f"{p.relative_to(TESTS)}:{line}: {pkg} (use tests/{HELPERS[pkg]})"
             for p in sorted(TESTS.rglob("*.py")) if p.name not in HELPERS.values()
             for line, pkg in _direct_uses(p)]
    assert found == []


@pytest.mark.parametrize("src,pkg", [("import ray", "ray"),
                                     ("import envpool.mujoco as m", "envpool"),
                                     ("from ray import util", "ray"),
                                     ("pytest.importorskip('ray')", "ray"),
                                     ("importlib.import_module('envpool.atari')", "envpool")])
def test_the_check_sees_each_form(tmp_path, src, pkg):
    p = tmp_path / "t.py"
    p.write_text(f"import os\n\n\ndef f():\n    {src}\n")
    assert _direct_uses(p) == [(5, pkg)]
