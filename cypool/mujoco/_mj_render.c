/* Offscreen MuJoCo rendering, the way gymnasium's MujocoRenderer renders (rgb_array): one GL
 * context and mjrContext per renderer, MuJoCo's own C renderer, frames flipped to top-down
 * rows.
 *
 * Backends (MUJOCO_GL, read by the family): EGL, or OSMesa (Mesa's software renderer into a
 * client buffer), or AUTO: EGL, and OSMesa when EGL cannot make a context. The libraries are
 * opened with dlopen at the first render (no link-time dependency: a pool that never renders
 * needs no GL). Context settings are mujoco.egl's and mujoco.osmesa's, which gymnasium uses:
 *   EGL: RGBA8, depth 24, stencil 8, pbuffer-capable config, OpenGL API, no surface;
 *   OSMesa: OSMesaCreateContextExt(OSMESA_RGBA, depth 24, stencil 8, accum 0), bound to a
 *   width x height RGBA GL_FLOAT buffer.
 *
 * One backend per process. MuJoCo resolves its GL functions once per process, from the first
 * GetProcAddress it finds among the loaded libraries (eglGetProcAddress before
 * OSMesaGetProcAddress before glXGetProcAddressARB, then by load order); with EGL's
 * functions, an OSMesa context draws nothing (mjr_makeContext: "Default framebuffer is not
 * complete"). So the first renderer fixes the backend, a renderer asking for the other one
 * is refused, libEGL is opened RTLD_LOCAL until EGL has made a context (an EGL that fails
 * leaves no global eglGetProcAddress behind for the OSMesa fallback), and libOSMesa
 * RTLD_GLOBAL (MuJoCo then finds OSMesaGetProcAddress).
 *
 * A context is current only during cp_render_frames, which restores whatever context of the
 * same backend the calling thread had before (gymnasium's envs in the same thread keep
 * theirs), so any thread may render next time. OSMesa binds a context to the calling thread
 * without checking whether another thread has it current, so each renderer has a busy flag:
 * a second thread rendering with it at the same time gets an error, never a data race.
 *
 * Every MuJoCo call that can raise a fatal error runs under the guard (_mj_guard.c): a
 * failure is a status and a message, never an exit.
 *
 * Camera, per env, as gymnasium's OffScreenViewer sets it up: FREE, lookat = the median of
 * the geoms' positions at the env's first render (kept across resets), distance = the
 * model's extent, then the task's default_camera_config; or a model camera (FIXED).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "_mj_guard.h"
#include "_mj_render.h"

/* The EGL and OSMesa ABI pieces used here (values from the Khronos and Mesa headers), so that
 * building needs no GL headers. */
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

typedef void* OSMesaContext;
#define OSMESA_RGBA 0x1908 /* GL_RGBA */
#define OSMESA_TYPE 0x23
#define GL_FLOAT_TYPE 0x1406

#define MSG_LEN 512 /* a backend's failure message */

typedef struct {
  void* lib;
  char libname[256];
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
  int global;  /* lib reopened RTLD_GLOBAL (once EGL has made a context) */
} cp_egl;

typedef struct {
  void* lib;
  OSMesaContext (*CreateContextExt)(unsigned int, int, int, int, OSMesaContext);
  void (*DestroyContext)(OSMesaContext);
  unsigned char (*MakeCurrent)(OSMesaContext, void*, unsigned int, int, int);
  OSMesaContext (*GetCurrentContext)(void);
  unsigned char (*GetColorBuffer)(OSMesaContext, int*, int*, int*, void**);
  void (*GetIntegerv)(int, int*);
} cp_osmesa;

/* Process-wide, under CREATE_LOCK: the libraries (loaded once), the backend (fixed by the
 * first renderer). Worker threads make their contexts at once (thread_init); loading,
 * mjr_makeContext (which fills process-wide GL function pointers) and destruction run one
 * at a time. */
static cp_egl EGL;
static cp_osmesa OSM;
static int BACKEND = 0;
static pthread_mutex_t CREATE_LOCK = PTHREAD_MUTEX_INITIALIZER;
static char EGL_NAME[256] = "";     /* cp_gl_set_libraries: tests */
static char OSMESA_NAME[256] = "";

