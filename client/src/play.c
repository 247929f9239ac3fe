/*
 * play: --play LOG (see play.h), through the replay driver (replay.h): the
 * library is --game, or else the build archived beside the log
 * (<log>.builds/<hash>.so); a reload record switches to the build archived
 * for it, as in cradle-replay. Seeks (the timeline's moves, --seek) go
 * through the log's keyframe index (replay_index.h), built beside the log
 * the first time.
 */
#include "play.h"

#include <SDL.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cradle/replay.h"
#include "cradle/replay_index.h"
#include "timeline.h"
#include "window.h"

#define EVENTS 1024u

typedef struct player {
    cradle_replay replay;        /* the log through the game: state, previous, events */
    cradle_replay_index index;   /* the keyframes seeks restore */
    const char *index_outcome;   /* "loaded", "built", "rebuilt", "absent" */
    uint64_t steps;              /* the log's complete steps: the timeline's length */
    uint8_t *snapshot;           /* the last step's snapshot, for the HUD's players */
    bool ended;                  /* the replay reached the end of the log */
    char error[CRADLE_REPLAY_MESSAGE_MAX]; /* set: the log failed; the window shows it, steps no more */
    /* the window */
    const cradle_client_options *o;
    cradle_playback pb;          /* the keys and the seek bar */
} player;

static void warn(void *context, const char *message) {
    (void)context;
    fprintf(stderr, "cradle-client: --play: warning: %s\n", message);
}

const char *cradle_client_replay_sounds(const cradle_client_options *o, const cradle_replay *r) {
    if (o->game) return o->game;
    return cradle_reload_copy_path(&r->libraries[r->in_use]);
}

/* The log's complete steps (a torn tail's are not), read without the game:
 * the reader checks every block as the replay will. */
static uint64_t count_steps(const char *path) {
    cradle_log_reader reader;
    char message[CRADLE_LOG_MESSAGE_MAX];
    if (cradle_log_reader_open(&reader, path, message, sizeof message) != 0) return 0;
    cradle_log_record record;
    while (cradle_log_reader_next(&reader, &record) == 1) {
    }
    uint64_t steps = reader.steps;
    cradle_log_reader_close(&reader);
    return steps;
}

/* Seeking: the log's length, and its index (built when there is none, or
 * built again when refused; without one a seek back runs from step 0). */
static void play_index(player *p) {
    p->steps = count_steps(p->replay.config.log_path);
    char why[1024];
    int outcome = cradle_replay_attach_index(&p->replay, &p->index, NULL, CRADLE_REPLAY_INDEX_BUILD, why, sizeof why);
    p->index_outcome = cradle_replay_index_outcome_name(outcome >= 0 ? (cradle_replay_index_outcome)outcome
                                                                     : CRADLE_REPLAY_INDEX_ABSENT);
    if (outcome < 0)
        fprintf(stderr, "cradle-client: --play: no keyframe index (%s): a seek back replays from step 0\n", why);
    else if (outcome != CRADLE_REPLAY_INDEX_LOADED && why[0])
        fprintf(stderr, "cradle-client: --play: keyframe index: %s\n", why);
}

/* Puts the replay at `target` (the state before that step, its records
 * handled as after a step): through the index when there is one. Returns 0
 * or -1 (p->error). */
static int play_seek(player *p, uint64_t target) {
    int rc = cradle_replay_seek(&p->replay, target);
    if (rc == CRADLE_ERANGE) rc = 0; /* past a torn tail: the last complete step */
    if (rc == 0) rc = cradle_replay_catch_up(&p->replay);
    if (rc < 0) {
        snprintf(p->error, sizeof p->error, "%s", p->replay.message);
        return -1;
    }
    p->ended = p->replay.ended;
    return 0;
}

static int play_open(player *p, const cradle_client_options *o) {
    cradle_replay_config config = {.log_path = o->play,
                                   .game_path = o->game,
                                   .keep_previous = true,
                                   .event_capacity = EVENTS,
                                   .warn = warn};
    if (cradle_replay_open(&p->replay, &config) != 0) {
        snprintf(p->error, sizeof p->error, "%s", p->replay.message);
        return -1;
    }
    p->snapshot = calloc(1, p->replay.reader.header.snapshot_size);
    if (!p->snapshot) {
        snprintf(p->error, sizeof p->error, "out of memory");
        return -1;
    }
    return 0;
}

/* Runs one step, handling the hash, reload and trailer records before it.
 * Returns 1, 0 at the end of the log, -1 on error (p->error). */
