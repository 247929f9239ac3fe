/* The server's step stream (server/src/stream.h): what each peer is sent,
 * with and without acks, under loss, at reloads and past the history. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>


#include <string.h>

#include "cradle/ackpace.h"
#include "cradle/rng.h"
#include "cradle/wire.h"
#include "stream.h"

#define SNAP 9u
#define MS 1000000ull

/* Step s's snapshot: every byte derived from s, so content checks catch a
 * step delivered under another number. */
static void fill(uint8_t *snap, uint64_t s) {
    for (uint32_t i = 0; i < SNAP; i++) snap[i] = (uint8_t)(s * 31u + i);
}

static void append(cradle_stream *st, uint64_t s, uint8_t epoch) {
    uint8_t snap[SNAP];
    fill(snap, s);
    cradle_stream_append(st, s, snap, epoch, s % 30u == 29u, s * 1000003u);
}

static void init(cradle_stream *st, uint32_t history) {
    assert_int_equal(cradle_stream_init(st, &(cradle_stream_config){.snapshot_size = SNAP, .peers = 4,
                                                                     .history_steps = history}),
                     0);
}

/* Decodes one message and checks every step's bytes and hash; returns the
 * first step (expanded around reference) and its count. */
static void check_message(const uint8_t *bytes, size_t n, uint64_t reference, uint64_t *first, uint32_t *count,
                          uint8_t *epoch) {
    cradle_wire_message m;
    assert_int_equal(cradle_wire_decode(&m, bytes, n), 0);
    assert_int_equal(m.type, CRADLE_WIRE_STEPS);
    assert_int_equal(m.as.steps.snapshot_size, SNAP);
    *first = cradle_wire_step_expand(reference, (uint32_t)m.as.steps.first_step);
    *count = m.as.steps.count;
    if (epoch) *epoch = m.as.steps.epoch;
    uint32_t h = 0;
    for (uint32_t k = 0; k < m.as.steps.count; k++) {
        uint64_t s = *first + k;
        uint8_t want[SNAP];
        fill(want, s);
        assert_memory_equal(m.as.steps.snapshots + (size_t)k * SNAP, want, SNAP);
        if (s % 30u == 29u) {
            assert_true(h < m.as.steps.hash_count);
            assert_int_equal(m.as.steps.hashes[h].offset, k);
            assert_true(m.as.steps.hashes[h].hash == s * 1000003u);
            h++;
        }
    }
    assert_int_equal(h, m.as.steps.hash_count);
}

static void test_init_refuses_bad_config(void **state) {
    (void)state;
    cradle_stream st;
    assert_int_equal(cradle_stream_init(&st, &(cradle_stream_config){.snapshot_size = 0, .peers = 1}), CRADLE_EINVAL);
    assert_int_equal(cradle_stream_init(&st, &(cradle_stream_config){.snapshot_size = 9, .peers = 0}), CRADLE_EINVAL);
    assert_int_equal(cradle_stream_init(&st, &(cradle_stream_config){.snapshot_size = 9, .peers = 1, .history_steps = 300}),
                     CRADLE_EINVAL);
    assert_int_equal(cradle_stream_init(&st, &(cradle_stream_config){.snapshot_size = 4096, .peers = 1}), 0);
    assert_int_equal(st.capacity, 1024); /* 4 MiB of history */
    assert_true(st.payload_max >= 4096u + CRADLE_WIRE_STEPS_HEADER_BYTES);
    cradle_stream_deinit(&st);
}

/* Acked at once, every message carries exactly the one new step. */
static void test_clean_link_sends_each_step_once(void **state) {
    (void)state;
    cradle_stream st;
    init(&st, 256);
    cradle_stream_start(&st, 1, 100, 0);
    uint8_t out[2048];
    size_t n = 0;
    for (uint64_t s = 100; s < 700; s++) {
        append(&st, s, 0);
        uint64_t now = s * 16 * MS;
        assert_int_equal(cradle_stream_next(&st, 1, now, 50 * MS, out, sizeof out, &n), 0);
        uint64_t first;
        uint32_t count;
        check_message(out, n, s, &first, &count, NULL);
        assert_true(first == s);
        assert_int_equal(count, 1);
        assert_int_equal(cradle_stream_next(&st, 1, now, 50 * MS, out, sizeof out, &n), 0);
        assert_int_equal(n, 0);
        cradle_stream_ack(&st, 1, s + 1, now);
        assert_true(cradle_stream_done(&st, 1));
    }
    assert_true(st.stats.steps_new == 600 && st.stats.steps_repeated == 0 && st.stats.repairs == 0);
    cradle_stream_deinit(&st);
}

