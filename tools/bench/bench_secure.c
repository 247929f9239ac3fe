/*
 * bench_secure: figures for the security building blocks.
 *   - secure channel: seal and open of a 60-byte (a typical STEPS) and a
 *     1 KiB message, next to bare libsodium ChaCha20-Poly1305 in the same
 *     run (the difference is the channel's own cost: header, nonce, AD,
 *     replay window);
 *   - rejections: a forged packet (fails the tag) and a replayed one (passes
 *     the tag, caught by the window);
 *   - handshake: session key derivation per connection (crypto_kx);
 *   - join token: verify (one Ed25519 check + the seen-id scan) and issue;
 *   - rate limiter: one allow() over a 4096-entry table.
 * Build in Release (tools/bench.sh) and run; it prints, it asserts nothing.
 */
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cradle/keys.h"
#include "cradle/ratelimit.h"
#include "cradle/secure.h"
#include "cradle/token.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile uint64_t sink;

static void report(const char *what, double seconds, uint64_t n) {
    printf("  %-44s %9.1f ns  (%.2f M/s)\n", what, seconds * 1e9 / (double)n,
           (double)n / seconds / 1e6);
}

static cradle_keys server_keys, issuer_keys;
static uint8_t client_pk[32], client_sk[32];
static uint8_t packet[CRADLE_SECURE_PACKET_MAX], plain[CRADLE_SECURE_PACKET_MAX];

static void channel(size_t size, uint64_t n) {
    cradle_secure c, s;
    if (cradle_secure_client_init(&c, client_pk, client_sk, server_keys.kx_public, NULL) != 0 ||
        cradle_secure_server_init(&s, server_keys.kx_public, server_keys.kx_secret, client_pk,
                                  NULL) != 0)
        exit(1);
    uint8_t msg[1024];
    memset(msg, 0x5a, sizeof msg);
    size_t w = 0, got = 0;
    double t0 = now_s();
    for (uint64_t i = 0; i < n; i++) {
        if (cradle_secure_seal(&c, packet, sizeof packet, &w, msg, size) != 0) exit(1);
        sink += packet[w - 1];
    }
    double t1 = now_s();
    /* open: seal outside the timed region would need storage; time pairs instead. */
    c.lanes[0].tx_next = 0;
    double t2 = now_s();
    for (uint64_t i = 0; i < n; i++) {
        if (cradle_secure_seal(&c, packet, sizeof packet, &w, msg, size) != 0) exit(1);
        if (cradle_secure_open(&s, plain, sizeof plain, &got, packet, w) != 0) exit(1);
        sink += got;
    }
    double t3 = now_s();
    /* bare libsodium, same sizes, same work */
    uint8_t key[32], nonce[12] = {0}, mac[16];
    memset(key, 1, sizeof key);
    double t4 = now_s();
    for (uint64_t i = 0; i < n; i++) {
        memcpy(nonce, &i, sizeof i);
        crypto_aead_chacha20poly1305_ietf_encrypt_detached(packet, mac, NULL, msg, size, NULL, 0,
                                                           NULL, nonce, key);
        if (crypto_aead_chacha20poly1305_ietf_decrypt_detached(plain, NULL, packet, size, mac,
                                                               NULL, 0, nonce, key) != 0)
            exit(1);
        sink += plain[0];
    }
    double t5 = now_s();
    char label[96];
    snprintf(label, sizeof label, "seal %zu B", size);
    report(label, t1 - t0, n);
    snprintf(label, sizeof label, "seal + open %zu B (the per-packet cost)", size);
    report(label, t3 - t2, n);
    snprintf(label, sizeof label, "bare libsodium encrypt + decrypt %zu B", size);
    report(label, t5 - t4, n);

    /* rejections */
    if (cradle_secure_seal(&c, packet, sizeof packet, &w, msg, size) != 0) exit(1);
    if (cradle_secure_open(&s, plain, sizeof plain, &got, packet, w) != 0) exit(1);
    double t6 = now_s();
    for (uint64_t i = 0; i < n; i++)
        sink += (uint64_t)-cradle_secure_open(&s, plain, sizeof plain, &got, packet, w);
    double t7 = now_s();
    packet[w - 1] ^= 1;
    for (uint64_t i = 0; i < n; i++)
        sink += (uint64_t)-cradle_secure_open(&s, plain, sizeof plain, &got, packet, w);
    double t8 = now_s();
    snprintf(label, sizeof label, "open replayed %zu B (tag ok, window refuses)", size);
    report(label, t7 - t6, n);
    snprintf(label, sizeof label, "open forged %zu B (tag fails)", size);
    report(label, t8 - t7, n);
    cradle_secure_wipe(&c);
    cradle_secure_wipe(&s);
}

