/* _cr_surface.h -- the drawing target of the CarRacing rasterisers (_cr_gfx.h, _cr_draw.h,
 * _cr_text.h): a pygame.Surface((w, h)) of 32-bit XRGB8888 pixels (0x00RRGGBB) of which only
 * the rows [ylo, yhi) are stored, in a buffer whose row pitch may be negative.
 *
 * The algorithms see only w and h (pygame's clip rectangle is the whole surface), so the
 * window never changes which pixels a call computes: rows outside [ylo, yhi) are simply not
 * stored. CarRacing draws its 1000 x 800 frame a band of rows at a time into a buffer of one
 * band, leaves out the road's rows 0..99 when the panel will cover them, and draws the panel
 * on an upside-down view, which takes the place of pygame.transform.flip.
 *
 * C99 and C++14; no globals. */
#ifndef CYPOOL_CR_SURFACE_H
#define CYPOOL_CR_SURFACE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t *base;  /* where row ybase starts; row y starts at base + (y - ybase) * pitch */
    int ybase;
    ptrdiff_t pitch; /* pixels from one row to the next (negative: the view is upside down) */
    int w, h;        /* the surface's size, i.e. its clip rectangle */
    int ylo, yhi;    /* rows ylo <= y < yhi are written (0 <= ylo <= yhi <= h); each of them
                        must lie in the buffer */
} cr_surface;

static inline uint32_t *cr_surface_row(const cr_surface *s, int y)
{
    return s->base + (ptrdiff_t)(y - s->ybase) * s->pitch;
}

/* The whole w x h buffer px (pitch w), every row written. */
static inline cr_surface cr_surface_of(uint32_t *px, int w, int h)
{
    cr_surface s;
    s.base = px;
    s.ybase = 0;
    s.pitch = w;
    s.w = w;
    s.h = h;
    s.ylo = 0;
    s.yhi = h;
    return s;
}

/* The same buffer upside down: row y of the view is row h-1-y of px
 * (pygame.transform.flip(surf, False, True) without moving a pixel). */
static inline cr_surface cr_surface_flipped(uint32_t *px, int w, int h)
{
    cr_surface s = cr_surface_of(px, w, h);
    s.base = px + (ptrdiff_t)(h - 1) * w;
    s.pitch = -(ptrdiff_t)w;
    return s;
}

/* Rows [y0, y0 + rows) of a w x h surface, held upright in buf (rows rows of w pixels). */
static inline cr_surface cr_surface_band(uint32_t *buf, int w, int h, int y0, int rows)
{
    cr_surface s = cr_surface_of(buf, w, h);
    s.ybase = y0;
    s.ylo = y0;
    s.yhi = y0 + rows;
    return s;
}

/* The same kind of buffer seen upside down: rows [f0, f0 + rows) of the flipped surface, whose
 * row f is the surface's row h-1-f; buf holds them as the upright rows [h-f0-rows, h-f0). */
static inline cr_surface cr_surface_band_flipped(uint32_t *buf, int w, int h, int f0, int rows)
{
    cr_surface s = cr_surface_band(buf, w, h, f0, rows);
    s.base = buf + (ptrdiff_t)(rows - 1) * w;
    s.pitch = -(ptrdiff_t)w;
    return s;
}

/* Pixels p[0..n) set to c: the opaque spans of every fill. 32-byte stores where the CPU has
 * AVX2 (chosen at run time; the package is built for baseline x86-64); the pixels are the same
 * on every path. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CR_HAVE_FILL_AVX2 1
__attribute__((target("avx2"))) static inline void cr_fill_avx2(uint32_t *p, int n, uint32_t c)
{
    const __m256i v = _mm256_set1_epi32((int)c);
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_si256((__m256i *)(void *)(p + i), v);
    for (; i < n; i++)
        p[i] = c;
}
#endif

static inline void cr_fill(uint32_t *p, int n, uint32_t c)
{
    int i;
#ifdef CR_HAVE_FILL_AVX2
    if (n >= 16 && __builtin_cpu_supports("avx2")) {
        cr_fill_avx2(p, n, c);
        return;
    }
#endif
    for (i = 0; i < n; i++)
        p[i] = c;
}

#endif /* CYPOOL_CR_SURFACE_H */
