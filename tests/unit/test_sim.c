/* Tests for sim: how a step runs. A small game defined here records what
 * the sim handed it (index, source frame, phase, the snapshot), emits
 * events, and counts its reloads in its state, as vanguard does. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cradle/cradle.h"
#include "cradle_test.h"

typedef struct probe_state {
    uint64_t seed;
    uint32_t players;
    uint32_t reloads;
    uint64_t last_index;
    uint64_t last_frame;
    uint32_t last_phase;
    uint32_t input_sum;
    uint8_t grown[8]; /* only the larger build uses these */
} probe_state;

#define PROBE_SMALL_SIZE ((uint32_t)offsetof(probe_state, grown))

static int probe_init(void *state, uint64_t seed, uint32_t players) {
    if (players > 2) return -1;
    probe_state *s = state;
    s->seed = seed;
    s->players = players;
    return 0;
}

static void probe_step(void *state, const cradle_game_step *step, const cradle_event_sink *events) {
    probe_state *s = state;
    s->last_index = step->index;
    s->last_frame = step->source_frame;
    s->last_phase = step->phase;
    for (uint32_t i = 0; i < step->snapshot_size; i++) s->input_sum += step->snapshot[i];
    for (uint32_t i = 0; i < step->index % 4u; i++) {
        cradle_event e = {.kind = 9, .player = CRADLE_EVENT_NO_PLAYER, .a = (int32_t)i};
        (void)events->emit(events->context, &e);
    }
}

static size_t probe_output(const void *state, uint64_t step, uint8_t *out, size_t capacity) {
    const probe_state *s = state;
    (void)capacity;
    out[0] = (uint8_t)step;
    out[1] = (uint8_t)s->reloads;
    return 2;
}

static size_t greedy_output(const void *state, uint64_t step, uint8_t *out, size_t capacity) {
    (void)state, (void)step, (void)out;
    return capacity + 1;
}

static void probe_on_reload(void *state) { ((probe_state *)state)->reloads++; }

static const cradle_game_contract probe = {
    .abi_major = CRADLE_ABI_MAJOR,
    .abi_minor = CRADLE_ABI_MINOR,
    .state_size = PROBE_SMALL_SIZE,
    .state_align = 8,
    .input_bytes = 2,
    .max_players = 2,
    .steps_per_second = 60,
    .source_frames_per_second = 20,
    .name = "probe",
    .build_id = "one",
    .init = probe_init,
    .step = probe_step,
    .output = probe_output,
    .on_reload = probe_on_reload,
};

typedef struct fixture {
    alignas(64) uint8_t state[sizeof(probe_state)];
    alignas(64) uint8_t previous[sizeof(probe_state)];
    cradle_event events[2];
    cradle_sim sim;
} fixture;

static void open_probe(fixture *f, const cradle_game_contract *c) {
    memset(f, 0xA5, sizeof *f);
    cradle_sim_config config = {.state = f->state,
                                .previous = f->previous,
                                .state_capacity = sizeof f->state,
                                .state_align = 64,
                                .events = f->events,
                                .event_capacity = 2,
                                .hash = cradle_hash64};
    char message[128];
    assert_int_equal(cradle_sim_init(&f->sim, &config, c, message, sizeof message), 0);
    assert_string_equal(message, "");
}

static void test_steps_are_numbered_by_the_clock_rules(void **unused) {
    (void)unused;
    static fixture f;
    open_probe(&f, &probe);
    assert_int_equal(cradle_sim_start(&f.sim, 42, 2), 0);
    const probe_state *s = (const probe_state *)f.state;
    assert_int_equal(s->seed, 42);
    assert_int_equal(s->players, 2);
    uint8_t snapshot[5] = {3, 1, 2, 3, 4};
    assert_int_equal(f.sim.snapshot_size, sizeof snapshot);
    for (uint64_t i = 0; i < 7; i++) {
        cradle_sim_step(&f.sim, snapshot);
        assert_int_equal(s->last_index, i);
        assert_int_equal(s->last_frame, i / 3);
        assert_int_equal(s->last_phase, i % 3);
    }
    assert_int_equal(f.sim.next_step, 7);
    assert_int_equal(f.sim.steps_run, 7);
    assert_int_equal(s->input_sum, 7 * 13);
}

