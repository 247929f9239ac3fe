/* Tests for golden_digest: the digest golden file parsed strictly (every
 * field, its order and consistency, every truncation), formatted back to
 * the same bytes, and the windowed BLAKE2b-128 against b2sum's values. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/golden_digest.h"

#define CAPACITY 64u

/* 7 steps in windows of 3: windows at steps 10, 13 and 16 (the last one step long). */
#define GOOD                                                                           \
    "cradle-golden-digest 1\ngame vanguard\nhash blake2b-128\nwindow 3\nfrom 10\n"     \
    "steps 7\nbytes 539\nwindows 3\n"                                                  \
    "10 000102030405060708090a0b0c0d0e0f\n13 cae66941d9efbd404e4d88758ea67670\n"       \
    "16 ffeeddccbbaa99887766554433221100\nend\n"

/* Parses text (copied to a buffer of exactly its size, so an overread is
 * an ASan finding). */
static int parse(const char *text, size_t n, cradle_golden_digest *d, cradle_golden_digest_value *digests,
                 char *message, size_t message_size) {
    uint8_t *bytes = malloc(n ? n : 1);
    assert_non_null(bytes);
    memcpy(bytes, text, n);
    int rc = cradle_golden_digest_parse(d, bytes, n, digests, CAPACITY, message, message_size);
    free(bytes);
    return rc;
}

static void test_good_file(void **unused) {
    (void)unused;
    cradle_golden_digest d;
    cradle_golden_digest_value digests[CAPACITY];
    char message[CRADLE_GOLDEN_DIGEST_MESSAGE_MAX];
    assert_int_equal(parse(GOOD, strlen(GOOD), &d, digests, message, sizeof message), 0);
    assert_string_equal(message, "");
    assert_string_equal(d.game, "vanguard");
    assert_int_equal(d.window, 3);
    assert_int_equal(d.from, 10);
    assert_int_equal(d.steps, 7);
    assert_int_equal(d.bytes, 539);
    assert_int_equal(d.windows, 3);
    assert_int_equal(d.digests[0][15], 0x0f);
    assert_int_equal(d.digests[1][0], 0xca);
    assert_int_equal(d.digests[2][0], 0xff);
    uint64_t first, last;
    cradle_golden_digest_window_steps(&d, 0, &first, &last);
    assert_int_equal(first, 10);
    assert_int_equal(last, 12);
    cradle_golden_digest_window_steps(&d, 2, &first, &last);
    assert_int_equal(first, 16);
    assert_int_equal(last, 16);
    /* Formatted back: the same bytes; sized first with capacity 0. */
    size_t n = cradle_golden_digest_format(&d, NULL, 0);
    assert_int_equal(n, strlen(GOOD));
    char out[sizeof GOOD];
    assert_int_equal(cradle_golden_digest_format(&d, out, sizeof out), n);
    assert_memory_equal(out, GOOD, n);
    /* Too small a buffer: nothing written past its end. */
    memset(out, '#', sizeof out);
    assert_int_equal(cradle_golden_digest_format(&d, out, 10), n);
    assert_int_equal(out[10], '#');
    assert_true(cradle_golden_digest_is(GOOD, strlen(GOOD)));
    assert_false(cradle_golden_digest_is(GOOD, 22));
    assert_false(cradle_golden_digest_is("\x00\x01\x02", 3));
}

/* An empty output is a valid golden: no windows. */
static void test_empty_output(void **unused) {
    (void)unused;
    const char *empty = "cradle-golden-digest 1\ngame g\nhash blake2b-128\nwindow 1\nfrom 5\nsteps 0\n"
                        "bytes 0\nwindows 0\nend\n";
    cradle_golden_digest d;
    cradle_golden_digest_value digests[CAPACITY];
    char message[CRADLE_GOLDEN_DIGEST_MESSAGE_MAX];
    assert_int_equal(parse(empty, strlen(empty), &d, digests, message, sizeof message), 0);
    assert_int_equal(d.windows, 0);
    char out[256];
    assert_int_equal(cradle_golden_digest_format(&d, out, sizeof out), strlen(empty));
    assert_memory_equal(out, empty, strlen(empty));
}

static void expect_refusal(const char *text, const char *part) {
    cradle_golden_digest d;
    cradle_golden_digest_value digests[CAPACITY];
    char message[CRADLE_GOLDEN_DIGEST_MESSAGE_MAX] = "";
    int rc = parse(text, strlen(text), &d, digests, message, sizeof message);
    if (rc != CRADLE_EGOLDEN_DIGEST || !strstr(message, part))
        fail_msg("rc %d, message \"%s\", wanted \"%s\"", rc, message, part);
    assert_int_equal(d.windows, 0); /* nothing half-parsed is left */
}

