/*
 * fuzz_wasm_module: a game build's WebAssembly twin (outside bytes: a file
 * beside the game library, published to every viewer's browser) through
 * cradle_wasm_custom_section. The input is a heap buffer of exactly its
 * size, so any overread is an ASan finding.
 *
 * A refusal is CRADLE_EWASM with a "byte N: " message, N within the input;
 * a valid module without the section is CRADLE_EWASM_NO_SECTION. A section
 * found is within the input, after its name; the answer does not depend on
 * the name asked for beyond that name (a second look for another name sees
 * the same module valid or not).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/wasm_module.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool says_byte_within(const char *message, size_t size) {
    if (strncmp(message, "byte ", 5) != 0) return false;
    char *end;
    unsigned long long at = strtoull(message + 5, &end, 10);
    return end != message + 5 && end[0] == ':' && at <= size;
}

static int look(const uint8_t *bytes, size_t size, const char *name) {
    const uint8_t *payload = (const uint8_t *)"";
    size_t payload_size = 1;
    char message[200];
    memset(message, 'x', sizeof message);
    int rc = cradle_wasm_custom_section(bytes, size, name, &payload, &payload_size, message, sizeof message);
    if (!memchr(message, 0, sizeof message)) abort();
    if (rc == 0) {
        size_t n = strlen(name);
        if (!payload || payload < bytes + 8 + 2 + n || payload + payload_size > bytes + size) abort();
        if (memcmp(payload - n, name, n) != 0) abort();
    } else {
        if (payload || payload_size) abort();
        if (rc == CRADLE_EWASM) {
            if (!says_byte_within(message, size)) abort();
        } else if (rc != CRADLE_EWASM_NO_SECTION || strncmp(message, "no custom section", 17) != 0) {
            abort();
        }
    }
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes) abort();
    memcpy(bytes, data, size);
    int a = look(bytes, size, "cradle_build");
    int b = look(bytes, size, "name");
    if ((a == CRADLE_EWASM) != (b == CRADLE_EWASM)) abort();
    free(bytes);
    return 0;
}
