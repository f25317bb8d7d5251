"""OpenMP facts for show_config() and the thread-count rule."""
import os


def built_with_openmp():
    """True when the extensions were compiled with OpenMP."""
    return bool(cp_omp_built())


def openmp_version():
    """The _OPENMP date macro (e.g. 201511), or 0 without OpenMP."""
    return cp_omp_version()


def omp_max_threads():
    """omp_get_max_threads(): honours OMP_NUM_THREADS."""
    return cp_omp_max_threads()
