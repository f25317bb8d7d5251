# cypool's public MuJoCo task API for Cython, version 1 (cypool.mujoco.api.TASK_API_VERSION):
# what a MuJoCo task module in a user's own package cimports. Build the module with
# cypool.mujoco.extension_kwargs(), register it with cypool.mujoco.register_task;
# docs/mujoco_tasks.md is the tutorial and the contract.
#
#   from cypool.mujoco.api cimport MjEnv, MjTask, export_task, sim_step, reset_noisy
#
# These names are the public ones; cypool.mujoco._task and cypool.mujoco._numeric, which
# define them (and which cypool's own tasks and earlier user tasks cimport), keep working.
# The MjEnv/MjTask layout is versioned by MJ_TASK_ABI, stamped into the capsule by
# export_task: a task built against another layout is refused with an ImportError when a
# pool reads its capsule, never called wrongly. Layout 2 (this one) appends m_noact and tstate
# to MjEnv, and forward/dmc_step (then step1, appended later within layout 2: a module built
# before it never reads past dmc_step) to MjGuard; tasks built against layout 1 still run.
#
# MjEnv (one env, given to the task's reset/step kernels; touch only this env):
#   m          const mjModel*  the pool's model, shared by every env: read only
#   d          mjData*         this env's simulation state
#   rng        bitgen_t*       this env's numpy PCG64 stream (numpy.random.c_distributions)
#   prm        const double*   this env's parameter row (the row configure() returned)
#   act        const double*   this env's action, nu values (float32 actions widened exactly)
#   act_f32    int             the action arrived as float32 (ctrl_cost rounds as numpy then)
#   obs        double*         this env's observation row (the size configure() returned)
#   info       double*         this env's info row (the columns of INFO, in order)
#   rew        double*         this env's reward (rew[0])
#   term       uint8_t*        this env's terminated flag (term[0]); truncation is cypool's
#   err        char*           CP_ERRMSG_LEN bytes: the message of a nonzero return
#   qpos_buf   double*         scratch of nq values; qvel_buf: scratch of nv values
#   m_noact    const mjModel*  m with actuation disabled (layout 2; dm_control's reset-time
#                              mj_forward, sim_forward(e, 1))
#   tstate     double*         this env's persistent task state, the pool's task_state width
#                              (layout 2; kept in snapshots)
#   guard, dot                 cypool's guarded MuJoCo calls and numpy's dot: use the
#                              helpers below, not these pointers
# MjTask: set .reset and .step (int fn(MjEnv*) noexcept nogil; 0 = ok, nonzero = failed
#   with a message in e.err, raised as cypool.EngineError naming the env) on a module-level
#   MjTask, and return export_task(&TASK) from the module's task_capsule().
# Helpers (noexcept nogil; the sim_* ones return nonzero on a MuJoCo error, message in e.err):
#   sim_step(e, nframe)            gymnasium's do_simulation(action, nframe)
#   sim_reset_data(e)              mj_resetData
#   sim_set_state(e, qpos, qvel)   gymnasium's set_state (then mj_forward)
#   reset_noisy(e, scale, normal)  gymnasium's reset_model noise: U(-s, s) qpos, U or s*N qvel
#   np_norm(e, v, n)               np.linalg.norm of a float64 vector, as numpy rounds it
#   clip, sum_sq, ctrl_cost, uniform_fill, normal_fill, all_finite: numpy's arithmetic and
#   draws, rounding as numpy does (see cypool/mujoco/_numeric.pxd)
from libc.stdint cimport uint8_t
from numpy.random cimport bitgen_t
from cypool.mujoco._mj.mujoco cimport mjModel, mjData, mjtNum
from cypool.mujoco._task cimport (MjEnv, MjTask, MjGuard, mj_task_fn, MJ_TASK_ABI, export_task,
                                  sim_step, sim_reset_data, sim_set_state, np_norm,
                                  reset_noisy, CP_ERRMSG_LEN)
from cypool.mujoco._numeric cimport (clip, sum_sq, ctrl_cost, uniform_fill, normal_fill,
                                     all_finite)
