"""Population-based training of P TD3 agents on one cypool population, with the learner
vectorised over the members: one batched policy call acts for every member, one batched
computation updates every member.

    python examples/pbt_td3.py [--members 8] [--envs-per-member 1] [--iterations 1000]
                               [--seed 0] [--out pbt_td3]
    python examples/pbt_td3.py --bench [--plot docs/pbt_td3_scaling.png]   # timing table
    python examples/pbt_td3.py --quick                                     # a CI smoke run

The agents
    Member k is a TD3 agent (Fujimoto et al. 2018): an actor, twin critics, target copies of
    both, its own Adam state, its own replay buffer and its own hyperparameters (actor and
    critic learning rates, exploration noise, target-policy noise, discount). Its envs are
    rows ``k·E .. k·E + E - 1`` of one ``cypool.make_population`` pool of P·E envs.

The batched learner
    Every weight of every member lives in one stacked tensor: a layer of the actors is
    ``W (P, in, out)`` and ``b (P, 1, out)``, and ``y = torch.baddbmm(b, x, W)`` evaluates all
    P members' layers at once on their own inputs ``x (P, B, in)``. The twin critics of all
    members are one stack of 2P networks, critic-major (critic c of member k is entry
    ``c·P + k``), so the 2P critics run as one baddbmm chain and ``Q1`` of every member is the
    contiguous first half. Losses are summed over members (each member's loss is its own
    mean over its batch), so the gradient of the sum with respect to member k's weights is
    exactly the gradient of member k's loss. Adam is written out over the stacked tensors, as
    ``torch.optim.Adam`` computes it, with a per-member learning rate and step count held as
    tensors; the Polyak updates of the target networks are one ``torch._foreach_lerp_``.
    Nothing in acting or updating loops over members in Python.

    All members update in lockstep, so the policy delay (2) is shared; the tuned
    hyperparameters are per-member tensors.

Iterations
    One iteration is ``--steps-per-iter`` batch steps of the pool (each: one batched policy
    call, one ``pop.step`` of all P·E envs, one insert into the P buffers), then
    ``--updates-per-iter`` batched updates (default: one per transition a member collected,
    steps·E, the update-to-data ratio of 1 that TD3 uses; the chunked schedule is Spinning
    Up's ``update_every``). The first ``--start-steps`` env steps of each member take uniform
    random actions and do no updates.

    The pool runs in ``autoreset_mode="same_step"``: every step is a transition, and a row
    that ended has its last observation in ``info["final_obs"]``; time-limit truncations are
    bootstrapped, terminations are not.

PBT
    Every ``--pbt-every`` iterations each member plays ``--eval-episodes`` deterministic
    episodes (``pop.evaluate``, a separate pool from fixed seeds; the fitness) and the fitness
    goes to ``cypool.pbt.PBT`` (truncation selection: members strictly below the bottom
    quarter's threshold copy a random better member, then perturb the copied
    hyperparameters). A copy takes the source's actor, critics, target networks and both
    Adam states (moments and step counts), and then the member restarts its episodes
    (``pop.reset_member``).

    Replay buffer policy (``--exploit-buffer``): ``keep`` (the default) leaves the member its
    own buffer, as fastpbrl does: the buffer is off-policy data, still valid for the copied
    networks, and keeping it keeps the members' data apart (a buffer only ever holds its own
    member's transitions). ``copy`` replaces it with the source's buffer.

Threads: one torch thread (``--torch-threads``) and cypool's OpenMP threads on every usable
core, as docs/usage.md advises for small networks: stepping and learning take turns.

Writes ``<out>.png`` (per-member fitness and the hyperparameter lineage) and
``<out>_lineage.json``, prints the best and mean fitness per PBT round, a random policy's
return for comparison, and per-member ``evaluate()`` results at the end. ``--bench`` times
one iteration for P = 1, 2, 4, 8, 16 against P sequential one-agent learners, and the
arithmetic floor: the cost if the extra members added only their env steps and their
updates' matrix products (:func:`update_matmuls`, :func:`sgemm_rate`) (also
``python -m bench.population --learner``).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np
import torch

from cypool import pbt
from cypool.population import make_population

TASK = "Hopper-v5"

# The tuned hyperparameters: per-member values, perturbed by PBT.
SPACE = {
    "lr_actor": pbt.LogUniform(1e-4, 3e-3, default=1e-3),
    "lr_critic": pbt.LogUniform(1e-4, 3e-3, default=1e-3),
    "expl_noise": pbt.Uniform(0.02, 0.5, default=0.1),
    "target_noise": pbt.Uniform(0.02, 0.5, default=0.2),
    "gamma": pbt.Uniform(0.95, 0.995, default=0.99, complement=True),
}
HP_NAMES = tuple(SPACE)


# ---------------------------------------------------------------------- batched networks
def init_mlp(n, sizes, gen):
    """n stacked MLPs: ``[W0 (n, in, out), b0 (n, 1, out), W1, b1, ...]``, each layer drawn
    as ``torch.nn.Linear`` draws its own (U(-1/sqrt(in), 1/sqrt(in)) for weights and bias)."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1.0 / math.sqrt(fan_in)
        w = torch.empty(n, fan_in, fan_out).uniform_(-bound, bound, generator=gen)
        b = torch.empty(n, 1, fan_out).uniform_(-bound, bound, generator=gen)
        params += [w.requires_grad_(), b.requires_grad_()]
    return params


def mlp(params, x):
    """Evaluate stacked MLPs on ``x (n, B, in)``: ReLU between layers, none after the last.

    A one-wide output layer (the critics' heads) is a multiply and a sum over the features
    instead of a baddbmm: torch's CPU bmm of ``(n, B, H) @ (n, H, 1)`` runs far below the
    speed of the hidden layers (a matrix-vector product per member, and worse in the
    backward), and with 2P critics it cost 3-4x the multiply-and-sum (measured: 17% of a
    P = 16 update)."""
    last = len(params) // 2 - 1
    for i in range(0, len(params), 2):
        w, b = params[i], params[i + 1]
        if i // 2 == last and w.shape[-1] == 1:
            x = (x * w.mT).sum(dim=-1, keepdim=True) + b
        else:
            x = torch.baddbmm(b, x, w)
        if i // 2 < last:
            x = torch.relu(x)
    return x


