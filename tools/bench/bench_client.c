/*
 * bench_client: cradle-client's figures (Release; prints, asserts nothing).
 *
 *  1. Frame time of a headless render at 2,000 entities: a vanguard state
 *     topped up to >= 2,000 live entities (8 bot players, enemies spawned with
 *     the game's helpers), drawn each frame by render() + particles + HUD at
 *     1280x720 with no window, measured separately for
 *       - softdraw, the client's own rasterizer (client/src/softdraw.c, what
 *         the window uses when SDL only offers a software renderer):
 *         200 warm-up frames, then 2,000 timed ones (goal <= 2 ms);
 *       - SDL's software renderer drawing into an SDL_Surface through
 *         render_sdl.c: 40 warm-up frames, then 400 timed ones (about 12 ms
 *         each: it is the comparison, not a candidate).
 *     Both see the same frames (same state, alphas and particle bursts).
 *     A second softdraw pass splits its frame by phase (clear, the game's
 *     render without its clear, particles, letterbox, HUD); that pass times
 *     each phase separately, so its total is a little above the first pass.
 *  2. Input-to-screen delay in steps at the server's default input delay (auto,
 *     measured once it settled) on
 *     loopback: a real cradle-server (started here) and an in-process
 *     netclient; 40 times, the player's input flips, and the delay is the
 *     step whose snapshot first carries the new input (the first state it can
 *     affect) minus the last step shown when the input was sampled.
 *
 * Usage: bench_client [--frames N] [--softdraw-only]
 *   --frames N       timed softdraw frames (default 2000)
 *   --softdraw-only  only the softdraw figures (for profiling under callgrind)
 */
#include <SDL.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cradle/cradle.h"
#include "hud.h"
#include "netclient.h"
#include "present.h"
#include "render_sdl.h"
#include "script.h"
#include "session_run.h"
#include "softdraw.h"
#include "vanguard_input.h"
#include "vanguard_internal.h"

#define SNAP_SIZE (CRADLE_PRESENCE_BYTES(VG_MAX_PLAYERS) + VG_MAX_PLAYERS * VANGUARD_INPUT_BYTES)
#define OUT_W 1280
#define OUT_H 720
#define SOFT_WARMUP 200
#define SOFT_FRAMES_DEFAULT 2000
#define SDL_WARMUP 40
#define SDL_FRAMES 400
#define PARTICLES 4096u
#define PHASES 6

/* Frame times are this thread's CPU time: the machine may be shared, and time
 * spent preempted is not the renderer's. */
static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts times (ms) and prints mean, p50, p99 and max. */
static void print_times(const char *what, uint32_t live, double *times, int n) {
    qsort(times, (size_t)n, sizeof times[0], compare_double);
    double sum = 0;
    for (int f = 0; f < n; f++) sum += times[f];
    printf("render: %u live entities, %dx%d %s, %d frames: mean %.3f ms, p50 %.3f ms, p99 %.3f ms, "
           "max %.3f ms (goal <= 2 ms)\n",
           live, OUT_W, OUT_H, what, n, sum / n, times[n / 2], times[(n * 99) / 100], times[n - 1]);
}

typedef struct scene {
    const cradle_game_contract *c;
    vanguard_state *s, *prev;
    uint32_t live;
    cradle_present present;
    cradle_particle particles[PARTICLES];
} scene;

