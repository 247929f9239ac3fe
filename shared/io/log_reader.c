/*
 * log_reader: the session log's reader (cradle_log_reader_*, log.h). It
 * walks the blocks in order with one block buffer, delivers records only
 * from blocks whose checksum verified, decodes and checks every record, and
 * tells a torn tail (the writer died) from damage in the middle of a file;
 * the format and the rules for a torn tail are at the top of log_format.c.
 * The common STEP record is delivered by the inline cradle_log_reader_next
 * (log.h) from a run this file sets up; everything else comes through
 * cradle__log_reader_next here.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cradle/input.h"
#include "log_internal.h"

enum {
    SCAN_VERIFY_MAX = 64, /* candidates fully verified after a bad block */
};

static void copy_message(char *out, size_t size, const char *text) {
    if (out && size) cradle__log_message(out, size, "%s", text);
}

/* ---- opening ------------------------------------------------------------ */

static int src_read(cradle_log_reader *r, uint64_t at, uint8_t *out, size_t n) {
    assert(at <= r->size && n <= r->size - at);
    if (!r->memory) {
        size_t done = 0;
        while (done < n) {
            ssize_t k = pread(r->fd, out + done, n - done, (off_t)(at + done));
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) return CRADLE_EIO;
            done += (size_t)k;
        }
        return 0;
    }
    memcpy(out, r->memory + at, n);
    return 0;
}

