/*
 * fuzz_handshake: cradle-server's secure handshake (server/src/handshake.c)
 * on an arbitrary first packet, then the admitted session's receive path.
 *
 * The input: u16 n (LE), then n bytes, the first packet (a HELLO, or
 * anything); then records of u8 op, u8 length, length bytes:
 *   op odd:  the harness's client seals the bytes with its session keys
 *            (on the ordered lane when op bit 1 is set, else unordered) and
 *            the server opens the packet (it opens only when the HELLO
 *            carried the client's key, and then gives back the same bytes);
 *   op even: the bytes are a raw packet for the server to open (it opens
 *            only if byte-identical to what the client would seal).
 * Opened plaintext goes through cradle_wire_decode, as net.c does.
 *
 * Checked for every first packet, against what handshake.h documents:
 * IGNORE only for non-HELLOs (no keys); a HELLO of another version is
 * refused in plaintext; REFUSE texts are printable; sealed iff keys exist;
 * ADMIT only for a credential that an independent verifier (a fresh one,
 * same trust) accepts and whose fields it returns, and the same HELLO again
 * is then refused as reused.
 *
 * Fixed keys (seeds in the code): issuer 0x11/0x22, server 0x33/0x44, the
 * client's ephemeral key from seed 0x55, another server 0x66/0x77, an
 * untrusted issuer 0x88/0x99; build "fuzz-build"; the time is NOW.
 *
 * Seeds: the corpus (tests/fuzz/corpus/handshake) holds HELLOs with valid
 * and invalid tokens made with the token API, in this build's
 * CRADLE_WIRE_VERSION. Regenerate it after a wire or token format change:
 *   CRADLE_FUZZ_WRITE_SEEDS=tests/fuzz/corpus/handshake \
 *       build/<dir>/tests/fuzz/fuzz_handshake
 * (writes the seed-* files and exits; delete the old corpus first).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "handshake.h"

#define NOW 1800000000ull
#define CONTEXT 7u
#define BUILD "fuzz-build"
#define SEEN 8u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cradle_keys issuer, server, other_server, untrusted;
static uint8_t client_public[32], client_secret[32];
static cradle_secure client0;
static cradle_token_seen seen[SEEN], check_seen[SEEN];
static cradle_token_verifier verifier, check;
static uint8_t packet[CRADLE_SECURE_PACKET_MAX];
static uint8_t plain[CRADLE_SECURE_PACKET_MAX];
static uint8_t again[CRADLE_SECURE_PACKET_MAX];

static void keys_from(cradle_keys *k, uint8_t a, uint8_t b) {
    uint8_t sa[32], sb[32];
    memset(sa, a, 32);
    memset(sb, b, 32);
    if (cradle_keys_from_seeds(k, sa, sb) != 0) abort();
}

static void verifier_init(cradle_token_verifier *v, cradle_token_seen *memory) {
    cradle_token_verifier_config c = {
        .issuers = (const uint8_t (*)[32])issuer.sign_public,
        .issuer_count = 1,
        .server_id = server.kx_public,
        .build_id = BUILD,
        .seen = memory,
        .seen_capacity = SEEN,
    };
    if (cradle_token_verifier_init(v, &c) != 0) abort();
}

static void write_seeds(const char *dir);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    keys_from(&issuer, 0x11, 0x22);
    keys_from(&server, 0x33, 0x44);
    keys_from(&other_server, 0x66, 0x77);
    keys_from(&untrusted, 0x88, 0x99);
    uint8_t seed[32];
    memset(seed, 0x55, 32);
    if (crypto_kx_seed_keypair(client_public, client_secret, seed) != 0) abort();
    if (cradle_secure_client_init(&client0, client_public, client_secret, server.kx_public,
                                  &(cradle_secure_config){.context = CONTEXT}) != 0)
        abort();
    const char *dir = getenv("CRADLE_FUZZ_WRITE_SEEDS");
    if (dir) {
        write_seeds(dir);
        exit(0);
    }
    return 0;
}

static bool printable(const char *text, size_t capacity) {
    const char *nul = memchr(text, '\0', capacity);
    if (!nul) return false;
    for (const char *p = text; p < nul; p++)
        if ((unsigned char)*p < 0x20u || (unsigned char)*p > 0x7eu) return false;
    return true;
}

static cradle_handshake_action decide(cradle_handshake_result *r, cradle_secure *s,
                                      const uint8_t *hello, size_t n) {
    cradle_handshake_config c = {
        .verifier = &verifier, .keys = &server, .context = CONTEXT, .now_unix = NOW,
        .max_bytes = 1024,
    };
    cradle_handshake_action a = cradle_handshake_first_packet(r, s, &c, hello, n);
    if (a != r->action) abort();
    return a;
}

/* The documented relations between the packet and the decision. */
static void check_decision(const cradle_handshake_result *r, const cradle_secure *s,
                           const uint8_t *hello, size_t n) {
    cradle_wire_message m;
    int rc = n <= 1024 ? cradle_wire_decode(&m, hello, n) : CRADLE_ENET_MESSAGE;
    bool is_hello = (rc == 0 || rc == CRADLE_ENET_VERSION) && m.type == CRADLE_WIRE_HELLO;
    if (r->hello != is_hello) abort();
    bool keys = s->role == CRADLE_SECURE_SERVER;
    switch (r->action) {
    case CRADLE_HANDSHAKE_IGNORE:
        if (is_hello || keys || r->sealed || r->bad_credential || r->error >= 0) abort();
        break;
    case CRADLE_HANDSHAKE_DROP:
        if (!is_hello || keys || r->sealed || !r->bad_credential) abort();
        break;
    case CRADLE_HANDSHAKE_REFUSE:
        if (!is_hello || r->sealed != keys || !printable(r->text, sizeof r->text)) abort();
        if (r->reason < 1 || r->reason > CRADLE_WIRE_REFUSE_LAST || r->error >= 0) abort();
        if ((rc == CRADLE_ENET_VERSION) != (r->reason == CRADLE_WIRE_REFUSE_PROTOCOL)) abort();
        if (rc == CRADLE_ENET_VERSION && (keys || hello[1] == CRADLE_WIRE_VERSION)) abort();
        /* Plaintext: another version, or a short credential (counted);
         * sealed: the token's refusal. */
        if (keys && r->bad_credential) abort();
        if (!keys && r->bad_credential != (rc != CRADLE_ENET_VERSION)) abort();
        break;
    case CRADLE_HANDSHAKE_ADMIT: {
        if (rc != 0 || !keys || !r->sealed || r->bad_credential || r->error != 0) abort();
        /* An independent verifier with the same trust accepts the token. */
        const cradle_wire_hello *h = &m.as.hello;
        if (h->credential_size < CRADLE_TOKEN_MIN_BYTES + CRADLE_TOKEN_KEY_BYTES) abort();
        size_t token_size = h->credential_size - CRADLE_TOKEN_KEY_BYTES;
        verifier_init(&check, check_seen);
        cradle_token t;
        if (cradle_token_verify(&check, h->credential, token_size, NOW, &t) != 0) abort();
        if (memcmp(t.id, r->token.id, sizeof t.id) != 0 || t.client_id != r->token.client_id ||
            memcmp(t.server_id, r->token.server_id, 32) != 0 || t.issued_unix != r->token.issued_unix ||
            t.expires_unix != r->token.expires_unix || strcmp(t.build_id, r->token.build_id) != 0)
            abort();
        if (memcmp(t.server_id, server.kx_public, 32) != 0 || strcmp(t.build_id, BUILD) != 0) abort();
        if (NOW >= t.expires_unix) abort();
        break;
    }
    default: abort();
    }
}

