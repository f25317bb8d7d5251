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
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

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

/* Fork safety. A GL driver starts threads (llvmpipe's rasterizers, shader compilers) and
 * holds locks that a fork child inherits without the threads: a context made or used in the
 * child waits forever on them (pthread_cond_wait inside Mesa). GL_USED: this process or an
 * ancestor started GL (a renderer was attempted, or, at a fork, a GL driver library was
 * loaded, e.g. by PyOpenGL for gymnasium's renderer); GL_INHERITED: this process is a fork
 * child of such a process. Both only ever go from 0 to 1. */
static int GL_USED = 0;
static int GL_INHERITED = 0;

/* The drivers themselves (Mesa's DRI/gallium drivers, OSMesa, NVIDIA's): loaded when a
 * display's screen or a context is made, not merely with the dispatch libraries (libGL,
 * libEGL) or Mesa's EGL front end (an EGL display initialised by `import mujoco` under
 * MUJOCO_GL=egl loads libEGL_mesa only, and no driver thread exists yet). */
static int gl_driver_found(struct dl_phdr_info* info, size_t size, void* data) {
  static const char* names[] = {"_dri.so", "libgallium", "libOSMesa", "libEGL_nvidia",
                                "libGLX_nvidia", "libnvidia-glcore", "libnvidia-eglcore"};
  const char* base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
  (void)size;
  base = base ? base + 1 : info->dlpi_name;
  if (!base) return 0;
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
    if (strstr(base, names[k])) {
      *(int*)data = 1;
      return 1;
    }
  return 0;
}

static void atfork_prepare(void) {
  int found = 0;
  if (__atomic_load_n(&GL_USED, __ATOMIC_SEQ_CST)) return;
  dl_iterate_phdr(gl_driver_found, &found);
  if (found) __atomic_store_n(&GL_USED, 1, __ATOMIC_SEQ_CST);
}

static void atfork_child(void) {
  if (GL_USED) GL_INHERITED = 1;
}

__attribute__((constructor)) static void register_atfork(void) {
  pthread_atfork(atfork_prepare, NULL, atfork_child);
}

int cp_gl_inherited(void) { return __atomic_load_n(&GL_INHERITED, __ATOMIC_SEQ_CST); }

static void fork_refusal(char* err, int errlen) {
  snprintf(err, (size_t)errlen, "this process is a fork child of a process that had started "
           "OpenGL (rendered, or loaded a GL driver), and a GL driver's threads and locks do not "
           "survive fork(): rendering here would hang. Start child processes with the 'spawn' "
           "or 'forkserver' method (multiprocessing.get_context('spawn')), or fork before the "
           "first render");
}

/* ------------------------------------------------------------------ memory headroom
 * Mesa does not check its allocations: a context made without room enough dies inside Mesa
 * (SIGSEGV in mjr_makeContext, SIGABRT from LLVM's JIT at the first draw). So before making
 * contexts, their cost is checked against RLIMIT_AS, a trial reservation, MemAvailable and
 * the cgroup's memory.max. Costs measured with Mesa 22.3's llvmpipe (Hopper-v5, 84x84 and
 * 480x480 frames, shadow maps 1024-8192): the first context of a process ~560 MB of address
 * space and ~180 MB resident (Mesa, LLVM and the screen), each further one ~40 MB plus the
 * shadow map (shadowsize^2 x 4 bytes: 64 MB at MuJoCo's default 4096) plus the offscreen
 * buffers, resident too; llvmpipe's rasterizer threads add their stacks (address only). */
#define MIB (1024.0 * 1024.0)
#define FIRST_ADDR (480 * MIB)
#define FIRST_RSS (160 * MIB)
#define CONTEXT_FIXED (48 * MIB)

static double context_bytes(const mjModel* m, int w, int h) {
  double shadow = (double)m->vis.quality.shadowsize * m->vis.quality.shadowsize * 4;
  double ow = m->vis.global.offwidth > w ? m->vis.global.offwidth : w;
  double oh = m->vis.global.offheight > h ? m->vis.global.offheight : h;
  double samples = m->vis.quality.offsamples > 1 ? m->vis.quality.offsamples : 1;
  /* offscreen colour + depth, multisampled and resolved; the frame's own buffers */
  return CONTEXT_FIXED + shadow + ow * oh * 8 * (samples + 1) + (double)w * h * 24;
}