#define HEAD "cradle-golden-digest 1\ngame g\nhash blake2b-128\n"
#define SHAPE HEAD "window 3\nfrom 10\nsteps 7\nbytes 539\nwindows 3\n"

static void test_refusals(void **unused) {
    (void)unused;
    expect_refusal("", "line 1: not a digest golden file");
    expect_refusal("cradle-golden-digest 2\n", "line 1: not a digest golden file");
    expect_refusal("\x89" "CRDLOG\n", "not a digest golden file");
    expect_refusal("cradle-golden-digest 1\n", "line 2: the file ends before the game line");
    expect_refusal("cradle-golden-digest 1\nname g\n", "line 2: expected \"game <name>\", got \"name g\"");
    expect_refusal("cradle-golden-digest 1\ngame \n", "line 2: game name is 0 bytes, not 1..31");
    expect_refusal("cradle-golden-digest 1\ngame 0123456789abcdef0123456789abcdef\n",
                   "line 2: game name is 32 bytes, not 1..31");
    expect_refusal("cradle-golden-digest 1\ngame g\r\n", "line 2: byte 0x0d is not printable ASCII");
    expect_refusal("cradle-golden-digest 1\ngame g", "line 2: the file ends inside the game line, without its newline");
    expect_refusal(HEAD "x", "line 4: the file ends inside window");
    expect_refusal("cradle-golden-digest 1\ngame g\nhash sha256\n", "line 3: hash 'sha256' is not blake2b-128");
    expect_refusal(HEAD "window 0\n", "line 4: window '0' is not 1..4294967295");
    expect_refusal(HEAD "window 4294967296\n", "line 4: window '4294967296' is not 1..4294967295");
    expect_refusal(HEAD "window 03\n", "line 4: window '03' is not 1..4294967295 in decimal without leading zeros");
    expect_refusal(HEAD "window +3\n", "line 4: window '+3'");
    expect_refusal(HEAD "window 3\nsteps 7\n", "line 5: expected \"from <number>\", got \"steps 7\"");
    expect_refusal(HEAD "window 3\nfrom 18446744073709551615\nsteps 1\n",
                   "line 6: steps '1' is not 0..0");
    expect_refusal(HEAD "window 3\nfrom 0\nsteps 2\nbytes 2049\n",
                   "line 7: bytes 2049 is more than 2 steps of at most 1024 bytes output");
    expect_refusal(HEAD "window 3\nfrom 0\nsteps 7\nbytes 7\nwindows 2\n",
                   "line 8: windows 2 is not ceil(steps 7 / window 3) = 3");
    expect_refusal(HEAD "window 1\nfrom 0\nsteps 1000\nbytes 0\nwindows 1000\n",
                   "line 9: the file ends before a window line");
    expect_refusal(SHAPE, "line 9: the file ends before a window line");
    expect_refusal(SHAPE "10 000102030405060708090a0b0c0d0e0f\n11 000102030405060708090a0b0c0d0e0f\n",
                   "line 10: window 1: first step '11' is not 13 (from + 1 x window)");
    expect_refusal(SHAPE "010 000102030405060708090a0b0c0d0e0f\n", "line 9: window 0: first step '010' is not 10");
    expect_refusal(SHAPE "10000102030405060708090a0b0c0d0e0f\n", "line 9: window 0: expected \"<first step> <digest>\"");
    expect_refusal(SHAPE "10 000102030405060708090A0B0C0D0E0F\n", "line 9: window 0: digest '000102030405060708090A0B0C0D0E0F' is not 32 lowercase hex digits");
    expect_refusal(SHAPE "10 000102030405060708090a0b0c0d0e\n", "is not 32 lowercase hex digits");
    expect_refusal(SHAPE "10 000102030405060708090a0b0c0d0e0f 1\n", "is not 32 lowercase hex digits");
    const char *windows = SHAPE "10 000102030405060708090a0b0c0d0e0f\n13 000102030405060708090a0b0c0d0e0f\n"
                                "16 000102030405060708090a0b0c0d0e0f\n";
    char text[1024];
    snprintf(text, sizeof text, "%s", windows);
    expect_refusal(text, "line 12: the file ends before the \"end\" line");
    snprintf(text, sizeof text, "%s19 000102030405060708090a0b0c0d0e0f\nend\n", windows);
    expect_refusal(text, "line 12: expected \"end\" after 3 window lines, got \"19 0001");
    snprintf(text, sizeof text, "%send\n\n", windows);
    expect_refusal(text, "line 13: 1 bytes after the \"end\" line");
    snprintf(text, sizeof text, "%send", windows);
    expect_refusal(text, "line 12: the file ends inside the \"end\" line, without its newline");
    /* A caller's buffer smaller than the file's windows. */
    cradle_golden_digest d;
    cradle_golden_digest_value two[2];
    char message[CRADLE_GOLDEN_DIGEST_MESSAGE_MAX];
    assert_int_equal(cradle_golden_digest_parse(&d, (const uint8_t *)GOOD, strlen(GOOD), two, 2, message, sizeof message),
                     CRADLE_EGOLDEN_DIGEST);
    assert_non_null(strstr(message, "line 11: window 2: more windows than the 2 the caller has room for"));
    char longline[300];
    memset(longline, 'a', sizeof longline);
    memcpy(longline, "cradle-golden-digest 1\ngame ", 28);
    longline[sizeof longline - 1] = '\0';
    expect_refusal(longline, "line 2: longer than 128 bytes");
}

