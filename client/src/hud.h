#ifndef CRADLE_CLIENT_HUD_H
#define CRADLE_CLIENT_HUD_H
/*
 * hud: the client-side figures drawn over the game (step, round-trip time,
 * input delay, players, slot, catch-up backlog, frame rate) and a banner for
 * desync, a lost connection or a wait. The game's own render() draws its
 * scores. Pure: draws through cradle_draw in screen pixels.
 */
#include <stdint.h>

#include "cradle/game_abi.h"

typedef struct cradle_hud_info {
    uint64_t step;
    double rtt_ms;           /* < 0: not measured */
    int input_delay;         /* < 0: not applicable (--play) */
    uint32_t players, player_limit;
    int slot;                /* -1 spectator, -2 none (--play) */
    uint64_t pending;        /* received steps not yet run */
    double fps;
    const char *mode;        /* NULL, or e.g. "PLAY x2" / "PAUSED" */
    const char *banner;      /* NULL = none */
    const char *detail;      /* second banner line, may be NULL */
    uint32_t banner_rgba;
} cradle_hud_info;

void cradle_hud_draw(const cradle_hud_info *info, const cradle_draw *screen, int width, int height);

#endif
