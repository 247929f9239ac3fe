/*
 * softdraw (client/src/softdraw.c), the client's rasterizer, against its
 * first version, kept below as the reference ("ref_"): the rewrite for speed
 * must not change one pixel. Random calls of every kind (through the world
 * view with scale, offset and shake, and the screen view; opaque,
 * translucent and invisible colours; coordinates inside, across and far
 * outside the buffer, on half-pixel ties; padded rows) and a vanguard scene
 * with particles and the HUD are drawn by both and compared pixel for pixel,
 * padding included. Coordinates stay inside +-2^30 pixels, where the
 * reference's conversions are defined; beyond that, and for NaN and
 * infinities, the test only checks that nothing outside the buffer is
 * written. Also: the deferred clear's contract.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/cradle.h"
#include "font8x8.h"
#include "hud.h"
#include "present.h"
#include "softdraw.h"
#include "vanguard_input.h"
#include "vanguard_internal.h"

/* ---- the reference: softdraw.c as first written (immediate clear) ---- */

typedef struct ref_sd ref_sd;
typedef struct ref_view {
    ref_sd *target;
    float scale, offset_x, offset_y;
} ref_view;
struct ref_sd {
    uint32_t *pixels;
    int width, height, pitch;
    uint32_t view_w, view_h;
    ref_view world, screen;
    uint8_t glyphs[96][8];
};

static uint32_t ref_argb(uint32_t rgba) { return (rgba >> 8) | (rgba << 24); }

static int ref_clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static void ref_span(ref_sd *s, int y, int x0, int x1, uint32_t rgba) {
    if (y < 0 || y >= s->height) return;
    x0 = ref_clampi(x0, 0, s->width);
    x1 = ref_clampi(x1, 0, s->width);
    if (x0 >= x1) return;
    uint32_t *p = s->pixels + (size_t)y * (size_t)s->pitch;
    uint32_t a = rgba & 0xFFu;
    if (a == 0xFFu) {
        uint32_t c = ref_argb(rgba);
        for (int x = x0; x < x1; x++) p[x] = c;
        return;
    }
    if (a == 0) return;
    uint32_t src = ref_argb(rgba);
    uint32_t src_rb = src & 0x00FF00FFu, src_g = src & 0x0000FF00u, inv = 255u - a;
    for (int x = x0; x < x1; x++) {
        uint32_t d = p[x];
        uint32_t rb = ((src_rb * a + (d & 0x00FF00FFu) * inv) >> 8) & 0x00FF00FFu;
        uint32_t g = ((src_g * a + (d & 0x0000FF00u) * inv) >> 8) & 0x0000FF00u;
        p[x] = 0xFF000000u | rb | g;
    }
}

static void ref_fill(ref_sd *s, float x0, float y0, float x1, float y1, uint32_t rgba) {
    int ix0 = (int)lrintf(x0), ix1 = (int)lrintf(x1), iy0 = (int)lrintf(y0), iy1 = (int)lrintf(y1);
    if (ix1 == ix0 && x1 > x0) ix1 = ix0 + 1;
    if (iy1 == iy0 && y1 > y0) iy1 = iy0 + 1;
    iy0 = ref_clampi(iy0, 0, s->height);
    iy1 = ref_clampi(iy1, 0, s->height);
    for (int y = iy0; y < iy1; y++) ref_span(s, y, ix0, ix1, rgba);
}

static void ref_clear(void *context, uint32_t rgba) {
    ref_sd *s = ((ref_view *)context)->target;
    for (int y = 0; y < s->height; y++) ref_span(s, y, 0, s->width, rgba | 0xFFu);
}

static void ref_rect(void *context, float x, float y, float w, float h, uint32_t rgba) {
    ref_view *v = context;
    float x0 = x * v->scale + v->offset_x, y0 = y * v->scale + v->offset_y;
    ref_fill(v->target, x0, y0, x0 + w * v->scale, y0 + h * v->scale, rgba);
}

static void ref_outline(void *context, float x, float y, float w, float h, uint32_t rgba) {
    ref_view *v = context;
    float x0 = x * v->scale + v->offset_x, y0 = y * v->scale + v->offset_y;
    float x1 = x0 + w * v->scale, y1 = y0 + h * v->scale;
    ref_fill(v->target, x0, y0, x1, y0 + 1.0f, rgba);
    ref_fill(v->target, x0, y1 - 1.0f, x1, y1, rgba);
    ref_fill(v->target, x0, y0 + 1.0f, x0 + 1.0f, y1 - 1.0f, rgba);
    ref_fill(v->target, x1 - 1.0f, y0 + 1.0f, x1, y1 - 1.0f, rgba);
}

