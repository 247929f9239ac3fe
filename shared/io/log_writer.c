/*
 * log_writer: the session log's writer (cradle_log_writer_*, log.h) and its
 * background sync thread. The writer fills one block buffer with records
 * and writes each full block with one write(); durability comes from
 * fdatasync, on the sync thread unless config.sync_inline. The format of
 * what it writes is described at the top of log_format.c; the builds it
 * archives beside the log are log_archive.c's.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cradle/contract.h"
#include "cradle/input.h"
#include "cradle/os.h"
#include "log_internal.h"

/* ---- files -------------------------------------------------------------- */

int cradle__log_write_all(int fd, const uint8_t *p, size_t n, size_t *done) {
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

int cradle__log_fsync_parent(const char *path) {
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

/* ---- sync thread -------------------------------------------------------- */

struct cradle_log_sync {
    bool thread_started;
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    bool sync_requested, stop;
    uint64_t sync_target;      /* steps_written at the request */
    int sync_errno;            /* first fdatasync failure of the thread, 0 if none */
};

static void *sync_main(void *arg) {
    cradle_os_name_thread("log-sync");
    cradle_log_writer *w = arg;
    pthread_mutex_lock(&w->sync->mutex);
    for (;;) {
        while (!w->sync->sync_requested && !w->sync->stop) pthread_cond_wait(&w->sync->cond, &w->sync->mutex);
        if (!w->sync->sync_requested) break;
        uint64_t target = w->sync->sync_target;
        w->sync->sync_requested = false;
        pthread_mutex_unlock(&w->sync->mutex);
        int rc = fdatasync(w->fd);
        int e = errno;
        pthread_mutex_lock(&w->sync->mutex);
        if (rc != 0) {
            if (!w->sync->sync_errno) w->sync->sync_errno = e;
        } else if (target > w->durable_steps) {
            w->durable_steps = target;
        }
    }
    pthread_mutex_unlock(&w->sync->mutex);
    return NULL;
}

/* Creates the mutex and condition variable the writer always uses, and the
 * sync thread unless w->sync_inline. Returns 0 or CRADLE_ENOMEM with a
 * message, having undone what it made. */
static int start_sync(cradle_log_writer *w, char *message, size_t message_size) {
    w->sync = calloc(1, sizeof *w->sync);
    if (!w->sync) {
        cradle__log_message(message, message_size, "out of memory");
        return CRADLE_ENOMEM;
    }
    if (pthread_mutex_init(&w->sync->mutex, NULL) != 0) {
        cradle__log_message(message, message_size, "cannot create a mutex");
        goto out_free;
    }
    if (pthread_cond_init(&w->sync->cond, NULL) != 0) {
        cradle__log_message(message, message_size, "cannot create a condition variable");
        goto out_destroy_mutex;
    }
    if (!w->sync_inline) {
        if (pthread_create(&w->sync->thread, NULL, sync_main, w) != 0) {
            cradle__log_message(message, message_size, "cannot start the log sync thread");
            goto out_destroy_cond;
        }
        w->sync->thread_started = true;
    }
    return 0;
out_destroy_cond:
    pthread_cond_destroy(&w->sync->cond);
out_destroy_mutex:
    pthread_mutex_destroy(&w->sync->mutex);
out_free:
    free(w->sync);
    w->sync = NULL;
    return CRADLE_ENOMEM;
}

/* Joins the sync thread (it finishes a requested sync first) and destroys
 * what start_sync made. */
static void stop_sync(cradle_log_writer *w) {
    if (!w->sync) return;
    if (w->sync->thread_started) {
        pthread_mutex_lock(&w->sync->mutex);
        w->sync->stop = true;
        pthread_cond_signal(&w->sync->cond);
        pthread_mutex_unlock(&w->sync->mutex);
        pthread_join(w->sync->thread, NULL);
        w->sync->thread_started = false;
    }
    pthread_cond_destroy(&w->sync->cond);
    pthread_mutex_destroy(&w->sync->mutex);
    free(w->sync);
    w->sync = NULL;
}

/* Makes the steps written so far durable: now with sync_inline, else by
 * waking the sync thread. Returns 0, or CRADLE_EIO for a failed inline
 * fdatasync or the thread's first failure. */
static int request_sync(cradle_log_writer *w) {
    if (w->sync_inline) {
        if (fdatasync(w->fd) != 0) {
            cradle__log_message(w->message, sizeof w->message, "log fdatasync failed: %s",
                                strerror(errno));
            return CRADLE_EIO;
        }
        w->durable_steps = w->steps_written;
        return 0;
    }
    pthread_mutex_lock(&w->sync->mutex);
    int e = w->sync->sync_errno;
    if (w->steps_written > w->sync->sync_target || w->durable_steps < w->steps_written) {
        w->sync->sync_target = w->steps_written;
        w->sync->sync_requested = true;
        pthread_cond_signal(&w->sync->cond);
    }
    pthread_mutex_unlock(&w->sync->mutex);
    if (e) {
        cradle__log_message(w->message, sizeof w->message, "log fdatasync failed: %s", strerror(e));
        return CRADLE_EIO;
    }
    return 0;
}

/* ---- writer ------------------------------------------------------------- */

static void seal_block(cradle_log_writer *w, bool into_digest) {
    if (w->signing) { /* the room reserve() kept: seal fills the record in */
        assert(w->used <= w->room);
        w->used += CRADLE_LOG_SIGN_RECORD_BYTES;
        w->records++;
    }
    cradle__log_seal_block(w->block, w->sequence, w->block_first_step, w->records, w->used, w->session,
                           w->signing ? w->sign_secret : NULL);
    if (into_digest)
        crypto_generichash_update(&w->digest, w->block + CRADLE__LOG_BLOCK_CHECKSUM,
                                  CRADLE_LOG_CHECKSUM_BYTES);
    w->sealed = true;
    w->sealed_written = 0;
}

/* Writes the rest of the sealed block; on success opens the next block. */
static int write_sealed(cradle_log_writer *w) {
    size_t total = CRADLE_LOG_BLOCK_HEADER_BYTES + (size_t)w->used;
    size_t done = w->sealed_written;
    int rc = cradle__log_write_all(w->fd, w->block, total, &done);
    w->bytes_written += done - w->sealed_written;
    w->sealed_written = (uint32_t)done;
    if (rc != 0) {
        cradle__log_message(w->message, sizeof w->message,
                            "log write failed at byte %" PRIu64 ": %s", w->bytes_written,
                            strerror(errno));
        return CRADLE_EIO;
    }
    if (w->on_written && !w->rescuing) w->on_written(w->on_written_context, w->block, total);
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
    if (w->used + n > w->room) return flush_open_block(w);
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
        cradle__log_message(message, message_size, "libsodium failed to initialise");
        return CRADLE_EIO;
    }
    if (strlen(path) >= sizeof w->path) {
        cradle__log_message(message, message_size, "log path too long");
        return CRADLE_ERANGE;
    }
    memcpy(w->path, path, strlen(path) + 1);
    w->header = *h;
    w->header.format_version = CRADLE_LOG_FORMAT_VERSION;
    w->block_size = config->block_size ? config->block_size : CRADLE_LOG_BLOCK_DEFAULT;
    w->header.block_max = w->block_size;
    size_t len;
    if (!cradle__log_printable_field((const uint8_t *)w->header.game_name,
                                     sizeof w->header.game_name, &len) ||
        !cradle__log_printable_field((const uint8_t *)w->header.build_id,
                                     sizeof w->header.build_id, &len)) {
        cradle__log_message(message, message_size, "log header: game name or build id invalid");
        return CRADLE_EINVAL;
    }
    int rc = cradle__log_check_header(&w->header, message, message_size);
    if (rc) return CRADLE_EINVAL;
    w->room = w->block_size;
    if (config->sign_secret) {
        uint32_t fixed = CRADLE_LOG_BLOCK_MIN, step = 1 + w->header.snapshot_size;
        uint32_t need = (step > fixed ? step : fixed) + CRADLE_LOG_SIGN_RECORD_BYTES;
        if (w->block_size < need) {
            cradle__log_message(message, message_size,
                                "log block size %" PRIu32 " is too small for signed blocks (at least %" PRIu32 ")",
                                w->block_size, need);
            return CRADLE_EINVAL;
        }
        w->signing = true;
        w->room = w->block_size - CRADLE_LOG_SIGN_RECORD_BYTES;
    }
    w->durable_interval_ns =
        config->durable_interval_ns ? config->durable_interval_ns : CRADLE_LOG_DURABLE_DEFAULT_NS;
    w->sync_inline = config->sync_inline;
    w->on_written = config->on_written;
    w->on_written_context = config->on_written_context;
    memset(w->header.build_file_hash, 0, sizeof w->header.build_file_hash);
    if (library_path) {
        rc = cradle__log_archive_library(path, library_path, w->header.build_file_hash, message,
                                         message_size);
        if (rc) return rc;
    }
    w->block = malloc(CRADLE_LOG_BLOCK_HEADER_BYTES + (size_t)w->block_size);
    if (!w->block) {
        cradle__log_message(message, message_size, "out of memory for a %" PRIu32 "-byte block",
                            w->block_size);
        return CRADLE_ENOMEM;
    }
    if (w->signing) memcpy(w->sign_secret, config->sign_secret, sizeof w->sign_secret);
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (config->overwrite ? O_TRUNC : O_EXCL);
    w->fd = open(path, flags, 0644);
    if (w->fd < 0) {
        cradle__log_message(message, message_size, "cannot create log %s: %s", path,
                            strerror(errno));
        rc = CRADLE_EIO;
        goto out_free;
    }
    uint8_t head[CRADLE_LOG_HEADER_BYTES];
    cradle__log_encode_header(&w->header, head);
    memcpy(w->session, head + CRADLE_LOG_HEADER_BYTES - CRADLE_LOG_CHECKSUM_BYTES, sizeof w->session);
    size_t done = 0;
    if (cradle__log_write_all(w->fd, head, sizeof head, &done) != 0 || fdatasync(w->fd) != 0 ||
        cradle__log_fsync_parent(path) != 0) {
        cradle__log_message(message, message_size, "cannot write log header to %s: %s", path,
                            strerror(errno));
        rc = CRADLE_EIO;
        goto out_unlink;
    }
    w->bytes_written = sizeof head;
    memcpy(w->build_file_hash, w->header.build_file_hash, sizeof w->build_file_hash);
    if (w->on_written) w->on_written(w->on_written_context, head, sizeof head);
    crypto_generichash_init(&w->digest, NULL, 0, CRADLE_LOG_DIGEST_BYTES);
    crypto_generichash_update(&w->digest, head, sizeof head);
    rc = start_sync(w, message, message_size);
    if (rc) goto out_unlink;
    if (message && message_size) message[0] = '\0';
    return 0;
out_unlink:
    close(w->fd);
    w->fd = -1;
    unlink(path);
out_free:
    free(w->block);
    w->block = NULL;
    sodium_memzero(w->sign_secret, sizeof w->sign_secret);
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
    int rc = reserve(w, CRADLE__LOG_HASH_RECORD_BYTES);
    if (rc) return rc;
    uint8_t *p = record_at(w);
    p[0] = CRADLE_LOG_RECORD_HASH;
    cradle_cursor_store_u64(p + 1, step);
    cradle_cursor_store_u64(p + 9, hash);
    w->used += CRADLE__LOG_HASH_RECORD_BYTES;
    w->records++;
    return 0;
}

int cradle_log_writer_append_reload(cradle_log_writer *w, uint64_t step, const char *build_id,
                                    const char *library_path) {
    assert(w && w->block && build_id && library_path);
    assert(step == w->steps && "a reload takes effect at the next step");
    size_t len = cradle_contract_strnlen(build_id, CRADLE_GAME_BUILD_ID_MAX);
    if (len < 1 || len > CRADLE_GAME_BUILD_ID_MAX) {
        cradle__log_message(w->message, sizeof w->message,
                            "reload: build id empty or longer than %u", CRADLE_GAME_BUILD_ID_MAX);
        return CRADLE_EINVAL;
    }
    uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES];
    int rc =
        cradle__log_archive_library(w->path, library_path, hash, w->message, sizeof w->message);
    if (rc) return rc == CRADLE_ERANGE ? CRADLE_EIO : rc;
    uint32_t n = (uint32_t)(1 + 8 + 1 + len + CRADLE_LOG_FILE_HASH_BYTES);
    rc = reserve(w, n);
    if (rc) return rc;
    uint8_t *p = record_at(w);
    p[0] = CRADLE_LOG_RECORD_RELOAD;
    cradle_cursor_store_u64(p + 1, step);
    p[9] = (uint8_t)len;
    memcpy(p + 10, build_id, len);
    memcpy(p + 10 + len, hash, sizeof hash);
    w->used += n;
    w->records++;
    memcpy(w->build_file_hash, hash, sizeof hash);
    return 0;
}

