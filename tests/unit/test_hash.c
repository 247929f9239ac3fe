/* Tests for hash: the 64-bit state hash (SipHash-2-4, zero key). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sodium.h>
#include <string.h>

#include "cradle/cradle.h"

static const char fox[] = "The quick brown fox jumps over the lazy dog";

static uint64_t sodium_siphash(const void *data, size_t size, const unsigned char *key) {
    unsigned char out[crypto_shorthash_BYTES];
    crypto_shorthash(out, data, size, key);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | out[i];
    return v;
}

/* libsodium's crypto_shorthash is SipHash-2-4: the reference paper's vectors
 * (key 00..0f, messages 00..(n-1)) hold. */
static void test_sodium_is_siphash24(void **state) {
    (void)state;
    assert_int_equal(crypto_shorthash_BYTES, 8);
    assert_int_equal(crypto_shorthash_KEYBYTES, 16);
    unsigned char key[16], msg[15];
    for (int i = 0; i < 16; i++) key[i] = (unsigned char)i;
    for (int i = 0; i < 15; i++) msg[i] = (unsigned char)i;
    assert_int_equal(sodium_siphash(msg, 0, key), 0x726fdb47dd0e0e31ull);
    assert_int_equal(sodium_siphash(msg, 15, key), 0xa129ca6149be45e5ull);
}

/* Values computed with an independent SipHash-2-4 implementation (which
 * reproduces the paper's vectors) using the all-zero key. Pinned: logs and
 * golden files carry these hashes, so they must never change. */
static void test_pinned_values(void **state) {
    (void)state;
    uint8_t seq[64];
    for (int i = 0; i < 64; i++) seq[i] = (uint8_t)i;
    assert_int_equal(cradle_hash64("", 0), 0x1e924b9d737700d7ull);
    assert_int_equal(cradle_hash64("a", 1), 0x96c20860cd93a249ull);
    assert_int_equal(cradle_hash64("abc", 3), 0x3fc884964770eedeull);
    assert_int_equal(cradle_hash64("cradle", 6), 0x5ffadcf338c6516dull);
    assert_int_equal(cradle_hash64(seq, 8), 0xc72b1c24fc2f7938ull);
    assert_int_equal(cradle_hash64(seq, 64), 0x8b19265d1c12cdc7ull);
    assert_int_equal(cradle_hash64(fox, strlen(fox)), 0x590052062570e40dull);
}

static void test_matches_sodium_directly(void **state) {
    (void)state;
    static const unsigned char zero_key[crypto_shorthash_KEYBYTES] = {0};
    uint8_t buf[300];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 37u + 11u);
    for (size_t n = 0; n <= sizeof buf; n++) {
        assert_int_equal(cradle_hash64(buf, n), sodium_siphash(buf, n, zero_key));
    }
}

static void test_empty_input(void **state) {
    (void)state;
    uint8_t byte = 0xAB;
    assert_int_equal(cradle_hash64(NULL, 0), 0x1e924b9d737700d7ull);
    assert_int_equal(cradle_hash64(&byte, 0), 0x1e924b9d737700d7ull);
    /* empty differs from one zero byte */
    uint8_t zero = 0;
    assert_int_not_equal(cradle_hash64(&zero, 1), cradle_hash64(NULL, 0));
}

static void test_different_inputs_differ(void **state) {
    (void)state;
    uint8_t buf[64];
    for (int i = 0; i < 64; i++) buf[i] = (uint8_t)(i * 13);
    const uint64_t base = cradle_hash64(buf, sizeof buf);
    /* every single-bit flip gives a different hash, and all differ */
    uint64_t flips[512];
    for (int bit = 0; bit < 512; bit++) {
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        flips[bit] = cradle_hash64(buf, sizeof buf);
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_not_equal(flips[bit], base);
        for (int j = 0; j < bit; j++) assert_int_not_equal(flips[j], flips[bit]);
    }
    assert_int_equal(cradle_hash64(buf, sizeof buf), base);
    /* prefixes of one buffer (trailing zeros included) all differ */
    uint8_t zeros[24] = {0};
    uint64_t lens[25];
    for (int n = 0; n <= 24; n++) {
        lens[n] = cradle_hash64(zeros, (size_t)n);
        for (int j = 0; j < n; j++) assert_int_not_equal(lens[j], lens[n]);
    }
}

static void test_alignment_does_not_matter(void **state) {
    (void)state;
    _Alignas(16) uint8_t buf[64 + 16];
    const size_t n = 45;
    uint8_t ref[45];
    for (size_t i = 0; i < n; i++) ref[i] = (uint8_t)(i ^ 0x5A);
    const uint64_t want = cradle_hash64(ref, n);
    for (size_t off = 0; off < 16; off++) {
        memcpy(buf + off, ref, n);
        assert_int_equal(cradle_hash64(buf + off, n), want);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sodium_is_siphash24),
        cmocka_unit_test(test_pinned_values),
        cmocka_unit_test(test_matches_sodium_directly),
        cmocka_unit_test(test_empty_input),
        cmocka_unit_test(test_different_inputs_differ),
        cmocka_unit_test(test_alignment_does_not_matter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