/* The admitted session's receive path: records sealed by the harness's
 * client (with the HELLO's key or not) and raw packets. */
static void run_session(cradle_secure *server_session, bool client_key, const uint8_t *data,
                        size_t size) {
    cradle_secure client = client0;
    size_t pos = 0;
    while (pos + 2 <= size) {
        uint8_t op = data[pos];
        size_t len = data[pos + 1];
        pos += 2;
        if (len > size - pos) len = size - pos;
        const uint8_t *rec = data + pos;
        pos += len;
        size_t got = 0;
        int rc;
        if (op & 1u) {
            size_t n = 0;
            cradle_secure_lane_id lane = (op & 2u) ? CRADLE_SECURE_ORDERED : CRADLE_SECURE_UNORDERED;
            if (cradle_secure_seal_lane(&client, lane, packet, sizeof packet, &n, rec, len) != 0) abort();
            rc = cradle_secure_open(server_session, plain, sizeof plain, &got, packet, n);
            if ((rc == 0) != client_key) abort();
            if (rc == 0 && (got != len || memcmp(plain, rec, len) != 0)) abort();
        } else {
            rc = cradle_secure_open(server_session, plain, sizeof plain, &got, rec, len);
            if (rc == 0) {
                /* Authentic: the client's seal of that plaintext, lane and
                 * counter (the counter's top bit names the lane). */
                uint64_t counter = cradle_cursor_load_u64(rec);
                cradle_secure_lane_id lane = (counter >> 63) ? CRADLE_SECURE_ORDERED : CRADLE_SECURE_UNORDERED;
                cradle_secure c = client0;
                c.lanes[lane].tx_next = counter & ~(1ull << 63);
                size_t n = 0;
                if (cradle_secure_seal_lane(&c, lane, again, sizeof again, &n, plain, got) != 0) abort();
                if (n != len || memcmp(again, rec, len) != 0) abort();
            }
        }
        if (rc == 0) {
            cradle_wire_message m;
            (void)cradle_wire_decode(&m, plain, got);
        }
    }
    cradle_secure_wipe(&client);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t n = size >= 2 ? cradle_cursor_load_u16(data) : 0;
    const uint8_t *hello = size >= 2 ? data + 2 : data;
    size_t avail = size >= 2 ? size - 2 : 0;
    if (n > avail) n = avail;
    uint8_t *copy = malloc(n ? n : 1); /* exactly sized: overreads are ASan findings */
    if (!copy) abort();
    memcpy(copy, hello, n);

    verifier_init(&verifier, seen);
    cradle_handshake_result r;
    cradle_secure s;
    memset(&s, 0xa5, sizeof s);
    cradle_handshake_action a = decide(&r, &s, copy, n);
    check_decision(&r, &s, copy, n);
    if (a == CRADLE_HANDSHAKE_ADMIT) {
        cradle_wire_message m;
        if (cradle_wire_decode(&m, copy, n) != 0) abort();
        const uint8_t *key = m.as.hello.credential + m.as.hello.credential_size - 32;
        bool client_key = memcmp(key, client_public, 32) == 0;
        run_session(&s, client_key, hello + n, avail - n);

        /* Usable once: the same HELLO again is refused as reused. */
        cradle_handshake_result again_r;
        cradle_secure again_s;
        if (decide(&again_r, &again_s, copy, n) != CRADLE_HANDSHAKE_REFUSE) abort();
        if (again_r.error != CRADLE_ETOKEN_REUSED || !again_r.sealed) abort();
        cradle_secure_wipe(&again_s);
    }
    cradle_secure_wipe(&s);
    free(copy);
    return 0;
}

