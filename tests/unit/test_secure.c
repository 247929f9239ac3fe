#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "cradle/keys.h"
#include "cradle/secure.h"

static cradle_keys server_keys;
static uint8_t client_pk[32], client_sk[32];
static cradle_secure client, server;
static uint8_t packet[CRADLE_SECURE_PACKET_MAX + 8];
static uint8_t plain[CRADLE_SECURE_PACKET_MAX];

static void ephemeral(uint8_t pk[32], uint8_t sk[32], uint8_t salt) {
    uint8_t seed[32];
    memset(seed, salt, sizeof seed);
    assert_int_equal(crypto_kx_seed_keypair(pk, sk, seed), 0);
}

static int setup(void **state) {
    (void)state;
    uint8_t a[32], b[32];
    memset(a, 7, sizeof a);
    memset(b, 8, sizeof b);
    if (cradle_keys_from_seeds(&server_keys, a, b) != 0) return -1;
    ephemeral(client_pk, client_sk, 1);
    cradle_secure_config cfg = {.context = 0xC0FFEE};
    if (cradle_secure_client_init(&client, client_pk, client_sk, server_keys.kx_public, &cfg) != 0)
        return -1;
    return cradle_secure_server_init(&server, server_keys.kx_public, server_keys.kx_secret,
                                     client_pk, &cfg);
}

static size_t seal(cradle_secure *s, const char *text) {
    size_t n = 0;
    assert_int_equal(cradle_secure_seal(s, packet, sizeof packet, &n, text, strlen(text)), 0);
    assert_int_equal(n, strlen(text) + CRADLE_SECURE_OVERHEAD);
    return n;
}

static int open_packet(cradle_secure *s, const uint8_t *p, size_t n) {
    size_t got = 0;
    return cradle_secure_open(s, plain, sizeof plain, &got, p, n);
}

static void test_round_trip_both_ways(void **state) {
    (void)state;
    for (int i = 0; i < 3; i++) {
        size_t n = seal(&client, "INPUT from the client");
        size_t got = 0;
        assert_int_equal(cradle_secure_open(&server, plain, sizeof plain, &got, packet, n), 0);
        assert_int_equal(got, strlen("INPUT from the client"));
        assert_memory_equal(plain, "INPUT from the client", got);
        assert_int_equal(cradle_cursor_load_u64(packet), (uint64_t)i); /* counter in clear */
        n = seal(&server, "STEPS from the server");
        assert_int_equal(cradle_secure_open(&client, plain, sizeof plain, &got, packet, n), 0);
        assert_memory_equal(plain, "STEPS from the server", got);
    }
    /* The ciphertext is not the plaintext. */
    size_t n = seal(&client, "AAAAAAAAAAAAAAAA");
    for (size_t i = 0; i + 8 <= n; i++) assert_memory_not_equal(packet + i, "AAAAAAAA", 8);
    /* An empty message is fine too. */
    assert_int_equal(cradle_secure_seal(&client, packet, sizeof packet, &n, "", 0), 0);
    assert_int_equal(n, CRADLE_SECURE_OVERHEAD);
    assert_int_equal(open_packet(&server, packet, n), 0);
}

static void test_wrong_server_key_cannot_talk(void **state) {
    (void)state;
    /* A client that pinned another key (an impostor server): nothing opens. */
    cradle_keys impostor;
    uint8_t a[32], b[32];
    memset(a, 9, sizeof a);
    memset(b, 9, sizeof b);
    assert_int_equal(cradle_keys_from_seeds(&impostor, a, b), 0);
    cradle_secure fake_server, pinned_client;
    cradle_secure_config cfg = {.context = 0xC0FFEE};
    assert_int_equal(cradle_secure_server_init(&fake_server, impostor.kx_public,
                                               impostor.kx_secret, client_pk, &cfg), 0);
    size_t n = seal(&fake_server, "WELCOME from an impostor");
    assert_int_equal(open_packet(&client, packet, n), CRADLE_ESECURE_AUTH);
    /* The pinned client still trusts only the real server. */
    assert_int_equal(cradle_secure_client_init(&pinned_client, client_pk, client_sk,
                                               impostor.kx_public, &cfg), 0);
    n = seal(&pinned_client, "HELLO impostor");
    assert_int_equal(open_packet(&server, packet, n), CRADLE_ESECURE_AUTH);
    cradle_secure_wipe(&fake_server);
    cradle_secure_wipe(&pinned_client);
}