static void ref_line(void *context, float x0, float y0, float x1, float y1, uint32_t rgba) {
    ref_view *v = context;
    float ax = x0 * v->scale + v->offset_x, ay = y0 * v->scale + v->offset_y;
    float bx = x1 * v->scale + v->offset_x, by = y1 * v->scale + v->offset_y;
    float dx = bx - ax, dy = by - ay;
    float n = fabsf(dx) > fabsf(dy) ? fabsf(dx) : fabsf(dy);
    int steps = (int)n + 1;
    if (steps > 8192) steps = 8192;
    for (int i = 0; i <= steps; i++) {
        float t = (float)i / (float)steps;
        int px = (int)floorf(ax + dx * t), py = (int)floorf(ay + dy * t);
        ref_span(v->target, py, px, px + 1, rgba);
    }
}

static void ref_triangle(void *context, float x0, float y0, float x1, float y1, float x2, float y2, uint32_t rgba) {
    ref_view *v = context;
    ref_sd *s = v->target;
    float px[3] = {x0 * v->scale + v->offset_x, x1 * v->scale + v->offset_x, x2 * v->scale + v->offset_x};
    float py[3] = {y0 * v->scale + v->offset_y, y1 * v->scale + v->offset_y, y2 * v->scale + v->offset_y};
    float ymin = fminf(py[0], fminf(py[1], py[2])), ymax = fmaxf(py[0], fmaxf(py[1], py[2]));
    int ya = ref_clampi((int)ceilf(ymin - 0.5f), 0, s->height), yb = ref_clampi((int)ceilf(ymax - 0.5f), 0, s->height);
    for (int y = ya; y < yb; y++) {
        float yc = (float)y + 0.5f, left = INFINITY, right = -INFINITY;
        for (int e = 0; e < 3; e++) {
            float ax = px[e], ay = py[e], bx = px[(e + 1) % 3], by = py[(e + 1) % 3];
            if ((yc < ay) == (yc < by)) continue;
            float x = ax + (yc - ay) * (bx - ax) / (by - ay);
            left = fminf(left, x);
            right = fmaxf(right, x);
        }
        if (left > right) continue;
        ref_span(s, y, (int)ceilf(left - 0.5f), (int)ceilf(right - 0.5f), rgba);
    }
}

static void ref_text(void *context, float x, float y, float scale, uint32_t rgba, const char *text) {
    ref_view *v = context;
    ref_sd *s = v->target;
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
                ref_fill(s, px + (float)col * cell, y0, px + (float)run * cell, y0 + cell, rgba);
                col = run;
            }
        }
    }
}

static cradle_draw ref_draw_for(ref_view *v) {
    return (cradle_draw){.context = v, .clear = ref_clear, .rect = ref_rect, .rect_outline = ref_outline,
                         .line = ref_line, .triangle = ref_triangle, .text = ref_text};
}

static void ref_frame(ref_sd *s, float shake_x, float shake_y) {
    float sx = (float)s->width / (float)s->view_w, sy = (float)s->height / (float)s->view_h;
    float k = sx < sy ? sx : sy;
    s->world = (ref_view){.target = s, .scale = k,
                          .offset_x = ((float)s->width - (float)s->view_w * k) / 2.0f + shake_x * k,
                          .offset_y = ((float)s->height - (float)s->view_h * k) / 2.0f + shake_y * k};
    s->screen = (ref_view){.target = s, .scale = 1.0f};
}

static void ref_init(ref_sd *s, uint32_t *pixels, int width, int height, int pitch, uint32_t view_w, uint32_t view_h) {
    s->pixels = pixels;
    s->width = width;
    s->height = height;
    s->pitch = pitch;
    s->view_w = view_w ? view_w : 1u;
    s->view_h = view_h ? view_h : 1u;
    for (unsigned g = 0; g < 96; g++)
        for (unsigned r = 0; r < 8; r++) s->glyphs[g][r] = cradle_font8x8_row((unsigned char)(g + 32u), r);
    ref_frame(s, 0.0f, 0.0f);
}