/* A new thread's stack (glibc: RLIMIT_STACK's soft limit, 8 MB when unlimited). */
static double stack_size(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    return (double)rl.rlim_cur;
  return 8 * MIB;
}

/* llvmpipe's rasterizer threads of one context (LP_NUM_THREADS, else one per CPU). */
static double thread_stacks(void) {
  const char* env = getenv("LP_NUM_THREADS");
  long n = env && *env ? atol(env) : sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 0) n = 0;
  if (n > 64) n = 64;
  return n * (stack_size() + MIB);
}

/* A number from a "key: value kB" line of /proc/meminfo (bytes), or -1. */
static double meminfo(const char* key) {
  char line[256];
  double v = -1;
  size_t n = strlen(key);
  FILE* f = fopen("/proc/meminfo", "r");
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, key, n) == 0) {
      v = atof(line + n) * 1024;
      break;
    }
  fclose(f);
  return v;
}

static double vm_size(void) {
  long long pages = -1;
  FILE* f = fopen("/proc/self/statm", "r");
  if (!f) return -1;
  if (fscanf(f, "%lld", &pages) != 1) pages = -1;
  fclose(f);
  return pages < 0 ? -1 : (double)pages * sysconf(_SC_PAGESIZE);
}

/* The cgroup v2 memory left (memory.max - memory.current), or -1 for no limit. */
static double cgroup_left(void) {
  char line[1024], path[1200];
  double max = -1, cur = -1;
  FILE* f = fopen("/proc/self/cgroup", "r");
  if (!f) return -1;
  path[0] = 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "0::", 3) == 0) {
      line[strcspn(line, "\n")] = 0;
      snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", line + 3);
      break;
    }
  fclose(f);
  if (!path[0] || !(f = fopen(path, "r"))) return -1;
  if (fgets(line, sizeof line, f) && strncmp(line, "max", 3) != 0) max = atof(line);
  fclose(f);
  if (max < 0) return -1;
  strcpy(strrchr(path, '/'), "/memory.current");
  if (!(f = fopen(path, "r"))) return -1;
  if (fgets(line, sizeof line, f)) cur = atof(line);
  fclose(f);
  return cur < 0 ? -1 : max - cur;
}

static int libraries_loaded(void) { return EGL.display != NULL || OSM.lib != NULL; }

/* extra: address space taken before the contexts are made (worker threads' own stacks and
 * malloc arenas). */
static int headroom_locked(const mjModel* m, int w, int h, int n, double extra, char* err,
                           int errlen) {
  double one = context_bytes(m, w, h), first = libraries_loaded() ? 0 : 1;
  double rss = first * FIRST_RSS + n * one;
  double addr = first * FIRST_ADDR + n * (one + thread_stacks()) + extra;
  double left;
  struct rlimit rl;
  const char* what = NULL;
  char why[200] = "";
  addr += addr / 8 + 32 * MIB;     /* margin: the costs vary with the driver and the model */
  rss += rss / 8 + 32 * MIB;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && vm_size() >= 0 &&
      (left = (double)rl.rlim_cur - vm_size()) < addr) {
    what = "address space";
    snprintf(why, sizeof why, "%.0f MB of RLIMIT_AS (%.0f MB) left", left > 0 ? left / MIB : 0,
             (double)rl.rlim_cur / MIB);
  }
  if (!what) {
    void* p = mmap(NULL, (size_t)addr, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED) {
      what = "address space";
      snprintf(why, sizeof why, "a trial reservation of that size failed");
    } else {
      munmap(p, (size_t)addr);
    }
  }
  if (!what && (left = meminfo("MemAvailable:")) >= 0 && left < rss) {
    what = "memory";
    snprintf(why, sizeof why, "%.0f MB available (MemAvailable)", left / MIB);
  }
  if (!what && (left = cgroup_left()) >= 0 && left < rss) {
    what = "memory";
    snprintf(why, sizeof why, "%.0f MB left under the cgroup's memory.max", left / MIB);
  }
  if (!what) return 0;
  snprintf(err, (size_t)errlen, "not enough memory for %d more MuJoCo GL context%s (%dx%d "
           "frames, shadow map %d): they need about %.0f MB of %s, %s. Render with fewer "
           "threads (num_threads), smaller frames, or a smaller shadow map (the model's "
           "<visual><quality shadowsize=.../>), or free memory", n, n == 1 ? "" : "s", w, h,
           m->vis.quality.shadowsize, (!strcmp(what, "memory") ? rss : addr) / MIB, what, why);
  return 1;
}

