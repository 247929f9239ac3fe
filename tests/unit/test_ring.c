/* Tests for ring (single-threaded behaviour): shape checks, full and empty,
 * FIFO order across wrap-around, batches. The two-thread test is
 * test_ring_threads.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cradle/cradle.h"

static void test_init_validates(void **state) {
    (void)state;
    static cradle_ring ring;
    uint64_t storage[8];
    assert_int_equal(cradle_ring_storage_bytes(8, 8), 64);
    assert_int_equal(cradle_ring_storage_bytes(6, 8), 0);
    assert_int_equal(cradle_ring_storage_bytes(0, 8), 0);
    assert_int_equal(cradle_ring_storage_bytes(8, 0), 0);
    assert_int_equal(cradle_ring_storage_bytes(CRADLE_RING_MAX_CAPACITY * 2u, 1), 0);
    assert_int_equal(cradle_ring_init(&ring, storage, sizeof storage, 6, 8), CRADLE_EINVAL);
    assert_int_equal(cradle_ring_init(&ring, storage, sizeof storage - 1, 8, 8), CRADLE_EINVAL);
    assert_int_equal(cradle_ring_init(&ring, NULL, 64, 8, 8), CRADLE_EINVAL);
    assert_int_equal(cradle_ring_init(&ring, storage, sizeof storage, 8, 8), 0);
    assert_int_equal(cradle_ring_capacity(&ring), 8);
    assert_int_equal(cradle_ring_count(&ring), 0);
}

static void test_full_and_empty(void **state) {
    (void)state;
    static cradle_ring ring;
    uint32_t storage[4];
    assert_int_equal(cradle_ring_init(&ring, storage, sizeof storage, 4, 4), 0);
    uint32_t v = 0;
    assert_false(cradle_ring_pop(&ring, &v));
    for (uint32_t i = 1; i <= 4; i++) assert_true(cradle_ring_push(&ring, &i));
    uint32_t extra = 99;
    assert_false(cradle_ring_push(&ring, &extra)); /* full: refused, not blocking */
    assert_int_equal(cradle_ring_count(&ring), 4);
    for (uint32_t i = 1; i <= 4; i++) {
        assert_true(cradle_ring_pop(&ring, &v));
        assert_int_equal(v, i);
    }
    assert_false(cradle_ring_pop(&ring, &v));
    assert_int_equal(v, 4); /* untouched by the failed pop */
    /* capacity 1 works too */
    static cradle_ring one;
    assert_int_equal(cradle_ring_init(&one, storage, 4, 1, 4), 0);
    assert_true(cradle_ring_push(&one, &extra));
    assert_false(cradle_ring_push(&one, &extra));
    assert_true(cradle_ring_pop(&one, &v));
    assert_int_equal(v, 99);
}

typedef struct message {
    uint64_t sequence;
    uint8_t payload[12];
} message;

static void test_fifo_across_wraparound(void **state) {
    (void)state;
    static cradle_ring ring;
    static message storage[16];
    assert_int_equal(cradle_ring_init(&ring, storage, sizeof storage, 16, sizeof(message)), 0);
    uint64_t pushed = 0, popped = 0;
    cradle_rng rng;
    cradle_rng_seed(&rng, 3, 4);
    for (int round = 0; round < 20000; round++) {
        uint32_t burst = cradle_rng_below(&rng, 20);
        for (uint32_t i = 0; i < burst; i++) {
            message m = {.sequence = pushed};
            memset(m.payload, (int)(pushed & 0xFF), sizeof m.payload);
            bool full = pushed - popped == 16;
            assert_int_equal(cradle_ring_push(&ring, &m), !full);
            if (!full) pushed++;
        }
        assert_int_equal(cradle_ring_count(&ring), pushed - popped);
        burst = cradle_rng_below(&rng, 20);
        for (uint32_t i = 0; i < burst; i++) {
            message m;
            bool empty = pushed == popped;
            assert_int_equal(cradle_ring_pop(&ring, &m), !empty);
            if (!empty) {
                assert_int_equal(m.sequence, popped);
                assert_int_equal(m.payload[11], popped & 0xFF);
                popped++;
            }
        }
    }
    assert_true(popped > 100000);
}

static void test_batches(void **state) {
    (void)state;
    static cradle_ring ring;
    static uint32_t storage[8];
    assert_int_equal(cradle_ring_init(&ring, storage, sizeof storage, 8, 4), 0);
    uint32_t in[20], out[20];
    uint32_t next_in = 0, next_out = 0;
    cradle_rng rng;
    cradle_rng_seed(&rng, 5, 6);
    for (int round = 0; round < 5000; round++) {
        uint32_t want = cradle_rng_below(&rng, 12);
        for (uint32_t i = 0; i < want; i++) in[i] = next_in + i;
        uint32_t space = 8 - (next_in - next_out);
        uint32_t n = cradle_ring_push_many(&ring, in, want);
        assert_int_equal(n, want < space ? want : space);
        next_in += n;
        want = cradle_rng_below(&rng, 12);
        uint32_t held = next_in - next_out;
        n = cradle_ring_pop_many(&ring, out, want);
        assert_int_equal(n, want < held ? want : held);
        for (uint32_t i = 0; i < n; i++) assert_int_equal(out[i], next_out + i);
        next_out += n;
    }
    assert_int_equal(cradle_ring_push_many(&ring, in, 0), 0);
    assert_int_equal(cradle_ring_pop_many(&ring, out, 0), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_validates),
        cmocka_unit_test(test_full_and_empty),
        cmocka_unit_test(test_fifo_across_wraparound),
        cmocka_unit_test(test_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
