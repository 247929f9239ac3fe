/*
 * A test build of a game that breaks the determinism rule on purpose, so
 * that the tests can provoke a desync from outside the programs (no hook in
 * the client or the server): from step NONDETERMINISTIC_FROM on, its step
 * mixes the process id into the state, as a game reading a clock or
 * uninitialised memory would mix something of its own process. Server and
 * client load the same file (the same build id) and disagree from there.
 *
 * Otherwise it is a counter: every step adds one and each present player's
 * input byte to a total. 8 players, one input byte each, 60 steps a second.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "cradle/game_abi.h"
#include "cradle_build_id.h"

#ifndef NONDETERMINISTIC_FROM
#define NONDETERMINISTIC_FROM 250u
#endif
#define PLAYERS 8u

typedef struct state {
    uint64_t total;
    uint64_t steps;
} state;

static int init(void *block, uint64_t seed, uint32_t players) {
    if (players < 1 || players > PLAYERS) return -1;
    state *s = block;
    s->total = seed;
    return 0;
}

static void step(void *block, const cradle_game_step *st, const cradle_event_sink *events) {
    (void)events;
    state *s = block;
    s->total += 1;
    for (uint32_t slot = 0; slot < PLAYERS; slot++)
        if (cradle_snapshot_present(st->snapshot, slot))
            s->total += *cradle_snapshot_input(st->snapshot, PLAYERS, 1, slot);
    if (st->index == NONDETERMINISTIC_FROM) s->total += (uint64_t)getpid(); /* the breach */
    s->steps++;
}

static size_t output(const void *block, uint64_t index, uint8_t *out, size_t capacity) {
    (void)index;
    if (capacity < sizeof(uint64_t)) return 0;
    memcpy(out, &((const state *)block)->total, sizeof(uint64_t));
    return sizeof(uint64_t);
}

static const cradle_game_contract contract = {
    .abi_major = CRADLE_ABI_MAJOR,
    .abi_minor = CRADLE_ABI_MINOR,
    .state_size = sizeof(state),
    .state_align = _Alignof(state),
    .input_bytes = 1,
    .max_players = PLAYERS,
    .steps_per_second = 60,
    .source_frames_per_second = 20,
    .view_width = 64,
    .view_height = 64,
    .name = "nondeterministic",
    .build_id = CRADLE_BUILD_ID,
    .init = init,
    .step = step,
    .output = output,
};

CRADLE_GAME_DEFINE_CONTRACT(&contract)
