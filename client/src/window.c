/*
 * window: the one window frame loop (see window.h). A frame: the source's
 * events, the clock, the source's steps, then the world between the last two
 * states, the particles, the letterbox, the HUD and the source's overlay,
 * presented at the display's rate.
 */
#include "window.h"

#include <SDL.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "audio.h"
#include "cradle/contract.h"
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

struct cradle_window {
    const cradle_window_source *source;
    const cradle_client_options *o;
    char message[1024];
    SDL_Window *window;
    SDL_Renderer *renderer;
    cradle_render_sdl render;
    bool render_ready;
    bool vsync;
    frame_target target;
    cradle_audio audio;
    cradle_present present;
    /* the frame clock (cradle_client_now_ns), the newest state's time, the frame rate shown */
    uint64_t now, last_frame, last_step_ns, fps_window, frames;
    double fps;
    bool quit;  /* the screenshot was saved (or failed) */
    int status; /* 1 after a frame that could not be drawn or saved */
};

/* Opens the window, the renderer and its frame target, presentation, audio
 * and controllers; -1 (said on stderr) on failure. */
static int open_display(cradle_window *w) {
    const cradle_client_options *o = w->o;
    const cradle_game_contract *k = w->source->view;
    if (open_window(o, k, &w->window, &w->renderer, w->source->title) != 0) {
        fprintf(stderr, "cradle-client: cannot open a window: %s\n", SDL_GetError());
        return -1;
    }
    if (cradle_render_sdl_init(&w->render, w->renderer, k->view_width, k->view_height, w->message,
                               sizeof w->message) != 0) {
        fprintf(stderr, "cradle-client: %s\n", w->message);
        return -1;
    }
    w->render_ready = true;
    SDL_RendererInfo info;
    w->vsync = SDL_GetRendererInfo(w->renderer, &info) == 0 && (info.flags & SDL_RENDERER_PRESENTVSYNC);
    w->target = (frame_target){
        .renderer = w->renderer, .sdl = &w->render, .view_w = k->view_width, .view_h = k->view_height};
    /* CRADLE_CLIENT_DRAW=sdl|soft overrides the choice (to compare them). */
    const char *draw_choice = getenv("CRADLE_CLIENT_DRAW");
    w->target.soft = draw_choice ? strcmp(draw_choice, "soft") == 0 : strcmp(info.name, "software") == 0;
    fprintf(stderr, "cradle-client: SDL renderer %s%s, drawing with %s\n", info.name, w->vsync ? " (vsync)" : "",
            w->target.soft ? "softdraw" : "SDL");
    cradle_present_init(&w->present, particle_storage, PARTICLES, o->seed ^ 0x5eedu);
    if (!o->mute) {
        if (cradle_audio_init(&w->audio, true, w->message, sizeof w->message) != 0 || w->message[0])
            fprintf(stderr, "cradle-client: %s\n", w->message[0] ? w->message : "no audio");
        w->present.play = cradle_audio_play;
        w->present.play_context = &w->audio;
    }
    open_controllers();
    return 0;
}

static void close_display(cradle_window *w) {
    target_close(&w->target);
    if (w->render_ready) cradle_render_sdl_deinit(&w->render);
    cradle_audio_deinit(&w->audio);
    if (w->renderer) SDL_DestroyRenderer(w->renderer);
    if (w->window) SDL_DestroyWindow(w->window);
}

void cradle_window_jumped(cradle_window *w) { w->last_step_ns = w->now; }

void cradle_window_shown(cradle_window *w, const cradle_sim *sim, const cradle_event_queue *present,
                         const cradle_sim *confirmed, const cradle_event_queue *confirmed_events) {
    w->last_step_ns = w->now;
    const cradle_game_contract *k = sim->contract; /* may change at a reload */
    /* The game's sounds, (re)loaded when a reload brought another library;
     * a file that cannot be read is named and stays silent. */
    if (!w->o->mute &&
        cradle_audio_follow(&w->audio, k, w->source->sound_library(w->source->context), w->message,
                            sizeof w->message) &&
        w->message[0])
        fprintf(stderr, "cradle-client: %s (those sounds stay silent)\n", w->message);
    cradle_fx fx = cradle_present_fx(&w->present);
    if (k->react)
        k->react(sim->state, cradle_events_data(present), cradle_events_count(present), &fx);
    cradle_game_react_fn *react_confirmed = cradle_contract_react_confirmed(k);
    if (react_confirmed && cradle_events_count(confirmed_events))
        react_confirmed(confirmed->state, cradle_events_data(confirmed_events), cradle_events_count(confirmed_events),
                        &fx);
}

