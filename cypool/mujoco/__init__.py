"""MuJoCo family: gymnasium's v5 tasks stepped in native threads."""
import os as _os

from cypool._mujoco_import import import_mujoco as _import_mujoco

_mujoco = _import_mujoco()  # loads libmujoco.so (our extensions resolve it by soname)

from cypool.mujoco import _pool
from cypool.mujoco.family import extension_kwargs, register_task, unregister_task  # noqa: F401

_runtime, _runtime_str = _pool.runtime_version()
if _runtime != _pool.HEADER_VERSION:
    raise ImportError(
        f"cypool was compiled against MuJoCo {_pool.HEADER_VERSION} but the loaded libmujoco is "
        f"{_runtime_str} ({_runtime}); reinstall cypool against the installed mujoco "
        "(pip install --force-reinstall --no-cache-dir cypool) or install the matching mujoco")
_pool.install_log_handler()
# The mujoco package's stage timer costs 10-15% of every mj_step (see _mj_guard.c); physics
# does not depend on it, only MjData.timer's profile does.
_pool.set_timers(_os.environ.get("CYPOOL_MUJOCO_TIMERS", "0") == "1")
