/*
 * log_format: the session log's file format, described here, and the codec
 * its other files share (log_internal.h): the file header, block headers and
 * their checksums, the trailer and its signature. The writer lays STEP, HASH
 * and RELOAD records into its block (log_writer.c); the reader decodes and
 * checks every record, which needs its position in the log (log_reader.c).
 *
 * FORMAT (version 1). Every integer is little-endian, written and read
 * through the explicit helpers of input.h; nothing is a raw struct.
 *
 * File header, 256 bytes:
 *     0   8  magic 89 'C' 'R' 'D' 'L' 'O' 'G' 0A (the high byte and the
 *            newline catch 7-bit and text-mode transfers, as PNG's does)
 *     8   4  format version (1)
 *    12   4  header bytes (256)
 *    16  32  game name, NUL-padded (1..31 bytes of printable ASCII)
 *    48  64  build id of the library that ran step 0, NUL-padded (1..63)
 *   112   4  abi major       116  4  abi minor
 *   120   4  state size      124  4  state align
 *   128   4  input bytes     132  4  max players
 *   136   4  steps/second    140  4  source frames/second
 *   144   8  seed            152  4  player count
 *   156   4  snapshot size (== presence bytes + max players * input bytes)
 *   160   8  creation time, ns since the Unix epoch (UTC), from the caller
 *   168   4  hash interval K (the host records a state hash every K steps)
 *   172   4  block max: the largest block payload in this file
 *   176  32  BLAKE2b-256 of the library file that ran step 0 (all zero: not
 *            archived); the file is kept as <log>.builds/<hex>.so
 *   208  32  reserved, zero
 *   240  16  BLAKE2b-128 of bytes 0..239
 *
 * Then blocks, each a 48-byte header and `payload` bytes of records:
 *     0   4  block magic 'C' 'B' 'L' 'K'
 *     4   4  sequence number (0, 1, 2, ...)
 *     8   8  first step: the step of the block's first STEP record (= the
 *            number of steps in all earlier blocks)
 *    16   4  record count
 *    20   4  payload bytes (<= block max)
 *    24   4  reserved, zero
 *    28   4  header check: the first 4 bytes of BLAKE2b-128 of bytes 0..27
 *    32  16  checksum: BLAKE2b-128 of bytes 0..31 followed by the payload
 *
 * Records, each a kind byte and a fixed or bounded body:
 *   1 STEP     snapshot (snapshot size bytes); its step is implicit: the
 *              block's first step plus the STEP records before it
 *   2 HASH     u64 step, u64 hash: cradle_hash64 of the state block after
 *              that step ran; the step is the last STEP before the record
 *   3 RELOAD   u64 step, u8 n, n bytes of build id, 32 bytes BLAKE2b-256 of
 *              the library file: that build runs `step` (the next STEP) and
 *              on, after its on_reload(state)
 *   4 TRAILER  u64 step count, u64 final state hash, 32 bytes digest, u16
 *              signature length (0..64), signature bytes. The digest is
 *              BLAKE2b-256 over the 256 header bytes followed by the checksum
 *              of every block before the trailer's; it commits to the whole
 *              log, so cradle_log_writer_close_signed signs it without
 *              re-reading the file: Ed25519 (64 bytes) of "cradle-log-v1"
 *              NUL, the digest, u64 step count, u64 final hash. The
 *              trailer is the only record of the last block of the file.
 *   5 REFUSED  u64 step, 32 bytes BLAKE2b-256 of a library file, u8 n (1..200),
 *              n bytes of printable ASCII: that build was refused before
 *              `step` (its reload trial failed: why) and the session went on
 *              with the build in charge. Added within format version 1:
 *              readers before it refuse such a log (unknown record kind).
 *   6 DATA     u64 step, u8 file (the index in the build's data files), u8 n
 *              (1..127), n bytes of the file's name, u32 size, 32 bytes
 *              BLAKE2b-256 of the file's bytes: the game took those bytes
 *              into its state (data(), game_abi.h minor 4) before `step`;
 *              the bytes are kept as <log>.data/<hex>. Added within format
 *              version 1, like REFUSED.
 *   7 SIGN     64 bytes: the Ed25519 signature of BLAKE2b-256 over
 *              "cradle-log-block-v1" NUL, the file header's checksum (its
 *              bytes 240..255: the session), the block header's bytes 0..23
 *              (sequence, first step, record count and payload length, this
 *              record counted) and the payload before this record. A writer
 *              given a signing key ends every block with one (the trailer's
 *              block too, after the trailer), so any block proves who wrote
 *              it and for which session without the blocks before it: a
 *              broadcast's viewer, joining mid-session, checks each fragment
 *              against the server key it pinned. Only ever the last record
 *              of its block. Added within format version 1, like REFUSED.
 *
 * Why BLAKE2b-128 for the checksum: it detects any damage with certainty
 * for practical purposes (a CRC misses some multi-bit patterns, and a
 * crafted file forges it trivially), it is keyed for free should a log ever
 * need a MAC instead of a signature, it is already linked (libsodium), and
 * at about 0.9 GB/s on one core here it is far faster than any session writes.
 *
 * Torn tail versus damage. The writer only appends, one block per write(),
 * so a writer that dies leaves every earlier block intact and at most a
 * partial last block. The reader walks blocks in order; at the first block
 * that does not verify (too short for its header or its declared length,
 * bad header check, bad checksum) it looks for any complete, verifying block
 * after it. If one exists the file is damaged in the middle: an error naming
 * the bad block's byte offset and first step. If none does, the rest is a
 * torn tail: the steps of all verified blocks are delivered and the reader
 * reports "recovered N complete steps; ignored the tail from byte X". A
 * damaged LAST block therefore reads as a torn tail -- indistinguishable by
 * construction -- and the missing trailer still shows the log is incomplete.
 * A block that verifies but breaks the format (wrong sequence or first step,
 * a bad record) is corruption, never a tail.
 *
 * Bounded work: the reader holds one block (<= 1 MiB + 48 bytes); the scan
 * after a bad block is linear in the bytes after it and fully verifies at
 * most SCAN_VERIFY_MAX candidates (log_reader.c).
 */
