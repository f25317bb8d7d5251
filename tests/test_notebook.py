"""examples/quickstart.ipynb runs top to bottom in a fresh kernel, and says what it should."""
import json
import sys
import time
from pathlib import Path

import nbclient
import nbformat

import cypool

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "quickstart.ipynb"


def cell_text(cell):
    out = []
    for o in cell.get("outputs", []):
        if o.output_type == "stream":
            out.append(o.text)
        elif "data" in o and "text/plain" in o["data"]:
            out.append(o["data"]["text/plain"])
    return "".join(out)


def test_quickstart_notebook_executes(tmp_path, monkeypatch):
    # a kernelspec for this very interpreter, so the notebook runs where the tests run
    spec = tmp_path / "kernels" / "cypool-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "cypool tests", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    # importing envpool (tests/test_envpool_api.py) sets MPLBACKEND=Agg for the process; the
    # kernel must use its own inline backend, as a user's fresh Jupyter does
    monkeypatch.delenv("MPLBACKEND", raising=False)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []     # the stored outputs prove nothing: run it afresh
    start = time.perf_counter()
    nbclient.NotebookClient(nb, timeout=120, kernel_name="cypool-test",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    elapsed = time.perf_counter() - start
    text = "\n".join(cell_text(c) for c in nb.cells if c.cell_type == "code")
    assert "identical to gymnasium over 100 steps: True" in text
    assert "_final_obs mask" in text and "reset_mask restarted envs" in text
    # guarded cells: either they ran or they said why not
    if hasattr(cypool.VectorEnv, "send"):
        assert "batch shape: (4, 11) | 200 results" in text
    else:
        assert "no send/recv yet" in text
    if hasattr(cypool, "make_population"):
        assert "obs (3, 4, 11) | action space (3, 4, 3)" in text
        assert "member 2 (ctrl_cost_weight=0.1):" in text
    else:
        assert "no make_population yet" in text
    plot = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(plot) == 2                   # the rendered frames and the throughput figure
    assert "rendered frames: [(240, 240, 3), (210, 160, 3)]" in text
    assert "64 envs: cypool" in text
    assert elapsed < 90, f"the quickstart should stay well under a minute, took {elapsed:.0f} s"
