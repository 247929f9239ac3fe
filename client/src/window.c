/*
 * window: the live session in an SDL2 window (see window.h).
 *
 * Frame loop: read events (bindings; focus loss releases every key), service
 * the connection, run at most CRADLE_WINDOW_MAX_STEPS_PER_FRAME received
 * steps (each one's events go to the game's react()), then draw the game by
 * interpolating from the state before the last step to the current one with
 * alpha = time since that step ran / step length (clamped below 1), the
 * particles, and the HUD; SDL_RenderPresent waits for vsync. The frame rate
 * is the display's; the simulation rate is the server's.
 */
#include "window.h"

#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "audio.h"
#include "bindings.h"
#include "hud.h"
#include "present.h"
#include "render_sdl.h"
#include "session_run.h"
#include "softdraw.h"

#define PARTICLES 8192u

static cradle_particle particle_storage[PARTICLES];

/* Where a frame is drawn: through SDL_Renderer calls, or -- when SDL only has
 * its software renderer, whose per-call cost is too high for thousands of
 * entities -- through softdraw into a buffer uploaded as one streaming
 * texture. The buffer is reallocated only when the output size changes. */
typedef struct frame_target {
    SDL_Renderer *renderer;
    cradle_render_sdl *sdl;
    bool soft;
    SDL_Texture *texture;
    uint32_t *pixels;
    int w, h;
    cradle_softdraw sd;
    uint32_t view_w, view_h;
} frame_target;

static int target_begin(frame_target *t, float shake_x, float shake_y, cradle_draw *world, cradle_draw *screen) {
    if (!t->soft) {
        cradle_render_sdl_frame(t->sdl, shake_x, shake_y);
        *world = cradle_render_sdl_world(t->sdl);
        *screen = cradle_render_sdl_screen(t->sdl);
        t->w = t->sdl->output_w;
        t->h = t->sdl->output_h;
        SDL_SetRenderDrawColor(t->renderer, 0, 0, 0, 255);
        SDL_RenderClear(t->renderer);
        return 0;
    }
    int w = 0, h = 0;
    if (SDL_GetRendererOutputSize(t->renderer, &w, &h) != 0 || w <= 0 || h <= 0) return -1;
    if (w != t->w || h != t->h || !t->texture) {
        if (t->texture) SDL_DestroyTexture(t->texture);
        free(t->pixels);
        t->pixels = malloc((size_t)w * (size_t)h * sizeof *t->pixels);
        t->texture = SDL_CreateTexture(t->renderer, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STREAMING, w, h);
        if (!t->pixels || !t->texture) return -1;
        t->w = w;
        t->h = h;
        cradle_softdraw_init(&t->sd, t->pixels, w, h, w, t->view_w, t->view_h);
    }
    /* Black unless the game clears (deferred: only the last clear is painted). */
    cradle_softdraw_clear(&t->sd, 0x000000ffu);
    cradle_softdraw_frame(&t->sd, shake_x, shake_y);
    *world = cradle_softdraw_world(&t->sd);
    *screen = cradle_softdraw_screen(&t->sd);
    return 0;
}

static void target_letterbox(frame_target *t) {
    if (t->soft) cradle_softdraw_letterbox(&t->sd);
    else cradle_render_sdl_letterbox(t->sdl);
}

static void target_end(frame_target *t) {
    if (!t->soft) return;
    cradle_softdraw_finish(&t->sd);
    SDL_UpdateTexture(t->texture, NULL, t->pixels, t->w * (int)sizeof *t->pixels);
    SDL_RenderCopy(t->renderer, t->texture, NULL, NULL);
}

static void target_close(frame_target *t) {
    if (t->texture) SDL_DestroyTexture(t->texture);
    free(t->pixels);
    t->texture = NULL;
    t->pixels = NULL;
}

/* Opens the window and renderer: accelerated with vsync, else software. */
static int open_window(const cradle_client_options *o, const cradle_game_contract *k, SDL_Window **window,
                       SDL_Renderer **renderer, const char *title) {
    int w = (int)o->width, h = (int)o->height;
    if (!w || !h) {
        uint32_t vw = k->view_width ? k->view_width : 640u, vh = k->view_height ? k->view_height : 480u;
        uint32_t scale = 1;
        while (vw * scale < 960u) scale++;
        w = (int)(vw * scale);
        h = (int)(vh * scale);
    }
    Uint32 flags = SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI;
    if (o->fullscreen) flags |= SDL_WINDOW_FULLSCREEN_DESKTOP;
    *window = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, w, h, flags);
    if (!*window) return -1;
    *renderer = SDL_CreateRenderer(*window, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
    if (!*renderer) *renderer = SDL_CreateRenderer(*window, -1, SDL_RENDERER_SOFTWARE);
    return *renderer ? 0 : -1;
}

