#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cradle/parse.h"

#define SENTINEL 0x5a5a5a5a5a5a5a5aull

/* Whether text parses in [min, max]; checks *out is written only on success. */
static bool parses(const char *text, uint64_t min, uint64_t max, uint64_t *value) {
    uint64_t out = SENTINEL;
    bool ok = cradle_parse_u64(text, min, max, &out);
    if (!ok) assert_true(out == SENTINEL);
    *value = out;
    return ok;
}

static void test_accepts_plain_decimal(void **state) {
    (void)state;
    uint64_t v;
    assert_true(parses("0", 0, UINT64_MAX, &v));
    assert_true(v == 0);
    assert_true(parses("7777", 0, UINT64_MAX, &v));
    assert_true(v == 7777);
    assert_true(parses("18446744073709551615", 0, UINT64_MAX, &v));
    assert_true(v == UINT64_MAX);
    assert_true(parses("4294967296", 0, UINT64_MAX, &v));
    assert_true(v == 4294967296ull);
}

static void test_leading_zeros_are_decimal(void **state) {
    (void)state;
    uint64_t v;
    assert_true(parses("010", 0, UINT64_MAX, &v));
    assert_true(v == 10); /* not octal 8 */
    assert_true(parses("007", 0, UINT64_MAX, &v));
    assert_true(v == 7);
    assert_true(parses("000", 0, UINT64_MAX, &v));
    assert_true(v == 0);
    /* Many zeros before the largest value still fit. */
    assert_true(parses("0000000000000000000000018446744073709551615", 0, UINT64_MAX, &v));
    assert_true(v == UINT64_MAX);
}

static void test_refuses_anything_but_digits(void **state) {
    (void)state;
    uint64_t v;
    assert_false(parses(NULL, 0, UINT64_MAX, &v));
    assert_false(parses("", 0, UINT64_MAX, &v));
    assert_false(parses("-1", 0, UINT64_MAX, &v));
    assert_false(parses("-0", 0, UINT64_MAX, &v));
    assert_false(parses("+1", 0, UINT64_MAX, &v));
    assert_false(parses(" 1", 0, UINT64_MAX, &v));
    assert_false(parses("1 ", 0, UINT64_MAX, &v));
    assert_false(parses("\t1", 0, UINT64_MAX, &v));
    assert_false(parses("1\n", 0, UINT64_MAX, &v));
    assert_false(parses("1x", 0, UINT64_MAX, &v));
    assert_false(parses("1.0", 0, UINT64_MAX, &v));
    assert_false(parses("1e3", 0, UINT64_MAX, &v));
    assert_false(parses("1_000", 0, UINT64_MAX, &v));
    assert_false(parses("0x10", 0, UINT64_MAX, &v));
    assert_false(parses("0X10", 0, UINT64_MAX, &v));
    assert_false(parses("ff", 0, UINT64_MAX, &v));
    assert_false(parses("x", 0, UINT64_MAX, &v));
    assert_false(parses("/", 0, UINT64_MAX, &v)); /* '0' - 1 */
    assert_false(parses(":", 0, UINT64_MAX, &v)); /* '9' + 1 */
    assert_false(parses("\xd9\xa3", 0, UINT64_MAX, &v)); /* a non-ASCII digit */
}

static void test_refuses_overflow(void **state) {
    (void)state;
    uint64_t v;
    assert_false(parses("18446744073709551616", 0, UINT64_MAX, &v));
    assert_false(parses("18446744073709551620", 0, UINT64_MAX, &v));
    assert_false(parses("99999999999999999999", 0, UINT64_MAX, &v));
    assert_false(parses("184467440737095516150", 0, UINT64_MAX, &v));
    assert_false(parses("100000000000000000000000000000000000000", 0, UINT64_MAX, &v));
}

static void test_range_is_inclusive(void **state) {
    (void)state;
    uint64_t v;
    assert_false(parses("0", 1, 65535, &v));
    assert_true(parses("1", 1, 65535, &v));
    assert_true(v == 1);
    assert_true(parses("65535", 1, 65535, &v));
    assert_true(v == 65535);
    assert_false(parses("65536", 1, 65535, &v));
    assert_false(parses("99", 100, 60000, &v));
    assert_true(parses("100", 100, 60000, &v));
    assert_true(parses("5", 5, 5, &v));
    assert_true(v == 5);
    assert_false(parses("4", 5, 5, &v));
    assert_false(parses("6", 5, 5, &v));
    assert_false(parses("18446744073709551615", 0, UINT64_MAX - 1, &v));
    assert_true(parses("18446744073709551615", UINT64_MAX, UINT64_MAX, &v));
    assert_true(v == UINT64_MAX);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts_plain_decimal),
        cmocka_unit_test(test_leading_zeros_are_decimal),
        cmocka_unit_test(test_refuses_anything_but_digits),
        cmocka_unit_test(test_refuses_overflow),
        cmocka_unit_test(test_range_is_inclusive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
