#include "cradle/state_pack.h"

#include <assert.h>
#include <string.h>
#include <zstd.h>

#include "cradle/hash.h"

int cradle_state_pack_init(cradle_state_pack *p, int level, unsigned ways) {
    assert(ways != 0 && (ways & ~CRADLE_STATE_PACK_BOTH) == 0);
    memset(p, 0, sizeof *p);
    p->level = level ? level : 3;
    if (ways & CRADLE_STATE_PACK_ENCODE) p->compress = ZSTD_createCCtx();
    if (ways & CRADLE_STATE_PACK_DECODE) p->decompress = ZSTD_createDCtx();
    if ((p->compress || !(ways & CRADLE_STATE_PACK_ENCODE)) && (p->decompress || !(ways & CRADLE_STATE_PACK_DECODE)))
        return 0;
    cradle_state_pack_free(p);
    return CRADLE_ENOMEM;
}

void cradle_state_pack_free(cradle_state_pack *p) {
    ZSTD_freeCCtx(p->compress);
    ZSTD_freeDCtx(p->decompress);
    p->compress = p->decompress = NULL;
}

size_t cradle_state_pack_bound(uint32_t state_size) { return ZSTD_compressBound(state_size); }

size_t cradle_state_pack_encode(cradle_state_pack *p, const void *state, uint32_t state_size, uint8_t *out,
                                size_t capacity) {
    assert(p->compress && capacity >= cradle_state_pack_bound(state_size));
    size_t n = ZSTD_compressCCtx(p->compress, out, capacity, state, state_size, p->level);
    return ZSTD_isError(n) ? 0 : n;
}

const char *cradle_state_pack_decode(cradle_state_pack *p, const uint8_t *frame, size_t size, void *state,
                                     uint32_t state_size, uint64_t hash) {
    assert(p->decompress);
    if (ZSTD_getFrameContentSize(frame, size) != state_size)
        return "the zstd frame does not hold exactly the state's size";
    /* ZSTD_decompressDCtx would also take frames after the first (an empty
     * one, a skippable one): a packed state is the one frame and nothing else */
    if (ZSTD_findFrameCompressedSize(frame, size) != size) return "the zstd frame is not all of the packed bytes";
    size_t n = ZSTD_decompressDCtx(p->decompress, state, state_size, frame, size);
    if (ZSTD_isError(n) || n != state_size) return "the zstd frame does not decompress";
    if (cradle_hash64(state, state_size) != hash) return "the state's hash is not the one it names";
    return NULL;
}
