"""``CoupledHalfCheetah-v0``: gymnasium-robotics 1.4.2's CoupledHalfCheetahEnv (MaMuJoCo's
two half cheetahs joined by a tendon, on the installed package's ``coupled_half_cheetah.xml``)
as a single-agent robotics id. The task is ``_coupled_half_cheetah.pyx`` on cypool's MuJoCo
spec (``cypool.mujoco.family.task_spec``: kwargs, limit, info, rendering as the v5 tasks);
``cypool.multiagent.mamujoco_v1`` partitions it among agents by this id."""
from __future__ import annotations

import dataclasses
import functools

COUPLED = ("CoupledHalfCheetah-v0",)
MAX_EPISODE_STEPS = 1000        # the reference's TimeLimit (the task module's too)


@functools.lru_cache(maxsize=None)
def spec_of(env_id):
    """The MuJoCo task spec without EnvPool names: EnvPool 1.2.5 has no such id."""
    from cypool.mujoco.family import task_spec
    from cypool.robotics import _coupled_half_cheetah as task

    return dataclasses.replace(task_spec(env_id, task), envpool=None)


def make(env_id, *args, **kwargs):
    from cypool._core.spec import SpecFamily

    return SpecFamily(spec_of(env_id), env_id, *args, **kwargs)