static void open_controllers(void) {
    for (int i = 0; i < SDL_NumJoysticks(); i++)
        if (SDL_IsGameController(i)) (void)SDL_GameControllerOpen(i);
}

/* Saves the renderer's output as a BMP. */
static int save_screenshot(SDL_Renderer *renderer, const char *path) {
    int w = 0, h = 0;
    if (SDL_GetRendererOutputSize(renderer, &w, &h) != 0) return -1;
    SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, w, h, 24, SDL_PIXELFORMAT_RGB24);
    if (!s) return -1;
    int rc = SDL_RenderReadPixels(renderer, NULL, SDL_PIXELFORMAT_RGB24, s->pixels, s->pitch);
    if (rc == 0) rc = SDL_SaveBMP(s, path);
    SDL_FreeSurface(s);
    return rc;
}

bool cradle_client_video_init(void) {
    /* Without a display, SDL either fails or (2.26) settles for its offscreen
     * or dummy driver, which shows nothing; both mean headless. Asked for by
     * name in SDL_VIDEODRIVER, any driver is used (tests, screenshots). */
    const char *asked = getenv("SDL_VIDEODRIVER");
    if (!asked && !getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) {
        fprintf(stderr, "cradle-client: no display (DISPLAY and WAYLAND_DISPLAY are unset); running headless\n");
        return false;
    }
    if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_GAMECONTROLLER) != 0) {
        fprintf(stderr, "cradle-client: no display (%s); running headless\n", SDL_GetError());
        SDL_Quit();
        return false;
    }
    const char *driver = SDL_GetCurrentVideoDriver();
    if (!asked && driver && (strcmp(driver, "offscreen") == 0 || strcmp(driver, "dummy") == 0)) {
        fprintf(stderr, "cradle-client: no display (SDL found only its %s video driver); running headless\n",
                driver);
        SDL_Quit();
        return false;
    }
    return true;
}

/* Everything one window session holds, from the options to the teardown
 * (large: kept in static storage). */
typedef struct window_session {
    const cradle_client_options *o;
    char message[CRADLE_BINDINGS_MESSAGE_MAX];
    char report[64]; /* the default desync report path */
    SDL_Window *window;
    SDL_Renderer *renderer;
    cradle_render_sdl render;
    cradle_audio audio;
    cradle_netclient net;
    cradle_bindings bindings;
    cradle_present present;
    cradle_script script;
    cradle_input_source input;
    FILE *output;
    bool render_ready;
    bool vsync;
    frame_target target;
    const cradle_game_contract *k; /* the contract in charge after the last step run */
} window_session;

/* The frame loop's clocks, counters and outcome. */
typedef struct frame_loop {
    uint64_t now, last_frame, last_step_ns, fps_window, frames;
    double fps;
    bool quit, reported;
    int status;
} frame_loop;

/* Loads the key bindings from --config or the default path, else the defaults. */
static void load_bindings(window_session *s) {
    char path[4096];
    const char *config_path = s->o->config;
    if (!config_path && cradle_bindings_default_path(path, sizeof path)) config_path = path;
    if (config_path) {
        cradle_bindings_outcome outcome =
            cradle_bindings_load(&s->bindings, config_path, s->message, sizeof s->message);
        if (s->message[0]) fprintf(stderr, "cradle-client: config %s\n", s->message);
        (void)outcome;
    } else {
        cradle_bindings_defaults(&s->bindings);
    }
}

/* Loads the script, opens --output and starts the connection; -1 (said on stderr) on failure. */
static int open_session(window_session *s, uint64_t now) {
    const cradle_client_options *o = s->o;
    if (o->script && cradle_script_load(&s->script, o->script, s->message, sizeof s->message) != 0) {
        fprintf(stderr, "cradle-client: %s\n", s->message);
        return -1;
    }
    if (o->output && !(s->output = fopen(o->output, "wb"))) {
        fprintf(stderr, "cradle-client: cannot create --output %s\n", o->output);
        return -1;
    }
    s->input.script = o->script ? &s->script : NULL;
    s->input.use_bot = o->bot;
    s->input.net = &s->net;
    cradle_bot_init(&s->input.bot, o->seed);
    cradle_netclient_config config = cradle_client_net_config(o);
    snprintf(s->report, sizeof s->report, "cradle-desync-%ld.bin", (long)getpid());
    config.desync_report = o->desync_report ? o->desync_report : s->report;
    config.output = s->output;
    config.input = cradle_input_source_fill;
    config.input_context = &s->input;
    if (cradle_netclient_open(&s->net, &config, now) != 0) {
        fprintf(stderr, "cradle-client: %s\n", s->net.message);
        return -1;
    }
    s->k = s->net.sim.contract;
    return 0;
}

