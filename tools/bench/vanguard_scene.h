#ifndef CRADLE_BENCH_VANGUARD_SCENE_H
#define CRADLE_BENCH_VANGUARD_SCENE_H
/*
 * vanguard_scene: the benchmarks' picture at 2,000 entities. A vanguard
 * state topped up to 2,000 +- 1% live entities (8 invulnerable bot players,
 * enemies spawned with the game's helpers), and what changes frame by frame
 * around it: particle bursts, the interpolation alpha, the HUD's figures.
 * Frame f is the same in every benchmark that draws it: bench_client times
 * the native window's softdraw frame, bench_viewer_frame the browser
 * viewer's (client/web/viewer.c's cv_frame), natively and as WebAssembly.
 *
 * Built natively and for wasm32-wasi (the same bytes of state: the sim is
 * deterministic). The scene's memory is the caller's struct plus the sim's
 * blocks (sim_storage.h), freed by vanguard_scene_close.
 */
#include <stdint.h>

#include "cradle/cradle.h"
#include "cradle/sim_storage.h"
#include "hud.h"
#include "present.h"
#include "vanguard_internal.h"

#define VANGUARD_SCENE_PARTICLES 4096u /* as the native window's pool */

typedef struct vanguard_scene {
    const cradle_game_contract *c;
    cradle_sim_storage storage; /* the sim's state and previous state */
    vanguard_state *s, *prev;
    uint32_t live;
    cradle_present present;
    cradle_particle particles[VANGUARD_SCENE_PARTICLES];
} vanguard_scene;

/* Plays vanguard from seed 1 with 8 players until a step ends with 2,000 +-
 * 1% live entities (at most 2,000 steps). Returns 0, or -1 when the sim's
 * memory could not be had (nothing is then left allocated). */
int vanguard_scene_build(vanguard_scene *sc);

/* Frees the sim's blocks; safe on a scene that failed to build. */
void vanguard_scene_close(vanguard_scene *sc);

/* Every run starts the particles over from the same seed, so each sees the
 * same frames. */
static inline void vanguard_scene_particles_reset(vanguard_scene *sc) {
    cradle_present_init(&sc->present, sc->particles, VANGUARD_SCENE_PARTICLES, 3);
}

/* Frame f's events: a burst every 10th frame (then 1/60 s of motion, which
 * the frame's cradle_present_update does). */
static inline void vanguard_scene_particles_frame(vanguard_scene *sc, int f) {
    cradle_fx fx = cradle_present_fx(&sc->present);
    if (f % 10 == 0) fx.burst(fx.context, 320.0f, 180.0f, 100, 0xffab40ffu, 200.0f, 0.8f);
}

/* Frame f's HUD as a player's window shows it. */
static inline cradle_hud_info vanguard_scene_hud(int f) {
    return (cradle_hud_info){.step = (uint64_t)f, .rtt_ms = 0.3, .input_delay = 3, .players = 8,
                             .player_limit = 8, .slot = 0, .fps = 144.0};
}

/* Frame f's interpolation between the previous state and the state. */
static inline float vanguard_scene_alpha(int f) { return (float)(f % 16) / 16.0f; }

#endif
