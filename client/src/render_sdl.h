#ifndef CRADLE_CLIENT_RENDER_SDL_H
#define CRADLE_CLIENT_RENDER_SDL_H
/*
 * render_sdl: the game ABI's cradle_draw over an SDL_Renderer.
 *
 * Two views share one renderer: the world view maps the game's view
 * (view_width x view_height world units) into the output, letterboxed and
 * centred, plus the frame's shake offset; the screen view draws in output
 * pixels (the HUD). Text uses the client's 8x8 font (font8x8.c), expanded at
 * init into a white glyph atlas texture and tinted per call.
 */
#include <SDL.h>
#include <stdint.h>

#include "cradle/game_abi.h"

typedef struct cradle_render_view {
    SDL_Renderer *renderer;
    SDL_Texture *font;
    float scale, offset_x, offset_y;
} cradle_render_view;

typedef struct cradle_render_sdl {
    SDL_Renderer *renderer;
    SDL_Texture *font;
    cradle_render_view world, screen;
    int output_w, output_h;
    uint32_t view_w, view_h;
} cradle_render_sdl;

/* Builds the font atlas. Returns 0 or -1 with message set (SDL's error). */
int cradle_render_sdl_init(cradle_render_sdl *r, SDL_Renderer *renderer, uint32_t view_w, uint32_t view_h,
                           char *message, size_t message_size);

/* Recomputes the views for the renderer's current output size and the
 * frame's shake (world units). Call once per frame before drawing. */
void cradle_render_sdl_frame(cradle_render_sdl *r, float shake_x, float shake_y);

cradle_draw cradle_render_sdl_world(cradle_render_sdl *r);
cradle_draw cradle_render_sdl_screen(cradle_render_sdl *r);

/* Fills the area outside the letterboxed view (call after the world drew). */
void cradle_render_sdl_letterbox(cradle_render_sdl *r);

void cradle_render_sdl_deinit(cradle_render_sdl *r);

#endif
