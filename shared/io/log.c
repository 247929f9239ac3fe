/*
 * log: session log files (writer, reader, build archive).
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
 * most SCAN_VERIFY_MAX candidates.
 */
#include "cradle/log.h"

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

#include "cradle/contract.h"
#include "cradle/input.h"

static const uint8_t file_magic[8] = {0x89, 'C', 'R', 'D', 'L', 'O', 'G', 0x0A};
static const uint8_t block_magic[4] = {'C', 'B', 'L', 'K'};

enum {
    H_NAME = 16,
    H_BUILD = 48,
    H_RESERVED = 208,
    H_CHECKSUM = 240,
    B_CHECK = 28,
    B_CHECKSUM = 32,
    REC_HASH_BYTES = 1 + 8 + 8,
    REC_RELOAD_MAX = 1 + 8 + 1 + CRADLE_GAME_BUILD_ID_MAX + CRADLE_LOG_FILE_HASH_BYTES,
    REC_TRAILER_MAX = 1 + 8 + 8 + CRADLE_LOG_DIGEST_BYTES + 2 + CRADLE_LOG_SIGNATURE_MAX,
    SCAN_VERIFY_MAX = 64,
    IO_CHUNK = 8192,
};

_Static_assert(H_NAME + CRADLE_GAME_NAME_MAX + 1 == H_BUILD, "name field is 32 bytes");
_Static_assert(H_BUILD + CRADLE_GAME_BUILD_ID_MAX + 1 == 112, "build id field is 64 bytes");
_Static_assert(H_CHECKSUM + CRADLE_LOG_CHECKSUM_BYTES == CRADLE_LOG_HEADER_BYTES,
               "the header ends with its checksum");
_Static_assert(B_CHECKSUM + CRADLE_LOG_CHECKSUM_BYTES == CRADLE_LOG_BLOCK_HEADER_BYTES,
               "the block header ends with its checksum");
_Static_assert(crypto_sign_BYTES <= CRADLE_LOG_SIGNATURE_MAX, "signature fits the trailer");
_Static_assert(REC_RELOAD_MAX <= CRADLE_LOG_BLOCK_MIN && REC_TRAILER_MAX <= CRADLE_LOG_BLOCK_MIN,
               "the smallest block holds any fixed record");
_Static_assert(1 + CRADLE_SNAPSHOT_MAX <= CRADLE_LOG_BLOCK_MAX, "a block holds any snapshot");

