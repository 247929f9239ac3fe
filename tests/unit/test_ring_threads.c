/* Two-thread test for ring: a producer pushes the sequence 0..N-1 of u64 and
 * a consumer checks it pops exactly that sequence (none lost, duplicated or
 * reordered). N defaults to 2 million (the 1024-slot ring wraps about 2,000 times); an optional first argument overrides
 * it (the ThreadSanitizer run passes a smaller count to stay fast). Labels:
 * unit, threads, no_valgrind. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "cradle/cradle.h"

static uint64_t item_count = 2000000u;

typedef struct shared {
    cradle_ring ring;
    uint64_t storage[1024];
    uint64_t mismatches; /* written by the consumer only, read after join */
    uint64_t received;
    uint64_t first_bad;
    bool batched;
} shared;

static void *producer(void *arg) {
    shared *s = arg;
    uint64_t next = 0;
    uint64_t batch[37];
    while (next < item_count) {
        if (s->batched) {
            uint32_t n = 0;
            while (n < 37 && next + n < item_count) {
                batch[n] = next + n;
                n++;
            }
            uint32_t pushed = cradle_ring_push_many(&s->ring, batch, n);
            next += pushed;
            if (pushed == 0) sched_yield();
        } else if (cradle_ring_push(&s->ring, &next)) {
            next++;
        } else {
            sched_yield(); /* full: the push never blocked; let the consumer run */
        }
    }
    return NULL;
}

static void *consumer(void *arg) {
    shared *s = arg;
    uint64_t expected = 0;
    uint64_t batch[29];
    while (expected < item_count) {
        uint32_t n;
        if (s->batched) {
            n = cradle_ring_pop_many(&s->ring, batch, 29);
        } else {
            n = cradle_ring_pop(&s->ring, batch) ? 1u : 0u;
        }
        if (n == 0) {
            sched_yield();
            continue;
        }
        for (uint32_t i = 0; i < n; i++) {
            if (batch[i] != expected && s->mismatches++ == 0) s->first_bad = expected;
            expected++;
        }
        s->received += n;
    }
    return NULL;
}

static void run(bool batched) {
    shared *s = aligned_alloc(CRADLE_RING_CACHE_LINE, sizeof(shared));
    assert_non_null(s);
    s->mismatches = 0;
    s->received = 0;
    s->first_bad = 0;
    s->batched = batched;
    assert_int_equal(cradle_ring_init(&s->ring, s->storage, sizeof s->storage, 1024, 8), 0);
    pthread_t p, c;
    assert_int_equal(pthread_create(&c, NULL, consumer, s), 0);
    assert_int_equal(pthread_create(&p, NULL, producer, s), 0);
    assert_int_equal(pthread_join(p, NULL), 0);
    assert_int_equal(pthread_join(c, NULL), 0);
    assert_int_equal(s->mismatches, 0);
    assert_int_equal(s->received, item_count);
    uint64_t left;
    assert_false(cradle_ring_pop(&s->ring, &left)); /* nothing duplicated at the end */
    free(s);
}

static void test_two_threads_single(void **state) {
    (void)state;
    run(false);
}

static void test_two_threads_batched(void **state) {
    (void)state;
    run(true);
}

int main(int argc, char **argv) {
    if (argc > 1) {
        char *end;
        unsigned long long n = strtoull(argv[1], &end, 10);
        if (*end != '\0' || n == 0) return 2;
        item_count = n;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_threads_single),
        cmocka_unit_test(test_two_threads_batched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
