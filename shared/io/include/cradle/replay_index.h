#ifndef CRADLE_REPLAY_INDEX_H
#define CRADLE_REPLAY_INDEX_H
/*
 * replay_index: a session log's keyframe index, the file beside the log
 * (<log>.index) that lets the replay driver seek to any step in either
 * direction: the state block every `interval` steps, zstd-compressed in the
 * broadcast's keyframe document (broadcast.h), with the log block that holds
 * the step. Seeking restores the nearest keyframe at or before a step and
 * runs the steps after it (replay.h: cradle_replay_use_index).
 *
 * The file (version 1), little-endian, append-only (a recorder adds
 * keyframes as it goes):
 *   header, 64 bytes:
 *     0   8  magic 89 'C' 'R' 'D' 'I' 'D' 'X' 0A
 *     8   4  version (1)            12   4  header bytes (64)
 *    16  16  session: the log header's checksum (its bytes 240..255)
 *    32   4  interval: steps between keyframes (1..2^30)
 *    36  12  reserved, zero
 *    48  16  BLAKE2b-128 of bytes 0..47
 *   then keyframes to the end of the file, each:
 *     0   8  byte offset in the log of the block holding step's STEP record
 *     8  32  BLAKE2b-256 of the build in charge's library file (the name of
 *            its archive, <log>.builds/<hex>.so); zero when not archived
 *    40   4  keyframe document bytes (256 .. 256 + zstd bound of 64 MiB)
 *    44   4  reserved, zero
 *    48  16  BLAKE2b-128 of bytes 0..47 and the document
 *    64      the keyframe document: the state storage after step `step`
 *            (the build's state and the bytes past it that a later,
 *            larger build takes over), where step + 1 is a multiple of
 *            the interval
 *
 * Checks are strict and whole at load: the header, the session (the log's),
 * every keyframe's checksum, document (cradle_broadcast_keyframe_decode: its
 * zstd frame and the state's hash; at most state_max bytes of state), place
 * (steps in order on the interval's steps, blocks in order and inside the
 * log's size). A recorder busy with one keyframe may skip the next: the
 * index then has a longer gap there, and a seek runs a few more steps. A file that fails any
 * check is refused with a message naming the byte offset and what was
 * wrong, and never used in part: the caller builds a new one. The states
 * themselves are checked again by the log: a seek runs on from a keyframe
 * through the log's HASH records, which compare the replayed state.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/broadcast.h"
#include "cradle/errors.h"
#include "cradle/log.h"

#define CRADLE_REPLAY_INDEX_HEADER_BYTES 64u
#define CRADLE_REPLAY_INDEX_ENTRY_BYTES 64u         /* before each keyframe document */
#define CRADLE_REPLAY_INDEX_INTERVAL_DEFAULT 1200u  /* 20 s at 60 steps a second */
#define CRADLE_REPLAY_INDEX_INTERVAL_MAX (1u << 30)
#define CRADLE_REPLAY_INDEX_BYTES_MAX (4ull << 30)  /* a larger file is refused */
#define CRADLE_REPLAY_INDEX_MESSAGE_MAX 512u
#define CRADLE_REPLAY_INDEX_SUFFIX ".index"

/* One keyframe as loaded: where its document is in the index's bytes. */
typedef struct cradle_replay_keyframe {
    cradle_broadcast_keyframe key; /* step: the state is the one after it ran */
    cradle_log_block_place block;  /* the log block holding step's STEP record */
    uint8_t build_file_hash[CRADLE_LOG_FILE_HASH_BYTES];
    uint64_t doc_offset;           /* of the document in bytes */
    uint32_t doc_size;
} cradle_replay_keyframe;

/* An index in memory: the file's bytes and its keyframes. */
typedef struct cradle_replay_index {
    uint8_t *bytes;
    size_t size;
    uint8_t session[CRADLE_BROADCAST_SESSION_BYTES];
    uint32_t interval;
    cradle_replay_keyframe *keys;
    uint32_t count;
} cradle_replay_index;

