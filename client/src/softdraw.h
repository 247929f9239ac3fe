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
 * colours store, others blend (src * a + dst * (255 - a)) >> 8 per channel.
 * Pure: no allocation, no OS.
 *
 * Clears are deferred: a clear only notes its colour, and the buffer is
 * painted with the last one noted when the next shape is drawn or at
 * cradle_softdraw_finish. Clearing to black and then to the game's own
 * colour (what the window does each frame) thus writes the frame once. After
 * a clear, the buffer holds the frame only once cradle_softdraw_finish ran.
 *
 * Coordinates beyond +-2^30 pixels are clamped to that before they become
 * integers (the first version converted them with undefined behaviour).
 */
#include <stdbool.h>
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
    bool clear_pending;
    uint32_t clear_argb;
    uint8_t glyphs[96][8]; /* ASCII 32..127, rows of font8x8 */
} cradle_softdraw;

/* Draws into the caller's pixels (kept until the next init); pitch >= width. */
void cradle_softdraw_init(cradle_softdraw *s, uint32_t *pixels, int width, int height, int pitch,
                          uint32_t view_w, uint32_t view_h);

/* Notes a clear of the whole buffer to rgba (alpha ignored: always opaque),
 * painted at the next shape or at cradle_softdraw_finish. */
void cradle_softdraw_clear(cradle_softdraw *s, uint32_t rgba);

/* Paints a pending clear; the buffer then holds every call made so far. */
void cradle_softdraw_finish(cradle_softdraw *s);

/* Recomputes the world view with this frame's shake (world units). */
void cradle_softdraw_frame(cradle_softdraw *s, float shake_x, float shake_y);

cradle_draw cradle_softdraw_world(cradle_softdraw *s);
cradle_draw cradle_softdraw_screen(cradle_softdraw *s);

/* Blacks out the area outside the letterboxed view. */
void cradle_softdraw_letterbox(cradle_softdraw *s);

#endif
