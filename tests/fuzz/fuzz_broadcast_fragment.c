/*
 * fuzz_broadcast_fragment: a broadcast's fragment (outside bytes: whole log
 * blocks fetched from any HTTP cache, broadcast.h) through
 * cradle_broadcast_fragment_check, behind a fixed valid start: the
 * 256-byte header of a small session log, made at the first call with the
 * log writer (4 players, 2 input bytes, 321-byte blocks: 256 bytes of
 * records and a SIGN record, as the seed corpus's fragments were; the
 * signed ones by the key of SIGN_SEED).
 *
 * The first input byte picks a mode. Bit 0: the harness first repairs each
 * block's header check and checksum (walking the declared lengths), so
 * mutations reach the record parser and the order checks behind them.
 * Bit 1: the fragment must start at block 0, step 0 (a broadcast's
 * fragment 0); else anywhere. Bit 2: the viewer pinned the key of
 * SIGN_SEED, so every block must be signed by it (after a repair, only an
 * unchanged block still is). The buffer is a heap buffer of exactly its
 * size, so any overread is an ASan finding.
 *
 * Whatever the bytes, the check returns. A refusal is CRADLE_EBROADCAST with
 * a "fragment: " message. What is accepted is consistent: it ends where it
 * started plus its blocks, no step before the first, hashes within its
 * steps, at most the data files it may list; checking it again from where
 * it said it starts gives the same answer; and what a pinned viewer accepts
 * an unpinned one accepts alike.
 */
#include <sodium.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cradle/broadcast.h"
#include "cradle/cursor.h"
#include "cradle/keys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t start[CRADLE_LOG_HEADER_BYTES];
static cradle_keys signer;

#define SIGN_SEED 0x5a /* every byte of both seeds of the corpus's signing key */

/* The header of a real log: written with the writer into a scratch file. */
static void make_start(void) {
    char dir[] = "/tmp/fuzz-broadcast-fragment-XXXXXX";
    if (!mkdtemp(dir)) abort();
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/start.log", dir);
    cradle_log_header h;
    memset(&h, 0, sizeof h);
    strcpy(h.game_name, "fuzzgame");
    strcpy(h.build_id, "fuzz-build");
    h.format_version = CRADLE_LOG_FORMAT_VERSION;
    h.abi_major = 1;
    h.state_size = 40;
    h.state_align = 8;
    h.input_bytes = 2;
    h.max_players = 4;
    h.steps_per_second = 60;
    h.source_frames_per_second = 20;
    h.seed = 42;
    h.player_count = 3;
    h.snapshot_size = 9;
    h.created_unix_ns = 1700000000000000000ull;
    h.hash_interval = 10;
    cradle_log_writer w;
    cradle_log_writer_config config = {.block_size = CRADLE_LOG_BLOCK_MIN + CRADLE_LOG_SIGN_RECORD_BYTES,
                                       .sync_inline = true};
    if (cradle_log_writer_open(&w, path, &h, &config, NULL, NULL, 0) != 0) abort();
    if (cradle_log_writer_close(&w, 0) != 0) abort();
    FILE *f = fopen(path, "rb");
    if (!f || fread(start, 1, sizeof start, f) != sizeof start) abort();
    fclose(f);
    if (unlink(path) != 0 || rmdir(dir) != 0) abort();
}

static void repair(uint8_t *p, size_t n) {
    size_t at = CRADLE_LOG_HEADER_BYTES;
    while (n - at >= CRADLE_LOG_BLOCK_HEADER_BYTES) {
        uint8_t *b = p + at;
        uint32_t payload = cradle_cursor_load_u32(b + 20);
        if (payload > n - at - CRADLE_LOG_BLOCK_HEADER_BYTES) break;
        uint8_t sum[16];
        crypto_generichash(sum, 16, b, 28, NULL, 0);
        memcpy(b + 28, sum, 4);
        crypto_generichash_state st;
        crypto_generichash_init(&st, NULL, 0, 16);
        crypto_generichash_update(&st, b, 32);
        crypto_generichash_update(&st, b + CRADLE_LOG_BLOCK_HEADER_BYTES, payload);
        crypto_generichash_final(&st, b + 32, 16);
        at += CRADLE_LOG_BLOCK_HEADER_BYTES + payload;
    }
}

static bool same(const cradle_broadcast_fragment_info *a, const cradle_broadcast_fragment_info *b) {
    if (a->blocks != b->blocks || a->first.sequence != b->first.sequence || a->first.step != b->first.step ||
        a->end.sequence != b->end.sequence || a->end.step != b->end.step || a->hashes != b->hashes ||
        a->last_hash_step != b->last_hash_step || a->reloads != b->reloads || a->trailer != b->trailer ||
        a->data_count != b->data_count)
        return false;
    for (uint32_t i = 0; i < a->data_count; i++)
        if (memcmp(a->data_hash[i], b->data_hash[i], CRADLE_LOG_FILE_HASH_BYTES) != 0 ||
            a->data_size[i] != b->data_size[i])
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static bool ready;
    if (!ready) {
        uint8_t seed[32];
        memset(seed, SIGN_SEED, sizeof seed);
        if (sodium_init() < 0 || cradle_keys_from_seeds(&signer, seed, seed) != 0) abort();
        make_start();
        ready = true;
    }
    if (size == 0 || size - 1 > CRADLE_BROADCAST_FRAGMENT_MAX) return 0;
    size_t n = CRADLE_LOG_HEADER_BYTES + size - 1;
    uint8_t *buffer = malloc(n);
    if (!buffer) abort();
    memcpy(buffer, start, CRADLE_LOG_HEADER_BYTES);
    memcpy(buffer + CRADLE_LOG_HEADER_BYTES, data + 1, size - 1);
    if (data[0] & 1) repair(buffer, n);
    const cradle_broadcast_position zero = {0, 0};
    const cradle_broadcast_position *expect = data[0] & 2 ? &zero : NULL;
    cradle_broadcast_fragment_info info, again;
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    const uint8_t *pinned = data[0] & 4 ? signer.sign_public : NULL;
    int rc = cradle_broadcast_fragment_check(buffer, n, expect, pinned, &info, message, sizeof message);
    if (rc != 0) {
        if (rc != CRADLE_EBROADCAST || !memchr(message, 0, sizeof message) ||
            strncmp(message, "fragment: ", 10) != 0 || message[10] == '\0')
            abort();
        free(buffer);
        return 0;
    }
    if (expect && (info.first.sequence != 0 || info.first.step != 0)) abort();
    if (info.blocks == 0 || info.end.sequence != info.first.sequence + info.blocks) abort();
    if (info.end.step < info.first.step) abort();
    if (info.data_count > CRADLE_BROADCAST_FRAGMENT_DATA_MAX) abort();
    if (info.hashes == 0 && info.last_hash_step != UINT64_MAX) abort();
    /* a HASH names a step before the next one: the fragment's first block may
     * open with the hash of the step before it */
    if (info.hashes > 0 && (info.last_hash_step >= info.end.step || info.last_hash_step + 1u < info.first.step))
        abort();
    if (info.hashes > info.end.step - info.first.step + 1u) abort();
    if (cradle_broadcast_fragment_check(buffer, n, &info.first, pinned, &again, message, sizeof message) != 0) abort();
    if (!same(&info, &again)) abort();
    if (pinned) {
        if (cradle_broadcast_fragment_check(buffer, n, expect, NULL, &again, message, sizeof message) != 0) abort();
        if (!same(&info, &again)) abort();
    }
    free(buffer);
    return 0;
}
