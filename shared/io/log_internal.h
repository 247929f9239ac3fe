#ifndef CRADLE_LOG_INTERNAL_H
#define CRADLE_LOG_INTERNAL_H
/*
 * log internals: what the session log's files share. Callers see
 * cradle/log.h only; nothing here is part of the library's API.
 *
 *   log_format.c   the file format (described at its top): the file header,
 *                  block headers and their checksums, the trailer and its
 *                  signature
 *   log_writer.c   the writer and its background sync thread, and the
 *                  write-and-sync helpers the archive shares
 *   log_reader.c   the reader: records, torn-tail recovery, damage reports
 *   log_archive.c  the build archive: content-addressed copies of game
 *                  libraries beside the log
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/log.h"

enum {
    /* Fields of a block header, by byte offset (log_format.c's top comment). */
    CRADLE__LOG_BLOCK_SEQUENCE = 4,
    CRADLE__LOG_BLOCK_FIRST_STEP = 8,
    CRADLE__LOG_BLOCK_RECORDS = 16,
    CRADLE__LOG_BLOCK_PAYLOAD = 20,
    CRADLE__LOG_BLOCK_RESERVED = 24,
    CRADLE__LOG_BLOCK_CHECK = 28,
    CRADLE__LOG_BLOCK_CHECKSUM = 32,
    /* A HASH record: kind, u64 step, u64 hash. */
    CRADLE__LOG_HASH_RECORD_BYTES = 1 + 8 + 8,
    /* The stack buffer a file is streamed through (hashing, copying). */
    CRADLE__LOG_IO_CHUNK = 8192,
};

/* ---- log_format.c ------------------------------------------------------- */

extern const uint8_t cradle__log_block_magic[4];

/* snprintf into out when out is not NULL and size is not 0: the message
 * buffers of every log call are optional. */
void cradle__log_message(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Whether a NUL-padded field of `field` bytes holds 1..field-1 printable
 * ASCII bytes followed only by NULs; sets *length when it does. */
bool cradle__log_printable_field(const uint8_t *p, size_t field, size_t *length);

/* Checks a header's decoded fields; returns 0 or CRADLE_ELOG_HEADER with a
 * message naming the field and its value. */
int cradle__log_check_header(const cradle_log_header *h, char *msg, size_t n);

/* The 256 header bytes of h, checksum included. */
void cradle__log_encode_header(const cradle_log_header *h, uint8_t out[CRADLE_LOG_HEADER_BYTES]);

/* Decodes and checks the first min(size, 256) bytes at p of a file of
 * `size` bytes. Returns 0, CRADLE_ETRUNCATED, CRADLE_ELOG_MAGIC,
 * CRADLE_ELOG_VERSION or CRADLE_ELOG_HEADER, with a message. */
int cradle__log_decode_header(const uint8_t *p, uint64_t size, cradle_log_header *h, char *msg,
                              size_t n);

/* Fills the 48-byte block header at `block` for the `payload` bytes of
 * records that follow it: magic, fields, header check and checksum. With a
 * sign_secret (Ed25519, 64 bytes) the payload's last
 * CRADLE_LOG_SIGN_RECORD_BYTES are the block's SIGN record, counted in
 * records and payload and filled in here, over session (the file header's
 * checksum). */
void cradle__log_seal_block(uint8_t *block, uint32_t sequence, uint64_t first_step,
                            uint32_t records, uint32_t payload, const uint8_t *session,
                            const uint8_t *sign_secret);

/* Whether the block (header h, n payload bytes) ends in a SIGN record by
 * public_key for this session. */
bool cradle__log_block_signature_ok(const uint8_t *h, const uint8_t *payload, uint32_t n,
                                    const uint8_t session[CRADLE_LOG_CHECKSUM_BYTES],
                                    const uint8_t public_key[32]);

/* Whether a block header (48 bytes at h) is intact: magic, header check,
 * reserved zero and a payload length of at most block_max. */
bool cradle__log_block_header_ok(const uint8_t *h, uint32_t block_max);

/* Whether the checksum in the block header h matches its first 32 bytes
 * followed by the n payload bytes at payload. */
bool cradle__log_block_checksum_ok(const uint8_t *h, const uint8_t *payload, uint32_t n);

/* Writes a TRAILER record at p: the step count, the final hash, the log
 * digest and, when sign_secret is not NULL, the Ed25519 signature of them.
 * Returns the record's length (at most the smallest block). */
uint32_t cradle__log_encode_trailer(uint8_t *p, uint64_t steps, uint64_t final_hash,
                                    const uint8_t digest[CRADLE_LOG_DIGEST_BYTES],
                                    const uint8_t *sign_secret);

/* ---- log_writer.c ------------------------------------------------------- */

/* Writes p[*done..n) to fd, retrying short writes and EINTR; *done counts
 * what was written, also on failure. Returns 0 or -1 with errno set. */
int cradle__log_write_all(int fd, const uint8_t *p, size_t n, size_t *done);

/* fsyncs the directory holding path, so a new name in it is durable.
 * Returns 0 or -1. */
int cradle__log_fsync_parent(const char *path);

/* ---- log_archive.c ------------------------------------------------------ */

/* Copies the library into "<log_path>.builds/" under its content hash,
 * which it stores in hash. Returns 0, CRADLE_ERANGE or CRADLE_EIO with a
 * message. */
int cradle__log_archive_library(const char *log_path, const char *library,
                                uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES], char *msg, size_t n);

/* Writes size bytes into "<log_path>.data/" under `hash` (the caller's
 * BLAKE2b-256 of them), synced, unless an archive of that hash exists.
 * Returns 0, CRADLE_ERANGE or CRADLE_EIO with a message. */
int cradle__log_archive_data(const char *log_path, const uint8_t *bytes, uint32_t size,
                             const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES], char *msg, size_t n);

#endif