def _clone(params, grad):
    return [p.detach().clone().requires_grad_(grad) for p in params]


class TD3Population:
    """P TD3 agents with stacked weights, stacked Adam states and P replay buffers.

    Parameters
    ----------
    population_size : int
        P.
    obs_dim : int
    act_low, act_high : array-like
        The action bounds (one env's).
    hyperparams : list of P dicts
        Each member's ``lr_actor``, ``lr_critic``, ``expl_noise``, ``target_noise`` and
        ``gamma`` (noise scales are in units of half the action range).
    hidden : sequence of int
        Hidden layer widths of actor and critics.
    capacity : int
        Transitions each member's buffer holds (a ring; the oldest go first).
    batch_size : int
        Transitions each member samples from its own buffer per update.
    tau, policy_delay, noise_clip : float, int, float
        TD3's Polyak rate, actor-update period and target-noise clip (shared).
    seed : int
        Seeds the initial weights and the generator of the minibatch and noise draws.

    Every tensor with a member axis has it first: actor-side tensors ``(P, ...)``, critic-side
    ``(2P, ...)`` (critic c of member k at ``c·P + k``), the per-member step counts ``(P,)``.
    """

    BETAS = (0.9, 0.999)
    EPS = 1e-8

    def __init__(self, population_size, obs_dim, act_low, act_high, hyperparams, *,
                 hidden=(64, 64), capacity=100_000, batch_size=128, tau=0.005,
                 policy_delay=2, noise_clip=0.5, seed=0):
        P = _positive_int("population_size", population_size)
        self.P = P
        self.obs_dim = _positive_int("obs_dim", obs_dim)
        low = torch.as_tensor(np.asarray(act_low, np.float32))
        high = torch.as_tensor(np.asarray(act_high, np.float32))
        if low.ndim != 1 or low.shape != high.shape or not torch.all(low < high):
            raise ValueError("act_low and act_high must be 1-d, of one shape, with low < high")
        if not (torch.isfinite(low).all() and torch.isfinite(high).all()):
            raise ValueError("TD3 needs finite action bounds")
        self.act_dim = A = low.shape[0]
        self.low, self.high = low, high
        self.scale, self.center = (high - low) / 2, (high + low) / 2
        self.hidden = tuple(_positive_int("hidden", h) for h in hidden)
        if not self.hidden:
            raise ValueError("hidden must name at least one layer width")
        self.capacity = _positive_int("capacity", capacity)
        self.batch_size = _positive_int("batch_size", batch_size)
        self.policy_delay = _positive_int("policy_delay", policy_delay)
        if not 0 < tau <= 1:
            raise ValueError(f"tau must be in (0, 1], got {tau}")
        if not noise_clip > 0:
            raise ValueError(f"noise_clip must be > 0, got {noise_clip}")
        self.tau, self.noise_clip = float(tau), float(noise_clip)
        self.gen = torch.Generator().manual_seed(int(seed))
        O, H = self.obs_dim, list(self.hidden)
        self.actor = init_mlp(P, [O] + H + [A], self.gen)
        self.critic = init_mlp(2 * P, [O + A] + H + [1], self.gen)
        self.actor_target = _clone(self.actor, False)
        self.critic_target = _clone(self.critic, False)
        self.opt = {name: {"m": [torch.zeros_like(p) for p in params],
                           "v": [torch.zeros_like(p) for p in params],
                           "step": torch.zeros(P, dtype=torch.float64)}
                    for name, params in (("actor", self.actor), ("critic", self.critic))}
        self.updates = 0
        # the P replay buffers: one (P, capacity, obs + act + 1 + obs + 1) tensor; member k's
        # transitions are row k only. Every member adds E transitions per batch step, so the
        # rings fill in step: one write position and fill level serve all of them.
        self.width = 2 * O + A + 2
        self.data = torch.zeros(P, self.capacity, self.width)
        self.ptr = 0
        self.size = 0
        self._rows = torch.arange(P)[:, None] * self.capacity
        self.set_hyperparams(hyperparams)

    # ------------------------------------------------------------------ hyperparameters
    def set_hyperparams(self, hyperparams):
        """Write every member's hyperparameters into the per-member tensors."""
        if len(hyperparams) != self.P:
            raise ValueError(f"need {self.P} hyperparameter dicts, got {len(hyperparams)}")
        cols = {}
        for name in HP_NAMES:
            try:
                vals = [float(h[name]) for h in hyperparams]
            except KeyError:
                raise ValueError(f"every member's hyperparameters must name {name!r}") \
                    from None
            if not all(math.isfinite(v) for v in vals):
                raise ValueError(f"{name} must be finite, got {vals}")
            cols[name] = vals
        for name in ("lr_actor", "lr_critic"):
            if min(cols[name]) <= 0:
                raise ValueError(f"{name} must be > 0, got {cols[name]}")
        if min(cols["expl_noise"] + cols["target_noise"]) < 0:
            raise ValueError("noise scales must be >= 0")
        if not all(0 <= g <= 1 for g in cols["gamma"]):
            raise ValueError(f"gamma must be in [0, 1], got {cols['gamma']}")
        self.hp = [{n: cols[n][k] for n in HP_NAMES} for k in range(self.P)]
        self.lr = {"actor": torch.tensor(cols["lr_actor"], dtype=torch.float64),
                   "critic": torch.tensor(cols["lr_critic"], dtype=torch.float64)}
        self.expl_noise = torch.tensor(cols["expl_noise"]).view(-1, 1, 1)
        self.target_noise = torch.tensor(cols["target_noise"]).view(-1, 1, 1)
        self.gamma = torch.tensor(cols["gamma"]).view(-1, 1)

    # ------------------------------------------------------------------ acting
    def policy(self, obs):
        """Deterministic actions of every member: ``obs (P, E, obs)`` tensor -> tensor."""
        with torch.no_grad():
            return torch.tanh(mlp(self.actor, obs)) * self.scale + self.center

    def act(self, obs, explore=True):
        """One batched policy call for the whole population: numpy ``(P, E, obs)`` ->
        ``(obs tensor, actions tensor)``, with each member's Gaussian exploration noise."""
        o = _tensor(obs)
        a = self.policy(o)
        if explore:
            noise = torch.randn(a.shape, generator=self.gen) * (self.expl_noise * self.scale)
            a = torch.maximum(torch.minimum(a + noise, self.high), self.low)
        return o, a

    def random_actions(self, shape):
        u = torch.rand(tuple(shape) + (self.act_dim,), generator=self.gen)
        return self.low + u * (self.high - self.low)

    # ------------------------------------------------------------------ replay buffers
    def add(self, obs, act, rew, next_obs, term):
        """Append each member's E transitions (``(P, E, ...)`` arrays or tensors) to its own
        buffer."""
        t = [x.to(torch.float32) if isinstance(x, torch.Tensor)
             else torch.from_numpy(np.asarray(x, dtype=np.float32))
             for x in (obs, act, rew, next_obs, term)]
        E = t[0].shape[1]
        if t[0].shape[0] != self.P or any(x.shape[:2] != (self.P, E) for x in t):
            raise ValueError(f"transitions must be (P={self.P}, E, ...) batches")
        if self.capacity % E:
            raise ValueError(f"capacity {self.capacity} must be a multiple of E={E}")
        row = torch.cat([t[0], t[1], t[2][..., None], t[3], t[4][..., None]], dim=2)
        self.data[:, self.ptr:self.ptr + E] = row
        self.ptr = (self.ptr + E) % self.capacity
        self.size = min(self.size + E, self.capacity)

    def member_buffer(self, k):
        """Member k's stored transitions, oldest first: dict of ``(n, ...)`` tensors."""
        k = _member(k, self.P)
        rows = self.data[k, :self.size]
        if self.size == self.capacity:
            rows = torch.cat([self.data[k, self.ptr:], self.data[k, :self.ptr]])
        return self._split(rows)

    def _split(self, rows):
        O, A = self.obs_dim, self.act_dim
        return {"obs": rows[..., :O], "act": rows[..., O:O + A], "rew": rows[..., O + A],
                "next_obs": rows[..., O + A + 1:2 * O + A + 1], "term": rows[..., -1]}

    def sample(self):
        """Draw each member's minibatch from its own buffer, and the target-policy noise:
        ``(batch dict of (P, B, ...) tensors, noise (P, B, act))``. Member k's batch indexes
        row k of the storage only."""
        if self.size == 0:
            raise RuntimeError("the replay buffers are empty")
        idx = torch.randint(0, self.size, (self.P, self.batch_size), generator=self.gen)
        rows = self.data.view(-1, self.width).index_select(0, (idx + self._rows).view(-1))
        batch = self._split(rows.view(self.P, self.batch_size, self.width))
        noise = torch.randn(self.P, self.batch_size, self.act_dim, generator=self.gen)
        return batch, noise

    # ------------------------------------------------------------------ learning
    def _critics(self, params, obs, act):
        """Both critics of every member: ``(2, P, B)``."""
        x = torch.cat([obs, act], dim=-1)
        x = x.unsqueeze(0).expand(2, *x.shape).reshape(2 * self.P, *x.shape[1:])
        return mlp(params, x).view(2, self.P, -1)

    def update(self, batch=None, noise=None):
        """One TD3 step of every member at once, on ``batch`` and target ``noise`` as
        :meth:`sample` returns them (drawn when not given). The critics step every call; the
        actors and target networks every ``policy_delay``-th call. Returns the members'
        critic losses, ``(P,)``."""
        if batch is None:
            batch, noise = self.sample()
        elif noise is None:
            raise ValueError("pass the target-policy noise along with the batch")
        obs, act, rew, nobs, term = (batch[k] for k in ("obs", "act", "rew", "next_obs",
                                                          "term"))
        with torch.no_grad():
            clip = self.noise_clip
            eps = (noise * self.target_noise).clamp(-clip, clip) * self.scale
            na = torch.tanh(mlp(self.actor_target, nobs)) * self.scale + self.center
            na = torch.maximum(torch.minimum(na + eps, self.high), self.low)
            tq = self._critics(self.critic_target, nobs, na)
            y = rew + self.gamma * (1.0 - term) * torch.minimum(tq[0], tq[1])
        q = self._critics(self.critic, obs, act)
        # member k's loss: the mean over its batch of both critics' squared errors, as in
        # TD3; summing the members' losses keeps every member's gradient its own
        per_member = (q - y).pow(2).mean(dim=2).sum(dim=0)
        grads = torch.autograd.grad(per_member.sum(), self.critic)
        self._adam("critic", self.critic, grads)
        self.updates += 1
        if self.updates % self.policy_delay == 0:
            a = torch.tanh(mlp(self.actor, obs)) * self.scale + self.center
            q1 = [p.detach()[:self.P] for p in self.critic]
            actor_loss = -mlp(q1, torch.cat([obs, a], dim=-1)).mean(dim=(1, 2)).sum()
            grads = torch.autograd.grad(actor_loss, self.actor)
            self._adam("actor", self.actor, grads)
            with torch.no_grad():
                torch._foreach_lerp_(self.actor_target, [p.detach() for p in self.actor],
                                     self.tau)
                torch._foreach_lerp_(self.critic_target, [p.detach() for p in self.critic],
                                     self.tau)
        return per_member.detach()

    def _adam(self, name, params, grads):
        """torch.optim.Adam's step (single-tensor path, no weight decay, no amsgrad) on the
        stacked tensors, with per-member learning rates and step counts."""
        st = self.opt[name]
        b1, b2 = self.BETAS
        st["step"] += 1
        # per member, in float64 as torch.optim.Adam computes them from Python floats
        step_size = self.lr[name] / (1 - b1 ** st["step"])
        bc2_sqrt = (1 - b2 ** st["step"]).sqrt()
        reps = params[0].shape[0] // self.P          # 1 for actors, 2 for critics
        neg_step = (-step_size).to(torch.float32).repeat(reps).view(-1, 1, 1)
        bc2_sqrt = bc2_sqrt.to(torch.float32).repeat(reps).view(-1, 1, 1)
        with torch.no_grad():
            m, v = st["m"], st["v"]
            torch._foreach_lerp_(m, grads, 1 - b1)
            torch._foreach_mul_(v, b2)
            torch._foreach_addcmul_(v, grads, grads, value=1 - b2)
            denom = torch._foreach_sqrt(v)
            torch._foreach_div_(denom, [bc2_sqrt] * len(v))
            torch._foreach_add_(denom, self.EPS)
            # param.addcdiv_(m, denom, value=-step_size) computes param + (value * m) / denom
            step = torch._foreach_mul(m, [neg_step] * len(m))
            torch._foreach_div_(step, denom)
            torch._foreach_add_([p.data for p in params], step)

    # ------------------------------------------------------------------ PBT exploit
    def _member_tensors(self):
        """(tensor, member axis length) for every tensor that holds per-member state."""
        out = []
        for params in (self.actor, self.actor_target, self.opt["actor"]["m"],
                       self.opt["actor"]["v"], self.critic, self.critic_target,
                       self.opt["critic"]["m"], self.opt["critic"]["v"]):
            out += [p for p in params]
        return out + [self.opt["actor"]["step"], self.opt["critic"]["step"]]

    def exploit(self, src, dst, buffer="keep"):
        """Member dst becomes a copy of member src: actor, critics, both target networks,
        both Adam states (moments and step counts). ``buffer="keep"``: dst keeps its own
        replay buffer; ``"copy"``: dst's buffer becomes a copy of src's. Hyperparameters are
        set separately (:meth:`set_hyperparams`)."""
        src, dst = _member(src, self.P), _member(dst, self.P)
        if buffer not in ("keep", "copy"):
            raise ValueError(f"buffer must be 'keep' or 'copy', got {buffer!r}")
        P = self.P
        with torch.no_grad():
            for t in self._member_tensors():
                if t.shape[0] == P:
                    t[dst] = t[src]
                else:                                  # critic side: c·P + k
                    t[dst::P] = t[src::P]
            if buffer == "copy":
                self.data[dst] = self.data[src]

    def member(self, k):
        """A one-member TD3Population holding a copy of member k's whole state (weights,
        targets, Adam states, buffer, hyperparameters); its own generator is seeded 0."""
        k = _member(k, self.P)
        one = TD3Population.__new__(TD3Population)
        one.__dict__.update({n: v for n, v in self.__dict__.items()})
        one.P = 1
        sel_a = [k]
        sel_c = [k, self.P + k]

        def pick(params, grad, sel):
            return [p.detach()[sel].clone().requires_grad_(grad) for p in params]
        one.actor, one.actor_target = pick(self.actor, True, sel_a), \
            pick(self.actor_target, False, sel_a)
        one.critic, one.critic_target = pick(self.critic, True, sel_c), \
            pick(self.critic_target, False, sel_c)
        one.opt = {"actor": {"m": pick(self.opt["actor"]["m"], False, sel_a),
                             "v": pick(self.opt["actor"]["v"], False, sel_a),
                             "step": self.opt["actor"]["step"][sel_a].clone()},
                   "critic": {"m": pick(self.opt["critic"]["m"], False, sel_c),
                              "v": pick(self.opt["critic"]["v"], False, sel_c),
                              "step": self.opt["critic"]["step"][sel_a].clone()}}
        one.data = self.data[sel_a].clone()
        one._rows = torch.zeros(1, 1, dtype=torch.int64)
        one.gen = torch.Generator().manual_seed(0)
        one.set_hyperparams([self.hp[k]])
        return one


