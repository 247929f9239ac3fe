/* Tests for settle: reporting a file change once it has held still. Time is a
 * parameter, so every case is exact and instant. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cradle/settle.h"

#define MS 1000000ull
#define WINDOW (120u * MS)

static cradle_settle make(uint64_t window_ns) {
    cradle_settle s;
    cradle_settle_init(&s, window_ns);
    return s;
}

static void test_first_look_is_baseline(void **unused) {
    (void)unused;
    cradle_settle s = make(WINDOW);
    assert_false(cradle_settle_look(&s, 100, 5, 0));
    assert_false(cradle_settle_pending(&s));
    /* However long the unchanged file sits, nothing is reported. */
    for (uint64_t t = 0; t <= 10000u * MS; t += 7u * MS) {
        assert_false(cradle_settle_look(&s, 100, 5, t));
    }
    /* A first look long after time zero is still only a baseline. */
    cradle_settle late = make(WINDOW);
    assert_false(cradle_settle_look(&late, 1, 1, 999999u * MS));
    assert_false(cradle_settle_look(&late, 1, 1, 1000000u * MS));
}

static void test_change_reported_once_after_window(void **unused) {
    (void)unused;
    cradle_settle s = make(WINDOW);
    assert_false(cradle_settle_look(&s, 100, 5, 0));
    assert_false(cradle_settle_look(&s, 200, 6, 1000u * MS)); /* the change */
    assert_true(cradle_settle_pending(&s));
    assert_false(cradle_settle_look(&s, 200, 6, 1000u * MS + WINDOW - 1));
    assert_true(cradle_settle_look(&s, 200, 6, 1000u * MS + WINDOW)); /* exactly the window */
    assert_false(cradle_settle_pending(&s));
    /* Reported once: then it waits for the next change. */
    assert_false(cradle_settle_look(&s, 200, 6, 1000u * MS + WINDOW + 1));
    assert_false(cradle_settle_look(&s, 200, 6, 5000u * MS));
}

static void test_late_look_reports_at_once(void **unused) {
    (void)unused;
    cradle_settle s = make(WINDOW);
    assert_false(cradle_settle_look(&s, 1, 1, 0));
    assert_false(cradle_settle_look(&s, 2, 1, 10u * MS));
    /* No look for a long time, then one look: the file held still meanwhile. */
    assert_true(cradle_settle_look(&s, 2, 1, 9000u * MS));
    assert_false(cradle_settle_look(&s, 2, 1, 9001u * MS));
}

static void test_change_seen_late_starts_window_then(void **unused) {
    (void)unused;
    /* The window runs from the look that saw the change, not from the file's
     * modification time (which the detector cannot compare with now). */
    cradle_settle s = make(WINDOW);
    assert_false(cradle_settle_look(&s, 1, 1, 0));
    assert_false(cradle_settle_look(&s, 2, 2, 5000u * MS));
    assert_false(cradle_settle_look(&s, 2, 2, 5000u * MS + WINDOW - 1));
    assert_true(cradle_settle_look(&s, 2, 2, 5000u * MS + WINDOW));
}

static void test_changes_within_window_restart_it(void **unused) {
    (void)unused;
    /* A build writing in chunks with pauses shorter than the window. */
    cradle_settle s = make(WINDOW);
    assert_false(cradle_settle_look(&s, 0, 0, 0));
    uint64_t t = 0;
    uint64_t size = 0;
    for (int chunk = 0; chunk < 20; chunk++) {
        size += 4096;
        t += 100u * MS;
        assert_false(cradle_settle_look(&s, size, (int64_t)t, t));
        /* Looks during the pause, each short of the window since the chunk. */
        assert_false(cradle_settle_look(&s, size, (int64_t)t, t + 50u * MS));
        assert_false(cradle_settle_look(&s, size, (int64_t)t, t + 99u * MS));
    }
    assert_false(cradle_settle_look(&s, size, (int64_t)t, t + WINDOW - 1));
    assert_true(cradle_settle_look(&s, size, (int64_t)t, t + WINDOW));
}

static void test_size_only_and_mtime_only_changes(void **unused) {
    (void)unused;
    cradle_settle s = make(WINDOW);
    assert_false(cradle_settle_look(&s, 10, 100, 0));
    assert_false(cradle_settle_look(&s, 11, 100, 1u * MS)); /* size only */
    assert_true(cradle_settle_look(&s, 11, 100, 1u * MS + WINDOW));
    assert_false(cradle_settle_look(&s, 11, 101, 500u * MS)); /* mtime only: touch */
    assert_true(cradle_settle_look(&s, 11, 101, 500u * MS + WINDOW));
    /* mtime going backwards (a restored file) is a change too. */
    assert_false(cradle_settle_look(&s, 11, -5, 1000u * MS));
    assert_true(cradle_settle_look(&s, 11, -5, 1000u * MS + WINDOW));
}

