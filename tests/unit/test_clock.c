/* Tests for clock: pacing fixed steps from offered elapsed time. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cradle_test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cradle/cradle.h"

#define NS 1000000000ull

static cradle_clock make_clock(uint32_t rate, uint32_t source, uint32_t cap) {
    cradle_clock c;
    int rc = cradle_clock_init(&c, (cradle_clock_config){.steps_per_second = rate,
                                                          .source_frames_per_second = source,
                                                          .max_steps_per_offer = cap});
    assert_int_equal(rc, CRADLE_OK);
    return c;
}

/* Takes every planned step, checking that indices run on from `*expect_index`. */
static void take_all(cradle_clock *c, uint32_t steps, uint64_t *expect_index) {
    assert_int_equal(cradle_clock_pending(c), steps);
    for (uint32_t i = 0; i < steps; i++) {
        cradle_step s = cradle_clock_next(c);
        assert_int_equal(s.index, *expect_index);
        (*expect_index)++;
    }
    assert_int_equal(cradle_clock_pending(c), 0);
}

/* A small deterministic sequence for "arbitrary" elapsed times. */
static uint64_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* An arbitrary elapsed time below max_ns and below about 200 steps' worth,
 * so that high rates with a huge cap do not plan millions of steps. */
static uint64_t arbitrary_elapsed(uint64_t *seed, uint32_t rate, uint64_t max_ns) {
    uint64_t bound = 200u * NS / rate + 1u;
    if (bound > max_ns) bound = max_ns;
    return lcg(seed) % bound;
}

/* cmocka 1.1 has no double comparison. */
static void assert_near(double actual, double expected, double epsilon) {
    double d = actual > expected ? actual - expected : expected - actual;
    if (!(d <= epsilon)) fail_msg("%.17g is not within %g of %.17g", actual, epsilon, expected);
}

/* ---- init ------------------------------------------------------------- */

static void test_init_errors(void **state) {
    (void)state;
    cradle_clock c, sentinel;
    memset(&c, 0xAB, sizeof c);
    memset(&sentinel, 0xAB, sizeof sentinel);

    assert_int_equal(cradle_clock_init(&c, (cradle_clock_config){0, 20, 0}), CRADLE_ECLOCK_RATE);
    assert_int_equal(cradle_clock_init(&c, (cradle_clock_config){0, 0, 0}), CRADLE_ECLOCK_RATE);
    assert_int_equal(cradle_clock_init(&c, (cradle_clock_config){60, 0, 0}), CRADLE_ECLOCK_SOURCE);
    assert_int_equal(cradle_clock_init(&c, (cradle_clock_config){60, 7, 0}), CRADLE_ECLOCK_SOURCE);
    assert_int_equal(cradle_clock_init(&c, (cradle_clock_config){60, 120, 0}), CRADLE_ECLOCK_SOURCE);
    assert_int_equal(cradle_clock_init(&c, (cradle_clock_config){60, 61, 4}), CRADLE_ECLOCK_SOURCE);
    assert_int_equal(cradle_clock_init(&c, (cradle_clock_config){1, 2, 0}), CRADLE_ECLOCK_SOURCE);
    /* On error the clock is left untouched. */
    assert_memory_equal(&c, &sentinel, sizeof c);
}

static void test_init_valid(void **state) {
    (void)state;
    cradle_clock c = make_clock(60, 20, 0);
    assert_int_equal(c.steps_per_second, 60);
    assert_int_equal(c.steps_per_source_frame, 3);
    assert_int_equal(c.max_steps, CRADLE_CLOCK_DEFAULT_MAX_STEPS);
    assert_int_equal(CRADLE_CLOCK_DEFAULT_MAX_STEPS, 4);
    assert_int_equal(cradle_clock_pending(&c), 0);
    assert_true(cradle_clock_alpha(&c) == 0.0);

    c = make_clock(60, 60, 9);
    assert_int_equal(c.steps_per_source_frame, 1);
    assert_int_equal(c.max_steps, 9);
    c = make_clock(60, 1, 0);
    assert_int_equal(c.steps_per_source_frame, 60);
    c = make_clock(1, 1, 0);
    assert_int_equal(c.steps_per_source_frame, 1);
    c = make_clock(UINT32_MAX, UINT32_MAX, UINT32_MAX);
    assert_int_equal(c.max_steps, UINT32_MAX);
}