static void test_reflection_and_context_are_refused(void **state) {
    (void)state;
    size_t n = seal(&client, "reflect me");
    /* Sent back to its sender: other key and direction. */
    assert_int_equal(open_packet(&client, packet, n), CRADLE_ESECURE_AUTH);
    /* Another connection context. */
    cradle_secure other;
    cradle_secure_config cfg = {.context = 0xC0FFEF};
    assert_int_equal(cradle_secure_server_init(&other, server_keys.kx_public,
                                               server_keys.kx_secret, client_pk, &cfg), 0);
    assert_int_equal(open_packet(&other, packet, n), CRADLE_ESECURE_AUTH);
    assert_int_equal(open_packet(&server, packet, n), 0);
}

static void test_every_tampered_byte_is_refused(void **state) {
    (void)state;
    size_t n = seal(&client, "a sixty byte STEPS message would be about this long, roughly");
    uint8_t bad[CRADLE_SECURE_PACKET_MAX];
    for (size_t i = 0; i < n; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            memcpy(bad, packet, n);
            bad[i] ^= (uint8_t)(1u << bit);
            assert_int_equal(open_packet(&server, bad, n), CRADLE_ESECURE_AUTH);
        }
    }
    /* Failures did not disturb the window: the real packet opens. */
    assert_int_equal(open_packet(&server, packet, n), 0);
}

static void test_truncated_and_oversized(void **state) {
    (void)state;
    size_t n = seal(&client, "truncate me");
    for (size_t k = 0; k < CRADLE_SECURE_OVERHEAD; k++)
        assert_int_equal(open_packet(&server, packet, k), CRADLE_ESECURE_SHORT);
    for (size_t k = CRADLE_SECURE_OVERHEAD; k < n; k++)
        assert_int_equal(open_packet(&server, packet, k), CRADLE_ESECURE_AUTH);
    assert_int_equal(open_packet(&server, packet, CRADLE_SECURE_PACKET_MAX + 1),
                     CRADLE_ESECURE_LONG);
    /* A too-small output buffer is the caller's error, and nothing is consumed. */
    size_t got;
    assert_int_equal(cradle_secure_open(&server, plain, n - CRADLE_SECURE_OVERHEAD - 1, &got,
                                        packet, n), CRADLE_EFULL);
    assert_int_equal(open_packet(&server, packet, n), 0);
    /* Sealing refuses oversized plaintext and small outputs. */
    static uint8_t big[CRADLE_SECURE_PLAIN_MAX + 1];
    assert_int_equal(cradle_secure_seal(&client, packet, sizeof packet, &got, big, sizeof big),
                     CRADLE_EINVAL);
    assert_int_equal(cradle_secure_seal(&client, packet, 30, &got, big, 7), CRADLE_EFULL);
    assert_int_equal(cradle_secure_seal(&client, packet, sizeof packet, &got, big,
                                        CRADLE_SECURE_PLAIN_MAX), 0);
    assert_int_equal(got, CRADLE_SECURE_PACKET_MAX);
    assert_int_equal(open_packet(&server, packet, got), 0);
}

/* Packets with counters 0..count-1, kept for out-of-order delivery. */
#define KEPT 600
static uint8_t kept[KEPT][64];
static size_t kept_size[KEPT];

static void seal_many(size_t count) {
    for (size_t i = 0; i < count; i++) {
        char text[32];
        snprintf(text, sizeof text, "message %zu", i);
        assert_int_equal(cradle_secure_seal(&client, kept[i], sizeof kept[i], &kept_size[i], text,
                                            strlen(text)), 0);
    }
}

static int deliver(size_t i) { return open_packet(&server, kept[i], kept_size[i]); }

