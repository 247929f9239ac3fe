/* Tests for session: recording, replay and input scripts. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cradle/cradle.h"

#define SNAP 5u

static void fill_snapshot(uint8_t *snap, uint64_t step) {
    for (uint32_t i = 0; i < SNAP; i++) snap[i] = (uint8_t)(step * 31u + i * 7u + 1u);
}

/* ---- init ------------------------------------------------------------------ */

static void test_init(void **state) {
    (void)state;
    uint8_t storage[SNAP * 4 + 3];
    cradle_session s;
    assert_int_equal(cradle_session_init(&s, storage, sizeof storage, 0), CRADLE_EINVAL);
    assert_int_equal(cradle_session_init(&s, NULL, 10, SNAP), CRADLE_EINVAL);
    assert_int_equal(cradle_session_init(&s, storage, sizeof storage, SNAP), CRADLE_OK);
    assert_int_equal(s.capacity, 4); /* the 3 spare bytes hold no step */
    assert_int_equal(s.count, 0);
    assert_int_equal(s.snapshot_size, SNAP);
    assert_null(cradle_session_snapshot(&s, 0));
    /* No storage at all: a session that is full from the start. */
    assert_int_equal(cradle_session_init(&s, NULL, 0, SNAP), CRADLE_OK);
    assert_int_equal(s.capacity, 0);
    uint8_t snap[SNAP] = {0};
    assert_int_equal(cradle_session_append(&s, 0, snap), CRADLE_ESESSION_CAPACITY);
    /* Storage smaller than one snapshot. */
    assert_int_equal(cradle_session_init(&s, storage, SNAP - 1, SNAP), CRADLE_OK);
    assert_int_equal(s.capacity, 0);
    assert_int_equal(cradle_session_append(&s, 0, snap), CRADLE_ESESSION_CAPACITY);
}

/* ---- append ----------------------------------------------------------------- */

static void test_append_in_order(void **state) {
    (void)state;
    uint8_t storage[SNAP * 8];
    cradle_session s;
    assert_int_equal(cradle_session_init(&s, storage, sizeof storage, SNAP), CRADLE_OK);
    uint8_t snap[SNAP];
    for (uint64_t step = 0; step < 8; step++) {
        fill_snapshot(snap, step);
        assert_int_equal(cradle_session_append(&s, step, snap), CRADLE_OK);
        assert_int_equal(s.count, step + 1);
    }
    for (uint64_t step = 0; step < 8; step++) {
        fill_snapshot(snap, step);
        const uint8_t *got = cradle_session_snapshot(&s, step);
        assert_non_null(got);
        assert_memory_equal(got, snap, SNAP);
    }
    assert_null(cradle_session_snapshot(&s, 8));
    assert_null(cradle_session_snapshot(&s, UINT64_MAX));
}

static void test_step_zero_first_and_order(void **state) {
    (void)state;
    uint8_t storage[SNAP * 8];
    cradle_session s;
    assert_int_equal(cradle_session_init(&s, storage, sizeof storage, SNAP), CRADLE_OK);
    uint8_t snap[SNAP];
    fill_snapshot(snap, 0);
    /* The first step must be 0. */
    assert_int_equal(cradle_session_append(&s, 1, snap), CRADLE_ESESSION_ORDER);
    assert_int_equal(cradle_session_append(&s, UINT64_MAX, snap), CRADLE_ESESSION_ORDER);
    assert_int_equal(s.count, 0);
    assert_int_equal(cradle_session_append(&s, 0, snap), CRADLE_OK);
    /* Repeats, gaps and steps back are refused. */
    assert_int_equal(cradle_session_append(&s, 0, snap), CRADLE_ESESSION_ORDER);
    assert_int_equal(cradle_session_append(&s, 2, snap), CRADLE_ESESSION_ORDER);
    fill_snapshot(snap, 1);
    assert_int_equal(cradle_session_append(&s, 1, snap), CRADLE_OK);
    assert_int_equal(cradle_session_append(&s, 0, snap), CRADLE_ESESSION_ORDER);
    assert_int_equal(cradle_session_append(&s, 3, snap), CRADLE_ESESSION_ORDER);
    assert_int_equal(s.count, 2);
    assert_string_equal(cradle_error_name(CRADLE_ESESSION_ORDER), "non_sequential_step");
}

