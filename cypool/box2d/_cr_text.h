/* CarRacing score text, drawn bit-exactly as gymnasium 1.4 / pygame-ce 2.5.8 draws it:
 *
 *   font = pygame.font.Font(pygame.font.get_default_font(), 42)
 *   text = font.render(f"{reward:04.0f}", True, (255, 255, 255), (0, 0, 0))
 *   text_rect = text.get_rect(); text_rect.center = (60, 750.0)
 *   surf.blit(text, text_rect)
 *
 * No pygame at step time: the glyph table (cr_glyph_table) is built once per process by
 * _cr_text.py from pygame's own renders; see that module for how and for the layout.
 *
 * What is reproduced, and why it is exact:
 *  - Formatting: Python's format(x, "04.0f"), i.e. the exact decimal value of the double
 *    rounded half-to-even to an integer, '-' whenever the sign bit is set (so -0.0 and
 *    -0.4 give "-000"), zero padded after the sign to 4 characters.  Done here on the
 *    bits of the double (no libc printf: independent of libc, locale and rounding mode).
 *  - Layout (SDL_ttf 2.24 Shaded, HarfBuzz positions): glyph i is ORed into a zeroed
 *    8-bit line at x = floor(pen_i / 64), pen advancing in 26.6 by a per-pair amount
 *    (advance + kerning); the line is `height` rows; its width is
 *    max(max_i(x_i + ink_right), floor(pen_end / 64)).
 *  - Placement: pygame's Rect.center setter truncates floats to int and does
 *    x = cx - w/2, y = cy - h/2 with C integer division.
 *  - Blit: the text surface is INDEX8 without colorkey or blending, so SDL's 1->4 blit
 *    copies palette[index] (0x00RRGGBB, alpha byte 0 on XRGB8888) over the whole
 *    clipped rect, background pixels included.
 */
#ifndef CYPOOL_CR_TEXT_H
#define CYPOOL_CR_TEXT_H

#include <stdint.h>
#include <string.h>

#include "_cr_surface.h"

#define CR_SCORE_NGLYPH 11          /* '0'..'9' -> 0..9, '-' -> 10 */
#define CR_SCORE_MAX_CHARS 320      /* longest "04.0f" of a finite double: 310 + NUL */
#define CR_SCORE_CENTER_X 60
#define CR_SCORE_CENTER_Y 750       /* WINDOW_H - WINDOW_H * 2.5 / 40.0 = 750.0 */

typedef struct cr_glyph_table {
    const uint8_t *cells;     /* [11][height][cell_w] palette index of each 1-glyph render */
    const int32_t *pair_adv;  /* [11][11] 26.6 pen advance from glyph a to a following b */
    const int32_t *last_adv;  /* [11]     26.6 advance of a glyph that ends the string */
    const int32_t *ink_right; /* [11]     right ink bound relative to the glyph's pen x */
    const uint32_t *palette;  /* [256]    0x00RRGGBB of each palette index */
    int32_t height;           /* text surface height (46) */
    int32_t cell_w;           /* columns per cell (23) */
} cr_glyph_table;

/* format(x, "04.0f") into buf (>= CR_SCORE_MAX_CHARS bytes, NUL terminated).
 * Returns the length, or -1 when x is inf or nan (Python gives "0inf", "-inf", "0nan":
 * glyphs the table does not have).  glibc's snprintf("%04.0f") agrees with Python on
 * finite values (in the default rounding mode) but prints " inf"/" nan"; this
 * formatter does not depend on libc, locale or the FP rounding mode. */
