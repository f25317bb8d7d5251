// LunarLander (gymnasium 1.4.0's lunar_lander.py, v3) on Box2D's C++ core: one env per
// object, no Python, no exceptions out (Box2D's b2Assert throws b2AssertException, caught
// here and returned as a status with a message). The random draws are made by the Cython
// pool from the env's numpy stream, in gymnasium's order, and passed in.
//
// Arithmetic: gymnasium computes in Python doubles on Box2D's float32 values and converts
// back to float32 where SWIG passes a number to Box2D ((float)(double)); the code below keeps
// its order of operations, constants and libm calls (sin, cos, tanh: glibc's double ones, as
// math.* calls). Built with -ffp-contract=off (no fused multiply-add).
#pragma once
#include <Box2D/Box2D.h>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <new>

#include "_box2d_kernel.hpp"

namespace cyll {

const double SCALE = 30.0;
const double FPS = 50.0;
const double MAIN_ENGINE_POWER = 13.0;
const double SIDE_ENGINE_POWER = 0.6;
const int LEG_AWAY = 20, LEG_DOWN = 18, LEG_W = 2, LEG_H = 8;
const double LEG_SPRING_TORQUE = 40;
const int SIDE_ENGINE_HEIGHT = 14, SIDE_ENGINE_AWAY = 12, MAIN_ENGINE_Y_LOCATION = 4;
const double VIEWPORT_W = 600, VIEWPORT_H = 400;
const int CHUNKS = 11;
const int LANDER_POLY[6][2] = {{-14, 17}, {-17, 0}, {-17, -10}, {17, -10}, {17, 0}, {14, 17}};

enum { LL_OK = 0, LL_ERROR = 1 };

struct Params {
    double gravity, wind_power, turbulence_power;
    bool enable_wind, continuous;
};

struct Env;

// gymnasium's particles (only with a render mode): bodies in the env's world, in creation
// order, with their ttl (a Python float; render() lowers it by 0.15, then destroys those in
// front whose ttl is negative). They never touch the lander's island: no effect on it.
struct Particle {
    b2Body* body;
    double ttl;
};

struct Listener : public b2ContactListener {
    Env* env;
    void BeginContact(b2Contact* contact) override;
    void EndContact(b2Contact* contact) override;
};

struct Env {
    b2World* world = nullptr;
    b2Body* moon = nullptr;
    b2Body* lander = nullptr;
    b2Body* legs[2] = {nullptr, nullptr};
    bool ground_contact[2] = {false, false};
    bool game_over = false;
    bool has_prev = false;
    double prev_shaping = 0.0;
    int64_t wind_idx = 0, torque_idx = 0;
    bool particles_on = false;         // the pool has a render mode
    std::deque<Particle> particles;
    double smooth_y[CHUNKS];           // the terrain (gymnasium's sky_polys, rendered)
    Listener listener;