/* ---- offers ------------------------------------------------------------ */

static void test_million_offers_at_60(void **state) {
    (void)state;
    cradle_clock c = make_clock(60, 20, 0);
    const uint64_t offers = 1000000, elapsed = 16666667;
    /* The exact count: floor(total ns * rate / 1e9); 1.0e15 fits in 64 bits. */
    const uint64_t exact = offers * elapsed * 60u / NS;
    assert_int_equal(exact, 1000000);
    uint64_t planned = 0, dropped = 0, index = 0;
    for (uint64_t i = 0; i < offers; i++) {
        cradle_clock_plan p = cradle_clock_offer_elapsed(&c, elapsed);
        planned += p.steps;
        dropped += p.dropped;
        for (uint32_t s = 0; s < p.steps; s++) {
            if (cradle_clock_next(&c).index != index++) fail_msg("index out of order at %llu", (unsigned long long)index);
        }
    }
    uint64_t diff = planned > exact ? planned - exact : exact - planned;
    assert_true(diff <= 1);
    assert_int_equal(dropped, 0);
    /* With exact carry nothing is lost: planned plus dropped is the exact count. */
    assert_int_equal(planned + dropped, exact);
    assert_int_equal(c.dropped_total, dropped);
    assert_int_equal(index, planned);
    /* The leftover is exactly 1e6 * 20 units (16,666,667 * 60 = 1e9 + 20). */
    assert_int_equal(c.accumulator, offers * elapsed * 60u % NS);
}

static void test_100ms_default_cap(void **state) {
    (void)state;
    cradle_clock c = make_clock(60, 20, 0);
    cradle_clock_plan p = cradle_clock_offer_elapsed(&c, 100000000u);
    assert_int_equal(p.steps, 4);
    assert_int_equal(p.dropped, 2);
    assert_int_equal(cradle_clock_pending(&c), 4);
    assert_int_equal(c.dropped_total, 2);
    /* 100 ms is exactly 6 steps: no fraction is left over. */
    assert_true(cradle_clock_alpha(&c) == 0.0);
    uint64_t index = 0;
    take_all(&c, 4, &index);
    /* The dropped steps are gone, not owed: the next offer starts fresh. */
    p = cradle_clock_offer_elapsed(&c, 0);
    assert_int_equal(p.steps, 0);
    assert_int_equal(p.dropped, 0);
}

