"""Rendering of the Box2D pools: gymnasium 1.4.0's own ``render()``, fed each env's state.

LunarLander: with a render mode the pools make gymnasium's particles (bodies in each env's
world, which never touch the lander's island), and ``LunarLander.render`` is called on a
stand-in holding the terrain (``sky_polys`` from the env's ``smooth_y``), the particles
(their float32 centres and ttl; render() lowers the ttl, colours them and drops the expired
ones, which the pool then does to its own with ``render_tick``) and the lander's and legs'
float32 vertices. The particles' shape is a pybox2d ``circleShape``, as gymnasium tells
circles by type: rendering (only) needs gymnasium's box2d extra, whose module imports pybox2d.

BipedalWalker: gymnasium's ``BipedalWalker.render`` is called on a stand-in object holding
what it reads, taken from the pool (``render_data``): ``scroll``, ``cloud_poly`` (computed
here from the env's cloud draws, with gymnasium's expressions), ``terrain_poly`` (from the
terrain's x and y), the lidars' ``p1``/``p2``, ``lidar_render`` (advanced per rendered frame,
zeroed by a reset, as gymnasium's) and the ``drawlist``, whose fixtures give pygame the
vertices the pool computed as pybox2d does (``trans * v * SCALE`` in float32) in gymnasium's
order and colours. The drawing itself is gymnasium's (pygame), so the frames are its frames.

rgb_array needs pygame (``pip install pygame-ce``, as gymnasium's box2d extra); no display is
needed. ``"human"`` is not offered.
"""
from __future__ import annotations

import math
import types

from gymnasium.error import DependencyNotInstalled

__all__ = ["render_bipedal_walker", "render_car_racing", "render_lunar_lander"]

_TS = 14 / 30.0                  # bipedal_walker.TERRAIN_STEP
_HULL = ((127, 51, 229), (76, 76, 127))


def _gymnasium_box2d(name):
    """gymnasium's env module, whose render() draws the frames; it imports pybox2d."""
    import importlib

    try:
        return importlib.import_module(f"gymnasium.envs.box2d.{name}")
    except (ImportError, DependencyNotInstalled) as exc:
        raise DependencyNotInstalled(
            "Box2D rgb_array rendering runs gymnasium's own render(), whose module imports "
            "pybox2d: pip install box2d==2.3.10 (what gymnasium[box2d] installs); stepping "
            "needs neither") from exc


def _leg_colours(i):
    return ((153 - i * 25, 76 - i * 25, 127 - i * 25), (102 - i * 25, 51 - i * 25, 76 - i * 25))


class _Point:
    """`trans * v` of one vertex; `* SCALE` gives the pool's float32 result."""

    __slots__ = ("xy",)

    def __init__(self, xy):
        self.xy = xy

    def __mul__(self, scale):
        return self.xy


class _Transform:
    __slots__ = ("points",)

    def __init__(self, points):
        self.points = points

    def __mul__(self, k):          # k: a vertex index, or a particle shape's pos (its one point)
        return _Point(self.points[k if isinstance(k, int) else 0])


def _body(points, colour1, colour2):
    trans = _Transform(points)
    fixture = types.SimpleNamespace(body=types.SimpleNamespace(transform=trans),
                                    shape=types.SimpleNamespace(vertices=range(len(points))))
    return types.SimpleNamespace(fixtures=[fixture], color1=colour1, color2=colour2)


def _clouds(draws):
    """gymnasium's _generate_clouds from the same draws (its expressions, in Python)."""
    out, k = [], 0
    for _ in range(10):
        x = draws[k] * _TS
        k += 1
        y = 400 / 30.0 * 3 / 4
        poly = []
        for a in range(5):
            px = x + 15 * _TS * math.sin(3.14 * 2 * a / 5) + float(draws[k])
            py = y + 5 * _TS * math.cos(3.14 * 2 * a / 5) + float(draws[k + 1])
            k += 2
            poly.append((px, py))
        out.append((poly, min(p[0] for p in poly), max(p[0] for p in poly)))
    return out


