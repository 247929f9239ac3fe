#ifndef CRADLE_LOG_H
#define CRADLE_LOG_H
/*
 * log: session log files. A writer records every step's snapshot of a session
 * (plus periodic state hashes, library reloads and a trailer on a clean
 * close); a reader streams them back for replays with bounded memory and
 * tells a torn tail (the writer died) from damage in the middle of a file.
 * The file format is described at the top of shared/io/log_format.c; the
 * writer is log_writer.c, the reader log_reader.c, the build archive
 * log_archive.c.
 *
 * Writer (one thread, the game thread, owns it):
 *   open     creates the file (O_EXCL unless config.overwrite), writes and
 *            syncs the header, allocates the one block buffer. Nothing is
 *            allocated after open.
 *   append_* encode a record into the block buffer; a full block is written
 *            with one write(). No syscall otherwise.
 *   maybe_sync(now_ns)  once durable_interval_ns has passed since the last
 *            sync: writes the partial block and makes everything written
 *            durable (fdatasync) -- by default on a background thread, so the
 *            game thread pays only the write(); config.sync_inline does it on
 *            the caller's thread.
 *   flush(now_ns)       writes the partial block and fdatasyncs it now, on the
 *            caller's thread (the dev protocol's "flush").
 *   close(final_hash)   writes the trailer, syncs, closes (group commit).
 * Errors never lose what was already recorded: a block that failed to be
 * written stays buffered and is retried by the next call that writes, and a
 * refused record was not appended (the caller may retry it).
 *
 * The builds a session ran are archived beside the log, content-addressed:
 * "<log>.builds/<hex BLAKE2b-256 of the library file>.so". The header names
 * the build that ran step 0 and each reload record names its build, so a
 * replay can switch libraries at the recorded steps. The game data files it
 * applied are archived the same way, "<log>.data/<hex BLAKE2b-256>", and
 * each DATA record names the file, its size and hash and the step before
 * which it was applied.
 */
#include <sodium/crypto_generichash.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/game_abi.h"

#define CRADLE_LOG_FORMAT_VERSION 1u
#define CRADLE_LOG_HEADER_BYTES 256u       /* the file header, fixed */
#define CRADLE_LOG_BLOCK_HEADER_BYTES 48u  /* each block's header, fixed */
#define CRADLE_LOG_BLOCK_MIN 256u          /* smallest block payload; also >= 1 + snapshot size */
#define CRADLE_LOG_BLOCK_MAX (1u << 20)    /* largest block payload a reader accepts */
#define CRADLE_LOG_BLOCK_DEFAULT (64u << 10)
#define CRADLE_LOG_DURABLE_DEFAULT_NS 1000000000ull
#define CRADLE_LOG_FILE_HASH_BYTES 32u     /* BLAKE2b-256 of a library file */
#define CRADLE_LOG_REASON_MAX 200u         /* bytes of a REFUSED record's reason */
#define CRADLE_LOG_CHECKSUM_BYTES 16u      /* BLAKE2b-128 of a block */
#define CRADLE_LOG_DIGEST_BYTES 32u        /* BLAKE2b-256 chained over the blocks */
#define CRADLE_LOG_SIGNATURE_MAX 64u       /* room for an Ed25519 signature (issue 10) */
#define CRADLE_LOG_SIGN_RECORD_BYTES 65u   /* a signed block's SIGN record */
#define CRADLE_LOG_MESSAGE_MAX 256u
#define CRADLE_LOG_PATH_MAX 4096u
#define CRADLE_LOG_LIBRARY_MAX (64ull << 20) /* largest library file archived */

