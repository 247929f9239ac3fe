/* test_wasm_module: the custom section reader (wasm_module.h) over modules
 * written here byte by byte: a valid one, every truncation of it, a bad
 * magic and version, LEB128 sizes (padded, overlong, too large), sizes past
 * the end, custom section names (missing, too long, not UTF-8), section ids
 * and their order, and two custom sections of one name. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cradle/wasm_module.h"

/* A module being written: the header, then sections appended. */
typedef struct module {
    uint8_t bytes[512];
    size_t size;
} module;

static void put(module *m, const void *bytes, size_t n) {
    assert_true(m->size + n <= sizeof m->bytes);
    memcpy(m->bytes + m->size, bytes, n);
    m->size += n;
}

static void put_byte(module *m, uint8_t b) { put(m, &b, 1); }

/* Minimal LEB128, as a toolchain writes it. */
static void put_leb(module *m, uint32_t v) {
    do {
        uint8_t b = v & 0x7fu;
        v >>= 7;
        put_byte(m, (uint8_t)(v ? b | 0x80u : b));
    } while (v);
}

static module header(void) {
    module m = {.size = 0};
    put(&m, "\0asm\1\0\0\0", 8);
    return m;
}

static void put_custom(module *m, const char *name, const char *payload) {
    size_t name_size = strlen(name), payload_size = strlen(payload);
    module content = {.size = 0};
    put_leb(&content, (uint32_t)name_size);
    put(&content, name, name_size);
    put(&content, payload, payload_size);
    put_byte(m, 0);
    put_leb(m, (uint32_t)content.size);
    put(m, content.bytes, content.size);
}

/* A known section with content bytes of its own (not decoded here). */
static void put_section(module *m, uint8_t id, const void *content, size_t n) {
    put_byte(m, id);
    put_leb(m, (uint32_t)n);
    put(m, content, n);
}

static int find(const module *m, const char *name, const uint8_t **payload, size_t *payload_size, char *message,
                size_t message_size) {
    return cradle_wasm_custom_section(m->bytes, m->size, name, payload, payload_size, message, message_size);
}

/* m is refused as no module, with a message that starts with want. */
static void refused(const module *m, const char *want) {
    const uint8_t *payload = (const uint8_t *)"x";
    size_t payload_size = 7;
    char message[160];
    int rc = find(m, "cradle_build", &payload, &payload_size, message, sizeof message);
    if (rc != CRADLE_EWASM) fail_msg("rc %d (%s), wanted a refusal \"%s\"", rc, message, want);
    if (strncmp(message, want, strlen(want)) != 0) fail_msg("\"%s\", wanted \"%s...\"", message, want);
    assert_null(payload);
    assert_int_equal(payload_size, 0);
}

/* m is valid and its "cradle_build" payload is want. */
static void found(const module *m, const char *want) {
    const uint8_t *payload = NULL;
    size_t payload_size = 0;
    char message[160];
    int rc = find(m, "cradle_build", &payload, &payload_size, message, sizeof message);
    if (rc != 0) fail_msg("rc %d: %s", rc, message);
    assert_non_null(payload);
    assert_int_equal(payload_size, strlen(want));
    assert_memory_equal(payload, want, payload_size);
    assert_string_equal(message, "");
}

/* What a build's twin looks like: a few sections a compiler writes, the
 * build id in "cradle_build" between them, a name section at the end. */
