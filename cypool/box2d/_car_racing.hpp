// CarRacing (gymnasium 1.4.0's car_racing.py and car_dynamics.py, v3) on Box2D's C++ core:
// one env per object, no Python, no exceptions out (b2Assert throws b2AssertException, caught
// here and returned as a status with a message). The random draws come from the env's numpy
// stream through `Draws`, in gymnasium's order.
//
// Arithmetic: gymnasium computes in Python doubles on Box2D's float32 values and converts to
// float32 where SWIG passes a number to Box2D; the code below keeps its order of operations,
// constants and libm calls (glibc's double sin, cos, atan2 as math.*; numpy's sqrt, square and
// sign are IEEE operations). Built with -ffp-contract=off (no fused multiply-add).
//
// The observation is gymnasium's state_pixels frame, drawn here as pygame draws it: the
// rasterisers of _cr_gfx.h (gfxdraw), _cr_draw.h (draw.polygon), _cr_text.h (the score) and
// _cr_smoothscale.h (smoothscale's SSE2 arithmetic, in portable C), on a canvas of the calling
// thread slot seen through _cr_surface.h's views (upright for the road, upside down for the
// panel, in place of pygame's flip).
#pragma once
#include <Box2D/Box2D.h>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#include "_cr_gfx.h"
#include "_cr_draw.h"
#include "_cr_smoothscale.h"
#include "_cr_text.h"

#include "_box2d_kernel.hpp"

namespace cycr {

using cyb2::Draws;

const double STATE_W = 96, STATE_H = 96;
const int WINDOW_W = 1000, WINDOW_H = 800;
const double SCALE = 6.0;
const double TRACK_RAD = 900 / SCALE;
const double PLAYFIELD = 2000 / SCALE;
const double FPS = 50;
const double ZOOM = 2.7;
const double TRACK_DETAIL_STEP = 21 / SCALE;
const double TRACK_TURN_RATE = 0.31;
const double TRACK_WIDTH = 40 / SCALE;
const double BORDER = 8 / SCALE;
const int BORDER_MIN_COUNT = 4;
const double GRASS_DIM = PLAYFIELD / 20.0;
const int CHECKPOINTS = 12;
const int MAX_TRACK = 2500;          // gymnasium's no_freeze: the most points a track try makes
const int MAX_PARTICLES = 30;        // Car.particles: deque(maxlen=30)
const int PARTICLE_POINTS = 30;      // a skid particle grows while it has fewer points

// car_dynamics.py
const double SIZE = 0.02;
const double ENGINE_POWER = 100000000 * SIZE * SIZE;
const double WHEEL_MOMENT_OF_INERTIA = 4000 * SIZE * SIZE;
const double FRICTION_LIMIT = 1000000 * SIZE * SIZE;
const int WHEEL_R = 27, WHEEL_W = 14;
const int WHEELPOS[4][2] = {{-55, +80}, {+55, +80}, {-55, -82}, {+55, -82}};
const int HULL_POLY1[4][2] = {{-60, +130}, {+60, +130}, {+60, +110}, {-60, +110}};
const int HULL_POLY2[4][2] = {{-15, +120}, {+15, +120}, {+20, +20}, {-20, 20}};
const int HULL_POLY3[8][2] = {{+25, +20}, {+50, -10}, {+50, -40}, {+20, -90},
                              {-20, -90}, {-50, -40}, {-50, -10}, {-25, +20}};
const int HULL_POLY4[4][2] = {{-50, -120}, {+50, -120}, {+50, -90}, {-50, -90}};

enum { CR_OK = 0, CR_ERROR = 1 };

// what a body's userData points at: gymnasium's `tile` (road_friction) or `w` (tiles)
enum { KIND_TILE = 1, KIND_WHEEL = 2 };
struct Tag {
    int kind;
    int idx;
};

struct Wheel {
    b2Body* body = nullptr;
    b2RevoluteJoint* joint = nullptr;
    double gas = 0, brake = 0, steer = 0, phase = 0, omega = 0;
    int ntiles = 0;   // len(w.tiles): each tile has one fixture, so one contact per wheel
    Tag tag;
    // skid bookkeeping (drawn only in rgb_array frames): w.skid_start is pybox2d's live
    // reference to the wheel's position, so a particle starts with the current point twice
    bool skid_start = false;
    int64_t skid_particle = -1;   // id of w.skid_particle (-1: None); it may have left the
    int skid_len = 0;             // deque and still grow; its len(poly)
    bool skid_grass = false;
};

// Car.particles: a skid trail, its points the wheel's float32 positions
struct Particle {
    bool grass;
    int n;
    float pts[PARTICLE_POINTS][2];
};

// one entry of gymnasium's road_poly: 4 vertices and a colour; a tile's colour is the tile's
// own array (the listener rewrites it), a border's is fixed
struct Poly {
    double x[4], y[4];
    int tile;            // -1: a border
    uint8_t rgb[3];
};

struct Env;

struct Listener : public b2ContactListener {
    Env* env;
    void BeginContact(b2Contact* contact) override;
    void EndContact(b2Contact* contact) override;
    void contact(b2Contact* contact, bool begin);
};

struct Env {
    b2World* world = nullptr;
    Listener listener;
    // the colours (floats once domain-randomised; gymnasium's int arrays otherwise)
    double road_color[3], bg_color[3], grass_color[3];
    double lap_complete_percent = 0.95;
    // the track (gymnasium's self.track) and its tiles
    int n_track = 0;
    double track[MAX_TRACK][4];
    b2Body* tiles[MAX_TRACK];
    Tag tile_tag[MAX_TRACK];
    bool visited[MAX_TRACK];
    double tile_color[MAX_TRACK][3];
    int n_poly = 0;
    Poly road_poly[2 * MAX_TRACK];
    double start_alpha = 0;
    // the car
    b2Body* hull = nullptr;
    Wheel wheels[4];
    Particle particles[MAX_PARTICLES];   // particle id k is particles[k % MAX_PARTICLES]
    int64_t n_particles = 0;              // ids made since the car was made
    // the episode
    double reward = 0, prev_reward = 0, t = 0;
    int64_t tile_visited_count = 0;
    bool new_lap = false;

