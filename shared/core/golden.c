#include "cradle/golden.h"

#include <string.h>

/* Chunk size: large enough that memcmp's setup cost vanishes, small enough
 * that the byte scan after a mismatch stays cheap. */
#define CHUNK 4096u

static size_t first_mismatch(const unsigned char *a, const unsigned char *b, size_t n) {
    size_t at = 0;
    while (n - at >= CHUNK) {
        if (memcmp(a + at, b + at, CHUNK) != 0) break;
        at += CHUNK;
    }
    while (at < n && a[at] == b[at]) at++;
    return at;
}

cradle_golden_result cradle_golden_compare(const void *reference, size_t reference_length,
                                           const void *output, size_t output_length) {
    size_t common = reference_length < output_length ? reference_length : output_length;
    size_t at = common ? first_mismatch(reference, output, common) : 0;
    return (cradle_golden_result){
        .equal = at == common && reference_length == output_length,
        .first_difference = at,
        .reference_length = reference_length,
        .output_length = output_length,
    };
}