static void ref_letterbox(ref_sd *s) {
    float k = s->world.scale, w = (float)s->view_w * k, h = (float)s->view_h * k;
    float x0 = ((float)s->width - w) / 2.0f, y0 = ((float)s->height - h) / 2.0f;
    ref_fill(s, 0, 0, (float)s->width, y0, 0x000000ffu);
    ref_fill(s, 0, y0 + h, (float)s->width, (float)s->height, 0x000000ffu);
    ref_fill(s, 0, 0, x0, (float)s->height, 0x000000ffu);
    ref_fill(s, x0 + w, 0, (float)s->width, (float)s->height, 0x000000ffu);
}

/* ---- random calls, drawn by both ---- */

typedef struct rng {
    uint64_t s;
} rng;

static uint32_t next(rng *r) {
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return (uint32_t)(r->s >> 32);
}

static uint32_t below(rng *r, uint32_t n) { return next(r) % n; }

/* A coordinate in world or screen units: mostly near the buffer, some on
 * half-pixel ties, some far outside. */
static float coord(rng *r, float extent) {
    switch (below(r, 8)) {
    case 0: return (float)below(r, 64) * 0.5f - 4.0f;                  /* ties */
    case 1: return ((float)below(r, 2000001) - 1000000.0f) * 0.37f;    /* far */
    case 2: return -(float)below(r, 40) - 0.25f;                        /* just left/above */
    case 3: return extent + (float)below(r, 40) * 0.75f;                /* just right/below */
    default: return (float)next(r) / 4294967296.0f * (extent + 8.0f) - 4.0f;
    }
}

static float size(rng *r) {
    switch (below(r, 6)) {
    case 0: return 0.0f;
    case 1: return -(float)below(r, 20) * 0.5f;
    case 2: return (float)below(r, 8) * 0.25f; /* thin */
    default: return (float)next(r) / 4294967296.0f * 60.0f;
    }
}

static uint32_t colour(rng *r) {
    uint32_t c = next(r) & 0xFFFFFF00u;
    switch (below(r, 4)) {
    case 0: return c;           /* invisible */
    case 1: return c | 0x80u;
    case 2: return c | below(r, 256);
    default: return c | 0xFFu;
    }
}

typedef struct pair {
    ref_sd ref;
    cradle_softdraw sd;
    uint32_t *ref_px, *sd_px;
    int w, h, pitch;
    size_t n;
} pair;

static void pair_init(pair *p, int w, int h, int pitch, uint32_t vw, uint32_t vh, uint32_t fill_seed) {
    p->w = w;
    p->h = h;
    p->pitch = pitch;
    p->n = (size_t)pitch * (size_t)(h > 0 ? h : 1);
    p->ref_px = malloc(p->n * sizeof *p->ref_px);
    p->sd_px = malloc(p->n * sizeof *p->sd_px);
    assert_non_null(p->ref_px);
    assert_non_null(p->sd_px);
    rng r = {fill_seed * 0x9E3779B97F4A7C15ull + 1u};
    for (size_t i = 0; i < p->n; i++) p->ref_px[i] = p->sd_px[i] = next(&r);
    ref_init(&p->ref, p->ref_px, w, h, pitch, vw, vh);
    cradle_softdraw_init(&p->sd, p->sd_px, w, h, pitch, vw, vh);
}

static void pair_free(pair *p) {
    free(p->ref_px);
    free(p->sd_px);
}

static void pair_compare(pair *p, const char *what, uint32_t seed, int call) {
    cradle_softdraw_finish(&p->sd);
    if (memcmp(p->ref_px, p->sd_px, p->n * sizeof *p->ref_px) == 0) return;
    for (size_t i = 0; i < p->n; i++)
        if (p->ref_px[i] != p->sd_px[i])
            fail_msg("%s, seed %u, after call %d: pixel (%d, %d) of %dx%d (pitch %d) is %08x, the reference %08x",
                     what, seed, call, (int)(i % (size_t)p->pitch), (int)(i / (size_t)p->pitch), p->w, p->h,
                     p->pitch, p->sd_px[i], p->ref_px[i]);
}

