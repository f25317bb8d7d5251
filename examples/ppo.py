"""PPO on cypool, CleanRL style: one file, every detail visible.

    python examples/ppo.py --env-id InvertedPendulum-v5 --total-timesteps 100000   # ~1 min, CPU
    python examples/ppo.py --env-id Hopper-v5 --total-timesteps 300000             # a few min
    python examples/ppo.py --env-id Pong-v5 --total-timesteps 10000000             # Atari

Continuous (Box) actions get CleanRL's ``ppo_continuous_action.py`` agent, a Gaussian MLP with
observation and reward normalization; Discrete actions on image observations (Atari,
``uint8 (N, 4, 84, 84)``) get the Nature-CNN agent of ``ppo_atari_envpool.py``; Discrete
actions on vector observations get a categorical MLP. Hyperparameters default to CleanRL's for
each kind, scaled to several envs.

The envs run in ``autoreset_mode="same_step"``: when env i ends, ``step`` returns the first
observation of its next episode, and the last one in ``info["final_obs"][i]``. That keeps
CleanRL's GAE loop unchanged, and lets a *truncated* episode (time limit) be bootstrapped with
``V(final_obs)`` instead of being treated as a failure.

Threads: stepping the envs and learning alternate, so cypool's OpenMP threads and torch's
intra-op threads mostly take turns; but idle OpenMP threads spin before they sleep, and on a
busy machine torch's spinning threads are very costly. The MLP agents therefore train on one
torch thread by default (``--torch-threads``); ``--env-threads`` sets cypool's (see
docs/usage.md, "Threads").

Logs one line per iteration (steps, steps/s, mean return and length of the episodes that ended
in it) and, with ``--csv PATH``, every finished episode.
"""
from __future__ import annotations

import argparse
import csv
import os
import random
import time
from dataclasses import dataclass, field, fields

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from gymnasium.wrappers import vector as W
from torch.distributions import Categorical, Normal

import cypool


def arg(default, text):
    return field(default=default, metadata={"help": text})


@dataclass
class Args:
    env_id: str = arg("Hopper-v5", "a cypool id (cypool.list_envs())")
    total_timesteps: int = arg(300_000, "env steps, all envs together")
    num_envs: int = arg(8, "envs in the cypool pool")
    seed: int = arg(1, "seed of torch, numpy and the envs (env i gets seed + i)")
    env_threads: int | None = arg(None, "cypool OpenMP threads (default: OMP_NUM_THREADS or "
                                        "every usable core, at most num_envs)")
    torch_threads: int | None = arg(None, "torch intra-op threads (default: 1 for the MLP "
                                          "agents, torch's own count for the CNN)")
    cuda: bool = arg(False, "train on CUDA when available")
    torch_deterministic: bool = arg(True, "torch.backends.cudnn.deterministic")
    csv: str | None = arg(None, "write every finished episode (global_step, env, return, "
                                "length) to this CSV file")
    # the algorithm; None takes the default of the agent kind (PRESETS)
    learning_rate: float | None = arg(None, "Adam learning rate")
    anneal_lr: bool = arg(True, "decay the learning rate linearly to 0")
    num_steps: int | None = arg(None, "steps per env per rollout")
    gamma: float = arg(0.99, "discount")
    gae_lambda: float = arg(0.95, "GAE lambda")
    num_minibatches: int | None = arg(None, "minibatches per epoch")
    update_epochs: int | None = arg(None, "epochs per rollout")
    norm_adv: bool = arg(True, "normalize advantages per minibatch")
    clip_coef: float | None = arg(None, "policy (and value) clipping")
    clip_vloss: bool = arg(True, "clip the value loss")
    ent_coef: float | None = arg(None, "entropy bonus")
    vf_coef: float = arg(0.5, "value loss weight")
    max_grad_norm: float = arg(0.5, "gradient clipping")
    target_kl: float | None = arg(None, "stop an update early past this KL")


# CleanRL's defaults for each agent kind (num_steps scaled so a rollout is 2048 / 1024 steps)
PRESETS = {
    "continuous": dict(learning_rate=3e-4, num_steps=256, num_minibatches=32, update_epochs=10,
                       clip_coef=0.2, ent_coef=0.0),
    "atari": dict(learning_rate=2.5e-4, num_steps=128, num_minibatches=4, update_epochs=4,
                  clip_coef=0.1, ent_coef=0.01),
    "discrete": dict(learning_rate=2.5e-4, num_steps=128, num_minibatches=4, update_epochs=4,
                     clip_coef=0.2, ent_coef=0.01),
}


def parse_args() -> Args:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    defaults = Args()
    for f in fields(Args):
        flag = "--" + f.name.replace("_", "-")
        default = getattr(defaults, f.name)
        help = f.metadata["help"] + (f" (default: {default})" if default is not None else "")
        if f.type == "bool":
            p.add_argument(flag, default=default, help=help,
                           action=argparse.BooleanOptionalAction)
        else:
            kind = {"int": int, "float": float, "str": str}[f.type.split(" | ")[0]]
            p.add_argument(flag, type=kind, default=default, help=help)
    return Args(**vars(p.parse_args()))


