/*
 * softdraw: span rasterizer for cradle_draw (see softdraw.h).
 *
 * Speed: a shape is clipped once and written row by row through a row
 * pointer with no per-pixel branch: opaque rows are 16-byte stores,
 * translucent ones the blend in row_blend. The coordinate arithmetic
 * (lrintf for rectangles, the per-row edge crossing of triangles, floor per
 * line point) is the first version's expression for expression, and the
 * integer conversions (ceil_coord, floor_coord) equal (int)ceilf and
 * (int)floorf inside +-2^30, so the pixels are exactly that version's:
 * tests/unit/test_softdraw.c keeps it and compares.
 */
#include "softdraw.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "font8x8.h"

#define COORD_LIMIT 1073741824.0f /* 2^30 */

static uint32_t argb(uint32_t rgba) { return (rgba >> 8) | (rgba << 24); }

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* v rounded toward zero, clamped to +-2^30 (NaN counts as -2^30). */
static int trunc_coord(float v) {
    if (!(v > -COORD_LIMIT)) return -(1 << 30);
    if (v > COORD_LIMIT) return 1 << 30;
    return (int)v;
}

/* (int)ceilf(v) and (int)floorf(v) for |v| <= 2^30 without the libm call
 * (the build targets baseline x86-64, which has no rounding instruction):
 * the truncation is exact there, and so is its conversion back to float. */
static int ceil_coord(float v) {
    int i = trunc_coord(v);
    return (float)i < v ? i + 1 : i;
}

static int floor_coord(float v) {
    int i = trunc_coord(v);
    return (float)i > v ? i - 1 : i;
}

/* Stores c in p[0..n): 16-byte stores (memcpy of a 4-pixel pattern compiles
 * to one unaligned vector store), the last one overlapping the one before
 * instead of a scalar tail; rows of shapes are mostly 4..40 pixels. */
static inline void row_store(uint32_t *restrict p, size_t n, uint32_t c) {
    if (n < 4) {
        for (size_t x = 0; x < n; x++) p[x] = c;
        return;
    }
    const uint32_t pattern[4] = {c, c, c, c};
    size_t x = 0;
    for (; x + 8 <= n; x += 8) {
        memcpy(p + x, pattern, sizeof pattern);
        memcpy(p + x + 4, pattern, sizeof pattern);
    }
    if (x + 4 <= n) {
        memcpy(p + x, pattern, sizeof pattern);
        x += 4;
    }
    if (x < n) memcpy(p + n - 4, pattern, sizeof pattern);
}

/* (src * a + dst * (255 - a)) >> 8 per channel, red and blue in one
 * multiply and green in another; the result is opaque. */
static void row_blend(uint32_t *restrict p, size_t n, uint32_t src, uint32_t a) {
    uint32_t src_rb = (src & 0x00FF00FFu) * a, src_g = (src & 0x0000FF00u) * a, inv = 255u - a;
    for (size_t x = 0; x < n; x++) {
        uint32_t d = p[x];
        uint32_t rb = ((src_rb + (d & 0x00FF00FFu) * inv) >> 8) & 0x00FF00FFu;
        uint32_t g = ((src_g + (d & 0x0000FF00u) * inv) >> 8) & 0x0000FF00u;
        p[x] = 0xFF000000u | rb | g;
    }
}

/* Fills the clipped box [x0, x1) x [y0, y1) (0 <= x0 < x1 <= width,
 * 0 <= y0 < y1 <= height) with argb c at alpha a (1..255). */
static void box(cradle_softdraw *s, int x0, int y0, int x1, int y1, uint32_t c, uint32_t a) {
    size_t pitch = (size_t)s->pitch, n = (size_t)(x1 - x0);
    uint32_t *p = s->pixels + (size_t)y0 * pitch + (size_t)x0;
    int rows = y1 - y0;
    if (a == 0xFFu) {
        if (n == pitch) { /* whole rows of an unpadded buffer: one run */
            row_store(p, n * (size_t)rows, c);
            return;
        }
        for (int y = 0; y < rows; y++, p += pitch) row_store(p, n, c);
    } else {
        for (int y = 0; y < rows; y++, p += pitch) row_blend(p, n, c, a);
    }
}

/* Paints a pending clear before the first shape after it. */
static void ready(cradle_softdraw *s) {
    if (!s->clear_pending) return;
    s->clear_pending = false;
    if (s->width > 0 && s->height > 0) box(s, 0, 0, s->width, s->height, s->clear_argb, 0xFFu);
}

void cradle_softdraw_clear(cradle_softdraw *s, uint32_t rgba) {
    s->clear_pending = true;
    s->clear_argb = argb(rgba | 0xFFu);
}

void cradle_softdraw_finish(cradle_softdraw *s) { ready(s); }

