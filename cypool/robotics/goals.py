"""GoalEnv's compute_reward / compute_terminated / compute_truncated of the PointMaze envs
(maze_v4.MazeEnv's), batched: any batch of goals (``(B, 2)``, ``(2,)``, broadcasting pairs), B
independent of the pool's num_envs, bit-identical to ``env.unwrapped.compute_reward(a, d,
info)`` of gymnasium-robotics: distances as ``np.linalg.norm(a - d, axis=-1)`` (squares
added) for rewards, as ``np.linalg.norm(a - d)`` (one BLAS dot over the whole array, so a
batch gives one bool, as in gymnasium-robotics) for termination, dense rewards by numpy's own
exp. float64 goals run natively (without the GIL; HER's C-contiguous (n, 2) batch read in
place); other dtypes take numpy's expression, which is then the reference's by construction.
Goals with NaN (or infinite) values are refused. :func:`per_setting` is the per-env dispatch
of every robotics family's goal functions, :class:`GoalMethod` their spec hooks.

:func:`call` is what ``env.call(name, *args)`` returns for these names (a tuple, one result
per env, each with that env's ``reward_type`` / ``continuing_task``)."""
from __future__ import annotations

import functools
import operator

import numpy as np

GOAL_RADIUS = 0.45
METHODS = ("compute_reward", "compute_terminated", "compute_truncated")


def _goals(achieved_goal, desired_goal):
    """The two goal arrays, checked: real numbers, last axis 2, broadcastable, finite."""
    out = []
    for name, g in (("achieved_goal", achieved_goal), ("desired_goal", desired_goal)):
        try:
            a = np.asarray(g)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be an array of (x, y) goals: {exc}") from None
        if a.dtype.kind not in "fiu" or a.dtype.kind == "f" and a.dtype.itemsize > 8:
            raise TypeError(f"{name} must be an array of real numbers (float16/32/64 or "
                            f"integers), got {a.dtype}")
        if a.ndim == 0 or a.shape[-1] != 2:
            raise ValueError(f"{name} must have shape (2,) or (..., 2), got {a.shape}")
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise ValueError(f"{name} contains NaN or infinite values")
        out.append(a)
    a, d = out
    try:
        np.broadcast_shapes(a.shape, d.shape)
    except ValueError:
        raise ValueError(f"achieved_goal {a.shape} and desired_goal {d.shape} do not "
                         f"broadcast") from None
    return a, d


def _native(a, d):
    """Both float64: (the broadcast pair as contiguous (N, 2) arrays, the batch shape)."""
    if a.dtype != np.float64 or d.dtype != np.float64:
        return None
    a, d = np.broadcast_arrays(a, d)
    shape = a.shape[:-1]
    return (np.ascontiguousarray(a.reshape(-1, 2)), np.ascontiguousarray(d.reshape(-1, 2)),
            shape)


def _scalar(out, shape):
    out = out.reshape(shape)
    return out[()] if out.ndim == 0 else out


def compute_reward(reward_type, achieved_goal, desired_goal, info=None):
    """MazeEnv.compute_reward with this reward type ("sparse" or "dense")."""
    from cypool.robotics import _point_maze as pm

    if reward_type not in ("sparse", "dense"):
        raise ValueError(f"reward_type must be 'sparse' or 'dense', got {reward_type!r}")
    out = pm.batch_rewards(achieved_goal, desired_goal, reward_type == "dense")
    if out is not None:                 # HER's (n, 2) float64 batch, in the kernel
        return out
    a, d = _goals(achieved_goal, desired_goal)
    nat = _native(a, d)
    if nat is None:                     # numpy's expression in the goals' dtypes
        dist = np.linalg.norm(a - d, axis=-1)
        return np.exp(-dist) if reward_type == "dense" else (dist <= GOAL_RADIUS).astype(
            np.float64)
    x, y, shape = nat
    dist = pm.goal_distances(x, y, False)   # (the fast path's dtype, other layouts)
    out = pm.dense_rewards(dist) if reward_type == "dense" else \
        (dist <= GOAL_RADIUS).astype(np.float64)
    return _scalar(out, shape)


