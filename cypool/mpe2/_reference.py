"""The reference mpe2 env a pool reads its layout from (family.py) and draws its frames
with (_render.py)."""
import importlib


def reference_env(module, kw, render_mode=None):
    """The reference's raw_env of ``module`` with the complete kwargs ``kw``."""
    try:
        mod = importlib.import_module(f"mpe2.{module}")
    except ImportError as exc:
        raise ImportError(f"mpe2/{module}: cypool reads the world's layout from mpe2's own env: "
                          f"pip install \"cypool[multiagent]\" ({exc})") from None
    return mod.raw_env(render_mode=render_mode, **kw)