#include <assert.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cradle/contract.h"
#include "cradle/input.h"
#include "cradle/internal.h"
#include "log_internal.h"

static const uint8_t file_magic[8] = {0x89, 'C', 'R', 'D', 'L', 'O', 'G', 0x0A};
const uint8_t cradle__log_block_magic[4] = {'C', 'B', 'L', 'K'};

enum {
    H_NAME = 16,
    H_BUILD = 48,
    H_RESERVED = 208,
    H_CHECKSUM = 240,
    REC_RELOAD_MAX = 1 + 8 + 1 + CRADLE_GAME_BUILD_ID_MAX + CRADLE_LOG_FILE_HASH_BYTES,
    REC_REFUSED_MAX = 1 + 8 + CRADLE_LOG_FILE_HASH_BYTES + 1 + CRADLE_LOG_REASON_MAX,
    REC_DATA_MAX = 1 + 8 + 1 + 1 + CRADLE_GAME_DATA_NAME_MAX + 4 + CRADLE_LOG_FILE_HASH_BYTES,
    REC_TRAILER_FIXED = 1 + 8 + 8 + CRADLE_LOG_DIGEST_BYTES + 2,
    REC_TRAILER_MAX = REC_TRAILER_FIXED + CRADLE_LOG_SIGNATURE_MAX,
};

_Static_assert(CRADLE_LOG_SIGN_RECORD_BYTES == 1 + crypto_sign_BYTES, "a SIGN record is a kind and a signature");

_Static_assert(H_NAME + CRADLE_GAME_NAME_MAX + 1 == H_BUILD, "name field is 32 bytes");
_Static_assert(H_BUILD + CRADLE_GAME_BUILD_ID_MAX + 1 == 112, "build id field is 64 bytes");
_Static_assert(H_CHECKSUM + CRADLE_LOG_CHECKSUM_BYTES == CRADLE_LOG_HEADER_BYTES,
               "the header ends with its checksum");
_Static_assert(CRADLE__LOG_BLOCK_CHECKSUM + CRADLE_LOG_CHECKSUM_BYTES ==
                   CRADLE_LOG_BLOCK_HEADER_BYTES,
               "the block header ends with its checksum");
