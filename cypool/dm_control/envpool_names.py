"""The dm_control ids' EnvPool 1.2.5 names (:class:`cypool.api.EnvPoolNames`), for
:mod:`cypool.envpool`: EnvPool's ``<Domain><Task>-v1`` (``CheetahRun-v1``,
``BallInCupCatch-v1``: each ``_``-separated word capitalised) is cypool's
``dm_control/<domain>-<task>-v0``, for every task cypool serves (a task added to the family's
SUITE gets its name here with no other change); EnvPool's other dm_control ids
(``ENVPOOL_SUITE``) are refused by name.

EnvPool's options: ``max_episode_steps`` (1000; cypool truncates there, with no dm_control
time limit of its own, as EnvPool does), ``frame_skip`` (dm_control's ``n_sub_steps``),
``frame_stack`` and ``task_name``, the last three accepted at their values only;
``from_pixels`` with ``render_width``/``render_height``/``render_camera_id`` gives EnvPool's
channels-first ``(3, H, W)`` uint8 observations, which are ``physics.render``'s frames (camera
-1: dm_control's free camera). Observations are the Dict of float64 arrays in dm_control's
key order, as EnvPool's (``obs_key_order="dm_control"``); rewards float32 (EnvPool's), info
``env_id``, ``players``, ``elapsed_step`` (EnvPool's keys). The numbers are dm_control's (env
i seeded ``seed + i`` is ``suite.load(..., task_kwargs={"random": seed + i})``), not
EnvPool's own C++ port with its ``std::mt19937`` draws.
"""
from __future__ import annotations

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
    max_episode_steps, given to the pool, is the only one), dm_control's key order (EnvPool's
    Dict keeps it), and the pixel options."""
    task = {"time_limit": float("inf"), "obs_key_order": "dm_control"}
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


# EnvPool 1.2.5's dm_control suite (envpool/mujoco/dmc/registration.py): its tasks that the
# family does not serve are refused by name (envpool_names' refused)
ENVPOOL_SUITE = {
    "acrobot": ("swingup", "swingup_sparse"), "ball_in_cup": ("catch",),
    "cartpole": ("balance", "balance_sparse", "swingup", "swingup_sparse", "three_poles",
                 "two_poles"),
    "cheetah": ("run",), "dog": ("fetch", "run", "stand", "trot", "walk"),
    "finger": ("spin", "turn_easy", "turn_hard"), "fish": ("swim", "upright"),
    "hopper": ("hop", "stand"), "humanoid": ("run", "run_pure_state", "stand", "walk"),
    "humanoid_CMU": ("run", "stand", "walk"), "lqr": ("lqr_2_1", "lqr_6_2"),
    "manipulator": ("bring_ball", "bring_peg", "insert_ball", "insert_peg"),
    "pendulum": ("swingup",), "point_mass": ("easy", "hard"),
    "quadruped": ("escape", "fetch", "run", "walk"), "reacher": ("easy", "hard"),
    "stacker": ("stack_2", "stack_4"), "swimmer": ("swimmer6", "swimmer15"),
    "walker": ("run", "stand", "walk"),
}


def envpool_names(domain: str, task: str, served: dict) -> EnvPoolNames:
    """EnvPool's names of dm_control's ``domain`` ``task`` (its spec's ``envpool``);
    ``served``: the family's ``{domain: tasks}``, whose complement in EnvPool's suite is
    refused by name."""
    own = {"frame_skip": FRAME_SKIP[domain], "frame_stack": 1, "task_name": task}
    refused = {envpool_id(d, t): f"{envpool_id(d, t)} is EnvPool's dm_control {d} {t}, which "
                                 f"cypool does not serve yet (as dm_control/{d}-{t}-v0; "
                                 f"docs/dm_control.md lists the served tasks)"
               for d, tasks in ENVPOOL_SUITE.items() for t in tasks
               if t not in served.get(d, ())}
    return EnvPoolNames(
        ids=(envpool_id(domain, task),),
        config={"max_episode_steps": MAX_EPISODE_STEPS, **own},
        variants=own, convert=_convert, obs=_obs, pixels=True, action_dtype=np.float64,
        reward_dtype=np.float32, family=f"Dmc{_camel(domain)}", refused=refused)