static void set_message(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_message(char *out, size_t size, const char *fmt, ...) {
    if (!out || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

static void copy_message(char *out, size_t size, const char *text) {
    if (out && size) set_message(out, size, "%s", text);
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
    blake128(sum, h, B_CHECK, NULL, 0);
    return cradle_load_u32(sum);
}

/* ---- header ------------------------------------------------------------- */

static bool printable_field(const uint8_t *p, size_t field, size_t *length) {
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

static bool power_of_two(uint32_t v) { return v && !(v & (v - 1)); }

static uint32_t block_min_for(uint32_t snapshot_size) {
    return snapshot_size + 1 > CRADLE_LOG_BLOCK_MIN ? snapshot_size + 1 : CRADLE_LOG_BLOCK_MIN;
}

/* Checks the decoded fields; returns 0 or CRADLE_ELOG_HEADER with a message
 * naming the field and its value. */
static int check_header_fields(const cradle_log_header *h, char *msg, size_t n) {
    if (h->state_size < 1) {
        set_message(msg, n, "log header: state size is 0");
    } else if (!power_of_two(h->state_align)) {
        set_message(msg, n, "log header: state align %" PRIu32 " is not a power of two",
                    h->state_align);
    } else if (h->input_bytes < 1 || h->input_bytes > CRADLE_GAME_MAX_INPUT_BYTES) {
        set_message(msg, n, "log header: input bytes %" PRIu32 " not in 1..%u", h->input_bytes,
                    CRADLE_GAME_MAX_INPUT_BYTES);
    } else if (h->max_players < 1 || h->max_players > CRADLE_GAME_MAX_PLAYERS) {
        set_message(msg, n, "log header: max players %" PRIu32 " not in 1..%u", h->max_players,
                    CRADLE_GAME_MAX_PLAYERS);
    } else if (h->steps_per_second < 1 || h->source_frames_per_second < 1 ||
               h->steps_per_second % h->source_frames_per_second != 0) {
        set_message(msg, n,
                    "log header: source frames per second %" PRIu32
                    " does not divide steps per second %" PRIu32,
                    h->source_frames_per_second, h->steps_per_second);
    } else if (h->player_count < 1 || h->player_count > h->max_players) {
        set_message(msg, n, "log header: player count %" PRIu32 " not in 1..%" PRIu32,
                    h->player_count, h->max_players);
    } else if (h->snapshot_size != cradle_snapshot_size(h->max_players, h->input_bytes)) {
        set_message(msg, n, "log header: snapshot size %" PRIu32 " != %" PRIu32
                    " (max players %" PRIu32 ", input bytes %" PRIu32 ")",
                    h->snapshot_size, cradle_snapshot_size(h->max_players, h->input_bytes),
                    h->max_players, h->input_bytes);
    } else if (h->block_max < block_min_for(h->snapshot_size) ||
               h->block_max > CRADLE_LOG_BLOCK_MAX) {
        set_message(msg, n, "log header: block max %" PRIu32 " not in %" PRIu32 "..%u",
                    h->block_max, block_min_for(h->snapshot_size), CRADLE_LOG_BLOCK_MAX);
    } else {
        return 0;
    }
    return CRADLE_ELOG_HEADER;
}

static void encode_header(const cradle_log_header *h, uint8_t out[CRADLE_LOG_HEADER_BYTES]) {
    memset(out, 0, CRADLE_LOG_HEADER_BYTES);
    cradle_cursor c = cradle_cursor_writer(out, CRADLE_LOG_HEADER_BYTES);
    cradle_put_bytes(&c, file_magic, sizeof file_magic);
    cradle_put_u32(&c, CRADLE_LOG_FORMAT_VERSION);
    cradle_put_u32(&c, CRADLE_LOG_HEADER_BYTES);
    cradle_put_bytes(&c, h->game_name, sizeof h->game_name);
    cradle_put_bytes(&c, h->build_id, sizeof h->build_id);
    cradle_put_u32(&c, h->abi_major);
    cradle_put_u32(&c, h->abi_minor);
    cradle_put_u32(&c, h->state_size);
    cradle_put_u32(&c, h->state_align);
    cradle_put_u32(&c, h->input_bytes);
    cradle_put_u32(&c, h->max_players);
    cradle_put_u32(&c, h->steps_per_second);
    cradle_put_u32(&c, h->source_frames_per_second);
    cradle_put_u64(&c, h->seed);
    cradle_put_u32(&c, h->player_count);
    cradle_put_u32(&c, h->snapshot_size);
    cradle_put_u64(&c, h->created_unix_ns);
    cradle_put_u32(&c, h->hash_interval);
    cradle_put_u32(&c, h->block_max);
    cradle_put_bytes(&c, h->build_file_hash, sizeof h->build_file_hash);
    assert(!c.failed && c.pos == H_RESERVED);
    blake128(out + H_CHECKSUM, out, H_CHECKSUM, NULL, 0);
}

/* Decodes and checks `avail` bytes of a file of `size` bytes. */
static int decode_header(const uint8_t *p, uint64_t size, cradle_log_header *h, char *msg,
                         size_t n) {
    size_t avail = size < CRADLE_LOG_HEADER_BYTES ? (size_t)size : CRADLE_LOG_HEADER_BYTES;
    size_t m = avail < sizeof file_magic ? avail : sizeof file_magic;
    if (size == 0) {
        set_message(msg, n, "log header: the file is empty");
        return CRADLE_ETRUNCATED;
    }
    if (memcmp(p, file_magic, m) != 0) {
        set_message(msg, n,
                    "log header: bad magic %02x %02x %02x %02x...: not a Cradle session log",
                    p[0], m > 1 ? p[1] : 0, m > 2 ? p[2] : 0, m > 3 ? p[3] : 0);
        return CRADLE_ELOG_MAGIC;
    }
    if (avail >= 12 && cradle_load_u32(p + 8) != CRADLE_LOG_FORMAT_VERSION) {
        set_message(msg, n, "log header: unknown format version %" PRIu32
                    " (this reader knows %u)", cradle_load_u32(p + 8),
                    CRADLE_LOG_FORMAT_VERSION);
        return CRADLE_ELOG_VERSION;
    }
    if (avail < CRADLE_LOG_HEADER_BYTES) {
        set_message(msg, n, "log header: the file ends inside the header (%zu of %u bytes)",
                    avail, CRADLE_LOG_HEADER_BYTES);
        return CRADLE_ETRUNCATED;
    }
    if (cradle_load_u32(p + 12) != CRADLE_LOG_HEADER_BYTES) {
        set_message(msg, n, "log header: header bytes %" PRIu32 " != %u",
                    cradle_load_u32(p + 12), CRADLE_LOG_HEADER_BYTES);
        return CRADLE_ELOG_HEADER;
    }
    uint8_t sum[16];
    blake128(sum, p, H_CHECKSUM, NULL, 0);
    if (sodium_memcmp(sum, p + H_CHECKSUM, 16) != 0) {
        set_message(msg, n, "log header: checksum mismatch (the header bytes 0..239 are damaged)");
        return CRADLE_ELOG_HEADER;
    }
    memset(h, 0, sizeof *h);
    size_t len;
    if (!printable_field(p + H_NAME, sizeof h->game_name, &len)) {
        set_message(msg, n, "log header: game name is empty, too long or not printable");
        return CRADLE_ELOG_HEADER;
    }
    memcpy(h->game_name, p + H_NAME, len);
    if (!printable_field(p + H_BUILD, sizeof h->build_id, &len)) {
        set_message(msg, n, "log header: build id is empty, too long or not printable");
        return CRADLE_ELOG_HEADER;
    }
    memcpy(h->build_id, p + H_BUILD, len);
    cradle_cursor c = cradle_cursor_reader(p, CRADLE_LOG_HEADER_BYTES);
    c.pos = 112;
    h->format_version = CRADLE_LOG_FORMAT_VERSION;
    h->abi_major = cradle_get_u32(&c);
    h->abi_minor = cradle_get_u32(&c);
    h->state_size = cradle_get_u32(&c);
    h->state_align = cradle_get_u32(&c);
    h->input_bytes = cradle_get_u32(&c);
    h->max_players = cradle_get_u32(&c);
    h->steps_per_second = cradle_get_u32(&c);
    h->source_frames_per_second = cradle_get_u32(&c);
    h->seed = cradle_get_u64(&c);
    h->player_count = cradle_get_u32(&c);
    h->snapshot_size = cradle_get_u32(&c);
    h->created_unix_ns = cradle_get_u64(&c);
    h->hash_interval = cradle_get_u32(&c);
    h->block_max = cradle_get_u32(&c);
    cradle_get_bytes(&c, h->build_file_hash, sizeof h->build_file_hash);
    assert(!c.failed);
    return check_header_fields(h, msg, n);
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
        set_message(msg, n,
                    "library is game '%s' build '%s' (%" PRIu32 " players x %" PRIu32
                    " input bytes, %" PRIu32 "/%" PRIu32 " Hz); the log needs game '%s' build "
                    "'%s' (%" PRIu32 " x %" PRIu32 ", %" PRIu32 "/%" PRIu32 " Hz)",
                    name, build, c->max_players, c->input_bytes, c->steps_per_second,
                    c->source_frames_per_second, h->game_name, build_id, h->max_players,
                    h->input_bytes, h->steps_per_second, h->source_frames_per_second);
        return CRADLE_ELOG_GAME;
    }
    if (build_len > CRADLE_GAME_BUILD_ID_MAX || strcmp(build, build_id) != 0) {
        set_message(msg, n, "library is game '%s' build '%s'; the log needs game '%s' build '%s'",
                    name, build, h->game_name, build_id);
        return CRADLE_ERELOAD_MISMATCH;
    }
    if (msg && n) msg[0] = '\0';
    return 0;
}

/* ---- files ------------------------------------------------------------- */

static int write_all(int fd, const uint8_t *p, size_t n, size_t *done) {
    while (*done < n) {
        ssize_t k = write(fd, p + *done, n - *done);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        *done += (size_t)k;
    }
    return 0;
}

static int fsync_parent(const char *path) {
    char dir[CRADLE_LOG_PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof dir) return -1;
    memcpy(dir, path, n + 1);
    char *slash = strrchr(dir, '/');
    if (!slash) {
        dir[0] = '.';
        dir[1] = '\0';
    } else if (slash == dir) {
        dir[1] = '\0';
    } else {
        *slash = '\0';
    }
    int fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static void hex(char *out, const uint8_t *bytes, size_t n) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

int cradle_log_build_path(char *out, size_t out_size, const char *log_path,
                          const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES]) {
    char text[2 * CRADLE_LOG_FILE_HASH_BYTES + 1];
    hex(text, hash, CRADLE_LOG_FILE_HASH_BYTES);
    int k = snprintf(out, out_size, "%s.builds/%s.so", log_path, text);
    return k < 0 || (size_t)k >= out_size ? CRADLE_ERANGE : 0;
}

int cradle_log_file_hash(const char *path, uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES]) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return CRADLE_EIO;
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, CRADLE_LOG_FILE_HASH_BYTES);
    uint8_t buf[IO_CHUNK];
    uint64_t total = 0;
    int rc = 0;
    for (;;) {
        ssize_t k = read(fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            rc = CRADLE_EIO;
            break;
        }
        if (k == 0) break;
        total += (uint64_t)k;
        if (total > CRADLE_LOG_LIBRARY_MAX) {
            rc = CRADLE_ERANGE;
            break;
        }
        crypto_generichash_update(&st, buf, (size_t)k);
    }
    close(fd);
    crypto_generichash_final(&st, hash, CRADLE_LOG_FILE_HASH_BYTES);
    return rc;
}

