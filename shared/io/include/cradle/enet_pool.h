#ifndef CRADLE_ENET_POOL_H
#define CRADLE_ENET_POOL_H
/*
 * enet_pool: ENet's memory from blocks reserved at start-up, so a thread that
 * runs an ENet host allocates nothing per step.
 *
 * ENet calls malloc for every packet (the ENetPacket and its data), every
 * queued outgoing and incoming command and every acknowledgement: about 92
 * calls per step on cradle-server's network thread with 64 peers. This module
 * gives ENet a malloc/free pair (cradle_enet_pool_initialize installs them
 * with enet_initialize_with_callbacks, once per process, instead of
 * enet_initialize) that serves each request from the pool bound to the
 * calling thread:
 *
 *   static cradle_enet_pool pool;                  // start-up, any thread
 *   cradle_enet_pool_init(&pool, &(cradle_enet_pool_config){.peers = 72});
 *   ...                                            // on the network thread:
 *   cradle_enet_pool_bind(&pool);                  // first thing
 *   enet_host_service(...);                        // ENet's memory: the pool's
 *   ...                                            // after joining that thread:
 *   enet_host_destroy(host);                       // frees reach the pool
 *   cradle_enet_pool_deinit(&pool);
 *
 * Blocks come in CRADLE_ENET_POOL_CLASSES size classes (cradle_enet_pool_
 * class_bytes); a request takes one block of the smallest class that holds
 * it. Each block carries a 16-byte header naming its pool and class, so the
 * free callback works on whichever thread ENet frees it. A request falls back
 * to malloc (and is counted) when its class has no free block, when it is
 * larger than the largest class, or when the calling thread has no pool bound
 * (other threads, other programs' hosts: they behave as with plain ENet).
 *
 * Threads. A pool serves one thread at a time: the thread that bound it (the
 * owner). Binding is a thread-local pointer, undone by binding NULL or
 * another pool, or automatically when the owner thread exits. Blocks of a
 * pool may be freed by the owner while it is bound, or by any one thread
 * once no thread has the pool bound (e.g. enet_host_destroy on the main
 * thread after pthread_join of the network thread). A free from another
 * thread while the owner is bound is NOT supported: it would race on the
 * owner's free lists; it asserts, and without assertions the block is left
 * in use (counted as foreign_frees) rather than corrupting the pool.
 *
 * Memory: cradle_enet_pool_init makes the only allocation (one block for all
 * classes); a block's pages are first touched when the block is first used,
 * so resident memory follows the high-water mark, not the reservation.
 * Under AddressSanitizer a free block, and the bytes of a block past the
 * size requested, are poisoned.
 *
 * Stats are atomics written by the thread that allocates or frees and may be
 * read by any thread at any time (cradle_enet_pool_read_stats).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"

#define CRADLE_ENET_POOL_CLASSES 8u
/* Blocks a config entry may ask for in one class (and a block count meaning
 * "none in this class", since 0 means the default). */
#define CRADLE_ENET_POOL_MAX_BLOCKS (1u << 20)
#define CRADLE_ENET_POOL_NONE UINT32_MAX
#define CRADLE_ENET_POOL_DEFAULT_PEERS 64u

/* Bytes of each class's blocks, ascending: 64, 128, 256, 512, 1024, 2048,
 * 4096, 16384. Measured in bench_server with 64 peers, ENet asks for 48
 * (ENetPacket), 72 (acknowledgement), 96 (outgoing and incoming command) and
 * the packets' data; the larger classes hold state blocks, fragments and
 * outgoing messages up to cradle-server's 8 KiB. */
extern const uint32_t cradle_enet_pool_class_bytes[CRADLE_ENET_POOL_CLASSES];

/* Zero means default. */
typedef struct cradle_enet_pool_config {
    uint32_t peers; /* the host's peer count, for the default block counts; 0 = 64 */
    /* Blocks per class: 0 = the default for `peers` (cradle_enet_pool_default_blocks),
     * CRADLE_ENET_POOL_NONE = none, else 1..CRADLE_ENET_POOL_MAX_BLOCKS. */
    uint32_t blocks[CRADLE_ENET_POOL_CLASSES];
} cradle_enet_pool_config;