static int reader_fail(cradle_log_reader *r, int code, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int reader_fail(cradle_log_reader *r, int code, uint64_t offset, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
    r->error = code;
    r->error_offset = offset;
    r->error_step = r->steps;
    return code;
}

static int open_common(cradle_log_reader *r, char *message, size_t message_size) {
    uint8_t head[CRADLE_LOG_HEADER_BYTES] = {0};
    size_t avail = r->size < sizeof head ? (size_t)r->size : sizeof head;
    int rc = src_read(r, 0, head, avail);
    if (rc) {
        cradle__log_message(r->message, sizeof r->message, "cannot read the log header: %s",
                            strerror(errno));
        goto out_fail;
    }
    rc = cradle__log_decode_header(head, r->size, &r->header, r->message, sizeof r->message);
    if (rc) goto out_fail;
    r->block_capacity = CRADLE_LOG_BLOCK_HEADER_BYTES + r->header.block_max;
    r->block = malloc(r->block_capacity);
    if (!r->block) {
        rc = CRADLE_ENOMEM;
        cradle__log_message(r->message, sizeof r->message,
                            "out of memory for a %" PRIu32 "-byte block", r->block_capacity);
        goto out_fail;
    }
    crypto_generichash_init(&r->digest, NULL, 0, CRADLE_LOG_DIGEST_BYTES);
    crypto_generichash_update(&r->digest, head, sizeof head);
    memcpy(r->session, head + CRADLE_LOG_HEADER_BYTES - CRADLE_LOG_CHECKSUM_BYTES, sizeof r->session);
    r->offset = CRADLE_LOG_HEADER_BYTES;
    r->last_hash_step = UINT64_MAX;
    r->stride = 1 + r->header.snapshot_size;
    r->run_step = r->run_end = 0;
    copy_message(message, message_size, "");
    return 0;
out_fail:
    copy_message(message, message_size, r->message);
    if (r->fd >= 0) close(r->fd);
    r->fd = -1;
    return rc;
}

int cradle_log_reader_open(cradle_log_reader *r, const char *path, char *message,
                           size_t message_size) {
    assert(r && path);
    memset(r, 0, sizeof *r);
    r->fd = -1;
    if (sodium_init() < 0) {
        cradle__log_message(message, message_size, "libsodium failed to initialise");
        return CRADLE_EIO;
    }
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (r->fd < 0 || fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        cradle__log_message(r->message, sizeof r->message, "cannot open log %s: %s", path,
                            r->fd < 0 ? strerror(errno) : "not a regular file");
        copy_message(message, message_size, r->message);
        if (r->fd >= 0) close(r->fd);
        r->fd = -1;
        return CRADLE_EIO;
    }
    r->size = (uint64_t)st.st_size;
    return open_common(r, message, message_size);
}

int cradle_log_reader_open_memory(cradle_log_reader *r, const void *data, size_t size,
                                  char *message, size_t message_size) {
    assert(r && (data || size == 0));
    memset(r, 0, sizeof *r);
    r->fd = -1;
    if (sodium_init() < 0) {
        cradle__log_message(message, message_size, "libsodium failed to initialise");
        return CRADLE_EIO;
    }
    static const uint8_t empty[1] = {0};
    r->memory = data ? data : empty;
    r->size = size;
    return open_common(r, message, message_size);
}

void cradle_log_reader_close(cradle_log_reader *r) {
    assert(r);
    free(r->block);
    r->block = NULL;
    if (r->fd >= 0) close(r->fd);
    r->fd = -1;
}

uint64_t cradle_log_reader_position(const cradle_log_reader *r) { return r->offset; }

cradle_log_block_place cradle_log_reader_block_place(const cradle_log_reader *r) {
    assert(r && r->block && r->sequence > 0);
    return (cradle_log_block_place){.offset = r->block_offset,
                                    .sequence = r->sequence - 1u,
                                    .first_step = cradle_cursor_load_u64(r->block + CRADLE__LOG_BLOCK_FIRST_STEP)};
}

int cradle_log_reader_jump(cradle_log_reader *r, cradle_log_block_place place) {
    assert(r && r->block);
    if (place.offset < CRADLE_LOG_HEADER_BYTES || place.offset >= r->size) {
        cradle__log_message(r->message, sizeof r->message,
                            "no block at byte %" PRIu64 ": the log's blocks are bytes %u..%" PRIu64,
                            place.offset, CRADLE_LOG_HEADER_BYTES, r->size);
        return CRADLE_ERANGE;
    }
    r->offset = place.offset;
    r->sequence = place.sequence;
    r->steps = r->run_step = r->run_end = place.first_step;
    r->payload = r->pos = r->records_left = 0;
    r->trailer_block = false;
    r->adopt = false;
    r->partial = true;
    r->last_hash_step = UINT64_MAX;
    r->end = CRADLE_LOG_END_NONE;
    r->error = 0;
    r->message[0] = '\0';
    return 0;
}

void cradle_log_reader_start_anywhere(cradle_log_reader *r) {
    assert(r && r->block && r->offset == CRADLE_LOG_HEADER_BYTES && r->steps == 0);
    r->adopt = true;
    r->partial = true;
}

void cradle_log_reader_require_signer(cradle_log_reader *r, const uint8_t public_key[32]) {
    assert(r && r->block && public_key);
    r->require_signer = true;
    memcpy(r->signer, public_key, sizeof r->signer);
}

bool cradle_log_reader_grow(cradle_log_reader *r, uint64_t size) {
    assert(r && size >= r->offset);
    r->size = size;
    if (r->end != CRADLE_LOG_END_UNCLOSED || r->error || r->offset >= size) return false;
    r->end = CRADLE_LOG_END_NONE;
    r->message[0] = '\0';
    return true;
}

/* ---- blocks and torn-tail recovery -------------------------------------- */

/* Hashes n bytes of the source from `at` into st, without the block buffer. */
static int hash_range(cradle_log_reader *r, crypto_generichash_state *st, uint64_t at,
                      uint64_t n) {
    if (r->memory) {
        crypto_generichash_update(st, r->memory + at, (size_t)n);
        return 0;
    }
    uint8_t buf[CRADLE__LOG_IO_CHUNK];
    while (n) {
        size_t k = n < sizeof buf ? (size_t)n : sizeof buf;
        if (src_read(r, at, buf, k)) return CRADLE_EIO;
        crypto_generichash_update(st, buf, k);
        at += k;
        n -= k;
    }
    return 0;
}

/* cradle__log_block_header_ok against this log's block max. */
static bool block_header_ok(const cradle_log_reader *r, const uint8_t *h) {
    return cradle__log_block_header_ok(h, r->header.block_max);
}

/* Whether a complete block that verifies starts at `at`: the block
 * checksum of log_format.c, computed over the source without the block
 * buffer (the scan after a bad block is using it). */
static bool valid_block_at(cradle_log_reader *r, uint64_t at) {
    uint8_t h[CRADLE_LOG_BLOCK_HEADER_BYTES];
    if (r->size - at < sizeof h || src_read(r, at, h, sizeof h)) return false;
    if (!block_header_ok(r, h)) return false;
    uint32_t payload = cradle_cursor_load_u32(h + CRADLE__LOG_BLOCK_PAYLOAD);
    if (r->size - at - sizeof h < payload) return false;
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, CRADLE_LOG_CHECKSUM_BYTES);
    crypto_generichash_update(&st, h, CRADLE__LOG_BLOCK_CHECKSUM);
    if (hash_range(r, &st, at + sizeof h, payload)) return false;
    uint8_t sum[CRADLE_LOG_CHECKSUM_BYTES];
    crypto_generichash_final(&st, sum, sizeof sum);
    return sodium_memcmp(sum, h + CRADLE__LOG_BLOCK_CHECKSUM, sizeof sum) == 0;
}

