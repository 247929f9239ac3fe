/*
 * log_archive: the build archive beside a session log. Every library a
 * session ran is copied to "<log>.builds/<hex BLAKE2b-256 of the file>.so";
 * the log's header and RELOAD records name those hashes (log_format.c), so a
 * replay finds each build by content, whatever became of the original file.
 * The writer archives (log_writer.c); replays look files up with
 * cradle_log_build_path and cradle_log_file_hash.
 */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log_internal.h"

static void hex(char *out, const uint8_t *bytes, size_t n) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

/* "<log_path><folder>/<hex hash><suffix>": an archived file's name. */
static int archive_path(char *out, size_t out_size, const char *log_path, const char *folder,
                        const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES], const char *suffix) {
    char text[2 * CRADLE_LOG_FILE_HASH_BYTES + 1];
    hex(text, hash, CRADLE_LOG_FILE_HASH_BYTES);
    int k = snprintf(out, out_size, "%s%s/%s%s", log_path, folder, text, suffix);
    return k < 0 || (size_t)k >= out_size ? CRADLE_ERANGE : 0;
}

int cradle_log_build_path(char *out, size_t out_size, const char *log_path,
                          const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES]) {
    return archive_path(out, out_size, log_path, ".builds", hash, ".so");
}

int cradle_log_data_path(char *out, size_t out_size, const char *log_path,
                         const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES]) {
    return archive_path(out, out_size, log_path, ".data", hash, "");
}

enum stream_fault { STREAM_OK, STREAM_READ, STREAM_TOO_LARGE, STREAM_WRITE };

/* Reads `in` to its end into the hash state st, also writing every chunk to
 * `out` when out >= 0. Stops at the first fault, which it returns (errno
 * says why a read or a write failed), or past CRADLE_LOG_LIBRARY_MAX bytes. */
static enum stream_fault stream_file(int in, int out, crypto_generichash_state *st) {
    uint8_t buf[CRADLE__LOG_IO_CHUNK];
    uint64_t total = 0;
    for (;;) {
        ssize_t got = read(in, buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return STREAM_READ;
        if (got == 0) return STREAM_OK;
        total += (uint64_t)got;
        if (total > CRADLE_LOG_LIBRARY_MAX) return STREAM_TOO_LARGE;
        crypto_generichash_update(st, buf, (size_t)got);
        size_t done = 0;
        if (out >= 0 && cradle__log_write_all(out, buf, (size_t)got, &done) != 0)
            return STREAM_WRITE;
    }
}

int cradle_log_file_hash(const char *path, uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES]) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return CRADLE_EIO;
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, CRADLE_LOG_FILE_HASH_BYTES);
    enum stream_fault fault = stream_file(fd, -1, &st);
    close(fd);
    crypto_generichash_final(&st, hash, CRADLE_LOG_FILE_HASH_BYTES);
    return fault == STREAM_OK ? 0 : fault == STREAM_TOO_LARGE ? CRADLE_ERANGE : CRADLE_EIO;
}

/* Copies the library into "<log>.builds/" under its content hash, hashing
 * the bytes as they are copied (so a file rewritten meanwhile is still
 * archived under the hash of what was copied). An existing archive of the
 * same hash is kept. */
int cradle__log_archive_library(const char *log_path, const char *library,
                                uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES], char *msg, size_t n) {
    char dir[CRADLE_LOG_PATH_MAX], tmp[CRADLE_LOG_PATH_MAX], dest[CRADLE_LOG_PATH_MAX];
    int k = snprintf(dir, sizeof dir, "%s.builds", log_path);
    int k2 = snprintf(tmp, sizeof tmp, "%s.builds/incoming-%ld.tmp", log_path, (long)getpid());
    if (k < 0 || (size_t)k >= sizeof dir || k2 < 0 || (size_t)k2 >= sizeof tmp) {
        cradle__log_message(msg, n, "log path too long: %s", log_path);
        return CRADLE_ERANGE;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        cradle__log_message(msg, n, "cannot create %s: %s", dir, strerror(errno));
        return CRADLE_EIO;
    }
    int in = open(library, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        cradle__log_message(msg, n, "cannot open library %s: %s", library, strerror(errno));
        return CRADLE_EIO;
    }
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    if (out < 0) {
        cradle__log_message(msg, n, "cannot create %s: %s", tmp, strerror(errno));
        close(in);
        return CRADLE_EIO;
    }
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, CRADLE_LOG_FILE_HASH_BYTES);
    int rc = 0;
    switch (stream_file(in, out, &st)) {
    case STREAM_OK:
        break;
    case STREAM_READ:
        cradle__log_message(msg, n, "cannot read library %s: %s", library, strerror(errno));
        rc = CRADLE_EIO;
        goto out_remove_tmp;
    case STREAM_TOO_LARGE:
        cradle__log_message(msg, n, "library %s is larger than %llu bytes", library,
                            (unsigned long long)CRADLE_LOG_LIBRARY_MAX);
        rc = CRADLE_ERANGE;
        goto out_remove_tmp;
    case STREAM_WRITE:
        cradle__log_message(msg, n, "cannot write %s: %s", tmp, strerror(errno));
        rc = CRADLE_EIO;
        goto out_remove_tmp;
    }
    crypto_generichash_final(&st, hash, CRADLE_LOG_FILE_HASH_BYTES);
    if (cradle_log_build_path(dest, sizeof dest, log_path, hash) != 0) {
        cradle__log_message(msg, n, "log path too long: %s", log_path);
        rc = CRADLE_ERANGE;
        goto out_remove_tmp;
    }
    if (fsync(out) != 0 || close(out) != 0) {
        out = -1;
        cradle__log_message(msg, n, "cannot sync %s: %s", tmp, strerror(errno));
        rc = CRADLE_EIO;
        goto out_remove_tmp;
    }
    out = -1;
    if (rename(tmp, dest) != 0) {
        cradle__log_message(msg, n, "cannot rename %s to %s: %s", tmp, dest, strerror(errno));
        rc = CRADLE_EIO;
        goto out_remove_tmp;
    }
    (void)cradle__log_fsync_parent(dest);
    close(in);
    return 0;