typedef struct cradle_enet_pool_class {
    uint32_t bytes;  /* payload bytes of one block */
    uint32_t blocks; /* reserved */
    uint32_t carved; /* blocks used at least once: [0, carved) of the class's memory */
    uint32_t free_top; /* entries on free_stack */
    uint32_t *free_stack; /* indices of freed blocks (owner thread) */
    unsigned char *base; /* first block: header then payload, stride 16 + bytes */
    atomic_uint_fast32_t in_use, high_water;
    atomic_uint_fast64_t allocs;    /* served from this class */
    atomic_uint_fast64_t fallbacks; /* sized for this class but sent to malloc: none free */
} cradle_enet_pool_class;

typedef struct cradle_enet_pool {
    bool ready;
    atomic_bool bound; /* an owner thread has it bound */
    void *memory; /* the one allocation: blocks, then free stacks */
    size_t memory_bytes;
    cradle_enet_pool_class classes[CRADLE_ENET_POOL_CLASSES];
    atomic_uint_fast64_t oversize; /* larger than the largest class: sent to malloc */
    atomic_uint_fast64_t foreign_frees; /* unsupported frees, left in use (see Threads) */
} cradle_enet_pool;

typedef struct cradle_enet_pool_class_stats {
    uint32_t bytes, blocks;
    uint32_t in_use, high_water;
    uint64_t allocs, fallbacks;
} cradle_enet_pool_class_stats;

typedef struct cradle_enet_pool_stats {
    cradle_enet_pool_class_stats classes[CRADLE_ENET_POOL_CLASSES];
    uint64_t allocs;    /* served from blocks, every class */
    uint64_t fallbacks; /* sent to malloc: every class's fallbacks + oversize */
    uint64_t oversize;
    uint64_t foreign_frees;
    uint64_t in_use, high_water; /* sums over the classes (high-water: each class's own) */
    size_t reserved_bytes; /* the pool's allocation */
    bool bound;
} cradle_enet_pool_stats;

/* The default block count of class `index` for a host of `peers` peers (0 =
 * CRADLE_ENET_POOL_DEFAULT_PEERS): the 64-peer benchmark's high-water mark
 * scaled per peer with headroom, and a floor for small hosts. */
uint32_t cradle_enet_pool_default_blocks(uint32_t index, uint32_t peers);

/* Reserves the pool's memory (one allocation, pages untouched) and lays out
 * every class. config may be NULL (all defaults). Returns 0, CRADLE_EINVAL
 * (a block count above CRADLE_ENET_POOL_MAX_BLOCKS) or CRADLE_ENOMEM; on
 * failure the pool is left zeroed (deinit is then a no-op). */
int cradle_enet_pool_init(cradle_enet_pool *pool, const cradle_enet_pool_config *config);

/* Frees the pool's memory. Every block must have been freed and no thread may
 * have it bound, except the calling thread (which is unbound). Safe on a
 * zeroed pool. */
void cradle_enet_pool_deinit(cradle_enet_pool *pool);

/* Binds pool to the calling thread (NULL unbinds it); the previous pool
 * bound here, if any, is unbound. A pool is bound on one thread at a time
 * (asserted). The binding ends by itself when the thread exits. */
void cradle_enet_pool_bind(cradle_enet_pool *pool);

/* The pool bound to the calling thread, or NULL. */
cradle_enet_pool *cradle_enet_pool_bound(void);

/* Installs cradle_enet_pool_malloc/free as ENet's allocator
 * (enet_initialize_with_callbacks): call once per process instead of
 * enet_initialize(), before creating any ENet host; pair it with
 * enet_deinitialize(). Returns 0 or CRADLE_ENET_INIT. */
int cradle_enet_pool_initialize(void);

/* ENet's allocator (what cradle_enet_pool_initialize installs); callable
 * directly. malloc returns 16-byte-aligned memory or NULL (malloc failed);
 * free accepts NULL and anything malloc returned, on any thread the Threads
 * rules above allow. */
void *cradle_enet_pool_malloc(size_t size);
void cradle_enet_pool_free(void *memory);

/* Copies the pool's counters (any thread, any time; each counter is read
 * atomically, the set is not one instant's). */
void cradle_enet_pool_read_stats(const cradle_enet_pool *pool, cradle_enet_pool_stats *out);

/* Allocations made through cradle_enet_pool_malloc on threads with no pool
 * bound, since the process started (every thread, every pool-less host). */
uint64_t cradle_enet_pool_unbound_allocs(void);

#endif