static void random_calls(uint32_t seed) {
    rng r = {(uint64_t)seed * 0x2545F4914F6CDD1Dull + 7u};
    int w = (int)below(&r, 97), h = (int)below(&r, 61);
    int pitch = w + (int)below(&r, 3) * (int)below(&r, 5);
    if (pitch == 0) pitch = 1;
    uint32_t vw = 1u + below(&r, 80), vh = 1u + below(&r, 50);
    pair p;
    pair_init(&p, w, h, pitch, vw, vh, seed);
    float shake_x = (float)below(&r, 9) - 4.0f, shake_y = (float)below(&r, 9) * 0.5f - 2.0f;
    ref_frame(&p.ref, shake_x, shake_y);
    cradle_softdraw_frame(&p.sd, shake_x, shake_y);
    cradle_draw rw = ref_draw_for(&p.ref.world), rs = ref_draw_for(&p.ref.screen);
    cradle_draw sw = cradle_softdraw_world(&p.sd), ss = cradle_softdraw_screen(&p.sd);
    int calls = 40 + (int)below(&r, 40);
    for (int call = 0; call < calls; call++) {
        bool world = below(&r, 3) != 0;
        const cradle_draw *a = world ? &rw : &rs, *b = world ? &sw : &ss;
        float ex = world ? (float)vw : (float)w, ey = world ? (float)vh : (float)h;
        uint32_t c = colour(&r);
        switch (below(&r, 16)) {
        case 0:
            a->clear(a->context, c);
            b->clear(b->context, c);
            break;
        case 1: case 2: case 3: {
            float x = coord(&r, ex), y = coord(&r, ey), sw_ = size(&r), sh = size(&r);
            a->rect(a->context, x, y, sw_, sh, c);
            b->rect(b->context, x, y, sw_, sh, c);
            break;
        }
        case 4: case 5: {
            float x = coord(&r, ex), y = coord(&r, ey), sw_ = size(&r), sh = size(&r);
            a->rect_outline(a->context, x, y, sw_, sh, c);
            b->rect_outline(b->context, x, y, sw_, sh, c);
            break;
        }
        case 6: case 7: {
            float x0 = coord(&r, ex), y0 = coord(&r, ey), x1 = coord(&r, ex), y1 = coord(&r, ey);
            if (below(&r, 2)) { x1 = x0 + size(&r); y1 = y0 + size(&r) - 20.0f; }
            a->line(a->context, x0, y0, x1, y1, c);
            b->line(b->context, x0, y0, x1, y1, c);
            break;
        }
        case 8: case 9: case 10: case 11: case 12: {
            float v[6];
            for (int i = 0; i < 6; i += 2) {
                v[i] = coord(&r, ex);
                v[i + 1] = coord(&r, ey);
            }
            if (below(&r, 2)) /* small, like most game shapes */
                for (int i = 2; i < 6; i++) v[i] = v[i % 2] + size(&r) - 20.0f;
            if (below(&r, 6) == 0) v[3] = v[1]; /* a flat edge */
            a->triangle(a->context, v[0], v[1], v[2], v[3], v[4], v[5], c);
            b->triangle(b->context, v[0], v[1], v[2], v[3], v[4], v[5], c);
            break;
        }
        case 13: case 14: {
            char text[12];
            size_t len = below(&r, sizeof text);
            for (size_t i = 0; i < len; i++) text[i] = (char)(1u + below(&r, 255));
            text[len] = '\0';
            float x = coord(&r, ex), y = coord(&r, ey), scale = 0.25f * (float)(1u + below(&r, 12));
            a->text(a->context, x, y, scale, c, text);
            b->text(b->context, x, y, scale, c, text);
            break;
        }
        default:
            ref_letterbox(&p.ref);
            cradle_softdraw_letterbox(&p.sd);
            break;
        }
        if (below(&r, 8) == 0) pair_compare(&p, "random calls", seed, call);
    }
    pair_compare(&p, "random calls", seed, calls);
    pair_free(&p);
}

static void test_random_calls_match_reference(void **state) {
    (void)state;
    for (uint32_t seed = 1; seed <= 500; seed++) random_calls(seed);
}

/* ---- a vanguard scene, as test_client_render draws it with SDL ---- */

static void *state_alloc(const cradle_game_contract *k) {
    void *p = aligned_alloc(k->state_align, (k->state_size + k->state_align - 1) / k->state_align * k->state_align);
    assert_non_null(p);
    return p;
}

