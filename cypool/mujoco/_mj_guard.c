#include "_mj_guard.h"

#include <setjmp.h>
#include <stdio.h>
#include <string.h>

static _Thread_local jmp_buf* cp_armed = NULL;
static _Thread_local char* cp_errbuf = NULL;
static mjfLogHandler cp_prev = NULL;
static int cp_installed = 0;

/* The mujoco Python package installs a clock-based mjcb_time so that MjData.timer profiles
 * each stage of a step; MuJoCo calls it about twenty times per mj_step, which costs 10-15% of
 * a step (measured: clock_gettime was 12.6% of a Hopper pool's CPU time). cypool turns it
 * off; CYPOOL_MUJOCO_TIMERS=1 keeps it (cypool.mujoco's import). */
static mjfTime cp_prev_time = NULL;
static int cp_time_saved = 0;

void cp_set_timers(int on) {
  if (!cp_time_saved) {
    cp_prev_time = mjcb_time;
    cp_time_saved = 1;
  }
  mjcb_time = on ? cp_prev_time : NULL;
}

static void cp_log(const mjLogMessage* msg) {
  if (cp_armed) {
    if (msg->level == mjLOG_ERROR) {
      if (cp_errbuf) snprintf(cp_errbuf, CP_ERRMSG_LEN, "%.*s", CP_ERRMSG_LEN - 1, msg->subject);
      longjmp(*cp_armed, 1); /* never return into MuJoCo after an error */
    }
    return; /* warnings from worker threads are counted in d->warning, not printed */
  }
  if (cp_prev) cp_prev(msg);
}

void cp_install_log_handler(void) {
  if (!cp_installed) {
    cp_prev = mju_setLogHandler(cp_log);
    cp_installed = 1;
  }
}

/* Each guarded call arms a jmp_buf local to its own frame, so setjmp stays in C. After an
 * error the call returns `fail` (1 for status calls, NULL for constructors). */
#define CP_GUARD_BEGIN_OR(err, fail) \
  jmp_buf env;                       \
  jmp_buf* saved = cp_armed;         \
  char* saved_err = cp_errbuf;       \
  cp_errbuf = (err);                 \
  if (setjmp(env)) {                 \
    cp_armed = saved;                \
    cp_errbuf = saved_err;           \
    return (fail);                   \
  }                                  \
  cp_armed = &env;
#define CP_GUARD_BEGIN(err) CP_GUARD_BEGIN_OR(err, 1)
#define CP_GUARD_RESTORE \
  cp_armed = saved;      \
  cp_errbuf = saved_err;
#define CP_GUARD_END \
  CP_GUARD_RESTORE   \
  return 0;

int cp_step(const mjModel* m, mjData* d, const mjtNum* ctrl, int nframe, char* err) {
  CP_GUARD_BEGIN(err)
  memcpy(d->ctrl, ctrl, sizeof(mjtNum) * m->nu);
  for (int k = 0; k < nframe; k++) mj_step(m, d);
  mj_rnePostConstraint(m, d);
  CP_GUARD_END
}

int cp_reset_data(const mjModel* m, mjData* d, char* err) {
  CP_GUARD_BEGIN(err)
  mj_resetData(m, d);
  CP_GUARD_END
}

int cp_set_state(const mjModel* m, mjData* d, const mjtNum* qpos, const mjtNum* qvel, char* err) {
  CP_GUARD_BEGIN(err)
  memcpy(d->qpos, qpos, sizeof(mjtNum) * m->nq);
  memcpy(d->qvel, qvel, sizeof(mjtNum) * m->nv);
  mj_forward(m, d);
  CP_GUARD_END
}

int cp_forward(const mjModel* m, mjData* d, char* err) {
  CP_GUARD_BEGIN(err)
  mj_forward(m, d);
  CP_GUARD_END
}

int cp_kinematics(const mjModel* m, mjData* d, char* err) {
  CP_GUARD_BEGIN(err)
  mj_kinematics(m, d);
  CP_GUARD_END
}

int cp_step1(const mjModel* m, mjData* d, char* err) {
  CP_GUARD_BEGIN(err)
  mj_step1(m, d);
  CP_GUARD_END
}

int cp_dmc_step(const mjModel* m, mjData* d, int nstep, char* err) {
  CP_GUARD_BEGIN(err)
  if (m->opt.integrator != mjINT_RK4) {
    mj_step2(m, d);
    for (int k = 1; k < nstep; k++) mj_step(m, d);
  } else {
    for (int k = 0; k < nstep; k++) mj_step(m, d);
  }
  mj_step1(m, d);
  CP_GUARD_END
}

int cp_make_render_context(const mjModel* m, mjvScene* scn, int max_geom, mjrContext* con,
                           char* err) {
  CP_GUARD_BEGIN(err)
  mjv_defaultScene(scn);
  mjv_makeScene(m, scn, max_geom);
  mjr_defaultContext(con);
  mjr_makeContext(m, con, mjFONTSCALE_150);
  mjr_setBuffer(mjFB_OFFSCREEN, con);
  CP_GUARD_END
}

int cp_upload_hfields(const mjModel* m, const mjrContext* con, char* err) {
  CP_GUARD_BEGIN(err)
  for (int h = 0; h < m->nhfield; h++) mjr_uploadHField(m, con, h);
  CP_GUARD_END
}

int cp_render_scene(const mjModel* m, mjData* d, const mjvOption* opt, mjvCamera* cam,
                    mjvScene* scn, mjrRect viewport, const mjrContext* con, unsigned char* rgb,
                    float* depth, char* err) {
  CP_GUARD_BEGIN(err)
  mjv_updateScene(m, d, opt, NULL, cam, mjCAT_ALL, scn);
  mjr_render(viewport, scn, con);
  mjr_readPixels(rgb, depth, viewport, con);
  CP_GUARD_END
}

/* The constructors return a pointer, NULL after an error. MuJoCo frees nothing that a failed
 * allocation left behind; that memory is lost, the process keeps running. */
mjModel* cp_load_xml(const char* path, char* err, int errlen) {
  CP_GUARD_BEGIN_OR(err, NULL)
  mjModel* m = mj_loadXML(path, NULL, err, errlen);
  CP_GUARD_RESTORE
  return m;
}

mjData* cp_make_data(const mjModel* m, char* err) {
  CP_GUARD_BEGIN_OR(err, NULL)
  mjData* d = mj_makeData(m);
  CP_GUARD_RESTORE
  return d;
}

mjModel* cp_copy_model(const mjModel* m, char* err) {
  CP_GUARD_BEGIN_OR(err, NULL)
  mjModel* c = mj_copyModel(NULL, m);
  CP_GUARD_RESTORE
  return c;
}

int cp_warning_count(const mjData* d) {
  int n = 0;
  for (int k = 0; k < mjNWARNING; k++) n += d->warning[k].number;
  return n;
}
