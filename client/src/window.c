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

int cradle_client_run_window(const cradle_client_options *o) {
    if (!cradle_client_video_init()) return cradle_client_run_headless(o);
    int status = 1;
    char message[CRADLE_BINDINGS_MESSAGE_MAX];
    char path[4096];
    SDL_Window *window = NULL;
    SDL_Renderer *renderer = NULL;
    static cradle_render_sdl render;
    static cradle_audio audio;
    static cradle_netclient net;
    static cradle_bindings bindings;
    static cradle_present present;
    cradle_script script = {0};
    cradle_input_source input = {0};
    FILE *output = NULL;
    bool render_ready = false;

    const char *config_path = o->config;
    if (!config_path && cradle_bindings_default_path(path, sizeof path)) config_path = path;
    if (config_path) {
        cradle_bindings_outcome outcome = cradle_bindings_load(&bindings, config_path, message, sizeof message);
        if (message[0]) fprintf(stderr, "cradle-client: config %s\n", message);
        (void)outcome;
    } else {
        cradle_bindings_defaults(&bindings);
    }
    if (o->script && cradle_script_load(&script, o->script, message, sizeof message) != 0) {
        fprintf(stderr, "cradle-client: %s\n", message);
        goto out;
    }
    if (o->output && !(output = fopen(o->output, "wb"))) {
        fprintf(stderr, "cradle-client: cannot create --output %s\n", o->output);
        goto out;
    }
    input.script = o->script ? &script : NULL;
    input.use_bot = o->bot;
    input.net = &net;
    cradle_bot_init(&input.bot, o->seed);
    cradle_netclient_config config = cradle_client_net_config(o);
    char report[64];
    snprintf(report, sizeof report, "cradle-desync-%ld.bin", (long)getpid());
    config.desync_report = o->desync_report ? o->desync_report : report;
    config.output = output;
    config.input = cradle_input_source_fill;
    config.input_context = &input;
    uint64_t now = cradle_client_now_ns();
    if (cradle_netclient_open(&net, &config, now) != 0) {
        fprintf(stderr, "cradle-client: %s\n", net.message);
        goto out;
    }
    const cradle_game_contract *k = net.sim.contract;
    char title[128];
    snprintf(title, sizeof title, "%s - cradle-client %s:%u", k->name, o->host, (unsigned)o->port);
    if (open_window(o, k, &window, &renderer, title) != 0) {
        fprintf(stderr, "cradle-client: cannot open a window: %s\n", SDL_GetError());
        goto out;
    }
    if (cradle_render_sdl_init(&render, renderer, k->view_width, k->view_height, message, sizeof message) != 0) {
        fprintf(stderr, "cradle-client: %s\n", message);
        goto out;
    }
    render_ready = true;
    SDL_RendererInfo info;
    bool vsync = SDL_GetRendererInfo(renderer, &info) == 0 && (info.flags & SDL_RENDERER_PRESENTVSYNC);
    frame_target target = {.renderer = renderer, .sdl = &render, .view_w = k->view_width, .view_h = k->view_height};
    /* CRADLE_CLIENT_DRAW=sdl|soft overrides the choice (to compare them). */
    const char *draw_choice = getenv("CRADLE_CLIENT_DRAW");
    target.soft = draw_choice ? strcmp(draw_choice, "soft") == 0 : strcmp(info.name, "software") == 0;
    fprintf(stderr, "cradle-client: SDL renderer %s%s, drawing with %s\n", info.name, vsync ? " (vsync)" : "",
            target.soft ? "softdraw" : "SDL");
    cradle_present_init(&present, particle_storage, PARTICLES, o->seed ^ 0x5eedu);
    if (!o->mute) {
        if (cradle_audio_init(&audio, true, message, sizeof message) != 0 || message[0])
            fprintf(stderr, "cradle-client: %s\n", message[0] ? message : "no audio");
        present.play = cradle_audio_play;
        present.play_context = &audio;
    }
    open_controllers();

    uint64_t last_frame = now, last_step_ns = now, fps_window = now, frames = 0;
    double fps = 0.0;
    bool quit = false, reported = false;
    status = 0;
    while (!quit) {
        SDL_Event e;
        while (SDL_PollEvent(&e)) {
            switch (e.type) {
            case SDL_QUIT: quit = true; break;
            case SDL_KEYDOWN:
            case SDL_KEYUP:
                if (e.type == SDL_KEYDOWN && e.key.keysym.sym == SDLK_ESCAPE) quit = true;
                cradle_bindings_key(&bindings, e.key.keysym.sym, e.type == SDL_KEYDOWN, e.key.repeat != 0);
                break;
            case SDL_CONTROLLERDEVICEADDED: (void)SDL_GameControllerOpen(e.cdevice.which); break;
            case SDL_CONTROLLERBUTTONDOWN:
            case SDL_CONTROLLERBUTTONUP:
                cradle_bindings_button(&bindings, e.cbutton.button, e.type == SDL_CONTROLLERBUTTONDOWN);
                break;
            case SDL_WINDOWEVENT:
                if (e.window.event == SDL_WINDOWEVENT_FOCUS_LOST) cradle_bindings_release_all(&bindings);
                break;
            default: break;
            }
        }
        input.held = cradle_bindings_bits(&bindings);
        now = cradle_client_now_ns();
        (void)cradle_netclient_service(&net, now, 0);
        bool was_playing = cradle_netclient_playing(&net);
        if (o->steps && was_playing && net.welcome.start_step >= o->steps) {
            /* --steps is the step to stop before: one already passed runs nothing. */
            fprintf(stderr,
                    "cradle-client: --steps %" PRIu64 " is already past: the session was at step %" PRIu64
                    " when this client joined (--steps N stops before step N; give a later step)\n",
                    o->steps, net.welcome.start_step);
            status = 2;
            break;
        }
        for (uint32_t i = 0; i < CRADLE_WINDOW_MAX_STEPS_PER_FRAME; i++) {
            if (cradle_netclient_step(&net, now) != 1) break;
            last_step_ns = now;
            k = net.sim.contract; /* may change at a reload */
            if (k->react) {
                cradle_fx fx = cradle_present_fx(&present);
                k->react(net.sim.state, cradle_events_data(&net.sim.events), cradle_events_count(&net.sim.events), &fx);
            }
            if (o->steps && net.sim.next_step >= o->steps) quit = true;
        }
        if (net.error && !reported) {
            reported = true;
            status = cradle_client_report_failure(&net, "cradle-client");
            if (!was_playing && !net.sim.has_previous) break; /* never joined: nothing to show */
            if (o->steps || o->screenshot) break; /* automated: nobody will close the window */
        }
        if (net.desync && !reported) {
            reported = true;
            status = cradle_client_report_failure(&net, "cradle-client");
        }
        float dt = (float)(now - last_frame) / 1e9f;
        last_frame = now;
        frames++;
        if (now - fps_window >= 500000000ull) {
            fps = (double)frames * 1e9 / (double)(now - fps_window);
            frames = 0;
            fps_window = now;
        }
        cradle_present_update(&present, dt);

        /* draw */
        cradle_draw world, screen;
        if (target_begin(&target, present.shake_x, present.shake_y, &world, &screen) != 0) {
            fprintf(stderr, "cradle-client: cannot draw: %s\n", SDL_GetError());
            status = 1;
            break;
        }
        if (net.sim.state && net.phase != CRADLE_NETCLIENT_JOINING && (net.sim.has_previous || net.phase == CRADLE_NETCLIENT_PLAYING) && k->render) {
            double step_ns = 1e9 / (double)k->steps_per_second;
            double alpha = (double)(now - last_step_ns) / step_ns;
            if (alpha > 0.999) alpha = 0.999;
            if (alpha < 0.0) alpha = 0.0;
            k->render(net.sim.has_previous ? net.sim.previous : net.sim.state, net.sim.state, (float)alpha, &world);
            cradle_present_draw(&present, &world);
        }
        target_letterbox(&target);
        cradle_hud_info hud = {.step = net.sim.next_step,
                               .rtt_ms = net.rtt_ns ? (double)net.rtt_ns / 1e6 : -1.0,
                               .input_delay = net.welcome.input_delay,
                               .players = cradle_netclient_players_present(&net),
                               .player_limit = net.welcome.players,
                               .slot = net.welcome.slot == CRADLE_WIRE_SPECTATOR ? -1 : (int)net.welcome.slot,
                               .pending = cradle_netclient_pending(&net),
                               .fps = fps};
        char detail[96];
        if (net.error) {
            hud.banner = net.error == CRADLE_ENET_INIT || net.error == CRADLE_ENET_TIMEOUT ? "CONNECTION LOST" : "SESSION ENDED";
            snprintf(detail, sizeof detail, "%.90s", net.message);
            hud.detail = detail;
            hud.banner_rgba = 0xff5252ffu;
        } else if (net.desync) {
            hud.banner = "DESYNC";
            snprintf(detail, sizeof detail, "FIRST DIFFERING STEP %" PRIu64 " - REPORT %.40s", net.desync_step,
                     net.config.desync_report ? net.config.desync_report : "-");
            hud.detail = detail;
            hud.banner_rgba = 0xffab40ffu;
        } else if (net.phase == CRADLE_NETCLIENT_CONNECTING || net.phase == CRADLE_NETCLIENT_HELLO) {
            hud.banner = "CONNECTING";
            hud.banner_rgba = 0x80d8ffffu;
        } else if (net.phase == CRADLE_NETCLIENT_JOINING) {
            hud.banner = "JOINING";
            hud.banner_rgba = 0x80d8ffffu;
        } else if (net.reload_pending && net.sim.next_step == net.reload_at) {
            hud.banner = "WAITING FOR BUILD";
            hud.detail = net.reload_build;
            hud.banner_rgba = 0x80d8ffffu;
        }
        cradle_hud_draw(&hud, &screen, target.w, target.h);
        target_end(&target);
        if (o->screenshot && net.phase == CRADLE_NETCLIENT_PLAYING &&
            net.sim.next_step >= net.welcome.start_step + o->screenshot_after) {
            if (save_screenshot(renderer, o->screenshot) != 0) {
                fprintf(stderr, "cradle-client: cannot save the screenshot: %s\n", SDL_GetError());
                status = 1;
            } else {
                fprintf(stderr, "cradle-client: screenshot saved to %s at step %" PRIu64 "\n", o->screenshot,
                        net.sim.next_step);
            }
            quit = true;
        }
        SDL_RenderPresent(renderer);
        if (!vsync) SDL_Delay(4); /* no vsync to pace us: do not spin */
    }
    if (net.phase == CRADLE_NETCLIENT_PLAYING && !net.error) {
        if (o->steps) cradle_client_print_done(stdout, &net);
        cradle_netclient_leave(&net, 300);
    }
    target_close(&target);
out:
    if (render_ready) cradle_render_sdl_deinit(&render);
    cradle_audio_deinit(&audio);
    if (renderer) SDL_DestroyRenderer(renderer);
    if (window) SDL_DestroyWindow(window);
    cradle_netclient_close(&net);
    cradle_script_free(&script);
    if (output && fclose(output) != 0 && status == 0) status = 1;
    SDL_Quit();
    return status;
}