    Env() { listener.env = this; }
    ~Env() { delete world; }
    Env(const Env&) = delete;
    Env& operator=(const Env&) = delete;
};

inline void Listener::BeginContact(b2Contact* contact) {
    b2Body* a = contact->GetFixtureA()->GetBody();
    b2Body* b = contact->GetFixtureB()->GetBody();
    if (env->lander == a || env->lander == b) env->game_over = true;
    for (int i = 0; i < 2; i++)
        if (env->legs[i] == a || env->legs[i] == b) env->ground_contact[i] = true;
}

inline void Listener::EndContact(b2Contact* contact) {
    b2Body* a = contact->GetFixtureA()->GetBody();
    b2Body* b = contact->GetFixtureB()->GetBody();
    for (int i = 0; i < 2; i++)
        if (env->legs[i] == a || env->legs[i] == b) env->ground_contact[i] = false;
}

inline Env* alloc_envs(size_t n) {
    try {
        return new Env[n];
    } catch (...) {
        return nullptr;
    }
}

inline void free_envs(Env* e) { delete[] e; }

// SWIG's conversion of a Python number to float32: OverflowError beyond FLT_MAX
inline bool to_f32(double v, float* out) {
    if (v < -FLT_MAX || v > FLT_MAX) return false;
    *out = (float)v;
    return true;
}

// gymnasium's _clean_particles(all_particle)
inline void clean_particles(Env* e, bool all) {
    while (!e->particles.empty() && (all || e->particles.front().ttl < 0)) {
        e->world->DestroyBody(e->particles.front().body);
        e->particles.pop_front();
    }
}

// gymnasium's _create_particle(mass, x, y, ttl)
inline b2Body* create_particle(Env* e, double mass, double x, double y, double ttl) {
    b2BodyDef bd;
    bd.type = b2_dynamicBody;
    bd.position.Set((float)x, (float)y);
    bd.angle = 0.0f;
    b2Body* p = e->world->CreateBody(&bd);
    b2CircleShape circle;
    circle.m_radius = (float)(2 / SCALE);
    circle.m_p.Set(0.0f, 0.0f);
    b2FixtureDef fd;
    fd.shape = &circle;
    fd.density = (float)mass;
    fd.friction = 0.1f;
    fd.filter.categoryBits = 0x0100;
    fd.filter.maskBits = 0x001;
    fd.restitution = 0.3f;
    p->CreateFixture(&fd);
    e->particles.push_back(Particle{p, ttl});
    clean_particles(e, false);
    return p;
}

// reset: gymnasium's reset() up to (not including) its final step(noop).
// heights: the 12 uniform(0, H/2) draws; fx, fy: the initial force draws; wind, torque: the
// two integers(-9999, 9999) draws (used when enable_wind).
inline int reset(Env* e, const Params& p, const double* heights, double fx, double fy,
                 int64_t wind, int64_t torque, char* err, size_t errlen) {
    return cyb2::guarded("reset", LL_ERROR, err, errlen, [&]() -> int {
        e->particles.clear();   // gymnasium's _clean_particles(True), in the old world
        delete e->world;   // gymnasium builds a new world every reset
        e->world = nullptr;
        e->moon = e->lander = e->legs[0] = e->legs[1] = nullptr;
        e->ground_contact[0] = e->ground_contact[1] = false;
        float g;
        if (!to_f32(p.gravity, &g)) {
            snprintf(err, errlen, "gravity %g does not fit in float32", p.gravity);
            return LL_ERROR;
        }
        e->world = new b2World(b2Vec2(0.0f, g));
        e->world->SetAllowSleeping(true);
        e->world->SetContactListener(&e->listener);
        e->game_over = false;
        e->has_prev = false;

        const double W = VIEWPORT_W / SCALE;
        const double H = VIEWPORT_H / SCALE;
        double height[CHUNKS + 1];
        for (int i = 0; i < CHUNKS + 1; i++) height[i] = heights[i];
        double chunk_x[CHUNKS];
        for (int i = 0; i < CHUNKS; i++) chunk_x[i] = W / (CHUNKS - 1) * i;
        const double helipad_y = H / 4;
        for (int k = -2; k <= 2; k++) height[CHUNKS / 2 + k] = helipad_y;
        double smooth_y[CHUNKS];
        for (int i = 0; i < CHUNKS; i++) {
            double prev = height[i == 0 ? CHUNKS : i - 1];   // height[-1] is the last
            smooth_y[i] = 0.33 * (prev + height[i] + height[i + 1]);
            e->smooth_y[i] = smooth_y[i];
        }

        // moon: a static body with the edge (0,0)-(W,0) (default fixture), then the terrain
        b2BodyDef moon_def;
        moon_def.type = b2_staticBody;
        e->moon = e->world->CreateBody(&moon_def);
        {
            b2EdgeShape edge;
            edge.Set(b2Vec2(0.0f, 0.0f), b2Vec2((float)W, 0.0f));
            b2FixtureDef fd;
            fd.shape = &edge;
            e->moon->CreateFixture(&fd);
        }
        for (int i = 0; i < CHUNKS - 1; i++) {
            b2EdgeShape edge;
            edge.Set(b2Vec2((float)chunk_x[i], (float)smooth_y[i]),
                     b2Vec2((float)chunk_x[i + 1], (float)smooth_y[i + 1]));
            b2FixtureDef fd;
            fd.shape = &edge;
            fd.density = 0.0f;
            fd.friction = 0.1f;
            e->moon->CreateFixture(&fd);
        }

        const double initial_y = VIEWPORT_H / SCALE;
        const double initial_x = VIEWPORT_W / SCALE / 2;
        {
            b2BodyDef bd;
            bd.type = b2_dynamicBody;
            bd.position.Set((float)initial_x, (float)initial_y);
            bd.angle = 0.0f;
            e->lander = e->world->CreateBody(&bd);
            b2Vec2 verts[6];
            for (int k = 0; k < 6; k++)
                verts[k].Set((float)(LANDER_POLY[k][0] / SCALE),
                             (float)(LANDER_POLY[k][1] / SCALE));
            b2PolygonShape poly;
            poly.Set(verts, 6);
            b2FixtureDef fd;
            fd.shape = &poly;
            fd.density = 5.0f;
            fd.friction = 0.1f;
            fd.filter.categoryBits = 0x0010;
            fd.filter.maskBits = 0x001;
            fd.restitution = 0.0f;
            e->lander->CreateFixture(&fd);
        }
        e->lander->ApplyForceToCenter(b2Vec2((float)fx, (float)fy), true);
        if (p.enable_wind) {
            e->wind_idx = wind;
            e->torque_idx = torque;
        }
        for (int k = 0; k < 2; k++) {
            int i = k == 0 ? -1 : 1;
            b2BodyDef bd;
            bd.type = b2_dynamicBody;
            bd.position.Set((float)(initial_x - (double)(i * LEG_AWAY) / SCALE),
                            (float)initial_y);
            bd.angle = (float)(i * 0.05);
            b2Body* leg = e->world->CreateBody(&bd);
            b2PolygonShape box;
            box.SetAsBox((float)(LEG_W / SCALE), (float)(LEG_H / SCALE));
            b2FixtureDef fd;
            fd.shape = &box;
            fd.density = 1.0f;
            fd.restitution = 0.0f;
            fd.filter.categoryBits = 0x0020;
            fd.filter.maskBits = 0x001;
            leg->CreateFixture(&fd);
            e->legs[k] = leg;   // ground_contact is False until a contact begins
            b2RevoluteJointDef rjd;
            rjd.bodyA = e->lander;
            rjd.bodyB = leg;
            // pybox2d's revoluteJointDef(bodyA=, bodyB=) sets referenceAngle =
            // bodyB.angle - bodyA.angle (Python doubles of the float32 angles)
            rjd.referenceAngle = (float)((double)leg->GetAngle() - (double)e->lander->GetAngle());
            rjd.localAnchorA.Set(0.0f, 0.0f);
            rjd.localAnchorB.Set((float)((double)(i * LEG_AWAY) / SCALE),
                                 (float)(LEG_DOWN / SCALE));
            rjd.enableMotor = true;
            rjd.enableLimit = true;
            rjd.maxMotorTorque = (float)LEG_SPRING_TORQUE;
            rjd.motorSpeed = (float)(0.3 * i);
            if (i == -1) {
                rjd.lowerAngle = (float)(0.9 - 0.5);
                rjd.upperAngle = (float)0.9;
            } else {
                rjd.lowerAngle = (float)-0.9;
                rjd.upperAngle = (float)(-0.9 + 0.5);
            }
            e->world->CreateJoint(&rjd);
        }
        return LL_OK;
    });
}

// step: gymnasium's step(action). Discrete: action in 0..3 (a0, a1 unused). Continuous:
// a0, a1 the action as float64 (clipped here as np.clip(a, -1, 1)). d0, d1: the two
// uniform(-1, 1) draws (before the division by SCALE).
inline int step(Env* e, const Params& p, int64_t action, double a0, double a1, double d0,
                double d1, float* obs, double* reward, bool* terminated, char* err,
                size_t errlen) {
    return cyb2::guarded("step", LL_ERROR, err, errlen, [&]() -> int {
        b2Body* lander = e->lander;
        if (p.enable_wind && !(e->ground_contact[0] || e->ground_contact[1])) {
            double wind_mag = std::tanh(std::sin(0.02 * (double)e->wind_idx)
                                        + std::sin(M_PI * 0.01 * (double)e->wind_idx))
                              * p.wind_power;
            e->wind_idx += 1;
            float wf;
            if (!to_f32(wind_mag, &wf)) {
                snprintf(err, errlen, "wind force %g does not fit in float32", wind_mag);
                return LL_ERROR;
            }
            lander->ApplyForceToCenter(b2Vec2(wf, 0.0f), true);
            double torque_mag = std::tanh(std::sin(0.02 * (double)e->torque_idx)
                                          + std::sin(M_PI * 0.01 * (double)e->torque_idx))
                                * p.turbulence_power;
            e->torque_idx += 1;
            float tf;
            if (!to_f32(torque_mag, &tf)) {
                snprintf(err, errlen, "wind torque %g does not fit in float32", torque_mag);
                return LL_ERROR;
            }
            lander->ApplyTorque(tf, true);
        }
        if (p.continuous) {   // np.clip(action, -1, +1); NaN stays NaN (no engine fires)
            a0 = a0 < -1.0 ? -1.0 : (a0 > 1.0 ? 1.0 : a0);
            a1 = a1 < -1.0 ? -1.0 : (a1 > 1.0 ? 1.0 : a1);
        }
        double angle = lander->GetAngle();
        double tip0 = std::sin(angle), tip1 = std::cos(angle);
        double side0 = -tip1, side1 = tip0;
        double disp0 = d0 / SCALE, disp1 = d1 / SCALE;

        double m_power = 0.0;
        if ((p.continuous && a0 > 0.0) || (!p.continuous && action == 2)) {
            if (p.continuous) {
                double c = a0 < 0.0 ? 0.0 : (a0 > 1.0 ? 1.0 : a0);
                m_power = (c + 1.0) * 0.5;
            } else {
                m_power = 1.0;
            }
            double ox = tip0 * (MAIN_ENGINE_Y_LOCATION / SCALE + 2 * disp0) + side0 * disp1;
            double oy = -tip1 * (MAIN_ENGINE_Y_LOCATION / SCALE + 2 * disp0) - side1 * disp1;
            b2Vec2 pos = lander->GetPosition();
            double px = (double)pos.x + ox, py = (double)pos.y + oy;
            if (e->particles_on) {
                b2Body* part = create_particle(e, 3.5, px, py, m_power);
                part->ApplyLinearImpulse(
                    b2Vec2((float)(ox * MAIN_ENGINE_POWER * m_power),
                           (float)(oy * MAIN_ENGINE_POWER * m_power)),
                    b2Vec2((float)px, (float)py), true);
            }
            lander->ApplyLinearImpulse(
                b2Vec2((float)(-ox * MAIN_ENGINE_POWER * m_power),
                       (float)(-oy * MAIN_ENGINE_POWER * m_power)),
                b2Vec2((float)px, (float)py), true);
        }
        double s_power = 0.0;
        if ((p.continuous && std::fabs(a1) > 0.5)
                || (!p.continuous && (action == 1 || action == 3))) {
            double direction;
            if (p.continuous) {
                direction = a1 > 0.0 ? 1.0 : -1.0;   // np.sign; |a1| > 0.5 here
                double m = std::fabs(a1);
                s_power = m < 0.5 ? 0.5 : (m > 1.0 ? 1.0 : m);
            } else {
                direction = (double)(action - 2);
                s_power = 1.0;
            }
            double ox = tip0 * disp0
                        + side0 * (3 * disp1 + direction * SIDE_ENGINE_AWAY / SCALE);
            double oy = -tip1 * disp0
                        - side1 * (3 * disp1 + direction * SIDE_ENGINE_AWAY / SCALE);
            b2Vec2 pos = lander->GetPosition();
            double px = (double)pos.x + ox - tip0 * 17 / SCALE;
            double py = (double)pos.y + oy + tip1 * SIDE_ENGINE_HEIGHT / SCALE;
            if (e->particles_on) {
                b2Body* part = create_particle(e, 0.7, px, py, s_power);
                part->ApplyLinearImpulse(
                    b2Vec2((float)(ox * SIDE_ENGINE_POWER * s_power),
                           (float)(oy * SIDE_ENGINE_POWER * s_power)),
                    b2Vec2((float)px, (float)py), true);
            }
            lander->ApplyLinearImpulse(
                b2Vec2((float)(-ox * SIDE_ENGINE_POWER * s_power),
                       (float)(-oy * SIDE_ENGINE_POWER * s_power)),
                b2Vec2((float)px, (float)py), true);
        }

        e->world->Step((float)(1.0 / FPS), 6 * 30, 2 * 30);

        b2Vec2 pos = lander->GetPosition();
        b2Vec2 vel = lander->GetLinearVelocity();
        const double helipad_y = VIEWPORT_H / SCALE / 4;
        double s[8];
        s[0] = ((double)pos.x - VIEWPORT_W / SCALE / 2) / (VIEWPORT_W / SCALE / 2);
        s[1] = ((double)pos.y - (helipad_y + LEG_DOWN / SCALE)) / (VIEWPORT_H / SCALE / 2);
        s[2] = (double)vel.x * (VIEWPORT_W / SCALE / 2) / FPS;
        s[3] = (double)vel.y * (VIEWPORT_H / SCALE / 2) / FPS;
        s[4] = (double)lander->GetAngle();
        s[5] = 20.0 * (double)lander->GetAngularVelocity() / FPS;
        s[6] = e->ground_contact[0] ? 1.0 : 0.0;
        s[7] = e->ground_contact[1] ? 1.0 : 0.0;

        double shaping = -100 * std::sqrt(s[0] * s[0] + s[1] * s[1])
                         - 100 * std::sqrt(s[2] * s[2] + s[3] * s[3])
                         - 100 * std::fabs(s[4]) + 10 * s[6] + 10 * s[7];
        double r = 0.0;
        if (e->has_prev) r = shaping - e->prev_shaping;
        e->prev_shaping = shaping;
        e->has_prev = true;
        r -= m_power * 0.30;
        r -= s_power * 0.03;
        bool term = false;
        if (e->game_over || std::fabs(s[0]) >= 1.0) {
            term = true;
            r = -100;
        }
        if (!lander->IsAwake()) {
            term = true;
            r = +100;
        }
        for (int k = 0; k < 8; k++) obs[k] = (float)s[k];
        *reward = r;
        *terminated = term;
        return LL_OK;
    });
}

inline void debug_bodies(Env* e, float* out) {
    b2Body* bs[3] = {e->lander, e->legs[0], e->legs[1]};
    for (int k = 0; k < 3; k++) {
        b2Body* b = bs[k];
        out[6*k] = b->GetPosition().x; out[6*k+1] = b->GetPosition().y; out[6*k+2] = b->GetAngle();
        out[6*k+3] = b->GetLinearVelocity().x; out[6*k+4] = b->GetLinearVelocity().y; out[6*k+5] = b->GetAngularVelocity();
    }
}

// render(): every particle's ttl -= 0.15, then _clean_particles(False)
inline void render_tick(Env* e) {
    for (size_t k = 0; k < e->particles.size(); k++) e->particles[k].ttl -= 0.15;
    clean_particles(e, false);
}

inline size_t n_particles(Env* e) { return e->particles.size(); }

// float32 `trans * v * SCALE` (pybox2d's operators run in C++ float)
inline void world_point(const b2Transform& xf, const b2Vec2& v, float* out) {
    float x = (xf.q.c * v.x - xf.q.s * v.y) + xf.p.x;
    float y = (xf.q.s * v.x + xf.q.c * v.y) + xf.p.y;
    out[0] = x * (float)SCALE;
    out[1] = y * (float)SCALE;
}

// the particles' centres (trans * shape.pos * SCALE) and ttl, in list order; then the
// drawlist (lander, legs): its polygons' vertices. out: 2 floats per point; counts: the
// lander's and legs' vertex counts.
inline void render_points(Env* e, float* centres, double* ttl, float* out, int* counts) {
    for (size_t k = 0; k < e->particles.size(); k++) {
        b2Body* b = e->particles[k].body;
        const b2CircleShape* c = (const b2CircleShape*)b->GetFixtureList()->GetShape();
        world_point(b->GetTransform(), c->m_p, centres + 2 * k);
        ttl[k] = e->particles[k].ttl;
    }
    b2Body* bodies[3] = {e->lander, e->legs[0], e->legs[1]};
    int used = 0;
    for (int b = 0; b < 3; b++) {
        const b2PolygonShape* poly = (const b2PolygonShape*)bodies[b]->GetFixtureList()->GetShape();
        for (int k = 0; k < poly->m_count; k++, used += 2)
            world_point(bodies[b]->GetTransform(), poly->m_vertices[k], out + used);
        counts[b] = poly->m_count;
    }
}

}  // namespace cyll