static void test_previous_state_is_the_one_before_the_step(void **unused) {
    (void)unused;
    static fixture f;
    open_probe(&f, &probe);
    assert_int_equal(cradle_sim_start(&f.sim, 1, 1), 0);
    assert_false(f.sim.has_previous);
    uint8_t snapshot[5] = {1, 0, 0, 0, 0};
    cradle_sim_step(&f.sim, snapshot);
    cradle_sim_step(&f.sim, snapshot);
    assert_true(f.sim.has_previous);
    assert_int_equal(((const probe_state *)f.previous)->last_index, 0);
    assert_int_equal(((const probe_state *)f.state)->last_index, 1);
}

static void test_events_are_the_last_steps_only_and_overflow_counts(void **unused) {
    (void)unused;
    static fixture f;
    open_probe(&f, &probe);
    assert_int_equal(cradle_sim_start(&f.sim, 1, 1), 0);
    uint8_t snapshot[5] = {0};
    cradle_sim_step(&f.sim, snapshot); /* step 0: no event */
    assert_int_equal(cradle_events_count(&f.sim.events), 0);
    cradle_sim_step(&f.sim, snapshot); /* step 1: one */
    assert_int_equal(cradle_events_count(&f.sim.events), 1);
    cradle_sim_step(&f.sim, snapshot); /* step 2: two */
    cradle_sim_step(&f.sim, snapshot); /* step 3: three, one past capacity */
    assert_int_equal(cradle_events_count(&f.sim.events), 2);
    assert_int_equal(cradle_events_dropped(&f.sim.events), 1);
    assert_int_equal(cradle_events_at(&f.sim.events, 1)->a, 1);
}

static void test_hash_and_output(void **unused) {
    (void)unused;
    static fixture f;
    open_probe(&f, &probe);
    assert_int_equal(cradle_sim_start(&f.sim, 1, 1), 0);
    assert_int_equal(cradle_sim_hash(&f.sim), cradle_hash64(f.state, PROBE_SMALL_SIZE));
    uint8_t snapshot[5] = {1, 9, 9, 0, 0};
    uint64_t before = cradle_sim_hash(&f.sim);
    cradle_sim_step(&f.sim, snapshot);
    assert_int_not_equal(cradle_sim_hash(&f.sim), before);
    assert_int_equal(cradle_sim_output(&f.sim), 0);
    assert_int_equal(f.sim.output_size, 2);
    assert_int_equal(f.sim.output[0], 0); /* the step just run */

    cradle_game_contract greedy = probe;
    greedy.output = greedy_output;
    open_probe(&f, &greedy);
    assert_int_equal(cradle_sim_start(&f.sim, 1, 1), 0);
    cradle_sim_step(&f.sim, snapshot);
    assert_int_equal(cradle_sim_output(&f.sim), CRADLE_ESIM_OUTPUT);
    assert_int_equal(f.sim.output_size, 0);
}

static void test_init_refusal_and_small_storage(void **unused) {
    (void)unused;
    static fixture f;
    open_probe(&f, &probe);
    assert_int_equal(cradle_sim_start(&f.sim, 1, 3), CRADLE_ESIM_INIT);
    for (size_t i = 0; i < sizeof f.state; i++) assert_int_equal(f.state[i], 0);

    cradle_sim sim;
    uint8_t small[8];
    char message[128];
    cradle_sim_config config = {.state = small, .state_capacity = sizeof small, .state_align = 1,
                                .hash = cradle_hash64};
    assert_int_equal(cradle_sim_init(&sim, &config, &probe, message, sizeof message), CRADLE_ERELOAD_SIZE);
    assert_non_null(strstr(message, "capacity 8"));
}

