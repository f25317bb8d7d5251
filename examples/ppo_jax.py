"""PPO in JAX on cypool, CleanRL style, with the whole rollout (policy + env steps) in one
jitted ``lax.scan`` through ``env.xla()``: Python never runs between env steps.

    python examples/ppo_jax.py --env-id CartPole-v1 --total-timesteps 500000
    python examples/ppo_jax.py --env-id Pong-v5 --total-timesteps 10000000
    python examples/ppo_jax.py --quick               # a few iterations (what CI runs)

Follows CleanRL's ``ppo_atari_envpool_xla_jax.py``: EnvPool's ``handle, recv, send, step =
envs.xla()``, next-step autoreset (the step after an episode's end returns its reset
observation), GAE, clipped objective, value clipping, entropy bonus, Adam with a linearly
annealed learning rate and global-norm gradient clipping. Vector observations get a tanh MLP
(64, 64); Atari frames ``uint8 (N, 4, 84, 84)`` the Nature CNN. Needs only jax
(``pip install "cypool[jax]"``): the layers and Adam are written out below.

Prints one line per iteration: steps, steps/s, and the mean return and length of the
episodes that ended in it.
"""
from __future__ import annotations

import argparse
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

import cypool
from cypool.registry import family_for


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--env-id", default="CartPole-v1")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--total-timesteps", type=int, default=500_000)
    p.add_argument("--num-envs", type=int, default=None, help="default 8 (Atari: 16)")
    p.add_argument("--num-steps", type=int, default=128, help="steps per env per rollout")
    p.add_argument("--env-threads", type=int, default=2)
    p.add_argument("--learning-rate", type=float, default=None, help="2.5e-4 (MLP: 2.5e-3)")
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.1)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--quick", action="store_true",
                   help="3 short iterations on a few envs (a smoke test)")
    a = p.parse_args(argv)
    # Atari's uint8 (4, 84, 84) frame stacks get the CNN, vector observations the MLP
    a.atari = atari = family_for(a.env_id).name == "atari"
    if a.num_envs is None:
        a.num_envs = 16 if atari else 8
    if a.learning_rate is None:
        a.learning_rate = 2.5e-4 if atari else 2.5e-3
    if a.quick:
        a.num_envs, a.num_steps = (4, 16) if atari else (8, 32)
        a.total_timesteps = 3 * a.num_envs * a.num_steps
    a.batch_size = a.num_envs * a.num_steps
    a.minibatch_size = a.batch_size // a.num_minibatches
    a.num_iterations = max(1, a.total_timesteps // a.batch_size)
    return a


# ------------------------------------------------------------------ the agent (no libraries)
def _dense(key, n_in, n_out, scale):
    return {"w": jax.nn.initializers.orthogonal(scale)(key, (n_in, n_out)),
            "b": jnp.zeros(n_out)}


def _conv(key, c_in, c_out, k, scale=np.sqrt(2)):
    w = jax.nn.initializers.orthogonal(scale)(key, (k * k * c_in, c_out))
    return {"w": w.T.reshape(c_out, c_in, k, k), "b": jnp.zeros(c_out)}


def init_params(key, obs_shape, n_actions, atari):
    ks = jax.random.split(key, 8)
    if atari:       # Nature CNN torso shared by actor and critic, as CleanRL's Atari agent
        torso = {"c1": _conv(ks[0], obs_shape[0], 32, 8), "c2": _conv(ks[1], 32, 64, 4),
                 "c3": _conv(ks[2], 64, 64, 3), "fc": _dense(ks[3], 64 * 7 * 7, 512,
                                                             np.sqrt(2))}
        return {"torso": torso, "actor": _dense(ks[4], 512, n_actions, 0.01),
                "critic": _dense(ks[5], 512, 1, 1.0)}
    n = int(np.prod(obs_shape))
    return {"a1": _dense(ks[0], n, 64, np.sqrt(2)), "a2": _dense(ks[1], 64, 64, np.sqrt(2)),
            "a3": _dense(ks[2], 64, n_actions, 0.01),
            "v1": _dense(ks[3], n, 64, np.sqrt(2)), "v2": _dense(ks[4], 64, 64, np.sqrt(2)),
            "v3": _dense(ks[5], 64, 1, 1.0)}


def _lin(p, x):
    return x @ p["w"] + p["b"]


def _cnn(p, x, stride):
    y = jax.lax.conv_general_dilated(x, p["w"], (stride, stride), "VALID",
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return jax.nn.relu(y + p["b"][None, :, None, None])


def policy(params, obs, atari):
    """(logits, value) for a batch of observations."""
    if atari:
        t = params["torso"]
        x = obs.astype(jnp.float32) / 255.0
        x = _cnn(t["c3"], _cnn(t["c2"], _cnn(t["c1"], x, 4), 2), 1)
        x = jax.nn.relu(_lin(t["fc"], x.reshape(x.shape[0], -1)))
        return _lin(params["actor"], x), _lin(params["critic"], x)[:, 0]
    x = obs.reshape(obs.shape[0], -1).astype(jnp.float32)
    a = jnp.tanh(_lin(params["a2"], jnp.tanh(_lin(params["a1"], x))))
    v = jnp.tanh(_lin(params["v2"], jnp.tanh(_lin(params["v1"], x))))
    return _lin(params["a3"], a), _lin(params["v3"], v)[:, 0]


def adam_init(params):
    z = jax.tree_util.tree_map(jnp.zeros_like, params)
    return {"m": z, "v": z, "t": jnp.zeros((), jnp.int32)}


def adam_step(params, grads, opt, lr, max_norm, b1=0.9, b2=0.999, eps=1e-5):
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree_util.tree_leaves(grads)))
    grads = jax.tree_util.tree_map(lambda g: g * jnp.minimum(1.0, max_norm / (norm + 1e-6)),
                                   grads)
    t = opt["t"] + 1
    m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, opt["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, opt["v"], grads)
    c1, c2 = 1 - b1 ** t, 1 - b2 ** t
    params = jax.tree_util.tree_map(lambda p, m, v: p - lr * (m / c1) / (jnp.sqrt(v / c2) + eps),
                                    params, m, v)
    return params, {"m": m, "v": v, "t": t}


# ------------------------------------------------------------------ training
def main(argv=None):
    args = parse_args(argv)
    envs = cypool.make_vec(args.env_id, num_envs=args.num_envs, num_threads=args.env_threads)
    n_actions = int(envs.single_action_space.n)
    obs_shape = envs.single_observation_space.shape
    obs0, _ = envs.reset(seed=args.seed)
    handle, recv, send, step_env = envs.xla()

    key = jax.random.PRNGKey(args.seed)
    key, pkey = jax.random.split(key)
    params = init_params(pkey, obs_shape, n_actions, args.atari)
    opt = adam_init(params)
    act = partial(policy, atari=args.atari)

    @jax.jit
    def rollout(params, handle, obs, done, ep, key):
        """num_steps env steps, the policy acting between them: one lax.scan."""
        def body(c, _):
            handle, obs, done, ep, key = c
            key, sk = jax.random.split(key)
            logits, value = act(params, obs)
            action = jax.random.categorical(sk, logits)
            logp = jax.nn.log_softmax(logits)[jnp.arange(action.shape[0]), action]
            handle, (nobs, reward, term, trunc, _info) = step_env(handle,
                                                                 action.astype(jnp.int32))
            ndone = term | trunc
            ret, length = ep
            # next-step autoreset: a step after an end only resets (reward 0, not counted)
            ret, length = ret + reward, length + 1 - done.astype(jnp.int32)
            stats = (jnp.where(ndone, ret, 0.0), jnp.where(ndone, length, 0), ndone)
            ep = (jnp.where(ndone, 0.0, ret), jnp.where(ndone, 0, length))
            store = (obs, action, logp, value, reward.astype(jnp.float32), done)
            return (handle, nobs, ndone, ep, key), (store, stats)
        (handle, obs, done, ep, key), (store, stats) = jax.lax.scan(
            body, (handle, obs, done, ep, key), None, length=args.num_steps)
        _, last_value = act(params, obs)
        return handle, obs, done, ep, key, store, stats, last_value

    @jax.jit
    def update(params, opt, store, last_value, last_done, key, lr):
        obs, actions, logp, values, rewards, dones = store

        def gae(c, t):        # backwards: dones[t] is "obs[t] starts a new episode"
            adv, next_value, next_done = c
            nonterminal = 1.0 - next_done
            delta = rewards[t] + args.gamma * next_value * nonterminal - values[t]
            adv = delta + args.gamma * args.gae_lambda * nonterminal * adv
            return (adv, values[t], dones[t].astype(jnp.float32)), adv
        _, adv = jax.lax.scan(gae, (jnp.zeros_like(last_value), last_value,
                                    last_done.astype(jnp.float32)),
                              jnp.arange(args.num_steps - 1, -1, -1))
        adv = adv[::-1]
        returns = adv + values
        flat = jax.tree_util.tree_map(lambda x: x.reshape((args.batch_size,) + x.shape[2:]),
                                      (obs, actions, logp, values, adv, returns))

        def loss_fn(params, mb):
            o, a, old_logp, old_v, mb_adv, mb_ret = mb
            logits, v = act(params, o)
            logall = jax.nn.log_softmax(logits)
            new_logp = logall[jnp.arange(a.shape[0]), a]
            ratio = jnp.exp(new_logp - old_logp)
            mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg = jnp.maximum(-mb_adv * ratio,
                             -mb_adv * jnp.clip(ratio, 1 - args.clip_coef, 1 + args.clip_coef))
            v_clip = old_v + jnp.clip(v - old_v, -args.clip_coef, args.clip_coef)
            v_loss = 0.5 * jnp.maximum((v - mb_ret) ** 2, (v_clip - mb_ret) ** 2).mean()
            entropy = -(jnp.exp(logall) * logall).sum(-1).mean()
            return pg.mean() - args.ent_coef * entropy + args.vf_coef * v_loss

        def epoch(c, _):
            params, opt, key = c
            key, sk = jax.random.split(key)
            perm = jax.random.permutation(sk, args.batch_size).reshape(
                args.num_minibatches, args.minibatch_size)

            def minibatch(c, idx):
                params, opt = c
                mb = jax.tree_util.tree_map(lambda x: x[idx], flat)
                loss, grads = jax.value_and_grad(loss_fn)(params, mb)
                params, opt = adam_step(params, grads, opt, lr, args.max_grad_norm)
                return (params, opt), loss
            (params, opt), losses = jax.lax.scan(minibatch, (params, opt), perm)
            return (params, opt, key), losses.mean()
        (params, opt, key), losses = jax.lax.scan(epoch, (params, opt, key), None,
                                                  length=args.update_epochs)
        return params, opt, key, losses[-1]

    obs = jnp.asarray(obs0)
    done = jnp.zeros(args.num_envs, jnp.bool_)
    ep = (jnp.zeros(args.num_envs, jnp.float32), jnp.zeros(args.num_envs, jnp.int32))
    start, steps = time.time(), 0
    for it in range(1, args.num_iterations + 1):
        lr = args.learning_rate * (1.0 - (it - 1.0) / args.num_iterations)
        handle, obs, done, ep, key, store, stats, last_value = rollout(params, handle, obs,
                                                                       done, ep, key)
        params, opt, key, loss = update(params, opt, store, last_value, done, key, lr)
        steps += args.batch_size
        rets, lens, ended = jax.device_get(stats)
        n = int(ended.sum())
        mean_ret = float(rets[ended].mean()) if n else float("nan")
        mean_len = float(lens[ended].mean()) if n else float("nan")
        print(f"iter {it}/{args.num_iterations} steps {steps} sps {steps / (time.time() - start):.0f} "
              f"episodes {n} return {mean_ret:.2f} length {mean_len:.1f} loss {float(loss):.4f}",
              flush=True)
    envs.close()
    return params


if __name__ == "__main__":
    main()