    Env() {
        listener.env = this;
        for (int k = 0; k < 4; k++) wheels[k].tag = Tag{KIND_WHEEL, k};
    }
    ~Env() { delete world; }
    Env(const Env&) = delete;
    Env& operator=(const Env&) = delete;
};

inline void Listener::BeginContact(b2Contact* c) { contact(c, true); }
inline void Listener::EndContact(b2Contact* c) { contact(c, false); }

// gymnasium's FrictionDetector._contact
inline void Listener::contact(b2Contact* c, bool begin) {
    Tag* u1 = (Tag*)c->GetFixtureA()->GetBody()->GetUserData();
    Tag* u2 = (Tag*)c->GetFixtureB()->GetBody()->GetUserData();
    Tag* tile = nullptr;
    Tag* obj = nullptr;
    if (u1 && u1->kind == KIND_TILE) {
        tile = u1;
        obj = u2;
    }
    if (u2 && u2->kind == KIND_TILE) {
        tile = u2;
        obj = u1;
    }
    if (!tile) return;
    Env* e = env;
    for (int k = 0; k < 3; k++) e->tile_color[tile->idx][k] = e->road_color[k];
    if (!obj || obj->kind != KIND_WHEEL) return;
    Wheel& w = e->wheels[obj->idx];
    if (begin) {
        w.ntiles++;
        if (!e->visited[tile->idx]) {
            e->visited[tile->idx] = true;
            e->reward += 1000.0 / e->n_track;
            e->tile_visited_count += 1;
            if (tile->idx == 0 &&
                (double)e->tile_visited_count / e->n_track > e->lap_complete_percent)
                e->new_lap = true;
        }
    } else {
        w.ntiles--;
    }
}

inline Env* alloc_envs(size_t n) {
    Env* e = nullptr;
    try {
        e = new Env[n];
        for (size_t i = 0; i < n; i++) {
            // gymnasium's Box2D.b2World((0, 0), contactListener=...): sleeping allowed
            e[i].world = new b2World(b2Vec2(0.0f, 0.0f));
            e[i].world->SetAllowSleeping(true);
            e[i].world->SetContactListener(&e[i].listener);
        }
        return e;
    } catch (...) {
        delete[] e;
        return nullptr;
    }
}

inline void free_envs(Env* e) { delete[] e; }

inline double np_sign(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : (v == 0 ? 0.0 : v)); }

// pygame's Vector2.rotate_rad (math.c's _vector2_rotate_helper, epsilon 1e-6): exact
// quarter turns near multiples of pi/2, else cos/sin of the angle reduced to [0, 2 pi).
// A frame rotates every vertex by one angle: Rot keeps what the helper derives from it.
struct Rot {
    int quarter;   // 0..3: an exact quarter turn; -1: cos/sin
    double s, c;
};

inline Rot make_rot(double angle) {
    const double PI = 3.14159265358979323846;
    const double TWO_PI = 2. * PI;
    const double PI_2 = PI / 2.0;
    const double eps = 1e-6;
    Rot r{-1, 0.0, 1.0};
    angle = std::fmod(angle, TWO_PI);
    if (angle < 0) angle += TWO_PI;
    if (std::fmod(angle + eps, PI_2) < 2 * eps) {
        r.quarter = (int)((angle + eps) / PI_2) % 4;   // 4: a full turn
        return r;
    }
    r.s = std::sin(angle);
    r.c = std::cos(angle);
    return r;
}

inline void rotate(const Rot& r, double x, double y, double* ox, double* oy) {
    switch (r.quarter) {
        case 0: *ox = x; *oy = y; return;
        case 1: *ox = -y; *oy = x; return;
        case 2: *ox = -x; *oy = -y; return;
        case 3: *ox = y; *oy = -x; return;
        default:
            *ox = r.c * x - r.s * y;
            *oy = r.s * x + r.c * y;
    }
}

// Python's seq[i] for -n <= i < n
inline int pyidx(int i, int n) { return i < 0 ? i + n : i; }

// gymnasium's _create_track (before its bodies): false when this try fails
inline bool make_track(Env* e, const Draws& d) {
    double cp[CHECKPOINTS][3];
    for (int c = 0; c < CHECKPOINTS; c++) {
        double noise = d.uniform(d.state, 0, 2 * M_PI * 1 / CHECKPOINTS);
        double alpha = 2 * M_PI * c / CHECKPOINTS + noise;
        double rad = d.uniform(d.state, TRACK_RAD / 3, TRACK_RAD);
        if (c == 0) {
            alpha = 0;
            rad = 1.5 * TRACK_RAD;
        }
        if (c == CHECKPOINTS - 1) {
            alpha = 2 * M_PI * c / CHECKPOINTS;
            e->start_alpha = 2 * M_PI * (-0.5) / CHECKPOINTS;
            rad = 1.5 * TRACK_RAD;
        }
        cp[c][0] = alpha;
        cp[c][1] = rad * std::cos(alpha);
        cp[c][2] = rad * std::sin(alpha);
    }
    double x = 1.5 * TRACK_RAD, y = 0, beta = 0;
    double dest_x = 0, dest_y = 0;
    int64_t dest_i = 0, laps = 0;
    int n = 0;
    int no_freeze = 2500;
    bool visited_other_side = false;
    double (*track)[4] = e->track;
    while (true) {
        double alpha = std::atan2(y, x);
        if (visited_other_side && alpha > 0) {
            laps += 1;
            visited_other_side = false;
        }
        if (alpha < 0) {
            visited_other_side = true;
            alpha += 2 * M_PI;
        }
        while (true) {
            bool failed = true;
            while (true) {
                const double* c = cp[dest_i % CHECKPOINTS];
                dest_x = c[1];
                dest_y = c[2];
                if (alpha <= c[0]) {
                    failed = false;
                    break;
                }
                dest_i += 1;
                if (dest_i % CHECKPOINTS == 0) break;
            }
            if (!failed) break;
            alpha -= 2 * M_PI;
        }
        double r1x = std::cos(beta);
        double r1y = std::sin(beta);
        double p1x = -r1y;
        double p1y = r1x;
        double dest_dx = dest_x - x;
        double dest_dy = dest_y - y;
        double proj = r1x * dest_dx + r1y * dest_dy;
        while (beta - alpha > 1.5 * M_PI) beta -= 2 * M_PI;
        while (beta - alpha < -1.5 * M_PI) beta += 2 * M_PI;
        double prev_beta = beta;
        proj *= SCALE;
        if (proj > 0.3) beta -= std::fmin(TRACK_TURN_RATE, std::fabs(0.001 * proj));
        if (proj < -0.3) beta += std::fmin(TRACK_TURN_RATE, std::fabs(0.001 * proj));
        x += p1x * TRACK_DETAIL_STEP;
        y += p1y * TRACK_DETAIL_STEP;
        track[n][0] = alpha;
        track[n][1] = prev_beta * 0.5 + beta * 0.5;
        track[n][2] = x;
        track[n][3] = y;
        n++;
        if (laps > 4) break;
        no_freeze -= 1;
        if (no_freeze == 0) break;
    }
    int i1 = -1, i2 = -1;
    int i = n;
    while (true) {
        i -= 1;
        if (i == 0) return false;
        bool pass = track[i][0] > e->start_alpha && track[i - 1][0] <= e->start_alpha;
        if (pass && i2 == -1) {
            i2 = i;
        } else if (pass && i1 == -1) {
            i1 = i;
            break;
        }
    }
    int len = i2 - 1 - i1;
    if (len <= 0) return false;   // gymnasium: an IndexError (never seen)
    std::memmove(track, track + i1, sizeof(double[4]) * len);
    e->n_track = len;
    double first_beta = track[0][1];
    double fpx = std::cos(first_beta), fpy = std::sin(first_beta);
    double gx = fpx * (track[0][2] - track[len - 1][2]);
    double gy = fpy * (track[0][3] - track[len - 1][3]);
    double glued = std::sqrt(gx * gx + gy * gy);
    if (glued > TRACK_DETAIL_STEP) return false;
    return true;
}

