"""The MuJoCo ids' EnvPool 1.2.5 names (:class:`cypool.api.EnvPoolNames`), for
:mod:`cypool.envpool`: EnvPool's ``<Task>-v5`` id is cypool's; its options are gymnasium's
kwargs (``x_range`` pairs split into ``x_min``/``x_max``, a few renamed per task), its
version switches (accepted at their v5 values only), ``max_episode_steps`` and gymnasium's
registered ``reward_threshold``; actions are float64, and ``from_pixels`` gives
channels-first frames. A new task's row: its version switches here (if EnvPool has the id)."""
from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np

from cypool._core.spec import EnvPoolNames

# EnvPool's MuJoCo options with no gymnasium kwarg (version switches, constants gymnasium's
# v5 task hard-codes): accepted at their v5 values only. From make_spec(<Task>-v5).config.
_V5 = dict(frame_stack=1, post_constraint=True, gymnasium_v5_render_camera=True)
V5_ONLY = {
    "Ant-v5": dict(_V5, use_contact_force=True, legacy_healthy_reward=False,
                   exclude_worldbody_contact_forces=True),
    "HalfCheetah-v5": dict(_V5),
    "Hopper-v5": dict(_V5, legacy_healthy_reward=False, velocity_min=-10.0, velocity_max=10.0),
    "Walker2d-v5": dict(_V5, legacy_healthy_reward=False, velocity_min=-10.0,
                        velocity_max=10.0),
    "Humanoid-v5": dict(_V5, legacy_healthy_reward=False, exclude_worldbody_observations=True,
                        exclude_root_actuator_forces=True, use_contact_force=True),
    "HumanoidStandup-v5": dict(_V5, exclude_worldbody_observations=True,
                               exclude_root_actuator_forces=True, healthy_reward=1.0),
    "InvertedPendulum-v5": dict(_V5, healthy_reward=1.0, reward_if_not_terminated=True,
                                healthy_z_min=-0.2, healthy_z_max=0.2),
    "InvertedDoublePendulum-v5": dict(_V5, reward_if_not_terminated=True, constraint_obs_dim=1,
                                      healthy_z_max=1.0, observation_min=-10.0,
                                      observation_max=10.0),
    "Reacher-v5": dict(_V5, reward_after_step=True, obs_include_z_distance=False,
                       reset_qpos_scale=0.1, reset_qvel_scale=0.005, reset_goal_scale=0.2),
    "Swimmer-v5": dict(_V5),
    "Pusher-v5": dict(_V5, reward_after_step=True, weighted_reward_info=True,
                      reset_qvel_scale=0.005, cylinder_x_min=-0.3, cylinder_x_max=0.0,
                      cylinder_y_min=-0.2, cylinder_y_max=0.2, cylinder_dist_min=0.17),
}
# EnvPool's names of gymnasium kwargs, per task: EnvPool name -> (gymnasium name, index into a
# (low, high) pair or None).
RENAMES = {
    "Reacher-v5": {"ctrl_cost_weight": ("reward_control_weight", None),
                   "dist_cost_weight": ("reward_dist_weight", None)},
    "Pusher-v5": {"ctrl_cost_weight": ("reward_control_weight", None),
                  "dist_cost_weight": ("reward_dist_weight", None),
                  "near_cost_weight": ("reward_near_weight", None)},
    "HumanoidStandup-v5": {"forward_reward_weight": ("uph_cost_weight", None),
                           "contact_cost_weight": ("impact_cost_weight", None),
                           "contact_cost_max": ("impact_cost_range", 1)},
}


def _config(env_id, mod):
    """EnvPool's own options of the id with their defaults (its make_spec(id).config less the
    common ones), then gymnasium's registered reward_threshold (None for a user's task)."""
    renamed = {g for g, _ in RENAMES.get(env_id, {}).values()}
    out = {"max_episode_steps": mod.MAX_EPISODE_STEPS}
    for k, v in mod.DEFAULTS.items():
        if k == "default_camera_config" or k in renamed:
            continue
        if k.endswith("_range"):
            out[k[:-len("_range")] + "_min"], out[k[:-len("_range")] + "_max"] = v
        else:
            out[k] = v
    for name, (g, half) in RENAMES.get(env_id, {}).items():
        out[name] = mod.DEFAULTS[g] if half is None else mod.DEFAULTS[g][half]
    out.update(V5_ONLY.get(env_id, {}))     # a user's task (register_task): none
    out["reward_threshold"] = gym.spec(env_id).reward_threshold \
        if env_id in gym.registry else None
    return out


def _convert(env_id, mod, task_id, cfg, pixels):
    """cypool kwargs for EnvPool's options ``cfg`` (the id's own) and ``pixels`` (None, or
    EnvPool's render_width, render_height, render_camera_id with from_pixels=True)."""
    fixed = V5_ONLY.get(env_id, {})
    renames = RENAMES.get(env_id, {})
    task = {}
    if pixels is not None:     # EnvPool's pixel observations: (3, H, W) frames
        task.update(from_pixels=True, channels_first=True, width=pixels["render_width"],
                    height=pixels["render_height"], camera_id=pixels["render_camera_id"])
    for k, v in cfg.items():
        if k in fixed or k in ("max_episode_steps", "reward_threshold"):
            continue
        if k in renames:
            g, half = renames[k]
            if half is None:
                task[g] = v
            else:
                pair = list(mod.DEFAULTS[g])
                pair[half] = v
                task[g] = tuple(pair)
        elif k.endswith("_min") or k.endswith("_max"):
            task[k[:-4] + "_range"] = (cfg[k[:-4] + "_min"], cfg[k[:-4] + "_max"])
        else:
            task[k] = v
    return task


def envpool_names(env_id, mod) -> EnvPoolNames:
    return EnvPoolNames(ids=(env_id,), config=_config(env_id, mod),
                        variants=V5_ONLY.get(env_id, {}),
                        convert=functools.partial(_convert, env_id, mod), pixels=True,
                        action_dtype=np.float64, info_all=True, family="Mujoco")
