/*
 * soft_frame: a whole frame in software, RGBA (see soft_frame.h).
 */
#include "soft_frame.h"

#include <stddef.h>

void cradle_soft_frame_draw(cradle_softdraw *s, const cradle_soft_frame *f) {
    const cradle_present *p = f->present;
    cradle_softdraw_clear(s, 0x000000ffu);
    cradle_softdraw_frame(s, p ? p->shake_x : 0.0f, p ? p->shake_y : 0.0f);
    cradle_draw world = cradle_softdraw_world(s), screen = cradle_softdraw_screen(s);
    if (f->game && f->game->render) f->game->render(f->previous, f->state, f->alpha, &world);
    if (p) cradle_present_draw(p, &world);
    cradle_softdraw_letterbox(s);
    if (f->hud) cradle_hud_draw(f->hud, &screen, s->width, s->height);
    cradle_softdraw_finish(s);
    /* 0xAARRGGBB words to the R, G, B, A bytes an ImageData holds (a
     * little-endian word 0xAABBGGRR) */
    for (int y = 0; y < s->height; y++) {
        uint32_t *row = s->pixels + (size_t)y * (size_t)s->pitch;
        for (int x = 0; x < s->width; x++) {
            uint32_t c = row[x];
            row[x] = (c & 0xff00ff00u) | ((c >> 16) & 0xffu) | ((c & 0xffu) << 16);
        }
    }
}
