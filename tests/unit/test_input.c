/* Tests for input: little-endian cursor helpers, bit fields, button edges. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cradle/cradle.h"

/* ---- button edges -------------------------------------------------------- */

static void test_button_edges(void **state) {
    (void)state;
    cradle_button b = cradle_button_from(false, false);
    assert_false(b.down);
    assert_false(b.pressed);
    assert_false(b.released);

    b = cradle_button_from(false, true);
    assert_true(b.down);
    assert_true(b.pressed);
    assert_false(b.released);

    b = cradle_button_from(true, true);
    assert_true(b.down);
    assert_false(b.pressed);
    assert_false(b.released);

    b = cradle_button_from(true, false);
    assert_false(b.down);
    assert_false(b.pressed);
    assert_true(b.released);
}

/* ---- exact layout and roundtrips ----------------------------------------- */

static void test_little_endian_layout(void **state) {
    (void)state;
    uint8_t buf[32];
    memset(buf, 0xEE, sizeof buf);
    cradle_cursor w = cradle_cursor_writer(buf, sizeof buf);
    cradle_cursor_put_u8(&w, 0x01);
    cradle_cursor_put_u16(&w, 0x0302);
    cradle_cursor_put_u32(&w, 0x07060504u);
    cradle_cursor_put_u64(&w, 0x0F0E0D0C0B0A0908ull);
    cradle_cursor_put_i32(&w, -2); /* FE FF FF FF */
    cradle_cursor_put_bool(&w, true);
    cradle_cursor_put_bool(&w, false);
    const uint8_t tail[3] = {0xAA, 0xBB, 0xCC};
    cradle_cursor_put_bytes(&w, tail, sizeof tail);
    assert_false(w.failed);
    assert_int_equal(w.pos, 1 + 2 + 4 + 8 + 4 + 1 + 1 + 3);
    assert_int_equal(cradle_cursor_remaining(&w), sizeof buf - 24);

    const uint8_t expect[32] = {
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B,
        0x0C, 0x0D, 0x0E, 0x0F, 0xFE, 0xFF, 0xFF, 0xFF, 0x01, 0x00, 0xAA,
        0xBB, 0xCC, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE};
    assert_memory_equal(buf, expect, sizeof buf);

    cradle_cursor r = cradle_cursor_reader(buf, 24);
    assert_int_equal(cradle_cursor_get_u8(&r), 0x01);
    assert_int_equal(cradle_cursor_get_u16(&r), 0x0302);
    assert_int_equal(cradle_cursor_get_u32(&r), 0x07060504u);
    assert_int_equal(cradle_cursor_get_u64(&r), 0x0F0E0D0C0B0A0908ull);
    assert_int_equal(cradle_cursor_get_i32(&r), -2);
    assert_true(cradle_cursor_get_bool(&r));
    assert_false(cradle_cursor_get_bool(&r));
    uint8_t out[3];
    cradle_cursor_get_bytes(&r, out, sizeof out);
    assert_memory_equal(out, tail, sizeof tail);
    assert_false(r.failed);
    assert_int_equal(cradle_cursor_remaining(&r), 0);
}