static int play_step(player *p) {
    cradle_replay_item item;
    int rc;
    while ((rc = cradle_replay_next(&p->replay, &item)) == 1) {
        if (item.kind != CRADLE_REPLAY_STEP) continue;
        memcpy(p->snapshot, item.snapshot, p->replay.sim.snapshot_size);
        /* The hash recorded after this step is checked now, not a step late. */
        rc = cradle_replay_catch_up(&p->replay);
        if (rc < 0) break;
        p->ended = p->replay.ended;
        return 1;
    }
    if (rc == 0) {
        p->ended = true;
        return 0;
    }
    snprintf(p->error, sizeof p->error, "%s", p->replay.message);
    return -1;
}

static void play_close(player *p) {
    cradle_replay_close(&p->replay);
    cradle_replay_index_free(&p->index);
    free(p->snapshot);
    p->snapshot = NULL;
}

static int summary(player *p) {
    const cradle_replay *r = &p->replay;
    char seek[160] = "";
    if (p->index_outcome)
        snprintf(seek, sizeof seek, ",\"next_step\":%" PRIu64 ",\"build\":\"%s\",\"index\":\"%s\",\"keyframe_seeks\":%" PRIu64,
                 r->sim.next_step, r->build_id, p->index_outcome, r->keyframe_seeks);
    printf("{\"event\":\"played\",\"steps\":%" PRIu64 ",\"hashes_checked\":%" PRIu64
           ",\"final_hash\":\"%016" PRIx64 "\"%s,\"verdict\":\"%s\"}\n",
           r->steps, r->hashes_checked, r->sim.contract ? cradle_sim_hash(&r->sim) : 0, seek,
           p->error[0] ? "error" : r->mismatch ? "hash_mismatch" : "ok");
    if (p->error[0]) fprintf(stderr, "cradle-client: --play: %s\n", p->error);
    if (r->mismatch)
        fprintf(stderr, "cradle-client: --play: hash mismatch at step %" PRIu64 ": log %016" PRIx64 ", replay %016" PRIx64 "\n",
                r->mismatch_step, r->mismatch_logged, r->mismatch_replayed);
    return p->error[0] || r->mismatch ? 1 : 0;
}

/* A mouse event's window size and position, in the output pixels the
 * timeline is drawn in: on a high-DPI display the renderer's output is
 * larger than the window whose coordinates mouse events carry. An event of
 * no window (a test's) keeps the size given. */
static void to_output(Uint32 window_id, int *width, int *height, float *x, float *y) {
    SDL_Window *window = SDL_GetWindowFromID(window_id);
    SDL_Renderer *renderer = window ? SDL_GetRenderer(window) : NULL;
    int window_w = 0, window_h = 0, output_w = 0, output_h = 0;
    if (!renderer || SDL_GetRendererOutputSize(renderer, &output_w, &output_h) != 0) return;
    SDL_GetWindowSize(window, &window_w, &window_h);
    if (window_w <= 0 || window_h <= 0 || output_w <= 0 || output_h <= 0) return;
    *x = *x * (float)output_w / (float)window_w;
    *y = *y * (float)output_h / (float)window_h;
    *width = output_w;
    *height = output_h;
}

void cradle_client_play_poll(cradle_playback *pb, int width, int height) {
    SDL_Event e;
    double at;
    while (SDL_PollEvent(&e)) {
        if (e.type == SDL_QUIT) cradle_playback_apply(pb, CRADLE_PLAYBACK_QUIT);
        else if (e.type == SDL_KEYDOWN) cradle_playback_apply(pb, cradle_playback_key(e.key.keysym.sym, e.key.repeat != 0));
        else if (width <= 0) continue; /* no timeline */
        else if (e.type == SDL_MOUSEBUTTONDOWN && e.button.button == SDL_BUTTON_LEFT) {
            int w = width, h = height;
            float x = (float)e.button.x, y = (float)e.button.y;
            to_output(e.button.windowID, &w, &h, &x, &y);
            if (!cradle_timeline_hit(w, h, x, y, &at)) continue;
            pb->dragging = true;
            cradle_playback_bar(pb, at);
        } else if (e.type == SDL_MOUSEMOTION && pb->dragging) {
            int w = width, h = height;
            float x = (float)e.motion.x, y = (float)e.motion.y;
            to_output(e.motion.windowID, &w, &h, &x, &y);
            cradle_playback_bar(pb, cradle_timeline_fraction(w, h, x));
        } else if (e.type == SDL_MOUSEBUTTONUP && e.button.button == SDL_BUTTON_LEFT) {
            pb->dragging = false;
        }
    }
}

/* The window loop's source (window.h) over the player. */

static void play_poll(void *context, int width, int height) {
    cradle_client_play_poll(&((player *)context)->pb, width, height); /* the seek bar takes the mouse */
}

