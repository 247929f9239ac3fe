#ifndef CRADLE_TOKEN_H
#define CRADLE_TOKEN_H
/*
 * token: join tokens, the credential a client presents in HELLO.
 *
 * An issuer (a matchmaker, a web backend, or the cradle-keys tool) signs a
 * token with its Ed25519 key; the server admits a client only with a token
 * signed by an issuer it trusts, for this server, this game build, not
 * expired, and never seen before (usable once).
 *
 * TOKEN FORMAT (version 1), little-endian, 139..201 bytes:
 *     0   1  version (1)
 *     1  16  token id: random, unique per token (the "usable once" key)
 *    17   8  client id (u64, chosen by the issuer)
 *    25  32  server id: the server's public X25519 (crypto_kx) key
 *    57   8  issued at, Unix seconds
 *    65   8  expires at, Unix seconds (> issued at)
 *    73   1  n: build id length, 1..CRADLE_GAME_BUILD_ID_MAX
 *    74   n  build id, printable ASCII (0x20..0x7e)
 *  74+n  64  Ed25519 signature of "cradle-token-v1" NUL || bytes 0..74+n-1
 *
 * CREDENTIAL (HELLO's credential field, <= CRADLE_WIRE_CREDENTIAL_MAX):
 * the token bytes followed by the client's 32-byte ephemeral X25519 public
 * key for this connection (see secure.h). The key is not inside the signed
 * token: the issuer need not know it. A token seen on the wire can thus be
 * raced by an on-path attacker with their own key, but it is usable once, so
 * that is a denial of service only, which an on-path attacker has anyway.
 *
 * Tokens are plaintext (the id, client id and build are not secret); their
 * text form is unpadded URL-safe base64.
 *
 * The verifier is pure apart from libsodium: the time is a parameter, and
 * its memory of used token ids is a caller-provided fixed array.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/game_abi.h"

#define CRADLE_TOKEN_VERSION 1u
#define CRADLE_TOKEN_ID_BYTES 16u
#define CRADLE_TOKEN_KEY_BYTES 32u       /* server id, issuer key, client key */
#define CRADLE_TOKEN_SIGNATURE_BYTES 64u
#define CRADLE_TOKEN_FIXED_BYTES (1u + 16u + 8u + 32u + 8u + 8u + 1u + 64u)
#define CRADLE_TOKEN_MIN_BYTES (CRADLE_TOKEN_FIXED_BYTES + 1u)
#define CRADLE_TOKEN_MAX_BYTES (CRADLE_TOKEN_FIXED_BYTES + CRADLE_GAME_BUILD_ID_MAX)
#define CRADLE_TOKEN_CREDENTIAL_MAX (CRADLE_TOKEN_MAX_BYTES + CRADLE_TOKEN_KEY_BYTES)
/* Text form: unpadded URL-safe base64 of the largest token, plus a NUL. */
#define CRADLE_TOKEN_TEXT_SIZE (((CRADLE_TOKEN_MAX_BYTES + 2u) / 3u) * 4u + 1u)
#define CRADLE_TOKEN_ISSUERS_MAX 8u
#define CRADLE_TOKEN_LIFETIME_DEFAULT 86400u /* seconds */
#define CRADLE_TOKEN_SKEW_DEFAULT 60u        /* seconds */

typedef struct cradle_token {
    uint8_t id[CRADLE_TOKEN_ID_BYTES];
    uint64_t client_id;
    uint8_t server_id[CRADLE_TOKEN_KEY_BYTES];
    uint64_t issued_unix;
    uint64_t expires_unix;
    char build_id[CRADLE_GAME_BUILD_ID_MAX + 1];
} cradle_token;

/* Encodes and signs *token with the issuer's Ed25519 secret key (libsodium's
 * 64-byte form, cradle_keys.sign_secret) into out. The caller fills id with
 * random bytes. Returns 0, CRADLE_EINVAL (empty, long or non-printable
 * build id, expires <= issued), CRADLE_EFULL (capacity too small: use
 * CRADLE_TOKEN_MAX_BYTES) or CRADLE_EIO (libsodium unavailable). */
CRADLE_MUST_CHECK int cradle_token_issue(void *out, size_t capacity, size_t *written,
                                         const cradle_token *token,
                                         const uint8_t issuer_secret[64]);

/* Decodes the fields of size bytes without checking the signature (for
 * tools that show a token). Returns 0 or CRADLE_ETOKEN_MALFORMED (wrong
 * length or version, bad build id, expires <= issued). */
CRADLE_MUST_CHECK int cradle_token_decode(cradle_token *token, const void *data, size_t size);

/* Text form (unpadded URL-safe base64) of size token bytes into text
 * (CRADLE_TOKEN_TEXT_SIZE bytes). Returns 0 or CRADLE_EINVAL (size too big). */
