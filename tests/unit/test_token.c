#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cradle/keys.h"
#include "cradle/token.h"

#define NOW 1800000000ull

static cradle_keys issuer, other_issuer, server;
static cradle_token_seen seen[4];
static cradle_token_verifier v;

static void seeded(cradle_keys *k, uint8_t salt) {
    uint8_t a[32], b[32];
    for (int i = 0; i < 32; i++) {
        a[i] = (uint8_t)(i * 3 + salt);
        b[i] = (uint8_t)(i * 5 + salt + 1);
    }
    assert_int_equal(cradle_keys_from_seeds(k, a, b), 0);
}

static cradle_token sample(uint8_t id) {
    cradle_token t;
    memset(&t, 0, sizeof t);
    memset(t.id, id, sizeof t.id);
    t.id[15] = 0x5a;
    t.client_id = 0x1122334455667788ull;
    memcpy(t.server_id, server.kx_public, 32);
    t.issued_unix = NOW - 10;
    t.expires_unix = NOW + 60;
    strcpy(t.build_id, "build-42");
    return t;
}

static size_t issue(uint8_t *out, const cradle_token *t, const cradle_keys *by) {
    size_t n = 0;
    assert_int_equal(cradle_token_issue(out, CRADLE_TOKEN_MAX_BYTES, &n, t, by->sign_secret), 0);
    return n;
}

static int setup(void **state) {
    (void)state;
    seeded(&issuer, 1);
    seeded(&other_issuer, 50);
    seeded(&server, 99);
    const uint8_t (*issuers)[32] = (const uint8_t (*)[32])issuer.sign_public;
    cradle_token_verifier_config c = {
        .issuers = issuers,
        .issuer_count = 1,
        .server_id = server.kx_public,
        .build_id = "build-42",
        .max_lifetime_s = 3600,
        .clock_skew_s = 30,
        .seen = seen,
        .seen_capacity = 4,
    };
    return cradle_token_verifier_init(&v, &c);
}

static void test_layout_and_decode(void **state) {
    (void)state;
    uint8_t buf[CRADLE_TOKEN_MAX_BYTES];
    cradle_token t = sample(7);
    size_t n = issue(buf, &t, &issuer);
    assert_int_equal(n, CRADLE_TOKEN_FIXED_BYTES + strlen("build-42"));
    assert_int_equal(buf[0], 1);
    assert_memory_equal(buf + 1, t.id, 16);
    assert_int_equal(buf[17], 0x88); /* client id, little-endian */
    assert_int_equal(buf[24], 0x11);
    assert_memory_equal(buf + 25, server.kx_public, 32);
    assert_int_equal(buf[73], 8);
    assert_memory_equal(buf + 74, "build-42", 8);
    cradle_token d;
    assert_int_equal(cradle_token_decode(&d, buf, n), 0);
    assert_memory_equal(&d, &t, sizeof d);

    /* Largest build id fits the HELLO credential with the client key. */
    assert_true(CRADLE_TOKEN_CREDENTIAL_MAX <= 256);
    memset(t.build_id, 'b', CRADLE_GAME_BUILD_ID_MAX);
    t.build_id[CRADLE_GAME_BUILD_ID_MAX] = '\0';
    assert_int_equal(issue(buf, &t, &issuer), CRADLE_TOKEN_MAX_BYTES);
}

static void test_issue_refuses_bad_fields(void **state) {
    (void)state;
    uint8_t buf[CRADLE_TOKEN_MAX_BYTES];
    size_t n;
    cradle_token t = sample(1);
    t.expires_unix = t.issued_unix;
    assert_int_equal(cradle_token_issue(buf, sizeof buf, &n, &t, issuer.sign_secret), CRADLE_EINVAL);
    t = sample(1);
    t.build_id[0] = '\0';
    assert_int_equal(cradle_token_issue(buf, sizeof buf, &n, &t, issuer.sign_secret), CRADLE_EINVAL);
    t = sample(1);
    t.build_id[2] = '\n';
    assert_int_equal(cradle_token_issue(buf, sizeof buf, &n, &t, issuer.sign_secret), CRADLE_EINVAL);
    t = sample(1);
    assert_int_equal(cradle_token_issue(buf, 100, &n, &t, issuer.sign_secret), CRADLE_EFULL);
}

static void test_valid_token_is_accepted_once(void **state) {
    (void)state;
    uint8_t buf[CRADLE_TOKEN_MAX_BYTES];
    cradle_token t = sample(1), out;
    size_t n = issue(buf, &t, &issuer);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW, &out), 0);
    assert_int_equal(out.client_id, t.client_id);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW + 1, NULL), CRADLE_ETOKEN_REUSED);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW + 59, NULL), CRADLE_ETOKEN_REUSED);
    /* After expiry it is refused as expired, whether remembered or not. */
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW + 60, NULL), CRADLE_ETOKEN_EXPIRED);
    assert_int_equal(v.stats.accepted, 1);
    assert_int_equal(v.stats.reused, 2);
    assert_int_equal(v.stats.expired, 1);
}

