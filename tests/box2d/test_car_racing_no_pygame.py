"""Stepping CarRacing needs pygame (its observation is a drawn frame whose score digits come
from pygame's bundled font, as gymnasium draws them) but not pybox2d: a process without
pybox2d steps the same frames; one without pygame is refused at make with the extra to
install."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cypool

_STEP = textwrap.dedent("""
    import sys
    sys.modules["Box2D"] = None         # an import of pybox2d now fails
    import numpy as np
    import cypool
    env = cypool.make_vec("CarRacing-v3", 2, num_threads=1)
    obs = [env.reset(seed=3)[0]]
    rng = np.random.default_rng(0)
    for _ in range(40):
        a = rng.uniform([-1, 0.5, 0], [1, 1, 0.1], (2, 3)).astype(np.float32)
        obs.append(env.step(a)[0])
    np.save(sys.argv[1], np.stack(obs))
    assert not [m for m in sys.modules if m.split(".")[0] == "Box2D" and sys.modules[m]]
""")

_NO_PYGAME = textwrap.dedent("""
    import sys
    sys.modules["pygame"] = None
    import cypool
    try:
        cypool.make_vec("CarRacing-v3", 1).reset(seed=0)
    except ImportError as exc:
        print("refused:", exc)
""")


def test_stepping_needs_no_pybox2d(tmp_path):
    pytest.importorskip("pygame")
    out = tmp_path / "obs.npy"
    run = subprocess.run([sys.executable, "-c", _STEP, str(out)], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    env = cypool.make_vec("CarRacing-v3", 2, num_threads=1)
    mine = [env.reset(seed=3)[0]]
    rng = np.random.default_rng(0)
    for _ in range(40):
        a = rng.uniform([-1, 0.5, 0], [1, 1, 0.1], (2, 3)).astype(np.float32)
        mine.append(env.step(a)[0])
    env.close()
    assert np.array_equal(np.stack(mine), np.load(out))


def test_without_pygame_make_names_the_extra():
    run = subprocess.run([sys.executable, "-c", _NO_PYGAME], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert "refused:" in run.stdout and 'cypool[car-racing]' in run.stdout, run.stdout