/* After a bad block at `bad`: the offset of the first verifying block after
 * it, or 0 when none exists (the bad block starts a torn tail). Reads the
 * rest of the file once, in chunks through the block buffer; fully verifies
 * at most SCAN_VERIFY_MAX candidates whose header is intact, and past that
 * reports the file as damaged (a tail never looks like that). */
static uint64_t find_valid_block_after(cradle_log_reader *r, uint64_t bad) {
    unsigned verified = 0;
    uint64_t at = bad + 1;
    while (r->size - at >= CRADLE_LOG_BLOCK_HEADER_BYTES) {
        uint64_t left = r->size - at;
        size_t n = left < r->block_capacity ? (size_t)left : r->block_capacity;
        if (src_read(r, at, r->block, n)) return 0;
        /* candidates whose magic starts in this chunk */
        const uint8_t *magic = cradle__log_block_magic;
        size_t last = n - sizeof cradle__log_block_magic;
        for (size_t i = 0; i <= last; i++) {
            if (r->block[i] != magic[0] ||
                memcmp(r->block + i, magic, sizeof cradle__log_block_magic) != 0)
                continue;
            uint64_t candidate = at + i;
            uint8_t h[CRADLE_LOG_BLOCK_HEADER_BYTES];
            if (r->size - candidate < sizeof h || src_read(r, candidate, h, sizeof h)) continue;
            if (!block_header_ok(r, h)) continue;
            if (++verified > SCAN_VERIFY_MAX) return candidate;
            if (valid_block_at(r, candidate)) return candidate;
        }
        at += last + 1;
    }
    return 0;
}

static int reach_end(cradle_log_reader *r, cradle_log_end end) {
    r->end = end;
    if (end == CRADLE_LOG_END_TORN) {
        r->tail_offset = r->offset;
        cradle__log_message(r->message, sizeof r->message,
                            "recovered %" PRIu64 " complete steps; ignored the tail from byte "
                            "%" PRIu64, r->steps, r->offset);
    } else if (end == CRADLE_LOG_END_UNCLOSED) {
        cradle__log_message(r->message, sizeof r->message,
                            "recovered %" PRIu64 " complete steps; the log has no trailer "
                            "(its writer did not close it)", r->steps);
    } else {
        cradle__log_message(r->message, sizeof r->message, "%" PRIu64 " steps; the log was closed",
                            r->steps);
    }
    return 0;
}

/* Loads and verifies the block at r->offset. Returns 1 with a block to walk,
 * 0 at the end (r->end set), or an error. */
