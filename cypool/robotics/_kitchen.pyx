"""FrankaKitchen-v1 (gymnasium_robotics.envs.franka_kitchen: KitchenEnv over FrankaRobot,
gymnasium-robotics 1.4.2): the task kernels on cypool's MuJoCo pool.

Reset: mj_resetData; set_state(KitchenEnv's init_qpos, 0) (FrankaRobot's init_qvel is an alias
of data.qvel, zero after mj_resetData); the observation.
Step (FrankaRobot.step): a = 0 + clip(action, -1, 1) * 2; v = clip(a, vel_bound);
ctrl = clip(last noisy robot qpos + v * dt, pos_bound) (position actuators); mj_step x 40;
the observation; then KitchenEnv: each task still to complete, in the iteration order of
the reference's set of task names (the row's task order, fixed per process by Python's string
hashes), is completed when np.linalg.norm(qpos[task] - goal) < 0.3 (numpy's own ddot);
reward = their count; with remove_task_when_completed they leave the set; new ones are
appended to the episode's list; terminated (with terminate_on_tasks_completed) when that list
holds every goal task.
Observation (the robot's _get_obs, then KitchenEnv's): 9 robot qpos + U(-1, 1) noise, 9 qvel,
21 object qpos, 20 object qvel, drawn in that order from the env's stream, each value
x + (ratio * amp) * u as numpy evaluates it; the object amplitudes are the config's
pos_noise_amp[8:] and vel_noise_amp[9:], as the reference indexes them.
Info: three codes per env (the family turns them into gymnasium's lists): the bitmask of tasks
to complete, the bitmask of this step's completions (bit k: the row's task k), and the
episode's completions in order, base 8 (digit j: task index + 1 of the j-th completion)."""
from libc.stdint cimport int64_t

from cypool.mujoco._mj.mujoco cimport mjModel, mjData, mjtNum
from cypool.mujoco._task cimport (export_task, MjEnv, MjTask, sim_reset_data, sim_set_state,
                                  np_norm)
from cypool.mujoco._numeric cimport uniform_fill

cdef extern from "mujoco/mujoco.h" nogil:
    ctypedef struct KitchenData "mjData":
        mjtNum* qpos
        mjtNum* qvel

cdef enum:
    NQ = 30
    NV = 29
    NR = 9             # robot joints: qpos and dofs 0..8
    MAXT = 7           # tasks
    MAXG = 7           # values of one task's goal
    MAXA = 17          # achieved (and desired) values of every task together
    FRAME_SKIP = 40

# Parameter row
cdef enum:
    P_RNR, P_ONR, P_TERM, P_REMOVE, P_DT, P_NTASK, P_NACH, P_THRESH,
    P_POS_AMP, P_VEL_AMP = P_POS_AMP + NV, P_VLO = P_VEL_AMP + NV, P_VHI = P_VLO + NR,
    P_PLO = P_VHI + NR, P_PHI = P_PLO + NR, P_INIT = P_PHI + NR, P_TSTART = P_INIT + NQ,
    P_TLEN = P_TSTART + MAXT, P_TGOAL = P_TLEN + MAXT, P_ACH = P_TGOAL + MAXT * MAXG,
    P_DES = P_ACH + MAXA, P_ACT = P_DES + MAXA, P_SIZE = P_ACT + NR

# Task state: the last noisy robot qpos, tasks left (bitmask), the episode's completions
# (code, bitmask, count)
cdef enum:
    T_LAST, T_LEFT = T_LAST + NR, T_EP, T_EPMASK, T_EPN, NSTATE

# Info row
cdef enum:
    I_TASKS, I_STEP, I_EP, NINFO

OBS_SIZE = 59
TASK_STATE = NSTATE
INFO_WIDTH = NINFO
LIMITS = dict(nq=NQ, nv=NV, nr=NR, tasks=MAXT, goal=MAXG, achieved=MAXA,
              frame_skip=FRAME_SKIP)
PARAMS = dict(rnr=P_RNR, onr=P_ONR, term=P_TERM, remove=P_REMOVE, dt=P_DT, ntask=P_NTASK,
              nach=P_NACH, thresh=P_THRESH, pos_amp=P_POS_AMP, vel_amp=P_VEL_AMP, vlo=P_VLO,
              vhi=P_VHI, plo=P_PLO, phi=P_PHI, init=P_INIT, tstart=P_TSTART, tlen=P_TLEN,
              tgoal=P_TGOAL, ach=P_ACH, des=P_DES, act=P_ACT, size=P_SIZE)


cdef inline double np_clip(double x, double lo, double hi) noexcept nogil:
    """np.clip of finite float64s: minimum(maximum(x, lo), hi), numpy's comparisons."""
    x = x if x > lo else lo
    return x if x < hi else hi