static module twin(size_t *boundaries, size_t *boundary_count, size_t *after_build) {
    static const uint8_t types[] = {0x01, 0x60, 0x00, 0x00};             /* one type: () -> () */
    static const uint8_t functions[] = {0x01, 0x00};                     /* one function of type 0 */
    static const uint8_t memory[] = {0x01, 0x00, 0x01};                  /* one memory, 1 page */
    static const uint8_t exports[] = {0x01, 0x01, 'f', 0x00, 0x00};      /* "f" = function 0 */
    static const uint8_t code[] = {0x01, 0x02, 0x00, 0x0b};              /* its body: end */
    module m = header();
    size_t n = 0;
    boundaries[n++] = m.size;
    put_section(&m, 1, types, sizeof types);
    boundaries[n++] = m.size;
    put_section(&m, 3, functions, sizeof functions);
    boundaries[n++] = m.size;
    put_section(&m, 5, memory, sizeof memory);
    boundaries[n++] = m.size;
    put_custom(&m, "cradle_build", "counter-4f2a9c");
    *after_build = m.size;
    boundaries[n++] = m.size;
    put_section(&m, 7, exports, sizeof exports);
    boundaries[n++] = m.size;
    put_section(&m, 10, code, sizeof code);
    boundaries[n++] = m.size;
    put_custom(&m, "name", "\x01\x04\x01\x00\x01" "f");
    *boundary_count = n;
    return m;
}

static void test_a_valid_module(void **state) {
    (void)state;
    size_t boundaries[16], count, after_build;
    module m = twin(boundaries, &count, &after_build);
    found(&m, "counter-4f2a9c");

    /* another name: the module is valid, the section absent */
    const uint8_t *payload = (const uint8_t *)"x";
    size_t payload_size = 3;
    char message[160];
    assert_int_equal(find(&m, "cradle_builds", &payload, &payload_size, message, sizeof message),
                     CRADLE_EWASM_NO_SECTION);
    assert_string_equal(message, "no custom section \"cradle_builds\"");
    assert_null(payload);
    assert_int_equal(payload_size, 0);
    assert_int_equal(find(&m, "cradle_buil", &payload, &payload_size, NULL, 0), CRADLE_EWASM_NO_SECTION);
    assert_int_equal(find(&m, "", &payload, &payload_size, message, sizeof message), CRADLE_EWASM_NO_SECTION);

    /* the header alone is a module without sections */
    module empty = header();
    assert_int_equal(find(&empty, "cradle_build", &payload, &payload_size, message, sizeof message),
                     CRADLE_EWASM_NO_SECTION);

    /* an empty payload, and a name of UTF-8 beyond ASCII */
    module bare = header();
    put_custom(&bare, "caf\xc3\xa9 \xf0\x9f\x8e\xae", "");
    put_custom(&bare, "cradle_build", "");
    found(&bare, "");
    assert_int_equal(cradle_wasm_custom_section(bare.bytes, bare.size, "caf\xc3\xa9 \xf0\x9f\x8e\xae", &payload,
                                                &payload_size, message, sizeof message),
                     0);
    assert_int_equal(payload_size, 0);

    /* a section of size 0 that is not a custom one: fine */
    module zero = header();
    put_section(&zero, 1, "", 0);
    put_custom(&zero, "cradle_build", "b");
    found(&zero, "b");
}

static void test_truncated_at_every_byte(void **state) {
    (void)state;
    size_t boundaries[16], count, after_build;
    module whole = twin(boundaries, &count, &after_build);
    for (size_t cut = 0; cut < whole.size; cut++) {
        module m = whole;
        m.size = cut;
        const uint8_t *payload;
        size_t payload_size;
        char message[160] = "";
        int rc = find(&m, "cradle_build", &payload, &payload_size, message, sizeof message);
        bool boundary = false;
        for (size_t i = 0; i < count; i++) boundary = boundary || boundaries[i] == cut;
        /* Cut between sections, the rest is a shorter valid module. */
        int want = !boundary ? CRADLE_EWASM : cut >= after_build ? 0 : CRADLE_EWASM_NO_SECTION;
        if (rc != want) fail_msg("cut at %zu of %zu: rc %d (%s), wanted %d", cut, whole.size, rc, message, want);
        if (rc == CRADLE_EWASM && strncmp(message, "byte ", 5) != 0) fail_msg("cut at %zu: \"%s\"", cut, message);
    }
    /* the message names where it ends */
    module m = whole;
    m.size = 3;
    refused(&m, "byte 3: the module ends inside its magic");
    m.size = 6;
    refused(&m, "byte 6: the module ends inside its version");
    m.size = 9;
    refused(&m, "byte 9: the section's size ends after 0 of its bytes");
    m.size = boundaries[3] + 5; /* inside the custom section's content */
    refused(&m, "byte 23: section id 0 of 27 bytes runs past the end of the module (3 bytes left)");
}

