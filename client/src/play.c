/*
 * play: --play LOG (see play.h). The library is --game, or else the build
 * archived beside the log (<log>.builds/<hash>.so); a reload record switches
 * to the build archived for it (like cradle-replay).
 */
#include "play.h"

#include <SDL.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cradle/hash.h"
#include "cradle/log.h"
#include "cradle/reload.h"
#include "hud.h"
#include "present.h"
#include "render_sdl.h"
#include "audio.h"
#include "session_run.h"
#include "window.h"

#define STATE_MIN_CAPACITY 65536u
#define STATE_ALIGN 64u
#define PARTICLES 8192u

typedef struct player {
    const char *log_path;
    cradle_log_reader reader;
    bool reader_open;
    cradle_reload libs[2];
    int lib;                     /* index in use */
    const cradle_game_contract *contract;
    uint8_t *state, *previous;
    uint32_t capacity;
    bool has_previous;
    uint8_t *pending;            /* the next STEP's snapshot, copied */
    bool have_pending, ended;
    uint64_t pending_step, steps_run, hashes_checked;
    bool mismatch;
    uint64_t mismatch_step, mismatch_log, mismatch_ours;
    cradle_event_queue events;
    cradle_event event_storage[1024];
    char error[512];
} player;

static int play_fail(player *p, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int play_fail(player *p, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(p->error, sizeof p->error, format, args);
    va_end(args);
    return -1;
}

static bool file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int load(player *p, cradle_reload *lib, const char *path, const char *build_id) {
    char message[CRADLE_RELOAD_MESSAGE_MAX];
    cradle_reload_config config = {.path = path, .state_capacity = p->capacity};
    if (cradle_reload_open(lib, &config, 0, message, sizeof message) != 0)
        return play_fail(p, "cannot load %s: %s", path, message);
    char why[CRADLE_LOG_MESSAGE_MAX];
    if (cradle_log_check_library(&p->reader.header, build_id, cradle_reload_contract(lib), why, sizeof why) != 0) {
        cradle_reload_close(lib);
        return play_fail(p, "%s", why);
    }
    return 0;
}

static int play_open(player *p, const cradle_client_options *o) {
    char message[CRADLE_LOG_MESSAGE_MAX];
    p->log_path = o->play;
    if (cradle_log_reader_open(&p->reader, o->play, message, sizeof message) != 0)
        return play_fail(p, "%s", message);
    p->reader_open = true;
    const cradle_log_header *h = &p->reader.header;
    uint32_t capacity = h->state_size > STATE_MIN_CAPACITY ? h->state_size : STATE_MIN_CAPACITY;
    p->capacity = (capacity + STATE_ALIGN - 1) / STATE_ALIGN * STATE_ALIGN;
    char path[CRADLE_LOG_PATH_MAX + 128];
    const char *lib_path = o->game;
    if (!lib_path) {
        if (cradle_log_build_path(path, sizeof path, o->play, h->build_file_hash) != 0 || !file_exists(path))
            return play_fail(p, "the log's build '%s' is not archived beside it (%s.builds/); pass --game LIB",
                             h->build_id, o->play);
        lib_path = path;
    }
    if (load(p, &p->libs[0], lib_path, h->build_id) != 0) return -1;
    p->contract = cradle_reload_contract(&p->libs[0]);
    p->state = aligned_alloc(STATE_ALIGN, p->capacity);
    p->previous = aligned_alloc(STATE_ALIGN, p->capacity);
    p->pending = malloc(h->snapshot_size);
    if (!p->state || !p->previous || !p->pending) return play_fail(p, "out of memory");
    memset(p->state, 0, p->capacity);
    if (p->contract->init(p->state, h->seed, h->player_count) != 0)
        return play_fail(p, "the game refused the log's %u players", (unsigned)h->player_count);
    (void)cradle_events_init(&p->events, p->event_storage, 1024);
    return 0;
}

/* Reads records until the next STEP (copied to pending) or the end, handling
 * HASH, RELOAD and TRAILER records on the way. Returns 0 or -1 (p->error). */
static int read_ahead(player *p) {
    cradle_log_record rec;
    while (!p->have_pending && !p->ended) {
        int rc = cradle_log_reader_next(&p->reader, &rec);
        if (rc < 0) return play_fail(p, "%s", p->reader.message);
        if (rc == 0) {
            p->ended = true;
            break;
        }
        uint64_t mine = cradle_hash64(p->state, p->contract->state_size);
        switch (rec.kind) {
        case CRADLE_LOG_RECORD_STEP:
            memcpy(p->pending, rec.snapshot, p->reader.header.snapshot_size);
            p->pending_step = rec.step;
            p->have_pending = true;
            break;
        case CRADLE_LOG_RECORD_HASH:
        case CRADLE_LOG_RECORD_TRAILER:
            if (rec.kind == CRADLE_LOG_RECORD_HASH) p->hashes_checked++;
            if (mine != rec.hash && !p->mismatch) {
                p->mismatch = true;
                p->mismatch_step = rec.kind == CRADLE_LOG_RECORD_HASH ? rec.step : p->steps_run;
                p->mismatch_log = rec.hash;
                p->mismatch_ours = mine;
            }
            break;
        case CRADLE_LOG_RECORD_RELOAD: {
            char path[CRADLE_LOG_PATH_MAX + 128];
            if (strcmp(rec.build_id, p->contract->build_id) == 0) break;
            if (cradle_log_build_path(path, sizeof path, p->log_path, rec.file_hash) != 0 || !file_exists(path))
                return play_fail(p, "the log switches to build '%s' at step %" PRIu64 " but %s is missing",
                                 rec.build_id, rec.step, path);
            int next = 1 - p->lib;
            if (load(p, &p->libs[next], path, rec.build_id) != 0) return -1;
            cradle_reload_close(&p->libs[p->lib]);
            p->lib = next;
            p->contract = cradle_reload_contract(&p->libs[next]);
            if (p->contract->on_reload) p->contract->on_reload(p->state);
            break;
        }
        default: break;
        }
    }
    return 0;
}

static bool push_event(void *context, const cradle_event *event) { return cradle_events_push(context, event); }

/* Runs one step. Returns 1, 0 at the end of the log, -1 on error. */
static int play_step(player *p) {
    if (read_ahead(p) != 0) return -1;
    if (!p->have_pending) return 0;
    const cradle_game_contract *k = p->contract;
    memcpy(p->previous, p->state, p->capacity);
    p->has_previous = true;
    uint32_t per_frame = k->steps_per_second / k->source_frames_per_second;
    cradle_game_step step = {.index = p->pending_step,
                             .source_frame = p->pending_step / per_frame,
                             .phase = (uint32_t)(p->pending_step % per_frame),
                             .snapshot_size = p->reader.header.snapshot_size,
                             .snapshot = p->pending};
    cradle_events_clear(&p->events);
    cradle_event_sink sink = {.context = &p->events, .emit = push_event};
    k->step(p->state, &step, &sink);
    p->have_pending = false;
    p->steps_run++;
    return read_ahead(p) == 0 ? 1 : -1; /* the hash of this step follows its STEP record */
}

static void play_close(player *p) {
    if (p->reader_open) cradle_log_reader_close(&p->reader);
    cradle_reload_close(&p->libs[0]);
    cradle_reload_close(&p->libs[1]);
    free(p->state);
    free(p->previous);
    free(p->pending);
}

static int summary(const player *p) {
    printf("{\"event\":\"played\",\"steps\":%" PRIu64 ",\"hashes_checked\":%" PRIu64
           ",\"final_hash\":\"%016" PRIx64 "\",\"verdict\":\"%s\"}\n",
           p->steps_run, p->hashes_checked, cradle_hash64(p->state, p->contract->state_size),
           p->error[0] ? "error" : p->mismatch ? "hash_mismatch" : "ok");
    if (p->error[0]) fprintf(stderr, "cradle-client: --play: %s\n", p->error);
    if (p->mismatch)
        fprintf(stderr, "cradle-client: --play: hash mismatch at step %" PRIu64 ": log %016" PRIx64 ", replay %016" PRIx64 "\n",
                p->mismatch_step, p->mismatch_log, p->mismatch_ours);
    return p->error[0] || p->mismatch ? 1 : 0;
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
        int rc;
        while ((rc = play_step(&p)) == 1)
            if (o->steps && p.steps_run >= o->steps) break;
        status = summary(&p);
        goto out;
    }
    status = play_window(&p, o);
    SDL_Quit();
out:
    play_close(&p);
    return status;
}