static void test_save_and_restore(void **unused) {
    (void)unused;
    static fixture f;
    open_probe(&f, &probe);
    assert_int_equal(cradle_sim_start(&f.sim, 5, 2), 0);
    uint8_t snapshot[5] = {3, 1, 2, 3, 4};
    for (int i = 0; i < 10; i++) cradle_sim_step(&f.sim, snapshot);
    uint8_t saved[PROBE_SMALL_SIZE];
    cradle_sim_save(&f.sim, saved);
    uint64_t hash = cradle_sim_hash(&f.sim);
    cradle_sim_step(&f.sim, snapshot);
    assert_int_equal(cradle_sim_restore(&f.sim, saved, sizeof saved - 1, 10), CRADLE_ESIM_STATE);
    assert_int_equal(f.sim.next_step, 11); /* unchanged */
    assert_int_equal(cradle_sim_restore(&f.sim, saved, sizeof saved, 10), 0);
    assert_int_equal(f.sim.next_step, 10);
    assert_int_equal(cradle_sim_hash(&f.sim), hash);
    assert_false(f.sim.has_previous);
}

static void test_swap_runs_on_reload_even_for_the_same_build(void **unused) {
    (void)unused;
    static fixture f;
    open_probe(&f, &probe);
    assert_int_equal(cradle_sim_start(&f.sim, 1, 1), 0);
    char message[256];
    assert_int_equal(cradle_sim_swap(&f.sim, &probe, message, sizeof message), 0);
    assert_int_equal(((const probe_state *)f.state)->reloads, 1);
    cradle_game_contract larger = probe;
    larger.build_id = "two";
    larger.state_size = sizeof(probe_state);
    assert_int_equal(cradle_sim_swap(&f.sim, &larger, message, sizeof message), 0);
    assert_ptr_equal(f.sim.contract, &larger);
    assert_int_equal(cradle_sim_state_size(&f.sim), sizeof(probe_state));
    assert_int_equal(((const probe_state *)f.state)->reloads, 2);
    assert_int_equal(f.sim.swaps, 2);
}

static void test_swap_refuses_another_game_or_a_state_too_large(void **unused) {
    (void)unused;
    static fixture f;
    open_probe(&f, &probe);
    assert_int_equal(cradle_sim_start(&f.sim, 1, 1), 0);
    char message[256];
    cradle_game_contract other = probe;
    other.input_bytes = 3;
    assert_int_equal(cradle_sim_swap(&f.sim, &other, message, sizeof message), CRADLE_ERELOAD_MISMATCH);
    assert_non_null(strstr(message, "3 input bytes"));
    cradle_game_contract huge = probe;
    huge.state_size = sizeof f.state + 1;
    assert_int_equal(cradle_sim_swap(&f.sim, &huge, message, sizeof message), CRADLE_ERELOAD_SIZE);
    cradle_game_contract aligned = probe;
    aligned.state_align = 128;
    assert_int_equal(cradle_sim_swap(&f.sim, &aligned, message, sizeof message), CRADLE_ERELOAD_ALIGN);
    assert_ptr_equal(f.sim.contract, &probe);
    assert_int_equal(((const probe_state *)f.state)->reloads, 0);
    assert_int_equal(f.sim.swaps, 0);
}

/* A move puts the same bytes at another address; the next steps run there
 * and the old storage is the caller's again (left as it was). */
