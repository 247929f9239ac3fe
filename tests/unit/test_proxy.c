/* proxy_sched: cradle-proxy's impairment decisions and its delay queue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proxy_sched.h"

#define CAP 4096u

static cradle_proxy_entry entries[CAP];
static cradle_proxy_packet packets[CAP];
static uint32_t free_list[CAP];
static cradle_proxy_packet out;

static void setup(cradle_proxy_sched *s, cradle_proxy_impairment c, uint32_t capacity) {
    cradle_proxy_sched_init(s, &c, entries, packets, free_list, capacity);
}

/* Submits packet number i (its 4 bytes and tag are i). */
static uint32_t submit(cradle_proxy_sched *s, uint64_t now, uint32_t i) {
    uint8_t b[4] = {(uint8_t)i, (uint8_t)(i >> 8), (uint8_t)(i >> 16), (uint8_t)(i >> 24)};
    return cradle_proxy_sched_submit(s, now, i, b, sizeof b);
}

static uint32_t out_number(void) {
    assert_int_equal(out.length, 4);
    uint32_t v = (uint32_t)out.bytes[0] | (uint32_t)out.bytes[1] << 8 | (uint32_t)out.bytes[2] << 16 |
                 (uint32_t)out.bytes[3] << 24;
    assert_int_equal(v, out.tag);
    return v;
}

static void test_transparent_keeps_order(void **unused) {
    (void)unused;
    cradle_proxy_sched s;
    setup(&s, (cradle_proxy_impairment){.seed = 1}, CAP);
    for (uint32_t i = 0; i < 100; i++) assert_int_equal(submit(&s, 500, i), 1);
    assert_false(cradle_proxy_sched_pop_due(&s, 499, &out));
    for (uint32_t i = 0; i < 100; i++) {
        assert_true(cradle_proxy_sched_pop_due(&s, 500, &out));
        assert_int_equal(out_number(), i);
    }
    assert_false(cradle_proxy_sched_pop_due(&s, 1000, &out));
    assert_int_equal(s.counters.released, 100);
    assert_int_equal(s.counters.lost, 0);
}

static void test_latency_delays_exactly(void **unused) {
    (void)unused;
    cradle_proxy_sched s;
    setup(&s, (cradle_proxy_impairment){.latency_ms = 250, .seed = 2}, CAP);
    for (uint32_t i = 0; i < 10; i++) submit(&s, 1000u * i, i);
    uint64_t next = 0;
    assert_true(cradle_proxy_sched_next_release(&s, &next));
    assert_int_equal(next, 250000);
    for (uint32_t i = 0; i < 10; i++) {
        uint64_t due = 250000u + 1000u * i;
        assert_false(cradle_proxy_sched_pop_due(&s, due - 1, &out));
        assert_true(cradle_proxy_sched_pop_due(&s, due, &out));
        assert_int_equal(out_number(), i);
    }
    assert_false(cradle_proxy_sched_next_release(&s, &next));
}

static void test_jitter_within_bounds_and_sorted(void **unused) {
    (void)unused;
    cradle_proxy_sched s;
    setup(&s, (cradle_proxy_impairment){.latency_ms = 250, .jitter_ms = 250, .seed = 3}, CAP);
    const uint64_t now = 1000000;
    for (uint32_t i = 0; i < 2000; i++) submit(&s, now, i);
    uint64_t last = 0, lo = UINT64_MAX, hi = 0;
    uint32_t n = 0;
    for (;;) {
        uint64_t t = 0;
        if (!cradle_proxy_sched_next_release(&s, &t)) break;
        assert_true(cradle_proxy_sched_pop_due(&s, t, &out));
        assert_true(t >= last); /* the heap releases in time order */
        last = t;
        if (t < lo) lo = t;
        if (t > hi) hi = t;
        n++;
    }
    assert_int_equal(n, 2000);
    assert_true(lo >= now); /* 250 - 250 ms: never before the packet arrived */
    assert_true(hi <= now + 500000);
    /* The spread is used, not collapsed to the latency. */
    assert_true(lo < now + 50000);
    assert_true(hi > now + 450000);
}

static void test_loss_rate(void **unused) {
    (void)unused;
    cradle_proxy_sched s;
    setup(&s, (cradle_proxy_impairment){.loss_pct = 25, .seed = 4}, CAP);
    uint32_t queued = 0;
    for (uint32_t i = 0; i < 20000; i++) {
        queued += submit(&s, i, i);
        while (cradle_proxy_sched_pop_due(&s, i, &out)) {}
    }
    assert_int_equal(queued + s.counters.lost, 20000);
    assert_true(s.counters.lost > 4500 && s.counters.lost < 5500);

    setup(&s, (cradle_proxy_impairment){.loss_pct = 100, .seed = 4}, CAP);
    for (uint32_t i = 0; i < 100; i++) assert_int_equal(submit(&s, 0, i), 0);
    assert_false(cradle_proxy_sched_pop_due(&s, UINT64_MAX, &out));
}

