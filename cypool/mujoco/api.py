"""cypool's public MuJoCo task API, version 1: a MuJoCo task in your own package (any MJCF
model; the model may ship inside the package), stepped by cypool's pool.

The Cython side is ``cypool/mujoco/api.pxd`` (``from cypool.mujoco.api cimport MjEnv, MjTask,
export_task, sim_step, reset_noisy``); docs/mujoco_tasks.md has the whole contract. A task
module defines:

``ID``, ``MAX_EPISODE_STEPS``
    its id and time limit (None: none).
``DEFAULTS``
    its kwargs and their defaults, ``xml_file`` (a path; for a model shipped beside the
    module, ``os.path.join(os.path.dirname(__file__), "model.xml")``) and ``frame_skip``
    among them.
``INFO``
    ``[(key, width, dtype, on_step, on_reset), ...]``: the columns of the info row.
``configure(model, kwargs) -> (parameter row, observation size)``
    with the GIL: checks the model (ValueError for one the kernels cannot serve) and turns
    kwargs into the env's float64 parameter row.
``task_capsule()``
    ``export_task(&TASK)``, TASK an ``MjTask`` holding its two nogil kernels.
``API_VERSION`` (optional)
    the version it was written for; register_task refuses another one.

Versioning: ``TASK_API_VERSION`` changes when the above or ``api.pxd`` changes
incompatibly; the C layout is also checked when a pool reads a task's capsule.
"""
from cypool.mujoco.family import (TASK_API_VERSION, extension_kwargs,  # noqa: F401
                                  register_task, unregister_task)

__all__ = ["TASK_API_VERSION", "extension_kwargs", "register_task", "unregister_task"]
