/* Offscreen rendering of a pool's envs (see _mj_render.c). */
#ifndef CYPOOL_MJ_RENDER_H
#define CYPOOL_MJ_RENDER_H
#include <mujoco/mujoco.h>

typedef struct cp_renderer cp_renderer;

/* GL backends (MUJOCO_GL): AUTO tries EGL, then OSMesa. */
enum { CP_GL_AUTO = 0, CP_GL_EGL = 1, CP_GL_OSMESA = 2 };
/* cp_renderer_create's failures: no backend could make a context (a GL library or driver is
 * missing), or anything else (a backend conflict, MuJoCo's set-up failed, out of memory). */
enum { CP_GL_OK = 0, CP_GL_NO_BACKEND = 1, CP_GL_FAILED = 2 };
/* ... and refusals before any GL call: a fork child of a process that had started GL (it
 * would hang in the driver), or too little memory for the context (Mesa would crash). */
enum { CP_GL_FORKED = 3, CP_GL_NO_MEMORY = 4 };

/* One env's camera: gymnasium's FREE camera, set up at the env's first render (ready). */
typedef struct {
  mjvCamera cam;
  int ready;
  /* the task's default_camera_config (set_*: the key is present) */
  int set_distance, set_azimuth, set_elevation, set_lookat, set_trackbodyid;
  double distance, azimuth, elevation, lookat[3];
  int trackbodyid;
} cp_camera;

/* A context of width x height frames through `backend` (vis_flags: nflags (mjtVisFlag,
 * value) pairs). CP_GL_OK, or a failure code with a message in err. */
int cp_renderer_create(mjModel* m, int backend, int width, int height, const int* vis_flags,
                       int nflags, int max_geom, cp_renderer** out, char* err, int errlen);
void cp_renderer_destroy(cp_renderer* r);
/* 1 in a fork child of a process that had started GL: no renderer can be made here. */
int cp_gl_inherited(void);
/* 0 when ncontexts more contexts of width x height frames for m fit in the address space
 * and memory left, else 1 with a message in err (cp_renderer_create checks one itself). */
int cp_gl_headroom(const mjModel* m, int width, int height, int ncontexts, char* err,
                   int errlen);
/* The backend a renderer draws with (CP_GL_EGL or CP_GL_OSMESA). */
int cp_renderer_backend(const cp_renderer* r);
/* The process's backend, fixed by its first renderer (0 before). */
int cp_gl_backend(void);
/* Tests: the library names tried for EGL and OSMesa (NULL: the defaults). */
void cp_gl_set_libraries(const char* egl, const char* osmesa);
void cp_camera_first_render(const mjModel* m, const mjData* d, cp_camera* c);
/* Frames of envs ids[0..n) into out, top-down rows: n x height x width x 3, or with
 * channels_first n x 3 x height x width; and their depth buffers (gymnasium's depth_array:
 * OpenGL's [0, 1] values as read) into depth_out, n x height x width, top-down. Either output
 * may be NULL (not written). camera_id: -1 for the FREE camera, else a model
 * camera (checked by the caller). ms[i]: env i's model (the pool's, or the env's own copy;
 * a copy whose heightfields differ from the context's has them uploaded first).
 * err: at least 256 bytes. */
int cp_render_frames(cp_renderer* r, const mjModel* const* ms, mjData** d, cp_camera* cams,
                     const long long* ids, long long n, int camera_id, int channels_first,
                     unsigned char* out, float* depth_out, char* err, int errlen);
#endif
