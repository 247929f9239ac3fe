#ifndef CRADLE_RELOAD_H
#define CRADLE_RELOAD_H
/*
 * reload: runs a game from a shared library and swaps in the rebuilt library
 * while the host keeps running (seed 001 "reload", seed 003 "the Cradle").
 *
 * The loader never opens the library a build writes. It copies the file to a
 * new numbered file ("<copy_dir>/<basename>.cradle-<pid>-<n>.so") and opens
 * the copy with dlopen(RTLD_NOW | RTLD_LOCAL), so a build may overwrite or
 * replace the original at any time. Each poll looks at the original (stat);
 * once size and modification time have held still for settle_ns after a
 * change (settle.h), the loader copies it again, checks it and swaps. A
 * copy whose bytes (BLAKE2b) equal the library in use is no change: a touch
 * or a rebuild that wrote the same file swaps nothing, so no host runs
 * on_reload for it. The dev protocol's explicit reload (cradle_reload_now)
 * swaps even then: the admin asked for it.
 *
 * Checks before a swap, each a refusal with a code from errors.h and a
 * message naming the field and both values:
 *   - the file: a regular file, smaller than file_size_bound, unchanged in
 *     size and modification time while it was copied (a half-written file),
 *     an ELF image of this host's class whose segments all lie inside the
 *     file (a truncated file), then dlopen() itself     CRADLE_ERELOAD_COPY,
 *                                                       _FILE_SIZE, _OPEN
 *   - the contract symbol CRADLE_GAME_CONTRACT_SYMBOL   CRADLE_ERELOAD_SYMBOL
 *   - every contract field (contract.h) against this host's ABI version,
 *     max_state_align and state_capacity               CRADLE_ERELOAD_MAJOR,
 *                                                       _MINOR, _ALIGN, _SIZE,
 *                                                       _CONTRACT
 *   - the same game as the first library: name, input_bytes, max_players,
 *     steps_per_second and source_frames_per_second unchanged (the state,
 *     the snapshot layout and the session log depend on them)
 *                                                       CRADLE_ERELOAD_MISMATCH
 * On a refusal the new copy is closed and deleted and the old library stays
 * loaded and in use. On a swap the previous copy is closed and deleted and
 * the host's state memory is not touched: the host hands the new contract
 * to its sim (cradle_sim_swap), which runs on_reload, so that a reload is
 * the same act on server, clients and replays. No numbered copy survives a
 * refusal or cradle_reload_close().
 *
 * Staging (config.stage, for a host that runs a trial first: trial.h): a
 * settled change or a forced reload whose file checks pass is not opened in
 * this process. It waits as the staged copy (CRADLE_RELOAD_STAGED) while the
 * host tries it elsewhere; then cradle_reload_take() opens, checks and swaps
 * it as above, or cradle_reload_drop() deletes it as refused for the host's
 * reason. One build is staged at a time: polls see nothing new until then.
 *
 * State memory: the host allocates the state block once, state_capacity bytes
 * aligned to max_state_align (zeroed), so that any accepted library fits it.
 * A library whose state grew within the capacity finds the added bytes as the
 * previous code left them (zero if never written); on_reload may set them up.
 *
 * Lifetime: the contract pointer (and every function pointer in it) stays
 * valid until the next swap or cradle_reload_close(); a host re-reads it from
 * cradle_reload_contract() or the poll result after each swap.
 *
 * The module prints nothing; refusals come back as results. It is not thread
 * safe: one thread (the game thread) owns a cradle_reload.
 */
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/game_abi.h"
#include "cradle/settle.h"

#define CRADLE_RELOAD_PATH_MAX 4096u
/* The "library" of a program with its game linked in (reload_linked.c, the
 * browser's viewer in WebAssembly, which has no dynamic loader): open gives
 * the linked build's contract, checked as a library's would be. */
#define CRADLE_RELOAD_LINKED "(linked)"
#define CRADLE_RELOAD_DEFAULT_MAX_ALIGN 64u
#define CRADLE_RELOAD_DEFAULT_FILE_SIZE_BOUND (64ull * 1024u * 1024u)
#define CRADLE_RELOAD_DEFAULT_SETTLE_NS 120000000ull
#define CRADLE_RELOAD_MESSAGE_MAX 256u
#define CRADLE_RELOAD_DIGEST_BYTES 32u /* BLAKE2b-256 of a library file */

/* Zero means default in every field but path. */
typedef struct cradle_reload_config {
    const char *path;          /* the game library a build writes (copied, never opened itself) */
    const char *copy_dir;      /* directory for numbered copies; NULL = beside the original */
    uint32_t max_state_align;  /* 0 = 64 */
    uint64_t file_size_bound;  /* largest accepted file is bound - 1 bytes; 0 = 64 MiB */
    uint32_t state_capacity;   /* 0 = the first library's state size */
    uint64_t settle_ns;        /* 0 = 120 ms */
    bool stage;                /* new builds wait for take() or drop() (above) */
} cradle_reload_config;