/* The frame's moves fold into one seek; then, while playing, the steps the
 * speed owes for the time elapsed (react() sees the last one's events). */
static bool play_advance(void *context, cradle_window *window, uint64_t now, uint64_t elapsed) {
    player *p = context;
    cradle_sim *sim = &p->replay.sim;
    (void)now;
    uint64_t target;
    if (!p->error[0] &&
        cradle_playback_seek(&p->pb, sim->next_step, p->steps, sim->contract->steps_per_second, &target)) {
        (void)play_seek(p, target); /* a failure is p->error, shown */
        cradle_window_jumped(window);
    }
    uint32_t run = cradle_playback_steps(&p->pb, elapsed, sim->contract->steps_per_second);
    if (p->ended) run = 0;
    uint32_t ran = 0;
    for (uint32_t i = 0; i < run && !p->error[0]; i++) {
        if (play_step(p) != 1) break;
        ran++;
        if (p->o->steps && sim->next_step >= p->o->steps) p->pb.quit = true;
    }
    if (ran) cradle_window_stepped(window, sim);
    return true;
}

static const cradle_sim *play_sim(void *context) { return &((player *)context)->replay.sim; }

static double play_rate(void *context) { return cradle_playback_rate(&((player *)context)->pb); }

/* The HUD: step, players, PAUSED or PLAY X<speed>, the build in charge;
 * banners LOG ERROR, HASH MISMATCH, END OF LOG. */
static void play_hud(void *context, cradle_window_hud *h) {
    player *p = context;
    cradle_hud_info *hud = &h->info;
    cradle_client_replay_hud(&p->replay, p->snapshot, hud);
    cradle_playback_mode(&p->pb, h->mode, sizeof h->mode);
    hud->mode = h->mode;
    hud->build = p->replay.build_id;
    if (p->error[0]) {
        hud->banner = "LOG ERROR";
        snprintf(h->detail, sizeof h->detail, "%.100s", p->error);
        hud->banner_rgba = 0xff5252ffu;
    } else if (p->replay.mismatch) {
        hud->banner = "HASH MISMATCH";
        snprintf(h->detail, sizeof h->detail, "AT STEP %" PRIu64, p->replay.mismatch_step);
        hud->banner_rgba = 0xffab40ffu;
    } else if (p->ended) {
        hud->banner = "END OF LOG";
        snprintf(h->detail, sizeof h->detail, "%" PRIu64 " STEPS, %" PRIu64 " HASHES OK", p->replay.steps,
                 p->replay.hashes_checked);
        hud->banner_rgba = 0x69f0aeffu;
    }
    if (hud->banner) hud->detail = h->detail;
}

/* The seek bar along the top. */
static void play_overlay(void *context, const cradle_draw *screen, int width, int height) {
    const player *p = context;
    const cradle_sim *sim = &p->replay.sim;
    cradle_timeline_draw(screen, width, height, sim->next_step, p->steps, sim->contract->steps_per_second);
}

static const char *play_sounds(void *context) {
    const player *p = context;
    return cradle_client_replay_sounds(p->o, &p->replay);
}

static bool play_done(void *context) { return ((player *)context)->pb.quit; }

static int play_finish(void *context) { return summary(context); }

static int play_window(player *p, const cradle_client_options *o) {
    p->o = o;
    cradle_playback_init(&p->pb);
    cradle_window_source source = {.context = p,
                                   .title = "cradle-client --play",
                                   .view = p->replay.sim.contract,
                                   .poll = play_poll,
                                   .advance = play_advance,
                                   .sim = play_sim,
                                   .rate = play_rate,
                                   .hud = play_hud,
                                   .overlay = play_overlay,
                                   .sound_library = play_sounds,
                                   .done = play_done,
                                   .finish = play_finish};
    return cradle_window_run(&source, o);
}

int cradle_client_play(const cradle_client_options *o) {
    static player p;
    memset(&p, 0, sizeof p);
    int status = 1;
    if (play_open(&p, o) != 0) {
        fprintf(stderr, "cradle-client: --play: %s\n", p.error);
        goto out;
    }
    if (o->headless || !cradle_client_video_init()) {
        if (o->seek_given) { /* the state at a step, for tools */
            play_index(&p);
            (void)play_seek(&p, o->seek);
        } else {
            int rc;
            while ((rc = play_step(&p)) == 1)
                if (o->steps && p.replay.sim.next_step >= o->steps) break;
        }
        status = summary(&p);
        goto out;
    }
    play_index(&p);
    if (o->seek_given && play_seek(&p, o->seek) != 0) {
        status = summary(&p);
        SDL_Quit();
        goto out;
    }
    status = play_window(&p, o);
    SDL_Quit();
out:
    play_close(&p);
    return status;
}