static void test_vanguard_scene_matches_reference(void **unused) {
    (void)unused;
    const cradle_game_contract *k = vanguard_contract();
    void *state = state_alloc(k), *previous = state_alloc(k);
    cradle_sim sim;
    cradle_sim_config sc = {.state = state, .previous = previous,
                            .state_capacity = (k->state_size + k->state_align - 1) / k->state_align * k->state_align,
                            .hash = cradle_hash64};
    assert_int_equal(cradle_sim_init(&sim, &sc, k, NULL, 0), 0);
    assert_int_equal(cradle_sim_start(&sim, 7, 4), 0);
    uint32_t size_ = cradle_snapshot_size(k->max_players, k->input_bytes);
    uint8_t snapshot[64];
    assert_true(size_ <= sizeof snapshot);
    static cradle_particle storage[512];
    cradle_present present;
    cradle_present_init(&present, storage, 512, 99);
    cradle_fx fx = cradle_present_fx(&present);
    pair p;
    pair_init(&p, 960, 540, 964, k->view_width, k->view_height, 3);
    for (uint64_t s = 0; s < 300; s++) {
        memset(snapshot, 0, size_);
        for (uint32_t slot = 0; slot < 4; slot++) {
            snapshot[slot / 8] |= (uint8_t)(1u << (slot % 8));
            assert_true(vanguard_input_pack(snapshot + CRADLE_PRESENCE_BYTES(k->max_players) + slot, 1,
                                            vanguard_bot_actions(state, slot, s)));
        }
        cradle_sim_step(&sim, snapshot);
        if (s % 100 != 99) continue;
        /* A frame every 100 steps: black, the game, particles, letterbox, HUD. */
        fx.burst(fx.context, 320.0f, 180.0f, 64, 0xffab40ffu, 150.0f, 1.0f);
        cradle_present_update(&present, 0.1f);
        ref_frame(&p.ref, present.shake_x, present.shake_y + 0.5f);
        cradle_softdraw_frame(&p.sd, present.shake_x, present.shake_y + 0.5f);
        cradle_draw rw = ref_draw_for(&p.ref.world), rs = ref_draw_for(&p.ref.screen);
        cradle_draw sw = cradle_softdraw_world(&p.sd), ss = cradle_softdraw_screen(&p.sd);
        rw.clear(rw.context, 0x000000ffu);
        cradle_softdraw_clear(&p.sd, 0x000000ffu);
        k->render(previous, state, 0.5f, &rw);
        k->render(previous, state, 0.5f, &sw);
        cradle_present_draw(&present, &rw);
        cradle_present_draw(&present, &sw);
        ref_letterbox(&p.ref);
        cradle_softdraw_letterbox(&p.sd);
        cradle_hud_info hud = {.step = s, .rtt_ms = 1.25, .input_delay = 3, .players = 4, .player_limit = 8,
                               .fps = 60.0, .banner = "DESYNC", .detail = "FIRST DIFFERING STEP 299",
                               .banner_rgba = 0xffab40ffu};
        cradle_hud_draw(&hud, &rs, 960, 540);
        cradle_hud_draw(&hud, &ss, 960, 540);
        pair_compare(&p, "vanguard scene", 7, (int)s);
    }
    pair_free(&p);
    free(state);
    free(previous);
}

/* ---- the HUD over the game ---- */

/* The panel is opaque: with the game white everywhere under it (shots
 * crossing the bottom right corner), every pixel inside it is the panel's
 * colour or its text's, never a blend with the game. A long line widens it
 * so that no text leaves it. */
static void test_hud_panel_hides_the_game(void **unused) {
    (void)unused;
    enum { W = 960, H = 540 };
    uint32_t *px = calloc((size_t)W * H, sizeof *px);
    assert_non_null(px);
    cradle_softdraw sd;
    cradle_softdraw_init(&sd, px, W, H, W, W, H);
    cradle_softdraw_clear(&sd, 0x000000ffu);
    cradle_softdraw_frame(&sd, 0.0f, 0.0f);
    cradle_draw world = cradle_softdraw_world(&sd), screen = cradle_softdraw_screen(&sd);
    world.rect(world.context, 0.0f, 0.0f, (float)W, (float)H, 0xffffffffu);
    cradle_hud_info hud = {.step = 123456, .rtt_ms = 0.25, .input_delay = 2, .players = 4, .player_limit = 8,
                           .slot = 0, .fps = 60.0, .mode = "BROADCAST 13.5 S BEHIND"};
    cradle_hud_draw(&hud, &screen, W, H);
    cradle_softdraw_finish(&sd);
    cradle_hud_rect r = cradle_hud_panel(&hud, W, H);
    assert_true(r.w >= (float)strlen(hud.mode) * 8.0f);
    assert_true(r.x >= 0.0f && r.y >= 0.0f && r.x + r.w <= (float)W && r.y + r.h <= (float)H);
    uint32_t panel = 0xff000000u | (CRADLE_HUD_PANEL_RGBA >> 8), text = 0xff000000u | (CRADLE_HUD_TEXT_RGBA >> 8);
    size_t text_pixels = 0;
    for (int y = (int)ceilf(r.y) + 1; y < (int)(r.y + r.h) - 1; y++)
        for (int x = (int)ceilf(r.x) + 1; x < (int)(r.x + r.w) - 1; x++) {
            uint32_t p = px[(size_t)y * W + (size_t)x];
            if (p != panel && p != text) fail_msg("pixel (%d, %d) inside the panel is %08x: the game shows through", x, y, p);
            text_pixels += p == text;
        }
    assert_true(text_pixels > 100); /* the figures are there */
    free(px);
}

