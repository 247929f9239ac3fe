/*
 * watch: --watch URL (see watch.h). The mirror fetches; this file plays the
 * mirror's log on the server's clock, delay behind live.
 */
#include "watch.h"

#include <SDL.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cradle/os.h"
#include "cradle/systime.h"
#include "play.h"
#include "session_run.h"
#include "window.h"

#define EVENTS 1024u
#define FIRST_SEGMENT_TIMEOUT_MS 30000u /* no broadcast to show after this: an error */

static void warn(void *context, const char *message) {
    (void)context;
    fprintf(stderr, "cradle-client: --watch: warning: %s\n", message);
}

int cradle_watch_open(cradle_watch *w, const cradle_client_options *o) {
    w->options = o;
    w->delay_ms = (o->delay_s ? o->delay_s : CRADLE_WATCH_DEFAULT_DELAY_S) * 1000u;
    w->first_step = UINT64_MAX;
    snprintf(w->dir, sizeof w->dir, "%s/cradle-watch-XXXXXX", cradle_os_tmpdir());
    if (!mkdtemp(w->dir)) {
        snprintf(w->error, sizeof w->error, "cannot create a folder in %s for the broadcast's mirror", cradle_os_tmpdir());
        w->dir[0] = '\0';
        return -1;
    }
    /* The keyframe's state: as large as a replay of the game holds. */
    w->key_capacity = CRADLE_REPLAY_MIN_CAPACITY * 16u;
    w->key_state = malloc(w->key_capacity);
    if (!w->key_state) {
        snprintf(w->error, sizeof w->error, "out of memory");
        return -1;
    }
    cradle_broadcast_mirror_config config = {.url = o->watch,
                                             .dir = w->dir,
                                             .delay_ms = w->delay_ms,
                                             .state_capacity = w->key_capacity,
                                             .verify_key = o->verify ? o->verify_key : NULL};
    char why[CRADLE_BROADCAST_MESSAGE_MAX];
    if (cradle_broadcast_mirror_open(&w->mirror, &config, why, sizeof why) != 0) {
        snprintf(w->error, sizeof w->error, "%s", why);
        return -1;
    }
    return 0;
}

cradle_replay *cradle_watch_replay(cradle_watch *w) { return w->replay_open ? &w->replay : NULL; }

/* The hashes of the segment that ends count in the viewer's totals. */
static void close_segment(cradle_watch *w) {
    if (!w->replay_open) return;
    w->hashes_checked += w->replay.hashes_checked;
    w->hash_mismatches += w->replay.hash_mismatches;
    cradle_replay_close(&w->replay);
    w->replay_open = false;
}

/* The replay of the mirror's current segment, from its keyframe. Returns
 * 0 (also while there is none yet) or -1 with w->error. */
static int open_segment(cradle_watch *w) {
    if (w->view.segment == 0 || w->view.segment == w->segment) return 0;
    uint32_t size = 0;
    if (w->view.keyed) {
        size = cradle_broadcast_mirror_keyframe(w->mirror, w->view.segment, w->key_state, w->key_capacity);
        if (size == 0) return 0; /* the mirror moved on meanwhile: the next view */
    }
    close_segment(w);
    cradle_replay_config config = {.log_path = w->view.log_path,
                                   .game_path = w->options->game,
                                   .keep_previous = true,
                                   .event_capacity = EVENTS,
                                   .reload_game_path = true,
                                   .log_bytes = w->view.bytes,
                                   .warn = warn};
    if (w->view.keyed) {
        config.start_state = w->key_state;
        config.start_state_size = size;
        config.start_step = w->view.start_step;
        config.start_build = w->view.start_build;
    }
    if (cradle_replay_open(&w->replay, &config) != 0) {
        snprintf(w->error, sizeof w->error, "%s", w->replay.message);
        return -1;
    }
    w->replay_open = true;
    w->segment = w->view.segment;
    w->segments++;
    free(w->snapshot);
    w->snapshot = calloc(1, w->replay.reader.header.snapshot_size);
    if (!w->snapshot) {
        snprintf(w->error, sizeof w->error, "out of memory");
        return -1;
    }
    return 0;
}

/* The step the server ran at unix time t (ms), from the sync document's
 * live step: it ran step live.step - 1 at live.unix_ms. */
