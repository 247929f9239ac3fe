/*
 * fuzz_vanguard_data: vanguard's data files (game_abi.h minor 4; a designer's
 * file is outside bytes) through the contract's data() on an initialised
 * state. The input: one byte choosing the file (bit 0: waves.json or
 * tuning.json; 0xFF: a file the game does not declare), then the file's
 * bytes, copied into a heap buffer of exactly their size so an overread is
 * an ASan finding. A refusal must come with a NUL-terminated, non-empty
 * message and leave the state as it was; after an acceptance the game must
 * still step (two bots, a boss wave soon), output and react.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vanguard_input.h"
#include "vanguard_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SNAP_SIZE (CRADLE_PRESENCE_BYTES(VG_MAX_PLAYERS) + VG_MAX_PLAYERS * VANGUARD_INPUT_BYTES)

/* One state block for every input (init() rewrites all of it): a fresh
 * megabyte per input would cost more than the input's run. */
static vanguard_state *state_block(void) {
    static vanguard_state *s;
    if (!s) {
        size_t bytes = (sizeof(vanguard_state) + 63u) & ~(size_t)63u;
        s = aligned_alloc(64, bytes);
        if (!s) abort();
    }
    memset(s, 0, sizeof *s);
    return s;
}

static bool count_event(void *context, const cradle_event *e) {
    (void)e;
    (*(uint32_t *)context)++;
    return true;
}

static void fx_burst(void *c, float x, float y, uint32_t n, uint32_t rgba, float speed, float life) {
    (void)c, (void)x, (void)y, (void)n, (void)rgba, (void)speed, (void)life;
}
static void fx_shake(void *c, float amount) { (void)c, (void)amount; }
static void fx_sound(void *c, cradle_sound s, float volume, float pitch) {
    (void)c, (void)s, (void)volume, (void)pitch;
}

/* Steps the game with two bots, outputs each step and reacts to a
 * synthetic event of every kind. */
static void play(const cradle_game_contract *c, vanguard_state *s) {
    /* Skip ahead to a boss wave, so its stats and formulas run too. */
    s->wave = 4;
    s->break_steps = 1;
    uint32_t events = 0;
    cradle_event_sink sink = {.context = &events, .emit = count_event};
    uint8_t snap[SNAP_SIZE], out[CRADLE_GAME_OUTPUT_MAX];
    for (uint64_t i = 0; i < 90; i++) {
        memset(snap, 0, sizeof snap);
        snap[0] = 0x3;
        for (uint32_t slot = 0; slot < 2; slot++)
            (void)vanguard_input_pack(snap + CRADLE_PRESENCE_BYTES(VG_MAX_PLAYERS) + slot, 1,
                                      vanguard_bot_actions(s, slot, i));
        cradle_game_step st = {.index = i, .source_frame = i / 3, .phase = (uint32_t)(i % 3),
                               .snapshot_size = SNAP_SIZE, .snapshot = snap};
        c->step(s, &st, &sink);
        if (c->output(s, i, out, sizeof out) == 0) abort();
        if (cradle_ecs_live_count(vg_world(s)) > VG_MAX_ENTITIES) abort();
    }
    cradle_fx fx = {.burst = fx_burst, .shake = fx_shake, .sound = fx_sound};
    for (uint16_t kind = VG_EV_FIRED; kind <= VG_EV_PLAYER_JOINED; kind++) {
        cradle_event e = {.kind = kind, .player = 1, .a = 5, .b = VG_BOSS};
        c->react(s, &e, 1, &fx);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size - 1 > CRADLE_GAME_DATA_MAX_BYTES) return 0;
    const cradle_game_contract *c = vanguard_contract();
    uint32_t file = data[0] == 0xFFu ? VG_DATA_FILES : (uint32_t)(data[0] & 1u);
    uint32_t n = (uint32_t)(size - 1);
    uint8_t *bytes = malloc(n ? n : 1);
    if (!bytes) abort();
    memcpy(bytes, data + 1, n);
    vanguard_state *s = state_block();
    if (c->init(s, 7, 2) != 0) abort();
    vg_data before = s->data;
    cradle_data_refusal refusal;
    memset(&refusal, 0, sizeof refusal);
    if (c->data(s, file, bytes, n, &refusal)) {
        if (file >= c->data_file_count) abort();
        const vg_data *d = &s->data;
        if (d->wave_count < 1 || d->wave_count > VG_MAX_WAVES) abort();
        if (d->spawn_gap_min_steps < 1 || d->spawn_gap_min_steps > d->spawn_gap_steps) abort();
        if (d->life_pickup_percent > d->pickup_percent) abort();
        play(c, s);
    } else {
        if (!memchr(refusal.message, '\0', sizeof refusal.message) || refusal.message[0] == '\0') abort();
        if (memcmp(&before, &s->data, sizeof before) != 0) abort();
    }
    free(bytes);
    return 0;
}