static void test_move_puts_the_state_at_another_address(void **unused) {
    (void)unused;
    static fixture f;
    static alignas(64) uint8_t other[64 + 2 * sizeof(probe_state)];
    open_probe(&f, &probe);
    assert_int_equal(cradle_sim_start(&f.sim, 5, 2), 0);
    uint8_t snapshot[5] = {3, 1, 2, 3, 4};
    for (int i = 0; i < 4; i++) cradle_sim_step(&f.sim, snapshot);
    uint64_t hash = cradle_sim_hash(&f.sim);
    char message[128];
    /* too small, or less aligned than the build: refused, nothing changes */
    assert_int_equal(cradle_sim_move(&f.sim, other + 8, PROBE_SMALL_SIZE - 1, 8, message, sizeof message),
                     CRADLE_ERELOAD_SIZE);
    assert_int_equal(cradle_sim_move(&f.sim, other + 4, PROBE_SMALL_SIZE, 4, message, sizeof message),
                     CRADLE_ERELOAD_ALIGN);
    assert_non_null(strstr(message, "alignment 8 > the storage's 4"));
    assert_ptr_equal(f.sim.state, f.state);
    memset(other, 0xEE, sizeof other);
    uint32_t capacity = (uint32_t)(2 * sizeof(probe_state));
    assert_int_equal(cradle_sim_move(&f.sim, other + 8, capacity, 8, message, sizeof message), 0);
    assert_string_equal(message, "");
    assert_ptr_equal(f.sim.state, other + 8);
    assert_int_equal(f.sim.state_capacity, capacity);
    assert_int_equal(f.sim.state_align, 8);
    assert_memory_equal(other + 8, f.state, sizeof f.state);  /* the whole old capacity */
    for (size_t i = 8 + sizeof f.state; i < 8 + capacity; i++) assert_int_equal(other[i], 0);
    assert_int_equal(cradle_sim_hash(&f.sim), hash);
    cradle_sim_step(&f.sim, snapshot);
    assert_int_equal(((const probe_state *)(other + 8))->last_index, 4);
    assert_int_equal(((const probe_state *)f.state)->last_index, 3); /* the old block is left alone */
    assert_int_equal(cradle_sim_move(&f.sim, f.state, sizeof f.state, 64, message, sizeof message), 0);
    assert_ptr_equal(f.sim.state, f.state);
    assert_int_equal(((const probe_state *)f.state)->last_index, 4);
}

#ifndef NDEBUG /* only a build with assert() calls it */
static fixture unstarted;
static void output_before_any_step(void) {
    open_probe(&unstarted, &probe);
    if (cradle_sim_output(&unstarted.sim) == 0) return;
}
#endif

static void test_output_before_a_step_asserts(void **unused) {
    (void)unused;
#ifdef NDEBUG
    skip();
#else
    assert_int_equal(cradle_test_signal_of(output_before_any_step), SIGABRT);
#endif
}

/* ---- game data files (minor 4) --------------------------------------------
 *
 * A second small game, "tuned", with one data file: its bytes go into the
 * state. Its data() writes into the state block as it goes and gives up
 * partway for some inputs (a first byte of 'R', 'C', 'E' or 'L'), scribbling
 * over the whole block first, so the tests see that a refusal changes
 * nothing. */
typedef struct tuned_state {
    uint64_t steps;
    uint32_t speed;    /* the file's first byte, added every step */
    uint32_t size;     /* bytes of the file applied last */
    uint8_t bytes[8];  /* the file applied last */
    uint64_t total;
} tuned_state;

static int tuned_calls; /* data() calls, to see which ones reached the game */
static bool tuned_got_bytes; /* data() was handed a non-NULL pointer */

static int tuned_init(void *state, uint64_t seed, uint32_t players) {
    (void)seed, (void)players;
    ((tuned_state *)state)->speed = 1;
    return 0;
}

static void tuned_step(void *state, const cradle_game_step *step, const cradle_event_sink *events) {
    (void)events;
    tuned_state *s = state;
    s->steps = step->index + 1;
    s->total += s->speed;
}

static bool tuned_data(void *state, uint32_t file, const uint8_t *bytes, uint32_t size,
                       cradle_data_refusal *refusal) {
    tuned_calls++;
    tuned_got_bytes = bytes != NULL;
    tuned_state *s = state;
    assert_int_equal(file, 0);
    assert_int_equal(refusal->line, 0); /* zeroed by the host */
    assert_int_equal(refusal->message[0], '\0');
    if (size > 0 && strchr("RCEL", bytes[0])) {
        memset(state, 0xEE, sizeof *s); /* half an application, then a refusal */
        switch (bytes[0]) {
        case 'R':
            refusal->line = 3;
            snprintf(refusal->message, sizeof refusal->message, "\"speed\" must be 1..9, got %u", (unsigned)size);
            break;
        case 'C': /* control bytes and a byte above ASCII: made printable */
            refusal->line = 7;
            snprintf(refusal->message, sizeof refusal->message, "bad\x01value\n\x7f\xc3\xa9!");
            break;
        case 'E': /* no reason at all */
            break;
        case 'L': /* every byte used, no NUL: cut to the buffer */
            memset(refusal->message, 'x', sizeof refusal->message);
            refusal->line = UINT32_MAX;
            break;
        }
        return false;
    }
    s->size = size;
    memset(s->bytes, 0, sizeof s->bytes);
    if (size) memcpy(s->bytes, bytes, size);
    s->speed = size ? bytes[0] : 0;
    return true;
}

