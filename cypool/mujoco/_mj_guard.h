/* Guarded MuJoCo calls: a fatal mju_error inside them returns a status instead of exiting.
 *
 * A global log handler (installed once at import) longjmps to a thread-local jmp_buf armed
 * around each guarded call; MuJoCo requires that an error handler never returns. Warnings
 * raised inside a guarded call are not printed (they are counted in d->warning and reported
 * per env); outside a guarded call every message goes to the previous handler.
 */
#ifndef CYPOOL_MJ_GUARD_H
#define CYPOOL_MJ_GUARD_H
#include <mujoco/mujoco.h>

#define CP_ERRMSG_LEN 256

void cp_install_log_handler(void);
/* MuJoCo's stage timers (mjcb_time) on or off; the first call remembers the installed timer. */
void cp_set_timers(int on);
/* ctrl <- action, mj_step nframe times, mj_rnePostConstraint (gymnasium's do_simulation). */
int cp_step(const mjModel* m, mjData* d, const mjtNum* ctrl, int nframe, char* err);
/* mj_resetData */
int cp_reset_data(const mjModel* m, mjData* d, char* err);
/* qpos, qvel <- given; mj_forward (gymnasium's set_state). */
int cp_set_state(const mjModel* m, mjData* d, const mjtNum* qpos, const mjtNum* qvel, char* err);
/* mj_forward (dm_control's physics.forward; with a model whose opt.disableflags has
 * mjDSBL_ACTUATION, its physics.reset and after_reset). */
int cp_forward(const mjModel* m, mjData* d, char* err);
/* mj_kinematics alone (world positions of bodies and sites). */
int cp_kinematics(const mjModel* m, mjData* d, char* err);
/* dm_control's Physics.step(nstep) with legacy_step: mj_step2, mj_step x (nstep - 1), mj_step1;
 * with RK4, mj_step x nstep, mj_step1. ctrl is left as it is. */
int cp_dmc_step(const mjModel* m, mjData* d, int nstep, char* err);
/* mj_step1 alone: rebuilds what the last mj_step1 left in the arena (contacts, constraint
 * rows), which an env restored from its mjData buffer lacks, before a legacy mj_step2. */
int cp_step1(const mjModel* m, mjData* d, char* err);
/* mj_loadXML: NULL with the message in err on a parse error or a fatal error (out of memory). */
mjModel* cp_load_xml(const char* path, char* err, int errlen);
/* mj_copyModel into a new model: NULL with the message in err on a fatal error. */
mjModel* cp_copy_model(const mjModel* m, char* err);
/* mj_makeData: NULL with the message in err on a fatal error (out of memory). */
mjData* cp_make_data(const mjModel* m, char* err);
/* With a GL context current: mjv_defaultScene + mjv_makeScene(max_geom), mjr_defaultContext +
 * mjr_makeContext(mjFONTSCALE_150) + mjr_setBuffer(mjFB_OFFSCREEN), gymnasium's set-up. A
 * fatal error (no GL functions reachable, an incomplete framebuffer, out of memory) returns
 * 1 with MuJoCo's message in err (CP_ERRMSG_LEN bytes); what was made is not freed. */
int cp_make_render_context(const mjModel* m, mjvScene* scn, int max_geom, mjrContext* con,
                           char* err);
/* mjv_updateScene (no perturbation, every category), mjr_render, mjr_readPixels. */
/* mjr_uploadHField for every heightfield of m (the context current). */
int cp_upload_hfields(const mjModel* m, const mjrContext* con, char* err);
int cp_render_scene(const mjModel* m, mjData* d, const mjvOption* opt, mjvCamera* cam,
                    mjvScene* scn, mjrRect viewport, const mjrContext* con, unsigned char* rgb,
                    float* depth, char* err);
/* Sum of d->warning[k].number over all k. */
int cp_warning_count(const mjData* d);
#endif
