"""One multi-agent env as a PettingZoo ``ParallelEnv``: a batch of one (``VecEnv``), with
PettingZoo's own semantics on top (agents leave ``agents`` when they end; no autoreset).
"""
from __future__ import annotations

import numpy as np
from pettingzoo import ParallelEnv as _PZParallelEnv

from cypool.multiagent._batch import DictAgents, VecEnv

__all__ = ["ParallelEnv"]


class ParallelEnv(_PZParallelEnv):
    """A PettingZoo ``ParallelEnv`` stepped by cypool's native kernels, equal to the
    reference's ``parallel_env`` for the same seed and actions: observations (the agent's
    dtype), rewards (Python floats), terminations, truncations and infos, dicts keyed by
    agent. When every agent has ended, ``agents`` is empty and ``step`` returns empty dicts
    until ``reset``."""

    def __init__(self, env_id: str, *, render_mode=None, agents=DictAgents, **kwargs):
        self._vec = VecEnv(env_id, 1, num_threads=1, render_mode=render_mode, agents=agents,
                           **kwargs)
        self._view = self._vec.agents_view
        self.env_id = self._vec.env_id
        self.possible_agents = list(self._vec.possible_agents)
        self.agents = []
        self.metadata = dict(self._vec.metadata)
        self.metadata.setdefault("is_parallelizable", True)
        self.render_mode = render_mode
        self._obs_spaces = self._vec.observation_spaces
        self._act_spaces = self._vec.action_spaces

    @property
    def observation_spaces(self):
        return dict(self._obs_spaces)

    @property
    def action_spaces(self):
        return dict(self._act_spaces)

    def observation_space(self, agent):
        return self._obs_spaces[agent]

    def action_space(self, agent):
        return self._act_spaces[agent]

    def reset(self, seed=None, options=None):
        """``options`` is accepted and ignored, as the reference's envs do."""
        obs, _ = self._vec.reset(seed=seed)
        self.agents = self.possible_agents[:]
        info = self._vec.last_info
        return {a: obs[a][0] for a in self.agents}, self._view.single_infos(info, self.agents)

    def step(self, actions):
        if not isinstance(actions, dict):
            raise TypeError(f"{self.env_id}: actions must be a dict keyed by agent, got "
                            f"{type(actions).__name__}")
        if not self.agents:
            return {}, {}, {}, {}, {}
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(f"{self.env_id}: no action for agent(s) {missing}")
        unknown = [a for a in actions if a not in self.agents]
        if unknown:
            raise ValueError(f"{self.env_id}: action(s) for agent(s) {unknown}, which are "
                             f"not in env.agents {self.agents}")
        batch = {a: np.asarray(actions[a])[None] for a in self.possible_agents}
        obs, rew, term, trunc, _ = self._vec.step(batch)
        live = self.agents
        as_reward = self._view.reward_type
        out = ({a: obs[a][0] for a in live}, {a: as_reward(rew[a][0]) for a in live},
               {a: bool(term[a][0]) for a in live}, {a: bool(trunc[a][0]) for a in live},
               self._view.single_infos(self._vec.last_info, live))
        self.agents = [a for a in live if not (out[2][a] or out[3][a])]
        return out

    def state(self):
        return self._vec.state()[0]

    def render(self):
        if self.render_mode is None:
            return None
        return self._vec.render([0])[0]

    def close(self):
        self._vec.close()

    @property
    def unwrapped(self):
        return self

    def __repr__(self):
        return f"cypool.multiagent.ParallelEnv({self.env_id})"
