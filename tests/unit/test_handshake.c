/* Tests for handshake (server/src/handshake.h): the server's decision on a
 * peer's first packet, for valid, expired, forged, reused, wrong-server,
 * wrong-build and short credentials, another protocol, and non-HELLOs; and
 * that an admitted session talks to the client's. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "handshake.h"

#define NOW 1800000000ull
#define CONTEXT 0x1234u

static cradle_keys issuer, other_issuer, server, other_server;
static cradle_token_seen seen[8];
static cradle_token_verifier verifier;
static uint8_t client_public[32], client_secret[32];

static void seeded(cradle_keys *k, uint8_t salt) {
    uint8_t a[32], b[32];
    for (int i = 0; i < 32; i++) {
        a[i] = (uint8_t)(i * 3 + salt);
        b[i] = (uint8_t)(i * 5 + salt + 1);
    }
    assert_int_equal(cradle_keys_from_seeds(k, a, b), 0);
}

static int setup(void **state) {
    (void)state;
    seeded(&issuer, 1);
    seeded(&other_issuer, 50);
    seeded(&server, 99);
    seeded(&other_server, 120);
    const uint8_t (*issuers)[32] = (const uint8_t (*)[32])issuer.sign_public;
    cradle_token_verifier_config c = {
        .issuers = issuers,
        .issuer_count = 1,
        .server_id = server.kx_public,
        .build_id = "build-42",
        .seen = seen,
        .seen_capacity = 8,
    };
    if (cradle_token_verifier_init(&verifier, &c) != 0) return -1;
    return cradle_secure_keypair(client_public, client_secret);
}

static cradle_token sample(uint8_t id) {
    cradle_token t;
    memset(&t, 0, sizeof t);
    memset(t.id, id, sizeof t.id);
    t.client_id = 77;
    memcpy(t.server_id, server.kx_public, 32);
    t.issued_unix = NOW - 10;
    t.expires_unix = NOW + 600;
    strcpy(t.build_id, "build-42");
    return t;
}

/* A HELLO (build id "hello-build") whose credential is the token t signed by
 * `by`, then key. Returns its size. */
static size_t hello_with(uint8_t *out, size_t capacity, const cradle_token *t, const cradle_keys *by,
                         const uint8_t key[32]) {
    uint8_t token[CRADLE_TOKEN_MAX_BYTES];
    size_t n = 0;
    assert_int_equal(cradle_token_issue(token, sizeof token, &n, t, by->sign_secret), 0);
    cradle_wire_message m = {.type = CRADLE_WIRE_HELLO};
    m.as.hello.requested_slot = CRADLE_WIRE_ANY_SLOT;
    strcpy(m.as.hello.game, "counter");
    strcpy(m.as.hello.build_id, "hello-build");
    size_t c = 0;
    assert_int_equal(cradle_token_credential(m.as.hello.credential, sizeof m.as.hello.credential, &c,
                                             token, n, key),
                     0);
    m.as.hello.credential_size = (uint16_t)c;
    size_t written = 0;
    assert_int_equal(cradle_wire_encode(out, capacity, &written, &m), 0);
    return written;
}

static cradle_handshake_action decide(cradle_handshake_result *r, cradle_secure *s,
                                      const uint8_t *data, size_t size) {
    cradle_handshake_config c = {
        .verifier = &verifier, .keys = &server, .context = CONTEXT, .now_unix = NOW,
    };
    cradle_handshake_action a = cradle_handshake_first_packet(r, s, &c, data, size);
    assert_int_equal(a, r->action);
    return a;
}

/* A sealed REFUSE for token error `code` with reason `reason`. */
static void expect_sealed_refusal(const uint8_t *hello, size_t n, int code, uint8_t reason,
                                  const char *text) {
    cradle_handshake_result r;
    cradle_secure s;
    assert_int_equal(decide(&r, &s, hello, n), CRADLE_HANDSHAKE_REFUSE);
    assert_true(r.hello);
    assert_true(r.sealed);
    assert_false(r.bad_credential);
    assert_int_equal(r.error, code);
    assert_int_equal(r.reason, reason);
    assert_string_equal(r.text, text);
    assert_int_equal(r.token.client_id, 0);
    assert_int_equal(s.role, CRADLE_SECURE_SERVER); /* keys exist to seal the REFUSE */
    cradle_secure_wipe(&s);
}