_Static_assert(crypto_sign_BYTES <= CRADLE_LOG_SIGNATURE_MAX, "signature fits the trailer");
_Static_assert(REC_RELOAD_MAX <= CRADLE_LOG_BLOCK_MIN && REC_TRAILER_MAX <= CRADLE_LOG_BLOCK_MIN &&
                   REC_DATA_MAX <= CRADLE_LOG_BLOCK_MIN &&
                   REC_REFUSED_MAX <= CRADLE_LOG_BLOCK_MIN,
               "the smallest block holds any fixed record");
_Static_assert(1 + CRADLE_SNAPSHOT_MAX <= CRADLE_LOG_BLOCK_MAX, "a block holds any snapshot");

void cradle__log_message(char *out, size_t size, const char *fmt, ...) {
    if (!out || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

/* ---- checksums ------------------------------------------------------------ */

static void blake128(uint8_t out[16], const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 16);
    crypto_generichash_update(&st, a, an);
    if (bn) crypto_generichash_update(&st, b, bn);
    crypto_generichash_final(&st, out, 16);
}

static uint32_t block_header_check(const uint8_t *h) {
    uint8_t sum[16];
    blake128(sum, h, CRADLE__LOG_BLOCK_CHECK, NULL, 0);
    return cradle_cursor_load_u32(sum);
}

/* ---- header ------------------------------------------------------------- */

bool cradle__log_printable_field(const uint8_t *p, size_t field, size_t *length) {
    size_t n = 0;
    while (n < field && p[n] != 0) n++;
    if (n == 0 || n == field) return false;
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 || p[i] > 0x7e) return false;
    for (size_t i = n; i < field; i++)
        if (p[i] != 0) return false;
    *length = n;
    return true;
}


static uint32_t block_min_for(uint32_t snapshot_size) {
    return snapshot_size + 1 > CRADLE_LOG_BLOCK_MIN ? snapshot_size + 1 : CRADLE_LOG_BLOCK_MIN;
}

int cradle__log_check_header(const cradle_log_header *h, char *msg, size_t n) {
    if (h->state_size < 1) {
        cradle__log_message(msg, n, "log header: state size is 0");
    } else if (!cradle__power_of_two(h->state_align)) {
        cradle__log_message(msg, n, "log header: state align %" PRIu32 " is not a power of two",
                            h->state_align);
    } else if (h->input_bytes < 1 || h->input_bytes > CRADLE_GAME_MAX_INPUT_BYTES) {
        cradle__log_message(msg, n, "log header: input bytes %" PRIu32 " not in 1..%u",
                            h->input_bytes, CRADLE_GAME_MAX_INPUT_BYTES);
    } else if (h->max_players < 1 || h->max_players > CRADLE_GAME_MAX_PLAYERS) {
        cradle__log_message(msg, n, "log header: max players %" PRIu32 " not in 1..%u",
                            h->max_players, CRADLE_GAME_MAX_PLAYERS);
    } else if (h->steps_per_second < 1 || h->source_frames_per_second < 1 ||
               h->steps_per_second % h->source_frames_per_second != 0) {
        cradle__log_message(msg, n,
                            "log header: source frames per second %" PRIu32
                            " does not divide steps per second %" PRIu32,
                            h->source_frames_per_second, h->steps_per_second);
    } else if (h->player_count < 1 || h->player_count > h->max_players) {
        cradle__log_message(msg, n, "log header: player count %" PRIu32 " not in 1..%" PRIu32,
                            h->player_count, h->max_players);
    } else if (h->snapshot_size != cradle_snapshot_size(h->max_players, h->input_bytes)) {
        cradle__log_message(msg, n,
                            "log header: snapshot size %" PRIu32 " != %" PRIu32
                            " (max players %" PRIu32 ", input bytes %" PRIu32 ")",
                            h->snapshot_size, cradle_snapshot_size(h->max_players, h->input_bytes),
                            h->max_players, h->input_bytes);
    } else if (h->block_max < block_min_for(h->snapshot_size) ||
               h->block_max > CRADLE_LOG_BLOCK_MAX) {
        cradle__log_message(msg, n, "log header: block max %" PRIu32 " not in %" PRIu32 "..%u",
                            h->block_max, block_min_for(h->snapshot_size), CRADLE_LOG_BLOCK_MAX);
    } else {
        return 0;
    }
    return CRADLE_ELOG_HEADER;
}

