#ifndef CRADLE_CLIENT_WATCH_H
#define CRADLE_CLIENT_WATCH_H
/*
 * watch: --watch URL shows a broadcast (cradle-server --broadcast) through
 * any HTTP cache, --delay S behind live (default 6 s).
 *
 * A mirror (broadcast_mirror.h) fetches the sync document, a keyframe and
 * the fragments after it into a session log in a temporary folder, and the
 * replay driver plays that log as it grows, from the keyframe's state,
 * checking every recorded hash like a spectator. Playback follows the
 * server's clock: step s is shown `delay` after the server ran it (the sync
 * document says which step ran when); when fragments are late the picture
 * waits (BUFFERING) and then catches up. A gap in the broadcast (fragments
 * the server could not upload) starts the replay again at the next
 * keyframe after it. The build: --game, as for a client; a hot reload in
 * the session needs --game to be the new build by then.
 *
 * Headless, it plays until the broadcast ends (or --steps, SIGINT, SIGTERM)
 * and prints
 *   {"event":"watched","steps":N,"first_step":F,"last_step":L,
 *    "hashes_checked":H,"hash_mismatches":0,"segments":S,"refused":R,
 *    "delay_ms":D,"over_delay_ms_p50":..,"over_delay_ms_p99":..,
 *    "over_delay_ms_max":..,"ended":true,"final_hash":"<hex>",
 *    "verdict":"ok"}
 * where first_step is the first step shown (a viewer starts at a keyframe
 * and runs the steps after it at once, up to the step due), and over_delay
 * is how much later than the chosen delay the picture was, sampled at each
 * step shown and while buffering (the time since the server ran the step
 * on screen, less the delay).
 * Exit 0 when every hash matched, 1 otherwise.
 */
#include <stdbool.h>
#include <stdint.h>

#include "cradle/broadcast_mirror.h"
#include "cradle/replay.h"
#include "options.h"
#include "watch_hud.h"

#define CRADLE_WATCH_LATENCY_SAMPLES 65536u
#define CRADLE_WATCH_DEFAULT_DELAY_S 6u

typedef struct cradle_watch {
    const cradle_client_options *options;
    char dir[4096];                 /* the mirror's temporary folder */
    cradle_broadcast_mirror *mirror;
    cradle_broadcast_mirror_view view;
    cradle_replay replay;
    bool replay_open;
    uint32_t segment;               /* the mirror's segment the replay plays */
    uint8_t *key_state;
    uint32_t key_capacity;
    uint8_t *snapshot;              /* the last step's snapshot (the HUD's players) */
    uint32_t delay_ms;
    uint64_t steps;                 /* steps run, over every segment */
    uint64_t first_step, last_step; /* the first step shown; the last run (on screen) */
    uint64_t hashes_checked, hash_mismatches;
    uint64_t mismatch_step;
    uint32_t segments;
    bool buffering;                 /* a step was due and not there */
    bool ended;                     /* the broadcast's last step was shown */
    char reported[CRADLE_BROADCAST_MESSAGE_MAX]; /* the mirror's last error, said once */
    int32_t over_delay_ms[CRADLE_WATCH_LATENCY_SAMPLES];
    uint32_t samples;
    int64_t behind_ms;              /* the last shown step's time behind live */
    char error[CRADLE_REPLAY_MESSAGE_MAX];
} cradle_watch;

/* --watch: headless or in a window. Returns the exit status. */
int cradle_client_watch(const cradle_client_options *o);

/* What the headless viewer and the window's source (both in watch.c) use. */

/* Opens the mirror. Returns 0, or -1 with w->error. */
int cradle_watch_open(cradle_watch *w, const cradle_client_options *o);

/* Runs the steps due at now_unix_ms (at most max), reopening the replay at
 * a new segment. Returns the steps run, or -1 with w->error. */
int cradle_watch_advance(cradle_watch *w, uint64_t now_unix_ms, uint32_t max);

/* The replay in charge, or NULL before the first segment. */
cradle_replay *cradle_watch_replay(cradle_watch *w);

/* The HUD's mode line ("BROADCAST 6.2 S BEHIND") and, when something is
 * wrong, a banner and its detail. */
void cradle_watch_hud(const cradle_watch *w, cradle_watch_hud_out *out);

/* Prints the summary line; returns the exit status. */
int cradle_watch_summary(cradle_watch *w);

void cradle_watch_close(cradle_watch *w);

#endif