/* Opens the window, the renderer and its frame target, presentation, audio
 * and controllers; -1 (said on stderr) on failure. */
static int open_display(window_session *s) {
    const cradle_client_options *o = s->o;
    const cradle_game_contract *k = s->k;
    char title[128];
    snprintf(title, sizeof title, "%s - cradle-client %s:%u", k->name, o->host, (unsigned)o->port);
    if (open_window(o, k, &s->window, &s->renderer, title) != 0) {
        fprintf(stderr, "cradle-client: cannot open a window: %s\n", SDL_GetError());
        return -1;
    }
    if (cradle_render_sdl_init(&s->render, s->renderer, k->view_width, k->view_height, s->message,
                               sizeof s->message) != 0) {
        fprintf(stderr, "cradle-client: %s\n", s->message);
        return -1;
    }
    s->render_ready = true;
    SDL_RendererInfo info;
    s->vsync = SDL_GetRendererInfo(s->renderer, &info) == 0 && (info.flags & SDL_RENDERER_PRESENTVSYNC);
    s->target = (frame_target){
        .renderer = s->renderer, .sdl = &s->render, .view_w = k->view_width, .view_h = k->view_height};
    /* CRADLE_CLIENT_DRAW=sdl|soft overrides the choice (to compare them). */
    const char *draw_choice = getenv("CRADLE_CLIENT_DRAW");
    s->target.soft = draw_choice ? strcmp(draw_choice, "soft") == 0 : strcmp(info.name, "software") == 0;
    fprintf(stderr, "cradle-client: SDL renderer %s%s, drawing with %s\n", info.name, s->vsync ? " (vsync)" : "",
            s->target.soft ? "softdraw" : "SDL");
    cradle_present_init(&s->present, particle_storage, PARTICLES, o->seed ^ 0x5eedu);
    if (!o->mute) {
        if (cradle_audio_init(&s->audio, true, s->message, sizeof s->message) != 0 || s->message[0])
            fprintf(stderr, "cradle-client: %s\n", s->message[0] ? s->message : "no audio");
        s->present.play = cradle_audio_play;
        s->present.play_context = &s->audio;
    }
    open_controllers();
    return 0;
}

/* Feeds the pending SDL events to the bindings; true when the window is to close. */
static bool poll_events(cradle_bindings *bindings) {
    bool quit = false;
    SDL_Event e;
    while (SDL_PollEvent(&e)) {
        switch (e.type) {
        case SDL_QUIT: quit = true; break;
        case SDL_KEYDOWN:
        case SDL_KEYUP:
            if (e.type == SDL_KEYDOWN && e.key.keysym.sym == SDLK_ESCAPE) quit = true;
            cradle_bindings_key(bindings, e.key.keysym.sym, e.type == SDL_KEYDOWN, e.key.repeat != 0);
            break;
        case SDL_CONTROLLERDEVICEADDED: (void)SDL_GameControllerOpen(e.cdevice.which); break;
        case SDL_CONTROLLERBUTTONDOWN:
        case SDL_CONTROLLERBUTTONUP:
            cradle_bindings_button(bindings, e.cbutton.button, e.type == SDL_CONTROLLERBUTTONDOWN);
            break;
        case SDL_WINDOWEVENT:
            if (e.window.event == SDL_WINDOWEVENT_FOCUS_LOST) cradle_bindings_release_all(bindings);
            break;
        default: break;
        }
    }
    return quit;
}

/* The game's sounds, (re)loaded beside --game when a reload brought
 * another library; a file that cannot be read is named and stays silent. */
static void follow_sounds(window_session *s) {
    if (s->o->mute) return;
    if (cradle_audio_follow(&s->audio, s->k, s->o->game, s->message, sizeof s->message) && s->message[0])
        fprintf(stderr, "cradle-client: %s (those sounds stay silent)\n", s->message);
}

/* Runs up to CRADLE_WINDOW_MAX_STEPS_PER_FRAME received steps, each one's
 * events going to the game's react(); --steps reached sets quit. */
