#ifndef CRADLE_TEST_UTF8_H
#define CRADLE_TEST_UTF8_H
/*
 * Test support shared by the dev protocol's unit test and its fuzz harness:
 * replies must be valid JSON whatever bytes a request held, so both check the
 * reply is valid UTF-8 before parsing it. Header-only, no test framework.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when bytes[0..n) is valid UTF-8 (RFC 3629). */
static inline bool valid_utf8(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t len;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2, cp = c & 0x1Fu;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3, cp = c & 0x0Fu;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4, cp = c & 0x07u;
        } else {
            return false;
        }
        if (i + len > n) return false;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (s[i + k] & 0x3Fu);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return false;
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += len;
    }
    return true;
}

#endif