/* "<log_path>.index" into out. Returns 0 or CRADLE_ERANGE. */
CRADLE_MUST_CHECK int cradle_replay_index_path(char *out, size_t out_size, const char *log_path);

/* Reads and checks the index at path for the log of this session (the
 * log header's checksum: cradle_log_reader's session) whose file is
 * log_size bytes, whose replay holds state_max bytes of state at most (a
 * larger keyframe is refused before anything is allocated for it). Returns 0, or without anything left to
 * free: CRADLE_EIO (cannot read; a missing file is errno ENOENT),
 * CRADLE_EINDEX (damaged, truncated, of another session or version, or
 * pointing past the log: the message names the byte offset and what),
 * CRADLE_ENOMEM. */
CRADLE_MUST_CHECK int cradle_replay_index_load(cradle_replay_index *index, const char *path,
                                               const uint8_t session[CRADLE_BROADCAST_SESSION_BYTES],
                                               uint64_t log_size, uint32_t state_max, char *message,
                                               size_t message_size);

/* The same over size bytes of memory (copied): the fuzz harness's entry. */
CRADLE_MUST_CHECK int cradle_replay_index_parse(cradle_replay_index *index, const void *data, size_t size,
                                                const uint8_t session[CRADLE_BROADCAST_SESSION_BYTES],
                                                uint64_t log_size, uint32_t state_max, char *message,
                                                size_t message_size);

/* The keyframe to start from for the sim's next step to be `next_step`:
 * the last whose step + 1 <= next_step, or NULL when there is none. */
const cradle_replay_keyframe *cradle_replay_index_find(const cradle_replay_index *index, uint64_t next_step);

void cradle_replay_index_free(cradle_replay_index *index);

/* ---- writing ------------------------------------------------------------ */

/* Appends keyframes to an index file: the server as it records (off the
 * step path), cradle-replay --index from a whole log. */
typedef struct cradle_replay_index_writer {
    int fd;
    cradle_state_pack codec;
    uint8_t session[CRADLE_BROADCAST_SESSION_BYTES];
    uint32_t interval;
    uint8_t *buffer;       /* entry + document, for the largest state */
    size_t buffer_size;
    uint32_t state_max;
    uint64_t keyframes;    /* written */
    uint64_t bytes;        /* the file's size */
    uint64_t last_step;    /* of the last keyframe; UINT64_MAX none */
    char path[CRADLE_LOG_PATH_MAX];
    char temp_path[CRADLE_LOG_PATH_MAX + 48];
} cradle_replay_index_writer;

/* Creates path's index for the log of this session under a temporary
 * name of its own (path + ".<pid>-<n>.tmp": two writers of one index at
 * once never share a file), writing the header; finish() renames it to
 * path, the last to finish winning.
 * state_max: the largest state a keyframe will hold (the buffer's size).
 * Returns 0, CRADLE_EIO or CRADLE_ENOMEM with a message. */
CRADLE_MUST_CHECK int cradle_replay_index_writer_open(cradle_replay_index_writer *w, const char *path,
                                                      const uint8_t session[CRADLE_BROADCAST_SESSION_BYTES],
                                                      uint32_t interval,
                                                      uint32_t state_max, char *message, size_t message_size);

/* Whether the state after `step` is one the index keeps. */
static inline bool cradle_replay_index_wants(const cradle_replay_index_writer *w, uint64_t step) {
    return (step + 1u) % w->interval == 0;
}

/* Appends the state storage (state_size bytes: the build's state and the
 * bytes past it a later build grows into) after `step`, whose STEP record
 * is in the log block at `block`, with the build in charge (build_id, and
 * the hash of its library file: NULL when not archived). The document's
 * state hash is of all those bytes. Returns 0 or CRADLE_EIO with a
 * message. */
CRADLE_MUST_CHECK int cradle_replay_index_writer_add(cradle_replay_index_writer *w, uint64_t step,
                                                     cradle_log_block_place block, const char *build_id,
                                                     const uint8_t *build_file_hash, const void *state,
                                                     uint32_t state_size, char *message, size_t message_size);

