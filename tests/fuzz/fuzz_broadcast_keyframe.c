/*
 * fuzz_broadcast_keyframe: a broadcast's keyframe document (outside bytes,
 * broadcast.h) through cradle_broadcast_keyframe_decode, against a fixed
 * session and a viewer that holds at most CAPACITY state bytes.
 *
 * The first input byte picks a mode. Bit 0 clear: the rest is decoded as
 * it is (magic, version, sizes, the checksum). Set: the harness first sets
 * the compressed-size field to the bytes that follow the header and
 * recomputes the checksum, so mutations reach the checks behind it
 * (session, reserved bytes, build id, the zstd frame, the state's hash).
 * Bit 1: the viewer pinned the key of SIGN_SEED (the signed seeds'), so the
 * signature is checked too. The document is a heap buffer of exactly its
 * size, as is the state, so any overread or overwrite is an ASan finding.
 *
 * A refusal is CRADLE_EBROADCAST with a "keyframe: " message. What is
 * accepted is what the header promises (the session, a state within the
 * capacity whose hash is the one named), and encoding those fields and that
 * state again, signed, gives a keyframe that decodes to the same fields and
 * state for a viewer that pinned the key, and is refused by one that pinned
 * another.
 */
#include <sodium.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/broadcast.h"
#include "cradle/cursor.h"
#include "cradle/hash.h"
#include "cradle/keys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { CAPACITY = 64u << 10 };

#define SIGN_SEED 0x5a  /* every byte of both seeds of the signed seeds' key */
#define OTHER_SEED 0xa5 /* a key that signed none of them */

/* The session of the seed corpus's keyframes. */
static const uint8_t session[CRADLE_BROADCAST_SESSION_BYTES] = {0x5e, 0x55, 0x10, 0x4e, 0x01, 0x02, 0x03, 0x04,
                                                                0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c};

static void repair(uint8_t *doc, size_t size) {
    if (size < CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES) return;
    cradle_cursor_store_u32(doc + 52, (uint32_t)(size - CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES));
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 16);
    crypto_generichash_update(&st, doc, 176);
    crypto_generichash_update(&st, doc + CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES,
                              size - CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES);
    crypto_generichash_final(&st, doc + 176, 16);
}

static bool same(const cradle_broadcast_keyframe *a, const cradle_broadcast_keyframe *b) {
    return memcmp(a->session, b->session, sizeof a->session) == 0 && a->step == b->step &&
           a->state_hash == b->state_hash && a->state_size == b->state_size &&
           a->block_sequence == b->block_sequence && a->block_first_step == b->block_first_step &&
           strcmp(a->build_id, b->build_id) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static cradle_state_pack codec;
    static uint8_t *state, *again_state;
    static cradle_keys signer, other;
    if (!codec.decompress) {
        uint8_t seed[32];
        memset(seed, SIGN_SEED, sizeof seed);
        if (sodium_init() < 0 || cradle_state_pack_init(&codec, 1, CRADLE_STATE_PACK_BOTH) != 0 ||
            cradle_keys_from_seeds(&signer, seed, seed) != 0)
            abort();
        memset(seed, OTHER_SEED, sizeof seed);
        if (cradle_keys_from_seeds(&other, seed, seed) != 0) abort();
        state = malloc(CAPACITY);
        again_state = malloc(CAPACITY);
        if (!state || !again_state) abort();
    }
    if (size == 0) return 0;
    size_t n = size - 1;
    uint8_t *doc = malloc(n ? n : 1);
    if (!doc) abort();
    memcpy(doc, data + 1, n);
    if (data[0] & 1) repair(doc, n);
    cradle_broadcast_keyframe k, again;
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    const uint8_t *pinned = data[0] & 2 ? signer.sign_public : NULL;
    int rc = cradle_broadcast_keyframe_decode(&codec, doc, n, session, pinned, &k, state, CAPACITY, message,
                                              sizeof message);
    free(doc);
    if (rc != 0) {
        if (rc != CRADLE_EBROADCAST || !memchr(message, 0, sizeof message) ||
            strncmp(message, "keyframe: ", 10) != 0 || message[10] == '\0')
            abort();
        return 0;
    }
    if (memcmp(k.session, session, sizeof session) != 0) abort();
    if (k.state_size == 0 || k.state_size > CAPACITY || k.block_first_step > k.step) abort();
    if (cradle_hash64(state, k.state_size) != k.state_hash) abort();
    size_t bound = cradle_broadcast_keyframe_bound(k.state_size), length = 0;
    uint8_t *out = malloc(bound);
    if (!out) abort();
    if (cradle_broadcast_keyframe_encode(&codec, &k, state, signer.sign_secret, out, bound, &length, message,
                                         sizeof message) != 0)
        abort();
    uint8_t *exact = malloc(length);
    if (!exact) abort();
    memcpy(exact, out, length);
    free(out);
    if (cradle_broadcast_keyframe_decode(&codec, exact, length, session, other.sign_public, &again, again_state,
                                         k.state_size, message, sizeof message) != CRADLE_EBROADCAST)
        abort();
    if (cradle_broadcast_keyframe_decode(&codec, exact, length, session, signer.sign_public, &again, again_state,
                                         k.state_size, message, sizeof message) != 0)
        abort();
    free(exact);
    if (!same(&k, &again) || memcmp(state, again_state, k.state_size) != 0) abort();
    return 0;
}