static void test_custom_cap(void **state) {
    (void)state;
    struct {
        uint32_t cap;
        uint32_t steps;
        uint64_t dropped;
    } cases[] = {{1, 1, 5}, {2, 2, 4}, {5, 5, 1}, {6, 6, 0}, {7, 6, 0}, {1000, 6, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cradle_clock c = make_clock(60, 20, cases[i].cap);
        cradle_clock_plan p = cradle_clock_offer_elapsed(&c, 100000000u);
        assert_int_equal(p.steps, cases[i].steps);
        assert_int_equal(p.dropped, cases[i].dropped);
    }
    /* The cap drops whole steps only; the fraction still carries. */
    cradle_clock c = make_clock(60, 20, 2);
    cradle_clock_plan p = cradle_clock_offer_elapsed(&c, 58333333u); /* 3.4999998 steps */
    assert_int_equal(p.steps, 2);
    assert_int_equal(p.dropped, 1);
    assert_int_equal(c.accumulator, 58333333ull * 60u % NS);
    uint64_t index = 0;
    take_all(&c, 2, &index);
    p = cradle_clock_offer_elapsed(&c, 8333334u); /* brings the fraction to >= 1 */
    assert_int_equal(p.steps, 1);
    assert_int_equal(p.dropped, 0);
}

static void test_zero_elapsed(void **state) {
    (void)state;
    cradle_clock c = make_clock(60, 20, 0);
    cradle_clock before = c;
    cradle_clock_plan p = cradle_clock_offer_elapsed(&c, 0);
    assert_int_equal(p.steps, 0);
    assert_int_equal(p.dropped, 0);
    assert_memory_equal(&c, &before, sizeof c);
    /* With a leftover, zero elapsed keeps it as it is. */
    p = cradle_clock_offer_elapsed(&c, 12345678u);
    assert_int_equal(p.steps, 0);
    before = c;
    for (int i = 0; i < 10; i++) {
        p = cradle_clock_offer_elapsed(&c, 0);
        assert_int_equal(p.steps, 0);
        assert_int_equal(p.dropped, 0);
    }
    assert_memory_equal(&c, &before, sizeof c);
}

static void test_huge_elapsed(void **state) {
    (void)state;
    cradle_clock c = make_clock(60, 20, 0);
    cradle_clock_plan p = cradle_clock_offer_elapsed(&c, UINT64_MAX);
    /* floor(UINT64_MAX * 60 / 1e9) without a 128-bit product. */
    const uint64_t whole = UINT64_MAX / NS, rem = UINT64_MAX % NS;
    const uint64_t exact = whole * 60u + rem * 60u / NS;
    assert_int_equal(exact, 1106804644422ull);
    assert_int_equal(p.steps, 4);
    assert_int_equal(p.dropped, exact - 4);
    assert_int_equal(c.accumulator, rem * 60u % NS);
    double a = cradle_clock_alpha(&c);
    assert_true(a >= 0.0 && a < 1.0);
    uint64_t index = 0;
    take_all(&c, 4, &index);
    /* A second huge offer adds on sanely (no wrap). */
    p = cradle_clock_offer_elapsed(&c, UINT64_MAX);
    assert_int_equal(p.steps, 4);
    assert_true(p.dropped >= exact - 5 && p.dropped <= exact - 3);
    assert_true(c.dropped_total > exact);

    /* At the largest rate the owed count exceeds 2^64: it saturates. */
    c = make_clock(UINT32_MAX, 1, 0);
    p = cradle_clock_offer_elapsed(&c, UINT64_MAX);
    assert_int_equal(p.steps, 4);
    assert_int_equal(p.dropped, UINT64_MAX - 4);
    assert_true(c.accumulator < NS);
    index = 0;
    take_all(&c, 4, &index);
    p = cradle_clock_offer_elapsed(&c, UINT64_MAX);
    assert_int_equal(p.dropped, UINT64_MAX - 4);
    /* The running total saturates instead of wrapping to a small number. */
    assert_int_equal(c.dropped_total, UINT64_MAX);
    assert_int_equal(cradle_clock_next(&c).index, 4);
}

static void test_leftover_carries_exactly(void **state) {
    (void)state;
    /* Half-step offers: 8,333,333 ns is 0.49999998 of a step at 60/s. */
    cradle_clock c = make_clock(60, 20, 0);
    uint64_t total_ns = 0, total_steps = 0, index = 0;
    for (int i = 0; i < 3000; i++) {
        cradle_clock_plan p = cradle_clock_offer_elapsed(&c, 8333333u);
        total_ns += 8333333u;
        total_steps += p.steps;
        assert_int_equal(p.dropped, 0);
        assert_int_equal(total_steps, total_ns * 60u / NS);
        assert_int_equal(c.accumulator, total_ns * 60u % NS);
        take_all(&c, p.steps, &index);
    }
    /* 2 offers are still short of a step (16,666,666 ns); the 3rd completes one. */
    c = make_clock(60, 20, 0);
    assert_int_equal(cradle_clock_offer_elapsed(&c, 8333333u).steps, 0);
    assert_int_equal(cradle_clock_offer_elapsed(&c, 8333333u).steps, 0);
    assert_int_equal(cradle_clock_offer_elapsed(&c, 8333333u).steps, 1);
}

static void test_arbitrary_offers_match_exact_count(void **state) {
    (void)state;
    const uint32_t rates[] = {1, 7, 30, 60, 144, 1000, 999983};
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        cradle_clock c = make_clock(rates[r], 1, UINT32_MAX);
        uint64_t seed = rates[r], total_ns = 0, total_steps = 0, index = 0;
        for (int i = 0; i < 2000; i++) {
            /* up to 5 s, so the whole-seconds path is exercised too */
            uint64_t elapsed = arbitrary_elapsed(&seed, rates[r], 5 * NS);
            cradle_clock_plan p = cradle_clock_offer_elapsed(&c, elapsed);
            assert_int_equal(p.dropped, 0);
            total_ns += elapsed;
            total_steps += p.steps;
            take_all(&c, p.steps, &index);
        }
        assert_int_equal(total_steps, total_ns * rates[r] / NS);
        assert_int_equal(c.accumulator, total_ns * rates[r] % NS);
    }
}

