/* Offscreen rendering of a pool's envs (see _mj_render.c). */
#ifndef CYPOOL_MJ_RENDER_H
#define CYPOOL_MJ_RENDER_H
#include <mujoco/mujoco.h>

typedef struct cp_renderer cp_renderer;

/* One env's camera: gymnasium's FREE camera, set up at the env's first render (ready). */
typedef struct {
  mjvCamera cam;
  int ready;
  /* the task's default_camera_config (set_*: the key is present) */
  int set_distance, set_azimuth, set_elevation, set_lookat, set_trackbodyid;
  double distance, azimuth, elevation, lookat[3];
  int trackbodyid;
} cp_camera;

/* A context of width x height frames (vis_flags: nflags (mjtVisFlag, value) pairs). Nonzero
 * with a message on failure (no GL driver, ...). */
int cp_renderer_create(mjModel* m, int width, int height, const int* vis_flags, int nflags,
                       int max_geom, cp_renderer** out, char* err, int errlen);
void cp_renderer_destroy(cp_renderer* r);
void cp_camera_first_render(const mjModel* m, const mjData* d, cp_camera* c);
/* Frames of envs ids[0..n) into out (n x height x width x 3, top-down rows). camera_id: -1
 * for the FREE camera, else a model camera (checked by the caller). */
int cp_render_frames(cp_renderer* r, const mjModel* m, mjData** d, cp_camera* cams,
                     const long long* ids, long long n, int camera_id, unsigned char* out,
                     char* err, int errlen);
#endif
