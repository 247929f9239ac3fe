/* vanguard_scene: see vanguard_scene.h. */
#include "vanguard_scene.h"

#include <string.h>

#include "vanguard_input.h"

#define SNAP_SIZE (CRADLE_PRESENCE_BYTES(VG_MAX_PLAYERS) + VG_MAX_PLAYERS * VANGUARD_INPUT_BYTES)

int vanguard_scene_build(vanguard_scene *sc) {
    const cradle_game_contract *c = vanguard_contract();
    cradle_sim sim;
    if (cradle_sim_storage_open(&sc->storage, &sim, c, &(cradle_sim_storage_config){.previous = true}, NULL, 0) != 0)
        return -1;
    if (cradle_sim_start(&sim, 1, 8) != 0) {
        cradle_sim_storage_close(&sc->storage);
        return -1;
    }
    vanguard_state *s = (vanguard_state *)sc->storage.state;
    vanguard_state *prev = (vanguard_state *)sc->storage.previous;
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
    return 0;
}

void vanguard_scene_close(vanguard_scene *sc) { cradle_sim_storage_close(&sc->storage); }
