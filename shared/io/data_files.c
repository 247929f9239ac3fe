/*
 * data_files: finds, watches and reads a game's data files (data_files.h).
 */
#include "cradle/data_files.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cradle/contract.h"
#include "cradle/systime.h"

void cradle_data_hash_hex(char out[2 * CRADLE_DATA_HASH_BYTES + 1], const uint8_t hash[CRADLE_DATA_HASH_BYTES]) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < CRADLE_DATA_HASH_BYTES; i++) {
        out[2 * i] = digits[hash[i] >> 4];
        out[2 * i + 1] = digits[hash[i] & 15];
    }
    out[2 * CRADLE_DATA_HASH_BYTES] = '\0';
}

int cradle_data_files_library_folder(char *out, size_t out_size, const char *library_path) {
    assert(out && out_size > 0 && library_path);
    const char *slash = strrchr(library_path, '/');
    int k = slash ? snprintf(out, out_size, "%.*s", (int)(slash - library_path), library_path)
                  : snprintf(out, out_size, ".");
    if (slash == library_path) k = snprintf(out, out_size, "/");
    return k < 0 || (size_t)k >= out_size ? CRADLE_ERANGE : 0;
}

static int64_t mtime_ns(const struct stat *st) {
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* When a file last changed at its mtime will have held still for settle_ns,
 * on the monotonic clock: the file's own time, not the look's. */
static uint64_t settled_at(const cradle_data_files *d, int64_t mtime, uint64_t now_ns) {
    int64_t age = (int64_t)cradle_wall_ns() - mtime;
    if (age < 0) age = 0; /* a clock step or a file from the future: count from now */
    if ((uint64_t)age >= d->settle_ns) return now_ns;
    return now_ns + (d->settle_ns - (uint64_t)age);
}

/* One look at file f: notes a change (size, time, inode, or the file coming
 * or going) and when it will have settled. */
static void look(cradle_data_files *d, cradle_data_file *f, uint64_t now_ns) {
    struct stat st;
    bool exists = stat(f->path, &st) == 0;
    uint64_t size = exists ? (uint64_t)st.st_size : 0, inode = exists ? (uint64_t)st.st_ino : 0;
    int64_t mtime = exists ? mtime_ns(&st) : 0;
    if (exists == f->seen && size == f->size_seen && inode == f->inode_seen && mtime == f->mtime_seen_ns) return;
    f->seen = exists;
    f->size_seen = size;
    f->inode_seen = inode;
    f->mtime_seen_ns = mtime;
    f->pending = true;
    f->ready_ns = exists ? settled_at(d, mtime, now_ns) : now_ns + d->settle_ns;
}

int cradle_data_files_open(cradle_data_files *d, const cradle_game_contract *c, const char *folder,
                           uint64_t settle_ns, uint64_t now_ns, char *message, size_t message_size) {
    assert(d && c && folder);
    memset(d, 0, sizeof *d);
    d->settle_ns = settle_ns ? settle_ns : CRADLE_DATA_DEFAULT_SETTLE_NS;
    uint32_t count = 0;
    const cradle_game_data_file *declared = cradle_contract_data(c, &count);
    for (uint32_t i = 0; i < count; i++) {
        cradle_data_file *f = &d->files[i];
        snprintf(f->name, sizeof f->name, "%s", declared[i].name); /* checked: fits */
        int k = snprintf(f->path, sizeof f->path, "%s/%s", folder, declared[i].name);
        if (k < 0 || (size_t)k >= sizeof f->path) {
            snprintf(message, message_size, "data file %s: the path is too long under %.200s...", f->name, folder);
            cradle_data_files_close(d);
            return CRADLE_ERANGE;
        }
        f->max_bytes = declared[i].max_bytes;
        f->bytes = malloc((size_t)f->max_bytes + 1u);
        if (!f->bytes) {
            snprintf(message, message_size, "out of memory for data file %s (%u bytes)", f->name,
                     (unsigned)f->max_bytes);
            cradle_data_files_close(d);
            return CRADLE_ENOMEM;
        }
        d->count = i + 1;
        look(d, f, now_ns);
    }
    if (message_size) message[0] = '\0';
    return 0;
}

bool cradle_data_files_declared_by(const cradle_data_files *d, const cradle_game_contract *c) {
    uint32_t count = 0;
    const cradle_game_data_file *declared = cradle_contract_data(c, &count);
    if (count != d->count) return false;
    for (uint32_t i = 0; i < count; i++)
        if (strcmp(declared[i].name, d->files[i].name) != 0 || declared[i].max_bytes != d->files[i].max_bytes)
            return false;
    return true;
}

static int say(cradle_data_files *d, int rc, const char *format, ...) __attribute__((format(printf, 3, 4)));
static int say(cradle_data_files *d, int rc, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    vsnprintf(d->message, sizeof d->message, format, ap);
    va_end(ap);
    return rc;
}

/* Reads up to capacity bytes of fd into out; *got says how many. */
static int read_up_to(int fd, uint8_t *out, size_t capacity, size_t *got) {
    *got = 0;
    while (*got < capacity) {
        ssize_t n = read(fd, out + *got, capacity - *got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        *got += (size_t)n;
    }
    return 0;
}

/* The whole file into f->bytes (one byte more than the limit is asked for,
 * so a file that grew past it is seen), or why not. */
static int read_whole(cradle_data_files *d, cradle_data_file *f, uint32_t *size) {
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return say(d, CRADLE_EIO, "%s: %s (%s)", f->name, strerror(errno), f->path);
    struct stat before, after;
    size_t got = 0;
    const char *failed = NULL;
    if (fstat(fd, &before) != 0) failed = strerror(errno);
    else if (!S_ISREG(before.st_mode)) failed = "not a regular file";
    else if (read_up_to(fd, f->bytes, (size_t)f->max_bytes + 1u, &got) != 0 || fstat(fd, &after) != 0)
        failed = strerror(errno);
    close(fd);
    if (failed) return say(d, CRADLE_EIO, "%s: %s (%s)", f->name, failed, f->path);
    if (got > f->max_bytes || (uint64_t)before.st_size > f->max_bytes)
        return say(d, CRADLE_EDATA, "%s is %llu bytes, over the game's limit of %u bytes", f->name,
                   (unsigned long long)(got > (uint64_t)before.st_size ? got : (uint64_t)before.st_size),
                   (unsigned)f->max_bytes);
    if (before.st_size != after.st_size || mtime_ns(&before) != mtime_ns(&after) ||
        (uint64_t)got != (uint64_t)after.st_size)
        return say(d, CRADLE_EAGAIN, "%s changed while it was read; it is read again once it holds still",
                   f->name);
    *size = (uint32_t)got;
    return 0;
}

int cradle_data_files_move(cradle_data_files *d, const char *folder, uint64_t now_ns) {
    assert(d && folder);
    char paths[CRADLE_GAME_MAX_DATA_FILES][CRADLE_DATA_PATH_MAX];
    for (uint32_t i = 0; i < d->count; i++) {
        int k = snprintf(paths[i], sizeof paths[i], "%s/%s", folder, d->files[i].name);
        if (k < 0 || (size_t)k >= sizeof paths[i])
            return say(d, CRADLE_ERANGE, "data file %s: the path is too long under %.200s...", d->files[i].name,
                       folder);
    }
    for (uint32_t i = 0; i < d->count; i++) {
        cradle_data_file *f = &d->files[i];
        memcpy(f->path, paths[i], sizeof f->path);
        f->seen = false; /* a first look at the new place */
        f->size_seen = f->inode_seen = 0;
        f->mtime_seen_ns = 0;
        look(d, f, now_ns);
    }
    return 0;
}

int cradle_data_files_read(cradle_data_files *d, uint32_t i, uint64_t now_ns) {
    assert(d && i < d->count);
    cradle_data_file *f = &d->files[i];
    look(d, f, now_ns);
    f->pending = false;
    f->valid = false; /* the buffer is being overwritten */
    uint32_t size = 0;
    int rc = read_whole(d, f, &size);
    if (rc == CRADLE_EAGAIN) {
        f->pending = true; /* look again once it settles */
        f->ready_ns = now_ns + d->settle_ns;
    }
    if (rc != 0) return rc;
    f->size = size;
    crypto_generichash(f->hash, sizeof f->hash, f->bytes, size, NULL, 0);
    f->valid = true;
    return 0;
}

int cradle_data_files_poll(cradle_data_files *d, uint64_t now_ns) {
    assert(d);
    for (uint32_t i = 0; i < d->count; i++) {
        cradle_data_file *f = &d->files[i];
        look(d, f, now_ns);
        if (!f->pending || now_ns < f->ready_ns) continue;
        int rc = cradle_data_files_read(d, i, now_ns);
        if (rc == 0) return (int)i;
        if (rc != CRADLE_EAGAIN) return -2 - (int)i;
    }
    return -1;
}

int cradle_data_files_apply(cradle_data_files *d, uint32_t i, cradle_sim *sim, cradle_log_writer *log) {
    assert(d && i < d->count && sim);
    cradle_data_file *f = &d->files[i];
    assert(f->valid && "apply what a read returned");
    if (f->applied && memcmp(f->applied_hash, f->hash, sizeof f->hash) == 0) return CRADLE_DATA_UNCHANGED;
    cradle_data_refusal refusal;
    int rc = cradle_sim_apply_data(sim, i, f->bytes, f->size, &refusal);
    if (rc != 0) {
        if (refusal.line)
            return say(d, rc, "%s:%u: %s", f->name, (unsigned)refusal.line, refusal.message);
        return say(d, rc, "%s: %s", f->name, refusal.message);
    }
    f->applied = true;
    memcpy(f->applied_hash, f->hash, sizeof f->hash);
    f->applied_step = sim->next_step;
    if (log && cradle_log_writer_append_data(log, sim->next_step, i, f->name, f->bytes, f->size, f->hash) != 0)
        return say(d, CRADLE_EIO, "%s applied at step %llu, but the log could not record it: %s", f->name,
                   (unsigned long long)sim->next_step, log->message);
    return 0;
}

uint64_t cradle_data_files_next_ns(const cradle_data_files *d) {
    uint64_t next = UINT64_MAX;
    for (uint32_t i = 0; i < d->count; i++)
        if (d->files[i].pending && d->files[i].ready_ns < next) next = d->files[i].ready_ns;
    return next;
}

void cradle_data_files_close(cradle_data_files *d) {
    if (!d) return;
    for (uint32_t i = 0; i < CRADLE_GAME_MAX_DATA_FILES; i++) {
        free(d->files[i].bytes);
        d->files[i].bytes = NULL;
    }
    d->count = 0;
}
