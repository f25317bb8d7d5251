"""Importing a reference package without the banner it prints at import."""
import contextlib
import importlib
import io
import sys

# gymnasium-robotics 1.4.2 prints farama_notifications' notice about Adroit v1's rewards to
# stderr at import; cypool serves no Adroit id, so the notice says nothing to its users
_BANNERS = ("environment's reward functions were updated in v1.2.1",)


def import_quietly(name: str):
    """``importlib.import_module(name)``, dropping the known banners its package prints to
    stderr when first imported (anything else it prints is passed on)."""
    top = name.split(".")[0]
    if top in sys.modules:
        return importlib.import_module(name)
    buf = io.StringIO()
    try:
        with contextlib.redirect_stderr(buf):
            return importlib.import_module(name)
    finally:
        kept = [line for line in buf.getvalue().splitlines(keepends=True)
                if not any(b in line for b in _BANNERS)]
        if kept:
            sys.stderr.write("".join(kept))
