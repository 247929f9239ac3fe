#ifndef CRADLE_CLIENT_HUD_H
#define CRADLE_CLIENT_HUD_H
/*
 * hud: the client-side figures drawn over the game (step, round-trip time,
 * input delay, players, slot, catch-up backlog, prediction: steps ahead and
 * rollbacks, frame rate) and a banner for
 * desync, a lost connection or a wait. The game's own render() draws its
 * scores. Pure: draws through cradle_draw in screen pixels.
 */
#include <stdint.h>

#include "cradle/game_abi.h"
#include "cradle/replay.h"

typedef struct cradle_hud_info {
    uint64_t step;
    double rtt_ms;           /* < 0: not measured */
    int input_delay;         /* < 0: not applicable (--play) */
    uint32_t players, player_limit;
    int slot;                /* -1 spectator, -2 none (--play) */
    uint64_t pending;        /* received steps not yet run */
    uint32_t window;         /* a player's prediction window; 0: no prediction lines (lockstep) */
    int ahead;               /* steps the picture is predicted past the confirmed one (up to
                                window); < 0: prediction ended ("PREDICTION OFF") */
    double rollbacks_per_s, mean_depth; /* over the last second */
    uint32_t max_depth;      /* the deepest rollback of the session */
    double fps;
    const char *mode;        /* NULL, or e.g. "PLAY x2" / "PAUSED" */
    const char *build;       /* NULL, or the build in charge (--play: it changes at reloads) */
    const char *banner;      /* NULL = none */
    const char *detail;      /* second banner line, may be NULL */
    uint32_t banner_rgba;
} cradle_hud_info;

#define CRADLE_HUD_LINES 11
#define CRADLE_HUD_PANEL_RGBA 0x101418ffu /* opaque: nothing of the game shows through */
#define CRADLE_HUD_TEXT_RGBA 0xb0bec5ffu

typedef struct cradle_hud_rect {
    float x, y, w, h;
} cradle_hud_rect;

/* Draws the panel of figures in the bottom right corner and the banner, if
 * any, in the middle: each on an opaque box over whatever the game drew. */
void cradle_hud_draw(const cradle_hud_info *info, const cradle_draw *screen, int width, int height);

/* Where cradle_hud_draw() puts the panel for info on a width x height screen. */
cradle_hud_rect cradle_hud_panel(const cradle_hud_info *info, int width, int height);

/* What --play, --watch and the browser's viewer show for a replay (NULL:
 * none yet): its step, the players present in its last step's snapshot
 * (NULL: none), the log's player count; no round trip, input delay or slot. */
void cradle_client_replay_hud(const cradle_replay *r, const uint8_t *snapshot, cradle_hud_info *hud);

#endif
