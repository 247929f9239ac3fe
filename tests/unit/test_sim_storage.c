/* Tests for sim_storage: the blocks a sim runs in, allocated once and bound
 * (cradle/sim_storage.h). A small game defined here keeps a running total
 * and emits an event a step, so the blocks are seen in use. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cradle/errors.h"
#include "cradle/sim_storage.h"

typedef struct tally_state {
    uint64_t total;
    uint64_t seed;
} tally_state;

static int tally_init(void *state, uint64_t seed, uint32_t players) {
    (void)players;
    ((tally_state *)state)->seed = seed;
    return 0;
}

static void tally_step(void *state, const cradle_game_step *step, const cradle_event_sink *events) {
    tally_state *s = state;
    s->total += step->snapshot[step->snapshot_size - 1];
    cradle_event e = {.kind = 1, .player = CRADLE_EVENT_NO_PLAYER};
    (void)events->emit(events->context, &e);
}

static const cradle_game_contract tally = {
    .abi_major = CRADLE_ABI_MAJOR,
    .abi_minor = CRADLE_ABI_MINOR,
    .state_size = sizeof(tally_state),
    .state_align = 8,
    .input_bytes = 1,
    .max_players = 1,
    .steps_per_second = 60,
    .source_frames_per_second = 60,
    .name = "tally",
    .build_id = "one",
    .init = tally_init,
    .step = tally_step,
};

static void the_defaults_fit_the_contract_at_a_cache_line(void **unused) {
    (void)unused;
    cradle_sim sim;
    cradle_sim_storage storage;
    char message[CRADLE_SIM_STORAGE_MESSAGE_MAX];
    assert_int_equal(cradle_sim_storage_open(&storage, &sim, &tally, &(cradle_sim_storage_config){0}, message,
                                             sizeof message),
                     0);
    assert_int_equal(storage.capacity, sizeof(tally_state));
    assert_int_equal(storage.align, CRADLE_SIM_STORAGE_MIN_ALIGN);
    assert_int_equal((uintptr_t)storage.state % CRADLE_SIM_STORAGE_MIN_ALIGN, 0);
    assert_ptr_equal(sim.state, storage.state);
    assert_null(storage.previous);
    assert_null(storage.scratch);
    assert_null(storage.events);
    assert_int_equal(cradle_sim_start(&sim, 7, 1), 0);
    uint8_t snapshot[2] = {1, 5};
    cradle_sim_step(&sim, snapshot);
    assert_int_equal(((tally_state *)storage.state)->total, 5);
    assert_int_equal(((tally_state *)storage.state)->seed, 7);
    cradle_sim_storage_close(&storage);
    assert_null(storage.state);
    cradle_sim_storage_close(&storage); /* twice is harmless */
}

static void what_is_asked_is_there(void **unused) {
    (void)unused;
    cradle_sim sim;
    cradle_sim_storage storage;
    cradle_sim_storage_config config = {.capacity = 4096, .align = 128, .previous = true, .scratch = true,
                                        .event_capacity = 4};
    assert_int_equal(cradle_sim_storage_open(&storage, &sim, &tally, &config, NULL, 0), 0);
    assert_int_equal(storage.capacity, 4096);
    assert_int_equal(sim.state_capacity, 4096);
    assert_int_equal(sim.state_align, 128);
    assert_int_equal((uintptr_t)storage.previous % 128u, 0);
    assert_int_equal((uintptr_t)storage.scratch % 128u, 0);
    assert_ptr_equal(sim.previous, storage.previous);
    assert_ptr_equal(sim.scratch, storage.scratch);
    assert_int_equal(cradle_sim_start(&sim, 1, 1), 0);
    uint8_t snapshot[2] = {1, 3};
    cradle_sim_step(&sim, snapshot);
    cradle_sim_step(&sim, snapshot);
    assert_int_equal(((tally_state *)storage.previous)->total, 3); /* the state before the last step */
    assert_int_equal(sim.events.count, 1); /* the step's event, kept */
    cradle_sim_storage_close(&storage);
}

static void a_block_too_small_is_refused_and_nothing_is_kept(void **unused) {
    (void)unused;
    cradle_sim sim;
    cradle_sim_storage storage;
    char message[CRADLE_SIM_STORAGE_MESSAGE_MAX];
    int rc = cradle_sim_storage_open(&storage, &sim, &tally, &(cradle_sim_storage_config){.capacity = 8},
                                     message, sizeof message);
    assert_int_equal(rc, CRADLE_ERELOAD_SIZE);
    assert_non_null(strstr(message, "16"));
    assert_null(storage.state); /* freed on the way out: the leak checkers see to it */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_defaults_fit_the_contract_at_a_cache_line),
        cmocka_unit_test(what_is_asked_is_there),
        cmocka_unit_test(a_block_too_small_is_refused_and_nothing_is_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