cdef void _obs(MjEnv* e) noexcept nogil:
    """FrankaRobot._get_obs then KitchenEnv._get_obs: [observation, achieved, desired]."""
    cdef const double* p = e.prm
    cdef KitchenData* d = <KitchenData*> e.d
    cdef double* o = e.obs
    cdef double u[NQ]
    cdef double r = p[P_RNR], s = p[P_ONR]
    cdef int k, nach = <int> p[P_NACH]
    uniform_fill(e.rng, -1.0, 1.0, u, NR)
    for k in range(NR):
        o[k] = d.qpos[k] + (r * p[P_POS_AMP + k]) * u[k]
        e.tstate[T_LAST + k] = o[k]
    uniform_fill(e.rng, -1.0, 1.0, u, NR)
    for k in range(NR):
        o[NR + k] = d.qvel[k] + (r * p[P_VEL_AMP + k]) * u[k]
    uniform_fill(e.rng, -1.0, 1.0, u, NQ - NR)
    for k in range(NQ - NR):
        o[2 * NR + k] = d.qpos[NR + k] + (s * p[P_POS_AMP + NR - 1 + k]) * u[k]
    uniform_fill(e.rng, -1.0, 1.0, u, NV - NR)
    for k in range(NV - NR):
        o[NR + NQ + k] = d.qvel[NR + k] + (s * p[P_VEL_AMP + NR + k]) * u[k]
    o = e.obs + NQ + NV
    for k in range(nach):
        o[k] = d.qpos[<int> p[P_ACH + k]]
        o[nach + k] = p[P_DES + k]


cdef inline int _all(const double* p) noexcept nogil:
    return (1 << <int> p[P_NTASK]) - 1


cdef int _reset(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef int k
    if sim_reset_data(e):
        return 1
    for k in range(NQ):
        e.qpos_buf[k] = p[P_INIT + k]
    for k in range(NV):
        e.qvel_buf[k] = 0.0
    if sim_set_state(e, e.qpos_buf, e.qvel_buf):
        return 1
    _obs(e)
    e.tstate[T_LEFT] = _all(p)
    e.tstate[T_EP] = 0.0
    e.tstate[T_EPMASK] = 0.0
    e.tstate[T_EPN] = 0.0
    e.info[I_TASKS] = _all(p)
    e.info[I_STEP] = 0.0
    e.info[I_EP] = 0.0
    return 0


cdef int _step(MjEnv* e) noexcept nogil:
    cdef const double* p = e.prm
    cdef KitchenData* d = <KitchenData*> e.d
    cdef double ctrl[NR]
    cdef double diff[MAXG]
    cdef double a, dt = p[P_DT]
    cdef int k, j, start, n, ntask = <int> p[P_NTASK]
    cdef int left = <int> e.tstate[T_LEFT], done = 0, count = 0
    cdef int epmask = <int> e.tstate[T_EPMASK], epn = <int> e.tstate[T_EPN]
    cdef int64_t ep = <int64_t> e.tstate[T_EP], place
    for k in range(NR):
        a = 0.0 + np_clip(p[P_ACT + k], -1.0, 1.0) * 2.0
        a = np_clip(a, p[P_VLO + k], p[P_VHI + k])
        ctrl[k] = np_clip(e.tstate[T_LAST + k] + a * dt, p[P_PLO + k], p[P_PHI + k])
    if e.guard.step(e.m, e.d, ctrl, FRAME_SKIP, e.err):
        return 1
    _obs(e)
    for k in range(ntask):                     # compute_reward over the set, in its order
        if not (left >> k) & 1:
            continue
        start = <int> p[P_TSTART + k]
        n = <int> p[P_TLEN + k]
        for j in range(n):
            diff[j] = d.qpos[start + j] - p[P_TGOAL + MAXG * k + j]
        if np_norm(e, diff, n) < p[P_THRESH]:
            done |= 1 << k
            count += 1
    if p[P_REMOVE] != 0.0:
        left &= ~done
    place = 1
    for j in range(epn):
        place *= 8
    for k in range(ntask):
        if (done >> k) & 1 and not (epmask >> k) & 1:
            epmask |= 1 << k
            ep += (k + 1) * place
            place *= 8
            epn += 1
    e.tstate[T_LEFT] = left
    e.tstate[T_EP] = <double> ep
    e.tstate[T_EPMASK] = epmask
    e.tstate[T_EPN] = epn
    e.info[I_TASKS] = left
    e.info[I_STEP] = done
    e.info[I_EP] = <double> ep
    e.rew[0] = <double> count
    e.term[0] = 1 if p[P_TERM] != 0.0 and epn == ntask else 0
    return 0


cdef MjTask TASK
TASK.reset = _reset
TASK.step = _step


def task_capsule():
    return export_task(&TASK)