/* ---- seeds ---------------------------------------------------------------- */

static cradle_token seed_token(uint8_t id) {
    cradle_token t;
    memset(&t, 0, sizeof t);
    memset(t.id, id, sizeof t.id);
    t.client_id = 1000u + id;
    memcpy(t.server_id, server.kx_public, 32);
    t.issued_unix = NOW - 10;
    t.expires_unix = NOW + 3600;
    strcpy(t.build_id, BUILD);
    return t;
}

/* A HELLO carrying t signed by `by` and key; credential_size overrides the
 * credential's length when nonzero (a short one). Returns its size. */
static size_t seed_hello(uint8_t *out, size_t capacity, const cradle_token *t, const cradle_keys *by,
                         const uint8_t key[32], bool spectator, size_t short_size) {
    cradle_wire_message m = {.type = CRADLE_WIRE_HELLO};
    m.as.hello.spectator = spectator;
    m.as.hello.requested_slot = spectator ? CRADLE_WIRE_ANY_SLOT : 0;
    strcpy(m.as.hello.game, "counter");
    strcpy(m.as.hello.build_id, BUILD);
    if (short_size) {
        memset(m.as.hello.credential, 0x42, short_size);
        m.as.hello.credential_size = (uint16_t)short_size;
    } else {
        uint8_t token[CRADLE_TOKEN_MAX_BYTES];
        size_t tn = 0, cn = 0;
        if (cradle_token_issue(token, sizeof token, &tn, t, by->sign_secret) != 0) abort();
        if (cradle_token_credential(m.as.hello.credential, sizeof m.as.hello.credential, &cn, token, tn,
                                    key) != 0)
            abort();
        m.as.hello.credential_size = (uint16_t)cn;
    }
    size_t n = 0;
    if (cradle_wire_encode(out, capacity, &n, &m) != 0) abort();
    return n;
}

/* Appends one record the client seals (op 1 unordered, 3 ordered) carrying
 * the encoded m. */
static size_t seed_record(uint8_t *out, uint8_t op, const cradle_wire_message *m) {
    size_t n = 0;
    if (cradle_wire_encode(out + 2, 255, &n, m) != 0) abort();
    out[0] = op;
    out[1] = (uint8_t)n;
    return 2 + n;
}

