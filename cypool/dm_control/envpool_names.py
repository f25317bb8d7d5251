"""The dm_control ids' EnvPool 1.2.5 names (:class:`cypool.api.EnvPoolNames`), for
:mod:`cypool.envpool`: EnvPool's ``<Domain><Task>-v1`` (``CheetahRun-v1``,
``BallInCupCatch-v1``: each ``_``-separated word capitalised) is cypool's
``dm_control/<domain>-<task>-v0``, for every task cypool serves (a task added to the family's
SUITE gets its name here with no other change).

EnvPool's options: ``max_episode_steps`` (1000; cypool truncates there, with no dm_control
time limit of its own, as EnvPool does), ``frame_skip`` (dm_control's ``n_sub_steps``),
``frame_stack`` and ``task_name``, the last three accepted at their values only;
``from_pixels`` with ``render_width``/``render_height``/``render_camera_id`` gives EnvPool's
channels-first ``(3, H, W)`` uint8 observations, which are ``physics.render``'s frames (camera
-1: dm_control's free camera). Observations are the Dict of float64 arrays in dm_control's
key order, as EnvPool's; rewards float32 (EnvPool's), info ``env_id``, ``players``,
``elapsed_step`` (EnvPool's keys). The numbers are dm_control's (env i seeded ``seed + i`` is
``suite.load(..., task_kwargs={"random": seed + i})``), not EnvPool's own C++ port with its
``std::mt19937`` draws.
"""
from __future__ import annotations

import dataclasses
import functools

import numpy as np

from cypool._core.spec import EnvPoolNames

# EnvPool's frame_skip per domain: dm_control's n_sub_steps (its control timestep over the
# model's timestep); tests/dm_control/test_dmc_envpool_names.py checks it against
# envpool.make_spec and against cypool's pools
FRAME_SKIP = {
    "acrobot": 1, "ball_in_cup": 10, "cartpole": 1, "cheetah": 1, "dog": 3, "finger": 2,
    "fish": 10, "hopper": 4, "humanoid": 5, "humanoid_CMU": 10, "lqr": 1, "manipulator": 10,
    "pendulum": 1, "point_mass": 1, "quadruped": 4, "reacher": 1, "stacker": 10,
    "swimmer": 15, "walker": 10,
}
MAX_EPISODE_STEPS = 1000


def _camel(name):
    return "".join(g[:1].upper() + g[1:] for g in name.split("_"))


def envpool_id(domain: str, task: str) -> str:
    """EnvPool's id of dm_control's ``domain`` ``task`` (its registration's rule)."""
    return f"{_camel(domain)}{_camel(task)}-v1"


def _convert(task_id, options, pixels):
    """cypool kwargs for EnvPool's options: no time limit of dm_control's own (EnvPool's
    max_episode_steps, given to the pool, is the only one), and the pixel options."""
    task = {"time_limit": float("inf")}
    if pixels is not None:
        task.update(from_pixels=True, channels_first=True, width=pixels["render_width"],
                    height=pixels["render_height"], camera_id=pixels["render_camera_id"])
    return task


def _obs(obs):
    """A from_pixels pool's {"pixels": (N, 3, H, W)} as EnvPool's frame batch; the state
    observations (a Dict, as EnvPool's) as they are."""
    if isinstance(obs, dict) and list(obs) == ["pixels"]:
        return obs["pixels"]
    return obs


@dataclasses.dataclass(frozen=True)
class DmcEnvPoolSpec:
    """What cypool.envpool reads of a dm_control id (the registry's ``spec`` hook): the
    family is not described by a FamilySpec, so this carries only the EnvPool names."""

    env_id: str
    envpool: EnvPoolNames
    info: tuple = ()


@functools.lru_cache(maxsize=None)
def spec(env_id: str) -> DmcEnvPoolSpec:
    from cypool.dm_control.family import parse_id

    domain, task = parse_id(env_id)
    own = {"frame_skip": FRAME_SKIP[domain], "frame_stack": 1, "task_name": task}
    names = EnvPoolNames(
        ids=(envpool_id(domain, task),),
        config={"max_episode_steps": MAX_EPISODE_STEPS, **own},
        variants=own, convert=_convert, obs=_obs, pixels=True, action_dtype=np.float64,
        reward_dtype=np.float32, family=f"Dmc{_camel(domain)}")
    return DmcEnvPoolSpec(env_id, names)
