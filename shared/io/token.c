/*
 * token: join tokens (format in token.h).
 */
#include "cradle/token.h"

#include <assert.h>
#include <sodium.h>
#include <string.h>

#include "cradle/input.h"

static const char CONTEXT[] = "cradle-token-v1"; /* signed with its NUL */

enum {
    OFF_VERSION = 0,
    OFF_ID = 1,
    OFF_CLIENT = 17,
    OFF_SERVER = 25,
    OFF_ISSUED = 57,
    OFF_EXPIRES = 65,
    OFF_BUILD_LEN = 73,
    OFF_BUILD = 74,
};
_Static_assert(OFF_BUILD + CRADLE_TOKEN_SIGNATURE_BYTES + 0 == CRADLE_TOKEN_FIXED_BYTES,
               "token layout");
_Static_assert(crypto_sign_BYTES == CRADLE_TOKEN_SIGNATURE_BYTES, "signature size");
_Static_assert(CRADLE_TOKEN_MAX_BYTES == 201u, "token size");

static bool build_id_ok(const char *s, size_t n) {
    if (n == 0 || n > CRADLE_GAME_BUILD_ID_MAX) return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x20 || s[i] > 0x7e) return false;
    return true;
}

/* The signed message: CONTEXT (with NUL) followed by the token's body. */
static size_t signed_message(uint8_t *out, const uint8_t *body, size_t body_size) {
    memcpy(out, CONTEXT, sizeof CONTEXT);
    memcpy(out + sizeof CONTEXT, body, body_size);
    return sizeof CONTEXT + body_size;
}

int cradle_token_issue(void *out, size_t capacity, size_t *written, const cradle_token *token,
                       const uint8_t issuer_secret[64]) {
    if (sodium_init() < 0) return CRADLE_EIO;
    size_t n = strnlen(token->build_id, sizeof token->build_id);
    if (!build_id_ok(token->build_id, n) || token->expires_unix <= token->issued_unix)
        return CRADLE_EINVAL;
    size_t body = OFF_BUILD + n;
    size_t total = body + CRADLE_TOKEN_SIGNATURE_BYTES;
    if (capacity < total) return CRADLE_EFULL;

    uint8_t *p = out;
    cradle_cursor c = cradle_cursor_writer(p, capacity);
    cradle_cursor_put_u8(&c, CRADLE_TOKEN_VERSION);
    cradle_cursor_put_bytes(&c, token->id, CRADLE_TOKEN_ID_BYTES);
    cradle_cursor_put_u64(&c, token->client_id);
    cradle_cursor_put_bytes(&c, token->server_id, CRADLE_TOKEN_KEY_BYTES);
    cradle_cursor_put_u64(&c, token->issued_unix);
    cradle_cursor_put_u64(&c, token->expires_unix);
    cradle_cursor_put_u8(&c, (uint8_t)n);
    cradle_cursor_put_bytes(&c, token->build_id, n);
    assert(!c.failed && c.pos == body);

    uint8_t message[sizeof CONTEXT + CRADLE_TOKEN_MAX_BYTES];
    size_t m = signed_message(message, p, body);
    crypto_sign_detached(p + body, NULL, message, m, issuer_secret);
    *written = total;
    return 0;
}

int cradle_token_decode(cradle_token *token, const void *data, size_t size) {
    memset(token, 0, sizeof *token);
    if (size < CRADLE_TOKEN_MIN_BYTES || size > CRADLE_TOKEN_MAX_BYTES)
        return CRADLE_ETOKEN_MALFORMED;
    cradle_cursor c = cradle_cursor_reader(data, size);
    uint8_t version = cradle_cursor_get_u8(&c);
    cradle_cursor_get_bytes(&c, token->id, CRADLE_TOKEN_ID_BYTES);
    token->client_id = cradle_cursor_get_u64(&c);
    cradle_cursor_get_bytes(&c, token->server_id, CRADLE_TOKEN_KEY_BYTES);
    token->issued_unix = cradle_cursor_get_u64(&c);
    token->expires_unix = cradle_cursor_get_u64(&c);
    size_t n = cradle_cursor_get_u8(&c);
    /* The length must account for every byte: no slack, no trailing data. */
    if (c.failed || version != CRADLE_TOKEN_VERSION ||
        size != OFF_BUILD + n + CRADLE_TOKEN_SIGNATURE_BYTES)
        goto out_malformed;
    cradle_cursor_get_bytes(&c, token->build_id, n);
    if (c.failed || !build_id_ok(token->build_id, n) ||
        token->expires_unix <= token->issued_unix)
        goto out_malformed;
    return 0;
out_malformed:
    memset(token, 0, sizeof *token);
    return CRADLE_ETOKEN_MALFORMED;
}

