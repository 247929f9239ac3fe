/*
 * secure: the per-connection AEAD channel (format and rules in secure.h).
 */
#include "cradle/secure.h"

#include <assert.h>
#include <sodium.h>
#include <string.h>

#include "cradle/input.h"

enum { NONCE_BYTES = 12, AD_BYTES = 11 };
_Static_assert(crypto_aead_chacha20poly1305_IETF_NPUBBYTES == NONCE_BYTES, "nonce size");
_Static_assert(crypto_aead_chacha20poly1305_IETF_ABYTES == CRADLE_SECURE_TAG_BYTES, "tag size");
_Static_assert(crypto_aead_chacha20poly1305_IETF_KEYBYTES == CRADLE_SECURE_KEY_BYTES, "key size");
_Static_assert(crypto_kx_SESSIONKEYBYTES == CRADLE_SECURE_KEY_BYTES, "session key size");
_Static_assert(CRADLE_SECURE_WINDOW % 64 == 0 && CRADLE_SECURE_WINDOW >= 64, "window size");

int cradle_secure_keypair(uint8_t public_key[CRADLE_SECURE_KEY_BYTES],
                          uint8_t secret_key[CRADLE_SECURE_KEY_BYTES]) {
    if (sodium_init() < 0) return CRADLE_EIO;
    return crypto_kx_keypair(public_key, secret_key) == 0 ? 0 : CRADLE_EIO;
}

static void setup(cradle_secure *s, uint8_t role, const cradle_secure_config *config) {
    s->role = role;
    s->context = config ? config->context : 0;
    s->counter_limit = config && config->counter_limit ? config->counter_limit
                                                       : CRADLE_SECURE_COUNTER_LIMIT;
    if (s->counter_limit > CRADLE_SECURE_COUNTER_LIMIT) s->counter_limit = CRADLE_SECURE_COUNTER_LIMIT;
}

int cradle_secure_client_init(cradle_secure *s,
                              const uint8_t client_public[CRADLE_SECURE_KEY_BYTES],
                              const uint8_t client_secret[CRADLE_SECURE_KEY_BYTES],
                              const uint8_t server_public[CRADLE_SECURE_KEY_BYTES],
                              const cradle_secure_config *config) {
    cradle_secure_wipe(s);
    if (sodium_init() < 0) return CRADLE_EIO;
    if (crypto_kx_client_session_keys(s->rx_key, s->tx_key, client_public, client_secret,
                                      server_public) != 0) {
        cradle_secure_wipe(s);
        return CRADLE_ENET_AUTH;
    }
    setup(s, CRADLE_SECURE_CLIENT, config);
    return 0;
}

int cradle_secure_server_init(cradle_secure *s,
                              const uint8_t server_public[CRADLE_SECURE_KEY_BYTES],
                              const uint8_t server_secret[CRADLE_SECURE_KEY_BYTES],
                              const uint8_t client_public[CRADLE_SECURE_KEY_BYTES],
                              const cradle_secure_config *config) {
    cradle_secure_wipe(s);
    if (sodium_init() < 0) return CRADLE_EIO;
    if (crypto_kx_server_session_keys(s->rx_key, s->tx_key, server_public, server_secret,
                                      client_public) != 0) {
        cradle_secure_wipe(s);
        return CRADLE_ENET_AUTH;
    }
    setup(s, CRADLE_SECURE_SERVER, config);
    return 0;
}

void cradle_secure_wipe(cradle_secure *s) { sodium_memzero(s, sizeof *s); }

static void make_nonce(uint8_t nonce[NONCE_BYTES], uint64_t counter, uint8_t sender) {
    memset(nonce, 0, NONCE_BYTES);
    cradle_cursor_store_u64(nonce, counter);
    nonce[8] = sender;
}

static void make_ad(uint8_t ad[AD_BYTES], uint64_t context, uint8_t sender) {
    cradle_cursor_store_u64(ad, context);
    ad[8] = CRADLE_SECURE_FORMAT;
    ad[9] = CRADLE_WIRE_VERSION;
    ad[10] = sender;
}

static uint8_t peer_role(const cradle_secure *s) {
    return s->role == CRADLE_SECURE_CLIENT ? CRADLE_SECURE_SERVER : CRADLE_SECURE_CLIENT;
}

#define LANE_BIT (1ull << 63)

