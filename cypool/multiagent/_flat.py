"""The flat view for parameter-sharing learners: one row per (env, agent), as SuperSuit's
``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(env), num_envs, base_class="gymnasium")``
lays it out, over a :class:`~cypool.multiagent.VecEnv`."""
from __future__ import annotations

import gymnasium as gym
import numpy as np

__all__ = ["FlatVectorEnv"]


class FlatVectorEnv(gym.vector.VectorEnv):
    """``num_envs * num_agents`` rows, env-major (every agent of env 0 in
    ``possible_agents`` order, then env 1, ...), equal to SuperSuit's layout and values:

    - ``observation_space``/``action_space`` are ONE agent's spaces, as SuperSuit's (CleanRL
      scripts set ``envs.single_observation_space = envs.observation_space``); the
      ``single_*`` attributes hold them too. Every agent must share them.
    - ``reset(seed=s)`` seeds env i with s + i; returns ``(obs, infos)``, infos a list of one
      dict per row.
    - ``step(actions)`` (one row each) returns rewards float32, terminations and
      truncations uint8 and a list of dicts; an env whose agents have all ended resets in
      the same step (no seed: its stream goes on) and its rows' dicts hold
      ``"terminal_observation"``.

    The view owns its batch: step the batch through the view only.
    """

    def __init__(self, batch):
        self.batch = batch
        agents = batch.possible_agents
        obs_sp = batch.observation_spaces[agents[0]]
        act_sp = batch.action_spaces[agents[0]]
        if not all(batch.observation_spaces[a] == obs_sp for a in agents):
            raise ValueError(f"{batch.env_id}: the agents' observation spaces differ, so they "
                             "cannot share rows (SuperSuit pads them with "
                             "pad_observations_v0; step the batch by agent instead)")
        if not all(batch.action_spaces[a] == act_sp for a in agents):
            raise ValueError(f"{batch.env_id}: the agents' action spaces differ, so they "
                             "cannot share rows (SuperSuit pads them with "
                             "pad_action_space_v0; step the batch by agent instead)")
        self.agents = list(agents)
        self.num_agents = len(agents)
        self.num_envs = batch.num_envs * self.num_agents
        self.observation_space = self.single_observation_space = obs_sp
        self.action_space = self.single_action_space = act_sp
        self.metadata = dict(batch.metadata)
        self.render_mode = batch.render_mode

    def _rows(self, per_agent, dtype=None):
        """(num_envs, ...) arrays per agent -> (num_envs * num_agents, ...) env-major."""
        stacked = np.stack([per_agent[a] for a in self.agents], axis=1)
        out = stacked.reshape((self.num_envs,) + stacked.shape[2:])
        return out if dtype is None else out.astype(dtype)

    def reset(self, *, seed=None, options=None):
        obs, _ = self.batch.reset(seed=seed, options=options)
        return self._rows(obs), [{} for _ in range(self.num_envs)]

    def step(self, actions):
        a = np.asarray(actions)
        if a.shape[:1] != (self.num_envs,):
            raise ValueError(f"{self.batch.env_id}: actions must have {self.num_envs} rows "
                             f"(num_envs * num_agents), got shape {a.shape}")
        n, k = self.batch.num_envs, self.num_agents
        per = a.reshape((n, k) + a.shape[1:])
        obs, rew, term, trunc, _ = self.batch.step(
            {ag: per[:, j] for j, ag in enumerate(self.agents)})
        infos = [{} for _ in range(self.num_envs)]
        ended = np.stack([term[ag] | trunc[ag] for ag in self.agents], axis=1).all(axis=1)
        obs_rows = self._rows(obs)
        if ended.any():
            for i in np.flatnonzero(ended):
                for j in range(k):
                    infos[i * k + j]["terminal_observation"] = obs_rows[i * k + j].copy()
            reset_obs, _ = self.batch.reset(options={"reset_mask": ended})
            obs_rows = self._rows(reset_obs)
        return (obs_rows, self._rows(rew, np.float32), self._rows(term, np.uint8),
                self._rows(trunc, np.uint8), infos)

    def render(self):
        return self.batch.render([0])[0]

    def close_extras(self, **kwargs):
        self.batch.close()