static void test_roundtrip_extremes(void **state) {
    (void)state;
    const uint64_t u64s[] = {0, 1, 0x80, 0xFF, 0x100, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000u,
                             0xFFFFFFFFu, 0x100000000ull, 0x8000000000000000ull, UINT64_MAX,
                             0x0123456789ABCDEFull};
    const int32_t i32s[] = {0, 1, -1, 2, -2, 127, -128, 255, -256, 65535, -65536,
                            INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1, -123456789};
    for (size_t i = 0; i < sizeof u64s / sizeof u64s[0]; i++) {
        uint8_t buf[15];
        cradle_cursor w = cradle_cursor_writer(buf, sizeof buf);
        uint64_t v = u64s[i];
        cradle_cursor_put_u8(&w, (uint8_t)v);
        cradle_cursor_put_u16(&w, (uint16_t)v);
        cradle_cursor_put_u32(&w, (uint32_t)v);
        cradle_cursor_put_u64(&w, v);
        assert_false(w.failed);
        /* Each byte is v's byte i at offset i of its field. */
        for (int b = 0; b < 8; b++) assert_int_equal(buf[7 + b], (uint8_t)(v >> (8 * b)));
        for (int b = 0; b < 4; b++) assert_int_equal(buf[3 + b], (uint8_t)(v >> (8 * b)));
        cradle_cursor r = cradle_cursor_reader(buf, sizeof buf);
        assert_int_equal(cradle_cursor_get_u8(&r), (uint8_t)v);
        assert_int_equal(cradle_cursor_get_u16(&r), (uint16_t)v);
        assert_int_equal(cradle_cursor_get_u32(&r), (uint32_t)v);
        assert_int_equal(cradle_cursor_get_u64(&r), v);
        assert_false(r.failed);
        /* The fixed-offset helpers agree with the cursor. */
        assert_int_equal(cradle_cursor_load_u64(buf + 7), v);
        assert_int_equal(cradle_cursor_load_u32(buf + 3), (uint32_t)v);
        assert_int_equal(cradle_cursor_load_u16(buf + 1), (uint16_t)v);
        uint8_t again[8];
        cradle_cursor_store_u64(again, v);
        assert_memory_equal(again, buf + 7, 8);
        cradle_cursor_store_u32(again, (uint32_t)v);
        assert_memory_equal(again, buf + 3, 4);
        cradle_cursor_store_u16(again, (uint16_t)v);
        assert_memory_equal(again, buf + 1, 2);
    }
    for (size_t i = 0; i < sizeof i32s / sizeof i32s[0]; i++) {
        uint8_t buf[4];
        cradle_cursor w = cradle_cursor_writer(buf, sizeof buf);
        cradle_cursor_put_i32(&w, i32s[i]);
        /* Two's complement, little-endian. */
        uint32_t bits = (uint32_t)i32s[i];
        for (int b = 0; b < 4; b++) assert_int_equal(buf[b], (uint8_t)(bits >> (8 * b)));
        cradle_cursor r = cradle_cursor_reader(buf, sizeof buf);
        assert_int_equal(cradle_cursor_get_i32(&r), i32s[i]);
    }
    const uint8_t min_bytes[4] = {0x00, 0x00, 0x00, 0x80}, max_bytes[4] = {0xFF, 0xFF, 0xFF, 0x7F};
    cradle_cursor r = cradle_cursor_reader(min_bytes, 4);
    assert_true(cradle_cursor_get_i32(&r) == INT32_MIN);
    r = cradle_cursor_reader(max_bytes, 4);
    assert_true(cradle_cursor_get_i32(&r) == INT32_MAX);
}

static void test_bool_reads_any_nonzero(void **state) {
    (void)state;
    const uint8_t bytes[] = {0, 1, 2, 0x80, 0xFF};
    cradle_cursor r = cradle_cursor_reader(bytes, sizeof bytes);
    assert_false(cradle_cursor_get_bool(&r));
    for (int i = 0; i < 4; i++) assert_true(cradle_cursor_get_bool(&r));
    assert_false(r.failed);
}

/* ---- bounds: the sticky flag ---------------------------------------------- */

static void test_write_past_end(void **state) {
    (void)state;
    uint8_t buf[8];
    memset(buf, 0xEE, sizeof buf);
    cradle_cursor w = cradle_cursor_writer(buf, 5);
    cradle_cursor_put_u32(&w, 0x11223344u);
    assert_false(w.failed);
    assert_int_equal(cradle_cursor_remaining(&w), 1);
    cradle_cursor_put_u16(&w, 0x5566); /* needs 2, 1 left: refused */
    assert_true(w.failed);
    assert_int_equal(w.pos, 4);
    assert_int_equal(cradle_cursor_remaining(&w), 0);
    cradle_cursor_put_u8(&w, 0x77); /* would fit, but the flag is sticky */
    cradle_cursor_put_bool(&w, true);
    cradle_cursor_put_bytes(&w, "z", 1);
    assert_true(w.failed);
    const uint8_t expect[8] = {0x44, 0x33, 0x22, 0x11, 0xEE, 0xEE, 0xEE, 0xEE};
    assert_memory_equal(buf, expect, sizeof buf);

    /* Each width refuses on its own when it does not fit, writing nothing. */
    for (size_t size = 0; size < 8; size++) {
        memset(buf, 0xEE, sizeof buf);
        w = cradle_cursor_writer(buf, size);
        cradle_cursor_put_u64(&w, UINT64_MAX);
        assert_true(w.failed);
        w = cradle_cursor_writer(buf, size);
        if (size < 4) {
            cradle_cursor_put_u32(&w, 0);
            assert_true(w.failed);
            w = cradle_cursor_writer(buf, size);
            cradle_cursor_put_i32(&w, -1);
            assert_true(w.failed);
        }
        if (size < 2) {
            w = cradle_cursor_writer(buf, size);
            cradle_cursor_put_u16(&w, 0);
            assert_true(w.failed);
        }
        if (size < 1) {
            w = cradle_cursor_writer(buf, size);
            cradle_cursor_put_u8(&w, 0);
            assert_true(w.failed);
        }
        w = cradle_cursor_writer(buf, size);
        cradle_cursor_put_bytes(&w, expect, size + 1);
        assert_true(w.failed);
        for (size_t i = 0; i < sizeof buf; i++) assert_int_equal(buf[i], 0xEE);
    }
    /* A reader refuses every write. */
    cradle_cursor r = cradle_cursor_reader(buf, sizeof buf);
    cradle_cursor_put_u8(&r, 1);
    assert_true(r.failed);
    for (size_t i = 0; i < sizeof buf; i++) assert_int_equal(buf[i], 0xEE);
}

