/*
 * bench_client: cradle-client's figures (Release; prints, asserts nothing).
 *
 *  1. Frame time of a headless render at 2,000 entities: a vanguard state
 *     topped up to >= 2,000 live entities (8 bot players, enemies spawned with
 *     the game's helpers), drawn each frame by render() + particles + HUD
 *     through the client's SDL drawing into a 1280x720 SDL_Surface with the
 *     software renderer (no window). Goal <= 2 ms per frame.
 *  2. Input-to-screen delay in steps at the server's default input delay on
 *     loopback: a real cradle-server (started here) and an in-process
 *     netclient; 40 times, the player's input flips, and the delay is the
 *     step whose snapshot first carries the new input (the first state it can
 *     affect) minus the last step shown when the input was sampled.
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
#define FRAMES 400

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

static void frame_time(void) {
    const cradle_game_contract *c = vanguard_contract();
    vanguard_state *s = aligned_alloc(64, (c->state_size + 63u) / 64u * 64u);
    vanguard_state *prev = aligned_alloc(64, (c->state_size + 63u) / 64u * 64u);
    if (!s || !prev) exit(1);
    memset(s, 0, c->state_size);
    if (c->init(s, 1, 8) != 0) exit(1);
    cradle_rng rng;
    cradle_rng_seed(&rng, 5, 5);
    uint8_t snap[SNAP_SIZE];
    uint32_t live = 0;
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
        memcpy(prev, s, c->state_size);
        cradle_game_step st = {.index = i, .source_frame = i / 3, .phase = (uint32_t)(i % 3),
                               .snapshot_size = SNAP_SIZE, .snapshot = snap};
        c->step(s, &st, NULL);
    }
    live = cradle_ecs_live_count(vg_world(s));
    SDL_Surface *surface = SDL_CreateRGBSurfaceWithFormat(0, 1280, 720, 32, SDL_PIXELFORMAT_RGBA32);
    SDL_Renderer *renderer = surface ? SDL_CreateSoftwareRenderer(surface) : NULL;
    static cradle_render_sdl r;
    char message[256];
    if (!renderer || cradle_render_sdl_init(&r, renderer, c->view_width, c->view_height, message, sizeof message) != 0) {
        fprintf(stderr, "bench_client: no software renderer: %s\n", SDL_GetError());
        exit(1);
    }
    static cradle_particle storage[4096];
    cradle_present p;
    cradle_present_init(&p, storage, 4096, 3);
    cradle_fx fx = cradle_present_fx(&p);
    double times[FRAMES];
    for (int f = 0; f < FRAMES; f++) {
        if (f % 10 == 0) fx.burst(fx.context, 320.0f, 180.0f, 100, 0xffab40ffu, 200.0f, 0.8f);
        double t0 = cpu_s();
        cradle_present_update(&p, 1.0f / 60.0f);
        cradle_render_sdl_frame(&r, p.shake_x, p.shake_y);
        cradle_draw world = cradle_render_sdl_world(&r), screen = cradle_render_sdl_screen(&r);
        SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255);
        SDL_RenderClear(renderer);
        c->render(prev, s, (float)(f % 16) / 16.0f, &world);
        cradle_present_draw(&p, &world);
        cradle_render_sdl_letterbox(&r);
        cradle_hud_info hud = {.step = (uint64_t)f, .rtt_ms = 0.3, .input_delay = 3, .players = 8,
                               .player_limit = 8, .slot = 0, .fps = 144.0};
        cradle_hud_draw(&hud, &screen, r.output_w, r.output_h);
        SDL_RenderPresent(renderer);
        times[f] = (cpu_s() - t0) * 1e3;
    }
    qsort(times, FRAMES, sizeof times[0], compare_double);
    double sum = 0;
    for (int f = 0; f < FRAMES; f++) sum += times[f];
    printf("render: %u live entities, 1280x720 software renderer, %d frames: mean %.3f ms, p50 %.3f ms, "
           "p99 %.3f ms, max %.3f ms (goal <= 2 ms)\n",
           live, FRAMES, sum / FRAMES, times[FRAMES / 2], times[FRAMES * 99 / 100], times[FRAMES - 1]);
    /* The same frames through the client's own rasterizer (softdraw.c). */
    static uint32_t pixels[1280 * 720];
    static cradle_softdraw sd;
    cradle_softdraw_init(&sd, pixels, 1280, 720, 1280, c->view_width, c->view_height);
    for (int f = 0; f < FRAMES; f++) {
        if (f % 10 == 0) fx.burst(fx.context, 320.0f, 180.0f, 100, 0xffab40ffu, 200.0f, 0.8f);
        double t0 = cpu_s();
        cradle_present_update(&p, 1.0f / 60.0f);
        cradle_softdraw_frame(&sd, p.shake_x, p.shake_y);
        cradle_draw world = cradle_softdraw_world(&sd), screen = cradle_softdraw_screen(&sd);
        c->render(prev, s, (float)(f % 16) / 16.0f, &world);
        cradle_present_draw(&p, &world);
        cradle_softdraw_letterbox(&sd);
        cradle_hud_info hud = {.step = (uint64_t)f, .rtt_ms = 0.3, .input_delay = 3, .players = 8,
                               .player_limit = 8, .slot = 0, .fps = 144.0};
        cradle_hud_draw(&hud, &screen, 1280, 720);
        times[f] = (cpu_s() - t0) * 1e3;
    }
    qsort(times, FRAMES, sizeof times[0], compare_double);
    sum = 0;
    for (int f = 0; f < FRAMES; f++) sum += times[f];
    printf("render: %u live entities, 1280x720 softdraw (the client's rasterizer), %d frames: mean %.3f ms, "
           "p50 %.3f ms, p99 %.3f ms, max %.3f ms (goal <= 2 ms)\n",
           live, FRAMES, sum / FRAMES, times[FRAMES / 2], times[FRAMES * 99 / 100], times[FRAMES - 1]);
    cradle_render_sdl_deinit(&r);
    SDL_DestroyRenderer(renderer);
    SDL_FreeSurface(surface);
    free(s);
    free(prev);
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
    double deadline = now_s() + 30.0;
    while (n < 40 && now_s() < deadline && !net.error) {
        uint64_t now = cradle_client_now_ns();
        (void)cradle_netclient_service(&net, now, 1);
        while (cradle_netclient_step(&net, now) == 1) {
            uint64_t s = net.next_step - 1;
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
        if (cradle_netclient_playing(&net) && !p.waiting && net.next_step >= next_flip && net.next_step > 0) {
            /* The player flips fire now; the shown state is step next_step - 1. */
            p.bits ^= VANGUARD_FIRE;
            p.expect = p.bits;
            p.waiting = true;
            p.sampled_shown = net.next_step - 1;
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
    printf("input-to-screen: server input delay %u steps, loopback, %" PRIu64 " flips: mean %.2f steps, "
           "min %" PRIu64 ", max %" PRIu64 " (rtt %.2f ms)\n",
           (unsigned)net.welcome.input_delay, n, (double)sum / (double)n, lo, hi, (double)net.rtt_ns / 1e6);
out:
    cradle_netclient_leave(&net, 200);
    cradle_netclient_close(&net);
    enet_deinitialize();
    kill(server, SIGTERM);
    waitpid(server, NULL, 0);
}

int main(void) {
    frame_time();
    input_delay();
    return 0;
}