static void test_change_back_to_baseline_is_a_change(void **unused) {
    (void)unused;
    /* A -> B -> A: the detector compares with the last look, so the return to
     * A is a change and is reported (the file was rewritten). */
    cradle_settle s = make(WINDOW);
    assert_false(cradle_settle_look(&s, 1, 1, 0));
    assert_false(cradle_settle_look(&s, 2, 2, 10u * MS));
    assert_false(cradle_settle_look(&s, 1, 1, 20u * MS));
    assert_false(cradle_settle_look(&s, 1, 1, 20u * MS + WINDOW - 1));
    assert_true(cradle_settle_look(&s, 1, 1, 20u * MS + WINDOW));
}

static void test_consecutive_changes_each_reported(void **unused) {
    (void)unused;
    cradle_settle s = make(WINDOW);
    assert_false(cradle_settle_look(&s, 0, 0, 0));
    int reports = 0;
    uint64_t t = 0;
    for (uint64_t version = 1; version <= 5; version++) {
        t += 1000u * MS;
        assert_false(cradle_settle_look(&s, version, (int64_t)version, t));
        for (uint64_t dt = 10u * MS; dt <= 300u * MS; dt += 10u * MS) {
            if (cradle_settle_look(&s, version, (int64_t)version, t + dt)) {
                reports++;
                assert_true(dt >= WINDOW);
                assert_true(dt < WINDOW + 10u * MS);
            }
        }
    }
    assert_int_equal(reports, 5);
}

static void test_zero_window_reports_on_the_changing_look(void **unused) {
    (void)unused;
    cradle_settle s = make(0);
    assert_false(cradle_settle_look(&s, 1, 1, 0)); /* baseline still reports nothing */
    assert_false(cradle_settle_look(&s, 1, 1, 5));
    assert_true(cradle_settle_look(&s, 2, 1, 5));
    assert_false(cradle_settle_look(&s, 2, 1, 5));
    assert_false(cradle_settle_look(&s, 2, 1, 6));
}

static void test_clock_going_backwards_elapses_nothing(void **unused) {
    (void)unused;
    cradle_settle s = make(WINDOW);
    assert_false(cradle_settle_look(&s, 1, 1, 1000u * MS));
    assert_false(cradle_settle_look(&s, 2, 1, 1000u * MS));
    /* An earlier now must not wrap into "held still for ages". */
    assert_false(cradle_settle_look(&s, 2, 1, 0));
    assert_false(cradle_settle_look(&s, 2, 1, 1000u * MS + WINDOW - 1));
    assert_true(cradle_settle_look(&s, 2, 1, 1000u * MS + WINDOW));
}

static void test_extreme_values(void **unused) {
    (void)unused;
    cradle_settle s = make(UINT64_MAX);
    assert_false(cradle_settle_look(&s, UINT64_MAX, INT64_MIN, 0));
    assert_false(cradle_settle_look(&s, 0, INT64_MAX, 0));
    assert_false(cradle_settle_look(&s, 0, INT64_MAX, UINT64_MAX - 1));
    assert_true(cradle_settle_look(&s, 0, INT64_MAX, UINT64_MAX));
}

static void test_rebase_drops_pending_change(void **unused) {
    (void)unused;
    cradle_settle s = make(WINDOW);
    assert_false(cradle_settle_look(&s, 1, 1, 0));
    assert_false(cradle_settle_look(&s, 2, 2, 10u * MS));
    /* The caller acted on (2, 2) already: it is the new baseline. */
    cradle_settle_rebase(&s, 2, 2);
    assert_false(cradle_settle_pending(&s));
    assert_false(cradle_settle_look(&s, 2, 2, 10u * MS + WINDOW));
    assert_false(cradle_settle_look(&s, 2, 2, 9000u * MS));
    /* Rebasing to a state other than the last look: that look's file is now
     * a change from the baseline. */
    cradle_settle_rebase(&s, 3, 3);
    assert_false(cradle_settle_look(&s, 2, 2, 10000u * MS));
    assert_true(cradle_settle_look(&s, 2, 2, 10000u * MS + WINDOW));
    /* Rebasing before any look makes a baseline. */
    cradle_settle fresh = make(WINDOW);
    cradle_settle_rebase(&fresh, 7, 7);
    assert_false(cradle_settle_look(&fresh, 8, 8, 0));
    assert_true(cradle_settle_look(&fresh, 8, 8, WINDOW));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_look_is_baseline),
        cmocka_unit_test(test_change_reported_once_after_window),
        cmocka_unit_test(test_late_look_reports_at_once),
        cmocka_unit_test(test_change_seen_late_starts_window_then),
        cmocka_unit_test(test_changes_within_window_restart_it),
        cmocka_unit_test(test_size_only_and_mtime_only_changes),
        cmocka_unit_test(test_change_back_to_baseline_is_a_change),
        cmocka_unit_test(test_consecutive_changes_each_reported),
        cmocka_unit_test(test_zero_window_reports_on_the_changing_look),
        cmocka_unit_test(test_clock_going_backwards_elapses_nothing),
        cmocka_unit_test(test_extreme_values),
        cmocka_unit_test(test_rebase_drops_pending_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