struct cp_renderer {
  int backend;
  void* ctx;           /* EGLContext or OSMesaContext */
  float* osbuf;        /* OSMesa: the context's default framebuffer (width * height RGBA) */
  int busy;            /* a thread is rendering with it */
  int made;            /* the mjrContext exists (in ctx) */
  int max_geom;
  mjrContext con;
  mjvScene scn;
  mjvOption opt;
  int width, height;
  unsigned char* rgb;  /* width * height * 3: mjr_readPixels' bottom-up rows */
  float* depth;        /* width * height: gymnasium reads the depth too */
};

static const char* backend_name(int b) {
  return b == CP_GL_EGL ? "EGL" : b == CP_GL_OSMESA ? "OSMesa" : "none";
}

void cp_gl_set_libraries(const char* egl, const char* osmesa) {
  pthread_mutex_lock(&CREATE_LOCK);
  snprintf(EGL_NAME, sizeof EGL_NAME, "%s", egl ? egl : "");
  snprintf(OSMESA_NAME, sizeof OSMESA_NAME, "%s", osmesa ? osmesa : "");
  pthread_mutex_unlock(&CREATE_LOCK);
}

int cp_gl_backend(void) {
  pthread_mutex_lock(&CREATE_LOCK);
  int b = BACKEND;
  pthread_mutex_unlock(&CREATE_LOCK);
  return b;
}

int cp_renderer_backend(const cp_renderer* r) { return r ? r->backend : 0; }

/* ------------------------------------------------------------------ EGL */
static int load_egl(char* err, int errlen) {
  static const char* names[] = {"libEGL.so.1", "libEGL.so"};
  if (EGL.display) return 0;
  if (!EGL.lib) {
    const char* tried = EGL_NAME[0] ? EGL_NAME : "libEGL.so.1";
    if (EGL_NAME[0]) {
      EGL.lib = dlopen(EGL_NAME, RTLD_NOW | RTLD_LOCAL);
      snprintf(EGL.libname, sizeof EGL.libname, "%s", EGL_NAME);
    } else {
      for (size_t k = 0; k < sizeof names / sizeof names[0] && !EGL.lib; k++) {
        EGL.lib = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);
        snprintf(EGL.libname, sizeof EGL.libname, "%s", names[k]);
      }
    }
    if (!EGL.lib) {
      snprintf(err, (size_t)errlen, "cannot load %.200s", tried);
      return 1;
    }
  }
#define SYM(name) EGL.name = (void*)dlsym(EGL.lib, "egl" #name); if (!EGL.name) { \
  snprintf(err, (size_t)errlen, "%.200s lacks egl" #name, EGL.libname); return 1; }
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
  if (!dpy) {
    snprintf(err, (size_t)errlen, "no EGL display could be initialised (no EGL driver: "
             "libEGL has no vendor library, or the driver has no device)");
    return 1;
  }
  EGL.display = dpy;
  return 0;
}