void cradle__log_encode_header(const cradle_log_header *h, uint8_t out[CRADLE_LOG_HEADER_BYTES]) {
    memset(out, 0, CRADLE_LOG_HEADER_BYTES);
    cradle_cursor c = cradle_cursor_writer(out, CRADLE_LOG_HEADER_BYTES);
    cradle_cursor_put_bytes(&c, file_magic, sizeof file_magic);
    cradle_cursor_put_u32(&c, CRADLE_LOG_FORMAT_VERSION);
    cradle_cursor_put_u32(&c, CRADLE_LOG_HEADER_BYTES);
    cradle_cursor_put_bytes(&c, h->game_name, sizeof h->game_name);
    cradle_cursor_put_bytes(&c, h->build_id, sizeof h->build_id);
    cradle_cursor_put_u32(&c, h->abi_major);
    cradle_cursor_put_u32(&c, h->abi_minor);
    cradle_cursor_put_u32(&c, h->state_size);
    cradle_cursor_put_u32(&c, h->state_align);
    cradle_cursor_put_u32(&c, h->input_bytes);
    cradle_cursor_put_u32(&c, h->max_players);
    cradle_cursor_put_u32(&c, h->steps_per_second);
    cradle_cursor_put_u32(&c, h->source_frames_per_second);
    cradle_cursor_put_u64(&c, h->seed);
    cradle_cursor_put_u32(&c, h->player_count);
    cradle_cursor_put_u32(&c, h->snapshot_size);
    cradle_cursor_put_u64(&c, h->created_unix_ns);
    cradle_cursor_put_u32(&c, h->hash_interval);
    cradle_cursor_put_u32(&c, h->block_max);
    cradle_cursor_put_bytes(&c, h->build_file_hash, sizeof h->build_file_hash);
    assert(!c.failed && c.pos == H_RESERVED);
    blake128(out + H_CHECKSUM, out, H_CHECKSUM, NULL, 0);
}

