/* Tests for arena: the bump allocator over one caller-provided block. */
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

#define BLOCK 16384u

static _Alignas(4096) uint8_t block[BLOCK];

static uintptr_t addr(const void *p) { return (uintptr_t)p; }

static void test_init_and_remaining(void **state) {
    (void)state;
    cradle_arena a;
    cradle_arena_init(&a, block, BLOCK);
    assert_int_equal(cradle_arena_remaining(&a), BLOCK);
    assert_int_equal(cradle_arena_mark_get(&a), 0);
    assert_non_null(cradle_arena_alloc(&a, 100, 1));
    assert_int_equal(cradle_arena_remaining(&a), BLOCK - 100);
    assert_int_equal(cradle_arena_mark_get(&a), 100);
    /* An arena over no memory refuses everything. */
    cradle_arena empty;
    cradle_arena_init(&empty, NULL, 0);
    assert_null(cradle_arena_alloc(&empty, 1, 1));
    assert_int_equal(cradle_arena_remaining(&empty), 0);
}

static void test_alignment_on_misaligned_block(void **state) {
    (void)state;
    /* The block starts at every offset 0..15 from a 4096-aligned address, so
     * alignment must follow the address, not the offset in the block. */
    for (size_t skew = 0; skew < 16; skew++) {
        cradle_arena a;
        cradle_arena_init(&a, block + skew, BLOCK - skew);
        for (size_t align = 1; align <= 4096; align <<= 1) {
            /* knock the cursor off alignment first */
            uint8_t *odd = cradle_arena_alloc(&a, 1, 1);
            assert_non_null(odd);
            size_t used_before = cradle_arena_mark_get(&a);
            uint8_t *p = cradle_arena_alloc(&a, 3, align);
            if (p == NULL) break; /* the block is used up at big alignments */
            assert_int_equal(addr(p) % align, 0);
            /* inside the block, after the previous allocation, minimal padding */
            assert_true(p > odd);
            assert_true(addr(p) - addr(odd) - 1 < align);
            assert_true(p + 3 <= block + BLOCK);
            assert_int_equal(cradle_arena_mark_get(&a), used_before + (size_t)(p - odd - 1) + 3);
        }
    }
    /* An already aligned cursor gets no padding. */
    cradle_arena a;
    cradle_arena_init(&a, block, BLOCK);
    uint8_t *p = cradle_arena_alloc(&a, 64, 64);
    uint8_t *q = cradle_arena_alloc(&a, 64, 64);
    assert_ptr_equal(p, block);
    assert_ptr_equal(q, block + 64);
    assert_int_equal(cradle_arena_mark_get(&a), 128);
}

static void test_full_returns_null_and_consumes_nothing(void **state) {
    (void)state;
    cradle_arena a;
    cradle_arena_init(&a, block, 100);
    assert_non_null(cradle_arena_alloc(&a, 60, 1));
    cradle_arena before = a;
    assert_null(cradle_arena_alloc(&a, 41, 1));
    assert_memory_equal(&a, &before, sizeof a);
    assert_null(cradle_arena_alloc(&a, SIZE_MAX, 1));
    assert_null(cradle_arena_alloc(&a, SIZE_MAX - 30, 1));
    assert_memory_equal(&a, &before, sizeof a);
    /* The fit itself needs padding that does not fit: refused, nothing used. */
    assert_null(cradle_arena_alloc(&a, 1, 128)); /* the next 128-aligned address is past 100 */
    assert_memory_equal(&a, &before, sizeof a);
    /* 40 bytes left: an exact fit succeeds, then nothing more fits. */
    uint8_t *p = cradle_arena_alloc(&a, 40, 1);
    assert_ptr_equal(p, block + 60);
    assert_int_equal(cradle_arena_remaining(&a), 0);
    before = a;
    assert_null(cradle_arena_alloc(&a, 1, 1));
    assert_memory_equal(&a, &before, sizeof a);
    /* A zero size still fits at the very end. */
    assert_ptr_equal(cradle_arena_alloc(&a, 0, 1), block + 100);
    assert_null(cradle_arena_alloc(&a, 0, 8)); /* 100 -> 104 is past the end */
    assert_memory_equal(&a, &before, sizeof a);
}

static void test_zero_size(void **state) {
    (void)state;
    cradle_arena a;
    cradle_arena_init(&a, block, BLOCK);
    assert_non_null(cradle_arena_alloc(&a, 1, 1));
    uint8_t *z = cradle_arena_alloc(&a, 0, 16);
    assert_non_null(z);
    assert_int_equal(addr(z) % 16, 0);
    /* consumes only its padding */
    assert_int_equal(cradle_arena_mark_get(&a), 16);
    uint8_t *next = cradle_arena_alloc(&a, 4, 1);
    assert_ptr_equal(next, z);
}

