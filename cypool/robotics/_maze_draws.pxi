# The maze logic of gymnasium-robotics' maze_v4.MazeEnv shared by the maze tasks (included by
# a task module that defines the parameter columns P_DENSE, P_CONTINUING, P_RESET_TARGET,
# P_NOISE, P_SCALE, P_NGOAL, P_NRESET, the reset options' P_OPT_GOAL, P_OPT_GX, P_OPT_GY,
# P_OPT_RESET, P_OPT_RX, P_OPT_RY and the task state T_GX, T_GY: the current goal). The
# cells: `locs`, the goal cells' (x, y) centres then the reset cells'.

cdef extern from "numpy/random/distributions.h" nogil:
    # Generator.integers(0, n) (int64): numpy's _rand_int64 for one value, rng = n - 1
    void random_bounded_uint64_fill(bitgen_t* bitgen_state, uint64_t off, uint64_t rng,
                                    cnp.npy_intp cnt, bint use_masked, uint64_t* out)

# reward threshold and goal radius of maze_v4
cdef double GOAL_RADIUS = 0.45
# a goal resampling loop that has not left the achieved goal's radius after this many draws
# is an error (gymnasium-robotics would loop on; with two cells or more it ends at once)
cdef long MAX_GOAL_DRAWS = 1000000

# np.exp of float64s: numpy's own "d->d" loop (its SIMD exp where the CPU has one, which
# differs from libm's on AVX-512), called without the GIL
from cypool._core._numpy_loops cimport NpLoop, numpy_loop, np_unary_n

cdef NpLoop EXP = numpy_loop(np.exp, "d->d")


cdef inline void np_exp_n(const double* x, double* out, cnp.npy_intp n) noexcept nogil:
    np_unary_n(EXP, x, out, n)


cdef inline double dist_axis(double dx, double dy) noexcept nogil:
    """np.linalg.norm(v, axis=-1) of a float64 2-vector: sqrt(add.reduce(v * v))."""
    return sqrt(dx * dx + dy * dy)


cdef inline double dist_dot(MjEnv* e, double dx, double dy) noexcept nogil:
    """np.linalg.norm(v) of a float64 2-vector: sqrt(v.dot(v)), numpy's BLAS dot."""
    cdef double v[2]
    v[0] = dx
    v[1] = dy
    return sqrt(e.dot(v, v, 2))


cdef inline uint64_t integers(bitgen_t* rng, uint64_t n) noexcept nogil:
    cdef uint64_t out = 0
    random_bounded_uint64_fill(rng, 0, n - 1, 1, False, &out)
    return out


cdef inline void noisy_cell(MjEnv* e, const double* cell, double* xy) noexcept nogil:
    """MazeEnv.add_xy_position_noise(cell.copy())."""
    cdef double noise[2]
    cdef double r = e.prm[P_NOISE]
    uniform_fill(e.rng, -r, r, noise, 1)
    uniform_fill(e.rng, -r, r, noise + 1, 1)
    xy[0] = cell[0] + noise[0] * e.prm[P_SCALE]
    xy[1] = cell[1] + noise[1] * e.prm[P_SCALE]


cdef inline void new_goal(MjEnv* e, const double* locs) noexcept nogil:
    """generate_target_goal, then its noise: the env's goal (task state)."""
    cdef uint64_t k = integers(e.rng, <uint64_t> e.prm[P_NGOAL])
    noisy_cell(e, locs + 2 * k, e.tstate + T_GX)


cdef inline void _fail(MjEnv* e, const char* msg) noexcept nogil:
    strncpy(e.err, msg, CP_ERRMSG_LEN - 1)
    e.err[CP_ERRMSG_LEN - 1] = 0


