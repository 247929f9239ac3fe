/*
 * fuzz_replay_index: a session log's keyframe index (outside bytes: the
 * file beside the log, replay_index.h) through cradle_replay_index_parse,
 * against a fixed session and a log of LOG_SIZE bytes whose replay holds
 * STATE_MAX state bytes (a larger keyframe is refused).
 *
 * The first input byte picks a mode. Bit 0 clear: the rest is parsed as it
 * is (magic, version, the header's checksum first). Set: the harness first
 * recomputes the header's checksum and, walking the entries by the document
 * size each names, every entry's checksum, so mutations reach the checks
 * behind them (the session, the interval, reserved bytes, document sizes,
 * the block offsets). Bit 1, with bit 0: each keyframe document is resealed
 * too (its compressed-size field set to the bytes it has, its own checksum
 * recomputed, as fuzz_broadcast_keyframe does) before its entry's checksum,
 * so a mutated step, block or build id inside it reaches the index's own
 * checks (interval, order). The file is a heap buffer of exactly its size,
 * so any overread is an ASan finding.
 *
 * A refusal is CRADLE_EINDEX with an "index byte N: " message and nothing
 * left to free (CRADLE_ENOMEM is a finding too: these inputs are small).
 * What is accepted is what the format promises: the file's bytes and
 * session, an interval in 1..CRADLE_REPLAY_INDEX_INTERVAL_MAX, entries that
 * tile the file exactly (each entry's fields as loaded), at most one per
 * minimum entry size, steps strictly ascending with (step + 1) a multiple
 * of the interval, blocks inside [CRADLE_LOG_HEADER_BYTES, LOG_SIZE) and in
 * order, each document decoding again to the keyframe loaded, and
 * cradle_replay_index_find() giving for next step `step + 1` of keyframe i
 * exactly keyframe i, for `step` the one before it (or none).
 *
 * The seeds (corpus/replay_index/) were written with
 * cradle_replay_index_writer_* for this session, each as it is (mode 0) and
 * repaired (mode 3): an empty index (the header only, interval 4), three
 * keyframes of a 64-byte state (interval 4: steps 3, 7, 11; blocks at log
 * bytes 256, 256, 4096), two of a 256-byte state under two builds
 * (interval 1200: steps 1199, 2399; an archived build's file hash).
 */
#include <sodium.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/broadcast.h"
#include "cradle/cursor.h"
#include "cradle/hash.h"
#include "cradle/log.h"
#include "cradle/replay_index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { LOG_SIZE = 1u << 20, STATE_MAX = 4096, CHECKSUM_BYTES = 16 }; /* STATE_MAX: the replay's storage */
enum { H_INTERVAL = 32, H_CHECKSUM = 48 };                          /* header fields */
enum { E_OFFSET = 0, E_BUILD_HASH = 8, E_DOC_BYTES = 40, E_CHECKSUM = 48 }; /* entry fields */
enum { K_COMPRESSED = 52, K_CHECKSUM = 176 };                       /* keyframe document fields */

/* The session of the seed corpus's indexes. */
static const uint8_t session[CRADLE_BROADCAST_SESSION_BYTES] = {0x1d, 0x3e, 0x5e, 0x55, 0x10, 0x4e, 0x01, 0x02,
                                                                0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a};

/* BLAKE2b-128 of a (n bytes) then b (m bytes) into out. */
static void checksum2(const uint8_t *a, size_t n, const uint8_t *b, size_t m, uint8_t *out) {
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, CHECKSUM_BYTES);
    crypto_generichash_update(&st, a, n);
    if (m) crypto_generichash_update(&st, b, m);
    crypto_generichash_final(&st, out, CHECKSUM_BYTES);
}

/* A keyframe document of `size` bytes (at least its header) made
 * self-consistent: its compressed bytes are all that follow the header. */
static void reseal(uint8_t *doc, uint32_t size) {
    const uint32_t header = CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES;
    cradle_cursor_store_u32(doc + K_COMPRESSED, size - header);
    checksum2(doc, K_CHECKSUM, doc + header, size - header, doc + K_CHECKSUM);
}

static void repair(uint8_t *bytes, size_t size, bool documents) {
    if (size < CRADLE_REPLAY_INDEX_HEADER_BYTES) return;
    checksum2(bytes, H_CHECKSUM, NULL, 0, bytes + H_CHECKSUM);
    size_t at = CRADLE_REPLAY_INDEX_HEADER_BYTES;
    while (size - at >= CRADLE_REPLAY_INDEX_ENTRY_BYTES) {
        uint8_t *e = bytes + at;
        uint32_t doc_size = cradle_cursor_load_u32(e + E_DOC_BYTES);
        if (doc_size > size - at - CRADLE_REPLAY_INDEX_ENTRY_BYTES) return;
        uint8_t *doc = e + CRADLE_REPLAY_INDEX_ENTRY_BYTES;
        if (documents && doc_size >= CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES) reseal(doc, doc_size);
        checksum2(e, E_CHECKSUM, doc, doc_size, e + E_CHECKSUM);
        at += CRADLE_REPLAY_INDEX_ENTRY_BYTES + (size_t)doc_size;
    }
}

