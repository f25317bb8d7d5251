"""Import the mujoco Python package so that MUJOCO_GL cannot break it.

mujoco/__init__.py also sets up a GL context class for MUJOCO_GL
(mujoco/rendering/classic/gl_context.py, imported by the package's renderer): a value it does
not know raises RuntimeError, and MUJOCO_GL=osmesa without libOSMesa fails inside PyOpenGL
(AttributeError: 'NoneType' object has no attribute 'glGetError'); only ImportError is
caught there. cypool uses the package for models, not for rendering (it renders through its
own EGL/OSMesa code, which reads MUJOCO_GL at the first render and gives a clear error
there), so when that set-up fails the package is imported again without it: mujoco then
lacks GLContext and Renderer, as it does when their dependencies are missing."""
from __future__ import annotations

import sys

_GL_MODULE = "mujoco.rendering.classic.gl_context"


def import_mujoco():
    """The mujoco module (imported once)."""
    mod = sys.modules.get("mujoco")
    if mod is not None and hasattr(mod, "MjModel"):
        return mod
    try:
        import mujoco
        return mujoco
    except ImportError:
        raise
    except Exception:       # noqa: BLE001 - the GL set-up's failure, whatever its type
        pass
    # drop what the failed import left (the package and its pure-Python modules; the
    # extension modules stay loaded and are reused), and block the GL set-up: its import
    # now raises ImportError, which mujoco/__init__.py catches
    for name in [n for n in sys.modules if n == "mujoco" or n.startswith("mujoco.")]:
        if not (getattr(sys.modules[name], "__file__", None) or "").endswith(".so"):
            del sys.modules[name]
    sys.modules[_GL_MODULE] = None
    try:
        import mujoco
    finally:
        if _GL_MODULE in sys.modules and sys.modules[_GL_MODULE] is None:
            del sys.modules[_GL_MODULE]      # a later import by the user tries again
    return mujoco


def model_address(model) -> float:
    """The address of a mujoco.MjModel's C mjModel (the bindings' ``_address``), as the float64
    a parameter row holds (exact below 2**53: checked)."""
    address = model._address
    if float(address) != address:
        raise ValueError("cypool: a model's address does not fit a float64 exactly")
    return float(address)