static void test_valid_token_is_admitted_and_keys_agree(void **state) {
    (void)state;
    uint8_t hello[512];
    cradle_token t = sample(1);
    size_t n = hello_with(hello, sizeof hello, &t, &issuer, client_public);
    uint64_t accepted = verifier.stats.accepted;
    cradle_handshake_result r;
    cradle_secure s;
    assert_int_equal(decide(&r, &s, hello, n), CRADLE_HANDSHAKE_ADMIT);
    assert_true(r.hello);
    assert_true(r.sealed);
    assert_false(r.bad_credential);
    assert_int_equal(r.error, 0);
    assert_int_equal(r.token.client_id, 77);
    assert_string_equal(r.token.build_id, "build-42");
    assert_int_equal(verifier.stats.accepted, accepted + 1);

    /* The client derives the mirror keys from the server's public key. */
    cradle_secure client;
    assert_int_equal(cradle_secure_client_init(&client, client_public, client_secret,
                                               server.kx_public,
                                               &(cradle_secure_config){.context = CONTEXT}),
                     0);
    uint8_t packet[64], plain[64];
    size_t sealed = 0, opened = 0;
    assert_int_equal(cradle_secure_seal(&client, packet, sizeof packet, &sealed, "ping", 4), 0);
    assert_int_equal(cradle_secure_open(&s, plain, sizeof plain, &opened, packet, sealed), 0);
    assert_int_equal(opened, 4);
    assert_memory_equal(plain, "ping", 4);
    assert_int_equal(cradle_secure_seal(&s, packet, sizeof packet, &sealed, "pong", 4), 0);
    assert_int_equal(cradle_secure_open(&client, plain, sizeof plain, &opened, packet, sealed), 0);
    assert_memory_equal(plain, "pong", 4);
    cradle_secure_wipe(&client);
    cradle_secure_wipe(&s);
}

static void test_expired_token_is_refused(void **state) {
    (void)state;
    uint8_t hello[512];
    cradle_token t = sample(2);
    t.issued_unix = NOW - 700;
    t.expires_unix = NOW - 1;
    size_t n = hello_with(hello, sizeof hello, &t, &issuer, client_public);
    uint64_t expired = verifier.stats.expired;
    expect_sealed_refusal(hello, n, CRADLE_ETOKEN_EXPIRED, CRADLE_WIRE_REFUSE_AUTH, "token_expired");
    assert_int_equal(verifier.stats.expired, expired + 1);
}

static void test_forged_token_is_refused(void **state) {
    (void)state;
    uint8_t hello[512];
    cradle_token t = sample(3);
    size_t n = hello_with(hello, sizeof hello, &t, &other_issuer, client_public);
    expect_sealed_refusal(hello, n, CRADLE_ETOKEN_SIGNATURE, CRADLE_WIRE_REFUSE_AUTH,
                          "token_signature");
    /* A trusted issuer's token altered after signing: the client id. */
    n = hello_with(hello, sizeof hello, &t, &issuer, client_public);
    /* header 2, flags 1, slot 1, str8 game 1+7, str8 build 1+11, u16 length */
    size_t token_at = 2 + 1 + 1 + 8 + 12 + 2;
    hello[token_at + 17] ^= 0x01;
    expect_sealed_refusal(hello, n, CRADLE_ETOKEN_SIGNATURE, CRADLE_WIRE_REFUSE_AUTH,
                          "token_signature");
}

static void test_reused_token_is_refused(void **state) {
    (void)state;
    uint8_t hello[512];
    cradle_token t = sample(4);
    size_t n = hello_with(hello, sizeof hello, &t, &issuer, client_public);
    cradle_handshake_result r;
    cradle_secure s;
    assert_int_equal(decide(&r, &s, hello, n), CRADLE_HANDSHAKE_ADMIT);
    cradle_secure_wipe(&s);
    expect_sealed_refusal(hello, n, CRADLE_ETOKEN_REUSED, CRADLE_WIRE_REFUSE_AUTH, "token_reused");
}

static void test_token_for_another_server_is_refused(void **state) {
    (void)state;
    uint8_t hello[512];
    cradle_token t = sample(5);
    memcpy(t.server_id, other_server.kx_public, 32);
    size_t n = hello_with(hello, sizeof hello, &t, &issuer, client_public);
    expect_sealed_refusal(hello, n, CRADLE_ETOKEN_SERVER, CRADLE_WIRE_REFUSE_AUTH, "token_server");
}

static void test_token_for_another_build_names_both(void **state) {
    (void)state;
    uint8_t hello[512];
    cradle_token t = sample(6);
    strcpy(t.build_id, "build-41");
    size_t n = hello_with(hello, sizeof hello, &t, &issuer, client_public);
    expect_sealed_refusal(hello, n, CRADLE_ETOKEN_BUILD, CRADLE_WIRE_REFUSE_BUILD,
                          "server runs build 'build-42', client has 'hello-build'");
}