class RunningMeanStd:
    """Running mean and variance of a batch stream (Chan et al.), as gymnasium computes them."""

    def __init__(self, shape):
        self.mean = np.zeros(shape, np.float64)
        self.var = np.ones(shape, np.float64)
        self.count = 1e-4

    def update(self, x):
        b_mean, b_var, b_count = x.mean(axis=0), x.var(axis=0), x.shape[0]
        delta, tot = b_mean - self.mean, self.count + b_count
        self.mean = self.mean + delta * b_count / tot
        m2 = self.var * self.count + b_var * b_count + delta**2 * self.count * b_count / tot
        self.var, self.count = m2 / tot, tot


class ObsNormalizer:
    """Observation normalization on the agent's side.

    gymnasium's NormalizeObservation wrapper refuses SAME_STEP auto-reset (it could not
    normalize ``final_obs``); here the same statistics normalize both.
    """

    def __init__(self, shape, enabled, clip=10.0, eps=1e-8):
        self.rms = RunningMeanStd(shape) if enabled else None
        self.clip, self.eps = clip, eps

    def __call__(self, obs, update=True):
        if self.rms is None:
            return obs
        if update:
            self.rms.update(obs)
        return np.clip((obs - self.rms.mean) / np.sqrt(self.rms.var + self.eps),
                       -self.clip, self.clip).astype(np.float32)


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class ContinuousAgent(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0))
        self.actor_mean = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, act_dim), std=0.01))
        self.actor_logstd = nn.Parameter(torch.zeros(1, act_dim))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        mean = self.actor_mean(x)
        dist = Normal(mean, self.actor_logstd.expand_as(mean).exp())
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action).sum(1), dist.entropy().sum(1), self.critic(x)


class DiscreteAgent(nn.Module):
    """Nature CNN for image observations (uint8, scaled by 1/255), else a 64-64 MLP."""

    def __init__(self, obs_shape, n_actions, image):
        super().__init__()
        if image:
            self.network = nn.Sequential(
                layer_init(nn.Conv2d(obs_shape[0], 32, 8, stride=4)), nn.ReLU(),
                layer_init(nn.Conv2d(32, 64, 4, stride=2)), nn.ReLU(),
                layer_init(nn.Conv2d(64, 64, 3, stride=1)), nn.ReLU(), nn.Flatten())
            with torch.no_grad():
                width = self.network(torch.zeros(1, *obs_shape)).shape[1]
            self.network.append(layer_init(nn.Linear(width, 512)))
            self.network.append(nn.ReLU())
            hidden, self.scale = 512, 1.0 / 255.0
        else:
            self.network = nn.Sequential(
                layer_init(nn.Linear(int(np.prod(obs_shape)), 64)), nn.Tanh(),
                layer_init(nn.Linear(64, 64)), nn.Tanh())
            hidden, self.scale = 64, 1.0
        self.actor = layer_init(nn.Linear(hidden, n_actions), std=0.01)
        self.critic = layer_init(nn.Linear(hidden, 1), std=1.0)

    def get_value(self, x):
        return self.critic(self.network(x * self.scale))

    def get_action_and_value(self, x, action=None):
        h = self.network(x * self.scale)
        dist = Categorical(logits=self.actor(h))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(h)


def make_env(args):
    """cypool pool (SAME_STEP) under gymnasium vector wrappers; returns (env, kind)."""
    env = cypool.make_vec(args.env_id, args.num_envs, autoreset_mode="same_step",
                          seed=args.seed, num_threads=args.env_threads)
    obs_space, act_space = env.single_observation_space, env.single_action_space
    if isinstance(act_space, gym.spaces.Box):
        kind = "continuous"
    elif isinstance(act_space, gym.spaces.Discrete):
        image = len(obs_space.shape) == 3 and obs_space.dtype == np.uint8
        kind = "atari" if image else "discrete"
    else:
        raise ValueError(f"unsupported action space {act_space}")
    env = W.RecordEpisodeStatistics(env)          # raw returns, before any reward transform
    if kind == "continuous":
        env = W.ClipAction(env)
        env = W.NormalizeReward(env, gamma=args.gamma)
        env = W.TransformReward(env, lambda r: np.clip(r, -10, 10))
    elif kind == "atari":
        env = W.TransformReward(env, np.sign)      # reward clipping, as in the Nature DQN
    return env, kind


