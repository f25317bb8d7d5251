cdef extern from "_omp_shim.h" nogil:
    int cp_omp_built()
    int cp_omp_max_threads()
    int cp_omp_thread_num()
    int cp_omp_version()
