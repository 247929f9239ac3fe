/* input_delay: the adaptive input delay's rules (cradle/input_delay.h),
 * driven by a simulated link: a client that receives each step `rtt` steps
 * of round trip after the server ran it and sends its input for (last step
 * received) + delay at once. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cradle/input_delay.h"

enum { RATE = 60, MAX = 180 };

/* A session from step l->now on, `steps` steps over a link whose round
 * trip is rtt steps: each step, what the client sent a round trip ago
 * arrives. The client sends one input for every step in order, up to (last
 * step received) + delay, as netclient.c does. Counts the steps that ran
 * before their input arrived, and the delay's changes. */
typedef struct link {
    cradle_input_delay d;
    uint64_t now;
    bool sent;       /* any input sent yet */
    uint64_t newest; /* the newest input sent */
    uint64_t late, changes;
} link;

static void run(link *l, uint32_t rtt, uint32_t steps) {
    for (uint32_t i = 0; i < steps; i++, l->now++) {
        if (cradle_input_delay_tick(&l->d, l->now)) l->changes++;
        if (l->now < rtt + 1u) continue;
        uint64_t received = l->now - 1u - rtt; /* the client's last step when it sent */
        uint64_t target = received + l->d.delay;
        if (!l->sent || target > l->newest) l->newest = target;
        l->sent = true;
        if (l->newest < l->now) l->late++;
        if (cradle_input_delay_observe(&l->d, l->newest, l->now)) l->changes++;
    }
}

static void test_starts_clamped(void **state) {
    (void)state;
    cradle_input_delay d;
    cradle_input_delay_init(&d, 0, MAX, RATE, 0);
    assert_int_equal(d.delay, 1);
    cradle_input_delay_init(&d, 500, MAX, RATE, 0);
    assert_int_equal(d.delay, MAX);
    cradle_input_delay_init(&d, 3, MAX, RATE, 100);
    assert_int_equal(d.delay, 3);
    assert_int_equal(d.window_end, 100 + RATE);
}

/* On a LAN (the round trip well under a step) it settles at 1. */
static void test_lan_settles_at_one(void **state) {
    (void)state;
    link l = {.now = 0};
    cradle_input_delay_init(&l.d, 3, MAX, RATE, 0);
    run(&l, 0, 20 * RATE);
    assert_int_equal(l.d.delay, 1);
    assert_int_equal(l.late, 0);
    assert_true(l.d.lowered >= 1);
    assert_int_equal(l.d.raised, 0);
}

/* The round trip grows to 12 steps: raised at the first late input, and
 * again once the inputs sent with the new delay tell the whole round trip;
 * late steps only during that (at most two round trips and the hold), none
 * after. */
static void test_raised_when_inputs_come_late(void **state) {
    (void)state;
    link l = {.now = 0};
    cradle_input_delay_init(&l.d, 1, MAX, RATE, 0);
    run(&l, 0, 10 * RATE);
    assert_int_equal(l.d.delay, 1);
    uint64_t late_before = l.late;
    run(&l, 12, 10 * RATE);
    assert_true(l.d.delay >= 13);
    assert_true(l.d.delay <= 15);
    assert_true(l.late - late_before <= 2u * 12u + RATE / 4u + 4u);
    uint64_t late_after = l.late;
    run(&l, 12, 20 * RATE);
    assert_int_equal(l.late, late_after); /* settled: no input late since */
    assert_true(l.d.raised >= 1 && l.d.raised <= 2);
}

/* The round trip falls back: lowered, after the calm windows and the hold,
 * and no input comes late on the way down. */
static void test_lowered_with_hysteresis(void **state) {
    (void)state;
    link l = {.now = 0};
    cradle_input_delay_init(&l.d, 1, MAX, RATE, 0);
    run(&l, 12, 20 * RATE);
    uint16_t high = l.d.delay;
    assert_true(high >= 13);
    uint64_t late = l.late;
    /* within the hold after the raise, and before 5 calm windows: no change */
    run(&l, 0, 4 * RATE);
    assert_int_equal(l.d.delay, high);
    run(&l, 0, 20 * RATE);
    assert_true(l.d.delay <= 2);
    assert_int_equal(l.late, late);
    assert_true(l.d.lowered >= 1);
}

/* Lowering stops at the link's round trip plus a quarter step: a 7.9-step
 * round trip (whose inputs arrive a tenth of a step before their step at
 * slack 0) keeps a step of slack; a 7.2-step one goes down to slack 0. */
static void test_lowering_respects_the_round_trip(void **state) {
    (void)state;
    link l = {.now = 0};
    cradle_input_delay_init(&l.d, 12, MAX, RATE, 0);
    l.d.rtt_us = 131667; /* 7.9 steps at 60/s */
    run(&l, 7, 20 * RATE);
    assert_int_equal(l.d.delay, 9); /* ceil(7.9 + 0.25) */
    cradle_input_delay_init(&l.d, 12, MAX, RATE, l.now);
    l.d.rtt_us = 120000; /* 7.2 steps */
    run(&l, 7, 20 * RATE);
    assert_int_equal(l.d.delay, 8);
}

/* A jittery round trip between 2 and 4 steps: one raise, then it stays. */
static void test_no_flapping_on_jitter(void **state) {
    (void)state;
    link l = {.now = 0};
    cradle_input_delay_init(&l.d, 1, MAX, RATE, 0);
    for (int i = 0; i < 60; i++) run(&l, 2u + (uint32_t)(i % 3), RATE / 2);
    assert_true(l.d.delay >= 4 && l.d.delay <= 6);
    assert_true(l.changes <= 3);
}

/* Never above the maximum, never below 1; no input, no change. */
static void test_bounds_and_silence(void **state) {
    (void)state;
    cradle_input_delay d;
    cradle_input_delay_init(&d, 5, 8, RATE, 0);
    assert_int_equal(cradle_input_delay_observe(&d, 0, 1000), 8); /* 1000 steps late: the maximum */
    assert_int_equal(d.delay, 8);
    assert_int_equal(cradle_input_delay_observe(&d, 0, 2000), 0); /* held, and at the maximum */
    cradle_input_delay_init(&d, 5, MAX, RATE, 0);
    for (uint64_t s = 0; s < 30u * RATE; s++) assert_int_equal(cradle_input_delay_tick(&d, s), 0);
    assert_int_equal(d.delay, 5);
    assert_int_equal(d.last_window_min, INT64_MAX);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_starts_clamped),
        cmocka_unit_test(test_lan_settles_at_one),
        cmocka_unit_test(test_raised_when_inputs_come_late),
        cmocka_unit_test(test_lowered_with_hysteresis),
        cmocka_unit_test(test_lowering_respects_the_round_trip),
        cmocka_unit_test(test_no_flapping_on_jitter),
        cmocka_unit_test(test_bounds_and_silence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