/* ---- handing out steps -------------------------------------------------- */

static void test_next_fields_and_phase_wrap(void **state) {
    (void)state;
    cradle_clock c = make_clock(60, 20, 0);
    uint64_t index = 0;
    for (int offer = 0; offer < 10; offer++) {
        cradle_clock_plan p = cradle_clock_offer_elapsed(&c, 50000000u); /* 3 steps */
        assert_int_equal(p.steps, 3);
        for (uint32_t i = 0; i < p.steps; i++) {
            cradle_step s = cradle_clock_next(&c);
            assert_int_equal(s.index, index);
            assert_int_equal(s.length.numerator, 1);
            assert_int_equal(s.length.denominator, 60);
            assert_int_equal(s.source_frame, index / 3);
            assert_int_equal(s.phase, index % 3);
            index++;
        }
    }
    /* Explicit wrap: 0,1,2,0,1,2,0 with source frames 0,0,0,1,1,1,2. */
    c = make_clock(60, 20, 7);
    assert_int_equal(cradle_clock_offer_elapsed(&c, 7 * 16666667u).steps, 7);
    const uint32_t phases[] = {0, 1, 2, 0, 1, 2, 0};
    const uint64_t frames[] = {0, 0, 0, 1, 1, 1, 2};
    for (int i = 0; i < 7; i++) {
        cradle_step s = cradle_clock_next(&c);
        assert_int_equal(s.phase, phases[i]);
        assert_int_equal(s.source_frame, frames[i]);
    }
    /* A source rate equal to the step rate: phase always 0. */
    c = make_clock(30, 30, 0);
    assert_int_equal(cradle_clock_offer_elapsed(&c, 100000000u).steps, 3);
    for (uint64_t i = 0; i < 3; i++) {
        cradle_step s = cradle_clock_next(&c);
        assert_int_equal(s.phase, 0);
        assert_int_equal(s.source_frame, i);
        assert_int_equal(s.length.denominator, 30);
    }
}

