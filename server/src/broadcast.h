#ifndef CRADLE_SERVER_BROADCAST_H
#define CRADLE_SERVER_BROADCAST_H
/*
 * broadcast: --broadcast URL. The server uploads its session log to an HTTP
 * origin from a thread of its own (libcurl PUTs), as the documents of
 * shared/io/include/cradle/broadcast.h: the start document, a fragment of
 * whole log blocks every --broadcast-fragment-ms, a keyframe every
 * --broadcast-keyframe-s, the data files the session applies, and after
 * each of those the sync document. Any HTTP cache or CDN in front of the
 * origin fans them out; the server's cost does not depend on the audience.
 *
 * Never hurts the game. The game thread hands over only:
 *   - every piece of the log the writer wrote (on_written: the header, each
 *     whole block), copied into a lock-free ring (ring.h); when the ring is
 *     full the piece is dropped and counted, and the fragment it belonged to
 *     becomes a gap;
 *   - at a hash step once per keyframe period, a copy of the state into a
 *     mailbox the thread frees after compressing it (if the thread still
 *     holds the last one, this keyframe is skipped);
 *   - the live step (a relaxed atomic store).
 * None of that waits, locks or allocates. The thread polls the ring every
 * 50 ms.
 *
 * When the origin fails. Uploads go in order (data files, then the fragment,
 * then a keyframe whose block it holds, then the sync document). A failed
 * PUT is retried after a backoff from 250 ms doubling to 8 s; meanwhile new
 * fragments wait in a queue of --broadcast-queue fragments (default 150:
 * five minutes at 2 s). When the queue is full the oldest waiting fragment
 * is dropped: a gap, named in the sync document (viewers restart at the
 * next keyframe after it) and in status. Players never notice either way.
 *
 * The browser viewer's files (B/web/, broadcast.h). For the build in
 * charge (at the start, then after each reload) the thread reads the
 * build's WebAssembly twin beside the game library (counter.so:
 * counter.wasm), checks that its custom section "cradle_build" names that
 * build (wasm_module.h: a twin of another build, say one not rebuilt yet,
 * is refused), hashes it and the contract's sound files (SHA-256; a
 * missing sound is listed as missing), PUTs each and the build's manifest
 * under web/<sha256>, and only then lists the build in the sync
 * document's "web" (the newest CRADLE_BROADCAST_WEB_MAX builds). All of it
 * before the next sync document, on the thread: the game thread only hands
 * over the build id, the library's path and the sound names. A missing
 * twin is looked for again every 2 s, a refused one when its file changes;
 * a PUT the origin refuses (4xx: an origin that takes no web/ files) or
 * that failed 3 times in a row is tried again after a minute, without
 * holding up the fragments. Status's broadcast_web says which: "none:
 * <path> missing", "ok", "refused: <why>".
 *
 * The end: after the log's trailer, finish() gives the thread until a
 * deadline to upload what it holds; the sync document then says "ended".
 * Web files not up by then are not waited for.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/broadcast.h"

#define CRADLE_SERVER_BROADCAST_FRAGMENT_MS 2000u
#define CRADLE_SERVER_BROADCAST_KEYFRAME_S 10u
#define CRADLE_SERVER_BROADCAST_QUEUE 150u
#define CRADLE_SERVER_BROADCAST_AUTH_MAX 256u /* bytes of the origin's secret */
#define CRADLE_SERVER_BROADCAST_PATH_MAX 4096u /* bytes of the game library's path, with the NUL */

typedef struct cradle_server_broadcast_config {
    const char *url;           /* the base URL (a '/' is added when missing) */
    const char *auth;          /* the X-Origin-Auth secret, or NULL */
    const char *log_path;      /* the session log: data files come from its archive */
    const char *game;          /* the game's name */
    const char *build;         /* the build in charge at the start */
    const char *library;       /* the game library as --game names it (not the reloader's
                                  copy): the build's WebAssembly twin and sound files are
                                  beside it. NULL or "": no web files. Copied */
    const char *const *sounds; /* the start build's sound names (cradle_contract_sounds),
                                  sound_count of them; copied */
    uint32_t sound_count;
    uint32_t steps_per_second;
    uint32_t fragment_ms;      /* 0 = CRADLE_SERVER_BROADCAST_FRAGMENT_MS */
    uint32_t keyframe_s;       /* 0 = CRADLE_SERVER_BROADCAST_KEYFRAME_S */
    uint32_t queue;            /* 0 = CRADLE_SERVER_BROADCAST_QUEUE */
    uint32_t state_capacity;   /* the largest state a keyframe copies */
    uint32_t block_max;        /* the log's block payload size */
    const uint8_t *sign_secret; /* the server's Ed25519 key (secure mode): keyframes are
                                   signed with it, as the log's blocks are; copied. NULL:
                                   unsigned */
} cradle_server_broadcast_config;

