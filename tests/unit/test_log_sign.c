/* test_log_sign: signed session logs (cradle_log_writer_close_signed and
 * cradle_log_verify_signature, log.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cradle/cradle.h"
#include "cradle/keys.h"

enum { PLAYERS = 2, INPUT = 2, SNAP = 1 + PLAYERS * INPUT };

static char dir[64], path[128];
static cradle_keys server_keys, other_keys;

static int setup(void **state) {
    (void)state;
    strcpy(dir, "/tmp/cradle-test-logsign-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(path, sizeof path, "%s/run.log", dir);
    uint8_t a[32], b[32];
    memset(a, 1, 32);
    memset(b, 2, 32);
    if (cradle_keys_from_seeds(&server_keys, a, b) != 0) return -1;
    memset(b, 3, 32);
    return cradle_keys_from_seeds(&other_keys, a, b);
}

static int teardown(void **state) {
    (void)state;
    unlink(path);
    rmdir(dir);
    return 0;
}

static void write_log(uint64_t steps, const uint8_t *sign_secret) {
    cradle_log_header h;
    memset(&h, 0, sizeof h);
    strcpy(h.game_name, "signgame");
    strcpy(h.build_id, "b1");
    h.abi_major = 1;
    h.state_size = 16;
    h.state_align = 8;
    h.input_bytes = INPUT;
    h.max_players = PLAYERS;
    h.steps_per_second = 60;
    h.source_frames_per_second = 20;
    h.player_count = 2;
    h.snapshot_size = SNAP;
    cradle_log_writer w;
    char msg[256];
    cradle_log_writer_config cfg = {.block_size = 256, .sync_inline = true, .overwrite = true};
    assert_int_equal(cradle_log_writer_open(&w, path, &h, &cfg, NULL, msg, sizeof msg), 0);
    uint8_t snap[SNAP];
    for (uint64_t s = 0; s < steps; s++) {
        memset(snap, (int)(s & 0x7f), sizeof snap);
        assert_int_equal(cradle_log_writer_append_step(&w, s, snap), 0);
    }
    if (sign_secret)
        assert_int_equal(cradle_log_writer_close_signed(&w, 0xABCDEF, sign_secret), 0);
    else
        assert_int_equal(cradle_log_writer_close(&w, 0xABCDEF), 0);
}

/* Reads to the trailer; returns the reader's final result (0 = clean end). */
static int read_trailer(cradle_log_record *trailer, uint64_t *snapshot_sum) {
    cradle_log_reader r;
    char msg[256];
    assert_int_equal(cradle_log_reader_open(&r, path, msg, sizeof msg), 0);
    cradle_log_record rec;
    int rc;
    bool found = false;
    *snapshot_sum = 0;
    while ((rc = cradle_log_reader_next(&r, &rec)) == 1) {
        if (rec.kind == CRADLE_LOG_RECORD_STEP) *snapshot_sum += rec.snapshot[0];
        if (rec.kind == CRADLE_LOG_RECORD_TRAILER) {
            *trailer = rec;
            found = true;
        }
    }
    cradle_log_reader_close(&r);
    assert_true(found || rc != 0);
    return rc;
}

static uint8_t *load(size_t *size) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc((size_t)n);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

static void store(const uint8_t *data, size_t size) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    fclose(f);
}

/* What a forger without the key can do: recompute every block checksum
 * and the trailer's digest (all unkeyed BLAKE2b, format in log_format.c). */
