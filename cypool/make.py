"""make_vec: a pool on the local backend (:mod:`cypool.build`) or over Ray actors
(:mod:`cypool.distributed`, whose actors build local pools the same way)."""
from __future__ import annotations

from cypool.build import make_local
from cypool.vector import VectorEnv

__all__ = ["make_vec"]


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
    return make_local(env_id, num_envs, num_threads=num_threads, seed=seed,
                      autoreset_mode=autoreset_mode, copy=copy,
                      max_episode_steps=max_episode_steps, batch_size=batch_size,
                      env_kwargs=env_kwargs, **task_kwargs)