def _bw_state(d):
    tx, ty = d["terrain_x"].tolist(), d["terrain_y"].tolist()
    terrain_poly = []
    for i in range(len(tx) - 1):
        poly = [(tx[i], ty[i]), (tx[i + 1], ty[i + 1])]
        poly += [(poly[1][0], 0), (poly[0][0], 0)]
        terrain_poly.append((poly, (102, 153, 76)))
    # the drawlist: gymnasium's terrain list reversed (edges 198..0, then the obstacles last
    # to first), the legs, the hull
    n_edges = len(tx) - 1
    colours = [((76, 255 if i % 2 == 0 else 204, 76),) * 2 for i in range(n_edges - 1, -1, -1)]
    colours += [((255, 255, 255), (153, 153, 153))] * d["n_obstacles"]
    colours += [_leg_colours(-1)] * 2 + [_leg_colours(1)] * 2 + [_HULL]
    points = [tuple(map(float, p)) for p in d["points"]]
    drawlist, start = [], 0
    for count, (c1, c2) in zip(d["counts"].tolist(), colours):
        drawlist.append(_body(points[start:start + count], c1, c2))
        start += count
    p1 = d["lidar_p1"]
    lidar = [types.SimpleNamespace(p1=p1, p2=p2) for p2 in d["lidar_p2"]]
    return types.SimpleNamespace(
        render_mode="rgb_array", screen=None, clock=None, scroll=d["scroll"],
        cloud_poly=_clouds(d["clouds"]), terrain_poly=terrain_poly,
        lidar_render=d["lidar_render"], lidar=lidar, drawlist=drawlist)


def render_bipedal_walker(engine, ids, mode, kwargs):
    if mode != "rgb_array":
        raise ValueError(f"BipedalWalker: cannot render {mode!r} (rgb_array only)")
    try:
        import pygame  # noqa: F401  (gymnasium imports it in render(); fail clearly first)
    except ImportError as exc:
        raise DependencyNotInstalled("BipedalWalker rgb_array rendering draws with pygame: "
                                     "pip install pygame-ce") from exc
    BipedalWalker = _gymnasium_box2d("bipedal_walker").BipedalWalker

    frames = []
    for i in ids:
        i = int(i)
        stand_in = _bw_state(engine.render_data(i))
        frames.append(BipedalWalker.render(stand_in))
        engine.set_lidar_render(i, stand_in.lidar_render)
    return frames


def _lunar_lander_state(d, particle_shape):
    """A stand-in LunarLander holding what render() reads, with gymnasium's values."""
    H = 400 / 30.0
    W = 600 / 30.0
    chunk_x = [W / (11 - 1) * i for i in range(11)]
    smooth_y = d["smooth_y"]
    sky_polys = []
    for i in range(10):
        p1 = (chunk_x[i], smooth_y[i])
        p2 = (chunk_x[i + 1], smooth_y[i + 1])
        sky_polys.append([p1, p2, (p2[0], H), (p1[0], H)])
    particles = []
    for (x, y), ttl in zip(d["centres"].tolist(), d["ttl"].tolist()):
        fixture = types.SimpleNamespace(
            body=types.SimpleNamespace(transform=_Transform([(x, y)])),
            shape=particle_shape)
        particles.append(types.SimpleNamespace(fixtures=[fixture], ttl=ttl))
    points = [tuple(map(float, p)) for p in d["points"]]
    drawlist, start = [], 0
    for count in d["counts"].tolist():
        drawlist.append(_body(points[start:start + count], (128, 102, 230), (77, 77, 128)))
        start += count
    stand_in = types.SimpleNamespace(
        render_mode="rgb_array", screen=None, clock=None, particles=particles,
        sky_polys=sky_polys, drawlist=drawlist, helipad_x1=chunk_x[4],
        helipad_x2=chunk_x[6], helipad_y=H / 4)

    def clean(all_particle):      # gymnasium's _clean_particles on the stand-in's list
        while stand_in.particles and (all_particle or stand_in.particles[0].ttl < 0):
            stand_in.particles.pop(0)

    stand_in._clean_particles = clean
    return stand_in