inline void set_rgb(uint8_t* rgb, int r, int g, int b) {
    rgb[0] = (uint8_t)r;
    rgb[1] = (uint8_t)g;
    rgb[2] = (uint8_t)b;
}

// gymnasium's _create_track after a track was found: borders, tiles, road_poly
inline void make_tiles(Env* e) {
    const int N = e->n_track;
    double (*track)[4] = e->track;
    bool* border = e->visited;   // scratch until the tiles are made
    for (int i = 0; i < N; i++) {
        bool good = true;
        double oneside = 0;
        for (int neg = 0; neg < BORDER_MIN_COUNT; neg++) {
            double beta1 = track[pyidx(i - neg - 0, N)][1];
            double beta2 = track[pyidx(i - neg - 1, N)][1];
            good &= std::fabs(beta1 - beta2) > TRACK_TURN_RATE * 0.2;
            oneside += np_sign(beta1 - beta2);
        }
        good &= std::fabs(oneside) == BORDER_MIN_COUNT;
        border[i] = good;
    }
    for (int i = 0; i < N; i++)
        for (int neg = 0; neg < BORDER_MIN_COUNT; neg++)
            border[pyidx(i - neg, N)] |= border[i];
    e->n_poly = 0;
    for (int i = 0; i < N; i++) {
        const double* p1 = track[i];
        const double* p2 = track[pyidx(i - 1, N)];
        double beta1 = p1[1], x1 = p1[2], y1 = p1[3];
        double beta2 = p2[1], x2 = p2[2], y2 = p2[3];
        double c1 = std::cos(beta1), s1 = std::sin(beta1);
        double c2 = std::cos(beta2), s2 = std::sin(beta2);
        Poly& p = e->road_poly[e->n_poly++];
        p.x[0] = x1 - TRACK_WIDTH * c1;   // road1_l
        p.y[0] = y1 - TRACK_WIDTH * s1;
        p.x[1] = x1 + TRACK_WIDTH * c1;   // road1_r
        p.y[1] = y1 + TRACK_WIDTH * s1;
        p.x[2] = x2 + TRACK_WIDTH * c2;   // road2_r
        p.y[2] = y2 + TRACK_WIDTH * s2;
        p.x[3] = x2 - TRACK_WIDTH * c2;   // road2_l
        p.y[3] = y2 - TRACK_WIDTH * s2;
        p.tile = i;
        // fd_tile.shape.vertices = ...; CreateStaticBody(fixtures=fd_tile)
        b2Vec2 v[4];
        for (int k = 0; k < 4; k++) v[k].Set((float)p.x[k], (float)p.y[k]);
        b2PolygonShape poly;
        poly.Set(v, 4);
        b2FixtureDef fd;
        fd.shape = &poly;
        b2BodyDef bd;
        bd.type = b2_staticBody;
        b2Body* t = e->world->CreateBody(&bd);
        t->CreateFixture(&fd);
        e->tile_tag[i] = Tag{KIND_TILE, i};
        t->SetUserData(&e->tile_tag[i]);
        double c = 0.01 * (i % 3) * 255;
        for (int k = 0; k < 3; k++) e->tile_color[i][k] = e->road_color[k] + c;
        t->GetFixtureList()->SetSensor(true);
        e->tiles[i] = t;
        if (border[i]) {
            double side = np_sign(beta2 - beta1);
            Poly& b = e->road_poly[e->n_poly++];
            b.x[0] = x1 + side * TRACK_WIDTH * c1;
            b.y[0] = y1 + side * TRACK_WIDTH * s1;
            b.x[1] = x1 + side * (TRACK_WIDTH + BORDER) * c1;
            b.y[1] = y1 + side * (TRACK_WIDTH + BORDER) * s1;
            b.x[2] = x2 + side * (TRACK_WIDTH + BORDER) * c2;
            b.y[2] = y2 + side * (TRACK_WIDTH + BORDER) * s2;
            b.x[3] = x2 + side * TRACK_WIDTH * c2;
            b.y[3] = y2 + side * TRACK_WIDTH * s2;
            b.tile = -1;
            if (i % 2 == 0)
                set_rgb(b.rgb, 255, 255, 255);
            else
                set_rgb(b.rgb, 255, 0, 0);
        }
    }
    for (int i = 0; i < N; i++) e->visited[i] = false;
}

inline void add_polygon(b2Body* body, const int (*pts)[2], int n, double scale, float density,
                        bool wheel) {
    b2Vec2 v[8];
    for (int k = 0; k < n; k++)
        v[k].Set((float)(pts[k][0] * scale * SIZE), (float)(pts[k][1] * scale * SIZE));
    b2PolygonShape poly;
    poly.Set(v, n);
    b2FixtureDef fd;
    fd.shape = &poly;
    fd.density = density;
    if (wheel) {
        fd.filter.categoryBits = 0x0020;
        fd.filter.maskBits = 0x001;
        fd.restitution = 0.0f;
    }
    body->CreateFixture(&fd);
}