int cradle__log_decode_header(const uint8_t *p, uint64_t size, cradle_log_header *h, char *msg,
                              size_t n) {
    size_t avail = size < CRADLE_LOG_HEADER_BYTES ? (size_t)size : CRADLE_LOG_HEADER_BYTES;
    size_t m = avail < sizeof file_magic ? avail : sizeof file_magic;
    if (size == 0) {
        cradle__log_message(msg, n, "log header: the file is empty");
        return CRADLE_ETRUNCATED;
    }
    if (memcmp(p, file_magic, m) != 0) {
        cradle__log_message(
            msg, n, "log header: bad magic %02x %02x %02x %02x...: not a Cradle session log", p[0],
            m > 1 ? p[1] : 0, m > 2 ? p[2] : 0, m > 3 ? p[3] : 0);
        return CRADLE_ELOG_MAGIC;
    }
    if (avail >= 12 && cradle_cursor_load_u32(p + 8) != CRADLE_LOG_FORMAT_VERSION) {
        cradle__log_message(msg, n,
                            "log header: unknown format version %" PRIu32 " (this reader knows %u)",
                            cradle_cursor_load_u32(p + 8), CRADLE_LOG_FORMAT_VERSION);
        return CRADLE_ELOG_VERSION;
    }
    if (avail < CRADLE_LOG_HEADER_BYTES) {
        cradle__log_message(msg, n, "log header: the file ends inside the header (%zu of %u bytes)",
                            avail, CRADLE_LOG_HEADER_BYTES);
        return CRADLE_ETRUNCATED;
    }
    if (cradle_cursor_load_u32(p + 12) != CRADLE_LOG_HEADER_BYTES) {
        cradle__log_message(msg, n, "log header: header bytes %" PRIu32 " != %u",
                            cradle_cursor_load_u32(p + 12), CRADLE_LOG_HEADER_BYTES);
        return CRADLE_ELOG_HEADER;
    }
    uint8_t sum[16];
    blake128(sum, p, H_CHECKSUM, NULL, 0);
    if (sodium_memcmp(sum, p + H_CHECKSUM, 16) != 0) {
        cradle__log_message(msg, n,
                            "log header: checksum mismatch (the header bytes 0..239 are damaged)");
        return CRADLE_ELOG_HEADER;
    }
    memset(h, 0, sizeof *h);
    size_t len;
    if (!cradle__log_printable_field(p + H_NAME, sizeof h->game_name, &len)) {
        cradle__log_message(msg, n, "log header: game name is empty, too long or not printable");
        return CRADLE_ELOG_HEADER;
    }
    memcpy(h->game_name, p + H_NAME, len);
    if (!cradle__log_printable_field(p + H_BUILD, sizeof h->build_id, &len)) {
        cradle__log_message(msg, n, "log header: build id is empty, too long or not printable");
        return CRADLE_ELOG_HEADER;
    }
    memcpy(h->build_id, p + H_BUILD, len);
    cradle_cursor c = cradle_cursor_reader(p, CRADLE_LOG_HEADER_BYTES);
    c.pos = 112;
    h->format_version = CRADLE_LOG_FORMAT_VERSION;
    h->abi_major = cradle_cursor_get_u32(&c);
    h->abi_minor = cradle_cursor_get_u32(&c);
    h->state_size = cradle_cursor_get_u32(&c);
    h->state_align = cradle_cursor_get_u32(&c);
    h->input_bytes = cradle_cursor_get_u32(&c);
    h->max_players = cradle_cursor_get_u32(&c);
    h->steps_per_second = cradle_cursor_get_u32(&c);
    h->source_frames_per_second = cradle_cursor_get_u32(&c);
    h->seed = cradle_cursor_get_u64(&c);
    h->player_count = cradle_cursor_get_u32(&c);
    h->snapshot_size = cradle_cursor_get_u32(&c);
    h->created_unix_ns = cradle_cursor_get_u64(&c);
    h->hash_interval = cradle_cursor_get_u32(&c);
    h->block_max = cradle_cursor_get_u32(&c);
    cradle_cursor_get_bytes(&c, h->build_file_hash, sizeof h->build_file_hash);
    assert(!c.failed);
    return cradle__log_check_header(h, msg, n);
}

int cradle_log_header_from_contract(cradle_log_header *h, const cradle_game_contract *c,
                                    uint64_t seed, uint32_t player_count,
                                    uint64_t created_unix_ns, uint32_t hash_interval) {
    assert(h && c);
    memset(h, 0, sizeof *h);
    size_t name = cradle_contract_strnlen(c->name, CRADLE_GAME_NAME_MAX);
    size_t build = cradle_contract_strnlen(c->build_id, CRADLE_GAME_BUILD_ID_MAX);
    if (name < 1 || name > CRADLE_GAME_NAME_MAX || build < 1 || build > CRADLE_GAME_BUILD_ID_MAX)
        return CRADLE_EINVAL;
    if (player_count < 1 || player_count > c->max_players) return CRADLE_EINVAL;
    h->format_version = CRADLE_LOG_FORMAT_VERSION;
    memcpy(h->game_name, c->name, name);
    memcpy(h->build_id, c->build_id, build);
    h->abi_major = c->abi_major;
    h->abi_minor = c->abi_minor;
    h->state_size = c->state_size;
    h->state_align = c->state_align;
    h->input_bytes = c->input_bytes;
    h->max_players = c->max_players;
    h->steps_per_second = c->steps_per_second;
    h->source_frames_per_second = c->source_frames_per_second;
    h->seed = seed;
    h->player_count = player_count;
    h->snapshot_size = cradle_snapshot_size(c->max_players, c->input_bytes);
    h->created_unix_ns = created_unix_ns;
    h->hash_interval = hash_interval;
    return 0;
}