static void test_full_and_refused_append_leaves_recording_intact(void **state) {
    (void)state;
    /* Guard bytes around the storage catch a write past its end. */
    uint8_t block[8 + SNAP * 3 + 8];
    memset(block, 0xEE, sizeof block);
    uint8_t *storage = block + 8;
    cradle_session s;
    assert_int_equal(cradle_session_init(&s, storage, SNAP * 3, SNAP), CRADLE_OK);
    uint8_t snap[SNAP];
    for (uint64_t step = 0; step < 3; step++) {
        fill_snapshot(snap, step);
        assert_int_equal(cradle_session_append(&s, step, snap), CRADLE_OK);
    }
    uint8_t before[sizeof block];
    memcpy(before, block, sizeof block);
    cradle_session session_before = s;

    memset(snap, 0x5A, sizeof snap);
    assert_int_equal(cradle_session_append(&s, 3, snap), CRADLE_ESESSION_CAPACITY);
    assert_string_equal(cradle_error_name(CRADLE_ESESSION_CAPACITY), "session_capacity_exceeded");
    /* Out of order wins over full: the step is wrong whatever the room. */
    assert_int_equal(cradle_session_append(&s, 7, snap), CRADLE_ESESSION_ORDER);
    assert_int_equal(cradle_session_append(&s, 2, snap), CRADLE_ESESSION_ORDER);
    assert_int_equal(cradle_session_append(&s, 3, snap), CRADLE_ESESSION_CAPACITY);

    assert_memory_equal(block, before, sizeof block);
    /* field by field: the struct's padding is indeterminate */
    assert_ptr_equal(s.storage, session_before.storage);
    assert_int_equal(s.snapshot_size, session_before.snapshot_size);
    assert_int_equal(s.capacity, session_before.capacity);
    assert_int_equal(s.count, session_before.count);
    assert_int_equal(s.count, 3);
    assert_null(cradle_session_snapshot(&s, 3));

    /* A refused out-of-order append in a session with room changes nothing. */
    uint8_t storage2[SNAP * 4];
    memset(storage2, 0xEE, sizeof storage2);
    assert_int_equal(cradle_session_init(&s, storage2, sizeof storage2, SNAP), CRADLE_OK);
    fill_snapshot(snap, 0);
    assert_int_equal(cradle_session_append(&s, 0, snap), CRADLE_OK);
    uint8_t before2[sizeof storage2];
    memcpy(before2, storage2, sizeof storage2);
    memset(snap, 0x5A, sizeof snap);
    assert_int_equal(cradle_session_append(&s, 5, snap), CRADLE_ESESSION_ORDER);
    assert_memory_equal(storage2, before2, sizeof storage2);
    assert_int_equal(s.count, 1);
}

static void test_clear(void **state) {
    (void)state;
    uint8_t storage[SNAP * 2];
    cradle_session s;
    assert_int_equal(cradle_session_init(&s, storage, sizeof storage, SNAP), CRADLE_OK);
    uint8_t snap[SNAP];
    fill_snapshot(snap, 0);
    assert_int_equal(cradle_session_append(&s, 0, snap), CRADLE_OK);
    fill_snapshot(snap, 1);
    assert_int_equal(cradle_session_append(&s, 1, snap), CRADLE_OK);
    cradle_session_clear(&s);
    assert_int_equal(s.count, 0);
    assert_int_equal(s.capacity, 2);
    assert_null(cradle_session_snapshot(&s, 0));
    /* Recording starts over at step 0. */
    assert_int_equal(cradle_session_append(&s, 2, snap), CRADLE_ESESSION_ORDER);
    assert_int_equal(cradle_session_append(&s, 0, snap), CRADLE_OK);
}

/* ---- replay ------------------------------------------------------------------ */

typedef struct replay_log {
    int calls;
    uint64_t steps[16];
    uint8_t snaps[16][SNAP];
    uint32_t sizes[16];
} replay_log;

static void record_update(void *context, uint64_t step, const uint8_t *snapshot,
                          uint32_t snapshot_size) {
    replay_log *log = context;
    assert_true(log->calls < 16);
    log->steps[log->calls] = step;
    log->sizes[log->calls] = snapshot_size;
    memcpy(log->snaps[log->calls], snapshot, SNAP);
    log->calls++;
}