/* Everything the header holds, decoded. */
typedef struct cradle_log_header {
    uint32_t format_version;
    char game_name[CRADLE_GAME_NAME_MAX + 1];
    char build_id[CRADLE_GAME_BUILD_ID_MAX + 1]; /* the build that ran step 0 */
    uint32_t abi_major, abi_minor;
    uint32_t state_size, state_align;
    uint32_t input_bytes, max_players;
    uint32_t steps_per_second, source_frames_per_second;
    uint64_t seed;
    uint32_t player_count;
    uint32_t snapshot_size;    /* == cradle_snapshot_size(max_players, input_bytes) */
    uint64_t created_unix_ns;  /* wall clock at creation, from the caller */
    uint32_t hash_interval;    /* K: the host records a state hash every K steps; 0 = none */
    uint32_t block_max;        /* largest block payload in this file */
    uint8_t build_file_hash[CRADLE_LOG_FILE_HASH_BYTES]; /* library of step 0; all zero =
                                                             not archived */
} cradle_log_header;

/* Fills h from a validated contract and the session's parameters (block_max
 * and build_file_hash are set by the writer). Returns 0, or CRADLE_EINVAL
 * when a contract string is too long or player_count is outside
 * 1..max_players. */
CRADLE_MUST_CHECK int cradle_log_header_from_contract(cradle_log_header *h,
                                                      const cradle_game_contract *c, uint64_t seed,
                                                      uint32_t player_count,
                                                      uint64_t created_unix_ns,
                                                      uint32_t hash_interval);

/* Whether contract c can replay a log with header h: the same game (name and
 * the fields the snapshot and the step depend on; else CRADLE_ELOG_GAME) and
 * the build id `build_id` (else CRADLE_ERELOAD_MISMATCH). The message names
 * both sides: "library is game 'x' build 'b1', the log needs game 'y' build
 * 'b2'". */
CRADLE_MUST_CHECK int cradle_log_check_library(const cradle_log_header *h, const char *build_id,
                                               const cradle_game_contract *c, char *message,
                                               size_t message_size);

/* BLAKE2b-256 of a file's contents (at most CRADLE_LOG_LIBRARY_MAX bytes).
 * Returns 0, CRADLE_EIO or CRADLE_ERANGE (too large). */
CRADLE_MUST_CHECK int cradle_log_file_hash(const char *path,
                                           uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES]);

/* "<log_path>.builds/<hex hash>.so" into out. Returns 0 or CRADLE_ERANGE. */
CRADLE_MUST_CHECK int cradle_log_build_path(char *out, size_t out_size, const char *log_path,
                                            const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES]);

/* "<log_path>.data/<hex hash>" into out. Returns 0 or CRADLE_ERANGE. */
CRADLE_MUST_CHECK int cradle_log_data_path(char *out, size_t out_size, const char *log_path,
                                           const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES]);

/* Reads the archived data file of log_path with this hash, which must be
 * exactly `size` bytes (<= capacity) whose BLAKE2b-256 is `hash`, into out.
 * Returns 0, or with a message naming the file CRADLE_EIO (missing or
 * unreadable) or CRADLE_ELOG_CORRUPT (another size or hash). */
CRADLE_MUST_CHECK int cradle_log_read_data(const char *log_path, const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES],
                                           uint32_t size, uint8_t *out, size_t capacity, char *message,
                                           size_t message_size);

/* ---- writer ------------------------------------------------------------- */