const uint8_t *cradle_log_writer_build_file_hash(const cradle_log_writer *w) {
    for (size_t i = 0; i < sizeof w->build_file_hash; i++)
        if (w->build_file_hash[i]) return w->build_file_hash;
    return NULL;
}

cradle_log_block_place cradle_log_writer_block_place(const cradle_log_writer *w) {
    assert(w && !w->sealed);
    return (cradle_log_block_place){.offset = w->bytes_written, .sequence = w->sequence,
                                    .first_step = w->block_first_step};
}

int cradle_log_writer_append_refused(cradle_log_writer *w, uint64_t step,
                                     const uint8_t file_hash[CRADLE_LOG_FILE_HASH_BYTES], const char *reason) {
    assert(w && w->block && file_hash && reason);
    assert(step == w->steps && "a refusal is recorded at the next step");
    size_t len = strnlen(reason, CRADLE_LOG_REASON_MAX);
    if (len == 0) reason = "?", len = 1;
    uint32_t n = (uint32_t)(1 + 8 + CRADLE_LOG_FILE_HASH_BYTES + 1 + len);
    int rc = reserve(w, n);
    if (rc) return rc;
    uint8_t *p = record_at(w);
    p[0] = CRADLE_LOG_RECORD_REFUSED;
    cradle_cursor_store_u64(p + 1, step);
    memcpy(p + 9, file_hash, CRADLE_LOG_FILE_HASH_BYTES);
    p[9 + CRADLE_LOG_FILE_HASH_BYTES] = (uint8_t)len;
    uint8_t *text = p + 10 + CRADLE_LOG_FILE_HASH_BYTES;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = (uint8_t)reason[i];
        text[i] = c >= 0x20 && c <= 0x7e ? c : '?';
    }
    w->used += n;
    w->records++;
    return 0;
}