/* Copies the library into "<log>.builds/" under its content hash, hashing
 * the bytes as they are copied (so a file rewritten meanwhile is still
 * archived under the hash of what was copied). An existing archive of the
 * same hash is kept. */
static int archive_library(const char *log_path, const char *library,
                           uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES], char *msg, size_t n) {
    char dir[CRADLE_LOG_PATH_MAX], tmp[CRADLE_LOG_PATH_MAX], dest[CRADLE_LOG_PATH_MAX];
    int k = snprintf(dir, sizeof dir, "%s.builds", log_path);
    int k2 = snprintf(tmp, sizeof tmp, "%s.builds/incoming-%ld.tmp", log_path, (long)getpid());
    if (k < 0 || (size_t)k >= sizeof dir || k2 < 0 || (size_t)k2 >= sizeof tmp) {
        set_message(msg, n, "log path too long: %s", log_path);
        return CRADLE_ERANGE;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        set_message(msg, n, "cannot create %s: %s", dir, strerror(errno));
        return CRADLE_EIO;
    }
    int in = open(library, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        set_message(msg, n, "cannot open library %s: %s", library, strerror(errno));
        return CRADLE_EIO;
    }
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    if (out < 0) {
        set_message(msg, n, "cannot create %s: %s", tmp, strerror(errno));
        close(in);
        return CRADLE_EIO;
    }
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, CRADLE_LOG_FILE_HASH_BYTES);
    uint8_t buf[IO_CHUNK];
    uint64_t total = 0;
    int rc = 0;
    for (;;) {
        ssize_t got = read(in, buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            set_message(msg, n, "cannot read library %s: %s", library, strerror(errno));
            rc = CRADLE_EIO;
            goto out_remove_tmp;
        }
        if (got == 0) break;
        total += (uint64_t)got;
        if (total > CRADLE_LOG_LIBRARY_MAX) {
            set_message(msg, n, "library %s is larger than %llu bytes", library,
                        (unsigned long long)CRADLE_LOG_LIBRARY_MAX);
            rc = CRADLE_ERANGE;
            goto out_remove_tmp;
        }
        crypto_generichash_update(&st, buf, (size_t)got);
        size_t done = 0;
        if (write_all(out, buf, (size_t)got, &done) != 0) {
            set_message(msg, n, "cannot write %s: %s", tmp, strerror(errno));
            rc = CRADLE_EIO;
            goto out_remove_tmp;
        }
    }
    crypto_generichash_final(&st, hash, CRADLE_LOG_FILE_HASH_BYTES);
    if (cradle_log_build_path(dest, sizeof dest, log_path, hash) != 0) {
        set_message(msg, n, "log path too long: %s", log_path);
        rc = CRADLE_ERANGE;
        goto out_remove_tmp;
    }
    if (fsync(out) != 0 || close(out) != 0) {
        out = -1;
        set_message(msg, n, "cannot sync %s: %s", tmp, strerror(errno));
        rc = CRADLE_EIO;
        goto out_remove_tmp;
    }
    out = -1;
    if (rename(tmp, dest) != 0) {
        set_message(msg, n, "cannot rename %s to %s: %s", tmp, dest, strerror(errno));
        rc = CRADLE_EIO;
        goto out_remove_tmp;
    }
    (void)fsync_parent(dest);
    close(in);
    return 0;
