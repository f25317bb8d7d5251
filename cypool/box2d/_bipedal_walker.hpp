// BipedalWalker (gymnasium 1.4.0's bipedal_walker.py, v3; hardcore too) on Box2D's C++ core.
// Same rules as _lunar_lander.hpp: gymnasium's Python-double arithmetic on Box2D's float32
// values, SWIG's (float)(double) where a number enters Box2D, Box2D's assertions caught.
//
// Unlike LunarLander, gymnasium keeps ONE b2World per env across resets: the bodies it
// destroys and creates change proxy ids, body and contact order, and with them the physics.
// So each env here keeps its world for its lifetime and replays gymnasium's destroy/create
// order exactly: terrain (as gymnasium's reversed list), hull, legs; then the new terrain
// (polygons as generated, then the 199 edges), hull, and per side leg, hip, lower leg, knee.
//
// The random draws are made here through callbacks into the env's numpy stream (the Cython
// pool passes numpy's C distributions), in gymnasium's order.
#pragma once
#include <Box2D/Box2D.h>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <new>

#include "_box2d_kernel.hpp"

namespace cybw {

using cyb2::Draws;

const double SCALE = 30.0;
const double FPS = 50.0;
const int MOTORS_TORQUE = 80;
const int SPEED_HIP = 4, SPEED_KNEE = 6;
const double LIDAR_RANGE = 160 / SCALE;
const int INITIAL_RANDOM = 5;
const int HULL_POLY[5][2] = {{-30, 9}, {6, 9}, {34, 1}, {34, -8}, {-30, -8}};
const double LEG_DOWN = -8 / SCALE;
const double LEG_W = 8 / SCALE, LEG_H = 34 / SCALE;
const double VIEWPORT_W = 600, VIEWPORT_H = 400;
const double TERRAIN_STEP = 14 / SCALE;
const int TERRAIN_LENGTH = 200;
const double TERRAIN_HEIGHT = VIEWPORT_H / SCALE / 4;
const int TERRAIN_GRASS = 10, TERRAIN_STARTPAD = 20;
const double FRICTION = 2.5;
const int MAX_TERRAIN = 1024;   // 199 edges + the obstacles (at most 4 per 5 cells)

enum { BW_OK = 0, BW_ERROR = 1 };
enum { GRASS = 0, STUMP = 1, STAIRS = 2, PIT = 3, STATES = 4 };   // gymnasium's range(5)

// the env's numpy stream, as the pool passes it: uniform(low, high), random(),
// integers(low, high) (int64)
struct Env;

struct Listener : public b2ContactListener {
    Env* env;
    void BeginContact(b2Contact* contact) override;
    void EndContact(b2Contact* contact) override;
};

struct Lidar : public b2RayCastCallback {
    float fraction;
    double p2[2];   // the ray's end, then the last hit point (gymnasium's lidar.p2, rendered)
    float32 ReportFixture(b2Fixture* fixture, const b2Vec2& point, const b2Vec2& normal,
                          float32 frac) override {
        if ((fixture->GetFilterData().categoryBits & 1) == 0) return -1;
        p2[0] = point.x;
        p2[1] = point.y;
        fraction = frac;
        return frac;
    }
};

const int N_CLOUD_DRAWS = TERRAIN_LENGTH / 20 * 11;

struct Env {
    b2World* world = nullptr;
    b2Body* terrain[MAX_TERRAIN];
    int n_terrain = 0;
    b2Body* hull = nullptr;
    b2Body* legs[4] = {nullptr, nullptr, nullptr, nullptr};
    b2RevoluteJoint* joints[4] = {nullptr, nullptr, nullptr, nullptr};
    bool ground_contact[4] = {false, false, false, false};
    bool game_over = false;
    bool has_prev = false;
    double prev_shaping = 0.0;
    // what gymnasium's render() reads besides the bodies
    double clouds[N_CLOUD_DRAWS];   // the clouds' uniform draws, in draw order
    double scroll = 0.0;
    double lidar_p1[2] = {0.0, 0.0};
    double lidar_p2[10][2];
    int64_t lidar_render = 0;
    Listener listener;