int cradle_token_to_text(char text[CRADLE_TOKEN_TEXT_SIZE], const void *data, size_t size) {
    if (size > CRADLE_TOKEN_MAX_BYTES) return CRADLE_EINVAL;
    if (sodium_init() < 0) return CRADLE_EIO;
    sodium_bin2base64(text, CRADLE_TOKEN_TEXT_SIZE, data, size,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    return 0;
}

int cradle_token_from_text(uint8_t out[CRADLE_TOKEN_MAX_BYTES], size_t *size, const char *text) {
    if (sodium_init() < 0) return CRADLE_EIO;
    size_t len = strnlen(text, CRADLE_TOKEN_TEXT_SIZE);
    const char *end = NULL;
    size_t n = 0;
    *size = 0;
    if (len >= CRADLE_TOKEN_TEXT_SIZE ||
        sodium_base642bin(out, CRADLE_TOKEN_MAX_BYTES, text, len, NULL, &n, &end,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
        end != text + len || n < CRADLE_TOKEN_MIN_BYTES)
        return CRADLE_ETOKEN_MALFORMED;
    *size = n;
    return 0;
}

int cradle_token_credential(void *out, size_t capacity, size_t *written, const void *token,
                            size_t token_size, const uint8_t client_key[CRADLE_TOKEN_KEY_BYTES]) {
    if (token_size < CRADLE_TOKEN_MIN_BYTES || token_size > CRADLE_TOKEN_MAX_BYTES)
        return CRADLE_EINVAL;
    if (capacity < token_size + CRADLE_TOKEN_KEY_BYTES) return CRADLE_EFULL;
    memcpy(out, token, token_size);
    memcpy((uint8_t *)out + token_size, client_key, CRADLE_TOKEN_KEY_BYTES);
    *written = token_size + CRADLE_TOKEN_KEY_BYTES;
    return 0;
}

/* ---- verifier ------------------------------------------------------------ */

int cradle_token_verifier_set_build(cradle_token_verifier *v, const char *build_id) {
    size_t n = strnlen(build_id, sizeof v->build_id);
    if (!build_id_ok(build_id, n)) return CRADLE_EINVAL;
    memcpy(v->build_id, build_id, n);
    v->build_id[n] = '\0';
    return 0;
}

int cradle_token_verifier_init(cradle_token_verifier *v,
                               const cradle_token_verifier_config *config) {
    memset(v, 0, sizeof *v);
    if (sodium_init() < 0) return CRADLE_EIO;
    if (config->issuer_count == 0 || config->issuer_count > CRADLE_TOKEN_ISSUERS_MAX ||
        config->issuers == NULL || config->server_id == NULL || config->build_id == NULL ||
        config->seen == NULL || config->seen_capacity == 0)
        return CRADLE_EINVAL;
    if (cradle_token_verifier_set_build(v, config->build_id) != 0) return CRADLE_EINVAL;
    memcpy(v->issuers, config->issuers, (size_t)config->issuer_count * CRADLE_TOKEN_KEY_BYTES);
    v->issuer_count = config->issuer_count;
    memcpy(v->server_id, config->server_id, CRADLE_TOKEN_KEY_BYTES);
    v->max_lifetime_s = config->max_lifetime_s ? config->max_lifetime_s
                                               : CRADLE_TOKEN_LIFETIME_DEFAULT;
    v->clock_skew_s = config->clock_skew_s ? config->clock_skew_s : CRADLE_TOKEN_SKEW_DEFAULT;
    v->seen = config->seen;
    v->seen_capacity = config->seen_capacity;
    memset(v->seen, 0, (size_t)v->seen_capacity * sizeof *v->seen);
    return 0;
}

static bool signed_by_trusted(const cradle_token_verifier *v, const uint8_t *data, size_t size) {
    size_t body = size - CRADLE_TOKEN_SIGNATURE_BYTES;
    uint8_t message[sizeof CONTEXT + CRADLE_TOKEN_MAX_BYTES];
    size_t m = signed_message(message, data, body);
    for (uint32_t i = 0; i < v->issuer_count; i++)
        if (crypto_sign_verify_detached(data + body, message, m, v->issuers[i]) == 0) return true;
    return false;
}

/* Returns 0 and remembers id until forget, or REUSED / CACHE_FULL. One pass:
 * a free or forgotten slot is noted, and a live equal id refuses. */
static int remember(cradle_token_verifier *v, const uint8_t *id, uint64_t now, uint64_t forget) {
    cradle_token_seen *slot = NULL;
    for (uint32_t i = 0; i < v->seen_capacity; i++) {
        cradle_token_seen *s = &v->seen[i];
        bool live = s->forget_unix > now;
        /* Token ids travel in clear: no need for a constant-time compare. */
        if (live && memcmp(s->id, id, CRADLE_TOKEN_ID_BYTES) == 0)
            return CRADLE_ETOKEN_REUSED;
        if (!live && slot == NULL) slot = s;
    }
    if (slot == NULL) return CRADLE_ETOKEN_CACHE_FULL;
    memcpy(slot->id, id, CRADLE_TOKEN_ID_BYTES);
    slot->forget_unix = forget;
    return 0;
}

int cradle_token_verify(cradle_token_verifier *v, const void *data, size_t size,
                        uint64_t now_unix, cradle_token *token) {
    cradle_token t;
    int rc = cradle_token_decode(&t, data, size);
    if (rc != 0) {
        v->stats.malformed++;
        goto out;
    }
    if (!signed_by_trusted(v, data, size)) {
        rc = CRADLE_ETOKEN_SIGNATURE;
        v->stats.signature++;
        goto out;
    }
    if (sodium_memcmp(t.server_id, v->server_id, CRADLE_TOKEN_KEY_BYTES) != 0) {
        rc = CRADLE_ETOKEN_SERVER;
        v->stats.server++;
        goto out;
    }
    if (strcmp(t.build_id, v->build_id) != 0) {
        rc = CRADLE_ETOKEN_BUILD;
        v->stats.build++;
        goto out;
    }
    /* Overflow-safe forms of issued > now + skew and expires - issued > max. */
    if (t.issued_unix > now_unix && t.issued_unix - now_unix > v->clock_skew_s) {
        rc = CRADLE_ETOKEN_FUTURE;
        v->stats.future++;
        goto out;
    }
    if (t.expires_unix - t.issued_unix > v->max_lifetime_s) {
        rc = CRADLE_ETOKEN_LIFETIME;
        v->stats.lifetime++;
        goto out;
    }
    if (now_unix >= t.expires_unix) {
        rc = CRADLE_ETOKEN_EXPIRED;
        v->stats.expired++;
        goto out;
    }
    /* Remember past expiry by the skew, so a wall clock stepped back a
     * little cannot make a used token valid again. The sum cannot overflow:
     * expires <= issued + max_lifetime <= now + skew + max_lifetime. */
    uint64_t forget = t.expires_unix + v->clock_skew_s;
    rc = remember(v, t.id, now_unix, forget < t.expires_unix ? UINT64_MAX : forget);
    if (rc == CRADLE_ETOKEN_REUSED) v->stats.reused++;
    if (rc == CRADLE_ETOKEN_CACHE_FULL) v->stats.cache_full++;
    if (rc == 0) v->stats.accepted++;
out:
    if (rc == 0 && token != NULL) *token = t;
    return rc;
}