int cradle_log_check_library(const cradle_log_header *h, const char *build_id,
                             const cradle_game_contract *c, char *msg, size_t n) {
    assert(h && build_id && c);
    size_t name_len = cradle_contract_strnlen(c->name, CRADLE_GAME_NAME_MAX);
    size_t build_len = cradle_contract_strnlen(c->build_id, CRADLE_GAME_BUILD_ID_MAX);
    const char *name = name_len <= CRADLE_GAME_NAME_MAX ? c->name : "(invalid)";
    const char *build = build_len <= CRADLE_GAME_BUILD_ID_MAX ? c->build_id : "(invalid)";
    bool same_game = name_len <= CRADLE_GAME_NAME_MAX && strcmp(name, h->game_name) == 0 &&
                     c->input_bytes == h->input_bytes && c->max_players == h->max_players &&
                     c->steps_per_second == h->steps_per_second &&
                     c->source_frames_per_second == h->source_frames_per_second;
    if (!same_game) {
        cradle__log_message(msg, n,
                            "library is game '%s' build '%s' (%" PRIu32 " players x %" PRIu32
                            " input bytes, %" PRIu32 "/%" PRIu32
                            " Hz); the log needs game '%s' build "
                            "'%s' (%" PRIu32 " x %" PRIu32 ", %" PRIu32 "/%" PRIu32 " Hz)",
                            name, build, c->max_players, c->input_bytes, c->steps_per_second,
                            c->source_frames_per_second, h->game_name, build_id, h->max_players,
                            h->input_bytes, h->steps_per_second, h->source_frames_per_second);
        return CRADLE_ELOG_GAME;
    }
    if (build_len > CRADLE_GAME_BUILD_ID_MAX || strcmp(build, build_id) != 0) {
        cradle__log_message(msg, n,
                            "library is game '%s' build '%s'; the log needs game '%s' build '%s'",
                            name, build, h->game_name, build_id);
        return CRADLE_ERELOAD_MISMATCH;
    }
    if (msg && n) msg[0] = '\0';
    return 0;
}

/* ---- blocks ------------------------------------------------------------- */

/* What a block's SIGN record signs (the top comment's rule 7): BLAKE2b-256
 * of the context, the session, header bytes 0..23 and the payload before
 * the record. */
static void block_signed_digest(uint8_t out[32], const uint8_t *b, const uint8_t *payload, uint32_t signed_bytes,
                                const uint8_t session[CRADLE_LOG_CHECKSUM_BYTES]) {
    static const char context[] = "cradle-log-block-v1";
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 32);
    crypto_generichash_update(&st, (const uint8_t *)context, sizeof context);
    crypto_generichash_update(&st, session, CRADLE_LOG_CHECKSUM_BYTES);
    crypto_generichash_update(&st, b, CRADLE__LOG_BLOCK_RESERVED);
    crypto_generichash_update(&st, payload, signed_bytes);
    crypto_generichash_final(&st, out, 32);
}

void cradle__log_seal_block(uint8_t *b, uint32_t sequence, uint64_t first_step, uint32_t records,
                            uint32_t payload, const uint8_t *session, const uint8_t *sign_secret) {
    memcpy(b, cradle__log_block_magic, sizeof cradle__log_block_magic);
    cradle_cursor_store_u32(b + CRADLE__LOG_BLOCK_SEQUENCE, sequence);
    cradle_cursor_store_u64(b + CRADLE__LOG_BLOCK_FIRST_STEP, first_step);
    cradle_cursor_store_u32(b + CRADLE__LOG_BLOCK_RECORDS, records);
    cradle_cursor_store_u32(b + CRADLE__LOG_BLOCK_PAYLOAD, payload);
    cradle_cursor_store_u32(b + CRADLE__LOG_BLOCK_RESERVED, 0);
    if (sign_secret) {
        assert(session && payload >= CRADLE_LOG_SIGN_RECORD_BYTES);
        uint8_t *sign = b + CRADLE_LOG_BLOCK_HEADER_BYTES + payload - CRADLE_LOG_SIGN_RECORD_BYTES;
        uint8_t digest[32];
        block_signed_digest(digest, b, b + CRADLE_LOG_BLOCK_HEADER_BYTES, payload - CRADLE_LOG_SIGN_RECORD_BYTES,
                            session);
        sign[0] = CRADLE_LOG_RECORD_SIGN;
        crypto_sign_detached(sign + 1, NULL, digest, sizeof digest, sign_secret);
    }
    cradle_cursor_store_u32(b + CRADLE__LOG_BLOCK_CHECK, block_header_check(b));
    blake128(b + CRADLE__LOG_BLOCK_CHECKSUM, b, CRADLE__LOG_BLOCK_CHECKSUM,
             b + CRADLE_LOG_BLOCK_HEADER_BYTES, payload);
}