out_remove_tmp:
    if (out >= 0) close(out);
    unlink(tmp);
    close(in);
    return rc;
}

/* ---- writer ------------------------------------------------------------ */

static void *sync_main(void *arg) {
    cradle_log_writer *w = arg;
    pthread_mutex_lock(&w->mutex);
    for (;;) {
        while (!w->sync_requested && !w->stop) pthread_cond_wait(&w->cond, &w->mutex);
        if (!w->sync_requested) break;
        uint64_t target = w->sync_target;
        w->sync_requested = false;
        pthread_mutex_unlock(&w->mutex);
        int rc = fdatasync(w->fd);
        int e = errno;
        pthread_mutex_lock(&w->mutex);
        if (rc != 0) {
            if (!w->sync_errno) w->sync_errno = e;
        } else if (target > w->durable_steps) {
            w->durable_steps = target;
        }
    }
    pthread_mutex_unlock(&w->mutex);
    return NULL;
}

static void seal_block(cradle_log_writer *w, bool into_digest) {
    uint8_t *b = w->block;
    memcpy(b, block_magic, sizeof block_magic);
    cradle_store_u32(b + 4, w->sequence);
    cradle_store_u64(b + 8, w->block_first_step);
    cradle_store_u32(b + 16, w->records);
    cradle_store_u32(b + 20, w->used);
    cradle_store_u32(b + 24, 0);
    cradle_store_u32(b + B_CHECK, block_header_check(b));
    blake128(b + B_CHECKSUM, b, B_CHECKSUM, b + CRADLE_LOG_BLOCK_HEADER_BYTES, w->used);
    if (into_digest) crypto_generichash_update(&w->digest, b + B_CHECKSUM, CRADLE_LOG_CHECKSUM_BYTES);
    w->sealed = true;
    w->sealed_written = 0;
}

/* Writes the rest of the sealed block; on success opens the next block. */
static int write_sealed(cradle_log_writer *w) {
    size_t total = CRADLE_LOG_BLOCK_HEADER_BYTES + (size_t)w->used;
    size_t done = w->sealed_written;
    int rc = write_all(w->fd, w->block, total, &done);
    w->bytes_written += done - w->sealed_written;
    w->sealed_written = (uint32_t)done;
    if (rc != 0) {
        set_message(w->message, sizeof w->message, "log write failed at byte %" PRIu64 ": %s",
                    w->bytes_written, strerror(errno));
        return CRADLE_EIO;
    }
    w->steps_written = w->steps;
    w->sealed = false;
    w->used = 0;
    w->records = 0;
    w->sequence++;
    w->block_first_step = w->steps;
    return 0;
}

static int flush_open_block(cradle_log_writer *w) {
    if (!w->sealed) {
        if (w->records == 0) return 0;
        seal_block(w, true);
    }
    return write_sealed(w);
}

/* Makes room for a record of n bytes in the open block. */
static int reserve(cradle_log_writer *w, uint32_t n) {
    if (w->sealed) {
        int rc = write_sealed(w);
        if (rc) return rc;
    }
    if (w->used + n > w->block_size) return flush_open_block(w);
    return 0;
}

static uint8_t *record_at(cradle_log_writer *w) {
    return w->block + CRADLE_LOG_BLOCK_HEADER_BYTES + w->used;
}

