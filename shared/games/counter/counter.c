/*
 * counter: the smallest game Cradle hosts, for host tests and the demo.
 *
 * Every step adds COUNTER_INCREMENT to a running total and, for each present
 * player, the player's one input byte (a signed delta). A test rebuilds it
 * with another increment to prove that a hot reload keeps the state and runs
 * the new code ("the counter keeps counting with the new increment").
 *
 * output() per step, 24 bytes, little-endian:
 *   u64 step index, i64 total, u64 presence mask of the step
 *
 * Built with COUNTER_DATA (a test variant), it also declares one data file,
 * "counter/bonus.json" ({"bonus": N}, N in -1000..1000), whose bonus every
 * step adds too: the smallest game with live data, for the data tests.
 */
#include <string.h>

#include "cradle/game_abi.h"
#include "cradle/input.h"
#ifdef COUNTER_DATA
#include "cradle/json_reader.h"
#endif
#include "cradle_build_id.h"

#ifndef COUNTER_INCREMENT
#define COUNTER_INCREMENT 1
#endif
#ifndef COUNTER_STATE_SIZE
#define COUNTER_STATE_SIZE sizeof(counter_state)
#endif
#ifndef COUNTER_STATE_ALIGN
#define COUNTER_STATE_ALIGN _Alignof(counter_state)
#endif
#ifndef COUNTER_ABI_MAJOR
#define COUNTER_ABI_MAJOR CRADLE_ABI_MAJOR
#endif
#ifndef COUNTER_ABI_MINOR
#define COUNTER_ABI_MINOR CRADLE_ABI_MINOR
#endif
#ifndef COUNTER_NAME
#define COUNTER_NAME "counter"
#endif

#define COUNTER_MAX_PLAYERS 8u

typedef struct counter_state {
    uint64_t steps;
    int64_t total;
    uint64_t presence;
    uint64_t seed;
    uint32_t players;
    uint32_t reloads;
#ifdef COUNTER_DATA
    int64_t bonus; /* from counter/bonus.json */
#endif
} counter_state;

static int counter_init(void *state, uint64_t seed, uint32_t player_count) {
    if (player_count < 1 || player_count > COUNTER_MAX_PLAYERS) return -1;
    counter_state *s = state;
    memset(s, 0, sizeof *s);
    s->seed = seed;
    s->players = player_count;
    s->total = (int64_t)(seed % 1000u);
    return 0;
}

static void counter_step(void *state, const cradle_game_step *step,
                         const cradle_event_sink *events) {
    counter_state *s = state;
    s->steps = step->index + 1;
    s->total += COUNTER_INCREMENT;
#ifdef COUNTER_DATA
    s->total += s->bonus;
#endif
    uint64_t presence = 0;
    for (uint32_t slot = 0; slot < COUNTER_MAX_PLAYERS; slot++) {
        if (!cradle_snapshot_present(step->snapshot, slot)) continue;
        presence |= 1ull << slot;
        const uint8_t *in = cradle_snapshot_input(step->snapshot, COUNTER_MAX_PLAYERS, 1, slot);
        s->total += (int8_t)in[0];
        if (in[0] != 0 && events && events->emit) {
            cradle_event ev = {.kind = 1, .player = (uint8_t)slot, .a = (int8_t)in[0]};
            (void)events->emit(events->context, &ev);
        }
    }
    s->presence = presence;
}

static size_t counter_output(const void *state, uint64_t step, uint8_t *out, size_t capacity) {
    const counter_state *s = state;
    cradle_cursor c = cradle_cursor_writer(out, capacity);
    cradle_cursor_put_u64(&c, step);
    cradle_cursor_put_u64(&c, (uint64_t)s->total);
    cradle_cursor_put_u64(&c, s->presence);
    return c.failed ? 0 : c.pos;
}

static void counter_render(const void *previous, const void *state, float alpha,
                           const cradle_draw *draw) {
    (void)previous;
    (void)alpha;
    const counter_state *s = state;
    char text[48];
    /* Integer to text without stdio: the game does no I/O. */
    int64_t v = s->total;
    char digits[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        digits[n++] = (char)('0' + (int)(u % 10u));
        u /= 10u;
    } while (u && n < 23);
    size_t at = 0;
    const char *label = "total ";
    while (*label) text[at++] = *label++;
    if (v < 0) text[at++] = '-';
    while (n) text[at++] = digits[--n];
    text[at] = '\0';
    if (draw->clear) draw->clear(draw->context, 0x101020ffu);
    if (draw->text) draw->text(draw->context, 8.0f, 8.0f, 2.0f, 0xffffffffu, text);
}

static void counter_on_reload(void *state) {
    counter_state *s = state;
    s->reloads++;
}

/* The bot entry (game_abi.h, minor 1). The counter's input is a signed
 * delta, not a set of buttons: a generic bot flipping bits would often send
 * large negative deltas. This one adds a random 0..63 each step, so the
 * total only climbs and a test can tell a state reset (a drop) from play. */
static void counter_bot(const void *state, uint64_t step, uint32_t slot, uint64_t random,
                        uint8_t *input, uint32_t input_bytes) {
    (void)state;
    (void)step;
    (void)slot;
    if (input_bytes >= 1) input[0] = (uint8_t)(random & 0x3Fu);
}

#ifdef COUNTER_DATA
static const cradle_game_data_file counter_data_files[] = {{"counter/bonus.json", 4096}};

static bool counter_data(void *state, uint32_t file, const uint8_t *bytes, uint32_t size,
                         cradle_data_refusal *refusal) {
    (void)file; /* the only one */
    cradle_json_token tokens[8];
    cradle_json_doc doc;
    cradle_json_error error;
    static const char *const keys[] = {"bonus"};
    uint32_t values[1];
    int64_t bonus = 0;
    if (!cradle_json_parse(&doc, bytes, size, tokens, 8, &error) ||
        !cradle_json_object(&doc, 0, "bonus.json", keys, NULL, 1, values, &error) ||
        !cradle_json_int(&doc, values[0], "bonus", -1000, 1000, &bonus, &error)) {
        refusal->line = error.line;
        memcpy(refusal->message, error.message, sizeof refusal->message);
        return false;
    }
    ((counter_state *)state)->bonus = bonus;
    return true;
}
#endif

static const cradle_game_contract contract = {
    .abi_major = COUNTER_ABI_MAJOR,
    .abi_minor = COUNTER_ABI_MINOR,
    .state_size = (uint32_t)(COUNTER_STATE_SIZE),
    .state_align = (uint32_t)(COUNTER_STATE_ALIGN),
    .input_bytes = 1,
    .max_players = COUNTER_MAX_PLAYERS,
    .steps_per_second = 60,
    .source_frames_per_second = 20,
    .view_width = 320,
    .view_height = 180,
    .name = COUNTER_NAME,
    .build_id = CRADLE_BUILD_ID,
    .init = counter_init,
    .step = counter_step,
    .output = counter_output,
    .render = counter_render,
    .on_reload = counter_on_reload,
    .react = NULL,
    .bot = counter_bot,
#ifdef COUNTER_DATA
    .data_files = counter_data_files,
    .data_file_count = 1,
    .data = counter_data,
#endif
};

#ifndef COUNTER_NO_CONTRACT
CRADLE_GAME_DEFINE_CONTRACT(&contract)
#else
/* A test library without the contract symbol: keep the table referenced so
 * the build stays warning-free. */
CRADLE_GAME_EXPORT const cradle_game_contract *counter_not_the_contract(void);
CRADLE_GAME_EXPORT const cradle_game_contract *counter_not_the_contract(void) { return &contract; }
#endif
