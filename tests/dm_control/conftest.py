"""dm_control picks its GL backend once, when ``dm_control._render`` is first imported (from
MUJOCO_GL; unset: GLFW first, which cannot make a context on a headless machine). The pixel
tests compare against dm_control's frames under EGL, cypool's backend here: import it under
MUJOCO_GL=egl before any test module of this folder imports dm_control, then put the variable
back as it was."""
import os

_before = os.environ.get("MUJOCO_GL")
os.environ["MUJOCO_GL"] = _before or "egl"
try:
    import dm_control._render  # noqa: F401
except ImportError:             # dm_control is a test dependency; its tests skip without it
    pass
finally:
    if _before is None:
        del os.environ["MUJOCO_GL"]
