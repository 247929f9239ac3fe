/*
 * parse: strict decimal numbers (see parse.h).
 */
#include "cradle/parse.h"

#include <assert.h>
#include <stddef.h>

bool cradle_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out) {
    assert(out != NULL && min <= max);
    if (text == NULL || *text == '\0') return false;
    uint64_t v = 0;
    for (const char *p = text; *p != '\0'; p++) {
        if (*p < '0' || *p > '9') return false;
        uint64_t digit = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - digit) / 10u) return false; /* v * 10 + digit would wrap */
        v = v * 10u + digit;
    }
    if (v < min || v > max) return false;
    *out = v;
    return true;
}