/* Zero means default. */
typedef struct cradle_log_writer_config {
    uint32_t block_size;          /* payload bytes per block: 0 = 64 KiB; at least
                                     CRADLE_LOG_BLOCK_MIN and 1 + snapshot size, at
                                     most CRADLE_LOG_BLOCK_MAX */
    uint64_t durable_interval_ns; /* maybe_sync's period; 0 = 1 s */
    bool sync_inline;             /* fdatasync on the caller's thread instead of
                                     a background thread */
    bool overwrite;               /* replace an existing file instead of refusing */
    /* Told every piece of the file once it is written, on the writer's
       thread: the header at open, then each whole block (the trailer's
       last), in file order -- a broadcast's fragments (broadcast.h). Not
       called by rescue, which runs on another thread. NULL: none. */
    void (*on_written)(void *context, const uint8_t *bytes, size_t size);
    void *on_written_context;
    /* An Ed25519 secret key (libsodium's 64-byte form: cradle_keys.
       sign_secret, keys.h): every block ends in a SIGN record by it, so each
       block on its own proves who wrote it for which session (a broadcast's
       viewer checks fragments with it: cradle_log_reader_require_signer).
       Copied at open; needs a block_size of at least CRADLE_LOG_BLOCK_MIN +
       CRADLE_LOG_SIGN_RECORD_BYTES and 1 + snapshot size + that. NULL:
       unsigned blocks. */
    const uint8_t *sign_secret;
} cradle_log_writer_config;

/* A log block's place: its byte offset in the file, sequence and first
 * step. A keyframe index names the block of each keyframe's step by it. */
typedef struct cradle_log_block_place {
    uint64_t offset;
    uint32_t sequence;
    uint64_t first_step;
} cradle_log_block_place;

/* The caller owns the struct; fields are visible for inspection, change none. */
typedef struct cradle_log_writer {
    int fd;
    char path[CRADLE_LOG_PATH_MAX];
    cradle_log_header header;
    uint8_t *block;            /* header + payload, allocated at open */
    uint32_t block_size;       /* payload capacity */
    uint32_t room;             /* of it, what records may fill (a SIGN record needs the rest) */
    uint32_t used;             /* payload bytes in the open block */
    uint32_t records;          /* records in the open block */
    bool sealed;               /* the block is complete, being written */
    uint32_t sealed_written;   /* bytes of the sealed block already written */
    uint32_t sequence;         /* of the block being filled */
    uint64_t block_first_step;
    uint8_t build_file_hash[CRADLE_LOG_FILE_HASH_BYTES]; /* the library of the build in charge (the
                                                            header's, then the last RELOAD's) */
    uint64_t steps;            /* steps appended */
    uint64_t steps_written;    /* steps whose blocks are in the file */
    uint64_t bytes_written;    /* file size */
    uint64_t durable_interval_ns;
    uint64_t last_sync_ns;
    bool sync_inline;
    bool rescuing;             /* rescue() runs: on_written is not called */
    bool signing;              /* blocks end in a SIGN record by sign_secret */
    uint8_t sign_secret[CRADLE_LOG_SIGNATURE_MAX];
    uint8_t session[CRADLE_LOG_CHECKSUM_BYTES]; /* the header's checksum: what SIGN binds to */
    void (*on_written)(void *context, const uint8_t *bytes, size_t size);
    void *on_written_context;
    crypto_generichash_state digest;
    /* background sync: the game thread requests, the sync thread fdatasyncs
       (its thread, lock and requests are log_writer.c's own). */
    struct cradle_log_sync *sync; /* allocated at open */
    uint64_t durable_steps;    /* guarded by sync's mutex in thread mode */
    char message[CRADLE_LOG_MESSAGE_MAX]; /* what the last failure was */
} cradle_log_writer;

/* Creates the log at path with header h (its block_max and build_file_hash
 * are filled in). library_path (may be NULL) is the library that runs step 0:
 * it is copied to the builds directory and its hash recorded. Returns 0 or a
 * negative code with a message; on failure the log file is removed (an
 * archived build, being content-addressed, may stay). */
CRADLE_MUST_CHECK int cradle_log_writer_open(cradle_log_writer *w, const char *path,
                                             const cradle_log_header *h,
                                             const cradle_log_writer_config *config,
                                             const char *library_path, char *message,
                                             size_t message_size);

/* Records the snapshot (header.snapshot_size bytes) of `step`, which must be
 * the next step (asserted). Returns 0 or CRADLE_EIO (a full block could not
 * be written; the snapshot was not appended). */
