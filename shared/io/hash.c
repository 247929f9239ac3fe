#include "cradle/hash.h"

#include <sodium.h>

#include "cradle/input.h"

uint64_t cradle_hash64(const void *data, size_t size) {
    static const unsigned char zero_key[crypto_shorthash_KEYBYTES] = {0};
    unsigned char out[crypto_shorthash_BYTES];
    crypto_shorthash(out, data, size, zero_key);
    return cradle_cursor_load_u64(out);
}