static void test_replay_window(void **state) {
    (void)state;
    seal_many(KEPT);
    assert_int_equal(deliver(0), 0);
    assert_int_equal(deliver(0), CRADLE_ESECURE_REPLAY); /* duplicate */
    assert_int_equal(deliver(300), 0);                   /* jump ahead */
    const size_t edge = 300 - (CRADLE_SECURE_WINDOW - 1);
    assert_int_equal(deliver(edge - 1), CRADLE_ESECURE_OLD); /* just behind the window */
    assert_int_equal(deliver(edge), 0);                      /* exactly at its edge */
    assert_int_equal(deliver(edge), CRADLE_ESECURE_REPLAY);
    assert_int_equal(deliver(0), CRADLE_ESECURE_OLD);        /* seen and now too old */
    for (size_t i = 299; i > edge; i--) assert_int_equal(deliver(i), 0); /* late, in order */
    for (size_t i = edge; i <= 300; i++) assert_int_equal(deliver(i), CRADLE_ESECURE_REPLAY);
    /* Counters skipped by a slide are unseen: 301 and 303 arrive, then 302. */
    assert_int_equal(deliver(303), 0);
    assert_int_equal(deliver(301), 0);
    assert_int_equal(deliver(302), 0);
    assert_int_equal(deliver(302), CRADLE_ESECURE_REPLAY);
    /* A slide of exactly the window clears everything behind. */
    assert_int_equal(deliver(303 + CRADLE_SECURE_WINDOW), 0);
    assert_int_equal(deliver(303), CRADLE_ESECURE_OLD);
    assert_int_equal(deliver(304), 0);
}

static void test_far_future_counter(void **state) {
    (void)state;
    seal_many(4);
    assert_int_equal(deliver(0), 0);
    client.lanes[0].tx_next = 1000000000000ull; /* as if a trillion packets were lost */
    size_t n = seal(&client, "from the far future");
    assert_int_equal(open_packet(&server, packet, n), 0);
    assert_int_equal(server.lanes[0].rx_top, 1000000000000ull);
    assert_int_equal(deliver(1), CRADLE_ESECURE_OLD);
    assert_int_equal(open_packet(&server, packet, n), CRADLE_ESECURE_REPLAY);
}

/* A reliable message sealed long before it arrives (held behind ENet's
 * retransmissions while many datagrams pass) opens: the ordered lane has its
 * own counters and window. */
static void test_ordered_lane_is_not_old(void **state) {
    (void)state;
    static uint8_t held[8][64];
    size_t held_n[8], n = 0;
    for (int i = 0; i < 8; i++) {
        assert_int_equal(cradle_secure_seal_lane(&client, CRADLE_SECURE_ORDERED, held[i], sizeof held[i],
                                                 &held_n[i], "reliable", 8),
                         0);
        assert_true(held[i][7] & 0x80u); /* the lane bit */
    }
    for (int i = 0; i < 1000; i++) {
        n = seal(&client, "datagram");
        assert_int_equal(open_packet(&server, packet, n), 0);
    }
    for (int i = 0; i < 8; i++) assert_int_equal(open_packet(&server, held[i], held_n[i]), 0);
    assert_int_equal(open_packet(&server, held[3], held_n[3]), CRADLE_ESECURE_REPLAY);
    assert_int_equal(server.lanes[CRADLE_SECURE_ORDERED].rx_top, 7);
    assert_int_equal(server.lanes[CRADLE_SECURE_UNORDERED].rx_top, 999);
    /* Flipping the lane bit is an authentication failure, not another lane. */
    held[0][7] ^= 0x80u;
    assert_int_equal(open_packet(&server, held[0], held_n[0]), CRADLE_ESECURE_AUTH);
}