static int load_block(cradle_log_reader *r) {
    uint64_t at = r->offset;
    uint64_t left = r->size - at;
    if (left == 0) return reach_end(r, CRADLE_LOG_END_UNCLOSED);
    if (left < CRADLE_LOG_BLOCK_HEADER_BYTES) return reach_end(r, CRADLE_LOG_END_TORN);
    uint8_t *b = r->block;
    if (src_read(r, at, b, CRADLE_LOG_BLOCK_HEADER_BYTES))
        return reader_fail(r, CRADLE_EIO, at, "cannot read the log at byte %" PRIu64, at);
    bool intact = block_header_ok(r, b);
    uint32_t payload = cradle_cursor_load_u32(b + CRADLE__LOG_BLOCK_PAYLOAD);
    if (intact && left - CRADLE_LOG_BLOCK_HEADER_BYTES < payload)
        return reach_end(r, CRADLE_LOG_END_TORN); /* a truthful length past the end */
    bool good = false;
    /* memory is walked in place; a file is read straight into the buffer */
    const uint8_t *walk = r->memory ? r->memory + at + CRADLE_LOG_BLOCK_HEADER_BYTES
                                       : b + CRADLE_LOG_BLOCK_HEADER_BYTES;
    if (intact) {
        if (!r->memory && src_read(r, at + CRADLE_LOG_BLOCK_HEADER_BYTES,
                                   b + CRADLE_LOG_BLOCK_HEADER_BYTES, payload))
            return reader_fail(r, CRADLE_EIO, at, "cannot read the log at byte %" PRIu64, at);
        good = cradle__log_block_checksum_ok(b, walk, payload);
    }
    if (!good) {
        uint64_t next = find_valid_block_after(r, at);
        if (next == 0) return reach_end(r, CRADLE_LOG_END_TORN);
        return reader_fail(r, CRADLE_ELOG_CHECKSUM, at,
                           "damaged block at byte %" PRIu64 " (block %" PRIu32
                           ", from step %" PRIu64 "): %s; valid data follows at byte %" PRIu64,
                           at, r->sequence, r->steps,
                           intact ? "checksum mismatch" : "block header damaged", next);
    }
    uint32_t sequence = cradle_cursor_load_u32(b + CRADLE__LOG_BLOCK_SEQUENCE);
    uint64_t first = cradle_cursor_load_u64(b + CRADLE__LOG_BLOCK_FIRST_STEP);
    uint32_t records = cradle_cursor_load_u32(b + CRADLE__LOG_BLOCK_RECORDS);
    if (r->adopt) { /* start_anywhere: this block sets the place */
        /* within int64 (as a sync document's steps are), so that counting
         * on from it never wraps past UINT64_MAX */
        if (first > (uint64_t)INT64_MAX)
            return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                               "block at byte %" PRIu64 " starts at step %" PRIu64 ", beyond any session's steps",
                               at, first);
        r->adopt = false;
        r->sequence = sequence;
        r->steps = r->run_step = r->run_end = first;
    }
    if (sequence != r->sequence)
        return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                           "block at byte %" PRIu64 " has sequence %" PRIu32 ", expected %" PRIu32,
                           at, sequence, r->sequence);
    if (first != r->steps)
        return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                           "block at byte %" PRIu64 " starts at step %" PRIu64
                           ", expected step %" PRIu64, at, first, r->steps);
    if (records == 0 || payload == 0)
        return reader_fail(r, CRADLE_ELOG_CORRUPT, at, "empty block at byte %" PRIu64, at);
    if (r->require_signer && !cradle__log_block_signature_ok(b, walk, payload, r->session, r->signer))
        return reader_fail(r, CRADLE_ELOG_SIGNATURE, at,
                           "block %" PRIu32 " at byte %" PRIu64 " (from step %" PRIu64
                           ") is not signed by the pinned key for this session",
                           sequence, at, first);
    r->trailer_block = walk[0] == CRADLE_LOG_RECORD_TRAILER;
    r->records = walk;
    if (!r->trailer_block)
        crypto_generichash_update(&r->digest, b + CRADLE__LOG_BLOCK_CHECKSUM,
                                  CRADLE_LOG_CHECKSUM_BYTES);
    r->block_offset = at;
    r->payload = payload;
    r->pos = 0;
    r->records_left = records;
    r->offset = at + CRADLE_LOG_BLOCK_HEADER_BYTES + payload;
    r->sequence++;
    return 1;
}

/* ---- records ------------------------------------------------------------ */

static int record_short(cradle_log_reader *r, uint8_t kind, uint64_t at) {
    return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                       "record of kind %u at byte %" PRIu64 " runs past its block", kind, at);
}

static int trailer_misplaced(cradle_log_reader *r, uint64_t at) {
    return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                       "misplaced or malformed trailer at byte %" PRIu64, at);
}

/* The parse_* functions decode one record of `left` bytes at p (file byte
 * `at`) in the current, verified block: 1 with *rec filled and r->pos
 * past it, or a negative code from reader_fail. */