int cradle_log_writer_open(cradle_log_writer *w, const char *path, const cradle_log_header *h,
                           const cradle_log_writer_config *config, const char *library_path,
                           char *message, size_t message_size) {
    assert(w && path && h);
    static const cradle_log_writer_config defaults = {0};
    if (!config) config = &defaults;
    memset(w, 0, sizeof *w);
    w->fd = -1;
    if (sodium_init() < 0) {
        set_message(message, message_size, "libsodium failed to initialise");
        return CRADLE_EIO;
    }
    if (strlen(path) >= sizeof w->path) {
        set_message(message, message_size, "log path too long");
        return CRADLE_ERANGE;
    }
    memcpy(w->path, path, strlen(path) + 1);
    w->header = *h;
    w->header.format_version = CRADLE_LOG_FORMAT_VERSION;
    w->block_size = config->block_size ? config->block_size : CRADLE_LOG_BLOCK_DEFAULT;
    w->header.block_max = w->block_size;
    size_t len;
    if (!printable_field((const uint8_t *)w->header.game_name, sizeof w->header.game_name, &len) ||
        !printable_field((const uint8_t *)w->header.build_id, sizeof w->header.build_id, &len)) {
        set_message(message, message_size, "log header: game name or build id invalid");
        return CRADLE_EINVAL;
    }
    int rc = check_header_fields(&w->header, message, message_size);
    if (rc) return CRADLE_EINVAL;
    w->durable_interval_ns =
        config->durable_interval_ns ? config->durable_interval_ns : CRADLE_LOG_DURABLE_DEFAULT_NS;
    w->sync_inline = config->sync_inline;
    memset(w->header.build_file_hash, 0, sizeof w->header.build_file_hash);
    if (library_path) {
        rc = archive_library(path, library_path, w->header.build_file_hash, message,
                             message_size);
        if (rc) return rc;
    }
    w->block = malloc(CRADLE_LOG_BLOCK_HEADER_BYTES + (size_t)w->block_size);
    if (!w->block) {
        set_message(message, message_size, "out of memory for a %" PRIu32 "-byte block",
                    w->block_size);
        return CRADLE_ENOMEM;
    }
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (config->overwrite ? O_TRUNC : O_EXCL);
    w->fd = open(path, flags, 0644);
    if (w->fd < 0) {
        set_message(message, message_size, "cannot create log %s: %s", path, strerror(errno));
        rc = CRADLE_EIO;
        goto out_free;
    }
    uint8_t head[CRADLE_LOG_HEADER_BYTES];
    encode_header(&w->header, head);
    size_t done = 0;
    if (write_all(w->fd, head, sizeof head, &done) != 0 || fdatasync(w->fd) != 0 ||
        fsync_parent(path) != 0) {
        set_message(message, message_size, "cannot write log header to %s: %s", path,
                    strerror(errno));
        rc = CRADLE_EIO;
        goto out_unlink;
    }
    w->bytes_written = sizeof head;
    crypto_generichash_init(&w->digest, NULL, 0, CRADLE_LOG_DIGEST_BYTES);
    crypto_generichash_update(&w->digest, head, sizeof head);
    if (pthread_mutex_init(&w->mutex, NULL) != 0) {
        set_message(message, message_size, "cannot create a mutex");
        rc = CRADLE_ENOMEM;
        goto out_unlink;
    }
    if (pthread_cond_init(&w->cond, NULL) != 0) {
        set_message(message, message_size, "cannot create a condition variable");
        rc = CRADLE_ENOMEM;
        goto out_mutex;
    }
    if (!w->sync_inline) {
        if (pthread_create(&w->thread, NULL, sync_main, w) != 0) {
            set_message(message, message_size, "cannot start the log sync thread");
            rc = CRADLE_ENOMEM;
            goto out_cond;
        }
        w->thread_started = true;
    }
    if (message && message_size) message[0] = '\0';
    return 0;
out_cond:
    pthread_cond_destroy(&w->cond);
out_mutex:
    pthread_mutex_destroy(&w->mutex);
out_unlink:
    close(w->fd);
    w->fd = -1;
    unlink(path);
out_free:
    free(w->block);
    w->block = NULL;
    return rc;
}

int cradle_log_writer_append_step(cradle_log_writer *w, uint64_t step, const uint8_t *snapshot) {
    assert(w && w->block && snapshot);
    assert(step == w->steps && "log steps are appended in order from 0");
    (void)step; /* only checked: the step of a STEP record is implicit */
    uint32_t n = 1 + w->header.snapshot_size;
    int rc = reserve(w, n);
    if (rc) return rc;
    uint8_t *p = record_at(w);
    p[0] = CRADLE_LOG_RECORD_STEP;
    memcpy(p + 1, snapshot, w->header.snapshot_size);
    w->used += n;
    w->records++;
    w->steps++;
    return 0;
}

int cradle_log_writer_append_hash(cradle_log_writer *w, uint64_t step, uint64_t hash) {
    assert(w && w->block);
    assert(w->steps > 0 && step == w->steps - 1 && "a hash follows the step it describes");
    int rc = reserve(w, REC_HASH_BYTES);
    if (rc) return rc;
    uint8_t *p = record_at(w);
    p[0] = CRADLE_LOG_RECORD_HASH;
    cradle_store_u64(p + 1, step);
    cradle_store_u64(p + 9, hash);
    w->used += REC_HASH_BYTES;
    w->records++;
    return 0;
}

