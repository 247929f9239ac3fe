#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cradle/ratelimit.h"

static cradle_ratelimit_entry table[64];

static void test_init_checks(void **state) {
    (void)state;
    cradle_ratelimit rl;
    assert_int_equal(cradle_ratelimit_init(&rl, table, 48, NULL), CRADLE_EINVAL);
    assert_int_equal(cradle_ratelimit_init(&rl, table, 4, NULL), CRADLE_EINVAL);
    assert_int_equal(cradle_ratelimit_init(&rl, NULL, 64, NULL), CRADLE_EINVAL);
    assert_int_equal(cradle_ratelimit_init(&rl, table, 64, NULL), 0);
    assert_int_equal(rl.per_second, CRADLE_RATELIMIT_PER_SECOND_DEFAULT);
    assert_int_equal(rl.burst, CRADLE_RATELIMIT_BURST_DEFAULT);
}

static void test_burst_then_refill(void **state) {
    (void)state;
    cradle_ratelimit rl;
    cradle_ratelimit_config c = {.per_second = 2, .burst = 3, .seed = 12345};
    assert_int_equal(cradle_ratelimit_init(&rl, table, 64, &c), 0);
    const uint8_t a[4] = {10, 0, 0, 1}, b[4] = {10, 0, 0, 2};
    uint64_t t = 1000;
    for (int i = 0; i < 3; i++) assert_true(cradle_ratelimit_allow(&rl, a, 4, t));
    assert_false(cradle_ratelimit_allow(&rl, a, 4, t));
    assert_false(cradle_ratelimit_allow(&rl, a, 4, t + 499)); /* 0.998 of a token */
    assert_true(cradle_ratelimit_allow(&rl, b, 4, t));        /* another address is unaffected */
    assert_true(cradle_ratelimit_allow(&rl, a, 4, t + 500));  /* one token after 0.5 s */
    assert_false(cradle_ratelimit_allow(&rl, a, 4, t + 500));
    /* Refusals do not take tokens: after 1 s exactly two more. */
    assert_true(cradle_ratelimit_allow(&rl, a, 4, t + 1500));
    assert_true(cradle_ratelimit_allow(&rl, a, 4, t + 1500));
    assert_false(cradle_ratelimit_allow(&rl, a, 4, t + 1500));
    /* Time going backwards refills nothing. */
    assert_false(cradle_ratelimit_allow(&rl, a, 4, t));
    /* A long absence refills to the burst, not beyond. */
    uint64_t later = t + 1000000000ull;
    for (int i = 0; i < 3; i++) assert_true(cradle_ratelimit_allow(&rl, a, 4, later));
    assert_false(cradle_ratelimit_allow(&rl, a, 4, later));
    assert_int_equal(rl.stats.allowed, 3 + 1 + 1 + 2 + 3);
    assert_int_equal(rl.stats.limited, 6);
}

/* A refund gives back an attempt's token (up to the burst): attempts that
 * proved themselves do not count; those that did not still run it dry. */
static void test_refund_returns_a_token_up_to_the_burst(void **state) {
    (void)state;
    cradle_ratelimit rl;
    cradle_ratelimit_config c = {.per_second = 1, .burst = 2, .seed = 7};
    assert_int_equal(cradle_ratelimit_init(&rl, table, 64, &c), 0);
    const uint8_t a[4] = {192, 168, 1, 1}, other[4] = {192, 168, 1, 2};
    uint64_t t = 5000;
    for (int joined = 0; joined < 20; joined++) { /* twenty who authenticate, one after another */
        assert_true(cradle_ratelimit_allow(&rl, a, 4, t));
        cradle_ratelimit_refund(&rl, a, 4, t);
    }
    assert_int_equal(rl.stats.refunded, 20);
    assert_true(cradle_ratelimit_allow(&rl, a, 4, t)); /* then two who do not: the burst */
    assert_true(cradle_ratelimit_allow(&rl, a, 4, t));
    assert_false(cradle_ratelimit_allow(&rl, a, 4, t));
    cradle_ratelimit_refund(&rl, a, 4, t);
    cradle_ratelimit_refund(&rl, a, 4, t);
    cradle_ratelimit_refund(&rl, a, 4, t); /* capped: still two */
    assert_true(cradle_ratelimit_allow(&rl, a, 4, t));
    assert_true(cradle_ratelimit_allow(&rl, a, 4, t));
    assert_false(cradle_ratelimit_allow(&rl, a, 4, t));
    cradle_ratelimit_refund(&rl, other, 4, t); /* an address never seen: nothing to give back */
    assert_int_equal(rl.stats.refunded, 23); /* the capped ones count too; the unseen one does not */
}

static void test_steady_rate_is_enforced(void **state) {
    (void)state;
    cradle_ratelimit rl;
    cradle_ratelimit_config c = {.per_second = 5, .burst = 5, .seed = 1};
    assert_int_equal(cradle_ratelimit_init(&rl, table, 64, &c), 0);
    const uint8_t a[16] = {0x20, 0x01, 0x0d, 0xb8};
    unsigned allowed = 0;
    /* 100 attempts a second for 10 s: burst + 10 s * 5/s get through. */
    for (uint64_t ms = 0; ms < 10000; ms += 10) allowed += cradle_ratelimit_allow(&rl, a, 16, ms);
    assert_int_equal(allowed, 5 + 50 - 1); /* the last refill lands at 10 000 ms */
}

static void test_table_is_bounded_and_evicts(void **state) {
    (void)state;
    cradle_ratelimit rl;
    cradle_ratelimit_entry small[8];
    cradle_ratelimit_config c = {.per_second = 1, .burst = 2, .seed = 99};
    assert_int_equal(cradle_ratelimit_init(&rl, small, 8, &c), 0);
    /* Exhaust one address, then flood with 8 others that fill the table. */
    const uint32_t victim = 7;
    assert_true(cradle_ratelimit_allow(&rl, &victim, 4, 0));
    assert_true(cradle_ratelimit_allow(&rl, &victim, 4, 0));
    assert_false(cradle_ratelimit_allow(&rl, &victim, 4, 0));
    for (uint32_t i = 100; i < 107; i++) assert_true(cradle_ratelimit_allow(&rl, &i, 4, 1));
    assert_int_equal(rl.stats.evicted, 0); /* 8 entries, 8 addresses */
    /* The victim is still limited: its entry survived. */
    assert_false(cradle_ratelimit_allow(&rl, &victim, 4, 2));
    /* A ninth address evicts the least recently used bucket that is not full. */
    uint32_t ninth = 1000;
    assert_true(cradle_ratelimit_allow(&rl, &ninth, 4, 3));
    assert_int_equal(rl.stats.evicted, 1);
    /* Full buckets are evicted first, and silently: refilled after 10 s. */
    for (uint32_t i = 2000; i < 2008; i++) assert_true(cradle_ratelimit_allow(&rl, &i, 4, 20000));
    assert_int_equal(rl.stats.evicted, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_checks),
        cmocka_unit_test(test_burst_then_refill),
        cmocka_unit_test(test_refund_returns_a_token_up_to_the_burst),
        cmocka_unit_test(test_steady_rate_is_enforced),
        cmocka_unit_test(test_table_is_bounded_and_evicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
