/*
 * wasm_module: the section list of a WebAssembly module (wasm_module.h has
 * the format), read strictly to find one custom section.
 */
#include "cradle/wasm_module.h"

#include <assert.h>
#include <stdbool.h>
#include <string.h>

#include "cradle/internal.h"

static const uint8_t wasm_magic[4] = {0x00, 'a', 's', 'm'};

enum { LEB_U32_MAX_BYTES = 5, SECTION_ID_MAX = 12 };

/* Where each known non-custom section must come: the specification's order
 * (data count, id 12, comes before code, id 10). */
static const uint8_t section_rank[SECTION_ID_MAX + 1] = {
    [1] = 1, [2] = 2, [3] = 3, [4] = 4, [5] = 5, [6] = 6, [7] = 7, [8] = 8, [9] = 9, [12] = 10, [10] = 11, [11] = 12,
};

/* An unsigned LEB128 u32 at *at, read no further than end. Returns 0 and
 * advances *at past it, or CRADLE_EWASM naming `what` and the byte at fault:
 * the end of the bytes inside it, a sixth byte, or a fifth byte with bits
 * beyond the 32 a u32 has. */
static int leb_u32(const uint8_t *module, size_t *at, size_t end, const char *what, uint32_t *out, char *message,
                   size_t message_size) {
    size_t start = *at;
    uint32_t value = 0;
    for (unsigned i = 0; i < LEB_U32_MAX_BYTES; i++) {
        size_t p = start + i;
        if (p >= end)
            return cradle__say(CRADLE_EWASM, message, message_size, "byte %zu: the %s ends after %u of its bytes",
                               p, what, i);
        uint8_t b = module[p];
        if (i == LEB_U32_MAX_BYTES - 1u && (b & 0xf0u) != 0)
            return cradle__say(CRADLE_EWASM, message, message_size,
                               "byte %zu: the %s is no LEB128 u32 (longer than 5 bytes, or above 2^32-1)", p, what);
        value |= (uint32_t)(b & 0x7fu) << (7u * i);
        if ((b & 0x80u) == 0) {
            *at = p + 1u;
            *out = value;
            return 0;
        }
    }
    assert(0 && "the fifth byte's check ends the loop");
    return CRADLE_EWASM;
}

/* Length of the valid UTF-8 sequence starting at s (n bytes left), or 0:
 * no overlong form, no surrogate, nothing above U+10FFFF. */
static size_t utf8_sequence(const uint8_t *s, size_t n) {
    uint8_t c = s[0];
    if (c < 0x80u) return 1;
    size_t len;
    uint32_t cp, min;
    if (c >= 0xc2u && c <= 0xdfu) {
        len = 2, cp = c & 0x1fu, min = 0x80u;
    } else if (c >= 0xe0u && c <= 0xefu) {
        len = 3, cp = c & 0x0fu, min = 0x800u;
    } else if (c >= 0xf0u && c <= 0xf4u) {
        len = 4, cp = c & 0x07u, min = 0x10000u;
    } else {
        return 0; /* a continuation byte, an overlong lead (c0, c1) or beyond U+10FFFF (f5..ff) */
    }
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0u) != 0x80u) return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffffu || (cp >= 0xd800u && cp <= 0xdfffu)) return 0;
    return len;
}

/* The first byte of name[0..n) that is not valid UTF-8, or n. */
static size_t utf8_invalid_at(const uint8_t *name, size_t n) {
    size_t i = 0;
    while (i < n) {
        size_t len = utf8_sequence(name + i, n - i);
        if (len == 0) return i;
        i += len;
    }
    return n;
}

