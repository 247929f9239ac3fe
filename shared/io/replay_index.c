/*
 * replay_index: the keyframe index beside a session log (replay_index.h):
 * its file format, the strict load, the appending writer, and the build
 * from a whole log through the replay driver.
 */
#include "cradle/replay_index.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cradle/cursor.h"
#include "cradle/hash.h"
#include "cradle/os.h"
#include "cradle/replay.h"

static const uint8_t index_magic[8] = {0x89, 'C', 'R', 'D', 'I', 'D', 'X', 0x0a};
#define INDEX_VERSION 1u
#define CHECKSUM_BYTES 16u

enum { /* header fields */
    H_VERSION = 8,
    H_HEADER_BYTES = 12,
    H_SESSION = 16,
    H_INTERVAL = 32,
    H_RESERVED = 36,
    H_CHECKSUM = 48,
};
enum { /* entry fields */
    E_OFFSET = 0,
    E_BUILD_HASH = 8,
    E_DOC_BYTES = 40,
    E_RESERVED = 44,
    E_CHECKSUM = 48,
};

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int refuse(char *out, size_t size, uint64_t at, const char *format, ...) {
    if (out && size) {
        int n = snprintf(out, size, "index byte %" PRIu64 ": ", at);
        if (n >= 0 && (size_t)n < size) {
            va_list args;
            va_start(args, format);
            (void)vsnprintf(out + n, size - (size_t)n, format, args);
            va_end(args);
        }
    }
    return CRADLE_EINDEX;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void say(char *out, size_t size, const char *format, ...) {
    if (!out || !size) return;
    va_list args;
    va_start(args, format);
    (void)vsnprintf(out, size, format, args);
    va_end(args);
}

static bool all_zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

/* BLAKE2b-128 of a (n bytes) then b (m bytes). */
static void checksum2(const uint8_t *a, size_t n, const uint8_t *b, size_t m, uint8_t out[CHECKSUM_BYTES]) {
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, CHECKSUM_BYTES);
    crypto_generichash_update(&st, a, n);
    if (m) crypto_generichash_update(&st, b, m);
    crypto_generichash_final(&st, out, CHECKSUM_BYTES);
}

int cradle_replay_index_path(char *out, size_t out_size, const char *log_path) {
    int n = snprintf(out, out_size, "%s%s", log_path, CRADLE_REPLAY_INDEX_SUFFIX);
    return n < 0 || (size_t)n >= out_size ? CRADLE_ERANGE : 0;
}

/* ---- reading ------------------------------------------------------------ */

void cradle_replay_index_free(cradle_replay_index *index) {
    if (!index) return;
    free(index->bytes);
    free(index->keys);
    memset(index, 0, sizeof *index);
}

/* Checks the header at the start of the index's bytes. */
static int parse_header(cradle_replay_index *index, const uint8_t session[CRADLE_BROADCAST_SESSION_BYTES],
                        char *message, size_t message_size) {
    const uint8_t *h = index->bytes;
    if (index->size < CRADLE_REPLAY_INDEX_HEADER_BYTES)
        return refuse(message, message_size, 0, "%zu bytes, shorter than the %u-byte header", index->size,
                      CRADLE_REPLAY_INDEX_HEADER_BYTES);
    if (memcmp(h, index_magic, sizeof index_magic) != 0)
        return refuse(message, message_size, 0, "not a Cradle replay index (bad magic)");
    uint32_t version = cradle_cursor_load_u32(h + H_VERSION);
    if (version != INDEX_VERSION)
        return refuse(message, message_size, H_VERSION, "version %" PRIu32 ", this program reads version %u",
                      version, INDEX_VERSION);
    if (cradle_cursor_load_u32(h + H_HEADER_BYTES) != CRADLE_REPLAY_INDEX_HEADER_BYTES)
        return refuse(message, message_size, H_HEADER_BYTES, "a %" PRIu32 "-byte header, expected %u",
                      cradle_cursor_load_u32(h + H_HEADER_BYTES), CRADLE_REPLAY_INDEX_HEADER_BYTES);
    uint8_t sum[CHECKSUM_BYTES];
    checksum2(h, H_CHECKSUM, NULL, 0, sum);
    if (sodium_memcmp(sum, h + H_CHECKSUM, sizeof sum) != 0)
        return refuse(message, message_size, H_CHECKSUM, "header checksum mismatch");
    if (!all_zero(h + H_RESERVED, H_CHECKSUM - H_RESERVED))
        return refuse(message, message_size, H_RESERVED, "reserved header bytes are not zero");
    if (sodium_memcmp(h + H_SESSION, session, CRADLE_BROADCAST_SESSION_BYTES) != 0)
        return refuse(message, message_size, H_SESSION, "the index is of another session than this log (stale)");
    index->interval = cradle_cursor_load_u32(h + H_INTERVAL);
    if (index->interval == 0 || index->interval > CRADLE_REPLAY_INDEX_INTERVAL_MAX)
        return refuse(message, message_size, H_INTERVAL, "interval %" PRIu32 " is not 1..%u", index->interval,
                      CRADLE_REPLAY_INDEX_INTERVAL_MAX);
    memcpy(index->session, session, CRADLE_BROADCAST_SESSION_BYTES);
    return 0;
}

