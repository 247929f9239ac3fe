#ifndef CRADLE_KEYS_H
#define CRADLE_KEYS_H
/*
 * keys: long-term key pairs and the key file that holds them.
 *
 * One key file holds two secrets:
 *   - an X25519 secret for crypto_kx: the server's identity in the session
 *     key exchange (clients pin its public half, printed as 64 hex digits);
 *   - an Ed25519 seed: signs session logs (the server's file) or join tokens
 *     (an issuer's file; the server lists the issuer's public half as
 *     trusted).
 * The same format serves servers and token issuers; each uses the half it
 * needs. Public keys are derived, never stored.
 *
 * FILE FORMAT (version 1), 96 bytes, integers little-endian:
 *     0   8  magic 89 'C' 'R' 'D' 'K' 'E' 'Y' 0A
 *     8   4  format version (1)
 *    12   4  reserved, zero
 *    16  32  X25519 secret key (crypto_kx)
 *    48  32  Ed25519 seed (crypto_sign_seed_keypair)
 *    80  16  BLAKE2b-128 of bytes 0..79 (catches a damaged or edited file)
 *
 * The file is created with O_CREAT|O_EXCL|O_NOFOLLOW and mode 0600, and is
 * refused on load when it is a symlink or not a regular file, is owned by
 * another user, or grants any permission to group or others. Only the last
 * path component is checked: keep the key in a directory only its owner can
 * write. Every buffer that held secret bytes is wiped on every exit path;
 * cradle_keys_wipe() wipes the caller's struct.
 *
 * These functions call sodium_init() themselves (it is idempotent).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"

#define CRADLE_KEYS_FILE_VERSION 1u
#define CRADLE_KEYS_FILE_BYTES 96u
#define CRADLE_KEYS_PUBLIC_BYTES 32u   /* X25519 and Ed25519 public keys */
#define CRADLE_KEYS_KX_SECRET_BYTES 32u
#define CRADLE_KEYS_SIGN_SECRET_BYTES 64u /* libsodium's form: seed || public */
#define CRADLE_KEYS_SEED_BYTES 32u
#define CRADLE_KEYS_HEX_SIZE 65u       /* 64 hex digits and a NUL */

typedef struct cradle_keys {
    uint8_t kx_public[CRADLE_KEYS_PUBLIC_BYTES];
    uint8_t kx_secret[CRADLE_KEYS_KX_SECRET_BYTES];
    uint8_t sign_public[CRADLE_KEYS_PUBLIC_BYTES];
    uint8_t sign_secret[CRADLE_KEYS_SIGN_SECRET_BYTES];
} cradle_keys;

/* Fresh random keys (libsodium's randombytes). Returns 0 or CRADLE_EIO when
 * libsodium cannot initialise. */
CRADLE_MUST_CHECK int cradle_keys_generate(cradle_keys *keys);

/* Deterministic keys from two 32-byte seeds (tests, reproducible fixtures).
 * Returns 0 or CRADLE_EIO. */
CRADLE_MUST_CHECK int cradle_keys_from_seeds(cradle_keys *keys,
                                             const uint8_t kx_secret[CRADLE_KEYS_SEED_BYTES],
                                             const uint8_t sign_seed[CRADLE_KEYS_SEED_BYTES]);

/* Writes keys to a new file at path, mode 0600, synced. Never replaces an
 * existing file or follows a symlink. Returns 0, CRADLE_EKEY_EXISTS (any
 * file, link or directory at path), or CRADLE_EIO; message (may be NULL)
 * says what failed. A partly written file is removed. */
CRADLE_MUST_CHECK int cradle_keys_save(const cradle_keys *keys, const char *path, char *message,
                                       size_t message_size);

/* Loads the key file at path. Returns 0 or: CRADLE_EKEY_NOT_REGULAR (a
 * symlink, directory, socket ...), CRADLE_EKEY_OWNER, CRADLE_EKEY_PERMISSIONS
 * (mode grants group or others anything: "chmod 600 <path>"),
 * CRADLE_EKEY_FORMAT (size, magic, version, reserved bytes or checksum),
 * CRADLE_EIO (cannot open or read, e.g. missing). message (may be NULL)
 * names the path and the problem. *keys is wiped on failure. */
CRADLE_MUST_CHECK int cradle_keys_load(cradle_keys *keys, const char *path, char *message,
                                       size_t message_size);

/* Zeroes every byte of *keys (sodium_memzero: not optimised away). */
void cradle_keys_wipe(cradle_keys *keys);

/* Lower-case hex of a 32-byte key into out (CRADLE_KEYS_HEX_SIZE bytes). */
void cradle_keys_to_hex(char out[CRADLE_KEYS_HEX_SIZE], const uint8_t key[CRADLE_KEYS_PUBLIC_BYTES]);

/* Parses exactly 64 hex digits (either case, nothing else) into key.
 * Returns 0 or CRADLE_EINVAL (key is then zeroed). */
CRADLE_MUST_CHECK int cradle_keys_from_hex(uint8_t key[CRADLE_KEYS_PUBLIC_BYTES], const char *hex);

#endif
