/* Tests for errors: the one table of error codes, its names and messages. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cradle/cradle.h"

typedef struct row {
    const char *enum_name;
    int value;
    const char *wire;
    const char *message;
} row;

/* The table as the X-macro sees it, so the tests walk every row there is. */
static const row table[] = {
#define ROW(name, value, wire, message) {#name, (value), (wire), (message)},
    CRADLE_ERROR_TABLE(ROW)
#undef ROW
};
#define ROWS (sizeof table / sizeof table[0])

static bool is_snake_case(const char *s) {
    if (*s < 'a' || *s > 'z') return false;
    char prev = 0;
    for (; *s; s++) {
        bool ok = (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_';
        if (!ok) return false;
        if (*s == '_' && prev == '_') return false;
        prev = *s;
    }
    return prev != '_';
}

static void test_table_is_not_trivial(void **state) {
    (void)state;
    assert_true(ROWS >= 10);
    assert_int_equal(table[0].value, 0);
    assert_string_equal(table[0].enum_name, "CRADLE_OK");
    assert_int_equal(CRADLE_OK, 0);
}

static void test_values_unique_and_negative(void **state) {
    (void)state;
    for (size_t i = 0; i < ROWS; i++) {
        if (i > 0) assert_true(table[i].value < 0);
        for (size_t j = i + 1; j < ROWS; j++) {
            if (table[i].value == table[j].value) {
                fail_msg("%s and %s share value %d", table[i].enum_name, table[j].enum_name,
                         table[i].value);
            }
        }
    }
}

static void test_names_distinct_and_snake_case(void **state) {
    (void)state;
    for (size_t i = 0; i < ROWS; i++) {
        if (!is_snake_case(table[i].wire)) fail_msg("name not snake_case: %s", table[i].wire);
        assert_string_not_equal(table[i].wire, "unknown");
        for (size_t j = i + 1; j < ROWS; j++) {
            if (strcmp(table[i].wire, table[j].wire) == 0) fail_msg("duplicate name %s", table[i].wire);
            if (strcmp(table[i].enum_name, table[j].enum_name) == 0) {
                fail_msg("duplicate enum %s", table[i].enum_name);
            }
        }
    }
}

static void test_messages_distinct_and_nonempty(void **state) {
    (void)state;
    for (size_t i = 0; i < ROWS; i++) {
        assert_true(strlen(table[i].message) > 0);
        assert_string_not_equal(table[i].message, "unknown error");
        for (size_t j = i + 1; j < ROWS; j++) {
            if (strcmp(table[i].message, table[j].message) == 0) {
                fail_msg("duplicate message \"%s\" (%s, %s)", table[i].message,
                         table[i].enum_name, table[j].enum_name);
            }
        }
    }
}

static void test_lookup_matches_table(void **state) {
    (void)state;
    for (size_t i = 0; i < ROWS; i++) {
        assert_string_equal(cradle_strerror(table[i].value), table[i].message);
        assert_string_equal(cradle_error_name(table[i].value), table[i].wire);
    }
}

static void test_known_codes(void **state) {
    (void)state;
    assert_string_equal(cradle_error_name(CRADLE_OK), "ok");
    assert_string_equal(cradle_strerror(CRADLE_OK), "success");
    assert_string_equal(cradle_error_name(CRADLE_ESESSION_ORDER), "non_sequential_step");
    assert_string_equal(cradle_error_name(CRADLE_ESESSION_CAPACITY), "session_capacity_exceeded");
    assert_string_equal(cradle_error_name(CRADLE_EUNSORTED), "unsorted");
    assert_string_equal(cradle_error_name(CRADLE_ECLOCK_RATE), "bad_step_rate");
    assert_string_equal(cradle_error_name(CRADLE_ECLOCK_SOURCE), "bad_source_rate");
}

static bool in_table(int value) {
    for (size_t i = 0; i < ROWS; i++) {
        if (table[i].value == value) return true;
    }
    return false;
}

static void test_unknown_codes(void **state) {
    (void)state;
    const int probes[] = {1, 2, 100, -1000, -11, -19, -22, -29, -32, INT32_MAX, INT32_MIN};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        if (in_table(probes[i])) continue; /* a later code took this value */
        assert_string_equal(cradle_strerror(probes[i]), "unknown error");
        assert_string_equal(cradle_error_name(probes[i]), "unknown");
    }
    /* Every value in a wide band that is not in the table is unknown. */
    for (int v = -200; v <= 10; v++) {
        if (in_table(v)) continue;
        assert_string_equal(cradle_strerror(v), "unknown error");
        assert_string_equal(cradle_error_name(v), "unknown");
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_is_not_trivial),
        cmocka_unit_test(test_values_unique_and_negative),
        cmocka_unit_test(test_names_distinct_and_snake_case),
        cmocka_unit_test(test_messages_distinct_and_nonempty),
        cmocka_unit_test(test_lookup_matches_table),
        cmocka_unit_test(test_known_codes),
        cmocka_unit_test(test_unknown_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