def compute_terminated(continuing_task, achieved_goal, desired_goal, info=None):
    """MazeEnv.compute_terminated: False for a continuing task, else whether
    np.linalg.norm(achieved_goal - desired_goal) <= 0.45 (one bool, also for a batch)."""
    from cypool.robotics import _point_maze as pm

    a, d = _goals(achieved_goal, desired_goal)
    if continuing_task:
        return False
    nat = _native(a, d)
    if nat is None:
        return bool(np.linalg.norm(a - d) <= GOAL_RADIUS)
    x, y, _ = nat
    return bool(pm.norm_all(np.ascontiguousarray((x - y).ravel())) <= GOAL_RADIUS)


def compute_truncated(achieved_goal, desired_goal, info=None):
    """MazeEnv.compute_truncated: always False (the time limit truncates)."""
    _goals(achieved_goal, desired_goal)
    return False


def per_setting(fn, key, env_kwargs, *args, **kwargs):
    """One result per env, ``fn(value, *args, **kwargs)`` for each env's setting
    ``env_kwargs[i][key]``, computed once per distinct setting (every robotics family's goal
    functions)."""
    values = list(map(operator.itemgetter(key), env_kwargs))
    first = values[0] if values else None
    if values.count(first) == len(values):          # one setting, the usual case: one call
        return (fn(first, *args, **kwargs),) * len(values)
    done = {v: fn(v, *args, **kwargs) for v in set(values)}
    return tuple(done[v] for v in values)


class GoalMethod:
    """A robotics spec's method hook: ``hook(env_kwargs, *args, **kwargs)`` gives one result
    per env (``general``, the family's per_env for one name), and ``bind(env_kwargs)``
    (Pool.bind_method) the same bound to those kwargs: where every env has the same ``key``
    setting, ``fast(setting, num_envs, general)``'s kernel GoalCall (HER's batch computed
    once in the kernel, the general path for other calls), else the general path."""

    def __init__(self, general, key=None, fast=None):
        self.general, self.key, self.fast = general, key, fast

    def __call__(self, env_kwargs, *args, **kwargs):
        return self.general(env_kwargs, *args, **kwargs)

    def bind(self, env_kwargs):
        general = functools.partial(self.general, env_kwargs)
        settings = {kw[self.key] for kw in env_kwargs} if self.fast is not None else ()
        if len(settings) != 1:
            return general
        return self.fast(settings.pop(), len(env_kwargs), general)


def method_hooks(per_env, rewards_call):
    """A robotics spec's FamilySpec.methods: for each goal function name, the GoalMethod over
    ``per_env(name, env_kwargs, *args, **kwargs)``, compute_reward's bound by
    ``rewards_call(reward_type, num_envs, general)`` where every env has one reward type."""
    return {name: GoalMethod(functools.partial(per_env, name), "reward_type",
                             rewards_call if name == "compute_reward" else None)
            for name in METHODS}


def _rewards_call(reward_type, n, general):
    from cypool.robotics import _point_maze as pm
    if reward_type not in ("sparse", "dense"):      # the general path's ValueError
        return general
    return pm.rewards_call(reward_type == "dense", n, general)


def hooks():
    """The PointMaze/AntMaze specs' method hooks (FamilySpec.methods)."""
    return method_hooks(per_env, _rewards_call)


def per_env(name, env_kwargs, *args, **kwargs):
    """The goal function ``name`` for envs of complete kwargs ``env_kwargs`` (one dict per
    env): a tuple of one result per env, each computed once per distinct setting. The shape
    of a spec-level method hook (``fn(env_kwargs, *args, **kwargs)``)."""
    if name not in METHODS:
        raise ValueError(f"cypool.robotics: {name!r} is not one of {METHODS}")
    if name == "compute_truncated":
        return (compute_truncated(*args, **kwargs),) * len(env_kwargs)
    key = "reward_type" if name == "compute_reward" else "continuing_task"
    fn = compute_reward if name == "compute_reward" else compute_terminated
    return per_setting(fn, key, env_kwargs, *args, **kwargs)


def call(env, name, *args, **kwargs):
    """``env.call(name, *args, **kwargs)`` of SyncVectorEnv for the goal functions of a
    cypool PointMaze VectorEnv (its settings read with ``env.get_attr``)."""
    if name not in METHODS:
        raise ValueError(f"cypool.robotics: call: {name!r} is not one of {METHODS}")
    rt, ct = env.get_attr("reward_type"), env.get_attr("continuing_task")
    return per_env(name, [dict(reward_type=r, continuing_task=c) for r, c in zip(rt, ct)],
                   *args, **kwargs)