static cradle_particle particles[PARTICLES];

void cradle_client_play_poll(cradle_playback *pb) {
    SDL_Event e;
    while (SDL_PollEvent(&e)) {
        if (e.type == SDL_QUIT) cradle_playback_apply(pb, CRADLE_PLAYBACK_QUIT);
        else if (e.type == SDL_KEYDOWN) cradle_playback_apply(pb, cradle_playback_key(e.key.keysym.sym, e.key.repeat != 0));
    }
}

static int play_window(player *p, const cradle_client_options *o) {
    const cradle_game_contract *k = p->contract;
    int w = (int)o->width, h = (int)o->height;
    if (!w || !h) {
        uint32_t scale = 1;
        while (k->view_width * scale < 960u) scale++;
        w = (int)(k->view_width * scale);
        h = (int)(k->view_height * scale);
    }
    SDL_Window *window = SDL_CreateWindow("cradle-client --play", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED,
                                          w, h, SDL_WINDOW_RESIZABLE | (o->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0u));
    SDL_Renderer *renderer = window ? SDL_CreateRenderer(window, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC) : NULL;
    if (window && !renderer) renderer = SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE);
    static cradle_render_sdl render;
    static cradle_audio audio;
    static cradle_present present;
    char message[256];
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
        cradle_client_play_poll(&pb);
        now = cradle_client_now_ns();
        float dt = (float)(now - last_frame) / 1e9f;
        uint32_t run = cradle_playback_steps(&pb, now - last_frame, k->steps_per_second);
        last_frame = now;
        if (p->ended && !p->have_pending) run = 0;
        for (uint32_t i = 0; i < run && !failed; i++) {
            int rc = play_step(p);
            if (rc < 0) failed = true;
            if (rc <= 0) break;
            last_step_ns = now;
            k = p->contract;
            if (k->react) {
                cradle_fx fx = cradle_present_fx(&present);
                k->react(p->state, cradle_events_data(&p->events), cradle_events_count(&p->events), &fx);
            }
            if (o->steps && p->steps_run >= o->steps) pb.quit = true;
        }
        cradle_present_update(&present, pb.paused ? 0.0f : dt);
        cradle_render_sdl_frame(&render, present.shake_x, present.shake_y);
        cradle_draw world = cradle_render_sdl_world(&render), screen = cradle_render_sdl_screen(&render);
        SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255);
        SDL_RenderClear(renderer);
        if (k->render) {
            float alpha = cradle_playback_alpha(&pb, now - last_step_ns, k->steps_per_second);
            k->render(p->has_previous ? p->previous : p->state, p->state, alpha, &world);
            cradle_present_draw(&present, &world);
        }
        cradle_render_sdl_letterbox(&render);
        char mode[48], detail[128];
        cradle_playback_mode(&pb, mode, sizeof mode);
        uint32_t players = 0;
        if (p->steps_run)
            for (uint32_t s = 0; s < p->reader.header.max_players; s++) players += cradle_snapshot_present(p->pending, s);
        cradle_hud_info hud = {.step = p->steps_run, .rtt_ms = -1.0, .input_delay = -1,
                               .players = players, .player_limit = p->reader.header.player_count,
                               .slot = -2, .fps = dt > 0.0f ? 1.0 / (double)dt : 0.0, .mode = mode};
        if (failed) {
            hud.banner = "LOG ERROR";
            snprintf(detail, sizeof detail, "%.100s", p->error);
            hud.detail = detail;
            hud.banner_rgba = 0xff5252ffu;
        } else if (p->mismatch) {
            hud.banner = "HASH MISMATCH";
            snprintf(detail, sizeof detail, "AT STEP %" PRIu64, p->mismatch_step);
            hud.detail = detail;
            hud.banner_rgba = 0xffab40ffu;
        } else if (p->ended && !p->have_pending) {
            hud.banner = "END OF LOG";
            snprintf(detail, sizeof detail, "%" PRIu64 " STEPS, %" PRIu64 " HASHES OK", p->steps_run, p->hashes_checked);
            hud.detail = detail;
            hud.banner_rgba = 0x69f0aeffu;
        }
        cradle_hud_draw(&hud, &screen, render.output_w, render.output_h);
        SDL_RenderPresent(renderer);
        if (!vsync) SDL_Delay(4);
    }
    status = summary(p);
out:
    cradle_render_sdl_deinit(&render);
    cradle_audio_deinit(&audio);
    if (renderer) SDL_DestroyRenderer(renderer);
    if (window) SDL_DestroyWindow(window);
    return status;
}