// car_dynamics.Car(world, init_angle, init_x, init_y)
inline void make_car(Env* e, double init_angle, double init_x, double init_y) {
    b2BodyDef bd;
    bd.type = b2_dynamicBody;
    bd.position.Set((float)init_x, (float)init_y);
    bd.angle = (float)init_angle;
    b2Body* hull = e->world->CreateBody(&bd);
    add_polygon(hull, HULL_POLY1, 4, 1.0, 1.0f, false);
    add_polygon(hull, HULL_POLY2, 4, 1.0, 1.0f, false);
    add_polygon(hull, HULL_POLY3, 8, 1.0, 1.0f, false);
    add_polygon(hull, HULL_POLY4, 4, 1.0, 1.0f, false);
    e->hull = hull;
    e->n_particles = 0;
    const int WHEEL_POLY[4][2] = {{-WHEEL_W, +WHEEL_R}, {+WHEEL_W, +WHEEL_R},
                                  {+WHEEL_W, -WHEEL_R}, {-WHEEL_W, -WHEEL_R}};
    for (int k = 0; k < 4; k++) {
        const double wx = WHEELPOS[k][0], wy = WHEELPOS[k][1];
        const double front_k = 1.0;
        b2BodyDef wd;
        wd.type = b2_dynamicBody;
        wd.position.Set((float)(init_x + wx * SIZE), (float)(init_y + wy * SIZE));
        wd.angle = (float)init_angle;
        Wheel& w = e->wheels[k];
        w.body = e->world->CreateBody(&wd);
        add_polygon(w.body, WHEEL_POLY, 4, front_k, 0.1f, true);
        w.gas = w.brake = w.steer = w.phase = w.omega = 0.0;
        w.ntiles = 0;
        w.skid_start = false;
        w.skid_particle = -1;
        w.skid_len = 0;
        b2RevoluteJointDef rjd;
        rjd.bodyA = hull;
        rjd.bodyB = w.body;
        // pybox2d: referenceAngle = bodyB.angle - bodyA.angle (Python doubles)
        rjd.referenceAngle = (float)((double)w.body->GetAngle() - (double)hull->GetAngle());
        rjd.localAnchorA.Set((float)(wx * SIZE), (float)(wy * SIZE));
        rjd.localAnchorB.Set(0.0f, 0.0f);
        rjd.enableMotor = true;
        rjd.enableLimit = true;
        rjd.maxMotorTorque = (float)(180 * 900 * SIZE * SIZE);
        rjd.motorSpeed = 0.0f;
        rjd.lowerAngle = (float)-0.4;
        rjd.upperAngle = (float)+0.4;
        w.joint = (b2RevoluteJoint*)e->world->CreateJoint(&rjd);
        w.body->SetUserData(&w.tag);
    }
}

// gymnasium's _destroy: the tiles in order, then the hull and the wheels (the listener stays
// set: EndContact of the destroyed contacts rewrites colours and wheel tile counts)
inline void destroy(Env* e) {
    if (e->n_track == 0 || e->hull == nullptr) return;
    for (int i = 0; i < e->n_track; i++) e->world->DestroyBody(e->tiles[i]);
    e->world->DestroyBody(e->hull);
    e->hull = nullptr;
    for (int k = 0; k < 4; k++) {
        e->world->DestroyBody(e->wheels[k].body);
        e->wheels[k].body = nullptr;
        e->wheels[k].joint = nullptr;
    }
    e->n_track = 0;
}

// ---------------------------------------------------------------------------- physics

// Car.gas / Car.brake / Car.steer
inline void car_gas(Env* e, double gas) {
    gas = gas < 0 ? 0 : (gas > 1 ? 1 : gas);   // np.clip (NaN is refused before)
    for (int k = 2; k < 4; k++) {
        Wheel& w = e->wheels[k];
        double diff = gas - w.gas;
        if (diff > 0.1) diff = 0.1;
        w.gas += diff;
    }
}
inline void car_brake(Env* e, double b) {
    for (int k = 0; k < 4; k++) e->wheels[k].brake = b;
}
inline void car_steer(Env* e, double s) {
    e->wheels[0].steer = s;
    e->wheels[1].steer = s;
}

inline Particle* live_particle(Env* e, int64_t id) {
    if (id < 0 || id < e->n_particles - MAX_PARTICLES) return nullptr;   // left the deque
    return &e->particles[id % MAX_PARTICLES];
}

// the skid branch of Car.step for wheel w (force: |force| > 2 friction_limit)
inline void skid(Env* e, Wheel& w, bool skidding, bool grass) {
    if (!skidding) {
        w.skid_start = false;
        w.skid_particle = -1;
        return;
    }
    b2Vec2 pos = w.body->GetPosition();
    if (w.skid_particle >= 0 && w.skid_grass == grass && w.skid_len < PARTICLE_POINTS) {
        Particle* p = live_particle(e, w.skid_particle);
        if (p != nullptr) {
            p->pts[p->n][0] = pos.x;
            p->pts[p->n][1] = pos.y;
            p->n++;
        }
        w.skid_len++;
    } else if (!w.skid_start) {
        w.skid_start = true;
    } else {
        int64_t id = e->n_particles++;
        Particle& p = e->particles[id % MAX_PARTICLES];
        p.grass = grass;
        p.n = 2;
        for (int k = 0; k < 2; k++) {
            p.pts[k][0] = pos.x;
            p.pts[k][1] = pos.y;
        }
        w.skid_particle = id;
        w.skid_len = 2;
        w.skid_grass = grass;
        w.skid_start = false;
    }
}

// Car.step(dt)
inline void car_step(Env* e, double dt) {
    for (int k = 0; k < 4; k++) {
        Wheel& w = e->wheels[k];
        double ja = (double)w.joint->GetJointAngle();
        double dir = np_sign(w.steer - ja);
        double val = std::fabs(w.steer - ja);
        w.joint->SetMotorSpeed((float)(dir * std::fmin(50.0 * val, 3.0)));
        double friction_limit = FRICTION_LIMIT * 0.6;
        if (w.ntiles > 0) friction_limit = std::fmax(friction_limit, FRICTION_LIMIT * 1.0);
        b2Vec2 forw = w.body->GetWorldVector(b2Vec2(0.0f, 1.0f));
        b2Vec2 side = w.body->GetWorldVector(b2Vec2(1.0f, 0.0f));
        b2Vec2 v = w.body->GetLinearVelocity();
        double vf = (double)forw.x * v.x + (double)forw.y * v.y;
        double vs = (double)side.x * v.x + (double)side.y * v.y;
        w.omega += dt * ENGINE_POWER * w.gas / WHEEL_MOMENT_OF_INERTIA / (std::fabs(w.omega) + 5.0);
        if (w.brake >= 0.9) {
            w.omega = 0;
        } else if (w.brake > 0) {
            const double BRAKE_FORCE = 15;
            double bdir = -np_sign(w.omega);
            double bval = BRAKE_FORCE * w.brake;
            if (std::fabs(bval) > std::fabs(w.omega)) bval = std::fabs(w.omega);
            w.omega += bdir * bval;
        }
        w.phase += w.omega * dt;
        double vr = w.omega * (1.0 * WHEEL_R * SIZE);
        double f_force = -vf + vr;
        double p_force = -vs;
        f_force *= 205000 * SIZE * SIZE;
        p_force *= 205000 * SIZE * SIZE;
        double force = std::sqrt(f_force * f_force + p_force * p_force);
        skid(e, w, std::fabs(force) > 2.0 * friction_limit, w.ntiles == 0);
        if (std::fabs(force) > friction_limit) {
            f_force /= force;
            p_force /= force;
            force = friction_limit;
            f_force *= force;
            p_force *= force;
        }
        w.omega -= dt * f_force * (1.0 * WHEEL_R * SIZE) / WHEEL_MOMENT_OF_INERTIA;
        w.body->ApplyForceToCenter(
            b2Vec2((float)(p_force * side.x + f_force * forw.x),
                   (float)(p_force * side.y + f_force * forw.y)),
            true);
    }
}

