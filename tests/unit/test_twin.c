/* Tests for twin: a second sim beside the first, compared after each step.
 * A small game defined here is deterministic unless its build says
 * otherwise: one reads a static, one keeps a pointer into its state, one
 * writes output bytes from outside the state. Each is caught at the step
 * it breaks, named by the game's layout. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdalign.h>
#include <string.h>

#include "cradle/cradle.h"
#include "cradle_test.h"

typedef struct twin_state {
    uint64_t total;
    uint64_t *total_at; /* set only by the pointer build */
    uint32_t reloads;
    uint32_t pad;
} twin_state;

static uint64_t calls;       /* outside the state: the static build reads it */
static uint8_t output_extra; /* outside the state: the output build writes it */

static int twin_init(void *state, uint64_t seed, uint32_t players) {
    (void)players;
    ((twin_state *)state)->total = seed;
    return 0;
}

static void add_input(twin_state *s, const cradle_game_step *step) {
    for (uint32_t i = 0; i < step->snapshot_size; i++) s->total += step->snapshot[i];
}

static void good_step(void *state, const cradle_game_step *step, const cradle_event_sink *events) {
    (void)events;
    add_input(state, step);
    ((twin_state *)state)->total += step->index;
}

static void static_step(void *state, const cradle_game_step *step, const cradle_event_sink *events) {
    good_step(state, step, events);
    if (step->index >= 5) ((twin_state *)state)->total += ++calls;
}

static int pointer_init(void *state, uint64_t seed, uint32_t players) {
    twin_state *s = state;
    (void)twin_init(state, seed, players);
    s->total_at = &s->total;
    return 0;
}

static void pointer_step(void *state, const cradle_game_step *step, const cradle_event_sink *events) {
    (void)events;
    twin_state *s = state;
    *s->total_at += 1; /* the twin's copy writes the first block */
    add_input(s, step);
}

static size_t twin_output(const void *state, uint64_t step, uint8_t *out, size_t capacity) {
    (void)step, (void)capacity;
    memcpy(out, &((const twin_state *)state)->total, sizeof(uint64_t));
    out[8] = output_extra++; /* changes per call only in the output build's use */
    return 9;
}

static size_t stable_output(const void *state, uint64_t step, uint8_t *out, size_t capacity) {
    (void)capacity;
    memcpy(out, &((const twin_state *)state)->total, sizeof(uint64_t));
    out[8] = (uint8_t)step;
    return 9;
}

static void twin_on_reload(void *state) { ((twin_state *)state)->reloads++; }

static const cradle_state_region twin_layout[] = {
    {"total", 0, offsetof(twin_state, total), sizeof(uint64_t), 1, 0},
    {"reloads", 0, offsetof(twin_state, reloads), sizeof(uint32_t), 1, 0},
};

#define TWIN_CONTRACT(step_fn, init_fn, output_fn, build)                                                   \
    {.abi_major = CRADLE_ABI_MAJOR, .abi_minor = CRADLE_ABI_MINOR, .state_size = sizeof(twin_state),       \
     .state_align = 8, .input_bytes = 1, .max_players = 2, .steps_per_second = 60,                       \
     .source_frames_per_second = 20, .name = "twin", .build_id = build, .init = init_fn,                   \
     .step = step_fn, .output = output_fn, .on_reload = twin_on_reload, .layout = twin_layout,           \
     .layout_count = 2}

static const cradle_game_contract good = TWIN_CONTRACT(good_step, twin_init, stable_output, "good");
static const cradle_game_contract good2 = TWIN_CONTRACT(good_step, twin_init, stable_output, "good2");
static const cradle_game_contract with_static = TWIN_CONTRACT(static_step, twin_init, stable_output, "static");
static const cradle_game_contract with_pointer = TWIN_CONTRACT(pointer_step, pointer_init, stable_output, "ptr");
static const cradle_game_contract with_output = TWIN_CONTRACT(good_step, twin_init, twin_output, "output");

static uint64_t sum_hash(const void *data, size_t size) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size; i++) h = (h ^ ((const uint8_t *)data)[i]) * 1099511628211ull;
    return h;
}

typedef struct rig {
    alignas(64) uint8_t first_block[128];
    alignas(64) uint8_t twin_block[128 + 8];
    cradle_sim first;
    cradle_twin twin;
} rig;