/* Without acks each message repeats the unacknowledged steps before the
 * new one, as many as fit, newest kept. */
static void test_unacked_steps_ride_along(void **state) {
    (void)state;
    cradle_stream st;
    assert_int_equal(cradle_stream_init(&st, &(cradle_stream_config){.snapshot_size = SNAP, .peers = 2,
                                                                      .history_steps = 256, .payload_max = 100}),
                     0);
    cradle_stream_start(&st, 0, 0, 0);
    uint8_t out[2048];
    size_t n = 0;
    for (uint64_t s = 0; s < 40; s++) {
        append(&st, s, 0);
        assert_int_equal(cradle_stream_next(&st, 0, 0, 50 * MS, out, sizeof out, &n), 0);
        assert_true(n > 0 && n <= 100);
        uint64_t first;
        uint32_t count;
        check_message(out, n, s, &first, &count, NULL);
        assert_true(first + count == s + 1); /* ends with the new step */
        assert_true(first == 0 || count >= 8); /* filled up to the payload */
    }
    cradle_stream_ack(&st, 0, 35, 0);
    append(&st, 40, 0);
    assert_int_equal(cradle_stream_next(&st, 0, 0, 50 * MS, out, sizeof out, &n), 0);
    uint64_t first;
    uint32_t count;
    check_message(out, n, 40, &first, &count, NULL);
    assert_true(first == 35 && count == 6); /* nothing below the ack */
    cradle_stream_deinit(&st);
}

/* A burst of new steps (a catch-up) is split into several messages, none
 * lost. */
static void test_burst_is_split(void **state) {
    (void)state;
    cradle_stream st;
    init(&st, 1024);
    cradle_stream_start(&st, 2, 0, 0);
    for (uint64_t s = 0; s < 500; s++) append(&st, s, 0);
    uint8_t out[2048];
    size_t n = 0;
    uint64_t next = 0;
    int messages = 0;
    while (cradle_stream_next(&st, 2, 0, 50 * MS, out, sizeof out, &n) == 0 && n > 0) {
        assert_true(n <= st.payload_max);
        uint64_t first;
        uint32_t count;
        check_message(out, n, next, &first, &count, NULL);
        assert_true(first <= next && first + count > next); /* new steps, unacked ones before */
        next = first + count;
        messages++;
        assert_true(messages < 100);
    }
    assert_true(next == 500);
    assert_true(messages >= 8);
    cradle_stream_deinit(&st);
}

/* The last step's datagram is lost and the server pauses: after repair_ns
 * without ack progress the steps are sent again; while the ack stays, each
 * repair waits twice as long as the one before, up to a second; an ack that
 * moves makes the next stall wait repair_ns again. */
