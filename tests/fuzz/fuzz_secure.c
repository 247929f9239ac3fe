/*
 * fuzz_secure: the secure channel's receive path (length checks, AEAD open,
 * replay window) on arbitrary packets and arbitrary counter sequences.
 *
 * The input is a list of records: u8 op, u8 length, then length bytes.
 *   op even: the bytes are a raw packet for the server to open (forgeries:
 *            must never open unless they are a byte-exact earlier packet,
 *            and then only as a replay refusal).
 *   op odd:  the first 8 bytes (LE, zero-padded) set the client's next
 *            counter and the rest is sealed by the client and opened by
 *            the server: exercises the window with chosen counters. The
 *            result must agree with a simple model of the window.
 * Keys are fixed (seeds in the code), so corpus packets stay meaningful.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cradle/input.h"
#include "cradle/keys.h"
#include "cradle/secure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool ready;
static cradle_secure client0, server0;
static uint8_t packet[CRADLE_SECURE_PACKET_MAX];
static uint8_t plain[CRADLE_SECURE_PACKET_MAX];

static void setup(void) {
    cradle_keys server_keys;
    uint8_t a[32], b[32], cpk[32], csk[32];
    memset(a, 0x33, 32);
    memset(b, 0x44, 32);
    if (cradle_keys_from_seeds(&server_keys, a, b) != 0) abort();
    memset(a, 0x55, 32);
    if (crypto_kx_seed_keypair(cpk, csk, a) != 0) abort();
    cradle_secure_config cfg = {.context = 7};
    if (cradle_secure_client_init(&client0, cpk, csk, server_keys.kx_public, &cfg) != 0) abort();
    if (cradle_secure_server_init(&server0, server_keys.kx_public, server_keys.kx_secret, cpk,
                                  &cfg) != 0)
        abort();
    ready = true;
}

/* The window model: the set of opened counters, and the highest. */
#define MODEL_MAX 256
static uint64_t opened[MODEL_MAX];
static size_t opened_count;

static int model_expect(bool any, uint64_t top, uint64_t c) {
    if (any && c <= top) {
        if (top - c >= CRADLE_SECURE_WINDOW) return CRADLE_ESECURE_OLD;
        for (size_t i = 0; i < opened_count; i++)
            if (opened[i] == c) return CRADLE_ESECURE_REPLAY;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    cradle_secure client = client0, server = server0;
    opened_count = 0;
    size_t pos = 0;
    while (pos + 2 <= size && opened_count < MODEL_MAX) {
        uint8_t op = data[pos];
        size_t len = data[pos + 1];
        pos += 2;
        if (len > size - pos) len = size - pos;
        const uint8_t *rec = data + pos;
        pos += len;
        size_t got = 0;
        if ((op & 1) == 0) {
            int rc = cradle_secure_open(&server, plain, sizeof plain, &got, rec, len);
            if (rc == 0) {
                opened[opened_count++] = cradle_cursor_load_u64(rec);
            }
            continue;
        }
        uint8_t ctr[8] = {0};
        size_t k = len < 8 ? len : 8;
        memcpy(ctr, rec, k);
        uint64_t c = cradle_cursor_load_u64(ctr);
        if (c >= CRADLE_SECURE_COUNTER_LIMIT) c &= CRADLE_SECURE_COUNTER_LIMIT - 1;
        client.lanes[0].tx_next = c;
        size_t n = 0;
        if (cradle_secure_seal(&client, packet, sizeof packet, &n, rec + k, len - k) != 0) abort();
        int expect = model_expect(server.lanes[0].rx_any, server.lanes[0].rx_top, c);
        int rc = cradle_secure_open(&server, plain, sizeof plain, &got, packet, n);
        if (rc != expect) abort();
        if (rc == 0) {
            if (got != len - k || memcmp(plain, rec + k, got) != 0) abort();
            opened[opened_count++] = c;
        }
    }
    cradle_secure_wipe(&client);
    cradle_secure_wipe(&server);
    return 0;
}
