"""cypool beyond one machine: pools as Ray actors behind one ``cypool.VectorEnv``.

``make_ray_vec(env_id, num_envs, num_workers=W)`` (or ``cypool.make_vec(..., backend="ray")``)
starts W Ray actors, each owning an ordinary cypool pool of about ``num_envs / W`` envs whose
OpenMP threads use the CPUs the actor reserved. The returned object is a
:class:`RayVectorEnv`, a ``gymnasium.vector.VectorEnv`` beside the local
:class:`cypool.VectorEnv` (registered with it, so ``isinstance(env, cypool.VectorEnv)``
holds) with the same spaces, autoreset modes, ``reset``/``step`` and ``send``/``recv``;
env i gets the same seed and therefore the same trajectory as in a local pool.

Ray is an optional dependency (``pip install "cypool[ray]"``): this package imports it only
when a Ray pool is made, so ``import cypool`` never needs it.
"""
from __future__ import annotations

from cypool.errors import WorkerDiedError

__all__ = ["make_ray_vec", "RayVectorEnv", "WorkerDiedError"]


def _import_backend():
    try:
        from cypool.distributed import ray_backend
    except ImportError as err:
        if getattr(err, "name", None) == "ray" or "ray" in str(err).split("'"):
            raise ImportError("cypool: backend='ray' needs Ray; install it with "
                              "pip install \"cypool[ray]\" (or pip install ray)") from err
        raise
    return ray_backend


def make_ray_vec(env_id: str, num_envs: int, *, num_workers: int, ray_address=None,
                 **make_vec_kwargs):
    """Make a :class:`RayVectorEnv`: ``num_envs`` envs split over ``num_workers`` Ray actors.

    Parameters
    ----------
    env_id : str
        Any id of :func:`cypool.list_envs`.
    num_envs : int
        Total number of envs (rows of every batch); actor w holds a contiguous block of them.
    num_workers : int
        Number of Ray actors, at most ``num_envs``.
    ray_address : str or None
        Address of a running cluster (``"127.0.0.1:6379"``, ``"auto"``). None: reuse the
        cluster this process is connected to, else the one in ``RAY_ADDRESS``, else start a
        local one.
    **make_vec_kwargs
        :func:`cypool.make_vec`'s arguments (``num_threads`` is per actor), plus
        ``num_cpus_per_worker`` (CPUs each actor reserves; default its thread count),
        ``ray_init_kwargs`` (for a cluster started here), ``actor_options`` (extra
        ``.options()`` of every actor) and ``start_timeout`` (seconds to wait for the actors
        to be placed and to build their pools, default 60).
    """
    return _import_backend().RayVectorEnv(env_id, num_envs, num_workers=num_workers,
                                          ray_address=ray_address, **make_vec_kwargs)


def __getattr__(name):
    if name == "RayVectorEnv":
        return _import_backend().RayVectorEnv
    raise AttributeError(f"module 'cypool.distributed' has no attribute {name!r}")
