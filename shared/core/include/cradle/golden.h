#ifndef CRADLE_GOLDEN_H
#define CRADLE_GOLDEN_H
/*
 * golden: exact byte comparison of a run's output with a saved reference.
 *
 * The comparison runs at memcmp speed: it compares large chunks with memcmp
 * and looks for the exact byte only inside the first chunk that differs. A
 * caller parses both outputs only when they differ (to show them readably).
 */
#include <stdbool.h>
#include <stddef.h>

typedef struct cradle_golden_result {
    bool equal;
    size_t first_difference; /* offset of the first differing byte; when one
                                output is a prefix of the other, the shorter
                                length; equal to the length when equal */
    size_t reference_length;
    size_t output_length;
} cradle_golden_result;

cradle_golden_result cradle_golden_compare(const void *reference, size_t reference_length,
                                           const void *output, size_t output_length);

#endif