static const cradle_game_data_file tuned_files[] = {{"tuned/speed.bin", 8}};

static const cradle_game_contract tuned = {
    .abi_major = CRADLE_ABI_MAJOR,
    .abi_minor = CRADLE_ABI_MINOR,
    .state_size = sizeof(tuned_state),
    .state_align = 8,
    .input_bytes = 1,
    .max_players = 1,
    .steps_per_second = 60,
    .source_frames_per_second = 60,
    .name = "tuned",
    .build_id = "tuned-1",
    .init = tuned_init,
    .step = tuned_step,
    .data_files = tuned_files,
    .data_file_count = 1,
    .data = tuned_data,
};

typedef struct data_fixture {
    alignas(64) uint8_t state[64];
    alignas(64) uint8_t scratch[64];
    cradle_sim sim;
} data_fixture;

static void open_tuned(data_fixture *f, const cradle_game_contract *c) {
    memset(f, 0xA5, sizeof *f);
    cradle_sim_config config = {.state = f->state,
                                .scratch = f->scratch,
                                .state_capacity = sizeof f->state,
                                .state_align = 64,
                                .hash = cradle_hash64};
    char message[128];
    assert_int_equal(cradle_sim_init(&f->sim, &config, c, message, sizeof message), 0);
    assert_int_equal(cradle_sim_start(&f->sim, 1, 1), 0);
    tuned_calls = 0;
}

/* Accepted bytes become the state, at the step boundary, and count. */
static void test_apply_data_takes_accepted_bytes_into_the_state(void **unused) {
    (void)unused;
    static data_fixture f;
    open_tuned(&f, &tuned);
    assert_ptr_equal(f.sim.scratch, f.scratch);
    assert_int_equal(f.sim.data_applied, 0);
    const tuned_state *s = (const tuned_state *)f.state;
    uint8_t snapshot[2] = {1, 0};
    cradle_sim_step(&f.sim, snapshot);
    cradle_sim_step(&f.sim, snapshot);
    assert_int_equal(s->total, 2);
    uint64_t before = cradle_sim_hash(&f.sim);
    cradle_data_refusal refusal;
    memset(&refusal, 0x55, sizeof refusal);
    static const uint8_t bytes[] = {5, 'a', 'b', 'c', 'd', 'e', 'f', 'g'}; /* exactly max_bytes */
    assert_int_equal(cradle_sim_apply_data(&f.sim, 0, bytes, sizeof bytes, &refusal), 0);
    assert_int_equal(refusal.line, 0); /* nothing to say */
    assert_string_equal(refusal.message, "");
    assert_int_equal(tuned_calls, 1);
    assert_int_equal(f.sim.data_applied, 1);
    assert_int_equal(s->size, sizeof bytes);
    assert_memory_equal(s->bytes, bytes, sizeof bytes);
    assert_int_equal(s->speed, 5);
    assert_int_equal(s->total, 2); /* applied between steps: no step ran */
    assert_int_equal(f.sim.next_step, 2);
    assert_int_not_equal(cradle_sim_hash(&f.sim), before); /* the data is part of the state */
    assert_int_equal(cradle_sim_hash(&f.sim), cradle_hash64(f.state, sizeof(tuned_state)));
    cradle_sim_step(&f.sim, snapshot);
    assert_int_equal(s->total, 7); /* the next step reads it */
    /* An empty file is bytes too: data() gets a valid pointer and size 0. */
    assert_int_equal(cradle_sim_apply_data(&f.sim, 0, NULL, 0, &refusal), 0);
    assert_true(tuned_got_bytes);
    assert_int_equal(s->size, 0);
    assert_int_equal(s->speed, 0);
    assert_int_equal(f.sim.data_applied, 2);
    assert_int_equal(f.sim.steps_run, 3);
}

