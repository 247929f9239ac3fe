/* Tests for golden: exact comparison of an output with a saved reference. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cradle/cradle.h"

#define CHUNK 4096u
#define BIG (5u * CHUNK + 123u) /* several chunks and a ragged tail */

typedef struct buffers {
    uint8_t *ref;
    uint8_t *out;
} buffers;

static int setup(void **state) {
    buffers *b = malloc(sizeof *b);
    if (!b) return -1;
    b->ref = malloc(BIG);
    b->out = malloc(BIG);
    if (!b->ref || !b->out) return -1;
    for (size_t i = 0; i < BIG; i++) b->ref[i] = (uint8_t)(i * 131u + (i >> 8));
    memcpy(b->out, b->ref, BIG);
    *state = b;
    return 0;
}

static int teardown(void **state) {
    buffers *b = *state;
    free(b->ref);
    free(b->out);
    free(b);
    return 0;
}

static void expect_result(cradle_golden_result r, bool equal, size_t first, size_t ref_len,
                          size_t out_len) {
    assert_int_equal(r.equal, equal);
    assert_int_equal(r.first_difference, first);
    assert_int_equal(r.reference_length, ref_len);
    assert_int_equal(r.output_length, out_len);
}

static void test_equal(void **state) {
    buffers *b = *state;
    expect_result(cradle_golden_compare(b->ref, BIG, b->out, BIG), true, BIG, BIG, BIG);
    /* equal at every length around the chunk boundaries */
    const size_t lengths[] = {1, 2, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 3 * CHUNK + 5};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        size_t n = lengths[i];
        expect_result(cradle_golden_compare(b->ref, n, b->out, n), true, n, n, n);
    }
    /* the same buffer as both sides */
    expect_result(cradle_golden_compare(b->ref, BIG, b->ref, BIG), true, BIG, BIG, BIG);
}

static void test_empty(void **state) {
    buffers *b = *state;
    expect_result(cradle_golden_compare(NULL, 0, NULL, 0), true, 0, 0, 0);
    expect_result(cradle_golden_compare(b->ref, 0, b->out, 0), true, 0, 0, 0);
    /* empty against non-empty differs at 0, both ways */
    expect_result(cradle_golden_compare(NULL, 0, b->out, 10), false, 0, 0, 10);
    expect_result(cradle_golden_compare(b->ref, 10, NULL, 0), false, 0, 10, 0);
}

/* Flips one byte of out at `at`, checks the result both ways, restores it. */
static void check_difference_at(buffers *b, size_t at, size_t len) {
    b->out[at] ^= 0x01;
    expect_result(cradle_golden_compare(b->ref, len, b->out, len), false, at, len, len);
    expect_result(cradle_golden_compare(b->out, len, b->ref, len), false, at, len, len);
    b->out[at] ^= 0x01;
}

static void test_single_difference(void **state) {
    buffers *b = *state;
    const size_t offsets[] = {0,         1,         7,         8,         CHUNK - 1,
                              CHUNK,     CHUNK + 1, 2 * CHUNK - 1, 2 * CHUNK, 3 * CHUNK + 5,
                              5 * CHUNK - 1, 5 * CHUNK, 5 * CHUNK + 1, BIG - 2,  BIG - 1};
    for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
        check_difference_at(b, offsets[i], BIG);
    }
    /* the last byte of buffers that end exactly on a chunk */
    check_difference_at(b, CHUNK - 1, CHUNK);
    check_difference_at(b, 4 * CHUNK - 1, 4 * CHUNK);
    /* every bit of a byte counts */
    for (unsigned bit = 0; bit < 8; bit++) {
        b->out[CHUNK + 3] ^= (uint8_t)(1u << bit);
        expect_result(cradle_golden_compare(b->ref, BIG, b->out, BIG), false, CHUNK + 3, BIG, BIG);
        b->out[CHUNK + 3] ^= (uint8_t)(1u << bit);
    }
    expect_result(cradle_golden_compare(b->ref, BIG, b->out, BIG), true, BIG, BIG, BIG);
}

static void test_first_of_several_differences(void **state) {
    buffers *b = *state;
    b->out[3 * CHUNK + 5] ^= 0xFF;
    b->out[3 * CHUNK + 6] ^= 0xFF;
    b->out[4 * CHUNK] ^= 0xFF;
    b->out[BIG - 1] ^= 0xFF;
    expect_result(cradle_golden_compare(b->ref, BIG, b->out, BIG), false, 3 * CHUNK + 5, BIG, BIG);
    b->out[CHUNK] ^= 0xFF;
    expect_result(cradle_golden_compare(b->ref, BIG, b->out, BIG), false, CHUNK, BIG, BIG);
    b->out[0] ^= 0xFF;
    expect_result(cradle_golden_compare(b->ref, BIG, b->out, BIG), false, 0, BIG, BIG);
}

static void test_exhaustive_small(void **state) {
    buffers *b = *state;
    for (size_t len = 1; len <= 40; len++) {
        for (size_t at = 0; at < len; at++) check_difference_at(b, at, len);
    }
}

static void test_prefix_outputs(void **state) {
    buffers *b = *state;
    /* A shorter output that matches the start of a longer reference differs
     * at the shorter length, and the other way round. */
    const size_t shorter[] = {1, 100, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5, BIG - 1};
    for (size_t i = 0; i < sizeof shorter / sizeof shorter[0]; i++) {
        size_t n = shorter[i];
        expect_result(cradle_golden_compare(b->ref, BIG, b->out, n), false, n, BIG, n);
        expect_result(cradle_golden_compare(b->ref, n, b->out, BIG), false, n, n, BIG);
    }
    /* A difference inside the common part wins over the length difference. */
    b->out[50] ^= 0x10;
    expect_result(cradle_golden_compare(b->ref, BIG, b->out, 100), false, 50, BIG, 100);
    expect_result(cradle_golden_compare(b->ref, 100, b->out, BIG), false, 50, 100, BIG);
    /* A difference just past the shorter length is not seen; the length is. */
    b->out[50] ^= 0x10;
    b->out[100] ^= 0x10;
    expect_result(cradle_golden_compare(b->ref, BIG, b->out, 100), false, 100, BIG, 100);
    b->out[100] ^= 0x10;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_equal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_single_difference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_of_several_differences, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exhaustive_small, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prefix_outputs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