static void test_mark_and_reset(void **state) {
    (void)state;
    cradle_arena a;
    cradle_arena_init(&a, block, BLOCK);
    assert_non_null(cradle_arena_alloc(&a, 10, 1));
    cradle_arena_mark m = cradle_arena_mark_get(&a);
    uint8_t *first = cradle_arena_alloc(&a, 100, 8);
    assert_non_null(cradle_arena_alloc(&a, 1000, 8));
    cradle_arena_reset_to(&a, m);
    assert_int_equal(cradle_arena_mark_get(&a), m);
    assert_int_equal(cradle_arena_remaining(&a), BLOCK - 10);
    /* the same requests after a rollback get the same addresses */
    assert_ptr_equal(cradle_arena_alloc(&a, 100, 8), first);
    /* rolling back to the current mark is a no-op */
    cradle_arena_mark now = cradle_arena_mark_get(&a);
    cradle_arena_reset_to(&a, now);
    assert_int_equal(cradle_arena_mark_get(&a), now);
    cradle_arena_reset(&a);
    assert_int_equal(cradle_arena_mark_get(&a), 0);
    assert_int_equal(cradle_arena_remaining(&a), BLOCK);
    assert_ptr_equal(cradle_arena_alloc(&a, 1, 1), block);
}

typedef struct thing {
    double d;
    uint8_t tag;
} thing;

static void test_typed_macro(void **state) {
    (void)state;
    cradle_arena a;
    cradle_arena_init(&a, block, BLOCK);
    assert_non_null(cradle_arena_alloc(&a, 1, 1));
    thing *t = CRADLE_ARENA_ALLOC(&a, thing);
    assert_non_null(t);
    assert_int_equal(addr(t) % _Alignof(thing), 0);
    assert_int_equal(cradle_arena_mark_get(&a), _Alignof(thing) + sizeof(thing));
    t->d = 1.5;
    t->tag = 7;
    uint32_t *arr = CRADLE_ARENA_ALLOC_N(&a, uint32_t, 10);
    assert_non_null(arr);
    assert_int_equal(addr(arr) % _Alignof(uint32_t), 0);
    assert_true((uint8_t *)arr >= (uint8_t *)(t + 1));
    for (uint32_t i = 0; i < 10; i++) arr[i] = i;
    assert_true(t->d == 1.5);

    /* n * sizeof(type) overflows size_t: NULL, nothing consumed. */
    cradle_arena before = a;
    size_t too_many = SIZE_MAX / sizeof(thing) + 1u;
    assert_null(CRADLE_ARENA_ALLOC_N(&a, thing, too_many));
    assert_null(CRADLE_ARENA_ALLOC_N(&a, thing, SIZE_MAX));
    assert_null(CRADLE_ARENA_ALLOC_N(&a, uint64_t, SIZE_MAX / 4));
    int negative = -1;
    assert_null(CRADLE_ARENA_ALLOC_N(&a, uint32_t, negative));
    /* fits the multiplication but not the block */
    assert_null(CRADLE_ARENA_ALLOC_N(&a, thing, BLOCK));
    assert_memory_equal(&a, &before, sizeof a);
    /* zero objects: a valid aligned pointer */
    thing *none = CRADLE_ARENA_ALLOC_N(&a, thing, 0);
    assert_non_null(none);
    assert_int_equal(addr(none) % _Alignof(thing), 0);
}

static void test_alloc_zero(void **state) {
    (void)state;
    memset(block, 0xFF, 256);
    cradle_arena a;
    cradle_arena_init(&a, block, 256);
    uint8_t *p = cradle_arena_alloc_zero(&a, 100, 1);
    assert_ptr_equal(p, block);
    for (size_t i = 0; i < 100; i++) assert_int_equal(p[i], 0);
    assert_int_equal(block[100], 0xFF); /* not one byte more */
    /* A refused request writes nothing. */
    assert_null(cradle_arena_alloc_zero(&a, 200, 1));
    for (size_t i = 100; i < 256; i++) assert_int_equal(block[i], 0xFF);
    /* zero size */
    assert_non_null(cradle_arena_alloc_zero(&a, 0, 4));
    assert_int_equal(block[100], 0xFF);
}

/* ---- programmer errors assert ---------------------------------------------- */

#ifndef NDEBUG /* only a build with assert() calls these */
static void align_not_power_of_two(void) {
    cradle_arena a;
    cradle_arena_init(&a, block, BLOCK);
    (void)cradle_arena_alloc(&a, 8, 3);
}

static void align_zero(void) {
    cradle_arena a;
    cradle_arena_init(&a, block, BLOCK);
    (void)cradle_arena_alloc(&a, 8, 0);
}

static void reset_past_used(void) {
    cradle_arena a;
    cradle_arena_init(&a, block, BLOCK);
    (void)cradle_arena_alloc(&a, 8, 1);
    cradle_arena_reset_to(&a, 9);
}

static void valid_calls(void) {
    cradle_arena a;
    cradle_arena_init(&a, block, BLOCK);
    (void)cradle_arena_alloc(&a, 8, 4096);
    cradle_arena_reset_to(&a, cradle_arena_mark_get(&a));
}
#endif

static void test_contract_violations_assert(void **state) {
    (void)state;
#ifdef NDEBUG
    skip();
#else
    assert_int_equal(cradle_test_signal_of(valid_calls), 0);
    assert_int_equal(cradle_test_signal_of(align_not_power_of_two), SIGABRT);
    assert_int_equal(cradle_test_signal_of(align_zero), SIGABRT);
    assert_int_equal(cradle_test_signal_of(reset_past_used), SIGABRT);
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_and_remaining),
        cmocka_unit_test(test_alignment_on_misaligned_block),
        cmocka_unit_test(test_full_returns_null_and_consumes_nothing),
        cmocka_unit_test(test_zero_size),
        cmocka_unit_test(test_mark_and_reset),
        cmocka_unit_test(test_typed_macro),
        cmocka_unit_test(test_alloc_zero),
        cmocka_unit_test(test_contract_violations_assert),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