def _tensor(obs):
    """A float32 tensor copy of an observation batch (the pool's arrays are read-only views)."""
    return torch.from_numpy(np.asarray(obs, dtype=np.float32))


def _positive_int(name, x):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1:
        raise ValueError(f"{name} must be a positive int, got {x!r}")
    return int(x)


def _member(k, P):
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < P:
        raise ValueError(f"member must be an int in [0, {P}), got {k!r}")
    return int(k)


# ---------------------------------------------------------------------- the loop
class Learner:
    """A population pool and its TD3 population, stepped and trained an iteration at a
    time, with the wall time of each phase accumulated in :attr:`times`."""

    PHASES = ("inference", "env step", "buffer", "update")

    def __init__(self, pop, agent, start_steps):
        self.pop, self.agent = pop, agent
        self.start_steps = start_steps
        self.obs, _ = pop.reset()
        self.env_steps = 0                 # per member
        self.times = dict.fromkeys(self.PHASES, 0.0)

    def iteration(self, steps, updates):
        pop, agent, times, clock = self.pop, self.agent, self.times, time.perf_counter
        E = pop.envs_per_member
        for _ in range(steps):
            t0 = clock()
            if self.env_steps < self.start_steps:
                o = _tensor(self.obs)
                a = agent.random_actions(self.obs.shape[:2])
            else:
                o, a = agent.act(self.obs)
            act = a.numpy()
            t1 = clock()
            obs, rew, term, trunc, info = pop.step(act)
            nxt = obs
            if "_final_obs" in info:       # rows that ended: their last obs is in info
                done = info["_final_obs"]
                nxt = obs.copy()
                nxt[done] = np.stack(info["final_obs"][done])
            t2 = clock()
            agent.add(o, a, rew, nxt, term)
            self.obs = obs
            self.env_steps += E
            t3 = clock()
            times["inference"] += t1 - t0
            times["env step"] += t2 - t1
            times["buffer"] += t3 - t2
        if self.env_steps >= self.start_steps and agent.size >= agent.batch_size:
            t0 = clock()
            for _ in range(updates):
                agent.update()
            times["update"] += clock() - t0

    def evaluate(self, episodes, seed):
        """``pop.evaluate`` with every member's deterministic policy: (P, K) returns."""
        agent = self.agent

        def policy(obs):
            return agent.policy(_tensor(obs)).numpy()
        return self.pop.evaluate(policy, episodes=episodes, seed=seed)

    def exploit(self, src, dst, buffer):
        self.agent.exploit(src, dst, buffer=buffer)
        self.obs, _ = self.pop.reset_member(dst)