/* A genuine token of another game (and so another build): the refusal
 * names both games, as a plaintext server's game thread does. */
static void test_another_game_names_both(void **state) {
    (void)state;
    uint8_t hello[512];
    cradle_token t = sample(8);
    strcpy(t.build_id, "build-41");
    size_t n = hello_with(hello, sizeof hello, &t, &issuer, client_public);
    cradle_wire_message m;
    assert_int_equal(cradle_wire_decode(&m, hello, n), 0);
    strcpy(m.as.hello.game, "othergame");
    assert_int_equal(cradle_wire_encode(hello, sizeof hello, &n, &m), 0);
    cradle_handshake_config c = {
        .verifier = &verifier, .keys = &server, .context = CONTEXT, .now_unix = NOW, .game = "counter",
    };
    cradle_handshake_result r;
    cradle_secure s;
    assert_int_equal(cradle_handshake_first_packet(&r, &s, &c, hello, n), CRADLE_HANDSHAKE_REFUSE);
    assert_int_equal(r.reason, CRADLE_WIRE_REFUSE_GAME);
    assert_string_equal(r.text, "server hosts game 'counter', client has 'othergame'");
    /* the same HELLO of this game is a build refusal */
    strcpy(m.as.hello.game, "counter");
    assert_int_equal(cradle_wire_encode(hello, sizeof hello, &n, &m), 0);
    assert_int_equal(cradle_handshake_first_packet(&r, &s, &c, hello, n), CRADLE_HANDSHAKE_REFUSE);
    assert_int_equal(r.reason, CRADLE_WIRE_REFUSE_BUILD);
}

/* A client of the server's build whose token names another build: the
 * token is what is wrong (a build mismatch would show one id twice). */
static void test_token_for_another_build_from_the_right_build(void **state) {
    (void)state;
    uint8_t hello[512];
    cradle_token t = sample(7);
    strcpy(t.build_id, "build-41");
    size_t n = hello_with(hello, sizeof hello, &t, &issuer, client_public);
    cradle_wire_message m;
    assert_int_equal(cradle_wire_decode(&m, hello, n), 0);
    strcpy(m.as.hello.build_id, "build-42"); /* the server's */
    assert_int_equal(cradle_wire_encode(hello, sizeof hello, &n, &m), 0);
    expect_sealed_refusal(hello, n, CRADLE_ETOKEN_BUILD, CRADLE_WIRE_REFUSE_AUTH, "token_build");
}

static void test_short_credential_is_refused_in_plaintext(void **state) {
    (void)state;
    cradle_wire_message m = {.type = CRADLE_WIRE_HELLO};
    m.as.hello.requested_slot = CRADLE_WIRE_ANY_SLOT;
    strcpy(m.as.hello.game, "counter");
    strcpy(m.as.hello.build_id, "b");
    m.as.hello.credential_size = CRADLE_TOKEN_MIN_BYTES + CRADLE_TOKEN_KEY_BYTES - 1;
    memset(m.as.hello.credential, 0x42, m.as.hello.credential_size);
    uint8_t hello[512];
    size_t n = 0;
    uint64_t malformed = verifier.stats.malformed;
    for (int empty = 0; empty < 2; empty++) {
        if (empty) m.as.hello.credential_size = 0;
        assert_int_equal(cradle_wire_encode(hello, sizeof hello, &n, &m), 0);
        cradle_handshake_result r;
        cradle_secure s;
        assert_int_equal(decide(&r, &s, hello, n), CRADLE_HANDSHAKE_REFUSE);
        assert_true(r.hello);
        assert_false(r.sealed);
        assert_true(r.bad_credential);
        assert_int_equal(r.reason, CRADLE_WIRE_REFUSE_AUTH);
        assert_string_equal(r.text, "needs a join token");
        assert_int_equal(s.role, 0); /* no keys */
    }
    assert_int_equal(verifier.stats.malformed, malformed); /* never reached the verifier */
}