void cradle_window_stepped(cradle_window *w, const cradle_sim *sim) {
    cradle_window_shown(w, sim, &sim->events, sim, &sim->events);
}

/* Reads the clock for the frame and advances the frame rate shown (measured
 * over half a second); returns the nanoseconds since the last frame. */
static uint64_t tick_clock(cradle_window *w) {
    w->now = cradle_client_now_ns();
    uint64_t elapsed = w->now - w->last_frame;
    w->last_frame = w->now;
    w->frames++;
    if (w->now - w->fps_window >= 500000000ull) {
        w->fps = (double)w->frames * 1e9 / (double)(w->now - w->fps_window);
        w->frames = 0;
        w->fps_window = w->now;
    }
    return elapsed;
}

/* Draws the game between the state before the last step and the current
 * one at the alpha of window.h, then the particles. */
static void draw_world(cradle_window *w, double rate, cradle_draw *world) {
    const cradle_sim *sim = w->source->sim(w->source->context);
    if (!sim || !sim->state || !sim->contract->render) return;
    const cradle_game_contract *k = sim->contract;
    uint64_t since = w->now > w->last_step_ns ? w->now - w->last_step_ns : 0;
    float alpha = cradle_present_alpha(since, k->steps_per_second, rate);
    k->render(sim->has_previous ? sim->previous : sim->state, sim->state, alpha, world);
    cradle_present_draw(&w->present, world);
}

static void draw_hud(cradle_window *w, cradle_draw *screen) {
    cradle_window_hud hud = {.info = {.slot = -2}};
    w->source->hud(w->source->context, &hud);
    hud.info.fps = w->fps;
    cradle_hud_draw(&hud.info, screen, w->target.w, w->target.h);
    if (w->source->overlay) w->source->overlay(w->source->context, screen, w->target.w, w->target.h);
}

/* Saves --screenshot once the source says it is due, and ends the loop. */
static void take_screenshot_when_due(cradle_window *w) {
    const cradle_window_source *src = w->source;
    if (!w->o->screenshot || !src->screenshot_due || !src->screenshot_due(src->context)) return;
    const cradle_sim *sim = src->sim(src->context);
    if (save_screenshot(w->renderer, w->o->screenshot) != 0) {
        fprintf(stderr, "cradle-client: cannot save the screenshot: %s\n", SDL_GetError());
        w->status = 1;
    } else {
        fprintf(stderr, "cradle-client: screenshot saved to %s at step %" PRIu64 "\n", w->o->screenshot,
                sim ? sim->next_step : 0);
    }
    w->quit = true;
}

/* One frame: events, the source's steps, drawing and presenting; false when
 * the loop is to end at once. */
static bool run_frame(cradle_window *w) {
    const cradle_window_source *src = w->source;
    int window_w = 0, window_h = 0;
    SDL_GetWindowSize(w->window, &window_w, &window_h);
    src->poll(src->context, window_w, window_h);
    uint64_t elapsed = tick_clock(w);
    if (!src->advance(src->context, w, w->now, elapsed)) return false;
    double rate = src->rate(src->context);
    cradle_present_update(&w->present, rate > 0.0 ? (float)elapsed / 1e9f : 0.0f);

    cradle_draw world, screen;
    if (target_begin(&w->target, w->present.shake_x, w->present.shake_y, &world, &screen) != 0) {
        fprintf(stderr, "cradle-client: cannot draw: %s\n", SDL_GetError());
        w->status = 1;
        return false;
    }
    draw_world(w, rate, &world);
    target_letterbox(&w->target);
    draw_hud(w, &screen);
    target_end(&w->target);
    take_screenshot_when_due(w);
    SDL_RenderPresent(w->renderer);
    if (!w->vsync) SDL_Delay(4); /* no vsync to pace us: do not spin */
    return true;
}

int cradle_window_run(const cradle_window_source *source, const cradle_client_options *o) {
    static cradle_window window; /* large (the audio's voices, the message): static storage */
    cradle_window *w = &window;
    memset(w, 0, sizeof *w);
    w->source = source;
    w->o = o;
    int status = 1;
    if (open_display(w) != 0) goto out_close_display;
    w->now = w->last_frame = w->last_step_ns = w->fps_window = cradle_client_now_ns();
    while (!w->quit && !source->done(source->context))
        if (!run_frame(w)) break;
    status = source->finish(source->context);
    if (w->status) status = w->status;
out_close_display:
    close_display(w);
    return status;
}