static void reseal(uint8_t *data, size_t size) {
    crypto_generichash_state digest;
    crypto_generichash_init(&digest, NULL, 0, CRADLE_LOG_DIGEST_BYTES);
    crypto_generichash_update(&digest, data, CRADLE_LOG_HEADER_BYTES);
    size_t at = CRADLE_LOG_HEADER_BYTES;
    while (at < size) {
        uint8_t *b = data + at;
        uint32_t payload = cradle_cursor_load_u32(b + 20);
        uint8_t *body = b + CRADLE_LOG_BLOCK_HEADER_BYTES;
        bool trailer = body[0] == CRADLE_LOG_RECORD_TRAILER;
        if (trailer) {
            uint8_t d[CRADLE_LOG_DIGEST_BYTES];
            crypto_generichash_final(&digest, d, sizeof d);
            memcpy(body + 17, d, sizeof d);
        }
        crypto_generichash_state c;
        crypto_generichash_init(&c, NULL, 0, CRADLE_LOG_CHECKSUM_BYTES);
        crypto_generichash_update(&c, b, 32);
        crypto_generichash_update(&c, body, payload);
        crypto_generichash_final(&c, b + 32, CRADLE_LOG_CHECKSUM_BYTES);
        if (!trailer) crypto_generichash_update(&digest, b + 32, CRADLE_LOG_CHECKSUM_BYTES);
        at += CRADLE_LOG_BLOCK_HEADER_BYTES + payload;
    }
}

static void test_signed_log_verifies(void **state) {
    (void)state;
    write_log(200, server_keys.sign_secret);
    cradle_log_record t;
    uint64_t sum;
    assert_int_equal(read_trailer(&t, &sum), 0);
    assert_int_equal(t.signature_length, 64);
    assert_int_equal(t.step, 200);
    assert_int_equal(cradle_log_verify_signature(&t, server_keys.sign_public), 0);
    assert_int_equal(cradle_log_verify_signature(&t, other_keys.sign_public),
                     CRADLE_ELOG_SIGNATURE);
}

static void test_unsigned_log_has_no_signature(void **state) {
    (void)state;
    write_log(50, NULL);
    cradle_log_record t;
    uint64_t sum;
    assert_int_equal(read_trailer(&t, &sum), 0);
    assert_int_equal(t.signature_length, 0);
    assert_int_equal(cradle_log_verify_signature(&t, server_keys.sign_public),
                     CRADLE_ELOG_SIGNATURE);
}

static void test_resealed_tampering_is_caught(void **state) {
    (void)state;
    write_log(200, server_keys.sign_secret);
    size_t size;
    uint8_t *data = load(&size);
    cradle_log_record t;
    uint64_t sum0, sum;
    assert_int_equal(read_trailer(&t, &sum0), 0);

    /* Resealing an untouched file changes nothing: the forger's tool is right. */
    reseal(data, size);
    store(data, size);
    assert_int_equal(read_trailer(&t, &sum), 0);
    assert_int_equal(cradle_log_verify_signature(&t, server_keys.sign_public), 0);

    /* Change one snapshot byte in the first block and reseal: the log reads
     * cleanly, with the forged step, but the signature no longer holds. */
    data[CRADLE_LOG_HEADER_BYTES + CRADLE_LOG_BLOCK_HEADER_BYTES + 1] ^= 0x40;
    reseal(data, size);
    store(data, size);
    assert_int_equal(read_trailer(&t, &sum), 0);
    assert_true(sum != sum0);
    assert_int_equal(cradle_log_verify_signature(&t, server_keys.sign_public),
                     CRADLE_ELOG_SIGNATURE);
    free(data);

    /* Change the trailer's final hash and reseal. */
    write_log(200, server_keys.sign_secret);
    data = load(&size);
    size_t at = CRADLE_LOG_HEADER_BYTES;
    while (data[at + CRADLE_LOG_BLOCK_HEADER_BYTES] != CRADLE_LOG_RECORD_TRAILER)
        at += CRADLE_LOG_BLOCK_HEADER_BYTES + cradle_cursor_load_u32(data + at + 20);
    data[at + CRADLE_LOG_BLOCK_HEADER_BYTES + 9] ^= 1;
    reseal(data, size);
    store(data, size);
    assert_int_equal(read_trailer(&t, &sum), 0);
    assert_int_equal(t.hash, 0xABCDEF ^ 1);
    assert_int_equal(cradle_log_verify_signature(&t, server_keys.sign_public),
                     CRADLE_ELOG_SIGNATURE);
    free(data);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_signed_log_verifies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unsigned_log_has_no_signature, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resealed_tampering_is_caught, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
