"""Glyph table for drawing CarRacing's score text from C (see ``_cr_text.h``).

gymnasium's CarRacing renders ``font.render(f"{reward:04.0f}", True, white, black)``
with pygame's bundled freesansbold.ttf at size 42 and blits it centred at (60, 750).
SDL_ttf (Shaded mode) lays a line out glyph by glyph and ORs each glyph's cached 8-bit
coverage bitmap into a zeroed INDEX8 surface at pixel x = floor(pen / 64), where the pen
advances (26.6 fixed point, from HarfBuzz) depend on the glyph and, through kerning, on
the glyph that follows it.  The surface width is
``max(max_i(x_i + ink_right_i), floor(pen_end / 64))`` and its height is constant for
the characters used here.  So the exact text image of any string over "-0123456789" is
reproduced from:

* one coverage cell per glyph (a one-character render: the glyph's bitmap already sits at
  its bearing offset inside a full-line-height cell; the zero columns are harmless under OR),
* the 26.6 pen advance for every ordered glyph pair (advance of the first glyph plus the
  kerning before the second) and for a glyph that ends the string (no kerning),
* each glyph's right ink bound (``sz_left + sz_width``, from ``font.metrics``),
* the surface palette (index -> colour).

The advances are not exposed by pygame, so they are recovered exactly from renders of
long periodic strings: a glyph drawn at pen p lands at pixel floor(p / 64), and with
periods whose sum is odd the 64 residues are all visited, which pins every value to the
1/64 pixel.  The table is self-checked against ``font.render`` before it is returned.

Table layout (all C-contiguous numpy arrays; glyph index g: '0'..'9' -> 0..9, '-' -> 10):

* ``cells``      uint8  [11, height, cell_w]  palette index of each glyph's one-char render
* ``pair_adv``   int32  [11, 11]              26.6 pen advance from glyph a to next glyph b
* ``last_adv``   int32  [11]                  26.6 advance of a glyph that ends the string
* ``ink_right``  int32  [11]                  right ink bound (pixels, relative to the pen)
* ``palette``    uint32 [256]                 0x00RRGGBB of each palette index
* ``height``, ``cell_w``                      ints
"""

from __future__ import annotations

import numpy as np

GLYPHS = "0123456789-"
FONT_SIZE = 42
FG = (255, 255, 255)
BG = (0, 0, 0)


def _font():
    try:
        import pygame  # pygame.font (SDL_ttf) as gymnasium uses it; needs no display
    except ImportError as exc:
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            "CarRacing draws its score as gymnasium does, with pygame's font (SDL_ttf): the "
            "glyph table is taken from it once per process. pip install \"cypool[box2d]\" "
            "(pygame-ce)") from exc

    if not pygame.font.get_init():
        pygame.font.init()
    return pygame, pygame.font.Font(pygame.font.get_default_font(), FONT_SIZE)


def _render(pygame, font, s):
    surf = font.render(s, True, FG, BG)
    if surf.get_bitsize() != 8 or surf.get_colorkey() is not None:
        raise RuntimeError("unexpected text surface format from font.render")
    return surf, pygame.surfarray.array2d(surf).T.copy()  # (h, w) palette indices


def _ink_runs(a):
    cols = np.flatnonzero(a.any(0))
    if cols.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(cols) != 1)
    starts = np.concatenate(([cols[0]], cols[breaks + 1]))
    ends = np.concatenate((cols[breaks] + 1, [cols[-1] + 1]))
    return list(zip(starts.tolist(), ends.tolist()))