// ---------------------------------------------------------------------------- pixels

// A thread slot's drawing buffers: one band of the 1000 x 800 canvas (draw_frame) and the
// rasterisers' scratch.
const int BAND_ROWS = 200;  // a multiple of 8 (smoothscale's AVX2 pass) dividing WINDOW_H
// The road layers of a frame, placed once and drawn on every band: gfxdraw polygons (field,
// grass, road; x in v[0..4), y in v[4..8), as pygame converts them) and the car's
// draw.polygon ones (Python floats).
struct RoadPoly {
    int v[8];
    uint32_t c;
};
struct CarPoly {
    double xs[8], ys[8];
    int n;
    uint8_t r, g, b;
};
const int MAX_ROAD_POLYS = 1 + 400 + 2 * MAX_TRACK;  // the field, the grass squares, the road
const int MAX_CAR_POLYS = 16;  // the hull's 4 fixtures, each wheel and its white mark

struct Canvas {
    uint32_t px[WINDOW_W * BAND_ROWS];
    int poly_scratch[256];
    RoadPoly road[MAX_ROAD_POLYS];
    int n_road = 0;
    CarPoly car[MAX_CAR_POLYS];
    int n_car = 0;
    unsigned char* smooth_scratch = nullptr;
    size_t smooth_bytes = 0;
};

inline Canvas* canvas_new() {
    Canvas* c = new (std::nothrow) Canvas;
    if (c == nullptr) return nullptr;
    c->smooth_bytes = cr_smoothscale_scratch_bytes(WINDOW_W, WINDOW_H, (int)STATE_W, (int)STATE_H);
    c->smooth_scratch = new (std::nothrow) unsigned char[c->smooth_bytes];
    if (c->smooth_scratch == nullptr) {
        delete c;
        return nullptr;
    }
    return c;
}

inline void canvas_free(Canvas* c) {
    if (c == nullptr) return;
    delete[] c->smooth_scratch;
    delete c;
}

// the colour pygame takes from gymnasium's int(c) (road) or numpy array (field, grass: an
// int array, or floats when domain-randomised, which pygame truncates)
inline uint8_t chan(double c) { return (uint8_t)(int64_t)c; }

// CarRacing._draw_colored_polygon up to its drawing: rotate, zoom, translate, the off-screen
// test, pygame's conversion of the points; the polygon is kept for draw_road
inline void colored_polygon(Canvas* cv, const double* px, const double* py, uint8_t r,
                            uint8_t g, uint8_t b, double zoom, double tx, double ty,
                            const Rot& rot, bool clip) {
    const int n = 4;
    const double MAX_SHAPE_DIM = GRASS_DIM * std::sqrt(2.0) * ZOOM * SCALE;
    double xs[4], ys[4];
    bool inside = !clip;
    for (int k = 0; k < n; k++) {
        double rx, ry;
        rotate(rot, px[k], py[k], &rx, &ry);
        xs[k] = rx * zoom + tx;
        ys[k] = ry * zoom + ty;
        if (-MAX_SHAPE_DIM <= xs[k] && xs[k] <= WINDOW_W + MAX_SHAPE_DIM &&
            -MAX_SHAPE_DIM <= ys[k] && ys[k] <= WINDOW_H + MAX_SHAPE_DIM)
            inside = true;
    }
    if (!inside || cv->n_road == MAX_ROAD_POLYS) return;
    RoadPoly& p = cv->road[cv->n_road];
    if (!cr_gfx_points(xs, ys, n, p.v)) return;  // not finite: pygame would raise
    p.c = cr_gfx_rgb(r, g, b);
    cv->n_road++;
}

// The points of pygame.draw.polygon of Box2D vertices `trans * v` (float32), rotated, zoomed,
// translated; kept for draw_road
inline void body_polygon(Canvas* cv, const b2Transform& xf, const b2Vec2* v, int n, uint8_t r,
                         uint8_t g, uint8_t b, double zoom, double tx, double ty, const Rot& rot) {
    if (cv->n_car == MAX_CAR_POLYS || n > 8) return;  // not with the car of make_car
    CarPoly& p = cv->car[cv->n_car++];
    for (int k = 0; k < n; k++) {
        b2Vec2 q = b2Mul(xf, v[k]);
        double rx, ry;
        rotate(rot, (double)q.x, (double)q.y, &rx, &ry);
        p.xs[k] = rx * zoom + tx;
        p.ys[k] = ry * zoom + ty;
    }
    p.n = n;
    p.r = r, p.g = g, p.b = b;
}

