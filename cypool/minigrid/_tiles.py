"""minigrid 3.2.0's tiles, drawn once per tile size in numpy (the kernel then blits them).

minigrid draws a tile at ``3 * tile_size`` pixels a side: each pixel (x, y) is tested at its
centre ((x + 0.5) / side, (y + 0.5) / side) against the shapes of the object (rectangles,
circles, Lava's line segments), then the agent's triangle (rotated by ``dir * pi / 2``
about the centre), then blended with white (highlight: ``trunc(p + 0.3 * (255 - p))``),
then averaged 3 x 3 (two float64 means, axis 3 then axis 1) and cast to uint8 (truncation)
when put into the frame. Here the same float64 operations run on whole pixel arrays.

The triangle's and the lines' tests take dot products through ``np.dot`` (BLAS), which may
round differently from the elementwise products and sum used on the arrays (FMA); the
pixels whose test lands within 1e-9 of its threshold are tested again one at a time through
``np.dot`` / ``np.linalg.norm`` as minigrid does, so every pixel decides as minigrid's.

``tiles(tile_size)``: uint8 ``(N_TILES, 5, 2, tile_size, tile_size, 3)``, indexed by the
object's tile (``LUT[type, colour, state]``; 0: nothing), the agent (0: none, 1 + dir) and
highlight; built once per size and kept (``_CACHE``), as minigrid's ``tile_cache``.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["tiles", "LUT", "N_TILES", "MAX_TILE_SIZE"]

MAX_TILE_SIZE = 128      # the table holds 620 tiles: 30 MiB at 128
SUBDIVS = 3
_COLORS = np.array([[255, 0, 0], [0, 255, 0], [0, 0, 255], [112, 39, 195], [255, 255, 0],
                    [100, 100, 100]])       # COLOR_TO_IDX order, int64 as minigrid's COLORS
GREY_LINE = (100, 100, 100)
_EPS = 1e-9

# object tiles: 0 nothing; per colour: wall, floor, door (open, closed, locked), key, ball,
# box, goal; then lava (always drawn orange, whatever its colour)
T_WALL, T_FLOOR, T_DOOR, T_KEY, T_BALL, T_BOX, T_GOAL, T_LAVA = 2, 3, 4, 5, 6, 7, 8, 9
_OBJECTS = [(None, 0, 0)]
for _t in (T_WALL, T_FLOOR, T_DOOR, T_KEY, T_BALL, T_BOX, T_GOAL):
    for _c in range(6):
        for _s in ((0, 1, 2) if _t == T_DOOR else (0,)):
            _OBJECTS.append((_t, _c, _s))
_OBJECTS.append((T_LAVA, 0, 0))
N_TILES = len(_OBJECTS)

# LUT[type, colour, state] -> object tile (the kernel's Cell; only a door's state counts)
LUT = np.zeros((10, 6, 3), np.uint16)
for _k, (_t, _c, _s) in enumerate(_OBJECTS):
    if _t == T_LAVA:
        LUT[T_LAVA] = _k
    elif _t == T_DOOR:
        LUT[_t, _c, _s] = _k
    elif _t is not None:
        LUT[_t, _c, :] = _k


class _Canvas:
    """A (side, side, 3) uint8 image and its pixel centres, minigrid's fill_coords."""

    def __init__(self, side):
        self.img = np.zeros((side, side, 3), np.uint8)
        c = (np.arange(side, dtype=np.float64) + 0.5) / side
        self.y, self.x = np.meshgrid(c, c, indexing="ij")

    def fill(self, mask, color):
        self.img[mask] = color


def _rect(x, y, xmin, xmax, ymin, ymax):
    return (x >= xmin) & (x <= xmax) & (y >= ymin) & (y <= ymax)


