"""The CarRacing rasterisers (cypool/box2d/_cr_*.h, reached through _cr_check.pyx, a test-only
module this file builds) against pygame-ce itself, bit for bit (np.array_equal, no tolerance),
on seeded random cases: gfxdraw.aapolygon / filled_polygon / both and draw.polygon on random
canvases (whole canvas, then written-row windows and upside-down views), and
transform.smoothscale under pygame's SSE2 backend through every smoothscale path this build
and CPU offer (auto, scalar, sse2, avx2), straight and with the source read bottom row
first."""
import os
import sys
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pygame = pytest.importorskip("pygame")
import pygame.gfxdraw  # noqa: E402
import pygame.surfarray  # noqa: E402
import pygame.transform  # noqa: E402

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from _buildext import build_extension, import_built  # noqa: E402

# _cr_check.pyx is no part of the package: it is built here over the headers cypool.box2d is
# built from, as setup.py's box2d_ext builds cypool.box2d._car_racing, which includes them
# (its compiler flags and Cython directives; no Box2D and no OpenMP: the rasterisers use
# neither), and instrumented under tools/sanitize.sh as the package's extensions are there.
BOX2D = HERE.parents[1] / "cypool" / "box2d"
CFLAGS = ["-O3", "-ffp-contract=off", "-fno-math-errno", "-std=gnu++14",
          "-fno-tree-slp-vectorize"]
LDFLAGS = []
if os.environ.get("CYPOOL_SANITIZER") == "asan":
    CFLAGS += ["-fsanitize=address", "-fsanitize-recover=address", "-fno-omit-frame-pointer",
               "-g"]
    LDFLAGS += ["-fsanitize=address"]
DIRECTIVES = dict(language_level=3, boundscheck=False, wraparound=False, initializedcheck=False,
                  nonecheck=False, cdivision=True, embedsignature=True)


def build_cr_check():
    """Compile _cr_check.pyx (cached per source, headers, flags and cypool version; in
    $CYPOOL_CACHE_DIR/test-cr-check, default ~/.cache/cypool) and import it."""
    headers = b"".join(h.read_bytes() for h in sorted(BOX2D.glob("_cr_*.h")))
    cache = Path(os.environ.get("CYPOOL_CACHE_DIR", Path.home() / ".cache" / "cypool"))
    out = build_extension(
        "_cr_check", HERE / "_cr_check.pyx",
        dict(include_dirs=[str(BOX2D)], language="c++", extra_compile_args=CFLAGS,
             extra_link_args=LDFLAGS),
        cache / "test-cr-check", key_extra=headers + repr((CFLAGS, LDFLAGS)).encode(),
        directives=DIRECTIVES)
    return import_built("_cr_check", out)


crc = build_cr_check()

OPS = ["aapolygon", "filled", "both", "draw"]  # the first three are gfxdraw, "draw" draw.polygon
N_WHOLE = 1500    # cases per op, whole canvas
N_WINDOW = 750    # cases per op, random written-row window, straight and flipped views
N_SCALE = 800     # smoothscale cases per path
SEED = {"aapolygon": 11, "filled": 12, "both": 13, "draw": 14}


# ---- pygame side ------------------------------------------------------------------------

def surface_of(canvas):
    """A pygame.Surface((w, h)) (32-bit XRGB8888) holding canvas (h, w) uint32."""
    h, w = canvas.shape
    surf = pygame.Surface((w, h))
    assert surf.get_bitsize() == 32 and surf.get_masks()[:3] == (0xFF0000, 0xFF00, 0xFF), \
        (surf.get_bitsize(), surf.get_masks())
    pygame.surfarray.pixels2d(surf)[...] = canvas.T
    return surf


def pixels_of(surf):
    """The surface's pixels as a (h, w) uint32 array, the canvas layout."""
    return pygame.surfarray.pixels2d(surf).T.copy()