// Car.draw(..., draw_particles=False), placed
inline void place_car(Env* e, Canvas* cv, double zoom, double tx, double ty, const Rot& rot) {
    b2Body* drawlist[5] = {e->wheels[0].body, e->wheels[1].body, e->wheels[2].body,
                           e->wheels[3].body, e->hull};
    for (int o = 0; o < 5; o++) {
        b2Body* body = drawlist[o];
        const b2Transform& xf = body->GetTransform();
        // pybox2d's body.fixtures walks Box2D's list: the newest fixture first
        for (b2Fixture* f = body->GetFixtureList(); f; f = f->GetNext()) {
            b2PolygonShape* shape = (b2PolygonShape*)f->GetShape();
            uint8_t red = o == 4 ? (uint8_t)(int)(0.8 * 255) : 0;
            body_polygon(cv, xf, shape->m_vertices, shape->m_count, red, 0, 0, zoom, tx, ty,
                         rot);
            if (o == 4) continue;
            const Wheel& w = e->wheels[o];
            double a1 = w.phase;
            double a2 = w.phase + 1.2;
            double s1 = std::sin(a1), s2 = std::sin(a2);
            double c1 = std::cos(a1), c2 = std::cos(a2);
            if (s1 > 0 && s2 > 0) continue;
            if (s1 > 0) c1 = np_sign(c1);
            if (s2 > 0) c2 = np_sign(c2);
            b2Vec2 white[4];
            white[0].Set((float)(-WHEEL_W * SIZE), (float)(+WHEEL_R * c1 * SIZE));
            white[1].Set((float)(+WHEEL_W * SIZE), (float)(+WHEEL_R * c1 * SIZE));
            white[2].Set((float)(+WHEEL_W * SIZE), (float)(+WHEEL_R * c2 * SIZE));
            white[3].Set((float)(-WHEEL_W * SIZE), (float)(+WHEEL_R * c2 * SIZE));
            body_polygon(cv, xf, white, 4, 77, 77, 77, zoom, tx, ty, rot);
        }
    }
}

// pygame.draw.polygon of gymnasium's indicator quads (Python floats)
inline void quad(Canvas* cv, const cr_surface* s, double x0, double y0, double x1, double y1,
                 double x2, double y2, double x3, double y3, uint8_t r, uint8_t g, uint8_t b) {
    double xs[4] = {x0, x1, x2, x3}, ys[4] = {y0, y1, y2, y3};
    cr_draw_polygon(s, xs, ys, 4, r, g, b, cv->poly_scratch);
}

// _render_indicators' five vertical bars: gymnasium's vertical_ind(place, val) for the speed
// and each wheel's omega; `value` decides whether a bar is drawn
struct Bar {
    double place, val, value;
    uint8_t r, g, b;
};

inline void vertical_bars(Env* e, Bar* bars) {
    b2Vec2 lv = e->hull->GetLinearVelocity();
    double vx = lv.x, vy = lv.y;
    double true_speed = std::sqrt(vx * vx + vy * vy);
    bars[0] = {5, 0.02 * true_speed, true_speed, 255, 255, 255};
    const int place[4] = {7, 8, 9, 10};
    const uint8_t red[4] = {0, 0, 51, 51};
    for (int k = 0; k < 4; k++)
        bars[1 + k] = {(double)place[k], 0.01 * e->wheels[k].omega, e->wheels[k].omega,
                       red[k], 0, 255};
}

const double PANEL_TOP = WINDOW_H - 5 * (WINDOW_H / 40.0);  // the black panel: rows 700..799

// Whether every bar stays inside the panel (its top at or below row 700), so that the panel
// alone covers the rows 700..799 of the flipped canvas, i.e. the road's rows 0..99
inline bool bars_in_panel(const Bar* bars) {
    const double H = WINDOW_H, h = H / 40.0;
    for (int k = 0; k < 5; k++)
        if (std::fabs(bars[k].value) > 1e-4 && !(H - (h + h * bars[k].val) >= PANEL_TOP))
            return false;
    return true;
}

// CarRacing._render_indicators(W, H), on the flipped view of the canvas
inline void draw_indicators(Env* e, Canvas* cv, const cr_surface* surf, const Bar* bars) {
    const double W = WINDOW_W, H = WINDOW_H;
    const double s = W / 40.0, h = H / 40.0;
    quad(cv, surf, W, H, W, PANEL_TOP, 0, PANEL_TOP, 0, H, 0, 0, 0);
    for (int k = 0; k < 5; k++) {
        const Bar& v = bars[k];
        if (!(std::fabs(v.value) > 1e-4)) continue;
        quad(cv, surf, v.place * s, H - (h + h * v.val), (v.place + 1) * s, H - (h + h * v.val),
             (v.place + 1) * s, H - h, (v.place + 0) * s, H - h, v.r, v.g, v.b);
    }
    auto horiz = [&](double place, double val, double value, uint8_t r, uint8_t g, uint8_t b) {
        if (!(std::fabs(value) > 1e-4)) return;
        quad(cv, surf, (place + 0) * s, H - 4 * h, (place + val) * s, H - 4 * h,
             (place + val) * s, H - 2 * h, (place + 0) * s, H - 2 * h, r, g, b);
    };
    double ja = (double)e->wheels[0].joint->GetJointAngle();
    horiz(20, -10.0 * ja, ja, 0, 255, 0);
    double av = (double)e->hull->GetAngularVelocity();
    horiz(30, -0.8 * av, av, 255, 0, 0);
}

// Whether the quad (xs, ys) holds the whole canvas with `margin` pixels to spare: its fill
// then writes every pixel, so the canvas needs no clearing first (pygame's new Surface is
// black). The margin covers the rasteriser's truncation of coordinates to integers.
inline bool covers_canvas(const double* xs, const double* ys, double margin) {
    double area = 0;
    for (int k = 0; k < 4; k++)
        area += xs[k] * ys[(k + 1) % 4] - xs[(k + 1) % 4] * ys[k];
    if (area == 0) return false;
    const double cx[4] = {0, WINDOW_W, WINDOW_W, 0}, cy[4] = {0, 0, WINDOW_H, WINDOW_H};
    for (int k = 0; k < 4; k++) {
        double ex = xs[(k + 1) % 4] - xs[k], ey = ys[(k + 1) % 4] - ys[k];
        double len = std::sqrt(ex * ex + ey * ey);
        if (!(len > 0)) return false;
        for (int c = 0; c < 4; c++) {
            double d = (ex * (cy[c] - ys[k]) - ey * (cx[c] - xs[k])) / len;
            if ((area > 0 ? d : -d) < margin) return false;
        }
    }
    return true;
}

// Test switch (tests/box2d/test_car_racing.py): draw the road's every row, as when a bar rises
// above the panel, a state gymnasium's dynamics do not reach (wheel speeds settle near 306,
// bars leave the panel above 400). Process-wide; set only between steps.
inline std::atomic<bool>& draw_whole_road() {
    static std::atomic<bool> on{false};
    return on;
}
inline void set_draw_whole_road(bool on) { draw_whole_road().store(on); }