int main(void) {
    if (sodium_init() < 0) return 1;
    uint8_t a[32], b[32];
    memset(a, 3, 32);
    memset(b, 4, 32);
    if (cradle_keys_from_seeds(&server_keys, a, b) != 0) return 1;
    memset(a, 5, 32);
    memset(b, 6, 32);
    if (cradle_keys_from_seeds(&issuer_keys, a, b) != 0) return 1;
    if (cradle_secure_keypair(client_pk, client_sk) != 0) return 1;

    printf("secure channel (ChaCha20-Poly1305 IETF, per packet):\n");
    channel(60, 2000000);
    channel(1024, 500000);

    printf("handshake:\n");
    {
        const uint64_t n = 20000;
        cradle_secure s;
        double t0 = now_s();
        for (uint64_t i = 0; i < n; i++) {
            if (cradle_secure_server_init(&s, server_keys.kx_public, server_keys.kx_secret,
                                          client_pk, NULL) != 0)
                return 1;
            sink += s.tx_key[0];
        }
        report("server session keys (crypto_kx)", now_s() - t0, n);
    }

    printf("join tokens:\n");
    {
        enum { N = 4096 };
        static uint8_t tokens[N][CRADLE_TOKEN_MAX_BYTES];
        static size_t sizes[N];
        static cradle_token_seen seen[N];
        cradle_token t;
        memset(&t, 0, sizeof t);
        memcpy(t.server_id, server_keys.kx_public, 32);
        t.client_id = 1;
        t.issued_unix = 1000;
        t.expires_unix = 1060;
        strcpy(t.build_id, "bench-build-0123456789");
        double t0 = now_s();
        for (uint32_t i = 0; i < N; i++) {
            memcpy(t.id, &i, sizeof i);
            if (cradle_token_issue(tokens[i], sizeof tokens[i], &sizes[i], &t,
                                   issuer_keys.sign_secret) != 0)
                return 1;
        }
        report("issue", now_s() - t0, N);
        cradle_token_verifier v;
        cradle_token_verifier_config cfg = {
            .issuers = (const uint8_t (*)[32])issuer_keys.sign_public,
            .issuer_count = 1,
            .server_id = server_keys.kx_public,
            .build_id = "bench-build-0123456789",
            .seen = seen,
            .seen_capacity = N,
        };
        if (cradle_token_verifier_init(&v, &cfg) != 0) return 1;
        t0 = now_s();
        for (uint32_t i = 0; i < N; i++)
            if (cradle_token_verify(&v, tokens[i], sizes[i], 1010, NULL) != 0) return 1;
        report("verify, seen memory filling to 4096", now_s() - t0, N);
        t0 = now_s();
        for (uint32_t i = 0; i < N; i++)
            sink += (uint64_t)-cradle_token_verify(&v, tokens[i], sizes[i], 1010, NULL);
        report("verify a reused token (4096 remembered)", now_s() - t0, N);
        tokens[0][100] ^= 1;
        t0 = now_s();
        for (uint32_t i = 0; i < N; i++)
            sink += (uint64_t)-cradle_token_verify(&v, tokens[0], sizes[0], 1010, NULL);
        report("verify a forged token", now_s() - t0, N);
    }

    printf("rate limiter:\n");
    {
        static cradle_ratelimit_entry table[4096];
        cradle_ratelimit rl;
        if (cradle_ratelimit_init(&rl, table, 4096, &(cradle_ratelimit_config){.seed = 42}) != 0)
            return 1;
        const uint64_t n = 10000000;
        double t0 = now_s();
        for (uint64_t i = 0; i < n; i++) {
            uint32_t addr = (uint32_t)(i * 2654435761u) % 3000u;
            sink += cradle_ratelimit_allow(&rl, &addr, sizeof addr, i / 1000);
        }
        report("allow (3000 addresses, 4096 entries)", now_s() - t0, n);
    }
    return (int)(sink & 0);
}