/* fsyncs the file and gives it its name. Returns 0 or CRADLE_EIO. */
CRADLE_MUST_CHECK int cradle_replay_index_writer_finish(cradle_replay_index_writer *w, char *message,
                                                        size_t message_size);

/* Closes, removing the temporary file when not finished. Safe twice. */
void cradle_replay_index_writer_close(cradle_replay_index_writer *w);

/* ---- building ----------------------------------------------------------- */

typedef struct cradle_replay_index_build {
    const char *log_path;
    const char *game_path;   /* NULL: the build archived beside the log */
    const char *copy_dir;
    const char *index_path;  /* NULL: <log_path>.index */
    uint32_t interval;       /* 0: CRADLE_REPLAY_INDEX_INTERVAL_DEFAULT */
    bool force;              /* as cradle_replay_config.force */
    bool reload_game_path;   /* as cradle_replay_config.reload_game_path (a fetched broadcast) */
    /* called now and then with the log bytes read and in all, and the step reached */
    void (*progress)(void *context, uint64_t done, uint64_t total, uint64_t step);
    void *progress_context;
    void (*warn)(void *context, const char *message);
    void *warn_context;
} cradle_replay_index_build;

typedef struct cradle_replay_index_built {
    uint64_t steps;       /* the log's steps replayed */
    uint64_t keyframes;
    uint64_t index_bytes;
    uint64_t log_bytes;
    bool mismatch;        /* a recorded hash differed: the index is not written */
    uint64_t mismatch_step;
} cradle_replay_index_built;

/* Replays the whole log (replay.h) and writes its index. A log whose
 * recorded hashes the replay does not reproduce gets no index (its states
 * would not be the session's). Returns 0 with *built filled, or the
 * replay's or the writer's failure with a message. */
CRADLE_MUST_CHECK int cradle_replay_index_create(const cradle_replay_index_build *build,
                                                 cradle_replay_index_built *built, char *message,
                                                 size_t message_size);

/* ---- a replay that seeks ------------------------------------------------ */

struct cradle_replay;

typedef enum cradle_replay_index_outcome {
    CRADLE_REPLAY_INDEX_ABSENT = 0, /* no index in use: the replay seeks from step 0 */
    CRADLE_REPLAY_INDEX_LOADED,     /* the index was checked and is in use */
    CRADLE_REPLAY_INDEX_REBUILT,    /* the file was refused (message: why) and built again, now in use */
    CRADLE_REPLAY_INDEX_BUILT,      /* there was none: built, now in use */
} cradle_replay_index_outcome;

/* "absent", "loaded", "rebuilt", "built": the outcome's name in reports. */
const char *cradle_replay_index_outcome_name(cradle_replay_index_outcome outcome);

typedef enum cradle_replay_index_policy {
    CRADLE_REPLAY_INDEX_USE,         /* use a file that passes its checks; build nothing */
    CRADLE_REPLAY_INDEX_REBUILD,     /* also build a refused one again */
    CRADLE_REPLAY_INDEX_BUILD,       /* also build a missing one */
} cradle_replay_index_policy;

/* Loads the index of r's log (index_path, NULL: <log>.index), checked
 * against the log, and has r seek through it (cradle_replay_use_index).
 * A file that is refused is never used: by the policy it is built again
 * from the log (a whole replay, with r's library, --force and copy
 * directory) and that one is used, else the outcome is ABSENT with the
 * refusal in message; a missing one is built by CRADLE_REPLAY_INDEX_BUILD.
 * Returns the outcome (>= 0) with *index loaded when in use (the caller
 * frees it after closing r), or a negative code with a message when a build
 * failed or memory ran out. */
int cradle_replay_attach_index(struct cradle_replay *r, cradle_replay_index *index, const char *index_path,
                               cradle_replay_index_policy policy, char *message, size_t message_size);

#endif
