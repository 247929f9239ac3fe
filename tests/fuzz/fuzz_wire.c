/*
 * fuzz_wire: the wire codec on arbitrary bytes. Decoding must never crash or
 * read out of bounds, and whatever decodes must re-encode to the same bytes
 * (the format has one encoding per message).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t again[CRADLE_WIRE_MESSAGE_MAX];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cradle_wire_message m;
    int rc = cradle_wire_decode(&m, data, size);
    if (rc != 0) {
        if (m.problem == NULL) abort();
        return 0;
    }
    size_t n = 0;
    if (cradle_wire_encode(again, sizeof again, &n, &m) != 0) abort();
    if (n != size || memcmp(again, data, size) != 0) abort();
    return 0;
}