static void test_replay_in_order_with_context(void **state) {
    (void)state;
    uint8_t storage[SNAP * 16];
    cradle_session s;
    assert_int_equal(cradle_session_init(&s, storage, sizeof storage, SNAP), CRADLE_OK);
    uint8_t snap[SNAP];
    for (uint64_t step = 0; step < 10; step++) {
        fill_snapshot(snap, step);
        assert_int_equal(cradle_session_append(&s, step, snap), CRADLE_OK);
    }
    replay_log log, again;
    /* memset, not = {0}: the padding is compared below */
    memset(&log, 0, sizeof log);
    memset(&again, 0, sizeof again);
    cradle_session_replay(&s, record_update, &log);
    assert_int_equal(log.calls, 10);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(log.steps[i], (uint64_t)i);
        assert_int_equal(log.sizes[i], SNAP);
        fill_snapshot(snap, (uint64_t)i);
        assert_memory_equal(log.snaps[i], snap, SNAP);
    }
    /* Replaying twice gives the same calls: replay reads nothing else. */
    cradle_session_replay(&s, record_update, &again);
    assert_memory_equal(&again, &log, sizeof log);
    /* The recording is unchanged by replay. */
    for (uint64_t step = 0; step < 10; step++) {
        fill_snapshot(snap, step);
        assert_memory_equal(cradle_session_snapshot(&s, step), snap, SNAP);
    }
}

static void fail_update(void *context, uint64_t step, const uint8_t *snapshot,
                        uint32_t snapshot_size) {
    (void)context;
    (void)snapshot;
    (void)snapshot_size;
    fail_msg("update called for step %llu of an empty session", (unsigned long long)step);
}

static void test_replay_empty(void **state) {
    (void)state;
    cradle_session s;
    assert_int_equal(cradle_session_init(&s, NULL, 0, SNAP), CRADLE_OK);
    cradle_session_replay(&s, fail_update, NULL);
    uint8_t storage[SNAP];
    assert_int_equal(cradle_session_init(&s, storage, sizeof storage, SNAP), CRADLE_OK);
    cradle_session_replay(&s, fail_update, NULL);
}

/* ---- input scripts ------------------------------------------------------------- */

#define LEFT 0x1ull
#define RIGHT 0x2ull
#define FIRE 0x4ull
#define RESET 0x8000000000000000ull /* a pulse bit, at the top */

static uint64_t at(const cradle_input_script_change *c, size_t n, uint64_t pulse, uint64_t step) {
    uint64_t bits = 0xDEAD;
    assert_int_equal(cradle_input_script_at(c, n, pulse, step, &bits), CRADLE_OK);
    return bits;
}

static void test_input_at(void **state) {
    (void)state;
    const cradle_input_script_change script[] = {
        {.step = 3, .bits = LEFT},
        {.step = 5, .bits = LEFT | FIRE | RESET},
        {.step = 9, .bits = RIGHT},
        {.step = 10, .bits = RESET},
        {.step = 20, .bits = 0},
    };
    const size_t n = sizeof script / sizeof script[0];
    assert_int_equal(cradle_input_script_check(script, n), CRADLE_OK);
    /* before the first entry: nothing */
    assert_int_equal(at(script, n, RESET, 0), 0);
    assert_int_equal(at(script, n, RESET, 2), 0);
    /* at an entry, and held until the next */
    assert_int_equal(at(script, n, RESET, 3), LEFT);
    assert_int_equal(at(script, n, RESET, 4), LEFT);
    /* the pulse is there only on its own entry's step */
    assert_int_equal(at(script, n, RESET, 5), LEFT | FIRE | RESET);
    assert_int_equal(at(script, n, RESET, 6), LEFT | FIRE);
    assert_int_equal(at(script, n, RESET, 8), LEFT | FIRE);
    assert_int_equal(at(script, n, RESET, 9), RIGHT);
    assert_int_equal(at(script, n, RESET, 10), RESET);
    assert_int_equal(at(script, n, RESET, 11), 0);
    assert_int_equal(at(script, n, RESET, 19), 0);
    /* after the last entry: the last entry holds forever */
    assert_int_equal(at(script, n, RESET, 20), 0);
    assert_int_equal(at(script, n, RESET, UINT64_MAX), 0);
    /* without pulse bits, every bit holds */
    assert_int_equal(at(script, n, 0, 6), LEFT | FIRE | RESET);
    assert_int_equal(at(script, n, 0, 11), RESET);
    /* several pulse bits at once */
    assert_int_equal(at(script, n, RESET | FIRE, 5), LEFT | FIRE | RESET);
    assert_int_equal(at(script, n, RESET | FIRE, 7), LEFT);
}