CRADLE_MUST_CHECK int cradle_log_writer_append_step(cradle_log_writer *w, uint64_t step,
                                                    const uint8_t *snapshot);

/* Records the state hash after `step`, which must be the last appended step
 * (asserted). Returns 0 or CRADLE_EIO. */
CRADLE_MUST_CHECK int cradle_log_writer_append_hash(cradle_log_writer *w, uint64_t step,
                                                    uint64_t hash);

/* Records that a new build (the library file whose BLAKE2b-256 is
 * file_hash) was refused before `step` (the next step, asserted) and why:
 * its reload trial failed (trial.h). The session went on with the build in
 * charge. The reason is cut to CRADLE_LOG_REASON_MAX bytes and any byte
 * that is not printable ASCII becomes '?'. Returns 0 or CRADLE_EIO. */
CRADLE_MUST_CHECK int cradle_log_writer_append_refused(cradle_log_writer *w, uint64_t step,
                                                       const uint8_t file_hash[CRADLE_LOG_FILE_HASH_BYTES],
                                                       const char *reason);

/* Records that the library at library_path, build build_id, runs from `step`
 * on (step must be the next step, asserted), and archives the file. Returns
 * 0, CRADLE_EINVAL (bad build id), CRADLE_EIO (archive or write failed; the
 * record was not appended). Does file I/O: a reload is rare. */
CRADLE_MUST_CHECK int cradle_log_writer_append_reload(cradle_log_writer *w, uint64_t step,
                                                      const char *build_id,
                                                      const char *library_path);

/* Records that the game took data file `file` (its index in the build's
 * data files, named `name`: size bytes whose BLAKE2b-256 is hash) into its
 * state before `step` (the next step, asserted), and archives the bytes
 * (<log>.data/<hex>, written and synced before the record; an archive of
 * the same hash is kept). Returns 0, CRADLE_EINVAL (a bad name) or
 * CRADLE_EIO (archive or write failed; the record was not appended). Does
 * file I/O: data changes are rare. */
CRADLE_MUST_CHECK int cradle_log_writer_append_data(cradle_log_writer *w, uint64_t step, uint32_t file,
                                                    const char *name, const uint8_t *bytes, uint32_t size,
                                                    const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES]);

/* When durable_interval_ns has passed since the last sync: writes the open
 * block and makes it durable (see the header comment). Returns 0 or
 * CRADLE_EIO (a write failed now, or the background fdatasync failed). */
CRADLE_MUST_CHECK int cradle_log_writer_maybe_sync(cradle_log_writer *w, uint64_t now_ns);

/* Writes the open block and fdatasyncs now, on the caller's thread. */
CRADLE_MUST_CHECK int cradle_log_writer_flush(cradle_log_writer *w, uint64_t now_ns);

/* Steps known to be durable (on disk after an fdatasync). Also valid after
 * close (then every step of a successful close). */
uint64_t cradle_log_writer_durable_steps(cradle_log_writer *w);

/* Writes the trailer (step count, final_hash: the state hash after the last
 * step), syncs and closes. Resources are released even on failure; returns 0
 * or CRADLE_EIO (then the file ends without a trailer, earlier data intact). */
CRADLE_MUST_CHECK int cradle_log_writer_close(cradle_log_writer *w, uint64_t final_hash);

/* Like cradle_log_writer_close, and signs the trailer with an Ed25519
 * secret key (libsodium's 64-byte form: cradle_keys.sign_secret, keys.h).
 * The signature covers "cradle-log-v1" NUL, the log digest (which commits
 * to the header and every block), the step count and the final hash. */
CRADLE_MUST_CHECK int cradle_log_writer_close_signed(
    cradle_log_writer *w, uint64_t final_hash,
    const uint8_t sign_secret[CRADLE_LOG_SIGNATURE_MAX]);

/* Where the writer stands: what it has appended so far. A host takes a mark
 * after each complete step (before appending the next) so that, should its
 * thread never come back from the game's step, another thread can make the
 * log durable up to that step (rescue). */