/* Every prefix of a good file is refused with a message and read no
 * further than its end (ASan), and so is the good file with any one byte
 * made a line break, or a line break made a space. */
static void test_every_truncation(void **unused) {
    (void)unused;
    size_t n = strlen(GOOD);
    cradle_golden_digest d;
    cradle_golden_digest_value digests[CAPACITY];
    char message[CRADLE_GOLDEN_DIGEST_MESSAGE_MAX];
    for (size_t cut = 0; cut < n; cut++) {
        message[0] = '\0';
        assert_int_equal(parse(GOOD, cut, &d, digests, message, sizeof message), CRADLE_EGOLDEN_DIGEST);
        assert_true(strlen(message) > 0);
    }
    char changed[sizeof GOOD];
    for (size_t at = 0; at < n; at++) {
        memcpy(changed, GOOD, sizeof GOOD);
        changed[at] = changed[at] == '\n' ? ' ' : '\n';
        message[0] = '\0';
        int rc = parse(changed, n, &d, digests, message, sizeof message);
        assert_int_equal(rc, CRADLE_EGOLDEN_DIGEST);
        assert_true(strlen(message) > 0);
    }
}

/* The digester: windows of W steps, each BLAKE2b-128 of its steps' bytes,
 * as b2sum -l 128 gives them. */
static void test_digester(void **unused) {
    (void)unused;
    assert_int_equal(sodium_init() >= 0, 1);
    cradle_golden_digester g;
    cradle_golden_digest_value out;
    /* "a", "b", "c" as three steps of one window: b2sum -l 128 of "abc". */
    static const uint8_t abc[16] = {0xcf, 0x4a, 0xb7, 0x91, 0xc6, 0x2b, 0x8d, 0x2b,
                                    0x21, 0x09, 0xc9, 0x02, 0x75, 0x28, 0x78, 0x16};
    cradle_golden_digester_init(&g, 3, 100);
    assert_false(cradle_golden_digester_add(&g, 100, "a", 1, &out));
    assert_false(cradle_golden_digester_add(&g, 101, "b", 1, &out));
    assert_true(cradle_golden_digester_add(&g, 102, "c", 1, &out));
    assert_memory_equal(out, abc, 16);
    assert_false(cradle_golden_digester_finish(&g, &out)); /* nothing open */
    /* A last, shorter window of steps with no output: b2sum of nothing. */
    static const uint8_t empty[16] = {0xca, 0xe6, 0x69, 0x41, 0xd9, 0xef, 0xbd, 0x40,
                                      0x4e, 0x4d, 0x88, 0x75, 0x8e, 0xa6, 0x76, 0x70};
    assert_false(cradle_golden_digester_add(&g, 103, NULL, 0, &out));
    assert_true(cradle_golden_digester_finish(&g, &out));
    assert_memory_equal(out, empty, 16);
    assert_int_equal(g.windows, 2);
    assert_int_equal(g.steps, 4);
    assert_int_equal(g.bytes, 3);
    /* Window boundaries do not depend on how the bytes are split in a
     * window, and a window of 1 step digests each step alone. */
    uint8_t data[300];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7u);
    cradle_golden_digester_init(&g, 1, 0);
    for (uint64_t s = 0; s < 3; s++) {
        assert_true(cradle_golden_digester_add(&g, s, data + 100 * s, 100, &out));
        uint8_t want[16];
        crypto_generichash(want, sizeof want, data + 100 * s, 100, NULL, 0);
        assert_memory_equal(out, want, 16);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_empty_output),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_digester),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
