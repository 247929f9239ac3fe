#ifndef CRADLE_HASH_H
#define CRADLE_HASH_H
/*
 * hash: the 64-bit state hash that server, clients, logs and replays compare.
 *
 * FNV-1a is too slow for megabyte state blocks and a cryptographic hash is
 * more than a desync check needs, so the state hash is SipHash-2-4 with an
 * all-zero key (libsodium's crypto_shorthash), read as a little-endian u64.
 * It is specified, portable and fast (about 1-2 GB/s here). It is not a
 * defence against forgery; the Security layer signs what must be trusted.
 */
#include <stddef.h>
#include <stdint.h>

uint64_t cradle_hash64(const void *data, size_t size);

#endif
