#ifndef CRADLE_CLIENT_SOFTDRAW_H
#define CRADLE_CLIENT_SOFTDRAW_H
/*
 * softdraw: the game ABI's cradle_draw rasterized by the client itself into
 * a caller-provided 32-bit pixel buffer (0xAARRGGBB per uint32, SDL's
 * ARGB8888), without SDL. SDL's software renderer pays a few microseconds per
 * draw call, too slow for thousands of entities; this draws spans directly.
 * The window uses it when SDL only offers a software renderer (and uploads
 * the buffer as one streaming texture); the benchmark measures both.
 *
 * Like render_sdl, a world view (the game's view letterboxed into the
 * buffer, plus shake) and a screen view (pixels) share the buffer. Opaque
 * colours store, others blend (src * a + dst * (255 - a)) / 255. Pure: no
 * allocation, no OS.
 */
#include <stdint.h>

#include "cradle/game_abi.h"

typedef struct cradle_softdraw_view {
    struct cradle_softdraw *target;
    float scale, offset_x, offset_y;
} cradle_softdraw_view;

typedef struct cradle_softdraw {
    uint32_t *pixels;  /* caller's, width x height, rows pitch pixels apart */
    int width, height, pitch;
    uint32_t view_w, view_h;
    cradle_softdraw_view world, screen;
    uint8_t glyphs[96][8]; /* ASCII 32..127, rows of font8x8 */
} cradle_softdraw;

void cradle_softdraw_init(cradle_softdraw *s, uint32_t *pixels, int width, int height, int pitch,
                          uint32_t view_w, uint32_t view_h);

/* Recomputes the world view with this frame's shake (world units). */
void cradle_softdraw_frame(cradle_softdraw *s, float shake_x, float shake_y);

cradle_draw cradle_softdraw_world(cradle_softdraw *s);
cradle_draw cradle_softdraw_screen(cradle_softdraw *s);

/* Blacks out the area outside the letterboxed view. */
void cradle_softdraw_letterbox(cradle_softdraw *s);

#endif