static void test_command_step(void **state) {
    (void)state;
    cradle_clock c = make_clock(60, 20, 0);
    cradle_clock_plan p = cradle_clock_offer_elapsed(&c, 25000000u); /* 1.5 steps */
    assert_int_equal(p.steps, 1);
    assert_int_equal(cradle_clock_next(&c).index, 0);
    const uint64_t acc = c.accumulator;
    const double alpha = cradle_clock_alpha(&c);
    const uint64_t until = cradle_clock_ns_until_next(&c);
    assert_true(acc > 0);
    for (uint64_t i = 1; i <= 5; i++) {
        cradle_step s = cradle_clock_command_step(&c);
        assert_int_equal(s.index, i);
        assert_int_equal(s.phase, i % 3);
        assert_int_equal(s.source_frame, i / 3);
        assert_int_equal(s.length.numerator, 1);
        assert_int_equal(s.length.denominator, 60);
        /* Exactly one step, no time read: leftover, alpha and pending unchanged. */
        assert_int_equal(c.next_index, i + 1);
        assert_int_equal(c.accumulator, acc);
        assert_true(cradle_clock_alpha(&c) == alpha);
        assert_int_equal(cradle_clock_ns_until_next(&c), until);
        assert_int_equal(cradle_clock_pending(&c), 0);
        assert_int_equal(c.dropped_total, 0);
    }
    /* Offers continue numbering after commanded steps. */
    p = cradle_clock_offer_elapsed(&c, 8333334u);
    assert_int_equal(p.steps, 1);
    assert_int_equal(cradle_clock_next(&c).index, 6);
}

/* ---- alpha, step length, time until the next step ----------------------- */

static void test_alpha(void **state) {
    (void)state;
    cradle_clock c = make_clock(60, 20, 0);
    assert_true(cradle_clock_alpha(&c) == 0.0);
    (void)cradle_clock_offer_elapsed(&c, 8333333u);
    assert_near(cradle_clock_alpha(&c), 0.49999998, 1e-12);
    (void)cradle_clock_offer_elapsed(&c, 4166667u); /* +0.25000002 */
    assert_near(cradle_clock_alpha(&c), 0.75, 1e-12);
    (void)cradle_clock_offer_elapsed(&c, 4166667u);
    assert_int_equal(cradle_clock_pending(&c), 1);
    (void)cradle_clock_next(&c);
    assert_near(cradle_clock_alpha(&c), 0.00000002, 1e-12);

    /* Always in [0, 1), and exactly leftover / 1e9 units. */
    uint64_t seed = 99, index = 0;
    c = make_clock(144, 48, 0);
    for (int i = 0; i < 5000; i++) {
        cradle_clock_plan p = cradle_clock_offer_elapsed(&c, lcg(&seed) % 40000000u);
        double a = cradle_clock_alpha(&c);
        assert_true(a >= 0.0 && a < 1.0);
        assert_true(a == (double)c.accumulator / 1e9);
        take_all(&c, p.steps, &index);
    }
    /* Just below a whole step, alpha stays below 1. */
    c = make_clock(1, 1, 0);
    (void)cradle_clock_offer_elapsed(&c, NS - 1);
    assert_true(cradle_clock_alpha(&c) < 1.0);
    assert_int_equal(cradle_clock_pending(&c), 0);
}

static void test_step_ns(void **state) {
    (void)state;
    cradle_clock c = make_clock(60, 20, 0);
    assert_int_equal(cradle_clock_step_ns(&c), 16666666);
    c = make_clock(1, 1, 0);
    assert_int_equal(cradle_clock_step_ns(&c), NS);
    c = make_clock(1000, 10, 0);
    assert_int_equal(cradle_clock_step_ns(&c), 1000000);
}