static void test_bad_magic_and_version(void **state) {
    (void)state;
    module m = header();
    m.bytes[3] = 'n';
    refused(&m, "byte 3: not a WebAssembly module (bad magic");
    module elf = {.size = 0};
    put(&elf, "\x7f" "ELF\2\1\1\0", 8);
    refused(&elf, "byte 0: not a WebAssembly module");
    module empty = {.size = 0};
    refused(&empty, "byte 0: the module ends inside its magic (0 bytes in all)");

    m = header();
    m.bytes[4] = 2;
    refused(&m, "byte 4: version 2, this reader knows version 1");
    m = header();
    m.bytes[7] = 1; /* version 0x01000001: read little-endian */
    refused(&m, "byte 4: version 16777217");
    module component = {.size = 0}; /* the component model's preamble */
    put(&component, "\0asm\x0d\0\1\0", 8);
    refused(&component, "byte 4: version 65549");
}

static void test_leb128_sizes(void **state) {
    (void)state;
    /* padded within 5 bytes: the format allows it */
    static const uint8_t padded[][5] = {
        {0x93, 0x00}, {0x93, 0x80, 0x00}, {0x93, 0x80, 0x80, 0x80, 0x00},
    };
    static const size_t padded_len[] = {2, 3, 5};
    for (size_t i = 0; i < 3; i++) {
        module m = header();
        put_byte(&m, 0);
        put(&m, padded[i], padded_len[i]); /* 0x13 = 19 bytes of content */
        put_leb(&m, 12);
        put(&m, "cradle_build", 12);
        put(&m, "abcdef", 6);
        found(&m, "abcdef");
    }
    /* a sixth byte */
    module m = header();
    put_byte(&m, 0);
    put(&m, "\x80\x80\x80\x80\x80\x00", 6);
    refused(&m, "byte 13: the section's size is no LEB128 u32 (longer than 5 bytes, or above 2^32-1)");
    /* a fifth byte with bits past 32 */
    m = header();
    put_byte(&m, 0);
    put(&m, "\xff\xff\xff\xff\x1f", 5);
    refused(&m, "byte 13: the section's size is no LEB128 u32");
    /* 2^32 - 1 is a u32, and runs past the end */
    m = header();
    put_byte(&m, 0);
    put(&m, "\xff\xff\xff\xff\x0f", 5);
    refused(&m, "byte 8: section id 0 of 4294967295 bytes runs past the end of the module (0 bytes left)");
    /* the same rules for a custom section's name length */
    m = header();
    put_byte(&m, 0);
    put_byte(&m, 6);
    put(&m, "\x80\x80\x80\x80\x80\x00", 6);
    refused(&m, "byte 14: the custom section's name length is no LEB128 u32");
    m = header();
    put_byte(&m, 0);
    put_byte(&m, 2);
    put(&m, "\x80\x80", 2);
    refused(&m, "byte 12: the custom section's name length ends after 2 of its bytes");
}

static void test_sizes_past_the_end(void **state) {
    (void)state;
    module m = header();
    put_byte(&m, 1);
    put_byte(&m, 100);
    put(&m, "\x01\x60\x00\x00\x00", 5);
    refused(&m, "byte 8: section id 1 of 100 bytes runs past the end of the module (5 bytes left)");
    /* exactly the bytes left: fine, and the next section starts after it */
    m.bytes[9] = 5;
    const uint8_t *payload;
    size_t payload_size;
    assert_int_equal(find(&m, "cradle_build", &payload, &payload_size, NULL, 0), CRADLE_EWASM_NO_SECTION);
    put_custom(&m, "cradle_build", "x");
    found(&m, "x");
    /* one byte short: the next section's id becomes part of this one */
    m.bytes[9] = 6;
    refused(&m, "byte ");
}

