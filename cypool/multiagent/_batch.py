"""The batch: ``num_envs`` copies of one multi-agent env stepped by one Pool.

A multi-agent family serves whole multi-agent envs: its observation and action spaces are
``gymnasium.spaces.Dict`` keyed by agent in ``possible_agents`` order, the engine's scalar
reward is the agents' sum, and its info carries each agent's reward (``"rewards"``, one
column per agent) and, where agents can end apart, each agent's termination
(``"terminations"``). This module reads that contract through the Pool's public methods
only (docs/architecture.md, "A new front end").
"""
from __future__ import annotations

import os
import threading
import weakref

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from cypool.build import request
from cypool.errors import ClosedEnvError
from cypool._core.pool import Pool
from cypool._validate import parse_reset_options, parse_seeds

__all__ = ["VecEnv"]

_LIVE: "weakref.WeakSet[VecEnv]" = weakref.WeakSet()


def _orphan_in_child():
    """os.fork() child: inherited batches become unusable (their worker threads are the
    parent's), never torn down here."""
    for env in list(_LIVE):
        env.orphan()
    _LIVE.clear()


os.register_at_fork(after_in_child=_orphan_in_child)


class DictAgents:
    """The agent view of a multi-agent family: its spaces are Dicts keyed by agent (in
    ``possible_agents`` order), its info carries ``"rewards"`` (one column per agent) and,
    where agents end apart, ``"terminations"``."""

    def __init__(self, family):
        obs, act = family.single_observation_space, family.single_action_space
        keys = [key for key, *_ in family.info_layout]
        if not (isinstance(obs, spaces.Dict) and isinstance(act, spaces.Dict)
                and list(obs.keys()) == list(act.keys()) and "rewards" in keys):
            raise ValueError("cypool.multiagent: this id is not a multi-agent env (its spaces "
                             "must be Dicts keyed by agent and its info must carry "
                             "'rewards')")
        self.possible_agents = list(obs.keys())
        self.observation_spaces = dict(obs.spaces)
        self.action_spaces = dict(act.spaces)
        self.agent_terminations = "terminations" in keys

    def load_actions(self, pool, actions):
        pool.family.load_actions(actions, None)

    def observations(self, pool, obs):
        return obs

    def rewards(self, n, rew, info):
        """(n, agents) float64."""
        return info["rewards"].reshape(n, -1)        # one agent: a 1-D column

    def terminations(self, n, term, info):
        """(n, agents) bool."""
        if not self.agent_terminations:
            return np.repeat(term[:, None], len(self.possible_agents), axis=1)
        return info["terminations"].reshape(n, -1).astype(np.bool_)

    def infos(self, info):
        return {a: {} for a in self.possible_agents}

    # one env (ParallelEnv): mpe2 gives Python float rewards and empty infos
    reward_type = float

    def single_infos(self, info, agents):
        return {a: {} for a in agents}

    def state(self, pool, obs):
        return np.concatenate([obs[a].reshape(pool.num_envs, -1)
                               for a in self.possible_agents], axis=1)


