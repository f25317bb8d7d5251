"""cypool: vectorized RL environments stepped by Cython nogil loops over OpenMP threads."""
from __future__ import annotations

__version__ = "0.1.0"

from cypool.errors import ClosedEnvError, CypoolError, EngineError
from cypool.vector import VectorEnv
from cypool.registration import list_envs, register_all as _register_all
from cypool._threads import resolve_num_threads as _resolve_num_threads
from cypool._validate import check_limit
import numpy as np

__all__ = ["make_vec", "make_population", "PopulationEnv", "list_envs", "show_config",
           "get_include",
           "VectorEnv", "EngineError", "ClosedEnvError", "CypoolError", "__version__"]


def get_include() -> list[str]:
    """Directories an extension that cimports cypool's engine (``cimport
    cypool._core._engine``) needs, for Cython's ``include_path`` and the C compiler's
    ``include_dirs`` (with ``numpy.get_include()``)."""
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.dirname(here), os.path.join(here, "_core")]


def _check_num_envs(num_envs, memory: bool = True, env_id: str = ""):
    """num_envs in [1, MAX_NUM_ENVS] (ValueError beyond) and, with ``memory``, within what
    this process can hold at MIN_ENV_BYTES per env (MemoryError), before anything per env is
    built; the families check their own buffers and native state on top."""
    from cypool._validate import MIN_ENV_BYTES, check_num_envs, check_pool_memory

    n = check_num_envs(num_envs)
    if memory:
        check_pool_memory(n, MIN_ENV_BYTES, f"{env_id} envs".lstrip())
    return n


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
    from cypool.families import family_for

    if not isinstance(env_id, str):
        raise TypeError(f"env_id must be a str, got {type(env_id).__name__}")
    if env_id.startswith("cypool/"):
        env_id = env_id[len("cypool/"):]
    family = family_for(env_id)
    _check_num_envs(num_envs, env_id=env_id)
    threads = _resolve_num_threads(num_threads, num_envs)
    if max_episode_steps is None:
        max_episode_steps = family.default_max_episode_steps(env_id)
    else:
        max_episode_steps = check_limit(max_episode_steps)
    from cypool.vector import parse_autoreset_mode

    mode = parse_autoreset_mode(autoreset_mode)
    render_mode = task_kwargs.pop("render_mode", None)
    own = _env_kwargs_list(env_kwargs, num_envs)
    task_own = [{k: v for k, v in d.items() if k != "max_episode_steps"} for d in own]
    limits = [check_limit(d["max_episode_steps"]) if "max_episode_steps" in d
              else max_episode_steps for d in own]
    fam = family.make(env_id, num_envs, threads, max_episode_steps, task_kwargs,
                      member_kwargs=task_own if env_kwargs is not None else None)
    env_kw = [fam.merged_kwargs({**task_kwargs, **d}) for d in task_own]
    modes = fam.metadata.get("render_modes", [])
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode={render_mode!r} is not offered by {env_id}: it offers "
                         f"{modes or 'none'}")
    env = VectorEnv(fam, env_id=env_id, seed=seed, autoreset_mode=mode, copy=copy,
                    batch_size=batch_size)
    env.render_mode = render_mode
    try:
        for i, lim in enumerate(limits):
            if lim != max_episode_steps:
                fam.set_max_episode_steps(np.array([i], np.int64), lim)
    except BaseException:
        env.close()
        raise
    env._env_kw = env_kw
    env._make_args = dict(env_id=env_id, num_envs=num_envs, num_threads=threads, seed=seed,
                          autoreset_mode=mode, copy=copy, max_episode_steps=max_episode_steps,
                          batch_size=batch_size, render_mode=render_mode,
                          task_kwargs=dict(task_kwargs))
    return env


def _env_kwargs_list(env_kwargs, n):
    """env_kwargs as n dicts with str keys (None: n empty dicts)."""
    from collections.abc import Sequence

    if env_kwargs is None:
        return [{} for _ in range(n)]
    if isinstance(env_kwargs, (dict, str)) or not isinstance(env_kwargs, Sequence):
        raise TypeError("env_kwargs must be a list of num_envs dicts (or None)")
    if len(env_kwargs) != n:
        raise ValueError(f"env_kwargs must have num_envs={n} entries, got {len(env_kwargs)}")
    out = []
    for i, d in enumerate(env_kwargs):
        d = {} if d is None else d
        if not isinstance(d, dict) or any(not isinstance(k, str) for k in d):
            raise TypeError(f"env_kwargs[{i}] must be a dict of kwarg names (str) to values "
                            f"or None, got {d!r}")
        out.append(dict(d))
    return out


def show_config(file=None) -> dict:
    """Print (and return) how this cypool was built and what it runs on."""
    import sys

    import numpy

    from cypool._mujoco_import import import_mujoco
    from cypool import _numpy_blas
    from cypool._core import _openmp
    from cypool.mujoco import _pool as _mjpool
    from cypool._threads import usable_cores

    cfg = {
        "cypool": __version__,
        "built_with_openmp": _openmp.built_with_openmp(),
        "openmp_version": _openmp.openmp_version(),
        "omp_max_threads": _openmp.omp_max_threads(),
        "usable_cores": usable_cores(),
        "cython": _openmp.cython_version(),
        "numpy": numpy.__version__,
        "mujoco_compiled": _mjpool.HEADER_VERSION,
        "mujoco_runtime": _mjpool.runtime_version()[1],
        "mujoco_python": import_mujoco().__version__,
        "numpy_dot": _numpy_blas.ROUTINE.describe(),
    }
    try:
        from cypool.atari import _pool as _alepool

        cfg["ale"] = _alepool.ale_version()
    except ImportError:
        cfg["ale"] = None
    out = file or sys.stdout
    for k, v in cfg.items():
        print(f"{k:>18}: {v}", file=out)
    return cfg


from cypool.population import PopulationEnv, make_population  # noqa: E402
import cypool.classic  # noqa: E402,F401  (registers the classic-control ids)

_register_all()
