/*
 * bench_viewer_frame: the browser viewer's frame time at 2,000 entities
 * (Release; prints, asserts nothing). The frame is client/web/viewer.c's
 * cv_frame: client/src/soft_frame.h's whole frame (softdraw clears to
 * black, the game's render() between the previous state and the state, the
 * particles, the letterbox, the watch HUD, watch_hud.h: "BROADCAST 3.0 S
 * BEHIND", and the RGBA bytes an ImageData holds), at 1280x720;
 * the picture is vanguard_scene.h's, frame f as bench_client draws it.
 *
 * Built twice from this file:
 *   - natively, the program bench_viewer_frame (the reference): 200 warm-up
 *     frames, then N timed ones (--frames, default 2,000), each timed on the
 *     wall clock (what the page's performance.now() reads) and as this
 *     thread's CPU time; it prints mean, p50, p99 and max of both, and a
 *     hash of the last frame's pixels;
 *   - for wasm32-wasi, bench_viewer_frame.wasm (a reactor, linked as the
 *     games' twins are, with the browser viewer's runtime): its exports are
 *     what bench_viewer_frame.html calls in headless Chromium
 *     (bench_viewer_frame.mjs drives it), timing the call and the
 *     putImageData that follows, frame by frame on requestAnimationFrame.
 * The two hashes are the same when the wasm drew the same pixels.
 *
 * Exports (wasm), in order:
 *   bvf_open()                 builds the scene; 0, or -1 (out of memory)
 *   bvf_live()                 its live entities
 *   each frame f: bvf_burst(f) frame f's particle events (not timed: the
 *                              page's cv_advance makes them)
 *                 bvf_frame(f, now_ms)  the frame; its RGBA pixels
 *   bvf_hash()                 FNV-1a of the last frame's pixels
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hud.h"
#include "present.h"
#include "soft_frame.h"
#include "softdraw.h"
#include "vanguard_scene.h"
#include "watch_hud.h"

#ifdef __wasm__
#define EXPORT(name) __attribute__((export_name(#name)))
#else
#define EXPORT(name) static /* the native program calls them itself */
#endif

#define OUT_W 1280
#define OUT_H 720
#define BEHIND_MS 3000 /* the delay bench_viewer.sh opens the page with */

static vanguard_scene sc;
static cradle_softdraw sd;
static uint32_t pixels[OUT_W * OUT_H]; /* ARGB while drawn, RGBA once done */
static double last_frame_ms;

EXPORT(bvf_open) int bvf_open(void) {
    if (vanguard_scene_build(&sc) != 0) return -1;
    cradle_softdraw_init(&sd, pixels, OUT_W, OUT_H, OUT_W, sc.c->view_width, sc.c->view_height);
    vanguard_scene_particles_reset(&sc);
    last_frame_ms = 0.0;
    return 0;
}

EXPORT(bvf_live) uint32_t bvf_live(void) { return sc.live; }

EXPORT(bvf_burst) void bvf_burst(int f) { vanguard_scene_particles_frame(&sc, f); }

/* cv_frame's body with the scene in place of the replay: the elapsed time
 * from now_ms (1/60 s a frame when now_ms is), alpha from the frame, and
 * the HUD a viewer BEHIND_MS behind live sees. */
EXPORT(bvf_frame) const uint8_t *bvf_frame(int f, double now_ms) {
    double elapsed = last_frame_ms > 0.0 && now_ms > last_frame_ms ? now_ms - last_frame_ms : 0.0;
    last_frame_ms = now_ms;
    cradle_present_update(&sc.present, (float)(elapsed / 1000.0));
    cradle_watch_hud_in in = {.playing = true,
                              .behind_ms = BEHIND_MS,
                              .error = "",
                              .steps = (uint64_t)f,
                              .fetch_error = "",
                              .url = "the broadcast"};
    cradle_watch_hud_out text;
    cradle_watch_hud_text(&in, &text);
    cradle_hud_info info = {.step = (uint64_t)f,
                            .rtt_ms = -1.0,
                            .input_delay = -1,
                            .slot = -2,
                            .fps = 60.0,
                            .mode = text.mode,
                            .build = sc.c->build_id,
                            .banner = text.banner,
                            .detail = text.detail[0] ? text.detail : NULL,
                            .banner_rgba = text.banner_rgba};
    cradle_soft_frame frame = {.game = sc.c,
                               .previous = sc.prev,
                               .state = sc.s,
                               .alpha = vanguard_scene_alpha(f),
                               .present = &sc.present,
                               .hud = &info};
    cradle_soft_frame_draw(&sd, &frame);
    return (const uint8_t *)pixels;
}

EXPORT(bvf_hash) uint32_t bvf_hash(void) {
    const uint8_t *b = (const uint8_t *)pixels;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < sizeof pixels; i++) h = (h ^ b[i]) * 16777619u;
    return h;
}

#ifndef __wasm__
#include <time.h>

#define WARMUP 200
#define FRAMES_DEFAULT 2000
#define FRAME_MS (1000.0 / 60.0)

static double clock_ms(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts times (ms) and prints mean, p50, p99 and max. */
static void print_times(const char *what, double *times, int n) {
    qsort(times, (size_t)n, sizeof times[0], compare_double);
    double sum = 0;
    for (int f = 0; f < n; f++) sum += times[f];
    printf("  %s: mean %.3f ms, p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", what, sum / n, times[n / 2],
           times[(n * 99) / 100], times[n - 1]);
}

int main(int argc, char **argv) {
    int frames = FRAMES_DEFAULT;
    if (argc == 3 && strcmp(argv[1], "--frames") == 0 && atoi(argv[2]) > 0) {
        frames = atoi(argv[2]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: bench_viewer_frame [--frames N]\n");
        return 2;
    }
    double *wall = malloc((size_t)frames * sizeof *wall), *cpu = malloc((size_t)frames * sizeof *cpu);
    if (!wall || !cpu || bvf_open() != 0) {
        fprintf(stderr, "bench_viewer_frame: out of memory\n");
        return 1;
    }
    for (int f = 0; f < WARMUP + frames; f++) {
        bvf_burst(f);
        double w0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
        (void)bvf_frame(f, (f + 1) * FRAME_MS);
        double c1 = clock_ms(CLOCK_THREAD_CPUTIME_ID), w1 = clock_ms(CLOCK_MONOTONIC);
        if (f >= WARMUP) {
            wall[f - WARMUP] = w1 - w0;
            cpu[f - WARMUP] = c1 - c0;
        }
    }
    printf("viewer frame natively (cv_frame's drawing, this file built for the host): %u live entities, %dx%d, "
           "%d frames after %d warm-up (goal <= 4 ms)\n",
           bvf_live(), OUT_W, OUT_H, frames, WARMUP);
    print_times("wall", wall, frames);
    print_times("CPU", cpu, frames);
    printf("  last frame's pixels: fnv1a %08x, %u particles alive\n", bvf_hash(), sc.present.count);
    vanguard_scene_close(&sc);
    free(wall);
    free(cpu);
    return 0;
}
#endif
