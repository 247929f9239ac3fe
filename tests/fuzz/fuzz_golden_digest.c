/*
 * fuzz_golden_digest: a digest golden file (committed, edited by people,
 * read by cradle-replay --golden) through cradle_golden_digest_parse. The
 * input is copied into a heap buffer of exactly its size, so any overread
 * is an ASan finding. A refusal says why (CRADLE_EGOLDEN_DIGEST and a
 * NUL-terminated message); what the parser accepts is consistent (windows
 * = ceil(steps / window), every window inside the steps) and formats back
 * to exactly the input's bytes, since the format has one spelling.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/golden_digest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *bytes = malloc(size ? size : 1);
    size_t capacity = cradle_golden_digest_capacity(size);
    cradle_golden_digest_value *digests = malloc((capacity ? capacity : 1) * sizeof *digests);
    if (!bytes || !digests) abort();
    memcpy(bytes, data, size);
    cradle_golden_digest d;
    char message[CRADLE_GOLDEN_DIGEST_MESSAGE_MAX];
    int rc = cradle_golden_digest_parse(&d, bytes, size, digests, capacity, message, sizeof message);
    if (!memchr(message, 0, sizeof message)) abort();
    if (rc != 0) {
        if (rc != CRADLE_EGOLDEN_DIGEST || message[0] == '\0' || d.windows != 0) abort();
    } else {
        if (message[0] != '\0' || d.window < 1 || d.windows > capacity) abort();
        if (d.windows != d.steps / d.window + (d.steps % d.window != 0)) abort();
        if (d.windows) {
            uint64_t first, last;
            cradle_golden_digest_window_steps(&d, d.windows - 1, &first, &last);
            if (first < d.from || last != d.from + d.steps - 1 || last < first) abort();
        }
        size_t n = cradle_golden_digest_format(&d, NULL, 0);
        char *text = malloc(n ? n : 1);
        if (!text) abort();
        if (n != size || cradle_golden_digest_format(&d, text, n) != n || memcmp(text, bytes, n) != 0) abort();
        free(text);
    }
    free(digests);
    free(bytes);
    return 0;
}
