/*
 * fuzz_raw_datagram: a client's and a server's reading of the datagrams
 * beside ENet (cradle/raw_datagram.h): the step stream's STEPS and the
 * PING/PONG, as anyone on the network can send them.
 *
 * The first byte chooses the path, the rest is the input:
 *   even: the bytes are a datagram, read plaintext (an insecure session)
 *         and by a secure client. Whatever decodes is a PING, PONG or STEPS
 *         and re-frames to the same bytes; the secure client opens nothing
 *         (a forgery would need the server's keys).
 *   odd:  the bytes are a message the server seals for the client: it opens
 *         exactly when the message is one that travels raw and fits, and
 *         then decodes to what the plaintext path decodes.
 * Keys are fixed (seeds in the code), so corpus entries stay meaningful.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cradle/keys.h"
#include "cradle/raw_datagram.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool ready;
static cradle_secure client, server;

static void setup(void) {
    cradle_keys keys;
    uint8_t a[32], b[32], pk[32], sk[32];
    memset(a, 0x21, sizeof a);
    memset(b, 0x43, sizeof b);
    if (cradle_keys_from_seeds(&keys, a, b) != 0) abort();
    memset(a, 0x65, sizeof a);
    if (crypto_kx_seed_keypair(pk, sk, a) != 0) abort();
    cradle_secure_config config = {.context = 9};
    if (cradle_secure_client_init(&client, pk, sk, keys.kx_public, &config) != 0 ||
        cradle_secure_server_init(&server, keys.kx_public, keys.kx_secret, pk, &config) != 0)
        abort();
    ready = true;
}

static bool travels_raw(uint8_t type) {
    return type == CRADLE_WIRE_PING || type == CRADLE_WIRE_PONG || type == CRADLE_WIRE_STEPS;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    if (size < 1) return 0;
    uint8_t op = data[0];
    data++;
    size--;
    static uint8_t scratch[CRADLE_RAW_MESSAGE_MAX], scratch2[CRADLE_RAW_MESSAGE_MAX];
    static uint8_t framed[CRADLE_RAW_DATAGRAM_MAX];
    cradle_wire_message m, again;
    size_t n = 0;
    if (op % 2 == 0) {
        if (cradle_raw_decode(NULL, data, size, scratch, &m) == 0) {
            if (!travels_raw(m.type)) abort();
            if (cradle_raw_encode(NULL, &m, framed, sizeof framed, &n) != 0) abort();
            if (n != size || memcmp(framed, data, size) != 0) abort();
        }
        if (cradle_raw_decode(&client, data, size, scratch, &m) == 0) abort();
        return 0;
    }
    /* the message sealed by the server, as fanout sends it */
    int sealed = cradle_raw_seal(&server, data, size, framed, sizeof framed, &n);
    if (size > CRADLE_RAW_MESSAGE_MAX) {
        if (sealed != CRADLE_EINVAL) abort();
        return 0;
    }
    if (sealed != 0) abort();
    int opened = cradle_raw_decode(&client, framed, n, scratch, &m);
    int expected = cradle_wire_decode(&again, data, size);
    if (expected == 0 && !travels_raw(again.type)) expected = CRADLE_ENET_MESSAGE;
    if (opened != expected) abort();
    if (opened == 0) {
        /* the same message as the plaintext reading of the same bytes */
        size_t k = 0;
        if (cradle_raw_seal(NULL, data, size, framed, sizeof framed, &k) != 0) abort();
        if (cradle_raw_decode(NULL, framed, k, scratch2, &again) != 0 || again.type != m.type) abort();
    }
    return 0;
}