int cradle_log_writer_append_data(cradle_log_writer *w, uint64_t step, uint32_t file, const char *name,
                                  const uint8_t *bytes, uint32_t size,
                                  const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES]) {
    assert(w && w->block && name && (bytes || size == 0) && hash);
    assert(step == w->steps && "data is applied at the next step");
    size_t len = cradle_contract_strnlen(name, CRADLE_GAME_DATA_NAME_MAX);
    if (len < 1 || len > CRADLE_GAME_DATA_NAME_MAX || file >= CRADLE_GAME_MAX_DATA_FILES) {
        cradle__log_message(w->message, sizeof w->message, "data: file %u or its name is invalid",
                            (unsigned)file);
        return CRADLE_EINVAL;
    }
    int rc = cradle__log_archive_data(w->path, bytes, size, hash, w->message, sizeof w->message);
    if (rc) return rc == CRADLE_ERANGE ? CRADLE_EIO : rc;
    uint32_t n = (uint32_t)(1 + 8 + 1 + 1 + len + 4 + CRADLE_LOG_FILE_HASH_BYTES);
    rc = reserve(w, n);
    if (rc) return rc;
    uint8_t *p = record_at(w);
    p[0] = CRADLE_LOG_RECORD_DATA;
    cradle_cursor_store_u64(p + 1, step);
    p[9] = (uint8_t)file;
    p[10] = (uint8_t)len;
    memcpy(p + 11, name, len);
    cradle_cursor_store_u32(p + 11 + len, size);
    memcpy(p + 15 + len, hash, CRADLE_LOG_FILE_HASH_BYTES);
    w->used += n;
    w->records++;
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
        cradle__log_message(w->message, sizeof w->message, "log fdatasync failed: %s",
                            strerror(errno));
        return CRADLE_EIO;
    }
    if (w->sync_inline) {
        w->durable_steps = w->steps_written;
    } else {
        pthread_mutex_lock(&w->sync->mutex);
        if (w->steps_written > w->durable_steps) w->durable_steps = w->steps_written;
        pthread_mutex_unlock(&w->sync->mutex);
    }
    return 0;
}