def pygame_polygon(canvas, xs, ys, rgb, op):
    surf = surface_of(canvas)
    pts = list(zip(xs.tolist(), ys.tolist()))
    if op in ("aapolygon", "both"):
        pygame.gfxdraw.aapolygon(surf, pts, rgb)
    if op in ("filled", "both"):
        pygame.gfxdraw.filled_polygon(surf, pts, rgb)
    if op == "draw":
        pygame.draw.polygon(surf, rgb, pts)
    return pixels_of(surf)


def pygame_smoothscale(src, dw, dh):
    out = pygame.transform.smoothscale(surface_of(src), (dw, dh))
    return np.transpose(pygame.surfarray.pixels3d(out), (1, 0, 2)).copy()


# ---- cypool side ------------------------------------------------------------------------

def cr_polygon(canvas, xs, ys, rgb, op, flipped=False, ylo=0, yhi=None):
    """(return code, the drawn copy of canvas)."""
    out = canvas.copy()
    if op == "draw":
        rc = crc.draw_polygon(out, xs, ys, rgb, flipped=flipped, ylo=ylo, yhi=yhi)
        rc = 0 if rc is None else rc
    else:
        rc = crc.gfx_polygon(out, xs, ys, rgb, op, flipped=flipped, ylo=ylo, yhi=yhi)
    return rc, out


# ---- random inputs ------------------------------------------------------------------------