/* Checks one entry at `at` (whole within the bytes) and its document. The
 * state is decompressed into *scratch (grown to the state's size). */
static int parse_entry(cradle_replay_index *index, uint64_t at, uint64_t log_size, uint32_t state_max,
                       cradle_state_pack *codec,
                       uint8_t **scratch, uint32_t *scratch_size, cradle_replay_keyframe *k, uint32_t *length,
                       char *message, size_t message_size) {
    const uint8_t *e = index->bytes + at;
    uint64_t left = index->size - at;
    if (left < CRADLE_REPLAY_INDEX_ENTRY_BYTES)
        return refuse(message, message_size, at, "the file ends inside a keyframe's entry (truncated)");
    uint32_t doc_size = cradle_cursor_load_u32(e + E_DOC_BYTES);
    if (doc_size < CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES ||
        doc_size > cradle_broadcast_keyframe_bound(CRADLE_BROADCAST_STATE_MAX))
        return refuse(message, message_size, at + E_DOC_BYTES, "a %" PRIu32 "-byte keyframe document", doc_size);
    if (left - CRADLE_REPLAY_INDEX_ENTRY_BYTES < doc_size)
        return refuse(message, message_size, at, "the file ends inside a keyframe's document (truncated)");
    const uint8_t *doc = e + CRADLE_REPLAY_INDEX_ENTRY_BYTES;
    uint8_t sum[CHECKSUM_BYTES];
    checksum2(e, E_CHECKSUM, doc, doc_size, sum);
    if (sodium_memcmp(sum, e + E_CHECKSUM, sizeof sum) != 0)
        return refuse(message, message_size, at, "keyframe checksum mismatch (damaged)");
    if (!all_zero(e + E_RESERVED, 4)) return refuse(message, message_size, at + E_RESERVED, "reserved bytes are not zero");
    /* the document's state size, bounded by the decoder, sizes the scratch */
    uint32_t state_size = cradle_cursor_load_u32(doc + 48);
    if (state_size == 0 || state_size > CRADLE_BROADCAST_STATE_MAX || state_size > state_max)
        return refuse(message, message_size, at + CRADLE_REPLAY_INDEX_ENTRY_BYTES + 48,
                      "a keyframe of %" PRIu32 " state bytes; this log's replay holds %" PRIu32 " at most", state_size,
                      state_max < CRADLE_BROADCAST_STATE_MAX ? state_max : CRADLE_BROADCAST_STATE_MAX);
    if (state_size > *scratch_size) {
        uint8_t *grown = realloc(*scratch, state_size);
        if (!grown) {
            say(message, message_size, "out of memory for a %" PRIu32 "-byte state", state_size);
            return CRADLE_ENOMEM;
        }
        *scratch = grown;
        *scratch_size = state_size;
    }
    char why[CRADLE_REPLAY_INDEX_MESSAGE_MAX];
    if (cradle_broadcast_keyframe_decode(codec, doc, doc_size, index->session, NULL, &k->key, *scratch,
                                         *scratch_size, why, sizeof why) != 0)
        return refuse(message, message_size, at + CRADLE_REPLAY_INDEX_ENTRY_BYTES, "%s", why);
    k->block.offset = cradle_cursor_load_u64(e + E_OFFSET);
    k->block.sequence = k->key.block_sequence;
    k->block.first_step = k->key.block_first_step;
    memcpy(k->build_file_hash, e + E_BUILD_HASH, sizeof k->build_file_hash);
    k->doc_offset = at + CRADLE_REPLAY_INDEX_ENTRY_BYTES;
    k->doc_size = doc_size;
    if (k->block.offset < CRADLE_LOG_HEADER_BYTES || k->block.offset >= log_size)
        return refuse(message, message_size, at + E_OFFSET,
                      "keyframe of step %" PRIu64 " names log byte %" PRIu64 ", outside the log's %" PRIu64
                      " bytes (stale: the log is not the one indexed)",
                      k->key.step, k->block.offset, log_size);
    if ((k->key.step + 1u) % index->interval != 0)
        return refuse(message, message_size, at, "keyframe of step %" PRIu64 " is off the %" PRIu32 "-step interval",
                      k->key.step, index->interval);
    *length = CRADLE_REPLAY_INDEX_ENTRY_BYTES + doc_size;
    return 0;
}