/* ---- the deferred clear ---- */

static void test_clear_is_painted_by_the_next_shape_or_finish(void **unused) {
    (void)unused;
    uint32_t px[8 * 4];
    for (size_t i = 0; i < 32; i++) px[i] = 0x12345678u;
    cradle_softdraw sd;
    cradle_softdraw_init(&sd, px, 8, 4, 8, 8, 4);
    cradle_draw d = cradle_softdraw_screen(&sd);
    d.clear(d.context, 0x0000ffffu);
    d.clear(d.context, 0xff000000u); /* alpha ignored: opaque red */
    assert_int_equal(px[0], 0x12345678u); /* only noted so far */
    d.rect(d.context, 1.0f, 1.0f, 2.0f, 1.0f, 0x00ff00ffu);
    assert_int_equal(px[0], 0xffff0000u);  /* the last clear, painted first */
    assert_int_equal(px[8 + 1], 0xff00ff00u);
    assert_int_equal(px[31], 0xffff0000u);
    d.clear(d.context, 0x0000ffffu);
    d.rect(d.context, 0.0f, 0.0f, 1.0f, 1.0f, 0x00000000u); /* invisible: paints nothing */
    cradle_softdraw_finish(&sd);
    assert_int_equal(px[0], 0xff0000ffu);
    assert_int_equal(px[31], 0xff0000ffu);
    cradle_softdraw_finish(&sd); /* nothing pending: no change */
    assert_int_equal(px[5], 0xff0000ffu);
}

/* ---- inputs the reference could not take ---- */

static void test_nonfinite_and_huge_stay_inside(void **unused) {
    (void)unused;
    enum { W = 16, H = 8, PITCH = 20 };
    uint32_t px[PITCH * H];
    for (size_t i = 0; i < PITCH * H; i++) px[i] = 0xdeadbeefu;
    cradle_softdraw sd;
    cradle_softdraw_init(&sd, px, W, H, PITCH, 8, 4);
    cradle_draw d = cradle_softdraw_world(&sd);
    const float bad[] = {NAN, INFINITY, -INFINITY, 3e9f, -3e9f, 1e30f, -1e30f, 0.0f, 4.0f};
    const size_t nb = sizeof bad / sizeof bad[0];
    for (size_t i = 0; i < nb; i++)
        for (size_t j = 0; j < nb; j++) {
            float a = bad[i], b = bad[j];
            d.rect(d.context, a, b, b, a, 0xffffffffu);
            d.rect_outline(d.context, b, a, a, b, 0xffffff80u);
            d.line(d.context, a, b, 2.0f, 2.0f, 0xffffffffu);
            d.line(d.context, 1.0f, 1.0f, a, b, 0xffffff80u);
            d.triangle(d.context, a, 1.0f, 3.0f, b, 1.0f, 3.0f, 0xffffffffu);
            d.triangle(d.context, a, b, b, a, 2.0f, 2.0f, 0xffffff40u);
            d.text(d.context, a, b, 1.0f, 0xffffffffu, "AB");
        }
    cradle_softdraw_finish(&sd);
    for (int y = 0; y < H; y++)
        for (int x = W; x < PITCH; x++) assert_int_equal(px[y * PITCH + x], 0xdeadbeefu);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_calls_match_reference),
        cmocka_unit_test(test_vanguard_scene_matches_reference),
        cmocka_unit_test(test_hud_panel_hides_the_game),
        cmocka_unit_test(test_clear_is_painted_by_the_next_shape_or_finish),
        cmocka_unit_test(test_nonfinite_and_huge_stay_inside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