static void scene_build(scene *sc) {
    const cradle_game_contract *c = vanguard_contract();
    vanguard_state *s = aligned_alloc(64, (c->state_size + 63u) / 64u * 64u);
    vanguard_state *prev = aligned_alloc(64, (c->state_size + 63u) / 64u * 64u);
    if (!s || !prev) exit(1);
    cradle_sim sim;
    cradle_sim_config sim_config = {.state = s, .previous = prev, .state_capacity = (c->state_size + 63u) / 64u * 64u,
                                    .state_align = 64, .hash = cradle_hash64};
    if (cradle_sim_init(&sim, &sim_config, c, NULL, 0) != 0 || cradle_sim_start(&sim, 1, 8) != 0) exit(1);
    cradle_rng rng;
    cradle_rng_seed(&rng, 5, 5);
    uint8_t snap[SNAP_SIZE];
    /* Play on with 8 invulnerable bots, topping enemies up, until a step ends with
     * 2,000 +- 1% live entities (shots and explosions come and go). */
    for (uint64_t i = 0; i < 2000; i++) {
        uint32_t n = cradle_ecs_live_count(vg_world(s));
        if (i >= 120 && n >= 1980 && n <= 2020) break;
        while (i % 5 == 0 && cradle_ecs_live_count(vg_world(s)) < 1900) {
            uint8_t type = (uint8_t)cradle_rng_below(&rng, 3);
            int32_t x = cradle_rng_range(&rng, 220, 630) * VG_FP, y = cradle_rng_range(&rng, 10, 350) * VG_FP;
            if (vanguard_spawn_enemy(s, type, x, y, x, y) == CRADLE_ENTITY_NONE) break;
        }
        for (uint32_t p = 0; p < VG_MAX_PLAYERS; p++)
            if (s->players[p].ship != CRADLE_ENTITY_NONE) s->players[p].invulnerable = 2;
        memset(snap, 0, sizeof snap);
        snap[0] = 0xFF;
        for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++)
            (void)vanguard_input_pack(snap + 1 + slot, 1, vanguard_bot_actions(s, slot, i));
        cradle_sim_step(&sim, snap);
    }
    sc->c = c;
    sc->s = s;
    sc->prev = prev;
    sc->live = cradle_ecs_live_count(vg_world(s));
}

/* Every run starts the particles over from the same seed, so each sees the
 * same frames. Frame f: a burst every 10th frame, then 1/60 s of motion. */
static void particles_reset(scene *sc) {
    cradle_present_init(&sc->present, sc->particles, PARTICLES, 3);
}

static void particles_frame(scene *sc, int f) {
    cradle_fx fx = cradle_present_fx(&sc->present);
    if (f % 10 == 0) fx.burst(fx.context, 320.0f, 180.0f, 100, 0xffab40ffu, 200.0f, 0.8f);
}

static cradle_hud_info hud_for(int f) {
    return (cradle_hud_info){.step = (uint64_t)f, .rtt_ms = 0.3, .input_delay = 3, .players = 8,
                             .player_limit = 8, .slot = 0, .fps = 144.0};
}

static float alpha_for(int f) { return (float)(f % 16) / 16.0f; }

static void sdl_frames(scene *sc) {
    SDL_Surface *surface = SDL_CreateRGBSurfaceWithFormat(0, OUT_W, OUT_H, 32, SDL_PIXELFORMAT_RGBA32);
    SDL_Renderer *renderer = surface ? SDL_CreateSoftwareRenderer(surface) : NULL;
    static cradle_render_sdl r;
    char message[256];
    if (!renderer ||
        cradle_render_sdl_init(&r, renderer, sc->c->view_width, sc->c->view_height, message, sizeof message) != 0) {
        fprintf(stderr, "bench_client: no software renderer: %s\n", SDL_GetError());
        exit(1);
    }
    static double times[SDL_FRAMES];
    particles_reset(sc);
    for (int f = 0; f < SDL_WARMUP + SDL_FRAMES; f++) {
        particles_frame(sc, f);
        double t0 = cpu_s();
        cradle_present_update(&sc->present, 1.0f / 60.0f);
        cradle_render_sdl_frame(&r, sc->present.shake_x, sc->present.shake_y);
        cradle_draw world = cradle_render_sdl_world(&r), screen = cradle_render_sdl_screen(&r);
        SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255);
        SDL_RenderClear(renderer);
        sc->c->render(sc->prev, sc->s, alpha_for(f), &world);
        cradle_present_draw(&sc->present, &world);
        cradle_render_sdl_letterbox(&r);
        cradle_hud_info hud = hud_for(f);
        cradle_hud_draw(&hud, &screen, r.output_w, r.output_h);
        SDL_RenderPresent(renderer);
        if (f >= SDL_WARMUP) times[f - SDL_WARMUP] = (cpu_s() - t0) * 1e3;
    }
    print_times("SDL software renderer (SDL_CreateSoftwareRenderer, render_sdl.c)", sc->live, times, SDL_FRAMES);
    cradle_render_sdl_deinit(&r);
    SDL_DestroyRenderer(renderer);
    SDL_FreeSurface(surface);
}

