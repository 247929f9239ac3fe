#ifndef CRADLE_BROADCAST_MIRROR_H
#define CRADLE_BROADCAST_MIRROR_H
/*
 * broadcast_mirror: a viewer's copy of a broadcast (broadcast.h), kept as
 * a session log on disk that the replay driver (replay.h) plays while it
 * grows. A thread of its own fetches over HTTP (libcurl) what a follower
 * (broadcast_follow.h, which holds the protocol and checks each document)
 * asks for: the sync document every poll, the start document, a keyframe
 * and the fragments after it; it fetches the data files the fragments name
 * and appends each verified fragment to the mirror's log. Nothing
 * unverified reaches the log; a document that is refused is named in the
 * view's error and fetched again after the next poll, keeping everything
 * verified before.
 *
 * Segments. A mirror starts at a keyframe (config.from_start: at fragment
 * 0, a whole session log) and follows the fragments after it. When the
 * broadcast has a gap after it (fragments the server could not upload), the
 * mirror starts a new segment, a new log file, at the first keyframe after
 * the gap; the player reopens its replay there (the view's segment changes).
 *
 * Where a viewer starts: the newest keyframe at or before the step the
 * viewer will show first (the live step less the delay), else the oldest;
 * a broadcast without a keyframe yet is mirrored from fragment 0.
 *
 * Files: <dir>/segment-<n>.log and its data files <dir>/segment-<n>.log.data/
 * (the layout cradle_log_read_data() reads). The caller owns dir.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/broadcast.h"

#define CRADLE_BROADCAST_MIRROR_POLL_MS 500u

typedef struct cradle_broadcast_mirror_config {
    const char *url;           /* the broadcast's base URL ('/' added when missing) */
    const char *dir;           /* where the mirror's files go (exists) */
    bool from_start;           /* fragment 0 on: the whole log (cradle-replay URL) */
    uint32_t delay_ms;         /* how far behind live the viewer plays (the keyframe choice) */
    uint32_t poll_ms;          /* the sync document's period; 0 = 500 */
    uint32_t state_capacity;   /* the largest keyframe state taken; 0 = 64 MiB */
    const char *game;          /* when not NULL: the broadcast must be of this game */
    const uint8_t *verify_key; /* when not NULL: the server's Ed25519 public key (32 bytes,
                                  copied): every fragment block and keyframe must be signed
                                  by it for this session (broadcast.h, "Signing") */
} cradle_broadcast_mirror_config;

typedef struct cradle_broadcast_mirror cradle_broadcast_mirror;

/* What the mirror holds now (a copy, taken under the mirror's lock). */
typedef struct cradle_broadcast_mirror_view {
    uint32_t segment;          /* 0 until the first segment starts; then 1, 2, ... */
    char log_path[1024];       /* the segment's log */
    uint64_t bytes;            /* verified bytes of it (header included) */
    bool keyed;                /* the segment starts at a keyframe (else at step 0) */
    uint64_t start_step;       /* keyed: the first step to run */
    char start_build[CRADLE_GAME_BUILD_ID_MAX + 1];
    uint64_t end_step;         /* the mirror's log holds steps before this one */
    bool ended;                /* the trailer is in the mirror: nothing more comes */
    bool have_sync;
    cradle_broadcast_sync sync; /* the newest sync document taken */
    uint64_t sync_at_unix_ms;  /* when it was fetched, by this machine's clock */
    uint64_t requests, bytes_fetched, refused, failures;
    uint64_t fragments;        /* fragments verified and appended */
    char error[CRADLE_BROADCAST_MESSAGE_MAX]; /* the last refusal or failure, "" if none */
} cradle_broadcast_mirror_view;

/* Starts the fetch thread. Returns 0 or a negative code with a message. */
CRADLE_MUST_CHECK int cradle_broadcast_mirror_open(cradle_broadcast_mirror **out,
                                                   const cradle_broadcast_mirror_config *config,
                                                   char *message, size_t message_size);

void cradle_broadcast_mirror_view_now(cradle_broadcast_mirror *m, cradle_broadcast_mirror_view *out);

/* Copies segment's keyframe state (its size bytes, at most capacity) into
 * out. Returns its size, or 0 when that segment is not the current one or
 * has no keyframe. */
uint32_t cradle_broadcast_mirror_keyframe(cradle_broadcast_mirror *m, uint32_t segment, void *out, size_t capacity);

/* Stops the thread (a request in flight gives up) and frees everything;
 * the files stay. Safe with NULL. */
void cradle_broadcast_mirror_close(cradle_broadcast_mirror *m);

/* GET url into out (capacity bytes) with libcurl: 0 with *length, or
 * CRADLE_EIO with a message ("HTTP 404", a connection error, "more than N
 * bytes"). For one-shot callers (the viewer-load tool keeps its own). */
CRADLE_MUST_CHECK int cradle_broadcast_get(void *curl, const char *url, uint8_t *out, size_t capacity,
                                           size_t *length, char *message, size_t message_size);

#endif