static void fill(cradle_softdraw *s, float x0, float y0, float x1, float y1, uint32_t rgba) {
    uint32_t a = rgba & 0xFFu;
    if (a == 0) return;
    int ix0 = (int)lrintf(x0), ix1 = (int)lrintf(x1), iy0 = (int)lrintf(y0), iy1 = (int)lrintf(y1);
    if (ix1 == ix0 && x1 > x0) ix1 = ix0 + 1; /* thin shapes keep one pixel */
    if (iy1 == iy0 && y1 > y0) iy1 = iy0 + 1;
    iy0 = clampi(iy0, 0, s->height);
    iy1 = clampi(iy1, 0, s->height);
    ix0 = clampi(ix0, 0, s->width);
    ix1 = clampi(ix1, 0, s->width);
    if (ix0 >= ix1 || iy0 >= iy1) return;
    ready(s);
    box(s, ix0, iy0, ix1, iy1, argb(rgba), a);
}

static void sd_clear(void *context, uint32_t rgba) {
    cradle_softdraw_clear(((cradle_softdraw_view *)context)->target, rgba);
}

static void sd_rect(void *context, float x, float y, float w, float h, uint32_t rgba) {
    cradle_softdraw_view *v = context;
    float x0 = x * v->scale + v->offset_x, y0 = y * v->scale + v->offset_y;
    fill(v->target, x0, y0, x0 + w * v->scale, y0 + h * v->scale, rgba);
}

static void sd_outline(void *context, float x, float y, float w, float h, uint32_t rgba) {
    cradle_softdraw_view *v = context;
    float x0 = x * v->scale + v->offset_x, y0 = y * v->scale + v->offset_y;
    float x1 = x0 + w * v->scale, y1 = y0 + h * v->scale;
    fill(v->target, x0, y0, x1, y0 + 1.0f, rgba);
    fill(v->target, x0, y1 - 1.0f, x1, y1, rgba);
    fill(v->target, x0, y0 + 1.0f, x0 + 1.0f, y1 - 1.0f, rgba);
    fill(v->target, x1 - 1.0f, y0 + 1.0f, x1, y1 - 1.0f, rgba);
}

/* A point per step from a to b; a point drawn twice blends twice. */
static void sd_line(void *context, float x0, float y0, float x1, float y1, uint32_t rgba) {
    cradle_softdraw_view *v = context;
    cradle_softdraw *s = v->target;
    uint32_t a = rgba & 0xFFu, c = argb(rgba);
    if (a == 0) return;
    float ax = x0 * v->scale + v->offset_x, ay = y0 * v->scale + v->offset_y;
    float bx = x1 * v->scale + v->offset_x, by = y1 * v->scale + v->offset_y;
    float dx = bx - ax, dy = by - ay;
    float n = fabsf(dx) > fabsf(dy) ? fabsf(dx) : fabsf(dy);
    if (n != n) return; /* NaN: no point would be visible */
    int steps = n < 8192.0f ? (int)n + 1 : 8192;
    ready(s);
    for (int i = 0; i <= steps; i++) {
        float t = (float)i / (float)steps;
        int px = floor_coord(ax + dx * t), py = floor_coord(ay + dy * t);
        if (px >= 0 && px < s->width && py >= 0 && py < s->height) box(s, px, py, px + 1, py + 1, c, a);
    }
}

static void sd_triangle(void *context, float x0, float y0, float x1, float y1, float x2, float y2, uint32_t rgba) {
    cradle_softdraw_view *v = context;
    cradle_softdraw *s = v->target;
    uint32_t a = rgba & 0xFFu, c = argb(rgba);
    if (a == 0) return;
    float px[3] = {x0 * v->scale + v->offset_x, x1 * v->scale + v->offset_x, x2 * v->scale + v->offset_x};
    float py[3] = {y0 * v->scale + v->offset_y, y1 * v->scale + v->offset_y, y2 * v->scale + v->offset_y};
    float ymin = fminf(py[0], fminf(py[1], py[2])), ymax = fmaxf(py[0], fmaxf(py[1], py[2]));
    int ya = clampi(ceil_coord(ymin - 0.5f), 0, s->height), yb = clampi(ceil_coord(ymax - 0.5f), 0, s->height);
    if (ya >= yb) return;
    /* Each edge's constants once; the crossing below is the same expression
     * as ax + (yc - ay) * (bx - ax) / (by - ay), so it rounds the same. A row
     * crosses an edge when exactly one end is below the row's centre,
     * (yc < ay) != (yc < by), that is lo <= yc < hi. */
    float ex[3], ey[3], edx[3], edy[3], elo[3], ehi[3];
    for (int e = 0; e < 3; e++) {
        int f = e == 2 ? 0 : e + 1;
        ex[e] = px[e];
        ey[e] = py[e];
        edx[e] = px[f] - px[e];
        edy[e] = py[f] - py[e];
        elo[e] = py[e] < py[f] ? py[e] : py[f];
        ehi[e] = py[e] < py[f] ? py[f] : py[e];
    }
    ready(s);
    uint32_t *row = s->pixels + (size_t)ya * (size_t)s->pitch;
    for (int y = ya; y < yb; y++, row += s->pitch) {
        float yc = (float)y + 0.5f, left = INFINITY, right = -INFINITY;
        for (int e = 0; e < 3; e++) {
            if (!(yc >= elo[e] && yc < ehi[e])) continue;
            float x = ex[e] + (yc - ey[e]) * edx[e] / edy[e];
            if (x < left) left = x; /* a NaN crossing is skipped, as fminf/fmaxf do */
            if (x > right) right = x;
        }
        if (left > right) continue;
        int xa = clampi(ceil_coord(left - 0.5f), 0, s->width), xb = clampi(ceil_coord(right - 0.5f), 0, s->width);
        if (xa >= xb) continue;
        if (a == 0xFFu) row_store(row + xa, (size_t)(xb - xa), c);
        else row_blend(row + xa, (size_t)(xb - xa), c, a);
    }
}

