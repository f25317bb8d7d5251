"""make_vec: every argument is checked once, into one :class:`Request`, which a backend builds
a pool from (the local one here; the Ray backend, :mod:`cypool.distributed`, checks with the
same functions); make_population (cypool.population) starts from the same request."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium.vector import AutoresetMode

from cypool._threads import resolve_num_threads
from cypool._validate import check_limit, check_pool_size, env_id_of, env_kwargs_list
from cypool.registry import FamilyEntry, family_for
from cypool.vector import VectorEnv, parse_autoreset_mode

__all__ = ["Request", "request", "make_vec"]


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


def make_vec(env_id: str, num_envs: int = 1, *, num_threads: int | None = None,
             seed: int | None = None, autoreset_mode="next_step", copy: bool = True,
             max_episode_steps: int | None = None, batch_size: int | None = None,
             env_kwargs: list[dict] | None = None, backend: str = "local",
             num_workers: int | None = None, ray_address: str | None = None,
             **task_kwargs) -> VectorEnv:
    """Make a pool of ``num_envs`` copies of ``env_id`` behind a gymnasium VectorEnv.

    Parameters
    ----------
    env_id : str
        One of :func:`list_envs` (e.g. ``"Ant-v5"``).
    num_envs : int
        Number of environments (rows of every batch), at most 2**31 - 1 (ValueError). A pool
        that cannot fit in the memory this process can get (RLIMIT_AS, its memory cgroup,
        MemAvailable + SwapFree) is refused with a MemoryError before any env is built.
    num_threads : int or None
        OpenMP threads; None means OMP_NUM_THREADS or the usable cores, at most num_envs.
    seed : int or None
        Seed of the first ``reset()`` when it is called without one (env i gets seed + i).
    autoreset_mode : str or gymnasium.vector.AutoresetMode
        ``"next_step"`` (default), ``"same_step"`` or ``"disabled"``.
    copy : bool
        True: returned arrays are copies; False: views of the pool's buffers, valid until the
        next call.
    max_episode_steps : int or None
        Truncation limit; None uses gymnasium's registered limit for the task.
    batch_size : int or None
        Async batching: ``recv()`` returns the first ``batch_size`` envs to finish while the
        others keep stepping. None (or num_envs) is sync mode.
    env_kwargs : list of num_envs dicts (or None entries), or None
        Env i's own settings on top of ``**task_kwargs`` (e.g. a different
        ``ctrl_cost_weight`` or Atari ``frame_skip`` per env) and its own
        ``max_episode_steps``; validated like the shared kwargs. Settings that change the
        model or the spaces must be the same for every env (a ``ValueError`` otherwise).
    backend : {"local", "ray"}
        ``"ray"`` spreads the envs over ``num_workers`` Ray actors (``pip install
        "cypool[ray]"``), each a local pool of a contiguous block of envs; same trajectories.
    num_workers : int or None
        Number of Ray actors (``backend="ray"`` only).
    ray_address : str or None
        Address of a running Ray cluster; None joins or starts a local one.
    **task_kwargs
        The task's constructor kwargs, with gymnasium's names and defaults.
    """
    if backend == "ray":
        from cypool.distributed import make_ray_vec

        if num_workers is None:
            raise ValueError("backend='ray' needs num_workers (the number of Ray actors)")
        return make_ray_vec(env_id, num_envs, num_workers=num_workers, ray_address=ray_address,
                            num_threads=num_threads, seed=seed, autoreset_mode=autoreset_mode,
                            copy=copy, max_episode_steps=max_episode_steps,
                            batch_size=batch_size, env_kwargs=env_kwargs, **task_kwargs)
    if backend != "local":
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    if num_workers is not None or ray_address is not None:
        raise ValueError("num_workers and ray_address need backend='ray'")
    render_mode = task_kwargs.pop("render_mode", None)
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
                    copy=copy, batch_size=batch_size, env_kwargs=env_kw, make_args=make_args)
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
