/*
 * bench_game: vanguard stepped headless as fast as it goes.
 *   - heavy: 8 bot players against a forced wave kept at >= 2,000 live
 *     entities before every step (enemies topped up to 2,200, ships kept
 *     invulnerable so the game never ends), step() + output() per step;
 *   - normal: 8 bots playing the real waves from the start.
 * Build in Release (tools/bench.sh) and run; it prints, it asserts nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cradle/cradle.h"
#include "vanguard_input.h"
#include "vanguard_internal.h"

#define SNAP_SIZE (CRADLE_PRESENCE_BYTES(VG_MAX_PLAYERS) + VG_MAX_PLAYERS * VANGUARD_INPUT_BYTES)

/* CPU time of this thread: the machine may be shared, and time spent
 * preempted is not the game's. Wall-clock time is printed as well. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile uint64_t sink;

static void bots(const vanguard_state *s, uint64_t step, uint8_t snap[SNAP_SIZE]) {
    memset(snap, 0, SNAP_SIZE);
    snap[0] = 0xFF;
    for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++)
        (void)vanguard_input_pack(snap + 1 + slot, 1, vanguard_bot_actions(s, slot, step));
}

/* Spawns enemies on the right two thirds until `target` entities live. */
static void top_up(vanguard_state *s, cradle_rng *rng, uint32_t target) {
    while (cradle_ecs_live_count(vg_world(s)) < target) {
        uint8_t type = (uint8_t)cradle_rng_below(rng, 3);
        int32_t x = cradle_rng_range(rng, 220, 630) * VG_FP;
        int32_t y = cradle_rng_range(rng, 10, 350) * VG_FP;
        if (vanguard_spawn_enemy(s, type, x, y, x, y) == CRADLE_ENTITY_NONE) break;
    }
}

static void run(const cradle_game_contract *c, bool heavy, uint64_t steps, const char *label) {
    cradle_sim sim;
    cradle_sim_storage storage;
    if (cradle_sim_storage_open(&storage, &sim, c, &(cradle_sim_storage_config){0}, NULL, 0) != 0 ||
        cradle_sim_start(&sim, 1, 8) != 0) {
        fprintf(stderr, "bench_game: init failed\n");
        exit(1);
    }
    vanguard_state *s = (vanguard_state *)storage.state;
    cradle_rng rng;
    cradle_rng_seed(&rng, 5, 5);
    uint8_t snap[SNAP_SIZE];
    uint64_t live_sum = 0;
    uint32_t live_min = UINT32_MAX, live_max = 0;
    double elapsed = 0, stepping = 0, wall = 0, wall_step = 0;
    for (uint64_t i = 0; i < steps; i++) {
        if (heavy) {
            top_up(s, &rng, 2200);
            for (uint32_t p = 0; p < VG_MAX_PLAYERS; p++)
                if (s->players[p].ship != CRADLE_ENTITY_NONE) s->players[p].invulnerable = 2;
        }
        bots(s, i, snap);
        double w0 = wall_s();
        double t0 = now_s();
        cradle_sim_step(&sim, snap);
        double t1 = now_s();
        double w1 = wall_s();
        if (cradle_sim_output(&sim) == 0) sink += sim.output_size;
        double t2 = now_s();
        wall += wall_s() - w0;
        wall_step += w1 - w0;
        stepping += t1 - t0;
        elapsed += t2 - t0;
        uint32_t live = cradle_ecs_live_count(vg_world(s));
        live_sum += live;
        if (live < live_min) live_min = live;
        if (live > live_max) live_max = live;
    }
    printf("%-7s step %8.0f steps/s (%5.1f us), step+output %8.0f steps/s (%5.1f us, %.0fx real "
           "time); wall-clock: step %8.0f steps/s, step+output %8.0f steps/s; live entities avg "
           "%.0f min %u max %u; wave %u\n",
           label, (double)steps / stepping, stepping / (double)steps * 1e6,
           (double)steps / elapsed, elapsed / (double)steps * 1e6,
           (double)steps / elapsed / 60.0, (double)steps / wall_step, (double)steps / wall,
           (double)live_sum / (double)steps, live_min, live_max, s->wave);
    cradle_sim_storage_close(&storage);
}

int main(void) {
    const cradle_game_contract *c = vanguard_contract();
    printf("vanguard: state block %u bytes, capacity %u entities, 8 bot players\n", c->state_size,
           VG_MAX_ENTITIES);
    run(c, true, 20000, "heavy");
    run(c, false, 20000, "normal");
    return 0;
}