static int parse_hash(cradle_log_reader *r, cradle_log_record *rec, const uint8_t *p,
                      uint32_t left, uint64_t at) {
    if (left < CRADLE__LOG_HASH_RECORD_BYTES) return record_short(r, CRADLE_LOG_RECORD_HASH, at);
    uint64_t step = cradle_cursor_load_u64(p + 1);
    if (r->steps == 0 || step != r->steps - 1 ||
        (r->last_hash_step != UINT64_MAX && step <= r->last_hash_step))
        return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                           "hash record at byte %" PRIu64 " names step %" PRIu64
                           " after %" PRIu64 " steps", at, step, r->steps);
    rec->kind = CRADLE_LOG_RECORD_HASH;
    rec->step = step;
    rec->hash = cradle_cursor_load_u64(p + 9);
    r->last_hash_step = step;
    r->pos += CRADLE__LOG_HASH_RECORD_BYTES;
    return 1;
}

static int parse_reload(cradle_log_reader *r, cradle_log_record *rec, const uint8_t *p,
                        uint32_t left, uint64_t at) {
    if (left < 10) return record_short(r, CRADLE_LOG_RECORD_RELOAD, at);
    uint64_t step = cradle_cursor_load_u64(p + 1);
    uint32_t len = p[9];
    if (left < 10 + len + CRADLE_LOG_FILE_HASH_BYTES)
        return record_short(r, CRADLE_LOG_RECORD_RELOAD, at);
    bool printable = len >= 1 && len <= CRADLE_GAME_BUILD_ID_MAX;
    for (uint32_t i = 0; printable && i < len; i++)
        printable = p[10 + i] >= 0x20 && p[10 + i] <= 0x7e;
    if (!printable || step != r->steps)
        return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                           "reload record at byte %" PRIu64 " is invalid (step %" PRIu64
                           ", build id of %" PRIu32 " bytes)", at, step, len);
    rec->kind = CRADLE_LOG_RECORD_RELOAD;
    rec->step = step;
    memcpy(rec->build_id, p + 10, len);
    rec->build_id[len] = '\0';
    memcpy(rec->file_hash, p + 10 + len, CRADLE_LOG_FILE_HASH_BYTES);
    r->pos += 10 + len + CRADLE_LOG_FILE_HASH_BYTES;
    return 1;
}

static int parse_refused(cradle_log_reader *r, cradle_log_record *rec, const uint8_t *p,
                         uint32_t left, uint64_t at) {
    enum { FIXED = 1 + 8 + CRADLE_LOG_FILE_HASH_BYTES + 1 };
    if (left < FIXED) return record_short(r, CRADLE_LOG_RECORD_REFUSED, at);
    uint64_t step = cradle_cursor_load_u64(p + 1);
    uint32_t len = p[FIXED - 1];
    if (left < FIXED + len) return record_short(r, CRADLE_LOG_RECORD_REFUSED, at);
    bool printable = len >= 1 && len <= CRADLE_LOG_REASON_MAX;
    for (uint32_t i = 0; printable && i < len; i++) printable = p[FIXED + i] >= 0x20 && p[FIXED + i] <= 0x7e;
    if (!printable || step != r->steps)
        return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                           "refusal record at byte %" PRIu64 " is invalid (step %" PRIu64
                           ", reason of %" PRIu32 " bytes)", at, step, len);
    rec->kind = CRADLE_LOG_RECORD_REFUSED;
    rec->step = step;
    memcpy(rec->file_hash, p + 9, CRADLE_LOG_FILE_HASH_BYTES);
    memcpy(rec->reason, p + FIXED, len);
    rec->reason[len] = '\0';
    r->pos += FIXED + len;
    return 1;
}