static void test_custom_section_names(void **state) {
    (void)state;
    /* no name at all: an empty custom section */
    module m = header();
    put_byte(&m, 0);
    put_byte(&m, 0);
    refused(&m, "byte 10: a custom section without a name");
    /* a name longer than its section (though within the module) */
    m = header();
    put_byte(&m, 0);
    put_byte(&m, 4);
    put_byte(&m, 12);
    put(&m, "cradle_build", 12);
    refused(&m, "byte 10: a custom section's name of 12 bytes runs past its section (3 bytes left)");
    /* names that are not UTF-8: refused wherever they come */
    static const char *const bad[] = {
        "\xc0\x80",         /* overlong NUL */
        "ab\xe0\x80\xaf",   /* overlong '/' */
        "\xed\xa0\x80",     /* a surrogate */
        "\xf4\x90\x80\x80", /* above U+10FFFF */
        "\x80",             /* a lone continuation byte */
        "x\xc3",            /* cut short */
        "\xff",
    };
    static const char *const want[] = {
        "byte 11: a custom section's name is not valid UTF-8",
        "byte 13: a custom section's name is not valid UTF-8",
        "byte 11: a", "byte 11: a", "byte 11: a", "byte 12: a", "byte 11: a",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        m = header();
        put_custom(&m, bad[i], "payload");
        put_custom(&m, "cradle_build", "b");
        refused(&m, want[i]);
    }
}

static void test_section_ids_and_order(void **state) {
    (void)state;
    module m = header();
    put_section(&m, 42, "", 0);
    refused(&m, "byte 8: section id 42 is not a WebAssembly section");
    m = header();
    put_custom(&m, "cradle_build", "b");
    size_t at = m.size;
    put_section(&m, 13, "", 0); /* the tag section (exceptions): not one this reader knows */
    char want[80];
    snprintf(want, sizeof want, "byte %zu: section id 13 is not a WebAssembly section", at);
    refused(&m, want);
    m = header();
    put_section(&m, 0xff, "", 0);
    refused(&m, "byte 8: section id 255 is not");

    /* every known section once, in the specification's order (data count
     * before code), custom ones between them: fine */
    static const uint8_t order[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 10, 11};
    m = header();
    for (size_t i = 0; i < sizeof order; i++) {
        put_section(&m, order[i], "", 0);
        put_custom(&m, i == 6 ? "cradle_build" : "other", "b");
    }
    found(&m, "b");
    /* out of order, and twice */
    m = header();
    put_section(&m, 10, "", 0);
    put_section(&m, 12, "", 0);
    refused(&m, "byte 10: section id 12 after section id 10 (out of order, or twice)");
    m = header();
    put_section(&m, 1, "", 0);
    put_custom(&m, "cradle_build", "b");
    at = m.size;
    put_section(&m, 1, "", 0);
    snprintf(want, sizeof want, "byte %zu: section id 1 after section id 1", at);
    refused(&m, want);
}

static void test_two_custom_sections(void **state) {
    (void)state;
    /* the first of the name is the one */
    module m = header();
    put_custom(&m, "cradle_build", "first");
    put_custom(&m, "cradle_build", "second");
    found(&m, "first");
    /* names that only begin like it are others */
    m = header();
    put_custom(&m, "cradle_buil", "a");
    put_custom(&m, "cradle_build2", "b");
    put_custom(&m, "Cradle_build", "c");
    put_custom(&m, "cradle_build", "d");
    put_custom(&m, "cradle_build", "e");
    found(&m, "d");
    /* a damaged section after the one found still refuses the module */
    m = header();
    put_custom(&m, "cradle_build", "first");
    put_section(&m, 99, "", 0);
    refused(&m, "byte 28: section id 99");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_valid_module),
        cmocka_unit_test(test_truncated_at_every_byte),
        cmocka_unit_test(test_bad_magic_and_version),
        cmocka_unit_test(test_leb128_sizes),
        cmocka_unit_test(test_sizes_past_the_end),
        cmocka_unit_test(test_custom_section_names),
        cmocka_unit_test(test_section_ids_and_order),
        cmocka_unit_test(test_two_custom_sections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