CRADLE_MUST_CHECK int cradle_token_to_text(char text[CRADLE_TOKEN_TEXT_SIZE], const void *data,
                                           size_t size);

/* Parses the text form into out (CRADLE_TOKEN_MAX_BYTES) and stores the byte
 * count. Surrounding whitespace is not accepted. Returns 0 or
 * CRADLE_ETOKEN_MALFORMED. */
CRADLE_MUST_CHECK int cradle_token_from_text(uint8_t out[CRADLE_TOKEN_MAX_BYTES], size_t *size,
                                             const char *text);

/* HELLO's credential: token bytes || client ephemeral public key. Returns 0,
 * CRADLE_EINVAL (token size outside MIN..MAX) or CRADLE_EFULL. */
CRADLE_MUST_CHECK int cradle_token_credential(void *out, size_t capacity, size_t *written,
                                              const void *token, size_t token_size,
                                              const uint8_t client_key[CRADLE_TOKEN_KEY_BYTES]);

/* ---- verifier (the server) ---------------------------------------------- */

/* One remembered token id; the verifier's caller-provided memory. */
typedef struct cradle_token_seen {
    uint8_t id[CRADLE_TOKEN_ID_BYTES];
    uint64_t forget_unix; /* 0 = free slot */
} cradle_token_seen;

/* Zero means default where noted. */
typedef struct cradle_token_verifier_config {
    const uint8_t (*issuers)[CRADLE_TOKEN_KEY_BYTES]; /* trusted Ed25519 public keys */
    uint32_t issuer_count;                           /* 1..CRADLE_TOKEN_ISSUERS_MAX */
    const uint8_t *server_id;  /* 32 bytes: this server's public kx key */
    const char *build_id;      /* the build tokens must name */
    uint64_t max_lifetime_s;   /* expires - issued limit; 0 = one day */
    uint64_t clock_skew_s;     /* tolerated issuer clock lead; 0 = 60 s */
    cradle_token_seen *seen;   /* memory of used ids, outlives the verifier */
    uint32_t seen_capacity;    /* >= 1; size it for the joins of one max_lifetime */
} cradle_token_verifier_config;

/* One counter per outcome of cradle_token_verify. */
typedef struct cradle_token_stats {
    uint64_t accepted;
    uint64_t malformed, signature, expired, future, lifetime, server, build, reused, cache_full;
} cradle_token_stats;

/* The caller owns the struct; read stats, change nothing. */
typedef struct cradle_token_verifier {
    uint8_t issuers[CRADLE_TOKEN_ISSUERS_MAX][CRADLE_TOKEN_KEY_BYTES];
    uint32_t issuer_count;
    uint8_t server_id[CRADLE_TOKEN_KEY_BYTES];
    char build_id[CRADLE_GAME_BUILD_ID_MAX + 1];
    uint64_t max_lifetime_s, clock_skew_s;
    cradle_token_seen *seen;
    uint32_t seen_capacity;
    cradle_token_stats stats;
} cradle_token_verifier;

/* Copies the configuration (issuers, server id, build) and clears the seen
 * array. Returns 0 or CRADLE_EINVAL (no issuer or too many, bad build id,
 * no seen memory) or CRADLE_EIO (libsodium unavailable). */
CRADLE_MUST_CHECK int cradle_token_verifier_init(cradle_token_verifier *v,
                                                 const cradle_token_verifier_config *config);

/* After a game reload: tokens must now name build_id. Returns 0 or
 * CRADLE_EINVAL. */
CRADLE_MUST_CHECK int cradle_token_verifier_set_build(cradle_token_verifier *v,
                                                      const char *build_id);

/* Verifies the size token bytes (the credential minus its last 32 bytes) at
 * now_unix and, when valid, consumes it: the same token id is refused until
 * it expires. Checks in order and returns the first failure, counting it in
 * v->stats: CRADLE_ETOKEN_MALFORMED, CRADLE_ETOKEN_SIGNATURE (forged,
 * altered, or no trusted issuer signed it), CRADLE_ETOKEN_SERVER,
 * CRADLE_ETOKEN_BUILD, CRADLE_ETOKEN_FUTURE (issued more than clock_skew_s
 * ahead), CRADLE_ETOKEN_LIFETIME, CRADLE_ETOKEN_EXPIRED (now >= expires),
 * CRADLE_ETOKEN_REUSED, CRADLE_ETOKEN_CACHE_FULL (fails closed: more live
 * tokens than seen_capacity). On success *token (may be NULL) holds the
 * fields. Cost: one Ed25519 verification per trusted issuer tried, plus a
 * scan of the seen array. */
CRADLE_MUST_CHECK int cradle_token_verify(cradle_token_verifier *v, const void *data, size_t size,
                                          uint64_t now_unix, cradle_token *token);

#endif