def _circle(x, y, cx, cy, r):
    return (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r


def _line(x, y, x0, y0, x1, y1, r):
    """minigrid's point_in_line: float32 ends, float64 pixel, distance to the segment."""
    p0 = np.array([x0, y0], dtype=np.float32)
    p1 = np.array([x1, y1], dtype=np.float32)
    d = p1 - p0
    dist = np.linalg.norm(d)
    d = d / dist
    box = ((x >= min(x0, x1) - r) & (x <= max(x0, x1) + r)
           & (y >= min(y0, y1) - r) & (y <= max(y0, y1) + r))
    d64, p064, dist64 = d.astype(np.float64), p0.astype(np.float64), np.float64(dist)
    a = (x - p064[0]) * d64[0] + (y - p064[1]) * d64[1]
    a = np.minimum(np.maximum(a, 0.0), dist64)
    ex, ey = x - (p064[0] + a * d64[0]), y - (p064[1] + a * d64[1])
    n = np.sqrt(ex * ex + ey * ey)
    out = box & (n <= r)
    for idx in zip(*np.nonzero(box & (np.abs(n - r) < _EPS))):
        q = np.array([x[idx], y[idx]])
        s = np.clip(np.dot(q - p0, d), 0, dist)
        out[idx] = np.linalg.norm(q - (p0 + s * d)) <= r
    return out


def _triangle(x, y, a, b, c):
    """minigrid's point_in_triangle (barycentric, float32 corners) at pixels (x, y)."""
    a = np.array(a, dtype=np.float32)
    b = np.array(b, dtype=np.float32)
    c = np.array(c, dtype=np.float32)
    v0, v1 = c - a, b - a
    dot00, dot01, dot11 = np.dot(v0, v0), np.dot(v0, v1), np.dot(v1, v1)
    inv = 1 / (dot00 * dot11 - dot01 * dot01)
    v064, v164, a64 = v0.astype(np.float64), v1.astype(np.float64), a.astype(np.float64)
    wx, wy = x - a64[0], y - a64[1]
    dot02 = v064[0] * wx + v064[1] * wy
    dot12 = v164[0] * wx + v164[1] * wy
    u = (dot11 * dot02 - dot01 * dot12) * inv
    v = (dot00 * dot12 - dot01 * dot02) * inv
    out = (u >= 0) & (v >= 0) & ((u + v) < 1)
    near = (np.abs(u) < _EPS) | (np.abs(v) < _EPS) | (np.abs(u + v - 1) < _EPS)
    for idx in zip(*np.nonzero(near)):
        v2 = np.array((x[idx], y[idx])) - a
        d02, d12 = np.dot(v0, v2), np.dot(v1, v2)
        uu = (dot11 * d02 - dot01 * d12) * inv
        vv = (dot00 * d12 - dot01 * d02) * inv
        out[idx] = (uu >= 0) and (vv >= 0) and (uu + vv) < 1
    return out


def _agent(x, y, direction):
    """The agent's triangle turned by direction * pi / 2 about the tile's centre (minigrid's
    rotate_fn: the pixel is turned by -theta, in Python floats)."""
    theta = 0.5 * math.pi * direction
    cs, sn = math.cos(-theta), math.sin(-theta)
    xr, yr = x - 0.5, y - 0.5
    x2 = 0.5 + xr * cs - yr * sn
    y2 = 0.5 + yr * cs + xr * sn
    return _triangle(x2, y2, (0.12, 0.19), (0.87, 0.50), (0.12, 0.81))


def _draw(cv, t, c, s):
    """WorldObj.render of type t, colour c, state s (a door's: 0 open, 1 closed, 2 locked)."""
    x, y, col = cv.x, cv.y, _COLORS[c]
    if t in (T_WALL, T_GOAL):
        cv.fill(_rect(x, y, 0, 1, 0, 1), col)
    elif t == T_FLOOR:
        cv.fill(_rect(x, y, 0.031, 1, 0.031, 1), col / 2)
    elif t == T_LAVA:
        cv.fill(_rect(x, y, 0, 1, 0, 1), (255, 128, 0))
        for i in range(3):
            lo, hi = 0.3 + 0.2 * i, 0.4 + 0.2 * i
            for x0, y0, x1, y1 in ((0.1, lo, 0.3, hi), (0.3, hi, 0.5, lo), (0.5, lo, 0.7, hi),
                                   (0.7, hi, 0.9, lo)):
                cv.fill(_line(x, y, x0, y0, x1, y1, 0.03), (0, 0, 0))
    elif t == T_DOOR and s == 0:
        cv.fill(_rect(x, y, 0.88, 1.00, 0.00, 1.00), col)
        cv.fill(_rect(x, y, 0.92, 0.96, 0.04, 0.96), (0, 0, 0))
    elif t == T_DOOR and s == 2:
        cv.fill(_rect(x, y, 0.00, 1.00, 0.00, 1.00), col)
        cv.fill(_rect(x, y, 0.06, 0.94, 0.06, 0.94), 0.45 * np.array(col))
        cv.fill(_rect(x, y, 0.52, 0.75, 0.50, 0.56), col)
    elif t == T_DOOR:
        cv.fill(_rect(x, y, 0.00, 1.00, 0.00, 1.00), col)
        cv.fill(_rect(x, y, 0.04, 0.96, 0.04, 0.96), (0, 0, 0))
        cv.fill(_rect(x, y, 0.08, 0.92, 0.08, 0.92), col)
        cv.fill(_rect(x, y, 0.12, 0.88, 0.12, 0.88), (0, 0, 0))
        cv.fill(_circle(x, y, 0.75, 0.50, 0.08), col)
    elif t == T_KEY:
        cv.fill(_rect(x, y, 0.50, 0.63, 0.31, 0.88), col)
        cv.fill(_rect(x, y, 0.38, 0.50, 0.59, 0.66), col)
        cv.fill(_rect(x, y, 0.38, 0.50, 0.81, 0.88), col)
        cv.fill(_circle(x, y, 0.56, 0.28, 0.190), col)
        cv.fill(_circle(x, y, 0.56, 0.28, 0.064), (0, 0, 0))
    elif t == T_BALL:
        cv.fill(_circle(x, y, 0.5, 0.5, 0.31), col)
    elif t == T_BOX:
        cv.fill(_rect(x, y, 0.12, 0.88, 0.12, 0.88), col)
        cv.fill(_rect(x, y, 0.18, 0.82, 0.18, 0.82), (0, 0, 0))
        cv.fill(_rect(x, y, 0.16, 0.84, 0.47, 0.53), col)


def _finish(img, highlight, tile_size):
    """highlight_img, then the 3 x 3 float64 means (axis 3, then axis 1), cast to uint8."""
    if highlight:
        img = (img + 0.30 * (np.array((255, 255, 255), dtype=np.uint8) - img))
        img = img.clip(0, 255).astype(np.uint8)
    img = img.reshape(tile_size, SUBDIVS, tile_size, SUBDIVS, 3)
    return img.mean(axis=3).mean(axis=1).astype(np.uint8)


_CACHE: dict[int, np.ndarray] = {}
_TRIANGLES: dict[int, list] = {}


def tiles(tile_size: int) -> np.ndarray:
    """Every tile at tile_size (read-only; built at the first call for that size)."""
    table = _CACHE.get(tile_size)
    if table is not None:
        return table
    side = tile_size * SUBDIVS
    out = np.zeros((N_TILES, 5, 2, tile_size, tile_size, 3), np.uint8)
    base = _Canvas(side)
    base.fill(_rect(base.x, base.y, 0, 0.031, 0, 1), GREY_LINE)
    base.fill(_rect(base.x, base.y, 0, 1, 0, 0.031), GREY_LINE)
    tri = [_agent(base.x, base.y, d) for d in range(4)]
    for k, (t, c, s) in enumerate(_OBJECTS):
        cv = _Canvas.__new__(_Canvas)
        cv.img, cv.x, cv.y = base.img.copy(), base.x, base.y
        if t is not None:
            _draw(cv, t, c, s)
        for agent in range(5):
            img = cv.img
            if agent:
                img = img.copy()
                img[tri[agent - 1]] = (255, 0, 0)
            for h in range(2):
                out[k, agent, h] = _finish(img, h, tile_size)
    out.flags.writeable = False
    _CACHE[tile_size] = out
    return out