int cradle_log_writer_append_reload(cradle_log_writer *w, uint64_t step, const char *build_id,
                                    const char *library_path) {
    assert(w && w->block && build_id && library_path);
    assert(step == w->steps && "a reload takes effect at the next step");
    size_t len = cradle_contract_strnlen(build_id, CRADLE_GAME_BUILD_ID_MAX);
    if (len < 1 || len > CRADLE_GAME_BUILD_ID_MAX) {
        set_message(w->message, sizeof w->message, "reload: build id empty or longer than %u",
                    CRADLE_GAME_BUILD_ID_MAX);
        return CRADLE_EINVAL;
    }
    uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES];
    int rc = archive_library(w->path, library_path, hash, w->message, sizeof w->message);
    if (rc) return rc == CRADLE_ERANGE ? CRADLE_EIO : rc;
    uint32_t n = (uint32_t)(1 + 8 + 1 + len + CRADLE_LOG_FILE_HASH_BYTES);
    rc = reserve(w, n);
    if (rc) return rc;
    uint8_t *p = record_at(w);
    p[0] = CRADLE_LOG_RECORD_RELOAD;
    cradle_store_u64(p + 1, step);
    p[9] = (uint8_t)len;
    memcpy(p + 10, build_id, len);
    memcpy(p + 10 + len, hash, sizeof hash);
    w->used += n;
    w->records++;
    return 0;
}

static int request_sync(cradle_log_writer *w) {
    if (w->sync_inline) {
        if (fdatasync(w->fd) != 0) {
            set_message(w->message, sizeof w->message, "log fdatasync failed: %s",
                        strerror(errno));
            return CRADLE_EIO;
        }
        w->durable_steps = w->steps_written;
        return 0;
    }
    pthread_mutex_lock(&w->mutex);
    int e = w->sync_errno;
    if (w->steps_written > w->sync_target || w->durable_steps < w->steps_written) {
        w->sync_target = w->steps_written;
        w->sync_requested = true;
        pthread_cond_signal(&w->cond);
    }
    pthread_mutex_unlock(&w->mutex);
    if (e) {
        set_message(w->message, sizeof w->message, "log fdatasync failed: %s", strerror(e));
        return CRADLE_EIO;
    }
    return 0;
}

int cradle_log_writer_maybe_sync(cradle_log_writer *w, uint64_t now_ns) {
    assert(w && w->block);
    if (now_ns >= w->last_sync_ns && now_ns - w->last_sync_ns < w->durable_interval_ns) return 0;
    w->last_sync_ns = now_ns;
    int rc = flush_open_block(w);
    if (rc) return rc;
    return request_sync(w);
}

int cradle_log_writer_flush(cradle_log_writer *w, uint64_t now_ns) {
    assert(w && w->block);
    w->last_sync_ns = now_ns;
    int rc = flush_open_block(w);
    if (rc) return rc;
    if (fdatasync(w->fd) != 0) {
        set_message(w->message, sizeof w->message, "log fdatasync failed: %s", strerror(errno));
        return CRADLE_EIO;
    }
    if (w->sync_inline) {
        w->durable_steps = w->steps_written;
    } else {
        pthread_mutex_lock(&w->mutex);
        if (w->steps_written > w->durable_steps) w->durable_steps = w->steps_written;
        pthread_mutex_unlock(&w->mutex);
    }
    return 0;
}

uint64_t cradle_log_writer_durable_steps(cradle_log_writer *w) {
    assert(w);
    if (w->sync_inline || !w->block) return w->durable_steps; /* no thread, or closed */
    pthread_mutex_lock(&w->mutex);
    uint64_t v = w->durable_steps;
    pthread_mutex_unlock(&w->mutex);
    return v;
}

static void release(cradle_log_writer *w) {
    if (w->thread_started) {
        pthread_mutex_lock(&w->mutex);
        w->stop = true;
        pthread_cond_signal(&w->cond);
        pthread_mutex_unlock(&w->mutex);
        pthread_join(w->thread, NULL);
        w->thread_started = false;
    }
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mutex);
    free(w->block);
    w->block = NULL;
}