typedef enum cradle_reload_kind {
    CRADLE_RELOAD_NONE,    /* nothing to do: the library in use is unchanged */
    CRADLE_RELOAD_SWAPPED, /* new code is in use: hand result.contract to the sim */
    CRADLE_RELOAD_REFUSED, /* a new file was refused; the old library is still in use */
    CRADLE_RELOAD_STAGED   /* staging: a new file passed the file checks and waits for take() or drop() */
} cradle_reload_kind;

typedef struct cradle_reload_result {
    cradle_reload_kind kind;
    int error;                              /* 0 or a CRADLE_ERELOAD_* code when REFUSED */
    char message[CRADLE_RELOAD_MESSAGE_MAX]; /* e.g. "state size 4096 > capacity 2048" */
    const cradle_game_contract *contract;   /* the contract now in use */
} cradle_reload_result;

/* The caller owns the struct (it is large: keep it static or on the heap, not
 * in a small stack frame). Fields are visible for inspection; change none. */
typedef struct cradle_reload {
    char path[CRADLE_RELOAD_PATH_MAX];      /* the original */
    char copy_dir[CRADLE_RELOAD_PATH_MAX];  /* where copies go */
    char copy_path[CRADLE_RELOAD_PATH_MAX]; /* the copy in use */
    uint8_t digest[CRADLE_RELOAD_DIGEST_BYTES]; /* BLAKE2b of the copy in use */
    const char *basename;                   /* points into path */
    void *handle;                           /* dlopen handle of the copy in use */
    const cradle_game_contract *contract;   /* the contract in use */
    uint32_t max_state_align;               /* defaults resolved */
    uint32_t state_capacity;
    uint64_t file_size_bound;
    uint64_t settle_ns;
    cradle_settle settle;
    /* The first library's identity; every later library must match it. */
    char game_name[CRADLE_GAME_NAME_MAX + 1];
    uint32_t input_bytes;
    uint32_t max_players;
    uint32_t steps_per_second;
    uint32_t source_frames_per_second;
    long pid;           /* in the copy names, so two hosts never share a copy */
    uint64_t copies;    /* numbered copies made so far (the next <n> - 1) */
    uint64_t swaps;     /* successful swaps since open */
    uint64_t refusals;  /* refused files since open */
    uint64_t unchanged; /* settled changes whose bytes were the library in use */
    bool staging;       /* config.stage */
    char staged_path[CRADLE_RELOAD_PATH_MAX]; /* the staged copy; "" when none */
    uint8_t staged_digest[CRADLE_RELOAD_DIGEST_BYTES];
} cradle_reload;

/* Copies and opens the library, validates its contract. On error fills
 * message (may be NULL) and returns a negative code; nothing is left behind. */
CRADLE_MUST_CHECK int cradle_reload_open(cradle_reload *r, const cradle_reload_config *config,
                                         uint64_t now_ns, char *message, size_t message_size);

/* The contract in use. */
const cradle_game_contract *cradle_reload_contract(const cradle_reload *r);

/* Looks at the original file (stat); once it has held still for settle_ns after a change,
 * loads a fresh copy, validates it and swaps: the previous copy is closed and deleted. A copy
 * equal to the library in use is CRADLE_RELOAD_NONE (counted in unchanged). A file that
 * disappears and stays missing for the window is reported as a refusal (CRADLE_ERELOAD_COPY). */
cradle_reload_result cradle_reload_poll(cradle_reload *r, uint64_t now_ns);

/* Loads the file now, without waiting for settle, and swaps even when its bytes are those of
 * the library in use (the dev protocol's "reload"; a client loading the build its server
 * announced). The file as loaded becomes settle's baseline, so a later poll does not load it
 * again. */
cradle_reload_result cradle_reload_now(cradle_reload *r);

/* Staging: opens the staged copy and checks its contract as a swap would,
 * without changing r or deleting anything: for the process that tries the
 * build before the host takes it (trial.h). Returns 0 with *handle and
 * *contract, or a CRADLE_ERELOAD_* code with a message. */
CRADLE_MUST_CHECK int cradle_reload_open_staged(const cradle_reload *r, void **handle,
                                                const cradle_game_contract **contract, char *message,
                                                size_t message_size);

/* Staging: opens, checks and swaps in the staged copy (SWAPPED), or deletes
 * it when its contract is refused (REFUSED). */
cradle_reload_result cradle_reload_take(cradle_reload *r);

/* Staging: deletes the staged copy and counts a refusal: REFUSED with error
 * (a negative code) and why as its message. */
cradle_reload_result cradle_reload_drop(cradle_reload *r, int error, const char *why);

/* Path of the copy in use (for content-addressed archiving by the session log). Valid until
 * the next swap or close. */
const char *cradle_reload_copy_path(const cradle_reload *r);

/* Closes the library and deletes its copy. The contract is invalid afterwards. Safe on a
 * zeroed struct and twice in a row. */
void cradle_reload_close(cradle_reload *r);

#endif
