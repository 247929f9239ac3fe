/*
 * entangled: a test game whose every step depends on every player's input,
 * for the prediction tests (tests/harness/test_predict.c): each step mixes
 * the step index and every present slot's two input bytes into a 64-bit
 * state, so any input guessed wrong gives another state, and a client that
 * predicts must roll back at every misprediction. Each step also reports
 * one event per present slot whose first input bit is set (kind 1, the
 * slot as player), so a wrong guess adds or removes events too.
 *
 * ENTANGLED_ORACLE builds one with a predict() entry (game_abi.h, minor 5)
 * that knows the harness's inputs (tests/harness/harness.c harness_input:
 * splitmix64 of the session seed, the step and the slot): its guesses are
 * never wrong, so its players never roll back.
 *
 * 8 players, two input bytes each, 60 steps a second; output is the 8-byte
 * mix.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cradle/game_abi.h"
#include "cradle_build_id.h"

#define PLAYERS 8u
#define INPUT_BYTES 2u

typedef struct state {
    uint64_t mix;
    uint64_t seed;
    uint64_t steps;
} state;

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static int init(void *block, uint64_t seed, uint32_t players) {
    if (players < 1 || players > PLAYERS) return -1;
    state *s = block;
    s->mix = seed;
    s->seed = seed;
    return 0;
}

static void step(void *block, const cradle_game_step *st, const cradle_event_sink *events) {
    state *s = block;
    s->mix = mix64(s->mix ^ st->index);
    for (uint32_t slot = 0; slot < PLAYERS; slot++) {
        if (!cradle_snapshot_present(st->snapshot, slot)) continue;
        const uint8_t *in = cradle_snapshot_input(st->snapshot, PLAYERS, INPUT_BYTES, slot);
        s->mix = mix64(s->mix ^ ((uint64_t)slot << 16 | (uint64_t)in[0] << 8 | in[1]));
        if ((in[0] & 1u) && events && events->emit) {
            cradle_event ev = {.kind = 1, .player = (uint8_t)slot, .a = in[0], .b = in[1]};
            (void)events->emit(events->context, &ev);
        }
    }
    s->steps++;
}

static size_t output(const void *block, uint64_t index, uint8_t *out, size_t capacity) {
    (void)index;
    if (capacity < sizeof(uint64_t)) return 0;
    memcpy(out, &((const state *)block)->mix, sizeof(uint64_t));
    return sizeof(uint64_t);
}

#ifdef ENTANGLED_ORACLE
/* The harness's input for (step, slot): the same splitmix64 stream. */
static void predict(const void *block, uint64_t step_index, uint32_t slot, const uint8_t *last, uint64_t steps_since,
                    uint8_t *input, uint32_t input_bytes) {
    (void)last;
    (void)steps_since;
    const state *s = block;
    uint64_t x = s->seed ^ (step_index * UINT64_C(0x9E3779B97F4A7C15)) ^ ((uint64_t)slot << 56);
    for (uint32_t i = 0; i < input_bytes; i++) {
        x += UINT64_C(0x9E3779B97F4A7C15);
        input[i] = (uint8_t)mix64(x);
    }
}
#define ENTANGLED_NAME "entangled_oracle"
#else
#define ENTANGLED_NAME "entangled"
#endif

static const cradle_game_contract contract = {
    .abi_major = CRADLE_ABI_MAJOR,
    .abi_minor = CRADLE_ABI_MINOR,
    .state_size = sizeof(state),
    .state_align = _Alignof(state),
    .input_bytes = INPUT_BYTES,
    .max_players = PLAYERS,
    .steps_per_second = 60,
    .source_frames_per_second = 60,
    .view_width = 64,
    .view_height = 64,
    .name = ENTANGLED_NAME,
    .build_id = CRADLE_BUILD_ID,
    .init = init,
    .step = step,
    .output = output,
#ifdef ENTANGLED_ORACLE
    .predict = predict,
#endif
};

CRADLE_GAME_DEFINE_CONTRACT(&contract)
