/*
 * fuzz_token: the join token parser and verifier on arbitrary bytes.
 *
 * The input is tried as token bytes (decode, then verify against a fixed
 * issuer, server and build at a fixed time), as the credential (token ||
 * 32-byte client key) and as the token's text form. Nothing may crash or
 * read out of bounds; a token that verifies must re-issue to the same bytes
 * (Ed25519 is deterministic and the format has one encoding), and a token
 * that verifies once must be refused as reused the second time.
 *
 * Seeds in corpus/token were signed by the issuer below (seeds 0x11/0x22)
 * for the server with seeds 0x33/0x44, build "fuzz-build", valid at NOW.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/keys.h"
#include "cradle/token.h"

#define NOW 1800000000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool ready;
static cradle_keys issuer, server;
static cradle_token_seen seen[8];
static cradle_token_verifier verifier;

static void setup(void) {
    uint8_t a[32], b[32];
    memset(a, 0x11, 32);
    memset(b, 0x22, 32);
    if (cradle_keys_from_seeds(&issuer, a, b) != 0) abort();
    memset(a, 0x33, 32);
    memset(b, 0x44, 32);
    if (cradle_keys_from_seeds(&server, a, b) != 0) abort();
    ready = true;
}

static void check_token(const uint8_t *data, size_t size) {
    cradle_token t;
    if (cradle_token_decode(&t, data, size) == 0) {
        if (t.expires_unix <= t.issued_unix || t.build_id[0] == '\0') abort();
    }
    const uint8_t (*issuers)[32] = (const uint8_t (*)[32])issuer.sign_public;
    cradle_token_verifier_config c = {
        .issuers = issuers, .issuer_count = 1, .server_id = server.kx_public,
        .build_id = "fuzz-build", .seen = seen, .seen_capacity = 8,
    };
    if (cradle_token_verifier_init(&verifier, &c) != 0) abort();
    int rc = cradle_token_verify(&verifier, data, size, NOW, &t);
    if (rc != 0) return;
    uint8_t again[CRADLE_TOKEN_MAX_BYTES];
    size_t n = 0;
    if (cradle_token_issue(again, sizeof again, &n, &t, issuer.sign_secret) != 0) abort();
    if (n != size || memcmp(again, data, size) != 0) abort();
    if (cradle_token_verify(&verifier, data, size, NOW, NULL) != CRADLE_ETOKEN_REUSED) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    check_token(data, size);
    if (size >= CRADLE_TOKEN_KEY_BYTES) check_token(data, size - CRADLE_TOKEN_KEY_BYTES);

    char text[CRADLE_TOKEN_TEXT_SIZE + 16];
    size_t m = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, m);
    text[m] = '\0';
    uint8_t bytes[CRADLE_TOKEN_MAX_BYTES];
    size_t n = 0;
    if (cradle_token_from_text(bytes, &n, text) == 0) {
        if (n < CRADLE_TOKEN_MIN_BYTES || n > CRADLE_TOKEN_MAX_BYTES) abort();
        check_token(bytes, n);
    }
    return 0;
}