/* A refusal: data() scribbled over its copy before refusing, yet the state is
 * byte for byte what it was, and the game's line and message come back,
 * printable and never empty. */
static void test_a_refusal_leaves_the_state_unchanged(void **unused) {
    (void)unused;
    static data_fixture f;
    open_tuned(&f, &tuned);
    uint8_t snapshot[2] = {1, 0};
    static const uint8_t good[] = {3, 'x'};
    cradle_data_refusal refusal;
    assert_int_equal(cradle_sim_apply_data(&f.sim, 0, good, sizeof good, &refusal), 0);
    for (int i = 0; i < 4; i++) cradle_sim_step(&f.sim, snapshot);
    uint8_t saved[sizeof f.state];
    memcpy(saved, f.state, sizeof saved);
    uint64_t hash = cradle_sim_hash(&f.sim);

    static const uint8_t refused[] = {'R', 1, 2, 3};
    assert_int_equal(cradle_sim_apply_data(&f.sim, 0, refused, sizeof refused, &refusal), CRADLE_EDATA_REFUSED);
    assert_int_equal(tuned_calls, 2);
    assert_int_equal(refusal.line, 3);
    assert_string_equal(refusal.message, "\"speed\" must be 1..9, got 4");
    assert_memory_equal(f.state, saved, sizeof saved);
    assert_int_equal(f.scratch[0], 0xEE); /* the game did write its copy */
    assert_int_equal(cradle_sim_hash(&f.sim), hash);
    assert_int_equal(f.sim.data_applied, 1);
    assert_int_equal(f.sim.next_step, 4);

    static const uint8_t control[] = {'C'};
    assert_int_equal(cradle_sim_apply_data(&f.sim, 0, control, sizeof control, &refusal), CRADLE_EDATA_REFUSED);
    assert_int_equal(refusal.line, 7);
    assert_string_equal(refusal.message, "bad?value???\?!");
    assert_memory_equal(f.state, saved, sizeof saved);

    static const uint8_t empty[] = {'E'};
    assert_int_equal(cradle_sim_apply_data(&f.sim, 0, empty, sizeof empty, &refusal), CRADLE_EDATA_REFUSED);
    assert_int_equal(refusal.line, 0);
    assert_true(strlen(refusal.message) > 0);
    assert_string_equal(refusal.message, "refused (no reason given)");
    assert_memory_equal(f.state, saved, sizeof saved);

    static const uint8_t full[] = {'L'};
    assert_int_equal(cradle_sim_apply_data(&f.sim, 0, full, sizeof full, &refusal), CRADLE_EDATA_REFUSED);
    assert_int_equal(refusal.line, UINT32_MAX);
    assert_int_equal(strlen(refusal.message), CRADLE_GAME_DATA_MESSAGE_MAX);
    for (size_t i = 0; i < CRADLE_GAME_DATA_MESSAGE_MAX; i++) assert_int_equal(refusal.message[i], 'x');
    assert_memory_equal(f.state, saved, sizeof saved);
    assert_int_equal(f.sim.data_applied, 1);

    /* The session goes on as if nothing had been offered. */
    cradle_sim_step(&f.sim, snapshot);
    assert_int_equal(((const tuned_state *)f.state)->total, 5 * 3);
}

/* A file the build does not declare, or more bytes than it allows: refused
 * by the host before data() runs, with a message saying which. */
static void test_apply_data_refuses_an_undeclared_file_or_too_many_bytes(void **unused) {
    (void)unused;
    static data_fixture f;
    open_tuned(&f, &tuned);
    uint8_t saved[sizeof f.state];
    memcpy(saved, f.state, sizeof saved);
    static const uint8_t bytes[9] = {2};
    cradle_data_refusal refusal;
    assert_int_equal(cradle_sim_apply_data(&f.sim, 1, bytes, 1, &refusal), CRADLE_EDATA);
    assert_string_equal(refusal.message, "build 'tuned-1' declares 1 data files, not file 2");
    assert_int_equal(refusal.line, 0);
    assert_int_equal(cradle_sim_apply_data(&f.sim, 0, bytes, 9, &refusal), CRADLE_EDATA);
    assert_string_equal(refusal.message, "9 bytes > the game's limit of 8");
    assert_int_equal(cradle_sim_apply_data(&f.sim, 0, bytes, UINT32_MAX, &refusal), CRADLE_EDATA);
    assert_string_equal(refusal.message, "4294967295 bytes > the game's limit of 8");
    assert_int_equal(tuned_calls, 0);
    assert_int_equal(f.sim.data_applied, 0);
    assert_memory_equal(f.state, saved, sizeof saved);
}

