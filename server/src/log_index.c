/*
 * log_index: the server's keyframe index beside its log (see log_index.h).
 */
#include "log_index.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/errors.h"
#include "cradle/os.h"

/* The thread: the keyframe in the mailbox, compressed and appended. */
static void take_mailbox(cradle_server_log_index *x) {
    if (atomic_load_explicit(&x->full, memory_order_acquire) == 0) return;
    if (!atomic_load_explicit(&x->failed, memory_order_relaxed)) {
        char why[CRADLE_REPLAY_INDEX_MESSAGE_MAX];
        int rc = cradle_replay_index_writer_add(&x->writer, x->step, x->block, x->build_id,
                                                x->build_known ? x->build_file_hash : NULL, x->state, x->state_size,
                                                why, sizeof why);
        if (rc == 0) {
            atomic_fetch_add_explicit(&x->keyframes, 1, memory_order_relaxed);
        } else {
            snprintf(x->error, sizeof x->error, "%s", why);
            atomic_store_explicit(&x->failed, true, memory_order_release);
        }
    }
    atomic_store_explicit(&x->full, 0, memory_order_release);
}

static void *index_main(void *arg) {
    cradle_server_log_index *x = arg;
    cradle_os_name_thread("log-index");
    for (;;) {
        while (sem_wait(&x->wake) != 0 && errno == EINTR) {
        }
        take_mailbox(x);
        if (atomic_load_explicit(&x->stop, memory_order_acquire)) break;
    }
    take_mailbox(x);
    return NULL;
}

int cradle_server_log_index_open(cradle_server_log_index *x, const char *log_path,
                                 const uint8_t session[CRADLE_LOG_CHECKSUM_BYTES], uint32_t interval,
                                 uint32_t capacity, char *message, size_t message_size) {
    assert(x && log_path && session && interval >= 1 && capacity > 0);
    memset(x, 0, sizeof *x);
    x->writer.fd = -1;
    char path[CRADLE_LOG_PATH_MAX];
    if (cradle_replay_index_path(path, sizeof path, log_path) != 0) {
        snprintf(message, message_size, "log path too long for its index: %s", log_path);
        return CRADLE_EIO;
    }
    x->state = malloc(capacity);
    if (!x->state) {
        snprintf(message, message_size, "out of memory for a %u-byte keyframe", (unsigned)capacity);
        return CRADLE_ENOMEM;
    }
    x->capacity = capacity;
    int rc = cradle_replay_index_writer_open(&x->writer, path, session, interval, capacity, message, message_size);
    if (rc != 0) goto out_free;
    if (sem_init(&x->wake, 0, 0) != 0) {
        snprintf(message, message_size, "cannot make the index thread's semaphore: %s", strerror(errno));
        rc = CRADLE_ENOMEM;
        goto out_writer;
    }
    if (pthread_create(&x->thread, NULL, index_main, x) != 0) {
        snprintf(message, message_size, "cannot start the index thread");
        rc = CRADLE_ENOMEM;
        sem_destroy(&x->wake);
        goto out_writer;
    }
    x->thread_started = true;
    return 0;
out_writer:
    cradle_replay_index_writer_close(&x->writer);
out_free:
    free(x->state);
    x->state = NULL;
    return rc;
}

void cradle_server_log_index_put(cradle_server_log_index *x, uint64_t step, cradle_log_block_place block,
                                 const char *build_id, const uint8_t *build_file_hash, const void *state,
                                 uint32_t size) {
    assert(x->thread_started && size <= x->capacity);
    if (atomic_load_explicit(&x->full, memory_order_acquire) != 0) {
        atomic_fetch_add_explicit(&x->skipped, 1, memory_order_relaxed);
        return;
    }
    memcpy(x->state, state, size);
    x->state_size = size;
    x->step = step;
    x->block = block;
    snprintf(x->build_id, sizeof x->build_id, "%s", build_id);
    x->build_known = build_file_hash != NULL;
    if (build_file_hash) memcpy(x->build_file_hash, build_file_hash, sizeof x->build_file_hash);
    atomic_store_explicit(&x->full, 1, memory_order_release);
    sem_post(&x->wake);
}

int cradle_server_log_index_close(cradle_server_log_index *x, char *message, size_t message_size) {
    if (!x->thread_started) return 0;
    atomic_store_explicit(&x->stop, true, memory_order_release);
    sem_post(&x->wake);
    pthread_join(x->thread, NULL);
    x->thread_started = false;
    sem_destroy(&x->wake);
    int rc = 0;
    if (atomic_load_explicit(&x->failed, memory_order_acquire)) {
        snprintf(message, message_size, "%s", x->error);
        rc = CRADLE_EIO;
    } else {
        rc = cradle_replay_index_writer_finish(&x->writer, message, message_size);
    }
    cradle_replay_index_writer_close(&x->writer); /* removes the temporary file when not finished */
    free(x->state);
    x->state = NULL;
    return rc;
}