uint64_t cradle_log_writer_durable_steps(cradle_log_writer *w) {
    assert(w);
    if (w->sync_inline || !w->block) return w->durable_steps; /* no thread, or closed */
    pthread_mutex_lock(&w->sync->mutex);
    uint64_t v = w->durable_steps;
    pthread_mutex_unlock(&w->sync->mutex);
    return v;
}

static void release(cradle_log_writer *w) {
    stop_sync(w);
    free(w->block);
    w->block = NULL;
    sodium_memzero(w->sign_secret, sizeof w->sign_secret);
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
        w->used =
            cradle__log_encode_trailer(record_at(w), w->steps, final_hash, digest, sign_secret);
        w->records = 1;
        seal_block(w, false);
        rc = write_sealed(w);
    }
    release(w);
    if (rc == 0 && fdatasync(w->fd) != 0) {
        cradle__log_message(w->message, sizeof w->message, "log fdatasync failed: %s",
                            strerror(errno));
        rc = CRADLE_EIO;
    }
    if (rc == 0) w->durable_steps = w->steps;
    if (close(w->fd) != 0 && rc == 0) {
        cradle__log_message(w->message, sizeof w->message, "log close failed: %s", strerror(errno));
        rc = CRADLE_EIO;
    }
    w->fd = -1;
    return rc;
}

int cradle_log_writer_rescue(cradle_log_writer *w, cradle_log_mark mark) {
    assert(w && w->block);
    w->rescuing = true; /* another thread: nothing is handed on */
    /* The open block is the mark's: cut it back. A block flushed since the mark
     * held only steps up to it (a block is flushed before a record that does not
     * fit), so then the open one holds nothing to keep. */
    if (!w->sealed) {
        if (mark.sequence == w->sequence) {
            assert(mark.used <= w->used && mark.records <= w->records);
            w->used = mark.used;
            w->records = mark.records;
            w->steps = mark.steps;
        } else {
            w->used = 0;
            w->records = 0;
            w->steps = w->block_first_step;
        }
    }
    int rc = flush_open_block(w);
    if (rc) return rc;
    if (fdatasync(w->fd) != 0) {
        cradle__log_message(w->message, sizeof w->message, "log fdatasync failed: %s", strerror(errno));
        return CRADLE_EIO;
    }
    return 0;
}

void cradle_log_writer_abandon(cradle_log_writer *w) {
    assert(w);
    if (!w->block) return;
    release(w);
    close(w->fd);
    w->fd = -1;
}

