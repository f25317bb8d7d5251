"""The MuJoCo ids' EnvPool 1.2.5 names (:class:`cypool.api.EnvPoolNames`), for
:mod:`cypool.envpool`: EnvPool's ``<Task>-v5`` id is cypool's; its options are gymnasium's
kwargs (``x_range`` pairs split into ``x_min``/``x_max``, a few renamed per task), its
version switches (accepted at their v5 values only), ``max_episode_steps`` and gymnasium's
registered ``reward_threshold``; actions are float64, and ``from_pixels`` gives
channels-first frames. EnvPool's ``<Task>-v4`` ids are cypool's v4 ids (gymnasium's v4 classes,
EnvPool's v4 switches at their values, ``Ant-v4``'s ``use_contact_force``); its older ids whose
options are a v4 task's are that task's aliases. A new task's row: its version switches here
(if EnvPool has the id)."""
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
_V4 = dict(frame_stack=1, post_constraint=False, gymnasium_v5_render_camera=False)
V4_ONLY = {
    "Ant-v4": dict(_V4, frame_skip=5, legacy_healthy_reward=True,
                   exclude_worldbody_contact_forces=False, forward_reward_weight=1.0),
    "HalfCheetah-v4": dict(_V4, frame_skip=5, xml_file="half_cheetah.xml"),
    "Hopper-v4": dict(_V4, frame_skip=4, legacy_healthy_reward=True, xml_file="hopper.xml",
                      velocity_min=-10.0, velocity_max=10.0),
    "Walker2d-v4": dict(_V4, frame_skip=4, legacy_healthy_reward=True, xml_file="walker2d.xml",
                        velocity_min=-10.0, velocity_max=10.0),
    "Humanoid-v4": dict(_V4, frame_skip=5, legacy_healthy_reward=True,
                        exclude_worldbody_observations=False,
                        exclude_root_actuator_forces=False, use_contact_force=False,
                        xml_file="humanoid.xml", contact_cost_weight=5e-07,
                        contact_cost_max=10.0),
    "HumanoidStandup-v4": dict(_V4, frame_skip=5, forward_reward_weight=1.0,
                               exclude_current_positions_from_observation=True,
                               exclude_worldbody_observations=False,
                               exclude_root_actuator_forces=False,
                               xml_file="humanoidstandup.xml", ctrl_cost_weight=0.1,
                               contact_cost_weight=5e-07, contact_cost_max=10.0,
                               healthy_reward=1.0, reset_noise_scale=0.01),
    "InvertedPendulum-v4": dict(_V4, frame_skip=2, healthy_reward=1.0,
                                reward_if_not_terminated=False,
                                xml_file="inverted_pendulum.xml", healthy_z_min=-0.2,
                                healthy_z_max=0.2, reset_noise_scale=0.01),
    "InvertedDoublePendulum-v4": dict(_V4, frame_skip=5, healthy_reward=10.0,
                                      reward_if_not_terminated=False, constraint_obs_dim=3,
                                      xml_file="inverted_double_pendulum.xml",
                                      healthy_z_max=1.0, observation_min=-10.0,
                                      observation_max=10.0, reset_noise_scale=0.1),
    "Reacher-v4": dict(_V4, frame_skip=2, ctrl_cost_weight=1.0, reward_after_step=False,
                       obs_include_z_distance=True, dist_cost_weight=1.0,
                       xml_file="reacher.xml", reset_qpos_scale=0.1, reset_qvel_scale=0.005,
                       reset_goal_scale=0.2),
    "Swimmer-v4": dict(_V4, frame_skip=4, xml_file="swimmer.xml"),
}
# EnvPool's older MuJoCo ids whose config is a -v4 one (Ant-v3: with contact forces): served
# by that gymnasium v4 task; cypool id -> {EnvPool id: EnvPool option defaults that differ}
ALIASES = {
    "Ant-v4": {"Ant-v3": {"use_contact_force": True}},
    "HalfCheetah-v4": {"HalfCheetah-v3": {}},
    "Hopper-v4": {"Hopper-v3": {}},
    "Walker2d-v4": {"Walker2d-v3": {}},
    "Swimmer-v4": {"Swimmer-v3": {}},
    "HumanoidStandup-v4": {"HumanoidStandup-v2": {}},
    "InvertedPendulum-v4": {"InvertedPendulum-v2": {}},
    "InvertedDoublePendulum-v4": {"InvertedDoublePendulum-v2": {}},
    "Reacher-v4": {"Reacher-v2": {}},
}
# EnvPool info keys with a constant value that gymnasium's class has no term for
INFO_CONSTANT = {"HumanoidStandup-v4": {"reward_alive": 1.0}}
# EnvPool's names of gymnasium kwargs, per task: EnvPool name -> (gymnasium name, index into a
# (low, high) pair or None).
RENAMES = {
    "Reacher-v5": {"ctrl_cost_weight": ("reward_control_weight", None),
                   "dist_cost_weight": ("reward_dist_weight", None)},
    "Ant-v4": {"use_contact_force": ("use_contact_forces", None)},
    "Pusher-v5": {"ctrl_cost_weight": ("reward_control_weight", None),
                  "dist_cost_weight": ("reward_dist_weight", None),
                  "near_cost_weight": ("reward_near_weight", None)},
    "HumanoidStandup-v5": {"forward_reward_weight": ("uph_cost_weight", None),
                           "contact_cost_weight": ("impact_cost_weight", None),
                           "contact_cost_max": ("impact_cost_range", 1)},
}


