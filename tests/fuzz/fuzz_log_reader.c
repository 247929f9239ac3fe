/*
 * fuzz_log_reader: the session log reader (log.h) over arbitrary bytes.
 *
 * The first input byte picks a mode. Even: the rest is read as it is, which
 * exercises the header checks, the tail/damage classification and the scan.
 * Odd: the harness first repairs the header checksum and each block's header
 * check and checksum (walking the declared lengths), so mutations reach the
 * record parser behind the checksums instead of dying at them. Bit 1: the
 * reader requires every block signed by the key of SIGN_SEED (the signed
 * seeds'); it then never delivers a step of a block that is not.
 * Whatever the bytes, the reader must return, never crash, hang or allocate
 * more than one block.
 */
#include <sodium.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/input.h"
#include "cradle/keys.h"
#include "cradle/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void repair(uint8_t *p, size_t n) {
    if (n < CRADLE_LOG_HEADER_BYTES) return;
    crypto_generichash(p + 240, 16, p, 240, NULL, 0);
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

#define SIGN_SEED 0x5a /* every byte of both seeds of the signed seeds' key */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static cradle_keys signer;
    static bool ready;
    if (size == 0) return 0;
    if (!ready) {
        uint8_t seed[32];
        memset(seed, SIGN_SEED, sizeof seed);
        if (sodium_init() < 0 || cradle_keys_from_seeds(&signer, seed, seed) != 0) abort();
        ready = true;
    }
    size_t n = size - 1;
    /* An exact-size copy, so ASan catches any read past the end. */
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy) return 0;
    memcpy(copy, data + 1, n);
    if (data[0] & 1) repair(copy, n);
    cradle_log_reader r;
    if (cradle_log_reader_open_memory(&r, copy, n, NULL, 0) == 0) {
        if (data[0] & 2) cradle_log_reader_require_signer(&r, signer.sign_public);
        cradle_log_record rec;
        uint64_t steps = 0, sum = 0;
        int rc;
        while ((rc = cradle_log_reader_next(&r, &rec)) == 1) {
            if (rec.kind == CRADLE_LOG_RECORD_STEP) {
                sum += rec.snapshot[0] + rec.snapshot[r.header.snapshot_size - 1];
                steps++;
            }
        }
        /* Errors are sticky and the end is final. */
        if (cradle_log_reader_next(&r, &rec) != rc) abort();
        if (rc == 0 && r.end == CRADLE_LOG_END_NONE) abort();
        if (steps != r.steps) abort();
        if (rc == CRADLE_ELOG_SIGNATURE && !(data[0] & 2)) abort();
        (void)sum;
        cradle_log_reader_close(&r);
    }
    free(copy);
    return 0;
}