class _Builder:
    def __init__(self):
        self.pygame, self.font = _font()
        single = [_render(self.pygame, self.font, ch)[1] for ch in GLYPHS]
        self.height = single[0].shape[0]
        if any(a.shape[0] != self.height for a in single):
            raise RuntimeError("glyph renders differ in height")
        self.cell_w = max(a.shape[1] for a in single)
        self.cells = np.zeros((len(GLYPHS), self.height, self.cell_w), np.uint8)
        for g, a in enumerate(single):
            self.cells[g, :, : a.shape[1]] = a
        # first / one-past-last ink column of each cell
        self.ink0 = np.array([np.flatnonzero(c.any(0))[0] for c in self.cells])
        self.ink1 = np.array([np.flatnonzero(c.any(0))[-1] + 1 for c in self.cells])
        m = [self.font.metrics(ch)[0] for ch in GLYPHS]
        if any(mm is None or mm[0] < 0 for mm in m):
            raise RuntimeError("glyph with negative left bearing: layout model does not apply")
        self.ink_right = np.array([mm[1] for mm in m], np.int32)
        self.gi = {ch: g for g, ch in enumerate(GLYPHS)}

    # -- measurement -------------------------------------------------------------------
    def positions(self, s):
        """Pixel x of each glyph's pen in the render of s (from ink runs; two glyphs whose
        ink touches form one run: the first is placed by its start, the second by its end)."""
        _, a = _render(self.pygame, self.font, s)
        runs = _ink_runs(a)
        g = [self.gi[c] for c in s]
        xs, r, i = [], 0, 0
        while i < len(s):
            st, en = runs[r]
            x = st - self.ink0[g[i]]
            xs.append(x)
            if en == x + self.ink1[g[i]]:
                i += 1
            else:  # merged with the next glyph
                xs.append(en - self.ink1[g[i + 1]])
                i += 2
            r += 1
        if r != len(runs):
            raise RuntimeError("could not parse glyph positions of %r" % s)
        return xs, a.shape[1]

    # -- layout model -------------------------------------------------------------------
    def layout(self, s, pair, last):
        g = [self.gi[c] for c in s]
        pen, xs = 0, []
        for i in range(len(g)):
            xs.append(pen >> 6)
            pen += pair[g[i], g[i + 1]] if i + 1 < len(g) else last[g[i]]
        width = max(max(x + self.ink_right[gg] for x, gg in zip(xs, g)), pen >> 6)
        return g, xs, int(width)

    def compose(self, s, pair, last):
        g, xs, width = self.layout(s, pair, last)
        out = np.zeros((self.height, width + self.cell_w), np.uint8)
        for gg, x in zip(g, xs):
            out[:, x : x + self.cell_w] |= self.cells[gg]
        if out[:, width:].any():
            raise RuntimeError("glyph ink beyond the computed width")
        return out[:, :width]