static void test_input_at_compares_to_linear_model(void **state) {
    (void)state;
    const cradle_input_script_change script[] = {
        {0, 1}, {1, 2}, {2, 0x83}, {7, 4}, {8, 0x80}, {100, 5}, {101, 0x86}, {1000, 7},
    };
    const size_t n = sizeof script / sizeof script[0];
    const uint64_t pulse = 0x80;
    for (uint64_t step = 0; step < 1100; step++) {
        uint64_t want = 0;
        for (size_t i = 0; i < n; i++) {
            if (script[i].step <= step) {
                want = script[i].step == step ? script[i].bits : script[i].bits & ~pulse;
            }
        }
        if (at(script, n, pulse, step) != want) fail_msg("step %llu", (unsigned long long)step);
    }
    /* a single entry at step 0 */
    const cradle_input_script_change one[] = {{0, 0x81}};
    assert_int_equal(at(one, 1, 0x80, 0), 0x81);
    assert_int_equal(at(one, 1, 0x80, 1), 0x01);
    /* an entry at the largest step */
    const cradle_input_script_change late[] = {{5, 1}, {UINT64_MAX, 0x82}};
    assert_int_equal(at(late, 2, 0x80, UINT64_MAX - 1), 1);
    assert_int_equal(at(late, 2, 0x80, UINT64_MAX), 0x82);
}

static void test_input_script_refusals(void **state) {
    (void)state;
    const cradle_input_script_change unsorted[] = {{0, 1}, {5, 2}, {3, 4}};
    const cradle_input_script_change duplicate[] = {{0, 1}, {4, 2}, {4, 3}};
    const cradle_input_script_change reversed[] = {{9, 1}, {2, 2}};
    uint64_t bits;
    assert_int_equal(cradle_input_script_check(unsorted, 3), CRADLE_EUNSORTED);
    assert_int_equal(cradle_input_script_check(duplicate, 3), CRADLE_EUNSORTED);
    assert_int_equal(cradle_input_script_check(reversed, 2), CRADLE_EUNSORTED);
    for (uint64_t step = 0; step < 10; step++) {
        bits = 0xDEAD;
        assert_int_equal(cradle_input_script_at(unsorted, 3, 0, step, &bits), CRADLE_EUNSORTED);
        assert_int_equal(bits, 0);
        bits = 0xDEAD;
        assert_int_equal(cradle_input_script_at(duplicate, 3, 0, step, &bits), CRADLE_EUNSORTED);
        assert_int_equal(bits, 0);
        bits = 0xDEAD;
        assert_int_equal(cradle_input_script_at(reversed, 2, 0, step, &bits), CRADLE_EUNSORTED);
        assert_int_equal(bits, 0);
    }
    /* Only the part the caller passes is checked. */
    assert_int_equal(cradle_input_script_check(unsorted, 2), CRADLE_OK);
    assert_int_equal(cradle_input_script_check(duplicate, 2), CRADLE_OK);
}

static void test_input_script_empty(void **state) {
    (void)state;
    uint64_t bits = 0xDEAD;
    assert_int_equal(cradle_input_script_check(NULL, 0), CRADLE_OK);
    assert_int_equal(cradle_input_script_at(NULL, 0, UINT64_MAX, 0, &bits), CRADLE_OK);
    assert_int_equal(bits, 0);
    bits = 0xDEAD;
    assert_int_equal(cradle_input_script_at(NULL, 0, 0, UINT64_MAX, &bits), CRADLE_OK);
    assert_int_equal(bits, 0);
    const cradle_input_script_change one[] = {{4, 1}};
    assert_int_equal(cradle_input_script_check(one, 1), CRADLE_OK);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_append_in_order),
        cmocka_unit_test(test_step_zero_first_and_order),
        cmocka_unit_test(test_full_and_refused_append_leaves_recording_intact),
        cmocka_unit_test(test_clear),
        cmocka_unit_test(test_replay_in_order_with_context),
        cmocka_unit_test(test_replay_empty),
        cmocka_unit_test(test_input_at),
        cmocka_unit_test(test_input_at_compares_to_linear_model),
        cmocka_unit_test(test_input_script_refusals),
        cmocka_unit_test(test_input_script_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
