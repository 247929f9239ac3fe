#include "cradle/session.h"

#include <string.h>

int cradle_session_init(cradle_session *session, void *storage, size_t storage_bytes,
                        uint32_t snapshot_size) {
    if (snapshot_size == 0 || (storage == NULL && storage_bytes != 0)) return CRADLE_EINVAL;
    *session = (cradle_session){
        .storage = storage,
        .snapshot_size = snapshot_size,
        .capacity = storage_bytes / snapshot_size,
        .count = 0,
    };
    return CRADLE_OK;
}

int cradle_session_append(cradle_session *session, uint64_t step, const uint8_t *snapshot) {
    if (step != session->count) return CRADLE_ESESSION_ORDER;
    if (session->count >= session->capacity) return CRADLE_ESESSION_CAPACITY;
    memcpy(session->storage + session->count * session->snapshot_size, snapshot,
           session->snapshot_size);
    session->count++;
    return CRADLE_OK;
}

const uint8_t *cradle_session_snapshot(const cradle_session *session, uint64_t step) {
    if (step >= session->count) return NULL;
    return session->storage + step * session->snapshot_size;
}

void cradle_session_replay(const cradle_session *session, cradle_session_update_fn update,
                           void *context) {
    for (uint64_t step = 0; step < session->count; step++) {
        update(context, step, session->storage + step * session->snapshot_size,
               session->snapshot_size);
    }
}

void cradle_session_clear(cradle_session *session) { session->count = 0; }
