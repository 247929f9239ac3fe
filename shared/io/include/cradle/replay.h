#ifndef CRADLE_REPLAY_H
#define CRADLE_REPLAY_H
/*
 * replay: the replay driver. A session log reader (log.h) plus a sim
 * (sim.h): it loads the build the log names (archived beside the log, or a
 * library the caller names), runs every recorded step through the sim,
 * switches builds at RELOAD records, compares the recorded state hashes and
 * the trailer's final hash, and hands each record's outcome to the caller.
 * cradle-replay, the server's --resume, the client's --play and the tests
 * replay through it.
 *
 *   open   reads the header, loads the library, starts the game at step 0
 *   next   runs up to one record: a step (the sim holds the state after it;
 *          its output bytes when asked), a hash check, a reload, the trailer
 *   catch_up  handles the records that follow the step just run, up to the
 *          next step, without running it
 *   seek   to a step boundary, forward or back: from the nearest keyframe of
 *          an index (use_index), else forward (or from the start again)
 *   rerun  runs the step next() just ran again, from a state saved before it
 *          (a sync test: the same state and snapshot must give the same bytes)
 *   move   puts the state block at another address (the caller's storage)
 *   close  releases everything
 *
 * Reloads: a RELOAD record switches to the build archived for it
 * (<log>.builds/<hash>.so) and the new build takes over the state through
 * cradle_sim_swap(), so on_reload runs exactly where it ran in the session,
 * whether or not the build changed. When that file is missing and the
 * record names the build in use (or config.force), the build in use takes
 * over again (on_reload runs) and a warning says so; otherwise the replay
 * fails naming the missing file.
 *
 * Data: a DATA record applies the data file archived for it
 * (<log>.data/<hash>, checked against the record's size and hash) through
 * cradle_sim_apply_data(), before the same step as in the session. A
 * missing or altered archive, or a build that refuses the bytes, fails the
 * replay naming the file.
 *
 * Failure: next() and seek() return a negative code with r->message; the
 * failure is sticky. A library of another game or build than the log's is
 * refused (both ids in the message) unless config.force, which warns.
 *
 * Memory: open allocates the state blocks, the event storage, one data
 * file's buffer and the log reader's block; next() allocates nothing (a reload opens a library).
 * Warnings go to config.warn (the driver prints nothing).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/broadcast.h"
#include "cradle/log.h"
#include "cradle/reload.h"
#include "cradle/replay_index.h"
#include "cradle/sim.h"
#include "cradle/sim_storage.h"

#define CRADLE_REPLAY_MESSAGE_MAX 512u
#define CRADLE_REPLAY_MIN_CAPACITY 65536u /* state bytes reserved for later builds to grow into */

/* Zero means default in every field but log_path. */
typedef struct cradle_replay_config {
    const char *log_path;      /* required */
    const char *game_path;     /* NULL: the build archived beside the log */
    const char *copy_dir;      /* where library copies go; NULL: $TMPDIR, else /tmp */
    bool force;                /* replay with a library of another game or build */
    bool keep_previous;        /* keep the state before each step (a renderer's previous) */
    bool output;               /* write each step's output bytes (from output_from on) */
    uint64_t output_from;      /* first step whose output is written */
    uint64_t stop_at;          /* stop before this step runs, or a reload takes effect at it;
                                  0: at the log's end */
    uint32_t event_capacity;   /* events kept per step; 0 = none */
    /* A start from a keyframe instead of step 0 (a broadcast viewer,
       broadcast.h): the log holds blocks from some place in the session on
       (cradle_log_reader_start_anywhere), one of which records the hash of
       step start_step - 1; start_state (start_state_size bytes) is the state
       after that step and start_build the build then in charge (game_path,
       required). Records before start_step are passed over unrun; the hash
       of step start_step - 1 is compared with the keyframe's state. */
    const void *start_state;
    uint32_t start_state_size;
    uint64_t start_step;       /* >= 1 */
    const char *start_build;
    /* A RELOAD whose build is not archived beside the log loads game_path
       again, which must then be that build (a viewer keeps its game current
       as a client does): no archive to copy builds from. */
    bool reload_game_path;
    /* Read only the first log_bytes bytes of the log (0: all): another
       thread appends to it, and cradle_replay_grow() moves the limit. */
    uint64_t log_bytes;
    /* The log in memory instead of a file (a browser's viewer, which has no
       files): log_bytes bytes at log_memory, growing with cradle_replay_grow()
       while the caller appends whole blocks to memory it owns; log_path then
       only names the log in messages (no build is archived beside it). */
    const uint8_t *log_memory;
    /* Where DATA records' files come from (NULL: archived beside the log,
       cradle_log_read_data()): copies the file of this BLAKE2b-256 hash and
       size into out (capacity bytes). Returns 0, or a negative code with why. */
    int (*read_data)(void *context, const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES], uint32_t size, uint8_t *out,
                     size_t capacity, char *why, size_t why_size);
    void *read_data_context;
    void (*warn)(void *context, const char *message);
    void *warn_context;
} cradle_replay_config;

