/*
 * fuzz_gather_data: the template game's data file (gather/rules.json, game
 * ABI minor 4: a designer's file is outside bytes) through its contract's
 * data() on an initialised state. gather.c is compiled into the harness, as
 * a game built from the template would be. The input is the file, copied
 * into a heap buffer of exactly its size so an overread is an ASan finding.
 * A refusal must come with a NUL-terminated, non-empty message; an
 * acceptance must leave rules in their documented ranges, and the game must
 * still step with them.
 */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/game_abi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const cradle_game_contract *cradle_game_get_contract(void);

static bool ignore_event(void *context, const cradle_event *e) {
    (void)context;
    (void)e;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const cradle_game_contract *c = cradle_game_get_contract();
    assert(c->data_file_count == 1 && c->data);
    if (size > c->data_files[0].max_bytes) return 0; /* the host refuses it before data() */
    static uint8_t state[4096] __attribute__((aligned(64)));
    assert(c->state_size <= sizeof state);
    memset(state, 0, sizeof state);
    if (c->init(state, 7, 3) != 0) abort();
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes) abort();
    memcpy(bytes, data, size);
    cradle_data_refusal refusal;
    memset(&refusal, 0, sizeof refusal);
    bool accepted = c->data(state, 0, bytes, (uint32_t)size, &refusal);
    free(bytes);
    if (!accepted) {
        assert(memchr(refusal.message, '\0', sizeof refusal.message) != NULL);
        assert(refusal.message[0] != '\0');
        return 0;
    }
    uint8_t snapshot[1 + 8] = {0x07, 1, 2, 4};
    cradle_event_sink sink = {.context = NULL, .emit = ignore_event};
    for (uint64_t i = 0; i < 120; i++) {
        snapshot[1 + i % 3] = (uint8_t)(1u << (i % 4));
        cradle_game_step step = {.index = i, .snapshot = snapshot, .snapshot_size = sizeof snapshot};
        c->step(state, &step, &sink);
    }
    uint8_t out[CRADLE_GAME_OUTPUT_MAX];
    assert(c->output(state, 119, out, sizeof out) <= sizeof out);
    return 0;
}