static inline int cr_format_score(double x, char *buf)
{
    uint64_t bits, mant;
    int neg, bexp, sh, nd = 0, len = 0, i;
    char digits[CR_SCORE_MAX_CHARS];

    memcpy(&bits, &x, sizeof bits);
    neg = (int)(bits >> 63);
    bexp = (int)((bits >> 52) & 0x7ff);
    mant = bits & ((UINT64_C(1) << 52) - 1);
    if (bexp == 0x7ff)
        return -1;
    if (bexp == 0) { /* zero or subnormal: |x| < 0.5 rounds to 0 */
        mant = 0;
        sh = 0;
    } else {
        mant |= UINT64_C(1) << 52;
        sh = bexp - 1075; /* |x| = mant * 2^sh */
    }

    if (sh <= 0) {
        uint64_t q;
        if (sh < -53) {
            q = 0; /* |x| < 2^53 * 2^-54 = 0.5 */
        } else {
            int s = -sh;
            uint64_t r, half;
            q = mant >> s; /* s <= 53 */
            r = mant & ((UINT64_C(1) << s) - 1);
            half = s ? UINT64_C(1) << (s - 1) : 0;
            if (s && (r > half || (r == half && (q & 1))))
                q++; /* round half to even on the exact binary value */
        }
        do {
            digits[nd++] = (char)('0' + (int)(q % 10));
            q /= 10;
        } while (q);
    } else if (sh <= 11) {
        uint64_t q = mant << sh; /* < 2^64 */
        do {
            digits[nd++] = (char)('0' + (int)(q % 10));
            q /= 10;
        } while (q);
    } else {
        /* Exact integer mant * 2^sh (< 2^1024, <= 309 digits): little-endian base-1e9 limbs. */
        uint32_t limb[36];
        int nl = 0, k;
        uint64_t m = mant;
        while (m) {
            limb[nl++] = (uint32_t)(m % 1000000000u);
            m /= 1000000000u;
        }
        while (sh > 0) {
            int step = sh > 28 ? 28 : sh;
            uint64_t carry = 0;
            for (k = 0; k < nl; k++) {
                uint64_t v = ((uint64_t)limb[k] << step) + carry;
                limb[k] = (uint32_t)(v % 1000000000u);
                carry = v / 1000000000u;
            }
            while (carry) {
                limb[nl++] = (uint32_t)(carry % 1000000000u);
                carry /= 1000000000u;
            }
            sh -= step;
        }
        for (k = 0; k < nl; k++) {
            uint32_t v = limb[k];
            int j;
            for (j = 0; j < 9; j++) {
                digits[nd++] = (char)('0' + (int)(v % 10));
                v /= 10;
                if (k == nl - 1 && v == 0)
                    break;
            }
        }
    }

    if (neg)
        buf[len++] = '-';
    for (i = nd + neg; i < 4; i++)
        buf[len++] = '0';
    for (i = nd - 1; i >= 0; i--)
        buf[len++] = digits[i];
    buf[len] = '\0';
    return len;
}

/* Blits the score text of `reward` onto an XRGB8888 canvas (0x00RRGGBB) seen through surf,
 * exactly as the Python code at the top of this file does (clipped at the canvas edges; rows
 * outside its written window are left alone).
 * Returns 0; 1 if reward is not finite (inf/nan: not drawable from the table);
 * 2 if the table is unusable. */
static inline int cr_draw_score(const cr_surface *surf, double reward, const cr_glyph_table *t)
{
    char s[CR_SCORE_MAX_CHARS];
    int32_t xs[CR_SCORE_MAX_CHARS];
    uint8_t gs[CR_SCORE_MAX_CHARS];
    int n, i, lo, hi, lx, ly;
    int64_t pen = 0, right = 0, width, x0, y0, cx0, cx1, cy0, cy1;

    if (!t || !t->cells || !t->pair_adv || !t->last_adv || !t->ink_right || !t->palette ||
        t->height <= 0 || t->cell_w <= 0)
        return 2;
    n = cr_format_score(reward, s);
    if (n < 0)
        return 1;

    for (i = 0; i < n; i++)
        gs[i] = (uint8_t)(s[i] == '-' ? 10 : s[i] - '0');
    for (i = 0; i < n; i++) {
        int g = gs[i];
        /* pen >= 0 (all advances positive), so >> 6 is floor(pen / 64) */
        xs[i] = (int32_t)(pen >> 6);
        if (xs[i] + t->ink_right[g] > right)
            right = xs[i] + t->ink_right[g];
        pen += i + 1 < n ? t->pair_adv[g * CR_SCORE_NGLYPH + gs[i + 1]] : t->last_adv[g];
    }
    width = (pen >> 6) > right ? (pen >> 6) : right;

    x0 = CR_SCORE_CENTER_X - width / 2;
    y0 = CR_SCORE_CENTER_Y - t->height / 2;
    cx0 = x0 > 0 ? x0 : 0;
    cx1 = x0 + width < surf->w ? x0 + width : surf->w;
    cy0 = y0 > surf->ylo ? y0 : surf->ylo;
    cy1 = y0 + t->height < surf->yhi ? y0 + t->height : surf->yhi;
    if (cx0 >= cx1 || cy0 >= cy1)
        return 0;

    /* Column by column over the visible part of the line, ORing the (at most a few) glyph
     * cells that cover it; [lo, hi) is the window of glyphs whose cells reach column lx. */
    lo = 0;
    hi = 0;
    for (lx = (int)(cx0 - x0); lx < (int)(cx1 - x0); lx++) {
        uint32_t *col = cr_surface_row(surf, (int)cy0) + (lx + x0);
        while (hi < n && xs[hi] <= lx)
            hi++;
        while (lo < hi && xs[lo] + t->cell_w <= lx)
            lo++;
        for (ly = (int)(cy0 - y0); ly < (int)(cy1 - y0); ly++) {
            unsigned v = 0;
            int k;
            for (k = lo; k < hi; k++)
                v |= t->cells[((size_t)gs[k] * (size_t)t->height + (size_t)ly) * (size_t)t->cell_w +
                              (size_t)(lx - xs[k])];
            *col = t->palette[v];
            col += surf->pitch;
        }
    }
    return 0;
}

#endif /* CYPOOL_CR_TEXT_H */