static bool same(const cradle_broadcast_keyframe *a, const cradle_broadcast_keyframe *b) {
    return memcmp(a->session, b->session, sizeof a->session) == 0 && a->step == b->step &&
           a->state_hash == b->state_hash && a->state_size == b->state_size &&
           a->block_sequence == b->block_sequence && a->block_first_step == b->block_first_step &&
           strcmp(a->build_id, b->build_id) == 0;
}

/* One accepted keyframe against the file's bytes: its entry's fields and
 * its document, decoded again. */
static void check_keyframe(const cradle_replay_index *index, const cradle_replay_keyframe *k,
                           cradle_state_pack *codec) {
    if (memcmp(k->key.session, session, sizeof session) != 0) abort();
    if ((k->key.step + 1u) % index->interval != 0 || k->block.first_step > k->key.step) abort();
    if (k->block.offset < CRADLE_LOG_HEADER_BYTES || k->block.offset >= LOG_SIZE) abort();
    if (k->block.sequence != k->key.block_sequence || k->block.first_step != k->key.block_first_step) abort();
    const uint8_t *e = index->bytes + k->doc_offset - CRADLE_REPLAY_INDEX_ENTRY_BYTES;
    if (cradle_cursor_load_u64(e + E_OFFSET) != k->block.offset ||
        cradle_cursor_load_u32(e + E_DOC_BYTES) != k->doc_size ||
        memcmp(e + E_BUILD_HASH, k->build_file_hash, sizeof k->build_file_hash) != 0)
        abort();
    if (k->key.state_size == 0 || k->key.state_size > CRADLE_BROADCAST_STATE_MAX) abort();
    uint8_t *state = malloc(k->key.state_size);
    if (!state) abort();
    cradle_broadcast_keyframe again;
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    if (cradle_broadcast_keyframe_decode(codec, index->bytes + k->doc_offset, k->doc_size, session, NULL, &again,
                                         state, k->key.state_size, message, sizeof message) != 0)
        abort();
    if (!same(&k->key, &again) || cradle_hash64(state, again.state_size) != k->key.state_hash) abort();
    free(state);
}

/* What an accepted index promises (the file's comment above). */
static void check_accepted(const cradle_replay_index *index, const uint8_t *bytes, size_t size,
                           cradle_state_pack *codec) {
    if (!index->bytes || index->size != size || memcmp(index->bytes, bytes, size) != 0) abort();
    if (memcmp(index->session, session, sizeof session) != 0) abort();
    if (index->interval != cradle_cursor_load_u32(bytes + H_INTERVAL) || index->interval == 0 ||
        index->interval > CRADLE_REPLAY_INDEX_INTERVAL_MAX)
        abort();
    size_t least = CRADLE_REPLAY_INDEX_ENTRY_BYTES + CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES;
    if (index->count > (size - CRADLE_REPLAY_INDEX_HEADER_BYTES) / least) abort();
    if (index->count > 0 && !index->keys) abort();
    uint64_t next = CRADLE_REPLAY_INDEX_HEADER_BYTES; /* where the next entry starts */
    for (uint32_t i = 0; i < index->count; i++) {
        const cradle_replay_keyframe *k = &index->keys[i];
        if (k->doc_offset != next + CRADLE_REPLAY_INDEX_ENTRY_BYTES || k->doc_size > size - k->doc_offset) abort();
        next = k->doc_offset + k->doc_size;
        check_keyframe(index, k, codec);
        if (i > 0) {
            const cradle_replay_keyframe *before = k - 1;
            if (k->key.step <= before->key.step || k->block.offset < before->block.offset ||
                k->block.sequence < before->block.sequence)
                abort();
        }
        if (cradle_replay_index_find(index, k->key.step + 1u) != k) abort();
        if (cradle_replay_index_find(index, k->key.step) != (i > 0 ? k - 1 : NULL)) abort();
    }
    if (next != size) abort();
    if (cradle_replay_index_find(index, 0) != NULL) abort();
    if (cradle_replay_index_find(index, UINT64_MAX) != (index->count ? &index->keys[index->count - 1u] : NULL))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static cradle_state_pack codec;
    if (!codec.decompress && (sodium_init() < 0 || cradle_state_pack_init(&codec, 0, CRADLE_STATE_PACK_BOTH) != 0)) abort();
    if (size == 0) return 0;
    size_t n = size - 1;
    uint8_t *bytes = malloc(n ? n : 1);
    if (!bytes) abort();
    memcpy(bytes, data + 1, n);
    if (data[0] & 1) repair(bytes, n, (data[0] & 2) != 0);
    cradle_replay_index index;
    char message[CRADLE_REPLAY_INDEX_MESSAGE_MAX];
    memset(message, 0xff, sizeof message);
    int rc = cradle_replay_index_parse(&index, bytes, n, session, LOG_SIZE, STATE_MAX, message, sizeof message);
    if (rc != 0) {
        if (rc != CRADLE_EINDEX || index.bytes || index.keys || index.count != 0 ||
            !memchr(message, 0, sizeof message) || strncmp(message, "index byte ", 11) != 0)
            abort();
    } else {
        check_accepted(&index, bytes, n, &codec);
        cradle_replay_index_free(&index);
    }
    free(bytes);
    return 0;
}