typedef enum cradle_replay_kind {
    CRADLE_REPLAY_STEP = 1, /* step ran: the sim holds the state after it */
    CRADLE_REPLAY_HASH,     /* the hash recorded after step was compared */
    CRADLE_REPLAY_RELOAD,   /* build_id took over the state before step */
    CRADLE_REPLAY_TRAILER,  /* the log's end: step = the step count, the final hash compared */
    CRADLE_REPLAY_REFUSED,  /* a build was refused before step (record->reason); nothing changed */
    CRADLE_REPLAY_DATA,     /* data file data_name was applied before step */
} cradle_replay_kind;

/* One record's outcome. Pointers are valid until the next call. */
typedef struct cradle_replay_item {
    cradle_replay_kind kind;
    uint64_t step;
    const uint8_t *snapshot;       /* STEP: the recorded snapshot */
    const uint8_t *output;         /* STEP, when config.output and step >= output_from */
    size_t output_size;
    uint64_t logged_hash;          /* HASH, TRAILER: what the log recorded */
    uint64_t replayed_hash;        /* HASH, TRAILER: the replay's state hash */
    bool matches;                  /* HASH, TRAILER: the two are equal */
    const char *build_id;          /* RELOAD */
    bool archived;                 /* RELOAD: the build came from the log's archive */
    const char *data_name;         /* DATA: the file's name (record->data_file its index) */
    const uint8_t *data_bytes;     /* DATA: the bytes applied */
    uint32_t data_size;
    const cradle_log_record *record; /* the record itself (TRAILER: digest, signature) */
} cradle_replay_item;

/* The caller owns the struct (large: static or heap). Fields are for
 * reading; change none. */
typedef struct cradle_replay {
    cradle_replay_config config;
    cradle_log_reader reader;
    bool reader_open;
    cradle_reload libraries[2];
    int in_use;                    /* index of the library in charge */
    cradle_sim sim;
    cradle_sim_storage storage;    /* the sim's own blocks (it may run in the caller's: move) */
    uint8_t *data;                 /* one data file's bytes (CRADLE_GAME_DATA_MAX_BYTES) */
    uint32_t capacity;
    cradle_log_record record;
    char build_id[CRADLE_GAME_BUILD_ID_MAX + 1]; /* the build the log runs now */
    uint8_t build_file_hash[CRADLE_LOG_FILE_HASH_BYTES]; /* its library file's; zero: unknown */
    uint64_t skip_before;          /* records before this step are passed over (a keyframe start) */
    /* seeking through a keyframe index (use_index) */
    const cradle_replay_index *index;
    cradle_state_pack codec;
    uint8_t *keyframe_state;       /* keyframe_capacity bytes: the largest keyframe's */
    uint32_t keyframe_capacity;
    uint64_t keyframe_seeks;       /* seeks that restored a keyframe */
    /* what the replay found so far */
    uint64_t steps;                /* steps run */
    uint64_t hashes_checked;
    uint64_t hash_mismatches;
    bool mismatch;                 /* the first mismatching hash (HASH or TRAILER) */
    uint64_t mismatch_step, mismatch_logged, mismatch_replayed;
    uint64_t reloads;
    uint64_t refusals;             /* REFUSED records read: builds the session refused */
    uint64_t data_applied;         /* DATA records applied */
    uint64_t reruns;               /* cradle_replay_rerun() calls that ran a step */
    bool ran_step;                 /* record is the STEP next() ran last: rerun may run it again */
    bool ended;                    /* next() returned 0 at the log's end: reader.end says how */
    bool stopped;                  /* next() returned 0 at config.stop_at */
    bool held;                     /* record was read (catch_up: a STEP; peek_step: any) and not handled */
    int error;
    char message[CRADLE_REPLAY_MESSAGE_MAX];
} cradle_replay;

/* Opens the log, loads the library and starts the game (the log's seed and
 * player count). Returns 0 or a negative code with r->message; on failure
 * nothing is left open (close is still safe). */
CRADLE_MUST_CHECK int cradle_replay_open(cradle_replay *r, const cradle_replay_config *config);

/* Handles the next record. Returns 1 with *item filled, 0 at the end of
 * the log (r->ended; r->reader.end and r->reader.message say how it ended)
 * or at config.stop_at (r->stopped), or the sticky error. */