def make_learner(P, E, *, seed, hyperparams, hidden, batch_size, capacity, start_steps,
                 num_threads=None, max_episode_steps=None, task=TASK):
    pop = make_population(task, P, E, seed=seed, autoreset_mode="same_step",
                          num_threads=num_threads, max_episode_steps=max_episode_steps)
    space = pop.single_action_space
    cap = -(-capacity // E) * E              # a multiple of E
    agent = TD3Population(P, pop.single_observation_space.shape[0], space.low, space.high,
                          hyperparams, hidden=hidden, batch_size=batch_size, capacity=cap,
                          seed=seed)
    return Learner(pop, agent, start_steps)


# ---------------------------------------------------------------------- plot
def plot(path, rounds, fitness, lineage, copies, random_return):
    """Per-member fitness at each PBT round and the hyperparameter lineage."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = np.array([r["env_steps"] for r in rounds])
    fitness = np.array(fitness)                     # (rounds, P)
    P = fitness.shape[1]
    fig, axes = plt.subplots(1 + len(HP_NAMES), 1, figsize=(8, 2.0 * (1 + len(HP_NAMES)) + 1),
                             sharex=True)
    colors = plt.cm.tab20(np.arange(P) % 20)
    ax = axes[0]
    for k in range(P):
        ax.plot(steps, fitness[:, k], color=colors[k], lw=1, alpha=0.8)
    ax.plot(steps, fitness.max(axis=1), color="k", lw=2.2, label="best member")
    ax.axhline(random_return, color="grey", ls="--", lw=1, label="random policy")
    for (r, dst, src) in copies:
        ax.plot(steps[r], fitness[r, dst], "x", color=colors[dst], ms=6)
    ax.set_ylabel("eval return")
    ax.set_title(f"PBT-TD3 on {TASK}, {P} members: fitness (x: member then replaced)",
                 fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    # row 0 holds from step 0, row r + 1 from round r on; the last row to the end
    at = np.concatenate([[0], steps])
    for ax, name in zip(axes[1:], HP_NAMES):
        vals = lineage.history(name)                # (PBT updates + 1, P)
        vals = np.concatenate([vals, np.repeat(vals[-1:], len(at) - len(vals), axis=0)])
        for k in range(P):
            ax.step(at, vals[:, k], where="post", color=colors[k], lw=1)
        for (r, dst, src) in copies:               # o: dst's new value, labelled <src
            ax.plot(steps[r], vals[r + 1, dst], "o", color=colors[dst], ms=3)
            ax.annotate(f"<{src}", (steps[r], vals[r + 1, dst]), fontsize=6,
                        color=colors[dst], xytext=(2, 2), textcoords="offset points")
        if isinstance(SPACE[name], pbt.LogUniform):
            ax.set_yscale("log")
        ax.set_ylabel(name, fontsize=8)
    axes[-1].set_xlabel("env steps per member")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


# ---------------------------------------------------------------------- training
def train(args):
    P, E = args.members, args.envs_per_member
    # the bottom quarter (at least one member) copies a better member
    bottom = max(0.25, (1 + 1e-9) / P)
    trainer = pbt.PBT(SPACE, P, protocol="truncation", bottom_frac=bottom, explore="perturb",
                      mutation_rate=0.5, perturb_range=(1.2, 1.5), initial="prior",
                      seed=args.seed)
    ln = make_learner(P, E, seed=args.seed, hyperparams=trainer.hyperparams,
                      hidden=args.hidden, batch_size=args.batch_size, capacity=args.capacity,
                      start_steps=args.start_steps, num_threads=args.threads,
                      max_episode_steps=args.max_episode_steps)
    pop, agent = ln.pop, ln.agent
    updates = args.updates_per_iter if args.updates_per_iter is not None \
        else args.steps_per_iter * E
    rng = np.random.default_rng(args.seed)
    low, high = pop.single_action_space.low, pop.single_action_space.high
    rand = pop.evaluate(lambda o: rng.uniform(low, high, o.shape[:2] + low.shape),
                        episodes=args.final_episodes, seed=args.seed + 10_000)["return"]
    random_return = float(rand.mean())
    print(f"{TASK}: P={P} TD3 members x E={E} envs in one pool, {pop.num_threads} cypool "
          f"threads, {torch.get_num_threads()} torch thread(s); hidden {args.hidden}, batch "
          f"{args.batch_size}; {args.steps_per_iter} steps + {updates} updates per iteration; "
          f"exploit buffer policy: {args.exploit_buffer}; seed {args.seed}")
    print(f"random policy ({args.final_episodes} episodes per member): mean return "
          f"{random_return:.1f}, best member {rand.mean(axis=1).max():.1f}")
    print("round  iter  env_steps/member  best_fitness  mean_fitness  seconds  copies")
    rounds, fitness, copies = [], [], []
    t_start = time.perf_counter()
    for i in range(args.iterations):
        ln.iteration(args.steps_per_iter, updates)
        last = i + 1 == args.iterations
        if (i + 1) % args.pbt_every and not last:
            continue
        r = len(rounds)
        ev = ln.evaluate(args.eval_episodes, seed=args.seed + 1 + r)["return"]
        f = ev.mean(axis=1)
        fitness.append(f)
        rounds.append({"iteration": i + 1, "env_steps": ln.env_steps,
                       "seconds": time.perf_counter() - t_start})
        moved = ""
        if not last and agent.updates > 0:       # no selection on untrained policies
            decisions = trainer.update(f, step=int(pop.member_statistics()["env_steps"]
                                                   .sum()))
            for d in decisions:
                if d.kind == "copy":
                    ln.exploit(d.src, d.dst, args.exploit_buffer)
                    copies.append((r, d.dst, d.src))
            agent.set_hyperparams(trainer.hyperparams)
            moved = ", ".join(f"{d.dst}<-{d.src}" for d in decisions if d.kind == "copy")
        print(f"{r:5d}  {i + 1:4d}  {ln.env_steps:16d}  {f.max():12.1f}  {f.mean():12.1f}  "
              f"{time.perf_counter() - t_start:7.1f}  {moved or '-'}", flush=True)
    wall = time.perf_counter() - t_start
    tot = sum(ln.times.values())
    print(f"training: {wall:.1f} s, {ln.env_steps} env steps and {agent.updates} updates per "
          f"member; time in " + ", ".join(f"{k} {v:.1f} s ({v / tot:.0%})"
                                          for k, v in ln.times.items()))
    final = ln.evaluate(args.final_episodes, seed=args.seed + 20_000)
    ret, length = final["return"], final["length"]
    print(f"\nevaluate(): {args.final_episodes} deterministic episodes per member "
          f"(random policy: {random_return:.1f})")
    print("member  return_mean  return_std  length_mean  " + "  ".join(HP_NAMES))
    for k in range(P):
        hp = agent.hp[k]
        print(f"{k:6d}  {ret[k].mean():11.1f}  {ret[k].std():10.1f}  "
              f"{length[k].mean():11.1f}  " + "  ".join(f"{hp[n]:.4g}" for n in HP_NAMES))
    best = int(ret.mean(axis=1).argmax())
    print(f"best member {best}: {ret[best].mean():.1f} (random policy {random_return:.1f}); "
          f"population mean {ret.mean():.1f}")
    plot(f"{args.out}.png", rounds, fitness, trainer.lineage, copies, random_return)
    with open(f"{args.out}_lineage.json", "w") as fh:
        fh.write(trainer.lineage.to_json())
    print(f"wrote {args.out}.png and {args.out}_lineage.json")
    pop.close()
    return {"random_return": random_return, "fitness": np.array(fitness), "final": ret,
            "rounds": rounds, "copies": copies}


# ---------------------------------------------------------------------- arithmetic floor
def _matmul_flops(func, args):
    """Multiply-adds x 2 of one bmm / baddbmm / mm / addmm call."""
    x, y = (args[1], args[2]) if func.overloadpacket in (torch.ops.aten.baddbmm,
                                                          torch.ops.aten.addmm) else args[:2]
    batch = x.shape[0] if x.ndim == 3 else 1
    return 2 * batch * x.shape[-2] * x.shape[-1] * y.shape[-1]


def update_matmuls(agent, reps=30):
    """The matrix products of one update alone: ``(seconds, flops)`` per update.

    ``policy_delay`` updates (one of them steps the actors too) run under a dispatch mode
    that records every matrix product torch dispatches for them, forward and backward, with
    copies of its operands (same shapes and strides); the recorded products are then
    replayed on those copies, ``reps`` times, and the median divided by ``policy_delay``.
    This is what an update would cost if nothing but its matrix products existed, at the
    speed torch's own kernels reach on these shapes. The agent's state moves on by those
    updates."""
    from torch.utils._python_dispatch import TorchDispatchMode

    reps = _positive_int("reps", reps)
    products = (torch.ops.aten.bmm, torch.ops.aten.baddbmm, torch.ops.aten.mm,
                torch.ops.aten.addmm)

    def copy(x):
        return x.detach().clone() if isinstance(x, torch.Tensor) else x

    class Record(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func.overloadpacket in products:
                self.calls.append((func, [copy(a) for a in args],
                                   {k: copy(v) for k, v in kwargs.items()}))
            return func(*args, **kwargs)

    d = agent.policy_delay
    with Record() as rec:
        for _ in range(d):
            agent.update()
    calls = rec.calls

    def replay():
        for func, a, kw in calls:
            func(*a, **kw)
    with torch.no_grad():
        seconds = _median_seconds(replay, reps)
    flops = sum(_matmul_flops(func, a) for func, a, _ in calls)
    return seconds / d, flops / d


def sgemm_rate(n=1024, reps=20):
    """FLOP/s of one large float32 matrix product (``n x n @ n x n``, torch.mm) on torch's
    current threads: the speed this core's BLAS reaches where shapes do not hold it back."""
    n, reps = _positive_int("n", n), _positive_int("reps", reps)
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    return 2 * n ** 3 / _median_seconds(lambda: torch.mm(a, b), reps)


def _median_seconds(fn, reps, warmup=3):
    """Median wall time of ``reps`` calls of fn, after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    per = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        per.append(time.perf_counter() - t0)
    return statistics.median(per)


# ---------------------------------------------------------------------- benchmark
def bench(args):
    """Seconds per training iteration for each P: the batched learner (one pool, one
    TD3Population) against P sequential one-agent learners, with each phase's share."""
    pops = args.bench_populations
    E, steps = args.envs_per_member, args.steps_per_iter
    updates = args.updates_per_iter if args.updates_per_iter is not None else steps * E
    rounds = args.bench_rounds
    hp_default = {n: p.default for n, p in SPACE.items()}
    common = dict(hidden=args.hidden, batch_size=args.batch_size, capacity=args.capacity,
                  start_steps=0, num_threads=args.threads,
                  max_episode_steps=args.max_episode_steps)

    def ready(ln):
        # every buffer full (capacity transitions of synthetic data): a minibatch gathers
        # from the same amount of memory in every learner, however long it has been timed
        ag, g = ln.agent, torch.Generator().manual_seed(1)
        ag.data.normal_(generator=g)
        ag.data[..., -1] = (torch.rand(ag.data.shape[:2], generator=g) < 0.05).float()
        ag.ptr, ag.size = 0, ag.capacity
        ln.iteration(steps, updates)       # warm-up
        ln.times = dict.fromkeys(ln.PHASES, 0.0)
        return ln

    batched = {P: ready(make_learner(P, E, seed=args.seed, hyperparams=[hp_default] * P,
                                     **common)) for P in pops}
    singles = [ready(make_learner(1, E, seed=args.seed + 1 + k, hyperparams=[hp_default],
                                  **common)) for k in range(max(pops))]
    one = batched[1] if 1 in batched else singles[0]

    def timed(learners):
        for ln in learners:
            ln.times = dict.fromkeys(ln.PHASES, 0.0)
        t0 = time.perf_counter()
        for ln in learners:
            ln.iteration(steps, updates)
        dt = time.perf_counter() - t0
        phases = {k: sum(ln.times[k] for ln in learners) for k in Learner.PHASES}
        return dt, phases

    res = {P: {"batched": [], "sequential": [], "ratio": [], "seq_ratio": [],
               "phases": [], "one": [], "one_env": []} for P in pops}
    for r in range(rounds):
        for P in (pops if r % 2 == 0 else pops[::-1]):
            sys.stderr.write(f"\rround {r + 1}/{rounds} P={P}   ")
            sys.stderr.flush()
            a, a_ph = timed([one])         # one agent just before and after: same load
            b, ph = timed([batched[P]])
            s, _ = timed(singles[:P])
            c, c_ph = timed([one])
            base = (a + c) / 2
            res[P]["one"].append(base)
            res[P]["one_env"].append((a_ph["env step"] + c_ph["env step"]) / 2)
            res[P]["batched"].append(b)
            res[P]["sequential"].append(s)
            res[P]["ratio"].append(b / base)
            res[P]["seq_ratio"].append(s / base)
            res[P]["phases"].append(ph)
    sys.stderr.write("\n")
    for ln in list(batched.values()) + singles:
        ln.pop.close()
    # the arithmetic floor: each learner's update's matrix products alone, and this core's
    # large-matrix speed
    matmuls = {P: update_matmuls(batched[P].agent) for P in pops}
    matmul_one = matmuls[1] if 1 in matmuls else update_matmuls(one.agent)
    rate = sgemm_rate()
    med = statistics.median
    table = {}
    for P in pops:
        x = res[P]
        table[P] = {"batched": med(x["batched"]), "sequential": med(x["sequential"]),
                    "ratio": med(x["ratio"]), "seq_ratio": med(x["seq_ratio"]),
                    "phases": {k: med(p[k] for p in x["phases"]) for k in Learner.PHASES}}
        # x one agent if the extra members cost only their env steps and their updates'
        # matrix products: at torch's speed on these shapes, and at the large-matrix speed
        one_s = med(x["one"])
        more_env = table[P]["phases"]["env step"] - med(x["one_env"])
        more_s = updates * (matmuls[P][0] - matmul_one[0])
        more_flops = updates * (matmuls[P][1] - matmul_one[1])
        table[P]["matmul_s"], table[P]["matmul_flops"] = matmuls[P]
        table[P]["floor_torch"] = (one_s + more_env + more_s) / one_s
        table[P]["floor_sgemm"] = (one_s + more_env + more_flops / rate) / one_s
    targets = {8: 2.0, 16: 3.5}
    print(f"## Batched TD3 population: seconds per iteration ({TASK})\n")
    print(f"One iteration: {steps} batch steps of the P·{E}-env pool (batched policy call, "
          f"pop.step, buffer insert) + {updates} updates of every member (hidden "
          f"{'x'.join(map(str, args.hidden))}, batch {args.batch_size} per member, from a "
          f"full buffer of {args.capacity} transitions). "
          f"{torch.get_num_threads()} torch thread, cypool threads = "
          f"{batched[max(pops)].pop.num_threads} (P·E envs) / {singles[0].pop.num_threads} "
          f"(E envs), {os.cpu_count()} cores; median of {rounds} interleaved rounds; "
          f"x one agent from paired timings (one agent timed just before and after).\n")
    print("| P | batched s/iter | x one agent | target | P sequential s/iter | "
          "x one agent | batched speed-up | inference | env step | buffer | update |")
    print("|---:|---:|---:|:---:|---:|---:|---:|---:|---:|---:|---:|")
    for P in pops:
        t = table[P]
        tgt = targets.get(P)
        mark = "" if tgt is None else f"≤ {tgt} {'yes' if t['ratio'] <= tgt else 'NO'}"
        ph = t["phases"]
        tot = sum(ph.values())
        print(f"| {P} | {t['batched']:.3f} | {t['ratio']:.2f} | {mark} | "
              f"{t['sequential']:.3f} | {t['seq_ratio']:.2f} | "
              f"{t['sequential'] / t['batched']:.2f} | "
              + " | ".join(f"{ph[k] / tot:.0%}" for k in Learner.PHASES) + " |")
    print()
    print(f"The arithmetic floor: x one agent if the extra members cost nothing but their env "
          f"steps (as measured above) and their updates' matrix products, either at the speed "
          f"torch's kernels reach on them (recorded from real updates and replayed alone) or "
          f"at this core's large-matrix speed ({rate / 1e9:.0f} GFLOP/s, a 1024x1024 "
          f"torch.mm); every other part of the update (activations, losses, Adam) taken as "
          f"free.\n")
    print("| P | matrix products per update | MFLOP | GFLOP/s | floor at torch's kernels | "
          "floor at large-matrix speed | target |")
    print("|---:|---:|---:|---:|---:|---:|:---:|")
    for P in pops:
        t = table[P]
        tgt = targets.get(P)
        print(f"| {P} | {t['matmul_s'] * 1e3:.2f} ms | {t['matmul_flops'] / 1e6:.1f} | "
              f"{t['matmul_flops'] / t['matmul_s'] / 1e9:.0f} | {t['floor_torch']:.2f} | "
              f"{t['floor_sgemm']:.2f} | {'' if tgt is None else f'≤ {tgt}'} |")
    print()
    if args.plot:
        bench_plot(args.plot, pops, table, targets, E, steps, updates, args)
        print(f"wrote {args.plot}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": {k: v for k, v in vars(args).items()},
                       "samples": {str(P): res[P] for P in pops},
                       "median": {str(P): table[P] for P in pops}}, fh, indent=1)
    return table


