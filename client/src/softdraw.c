/*
 * softdraw: span rasterizer for cradle_draw (see softdraw.h).
 */
#include "softdraw.h"

#include <math.h>

#include "font8x8.h"

static uint32_t argb(uint32_t rgba) { return (rgba >> 8) | (rgba << 24); }

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Fills pixels [x0, x1) of row y; blends when alpha < 255. */
static void span(cradle_softdraw *s, int y, int x0, int x1, uint32_t rgba) {
    if (y < 0 || y >= s->height) return;
    x0 = clampi(x0, 0, s->width);
    x1 = clampi(x1, 0, s->width);
    if (x0 >= x1) return;
    uint32_t *p = s->pixels + (size_t)y * (size_t)s->pitch;
    uint32_t a = rgba & 0xFFu;
    if (a == 0xFFu) {
        uint32_t c = argb(rgba);
        for (int x = x0; x < x1; x++) p[x] = c;
        return;
    }
    if (a == 0) return;
    /* red and blue in one multiply, green in another */
    uint32_t src = argb(rgba);
    uint32_t src_rb = src & 0x00FF00FFu, src_g = src & 0x0000FF00u, inv = 255u - a;
    for (int x = x0; x < x1; x++) {
        uint32_t d = p[x];
        uint32_t rb = ((src_rb * a + (d & 0x00FF00FFu) * inv) >> 8) & 0x00FF00FFu;
        uint32_t g = ((src_g * a + (d & 0x0000FF00u) * inv) >> 8) & 0x0000FF00u;
        p[x] = 0xFF000000u | rb | g;
    }
}

static void fill(cradle_softdraw *s, float x0, float y0, float x1, float y1, uint32_t rgba) {
    int ix0 = (int)lrintf(x0), ix1 = (int)lrintf(x1), iy0 = (int)lrintf(y0), iy1 = (int)lrintf(y1);
    if (ix1 == ix0 && x1 > x0) ix1 = ix0 + 1; /* thin shapes keep one pixel */
    if (iy1 == iy0 && y1 > y0) iy1 = iy0 + 1;
    iy0 = clampi(iy0, 0, s->height);
    iy1 = clampi(iy1, 0, s->height);
    for (int y = iy0; y < iy1; y++) span(s, y, ix0, ix1, rgba);
}

static void sd_clear(void *context, uint32_t rgba) {
    cradle_softdraw *s = ((cradle_softdraw_view *)context)->target;
    for (int y = 0; y < s->height; y++) span(s, y, 0, s->width, rgba | 0xFFu);
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

static void sd_line(void *context, float x0, float y0, float x1, float y1, uint32_t rgba) {
    cradle_softdraw_view *v = context;
    float ax = x0 * v->scale + v->offset_x, ay = y0 * v->scale + v->offset_y;
    float bx = x1 * v->scale + v->offset_x, by = y1 * v->scale + v->offset_y;
    float dx = bx - ax, dy = by - ay;
    float n = fabsf(dx) > fabsf(dy) ? fabsf(dx) : fabsf(dy);
    int steps = (int)n + 1;
    if (steps > 8192) steps = 8192;
    for (int i = 0; i <= steps; i++) {
        float t = (float)i / (float)steps;
        int px = (int)floorf(ax + dx * t), py = (int)floorf(ay + dy * t);
        span(v->target, py, px, px + 1, rgba);
    }
}

static void sd_triangle(void *context, float x0, float y0, float x1, float y1, float x2, float y2, uint32_t rgba) {
    cradle_softdraw_view *v = context;
    cradle_softdraw *s = v->target;
    float px[3] = {x0 * v->scale + v->offset_x, x1 * v->scale + v->offset_x, x2 * v->scale + v->offset_x};
    float py[3] = {y0 * v->scale + v->offset_y, y1 * v->scale + v->offset_y, y2 * v->scale + v->offset_y};
    float ymin = fminf(py[0], fminf(py[1], py[2])), ymax = fmaxf(py[0], fmaxf(py[1], py[2]));
    int ya = clampi((int)ceilf(ymin - 0.5f), 0, s->height), yb = clampi((int)ceilf(ymax - 0.5f), 0, s->height);
    for (int y = ya; y < yb; y++) {
        float yc = (float)y + 0.5f, left = INFINITY, right = -INFINITY;
        for (int e = 0; e < 3; e++) {
            float ax = px[e], ay = py[e], bx = px[(e + 1) % 3], by = py[(e + 1) % 3];
            if ((yc < ay) == (yc < by)) continue; /* the row misses this edge */
            float x = ax + (yc - ay) * (bx - ax) / (by - ay);
            left = fminf(left, x);
            right = fmaxf(right, x);
        }
        if (left > right) continue;
        span(s, y, (int)ceilf(left - 0.5f), (int)ceilf(right - 0.5f), rgba);
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