CRADLE_MUST_CHECK int cradle_replay_next(cradle_replay *r, cradle_replay_item *item);

/* Handles every record up to the next STEP without running it: the hash
 * recorded after the step just run, a reload, the trailer. A host that
 * runs one step at a time (--play) calls it after each, so that step's
 * checks are done before it shows the step or stops; the next next() runs
 * the held step. Returns 0 (also at the end or at stop_at: the flags say
 * which), or the sticky error. */
CRADLE_MUST_CHECK int cradle_replay_catch_up(cradle_replay *r);

/* Reads the next record without handling it (the next next() handles it):
 * its snapshot when it is a STEP, else NULL (another record, the end, the
 * stop step or the sticky error: next() says which). The snapshot stays
 * valid until that next() returns. For a caller that runs something beside
 * the step (the sync test's twin on another thread) while next() runs it. */
const uint8_t *cradle_replay_peek_step(cradle_replay *r);

/* Runs until the sim's next step is `step` (hash checks and reloads on the
 * way count as in next()). With an index (use_index), from the nearest
 * keyframe at or before `step` when that is ahead of the sim or `step` is
 * behind it: the keyframe's build takes charge (the archived library its
 * hash names; no on_reload runs, the state already holds what it did), the
 * state is restored and the log read on from the keyframe's block, its
 * HASH records compared as ever. Without one, starting over from step 0
 * when `step` is behind. Returns 0, CRADLE_ERANGE when the log ends before
 * `step` (a torn tail: the sim stays at the last complete step), or the
 * sticky error. The counts (steps, hashes, the first mismatch, ...) go on
 * across seeks, also one that starts over. */
CRADLE_MUST_CHECK int cradle_replay_seek(cradle_replay *r, uint64_t step);

/* Seeks through this index from now on (the caller keeps it loaded until
 * close; cradle_replay_index_load() checked it against this log). Allocates
 * the keyframe buffer and the zstd context. Returns 0, CRADLE_EINDEX when
 * the index is of another session (a message), or CRADLE_ENOMEM. */
CRADLE_MUST_CHECK int cradle_replay_use_index(cradle_replay *r, const cradle_replay_index *index);

/* The hash of the library file of the build in charge (the name of its
 * archive beside the log), or NULL when not known (a library the caller
 * named for a build not archived). */
const uint8_t *cradle_replay_build_file_hash(const cradle_replay *r);

/* Runs the step next() just ran again, on its recorded snapshot, with the
 * build in charge, from `saved`: size bytes (the build's state_size) that
 * cradle_sim_save() took before that step ran, after the records before it
 * (a reload changes the state: save after a RELOAD item). The sim's state
 * is then the re-run's, and *item is filled as next()'s was, its output
 * written when next()'s was (config.output, output_from) into the same
 * sim->output: copy the first run's output before. Counted in r->reruns,
 * not in steps. A sync test compares the two runs (cradle-replay
 * --synctest); it may call move() between them to re-run at another
 * address. Returns 0; CRADLE_EINVAL when the last record next() handled is
 * not a step it ran (a hash, a reload, a step catch_up() holds), or
 * CRADLE_ESIM_STATE for another size, both without any change; or the
 * sticky error (an output() failure is one, as in next()). */
CRADLE_MUST_CHECK int cradle_replay_rerun(cradle_replay *r, const void *saved, size_t size,
                                          cradle_replay_item *item);

/* Moves the state block to storage (capacity bytes, which the caller keeps
 * alive until the next move or close), or back to the driver's own with
 * NULL: cradle_sim_move(), at the alignment the address has (at most
 * CRADLE_RELOAD_DEFAULT_MAX_ALIGN). The replay goes on from there; at a
 * RELOAD record whose build needs more size or alignment than the storage
 * has, the driver first moves the state back to its own. seek() back to an
 * earlier step starts in the driver's own storage. Returns 0, or without any
 * change CRADLE_ERELOAD_SIZE / _ALIGN when the build in charge does not fit
 * (r->message says why; not sticky), or the sticky error. */
CRADLE_MUST_CHECK int cradle_replay_move(cradle_replay *r, void *storage, uint32_t capacity);

/* The log file's first `size` bytes are whole blocks to read (another
 * thread appended them: a broadcast viewer's mirror). A replay that had
 * reached an unclosed end goes on: returns true when next() has records
 * again. */
bool cradle_replay_grow(cradle_replay *r, uint64_t size);

/* Bytes of the log read so far and in all, for a progress display. */
uint64_t cradle_replay_position(const cradle_replay *r);

/* Releases everything. Safe on a zeroed or failed struct, and twice. */
void cradle_replay_close(cradle_replay *r);

#endif