static void run_due_steps(window_session *s, frame_loop *l) {
    cradle_netclient *net = &s->net;
    for (uint32_t i = 0; i < CRADLE_WINDOW_MAX_STEPS_PER_FRAME; i++) {
        if (cradle_netclient_step(net, l->now) != 1) break;
        l->last_step_ns = l->now;
        s->k = net->sim.contract; /* may change at a reload */
        follow_sounds(s);
        if (s->k->react) {
            cradle_fx fx = cradle_present_fx(&s->present);
            s->k->react(net->sim.state, cradle_events_data(&net->sim.events), cradle_events_count(&net->sim.events),
                        &fx);
        }
        if (s->o->steps && net->sim.next_step >= s->o->steps) l->quit = true;
    }
}

/* Reports a failure or a desync once; false when the loop is to end at once. */
static bool report_once(window_session *s, frame_loop *l, bool was_playing) {
    cradle_netclient *net = &s->net;
    if (net->error && !l->reported) {
        l->reported = true;
        l->status = cradle_client_report_failure(net, "cradle-client");
        if (!was_playing && !net->sim.has_previous) return false; /* never joined: nothing to show */
        if (s->o->steps || s->o->screenshot) return false; /* automated: nobody will close the window */
    }
    if (net->desync && !l->reported) {
        l->reported = true;
        l->status = cradle_client_report_failure(net, "cradle-client");
    }
    return true;
}

/* Advances the frame clock and the frame rate shown (measured over half a
 * second); returns the seconds since the last frame. */
static float tick_clock(frame_loop *l) {
    float dt = (float)(l->now - l->last_frame) / 1e9f;
    l->last_frame = l->now;
    l->frames++;
    if (l->now - l->fps_window >= 500000000ull) {
        l->fps = (double)l->frames * 1e9 / (double)(l->now - l->fps_window);
        l->frames = 0;
        l->fps_window = l->now;
    }
    return dt;
}

/* Draws the game between the state before the last step and the current
 * one, then the particles, when there is a state to show. */
static void draw_world(window_session *s, const frame_loop *l, cradle_draw *world) {
    const cradle_netclient *net = &s->net;
    const cradle_game_contract *k = s->k;
    if (!net->sim.state || net->phase == CRADLE_NETCLIENT_JOINING ||
        !(net->sim.has_previous || net->phase == CRADLE_NETCLIENT_PLAYING) || !k->render)
        return;
    float alpha = cradle_present_alpha(l->now > l->last_step_ns ? l->now - l->last_step_ns : 0, k->steps_per_second, 1.0);
    k->render(net->sim.has_previous ? net->sim.previous : net->sim.state, net->sim.state, alpha, world);
    cradle_present_draw(&s->present, world);
}

/* Sets the HUD's banner (and its detail line, written into detail) for the
 * session's state: ended, desync, connecting, joining, waiting for a build. */
static void set_banner(const cradle_netclient *net, cradle_hud_info *hud, char *detail, size_t detail_size) {
    if (net->error) {
        hud->banner =
            net->error == CRADLE_ENET_INIT || net->error == CRADLE_ENET_TIMEOUT ? "CONNECTION LOST" : "SESSION ENDED";
        snprintf(detail, detail_size, "%.90s", net->message);
        hud->detail = detail;
        hud->banner_rgba = 0xff5252ffu;
    } else if (net->desync) {
        hud->banner = "DESYNC";
        snprintf(detail, detail_size, "FIRST DIFFERING STEP %" PRIu64 " - REPORT %.40s", net->desync_step,
                 net->config.desync_report ? net->config.desync_report : "-");
        hud->detail = detail;
        hud->banner_rgba = 0xffab40ffu;
    } else if (net->phase == CRADLE_NETCLIENT_CONNECTING || net->phase == CRADLE_NETCLIENT_HELLO) {
        hud->banner = "CONNECTING";
        hud->banner_rgba = 0x80d8ffffu;
    } else if (net->phase == CRADLE_NETCLIENT_JOINING) {
        hud->banner = "JOINING";
        hud->banner_rgba = 0x80d8ffffu;
    } else if (net->reload_pending && net->sim.next_step == net->reload_at) {
        hud->banner = "WAITING FOR BUILD";
        hud->detail = net->reload_build;
        hud->banner_rgba = 0x80d8ffffu;
    }
}