def rand_canvas(rng, h, w, xbyte=False):
    """Random (h, w) uint32 content, 0x00RRGGBB (0xXXRRGGBB with xbyte), of a random kind."""
    kind = rng.integers(5)
    if kind == 0:    # noise
        c = rng.integers(0, 1 << 24, (h, w), dtype=np.uint32)
    elif kind == 1:  # a few colours in blocks
        pal = rng.integers(0, 1 << 24, 4, dtype=np.uint32)
        bh, bw = int(rng.integers(1, 20)), int(rng.integers(1, 20))
        idx = rng.integers(0, 4, (h // bh + 1, w // bw + 1))
        c = pal[np.repeat(np.repeat(idx, bh, 0), bw, 1)[:h, :w]]
    elif kind == 2:  # bright noise (16-bit accumulators wrap on long spans)
        ch = rng.integers(200, 256, (h, w, 3), dtype=np.uint32)
        c = (ch[..., 0] << 16) | (ch[..., 1] << 8) | ch[..., 2]
    elif kind == 3:  # gradients
        yy, xx = np.mgrid[0:h, 0:w]
        c = (((xx * 255 // max(w - 1, 1)) << 16) | ((yy * 255 // max(h - 1, 1)) << 8)
             | ((xx + yy) & 255)).astype(np.uint32)
    else:            # one colour
        c = np.full((h, w), rng.integers(0, 1 << 24), np.uint32)
    if xbyte:
        c = c | (rng.integers(0, 256, (h, w), dtype=np.uint32) << 24)
    return np.ascontiguousarray(c, dtype=np.uint32)


def rand_size(rng):
    if rng.random() < 0.1:
        return int(rng.integers(1, 6)), int(rng.integers(1, 6))
    return int(rng.integers(1, 151)), int(rng.integers(1, 201))  # h, w


def rand_points(rng, w, h):
    """3..8 points of a random kind: inside, around (off-surface, negative), integral,
    with huge coordinates (|v| up to 1e5), collinear, repeated points, horizontal or
    vertical edges, or all within a pixel or two."""
    n = int(rng.integers(3, 9))
    kind = str(rng.choice(["inside", "around", "around", "integral", "huge", "collinear",
                           "repeated", "horizontal", "vertical", "tiny"]))
    xs = rng.uniform(-0.5 * w - 10, 1.5 * w + 10, n)
    ys = rng.uniform(-0.5 * h - 10, 1.5 * h + 10, n)
    if kind == "inside":
        xs, ys = rng.uniform(0, w, n), rng.uniform(0, h, n)
    elif kind == "integral":
        xs, ys = np.floor(xs), np.floor(ys)
    elif kind == "huge":
        k = rng.random(n) < 0.4
        k[rng.integers(n)] = True
        big = rng.choice([1e3, 2e4, 4e4, 1e5])
        xs = np.where(k & (rng.random(n) < 0.7), rng.uniform(-big, big, n), xs)
        ys = np.where(k & (rng.random(n) < 0.7), rng.uniform(-big, big, n), ys)
    elif kind == "collinear":
        t = rng.uniform(-1, 2, n)
        x0, y0 = rng.uniform(0, w), rng.uniform(0, h)
        dx, dy = rng.uniform(-w, w), rng.uniform(-h, h)
        if rng.random() < 0.3:
            dx, dy = np.round(dx), np.round(dy)
            t = np.round(t * 4) / 4
        xs, ys = x0 + t * dx, y0 + t * dy
    elif kind == "repeated":
        for i in range(1, n):
            if rng.random() < 0.5:
                j = int(rng.integers(i))
                xs[i], ys[i] = xs[j], ys[j]
    elif kind == "horizontal":
        rows = rng.uniform(-5, h + 5, 2)
        ys = rows[rng.integers(0, 2, n)] + rng.uniform(0, 0.99, n) * (rng.random() < 0.5)
    elif kind == "vertical":
        cols = rng.uniform(-5, w + 5, 2)
        xs = cols[rng.integers(0, 2, n)]
    elif kind == "tiny":
        x0, y0 = rng.uniform(-2, w + 2), rng.uniform(-2, h + 2)
        xs, ys = x0 + rng.uniform(-1.5, 1.5, n), y0 + rng.uniform(-1.5, 1.5, n)
    return np.ascontiguousarray(xs, np.float64), np.ascontiguousarray(ys, np.float64), kind


def rand_rgb(rng):
    return tuple(int(v) for v in rng.integers(0, 256, 3))


def explain(got, want):
    """Where two canvases (or images) differ: count and the first few, in hex for uint32."""
    bad = np.argwhere(got != want)
    first = []
    for ix in bad[:4]:
        ix = tuple(int(i) for i in ix)
        g, w = got[ix], want[ix]
        if got.dtype == np.uint32:
            first.append(f"{ix}: got {int(g):#010x} want {int(w):#010x}")
        else:
            first.append(f"{ix}: got {int(g)} want {int(w)}")
    return f"{len(bad)} values differ; " + "; ".join(first)


def case_text(i, op, canvas, xs, ys, rgb, kind, **kw):
    extra = "".join(f", {k}={v}" for k, v in kw.items())
    return (f"case {i} op={op} kind={kind} size(h, w)={canvas.shape} rgb={rgb}{extra}\n"
            f"  xs={xs.tolist()!r}\n  ys={ys.tolist()!r}")


# ---- polygons -----------------------------------------------------------------------------

@pytest.mark.parametrize("op", OPS)
def test_polygon_whole_canvas(op):
    rng = np.random.default_rng(SEED[op])
    for i in range(N_WHOLE):
        h, w = rand_size(rng)
        canvas = rand_canvas(rng, h, w)
        xs, ys, kind = rand_points(rng, w, h)
        rgb = rand_rgb(rng)
        want = pygame_polygon(canvas, xs, ys, rgb, op)
        rc, got = cr_polygon(canvas, xs, ys, rgb, op)
        where = case_text(i, op, canvas, xs, ys, rgb, kind)
        assert rc == 0, f"return code {rc}; {where}"
        assert np.array_equal(got, want), f"{explain(got, want)}\n{where}"


@pytest.mark.parametrize("op", OPS)
def test_polygon_window_and_flipped_view(op):
    """The window only drops rows: rows in [ylo, yhi) of the (flipped) view are pygame's
    result, the others the canvas's original ones. The flipped view's row y is the buffer's
    row h-1-y, i.e. pygame drew on canvas[::-1]."""
    rng = np.random.default_rng(100 + SEED[op])
    for i in range(N_WINDOW):
        h, w = rand_size(rng)
        canvas = rand_canvas(rng, h, w)
        xs, ys, kind = rand_points(rng, w, h)
        rgb = rand_rgb(rng)
        ylo, yhi = sorted(int(v) for v in rng.integers(0, h + 1, 2))
        if rng.random() < 0.15:
            ylo, yhi = 0, h
        for flipped in (False, True):
            view = canvas[::-1] if flipped else canvas
            drawn = pygame_polygon(np.ascontiguousarray(view), xs, ys, rgb, op)
            want_view = view.copy()
            want_view[ylo:yhi] = drawn[ylo:yhi]
            want = want_view[::-1] if flipped else want_view
            rc, got = cr_polygon(canvas, xs, ys, rgb, op, flipped=flipped, ylo=ylo, yhi=yhi)
            where = case_text(i, op, canvas, xs, ys, rgb, kind, flipped=flipped, ylo=ylo,
                              yhi=yhi)
            assert rc == 0, f"return code {rc}; {where}"
            assert np.array_equal(got, want), f"{explain(got, want)}\n{where}"


GFX_REFUSED = [float("nan"), float("inf"), float("-inf"), 1e19, -1e19, 2.0 ** 63]


@pytest.mark.parametrize("op", ["aapolygon", "filled", "both"])
def test_gfx_refuses_what_pygame_refuses(op):
    """A coordinate int() cannot turn into a C long: pygame raises, the header returns -1
    and draws nothing; just inside that range both draw the same."""
    rng = np.random.default_rng(200 + SEED[op])
    for i, bad in enumerate(GFX_REFUSED * 3):
        canvas = rand_canvas(rng, 30, 40)
        xs, ys, kind = rand_points(rng, 40, 30)
        (xs if i % 2 else ys)[int(rng.integers(len(xs)))] = bad
        where = case_text(i, op, canvas, xs, ys, (9, 8, 7), kind)
        with pytest.raises((ValueError, OverflowError)):
            pygame_polygon(canvas, xs, ys, (9, 8, 7), op)
        rc, got = cr_polygon(canvas, xs, ys, (9, 8, 7), op)
        assert rc == -1, f"return code {rc}; {where}"
        assert np.array_equal(got, canvas), f"drawn anyway: {explain(got, canvas)}\n{where}"
    for i, edge in enumerate([9.2e18, -9.2e18, 2.0 ** 63 - 1024, -(2.0 ** 63)]):
        canvas = rand_canvas(rng, 30, 40)
        xs, ys, kind = rand_points(rng, 40, 30)
        (xs if i % 2 else ys)[0] = edge
        want = pygame_polygon(canvas, xs, ys, (9, 8, 7), op)
        rc, got = cr_polygon(canvas, xs, ys, (9, 8, 7), op)
        where = case_text(i, op, canvas, xs, ys, (9, 8, 7), kind)
        assert rc == 0, f"return code {rc}; {where}"
        assert np.array_equal(got, want), f"{explain(got, want)}\n{where}"


def test_draw_polygon_non_finite_x():
    """draw.polygon casts coordinates with (int) and draws: a NaN or infinite x becomes
    INT_MIN there (x only: such a y would make pygame scan 2^31 rows)."""
    rng = np.random.default_rng(300)
    for i, bad in enumerate([float("nan"), float("inf"), float("-inf"), 1e19, -3e9] * 4):
        canvas = rand_canvas(rng, 30, 40)
        xs, ys, kind = rand_points(rng, 40, 30)
        ys = np.clip(ys, -1e4, 1e4)
        xs[int(rng.integers(len(xs)))] = bad
        rgb = rand_rgb(rng)
        want = pygame_polygon(canvas, xs, ys, rgb, "draw")
        rc, got = cr_polygon(canvas, xs, ys, rgb, "draw")
        where = case_text(i, "draw", canvas, xs, ys, rgb, kind)
        assert np.array_equal(got, want), f"{explain(got, want)}\n{where}"


# ---- smoothscale ------------------------------------------------------------------------

@pytest.fixture
def sse2_backend():
    """pygame's SSE2 smoothscale backend, the one the header reproduces (restored after)."""
    before = pygame.transform.get_smoothscale_backend()
    try:
        pygame.transform.set_smoothscale_backend("SSE2")
    except (ValueError, pygame.error) as e:
        pytest.skip(f"pygame's SSE2 smoothscale backend cannot be selected here: {e}")
    if pygame.transform.get_smoothscale_backend() != "SSE2":
        pytest.skip("pygame's SSE2 smoothscale backend cannot be selected here")
    yield
    pygame.transform.set_smoothscale_backend(before)


def rand_scale_case(rng, path):
    """(sw, sh, dw, dh): sources up to 300 x 200, outputs from 1 to the source size (equal
    sizes too, except for "avx2", which needs dw < sw and dh < sh)."""
    strict = path == "avx2"
    lo = 2 if strict else 1
    if rng.random() < 0.15:
        sw, sh = int(rng.integers(lo, 9)), int(rng.integers(lo, 9))
    else:
        sw, sh = int(rng.integers(lo, 301)), int(rng.integers(lo, 201))

    def out(s):
        top = s - 1 if strict else s
        u = rng.random()
        if u < 0.1:
            return 1
        if u < 0.25 and not strict:
            return s
        if u < 0.4:
            return max(1, top - int(rng.integers(0, 3)))
        return int(rng.integers(1, top + 1))

    return sw, sh, out(sw), out(sh)


# a path missing on this build or CPU (sse2 off x86, avx2 without AVX2) is simply not listed
SCALE_PATHS = ["auto"] + crc.paths()


@pytest.mark.parametrize("path", SCALE_PATHS)
def test_smoothscale(path, sse2_backend):
    rng = np.random.default_rng(400 + SCALE_PATHS.index(path))
    cases = [(1000, 800, 96, 96, False), (1000, 800, 96, 96, True)]  # CarRacing's frame
    for _ in range(N_SCALE):
        cases.append(rand_scale_case(rng, path) + (bool(rng.random() < 0.5),))
    for i, (sw, sh, dw, dh, flipped) in enumerate(cases):
        # the X byte is filtered by pygame in a lane of its own and never reaches pixels3d
        src = rand_canvas(rng, sh, sw, xbyte=bool(rng.random() < 0.2))
        want = pygame_smoothscale(np.ascontiguousarray(src[::-1]) if flipped else src, dw, dh)
        got = crc.smoothscale(src, dw, dh, path=path, flipped=flipped)
        where = (f"case {i} path={path} ({sw}, {sh}) -> ({dw}, {dh}) flipped={flipped} "
                 f"src[:2, :4]={[[hex(v) for v in r] for r in src[:2, :4].tolist()]}")
        assert got.dtype == np.uint8 and got.shape == (dh, dw, 3), (got.dtype, got.shape, where)
        assert np.array_equal(got, want), f"{explain(got, want)}\n{where}"


@pytest.mark.parametrize("avx2", [False, True] if "avx2" in SCALE_PATHS else [False])
def test_smoothscale_in_bands(sse2_backend, avx2):
    # CarRacing's path: X pass a band at a time (here the last band first), then the Y pass;
    # both forms (AVX2 only where this CPU has it)
    rng = np.random.default_rng(480 + avx2)
    cases = [(1000, 800, 96, 96, 200, False), (1000, 800, 96, 96, 200, True)]
    for _ in range(150):
        sw, sh = int(rng.integers(2, 301)), int(rng.integers(2, 201))
        cases.append((sw, sh, int(rng.integers(1, sw)), int(rng.integers(1, sh)),
                      8 * int(rng.integers(1, 6)), bool(rng.random() < 0.5)))
    for i, (sw, sh, dw, dh, band, flipped) in enumerate(cases):
        src = rand_canvas(rng, sh, sw, xbyte=bool(rng.random() < 0.2))
        want = pygame_smoothscale(np.ascontiguousarray(src[::-1]) if flipped else src, dw, dh)
        got = crc.smoothscale_bands(src, dw, dh, band, flipped=flipped, avx2=avx2)
        where = f"case {i} ({sw}, {sh}) -> ({dw}, {dh}) bands of {band} flipped={flipped}"
        assert np.array_equal(got, want), f"{explain(got, want)}\n{where}"


def test_smoothscale_paths_listed():
    p = crc.paths()
    assert p[0] == "scalar" and set(p) <= {"scalar", "sse2", "avx2"}, p
    for name in {"sse2", "avx2"} - set(p):
        with pytest.raises(ValueError):
            crc.smoothscale(np.zeros((4, 4), np.uint32), 2, 2, path=name)


# ---- argument checks ---------------------------------------------------------------------

def test_bad_arguments():
    c = np.zeros((10, 12), np.uint32)
    xs, ys = np.array([1.0, 5.0, 3.0]), np.array([1.0, 2.0, 8.0])
    for bad, exc in [(c.astype(np.int32), TypeError), (c[:, ::2], ValueError),
                     (np.zeros((2, 3, 4), np.uint32), ValueError), (c.tolist(), TypeError)]:
        with pytest.raises(exc):
            crc.gfx_polygon(bad, xs, ys, (1, 2, 3), "both")
        with pytest.raises(exc):
            crc.draw_polygon(bad, xs, ys, (1, 2, 3))
    for bx, by, exc in [(xs.astype(np.float32), ys, TypeError), (xs, ys[:2], ValueError),
                        (xs[:2], ys[:2], ValueError), (np.zeros(65), np.zeros(65), ValueError),
                        (xs.reshape(3, 1), ys, ValueError), ([1.0, 2.0, 3.0], ys, TypeError)]:
        with pytest.raises(exc):
            crc.gfx_polygon(c, bx, by, (1, 2, 3), "filled")
        with pytest.raises(exc):
            crc.draw_polygon(c, bx, by, (1, 2, 3))
    for rgb, exc in [((1, 2), ValueError), ((1, 2, 256), ValueError), ((-1, 0, 0), ValueError),
                     ((1.5, 2, 3), TypeError), (7, TypeError)]:
        with pytest.raises(exc):
            crc.draw_polygon(c, xs, ys, rgb)
    for lo, hi in [(-1, 5), (6, 5), (0, 11), (11, None)]:
        with pytest.raises(ValueError):
            crc.gfx_polygon(c, xs, ys, (1, 2, 3), "aapolygon", ylo=lo, yhi=hi)
    with pytest.raises(ValueError):
        crc.gfx_polygon(c, xs, ys, (1, 2, 3), "outline")
    s = np.zeros((8, 10), np.uint32)
    for args, exc in [((s, 11, 4), ValueError), ((s, 10, 9), ValueError), ((s, 0, 4), ValueError),
                      ((s, 5.0, 4), TypeError), ((s.astype(np.int64), 5, 4), TypeError),
                      ((s[:, ::2], 3, 4), ValueError)]:
        with pytest.raises(exc):
            crc.smoothscale(*args)
    with pytest.raises(ValueError):
        crc.smoothscale(s, 5, 4, path="neon")
    if "avx2" in crc.paths():
        with pytest.raises(ValueError):
            crc.smoothscale(s, 10, 4, path="avx2")
    assert np.array_equal(c, np.zeros((10, 12), np.uint32))  # nothing was drawn