static void test_forged_and_altered_tokens(void **state) {
    (void)state;
    uint8_t buf[CRADLE_TOKEN_MAX_BYTES], bad[CRADLE_TOKEN_MAX_BYTES];
    cradle_token t = sample(2);
    size_t n = issue(buf, &t, &issuer);
    /* Any changed byte is refused: malformed (version, length byte) or signature. */
    for (size_t i = 0; i < n; i++) {
        memcpy(bad, buf, n);
        bad[i] ^= 0x01;
        int rc = cradle_token_verify(&v, bad, n, NOW, NULL);
        if (i == 0 || i == 73)
            assert_int_equal(rc, CRADLE_ETOKEN_MALFORMED);
        else if (i >= 57 && i < 73) /* times: may break expires > issued */
            assert_true(rc == CRADLE_ETOKEN_SIGNATURE || rc == CRADLE_ETOKEN_MALFORMED);
        else
            assert_int_equal(rc, CRADLE_ETOKEN_SIGNATURE);
    }
    assert_int_equal(v.stats.signature + v.stats.malformed, n);
    assert_int_equal(v.stats.accepted, 0);
    /* Signed by a key the server does not trust. */
    size_t m = issue(bad, &t, &other_issuer);
    assert_int_equal(cradle_token_verify(&v, bad, m, NOW, NULL), CRADLE_ETOKEN_SIGNATURE);
    /* Untouched, it still works (none of the forgeries consumed it). */
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW, NULL), 0);
}

static void test_truncated_and_oversized(void **state) {
    (void)state;
    uint8_t buf[CRADLE_TOKEN_MAX_BYTES + 8];
    cradle_token t = sample(3);
    size_t n = issue(buf, &t, &issuer);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(cradle_token_verify(&v, buf, k, NOW, NULL), CRADLE_ETOKEN_MALFORMED);
    buf[n] = 0;
    assert_int_equal(cradle_token_verify(&v, buf, n + 1, NOW, NULL), CRADLE_ETOKEN_MALFORMED);
    assert_int_equal(cradle_token_verify(&v, buf, sizeof buf, NOW, NULL), CRADLE_ETOKEN_MALFORMED);
    assert_int_equal(v.stats.malformed, n + 2);
    assert_int_equal(v.stats.accepted, 0);
}

static void test_time_server_and_build_checks(void **state) {
    (void)state;
    uint8_t buf[CRADLE_TOKEN_MAX_BYTES];
    size_t n;
    cradle_token t;

    t = sample(10);
    t.expires_unix = NOW; /* expires exactly now */
    n = issue(buf, &t, &issuer);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW, NULL), CRADLE_ETOKEN_EXPIRED);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW - 1, NULL), 0);

    t = sample(11);
    t.issued_unix = NOW + 31; /* beyond the 30 s skew */
    t.expires_unix = NOW + 100;
    n = issue(buf, &t, &issuer);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW, NULL), CRADLE_ETOKEN_FUTURE);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW + 1, NULL), 0); /* within skew */

    t = sample(12);
    t.expires_unix = t.issued_unix + 3601;
    n = issue(buf, &t, &issuer);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW, NULL), CRADLE_ETOKEN_LIFETIME);

    t = sample(13);
    t.server_id[0] ^= 1;
    n = issue(buf, &t, &issuer);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW, NULL), CRADLE_ETOKEN_SERVER);

    t = sample(14);
    strcpy(t.build_id, "build-43");
    n = issue(buf, &t, &issuer);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW, NULL), CRADLE_ETOKEN_BUILD);
    /* After a reload to that build the same token is good. */
    assert_int_equal(cradle_token_verifier_set_build(&v, "build-43"), 0);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW, NULL), 0);

    t = sample(15);
    t.issued_unix = UINT64_MAX - 5; /* overflow bait */
    t.expires_unix = UINT64_MAX;
    strcpy(t.build_id, "build-43");
    n = issue(buf, &t, &issuer);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW, NULL), CRADLE_ETOKEN_FUTURE);

    assert_int_equal(v.stats.expired, 1);
    assert_int_equal(v.stats.future, 2);
    assert_int_equal(v.stats.lifetime, 1);
    assert_int_equal(v.stats.server, 1);
    assert_int_equal(v.stats.build, 1);
    assert_int_equal(v.stats.accepted, 3);
}

static void test_seen_memory_is_bounded_and_fails_closed(void **state) {
    (void)state;
    uint8_t buf[CRADLE_TOKEN_MAX_BYTES];
    for (uint8_t i = 0; i < 4; i++) {
        cradle_token t = sample((uint8_t)(20 + i));
        size_t n = issue(buf, &t, &issuer);
        assert_int_equal(cradle_token_verify(&v, buf, n, NOW, NULL), 0);
    }
    cradle_token t = sample(30);
    t.expires_unix = NOW + 3000;
    size_t n = issue(buf, &t, &issuer);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW, NULL), CRADLE_ETOKEN_CACHE_FULL);
    assert_int_equal(v.stats.cache_full, 1);
    /* The others expire at NOW + 60 and are forgotten skew (30 s) later. */
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW + 89, NULL), CRADLE_ETOKEN_CACHE_FULL);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW + 90, NULL), 0);
    assert_int_equal(cradle_token_verify(&v, buf, n, NOW + 91, NULL), CRADLE_ETOKEN_REUSED);
}