static int64_t server_ms_of_step(const cradle_watch *w, uint64_t step) {
    const cradle_broadcast_sync *s = &w->view.sync;
    int64_t steps_before_live = (int64_t)s->live_step - 1 - (int64_t)step;
    return (int64_t)s->live_unix_ms - steps_before_live * 1000 / (int64_t)s->steps_per_second;
}

/* How far behind live the picture is now: the last step run is the one
 * shown. Steps run on the way to it in the same advance (a catch-up from a
 * keyframe, or after buffering) are never on screen and are not sampled;
 * while buffering, the picture's age grows and is. */
static void take_sample(cradle_watch *w, uint64_t now_unix_ms) {
    if (!w->steps) return;
    if (w->first_step == UINT64_MAX) w->first_step = w->last_step;
    w->behind_ms = (int64_t)now_unix_ms - server_ms_of_step(w, w->last_step);
    if (w->samples < CRADLE_WATCH_LATENCY_SAMPLES)
        w->over_delay_ms[w->samples++] = (int32_t)(w->behind_ms - (int64_t)w->delay_ms);
}

/* One step of the replay, with the records after it. 1, 0 when the mirror
 * has no more yet (or the log ended), -1 with w->error. */
static int run_one(cradle_watch *w) {
    cradle_replay_item item;
    int rc;
    while ((rc = cradle_replay_next(&w->replay, &item)) == 1) {
        if (item.kind != CRADLE_REPLAY_STEP) continue;
        memcpy(w->snapshot, item.snapshot, w->replay.sim.snapshot_size);
        rc = cradle_replay_catch_up(&w->replay);
        if (rc < 0) break;
        if (w->replay.mismatch && !w->mismatch_step) w->mismatch_step = w->replay.mismatch_step + 1u;
        w->steps++;
        w->last_step = item.step;
        if (w->replay.ended && w->replay.reader.end == CRADLE_LOG_END_CLOSED) w->ended = true;
        return 1;
    }
    if (rc == 0) {
        if (w->replay.ended && w->replay.reader.end == CRADLE_LOG_END_CLOSED) w->ended = true;
        return 0;
    }
    snprintf(w->error, sizeof w->error, "%s", w->replay.message);
    return -1;
}

int cradle_watch_advance(cradle_watch *w, uint64_t now_unix_ms, uint32_t max) {
    cradle_broadcast_mirror_view_now(w->mirror, &w->view);
    if (w->view.error[0] && strcmp(w->view.error, w->reported) != 0) {
        fprintf(stderr, "cradle-client: --watch: %s\n", w->view.error);
        memcpy(w->reported, w->view.error, sizeof w->reported);
    }
    if (open_segment(w) != 0) return -1;
    if (!w->replay_open || !w->view.have_sync || w->ended) return 0;
    (void)cradle_replay_grow(&w->replay, w->view.bytes);
    /* The step due now: the one the server ran `delay` ago. */
    const cradle_broadcast_sync *s = &w->view.sync;
    int64_t since_live = (int64_t)now_unix_ms - (int64_t)s->live_unix_ms - (int64_t)w->delay_ms;
    int64_t due = (int64_t)s->live_step + since_live * (int64_t)s->steps_per_second / 1000;
    uint32_t ran = 0;
    w->buffering = false;
    while (ran < max && (int64_t)w->replay.sim.next_step < due) {
        int rc = run_one(w);
        if (rc < 0) return -1;
        if (rc == 0) {
            w->buffering = !w->ended;
            break;
        }
        ran++;
    }
    if (ran > 0 || w->buffering) take_sample(w, now_unix_ms);
    return (int)ran;
}

void cradle_watch_hud(const cradle_watch *w, cradle_watch_hud_out *out) {
    cradle_watch_hud_in in = {.playing = w->replay_open,
                              .behind_ms = w->behind_ms,
                              .error = w->error,
                              .mismatch_step = w->mismatch_step,
                              .ended = w->ended,
                              .buffering = w->buffering,
                              .steps = w->steps,
                              .fetch_error = w->view.error,
                              .url = w->options->watch};
    cradle_watch_hud_text(&in, out);
}