cdef int maze_reset_draws(MjEnv* e, const double* locs, double lim,
                          double* pos) noexcept nogil:
    """MazeEnv.reset: a new goal (task state), then the reset position (pos, with its
    noise): a reset cell farther than lim from the goal (maze_v4: 0.5 * maze_size_scaling;
    maze.py, v3: 0.5). reset(options=) given cells (P_OPT_GOAL / P_OPT_RESET set: the cell
    centre in P_OPT_GX.. / P_OPT_RX..) replace the cell draws, not the noise draws; the
    options serve this one reset: the flags are cleared here (env i's own row). Nonzero
    (message in e.err) where gymnasium-robotics loops forever."""
    cdef double* prm = <double*> e.prm          # env i's row; only the option flags change
    cdef Py_ssize_t n_reset = <Py_ssize_t> prm[P_NRESET]
    cdef const double* rlocs = locs + 2 * <Py_ssize_t> prm[P_NGOAL]
    cdef const double* cell
    cdef double gx, gy
    cdef Py_ssize_t k
    cdef bint reachable = False
    cdef bint given_goal = prm[P_OPT_GOAL] != 0.0, given_reset = prm[P_OPT_RESET] != 0.0
    prm[P_OPT_GOAL] = 0.0
    prm[P_OPT_RESET] = 0.0
    if given_goal:                  # cell_rowcol_to_xy(goal_cell), then its noise
        noisy_cell(e, prm + P_OPT_GX, e.tstate + T_GX)
    else:
        new_goal(e, locs)
    if given_reset:                 # no distance check against the goal
        noisy_cell(e, prm + P_OPT_RX, pos)
        return 0
    gx = e.tstate[T_GX]
    gy = e.tstate[T_GY]
    # generate_reset_pos: draw until a cell is farther than lim from the goal
    for k in range(n_reset):
        if not (dist_dot(e, rlocs[2 * k] - gx, rlocs[2 * k + 1] - gy) <= lim):
            reachable = True
            break
    if not reachable:
        _fail(e, b"maze: every reset cell is too close to the goal (gymnasium-robotics "
                 b"would draw reset cells forever)")
        return 1
    pos[0] = gx
    pos[1] = gy
    while dist_dot(e, pos[0] - gx, pos[1] - gy) <= lim:    # the first draw always happens
        cell = rlocs + 2 * integers(e.rng, <uint64_t> n_reset)
        pos[0] = cell[0]
        pos[1] = cell[1]
    noisy_cell(e, pos, pos)
    return 0


cdef int maze_step(MjEnv* e, double ax, double ay, const double* locs) noexcept nogil:
    """A step's maze part for the achieved goal (ax, ay): reward (compute_reward),
    terminated (compute_terminated), then update_goal. Returns success (0 or 1), or -1 on an
    error (message in e.err)."""
    cdef const double* prm = e.prm
    cdef double dist, gx = e.tstate[T_GX], gy = e.tstate[T_GY]
    cdef bint near
    cdef long draws
    dist = dist_axis(ax - gx, ay - gy)
    if prm[P_DENSE] != 0.0:
        dist = -dist
        np_exp_n(&dist, e.rew, 1)
    else:
        e.rew[0] = 1.0 if dist <= GOAL_RADIUS else 0.0
    near = dist_dot(e, ax - gx, ay - gy) <= GOAL_RADIUS
    e.term[0] = prm[P_CONTINUING] == 0.0 and near
    if prm[P_CONTINUING] != 0.0 and prm[P_RESET_TARGET] != 0.0 and near \
            and prm[P_NGOAL] > 1:
        draws = 0
        while dist_dot(e, ax - e.tstate[T_GX], ay - e.tstate[T_GY]) <= GOAL_RADIUS:
            if draws == MAX_GOAL_DRAWS:
                _fail(e, b"maze: no new goal outside the goal radius in 1e6 draws")
                return -1
            new_goal(e, locs)
            draws += 1
    return near


cdef int maze_step_v3(MjEnv* e, double ax, double ay, const double* locs) noexcept nogil:
    """maze.py's (v3) step order: compute_terminated first, which in a continuing task draws
    one new goal when the achieved goal is within 0.45 of the goal (and there are two goal
    cells or more); then compute_reward against the goal as it is now."""
    cdef const double* prm = e.prm
    cdef double dist
    cdef bint near = dist_dot(e, ax - e.tstate[T_GX], ay - e.tstate[T_GY]) <= GOAL_RADIUS
    e.term[0] = prm[P_CONTINUING] == 0.0 and near
    if prm[P_CONTINUING] != 0.0 and near and prm[P_NGOAL] > 1:
        new_goal(e, locs)
    dist = dist_axis(ax - e.tstate[T_GX], ay - e.tstate[T_GY])
    if prm[P_DENSE] != 0.0:
        dist = -dist
        np_exp_n(&dist, e.rew, 1)
    else:
        e.rew[0] = 1.0 if dist <= GOAL_RADIUS else 0.0
    return near
