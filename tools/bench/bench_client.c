/*
 * bench_client: cradle-client's figures (Release; prints, asserts nothing).
 *
 *  1. Frame time of a headless render at 2,000 entities: a vanguard state
 *     topped up to >= 2,000 live entities (8 bot players, enemies spawned with
 *     the game's helpers: vanguard_scene.h, which bench_viewer_frame draws
 *     too), drawn each frame by render() + particles + HUD at
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
 *  2. Input-to-screen delay in steps at the server's default input delay
 *     (auto): a real cradle-server (started here, plaintext), a cradle-client
 *     --bot (vanguard's AI, in lockstep) as a second player, and an
 *     in-process netclient as the measured player; 40 times, the player's input flips,
 *     and the delay is the step whose state first shows the new input minus
 *     the last step shown when the input was sampled. In lockstep the shown
 *     state is the confirmed one, and the flip is on screen with the first
 *     snapshot from the server that carries it; predicting (window 16,
 *     client/net/predict.h) the shown state is the predicted one, and the
 *     flip is on screen with the first frame whose predicted state ran the
 *     step of the flipped input. Measured in lockstep and predicting, one
 *     session each, by one function (measure_input_delay), on three links:
 *       - loopback, straight to the server;
 *       - a 100 ms and a 200 ms round trip: through cradle-proxy --latency
 *         50 and 100, started here on a port of the kernel's choice.
 *     Goals: lockstep <= the round trip in steps + 2; predicting <= 1 step.
 *     Predicting, it also prints rollbacks a second, their mean depth and
 *     the client thread's share of a core (CPU time over wall time, while
 *     the flips run), and does the same through cradle-proxy --profile
 *     yojimbo (a second each way, 25% lost and 25% duplicated), where the
 *     input delay is far past the window and every frame predicts a full
 *     window.
 *     The flips start once the adaptive delay settled: no change for as long
 *     as a lowering could still take (cradle/input_delay.h: 5 calm seconds,
 *     10 after a raise) plus 2 s, at most 30 s. Waits are for conditions,
 *     with deadlines: the connect is tried again until the server answers
 *     (10 s; 20 s tries through yojimbo), the proxy's settings line says it
 *     listens (5 s), the flips end after 30 s. The server and the proxy are
 *     stopped and reaped on every exit path (SIGTERM, then SIGKILL after
 *     2 s), and get SIGTERM if the bench dies.
 *
 * Usage: bench_client [--frames N] [--softdraw-only]
 *   --frames N       timed softdraw frames (default 2000)
 *   --softdraw-only  only the softdraw figures (for profiling under callgrind)
 */
#include <SDL.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cradle/cradle.h"
#include "cradle/input_delay.h"
#include "hud.h"
#include "netclient.h"
#include "present.h"
#include "render_sdl.h"
#include "script.h"
#include "session_run.h"
#include "softdraw.h"
#include "vanguard_input.h"
#include "vanguard_internal.h"
#include "vanguard_scene.h"

#define OUT_W 1280
#define OUT_H 720
#define SOFT_WARMUP 200
#define SOFT_FRAMES_DEFAULT 2000
#define SDL_WARMUP 40
#define SDL_FRAMES 400
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