def main(args: Args) -> list[tuple[int, float, int]]:
    env, kind = make_env(args)
    for k, v in PRESETS[kind].items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    num_iterations = max(1, args.total_timesteps // batch_size)

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")
    if args.torch_threads is None and kind != "atari" and device.type == "cpu":
        # a 64-64 MLP on 64-sample minibatches gains nothing from more threads, and spinning
        # torch threads that share cores with cypool's (or anyone's) cost a lot: docs/usage.md
        args.torch_threads = 1
    if args.torch_threads is not None:
        torch.set_num_threads(args.torch_threads)

    obs_space, act_space = env.single_observation_space, env.single_action_space
    obs_shape = obs_space.shape
    if kind == "continuous":
        agent = ContinuousAgent(int(np.prod(obs_shape)), int(np.prod(act_space.shape)))
        act_shape, act_dtype = act_space.shape, torch.float32
    else:
        agent = DiscreteAgent(obs_shape, int(act_space.n), image=kind == "atari")
        act_shape, act_dtype = (), torch.int64
    agent = agent.to(device)
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    normalize = ObsNormalizer(obs_shape, enabled=kind != "atari")
    obs_dtype = torch.uint8 if kind == "atari" else torch.float32

    def to_tensor(x):
        return torch.as_tensor(np.asarray(x), dtype=obs_dtype, device=device)

    obs = torch.zeros((args.num_steps, args.num_envs) + obs_shape, dtype=obs_dtype, device=device)
    actions = torch.zeros((args.num_steps, args.num_envs) + act_shape, dtype=act_dtype,
                          device=device)
    logprobs = torch.zeros((args.num_steps, args.num_envs), device=device)
    rewards = torch.zeros((args.num_steps, args.num_envs), device=device)
    dones = torch.zeros((args.num_steps, args.num_envs), device=device)
    values = torch.zeros((args.num_steps, args.num_envs), device=device)

    print(f"{args.env_id}: {kind} agent, {args.num_envs} envs on "
          f"{getattr(env.unwrapped, 'num_threads', '?')} cypool threads, "
          f"torch {torch.get_num_threads()} threads, "
          f"{num_iterations} iterations of {batch_size} steps")
    writer = None
    if args.csv:
        f = open(args.csv, "w", newline="")
        writer = csv.writer(f)
        writer.writerow(["global_step", "env", "return", "length"])
    episodes: list[tuple[int, float, int]] = []
    global_step, start = 0, time.time()
    next_obs, _ = env.reset(seed=args.seed)
    next_obs = to_tensor(normalize(next_obs))
    next_done = torch.zeros(args.num_envs, device=device)

    for iteration in range(1, num_iterations + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = \
                (1.0 - (iteration - 1.0) / num_iterations) * args.learning_rate
        first_episode = len(episodes)
        for step in range(args.num_steps):
            global_step += args.num_envs
            obs[step], dones[step] = next_obs, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
            values[step], actions[step], logprobs[step] = value.flatten(), action, logprob

            o, reward, term, trunc, info = env.step(action.cpu().numpy())
            reward = np.asarray(reward, dtype=np.float64).copy()
            cut = trunc & ~term
            if cut.any():
                # a time limit is not a failure: bootstrap with the value of the last state
                final = np.stack(info["final_obs"][cut])
                with torch.no_grad():
                    v = agent.get_value(to_tensor(normalize(final, update=False)))
                reward[cut] += args.gamma * v.flatten().cpu().numpy()
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32, device=device)
            next_obs = to_tensor(normalize(o))
            next_done = torch.as_tensor(term | trunc, dtype=torch.float32, device=device)

            if "episode" in info:
                for i in np.flatnonzero(info["_episode"]):
                    ep = (global_step, float(info["episode"]["r"][i]),
                          int(info["episode"]["l"][i]))
                    episodes.append(ep)
                    if writer is not None:
                        writer.writerow([ep[0], i, ep[1], ep[2]])

        # generalized advantage estimation
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = \
                    delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values

        b_obs = obs.reshape((-1,) + obs_shape)
        b_logprobs = logprobs.reshape(-1)
        b_actions = actions.reshape((-1,) + act_shape)
        b_advantages, b_returns, b_values = (advantages.reshape(-1), returns.reshape(-1),
                                             values.reshape(-1))

        # policy and value update
        b_inds = np.arange(batch_size)
        clipfracs = []
        for epoch in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for lo in range(0, batch_size, minibatch_size):
                mb = b_inds[lo:lo + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[mb].float() if kind == "atari" else b_obs[mb], b_actions[mb])
                logratio = newlogprob - b_logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                mb_adv = b_advantages[mb]
                if args.norm_adv:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(
                    -mb_adv * ratio,
                    -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)).mean()
                newvalue = newvalue.view(-1)
                if args.clip_vloss:
                    v_unclipped = (newvalue - b_returns[mb]) ** 2
                    v_clipped = b_values[mb] + torch.clamp(
                        newvalue - b_values[mb], -args.clip_coef, args.clip_coef)
                    v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - b_returns[mb]) ** 2).mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
            if args.target_kl is not None and approx_kl > args.target_kl:
                break

        done_eps = episodes[first_episode:]
        if done_eps:
            mean_r = np.mean([e[1] for e in done_eps])
            mean_l = np.mean([e[2] for e in done_eps])
            summary = f"return {mean_r:9.2f}  length {mean_l:7.1f}  ({len(done_eps)} episodes)"
        else:
            summary = "no episode ended"
        sps = int(global_step / (time.time() - start))
        print(f"iter {iteration:4d}  step {global_step:8d}  {sps:6d} steps/s  {summary}  "
              f"kl {approx_kl.item():.4f}  clipfrac {np.mean(clipfracs):.3f}", flush=True)

    if writer is not None:
        f.close()
    env.close()
    return episodes


if __name__ == "__main__":
    main(parse_args())
