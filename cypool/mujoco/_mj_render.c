/* Offscreen MuJoCo rendering through EGL, the way gymnasium's MujocoRenderer renders
 * (rgb_array): one EGL context and mjrContext per pool, MuJoCo's own C renderer, frames
 * flipped to top-down rows.
 *
 * libEGL is opened with dlopen at the first render (no link-time dependency: a pool that
 * never renders needs no GL). The context is current only during cp_render_frames, which
 * restores whatever context the calling thread had before (gymnasium's envs in the same
 * thread keep theirs), so any thread may render next time.
 *
 * Camera, per env, as gymnasium's OffScreenViewer sets it up: FREE, lookat = the median of
 * the geoms' positions at the env's first render (kept across resets), distance = the
 * model's extent, then the task's default_camera_config; or a model camera (FIXED).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "_mj_render.h"

/* The EGL ABI pieces used here (values from the Khronos headers), so that building needs
 * no EGL headers. */
typedef void* EGLDisplay;
typedef void* EGLContext;
typedef void* EGLSurface;
typedef void* EGLConfig;
typedef void* EGLDeviceEXT;
typedef int EGLint;
typedef unsigned int EGLBoolean;
typedef unsigned int EGLenum;
#define EGL_NONE 0x3038
#define EGL_RED_SIZE 0x3024
#define EGL_GREEN_SIZE 0x3023
#define EGL_BLUE_SIZE 0x3022
#define EGL_ALPHA_SIZE 0x3021
#define EGL_DEPTH_SIZE 0x3025
#define EGL_STENCIL_SIZE 0x3026
#define EGL_COLOR_BUFFER_TYPE 0x303F
#define EGL_RGB_BUFFER 0x308E
#define EGL_SURFACE_TYPE 0x3033
#define EGL_PBUFFER_BIT 0x0001
#define EGL_RENDERABLE_TYPE 0x3040
#define EGL_OPENGL_BIT 0x0008
#define EGL_OPENGL_API 0x30A2
#define EGL_PLATFORM_DEVICE_EXT 0x313F
#define EGL_DRAW 0x3059
#define EGL_READ 0x305A

typedef struct {
  void* lib;
  void* (*GetProcAddress)(const char*);
  EGLBoolean (*Initialize)(EGLDisplay, EGLint*, EGLint*);
  EGLBoolean (*ChooseConfig)(EGLDisplay, const EGLint*, EGLConfig*, EGLint, EGLint*);
  EGLBoolean (*BindAPI)(EGLenum);
  EGLenum (*QueryAPI)(void);
  EGLContext (*CreateContext)(EGLDisplay, EGLConfig, EGLContext, const EGLint*);
  EGLBoolean (*DestroyContext)(EGLDisplay, EGLContext);
  EGLBoolean (*MakeCurrent)(EGLDisplay, EGLSurface, EGLSurface, EGLContext);
  EGLContext (*GetCurrentContext)(void);
  EGLDisplay (*GetCurrentDisplay)(void);
  EGLSurface (*GetCurrentSurface)(EGLint);
  EGLint (*GetError)(void);
  EGLDisplay (*GetDisplay)(void*);
  EGLBoolean (*QueryDevicesEXT)(EGLint, EGLDeviceEXT*, EGLint*);
  EGLDisplay (*GetPlatformDisplayEXT)(EGLenum, void*, const EGLint*);
  EGLDisplay display;
} cp_egl;

static cp_egl EGL;  /* process-wide: loaded and initialised once, under CREATE_LOCK */
/* Worker threads make their contexts at once (thread_init); EGL's loading and
 * mjr_makeContext (which fills process-wide GL function pointers) run one at a time. */
static pthread_mutex_t CREATE_LOCK = PTHREAD_MUTEX_INITIALIZER;

struct cp_renderer {
  EGLContext ctx;
  mjrContext con;
  mjvScene scn;
  mjvOption opt;
  int width, height;
  unsigned char* rgb;  /* width * height * 3: mjr_readPixels' bottom-up rows */
  float* depth;        /* width * height: gymnasium reads the depth too */
};

static int fail(char* err, int errlen, const char* what) {
  snprintf(err, (size_t)errlen, "%s", what);
  return 1;
}

