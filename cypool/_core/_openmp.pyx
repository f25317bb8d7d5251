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


cdef extern from *:
    long CYTHON_HEX_VERSION   # defined by the Cython that generated this module


def cython_version():
    """Version of the Cython that compiled the extensions (Cython is not a runtime dependency)."""
    v = CYTHON_HEX_VERSION
    return f"{(v >> 24) & 0xFF}.{(v >> 16) & 0xFF}.{(v >> 8) & 0xFF}"