typedef struct cradle_log_mark {
    uint32_t sequence; /* of the open block */
    uint32_t used, records;
    uint64_t steps;
} cradle_log_mark;

static inline cradle_log_mark cradle_log_writer_mark(const cradle_log_writer *w) {
    return (cradle_log_mark){.sequence = w->sequence, .used = w->used, .records = w->records, .steps = w->steps};
}

/* For another thread, when the owner's thread will never touch w again (it
 * hangs in a game's step, and the process is about to exit): writes what was
 * appended up to mark (the open block cut back to it; records appended after
 * it are dropped) and makes the file durable. The log keeps no trailer: it
 * reads as unclosed, mark.steps steps long, and --resume continues it. The
 * caller must have a happens-before edge from the owner's last use (an
 * atomic release/acquire pair). Returns 0 or CRADLE_EIO with w->message. */
CRADLE_MUST_CHECK int cradle_log_writer_rescue(cradle_log_writer *w, cradle_log_mark mark);

/* Releases everything without a trailer, as a crash would (the file keeps
 * what was written). For error paths. */
void cradle_log_writer_abandon(cradle_log_writer *w);

/* ---- reader ------------------------------------------------------------- */

typedef enum cradle_log_record_kind {
    CRADLE_LOG_RECORD_STEP = 1,    /* step, snapshot */
    CRADLE_LOG_RECORD_HASH = 2,    /* step, hash: the state hash after step */
    CRADLE_LOG_RECORD_RELOAD = 3,  /* step (runs on the new build), build_id, file_hash */
    CRADLE_LOG_RECORD_TRAILER = 4, /* step (= step count), hash (final), digest, signature */
    CRADLE_LOG_RECORD_REFUSED = 5, /* step (the next one), file_hash, reason: a build refused */
    CRADLE_LOG_RECORD_DATA = 6,    /* step (the next one), data_file, data_name, data_size,
                                      file_hash (of the data): a data file applied */
    CRADLE_LOG_RECORD_SIGN = 7,    /* a signed block's last record: checked and counted by
                                      the reader (signed_blocks), never delivered */
} cradle_log_record_kind;

typedef struct cradle_log_record {
    cradle_log_record_kind kind;
    uint64_t step;
    const uint8_t *snapshot;   /* STEP: header.snapshot_size bytes, valid until the next call */
    uint64_t hash;             /* HASH, TRAILER */
    char build_id[CRADLE_GAME_BUILD_ID_MAX + 1];      /* RELOAD */
    uint8_t file_hash[CRADLE_LOG_FILE_HASH_BYTES];   /* RELOAD, REFUSED, DATA */
    char reason[CRADLE_LOG_REASON_MAX + 1];          /* REFUSED */
    uint32_t data_file;                              /* DATA: index in the build's data files */
    uint32_t data_size;                              /* DATA: bytes */
    char data_name[CRADLE_GAME_DATA_NAME_MAX + 1];   /* DATA */
    uint8_t digest[CRADLE_LOG_DIGEST_BYTES];         /* TRAILER */
    uint32_t signature_length;                       /* TRAILER: 0 = unsigned */
    uint8_t signature[CRADLE_LOG_SIGNATURE_MAX];     /* TRAILER */
} cradle_log_record;

typedef enum cradle_log_end {
    CRADLE_LOG_END_NONE,     /* not at the end yet */
    CRADLE_LOG_END_CLOSED,   /* a trailer ended the log */
    CRADLE_LOG_END_UNCLOSED, /* the file ends after a complete block, without a trailer */
    CRADLE_LOG_END_TORN,     /* the file ends in a torn or partial block (tail_offset) */
} cradle_log_end;