static int compare_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int cradle_watch_summary(cradle_watch *w) {
    close_segment(w);
    int32_t p50 = 0, p99 = 0, max = 0;
    if (w->samples) {
        qsort(w->over_delay_ms, w->samples, sizeof w->over_delay_ms[0], compare_i32);
        p50 = w->over_delay_ms[w->samples / 2u];
        p99 = w->over_delay_ms[(uint64_t)w->samples * 99u / 100u];
        max = w->over_delay_ms[w->samples - 1u];
    }
    const char *verdict = w->error[0] ? "error" : w->hash_mismatches ? "hash_mismatch" : w->steps ? "ok" : "error";
    printf("{\"event\":\"watched\",\"steps\":%" PRIu64 ",\"first_step\":%" PRIu64 ",\"last_step\":%" PRIu64
           ",\"hashes_checked\":%" PRIu64 ",\"hash_mismatches\":%" PRIu64 ",\"segments\":%" PRIu32
           ",\"refused\":%" PRIu64 ",\"failures\":%" PRIu64 ",\"requests\":%" PRIu64 ",\"delay_ms\":%" PRIu32 ",\"over_delay_ms_p50\":%" PRId32
           ",\"over_delay_ms_p99\":%" PRId32 ",\"over_delay_ms_max\":%" PRId32 ",\"ended\":%s,\"verdict\":\"%s\"}\n",
           w->steps, w->first_step == UINT64_MAX ? 0 : w->first_step, w->last_step, w->hashes_checked,
           w->hash_mismatches, w->segments, w->view.refused, w->view.failures, w->view.requests, w->delay_ms, p50, p99, max,
           w->ended ? "true" : "false", verdict);
    fflush(stdout);
    if (w->error[0]) fprintf(stderr, "cradle-client: --watch: %s\n", w->error);
    else if (!w->steps) fprintf(stderr, "cradle-client: --watch: no step shown\n");
    if (w->hash_mismatches)
        fprintf(stderr, "cradle-client: --watch: hash mismatch at step %" PRIu64 "\n", w->mismatch_step - 1u);
    return w->error[0] || w->hash_mismatches || !w->steps ? 1 : 0;
}

void cradle_watch_close(cradle_watch *w) {
    close_segment(w);
    cradle_broadcast_mirror_close(w->mirror);
    w->mirror = NULL;
    if (w->dir[0]) cradle_os_remove_tree(w->dir);
    w->dir[0] = '\0';
    free(w->key_state);
    free(w->snapshot);
    w->key_state = w->snapshot = NULL;
}

/* The window loop's source (window.h) over a viewer. The keys are --play's
 * (playback.h) for Escape and the close button only: a broadcast runs on
 * the server's clock, with no pause, speed or seek. */
typedef struct watch_window {
    cradle_watch *w;
    cradle_playback keys;
} watch_window;

static void watch_poll(void *context, int width, int height) {
    (void)width; /* no seek bar */
    (void)height;
    cradle_client_play_poll(&((watch_window *)context)->keys, 0, 0);
}

/* The steps due now, delay behind live (react() sees the last one's events). */
static bool watch_advance(void *context, cradle_window *window, uint64_t now, uint64_t elapsed) {
    watch_window *v = context;
    cradle_watch *w = v->w;
    (void)now; /* the broadcast's clock is the wall clock: the server's */
    (void)elapsed;
    if (w->error[0]) return true; /* failed: the banner says why */
    int ran = cradle_watch_advance(w, cradle_wall_ns() / 1000000u, CRADLE_PLAYBACK_MAX_OWED);
    cradle_replay *r = cradle_watch_replay(w); /* a new segment is a new replay */
    if (ran > 0) cradle_window_stepped(window, &r->sim);
    if (r && w->options->steps && r->sim.next_step >= w->options->steps) v->keys.quit = true;
    return true;
}

static const cradle_sim *watch_sim(void *context) {
    cradle_replay *r = cradle_watch_replay(((watch_window *)context)->w);
    return r ? &r->sim : NULL;
}

static double watch_rate(void *context) {
    (void)context;
    return 1.0; /* the server's clock */
}

/* The HUD: the step, players, BROADCAST <s> S BEHIND and the banner of
 * cradle_watch_hud: red for an error or a mismatch, green at the end,
 * orange while waiting or buffering. */
static void watch_hud_fill(void *context, cradle_window_hud *h) {
    const cradle_watch *w = ((watch_window *)context)->w;
    cradle_hud_info *hud = &h->info;
    cradle_client_replay_hud(w->replay_open ? &w->replay : NULL, w->snapshot, hud);
    cradle_watch_hud_out text;
    cradle_watch_hud(w, &text);
    snprintf(h->mode, sizeof h->mode, "%s", text.mode);
    snprintf(h->detail, sizeof h->detail, "%s", text.detail);
    hud->mode = h->mode;
    hud->banner = text.banner;
    hud->detail = h->detail[0] ? h->detail : NULL;
    hud->banner_rgba = text.banner_rgba;
}

