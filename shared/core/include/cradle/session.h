#ifndef CRADLE_SESSION_H
#define CRADLE_SESSION_H
/*
 * session: records the snapshot each step of a run received, in storage the
 * caller provides, and replays it step for step (seed 001).
 *
 * Recording starts at step 0 and takes steps strictly in order. A refused
 * append (out of order, storage full) changes nothing already recorded.
 * Replay hands the caller's update only the caller's context and each recorded
 * step with its snapshot; it reads no clock.

 */
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"

typedef struct cradle_session {
    uint8_t *storage;       /* caller's memory; the session never frees it */
    uint32_t snapshot_size; /* bytes per step */
    uint64_t capacity;      /* steps the storage holds */
    uint64_t count;         /* steps recorded: steps 0 .. count-1 */
} cradle_session;

/* Uses storage_bytes of storage for steps of snapshot_size bytes each.
 * Returns CRADLE_EINVAL for a snapshot size of 0. */
CRADLE_MUST_CHECK int cradle_session_init(cradle_session *session, void *storage,
                                          size_t storage_bytes, uint32_t snapshot_size);

/* Records the snapshot (snapshot_size bytes) of `step`. Returns 0,
 * CRADLE_ESESSION_ORDER when step is not the next in sequence (the first is
 * 0), or CRADLE_ESESSION_CAPACITY when the storage is full. */
CRADLE_MUST_CHECK int cradle_session_append(cradle_session *session, uint64_t step,
                                            const uint8_t *snapshot);

/* The recorded snapshot of `step`, or NULL if it was not recorded. */
const uint8_t *cradle_session_snapshot(const cradle_session *session, uint64_t step);

typedef void (*cradle_session_update_fn)(void *context, uint64_t step, const uint8_t *snapshot,
                                         uint32_t snapshot_size);

/* Calls update with each recorded step and snapshot, in order. */
void cradle_session_replay(const cradle_session *session, cradle_session_update_fn update,
                           void *context);

/* Forgets every recorded step (the storage is kept). */
void cradle_session_clear(cradle_session *session);

#endif
