# Shared by the tabular toy-text pools (FrozenLake, CliffWalking, Taxi): the transition table
# of cypool.toy_text._tables, stacked over the pool's variants (V, nS, nA, K), and
# gymnasium's categorical_sample over it. Included by each pool module.
from libc.stdint cimport int64_t, uint8_t
from numpy.random.c_distributions cimport random_standard_uniform

cdef enum:
    TK = 3          # entries per (state, action): _tables.K


cdef struct TabView:
    const double* cdf      # (V, nS, nA, K) float64 cumsum of the entries' probabilities
    const double* prob     # (V, nS, nA, K) the entries' probabilities (info["prob"])
    const int64_t* nxt     # (V, nS, nA, K) next state
    const double* rew      # (V, nS, nA, K) reward
    const uint8_t* term    # (V, nS, nA, K) terminated
    const int64_t* cnt     # (V, nS, nA) entries in use
    const double* init_cdf # (nS,) cumsum of the initial state distribution
    const int64_t* variant # (num_envs,) env i's variant
    Py_ssize_t nS, nA


cdef inline int64_t first_above(const double* cdf, Py_ssize_t n, double u) noexcept nogil:
    """np.argmax(cdf[:n] > u): the first index whose cumsum exceeds u, 0 if none does
    (u >= cdf[-1], or NaNs)."""
    cdef Py_ssize_t k
    for k in range(n):
        if cdf[k] > u:
            return k
    return 0


cdef inline int64_t tab_reset(const TabView* t, bitgen_t* rng) noexcept nogil:
    """categorical_sample(initial_state_distrib): one random() draw."""
    return first_above(t.init_cdf, t.nS, random_standard_uniform(rng))


cdef inline Py_ssize_t tab_entry(const TabView* t, Py_ssize_t i, int64_t s, int64_t a,
                                 bitgen_t* rng) noexcept nogil:
    """categorical_sample over P[s][a] (one random() draw): the flat index of the entry."""
    cdef Py_ssize_t base = (t.variant[i] * t.nS + s) * t.nA + a
    cdef int64_t k = first_above(t.cdf + base * TK, t.cnt[base], random_standard_uniform(rng))
    return base * TK + k


cdef inline int bad_action(EnvRow* r, int64_t a, Py_ssize_t nA) noexcept nogil:
    """gymnasium's P[s][a] raises KeyError for an action outside 0..nA-1."""
    if 0 <= a < nA:
        return 0
    snprintf(r.err, ERRMSG_LEN, "action %lld is not in 0..%lld", <long long> a,
             <long long> (nA - 1))
    return 1


cdef inline int tab_env_reset(const TabView* t, int64_t* st, EnvRow* r) noexcept nogil:
    """The kernels of a plain tabular env (FrozenLake, CliffWalking): env state st = [s,
    lastaction]; obs s, info["prob"] 1 at a reset (the façade types it as gymnasium does)."""
    st[0] = tab_reset(t, r.rng)
    st[1] = -1
    (<int64_t*> r.obs)[0] = st[0]
    r.info[0] = 1.0
    return ST_OK


cdef inline int tab_env_step(const TabView* t, Py_ssize_t i, int64_t* st, int64_t a,
                             EnvRow* r) noexcept nogil:
    """One step of a plain tabular env with action a: the sampled entry's next state,
    reward, terminated and probability."""
    cdef Py_ssize_t e
    if bad_action(r, a, t.nA):
        return ST_ENGINE_ERROR
    e = tab_entry(t, i, st[0], a, r.rng)
    st[0] = t.nxt[e]
    st[1] = a
    (<int64_t*> r.obs)[0] = st[0]
    r.rew[0] = t.rew[e]
    r.term[0] = t.term[e]
    r.info[0] = t.prob[e]
    return ST_OK


def _view_arrays(stacked, init_cdf, variant):
    """The arrays a TabView points into, checked (C-contiguous, dtypes)."""
    cdf, prob, nxt, rew, term, cnt = stacked
    for a, dt in ((cdf, np.float64), (prob, np.float64), (nxt, np.int64), (rew, np.float64),
                  (term, np.uint8), (cnt, np.int64), (init_cdf, np.float64),
                  (variant, np.int64)):
        if a.dtype != dt or not a.flags.c_contiguous:
            raise TypeError("cypool: a toy-text table has the wrong layout")
    return (cdf, prob, nxt, rew, term, cnt, init_cdf, variant)


cdef void fill_view(TabView* t, tuple arrays, Py_ssize_t nS, Py_ssize_t nA):
    cdef cnp.ndarray cdf, prob, nxt, rew, term, cnt, init_cdf, variant
    cdf, prob, nxt, rew, term, cnt, init_cdf, variant = arrays
    t.cdf = <const double*> cnp.PyArray_DATA(cdf)
    t.prob = <const double*> cnp.PyArray_DATA(prob)
    t.nxt = <const int64_t*> cnp.PyArray_DATA(nxt)
    t.rew = <const double*> cnp.PyArray_DATA(rew)
    t.term = <const uint8_t*> cnp.PyArray_DATA(term)
    t.cnt = <const int64_t*> cnp.PyArray_DATA(cnt)
    t.init_cdf = <const double*> cnp.PyArray_DATA(init_cdf)
    t.variant = <const int64_t*> cnp.PyArray_DATA(variant)
    t.nS = nS
    t.nA = nA