typedef struct cradle_log_reader {
    int fd;                    /* -1 when reading memory */
    const uint8_t *memory;
    uint64_t size;             /* bytes in the file */
    cradle_log_header header;
    uint8_t *block;            /* one block (header + block_max), allocated at open */
    uint32_t block_capacity;
    uint64_t offset;           /* where the next block starts */
    uint32_t sequence;         /* expected sequence of the next block */
    uint64_t steps;            /* complete steps delivered so far */
    uint64_t last_hash_step;   /* for ordering checks; UINT64_MAX = none yet */
    /* the block being walked */
    uint64_t block_offset;
    uint32_t payload, pos, records_left;
    bool trailer_block;
    const uint8_t *records;    /* the block's payload: in the block buffer, or in place in memory */
    /* a run for the inline next(): steps run_step .. run_end - 1 have room
       for a whole STEP record each (within the payload and the record
       count) from pos; it delivers them while their kind byte says STEP.
       The records delivered since run_step are folded into pos and
       records_left by the next out-of-line call. */
    uintptr_t run_base;        /* record of step s at run_base + s * stride */
    uint64_t run_step;         /* r->steps when the run started */
    uint64_t run_end;          /* the run ends before this step */
    uint32_t stride;           /* 1 + snapshot size */
    crypto_generichash_state digest;
    bool adopt;                /* the next block's sequence and first step are taken as they are */
    bool partial;              /* the reader started after block 0: no digest to check */
    uint8_t session[CRADLE_LOG_CHECKSUM_BYTES]; /* the header's checksum */
    bool require_signer;       /* every block must be signed by signer */
    uint8_t signer[32];
    uint64_t signed_blocks;    /* blocks that ended in a SIGN record */
    cradle_log_end end;
    uint64_t tail_offset;      /* TORN: the first byte ignored */
    int error;                 /* sticky: 0 or the code next() returned */
    uint64_t error_offset;     /* byte offset the error names */
    uint64_t error_step;       /* the step the damage starts at */
    char message[CRADLE_LOG_MESSAGE_MAX];
} cradle_log_reader;

/* Opens a log file, checks its header and allocates one block buffer (at most
 * CRADLE_LOG_BLOCK_MAX + 48 bytes). Errors: CRADLE_EIO, CRADLE_ETRUNCATED
 * (the file ends inside the header), CRADLE_ELOG_MAGIC, CRADLE_ELOG_VERSION,
 * CRADLE_ELOG_HEADER (the message names the field and its value),
 * CRADLE_ENOMEM; message as in r->message. Nothing to close on failure. */
CRADLE_MUST_CHECK int cradle_log_reader_open(cradle_log_reader *r, const char *path,
                                             char *message, size_t message_size);

/* The same over size bytes of memory that outlive the reader. */
CRADLE_MUST_CHECK int cradle_log_reader_open_memory(cradle_log_reader *r, const void *data,
                                                    size_t size, char *message,
                                                    size_t message_size);

/* The next record: returns 1 and fills *rec, 0 at the end (r->end says how
 * the log ended; r->message describes a torn tail as "recovered N complete
 * steps; ignored the tail from byte X"), or a negative code with r->message,
 * r->error_offset and r->error_step set: CRADLE_ELOG_CHECKSUM (a damaged
 * block followed by valid data), CRADLE_ELOG_CORRUPT (a verified block whose
 * contents break the format), CRADLE_EIO. Errors are sticky. Steps are only
 * delivered from blocks whose checksum verified. */
static inline CRADLE_MUST_CHECK int cradle_log_reader_next(cradle_log_reader *r,
                                                           cradle_log_record *rec);

/* Checks a TRAILER record's signature (the reader has already matched its
 * digest to the file) against an Ed25519 public key. Returns 0, or
 * CRADLE_ELOG_SIGNATURE when the log is unsigned, was altered after
 * signing, or was signed by another key. */
CRADLE_MUST_CHECK int cradle_log_verify_signature(const cradle_log_record *trailer,
                                                  const uint8_t public_key[32]);

