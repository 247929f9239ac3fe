/* Tests for layout: a game's state layout (game_abi.h, minor 3) checked,
 * with the region and field named, and bytes named by it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/layout.h"

/* A state of 4 + 8 x 12 + 16 bytes: u32 wave, 8 players {i32 x, i32 y, u32
 * score}, then a 16-byte generator. */
static const cradle_state_region GOOD[] = {
    {"wave", 0, 0, 4, 1, 0},
    {"players", 0, 4, 12, 8, 12},
    {"x", 2, 0, 4, 1, 0},
    {"y", 2, 4, 4, 1, 0},
    {"score", 2, 8, 4, 1, 0},
    {"rng", 0, 100, 16, 1, 0},
};
#define GOOD_COUNT 6u
#define GOOD_SIZE 116u

static const char *name_of(uint64_t offset) {
    static char out[128];
    size_t n = cradle_layout_name(GOOD, GOOD_COUNT, offset, out, sizeof out);
    assert_int_equal(n, strlen(out));
    return out;
}

static void test_names(void **unused) {
    (void)unused;
    char message[128];
    assert_int_equal(cradle_layout_check(GOOD, GOOD_COUNT, GOOD_SIZE, message, sizeof message), CRADLE_OK);
    assert_string_equal(message, "");
    assert_string_equal(name_of(0), "wave (state byte 0)");
    assert_string_equal(name_of(3), "wave+3 (state byte 3)");
    assert_string_equal(name_of(4), "players[0].x (state byte 4)");
    assert_string_equal(name_of(4 + 3 * 12 + 8), "players[3].score (state byte 48)");
    assert_string_equal(name_of(4 + 7 * 12 + 5), "players[7].y+1 (state byte 93)");
    assert_string_equal(name_of(101), "rng+1 (state byte 101)");
    assert_string_equal(name_of(115), "rng+15 (state byte 115)");
    assert_string_equal(name_of(116), "state byte 116"); /* past every region */
    /* No layout: offsets only. */
    char out[64];
    cradle_layout_name(NULL, 0, 812, out, sizeof out);
    assert_string_equal(out, "state byte 812");
    /* A cut buffer keeps a prefix and the full length. */
    char small[8];
    size_t n = cradle_layout_name(GOOD, GOOD_COUNT, 48, small, sizeof small);
    assert_int_equal(n, strlen("players[3].score (state byte 48)"));
    assert_string_equal(small, "players");
}

static void test_gaps_are_offsets(void **unused) {
    (void)unused;
    /* Elements of 4 bytes 8 apart: bytes 4..7 of each stride are nobody's. */
    static const cradle_state_region sparse[] = {{"cells", 0, 0, 4, 3, 8}};
    assert_int_equal(cradle_layout_check(sparse, 1, 24, NULL, 0), CRADLE_OK);
    char out[64];
    cradle_layout_name(sparse, 1, 9, out, sizeof out);
    assert_string_equal(out, "cells[1]+1 (state byte 9)");
    cradle_layout_name(sparse, 1, 13, out, sizeof out);
    assert_string_equal(out, "state byte 13");
}

typedef struct refusal {
    cradle_state_region regions[3];
    uint32_t count;
    const char *message;
} refusal;

static void test_refusals_name_region_and_field(void **unused) {
    (void)unused;
    static const refusal cases[] = {
        {{{"a", 0, 0, 4, 1, 0}, {"b", 0, 2, 4, 1, 0}}, 2, "region 1 (b) overlaps region 0 (a): bytes 2..5 and 0..3"},
        {{{"a", 0, 0, 4, 1, 0}, {"big", 0, 4, 200, 1, 0}}, 2, "region 1 (big): extent 204 > the state size 116"},
        {{{"p", 0, 0, 8, 2, 8}, {"x", 1, 4, 8, 1, 0}}, 2, "region 1 (x): extent 12 > its parent's element size 8"},
        {{{"p", 0, 0, 8, 2, 4}}, 1, "region 0 (p): stride 4 < size 8"},
        {{{"p", 0, 0, 0, 1, 0}}, 1, "region 0 (p): size 0, count 1: neither may be 0"},
        {{{"p", 0, 0, 4, 0, 4}}, 1, "region 0 (p): size 4, count 0: neither may be 0"},
        {{{"p", 1, 0, 4, 1, 0}}, 1, "region 0 (p): parent 1 is not an earlier region (0..0)"},
        {{{"a", 0, 0, 4, 1, 0}, {"b", 3, 0, 4, 1, 0}}, 2, "region 1 (b): parent 3 is not an earlier region (0..1)"},
        {{{"a b", 0, 0, 4, 1, 0}}, 1, "region 0: name byte 1 is 0x20, not a letter, digit or _"},
        {{{"", 0, 0, 4, 1, 0}}, 1, "region 0: name is empty"},
        {{{NULL, 0, 0, 4, 1, 0}}, 1, "region 0: name is NULL"},
        {{{"a", 0, 0, 4, 1, 0}, {"huge", 0, 8, 1, 0xFFFFFFFFu, 0xFFFFFFFFu}}, 2,
         "region 1 (huge): extent 18446744060824649739 > the state size 116"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char message[160];
        int rc = cradle_layout_check(cases[i].regions, cases[i].count, GOOD_SIZE, message, sizeof message);
        if (rc != CRADLE_ERELOAD_CONTRACT || strcmp(message, cases[i].message) != 0)
            fail_msg("case %zu: rc %d, message \"%s\", wanted \"%s\"", i, rc, message, cases[i].message);
    }
    char message[96];
    assert_int_equal(cradle_layout_check(NULL, 2, GOOD_SIZE, message, sizeof message), CRADLE_ERELOAD_CONTRACT);
    assert_string_equal(message, "layout is NULL with layout count 2");
    assert_int_equal(cradle_layout_check(GOOD, CRADLE_GAME_MAX_REGIONS + 1u, GOOD_SIZE, message, sizeof message),
                     CRADLE_ERELOAD_CONTRACT);
    assert_string_equal(message, "layout count 1025 > maximum 1024");
    char long_name[40];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    cradle_state_region one = {long_name, 0, 0, 4, 1, 0};
    assert_int_equal(cradle_layout_check(&one, 1, GOOD_SIZE, message, sizeof message), CRADLE_ERELOAD_CONTRACT);
    assert_string_equal(message, "region 0: name longer than 31 bytes");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_gaps_are_offsets),
        cmocka_unit_test(test_refusals_name_region_and_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
