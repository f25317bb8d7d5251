"""How this cypool was built and what it runs on (show_config), and where its headers are
(get_include)."""
from __future__ import annotations

__all__ = ["get_include", "show_config"]


def get_include() -> list[str]:
    """Directories an extension that cimports cypool's engine (``cimport
    cypool._core._engine``) needs, for Cython's ``include_path`` and the C compiler's
    ``include_dirs`` (with ``numpy.get_include()``)."""
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.dirname(here), os.path.join(here, "_core")]


def show_config(file=None) -> dict:
    """Print (and return) how this cypool was built and what it runs on: the OpenMP runtime,
    threads, the Cython and numpy versions, the BLAS routine numpy's dot uses, and what each
    family reports of itself (its simulator's versions)."""
    import sys

    import numpy

    from cypool._numpy_blas import ROUTINE
    from cypool.registry import families
    from cypool._core import _openmp
    from cypool._version import __version__
    from cypool._threads import usable_cores

    cfg = {
        "cypool": __version__,
        "built_with_openmp": _openmp.built_with_openmp(),
        "openmp_version": _openmp.openmp_version(),
        "omp_max_threads": _openmp.omp_max_threads(),
        "usable_cores": usable_cores(),
        "cython": _openmp.cython_version(),
        "numpy": numpy.__version__,
        "numpy_dot": ROUTINE.describe(),
    }
    for entry in families():
        if entry.config is not None:
            cfg.update(entry.config())
    out = file or sys.stdout
    for k, v in cfg.items():
        print(f"{k:>18}: {v}", file=out)
    return cfg