    Env() { listener.env = this; }
    ~Env() { delete world; }
    Env(const Env&) = delete;
    Env& operator=(const Env&) = delete;
};

inline void Listener::BeginContact(b2Contact* contact) {
    b2Body* a = contact->GetFixtureA()->GetBody();
    b2Body* b = contact->GetFixtureB()->GetBody();
    if (env->hull == a || env->hull == b) env->game_over = true;
    for (int k = 1; k < 4; k += 2)
        if (env->legs[k] == a || env->legs[k] == b) env->ground_contact[k] = true;
}

inline void Listener::EndContact(b2Contact* contact) {
    b2Body* a = contact->GetFixtureA()->GetBody();
    b2Body* b = contact->GetFixtureB()->GetBody();
    for (int k = 1; k < 4; k += 2)
        if (env->legs[k] == a || env->legs[k] == b) env->ground_contact[k] = false;
}

inline Env* alloc_envs(size_t n) {
    try {
        Env* e = new Env[n];
        for (size_t i = 0; i < n; i++) {
            // gymnasium's Box2D.b2World(): gravity (0, -10), sleeping allowed
            e[i].world = new b2World(b2Vec2(0.0f, -10.0f));
            e[i].world->SetAllowSleeping(true);
        }
        return e;
    } catch (...) {
        return nullptr;   // (a partly built array leaks: only on out-of-memory)
    }
}

inline void free_envs(Env* e) { delete[] e; }

// one static body with a polygon fixture (gymnasium's fd_polygon: friction 2.5)
inline bool add_polygon(Env* e, const double (*pts)[2]) {
    if (e->n_terrain >= MAX_TERRAIN) return false;
    b2Vec2 v[4];
    for (int k = 0; k < 4; k++) v[k].Set((float)pts[k][0], (float)pts[k][1]);
    b2PolygonShape poly;
    poly.Set(v, 4);
    b2FixtureDef fd;
    fd.shape = &poly;
    fd.friction = (float)FRICTION;
    b2BodyDef bd;
    bd.type = b2_staticBody;
    b2Body* t = e->world->CreateBody(&bd);
    t->CreateFixture(&fd);
    e->terrain[e->n_terrain++] = t;
    return true;
}

inline void destroy(Env* e) {
    if (e->n_terrain == 0) return;   // gymnasium: `if not self.terrain: return`
    e->world->SetContactListener(nullptr);
    // gymnasium's list was reversed after it was built: edges last to first, then obstacles
    // last to first
    for (int k = e->n_terrain - 1; k >= 0; k--) e->world->DestroyBody(e->terrain[k]);
    e->n_terrain = 0;
    e->world->DestroyBody(e->hull);
    e->hull = nullptr;
    for (int k = 0; k < 4; k++) {
        e->world->DestroyBody(e->legs[k]);
        e->legs[k] = nullptr;
        e->joints[k] = nullptr;
    }
}

// returns false when the terrain overflows MAX_TERRAIN (never with gymnasium's generator)
inline bool generate_terrain(Env* e, bool hardcore, const Draws& d, double* terrain_x,
                             double* terrain_y) {
    int64_t state = GRASS;
    double velocity = 0.0;
    double y = TERRAIN_HEIGHT;
    int64_t counter = TERRAIN_STARTPAD;
    bool oneshot = false;
    int64_t stair_steps = 0, stair_width = 0, stair_height = 0;
    double original_y = 0;
    for (int i = 0; i < TERRAIN_LENGTH; i++) {
        double x = i * TERRAIN_STEP;
        terrain_x[i] = x;
        if (state == GRASS && !oneshot) {
            double sign = (TERRAIN_HEIGHT - y) > 0 ? 1.0 : ((TERRAIN_HEIGHT - y) < 0 ? -1.0 : 0.0);
            velocity = 0.8 * velocity + 0.01 * sign;
            if (i > TERRAIN_STARTPAD) velocity += d.uniform(d.state, -1, 1) / SCALE;
            y += velocity;
        } else if (state == PIT && oneshot) {
            counter = d.integers(d.state, 3, 5);
            double poly[4][2] = {{x, y}, {x + TERRAIN_STEP, y},
                                 {x + TERRAIN_STEP, y - 4 * TERRAIN_STEP},
                                 {x, y - 4 * TERRAIN_STEP}};
            if (!add_polygon(e, poly)) return false;
            double poly2[4][2];
            for (int k = 0; k < 4; k++) {
                poly2[k][0] = poly[k][0] + TERRAIN_STEP * (double)counter;
                poly2[k][1] = poly[k][1];
            }
            if (!add_polygon(e, poly2)) return false;
            counter += 2;
            original_y = y;
        } else if (state == PIT && !oneshot) {
            y = original_y;
            if (counter > 1) y -= 4 * TERRAIN_STEP;
        } else if (state == STUMP && oneshot) {
            counter = d.integers(d.state, 1, 3);
            double c = (double)counter;
            double poly[4][2] = {{x, y}, {x + c * TERRAIN_STEP, y},
                                 {x + c * TERRAIN_STEP, y + c * TERRAIN_STEP},
                                 {x, y + c * TERRAIN_STEP}};
            if (!add_polygon(e, poly)) return false;
        } else if (state == STAIRS && oneshot) {
            stair_height = d.random(d.state) > 0.5 ? 1 : -1;
            stair_width = d.integers(d.state, 4, 5);
            stair_steps = d.integers(d.state, 3, 5);
            original_y = y;
            for (int64_t s = 0; s < stair_steps; s++) {
                double poly[4][2] = {
                    {x + (double)(s * stair_width) * TERRAIN_STEP,
                     y + (double)(s * stair_height) * TERRAIN_STEP},
                    {x + (double)((1 + s) * stair_width) * TERRAIN_STEP,
                     y + (double)(s * stair_height) * TERRAIN_STEP},
                    {x + (double)((1 + s) * stair_width) * TERRAIN_STEP,
                     y + (double)(-1 + s * stair_height) * TERRAIN_STEP},
                    {x + (double)(s * stair_width) * TERRAIN_STEP,
                     y + (double)(-1 + s * stair_height) * TERRAIN_STEP}};
                if (!add_polygon(e, poly)) return false;
            }
            counter = stair_steps * stair_width;
        } else if (state == STAIRS && !oneshot) {
            int64_t s = stair_steps * stair_width - counter - stair_height;
            double n = (double)s / (double)stair_width;   // numpy's int64 true division
            y = original_y + (n * (double)stair_height) * TERRAIN_STEP;
        }
        oneshot = false;
        terrain_y[i] = y;
        counter -= 1;
        if (counter == 0) {
            counter = d.integers(d.state, TERRAIN_GRASS / 2, TERRAIN_GRASS);
            if (state == GRASS && hardcore) {
                state = d.integers(d.state, 1, STATES);   // integers(1, _STATES_): 1..3
                oneshot = true;
            } else {
                state = GRASS;
                oneshot = true;
            }
        }
    }
    for (int i = 0; i < TERRAIN_LENGTH - 1; i++) {
        if (e->n_terrain >= MAX_TERRAIN) return false;
        b2EdgeShape edge;
        edge.Set(b2Vec2((float)terrain_x[i], (float)terrain_y[i]),
                 b2Vec2((float)terrain_x[i + 1], (float)terrain_y[i + 1]));
        b2FixtureDef fd;   // gymnasium's fd_edge: friction 2.5, category 1
        fd.shape = &edge;
        fd.friction = (float)FRICTION;
        fd.filter.categoryBits = 0x0001;
        b2BodyDef bd;
        bd.type = b2_staticBody;
        b2Body* t = e->world->CreateBody(&bd);
        t->CreateFixture(&fd);
        e->terrain[e->n_terrain++] = t;
    }
    return true;
}

inline b2Body* make_leg_body(b2World* world, double x, double y, double angle, double half_w,
                             double half_h) {
    b2BodyDef bd;
    bd.type = b2_dynamicBody;
    bd.position.Set((float)x, (float)y);
    bd.angle = (float)angle;
    b2Body* b = world->CreateBody(&bd);
    b2PolygonShape box;
    box.SetAsBox((float)half_w, (float)half_h);
    b2FixtureDef fd;
    fd.shape = &box;
    fd.density = 1.0f;
    fd.restitution = 0.0f;
    fd.filter.categoryBits = 0x0020;
    fd.filter.maskBits = 0x001;
    b->CreateFixture(&fd);
    return b;
}

inline b2RevoluteJoint* make_joint(b2World* world, b2Body* a, b2Body* b, double ax, double ay,
                                   double bx, double by, double speed, double lower,
                                   double upper) {
    b2RevoluteJointDef rjd;
    rjd.bodyA = a;
    rjd.bodyB = b;
    // pybox2d: referenceAngle = bodyB.angle - bodyA.angle (Python doubles)
    rjd.referenceAngle = (float)((double)b->GetAngle() - (double)a->GetAngle());
    rjd.localAnchorA.Set((float)ax, (float)ay);
    rjd.localAnchorB.Set((float)bx, (float)by);
    rjd.enableMotor = true;
    rjd.enableLimit = true;
    rjd.maxMotorTorque = (float)MOTORS_TORQUE;
    rjd.motorSpeed = (float)speed;
    rjd.lowerAngle = (float)lower;
    rjd.upperAngle = (float)upper;
    return (b2RevoluteJoint*)world->CreateJoint(&rjd);
}

// gymnasium's reset() up to (not including) its final step([0, 0, 0, 0]). terrain_x/_y:
// scratch of TERRAIN_LENGTH doubles each.
inline int reset(Env* e, bool hardcore, const Draws& d, double* terrain_x, double* terrain_y,
                 char* err, size_t errlen) {
    return cyb2::guarded("reset", BW_ERROR, err, errlen, [&]() -> int {
        destroy(e);
        e->world->SetContactListener(&e->listener);
        e->game_over = false;
        e->has_prev = false;
        for (int k = 0; k < 4; k++) e->ground_contact[k] = false;
        if (!generate_terrain(e, hardcore, d, terrain_x, terrain_y)) {
            snprintf(err, errlen, "BipedalWalker terrain has more than %d bodies", MAX_TERRAIN);
            return BW_ERROR;
        }
        // the clouds: drawn in every render mode, 10 x (1 + 5 x 2) uniforms, used only to draw
        int k = 0;
        for (int c = 0; c < TERRAIN_LENGTH / 20; c++) {
            e->clouds[k++] = d.uniform(d.state, 0, TERRAIN_LENGTH);
            for (int a = 0; a < 5; a++) {
                e->clouds[k++] = d.uniform(d.state, 0, 5 * TERRAIN_STEP);
                e->clouds[k++] = d.uniform(d.state, 0, 5 * TERRAIN_STEP);
            }
        }
        e->scroll = 0.0;
        e->lidar_render = 0;
        const double init_x = TERRAIN_STEP * TERRAIN_STARTPAD / 2;
        const double init_y = TERRAIN_HEIGHT + 2 * LEG_H;
        {
            b2BodyDef bd;
            bd.type = b2_dynamicBody;
            bd.position.Set((float)init_x, (float)init_y);
            e->hull = e->world->CreateBody(&bd);
            b2Vec2 v[5];
            for (int k = 0; k < 5; k++)
                v[k].Set((float)(HULL_POLY[k][0] / SCALE), (float)(HULL_POLY[k][1] / SCALE));
            b2PolygonShape poly;
            poly.Set(v, 5);
            b2FixtureDef fd;
            fd.shape = &poly;
            fd.density = 5.0f;
            fd.friction = 0.1f;
            fd.filter.categoryBits = 0x0020;
            fd.filter.maskBits = 0x001;
            fd.restitution = 0.0f;
            e->hull->CreateFixture(&fd);
        }
        double fx = d.uniform(d.state, -INITIAL_RANDOM, INITIAL_RANDOM);
        e->hull->ApplyForceToCenter(b2Vec2((float)fx, 0.0f), true);
        for (int side = 0; side < 2; side++) {
            int i = side == 0 ? -1 : 1;
            b2Body* leg = make_leg_body(e->world, init_x, init_y - LEG_H / 2 - LEG_DOWN,
                                        i * 0.05, LEG_W / 2, LEG_H / 2);
            e->legs[2 * side] = leg;
            e->joints[2 * side] = make_joint(e->world, e->hull, leg, 0, LEG_DOWN, 0, LEG_H / 2,
                                             (double)i, -0.8, 1.1);
            b2Body* lower = make_leg_body(e->world, init_x, init_y - LEG_H * 3 / 2 - LEG_DOWN,
                                          i * 0.05, 0.8 * LEG_W / 2, LEG_H / 2);
            e->legs[2 * side + 1] = lower;
            e->joints[2 * side + 1] = make_joint(e->world, leg, lower, 0, -LEG_H / 2, 0,
                                                 LEG_H / 2, 1.0, -1.6, -0.1);
        }
        return BW_OK;
    });
}

// gymnasium's step(action). a: the 4 actions as doubles; f32: they arrived as float32 (the
// reward's action terms are then numpy float32 arithmetic, NEP 50), noop: the reset's
// int64 zeros.
inline int step(Env* e, const double* a, bool f32, float* obs, double* reward,
                bool* terminated, char* err, size_t errlen) {
    return cyb2::guarded("step", BW_ERROR, err, errlen, [&]() -> int {
        double c[4];
        for (int k = 0; k < 4; k++) {
            double m = std::fabs(a[k]);
            c[k] = m > 1.0 ? 1.0 : m;   // np.clip(np.abs(a), 0, 1)
            int speed = k % 2 == 0 ? SPEED_HIP : SPEED_KNEE;
            double sign = a[k] > 0 ? 1.0 : (a[k] < 0 ? -1.0 : 0.0);
            e->joints[k]->SetMotorSpeed((float)(speed * sign));
            // 80 * c: exact in double for a float32 c, so one rounding to float32 either way
            e->joints[k]->SetMaxMotorTorque((float)(MOTORS_TORQUE * c[k]));
        }
        e->world->Step((float)(1.0 / FPS), 6 * 30, 2 * 30);

        b2Vec2 pos = e->hull->GetPosition();
        b2Vec2 vel = e->hull->GetLinearVelocity();
        float fractions[10];
        for (int i = 0; i < 10; i++) {
            Lidar lidar;
            lidar.fraction = 1.0f;
            double p2x = (double)pos.x + std::sin(1.5 * i / 10.0) * LIDAR_RANGE;
            double p2y = (double)pos.y - std::cos(1.5 * i / 10.0) * LIDAR_RANGE;
            lidar.p2[0] = p2x;
            lidar.p2[1] = p2y;
            e->world->RayCast(&lidar, pos, b2Vec2((float)p2x, (float)p2y));
            fractions[i] = lidar.fraction;
            e->lidar_p2[i][0] = lidar.p2[0];
            e->lidar_p2[i][1] = lidar.p2[1];
        }
        e->lidar_p1[0] = pos.x;
        e->lidar_p1[1] = pos.y;
        e->scroll = (double)pos.x - VIEWPORT_W / SCALE / 5;
        double s[24];
        s[0] = (double)e->hull->GetAngle();
        s[1] = 2.0 * (double)e->hull->GetAngularVelocity() / FPS;
        s[2] = 0.3 * (double)vel.x * (VIEWPORT_W / SCALE) / FPS;
        s[3] = 0.3 * (double)vel.y * (VIEWPORT_H / SCALE) / FPS;
        s[4] = (double)e->joints[0]->GetJointAngle();
        s[5] = (double)e->joints[0]->GetJointSpeed() / SPEED_HIP;
        s[6] = (double)e->joints[1]->GetJointAngle() + 1.0;
        s[7] = (double)e->joints[1]->GetJointSpeed() / SPEED_KNEE;
        s[8] = e->ground_contact[1] ? 1.0 : 0.0;
        s[9] = (double)e->joints[2]->GetJointAngle();
        s[10] = (double)e->joints[2]->GetJointSpeed() / SPEED_HIP;
        s[11] = (double)e->joints[3]->GetJointAngle() + 1.0;
        s[12] = (double)e->joints[3]->GetJointSpeed() / SPEED_KNEE;
        s[13] = e->ground_contact[3] ? 1.0 : 0.0;
        for (int i = 0; i < 10; i++) s[14 + i] = (double)fractions[i];

        double shaping = 130 * (double)pos.x / SCALE;
        shaping -= 5.0 * std::fabs(s[0]);
        double r = 0.0;
        if (e->has_prev) r = shaping - e->prev_shaping;
        e->prev_shaping = shaping;
        e->has_prev = true;
        const double coef = 0.00035 * MOTORS_TORQUE;
        if (f32) {   // Python float - numpy float32 -> float32 (NEP 50), at each subtraction
            float rf = (float)r;
            for (int k = 0; k < 4; k++) rf = rf - (float)coef * (float)c[k];
            r = rf;
        } else {
            for (int k = 0; k < 4; k++) r -= coef * c[k];
        }
        bool term = false;
        if (e->game_over || pos.x < 0) {
            r = -100;
            term = true;
        }
        if ((double)pos.x > (TERRAIN_LENGTH - TERRAIN_GRASS) * TERRAIN_STEP) term = true;
        for (int k = 0; k < 24; k++) obs[k] = (float)s[k];
        *reward = r;
        *terminated = term;
        return BW_OK;
    });
}

// gymnasium's drawlist (terrain as its reversed list, the 4 leg parts, the hull): each body's
// fixture vertices as render() computes them, `trans * v * SCALE` in float32 (pybox2d's
// b2Transform * b2Vec2 and b2Vec2 * float run in C++). out: 2 floats per vertex; counts: the
// vertices of each body. Returns the number of bodies, -1 if cap (floats) is too small.
inline int drawlist_paths(Env* e, float* out, int cap, int* counts) {
    b2Body* bodies[MAX_TERRAIN + 5];
    int n = 0;
    for (int k = e->n_terrain - 1; k >= 0; k--) bodies[n++] = e->terrain[k];
    for (int k = 0; k < 4; k++) bodies[n++] = e->legs[k];
    bodies[n++] = e->hull;
    int used = 0;
    for (int b = 0; b < n; b++) {
        const b2Transform& xf = bodies[b]->GetTransform();
        b2Shape* shape = bodies[b]->GetFixtureList()->GetShape();
        b2Vec2 v[b2_maxPolygonVertices];
        int count;
        if (shape->GetType() == b2Shape::e_edge) {
            b2EdgeShape* edge = (b2EdgeShape*)shape;
            v[0] = edge->m_vertex1;
            v[1] = edge->m_vertex2;
            count = 2;
        } else {
            b2PolygonShape* poly = (b2PolygonShape*)shape;
            count = poly->m_count;
            for (int k = 0; k < count; k++) v[k] = poly->m_vertices[k];
        }
        if (used + 2 * count > cap) return -1;
        for (int k = 0; k < count; k++) {
            float x = (xf.q.c * v[k].x - xf.q.s * v[k].y) + xf.p.x;
            float y = (xf.q.s * v[k].x + xf.q.c * v[k].y) + xf.p.y;
            out[used++] = x * (float)SCALE;
            out[used++] = y * (float)SCALE;
        }
        counts[b] = count;
    }
    return n;
}

}  // namespace cybw