static void test_ns_until_next(void **state) {
    (void)state;
    cradle_clock c = make_clock(60, 20, 0);
    assert_int_equal(cradle_clock_ns_until_next(&c), 16666667);
    (void)cradle_clock_offer_elapsed(&c, 8333333u);
    /* missing 500,000,020 units / 60, rounded up */
    assert_int_equal(cradle_clock_ns_until_next(&c), 8333334);

    /* From any state, offering exactly ns_until_next plans one step and one
     * nanosecond less plans none (for rates up to 1e9, where a step is at
     * least a nanosecond long). */
    const uint32_t rates[] = {1, 3, 60, 144, 1000, 999983, 1000000000u};
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        c = make_clock(rates[r], 1, UINT32_MAX);
        uint64_t seed = r + 1, index = 0;
        for (int i = 0; i < 300; i++) {
            uint64_t until = cradle_clock_ns_until_next(&c);
            assert_true(until >= 1);
            cradle_clock exact = c, short_by_one = c;
            assert_int_equal(cradle_clock_offer_elapsed(&exact, until).steps, 1);
            assert_int_equal(cradle_clock_offer_elapsed(&short_by_one, until - 1).steps, 0);
            cradle_clock_plan p =
                cradle_clock_offer_elapsed(&c, arbitrary_elapsed(&seed, rates[r], 20000000u));
            take_all(&c, p.steps, &index);
        }
    }
}

/* ---- programmer errors assert ------------------------------------------- */

/* Each case runs in a child (cradle_test_signal_of): a child keeps ASan and
 * valgrind working, which a longjmp out of assert() would not. */

#ifndef NDEBUG /* only a build with assert() calls these */
static void offer_with_steps_outstanding(void) {
    cradle_clock c = make_clock(60, 20, 0);
    (void)cradle_clock_offer_elapsed(&c, 100000000u);
    (void)cradle_clock_next(&c); /* 3 still outstanding */
    (void)cradle_clock_offer_elapsed(&c, 1);
}

static void next_with_none_planned(void) {
    cradle_clock c = make_clock(60, 20, 0);
    (void)cradle_clock_next(&c);
}

static void next_past_the_plan(void) {
    cradle_clock c = make_clock(60, 20, 0);
    (void)cradle_clock_offer_elapsed(&c, 33333334u); /* 2 steps */
    (void)cradle_clock_next(&c);
    (void)cradle_clock_next(&c);
    (void)cradle_clock_next(&c);
}

static void command_step_with_steps_outstanding(void) {
    cradle_clock c = make_clock(60, 20, 0);
    (void)cradle_clock_offer_elapsed(&c, 16666667u);
    (void)cradle_clock_command_step(&c);
}

static void correct_order(void) {
    cradle_clock c = make_clock(60, 20, 0);
    cradle_clock_plan p = cradle_clock_offer_elapsed(&c, 100000000u);
    for (uint32_t i = 0; i < p.steps; i++) (void)cradle_clock_next(&c);
    (void)cradle_clock_offer_elapsed(&c, 100000000u);
    for (uint32_t i = 0; i < 4; i++) (void)cradle_clock_next(&c);
    (void)cradle_clock_command_step(&c);
}
#endif

static void test_order_violations_assert(void **state) {
    (void)state;
#ifdef NDEBUG
    skip();
#else
    assert_int_equal(cradle_test_signal_of(correct_order), 0);
    assert_int_equal(cradle_test_signal_of(offer_with_steps_outstanding), SIGABRT);
    assert_int_equal(cradle_test_signal_of(next_with_none_planned), SIGABRT);
    assert_int_equal(cradle_test_signal_of(next_past_the_plan), SIGABRT);
    assert_int_equal(cradle_test_signal_of(command_step_with_steps_outstanding), SIGABRT);
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_errors),
        cmocka_unit_test(test_init_valid),
        cmocka_unit_test(test_million_offers_at_60),
        cmocka_unit_test(test_100ms_default_cap),
        cmocka_unit_test(test_custom_cap),
        cmocka_unit_test(test_zero_elapsed),
        cmocka_unit_test(test_huge_elapsed),
        cmocka_unit_test(test_leftover_carries_exactly),
        cmocka_unit_test(test_arbitrary_offers_match_exact_count),
        cmocka_unit_test(test_next_fields_and_phase_wrap),
        cmocka_unit_test(test_command_step),
        cmocka_unit_test(test_alpha),
        cmocka_unit_test(test_step_ns),
        cmocka_unit_test(test_ns_until_next),
        cmocka_unit_test(test_order_violations_assert),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
