#ifndef CRADLE_STATE_PACK_H
#define CRADLE_STATE_PACK_H
/*
 * state_pack: a game's state as one zstd frame, the form a whole state
 * travels and is kept in: the state block a joining client receives (wire.h
 * STATE), broadcast keyframes and the replay index's (broadcast.h). A game's
 * state is mostly empty pools and zeroed fields: vanguard's 961,664 bytes
 * pack into 9.5 KB early in a session (the server's join, zstd level 1)
 * and 15 KB on average over two hours of play (the index, level 3).
 *
 * Unpacking takes untrusted bytes: exactly one frame and nothing after it,
 * whose content is exactly the state's size, decompressed into the caller's
 * buffer (never more than it holds), and that state's hash (hash.h) must be
 * the one the sender named.
 *
 * Memory: init allocates the zstd contexts it is asked for; packing and
 * unpacking reuse them (a pack allocates nothing after the first). One per
 * thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"

typedef struct cradle_state_pack {
    void *compress;   /* ZSTD_CCtx */
    void *decompress; /* ZSTD_DCtx */
    int level;        /* zstd level; 0 = 3 */
} cradle_state_pack;

/* What a pack is for: its zstd contexts are made for these only (a server
 * that only packs holds no decompression context). */
#define CRADLE_STATE_PACK_ENCODE 1u
#define CRADLE_STATE_PACK_DECODE 2u
#define CRADLE_STATE_PACK_BOTH (CRADLE_STATE_PACK_ENCODE | CRADLE_STATE_PACK_DECODE)

/* Returns 0 or CRADLE_ENOMEM. */
CRADLE_MUST_CHECK int cradle_state_pack_init(cradle_state_pack *p, int level, unsigned ways);
void cradle_state_pack_free(cradle_state_pack *p);

/* Bytes a packed state of state_size bytes needs at most. */
size_t cradle_state_pack_bound(uint32_t state_size);

/* Packs state (state_size bytes) into out (capacity >= the bound, asserted).
 * Returns the frame's length, or 0 when zstd failed (out of memory). */
size_t cradle_state_pack_encode(cradle_state_pack *p, const void *state, uint32_t state_size, uint8_t *out,
                                size_t capacity);

/* Unpacks frame (size bytes, untrusted) into state, which must then hold
 * exactly state_size bytes whose hash is hash. Returns NULL, or a static
 * sentence naming what was wrong. */
const char *cradle_state_pack_decode(cradle_state_pack *p, const uint8_t *frame, size_t size, void *state,
                                     uint32_t state_size, uint64_t hash);

#endif
