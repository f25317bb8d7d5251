"""Building a local pool: every make argument is checked once, into one :class:`Request`,
which a backend builds a pool from (:func:`local_vec` here; the Ray backend's actors call
:func:`make_local`); ``make_population`` starts from the same request, and unpickling a pool
rebuilds it with :func:`restore`."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium.vector import AutoresetMode

from cypool._pool_api import check_snapshot
from cypool._threads import resolve_num_threads
from cypool._validate import check_limit, check_pool_size, env_id_of, env_kwargs_list
from cypool.registry import FamilyEntry, family_for
from cypool.vector import VectorEnv, parse_autoreset_mode

__all__ = ["Request", "request", "local_vec", "make_local", "restore"]


@dataclass(frozen=True)
class Request:
    """One checked make: what a backend builds a pool from.

    env_id
        The id, without gymnasium's ``cypool/`` namespace.
    family
        The registry's entry serving it.
    num_envs, num_threads
        Envs in the pool, and the threads stepping them (resolved: never None).
    max_episode_steps
        The pool's truncation limit (the family's default when none was given; None: no
        limit).
    autoreset_mode
        A gymnasium ``AutoresetMode``.
    task_kwargs
        The kwargs every env shares (unchecked against the family: the family checks them).
    env_kwargs
        Env i's own task kwargs on top of ``task_kwargs`` (None: none was given).
    limits
        Env i's truncation limit.
    """

    env_id: str
    family: FamilyEntry
    num_envs: int
    num_threads: int
    max_episode_steps: int | None
    autoreset_mode: AutoresetMode
    task_kwargs: dict
    env_kwargs: list | None
    limits: list


def request(env_id, num_envs, *, num_threads=None, max_episode_steps=None,
            autoreset_mode="next_step", env_kwargs=None, task_kwargs=None) -> Request:
    """Check make_vec's arguments (see there) into a :class:`Request`; ``env_kwargs`` entries
    may hold ``max_episode_steps``. Raises before anything is built."""
    env_id = env_id_of(env_id)
    family = family_for(env_id)
    n = check_pool_size(num_envs, env_id)
    threads = resolve_num_threads(num_threads, n)
    if max_episode_steps is None:
        max_episode_steps = family.default_max_episode_steps(env_id)
    else:
        max_episode_steps = check_limit(max_episode_steps)
    mode = parse_autoreset_mode(autoreset_mode)
    own = env_kwargs_list(env_kwargs, n)
    limits = [check_limit(d["max_episode_steps"]) if "max_episode_steps" in d
              else max_episode_steps for d in own]
    task_own = None if env_kwargs is None else [
        {k: v for k, v in d.items() if k != "max_episode_steps"} for d in own]
    return Request(env_id, family, n, threads, max_episode_steps, mode,
                   dict(task_kwargs or {}), task_own, limits)


def make_local(env_id: str, num_envs: int = 1, *, num_threads: int | None = None,
               seed: int | None = None, autoreset_mode="next_step", copy: bool = True,
               max_episode_steps: int | None = None, batch_size: int | None = None,
               env_kwargs: list[dict] | None = None, render_mode=None,
               **task_kwargs) -> VectorEnv:
    """``cypool.make_vec`` with the local backend (its arguments, less the Ray ones)."""
    req = request(env_id, num_envs, num_threads=num_threads,
                  max_episode_steps=max_episode_steps, autoreset_mode=autoreset_mode,
                  env_kwargs=env_kwargs, task_kwargs=task_kwargs)
    return local_vec(req, seed=seed, copy=copy, batch_size=batch_size, render_mode=render_mode)


def local_vec(req: Request, *, seed=None, copy=True, batch_size=None,
              render_mode=None) -> VectorEnv:
    """The local backend: a :class:`cypool.VectorEnv` built from a request."""
    fam = req.family.make(req.env_id, req.num_envs, req.num_threads, req.max_episode_steps,
                          req.task_kwargs, member_kwargs=req.env_kwargs)
    own = req.env_kwargs or [{} for _ in range(req.num_envs)]
    env_kw = [fam.merged_kwargs({**req.task_kwargs, **d}) for d in own]
    modes = fam.metadata.get("render_modes", [])
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode={render_mode!r} is not offered by {req.env_id}: it "
                         f"offers {modes or 'none'}")
    make_args = dict(env_id=req.env_id, num_envs=req.num_envs, num_threads=req.num_threads,
                     seed=seed, autoreset_mode=req.autoreset_mode, copy=copy,
                     max_episode_steps=req.max_episode_steps, batch_size=batch_size,
                     render_mode=render_mode, task_kwargs=dict(req.task_kwargs))
    env = VectorEnv(fam, env_id=req.env_id, seed=seed, autoreset_mode=req.autoreset_mode,
                    copy=copy, batch_size=batch_size, env_kwargs=env_kw, make_args=make_args,
                    rebuild=restore)
    env.render_mode = render_mode
    if render_mode is not None and hasattr(fam, "set_render_mode"):
        fam.set_render_mode(render_mode)      # a family with several modes renders the pool's
    try:
        for i, lim in enumerate(req.limits):
            if lim != req.max_episode_steps:
                fam.set_max_episode_steps(np.array([i], np.int64), lim)
    except BaseException:
        env.close()
        raise
    return env


def restore(snapshot):
    """Unpickling: a new pool made as the original was, each env given its own kwargs, time
    limit and state; its next step is the one the original would have taken. The snapshot is
    checked first (an edited pickle must not leave an env stepping with no state)."""
    check_snapshot(snapshot, ("make", "env_kw", "limits", "state", "has_reset"))
    make = dict(snapshot["make"])
    task_kwargs = make.pop("task_kwargs")
    env = make_local(**make, **task_kwargs)
    try:
        n = env.num_envs
        check_snapshot(snapshot, (), n)
        for name in ("env_kw", "limits"):
            v = snapshot[name]
            if not isinstance(v, (list, tuple)) or len(v) != n:
                raise ValueError(f"cypool: the snapshot's {name} must be a list of {n}, got "
                                 f"{v!r:.80}")
        pool = env.pool
        for i, (kw, lim) in enumerate(zip(snapshot["env_kw"], snapshot["limits"])):
            if not isinstance(kw, dict):
                raise ValueError(f"cypool: the snapshot's env_kw[{i}] must be a dict")
            pool.configure(i, kw)              # an unchanged setting changes nothing
            if pool.limits()[i] != lim:
                pool.set_limit(i, lim)
        if snapshot["state"] is not None:
            env.set_state(snapshot["state"])   # every env (checked above): has_reset
    except BaseException:
        env.close()
        raise
    return env