static void sd_text(void *context, float x, float y, float scale, uint32_t rgba, const char *text) {
    cradle_softdraw_view *v = context;
    cradle_softdraw *s = v->target;
    if (!text) return;
    float cell = scale * v->scale;
    float px = x * v->scale + v->offset_x, py = y * v->scale + v->offset_y;
    for (const unsigned char *c = (const unsigned char *)text; *c; c++, px += 8.0f * cell) {
        unsigned g = (*c >= 32u && *c < 128u) ? *c - 32u : (unsigned)('?' - 32);
        for (int row = 0; row < 8; row++) {
            uint8_t bits = s->glyphs[g][row];
            if (!bits) continue;
            float y0 = py + (float)row * cell;
            for (int col = 0; col < 8;) {
                if (!(bits & (0x80u >> col))) {
                    col++;
                    continue;
                }
                int run = col;
                while (run < 8 && (bits & (0x80u >> run))) run++;
                fill(s, px + (float)col * cell, y0, px + (float)run * cell, y0 + cell, rgba);
                col = run;
            }
        }
    }
}

static cradle_draw draw_for(cradle_softdraw_view *v) {
    return (cradle_draw){.context = v, .clear = sd_clear, .rect = sd_rect, .rect_outline = sd_outline,
                         .line = sd_line, .triangle = sd_triangle, .text = sd_text};
}

void cradle_softdraw_init(cradle_softdraw *s, uint32_t *pixels, int width, int height, int pitch,
                          uint32_t view_w, uint32_t view_h) {
    s->pixels = pixels;
    s->width = width;
    s->height = height;
    s->pitch = pitch;
    s->view_w = view_w ? view_w : 1u;
    s->view_h = view_h ? view_h : 1u;
    s->clear_pending = false;
    s->clear_argb = 0;
    assert(width >= 0 && height >= 0 && pitch >= width);
    for (unsigned g = 0; g < 96; g++)
        for (unsigned r = 0; r < 8; r++) s->glyphs[g][r] = cradle_font8x8_row((unsigned char)(g + 32u), r);
    cradle_softdraw_frame(s, 0.0f, 0.0f);
}

void cradle_softdraw_frame(cradle_softdraw *s, float shake_x, float shake_y) {
    float sx = (float)s->width / (float)s->view_w, sy = (float)s->height / (float)s->view_h;
    float k = sx < sy ? sx : sy;
    s->world = (cradle_softdraw_view){.target = s, .scale = k,
                                      .offset_x = ((float)s->width - (float)s->view_w * k) / 2.0f + shake_x * k,
                                      .offset_y = ((float)s->height - (float)s->view_h * k) / 2.0f + shake_y * k};
    s->screen = (cradle_softdraw_view){.target = s, .scale = 1.0f};
}

cradle_draw cradle_softdraw_world(cradle_softdraw *s) { return draw_for(&s->world); }
cradle_draw cradle_softdraw_screen(cradle_softdraw *s) { return draw_for(&s->screen); }

void cradle_softdraw_letterbox(cradle_softdraw *s) {
    float k = s->world.scale, w = (float)s->view_w * k, h = (float)s->view_h * k;
    float x0 = ((float)s->width - w) / 2.0f, y0 = ((float)s->height - h) / 2.0f;
    fill(s, 0, 0, (float)s->width, y0, 0x000000ffu);
    fill(s, 0, y0 + h, (float)s->width, (float)s->height, 0x000000ffu);
    fill(s, 0, 0, x0, (float)s->height, 0x000000ffu);
    fill(s, x0 + w, 0, (float)s->width, (float)s->height, 0x000000ffu);
}