static int parse_data(cradle_log_reader *r, cradle_log_record *rec, const uint8_t *p, uint32_t left,
                      uint64_t at) {
    enum { FIXED = 1 + 8 + 1 + 1, TAIL = 4 + CRADLE_LOG_FILE_HASH_BYTES };
    if (left < FIXED) return record_short(r, CRADLE_LOG_RECORD_DATA, at);
    uint64_t step = cradle_cursor_load_u64(p + 1);
    uint32_t file = p[9], len = p[10];
    if (left < FIXED + len + TAIL) return record_short(r, CRADLE_LOG_RECORD_DATA, at);
    bool printable = len >= 1 && len <= CRADLE_GAME_DATA_NAME_MAX;
    for (uint32_t i = 0; printable && i < len; i++) printable = p[FIXED + i] >= 0x20 && p[FIXED + i] <= 0x7e;
    uint32_t size = cradle_cursor_load_u32(p + FIXED + len);
    if (!printable || step != r->steps || file >= CRADLE_GAME_MAX_DATA_FILES || size > CRADLE_GAME_DATA_MAX_BYTES)
        return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                           "data record at byte %" PRIu64 " is invalid (step %" PRIu64 ", file %" PRIu32
                           ", name of %" PRIu32 " bytes, size %" PRIu32 ")",
                           at, step, file, len, size);
    rec->kind = CRADLE_LOG_RECORD_DATA;
    rec->step = step;
    rec->data_file = file;
    rec->data_size = size;
    memcpy(rec->data_name, p + FIXED, len);
    rec->data_name[len] = '\0';
    memcpy(rec->file_hash, p + FIXED + len + 4, CRADLE_LOG_FILE_HASH_BYTES);
    r->pos += FIXED + len + TAIL;
    return 1;
}

/* Also checks that the trailer is the last block's only record, that it
 * counts the steps read and that its digest matches the one computed. */
static int parse_trailer(cradle_log_reader *r, cradle_log_record *rec, const uint8_t *p,
                         uint32_t left, uint64_t at) {
    enum { FIXED = 1 + 8 + 8 + CRADLE_LOG_DIGEST_BYTES + 2 };
    if (left < FIXED) return record_short(r, CRADLE_LOG_RECORD_TRAILER, at);
    uint32_t sig = cradle_cursor_load_u16(p + FIXED - 2);
    if (!r->trailer_block || sig > CRADLE_LOG_SIGNATURE_MAX || left < FIXED + sig) return trailer_misplaced(r, at);
    /* the block's only record, or followed by the block's SIGN */
    bool sign = r->records_left == 2 && left == FIXED + sig + CRADLE_LOG_SIGN_RECORD_BYTES &&
                p[FIXED + sig] == CRADLE_LOG_RECORD_SIGN;
    if (!sign && (r->records_left != 1 || left != FIXED + sig)) return trailer_misplaced(r, at);
    uint64_t count = cradle_cursor_load_u64(p + 1);
    if (count != r->steps)
        return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                           "trailer at byte %" PRIu64 " counts %" PRIu64
                           " steps, the log holds %" PRIu64, at, count, r->steps);
    uint8_t digest[CRADLE_LOG_DIGEST_BYTES];
    crypto_generichash_state copy = r->digest;
    crypto_generichash_final(&copy, digest, sizeof digest);
    if (r->partial) { /* the digest covers blocks before this reader's first: unchecked */
        memcpy(digest, p + 17, sizeof digest);
    }
    if (sodium_memcmp(digest, p + 17, sizeof digest) != 0)
        return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                           "trailer at byte %" PRIu64 ": log digest mismatch", at);
    if (r->offset != r->size)
        return reader_fail(r, CRADLE_ELOG_CORRUPT, r->offset,
                           "%" PRIu64 " bytes of unexpected data after the trailer, from "
                           "byte %" PRIu64, r->size - r->offset, r->offset);
    rec->kind = CRADLE_LOG_RECORD_TRAILER;
    rec->step = count;
    rec->hash = cradle_cursor_load_u64(p + 9);
    memcpy(rec->digest, digest, sizeof digest);
    rec->signature_length = r->partial ? 0 : sig; /* a partial reader cannot vouch for it */
    memcpy(rec->signature, p + FIXED, rec->signature_length);
    r->pos += FIXED + sig;
    if (sign) {
        r->pos += CRADLE_LOG_SIGN_RECORD_BYTES;
        r->records_left--; /* the caller counts the trailer */
        r->signed_blocks++;
    }
    return 1;
}