out_remove_tmp:
    if (out >= 0) close(out);
    unlink(tmp);
    close(in);
    return rc;
}

int cradle__log_archive_data(const char *log_path, const uint8_t *bytes, uint32_t size,
                             const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES], char *msg, size_t n) {
    char dir[CRADLE_LOG_PATH_MAX], tmp[CRADLE_LOG_PATH_MAX], dest[CRADLE_LOG_PATH_MAX];
    int k = snprintf(dir, sizeof dir, "%s.data", log_path);
    int k2 = snprintf(tmp, sizeof tmp, "%s.data/incoming-%ld.tmp", log_path, (long)getpid());
    if (k < 0 || (size_t)k >= sizeof dir || k2 < 0 || (size_t)k2 >= sizeof tmp ||
        cradle_log_data_path(dest, sizeof dest, log_path, hash) != 0) {
        cradle__log_message(msg, n, "log path too long: %s", log_path);
        return CRADLE_ERANGE;
    }
    uint8_t existing[CRADLE_LOG_FILE_HASH_BYTES];
    if (cradle_log_file_hash(dest, existing) == 0 && sodium_memcmp(existing, hash, sizeof existing) == 0)
        return 0; /* content-addressed: the same bytes are there already */
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        cradle__log_message(msg, n, "cannot create %s: %s", dir, strerror(errno));
        return CRADLE_EIO;
    }
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        cradle__log_message(msg, n, "cannot create %s: %s", tmp, strerror(errno));
        return CRADLE_EIO;
    }
    size_t done = 0;
    bool written = cradle__log_write_all(out, bytes, size, &done) == 0 && fsync(out) == 0;
    int saved = errno;
    if (close(out) != 0 && written) written = false, saved = errno;
    if (!written || rename(tmp, dest) != 0) {
        if (written) saved = errno;
        cradle__log_message(msg, n, "cannot write %s: %s", dest, strerror(saved));
        unlink(tmp);
        return CRADLE_EIO;
    }
    (void)cradle__log_fsync_parent(dest);
    return 0;
}

int cradle_log_read_data(const char *log_path, const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES], uint32_t size,
                         uint8_t *out, size_t capacity, char *message, size_t message_size) {
    char path[CRADLE_LOG_PATH_MAX];
    if (cradle_log_data_path(path, sizeof path, log_path, hash) != 0) {
        cradle__log_message(message, message_size, "log path too long: %s", log_path);
        return CRADLE_EIO;
    }
    if (size > capacity) {
        cradle__log_message(message, message_size, "data file %s is %u bytes, more than %zu", path,
                            (unsigned)size, capacity);
        return CRADLE_ELOG_CORRUPT;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cradle__log_message(message, message_size, "missing archived data file %s: %s", path, strerror(errno));
        return CRADLE_EIO;
    }
    size_t got = 0;
    uint8_t extra;
    bool failed = false;
    while (got < size) {
        ssize_t r = read(fd, out + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            failed = r < 0;
            break;
        }
        got += (size_t)r;
    }
    ssize_t more = failed ? 0 : read(fd, &extra, 1);
    close(fd);
    if (failed) {
        cradle__log_message(message, message_size, "cannot read %s: %s", path, strerror(errno));
        return CRADLE_EIO;
    }
    uint8_t actual[CRADLE_LOG_FILE_HASH_BYTES];
    crypto_generichash(actual, sizeof actual, out, got, NULL, 0);
    if (got != size || more > 0 || sodium_memcmp(actual, hash, sizeof actual) != 0) {
        cradle__log_message(message, message_size,
                            "archived data file %s is not the %u bytes the log names (another size or hash)",
                            path, (unsigned)size);
        return CRADLE_ELOG_CORRUPT;
    }
    return 0;
}