static void test_degenerate_client_key_is_dropped(void **state) {
    (void)state;
    uint8_t hello[512], zero[32] = {0};
    cradle_token t = sample(7);
    size_t n = hello_with(hello, sizeof hello, &t, &issuer, zero);
    uint64_t accepted = verifier.stats.accepted;
    cradle_handshake_result r;
    cradle_secure s;
    assert_int_equal(decide(&r, &s, hello, n), CRADLE_HANDSHAKE_DROP);
    assert_true(r.bad_credential);
    assert_false(r.sealed);
    assert_int_equal(r.error, CRADLE_ENET_AUTH);
    assert_int_equal(s.role, 0);
    assert_int_equal(verifier.stats.accepted, accepted); /* the token is not consumed */
    n = hello_with(hello, sizeof hello, &t, &issuer, client_public);
    assert_int_equal(decide(&r, &s, hello, n), CRADLE_HANDSHAKE_ADMIT);
    cradle_secure_wipe(&s);
}

static void test_hello_of_another_protocol_is_refused_in_plaintext(void **state) {
    (void)state;
    uint8_t hello[512];
    cradle_token t = sample(8);
    size_t n = hello_with(hello, sizeof hello, &t, &issuer, client_public);
    hello[1] = (uint8_t)(CRADLE_WIRE_VERSION + 1u);
    uint64_t accepted = verifier.stats.accepted;
    cradle_handshake_result r;
    cradle_secure s;
    assert_int_equal(decide(&r, &s, hello, n), CRADLE_HANDSHAKE_REFUSE);
    assert_true(r.hello);
    assert_false(r.sealed);
    assert_false(r.bad_credential);
    assert_int_equal(r.error, CRADLE_ENET_VERSION);
    assert_int_equal(r.reason, CRADLE_WIRE_REFUSE_PROTOCOL);
    assert_string_equal(r.text, "protocol version differs");
    assert_int_equal(verifier.stats.accepted, accepted);
    /* Even a HELLO that decodes no further than its header. */
    uint8_t bare[2] = {CRADLE_WIRE_HELLO, (uint8_t)(CRADLE_WIRE_VERSION - 1u)};
    assert_int_equal(decide(&r, &s, bare, sizeof bare), CRADLE_HANDSHAKE_REFUSE);
    assert_int_equal(r.reason, CRADLE_WIRE_REFUSE_PROTOCOL);
}

static void test_anything_else_is_ignored(void **state) {
    (void)state;
    cradle_handshake_result r;
    cradle_secure s;
    uint8_t ping[16];
    size_t n = 0;
    cradle_wire_message m = {.type = CRADLE_WIRE_PING, .as.ping.echo = 5};
    assert_int_equal(cradle_wire_encode(ping, sizeof ping, &n, &m), 0);
    assert_int_equal(decide(&r, &s, ping, n), CRADLE_HANDSHAKE_IGNORE);
    assert_false(r.hello);
    assert_int_equal(r.error, CRADLE_ENET_MESSAGE);
    uint8_t garbage[3] = {0xde, 0xad, 0xbe};
    assert_int_equal(decide(&r, &s, garbage, sizeof garbage), CRADLE_HANDSHAKE_IGNORE);
    assert_int_equal(decide(&r, &s, NULL, 0), CRADLE_HANDSHAKE_IGNORE);
    assert_false(r.hello);

    /* A valid HELLO longer than max_bytes is not read at all. */
    uint8_t hello[512];
    cradle_token t = sample(9);
    n = hello_with(hello, sizeof hello, &t, &issuer, client_public);
    cradle_handshake_config c = {
        .verifier = &verifier, .keys = &server, .now_unix = NOW, .max_bytes = n - 1,
    };
    assert_int_equal(cradle_handshake_first_packet(&r, &s, &c, hello, n), CRADLE_HANDSHAKE_IGNORE);
    assert_false(r.hello);
    c.max_bytes = n;
    assert_int_equal(cradle_handshake_first_packet(&r, &s, &c, hello, n), CRADLE_HANDSHAKE_ADMIT);
    cradle_secure_wipe(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_token_is_admitted_and_keys_agree),
        cmocka_unit_test(test_expired_token_is_refused),
        cmocka_unit_test(test_forged_token_is_refused),
        cmocka_unit_test(test_reused_token_is_refused),
        cmocka_unit_test(test_token_for_another_server_is_refused),
        cmocka_unit_test(test_token_for_another_build_names_both),
        cmocka_unit_test(test_another_game_names_both),
        cmocka_unit_test(test_token_for_another_build_from_the_right_build),
        cmocka_unit_test(test_short_credential_is_refused_in_plaintext),
        cmocka_unit_test(test_degenerate_client_key_is_dropped),
        cmocka_unit_test(test_hello_of_another_protocol_is_refused_in_plaintext),
        cmocka_unit_test(test_anything_else_is_ignored),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