static void sdl_frames(vanguard_scene *sc) {
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
    vanguard_scene_particles_reset(sc);
    for (int f = 0; f < SDL_WARMUP + SDL_FRAMES; f++) {
        vanguard_scene_particles_frame(sc, f);
        double t0 = cpu_s();
        cradle_present_update(&sc->present, 1.0f / 60.0f);
        cradle_render_sdl_frame(&r, sc->present.shake_x, sc->present.shake_y);
        cradle_draw world = cradle_render_sdl_world(&r), screen = cradle_render_sdl_screen(&r);
        SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255);
        SDL_RenderClear(renderer);
        sc->c->render(sc->prev, sc->s, vanguard_scene_alpha(f), &world);
        cradle_present_draw(&sc->present, &world);
        cradle_render_sdl_letterbox(&r);
        cradle_hud_info hud = vanguard_scene_hud(f);
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

static void softdraw_frames(vanguard_scene *sc, int frames) {
    static cradle_softdraw sd;
    cradle_softdraw_init(&sd, soft_pixels, OUT_W, OUT_H, OUT_W, sc->c->view_width, sc->c->view_height);
    double *times = malloc((size_t)frames * sizeof *times);
    if (!times) exit(1);
    /* Frame f as the window draws it with softdraw (window.c target_begin and
     * target_end): black, then the game (which clears to its own colour; the
     * clears are deferred, so only the last one is painted), the particles,
     * the letterbox, the HUD, and finish. */
    vanguard_scene_particles_reset(sc);
    for (int f = 0; f < SOFT_WARMUP + frames; f++) {
        vanguard_scene_particles_frame(sc, f);
        double t0 = cpu_s();
        cradle_present_update(&sc->present, 1.0f / 60.0f);
        cradle_softdraw_clear(&sd, 0x000000ffu);
        cradle_softdraw_frame(&sd, sc->present.shake_x, sc->present.shake_y);
        cradle_draw world = cradle_softdraw_world(&sd), screen = cradle_softdraw_screen(&sd);
        sc->c->render(sc->prev, sc->s, vanguard_scene_alpha(f), &world);
        cradle_present_draw(&sc->present, &world);
        cradle_softdraw_letterbox(&sd);
        cradle_hud_info hud = vanguard_scene_hud(f);
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
    vanguard_scene_particles_reset(sc);
    for (int f = 0; f < SOFT_WARMUP + frames; f++) {
        vanguard_scene_particles_frame(sc, f);
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
        sc->c->render(sc->prev, sc->s, vanguard_scene_alpha(f), &no_clear);
        t[3] = cpu_s();
        cradle_present_draw(&sc->present, &world);
        t[4] = cpu_s();
        cradle_softdraw_letterbox(&sd);
        t[5] = cpu_s();
        cradle_hud_info hud = vanguard_scene_hud(f);
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
    static vanguard_scene sc;
    if (vanguard_scene_build(&sc) != 0) exit(1);
    softdraw_frames(&sc, frames);
    if (!softdraw_only) sdl_frames(&sc);
    vanguard_scene_close(&sc);
}

/* ---- input-to-screen delay ---- */

#define FLIPS 40
#define CONNECT_MAX_S 10.0   /* for the server (or the proxy) to answer */
#define CONNECT_TRY_MS 1000u /* one connect attempt; then open again */
#define YOJIMBO_CONNECT_TRY_MS 20000u /* ... through a second each way and a quarter lost */
#define START_MAX_S 5.0      /* for the proxy's settings line */
#define STOP_MAX_S 2.0       /* SIGTERM to exit, then SIGKILL */
#define CHILD_ARGS_MAX 20u
/* The adaptive delay (cradle/input_delay.h) is taken as settled once it has
 * held long enough that no lowering can still be due: CALM_WINDOWS seconds
 * after the join or a lowering, LOWER_HOLD_WINDOWS after a raise (at 1 step
 * it cannot go lower), each plus SETTLE_MARGIN_S for the window in progress,
 * the DELAY message's trip and a raise from late inputs. */
#define SETTLE_MARGIN_S 2.0
#define SETTLE_MAX_S 30.0  /* then measure anyway, saying so */
#define MEASURE_MAX_S 30.0 /* for the flips, about 20 steps + the delay each */

typedef struct probe {
    uint32_t bits;          /* what the player holds now */
    bool waiting;           /* a flip was sampled, not seen in a snapshot yet */
    uint64_t sampled_shown; /* the last step shown when the flip was sampled */
    uint32_t expect;
    uint64_t flip_step;     /* the first step whose input carries the flip; UINT64_MAX: not asked yet */
} probe;

static void probe_input(void *context, uint64_t step, uint8_t *out, uint32_t input_bytes) {
    probe *p = context;
    if (p->waiting && p->flip_step == UINT64_MAX && p->bits == p->expect) p->flip_step = step;
    cradle_pack_bits(out, input_bytes, p->bits);
}

/* One link's figures: delays in steps from sampling a flip to the first
 * snapshot carrying it. */
typedef struct delay_figures {
    uint64_t n, lo, hi, sum;
    uint16_t input_delay;   /* the server's, at the end */
    uint64_t delay_changes; /* DELAY messages over the session */
    uint64_t rtt_ns;
    uint32_t steps_per_second;
    bool settled; /* false: measured after SETTLE_MAX_S with the delay still moving */
    cradle_predict_figures predict; /* over the flips, when predicting */
    uint64_t steps;                 /* confirmed over the flips */
    double cpu_s, wall_s;           /* the client's thread over the flips */
} delay_figures;

/* Forks and execs path with argv; its stdout goes to out_fd (-1: /dev/null),
 * its stderr to /dev/null, and it gets SIGTERM when this process dies.
 * Returns the pid, or -1. */
static pid_t child_start(const char *path, const char *const argv[], int out_fd) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid != 0) return pid;
    (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
    int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd < 0 || dup2(out_fd >= 0 ? out_fd : null_fd, STDOUT_FILENO) < 0 ||
        dup2(null_fd, STDERR_FILENO) < 0)
        _exit(127);
    /* execv takes char *const[] (for old callers) and changes nothing: the
     * pointers are copied rather than cast, so -Wcast-qual has nothing to say. */
    char *args[CHILD_ARGS_MAX + 1];
    size_t n = 0;
    while (argv[n] && n < CHILD_ARGS_MAX) n++;
    memcpy(args, argv, n * sizeof *args);
    args[n] = NULL;
    execv(path, args);
    _exit(127);
}

/* -1 while pid runs, else its exit status (or signal number); it is not
 * reaped here. */
static int child_exit(pid_t pid) {
    siginfo_t info = {0};
    if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return 0; /* gone already */
    return info.si_pid == 0 ? -1 : info.si_status;
}

/* SIGTERM, then SIGKILL if it has not exited within STOP_MAX_S; reaps it.
 * Safe on -1. */
static void child_stop(pid_t pid) {
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    double deadline = now_s() + STOP_MAX_S;
    while (child_exit(pid) < 0 && now_s() < deadline) {
        struct timespec tick = {0, 10000000};
        nanosleep(&tick, NULL);
    }
    if (child_exit(pid) < 0) kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Reads the proxy's settings line (cradle_proxy.c print_settings, printed
 * once its socket is bound) from fd until deadline. Returns the port it
 * listens on, or 0. */
static uint16_t proxy_wait_listening(int fd, double deadline) {
    char line[1024];
    size_t len = 0;
    while (len < sizeof line - 1 && !memchr(line, '\n', len)) {
        int wait_ms = (int)((deadline - now_s()) * 1e3);
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (wait_ms <= 0 || poll(&pfd, 1, wait_ms) <= 0) return 0;
        ssize_t n = read(fd, line + len, sizeof line - 1 - len);
        if (n <= 0) return 0; /* it exited */
        len += (size_t)n;
    }
    line[len] = '\0';
    const char *at = strstr(line, "\"listen\":\"");
    const char *colon = at ? strchr(at + 10, ':') : NULL;
    unsigned long port = colon ? strtoul(colon + 1, NULL, 10) : 0;
    return port <= 65535 ? (uint16_t)port : 0;
}

/* Opens net and services it until it plays. A server just started may not
 * answer yet: an attempt that times out is made again until deadline, unless
 * the server exited. Returns 0, or -1 with the reason printed; net is open
 * (for close) either way. */
static int connect_player(cradle_netclient *net, const cradle_netclient_config *config, pid_t server,
                          double deadline) {
    for (;;) {
        if (cradle_netclient_open(net, config, cradle_client_now_ns()) != 0) {
            fprintf(stderr, "bench_client: %s\n", net->message);
            return -1;
        }
        while (!net->error && !cradle_netclient_playing(net) && now_s() < deadline)
            (void)cradle_netclient_service(net, cradle_client_now_ns(), 1);
        if (cradle_netclient_playing(net)) return 0;
        int status = child_exit(server);
        if (status >= 0) {
            fprintf(stderr, "bench_client: cradle-server exited with status %d%s\n", status,
                    status == 3 ? " (its UDP port is taken)" : "");
            return -1;
        }
        /* a join lost on a lossy link (its HELLO or state block) is tried again too */
        if ((net->error != CRADLE_ENET_TIMEOUT && net->error != CRADLE_ENET_INIT) || now_s() >= deadline) {
            fprintf(stderr, "bench_client: %s\n", net->error ? net->message : "no game within the deadline");
            return -1;
        }
        cradle_netclient_close(net);
    }
}

/* One flip seen on screen: the delay in steps into out. */
static void flip_seen(probe *p, delay_figures *out, uint64_t s, uint64_t *next_flip) {
    uint64_t d = s - p->sampled_shown;
    out->lo = d < out->lo ? d : out->lo;
    out->hi = d > out->hi ? d : out->hi;
    out->sum += d;
    out->n++;
    p->waiting = false;
    *next_flip = s + 20;
}

/* Joins the server (started as pid server) through port as a player
 * (predicting with window predict_window, or in lockstep with 0), waits
 * for the adaptive delay to settle, flips the input FLIPS times and fills
 * out. The screen is the sim the client shows (cradle_netclient_shown): in
 * lockstep a flip is on it with the first confirmed step whose snapshot
 * carries it (the server may have used it late); predicting, with the
 * first frame whose predicted state ran the step of the flipped input.
 * Returns 0, or -1 with the reason printed. */
static int measure_input_delay(uint16_t port, pid_t server, uint32_t predict_window, uint32_t connect_try_ms,
                               delay_figures *out) {
    static cradle_netclient net;
    static probe p;
    memset(&p, 0, sizeof p);
    *out = (delay_figures){.lo = UINT64_MAX};
    cradle_netclient_config config = {.port = port, .game = BENCH_CLIENT_GAME, .requested_slot = -1,
                                      .input = probe_input, .input_context = &p, .insecure = true,
                                      .connect_timeout_ms = connect_try_ms, .predict_window = predict_window};
    int rc = connect_player(&net, &config, server, now_s() + CONNECT_MAX_S + connect_try_ms / 1e3);
    if (rc != 0) goto out_close;
    double joined = now_s(), last_change = joined;
    double settle_deadline = joined + SETTLE_MAX_S, deadline = settle_deadline + MEASURE_MAX_S;
    uint16_t delay = net.welcome.input_delay;
    uint64_t changes = net.delay_changes, next_flip = 0;
    bool raised = false, measuring = false;
    cradle_predict_figures at_start = {0};
    uint64_t steps_at_start = 0;
    double cpu_start = 0, wall_start = 0;
    while (out->n < FLIPS && now_s() < deadline && !net.error) {
        uint64_t now = cradle_client_now_ns();
        (void)cradle_netclient_service(&net, now, 1);
        while (cradle_netclient_step(&net, now) == 1) {
            uint64_t s = net.sim.next_step - 1;
            if (!p.waiting || predict_window) continue;
            const uint8_t *snap = cradle_netclient_last_snapshot(&net);
            uint32_t got = cradle_snapshot_input(snap, net.welcome.max_players, net.welcome.input_bytes,
                                                 net.welcome.slot)[0];
            if (got == p.expect) flip_seen(&p, out, s, &next_flip);
        }
        (void)cradle_netclient_predict(&net);
        const cradle_sim *shown = cradle_netclient_shown(&net);
        if (p.waiting && predict_window && p.flip_step != UINT64_MAX && shown->next_step > p.flip_step)
            flip_seen(&p, out, p.flip_step, &next_flip);
        if (net.delay_changes != changes) {
            raised = net.welcome.input_delay > delay;
            delay = net.welcome.input_delay;
            changes = net.delay_changes;
            last_change = now_s();
        }
        if (!measuring) {
            double hold = delay == 1 ? 0.0
                          : raised   ? (double)CRADLE_INPUT_DELAY_LOWER_HOLD_WINDOWS
                                     : (double)CRADLE_INPUT_DELAY_CALM_WINDOWS;
            out->settled = now_s() - last_change >= hold + SETTLE_MARGIN_S;
            measuring = out->settled || now_s() >= settle_deadline;
            if (measuring) {
                at_start = net.predict.figures;
                steps_at_start = net.steps_run;
                cpu_start = cpu_s();
                wall_start = now_s();
            }
        }
        if (measuring && cradle_netclient_playing(&net) && !p.waiting && shown->next_step >= next_flip &&
            shown->next_step > 0) {
            /* The player flips fire now; the shown state is step next_step - 1. */
            p.bits ^= VANGUARD_FIRE;
            p.expect = p.bits;
            p.waiting = true;
            p.flip_step = UINT64_MAX;
            p.sampled_shown = shown->next_step - 1;
        }
    }
    out->input_delay = net.welcome.input_delay;
    out->delay_changes = net.delay_changes;
    out->rtt_ns = net.rtt_ns;
    out->steps_per_second = net.welcome.steps_per_second;
    out->predict = net.predict.figures;
    out->predict.rollbacks -= at_start.rollbacks;
    out->predict.rollback_steps -= at_start.rollback_steps;
    out->predict.predicted_steps -= at_start.predicted_steps;
    out->predict.corrections -= at_start.corrections;
    out->steps = net.steps_run - steps_at_start;
    out->cpu_s = cpu_s() - cpu_start;
    out->wall_s = now_s() - wall_start;
    if (predict_window && !net.predict.on)
        fprintf(stderr, "bench_client: %s\n", net.predict.message[0] ? net.predict.message : "prediction ended");
    if (out->n == 0) {
        fprintf(stderr, "bench_client: no delay measured: %s\n", net.error ? net.message : "deadline passed");
        rc = -1;
    } else if (!out->settled) {
        fprintf(stderr, "bench_client: the input delay was still changing after %.0f s; measured anyway\n",
                SETTLE_MAX_S);
    }
out_close:
    cradle_netclient_leave(&net, 200);
    cradle_netclient_close(&net);
    return rc;
}

/* One link's line: lockstep (window 0) or predicting. */
static void print_delay(const char *link, uint32_t predict_window, const delay_figures *f) {
    double seconds = f->steps_per_second ? (double)f->steps / f->steps_per_second : 0.0;
    printf("input-to-screen, %s, %s: %" PRIu64 " flips: mean %.2f steps, min %" PRIu64 ", max %" PRIu64
           " (server input delay %u, auto, %" PRIu64 " changes; rtt %.2f ms = %.1f steps)",
           link, predict_window ? "predicting" : "lockstep", f->n, (double)f->sum / (double)f->n, f->lo, f->hi,
           (unsigned)f->input_delay, f->delay_changes, (double)f->rtt_ns / 1e6,
           (double)f->rtt_ns * f->steps_per_second / 1e9);
    if (predict_window)
        printf("; window %u: %.1f rollbacks a second, mean depth %.2f, %" PRIu64 " of %" PRIu64
               " changed the state on screen, client %.1f%% of a core (%s)",
               (unsigned)predict_window, seconds > 0 ? (double)f->predict.rollbacks / seconds : 0.0,
               f->predict.rollbacks ? (double)f->predict.rollback_steps / (double)f->predict.rollbacks : 0.0,
               f->predict.corrections, f->predict.rollbacks,
               f->wall_s > 0 ? 100.0 * f->cpu_s / f->wall_s : 0.0,
               f->input_delay < predict_window ? "goal <= 1 step"
                                               : "the input delay is past the window: the input shows that "
                                                 "much later, no goal");
    printf("\n");
    fflush(stdout);
}

/* Starts cradle-proxy in front of the server with args (NULL-terminated,
 * after --listen and --server); *proxy and *out_fd get its pid and the read
 * end of its stdout. Returns the port it listens on, or 0. */
static uint16_t proxy_start(const char *server_text, const char *const *args, pid_t *proxy, int *out_fd) {
    const char *argv[CHILD_ARGS_MAX + 1] = {"cradle-proxy", "--listen", "127.0.0.1:0", "--server", server_text};
    size_t n = 5;
    while (*args && n < CHILD_ARGS_MAX) argv[n++] = *args++;
    argv[n] = NULL;
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) return 0;
    *proxy = child_start(BENCH_CLIENT_PROXY, argv, pipe_fds[1]);
    close(pipe_fds[1]);
    *out_fd = pipe_fds[0];
    return *proxy < 0 ? 0 : proxy_wait_listening(pipe_fds[0], now_s() + START_MAX_S);
}

