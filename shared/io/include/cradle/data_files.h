#ifndef CRADLE_DATA_FILES_H
#define CRADLE_DATA_FILES_H
/*
 * data_files: the host's side of a game's data files (game_abi.h, minor 4).
 * It finds the files a build declares (their names relative to a folder:
 * the library's, or one the operator names), watches them, and reads a
 * changed file whole, once it has held still, into a buffer allocated at
 * open, with its BLAKE2b-256. What the bytes mean is the game's business:
 * the host hands them to cradle_sim_apply_data() (sim.h).
 *
 *   open    allocates one buffer per declared file (its max_bytes) and
 *           takes a first look at each (nothing is read yet)
 *   read    reads file i now, whole: the session's start reads every file
 *   poll    one look at every file (a stat each): returns a file whose
 *           change has settled, read whole
 *   next_ns when the next look can report something, for a host that waits
 *   apply   takes file i's bytes into a sim at its step boundary and records
 *           them in a session log: what every host does with a file it read
 *
 * Settle: a file is read once its size, modification time and inode have
 * held still for settle_ns since its modification time (so an editor's
 * save, written in pieces or renamed into place, is read once and whole).
 * Measuring from the file's own time, not from the look that noticed it,
 * means a host that looks at every turn of its loop reads a file settle_ns
 * plus a few milliseconds after the last write, however rarely it looks.
 *
 * Torn reads: a file that changes while it is read (size, time or inode
 * differ before and after, or it ended early or grew) is not returned; its
 * change is reported again once it settles. So a caller never sees half an
 * edit.
 *
 * Memory: open allocates; read and poll allocate nothing.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/game_abi.h"
#include "cradle/log.h"
#include "cradle/sim.h"

#define CRADLE_DATA_HASH_BYTES 32u              /* BLAKE2b-256, as the log's file hashes */
#define CRADLE_DATA_DEFAULT_SETTLE_NS 120000000ull /* as the library's */
#define CRADLE_DATA_PATH_MAX 4096u
#define CRADLE_DATA_MESSAGE_MAX 512u

typedef struct cradle_data_file {
    char name[CRADLE_GAME_DATA_NAME_MAX + 1];
    char path[CRADLE_DATA_PATH_MAX];
    uint32_t max_bytes;
    uint8_t *bytes;            /* max_bytes + 1 bytes, allocated at open */
    uint32_t size;             /* bytes of the last read, when valid */
    uint8_t hash[CRADLE_DATA_HASH_BYTES]; /* of them, when valid */
    bool valid;                /* the last read succeeded: bytes, size and hash are the file's */
    /* the last look */
    bool seen;                 /* the file existed at the last look */
    uint64_t size_seen, inode_seen;
    int64_t mtime_seen_ns;
    bool pending;              /* a change seen, not yet read */
    uint64_t ready_ns;         /* monotonic time it will have settled */
    /* what the session runs */
    bool applied;              /* applied_hash is the file the state holds */
    uint8_t applied_hash[CRADLE_DATA_HASH_BYTES];
    uint64_t applied_step;     /* the step it was applied before */
} cradle_data_file;

typedef struct cradle_data_files {
    uint32_t count;
    cradle_data_file files[CRADLE_GAME_MAX_DATA_FILES];
    uint64_t settle_ns;
    char message[CRADLE_DATA_MESSAGE_MAX]; /* what the last failed read was */
} cradle_data_files;

/* Sets up the files contract c declares, found under folder (names as the
 * contract gives them). settle_ns 0: CRADLE_DATA_DEFAULT_SETTLE_NS. A game
 * with no data files gives count 0. Returns 0, CRADLE_ERANGE (a path too
 * long) or CRADLE_ENOMEM, with a message. */
CRADLE_MUST_CHECK int cradle_data_files_open(cradle_data_files *d, const cradle_game_contract *c,
                                             const char *folder, uint64_t settle_ns, uint64_t now_ns,
                                             char *message, size_t message_size);

/* The folder that holds the library at library_path, into out. Returns 0 or
 * CRADLE_ERANGE. */
CRADLE_MUST_CHECK int cradle_data_files_library_folder(char *out, size_t out_size, const char *library_path);

/* Whether contract c declares exactly the files d watches (names and
 * limits, in order): after a reload, a build that declares others needs
 * the files opened again for it. */
bool cradle_data_files_declared_by(const cradle_data_files *d, const cradle_game_contract *c);

/* Finds the files under another folder from now on (what was applied
 * stays applied: a file with the same bytes does not apply again). Returns
 * 0 or CRADLE_ERANGE (a path too long; nothing changes), with d->message. */
CRADLE_MUST_CHECK int cradle_data_files_move(cradle_data_files *d, const char *folder, uint64_t now_ns);

/* Reads file i whole now. Returns 0 (bytes, size and hash are the file's),
 * or with d->message naming the file ("vanguard/waves.json: No such file or
 * directory", "... is 70000 bytes, over the game's limit of 65536 bytes",
 * "... changed while it was read") CRADLE_EIO, CRADLE_EDATA (too large) or
 * CRADLE_EAGAIN (changed meanwhile: reported again once it settles); then
 * the file is not valid (its buffer holds no whole file). The file's look is
 * updated: a pending change is done with. */
CRADLE_MUST_CHECK int cradle_data_files_read(cradle_data_files *d, uint32_t i, uint64_t now_ns);

/* Looks at every file. Returns the index of a file whose change settled and
 * whose read succeeded (its bytes may equal the last read: compare hashes),
 * -1 when none did, or -2 - i when file i settled and its read failed
 * (d->message says why; a file that vanished is one). */
int cradle_data_files_poll(cradle_data_files *d, uint64_t now_ns);

#define CRADLE_DATA_UNCHANGED 1 /* apply: the state already holds these bytes */

/* Applies file i (valid: just read) to sim before sim->next_step
 * (cradle_sim_apply_data) and, when log is not NULL, records it there
 * (cradle_log_writer_append_data, which archives the bytes). Returns 0
 * (applied; the file's applied fields say what and when),
 * CRADLE_DATA_UNCHANGED (the same bytes as the last application: nothing
 * runs), or with d->message: CRADLE_EDATA_REFUSED ("vanguard/waves.json:14:
 * \"count\" must be ..."; the state is unchanged), CRADLE_EDATA, or
 * CRADLE_EIO when the log failed (the state holds the data; the log's
 * message says why). */
CRADLE_MUST_CHECK int cradle_data_files_apply(cradle_data_files *d, uint32_t i, cradle_sim *sim,
                                              cradle_log_writer *log);

/* The monotonic time at which a change seen so far will have settled, or
 * UINT64_MAX when none is pending. */
uint64_t cradle_data_files_next_ns(const cradle_data_files *d);

/* Lowercase hex of a data hash (65 bytes with the NUL). */
void cradle_data_hash_hex(char out[2 * CRADLE_DATA_HASH_BYTES + 1], const uint8_t hash[CRADLE_DATA_HASH_BYTES]);

/* Releases the buffers. Safe on a zeroed struct and twice. */
void cradle_data_files_close(cradle_data_files *d);

#endif