def _variants(env_id):
    return V5_ONLY.get(env_id) or V4_ONLY.get(env_id) or {}


def _config(env_id, mod):
    """EnvPool's own options of the id with their defaults (its make_spec(id).config less the
    common ones), then gymnasium's registered reward_threshold (None for a user's task)."""
    renamed = {g for g, _ in RENAMES.get(env_id, {}).values()}
    fixed = getattr(mod, "FIXED_KWARGS", ())     # constants of gymnasium's class (v4)
    out = {"max_episode_steps": mod.MAX_EPISODE_STEPS}
    for k, v in mod.DEFAULTS.items():
        if k == "default_camera_config" or k in renamed or k in fixed:
            continue
        if k.endswith("_range"):
            out[k[:-len("_range")] + "_min"], out[k[:-len("_range")] + "_max"] = v
        else:
            out[k] = v
    for name, (g, half) in RENAMES.get(env_id, {}).items():
        out[name] = mod.DEFAULTS[g] if half is None else mod.DEFAULTS[g][half]
    out.update(_variants(env_id))     # a user's task (register_task): none
    out["reward_threshold"] = gym.spec(env_id).reward_threshold \
        if env_id in gym.registry else None
    return out


def _convert(env_id, mod, task_id, cfg, pixels):
    """cypool kwargs for EnvPool's options ``cfg`` (the id's own) and ``pixels`` (None, or
    EnvPool's render_width, render_height, render_camera_id with from_pixels=True)."""
    fixed = _variants(env_id)
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


def _constant(value, engine, ids):
    return np.full(len(ids), value)


# EnvPool 1.2.5's MuJoCo ids that no cypool task runs, refused by the spec named here (the
# message cypool.envpool raises)
_PUSHER = ("Pusher-v{} is not served: EnvPool's Pusher-v2 and -v4 options are gymnasium's "
           "Pusher-v4, which runs only on mujoco < 3 (gymnasium refuses it on mujoco >= 3, and "
           "so does cypool); use Pusher-v5")
REFUSED = {
    "Pusher-v5": {"Pusher-v4": _PUSHER.format(4), "Pusher-v2": _PUSHER.format(2)},
    "Humanoid-v4": {"Humanoid-v3": "Humanoid-v3 is not served: EnvPool's Humanoid-v3 adds a "
                                   "contact cost (use_contact_force=True) that no gymnasium "
                                   "Humanoid with its observation has; use Humanoid-v4 (no "
                                   "contact cost) or Humanoid-v5"},
}


def envpool_names(env_id, mod) -> EnvPoolNames:
    return EnvPoolNames(ids=(env_id,), config=_config(env_id, mod),
                        variants=_variants(env_id), aliases=ALIASES.get(env_id, {}),
                        refused=REFUSED.get(env_id, {}),
                        info={k: (functools.partial(_constant, v), np.float64)
                              for k, v in INFO_CONSTANT.get(env_id, {}).items()},
                        convert=functools.partial(_convert, env_id, mod), pixels=True,
                        action_dtype=np.float64, info_all=True, family="Mujoco")
