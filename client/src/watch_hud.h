#ifndef CRADLE_CLIENT_WATCH_HUD_H
#define CRADLE_CLIENT_WATCH_HUD_H
/*
 * watch_hud: what a broadcast's viewer says on its HUD, the same words in
 * cradle-client --watch (watch.c) and in the browser's viewer (client/web):
 * the mode line ("BROADCAST 6.2 S BEHIND") and, when something is wrong or
 * waiting, a banner, its detail and its colour. Pure: text only.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cradle_watch_hud_in {
    bool playing;          /* a segment's replay is open */
    int64_t behind_ms;     /* how far behind live the picture is */
    const char *error;     /* "" or why the viewer stopped */
    uint64_t mismatch_step; /* the first hash mismatch's step + 1; 0: none */
    bool ended, buffering;
    uint64_t steps;        /* steps shown */
    const char *fetch_error; /* "" or the last refusal or failed fetch */
    const char *url;       /* the broadcast's */
} cradle_watch_hud_in;

typedef struct cradle_watch_hud_out {
    char mode[48];
    const char *banner;    /* NULL: none */
    char detail[112];
    uint32_t banner_rgba;  /* red for an error or a mismatch, green at the end, orange else */
} cradle_watch_hud_out;

void cradle_watch_hud_text(const cradle_watch_hud_in *in, cradle_watch_hud_out *out);

#endif