def bench_plot(path, pops, table, targets, E, steps, updates, args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
    x = np.arange(len(pops))
    bottom = np.zeros(len(pops))
    colors = {"inference": "#4c72b0", "env step": "#55a868", "buffer": "#c4c4c4",
              "update": "#dd8452"}
    for k in Learner.PHASES:
        share = np.array([table[P]["phases"][k] / sum(table[P]["phases"].values())
                          for P in pops])
        h = share * np.array([table[P]["batched"] for P in pops])
        ax1.bar(x, h, bottom=bottom, color=colors[k], label=k, width=0.6)
        bottom += h
    ax1.plot(x, [table[P]["sequential"] for P in pops], "k^--", ms=5,
             label="P sequential agents")
    ax1.set_xticks(x, [str(P) for P in pops])
    ax1.set_yscale("log")
    ax1.set_xlabel("members P")
    ax1.set_ylabel("seconds per iteration")
    ax1.set_title("batched learner: where the time goes", fontsize=9)
    ax1.legend(fontsize=7)
    ax2.plot(pops, [table[P]["ratio"] for P in pops], "o-", label="batched")
    ax2.plot(pops, [table[P]["seq_ratio"] for P in pops], "^--", color="k",
             label="P sequential")
    ax2.plot(pops, [table[P]["floor_torch"] for P in pops], ":", color="#dd8452",
             label="floor: matmuls at torch's speed")
    ax2.plot(pops, [table[P]["floor_sgemm"] for P in pops], ":", color="#8172b2",
             label="floor: matmuls at large-matrix speed")
    ax2.plot(list(targets), list(targets.values()), "r*", ms=10, label="target")
    ax2.set_xscale("log", base=2)
    ax2.set_yscale("log", base=2)
    ax2.set_xticks(pops, [str(P) for P in pops])
    ax2.set_xlabel("members P")
    ax2.set_ylabel("x one agent's iteration")
    ax2.set_title("cost against one agent", fontsize=9)
    ax2.legend(fontsize=7)
    fig.suptitle(f"TD3 population on {TASK}, 2-core CPU: {steps} steps x E={E} + {updates} "
                 f"updates per iteration, hidden {'x'.join(map(str, args.hidden))}",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


# ---------------------------------------------------------------------- command line
def _int_list(text):
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated ints, got {text!r}")
    if not vals or min(vals) < 1:
        raise argparse.ArgumentTypeError(f"expected positive ints, got {text!r}")
    return vals


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--members", type=int, default=8, help="P, at least 2 for PBT")
    ap.add_argument("--envs-per-member", type=int, default=1, help="E")
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--steps-per-iter", type=int, default=50, help="batch steps per iteration")
    ap.add_argument("--updates-per-iter", type=int, default=None,
                    help="updates of every member per iteration (default steps-per-iter x E)")
    ap.add_argument("--start-steps", type=int, default=5000,
                    help="random-action env steps per member before learning")
    ap.add_argument("--hidden", type=_int_list, default=[64, 64],
                    help="hidden widths, e.g. 64,64")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--capacity", type=int, default=100_000,
                    help="replay buffer transitions per member")
    ap.add_argument("--pbt-every", type=int, default=40, help="iterations per PBT round")
    ap.add_argument("--eval-episodes", type=int, default=3,
                    help="deterministic episodes per member for the fitness")
    ap.add_argument("--final-episodes", type=int, default=10,
                    help="episodes per member for the final evaluate() and the random policy")
    ap.add_argument("--exploit-buffer", choices=["keep", "copy"], default="keep")
    ap.add_argument("--max-episode-steps", type=int, default=None)
    ap.add_argument("--threads", type=int, default=None, help="cypool threads")
    ap.add_argument("--torch-threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="pbt_td3")
    ap.add_argument("--quick", action="store_true",
                    help="a few short iterations with 2 members (CI)")
    ap.add_argument("--bench", action="store_true", help="time iterations against P (below)")
    ap.add_argument("--bench-populations", type=_int_list, default=[1, 2, 4, 8, 16])
    ap.add_argument("--bench-rounds", type=int, default=5)
    ap.add_argument("--plot", default=None, help="--bench: write the figure here")
    ap.add_argument("--json", default=None, help="--bench: write every sample here")
    args = ap.parse_args(argv)
    if args.quick:
        args.members, args.iterations, args.steps_per_iter = 2, 4, 20
        args.start_steps, args.pbt_every, args.eval_episodes = 40, 2, 1
        args.final_episodes, args.max_episode_steps, args.hidden = 2, 50, [16, 16]
        args.batch_size, args.capacity = 16, 1000
        if args.bench:
            args.bench_populations, args.bench_rounds = [1, 2], 1
    for name in ("members", "envs_per_member", "iterations", "steps_per_iter", "batch_size",
                 "capacity", "pbt_every", "eval_episodes", "final_episodes", "torch_threads",
                 "bench_rounds"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.start_steps < 0:
        ap.error("--start-steps must be at least 0")
    if args.updates_per_iter is not None and args.updates_per_iter < 0:
        ap.error("--updates-per-iter must be at least 0")
    if args.max_episode_steps is not None and args.max_episode_steps < 1:
        ap.error("--max-episode-steps must be at least 1")
    if args.threads is not None and args.threads < 1:
        ap.error("--threads must be at least 1")
    if not args.bench and args.members < 2:
        ap.error("--members must be at least 2 for PBT")
    return args


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    if args.bench:
        return bench(args)
    return train(args)


if __name__ == "__main__":
    main()