static void rig_open(rig *r, const cradle_game_contract *c) {
    memset(r, 0, sizeof *r);
    cradle_sim_config config = {.state = r->first_block, .state_capacity = 64, .state_align = 64, .hash = sum_hash};
    assert_int_equal(cradle_sim_init(&r->first, &config, c, NULL, 0), 0);
    assert_int_equal(cradle_sim_start(&r->first, 7, 2), 0);
    /* the twin lives at the least alignment the build asks: 8 bytes into its block */
    assert_int_equal(cradle_twin_init(&r->twin, &r->first, r->twin_block + 8, 64, 8, NULL, 0), 0);
}

/* Runs steps on both; returns how many compared equal before the first difference. */
static uint64_t rig_run(rig *r, uint64_t steps) {
    uint8_t snapshot[8] = {0};
    for (uint64_t i = 0; i < steps; i++) {
        snapshot[1] = (uint8_t)(i * 3u);
        cradle_sim_step(&r->first, snapshot);
        cradle_twin_step(&r->twin, snapshot);
        assert_int_equal(cradle_sim_output(&r->first), 0);
        if (!cradle_twin_check(&r->twin, &r->first, r->first.output, r->first.output_size)) return i;
    }
    return steps;
}

static void good_game_runs_equal_and_across_a_reload(void **unused) {
    (void)unused;
    static rig r;
    rig_open(&r, &good);
    assert_int_equal(rig_run(&r, 50), 50);
    assert_int_equal(cradle_sim_swap(&r.first, &good2, NULL, 0), 0);
    assert_int_equal(cradle_twin_swap(&r.twin, &good2, NULL, 0), 0);
    assert_int_equal(rig_run(&r, 50), 50);
    assert_false(r.twin.failed);
    assert_int_equal(r.twin.checked, 100);
    assert_int_equal(((twin_state *)r.twin.sim.state)->reloads, 1); /* on_reload ran in the twin too */
    assert_int_equal(cradle_sim_hash(&r.first), cradle_sim_hash(&r.twin.sim));
}

static void static_outside_the_state_is_caught_at_its_step_by_name(void **unused) {
    (void)unused;
    static rig r;
    rig_open(&r, &with_static);
    assert_int_equal(rig_run(&r, 50), 5);
    const cradle_twin_difference *d = &r.twin.difference;
    assert_true(r.twin.failed);
    assert_int_equal(d->step, 5);
    assert_true(d->state);
    assert_int_equal(d->offset, 0);
    assert_string_equal(d->name, "total (state byte 0)");
    assert_int_equal(d->first_shown, CRADLE_TWIN_SHOW);
    assert_int_equal(d->twin[0] - d->first[0], 1); /* the twin read the static one call later */
    assert_int_not_equal(d->first_hash, d->twin_hash);
    /* a failed twin stays failed */
    assert_int_equal(rig_run(&r, 1), 0);
}

static void pointer_in_the_state_is_caught_at_the_first_step(void **unused) {
    (void)unused;
    static rig r;
    rig_open(&r, &with_pointer);
    assert_int_equal(rig_run(&r, 10), 0);
    assert_int_equal(r.twin.difference.step, 0);
    assert_string_equal(r.twin.difference.name, "total (state byte 0)");
}

static void output_outside_the_state_is_caught_as_output(void **unused) {
    (void)unused;
    static rig r;
    rig_open(&r, &with_output);
    assert_int_equal(rig_run(&r, 10), 0);
    const cradle_twin_difference *d = &r.twin.difference;
    assert_false(d->state);
    assert_int_equal(d->offset, 8);
    assert_string_equal(d->name, "output byte 8");
    assert_int_equal(d->first_size, 9);
    assert_int_equal(d->twin_size, 9);
}

static void storage_smaller_than_the_first_is_refused(void **unused) {
    (void)unused;
    static rig r;
    rig_open(&r, &good);
    char message[128];
    cradle_twin t;
    assert_int_equal(cradle_twin_init(&t, &r.first, r.twin_block, 32, 64, message, sizeof message),
                     CRADLE_ERELOAD_SIZE);
    assert_non_null(strstr(message, "32"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_game_runs_equal_and_across_a_reload),
        cmocka_unit_test(static_outside_the_state_is_caught_at_its_step_by_name),
        cmocka_unit_test(pointer_in_the_state_is_caught_at_the_first_step),
        cmocka_unit_test(output_outside_the_state_is_caught_as_output),
        cmocka_unit_test(storage_smaller_than_the_first_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
