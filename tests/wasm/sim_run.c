/*
 * sim_run: one game, linked in statically, stepped through the core's sim
 * by seeded bots, built twice from the same sources: natively, and for
 * WebAssembly (wasm32-wasi, Debian's clang 14 and wasi-libc) run by node.
 * The two must write the same bytes: the game's output() of every step,
 * then the state block's FNV-1a 64 and the step count. It is the
 * cross-platform determinism check that the browser viewer (issue "Watch
 * in a browser") rests on: the game's code and the core's compiled for
 * another machine, with another compiler, give the same session.
 *
 * Usage: sim_run SEED PLAYERS STEPS OUT
 *   every slot of PLAYERS plays with cradle_bot seeded SEED + slot (the
 *   game's own bot entry when its contract has one); OUT gets the bytes.
 * Exit: 0, 1 when the game refuses (its contract, its init) or OUT cannot
 * be written, 2 on a usage error.
 *
 * Only the core (layer 1) and the game: no libsodium, no dlopen, no
 * threads, so it builds for wasm32-wasi as it is. Memory is allocated once
 * at the start; stdio only for OUT and the messages.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/bot.h"
#include "cradle/contract.h"
#include "cradle/game_abi.h"
#include "cradle/parse.h"
#include "cradle/sim.h"

#define EVENTS_MAX 1024u

/* The game's one export, linked in statically. */
const cradle_game_contract *cradle_game_get_contract(void);

static uint64_t fnv1a64(const void *data, size_t size) {
    const uint8_t *p = data;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < size; i++) h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    return h;
}

int main(int argc, char **argv) {
    uint64_t seed = 0, players = 0, steps = 0;
    if (argc != 5 || !cradle_parse_u64(argv[1], 0, UINT64_MAX, &seed) ||
        !cradle_parse_u64(argv[2], 1, CRADLE_GAME_MAX_PLAYERS, &players) ||
        !cradle_parse_u64(argv[3], 1, UINT64_MAX, &steps)) {
        fprintf(stderr, "usage: sim_run SEED PLAYERS STEPS OUT\n");
        return 2;
    }
    const cradle_game_contract *k = cradle_game_get_contract();
    char message[256];
    cradle_contract_limits limits = cradle_contract_host_limits();
    if (cradle_contract_check(k, &limits, message, sizeof message) != 0) {
        fprintf(stderr, "sim_run: the game's contract: %s\n", message);
        return 1;
    }
    if (players > k->max_players) {
        fprintf(stderr, "sim_run: %s takes at most %u players\n", k->name, (unsigned)k->max_players);
        return 2;
    }
    size_t align = k->state_align < 16u ? 16u : k->state_align;
    size_t state_bytes = ((size_t)k->state_size + align - 1u) / align * align;
    uint32_t snapshot_size = cradle_snapshot_size(k->max_players, k->input_bytes);
    void *state = aligned_alloc(align, state_bytes);
    uint8_t *snapshot = calloc(1, snapshot_size);
    cradle_event *events = calloc(EVENTS_MAX, sizeof *events);
    cradle_bot *bots = calloc(players, sizeof *bots);
    FILE *out = fopen(argv[4], "wb");
    if (!state || !snapshot || !events || !bots || !out) {
        fprintf(stderr, "sim_run: out of memory, or cannot create %s\n", argv[4]);
        return 1;
    }
    cradle_sim sim;
    cradle_sim_config config = {.state = state,
                                .state_capacity = (uint32_t)state_bytes,
                                .state_align = (uint32_t)align,
                                .events = events,
                                .event_capacity = EVENTS_MAX,
                                .hash = fnv1a64};
    if (cradle_sim_init(&sim, &config, k, message, sizeof message) != 0 ||
        cradle_sim_start(&sim, seed, (uint32_t)players) != 0) {
        fprintf(stderr, "sim_run: %s refuses %" PRIu64 " players (%s)\n", k->name, players, message);
        return 1;
    }
    for (uint32_t slot = 0; slot < players; slot++) cradle_bot_init(&bots[slot], seed + slot);
    for (uint64_t s = 0; s < steps; s++) {
        memset(snapshot, 0, snapshot_size);
        for (uint32_t slot = 0; slot < players; slot++) {
            snapshot[slot / 8u] = (uint8_t)(snapshot[slot / 8u] | (1u << (slot % 8u)));
            uint8_t *in = snapshot + CRADLE_PRESENCE_BYTES(k->max_players) + slot * k->input_bytes;
            cradle_bot_fill(&bots[slot], k, sim.state, s, slot, in, k->input_bytes);
        }
        cradle_sim_step(&sim, snapshot);
        if (cradle_sim_output(&sim) != 0) {
            fprintf(stderr, "sim_run: %s's output() at step %" PRIu64 " claimed too many bytes\n", k->name, s);
            return 1;
        }
        if (fwrite(sim.output, 1, sim.output_size, out) != sim.output_size) break;
    }
    fprintf(out, "state %016" PRIx64 " after %" PRIu64 " steps\n", cradle_sim_hash(&sim), sim.next_step);
    if (ferror(out) | (fclose(out) != 0)) {
        fprintf(stderr, "sim_run: cannot write %s\n", argv[4]);
        return 1;
    }
    printf("%s %s: %" PRIu64 " steps, %" PRIu64 " players, state %016" PRIx64 "\n", k->name, k->build_id, steps,
           players, cradle_sim_hash(&sim));
    free(bots);
    free(events);
    free(snapshot);
    free(state);
    return 0;
}
