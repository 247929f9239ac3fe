#ifndef CRADLE_CLIENT_SOFT_FRAME_H
#define CRADLE_CLIENT_SOFT_FRAME_H
/*
 * soft_frame: one whole frame in software, as the browser's viewer shows it
 * (client/web/viewer.c): cleared to black, the game's render() between the
 * state one step earlier and the newest at alpha, the particles and shake
 * of react() (present.h), the letterbox, the HUD when given, and the
 * buffer's 0xAARRGGBB words turned into the R, G, B, A bytes a canvas's
 * ImageData holds. The suite's native reference frame (cradle-softframe)
 * and the frame benchmark draw through it too, so all three are the same
 * pixels. Pure: no allocation, no OS.
 */
#include "cradle/game_abi.h"
#include "hud.h"
#include "present.h"
#include "softdraw.h"

typedef struct cradle_soft_frame {
    const cradle_game_contract *game; /* NULL: no game yet (a black frame, the HUD) */
    const void *previous, *state;     /* previous may equal state (no step before it) */
    float alpha;
    const cradle_present *present;    /* NULL: no particles, no shake */
    const cradle_hud_info *hud;       /* NULL: no HUD */
} cradle_soft_frame;

/* Draws f into s (initialised at the frame's size); s->pixels then hold
 * width x height RGBA pixels, byte by byte. */
void cradle_soft_frame_draw(cradle_softdraw *s, const cradle_soft_frame *f);

#endif