static uint32_t soft_pixels[OUT_W * OUT_H];

static void softdraw_frames(scene *sc, int frames) {
    static cradle_softdraw sd;
    cradle_softdraw_init(&sd, soft_pixels, OUT_W, OUT_H, OUT_W, sc->c->view_width, sc->c->view_height);
    double *times = malloc((size_t)frames * sizeof *times);
    if (!times) exit(1);
    /* Frame f as the window draws it with softdraw (window.c target_begin and
     * target_end): black, then the game (which clears to its own colour; the
     * clears are deferred, so only the last one is painted), the particles,
     * the letterbox, the HUD, and finish. */
    particles_reset(sc);
    for (int f = 0; f < SOFT_WARMUP + frames; f++) {
        particles_frame(sc, f);
        double t0 = cpu_s();
        cradle_present_update(&sc->present, 1.0f / 60.0f);
        cradle_softdraw_clear(&sd, 0x000000ffu);
        cradle_softdraw_frame(&sd, sc->present.shake_x, sc->present.shake_y);
        cradle_draw world = cradle_softdraw_world(&sd), screen = cradle_softdraw_screen(&sd);
        sc->c->render(sc->prev, sc->s, alpha_for(f), &world);
        cradle_present_draw(&sc->present, &world);
        cradle_softdraw_letterbox(&sd);
        cradle_hud_info hud = hud_for(f);
        cradle_hud_draw(&hud, &screen, OUT_W, OUT_H);
        cradle_softdraw_finish(&sd);
        if (f >= SOFT_WARMUP) times[f - SOFT_WARMUP] = (cpu_s() - t0) * 1e3;
    }
    print_times("softdraw (the client's rasterizer, as the window draws)", sc->live, times, frames);
    free(times);

    /* The phase split: the game's clear goes first on its own (vanguard
     * clears to 0x0b0b1e) and is painted at once, then render() runs with no
     * clear callback. */
    static const char *const names[PHASES] = {"particle update", "clear", "game render w/o clear",
                                              "particles", "letterbox", "hud"};
    double sum[PHASES] = {0};
    particles_reset(sc);
    for (int f = 0; f < SOFT_WARMUP + frames; f++) {
        particles_frame(sc, f);
        double t[PHASES + 1];
        t[0] = cpu_s();
        cradle_present_update(&sc->present, 1.0f / 60.0f);
        cradle_softdraw_frame(&sd, sc->present.shake_x, sc->present.shake_y);
        cradle_draw world = cradle_softdraw_world(&sd), screen = cradle_softdraw_screen(&sd);
        t[1] = cpu_s();
        world.clear(world.context, 0x0b0b1effu);
        cradle_softdraw_finish(&sd);
        t[2] = cpu_s();
        cradle_draw no_clear = world;
        no_clear.clear = NULL;
        sc->c->render(sc->prev, sc->s, alpha_for(f), &no_clear);
        t[3] = cpu_s();
        cradle_present_draw(&sc->present, &world);
        t[4] = cpu_s();
        cradle_softdraw_letterbox(&sd);
        t[5] = cpu_s();
        cradle_hud_info hud = hud_for(f);
        cradle_hud_draw(&hud, &screen, OUT_W, OUT_H);
        t[6] = cpu_s();
        if (f >= SOFT_WARMUP)
            for (int i = 0; i < PHASES; i++) sum[i] += (t[i + 1] - t[i]) * 1e3;
    }
    printf("softdraw phases, mean ms per frame (%u particles alive at the end):", sc->present.count);
    for (int i = 0; i < PHASES; i++) printf("%s %s %.3f", i ? "," : "", names[i], sum[i] / frames);
    printf("\n");
}

static void frame_time(int frames, bool softdraw_only) {
    static scene sc;
    scene_build(&sc);
    softdraw_frames(&sc, frames);
    if (!softdraw_only) sdl_frames(&sc);
    free(sc.s);
    free(sc.prev);
}

/* ---- input-to-screen delay ---- */

typedef struct probe {
    cradle_netclient *net;
    uint32_t bits;          /* what the player holds now */
    bool waiting;           /* a flip was sampled, not seen in a snapshot yet */
    uint64_t sampled_shown; /* the last step shown when the flip was sampled */
    uint32_t expect;
} probe;