bool cradle__log_block_signature_ok(const uint8_t *h, const uint8_t *payload, uint32_t n,
                                    const uint8_t session[CRADLE_LOG_CHECKSUM_BYTES],
                                    const uint8_t public_key[32]) {
    if (n < CRADLE_LOG_SIGN_RECORD_BYTES) return false;
    const uint8_t *sign = payload + n - CRADLE_LOG_SIGN_RECORD_BYTES;
    if (sign[0] != CRADLE_LOG_RECORD_SIGN) return false;
    uint8_t digest[32];
    block_signed_digest(digest, h, payload, n - CRADLE_LOG_SIGN_RECORD_BYTES, session);
    return crypto_sign_verify_detached(sign + 1, digest, sizeof digest, public_key) == 0;
}

bool cradle__log_block_header_ok(const uint8_t *h, uint32_t block_max) {
    return memcmp(h, cradle__log_block_magic, sizeof cradle__log_block_magic) == 0 &&
           cradle_cursor_load_u32(h + CRADLE__LOG_BLOCK_CHECK) == block_header_check(h) &&
           cradle_cursor_load_u32(h + CRADLE__LOG_BLOCK_RESERVED) == 0 &&
           cradle_cursor_load_u32(h + CRADLE__LOG_BLOCK_PAYLOAD) <= block_max;
}

bool cradle__log_block_checksum_ok(const uint8_t *h, const uint8_t *payload, uint32_t n) {
    uint8_t sum[16];
    blake128(sum, h, CRADLE__LOG_BLOCK_CHECKSUM, payload, n);
    return sodium_memcmp(sum, h + CRADLE__LOG_BLOCK_CHECKSUM, sizeof sum) == 0;
}

/* ---- trailer and signature ---------------------------------------------- */

/* What a log signature signs: context, digest, step count, final hash. */
enum { SIGNED_BYTES = 14 + CRADLE_LOG_DIGEST_BYTES + 8 + 8 };
static void signed_message(uint8_t out[SIGNED_BYTES], const uint8_t *digest, uint64_t steps,
                           uint64_t final_hash) {
    memcpy(out, "cradle-log-v1", 14);
    memcpy(out + 14, digest, CRADLE_LOG_DIGEST_BYTES);
    cradle_cursor_store_u64(out + 14 + CRADLE_LOG_DIGEST_BYTES, steps);
    cradle_cursor_store_u64(out + 22 + CRADLE_LOG_DIGEST_BYTES, final_hash);
}

uint32_t cradle__log_encode_trailer(uint8_t *p, uint64_t steps, uint64_t final_hash,
                                    const uint8_t digest[CRADLE_LOG_DIGEST_BYTES],
                                    const uint8_t *sign_secret) {
    p[0] = CRADLE_LOG_RECORD_TRAILER;
    cradle_cursor_store_u64(p + 1, steps);
    cradle_cursor_store_u64(p + 9, final_hash);
    memcpy(p + 17, digest, CRADLE_LOG_DIGEST_BYTES);
    uint16_t sig = 0;
    if (sign_secret) {
        uint8_t m[SIGNED_BYTES];
        signed_message(m, digest, steps, final_hash);
        crypto_sign_detached(p + REC_TRAILER_FIXED, NULL, m, sizeof m, sign_secret);
        sig = crypto_sign_BYTES;
    }
    cradle_cursor_store_u16(p + REC_TRAILER_FIXED - 2, sig);
    return REC_TRAILER_FIXED + sig;
}

int cradle_log_verify_signature(const cradle_log_record *trailer, const uint8_t public_key[32]) {
    if (trailer->kind != CRADLE_LOG_RECORD_TRAILER ||
        trailer->signature_length != crypto_sign_BYTES)
        return CRADLE_ELOG_SIGNATURE;
    uint8_t m[SIGNED_BYTES];
    signed_message(m, trailer->digest, trailer->step, trailer->hash);
    return crypto_sign_verify_detached(trailer->signature, m, sizeof m, public_key) == 0
               ? 0
               : CRADLE_ELOG_SIGNATURE;
}