/* Takes over index->bytes (index->size of them) and checks everything. */
static int parse_all(cradle_replay_index *index, const uint8_t session[CRADLE_BROADCAST_SESSION_BYTES],
                     uint64_t log_size, uint32_t state_max, char *message, size_t message_size) {
    int rc = parse_header(index, session, message, message_size);
    if (rc != 0) return rc;
    /* a count for the array: every entry takes at least this many bytes */
    size_t most = (index->size - CRADLE_REPLAY_INDEX_HEADER_BYTES) /
                  (CRADLE_REPLAY_INDEX_ENTRY_BYTES + CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES);
    if (most > 0) {
        index->keys = calloc(most, sizeof *index->keys);
        if (!index->keys) {
            say(message, message_size, "out of memory for %zu keyframes", most);
            return CRADLE_ENOMEM;
        }
    }
    cradle_state_pack codec;
    if (cradle_state_pack_init(&codec, 0, CRADLE_STATE_PACK_BOTH) != 0) {
        say(message, message_size, "out of memory for zstd");
        return CRADLE_ENOMEM;
    }
    uint8_t *scratch = NULL;
    uint32_t scratch_size = 0;
    uint64_t at = CRADLE_REPLAY_INDEX_HEADER_BYTES;
    while (at < index->size) {
        if (index->count == most) { /* fewer bytes left than the smallest keyframe takes */
            rc = refuse(message, message_size, at, "the file ends inside a keyframe (truncated)");
            break;
        }
        cradle_replay_keyframe *k = &index->keys[index->count];
        uint32_t length = 0;
        rc = parse_entry(index, at, log_size, state_max, &codec, &scratch, &scratch_size, k, &length, message,
                         message_size);
        if (rc != 0) break;
        if (index->count > 0) {
            const cradle_replay_keyframe *before = k - 1;
            if (k->key.step <= before->key.step || k->block.offset < before->block.offset ||
                (k->block.offset == before->block.offset) != (k->block.sequence == before->block.sequence) ||
                k->block.sequence < before->block.sequence) {
                rc = refuse(message, message_size, at,
                            "keyframe of step %" PRIu64 " (log byte %" PRIu64 ") does not follow the one of step %" PRIu64
                            " (log byte %" PRIu64 ")",
                            k->key.step, k->block.offset, before->key.step, before->block.offset);
                break;
            }
        }
        index->count++;
        at += length;
    }
    free(scratch);
    cradle_state_pack_free(&codec);
    if (rc == 0 && index->count > 0 && index->count < most) { /* the array as large as it needs */
        cradle_replay_keyframe *fit = realloc(index->keys, index->count * sizeof *index->keys);
        if (fit) index->keys = fit;
    }
    return rc;
}