static int egl_context(cp_renderer* r, char* err, int errlen) {
  static const EGLint attribs[] = {
      EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_ALPHA_SIZE, 8,
      EGL_DEPTH_SIZE, 24, EGL_STENCIL_SIZE, 8, EGL_COLOR_BUFFER_TYPE, EGL_RGB_BUFFER,
      EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
  EGLConfig cfg;
  EGLint ncfg = 0;
  if (load_egl(err, errlen)) return 1;
  if (!EGL.ChooseConfig(EGL.display, attribs, &cfg, 1, &ncfg) || ncfg < 1) {
    snprintf(err, (size_t)errlen, "eglChooseConfig found no RGBA8/depth24 pbuffer config");
    return 1;
  }
  EGLenum api = EGL.QueryAPI();
  EGL.BindAPI(EGL_OPENGL_API);
  r->ctx = EGL.CreateContext(EGL.display, cfg, 0, NULL);
  EGL.BindAPI(api);
  if (!r->ctx) {
    snprintf(err, (size_t)errlen, "eglCreateContext failed (EGL error 0x%x)", EGL.GetError());
    return 1;
  }
  r->backend = CP_GL_EGL;
  return 0;
}

/* ------------------------------------------------------------------ OSMesa */
static int load_osmesa(char* err, int errlen) {
  static const char* names[] = {"libOSMesa.so.8", "libOSMesa.so.6", "libOSMesa.so"};
  if (OSM.lib) return 0;
  if (OSMESA_NAME[0]) {
    OSM.lib = dlopen(OSMESA_NAME, RTLD_NOW | RTLD_GLOBAL);
  } else {
    for (size_t k = 0; k < sizeof names / sizeof names[0] && !OSM.lib; k++)
      OSM.lib = dlopen(names[k], RTLD_NOW | RTLD_GLOBAL);
  }
  if (!OSM.lib) {
    snprintf(err, (size_t)errlen, "cannot load %.200s", OSMESA_NAME[0] ? OSMESA_NAME :
             "libOSMesa.so.8, libOSMesa.so.6 or libOSMesa.so");
    return 1;
  }
#define SYM(name) OSM.name = (void*)dlsym(OSM.lib, "OSMesa" #name); if (!OSM.name) { \
  snprintf(err, (size_t)errlen, "libOSMesa lacks OSMesa" #name); dlclose(OSM.lib); \
  OSM.lib = NULL; return 1; }
  SYM(CreateContextExt) SYM(DestroyContext) SYM(MakeCurrent) SYM(GetCurrentContext)
  SYM(GetColorBuffer) SYM(GetIntegerv)
#undef SYM
  return 0;
}

static int osmesa_context(cp_renderer* r, char* err, int errlen) {
  if (!BACKEND && dlsym(RTLD_DEFAULT, "eglGetProcAddress")) {
    snprintf(err, (size_t)errlen, "libEGL is loaded with global symbols (PyOpenGL loads it "
             "so for gymnasium's MUJOCO_GL=egl) and MuJoCo takes its GL functions from EGL "
             "first: OSMesa cannot render in this process (use MUJOCO_GL=egl here)");
    return 2;
  }
  if (load_osmesa(err, errlen)) return 1;
  r->osbuf = calloc((size_t)r->width * r->height * 4, sizeof(float));
  if (!r->osbuf) {
    snprintf(err, (size_t)errlen, "out of memory");
    return 2;
  }
  r->ctx = OSM.CreateContextExt(OSMESA_RGBA, 24, 8, 0, NULL);
  if (!r->ctx) {
    snprintf(err, (size_t)errlen, "OSMesaCreateContextExt failed");
    return 1;
  }
  r->backend = CP_GL_OSMESA;
  return 0;
}

/* ------------------------------------------------------------------ binding */
/* What the calling thread had current, to restore after rendering. */
typedef struct {
  void* ctx;
  EGLDisplay dpy;
  EGLSurface draw, read;
  void* buf;
  int type, w, h;
} cp_current;

/* Make r's context current on this thread; *s receives what was current before. */
static int bind(cp_renderer* r, cp_current* s, char* err, int errlen) {
  memset(s, 0, sizeof *s);
  if (r->backend == CP_GL_EGL) {
    s->ctx = EGL.GetCurrentContext();
    s->dpy = EGL.GetCurrentDisplay();
    s->draw = EGL.GetCurrentSurface(EGL_DRAW);
    s->read = EGL.GetCurrentSurface(EGL_READ);
    if (!EGL.MakeCurrent(EGL.display, 0, 0, r->ctx)) {
      snprintf(err, (size_t)errlen, "eglMakeCurrent failed (EGL error 0x%x)", EGL.GetError());
      return 1;
    }
    return 0;
  }
  s->ctx = OSM.GetCurrentContext();
  if (s->ctx) {   /* rebind it later with the same buffer and type (no reallocation) */
    int fmt = 0;
    if (!OSM.GetColorBuffer(s->ctx, &s->w, &s->h, &fmt, &s->buf)) s->buf = NULL;
    OSM.GetIntegerv(OSMESA_TYPE, &s->type);
  }
  if (!OSM.MakeCurrent(r->ctx, r->osbuf, GL_FLOAT_TYPE, r->width, r->height)) {
    snprintf(err, (size_t)errlen, "OSMesaMakeCurrent failed");
    return 1;
  }
  return 0;
}

static void unbind(cp_renderer* r, const cp_current* s) {
  if (r->backend == CP_GL_EGL) {
    if (s->ctx)
      EGL.MakeCurrent(s->dpy, s->draw, s->read, s->ctx);
    else
      EGL.MakeCurrent(EGL.display, 0, 0, 0);
    return;
  }
  if (s->ctx && s->buf)
    OSM.MakeCurrent(s->ctx, s->buf, (unsigned int)s->type, s->w, s->h);
  else
    OSM.MakeCurrent(NULL, NULL, 0, 0, 0);
}

/* ------------------------------------------------------------------ create, destroy */
static void destroy_locked(cp_renderer* r) {
  if (r->ctx) {
    cp_current saved;
    char err[CP_ERRMSG_LEN];
    if (bind(r, &saved, err, CP_ERRMSG_LEN) == 0) {
      if (r->made) mjr_freeContext(&r->con);   /* its GL objects live in r->ctx */
      unbind(r, &saved);
    }  /* else the context's own destruction frees its GL objects */
    if (r->backend == CP_GL_EGL)
      EGL.DestroyContext(EGL.display, r->ctx);
    else
      OSM.DestroyContext(r->ctx);
  }
  mjv_freeScene(&r->scn);   /* zeroed or made: either is safe */
  free(r->osbuf);
  free(r->rgb);
  free(r->depth);
  free(r);
}

void cp_renderer_destroy(cp_renderer* r) {
  if (!r) return;
  pthread_mutex_lock(&CREATE_LOCK);
  destroy_locked(r);
  pthread_mutex_unlock(&CREATE_LOCK);
}

/* A context through `want` (AUTO: EGL, then OSMesa), not yet current. */
static int make_context(cp_renderer* r, int want, char* err, int errlen) {
  char e_egl[MSG_LEN] = "", e_os[MSG_LEN] = "";
  int rc;
  if (want == CP_GL_AUTO && !dlsym(RTLD_DEFAULT, "eglGetProcAddress") &&
      dlsym(RTLD_DEFAULT, "OSMesaGetProcAddress"))
    want = CP_GL_OSMESA;     /* the process already uses OSMesa (e.g. gymnasium's) */
  if (want == CP_GL_EGL && !BACKEND && !dlsym(RTLD_DEFAULT, "eglGetProcAddress") &&
      dlsym(RTLD_DEFAULT, "OSMesaGetProcAddress")) {
    snprintf(err, (size_t)errlen, "libOSMesa is loaded into this process with global symbols "
             "(as PyOpenGL loads it for mujoco.osmesa, e.g. gymnasium rendering with "
             "MUJOCO_GL=osmesa), so MuJoCo may take its GL functions from OSMesa: EGL cannot "
             "render in this process (use MUJOCO_GL=osmesa here)");
    return CP_GL_FAILED;
  }
  if (want != CP_GL_OSMESA) {
    if (egl_context(r, e_egl, MSG_LEN) == 0) return CP_GL_OK;
    if (want == CP_GL_EGL) {
      snprintf(err, (size_t)errlen, "EGL: %s", e_egl);
      return CP_GL_NO_BACKEND;
    }
  }
  rc = osmesa_context(r, e_os, MSG_LEN);
  if (rc == 0) return CP_GL_OK;
  if (want == CP_GL_OSMESA)
    snprintf(err, (size_t)errlen, "OSMesa: %s", e_os);
  else
    snprintf(err, (size_t)errlen, "EGL: %s; OSMesa: %s", e_egl, e_os);
  return rc == 1 ? CP_GL_NO_BACKEND : CP_GL_FAILED;
}

static int create_locked(mjModel* m, int want, cp_renderer* r, char* err, int errlen) {
  cp_current saved;
  char e[CP_ERRMSG_LEN] = "";
  int rc;
  if (BACKEND && want != CP_GL_AUTO && want != BACKEND) {
    snprintf(err, (size_t)errlen, "this process already renders MuJoCo through %s, and "
             "MuJoCo resolves its GL functions once per process: MUJOCO_GL=%s cannot be used "
             "in the same process (one backend per process)", backend_name(BACKEND),
             want == CP_GL_EGL ? "egl" : "osmesa");
    return CP_GL_FAILED;
  }
  if (BACKEND) want = BACKEND;
  rc = make_context(r, want, err, errlen);
  if (rc != CP_GL_OK) return rc;
  if (r->backend == CP_GL_EGL && !EGL.global) {
    /* now visible to MuJoCo's lookup of eglGetProcAddress (dlopen with RTLD_NOLOAD only
     * promotes the loaded library) */
    if (dlopen(EGL.libname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD)) EGL.global = 1;
  }
  if (bind(r, &saved, err, errlen)) return CP_GL_FAILED;
  /* gymnasium grows the model's offscreen buffer to the frame size (never shrinks it) */
  if (m->vis.global.offwidth < r->width) m->vis.global.offwidth = r->width;
  if (m->vis.global.offheight < r->height) m->vis.global.offheight = r->height;
  if (cp_make_render_context(m, &r->scn, r->max_geom, &r->con, e)) {
    unbind(r, &saved);
    snprintf(err, (size_t)errlen, "MuJoCo could not set up rendering through %s: %s",
             backend_name(r->backend), e);
    return CP_GL_FAILED;
  }
  r->made = 1;
  unbind(r, &saved);
  BACKEND = r->backend;
  return CP_GL_OK;
}

int cp_renderer_create(mjModel* m, int backend, int width, int height, const int* vis_flags,
                       int nflags, int max_geom, cp_renderer** out, char* err, int errlen) {
  int rc;
  *out = NULL;
  cp_renderer* r = calloc(1, sizeof(cp_renderer));
  if (!r) {
    snprintf(err, (size_t)errlen, "out of memory");
    return CP_GL_FAILED;
  }
  r->width = width;
  r->height = height;
  r->rgb = malloc((size_t)width * height * 3);
  r->depth = malloc((size_t)width * height * sizeof(float));
  mjv_defaultOption(&r->opt);
  for (int k = 0; k < nflags; k++)
    if (vis_flags[2 * k] >= 0 && vis_flags[2 * k] < mjNVISFLAG)
      r->opt.flags[vis_flags[2 * k]] = (mjtByte)vis_flags[2 * k + 1];
  r->max_geom = max_geom;
  pthread_mutex_lock(&CREATE_LOCK);
  if (!r->rgb || !r->depth) {
    snprintf(err, (size_t)errlen, "out of memory");
    rc = CP_GL_FAILED;
  } else {
    rc = create_locked(m, backend, r, err, errlen);
  }
  if (rc != CP_GL_OK) destroy_locked(r);
  else *out = r;
  pthread_mutex_unlock(&CREATE_LOCK);
  return rc;
}

/* ------------------------------------------------------------------ cameras, frames */
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
                     const long long* ids, long long n, int camera_id, int channels_first,
                     unsigned char* out, char* err, int errlen) {
  cp_current saved;
  char e[CP_ERRMSG_LEN];
  mjrRect viewport = {0, 0, r->width, r->height};
  size_t w = (size_t)r->width, h = (size_t)r->height, row = w * 3, plane = w * h;
  int rc = 0;
  if (__atomic_exchange_n(&r->busy, 1, __ATOMIC_ACQUIRE)) {
    snprintf(err, (size_t)errlen, "the pool's GL context is rendering in another thread");
    return 1;
  }
  if (bind(r, &saved, e, CP_ERRMSG_LEN)) {
    snprintf(err, (size_t)errlen, "%s: the pool's GL context is current in another thread",
             e);
    __atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
    return 1;
  }
  for (long long k = 0; k < n && rc == 0; k++) {
    long long i = ids[k];
    cp_camera* c = &cams[i];
    if (!c->ready) cp_camera_first_render(m, d[i], c);
    /* gymnasium's per-frame step: type and fixedcamid from the camera id */
    c->cam.type = camera_id == -1 ? mjCAMERA_FREE : mjCAMERA_FIXED;
    c->cam.fixedcamid = camera_id;
    if (cp_render_scene(m, d[i], &r->opt, &c->cam, &r->scn, viewport, &r->con, r->rgb,
                        r->depth, e)) {
      snprintf(err, (size_t)errlen, "MuJoCo: %s", e);
      rc = 1;
      break;
    }
    unsigned char* dst = out + (size_t)k * row * h;
    if (!channels_first) {
      for (size_t y = 0; y < h; y++)  /* bottom-up rows to top-down */
        memcpy(dst + y * row, r->rgb + (h - 1 - y) * row, row);
    } else {
      for (size_t y = 0; y < h; y++) {
        const unsigned char* src = r->rgb + (h - 1 - y) * row;
        for (size_t x = 0; x < w; x++)
          for (size_t ch = 0; ch < 3; ch++) dst[ch * plane + y * w + x] = src[3 * x + ch];
      }
    }
  }
  unbind(r, &saved);
  __atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
  return rc;
}