int cp_gl_headroom(const mjModel* m, int width, int height, int ncontexts, char* err,
                   int errlen) {
  int rc;
  if (ncontexts <= 0) return 0;
  pthread_mutex_lock(&CREATE_LOCK);
  /* each context is made in a worker thread of its own: its stack and malloc arena first */
  rc = headroom_locked(m, width, height, ncontexts, ncontexts * (stack_size() + 64 * MIB),
                       err, errlen);
  pthread_mutex_unlock(&CREATE_LOCK);
  return rc;
}

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
  float* hf;           /* the heightfield data the context holds (NULL: the model has none) */
  size_t nhf;
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
  if (cp_gl_inherited()) return BACKEND;   /* CREATE_LOCK may be held by a parent's thread */
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
  free(r->hf);
  free(r);
}

void cp_renderer_destroy(cp_renderer* r) {
  if (!r) return;
  if (cp_gl_inherited()) return;   /* the parent's GL state: leaked, never touched here */
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
  /* the heightfields mjr_makeContext uploads: a model per env (dm_control's quadruped escape
   * draws its terrain per episode) has them uploaded again where they differ */
  r->nhf = m->nhfielddata > 0 ? (size_t)m->nhfielddata : 0;
  r->hf = r->nhf ? malloc(r->nhf * sizeof(float)) : NULL;
  if (r->hf) memcpy(r->hf, m->hfield_data, r->nhf * sizeof(float));
  mjv_defaultOption(&r->opt);
  for (int k = 0; k < nflags; k++)
    if (vis_flags[2 * k] >= 0 && vis_flags[2 * k] < mjNVISFLAG)
      r->opt.flags[vis_flags[2 * k]] = (mjtByte)vis_flags[2 * k + 1];
  r->max_geom = max_geom;
  /* before CREATE_LOCK: a thread of the parent may have held it at the fork */
  if (cp_gl_inherited()) {
    fork_refusal(err, errlen);
    destroy_locked(r);    /* no GL object yet */
    return CP_GL_FORKED;
  }
  __atomic_store_n(&GL_USED, 1, __ATOMIC_SEQ_CST);   /* before any GL library is loaded */
  pthread_mutex_lock(&CREATE_LOCK);
  if (!r->rgb || !r->depth || (r->nhf && !r->hf)) {
    snprintf(err, (size_t)errlen, "out of memory");
    rc = CP_GL_FAILED;
  } else if (headroom_locked(m, width, height, 1, 0, err, errlen)) {
    rc = CP_GL_NO_MEMORY;
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

int cp_render_frames(cp_renderer* r, const mjModel* const* ms, mjData** d, cp_camera* cams,
                     const long long* ids, long long n, int camera_id, int channels_first,
                     unsigned char* out, float* depth_out, char* err, int errlen) {
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
    const mjModel* m = ms[i];
    cp_camera* c = &cams[i];
    if (r->nhf && (size_t)m->nhfielddata == r->nhf &&
        memcmp(m->hfield_data, r->hf, r->nhf * sizeof(float)) != 0) {
      /* this env's model holds another terrain than the context */
      if (cp_upload_hfields(m, &r->con, e)) {
        snprintf(err, (size_t)errlen, "MuJoCo: %s", e);
        rc = 1;
        break;
      }
      memcpy(r->hf, m->hfield_data, r->nhf * sizeof(float));
    }
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
    if (depth_out) {  /* gymnasium's depth_array: the raw buffer, rows flipped as the rgb */
      float* dd = depth_out + (size_t)k * plane;
      for (size_t y = 0; y < h; y++) memcpy(dd + y * w, r->depth + (h - 1 - y) * w, w * 4);
    }
    if (!out) continue;
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