static void test_duplicates(void **unused) {
    (void)unused;
    cradle_proxy_sched s;
    setup(&s, (cradle_proxy_impairment){.duplicate_pct = 100, .latency_ms = 10, .seed = 5}, CAP);
    for (uint32_t i = 0; i < 50; i++) assert_int_equal(submit(&s, 0, i), 2);
    uint32_t seen[50] = {0};
    while (cradle_proxy_sched_pop_due(&s, UINT64_MAX, &out)) seen[out_number()]++;
    for (uint32_t i = 0; i < 50; i++) assert_int_equal(seen[i], 2);

    setup(&s, (cradle_proxy_impairment){.duplicate_pct = 10, .seed = 5}, CAP);
    for (uint32_t i = 0; i < 10000; i++) {
        submit(&s, i, i);
        while (cradle_proxy_sched_pop_due(&s, i, &out)) {}
    }
    assert_true(s.counters.duplicated > 800 && s.counters.duplicated < 1200);
    assert_int_equal(s.counters.released, 10000 + s.counters.duplicated);
}

static void test_reorder_overtakes_but_delivers_all(void **unused) {
    (void)unused;
    cradle_proxy_sched s;
    setup(&s, (cradle_proxy_impairment){.latency_ms = 5, .reorder_pct = 20, .seed = 6}, CAP);
    /* One packet per millisecond: a held-back packet (1..100 ms extra) is overtaken. */
    for (uint32_t i = 0; i < 1000; i++) submit(&s, 1000u * i, i);
    uint32_t inversions = 0, last = 0, n = 0;
    bool seen[1000] = {false};
    while (cradle_proxy_sched_pop_due(&s, UINT64_MAX, &out)) {
        uint32_t v = out_number();
        if (n > 0 && v < last) inversions++;
        last = v;
        assert_false(seen[v]);
        seen[v] = true;
        n++;
    }
    assert_int_equal(n, 1000);
    assert_true(s.counters.reordered > 150 && s.counters.reordered < 250);
    assert_true(inversions > 0);
}

static void test_overflow_is_bounded(void **unused) {
    (void)unused;
    cradle_proxy_sched s;
    setup(&s, (cradle_proxy_impairment){.latency_ms = 100, .seed = 7}, 4);
    for (uint32_t i = 0; i < 6; i++) submit(&s, 0, i);
    assert_int_equal(cradle_proxy_sched_count(&s), 4);
    assert_int_equal(s.counters.overflowed, 2);
    assert_true(cradle_proxy_sched_pop_due(&s, 100000, &out));
    assert_int_equal(out_number(), 0);
    assert_int_equal(submit(&s, 0, 9), 1); /* a freed place is reused */
    uint32_t order[4], n = 0;
    while (cradle_proxy_sched_pop_due(&s, 200000, &out)) order[n++] = out_number();
    assert_int_equal(n, 4);
    assert_int_equal(order[0], 1);
    assert_int_equal(order[3], 9);
}

static void test_same_seed_same_fate(void **unused) {
    (void)unused;
    static uint64_t a[3000], b[3000];
    cradle_proxy_impairment c = {.latency_ms = 1000, .jitter_ms = 100, .loss_pct = 25, .duplicate_pct = 25,
                                 .reorder_pct = 5, .seed = 42};
    for (int round = 0; round < 3; round++) {
        cradle_proxy_sched s;
        if (round == 2) c.seed = 43;
        setup(&s, c, CAP);
        for (uint32_t i = 0; i < 1000; i++) submit(&s, 1000u * i, i);
        uint64_t *dst = round == 0 ? a : b;
        uint32_t n = 0;
        memset(dst, 0, sizeof a);
        uint64_t t = 0;
        while (cradle_proxy_sched_next_release(&s, &t) && cradle_proxy_sched_pop_due(&s, t, &out)) {
            dst[n++] = t << 12 | out_number();
        }
        if (round == 1) assert_memory_equal(a, b, sizeof a);
        if (round == 2) assert_memory_not_equal(a, b, sizeof a);
    }
}

static void test_valid_ranges(void **unused) {
    (void)unused;
    assert_true(cradle_proxy_impairment_valid(&(cradle_proxy_impairment){.loss_pct = 100}));
    assert_false(cradle_proxy_impairment_valid(&(cradle_proxy_impairment){.loss_pct = 101}));
    assert_false(cradle_proxy_impairment_valid(&(cradle_proxy_impairment){.duplicate_pct = 101}));
    assert_false(cradle_proxy_impairment_valid(&(cradle_proxy_impairment){.reorder_pct = 101}));
    assert_false(
        cradle_proxy_impairment_valid(&(cradle_proxy_impairment){.latency_ms = CRADLE_PROXY_DELAY_MAX_MS + 1}));
    assert_false(
        cradle_proxy_impairment_valid(&(cradle_proxy_impairment){.jitter_ms = CRADLE_PROXY_DELAY_MAX_MS + 1}));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transparent_keeps_order),
        cmocka_unit_test(test_latency_delays_exactly),
        cmocka_unit_test(test_jitter_within_bounds_and_sorted),
        cmocka_unit_test(test_loss_rate),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_reorder_overtakes_but_delivers_all),
        cmocka_unit_test(test_overflow_is_bounded),
        cmocka_unit_test(test_same_seed_same_fate),
        cmocka_unit_test(test_valid_ranges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