/* What a log signature signs: context, digest, step count, final hash. */
enum { SIGNED_BYTES = 14 + CRADLE_LOG_DIGEST_BYTES + 8 + 8 };
static void signed_message(uint8_t out[SIGNED_BYTES], const uint8_t *digest, uint64_t steps,
                           uint64_t final_hash) {
    memcpy(out, "cradle-log-v1", 14);
    memcpy(out + 14, digest, CRADLE_LOG_DIGEST_BYTES);
    cradle_store_u64(out + 14 + CRADLE_LOG_DIGEST_BYTES, steps);
    cradle_store_u64(out + 22 + CRADLE_LOG_DIGEST_BYTES, final_hash);
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

static int close_log(cradle_log_writer *w, uint64_t final_hash, const uint8_t *sign_secret);

int cradle_log_writer_close(cradle_log_writer *w, uint64_t final_hash) {
    return close_log(w, final_hash, NULL);
}

int cradle_log_writer_close_signed(cradle_log_writer *w, uint64_t final_hash,
                                   const uint8_t sign_secret[CRADLE_LOG_SIGNATURE_MAX]) {
    assert(sign_secret);
    return close_log(w, final_hash, sign_secret);
}

static int close_log(cradle_log_writer *w, uint64_t final_hash, const uint8_t *sign_secret) {
    assert(w && w->block);
    int rc = flush_open_block(w);
    if (rc == 0) {
        /* The trailer gets a block of its own, so the digest (over the header
         * and every earlier block's checksum) is final before it is written. */
        crypto_generichash_state copy = w->digest;
        uint8_t digest[CRADLE_LOG_DIGEST_BYTES];
        crypto_generichash_final(&copy, digest, sizeof digest);
        uint8_t *p = record_at(w);
        p[0] = CRADLE_LOG_RECORD_TRAILER;
        cradle_store_u64(p + 1, w->steps);
        cradle_store_u64(p + 9, final_hash);
        memcpy(p + 17, digest, sizeof digest);
        uint16_t sig = 0;
        if (sign_secret) {
            uint8_t m[SIGNED_BYTES];
            signed_message(m, digest, w->steps, final_hash);
            crypto_sign_detached(p + 19 + sizeof digest, NULL, m, sizeof m, sign_secret);
            sig = crypto_sign_BYTES;
        }
        cradle_store_u16(p + 17 + sizeof digest, sig);
        w->used = 1 + 8 + 8 + CRADLE_LOG_DIGEST_BYTES + 2 + sig;
        w->records = 1;
        seal_block(w, false);
        rc = write_sealed(w);
    }
    release(w);
    if (rc == 0 && fdatasync(w->fd) != 0) {
        set_message(w->message, sizeof w->message, "log fdatasync failed: %s", strerror(errno));
        rc = CRADLE_EIO;
    }
    if (rc == 0) w->durable_steps = w->steps;
    if (close(w->fd) != 0 && rc == 0) {
        set_message(w->message, sizeof w->message, "log close failed: %s", strerror(errno));
        rc = CRADLE_EIO;
    }
    w->fd = -1;
    return rc;
}

void cradle_log_writer_abandon(cradle_log_writer *w) {
    assert(w);
    if (!w->block) return;
    release(w);
    close(w->fd);
    w->fd = -1;
}

/* ---- reader ------------------------------------------------------------- */

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
        set_message(r->message, sizeof r->message, "cannot read the log header: %s",
                    strerror(errno));
        goto out_fail;
    }
    rc = decode_header(head, r->size, &r->header, r->message, sizeof r->message);
    if (rc) goto out_fail;
    r->block_capacity = CRADLE_LOG_BLOCK_HEADER_BYTES + r->header.block_max;
    r->block = malloc(r->block_capacity);
    if (!r->block) {
        rc = CRADLE_ENOMEM;
        set_message(r->message, sizeof r->message, "out of memory for a %" PRIu32 "-byte block",
                    r->block_capacity);
        goto out_fail;
    }
    crypto_generichash_init(&r->digest, NULL, 0, CRADLE_LOG_DIGEST_BYTES);
    crypto_generichash_update(&r->digest, head, sizeof head);
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
        set_message(message, message_size, "libsodium failed to initialise");
        return CRADLE_EIO;
    }
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (r->fd < 0 || fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        set_message(r->message, sizeof r->message, "cannot open log %s: %s", path,
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
        set_message(message, message_size, "libsodium failed to initialise");
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

/* Hashes n bytes of the source from `at` into st, without the block buffer. */
static int hash_range(cradle_log_reader *r, crypto_generichash_state *st, uint64_t at,
                      uint64_t n) {
    if (r->memory) {
        crypto_generichash_update(st, r->memory + at, (size_t)n);
        return 0;
    }
    uint8_t buf[IO_CHUNK];
    while (n) {
        size_t k = n < sizeof buf ? (size_t)n : sizeof buf;
        if (src_read(r, at, buf, k)) return CRADLE_EIO;
        crypto_generichash_update(st, buf, k);
        at += k;
        n -= k;
    }
    return 0;
}

/* Whether a block header (48 bytes at h) is intact: magic, header check,
 * reserved zero and a payload length within the header's block max. */
static bool block_header_ok(const cradle_log_reader *r, const uint8_t *h) {
    return memcmp(h, block_magic, sizeof block_magic) == 0 &&
           cradle_load_u32(h + B_CHECK) == block_header_check(h) &&
           cradle_load_u32(h + 24) == 0 && cradle_load_u32(h + 20) <= r->header.block_max;
}

/* Whether a complete block that verifies starts at `at`. */
static bool valid_block_at(cradle_log_reader *r, uint64_t at) {
    uint8_t h[CRADLE_LOG_BLOCK_HEADER_BYTES];
    if (r->size - at < sizeof h || src_read(r, at, h, sizeof h)) return false;
    if (!block_header_ok(r, h)) return false;
    uint32_t payload = cradle_load_u32(h + 20);
    if (r->size - at - sizeof h < payload) return false;
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 16);
    crypto_generichash_update(&st, h, B_CHECKSUM);
    if (hash_range(r, &st, at + sizeof h, payload)) return false;
    uint8_t sum[16];
    crypto_generichash_final(&st, sum, sizeof sum);
    return sodium_memcmp(sum, h + B_CHECKSUM, sizeof sum) == 0;
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
        size_t last = n - sizeof block_magic;
        for (size_t i = 0; i <= last; i++) {
            if (r->block[i] != block_magic[0] ||
                memcmp(r->block + i, block_magic, sizeof block_magic) != 0)
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
        set_message(r->message, sizeof r->message,
                    "recovered %" PRIu64 " complete steps; ignored the tail from byte %" PRIu64,
                    r->steps, r->offset);
    } else if (end == CRADLE_LOG_END_UNCLOSED) {
        set_message(r->message, sizeof r->message,
                    "recovered %" PRIu64 " complete steps; the log has no trailer (its writer "
                    "did not close it)", r->steps);
    } else {
        set_message(r->message, sizeof r->message, "%" PRIu64 " steps; the log was closed",
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
    uint32_t payload = cradle_load_u32(b + 20);
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
        uint8_t sum[16];
        blake128(sum, b, B_CHECKSUM, walk, payload);
        good = sodium_memcmp(sum, b + B_CHECKSUM, sizeof sum) == 0;
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
    uint32_t sequence = cradle_load_u32(b + 4);
    uint64_t first = cradle_load_u64(b + 8);
    uint32_t records = cradle_load_u32(b + 16);
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
    r->trailer_block = walk[0] == CRADLE_LOG_RECORD_TRAILER;
    r->records = walk;
    if (!r->trailer_block)
        crypto_generichash_update(&r->digest, b + B_CHECKSUM, CRADLE_LOG_CHECKSUM_BYTES);
    r->block_offset = at;
    r->payload = payload;
    r->pos = 0;
    r->records_left = records;
    r->offset = at + CRADLE_LOG_BLOCK_HEADER_BYTES + payload;
    r->sequence++;
    return 1;
}

/* Decodes the record at r->pos of the current (verified) block. */
static int parse_record(cradle_log_reader *r, cradle_log_record *rec) {
    const uint8_t *p = r->records + r->pos;
    uint32_t left = r->payload - r->pos;
    uint64_t at = r->block_offset + CRADLE_LOG_BLOCK_HEADER_BYTES + r->pos;
    uint8_t kind = p[0];
    if (kind == CRADLE_LOG_RECORD_STEP) {
        if (left < 1 + r->header.snapshot_size) goto out_short;
        rec->kind = CRADLE_LOG_RECORD_STEP;
        rec->step = r->steps++;
        rec->snapshot = p + 1;
        r->pos += r->stride;
        return 1;
    }
    if (r->trailer_block && kind != CRADLE_LOG_RECORD_TRAILER) goto out_misplaced;
    switch (kind) {
    case CRADLE_LOG_RECORD_HASH: {
        if (left < REC_HASH_BYTES) goto out_short;
        uint64_t step = cradle_load_u64(p + 1);
        if (r->steps == 0 || step != r->steps - 1 ||
            (r->last_hash_step != UINT64_MAX && step <= r->last_hash_step))
            return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                               "hash record at byte %" PRIu64 " names step %" PRIu64
                               " after %" PRIu64 " steps", at, step, r->steps);
        rec->kind = CRADLE_LOG_RECORD_HASH;
        rec->step = step;
        rec->hash = cradle_load_u64(p + 9);
        r->last_hash_step = step;
        r->pos += REC_HASH_BYTES;
        return 1;
    }
    case CRADLE_LOG_RECORD_RELOAD: {
        if (left < 10) goto out_short;
        uint64_t step = cradle_load_u64(p + 1);
        uint32_t len = p[9];
        if (left < 10 + len + CRADLE_LOG_FILE_HASH_BYTES) goto out_short;
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
    case CRADLE_LOG_RECORD_TRAILER: {
        enum { FIXED = 1 + 8 + 8 + CRADLE_LOG_DIGEST_BYTES + 2 };
        if (left < FIXED) goto out_short;
        uint32_t sig = cradle_load_u16(p + FIXED - 2);
        if (!r->trailer_block || r->records_left != 1 || sig > CRADLE_LOG_SIGNATURE_MAX ||
            left != FIXED + sig)
            goto out_misplaced;
        uint64_t count = cradle_load_u64(p + 1);
        if (count != r->steps)
            return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                               "trailer at byte %" PRIu64 " counts %" PRIu64
                               " steps, the log holds %" PRIu64, at, count, r->steps);
        uint8_t digest[CRADLE_LOG_DIGEST_BYTES];
        crypto_generichash_state copy = r->digest;
        crypto_generichash_final(&copy, digest, sizeof digest);
        if (sodium_memcmp(digest, p + 17, sizeof digest) != 0)
            return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                               "trailer at byte %" PRIu64 ": log digest mismatch", at);
        if (r->offset != r->size)
            return reader_fail(r, CRADLE_ELOG_CORRUPT, r->offset,
                               "%" PRIu64 " bytes of unexpected data after the trailer, from "
                               "byte %" PRIu64, r->size - r->offset, r->offset);
        rec->kind = CRADLE_LOG_RECORD_TRAILER;
        rec->step = count;
        rec->hash = cradle_load_u64(p + 9);
        memcpy(rec->digest, digest, sizeof digest);
        rec->signature_length = sig;
        memcpy(rec->signature, p + FIXED, sig);
        r->pos += FIXED + sig;
        return 1;
    }
    default:
        return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                           "unknown record kind %u at byte %" PRIu64 " (step %" PRIu64 ")",
                           kind, at, r->steps);
    }
out_short:
    return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                       "record of kind %u at byte %" PRIu64 " runs past its block", kind, at);
out_misplaced:
    return reader_fail(r, CRADLE_ELOG_CORRUPT, at,
                       "misplaced or malformed trailer at byte %" PRIu64, at);
}

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
            int rc = parse_record(r, rec);
            if (rc < 0) return rc;
            r->records_left--;
            if (rec->kind == CRADLE_LOG_RECORD_TRAILER) reach_end(r, CRADLE_LOG_END_CLOSED);
            start_run(r); /* also when empty: it marks the steps counted so far */
            return 1;
        }
        if (r->pos != r->payload)
            return reader_fail(r, CRADLE_ELOG_CORRUPT, r->block_offset,
                               "block at byte %" PRIu64 " holds more bytes than its %" PRIu32
                               " records", r->block_offset, cradle_load_u32(r->block + 16));
        int rc = load_block(r);
        if (rc <= 0) return rc;
    }
}