// The road layers of CarRacing._render (field, grass, road polygons, car), placed once a frame
inline void place_road(Env* e, Canvas* cv, double zoom, double tx, double ty, const Rot& rot) {
    cv->n_road = 0;
    cv->n_car = 0;
    const double B = PLAYFIELD;
    double fx[4] = {B, B, -B, -B}, fy[4] = {B, -B, -B, B};
    colored_polygon(cv, fx, fy, chan(e->bg_color[0]), chan(e->bg_color[1]),
                    chan(e->bg_color[2]), zoom, tx, ty, rot, false);
    uint8_t gr = chan(e->grass_color[0]), gg = chan(e->grass_color[1]),
            gb = chan(e->grass_color[2]);
    for (int x = -20; x < 20; x += 2) {
        for (int y = -20; y < 20; y += 2) {
            double gx[4] = {GRASS_DIM * x + GRASS_DIM, GRASS_DIM * x + 0, GRASS_DIM * x + 0,
                            GRASS_DIM * x + GRASS_DIM};
            double gy[4] = {GRASS_DIM * y + 0, GRASS_DIM * y + 0, GRASS_DIM * y + GRASS_DIM,
                            GRASS_DIM * y + GRASS_DIM};
            colored_polygon(cv, gx, gy, gr, gg, gb, zoom, tx, ty, rot, true);
        }
    }
    for (int k = 0; k < e->n_poly; k++) {
        const Poly& p = e->road_poly[k];
        uint8_t r, g, b;
        if (p.tile >= 0) {
            const double* c = e->tile_color[p.tile];
            r = chan(c[0]);
            g = chan(c[1]);
            b = chan(c[2]);
        } else {
            r = p.rgb[0];
            g = p.rgb[1];
            b = p.rgb[2];
        }
        colored_polygon(cv, p.x, p.y, r, g, b, zoom, tx, ty, rot, true);
    }
    place_car(e, cv, zoom, tx, ty, rot);
}

// The placed road layers drawn on the rows of `road`: gfxdraw.aapolygon then
// gfxdraw.filled_polygon per road polygon, then the car's draw.polygon calls
inline void draw_road(Canvas* cv, const cr_surface* road, bool clear) {
    if (road->ylo >= road->yhi) return;
    if (clear)
        std::memset(cr_surface_row(road, road->ylo), 0,
                    sizeof(uint32_t) * WINDOW_W * (road->yhi - road->ylo));
    int* scratch = cv->poly_scratch;
    for (int k = 0; k < cv->n_road; k++) {
        const RoadPoly& p = cv->road[k];
        cr_gfx_aapolygon_i(road, p.v, p.v + 4, 4, p.c);
        cr_gfx_filled_polygon_i(road, p.v, p.v + 4, 4, p.c, scratch, scratch + 4);
    }
    for (int k = 0; k < cv->n_car; k++) {
        const CarPoly& p = cv->car[k];
        cr_draw_polygon(road, p.xs, p.ys, p.n, p.r, p.g, p.b, scratch);
    }
}

// CarRacing._render("state_pixels") and its smoothscale to 96 x 96, into obs.
// gymnasium draws the road on a 1000 x 800 canvas, flips it upside down, draws the panel over
// its bottom rows and shrinks it. Here the frame is made a band of BAND_ROWS canvas rows at a
// time in cv's band buffer, small enough to stay in the core's cache from the first fill to
// the shrink: the band's road rows upright, then its panel rows on an upside-down view of the
// same buffer, then smoothscale's X pass over the band read bottom row first (the flipped
// order); the Y pass runs once all bands are done. Each pixel sees the same operations in the
// same order as in gymnasium. While the bars stay inside the panel, the road's rows 0..99 (the
// panel's after the flip) are not drawn at all. Returns nonzero if the score cannot be drawn.
inline int draw_frame(Env* e, Canvas* cv, const cr_glyph_table* glyphs, uint8_t* obs) {
    double angle = -(double)e->hull->GetAngle();
    double zoom = 0.1 * SCALE * std::fmax(1 - e->t, 0) + ZOOM * SCALE * std::fmin(e->t, 1);
    b2Vec2 pos = e->hull->GetPosition();
    double scroll_x = -((double)pos.x) * zoom;
    double scroll_y = -((double)pos.y) * zoom;
    double tx, ty;
    const Rot rot = make_rot(angle);
    rotate(rot, scroll_x, scroll_y, &tx, &ty);
    tx = WINDOW_W / 2 + tx;
    ty = WINDOW_H / 4 + ty;
    Bar bars[5];
    vertical_bars(e, bars);
    int road_top = 0;  // the first road row drawn
    if (bars_in_panel(bars) && !draw_whole_road().load(std::memory_order_relaxed))
        road_top = WINDOW_H - (int)PANEL_TOP;
    // pygame's new Surface is black: clear unless the field covers the canvas
    const double B = PLAYFIELD;
    double fx[4] = {B, B, -B, -B}, fy[4] = {B, -B, -B, B};
    double sx[4], sy[4];
    for (int k = 0; k < 4; k++) {
        double rx, ry;
        rotate(rot, fx[k], fy[k], &rx, &ry);
        sx[k] = rx * zoom + tx;
        sy[k] = ry * zoom + ty;
    }
    const bool clear = !covers_canvas(sx, sy, 8.0);
    place_road(e, cv, zoom, tx, ty, rot);
    const int avx2 = cr_ss_use_avx2(WINDOW_W, WINDOW_H, (int)STATE_W, (int)STATE_H);
    // bands in the flipped order, so that smoothscale sees rows 0, 1, ... of gymnasium's canvas
    for (int f0 = 0; f0 < WINDOW_H; f0 += BAND_ROWS) {
        const int y0 = WINDOW_H - f0 - BAND_ROWS;  // the band's first upright row
        cr_surface road = cr_surface_band(cv->px, WINDOW_W, WINDOW_H, y0, BAND_ROWS);
        if (road.ylo < road_top) road.ylo = road_top < road.yhi ? road_top : road.yhi;
        draw_road(cv, &road, clear);
        const cr_surface panel = cr_surface_band_flipped(cv->px, WINDOW_W, WINDOW_H, f0, BAND_ROWS);
        draw_indicators(e, cv, &panel, bars);
        if (cr_draw_score(&panel, e->reward, glyphs) != 0) return 1;
        cr_smoothscale_band(avx2, cr_surface_row(&panel, f0), panel.pitch, WINDOW_W, f0, BAND_ROWS,
                            WINDOW_H, (int)STATE_W, (int)STATE_H, cv->smooth_scratch);
    }
    cr_smoothscale_finish(avx2, WINDOW_W, WINDOW_H, obs, (int)STATE_W, (int)STATE_H,
                          cv->smooth_scratch);
    return 0;
}

