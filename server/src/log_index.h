#ifndef CRADLE_SERVER_LOG_INDEX_H
#define CRADLE_SERVER_LOG_INDEX_H
/*
 * log_index: the keyframe index the server writes beside its session log
 * as it records (--index-interval, replay_index.h): every N steps the game
 * thread copies the state storage into a mailbox and wakes a thread of its
 * own ("log-index"), which compresses it and appends it to a temporary
 * file beside the log (LOG.index.<pid>-<n>.tmp);
 * close() renames the file to LOG.index. cradle-replay --from and
 * cradle-client --play then seek through it without a first replay.
 *
 * Never hurts the game. The game thread only copies the state (a memcpy of
 * the storage, once per interval) and posts a semaphore: no lock, no wait,
 * no allocation. When the thread still holds the last keyframe, this one is
 * skipped and counted (the index then has a longer gap there; a seek runs a
 * few more steps). A failed write stops the index (counted, said once in
 * the status); the log is untouched either way.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/replay_index.h"

typedef struct cradle_server_log_index {
    cradle_replay_index_writer writer; /* the thread's */
    pthread_t thread;
    bool thread_started;
    sem_t wake;
    atomic_bool stop;
    atomic_uint full;              /* 1: the mailbox holds a keyframe for the thread */
    /* the mailbox: written by the game thread while full == 0 */
    uint8_t *state;
    uint32_t capacity, state_size;
    uint64_t step;
    cradle_log_block_place block;
    char build_id[CRADLE_GAME_BUILD_ID_MAX + 1];
    uint8_t build_file_hash[CRADLE_LOG_FILE_HASH_BYTES];
    bool build_known;
    /* figures (status) */
    atomic_uint_fast64_t keyframes, skipped;
    atomic_bool failed;
    char error[CRADLE_REPLAY_INDEX_MESSAGE_MAX]; /* the thread's first failure; read after failed */
} cradle_server_log_index;

/* Creates the temporary index file for the log at log_path of this session (the log
 * header's checksum), a keyframe every `interval` steps of states up to
 * capacity bytes, and starts the thread. Returns 0, or CRADLE_EIO /
 * CRADLE_ENOMEM with a message (nothing to close). */
int cradle_server_log_index_open(cradle_server_log_index *x, const char *log_path,
                                 const uint8_t session[CRADLE_LOG_CHECKSUM_BYTES], uint32_t interval,
                                 uint32_t capacity, char *message, size_t message_size);

/* Game thread, after the STEP record of `step` went into the log and before
 * the step runs: whether the state after it is a keyframe. */
static inline bool cradle_server_log_index_due(const cradle_server_log_index *x, uint64_t step) {
    return cradle_replay_index_wants(&x->writer, step);
}

/* Game thread, after step `step` ran: hands the state storage (size bytes,
 * at most the capacity) over with the log block that holds the step (taken
 * after its STEP record was appended) and the build in charge (its library
 * hash, NULL when not archived). Skipped and counted when the thread is
 * still busy with the last one. */
void cradle_server_log_index_put(cradle_server_log_index *x, uint64_t step, cradle_log_block_place block,
                                 const char *build_id, const uint8_t *build_file_hash, const void *state,
                                 uint32_t size);

/* Writes what the mailbox holds, stops the thread and gives the file its
 * name (LOG.index). Returns 0, or CRADLE_EIO with a message (the temporary
 * file is removed). Safe on a zeroed struct and twice. */
int cradle_server_log_index_close(cradle_server_log_index *x, char *message, size_t message_size);

#endif