static void test_text_and_credential(void **state) {
    (void)state;
    uint8_t buf[CRADLE_TOKEN_MAX_BYTES], back[CRADLE_TOKEN_MAX_BYTES];
    cradle_token t = sample(40);
    size_t n = issue(buf, &t, &issuer), m = 0;
    char text[CRADLE_TOKEN_TEXT_SIZE];
    assert_int_equal(cradle_token_to_text(text, buf, n), 0);
    assert_null(strchr(text, '='));
    assert_null(strchr(text, '+'));
    assert_null(strchr(text, '/'));
    assert_int_equal(cradle_token_from_text(back, &m, text), 0);
    assert_int_equal(m, n);
    assert_memory_equal(back, buf, n);

    char bad[CRADLE_TOKEN_TEXT_SIZE + 8];
    snprintf(bad, sizeof bad, "%s ", text);
    assert_int_equal(cradle_token_from_text(back, &m, bad), CRADLE_ETOKEN_MALFORMED);
    snprintf(bad, sizeof bad, "%s", text);
    bad[5] = '*';
    assert_int_equal(cradle_token_from_text(back, &m, bad), CRADLE_ETOKEN_MALFORMED);
    assert_int_equal(cradle_token_from_text(back, &m, "AAAA"), CRADLE_ETOKEN_MALFORMED);

    uint8_t key[32], cred[CRADLE_TOKEN_CREDENTIAL_MAX];
    memset(key, 0xEE, sizeof key);
    size_t w = 0;
    assert_int_equal(cradle_token_credential(cred, sizeof cred, &w, buf, n, key), 0);
    assert_int_equal(w, n + 32);
    assert_memory_equal(cred, buf, n);
    assert_memory_equal(cred + n, key, 32);
    assert_int_equal(cradle_token_credential(cred, n + 31, &w, buf, n, key), CRADLE_EFULL);
    assert_int_equal(cradle_token_credential(cred, sizeof cred, &w, buf, 10, key), CRADLE_EINVAL);
}

static void test_verifier_init_checks(void **state) {
    (void)state;
    cradle_token_verifier w;
    cradle_token_verifier_config c = {0};
    assert_int_equal(cradle_token_verifier_init(&w, &c), CRADLE_EINVAL);
    c.issuers = (const uint8_t (*)[32])issuer.sign_public;
    c.issuer_count = 1;
    c.server_id = server.kx_public;
    c.build_id = "";
    c.seen = seen;
    c.seen_capacity = 4;
    assert_int_equal(cradle_token_verifier_init(&w, &c), CRADLE_EINVAL);
    c.build_id = "x";
    c.issuer_count = CRADLE_TOKEN_ISSUERS_MAX + 1;
    assert_int_equal(cradle_token_verifier_init(&w, &c), CRADLE_EINVAL);
    /* Two trusted issuers: either signs. */
    uint8_t two[2][32];
    memcpy(two[0], other_issuer.sign_public, 32);
    memcpy(two[1], issuer.sign_public, 32);
    c.issuers = (const uint8_t (*)[32])two;
    c.issuer_count = 2;
    c.build_id = "build-42";
    assert_int_equal(cradle_token_verifier_init(&w, &c), 0);
    assert_int_equal(w.max_lifetime_s, CRADLE_TOKEN_LIFETIME_DEFAULT);
    assert_int_equal(w.clock_skew_s, CRADLE_TOKEN_SKEW_DEFAULT);
    uint8_t buf[CRADLE_TOKEN_MAX_BYTES];
    cradle_token t = sample(50);
    size_t n = issue(buf, &t, &issuer);
    assert_int_equal(cradle_token_verify(&w, buf, n, NOW, NULL), 0);
    t = sample(51);
    n = issue(buf, &t, &other_issuer);
    assert_int_equal(cradle_token_verify(&w, buf, n, NOW, NULL), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_layout_and_decode, setup),
        cmocka_unit_test_setup(test_issue_refuses_bad_fields, setup),
        cmocka_unit_test_setup(test_valid_token_is_accepted_once, setup),
        cmocka_unit_test_setup(test_forged_and_altered_tokens, setup),
        cmocka_unit_test_setup(test_truncated_and_oversized, setup),
        cmocka_unit_test_setup(test_time_server_and_build_checks, setup),
        cmocka_unit_test_setup(test_seen_memory_is_bounded_and_fails_closed, setup),
        cmocka_unit_test_setup(test_text_and_credential, setup),
        cmocka_unit_test_setup(test_verifier_init_checks, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