static void test_stalled_ack_is_repaired(void **state) {
    (void)state;
    cradle_stream st;
    init(&st, 256);
    cradle_stream_start(&st, 0, 0, 0);
    uint8_t out[2048];
    size_t n = 0;
    for (uint64_t s = 0; s < 10; s++) {
        append(&st, s, 0);
        assert_int_equal(cradle_stream_next(&st, 0, s * MS, 50 * MS, out, sizeof out, &n), 0);
        if (s < 9) cradle_stream_ack(&st, 0, s + 1, s * MS); /* step 9's message is lost */
    }
    assert_int_equal(cradle_stream_next(&st, 0, 20 * MS, 50 * MS, out, sizeof out, &n), 0);
    assert_int_equal(n, 0); /* too early */
    assert_int_equal(cradle_stream_next(&st, 0, 60 * MS, 50 * MS, out, sizeof out, &n), 0);
    uint64_t first;
    uint32_t count;
    check_message(out, n, 9, &first, &count, NULL);
    assert_true(first == 9 && count == 1);
    assert_int_equal(cradle_stream_next(&st, 0, 61 * MS, 50 * MS, out, sizeof out, &n), 0);
    assert_int_equal(n, 0); /* one repair per interval */
    assert_int_equal(cradle_stream_next(&st, 0, 111 * MS, 50 * MS, out, sizeof out, &n), 0);
    assert_int_equal(n, 0); /* the second waits twice the stall: 100 ms */
    assert_int_equal(cradle_stream_next(&st, 0, 160 * MS, 50 * MS, out, sizeof out, &n), 0);
    assert_true(n > 0);
    assert_int_equal(st.stats.repairs, 2);
    /* then 200, 400, 800 ms, and no more than a second apart from there */
    uint64_t expected[] = {360, 760, 1560, 2560, 3560};
    uint64_t at = 160;
    for (size_t k = 0; k < sizeof expected / sizeof *expected; k++) {
        for (at++; at < expected[k]; at++) {
            assert_int_equal(cradle_stream_next(&st, 0, at * MS, 50 * MS, out, sizeof out, &n), 0);
            assert_int_equal(n, 0);
        }
        assert_int_equal(cradle_stream_next(&st, 0, at * MS, 50 * MS, out, sizeof out, &n), 0);
        assert_true(n > 0);
    }
    assert_int_equal(st.stats.repairs, 7);
    cradle_stream_ack(&st, 0, 10, 3600 * MS);
    assert_int_equal(cradle_stream_next(&st, 0, 4000 * MS, 50 * MS, out, sizeof out, &n), 0);
    assert_int_equal(n, 0);
    /* a new stall after progress waits repair_ns alone again */
    append(&st, 10, 0);
    assert_int_equal(cradle_stream_next(&st, 0, 4000 * MS, 50 * MS, out, sizeof out, &n), 0);
    assert_true(n > 0); /* step 10, lost */
    assert_int_equal(cradle_stream_next(&st, 0, 4049 * MS, 50 * MS, out, sizeof out, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(cradle_stream_next(&st, 0, 4050 * MS, 50 * MS, out, sizeof out, &n), 0);
    check_message(out, n, 10, &first, &count, NULL);
    assert_true(first == 10 && count == 1);
    assert_int_equal(st.stats.repairs, 8);
    cradle_stream_deinit(&st);
}

/* A client whose WELCOME took seconds to arrive dropped every step sent
 * before it; once it acks, repairs must bring it to the live step quickly
 * (several messages each), not one message per round trip, which would be
 * slower than the steps are made. */
static void test_late_welcome_catches_up(void **state) {
    (void)state;
    cradle_stream st;
    init(&st, 4096);
    cradle_stream_start(&st, 0, 0, 0);
    uint8_t out[2048];
    size_t n = 0;
    uint64_t s = 0, now = 0;
    for (; s < 2400; s++, now += 16 * MS) { /* 38 s of steps, all lost to the client */
        append(&st, s, 0);
        while (cradle_stream_next(&st, 0, now, 2000 * MS, out, sizeof out, &n) == 0 && n > 0) {
        }
    }
    uint64_t repairs_before = st.stats.repairs; /* one per interval while nothing arrived */
    assert_true(repairs_before >= 15);
    /* From here the link is perfect and instant; the client keeps early steps. */
    static bool have[4096];
    memset(have, 0, sizeof have);
    uint64_t received_next = 0;
    uint64_t caught_up_at = 0;
    for (; s < 2400 + 1200; s++, now += 16 * MS) {
        append(&st, s, 0);
        while (cradle_stream_next(&st, 0, now, 2000 * MS, out, sizeof out, &n) == 0 && n > 0) {
            uint64_t first;
            uint32_t count;
            check_message(out, n, received_next, &first, &count, NULL);
            for (uint32_t k = 0; k < count; k++) have[(first + k) % 4096] = true;
            while (received_next <= s && have[received_next % 4096]) have[received_next++ % 4096] = false;
            cradle_stream_ack(&st, 0, received_next, now);
        }
        if (!caught_up_at && received_next == s + 1) caught_up_at = s;
    }
    assert_true(caught_up_at != 0);
    /* Within two repair intervals (2 s = 125 steps) of the first ack chance. */
    assert_true(caught_up_at - 2400 <= 250);
    assert_true(st.stats.repairs - repairs_before <= 1); /* one repair brought it all */
    cradle_stream_deinit(&st);
}

/* Steps of two builds never share a message. */
static void test_epochs_are_not_mixed(void **state) {
    (void)state;
    cradle_stream st;
    init(&st, 256);
    cradle_stream_start(&st, 0, 0, 0);
    for (uint64_t s = 0; s < 20; s++) append(&st, s, s < 12 ? 3 : 4);
    uint8_t out[2048];
    size_t n = 0;
    uint64_t first;
    uint32_t count;
    uint8_t epoch;
    assert_int_equal(cradle_stream_next(&st, 0, 0, 50 * MS, out, sizeof out, &n), 0);
    check_message(out, n, 0, &first, &count, &epoch);
    assert_true(first == 0 && count == 12 && epoch == 3);
    assert_int_equal(cradle_stream_next(&st, 0, 0, 50 * MS, out, sizeof out, &n), 0);
    check_message(out, n, 12, &first, &count, &epoch);
    assert_true(first == 12 && count == 8 && epoch == 4); /* no epoch-3 steps ride along */
    cradle_stream_deinit(&st);
}

/* Acks from the peer are untrusted: beyond what was sent they are counted
 * and ignored; old ones change nothing. */
static void test_acks_are_checked(void **state) {
    (void)state;
    cradle_stream st;
    init(&st, 256);
    cradle_stream_start(&st, 0, 0, 0);
    for (uint64_t s = 0; s < 5; s++) append(&st, s, 0);
    cradle_stream_ack(&st, 0, 3, 0); /* nothing sent yet */
    assert_int_equal(st.stats.bad_acks, 1);
    assert_true(st.peers[0].acked == 0);
    uint8_t out[2048];
    size_t n = 0;
    assert_int_equal(cradle_stream_next(&st, 0, 0, 50 * MS, out, sizeof out, &n), 0);
    cradle_stream_ack(&st, 0, 4, 0);
    cradle_stream_ack(&st, 0, 2, 0);
    assert_true(st.peers[0].acked == 4);
    cradle_stream_ack(&st, 0, UINT64_MAX, 0);
    assert_int_equal(st.stats.bad_acks, 2);
    assert_false(cradle_stream_done(&st, 0));
    cradle_stream_ack(&st, 0, 5, 0);
    assert_true(cradle_stream_done(&st, 0));
    cradle_stream_deinit(&st);
}

/* A peer that confirms nothing while the history turns over is reported
 * once and stopped. */
static void test_peer_past_the_history_is_dropped(void **state) {
    (void)state;
    cradle_stream st;
    init(&st, 256);
    cradle_stream_start(&st, 3, 0, 0);
    cradle_stream_start(&st, 1, 0, 0);
    uint8_t out[2048];
    size_t n = 0;
    for (uint64_t s = 0; s < 300; s++) {
        append(&st, s, 0);
        if (s == 0) assert_int_equal(cradle_stream_next(&st, 3, 0, 50 * MS, out, sizeof out, &n), 0);
        assert_int_equal(cradle_stream_next(&st, 1, 0, 50 * MS, out, sizeof out, &n), 0);
        cradle_stream_ack(&st, 1, s + 1, 0);
    }
    assert_int_equal(cradle_stream_next(&st, 3, 0, 50 * MS, out, sizeof out, &n), CRADLE_EFULL);
    assert_false(cradle_stream_active(&st, 3));
    assert_int_equal(cradle_stream_next(&st, 3, 0, 50 * MS, out, sizeof out, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(st.stats.fell_behind, 1);
    assert_true(cradle_stream_active(&st, 1)); /* the other peer is unaffected */
    cradle_stream_deinit(&st);
}

/* A simulated link with 25% loss both ways, duplicates and up to 30 steps of
 * delay: the client, which keeps out-of-order steps and acks the first one
 * it lacks, receives every step in order, and its ack keeps up. */
static void lossy_link_delivers_everything(bool spectator) {
    cradle_stream st;
    init(&st, 1024);
    cradle_stream_start(&st, 0, 0, 0);
    /* A spectator's acks are paced as cradle-client paces them. */
    cradle_ackpace pace;
    cradle_ackpace_init(&pace, spectator, 60, 0);
    if (spectator) cradle_stream_pace(&st, 0, pace.every, pace.wait_ns);
    enum { STEPS = 6000, DELAY = 64, Q = 512 };
    static uint8_t flight[DELAY][2048];
    static size_t flight_n[DELAY];
    static uint64_t ack_flight[DELAY];
    memset(flight_n, 0, sizeof flight_n);
    memset(ack_flight, 0, sizeof ack_flight);
    static bool have[Q];
    memset(have, 0, sizeof have);
    uint64_t received_next = 0, max_lag = 0;
    cradle_rng rng;
    cradle_rng_seed(&rng, 7, 1);
    uint8_t out[2048];
    size_t n = 0;
    for (uint64_t t = 0; t < STEPS + 400; t++) {
        uint64_t now = t * 16 * MS;
        if (t < STEPS) append(&st, t, 0);
        while (cradle_stream_next(&st, 0, now, 120 * MS, out, sizeof out, &n) == 0 && n > 0) {
            if (cradle_rng_next(&rng) % 4u == 0) continue; /* lost */
            int copies = cradle_rng_next(&rng) % 10u == 0 ? 2 : 1; /* duplicated */
            for (int c = 0; c < copies; c++) {
                uint32_t at = (uint32_t)((t + 1u + cradle_rng_next(&rng) % 30u) % DELAY);
                if (flight_n[at] == 0) {
                    memcpy(flight[at], out, n);
                    flight_n[at] = n;
                } /* else: the slot is busy; this copy is lost too */
            }
        }
        uint32_t slot = (uint32_t)(t % DELAY);
        bool arrived = flight_n[slot] != 0;
        if (arrived) {
            uint64_t first;
            uint32_t count;
            check_message(flight[slot], flight_n[slot], received_next, &first, &count, NULL);
            bool fresh = false;
            for (uint32_t k = 0; k < count; k++)
                if (first + k >= received_next && first + k < received_next + Q && !have[(first + k) % Q]) {
                    have[(first + k) % Q] = true;
                    fresh = true;
                }
            if (!fresh) cradle_ackpace_repeated(&pace); /* as netclient.c: the ack was lost */
            while (have[received_next % Q]) have[received_next++ % Q] = false;
            flight_n[slot] = 0;
        }
        /* A player acks with every STEPS that arrives (its inputs ride along). */
        if (spectator ? cradle_ackpace_due(&pace, received_next, now) : arrived) {
            cradle_ackpace_sent(&pace, received_next);
            /* The client's ack, itself on a lossy path. */
            if (cradle_rng_next(&rng) % 4u != 0) ack_flight[(t + 1u + cradle_rng_next(&rng) % 30u) % DELAY] = received_next;
        }
        if (ack_flight[slot]) {
            cradle_stream_ack(&st, 0, ack_flight[slot], now);
            ack_flight[slot] = 0;
        }
        if (t < STEPS && t - (received_next < t ? received_next : t) > max_lag) max_lag = t - received_next;
    }
    assert_true(received_next == STEPS);
    assert_true(cradle_stream_done(&st, 0));
    assert_true(max_lag < 200); /* never far behind: no growing backlog */
    assert_int_equal(st.stats.fell_behind, 0);
    cradle_stream_deinit(&st);
}

static void test_lossy_link_delivers_everything(void **state) {
    (void)state;
    lossy_link_delivers_everything(false);
}

static void test_lossy_link_delivers_everything_to_a_spectator(void **state) {
    (void)state;
    lossy_link_delivers_everything(true);
}

/* A peer that acks every other step: the step sent just before the new one
 * is in flight, not lost, so on a clean link each message still carries
 * one step; two steps without an ack are, and ride along again. */
static void test_paced_peer_gets_no_needless_redundancy(void **state) {
    (void)state;
    cradle_stream st;
    init(&st, 256);
    cradle_stream_start(&st, 3, 0, 0);
    cradle_stream_pace(&st, 3, 2, 25 * MS);
    uint8_t out[2048];
    size_t n = 0;
    uint64_t first;
    uint32_t count;
    for (uint64_t s = 0; s < 100; s++) {
        append(&st, s, 0);
        uint64_t now = s * 16 * MS;
        assert_int_equal(cradle_stream_next(&st, 3, now, 50 * MS, out, sizeof out, &n), 0);
        check_message(out, n, s, &first, &count, NULL);
        assert_true(first == s && count == 1);
        if (s % 2u == 1u) cradle_stream_ack(&st, 3, s + 1, now);
    }
    assert_true(st.stats.steps_repeated == 0);
    /* Step 100's datagram is lost: no ack at 101; 102 carries 100 and 101. */
    append(&st, 100, 0);
    assert_int_equal(cradle_stream_next(&st, 3, 100 * 16 * MS, 50 * MS, out, sizeof out, &n), 0);
    append(&st, 101, 0);
    assert_int_equal(cradle_stream_next(&st, 3, 101 * 16 * MS, 50 * MS, out, sizeof out, &n), 0);
    check_message(out, n, 101, &first, &count, NULL);
    assert_true(first == 101 && count == 1);
    append(&st, 102, 0);
    assert_int_equal(cradle_stream_next(&st, 3, 102 * 16 * MS, 50 * MS, out, sizeof out, &n), 0);
    check_message(out, n, 102, &first, &count, NULL);
    assert_true(first == 100 && count == 3);
    cradle_stream_deinit(&st);
}

/* A paced peer may hold its last step's ack for ack_wait_ns: the repair
 * waits that long on top of repair_ns. */
static void test_paced_peer_repair_waits_for_its_ack(void **state) {
    (void)state;
    cradle_stream st;
    init(&st, 256);
    cradle_stream_start(&st, 0, 0, 0);
    cradle_stream_pace(&st, 0, 2, 25 * MS);
    uint8_t out[2048];
    size_t n = 0;
    for (uint64_t s = 0; s < 3; s++) {
        append(&st, s, 0);
        assert_int_equal(cradle_stream_next(&st, 0, 0, 50 * MS, out, sizeof out, &n), 0);
    }
    cradle_stream_ack(&st, 0, 2, 0); /* step 2 held: the stream paused */
    assert_int_equal(cradle_stream_next(&st, 0, 60 * MS, 50 * MS, out, sizeof out, &n), 0);
    assert_int_equal(n, 0); /* past repair_ns, within its ack wait */
    assert_int_equal(cradle_stream_next(&st, 0, 76 * MS, 50 * MS, out, sizeof out, &n), 0);
    uint64_t first;
    uint32_t count;
    check_message(out, n, 2, &first, &count, NULL);
    assert_true(first == 2 && count == 1);
    assert_int_equal(st.stats.repairs, 1);
    cradle_stream_deinit(&st);
}

static void test_step_expand(void **state) {
    (void)state;
    assert_true(cradle_wire_step_expand(0, 5) == 5);
    assert_true(cradle_wire_step_expand(0, 0xFFFFFFFFu) == 0xFFFFFFFFull); /* never below 0 */
    assert_true(cradle_wire_step_expand(0x100000005ull, 0xFFFFFFF0u) == 0xFFFFFFF0ull);
    assert_true(cradle_wire_step_expand(0xFFFFFFF0ull, 3) == 0x100000003ull);
    assert_true(cradle_wire_step_expand(0x500000000ull, 0) == 0x500000000ull);
    assert_true(cradle_wire_step_expand(UINT64_MAX - 2u, 0) == 0xFFFFFFFF00000000ull);
    for (uint64_t ref = 0x7FFF0000ull; ref < 0x80010000ull; ref += 4099u)
        for (int64_t d = -100000; d <= 100000; d += 997) {
            uint64_t s = (uint64_t)((int64_t)ref + d);
            assert_true(cradle_wire_step_expand(ref, (uint32_t)s) == s);
        }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_refuses_bad_config),
        cmocka_unit_test(test_clean_link_sends_each_step_once),
        cmocka_unit_test(test_unacked_steps_ride_along),
        cmocka_unit_test(test_burst_is_split),
        cmocka_unit_test(test_stalled_ack_is_repaired),
        cmocka_unit_test(test_late_welcome_catches_up),
        cmocka_unit_test(test_epochs_are_not_mixed),
        cmocka_unit_test(test_acks_are_checked),
        cmocka_unit_test(test_peer_past_the_history_is_dropped),
        cmocka_unit_test(test_lossy_link_delivers_everything),
        cmocka_unit_test(test_lossy_link_delivers_everything_to_a_spectator),
        cmocka_unit_test(test_paced_peer_gets_no_needless_redundancy),
        cmocka_unit_test(test_paced_peer_repair_waits_for_its_ack),
        cmocka_unit_test(test_step_expand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