typedef struct cradle_server_broadcast cradle_server_broadcast;

/* What status shows. */
typedef struct cradle_server_broadcast_stats {
    const char *state;         /* "starting", "ok", "retrying", "ended", "stopped" */
    uint64_t fragments;        /* uploaded */
    uint64_t queued;           /* cut and waiting */
    uint64_t keyframes;        /* uploaded */
    uint64_t keyframes_skipped;
    uint64_t bytes;            /* bodies uploaded */
    uint64_t requests;         /* PUTs that succeeded */
    uint64_t retries;          /* PUTs that failed and were tried again */
    uint64_t lost;             /* fragments lost (gaps) */
    uint64_t lost_pieces;      /* log pieces the ring had no room for */
    uint64_t behind_ms;        /* age of the oldest waiting fragment; 0 when none */
    char gaps[160];            /* the sync document's gaps as JSON */
    char web[CRADLE_BROADCAST_MESSAGE_MAX * 2]; /* the build in charge's web files: "off" (no
                                  library), "waiting", "ok", "none: <path> missing",
                                  "refused: <why>" */
    char last_error[CRADLE_BROADCAST_MESSAGE_MAX];
} cradle_server_broadcast_stats;

/* Allocates everything and starts the thread. Returns 0 or a negative code
 * with a message. */
int cradle_server_broadcast_start(cradle_server_broadcast **out, const cradle_server_broadcast_config *config,
                                  char *message, size_t message_size);

/* The log writer's on_written (game thread). */
void cradle_server_broadcast_written(void *broadcast, const uint8_t *bytes, size_t size);

/* Game thread, after the HASH record of `step`: whether a keyframe is due
 * now (the period passed and the mailbox is free). */
bool cradle_server_broadcast_keyframe_due(const cradle_server_broadcast *b, uint64_t step);

/* Game thread: hands the state after `step` (whose HASH record is in log
 * block `block_sequence`, which starts at `block_first_step`) to the
 * thread. Only after keyframe_due() said true. */
void cradle_server_broadcast_keyframe(cradle_server_broadcast *b, uint64_t step, uint64_t state_hash,
                                      const void *state, uint32_t state_size, uint32_t block_sequence,
                                      uint64_t block_first_step, const char *build_id);

/* Game thread: the step running now (for viewers' "behind live"). */
void cradle_server_broadcast_live(cradle_server_broadcast *b, uint64_t step);

/* Game thread: the build in charge changed (the sync document names it).
 * library: the game library's path as --game names it; sounds: the new
 * build's sound names (sound_count of them). All copied under the mutex:
 * the thread reads the files, never this thread. */
void cradle_server_broadcast_build(cradle_server_broadcast *b, const char *build_id, const char *library,
                                   const char *const *sounds, uint32_t sound_count);

void cradle_server_broadcast_get_stats(cradle_server_broadcast *b, cradle_server_broadcast_stats *out);

/* After the log is closed: waits up to timeout_ms for the thread to upload
 * everything it holds (the trailer's fragment, the final sync document).
 * Returns true when it did. */
bool cradle_server_broadcast_finish(cradle_server_broadcast *b, uint32_t timeout_ms);

/* Stops the thread (after at most one PUT's timeout) and frees everything.
 * Safe with NULL. */
void cradle_server_broadcast_stop(cradle_server_broadcast *b);

/* Reads the origin's secret from path: a regular file of mode 0600 or 0400
 * owned by this user, 1..256 printable ASCII bytes without spaces (a final
 * newline is dropped). Returns 0 or a negative code with a message. */
int cradle_server_broadcast_read_auth(const char *path, char out[CRADLE_SERVER_BROADCAST_AUTH_MAX + 1],
                                      char *message, size_t message_size);

#endif