class VecEnv:
    """``num_envs`` copies of a multi-agent env, stepped at once in native threads.

    ``reset(seed=s)`` seeds env i with s + i (a list: one seed or None per env; None
    continues each env's stream) and returns ``(observations, infos)``; ``step(actions)``
    takes ``{agent: array (num_envs, ...)}`` and returns ``(observations, rewards,
    terminations, truncations, infos)``, each ``{agent: array (num_envs, ...)}``
    (observations in the agent's dtype, rewards float64, flags bool); ``infos`` is
    ``{agent: info}``, the family's batched info (mpe2: ``{}``; MaMuJoCo: the task's info
    dict, shared by the agents).

    Autoreset is gymnasium's next-step mode: an env whose agents have all ended restarts on
    the next ``step``, which ignores its actions and reports rewards 0 and flags False for
    it. ``reset(options={"reset_mask": mask})`` resets only the envs of ``mask``.
    ``active[agent]`` (bool, num_envs) says which envs the agent is acting in: False for an
    agent that ended while its env goes on (and for every agent of an env that ended, until
    its restart).
    """

    def __init__(self, env_id: str, num_envs: int, *, num_threads: int | None = None,
                 render_mode=None, copy: bool = True, agents=DictAgents, **kwargs):
        """``agents(family)``: the agent view of the family's envs (default
        :class:`DictAgents`; MaMuJoCo's partitions a single-agent MuJoCo task)."""
        self._closed = True
        self._lock = threading.RLock()
        req = request(env_id, num_envs, num_threads=num_threads, task_kwargs=kwargs)
        fam = req.family.make(req.env_id, req.num_envs, req.num_threads,
                              req.max_episode_steps, req.task_kwargs)
        try:
            self.agents_view = view = agents(fam)
            modes = fam.metadata.get("render_modes", [])
            if render_mode is not None and render_mode not in modes:
                raise ValueError(f"render_mode={render_mode!r} is not offered by "
                                 f"{req.env_id}: it offers {modes or 'none'}")
            if render_mode is not None and hasattr(fam, "set_render_mode"):
                fam.set_render_mode(render_mode)
        except BaseException:
            fam.engine.stop_workers()
            raise
        self.env_id = req.env_id
        self.num_envs = n = req.num_envs
        self.num_threads = req.num_threads
        self.render_mode = render_mode
        self.metadata = dict(fam.metadata)
        self.copy = bool(copy)
        self.possible_agents = list(view.possible_agents)
        self.observation_spaces = dict(view.observation_spaces)
        self.action_spaces = dict(view.action_spaces)
        self.pool = pool = Pool(fam, autoreset_mode=AutoresetMode.NEXT_STEP)
        self.active = {a: np.zeros(n, np.bool_) for a in self.possible_agents}
        self.last_info = {}                      # the family's info dict of the last call
        self._has_reset = False
        _LIVE.add(self)
        pool.engine.start_workers(self.num_threads - 1)
        self._closed = False

    # ------------------------------------------------------------------ checks
    def _check_open(self):
        if self._closed:
            raise ClosedEnvError(f"cypool: this {self.env_id} batch is closed")

    def orphan(self):
        """In an os.fork() child: unusable from now on (its worker threads are the
        parent's); nothing is torn down."""
        self._closed = True
        self._lock = threading.RLock()
        self.pool.forget_team()

    def _out(self, a):
        return a.copy() if self.copy else a

    # ------------------------------------------------------------------ the batch API
    def reset(self, *, seed=None, options: dict | None = None):
        """Reset every env (or those of ``options["reset_mask"]``); returns
        ``(observations, infos)`` of the whole batch."""
        with self._lock:
            self._check_open()
            pool = self.pool
            mask = parse_reset_options(options, self.num_envs, not self._has_reset)
            seeds = parse_seeds(seed, self.num_envs, pool.seed_bound)
            pool.seed(seeds, mask)
            pool.set_reset_ops(mask)
            self._has_reset = True
            pool.run()
            obs, _, _, _, info = pool.gather(None, out=self._out)
            self.last_info = info
            for a in self.possible_agents:
                self.active[a][mask] = True
            return self.agents_view.observations(pool, obs), self.agents_view.infos(info)

    def step(self, actions):
        """Step every env with its row of each agent's actions."""
        with self._lock:
            self._check_open()
            if not self._has_reset:
                raise RuntimeError("cypool: call reset() before step()")
            pool = self.pool
            view = self.agents_view
            view.load_actions(pool, actions)
            restarting = pool.done.copy()        # these envs reset now (next-step mode)
            pool.set_ops(None)
            pool.run()
            obs, rew, term, trunc, info = pool.gather(None, out=self._out)
            self.last_info = info
            n = self.num_envs
            rewards = view.rewards(n, rew, info)
            agent_term = view.terminations(n, term, info)
            out_rew, out_term, out_trunc = {}, {}, {}
            for k, a in enumerate(self.possible_agents):
                out_rew[a] = rewards[:, k].copy()
                out_term[a] = agent_term[:, k].copy()
                out_trunc[a] = trunc.copy()
            self._update_active(agent_term, term | trunc, restarting)
            return (view.observations(pool, obs), out_rew, out_term, out_trunc,
                    view.infos(info))

    def _update_active(self, agent_term, done, restarting):
        """After a step: every agent of an env that restarted is active again; an agent
        that ended (or whose env ended) is inactive until its env restarts."""
        for k, a in enumerate(self.possible_agents):
            act = self.active[a]
            act &= ~(agent_term[:, k] | done)
            act[restarting] = True

    # ------------------------------------------------------------------ the rest
    def state(self):
        """The global state of each env: its agents' observations concatenated in
        ``possible_agents`` order, (num_envs, total) (PettingZoo's ``state()``)."""
        with self._lock:
            self._check_open()
            e = self.pool.engine
            return self.agents_view.state(self.pool, self.pool.obs(e.outputs, np.copy))

    def render(self, env_ids=None):
        """``render_mode="rgb_array"``: one frame per env (or per id of ``env_ids``)."""
        with self._lock:
            self._check_open()
            if self.render_mode is None:
                raise ValueError("cypool: render() needs render_mode='rgb_array' at make")
            ids = np.arange(self.num_envs, dtype=np.int64) if env_ids is None else \
                np.asarray(env_ids, np.int64)
            return tuple(self.pool.family.render(ids))

    def as_vector_env(self):
        """The flat view: a :class:`cypool.multiagent.FlatVectorEnv` of num_envs x
        num_agents rows in SuperSuit's layout, over this batch (step it through the view
        only)."""
        from cypool.multiagent._flat import FlatVectorEnv

        return FlatVectorEnv(self)

    def close(self):
        with self._lock:
            if self._closed:
                return
            self._closed = True
            _LIVE.discard(self)
            self.pool.close()

    def __del__(self):
        if not getattr(self, "_closed", True):
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self._closed else f"num_envs={self.num_envs}"
        return f"cypool.multiagent.VecEnv({self.env_id}, {state})"