static void probe_input(void *context, uint64_t step, uint8_t *out, uint32_t input_bytes) {
    probe *p = context;
    (void)step;
    cradle_pack_bits(out, input_bytes, p->bits);
}

static void input_delay(void) {
    int port = 20000 + (int)(getpid() % 30000);
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    fflush(stdout);
    pid_t server = fork();
    if (server == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(127);
        /* Plaintext on loopback: the delay in steps does not depend on
         * the encryption, and the bench needs no keys. */
        execl(BENCH_CLIENT_SERVER, "cradle-server", "--bind", "127.0.0.1", "--port", port_text, "--game",
              BENCH_CLIENT_GAME, "--players", "2", "--insecure", (char *)NULL);
        _exit(127);
    }
    struct timespec settle = {0, 300000000};
    nanosleep(&settle, NULL);
    if (enet_initialize() != 0) return;
    static cradle_netclient net;
    static probe p;
    p.net = &net;
    cradle_netclient_config config = {.port = (uint16_t)port, .game = BENCH_CLIENT_GAME, .requested_slot = -1,
                                      .input = probe_input, .input_context = &p, .insecure = true};
    if (cradle_netclient_open(&net, &config, cradle_client_now_ns()) != 0) {
        fprintf(stderr, "bench_client: %s\n", net.message);
        goto out;
    }
    uint64_t delays[40], n = 0, next_flip = 0;
    /* The default delay (auto) settles first: 5 s of early inputs lower it. */
    double measure_from = now_s() + 8.0, deadline = now_s() + 40.0;
    while (n < 40 && now_s() < deadline && !net.error) {
        uint64_t now = cradle_client_now_ns();
        (void)cradle_netclient_service(&net, now, 1);
        while (cradle_netclient_step(&net, now) == 1) {
            uint64_t s = net.sim.next_step - 1;
            if (p.waiting) {
                const uint8_t *snap = net.history + (s % CRADLE_NETCLIENT_HISTORY) * net.snapshot_size;
                uint32_t got = cradle_snapshot_input(snap, net.welcome.max_players, net.welcome.input_bytes,
                                                     net.welcome.slot)[0];
                if (got == p.expect) {
                    delays[n++] = s - p.sampled_shown;
                    p.waiting = false;
                    next_flip = s + 20;
                }
            }
        }
        if (cradle_netclient_playing(&net) && !p.waiting && net.sim.next_step >= next_flip && net.sim.next_step > 0 &&
            now_s() >= measure_from) {
            /* The player flips fire now; the shown state is step next_step - 1. */
            p.bits ^= VANGUARD_FIRE;
            p.expect = p.bits;
            p.waiting = true;
            p.sampled_shown = net.sim.next_step - 1;
        }
    }
    if (n == 0) {
        fprintf(stderr, "bench_client: no delay measured: %s\n", net.message);
        goto out;
    }
    uint64_t lo = UINT64_MAX, hi = 0, sum = 0;
    for (uint64_t i = 0; i < n; i++) {
        lo = delays[i] < lo ? delays[i] : lo;
        hi = delays[i] > hi ? delays[i] : hi;
        sum += delays[i];
    }
    printf("input-to-screen: server input delay %u steps (auto, %" PRIu64 " changes), loopback, %" PRIu64
           " flips: mean %.2f steps, min %" PRIu64 ", max %" PRIu64 " (rtt %.2f ms)\n",
           (unsigned)net.welcome.input_delay, net.delay_changes, n, (double)sum / (double)n, lo, hi,
           (double)net.rtt_ns / 1e6);
out:
    cradle_netclient_leave(&net, 200);
    cradle_netclient_close(&net);
    enet_deinitialize();
    kill(server, SIGTERM);
    waitpid(server, NULL, 0);
}

int main(int argc, char **argv) {
    int frames = SOFT_FRAMES_DEFAULT;
    bool softdraw_only = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--softdraw-only") == 0) {
            softdraw_only = true;
        } else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0) {
            frames = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: bench_client [--frames N] [--softdraw-only]\n");
            return 2;
        }
    }
    frame_time(frames, softdraw_only);
    if (!softdraw_only) input_delay();
    return 0;
}