int cradle_replay_index_parse(cradle_replay_index *index, const void *data, size_t size,
                              const uint8_t session[CRADLE_BROADCAST_SESSION_BYTES], uint64_t log_size,
                              uint32_t state_max, char *message, size_t message_size) {
    assert(index && (data || size == 0) && session);
    memset(index, 0, sizeof *index);
    if (sodium_init() < 0) {
        say(message, message_size, "libsodium failed to initialise");
        return CRADLE_EIO;
    }
    index->bytes = malloc(size ? size : 1);
    if (!index->bytes) {
        say(message, message_size, "out of memory for a %zu-byte index", size);
        return CRADLE_ENOMEM;
    }
    if (size) memcpy(index->bytes, data, size);
    index->size = size;
    int rc = parse_all(index, session, log_size, state_max, message, message_size);
    if (rc != 0) cradle_replay_index_free(index);
    return rc;
}

int cradle_replay_index_load(cradle_replay_index *index, const char *path,
                             const uint8_t session[CRADLE_BROADCAST_SESSION_BYTES], uint64_t log_size,
                             uint32_t state_max, char *message, size_t message_size) {
    assert(index && path && session);
    memset(index, 0, sizeof *index);
    if (sodium_init() < 0) {
        say(message, message_size, "libsodium failed to initialise");
        return CRADLE_EIO;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = fd < 0 ? errno : EINVAL;
        say(message, message_size, "cannot open index %s: %s", path, fd < 0 ? strerror(e) : "not a regular file");
        if (fd >= 0) close(fd);
        errno = e;
        return CRADLE_EIO;
    }
    if ((uint64_t)st.st_size > CRADLE_REPLAY_INDEX_BYTES_MAX) {
        close(fd);
        say(message, message_size, "index %s: %lld bytes, more than the %llu an index may have", path,
            (long long)st.st_size, (unsigned long long)CRADLE_REPLAY_INDEX_BYTES_MAX);
        return CRADLE_EINDEX;
    }
    index->size = (size_t)st.st_size;
    index->bytes = malloc(index->size ? index->size : 1);
    if (!index->bytes) {
        close(fd);
        say(message, message_size, "out of memory for a %zu-byte index", index->size);
        cradle_replay_index_free(index);
        return CRADLE_ENOMEM;
    }
    size_t got = 0;
    while (got < index->size) {
        ssize_t n = read(fd, index->bytes + got, index->size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    if (got != index->size) {
        say(message, message_size, "cannot read index %s: %s", path, got < index->size ? "short read" : "");
        cradle_replay_index_free(index);
        return CRADLE_EIO;
    }
    char why[CRADLE_REPLAY_INDEX_MESSAGE_MAX];
    int rc = parse_all(index, session, log_size, state_max, why, sizeof why);
    if (rc != 0) {
        say(message, message_size, "%s: %s", path, why);
        cradle_replay_index_free(index);
    }
    return rc;
}

const cradle_replay_keyframe *cradle_replay_index_find(const cradle_replay_index *index, uint64_t next_step) {
    assert(index);
    if (next_step == 0) return NULL;
    /* the last keyframe whose step < next_step: keys ascend in step */
    uint32_t lo = 0, hi = index->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if (index->keys[mid].key.step < next_step) lo = mid + 1u;
        else hi = mid;
    }
    return lo == 0 ? NULL : &index->keys[lo - 1u];
}

/* ---- writing ------------------------------------------------------------ */

int cradle_replay_index_writer_open(cradle_replay_index_writer *w, const char *path,
                                    const uint8_t session[CRADLE_BROADCAST_SESSION_BYTES], uint32_t interval,
                                    uint32_t state_max, char *message, size_t message_size) {
    assert(w && path && session && state_max > 0 && state_max <= CRADLE_BROADCAST_STATE_MAX);
    assert(interval >= 1 && interval <= CRADLE_REPLAY_INDEX_INTERVAL_MAX);
    memset(w, 0, sizeof *w);
    w->fd = -1;
    w->last_step = UINT64_MAX;
    if (sodium_init() < 0) {
        say(message, message_size, "libsodium failed to initialise");
        return CRADLE_EIO;
    }
    /* a name of this writer's own: two builds of one log's index at once
       (a --play and a cradle-replay --from) each write a whole file, and
       the last rename wins */
    static atomic_uint writers;
    int n = snprintf(w->path, sizeof w->path, "%s", path);
    int m = snprintf(w->temp_path, sizeof w->temp_path, "%s.%ld-%u.tmp", path, (long)getpid(),
                     atomic_fetch_add(&writers, 1u));
    if (n < 0 || (size_t)n >= sizeof w->path || m < 0 || (size_t)m >= sizeof w->temp_path) {
        say(message, message_size, "index path too long: %s", path);
        return CRADLE_EIO;
    }
    memcpy(w->session, session, sizeof w->session);
    w->interval = interval;
    w->state_max = state_max;
    w->buffer_size = CRADLE_REPLAY_INDEX_ENTRY_BYTES + cradle_broadcast_keyframe_bound(state_max);
    w->buffer = malloc(w->buffer_size);
    if (!w->buffer || cradle_state_pack_init(&w->codec, 0, CRADLE_STATE_PACK_BOTH) != 0) {
        say(message, message_size, "out of memory for an index of %" PRIu32 "-byte states", state_max);
        cradle_replay_index_writer_close(w);
        return CRADLE_ENOMEM;
    }
    w->fd = open(w->temp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        say(message, message_size, "cannot create index %s: %s", w->temp_path, strerror(errno));
        cradle_replay_index_writer_close(w);
        return CRADLE_EIO;
    }
    uint8_t h[CRADLE_REPLAY_INDEX_HEADER_BYTES] = {0};
    memcpy(h, index_magic, sizeof index_magic);
    cradle_cursor_store_u32(h + H_VERSION, INDEX_VERSION);
    cradle_cursor_store_u32(h + H_HEADER_BYTES, CRADLE_REPLAY_INDEX_HEADER_BYTES);
    memcpy(h + H_SESSION, session, CRADLE_BROADCAST_SESSION_BYTES);
    cradle_cursor_store_u32(h + H_INTERVAL, interval);
    checksum2(h, H_CHECKSUM, NULL, 0, h + H_CHECKSUM);
    if (!cradle_os_write_all(w->fd, h, sizeof h)) {
        say(message, message_size, "cannot write index %s: %s", w->temp_path, strerror(errno));
        cradle_replay_index_writer_close(w);
        return CRADLE_EIO;
    }
    w->bytes = sizeof h;
    return 0;
}

int cradle_replay_index_writer_add(cradle_replay_index_writer *w, uint64_t step, cradle_log_block_place block,
                                   const char *build_id, const uint8_t *build_file_hash, const void *state,
                                   uint32_t state_size, char *message, size_t message_size) {
    assert(w && w->fd >= 0 && build_id && state && state_size <= w->state_max);
    assert(cradle_replay_index_wants(w, step) && (w->last_step == UINT64_MAX || step > w->last_step));
    assert(block.first_step <= step);
    cradle_broadcast_keyframe k = {.step = step,
                                   .state_hash = cradle_hash64(state, state_size),
                                   .state_size = state_size,
                                   .block_sequence = block.sequence,
                                   .block_first_step = block.first_step};
    memcpy(k.session, w->session, sizeof k.session);
    snprintf(k.build_id, sizeof k.build_id, "%s", build_id);
    uint8_t *e = w->buffer;
    size_t doc_size = 0;
    char why[CRADLE_REPLAY_INDEX_MESSAGE_MAX];
    int rc = cradle_broadcast_keyframe_encode(&w->codec, &k, state, NULL, e + CRADLE_REPLAY_INDEX_ENTRY_BYTES,
                                              w->buffer_size - CRADLE_REPLAY_INDEX_ENTRY_BYTES, &doc_size, why,
                                              sizeof why);
    if (rc != 0) {
        say(message, message_size, "index keyframe of step %" PRIu64 ": %s", step, why);
        return CRADLE_EIO;
    }
    memset(e, 0, CRADLE_REPLAY_INDEX_ENTRY_BYTES);
    cradle_cursor_store_u64(e + E_OFFSET, block.offset);
    if (build_file_hash) memcpy(e + E_BUILD_HASH, build_file_hash, CRADLE_LOG_FILE_HASH_BYTES);
    cradle_cursor_store_u32(e + E_DOC_BYTES, (uint32_t)doc_size);
    checksum2(e, E_CHECKSUM, e + CRADLE_REPLAY_INDEX_ENTRY_BYTES, doc_size, e + E_CHECKSUM);
    if (!cradle_os_write_all(w->fd, e, CRADLE_REPLAY_INDEX_ENTRY_BYTES + doc_size)) {
        say(message, message_size, "cannot write index %s: %s", w->temp_path, strerror(errno));
        return CRADLE_EIO;
    }
    w->bytes += CRADLE_REPLAY_INDEX_ENTRY_BYTES + doc_size;
    w->keyframes++;
    w->last_step = step;
    return 0;
}

int cradle_replay_index_writer_finish(cradle_replay_index_writer *w, char *message, size_t message_size) {
    assert(w && w->fd >= 0);
    if (fsync(w->fd) != 0 || close(w->fd) != 0) {
        w->fd = -1;
        say(message, message_size, "cannot write index %s: %s", w->temp_path, strerror(errno));
        return CRADLE_EIO;
    }
    w->fd = -1;
    if (rename(w->temp_path, w->path) != 0) {
        say(message, message_size, "cannot name index %s: %s", w->path, strerror(errno));
        return CRADLE_EIO;
    }
    w->temp_path[0] = '\0'; /* nothing to remove at close */
    return 0;
}

void cradle_replay_index_writer_close(cradle_replay_index_writer *w) {
    if (!w) return;
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
    if (w->temp_path[0]) (void)unlink(w->temp_path);
    w->temp_path[0] = '\0';
    free(w->buffer);
    w->buffer = NULL;
    if (w->codec.compress || w->codec.decompress) cradle_state_pack_free(&w->codec);
}

/* ---- building ----------------------------------------------------------- */

int cradle_replay_index_create(const cradle_replay_index_build *build, cradle_replay_index_built *built,
                               char *message, size_t message_size) {
    assert(build && build->log_path && built);
    memset(built, 0, sizeof *built);
    cradle_replay *r = calloc(1, sizeof *r);
    if (!r) {
        say(message, message_size, "out of memory for a replay");
        return CRADLE_ENOMEM;
    }
    cradle_replay_index_writer w = {.fd = -1};
    int rc = cradle_replay_open(r, &(cradle_replay_config){.log_path = build->log_path,
                                                           .game_path = build->game_path,
                                                           .copy_dir = build->copy_dir,
                                                           .force = build->force,
                                                           .reload_game_path = build->reload_game_path,
                                                           .warn = build->warn,
                                                           .warn_context = build->warn_context});
    if (rc != 0) {
        say(message, message_size, "%s", r->message);
        goto out;
    }
    char path[CRADLE_LOG_PATH_MAX];
    if (build->index_path) snprintf(path, sizeof path, "%s", build->index_path);
    else if (cradle_replay_index_path(path, sizeof path, build->log_path) != 0) {
        rc = CRADLE_ERANGE;
        say(message, message_size, "log path too long: %s", build->log_path);
        goto out;
    }
    uint32_t interval = build->interval ? build->interval : CRADLE_REPLAY_INDEX_INTERVAL_DEFAULT;
    rc = cradle_replay_index_writer_open(&w, path, r->reader.session, interval, r->capacity, message, message_size);
    if (rc != 0) goto out;
    uint64_t total = r->reader.size, last_progress = 0;
    cradle_replay_item item;
    while ((rc = cradle_replay_next(r, &item)) == 1) {
        if (item.kind != CRADLE_REPLAY_STEP || !cradle_replay_index_wants(&w, item.step)) continue;
        /* the whole storage: the bytes past this build's state are what a
           later build grows into, as the session kept them */
        rc = cradle_replay_index_writer_add(&w, item.step, cradle_log_reader_block_place(&r->reader), r->build_id,
                                            cradle_replay_build_file_hash(r), r->sim.state, r->sim.state_capacity,
                                            message, message_size);
        if (rc != 0) goto out;
        uint64_t at = cradle_replay_position(r);
        if (build->progress && at - last_progress >= (1u << 20)) {
            build->progress(build->progress_context, at, total, item.step);
            last_progress = at;
        }
    }
    if (rc < 0) {
        say(message, message_size, "%s", r->message);
        goto out;
    }
    built->steps = r->steps;
    built->mismatch = r->mismatch;
    built->mismatch_step = r->mismatch_step;
    built->log_bytes = total;
    if (r->mismatch) {
        rc = CRADLE_EINDEX;
        say(message, message_size,
            "the replay's state hash differs from the log's at step %" PRIu64 ": no index for states that are not "
            "the session's",
            r->mismatch_step);
        goto out;
    }
    rc = cradle_replay_index_writer_finish(&w, message, message_size);
    if (rc != 0) goto out;
    built->keyframes = w.keyframes;
    built->index_bytes = w.bytes;
    if (build->progress) build->progress(build->progress_context, total, total, built->steps);
out:
    cradle_replay_index_writer_close(&w);
    cradle_replay_close(r);
    free(r);
    return rc;
}

/* ---- a replay that seeks ------------------------------------------------ */

const char *cradle_replay_index_outcome_name(cradle_replay_index_outcome outcome) {
    switch (outcome) {
    case CRADLE_REPLAY_INDEX_ABSENT: return "absent";
    case CRADLE_REPLAY_INDEX_LOADED: return "loaded";
    case CRADLE_REPLAY_INDEX_REBUILT: return "rebuilt";
    case CRADLE_REPLAY_INDEX_BUILT: return "built";
    }
    return "?";
}

int cradle_replay_attach_index(cradle_replay *r, cradle_replay_index *index, const char *index_path,
                               cradle_replay_index_policy policy, char *message, size_t message_size) {
    assert(r && r->reader_open && index);
    memset(index, 0, sizeof *index);
    say(message, message_size, "%s", "");
    char path[CRADLE_LOG_PATH_MAX];
    if (index_path) snprintf(path, sizeof path, "%s", index_path);
    else if (cradle_replay_index_path(path, sizeof path, r->config.log_path) != 0) {
        say(message, message_size, "log path too long: %s", r->config.log_path);
        return CRADLE_ERANGE;
    }
    char why[CRADLE_REPLAY_INDEX_MESSAGE_MAX + CRADLE_LOG_PATH_MAX];
    int rc = cradle_replay_index_load(index, path, r->reader.session, r->reader.size, r->capacity, why, sizeof why);
    bool missing = rc == CRADLE_EIO && errno == ENOENT;
    if (missing && policy != CRADLE_REPLAY_INDEX_BUILD) return CRADLE_REPLAY_INDEX_ABSENT;
    if (rc == CRADLE_ENOMEM) {
        say(message, message_size, "%s", why);
        return rc;
    }
    cradle_replay_index_outcome outcome = CRADLE_REPLAY_INDEX_LOADED;
    if (rc != 0) {
        if (policy == CRADLE_REPLAY_INDEX_USE) {
            say(message, message_size, "%s", why);
            return CRADLE_REPLAY_INDEX_ABSENT;
        }
        cradle_replay_index_built built;
        char failed[CRADLE_REPLAY_INDEX_MESSAGE_MAX];
        rc = cradle_replay_index_create(&(cradle_replay_index_build){.log_path = r->config.log_path,
                                                                     .game_path = r->config.game_path,
                                                                     .copy_dir = r->config.copy_dir,
                                                                     .index_path = path,
                                                                     .force = r->config.force,
                                                                     .reload_game_path = r->config.reload_game_path,
                                                                     .warn = r->config.warn,
                                                                     .warn_context = r->config.warn_context},
                                        &built, failed, sizeof failed);
        if (rc != 0) {
            if (missing) say(message, message_size, "building %s failed: %s", path, failed);
            else say(message, message_size, "%s; building it again failed: %s", why, failed);
            return rc < 0 ? rc : CRADLE_EINDEX;
        }
        rc = cradle_replay_index_load(index, path, r->reader.session, r->reader.size, r->capacity, failed,
                                      sizeof failed);
        if (rc != 0) {
            say(message, message_size, "%s; the index built again is refused too: %s", why, failed);
            return rc;
        }
        if (missing) say(message, message_size, "built %s", path);
        else say(message, message_size, "%s; built again", why);
        outcome = missing ? CRADLE_REPLAY_INDEX_BUILT : CRADLE_REPLAY_INDEX_REBUILT;
    }
    rc = cradle_replay_use_index(r, index);
    if (rc != 0) {
        say(message, message_size, "%s", r->message);
        cradle_replay_index_free(index);
        return rc;
    }
    return (int)outcome;
}