static int load_egl(char* err, int errlen) {
  if (EGL.display) return 0;
  if (!EGL.lib) {
    EGL.lib = dlopen("libEGL.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!EGL.lib)
      return fail(err, errlen,
                  "cannot load libEGL.so.1: install an EGL driver (Debian/Ubuntu: libegl1 "
                  "libegl-mesa0 libgl1-mesa-dri for Mesa's software renderer)");
  }
#define SYM(name) EGL.name = (void*)dlsym(EGL.lib, "egl" #name); if (!EGL.name) \
  return fail(err, errlen, "libEGL.so.1 lacks egl" #name);
  SYM(GetProcAddress) SYM(Initialize) SYM(ChooseConfig) SYM(BindAPI) SYM(QueryAPI)
  SYM(CreateContext) SYM(DestroyContext) SYM(MakeCurrent) SYM(GetCurrentContext)
  SYM(GetCurrentDisplay) SYM(GetCurrentSurface) SYM(GetError) SYM(GetDisplay)
#undef SYM
  EGL.QueryDevicesEXT = (void*)EGL.GetProcAddress("eglQueryDevicesEXT");
  EGL.GetPlatformDisplayEXT = (void*)EGL.GetProcAddress("eglGetPlatformDisplayEXT");
  EGLDisplay dpy = 0;
  if (EGL.QueryDevicesEXT && EGL.GetPlatformDisplayEXT) {  /* mujoco.egl's choice */
    EGLDeviceEXT devices[16];
    EGLint n = 0;
    if (EGL.QueryDevicesEXT(16, devices, &n)) {
      for (EGLint k = 0; k < n && !dpy; k++) {
        EGLDisplay d = EGL.GetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[k], NULL);
        EGLint major, minor;
        if (d && EGL.Initialize(d, &major, &minor)) dpy = d;
      }
    }
  }
  if (!dpy) {
    EGLDisplay d = EGL.GetDisplay(NULL);
    EGLint major, minor;
    if (d && EGL.Initialize(d, &major, &minor)) dpy = d;
  }
  if (!dpy)
    return fail(err, errlen, "no EGL display could be initialised (is a GL driver installed? "
                             "Debian/Ubuntu: libegl-mesa0 libgl1-mesa-dri)");
  EGL.display = dpy;
  return 0;
}

/* Make ctx current on this thread; *saved receives what was current before. */
typedef struct { EGLDisplay dpy; EGLSurface draw, read; EGLContext ctx; } cp_current;

static void save_current(cp_current* s) {
  s->ctx = EGL.GetCurrentContext();
  s->dpy = EGL.GetCurrentDisplay();
  s->draw = EGL.GetCurrentSurface(EGL_DRAW);
  s->read = EGL.GetCurrentSurface(EGL_READ);
}

static void restore_current(const cp_current* s) {
  if (s->ctx)
    EGL.MakeCurrent(s->dpy, s->draw, s->read, s->ctx);
  else
    EGL.MakeCurrent(EGL.display, 0, 0, 0);
}

static int create_locked(mjModel* m, int width, int height, const int* vis_flags, int nflags,
                         int max_geom, cp_renderer** out, char* err, int errlen);

int cp_renderer_create(mjModel* m, int width, int height, const int* vis_flags, int nflags,
                       int max_geom, cp_renderer** out, char* err, int errlen) {
  pthread_mutex_lock(&CREATE_LOCK);
  int rc = create_locked(m, width, height, vis_flags, nflags, max_geom, out, err, errlen);
  pthread_mutex_unlock(&CREATE_LOCK);
  return rc;
}

static int create_locked(mjModel* m, int width, int height, const int* vis_flags, int nflags,
                         int max_geom, cp_renderer** out, char* err, int errlen) {
  static const EGLint attribs[] = {
      EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_ALPHA_SIZE, 8,
      EGL_DEPTH_SIZE, 24, EGL_STENCIL_SIZE, 8, EGL_COLOR_BUFFER_TYPE, EGL_RGB_BUFFER,
      EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
  EGLConfig cfg;
  EGLint ncfg = 0;
  cp_current saved;
  *out = NULL;
  if (load_egl(err, errlen)) return 1;
  cp_renderer* r = calloc(1, sizeof(cp_renderer));
  if (!r) return fail(err, errlen, "out of memory");
  r->rgb = malloc((size_t)width * height * 3);
  r->depth = malloc((size_t)width * height * sizeof(float));
  if (!r->rgb || !r->depth) {
    free(r->rgb); free(r->depth); free(r);
    return fail(err, errlen, "out of memory");
  }
  r->width = width;
  r->height = height;
  if (!EGL.ChooseConfig(EGL.display, attribs, &cfg, 1, &ncfg) || ncfg < 1) {
    cp_renderer_destroy(r);
    return fail(err, errlen, "eglChooseConfig found no RGBA8/depth24 pbuffer config");
  }
  EGLenum api = EGL.QueryAPI();
  EGL.BindAPI(EGL_OPENGL_API);
  r->ctx = EGL.CreateContext(EGL.display, cfg, 0, NULL);
  if (!r->ctx) {
    EGL.BindAPI(api);
    cp_renderer_destroy(r);
    snprintf(err, (size_t)errlen, "eglCreateContext failed (EGL error 0x%x)", EGL.GetError());
    return 1;
  }
  save_current(&saved);
  if (!EGL.MakeCurrent(EGL.display, 0, 0, r->ctx)) {
    EGL.BindAPI(api);
    cp_renderer_destroy(r);
    snprintf(err, (size_t)errlen, "eglMakeCurrent failed (EGL error 0x%x)", EGL.GetError());
    return 1;
  }
  /* gymnasium grows the model's offscreen buffer to the frame size (never shrinks it) */
  if (m->vis.global.offwidth < width) m->vis.global.offwidth = width;
  if (m->vis.global.offheight < height) m->vis.global.offheight = height;
  mjv_defaultOption(&r->opt);
  for (int k = 0; k < nflags; k++)
    if (vis_flags[2 * k] >= 0 && vis_flags[2 * k] < mjNVISFLAG)
      r->opt.flags[vis_flags[2 * k]] = (mjtByte)vis_flags[2 * k + 1];
  mjv_defaultScene(&r->scn);
  mjv_makeScene(m, &r->scn, max_geom);
  mjr_defaultContext(&r->con);
  mjr_makeContext(m, &r->con, mjFONTSCALE_150);
  mjr_setBuffer(mjFB_OFFSCREEN, &r->con);
  restore_current(&saved);
  EGL.BindAPI(api);
  *out = r;
  return 0;
}

void cp_renderer_destroy(cp_renderer* r) {
  if (!r) return;
  pthread_mutex_lock(&CREATE_LOCK);
  if (r->ctx) {
    cp_current saved;
    save_current(&saved);
    if (EGL.MakeCurrent(EGL.display, 0, 0, r->ctx)) {
      mjr_freeContext(&r->con);   /* its GL objects live in r->ctx */
      mjv_freeScene(&r->scn);
    }
    restore_current(&saved);
    EGL.DestroyContext(EGL.display, r->ctx);
  }
  pthread_mutex_unlock(&CREATE_LOCK);
  free(r->rgb);
  free(r->depth);
  free(r);
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* numpy's median of n values (the mean of the two middle ones for an even n). */
static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  if (n % 2) return v[n / 2];
  return (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

void cp_camera_first_render(const mjModel* m, const mjData* d, cp_camera* c) {
  double* v = malloc(sizeof(double) * (m->ngeom > 0 ? m->ngeom : 1));
  mjv_defaultCamera(&c->cam);
  c->cam.type = mjCAMERA_FREE;
  c->cam.fixedcamid = -1;
  for (int k = 0; k < 3; k++) {
    if (v && m->ngeom > 0) {
      for (int g = 0; g < m->ngeom; g++) v[g] = d->geom_xpos[3 * g + k];
      c->cam.lookat[k] = median(v, m->ngeom);
    }
  }
  free(v);
  c->cam.distance = m->stat.extent;
  /* the task's default_camera_config, then the camera the pool renders from */
  if (c->set_distance) c->cam.distance = c->distance;
  if (c->set_azimuth) c->cam.azimuth = c->azimuth;
  if (c->set_elevation) c->cam.elevation = c->elevation;
  if (c->set_lookat)
    for (int k = 0; k < 3; k++) c->cam.lookat[k] = c->lookat[k];
  if (c->set_trackbodyid) c->cam.trackbodyid = c->trackbodyid;
  c->ready = 1;
}

int cp_render_frames(cp_renderer* r, const mjModel* m, mjData** d, cp_camera* cams,
                     const long long* ids, long long n, int camera_id, unsigned char* out,
                     char* err, int errlen) {
  cp_current saved;
  mjrRect viewport = {0, 0, r->width, r->height};
  size_t row = (size_t)r->width * 3;
  save_current(&saved);
  if (!EGL.MakeCurrent(EGL.display, 0, 0, r->ctx)) {
    snprintf(err, (size_t)errlen, "eglMakeCurrent failed (EGL error 0x%x): the pool's GL "
             "context is current in another thread", EGL.GetError());
    return 1;
  }
  for (long long k = 0; k < n; k++) {
    long long i = ids[k];
    cp_camera* c = &cams[i];
    if (!c->ready) cp_camera_first_render(m, d[i], c);
    /* gymnasium's per-frame step: type and fixedcamid from the camera id */
    c->cam.type = camera_id == -1 ? mjCAMERA_FREE : mjCAMERA_FIXED;
    c->cam.fixedcamid = camera_id;
    mjv_updateScene(m, d[i], &r->opt, NULL, &c->cam, mjCAT_ALL, &r->scn);
    mjr_render(viewport, &r->scn, &r->con);
    mjr_readPixels(r->rgb, r->depth, viewport, &r->con);
    unsigned char* dst = out + (size_t)k * row * r->height;
    for (int y = 0; y < r->height; y++)  /* bottom-up rows to top-down */
      memcpy(dst + (size_t)y * row, r->rgb + (size_t)(r->height - 1 - y) * row, row);
  }
  restore_current(&saved);
  return 0;
}