static void test_nonce_exhaustion(void **state) {
    (void)state;
    cradle_secure small;
    cradle_secure_config cfg = {.context = 0xC0FFEE, .counter_limit = 3};
    assert_int_equal(cradle_secure_client_init(&small, client_pk, client_sk,
                                               server_keys.kx_public, &cfg), 0);
    size_t n;
    for (int i = 0; i < 3; i++)
        assert_int_equal(cradle_secure_seal(&small, packet, sizeof packet, &n, "x", 1), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(cradle_secure_seal(&small, packet, sizeof packet, &n, "x", 1),
                         CRADLE_ESECURE_EXHAUSTED);
    assert_int_equal(small.lanes[0].tx_next, 3); /* no counter was burnt or reused */

    /* The default limit is 2^63. */
    assert_int_equal(client.counter_limit, CRADLE_SECURE_COUNTER_LIMIT);
    client.lanes[0].tx_next = CRADLE_SECURE_COUNTER_LIMIT - 1;
    assert_int_equal(cradle_secure_seal(&client, packet, sizeof packet, &n, "x", 1), 0);
    assert_int_equal(open_packet(&server, packet, n), 0);
    assert_int_equal(cradle_secure_seal(&client, packet, sizeof packet, &n, "x", 1),
                     CRADLE_ESECURE_EXHAUSTED);
}

static void test_new_connection_new_keys(void **state) {
    (void)state;
    /* A server restart: the client reconnects with a new ephemeral key and
     * both counters restart at 0, yet nothing from before opens. */
    size_t n = seal(&server, "WELCOME, first connection");
    uint8_t old[128];
    memcpy(old, packet, n);
    uint8_t pk2[32], sk2[32];
    ephemeral(pk2, sk2, 2);
    cradle_secure c2, s2;
    cradle_secure_config cfg = {.context = 0xC0FFEE};
    assert_int_equal(cradle_secure_client_init(&c2, pk2, sk2, server_keys.kx_public, &cfg), 0);
    assert_int_equal(cradle_secure_server_init(&s2, server_keys.kx_public, server_keys.kx_secret,
                                               pk2, &cfg), 0);
    assert_memory_not_equal(c2.tx_key, client.tx_key, 32);
    assert_memory_not_equal(s2.tx_key, server.tx_key, 32);
    assert_memory_equal(c2.tx_key, s2.rx_key, 32);
    assert_memory_equal(c2.rx_key, s2.tx_key, 32);
    size_t got;
    assert_int_equal(cradle_secure_open(&c2, plain, sizeof plain, &got, old, n),
                     CRADLE_ESECURE_AUTH);
    n = seal(&s2, "WELCOME, second connection");
    assert_int_equal(cradle_cursor_load_u64(packet), 0);
    assert_int_equal(cradle_secure_open(&c2, plain, sizeof plain, &got, packet, n), 0);
    /* Random key pairs differ each time. */
    uint8_t r1[32], r2[32], s1k[32], s2k[32];
    assert_int_equal(cradle_secure_keypair(r1, s1k), 0);
    assert_int_equal(cradle_secure_keypair(r2, s2k), 0);
    assert_memory_not_equal(r1, r2, 32);
    cradle_secure_wipe(&c2);
    uint8_t zero[sizeof c2];
    memset(zero, 0, sizeof zero);
    assert_memory_equal(&c2, zero, sizeof c2);
}

static void test_degenerate_peer_key(void **state) {
    (void)state;
    uint8_t zero[32] = {0};
    cradle_secure s;
    assert_int_equal(cradle_secure_server_init(&s, server_keys.kx_public, server_keys.kx_secret,
                                               zero, NULL), CRADLE_ENET_AUTH);
    assert_int_equal(cradle_secure_client_init(&s, client_pk, client_sk, zero, NULL),
                     CRADLE_ENET_AUTH);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_round_trip_both_ways, setup),
        cmocka_unit_test_setup(test_wrong_server_key_cannot_talk, setup),
        cmocka_unit_test_setup(test_reflection_and_context_are_refused, setup),
        cmocka_unit_test_setup(test_every_tampered_byte_is_refused, setup),
        cmocka_unit_test_setup(test_truncated_and_oversized, setup),
        cmocka_unit_test_setup(test_replay_window, setup),
        cmocka_unit_test_setup(test_far_future_counter, setup),
        cmocka_unit_test_setup(test_ordered_lane_is_not_old, setup),
        cmocka_unit_test_setup(test_nonce_exhaustion, setup),
        cmocka_unit_test_setup(test_new_connection_new_keys, setup),
        cmocka_unit_test_setup(test_degenerate_peer_key, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