int cradle_secure_seal(cradle_secure *s, void *out, size_t capacity, size_t *written,
                       const void *plain, size_t size) {
    return cradle_secure_seal_lane(s, CRADLE_SECURE_UNORDERED, out, capacity, written, plain, size);
}

int cradle_secure_seal_lane(cradle_secure *s, cradle_secure_lane_id lane, void *out, size_t capacity,
                            size_t *written, const void *plain, size_t size) {
    assert(lane == CRADLE_SECURE_UNORDERED || lane == CRADLE_SECURE_ORDERED);
    if (size > CRADLE_SECURE_PLAIN_MAX) return CRADLE_EINVAL;
    if (capacity < size + CRADLE_SECURE_OVERHEAD) return CRADLE_EFULL;
    cradle_secure_lane *l = &s->lanes[lane];
    if (l->tx_next >= s->counter_limit) return CRADLE_ESECURE_EXHAUSTED;
    uint64_t counter = l->tx_next++ | (lane == CRADLE_SECURE_ORDERED ? LANE_BIT : 0u);
    uint8_t nonce[NONCE_BYTES], ad[AD_BYTES];
    make_nonce(nonce, counter, s->role);
    make_ad(ad, s->context, s->role);
    uint8_t *p = out;
    cradle_cursor_store_u64(p, counter);
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(
        p + CRADLE_SECURE_COUNTER_BYTES, p + CRADLE_SECURE_COUNTER_BYTES + size, NULL, plain,
        size, ad, sizeof ad, NULL, nonce, s->tx_key);
    *written = size + CRADLE_SECURE_OVERHEAD;
    return 0;
}

static bool window_has(const cradle_secure_lane *s, uint64_t c) {
    uint64_t bit = c % CRADLE_SECURE_WINDOW;
    return (s->rx_seen[bit / 64] >> (bit % 64)) & 1u;
}

static void window_set(cradle_secure_lane *s, uint64_t c, bool value) {
    uint64_t bit = c % CRADLE_SECURE_WINDOW;
    uint64_t mask = 1ull << (bit % 64);
    if (value)
        s->rx_seen[bit / 64] |= mask;
    else
        s->rx_seen[bit / 64] &= ~mask;
}

/* The replay check, for an authenticated counter. Returns 0 and records it,
 * or REPLAY / OLD. */
static int window_accept(cradle_secure_lane *s, uint64_t c) {
    if (s->rx_any && c <= s->rx_top) {
        if (s->rx_top - c >= CRADLE_SECURE_WINDOW) return CRADLE_ESECURE_OLD;
        if (window_has(s, c)) return CRADLE_ESECURE_REPLAY;
    } else {
        /* Slide: counters rx_top+1 .. c enter the window unseen. */
        if (!s->rx_any || c - s->rx_top >= CRADLE_SECURE_WINDOW) {
            memset(s->rx_seen, 0, sizeof s->rx_seen);
        } else {
            for (uint64_t k = s->rx_top + 1; k < c; k++) window_set(s, k, false);
        }
        s->rx_top = c;
        s->rx_any = true;
    }
    window_set(s, c, true);
    return 0;
}

int cradle_secure_open(cradle_secure *s, void *out, size_t capacity, size_t *plain_size,
                       const void *packet, size_t size) {
    *plain_size = 0;
    if (size < CRADLE_SECURE_OVERHEAD) {
        return CRADLE_ESECURE_SHORT;
    }
    if (size > CRADLE_SECURE_PACKET_MAX) {
        return CRADLE_ESECURE_LONG;
    }
    size_t n = size - CRADLE_SECURE_OVERHEAD;
    if (capacity < n) return CRADLE_EFULL;
    const uint8_t *p = packet;
    uint64_t counter = cradle_cursor_load_u64(p);
    uint8_t sender = peer_role(s);
    uint8_t nonce[NONCE_BYTES], ad[AD_BYTES];
    make_nonce(nonce, counter, sender);
    make_ad(ad, s->context, sender);
    if (crypto_aead_chacha20poly1305_ietf_decrypt_detached(
            out, NULL, p + CRADLE_SECURE_COUNTER_BYTES, n, p + CRADLE_SECURE_COUNTER_BYTES + n,
            ad, sizeof ad, nonce, s->rx_key) != 0) {
        return CRADLE_ESECURE_AUTH;
    }
    int rc = window_accept(&s->lanes[counter >> 63], counter & ~LANE_BIT);
    if (rc != 0) {
        sodium_memzero(out, n);
        return rc;
    }
    *plain_size = n;
    return 0;
}