static void test_read_past_end(void **state) {
    (void)state;
    const uint8_t bytes[6] = {1, 2, 3, 4, 5, 6};
    cradle_cursor r = cradle_cursor_reader(bytes, sizeof bytes);
    assert_int_equal(cradle_cursor_get_u32(&r), 0x04030201u);
    assert_int_equal(cradle_cursor_get_u32(&r), 0); /* 2 left: refused, reads 0 */
    assert_true(r.failed);
    assert_int_equal(r.pos, 4);
    assert_int_equal(cradle_cursor_remaining(&r), 0);
    assert_int_equal(cradle_cursor_get_u8(&r), 0); /* would fit, flag is sticky */
    assert_int_equal(cradle_cursor_get_u16(&r), 0);
    assert_int_equal(cradle_cursor_get_u64(&r), 0);
    assert_int_equal(cradle_cursor_get_i32(&r), 0);
    assert_false(cradle_cursor_get_bool(&r));
    uint8_t out[4];
    memset(out, 0xEE, sizeof out);
    cradle_cursor_get_bytes(&r, out, sizeof out);
    for (size_t i = 0; i < sizeof out; i++) assert_int_equal(out[i], 0);

    for (size_t size = 0; size <= sizeof bytes; size++) {
        r = cradle_cursor_reader(bytes, size);
        assert_int_equal(cradle_cursor_get_u64(&r), 0);
        assert_true(r.failed);
    }
    r = cradle_cursor_reader(bytes, 1);
    assert_true(cradle_cursor_get_u8(&r) == 1);
    assert_true(cradle_cursor_get_bool(&r) == false);
    assert_true(r.failed);
    /* Reading on a writer works too, with the same bounds. */
    uint8_t buf[2] = {0x34, 0x12};
    cradle_cursor w = cradle_cursor_writer(buf, sizeof buf);
    assert_int_equal(cradle_cursor_get_u16(&w), 0x1234);
    assert_int_equal(cradle_cursor_get_u8(&w), 0);
    assert_true(w.failed);
}

static void test_zero_length_and_full_snapshot(void **state) {
    (void)state;
    uint8_t buf[CRADLE_SNAPSHOT_MAX];
    cradle_cursor w = cradle_cursor_writer(buf, sizeof buf);
    cradle_cursor_put_bytes(&w, NULL, 0);
    assert_false(w.failed);
    for (uint32_t i = 0; i < CRADLE_SNAPSHOT_MAX; i++) cradle_cursor_put_u8(&w, (uint8_t)(i * 7u));
    assert_false(w.failed);
    assert_int_equal(cradle_cursor_remaining(&w), 0);
    cradle_cursor_put_bytes(&w, NULL, 0); /* zero bytes still fit at the end */
    assert_false(w.failed);
    cradle_cursor_put_u8(&w, 1);
    assert_true(w.failed);
    cradle_cursor r = cradle_cursor_reader(buf, sizeof buf);
    for (uint32_t i = 0; i < CRADLE_SNAPSHOT_MAX; i++) {
        if (cradle_cursor_get_u8(&r) != (uint8_t)(i * 7u)) fail_msg("byte %u", i);
    }
    assert_false(r.failed);
}

/* ---- bit fields ------------------------------------------------------------ */

static uint64_t load64(const uint8_t *p) { return cradle_cursor_load_u64(p); }

static void test_bits_every_offset_and_width(void **state) {
    (void)state;
    const uint64_t backgrounds[] = {0, UINT64_MAX, 0xA5C3F00F5A3C0FF0ull};
    const uint32_t values[] = {0, UINT32_MAX, 0x12345678u, 0xAAAAAAAAu, 0x55555555u, 1u};
    for (size_t g = 0; g < sizeof backgrounds / sizeof backgrounds[0]; g++) {
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            for (unsigned width = 1; width <= 32; width++) {
                for (size_t bit = 0; bit + width <= 64; bit++) {
                    uint8_t buf[8];
                    cradle_cursor_store_u64(buf, backgrounds[g]);
                    assert_true(cradle_bits_put(buf, sizeof buf, bit, width, values[v]));
                    uint64_t mask = (width == 64 ? UINT64_MAX : ((1ull << width) - 1u)) << bit;
                    uint64_t want = (backgrounds[g] & ~mask) |
                                    (((uint64_t)values[v] << bit) & mask);
                    if (load64(buf) != want) {
                        fail_msg("put bit %zu width %u: %016llx, want %016llx", bit, width,
                                 (unsigned long long)load64(buf), (unsigned long long)want);
                    }
                    uint32_t got = 0xDEADBEEFu;
                    assert_true(cradle_bits_get(buf, sizeof buf, bit, width, &got));
                    uint32_t low = width == 32 ? values[v] : values[v] & ((1u << width) - 1u);
                    if (got != low) fail_msg("get bit %zu width %u: %x, want %x", bit, width, got, low);
                }
            }
        }
    }
}