static void seed_write(const char *dir, const char *name, const uint8_t *hello, size_t n,
                       const uint8_t *records, size_t records_size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/seed-%s", dir, name);
    uint8_t len[2];
    cradle_cursor_store_u16(len, (uint16_t)n);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(len, 1, 2, f) != 2 || fwrite(hello, 1, n, f) != n ||
        fwrite(records, 1, records_size, f) != records_size || fclose(f) != 0) {
        fprintf(stderr, "fuzz_handshake: cannot write %s\n", path);
        exit(1);
    }
}

static void write_seeds(const char *dir) {
    uint8_t h[1024], rec[1024], zero[32] = {0}, other_key[32];
    memset(other_key, 0x09, 32);
    size_t rn = 0;
    cradle_wire_message m = {.type = CRADLE_WIRE_PING, .as.ping.echo = 42};
    rn += seed_record(rec + rn, 1, &m);
    uint8_t inputs[4] = {1, 2, 3, 4};
    m = (cradle_wire_message){.type = CRADLE_WIRE_INPUT};
    m.as.input.first_step = 10;
    m.as.input.count = 1;
    m.as.input.input_bytes = 4;
    m.as.input.inputs = inputs;
    rn += seed_record(rec + rn, 1, &m);
    m = (cradle_wire_message){.type = CRADLE_WIRE_BYE, .as.bye.reason = CRADLE_WIRE_BYE_LEAVING};
    strcpy(m.as.bye.text, "bye");
    rn += seed_record(rec + rn, 3, &m);
    const char raw[] = "a raw packet that no client sealed";
    rec[rn++] = 0; /* op 0: raw */
    rec[rn++] = (uint8_t)(sizeof raw - 1);
    memcpy(rec + rn, raw, sizeof raw - 1);
    rn += sizeof raw - 1;

    cradle_token t = seed_token(1);
    size_t n = seed_hello(h, sizeof h, &t, &issuer, client_public, false, 0);
    seed_write(dir, "valid", h, n, rec, rn);
    t = seed_token(2);
    n = seed_hello(h, sizeof h, &t, &issuer, client_public, true, 0);
    seed_write(dir, "valid-spectator", h, n, NULL, 0);
    t = seed_token(3);
    memset(t.build_id, 'b', CRADLE_GAME_BUILD_ID_MAX);
    t.build_id[CRADLE_GAME_BUILD_ID_MAX] = '\0';
    n = seed_hello(h, sizeof h, &t, &issuer, client_public, false, 0);
    seed_write(dir, "other-build-longest", h, n, NULL, 0);
    t = seed_token(4);
    n = seed_hello(h, sizeof h, &t, &issuer, other_key, false, 0);
    seed_write(dir, "valid-other-client-key", h, n, rec, rn);
    t = seed_token(5);
    t.issued_unix = NOW - 7200;
    t.expires_unix = NOW - 1;
    n = seed_hello(h, sizeof h, &t, &issuer, client_public, false, 0);
    seed_write(dir, "expired", h, n, NULL, 0);
    t = seed_token(6);
    n = seed_hello(h, sizeof h, &t, &untrusted, client_public, false, 0);
    seed_write(dir, "forged", h, n, NULL, 0);
    t = seed_token(7);
    memcpy(t.server_id, other_server.kx_public, 32);
    n = seed_hello(h, sizeof h, &t, &issuer, client_public, false, 0);
    seed_write(dir, "wrong-server", h, n, NULL, 0);
    t = seed_token(8);
    t.issued_unix = NOW + 3600;
    t.expires_unix = NOW + 7200;
    n = seed_hello(h, sizeof h, &t, &issuer, client_public, false, 0);
    seed_write(dir, "future", h, n, NULL, 0);
    t = seed_token(9);
    n = seed_hello(h, sizeof h, &t, &issuer, zero, false, 0);
    seed_write(dir, "degenerate-key", h, n, NULL, 0);
    n = seed_hello(h, sizeof h, NULL, NULL, NULL, false, 40);
    seed_write(dir, "short-credential", h, n, NULL, 0);
    t = seed_token(10);
    n = seed_hello(h, sizeof h, &t, &issuer, client_public, false, 0);
    h[1] = (uint8_t)(CRADLE_WIRE_VERSION + 1u);
    seed_write(dir, "other-version", h, n, NULL, 0);
    m = (cradle_wire_message){.type = CRADLE_WIRE_PING, .as.ping.echo = 1};
    if (cradle_wire_encode(h, sizeof h, &n, &m) != 0) abort();
    seed_write(dir, "ping", h, n, NULL, 0);
}