/* For a reader of part of a log (a broadcast's fragments from a keyframe
 * on: broadcast.h): the header is followed by the blocks of some place in
 * the session rather than by block 0. Called before the first next(): the
 * first block's sequence and first step are taken as they are, and every
 * block after it must follow on. The trailer's digest commits to blocks
 * this reader never saw, so a TRAILER record is delivered unchecked
 * (signature_length 0: cradle_log_verify_signature refuses it). */
void cradle_log_reader_start_anywhere(cradle_log_reader *r);

/* Requires every block from here on to end in a SIGN record by this
 * Ed25519 public key (cradle-keys pub server.key --sign) over this log's
 * header: a block that is unsigned, signed by another key, for another
 * session, or altered after signing stops the reader with
 * CRADLE_ELOG_SIGNATURE naming it, before any of its records is delivered.
 * Without it SIGN records are checked for their place only. */
void cradle_log_reader_require_signer(cradle_log_reader *r, const uint8_t public_key[32]);

/* For a file that another party appends whole blocks to (a viewer's mirror
 * of a broadcast): the reader may read its first `size` bytes, at least as
 * many as it has read (a size below the file's own keeps a block being
 * appended out of sight). A reader that had reached an unclosed end goes on
 * from there. Returns true when it has bytes to read again. */
bool cradle_log_reader_grow(cradle_log_reader *r, uint64_t size);

/* The log block the next record goes into: its offset in the file (the
 * blocks before it are written), sequence and first step; what a keyframe
 * index names for the step just appended (replay_index.h). */
cradle_log_block_place cradle_log_writer_block_place(const cradle_log_writer *w);

/* The hash of the build in charge's library file as archived beside the log
 * (the header's, then the last RELOAD's), or NULL when it is not archived. */
const uint8_t *cradle_log_writer_build_file_hash(const cradle_log_writer *w);

/* Byte offset just past the last verified block (or the header). */
uint64_t cradle_log_reader_position(const cradle_log_reader *r);

/* The block the last record delivered came from (what
 * cradle_log_reader_jump() takes to read it again). Valid after a next()
 * that returned 1. */
cradle_log_block_place cradle_log_reader_block_place(const cradle_log_reader *r);

/* Reads on from the block at `place` (a seek: a keyframe index names where
 * a step's block is): the next next() loads that block and checks it as
 * any other (checksum, signer) and that it is the one named: its sequence
 * and first step. From there the reader is partial, as after
 * start_anywhere (the trailer's digest is not checked). Clears a sticky
 * error or end: what comes after the place is read again. Returns 0, or
 * CRADLE_ERANGE when place is not inside the file past its header (r->message
 * says so; nothing changed). */
CRADLE_MUST_CHECK int cradle_log_reader_jump(cradle_log_reader *r, cradle_log_block_place place);

void cradle_log_reader_close(cradle_log_reader *r);

/* Internal: every record but the common case below. */
CRADLE_MUST_CHECK int cradle__log_reader_next(cradle_log_reader *r, cradle_log_record *rec);

/* The common case inline: a whole STEP record inside the verified block
 * being walked. Per-record work is the reader's main cost for small
 * snapshots, so this is two compares, two bumps and the record's fields;
 * every bound was checked when the run was set up. */
static inline int cradle_log_reader_next(cradle_log_reader *r, cradle_log_record *rec) {
    uint64_t s = r->steps;
    if (s < r->run_end) {
        const uint8_t *p = (const uint8_t *)(r->run_base + (uintptr_t)s * r->stride);
        if (p[0] != CRADLE_LOG_RECORD_STEP) return cradle__log_reader_next(r, rec);
        r->steps = s + 1;
        rec->kind = CRADLE_LOG_RECORD_STEP;
        rec->step = s;
        rec->snapshot = p + 1;
        return 1;
    }
    return cradle__log_reader_next(r, rec);
}

#endif