static const char *watch_sounds(void *context) {
    cradle_watch *w = ((watch_window *)context)->w;
    return cradle_client_replay_sounds(w->options, &w->replay);
}

static bool watch_done(void *context) { return ((watch_window *)context)->keys.quit; }

static int watch_finish(void *context) { return cradle_watch_summary(((watch_window *)context)->w); }

/* --watch in the window, which opens on the first segment: its build gives
 * the view's size. Returns the exit status. */
static int watch_window_run(cradle_watch *w) {
    uint64_t started = cradle_mono_ns();
    while (!cradle_watch_replay(w)) {
        if (cradle_watch_advance(w, cradle_wall_ns() / 1000000u, 0) < 0) return cradle_watch_summary(w);
        if (cradle_mono_ns() - started > (uint64_t)FIRST_SEGMENT_TIMEOUT_MS * 1000000u) {
            snprintf(w->error, sizeof w->error, "no broadcast to show at %s after %u s%s%s", w->options->watch,
                     FIRST_SEGMENT_TIMEOUT_MS / 1000u, w->view.error[0] ? ": " : "", w->view.error);
            return cradle_watch_summary(w);
        }
        cradle_sleep_ns(20000000u);
    }
    static watch_window v;
    v.w = w;
    cradle_playback_init(&v.keys);
    cradle_window_source source = {.context = &v,
                                   .title = "cradle-client --watch",
                                   .view = w->replay.sim.contract,
                                   .poll = watch_poll,
                                   .advance = watch_advance,
                                   .sim = watch_sim,
                                   .rate = watch_rate,
                                   .hud = watch_hud_fill,
                                   .sound_library = watch_sounds,
                                   .done = watch_done,
                                   .finish = watch_finish};
    return cradle_window_run(&source, w->options);
}

/* SIGINT or SIGTERM ends a headless viewer with its summary line. */
static volatile sig_atomic_t stop_signal;
static void on_stop_signal(int sig) { stop_signal = sig; }

static int watch_headless(cradle_watch *w) {
    const cradle_client_options *o = w->options;
    uint64_t started = cradle_mono_ns();
    struct sigaction sa = {.sa_handler = on_stop_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    const char *shown = ""; /* the HUD's banner last said on stderr */
    while (!stop_signal) {
        uint64_t now = cradle_wall_ns() / 1000000u;
        int ran = cradle_watch_advance(w, now, 4096u);
        /* what the window's HUD would say, each time its banner changes */
        cradle_watch_hud_out hud;
        cradle_watch_hud(w, &hud);
        if (strcmp(hud.banner ? hud.banner : "PLAYING", shown) != 0) {
            shown = hud.banner ? hud.banner : "PLAYING";
            fprintf(stderr, "cradle-client: --watch: %s: %s%s%s\n", hud.mode, shown, hud.detail[0] ? ": " : "",
                    hud.detail);
        }
        if (ran < 0) break;
        if (w->ended) break;
        if (o->steps && w->replay_open && w->replay.sim.next_step >= o->steps) break;
        if (!w->replay_open && cradle_mono_ns() - started > (uint64_t)FIRST_SEGMENT_TIMEOUT_MS * 1000000u) {
            snprintf(w->error, sizeof w->error, "no broadcast to show at %s after %u s%s%s", o->watch,
                     FIRST_SEGMENT_TIMEOUT_MS / 1000u, w->view.error[0] ? ": " : "", w->view.error);
            break;
        }
        cradle_sleep_ns(5000000u); /* a step is 16 ms at 60 steps/s */
    }
    return cradle_watch_summary(w);
}

int cradle_client_watch(const cradle_client_options *o) {
    static cradle_watch w;
    memset(&w, 0, sizeof w);
    int status = 1;
    if (cradle_watch_open(&w, o) != 0) {
        fprintf(stderr, "cradle-client: --watch: %s\n", w.error);
    } else if (o->headless || !cradle_client_video_init()) {
        status = watch_headless(&w);
    } else {
        status = watch_window_run(&w);
        SDL_Quit();
    }
    cradle_watch_close(&w);
    return status;
}