/* The header: magic then version 1. */
static int check_header(const uint8_t *module, size_t size, char *message, size_t message_size) {
    for (size_t i = 0; i < sizeof wasm_magic; i++) {
        if (i == size)
            return cradle__say(CRADLE_EWASM, message, message_size,
                               "byte %zu: the module ends inside its magic (%zu bytes in all)", i, size);
        if (module[i] != wasm_magic[i])
            return cradle__say(CRADLE_EWASM, message, message_size,
                               "byte %zu: not a WebAssembly module (bad magic: no \"\\0asm\")", i);
    }
    if (size < CRADLE_WASM_HEADER_BYTES)
        return cradle__say(CRADLE_EWASM, message, message_size,
                           "byte %zu: the module ends inside its version (%zu bytes in all)", size, size);
    uint32_t version = (uint32_t)module[4] | (uint32_t)module[5] << 8 | (uint32_t)module[6] << 16 |
                       (uint32_t)module[7] << 24;
    if (version != CRADLE_WASM_VERSION)
        return cradle__say(CRADLE_EWASM, message, message_size,
                           "byte 4: version %u, this reader knows version %u (a component, or another format)",
                           (unsigned)version, CRADLE_WASM_VERSION);
    return 0;
}

/* A custom section's name, content at..end: its bytes into *name_at and
 * *name_size, checked. */
static int custom_name(const uint8_t *module, size_t at, size_t end, size_t *name_at, uint32_t *name_size,
                       char *message, size_t message_size) {
    if (at == end)
        return cradle__say(CRADLE_EWASM, message, message_size, "byte %zu: a custom section without a name", at);
    size_t p = at;
    int rc = leb_u32(module, &p, end, "custom section's name length", name_size, message, message_size);
    if (rc != 0) return rc;
    if (*name_size > end - p)
        return cradle__say(CRADLE_EWASM, message, message_size,
                           "byte %zu: a custom section's name of %u bytes runs past its section (%zu bytes left)", at,
                           (unsigned)*name_size, end - p);
    size_t bad = utf8_invalid_at(module + p, *name_size);
    if (bad != *name_size)
        return cradle__say(CRADLE_EWASM, message, message_size, "byte %zu: a custom section's name is not valid UTF-8",
                           p + bad);
    *name_at = p;
    return 0;
}

int cradle_wasm_custom_section(const uint8_t *module, size_t size, const char *name, const uint8_t **payload,
                               size_t *payload_size, char *message, size_t message_size) {
    assert((module || size == 0) && name && payload && payload_size);
    *payload = NULL;
    *payload_size = 0;
    if (message && message_size) message[0] = '\0';
    int rc = check_header(module, size, message, message_size);
    if (rc != 0) return rc;
    size_t wanted = strlen(name);
    const uint8_t *found = NULL;
    size_t found_size = 0;
    unsigned last_rank = 0, last_id = 0;
    size_t at = CRADLE_WASM_HEADER_BYTES;
    while (at < size) {
        size_t section = at;
        uint8_t id = module[at++];
        if (id > SECTION_ID_MAX)
            return cradle__say(CRADLE_EWASM, message, message_size,
                               "byte %zu: section id %u is not a WebAssembly section", section, (unsigned)id);
        if (id != 0 && section_rank[id] <= last_rank)
            return cradle__say(CRADLE_EWASM, message, message_size,
                               "byte %zu: section id %u after section id %u (out of order, or twice)", section,
                               (unsigned)id, last_id);
        uint32_t content_size = 0;
        rc = leb_u32(module, &at, size, "section's size", &content_size, message, message_size);
        if (rc != 0) return rc;
        if (content_size > size - at)
            return cradle__say(CRADLE_EWASM, message, message_size,
                               "byte %zu: section id %u of %u bytes runs past the end of the module (%zu bytes left)",
                               section, (unsigned)id, (unsigned)content_size, size - at);
        size_t end = at + content_size;
        if (id == 0) {
            size_t name_at = 0;
            uint32_t name_size = 0;
            rc = custom_name(module, at, end, &name_at, &name_size, message, message_size);
            if (rc != 0) return rc;
            if (!found && name_size == wanted && memcmp(module + name_at, name, wanted) == 0) {
                found = module + name_at + name_size;
                found_size = end - (name_at + name_size);
            }
        } else {
            last_rank = section_rank[id];
            last_id = id;
        }
        at = end;
    }
    if (!found)
        return cradle__say(CRADLE_EWASM_NO_SECTION, message, message_size, "no custom section \"%.64s\"", name);
    *payload = found;
    *payload_size = found_size;
    return 0;
}