def _interval(lo, hi, pen_known, x_pix, mult=1):
    """Intersect [lo, hi] with {v : floor((pen_known + mult*v) / 64) == x_pix}."""
    a = 64 * x_pix - pen_known
    b = a + 63
    # mult*v in [a, b]
    return max(lo, -((-a) // mult)), min(hi, b // mult)


def build_score_glyph_table(verify=True):
    B = _Builder()
    n = len(GLYPHS)
    digits = [B.gi[c] for c in "0123456789"]
    minus = B.gi["-"]
    pair = np.full((n, n), -1, np.int64)
    rng = {}  # (a, b) -> [lo, hi] of 26.6 values still possible

    # A(a, a): in a*65 the 65th glyph sits at pixel floor(64*A/64) = A.
    for a in digits:
        xs, _ = B.positions(GLYPHS[a] * 65)
        pair[a, a] = xs[64]
        for k in range(65):
            if xs[k] != (k * pair[a, a]) >> 6:
                raise RuntimeError("pair model inconsistent for %r" % GLYPHS[a])
    # S = A(a,b) + A(b,a) from (ab)*65, and bounds on A(a,b) from the b glyphs.
    period = {}
    for a in digits:
        for b in digits:
            if a >= b:
                continue
            s = (GLYPHS[a] + GLYPHS[b]) * 65
            xs, _ = B.positions(s)
            S = xs[128]
            period[a, b] = period[b, a] = S
            lo, hi = 0, S
            for k in range(65):
                lo, hi = _interval(lo, hi, k * S, xs[2 * k + 1])
            rng[a, b] = [lo, hi]
            rng[b, a] = [S - hi, S - lo]

    def odd_tail(b):
        """A string starting with glyph b whose pen positions of the b's are k*P with P odd."""
        if pair[b, b] % 2:
            return GLYPHS[b], int(pair[b, b])
        for x in digits:
            if x != b and period[b, x] % 2:
                return GLYPHS[b] + GLYPHS[x], int(period[b, x])
        return None

    # Pin the ambiguous ones with prefix + periodic tail of odd period.
    todo = [(a, b) for (a, b), (lo, hi) in rng.items() if lo != hi]
    todo += [(minus, d) for d in digits]
    for a, b in todo:
        tail = odd_tail(b)
        if tail is None:
            raise RuntimeError("no odd period to resolve pair %r" % (GLYPHS[a] + GLYPHS[b]))
        t, P = tail
        xs, _ = B.positions(GLYPHS[a] + t * 64)
        lo, hi = rng.get((a, b), [0, 64 * 64])
        for k in range(64):
            lo, hi = _interval(lo, hi, k * P, xs[1 + k * len(t)])
        if lo != hi:
            raise RuntimeError("could not pin pair %r" % (GLYPHS[a] + GLYPHS[b]))
        rng[a, b] = [lo, hi]
        if (b, a) in rng and a != minus:
            rng[b, a] = [period[a, b] - lo] * 2
    for (a, b), (lo, hi) in rng.items():
        if lo != hi:
            raise RuntimeError("unresolved pair %r" % (GLYPHS[a] + GLYPHS[b]))
        pair[a, b] = lo

    # last_adv(a): width of prefix + a is floor((pen + L)/64) when that exceeds the ink.
    last = np.zeros(n, np.int64)
    runner = next(d for d in digits if pair[d, d] % 2)
    for a in digits:
        lo, hi = 0, 64 * 64
        for k in range(1, 65):
            s = GLYPHS[runner] * k + GLYPHS[a]
            pen = (k - 1) * int(pair[runner, runner]) + int(pair[runner, a])
            _, w = B.positions(s)
            ink = (pen >> 6) + int(B.ink_right[a])
            if w > ink:
                lo, hi = _interval(lo, hi, pen, w)
            else:
                hi = min(hi, 64 * (w + 1) - 1 - pen)
        if lo != hi:
            raise RuntimeError("could not pin final advance of %r" % GLYPHS[a])
        last[a] = lo
    last[minus] = pair[minus, B.gi["0"]]  # never last in a formatted number; unused

    pair[minus, minus] = 0
    for d in digits:  # '-' never follows a digit in a formatted number; unused
        pair[d, minus] = 0

    palette_surf, _ = _render(B.pygame, B.font, "0")
    pal = palette_surf.get_palette()
    palette = np.array([(c.r << 16) | (c.g << 8) | c.b for c in pal], np.uint32)
    if palette.shape != (256,):
        raise RuntimeError("unexpected palette size")

    table = dict(
        cells=np.ascontiguousarray(B.cells),
        pair_adv=np.ascontiguousarray(pair.astype(np.int32)),
        last_adv=np.ascontiguousarray(last.astype(np.int32)),
        ink_right=np.ascontiguousarray(B.ink_right.astype(np.int32)),
        palette=palette,
        height=int(B.height),
        cell_w=int(B.cell_w),
    )
    if verify:
        _self_check(B, table)
    return table


def _self_check(B, table, samples=None):
    """Compare composed images with font.render for a spread of score strings."""
    pair, last = table["pair_adv"], table["last_adv"]
    if samples is None:
        samples = [format(v, "04.0f") for v in (0, -0.0, 7, 74, 4747, -1, -74, 1000, -300,
                                                 123456789, -987654321.0, 1e20)]
        samples += ["".join(GLYPHS[(i * 7 + j * 3) % 10] for j in range(12)) for i in range(10)]
    for s in samples:
        _, ref = _render(B.pygame, B.font, s)
        if not np.array_equal(ref, B.compose(s, pair, last)):
            raise RuntimeError("score glyph table does not reproduce font.render(%r)" % s)


def score_glyph_table():
    """The table the pools draw with, built from pygame's font (gymnasium draws the score
    with it: exact to the installed pygame). CarRacing's observation is a drawn frame, score
    included, so stepping it needs pygame (not pybox2d): pip install "cypool[car-racing]"."""
    try:
        import pygame  # noqa: F401
    except ImportError:
        raise ImportError(
            "CarRacing-v3 draws the score into every observation with pygame's bundled font, "
            "as gymnasium does, so stepping it needs pygame: pip install "
            "\"cypool[car-racing]\" (pygame-ce alone; pybox2d is not needed)") from None
    return build_score_glyph_table()