// What gymnasium's render() reads of the car, for the rgb_array stand-in (cypool.box2d._render):
// scal: hull angle, x, y, vx, vy, angular velocity (float32 values), wheel 0's joint angle,
// then each wheel's omega and phase; xf: each drawn body's transform (p.x, p.y, q.c, q.s;
// the wheels, then the hull); verts/counts: each body's fixtures in pybox2d's order (the
// newest first), up to 4 of up to 8 vertices. Returns false before the first reset.
inline bool car_state(Env* e, double* scal, float* xf, float* verts, int* counts) {
    if (e->hull == nullptr) return false;
    b2Vec2 pos = e->hull->GetPosition(), v = e->hull->GetLinearVelocity();
    scal[0] = e->hull->GetAngle();
    scal[1] = pos.x;
    scal[2] = pos.y;
    scal[3] = v.x;
    scal[4] = v.y;
    scal[5] = e->hull->GetAngularVelocity();
    scal[6] = e->wheels[0].joint->GetJointAngle();
    for (int k = 0; k < 4; k++) {
        scal[7 + 2 * k] = e->wheels[k].omega;
        scal[8 + 2 * k] = e->wheels[k].phase;
    }
    for (int o = 0; o < 5; o++) {
        b2Body* body = o < 4 ? e->wheels[o].body : e->hull;
        const b2Transform& t = body->GetTransform();
        xf[4 * o + 0] = t.p.x;
        xf[4 * o + 1] = t.p.y;
        xf[4 * o + 2] = t.q.c;
        xf[4 * o + 3] = t.q.s;
        int f = 0;
        for (b2Fixture* fx = body->GetFixtureList(); fx && f < 4; fx = fx->GetNext(), f++) {
            const b2PolygonShape* shape = (const b2PolygonShape*)fx->GetShape();
            int n = shape->m_count < 8 ? shape->m_count : 8;
            counts[4 * o + f] = n;
            for (int k = 0; k < n; k++) {
                verts[((4 * o + f) * 8 + k) * 2 + 0] = shape->m_vertices[k].x;
                verts[((4 * o + f) * 8 + k) * 2 + 1] = shape->m_vertices[k].y;
            }
        }
        for (; f < 4; f++) counts[4 * o + f] = 0;
    }
    return true;
}

// ---------------------------------------------------------------------------- reset, step

struct Params {
    double lap_complete_percent;
    bool domain_randomize;
    bool continuous;
};

// gymnasium's step() after the actions were applied: physics, time, the observation, the
// reward. action_given: false for the reset's step(None).
inline int advance(Env* e, bool action_given, Canvas* cv, const cr_glyph_table* glyphs,
                   uint8_t* obs, double* reward, bool* terminated, int8_t* lap_finished,
                   char* err, size_t errlen) {
    car_step(e, 1.0 / FPS);
    e->world->Step((float)(1.0 / FPS), 6 * 30, 2 * 30);
    e->t += 1.0 / FPS;
    if (draw_frame(e, cv, glyphs, obs) != 0) {
        snprintf(err, errlen, "CarRacing: the score %.17g cannot be drawn", e->reward);
        return CR_ERROR;
    }
    double step_reward = 0;
    bool term = false;
    *lap_finished = -1;
    if (action_given) {
        e->reward -= 0.1;
        step_reward = e->reward - e->prev_reward;
        e->prev_reward = e->reward;
        if (e->tile_visited_count == e->n_track || e->new_lap) {
            term = true;
            *lap_finished = 1;
        }
        b2Vec2 pos = e->hull->GetPosition();
        if (std::fabs((double)pos.x) > PLAYFIELD || std::fabs((double)pos.y) > PLAYFIELD) {
            term = true;
            *lap_finished = 0;
            step_reward = -100;
        }
    }
    *reward = step_reward;
    *terminated = term;
    return CR_OK;
}

// gymnasium's reset(): destroy, colours, track tries, car, then step(None)
inline int reset(Env* e, const Params& p, const Draws& d, Canvas* cv,
                 const cr_glyph_table* glyphs, uint8_t* obs, char* err, size_t errlen) {
    return cyb2::guarded("reset", CR_ERROR, err, errlen, [&]() -> int {
        destroy(e);
        e->lap_complete_percent = p.lap_complete_percent;
        e->reward = 0.0;
        e->prev_reward = 0.0;
        e->tile_visited_count = 0;
        e->t = 0.0;
        e->new_lap = false;
        e->n_poly = 0;
        if (p.domain_randomize) {
            for (int k = 0; k < 3; k++) e->road_color[k] = d.uniform(d.state, 0, 210);
            for (int k = 0; k < 3; k++) e->bg_color[k] = d.uniform(d.state, 0, 210);
            for (int k = 0; k < 3; k++) e->grass_color[k] = e->bg_color[k];
            int64_t idx = d.integers(d.state, 0, 3);
            e->grass_color[idx] += 20;
        } else {
            for (int k = 0; k < 3; k++) e->road_color[k] = 102;
            e->bg_color[0] = 102, e->bg_color[1] = 204, e->bg_color[2] = 102;
            e->grass_color[0] = 102, e->grass_color[1] = 230, e->grass_color[2] = 102;
        }
        while (!make_track(e, d)) {
        }
        make_tiles(e);
        make_car(e, e->track[0][1], e->track[0][2], e->track[0][3]);
        double rew;
        bool term;
        int8_t lap;
        return advance(e, false, cv, glyphs, obs, &rew, &term, &lap, err, errlen);
    });
}

// gymnasium's step(action): continuous (steer, gas, brake) as float64, or the discrete action
inline int step(Env* e, const Params& p, int64_t action, const double* a, Canvas* cv,
                const cr_glyph_table* glyphs, uint8_t* obs, double* reward, bool* terminated,
                int8_t* lap_finished, char* err, size_t errlen) {
    return cyb2::guarded("step", CR_ERROR, err, errlen, [&]() -> int {
        if (p.continuous) {
            car_steer(e, -a[0]);
            car_gas(e, a[1]);
            car_brake(e, a[2]);
        } else {
            // -0.6 * (a == 1) + 0.6 * (a == 2): numpy bools times floats
            car_steer(e, -0.6 * (double)(action == 1) + 0.6 * (double)(action == 2));
            car_gas(e, 0.2 * (double)(action == 3));
            car_brake(e, 0.8 * (double)(action == 4));
        }
        return advance(e, true, cv, glyphs, obs, reward, terminated, lap_finished, err,
                       errlen);
    });
}

}  // namespace cycr
