/*
 * render_sdl: cradle_draw over SDL_Renderer (see render_sdl.h).
 */
#include "render_sdl.h"

#include <stdio.h>

#include "font8x8.h"

#define ATLAS_COLUMNS 16u /* glyphs 32..127: 16 x 6 cells of 8x8 */
#define ATLAS_ROWS 6u

/* Opaque colours draw without blending: SDL's software renderer blends per
 * pixel whenever the blend mode is BLEND, even at alpha 255, and that path is
 * several times slower. */
static void set_colour(SDL_Renderer *renderer, uint32_t rgba) {
    SDL_SetRenderDrawBlendMode(renderer, (rgba & 0xFFu) == 0xFFu ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawColor(renderer, (Uint8)(rgba >> 24), (Uint8)(rgba >> 16), (Uint8)(rgba >> 8), (Uint8)rgba);
}

static void draw_clear(void *context, uint32_t rgba) {
    cradle_render_view *v = context;
    set_colour(v->renderer, rgba);
    SDL_RenderClear(v->renderer);
}

static void draw_rect(void *context, float x, float y, float w, float h, uint32_t rgba) {
    cradle_render_view *v = context;
    set_colour(v->renderer, rgba);
    SDL_FRect rect = {x * v->scale + v->offset_x, y * v->scale + v->offset_y, w * v->scale, h * v->scale};
    SDL_RenderFillRectF(v->renderer, &rect);
}

static void draw_outline(void *context, float x, float y, float w, float h, uint32_t rgba) {
    cradle_render_view *v = context;
    set_colour(v->renderer, rgba);
    SDL_FRect rect = {x * v->scale + v->offset_x, y * v->scale + v->offset_y, w * v->scale, h * v->scale};
    SDL_RenderDrawRectF(v->renderer, &rect);
}

static void draw_line(void *context, float x0, float y0, float x1, float y1, uint32_t rgba) {
    cradle_render_view *v = context;
    set_colour(v->renderer, rgba);
    SDL_RenderDrawLineF(v->renderer, x0 * v->scale + v->offset_x, y0 * v->scale + v->offset_y,
                        x1 * v->scale + v->offset_x, y1 * v->scale + v->offset_y);
}

static void draw_triangle(void *context, float x0, float y0, float x1, float y1, float x2, float y2,
                          uint32_t rgba) {
    cradle_render_view *v = context;
    SDL_SetRenderDrawBlendMode(v->renderer, (rgba & 0xFFu) == 0xFFu ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
    SDL_Color c = {(Uint8)(rgba >> 24), (Uint8)(rgba >> 16), (Uint8)(rgba >> 8), (Uint8)rgba};
    SDL_Vertex vertices[3] = {
        {{x0 * v->scale + v->offset_x, y0 * v->scale + v->offset_y}, c, {0, 0}},
        {{x1 * v->scale + v->offset_x, y1 * v->scale + v->offset_y}, c, {0, 0}},
        {{x2 * v->scale + v->offset_x, y2 * v->scale + v->offset_y}, c, {0, 0}},
    };
    SDL_RenderGeometry(v->renderer, NULL, vertices, 3, NULL, 0);
}

static void draw_text(void *context, float x, float y, float scale, uint32_t rgba, const char *text) {
    cradle_render_view *v = context;
    if (!v->font || !text) return;
    SDL_SetTextureColorMod(v->font, (Uint8)(rgba >> 24), (Uint8)(rgba >> 16), (Uint8)(rgba >> 8));
    SDL_SetTextureAlphaMod(v->font, (Uint8)rgba);
    float cell = 8.0f * scale * v->scale;
    float px = x * v->scale + v->offset_x, py = y * v->scale + v->offset_y;
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        unsigned g = (*c >= 32u && *c < 128u) ? *c - 32u : (unsigned)('?' - 32);
        if (*c != ' ') {
            SDL_Rect src = {(int)(g % ATLAS_COLUMNS) * 8, (int)(g / ATLAS_COLUMNS) * 8, 8, 8};
            SDL_FRect dst = {px, py, cell, cell};
            SDL_RenderCopyF(v->renderer, v->font, &src, &dst);
        }
        px += cell;
    }
}

static cradle_draw draw_for(cradle_render_view *v) {
    return (cradle_draw){.context = v,
                         .clear = draw_clear,
                         .rect = draw_rect,
                         .rect_outline = draw_outline,
                         .line = draw_line,
                         .triangle = draw_triangle,
                         .text = draw_text};
}

int cradle_render_sdl_init(cradle_render_sdl *r, SDL_Renderer *renderer, uint32_t view_w, uint32_t view_h,
                           char *message, size_t message_size) {
    SDL_memset(r, 0, sizeof *r);
    r->renderer = renderer;
    r->view_w = view_w ? view_w : 1u;
    r->view_h = view_h ? view_h : 1u;
    SDL_Surface *atlas = SDL_CreateRGBSurfaceWithFormat(0, (int)ATLAS_COLUMNS * 8, (int)ATLAS_ROWS * 8, 32,
                                                        SDL_PIXELFORMAT_RGBA32);
    if (!atlas) goto out_error;
    for (unsigned g = 0; g < ATLAS_COLUMNS * ATLAS_ROWS; g++) {
        for (unsigned row = 0; row < 8; row++) {
            uint8_t bits = cradle_font8x8_row((unsigned char)(g + 32u), row);
            Uint32 *line = (Uint32 *)(void *)((Uint8 *)atlas->pixels +
                                              (size_t)((g / ATLAS_COLUMNS) * 8u + row) * (size_t)atlas->pitch);
            for (unsigned col = 0; col < 8; col++)
                line[(g % ATLAS_COLUMNS) * 8u + col] =
                    (bits & (0x80u >> col)) ? SDL_MapRGBA(atlas->format, 255, 255, 255, 255)
                                            : SDL_MapRGBA(atlas->format, 255, 255, 255, 0);
        }
    }
    r->font = SDL_CreateTextureFromSurface(renderer, atlas);
    SDL_FreeSurface(atlas);
    if (!r->font) goto out_error;
    SDL_SetTextureBlendMode(r->font, SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_BLEND);
    cradle_render_sdl_frame(r, 0.0f, 0.0f);
    return 0;
out_error:
    snprintf(message, message_size, "cannot build the font texture: %s", SDL_GetError());
    return -1;
}

void cradle_render_sdl_frame(cradle_render_sdl *r, float shake_x, float shake_y) {
    if (SDL_GetRendererOutputSize(r->renderer, &r->output_w, &r->output_h) != 0) {
        r->output_w = (int)r->view_w;
        r->output_h = (int)r->view_h;
    }
    float sx = (float)r->output_w / (float)r->view_w, sy = (float)r->output_h / (float)r->view_h;
    float s = sx < sy ? sx : sy;
    r->world = (cradle_render_view){.renderer = r->renderer,
                                    .font = r->font,
                                    .scale = s,
                                    .offset_x = ((float)r->output_w - (float)r->view_w * s) / 2.0f + shake_x * s,
                                    .offset_y = ((float)r->output_h - (float)r->view_h * s) / 2.0f + shake_y * s};
    r->screen = (cradle_render_view){.renderer = r->renderer, .font = r->font, .scale = 1.0f};
}

cradle_draw cradle_render_sdl_world(cradle_render_sdl *r) { return draw_for(&r->world); }
cradle_draw cradle_render_sdl_screen(cradle_render_sdl *r) { return draw_for(&r->screen); }

void cradle_render_sdl_letterbox(cradle_render_sdl *r) {
    float s = r->world.scale;
    float w = (float)r->view_w * s, h = (float)r->view_h * s;
    float x0 = ((float)r->output_w - w) / 2.0f, y0 = ((float)r->output_h - h) / 2.0f;
    SDL_SetRenderDrawColor(r->renderer, 0, 0, 0, 255);
    SDL_FRect bars[4] = {{0, 0, (float)r->output_w, y0},
                         {0, y0 + h, (float)r->output_w, (float)r->output_h - y0 - h},
                         {0, 0, x0, (float)r->output_h},
                         {x0 + w, 0, (float)r->output_w - x0 - w, (float)r->output_h}};
    SDL_RenderFillRectsF(r->renderer, bars, 4);
}

void cradle_render_sdl_deinit(cradle_render_sdl *r) {
    if (r->font) SDL_DestroyTexture(r->font);
    r->font = NULL;
}