/* The other player: cradle-client --bot (vanguard's AI, in lockstep) on
 * port, so the measured player's guesses of another slot can be wrong (a
 * session of one never rolls back). Returns its pid, or -1. */
static pid_t companion_start(uint16_t port) {
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%u", (unsigned)port);
    const char *argv[] = {"cradle-client", "--headless", "--insecure", "--port", port_text, "--game",
                          BENCH_CLIENT_GAME, "--bot", "--seed", "7", "--lockstep", "--connect-timeout", "60000",
                          "--silence-timeout", "600000", NULL};
    return child_start(BENCH_CLIENT_CLIENT, argv, -1);
}

/* Stops a proxy proxy_start started. */
static void proxy_stop(pid_t *proxy, int *out_fd) {
    child_stop(*proxy);
    if (*out_fd >= 0) close(*out_fd);
    *proxy = -1;
    *out_fd = -1;
}

/* Input to screen on loopback and through cradle-proxy at a 100 and a 200
 * ms round trip, each in lockstep and predicting (window 16): one session
 * each. Then a predicting player's share of a core on the yojimbo profile. */
static void input_delay(void) {
    int port = 20000 + (int)(getpid() % 12000);
    char port_text[16], server_text[32];
    snprintf(port_text, sizeof port_text, "%d", port);
    snprintf(server_text, sizeof server_text, "127.0.0.1:%d", port);
    /* Plaintext on loopback: the delay in steps does not depend on the
     * encryption, and the bench needs no keys. */
    const char *server_argv[] = {"cradle-server", "--bind", "127.0.0.1", "--port", port_text, "--game",
                                 BENCH_CLIENT_GAME, "--players", "2", "--insecure", NULL};
    pid_t server = -1, proxy = -1;
    int proxy_out = -1;
    delay_figures f;
    if (enet_initialize() != 0) return;
    server = child_start(BENCH_CLIENT_SERVER, server_argv, -1);
    if (server < 0) goto out_stop;
    static const struct {
        const char *name;
        const char *latency; /* one way, ms; NULL: no proxy */
    } links[] = {{"loopback", NULL}, {"100 ms round trip (cradle-proxy --latency 50)", "50"},
                 {"200 ms round trip (cradle-proxy --latency 100)", "100"}};
    for (size_t l = 0; l < sizeof links / sizeof links[0]; l++) {
        for (uint32_t window = 0; window <= CRADLE_PREDICT_WINDOW_DEFAULT; window += CRADLE_PREDICT_WINDOW_DEFAULT) {
            uint16_t to = (uint16_t)port;
            if (links[l].latency) {
                const char *args[] = {"--latency", links[l].latency, NULL};
                to = proxy_start(server_text, args, &proxy, &proxy_out);
                if (to == 0) {
                    fprintf(stderr, "bench_client: cradle-proxy did not start listening\n");
                    goto out_stop;
                }
            }
            pid_t other = companion_start(to);
            int rc = measure_input_delay(to, server, window, CONNECT_TRY_MS, &f);
            child_stop(other);
            proxy_stop(&proxy, &proxy_out);
            if (rc != 0) goto out_stop;
            print_delay(links[l].name, window, &f);
        }
    }
    /* yojimbo's profile: a second each way, 25% lost: the window is always
     * full (the delay is far past it), which is the most a client does. Its
     * own server, which waits for a join as long as tools/soak.sh's does. */
    child_stop(server);
    const char *yojimbo_server_argv[] = {"cradle-server", "--bind", "127.0.0.1", "--port", port_text, "--game",
                                         BENCH_CLIENT_GAME, "--players", "2", "--insecure", "--timeout", "600000",
                                         NULL};
    server = child_start(BENCH_CLIENT_SERVER, yojimbo_server_argv, -1);
    if (server < 0) goto out_stop;
    const char *yojimbo[] = {"--profile", "yojimbo", "--seed", "1", NULL};
    uint16_t to = proxy_start(server_text, yojimbo, &proxy, &proxy_out);
    pid_t other = to ? companion_start(to) : -1;
    int rc = to == 0 ? -1 : measure_input_delay(to, server, CRADLE_PREDICT_WINDOW_DEFAULT, YOJIMBO_CONNECT_TRY_MS, &f);
    child_stop(other);
    if (rc != 0) goto out_stop;
    print_delay("yojimbo profile (cradle-proxy --profile yojimbo)", CRADLE_PREDICT_WINDOW_DEFAULT, &f);
out_stop:
    proxy_stop(&proxy, &proxy_out);
    child_stop(server);
    enet_deinitialize();
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