static void test_bits_layout(void **state) {
    (void)state;
    uint8_t buf[4] = {0, 0, 0, 0};
    /* Bit 0 is the least significant bit of byte 0. */
    assert_true(cradle_bits_put(buf, 4, 0, 1, 1));
    assert_int_equal(buf[0], 0x01);
    assert_true(cradle_bits_put(buf, 4, 7, 1, 1));
    assert_int_equal(buf[0], 0x81);
    /* A field across a byte boundary: 4 bits at offset 6 -> bits 6,7 of byte
     * 0 and bits 0,1 of byte 1. */
    memset(buf, 0, sizeof buf);
    assert_true(cradle_bits_put(buf, 4, 6, 4, 0xF));
    assert_int_equal(buf[0], 0xC0);
    assert_int_equal(buf[1], 0x03);
    /* 12 bits at offset 4: value 0xABC -> byte0 high nibble C, byte1 AB. */
    memset(buf, 0, sizeof buf);
    assert_true(cradle_bits_put(buf, 4, 4, 12, 0xABC));
    assert_int_equal(buf[0], 0xC0);
    assert_int_equal(buf[1], 0xAB);
    assert_int_equal(buf[2], 0x00);
    /* Bits above the width are ignored. */
    memset(buf, 0, sizeof buf);
    assert_true(cradle_bits_put(buf, 4, 0, 3, 0xFFFFFFF8u | 5u));
    assert_int_equal(buf[0], 0x05);
    assert_int_equal(buf[1], 0x00);
}

static void test_bits_out_of_range(void **state) {
    (void)state;
    uint8_t buf[4] = {0x11, 0x22, 0x33, 0x44};
    const uint8_t orig[4] = {0x11, 0x22, 0x33, 0x44};
    uint32_t v = 0xDEADBEEFu;

    /* widths 0 and 33 */
    assert_false(cradle_bits_put(buf, 4, 0, 0, 1));
    assert_false(cradle_bits_put(buf, 4, 0, 33, 1));
    assert_false(cradle_bits_get(buf, 4, 0, 0, &v));
    assert_int_equal(v, 0);
    v = 1;
    assert_false(cradle_bits_get(buf, 4, 0, 33, &v));
    assert_int_equal(v, 0);
    /* the last bit fits, one more does not */
    for (unsigned width = 1; width <= 32; width++) {
        size_t last = 32 - width;
        assert_true(cradle_bits_get(buf, 4, last, width, &v));
        v = 1;
        assert_false(cradle_bits_get(buf, 4, last + 1, width, &v));
        assert_int_equal(v, 0);
        assert_false(cradle_bits_put(buf, 4, last + 1, width, UINT32_MAX));
        assert_memory_equal(buf, orig, 4);
    }
    assert_false(cradle_bits_put(buf, 3, 20, 8, 0));
    assert_false(cradle_bits_put(buf, 0, 0, 1, 0));
    assert_false(cradle_bits_put(buf, 4, 1000, 1, 0));
    /* Offsets near SIZE_MAX must not wrap around to the start of the buffer
     * (the size is a lie here; a correct check rejects before touching it). */
    assert_false(cradle_bits_put(buf, SIZE_MAX, SIZE_MAX - 3, 8, 0));
    assert_false(cradle_bits_put(buf, SIZE_MAX / 4, SIZE_MAX - 3, 8, 0));
    v = 1;
    assert_false(cradle_bits_get(buf, SIZE_MAX, SIZE_MAX, 1, &v));
    assert_int_equal(v, 0);
    assert_memory_equal(buf, orig, 4);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_button_edges),
        cmocka_unit_test(test_little_endian_layout),
        cmocka_unit_test(test_roundtrip_extremes),
        cmocka_unit_test(test_bool_reads_any_nonzero),
        cmocka_unit_test(test_write_past_end),
        cmocka_unit_test(test_read_past_end),
        cmocka_unit_test(test_zero_length_and_full_snapshot),
        cmocka_unit_test(test_bits_every_offset_and_width),
        cmocka_unit_test(test_bits_layout),
        cmocka_unit_test(test_bits_out_of_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