def render_lunar_lander(engine, ids, mode, kwargs):
    if mode != "rgb_array":
        raise ValueError(f"LunarLander: cannot render {mode!r} (rgb_array only)")
    try:
        import pygame  # noqa: F401
    except ImportError as exc:
        raise DependencyNotInstalled("LunarLander rgb_array rendering draws with pygame: "
                                     "pip install pygame-ce") from exc
    lunar_lander = _gymnasium_box2d("lunar_lander")

    # the particles' shape: gymnasium tells circles by their type, pybox2d's circleShape
    shape = lunar_lander.circleShape(radius=2 / lunar_lander.SCALE, pos=(0, 0))
    frames = []
    for i in ids:
        i = int(i)
        frames.append(lunar_lander.LunarLander.render(
            _lunar_lander_state(engine.render_data(i), shape)))
        engine.render_tick(i)
    return frames


class _F32Transform:
    """pybox2d's b2Transform * v, in float32 as Box2D's b2Mul computes it (v converted to
    float32 first, as SWIG converts a Python pair)."""

    __slots__ = ("px", "py", "c", "s")

    def __init__(self, px, py, c, s):
        self.px, self.py, self.c, self.s = px, py, c, s

    def __mul__(self, v):
        import numpy as np

        x, y = np.float32(v[0]), np.float32(v[1])
        return (float((self.c * x - self.s * y) + self.px),
                float((self.s * x + self.c * y) + self.py))


def _cr_state(d, car_racing, car_dynamics):
    """A stand-in CarRacing (and Car) holding what render() reads, with gymnasium's values."""
    import numpy as np

    car = d["car"].tolist()
    xf = d["transforms"]
    verts, counts = d["vertices"], d["counts"]
    bodies = []
    for o in range(5):
        trans = _F32Transform(*(np.float32(v) for v in xf[o]))
        fixtures = []
        for f in range(4):
            n = int(counts[o, f])
            if n:
                shape = types.SimpleNamespace(
                    vertices=[tuple(map(float, p)) for p in verts[o, f, :n]])
                fixtures.append(types.SimpleNamespace(
                    body=types.SimpleNamespace(transform=trans), shape=shape))
        bodies.append(fixtures)
    wheels = []
    for k in range(4):
        w = types.SimpleNamespace(fixtures=bodies[k], color=car_dynamics.WHEEL_COLOR,
                                  omega=car[7 + 2 * k], phase=car[8 + 2 * k])
        w.joint = types.SimpleNamespace(angle=car[6])
        wheels.append(w)
    hull = types.SimpleNamespace(fixtures=bodies[4], color=(0.8, 0.0, 0.0), angle=car[0],
                                 position=(car[1], car[2]), linearVelocity=(car[3], car[4]),
                                 angularVelocity=car[5])
    particles = [car_dynamics.Particle(
        color=car_dynamics.MUD_COLOR if grass else car_dynamics.WHEEL_COLOR, poly=poly,
        grass=grass) for grass, poly in d["particles"]]
    stand_car = types.SimpleNamespace(hull=hull, wheels=wheels, drawlist=wheels + [hull],
                                      particles=particles)
    stand_car.draw = types.MethodType(car_dynamics.Car.draw, stand_car)
    env = types.SimpleNamespace(
        metadata=car_racing.CarRacing.metadata, screen=None, clock=None, surf=None,
        car=stand_car, t=d["t"], reward=d["reward"], bg_color=np.array(d["bg_color"]),
        grass_color=np.array(d["grass_color"]),
        road_poly=[(pts, np.array(c)) for pts, c in d["road_poly"]])
    for name in ("_render_road", "_render_indicators", "_draw_colored_polygon",
                 "_create_image_array"):
        setattr(env, name, types.MethodType(getattr(car_racing.CarRacing, name), env))
    return env


def render_car_racing(engine, ids, mode, kwargs):
    if mode != "rgb_array":
        raise ValueError(f"CarRacing: cannot render {mode!r} (rgb_array only)")
    car_racing = _gymnasium_box2d("car_racing")
    car_dynamics = _gymnasium_box2d("car_dynamics")
    frames = []
    for i in ids:
        d = engine.render_data(int(i))
        frames.append(None if d is None else car_racing.CarRacing._render(
            _cr_state(d, car_racing, car_dynamics), "rgb_array"))
    return frames