/* Decodes the record at r->pos of the current (verified) block. */
static int parse_record(cradle_log_reader *r, cradle_log_record *rec) {
    const uint8_t *p = r->records + r->pos;
    uint32_t left = r->payload - r->pos;
    uint64_t at = r->block_offset + CRADLE_LOG_BLOCK_HEADER_BYTES + r->pos;
    uint8_t kind = p[0];
    if (kind == CRADLE_LOG_RECORD_STEP) {
        if (left < 1 + r->header.snapshot_size) return record_short(r, kind, at);
        rec->kind = CRADLE_LOG_RECORD_STEP;
        rec->step = r->steps++;
        rec->snapshot = p + 1;
        r->pos += r->stride;
        return 1;
    }
    if (r->trailer_block && kind != CRADLE_LOG_RECORD_TRAILER) return trailer_misplaced(r, at);
    switch (kind) {
    case CRADLE_LOG_RECORD_HASH: return parse_hash(r, rec, p, left, at);
    case CRADLE_LOG_RECORD_RELOAD: return parse_reload(r, rec, p, left, at);
    case CRADLE_LOG_RECORD_REFUSED: return parse_refused(r, rec, p, left, at);
    case CRADLE_LOG_RECORD_DATA: return parse_data(r, rec, p, left, at);
    case CRADLE_LOG_RECORD_TRAILER: return parse_trailer(r, rec, p, left, at);
    default:
        return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                           "unknown record kind %u at byte %" PRIu64 " (step %" PRIu64 ")",
                           kind, at, r->steps);
    }
}

/* ---- the walk ----------------------------------------------------------- */

/* Folds the records the inline next() delivered from the run into pos and
 * records_left, and ends the run. */
static void settle_run(cradle_log_reader *r) {
    uint32_t k = (uint32_t)(r->steps - r->run_step);
    r->pos += k * r->stride;
    r->records_left -= k;
    r->run_step = r->run_end = r->steps;
}

/* Starts a run at pos: room for min(records_left, whole records of stride
 * bytes left in the payload) records, possibly none. Called after every
 * record parsed out of line (which counted its own step), so that
 * settle_run folds in only the inline ones. One division per call. */
static void start_run(cradle_log_reader *r) {
    uint32_t n = (r->payload - r->pos) / r->stride;
    if (n > r->records_left) n = r->records_left;
    /* unsigned wrap-around: base + steps * stride is the record at pos */
    r->run_base = (uintptr_t)(r->records + r->pos) - (uintptr_t)r->steps * r->stride;
    r->run_step = r->steps;
    r->run_end = r->steps + n;
}

int cradle__log_reader_next(cradle_log_reader *r, cradle_log_record *rec) {
    assert(r && r->block && rec);
    settle_run(r);
    if (r->error) return r->error;
    for (;;) {
        if (r->end != CRADLE_LOG_END_NONE) return 0;
        if (r->records_left > 0) {
            if (r->pos >= r->payload)
                return reader_fail(r, CRADLE_ELOG_CORRUPT, r->block_offset,
                                   "block at byte %" PRIu64 " holds fewer records than its "
                                   "count", r->block_offset);
            if (r->records[r->pos] == CRADLE_LOG_RECORD_SIGN && !r->trailer_block) {
                /* checked when the block was loaded if a signer is required;
                   here only its place: the block's last record */
                if (r->records_left != 1 || r->payload - r->pos != CRADLE_LOG_SIGN_RECORD_BYTES)
                    return reader_fail(r, CRADLE_ELOG_CORRUPT, r->block_offset + CRADLE_LOG_BLOCK_HEADER_BYTES + r->pos,
                                       "misplaced signature record at byte %" PRIu64,
                                       r->block_offset + CRADLE_LOG_BLOCK_HEADER_BYTES + r->pos);
                r->pos += CRADLE_LOG_SIGN_RECORD_BYTES;
                r->records_left--;
                r->signed_blocks++;
                start_run(r);
                continue;
            }
            int rc = parse_record(r, rec);
            if (rc < 0) return rc;
            r->records_left--;
            if (rec->kind == CRADLE_LOG_RECORD_TRAILER) reach_end(r, CRADLE_LOG_END_CLOSED);
            start_run(r); /* also when empty: it marks the steps counted so far */
            return 1;
        }
        if (r->pos != r->payload)
            return reader_fail(
                r, CRADLE_ELOG_CORRUPT, r->block_offset,
                "block at byte %" PRIu64 " holds more bytes than its %" PRIu32 " records",
                r->block_offset, cradle_cursor_load_u32(r->block + CRADLE__LOG_BLOCK_RECORDS));
        int rc = load_block(r);
        if (rc <= 0) return rc;
    }
}
