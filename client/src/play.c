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
#include "cradle/systime.h"
#include "hud.h"
#include "timeline.h"
#include "present.h"
#include "render_sdl.h"
#include "audio.h"
#include "session_run.h"
#include "watch.h"
#include "window.h"

#define PARTICLES 8192u
#define EVENTS 1024u

typedef struct player {
    cradle_replay replay;        /* the log through the game: state, previous, events */
    cradle_replay_index index;   /* the keyframes seeks restore */
    const char *index_outcome;   /* "loaded", "built", "rebuilt", "absent" */
    uint64_t steps;              /* the log's complete steps: the timeline's length */
    uint8_t *snapshot;           /* the last step's snapshot, for the HUD's players */
    bool ended;                  /* the replay reached the end of the log */
    char error[CRADLE_REPLAY_MESSAGE_MAX];
} player;

static void warn(void *context, const char *message) {
    (void)context;
    fprintf(stderr, "cradle-client: --play: warning: %s\n", message);
}

/* Where the game's sound files are looked for: beside --game, else beside
 * the build the log archived (which has none: the replay is then silent,
 * and says which files it missed). */
static const char *sound_library(const cradle_client_options *o, const cradle_replay *r) {
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

static int play_window(player *p, const cradle_client_options *o);

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

static cradle_particle particles[PARTICLES];

void cradle_client_play_poll(cradle_playback *pb, int width, int height) {
    SDL_Event e;
    double at;
    while (SDL_PollEvent(&e)) {
        if (e.type == SDL_QUIT) cradle_playback_apply(pb, CRADLE_PLAYBACK_QUIT);
        else if (e.type == SDL_KEYDOWN) cradle_playback_apply(pb, cradle_playback_key(e.key.keysym.sym, e.key.repeat != 0));
        else if (width <= 0) continue; /* no timeline */
        else if (e.type == SDL_MOUSEBUTTONDOWN && e.button.button == SDL_BUTTON_LEFT &&
                 cradle_timeline_hit(width, height, (float)e.button.x, (float)e.button.y, &at)) {
            pb->dragging = true;
            cradle_playback_bar(pb, at);
        } else if (e.type == SDL_MOUSEMOTION && pb->dragging) {
            cradle_playback_bar(pb, cradle_timeline_fraction(width, height, (float)e.motion.x));
        } else if (e.type == SDL_MOUSEBUTTONUP && e.button.button == SDL_BUTTON_LEFT) {
            pb->dragging = false;
        }
    }
}

/* The window of --play (p) and --watch (w): one of the two is given. */
static int show_window(player *p, cradle_watch *w, const cradle_client_options *o) {
    cradle_replay *replay = w ? cradle_watch_replay(w) : &p->replay;
    cradle_sim *sim = &replay->sim;
    const cradle_game_contract *k = sim->contract;
    int width = (int)o->width, height = (int)o->height;
    if (!width || !height) {
        uint32_t scale = 1;
        while (k->view_width * scale < 960u) scale++;
        width = (int)(k->view_width * scale);
        height = (int)(k->view_height * scale);
    }
    SDL_Window *window = SDL_CreateWindow(w ? "cradle-client --watch" : "cradle-client --play", SDL_WINDOWPOS_CENTERED,
                                          SDL_WINDOWPOS_CENTERED, width, height,
                                          SDL_WINDOW_RESIZABLE | (o->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0u));
    SDL_Renderer *renderer = window ? SDL_CreateRenderer(window, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC) : NULL;
    if (window && !renderer) renderer = SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE);
    static cradle_render_sdl render;
    static cradle_audio audio;
    static cradle_present present;
    char message[1024];
    int status = 1;
    if (!renderer || cradle_render_sdl_init(&render, renderer, k->view_width, k->view_height, message, sizeof message) != 0) {
        fprintf(stderr, "cradle-client: cannot open a window: %s\n", SDL_GetError());
        goto out;
    }
    SDL_RendererInfo info;
    bool vsync = SDL_GetRendererInfo(renderer, &info) == 0 && (info.flags & SDL_RENDERER_PRESENTVSYNC);
    cradle_present_init(&present, particles, PARTICLES, 0x5eed);
    if (!o->mute && cradle_audio_init(&audio, true, message, sizeof message) == 0) {
        present.play = cradle_audio_play;
        present.play_context = &audio;
    }
    static cradle_playback pb;
    cradle_playback_init(&pb);
    bool failed = false;
    uint64_t now = cradle_client_now_ns(), last_frame = now, last_step_ns = now;
    while (!pb.quit) {
        int window_w = 0, window_h = 0;
        if (!w) SDL_GetWindowSize(window, &window_w, &window_h); /* --play's timeline takes the mouse */
        cradle_client_play_poll(&pb, window_w, window_h);
        now = cradle_client_now_ns();
        float dt = (float)(now - last_frame) / 1e9f;
        uint32_t ran = 0;
        uint64_t target;
        if (!w && !failed && cradle_playback_seek(&pb, sim->next_step, p->steps, k->steps_per_second, &target)) {
            if (play_seek(p, target) != 0) failed = true;
            k = sim->contract; /* the build of that step */
            last_step_ns = now;
        }
        if (w) { /* a broadcast runs on the server's clock: no pause, no speed */
            int rc = failed ? 0 : cradle_watch_advance(w, cradle_wall_ns() / 1000000u, CRADLE_PLAYBACK_MAX_OWED);
            if (rc < 0) failed = true;
            ran = rc > 0 ? (uint32_t)rc : 0;
            replay = cradle_watch_replay(w); /* a new segment is a new replay */
            sim = &replay->sim;
            if (o->steps && sim->next_step >= o->steps) pb.quit = true;
        } else {
            uint32_t run = cradle_playback_steps(&pb, now - last_frame, k->steps_per_second);
            if (p->ended) run = 0;
            for (uint32_t i = 0; i < run && !failed; i++) {
                int rc = play_step(p);
                if (rc < 0) failed = true;
                if (rc <= 0) break;
                ran++;
                if (o->steps && p->replay.sim.next_step >= o->steps) pb.quit = true;
            }
        }
        last_frame = now;
        if (ran) {
            last_step_ns = now;
            k = sim->contract; /* may change at a reload */
            if (!o->mute && cradle_audio_follow(&audio, k, sound_library(o, replay), message, sizeof message) &&
                message[0])
                fprintf(stderr, "cradle-client: %s (those sounds stay silent)\n", message);
            if (k->react) { /* the last step's events */
                cradle_fx fx = cradle_present_fx(&present);
                k->react(sim->state, cradle_events_data(&sim->events), cradle_events_count(&sim->events), &fx);
            }
        }
        cradle_present_update(&present, pb.paused ? 0.0f : dt);
        cradle_render_sdl_frame(&render, present.shake_x, present.shake_y);
        cradle_draw world = cradle_render_sdl_world(&render), screen = cradle_render_sdl_screen(&render);
        SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255);
        SDL_RenderClear(renderer);
        if (k->render) {
            float alpha = w ? cradle_present_alpha(now - last_step_ns, k->steps_per_second, 1.0)
                            : cradle_playback_alpha(&pb, now - last_step_ns, k->steps_per_second);
            k->render(sim->has_previous ? sim->previous : sim->state, sim->state, alpha, &world);
            cradle_present_draw(&present, &world);
        }
        cradle_render_sdl_letterbox(&render);
        char mode[64], detail[128] = "";
        const uint8_t *snapshot = w ? w->snapshot : p->snapshot;
        uint32_t players = 0;
        if (replay->steps && snapshot)
            for (uint32_t slot = 0; slot < k->max_players; slot++) players += cradle_snapshot_present(snapshot, slot);
        cradle_hud_info hud = {.step = sim->next_step, .rtt_ms = -1.0, .input_delay = -1,
                               .players = players, .player_limit = replay->reader.header.player_count,
                               .slot = -2, .fps = dt > 0.0f ? 1.0 / (double)dt : 0.0, .mode = mode,
                               .build = w ? NULL : replay->build_id};
        if (w) {
            cradle_watch_hud(w, mode, sizeof mode, &hud.banner, detail, sizeof detail);
            hud.detail = detail[0] ? detail : NULL;
            hud.banner_rgba = w->error[0] || w->mismatch_step ? 0xff5252ffu : w->ended ? 0x69f0aeffu : 0xffab40ffu;
        } else {
            cradle_playback_mode(&pb, mode, sizeof mode);
            if (failed) {
                hud.banner = "LOG ERROR";
                snprintf(detail, sizeof detail, "%.100s", p->error);
                hud.detail = detail;
                hud.banner_rgba = 0xff5252ffu;
            } else if (p->replay.mismatch) {
                hud.banner = "HASH MISMATCH";
                snprintf(detail, sizeof detail, "AT STEP %" PRIu64, p->replay.mismatch_step);
                hud.detail = detail;
                hud.banner_rgba = 0xffab40ffu;
            } else if (p->ended) {
                hud.banner = "END OF LOG";
                snprintf(detail, sizeof detail, "%" PRIu64 " STEPS, %" PRIu64 " HASHES OK", p->replay.steps,
                         p->replay.hashes_checked);
                hud.detail = detail;
                hud.banner_rgba = 0x69f0aeffu;
            }
        }
        cradle_hud_draw(&hud, &screen, render.output_w, render.output_h);
        if (!w) cradle_timeline_draw(&screen, render.output_w, render.output_h, sim->next_step, p->steps,
                                     k->steps_per_second);
        SDL_RenderPresent(renderer);
        if (!vsync) SDL_Delay(4);
    }
    status = w ? cradle_watch_summary(w) : summary(p);
out:
    cradle_render_sdl_deinit(&render);
    cradle_audio_deinit(&audio);
    if (renderer) SDL_DestroyRenderer(renderer);
    if (window) SDL_DestroyWindow(window);
    return status;
}

static int play_window(player *p, const cradle_client_options *o) { return show_window(p, NULL, o); }

int cradle_client_watch_window(cradle_watch *w) {
    /* The window opens on the first segment: its build gives the view's size. */
    uint64_t deadline = cradle_client_now_ns() + 30000000000ull;
    while (!cradle_watch_replay(w)) {
        if (cradle_watch_advance(w, cradle_wall_ns() / 1000000u, 0) < 0) return cradle_watch_summary(w);
        if (cradle_client_now_ns() > deadline) {
            snprintf(w->error, sizeof w->error, "no broadcast to show at %s after 30 s%s%s", w->options->watch,
                     w->view.error[0] ? ": " : "", w->view.error);
            return cradle_watch_summary(w);
        }
        SDL_Delay(20);
    }
    return show_window(NULL, w, w->options);
}
