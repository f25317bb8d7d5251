"""Weight tables for the Atari frame resize (applied in nogil C by cypool/atari/_preprocess.pxd).

The tables reproduce OpenCV's ``cv::resize`` for uint8 images, as gymnasium's
AtariPreprocessing (``INTER_AREA``) and EnvPool (``INTER_AREA``, or ``INTER_LINEAR`` with
``use_inter_area_resize=False``) call it, so that no OpenCV is needed at run time:

* ``INTER_AREA`` shrinking both axes by integer factors: the block average of OpenCV's
  ``resizeAreaFast`` (an int sum times ``(float)(1/area)``, rounded half to even; 2x2 blocks
  round half up, as its SIMD code does).
* ``INTER_AREA`` shrinking otherwise: ``computeResizeAreaTab``'s per-axis weights (partial
  first and last source pixels, 1e-3 cut-offs) in float32, summed in float32 in source order.
* ``INTER_AREA`` growing an axis, and ``INTER_LINEAR``: two taps per axis with 11-bit weights
  (half-pixel centres for linear; OpenCV's area-upscale coefficients otherwise), and the
  rounding of OpenCV's vectorised vertical pass.

The scale is ``1 / (dst / src)``, computed as OpenCV does, not ``src / dst``: the two differ
in the last bit for some sizes, which decides between the block and the general path.
"""
from __future__ import annotations

import math

import numpy as np

AREA, BOX, TWOTAP = 0, 1, 2
DBL_EPSILON = np.finfo(np.float64).eps


def _area_taps(src: int, dst: int):
    """OpenCV's computeResizeAreaTab for one axis: [(source index, float32 weight), ...] per
    destination index."""
    scale = 1.0 / (dst / src)
    taps = []
    for d in range(dst):
        f1 = d * scale
        f2 = f1 + scale
        cell = min(scale, src - f1)
        s1, s2 = math.ceil(f1), math.floor(f2)
        s2 = min(s2, src - 1)
        s1 = min(s1, s2)
        row = []
        if s1 - f1 > 1e-3:
            row.append((s1 - 1, np.float32((s1 - f1) / cell)))
        for s in range(s1, s2):
            row.append((s, np.float32(1.0 / cell)))
        if f2 - s2 > 1e-3:
            row.append((s2, np.float32(min(min(f2 - s2, 1.0), cell) / cell)))
        taps.append(row)
    return taps


def _pad(taps):
    """(index, weight) arrays of shape (dst, max taps); short rows repeat their last index
    with weight 0."""
    width = max(len(t) for t in taps)
    idx = np.zeros((len(taps), width), np.int32)
    w = np.zeros((len(taps), width), np.float32)
    for d, row in enumerate(taps):
        for k in range(width):
            idx[d, k] = row[min(k, len(row) - 1)][0]
            w[d, k] = row[k][1] if k < len(row) else 0.0
    return idx, w


def _two_taps(src: int, dst: int, area: bool):
    """Source indices and 11-bit weights of OpenCV's linear resize along one axis (its
    INTER_AREA upscaling coefficients when ``area``)."""
    inv = dst / src
    scale = 1.0 / inv
    idx = np.zeros((dst, 2), np.int32)
    w = np.zeros((dst, 2), np.int32)
    for d in range(dst):
        if area:
            s = math.floor(d * scale)
            f = np.float32((d + 1) - (s + 1) * inv)
            f = np.float32(0.0) if f <= 0 else np.float32(f - np.float32(math.floor(f)))
        else:
            f = np.float32((d + 0.5) * scale - 0.5)
            s = math.floor(f)
            f = np.float32(f - np.float32(s))
        if s < 0:
            s, f = 0, np.float32(0.0)
        if s >= src - 1:
            s, f = src - 1, np.float32(0.0)
        c0 = np.float32(1.0) - f
        idx[d] = (s, min(s + 1, src - 1))
        w[d] = (int(np.rint(c0 * np.float32(2048))), int(np.rint(f * np.float32(2048))))
    return idx, w


def _integer_scale(src: int, dst: int):
    scale = 1.0 / (dst / src)
    k = round(scale)
    return k if abs(scale - k) < DBL_EPSILON else None


def make_plan(src_h: int, src_w: int, dst_h: int, dst_w: int, inter_area: bool = True) -> dict:
    """Everything AlePool needs to resize (src_h, src_w) frames to (dst_h, dst_w): the mode
    and its C-contiguous tables (kept alive by the pool)."""
    plan = dict(mode=TWOTAP, src_h=src_h, src_w=src_w, dst_h=dst_h, dst_w=dst_w, tx=2, ty=2,
                kx=1, ky=1, inv_area=1.0, half_up=0,
                xi=np.zeros((dst_w, 2), np.int32), yi=np.zeros((dst_h, 2), np.int32),
                xw=np.zeros((dst_w, 2), np.float32), yw=np.zeros((dst_h, 2), np.float32),
                xa=np.zeros((dst_w, 2), np.int32), yb=np.zeros((dst_h, 2), np.int32))
    shrink = dst_h <= src_h and dst_w <= src_w
    if inter_area and shrink:
        ky, kx = _integer_scale(src_h, dst_h), _integer_scale(src_w, dst_w)
        if kx is not None and ky is not None:
            plan.update(mode=BOX, kx=kx, ky=ky, inv_area=float(np.float32(1.0 / (kx * ky))),
                        half_up=int(kx == 2 and ky == 2))
            return plan
        xi, xw = _pad(_area_taps(src_w, dst_w))
        yi, yw = _pad(_area_taps(src_h, dst_h))
        plan.update(mode=AREA, tx=xi.shape[1], ty=yi.shape[1], xi=xi, xw=xw, yi=yi, yw=yw)
        return plan
    xi, xa = _two_taps(src_w, dst_w, inter_area)
    yi, yb = _two_taps(src_h, dst_h, inter_area)
    plan.update(xi=xi, xa=xa, yi=yi, yb=yb)
    return plan