/* Draws the HUD: step, round trip, delay, players, slot, queue, frame rate, banner. */
static void draw_hud(window_session *s, const frame_loop *l, cradle_draw *screen) {
    cradle_netclient *net = &s->net;
    cradle_hud_info hud = {.step = net->sim.next_step,
                           .rtt_ms = net->rtt_ns ? (double)net->rtt_ns / 1e6 : -1.0,
                           .input_delay = net->welcome.input_delay,
                           .players = cradle_netclient_players_present(net),
                           .player_limit = net->welcome.players,
                           .slot = net->welcome.slot == CRADLE_WIRE_SPECTATOR ? -1 : (int)net->welcome.slot,
                           .pending = cradle_netclient_pending(net),
                           .fps = l->fps};
    char detail[96];
    set_banner(net, &hud, detail, sizeof detail);
    cradle_hud_draw(&hud, screen, s->target.w, s->target.h);
}

/* Saves --screenshot once the session has run --screenshot-after steps from
 * its join, and ends the loop. */
static void take_screenshot_when_due(window_session *s, frame_loop *l) {
    const cradle_client_options *o = s->o;
    const cradle_netclient *net = &s->net;
    if (!o->screenshot || net->phase != CRADLE_NETCLIENT_PLAYING ||
        net->sim.next_step < net->welcome.start_step + o->screenshot_after)
        return;
    if (save_screenshot(s->renderer, o->screenshot) != 0) {
        fprintf(stderr, "cradle-client: cannot save the screenshot: %s\n", SDL_GetError());
        l->status = 1;
    } else {
        fprintf(stderr, "cradle-client: screenshot saved to %s at step %" PRIu64 "\n", o->screenshot,
                net->sim.next_step);
    }
    l->quit = true;
}

/* One frame: events, the connection, the due steps, drawing and presenting;
 * false when the loop is to end at once. */
static bool run_frame(window_session *s, frame_loop *l) {
    const cradle_client_options *o = s->o;
    cradle_netclient *net = &s->net;
    if (poll_events(&s->bindings)) l->quit = true;
    s->input.held = cradle_bindings_bits(&s->bindings);
    l->now = cradle_client_now_ns();
    (void)cradle_netclient_service(net, l->now, 0);
    bool was_playing = cradle_netclient_playing(net);
    if (o->steps && was_playing && net->welcome.start_step >= o->steps) {
        /* --steps is the step to stop before: one already passed runs nothing. */
        fprintf(stderr,
                "cradle-client: --steps %" PRIu64 " is already past: the session was at step %" PRIu64
                " when this client joined (--steps N stops before step N; give a later step)\n",
                o->steps, net->welcome.start_step);
        l->status = 2;
        return false;
    }
    run_due_steps(s, l);
    if (!report_once(s, l, was_playing)) return false;
    cradle_present_update(&s->present, tick_clock(l));

    cradle_draw world, screen;
    if (target_begin(&s->target, s->present.shake_x, s->present.shake_y, &world, &screen) != 0) {
        fprintf(stderr, "cradle-client: cannot draw: %s\n", SDL_GetError());
        l->status = 1;
        return false;
    }
    draw_world(s, l, &world);
    target_letterbox(&s->target);
    draw_hud(s, l, &screen);
    target_end(&s->target);
    take_screenshot_when_due(s, l);
    SDL_RenderPresent(s->renderer);
    if (!s->vsync) SDL_Delay(4); /* no vsync to pace us: do not spin */
    return true;
}

/* Frees what open_session and open_display made and shuts SDL down; returns
 * the final exit status (1 when --output could not be closed). */
static int close_session(window_session *s, int status) {
    if (s->render_ready) cradle_render_sdl_deinit(&s->render);
    cradle_audio_deinit(&s->audio);
    if (s->renderer) SDL_DestroyRenderer(s->renderer);
    if (s->window) SDL_DestroyWindow(s->window);
    cradle_netclient_close(&s->net);
    cradle_script_free(&s->script);
    if (s->output && fclose(s->output) != 0 && status == 0) status = 1;
    SDL_Quit();
    return status;
}

int cradle_client_run_window(const cradle_client_options *o) {
    if (!cradle_client_video_init()) return cradle_client_run_headless(o);
    static window_session session;
    window_session *s = &session;
    memset(s, 0, sizeof *s);
    s->o = o;
    load_bindings(s);
    uint64_t now = cradle_client_now_ns();
    if (open_session(s, now) != 0 || open_display(s) != 0) return close_session(s, 1);

    frame_loop l = {.now = now, .last_frame = now, .last_step_ns = now, .fps_window = now};
    while (!l.quit)
        if (!run_frame(s, &l)) break;
    if (s->net.phase == CRADLE_NETCLIENT_PLAYING && !s->net.error) {
        if (o->steps) cradle_client_print_done(stdout, &s->net);
        cradle_netclient_leave(&s->net, 300);
    }
    target_close(&s->target);
    return close_session(s, l.status);
}