/* A build of minor 3 has no data files, whatever its bytes where the fields
 * would be; after a swap, the build in charge's data() runs. */
static void test_a_minor_3_build_has_no_data_files(void **unused) {
    (void)unused;
    static data_fixture f;
    cradle_game_contract old = tuned;
    old.abi_minor = CRADLE_ABI_MINOR_LAYOUT;
    old.build_id = "tuned-old";
    open_tuned(&f, &old);
    static const uint8_t bytes[] = {4};
    cradle_data_refusal refusal;
    assert_int_equal(cradle_sim_apply_data(&f.sim, 0, bytes, sizeof bytes, &refusal), CRADLE_EDATA);
    assert_string_equal(refusal.message, "build 'tuned-old' declares 0 data files, not file 1");
    assert_int_equal(tuned_calls, 0);
    assert_int_equal(f.sim.data_applied, 0);
    char message[128];
    assert_int_equal(cradle_sim_swap(&f.sim, &tuned, message, sizeof message), 0);
    assert_int_equal(cradle_sim_apply_data(&f.sim, 0, bytes, sizeof bytes, &refusal), 0);
    assert_int_equal(((const tuned_state *)f.state)->speed, 4);
    assert_int_equal(f.sim.data_applied, 1);
    assert_int_equal(cradle_sim_swap(&f.sim, &old, message, sizeof message), 0);
    assert_int_equal(cradle_sim_apply_data(&f.sim, 0, bytes, sizeof bytes, &refusal), CRADLE_EDATA);
    assert_int_equal(tuned_calls, 1);
}

#ifndef NDEBUG /* only a build with assert() calls it */
static data_fixture no_scratch;
static void apply_without_scratch(void) {
    cradle_sim_config config = {.state = no_scratch.state, .state_capacity = sizeof no_scratch.state,
                                .state_align = 64, .hash = cradle_hash64};
    if (cradle_sim_init(&no_scratch.sim, &config, &tuned, NULL, 0) != 0) return;
    cradle_data_refusal refusal;
    static const uint8_t bytes[] = {1};
    if (cradle_sim_apply_data(&no_scratch.sim, 0, bytes, 1, &refusal) == 0) return;
}
#endif

/* A host that applies data gives the sim scratch storage (a programmer's
 * contract: it asserts). */
static void test_apply_data_without_scratch_asserts(void **unused) {
    (void)unused;
#ifdef NDEBUG
    skip();
#else
    assert_int_equal(cradle_test_signal_of(apply_without_scratch), SIGABRT);
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_are_numbered_by_the_clock_rules),
        cmocka_unit_test(test_previous_state_is_the_one_before_the_step),
        cmocka_unit_test(test_events_are_the_last_steps_only_and_overflow_counts),
        cmocka_unit_test(test_hash_and_output),
        cmocka_unit_test(test_init_refusal_and_small_storage),
        cmocka_unit_test(test_save_and_restore),
        cmocka_unit_test(test_swap_runs_on_reload_even_for_the_same_build),
        cmocka_unit_test(test_swap_refuses_another_game_or_a_state_too_large),
        cmocka_unit_test(test_move_puts_the_state_at_another_address),
        cmocka_unit_test(test_output_before_a_step_asserts),
        cmocka_unit_test(test_apply_data_takes_accepted_bytes_into_the_state),
        cmocka_unit_test(test_a_refusal_leaves_the_state_unchanged),
        cmocka_unit_test(test_apply_data_refuses_an_undeclared_file_or_too_many_bytes),
        cmocka_unit_test(test_a_minor_3_build_has_no_data_files),
        cmocka_unit_test(test_apply_data_without_scratch_asserts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
