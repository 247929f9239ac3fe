#include "cradle/enet_pool.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <enet/enet.h>

#if defined(__SANITIZE_ADDRESS__)
#define POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_ASAN 1
#endif
#endif
#ifdef POOL_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

const uint32_t cradle_enet_pool_class_bytes[CRADLE_ENET_POOL_CLASSES] = {64,   128,  256,  512,
                                                                          1024, 2048, 4096, 16384};

/* Default blocks per class: per_peer_x4 / 4 for each peer, at least floor.
 * Measured with bench_server (64 bots, a 72-peer host): the 64-byte class
 * peaks at ~10 blocks a peer and the 128-byte one at ~9 while 64 secure peers
 * join at once (plaintext play: ~2 and ~9); a garbage spray of ~75k datagrams/s
 * holds up to ~16 and ~12 a peer in spurious peers' queues, and its longer
 * datagrams peaked at 72 of the 256-byte class and 64 of the 512-byte one
 * for 72 peers (2 a peer now). The 512- and 1024-byte classes also hold step
 * messages: when acks come late (the same spray
 * slowing the clients) every peer's message fills up to the stream's 1000
 * bytes and all of them are queued before one flush, so 2 a peer, and a
 * repair's burst for one peer (96) on top. A late joiner's state block and
 * fragments use the larger classes. Blocks never used cost address space
 * only (their pages are never touched). */
static const uint32_t default_per_peer_x4[CRADLE_ENET_POOL_CLASSES] = {128, 96, 8, 8, 8, 2, 1, 1};
static const uint32_t default_floor[CRADLE_ENET_POOL_CLASSES] = {256, 256, 64, 32, 96, 16, 8, 8};

/* Every block, pooled or not, starts with this header, so free can tell
 * where it came from. 16 bytes keep the payload at malloc's alignment. */
typedef struct block_header {
    cradle_enet_pool *pool; /* NULL: a malloc fallback */
    uint32_t magic;
    uint16_t klass;
    uint16_t state;
} block_header;

#define HEADER_BYTES 16u
_Static_assert(sizeof(block_header) == HEADER_BYTES, "header keeps 16-byte alignment");
_Static_assert(_Alignof(max_align_t) <= HEADER_BYTES, "payload as aligned as malloc's");

#define MAGIC_POOL 0x43455031u     /* "CEP1" */
#define MAGIC_FALLBACK 0x43454631u /* "CEF1" */
#define STATE_FREE 0x0F0Fu
#define STATE_LIVE 0x1111u

static _Thread_local cradle_enet_pool *bound_pool;
static atomic_uint_fast64_t unbound_allocs;

/* Unbinds a pool when its owner thread exits without unbinding. */
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void on_thread_exit(void *value) {
    cradle_enet_pool *pool = value;
    atomic_store_explicit(&pool->bound, false, memory_order_release);
}

static void make_exit_key(void) {
    int rc = pthread_key_create(&exit_key, on_thread_exit);
    assert(rc == 0 && "no pthread key left for the ENet pool's binding");
    (void)rc;
}

uint32_t cradle_enet_pool_default_blocks(uint32_t index, uint32_t peers) {
    assert(index < CRADLE_ENET_POOL_CLASSES);
    if (peers == 0) peers = CRADLE_ENET_POOL_DEFAULT_PEERS;
    uint64_t n = ((uint64_t)peers * default_per_peer_x4[index] + 3u) / 4u;
    if (n < default_floor[index]) n = default_floor[index];
    return n > CRADLE_ENET_POOL_MAX_BLOCKS ? CRADLE_ENET_POOL_MAX_BLOCKS : (uint32_t)n;
}

static size_t stride_of(const cradle_enet_pool_class *c) { return HEADER_BYTES + (size_t)c->bytes; }

static block_header *block_at(const cradle_enet_pool_class *c, uint32_t index) {
    return (block_header *)(void *)(c->base + (size_t)index * stride_of(c));
}

int cradle_enet_pool_init(cradle_enet_pool *pool, const cradle_enet_pool_config *config) {
    static const cradle_enet_pool_config defaults = {0};
    if (!config) config = &defaults;
    memset(pool, 0, sizeof *pool);
    atomic_init(&pool->bound, false);
    atomic_init(&pool->oversize, 0);
    atomic_init(&pool->foreign_frees, 0);
    uint32_t counts[CRADLE_ENET_POOL_CLASSES];
    size_t block_bytes = 0, stack_bytes = 0;
    for (uint32_t i = 0; i < CRADLE_ENET_POOL_CLASSES; i++) {
        uint32_t n = config->blocks[i];
        if (n == 0) n = cradle_enet_pool_default_blocks(i, config->peers);
        else if (n == CRADLE_ENET_POOL_NONE) n = 0;
        else if (n > CRADLE_ENET_POOL_MAX_BLOCKS) return CRADLE_EINVAL;
        counts[i] = n;
        /* At most 2^20 blocks of 16 KiB + 16 per class: no overflow in size_t. */
        block_bytes += (size_t)n * (HEADER_BYTES + cradle_enet_pool_class_bytes[i]);
        stack_bytes += (size_t)n * sizeof(uint32_t);
    }
    /* malloc, not calloc: pages stay untouched until a block is first used.
     * The fallback below never reaches this (it is libc's malloc). */
    pool->memory_bytes = block_bytes + stack_bytes;
    pool->memory = malloc(pool->memory_bytes ? pool->memory_bytes : 1u);
    if (!pool->memory) {
        memset(pool, 0, sizeof *pool);
        return CRADLE_ENOMEM;
    }
    unsigned char *blocks = pool->memory;
    uint32_t *stacks = (uint32_t *)(void *)(blocks + block_bytes);
    for (uint32_t i = 0; i < CRADLE_ENET_POOL_CLASSES; i++) {
        cradle_enet_pool_class *c = &pool->classes[i];
        c->bytes = cradle_enet_pool_class_bytes[i];
        c->blocks = counts[i];
        c->base = blocks;
        c->free_stack = stacks;
        atomic_init(&c->in_use, 0);
        atomic_init(&c->high_water, 0);
        atomic_init(&c->allocs, 0);
        atomic_init(&c->fallbacks, 0);
        blocks += (size_t)counts[i] * stride_of(c);
        stacks += counts[i];
    }
    POISON(pool->memory, block_bytes); /* unpoisoned block by block as they are used */
    pool->ready = true;
    return 0;
}

void cradle_enet_pool_deinit(cradle_enet_pool *pool) {
    if (!pool->ready) return;
    if (bound_pool == pool) cradle_enet_pool_bind(NULL);
    assert(!atomic_load(&pool->bound) && "deinit of an ENet pool another thread has bound");
#ifndef NDEBUG
    for (uint32_t i = 0; i < CRADLE_ENET_POOL_CLASSES; i++)
        assert(atomic_load(&pool->classes[i].in_use) == 0 && "deinit of an ENet pool with blocks in use");
#endif
    UNPOISON(pool->memory, pool->memory_bytes);
    free(pool->memory);
    memset(pool, 0, sizeof *pool);
}

void cradle_enet_pool_bind(cradle_enet_pool *pool) {
    if (bound_pool == pool) return;
    pthread_once(&exit_key_once, make_exit_key);
    if (bound_pool) atomic_store_explicit(&bound_pool->bound, false, memory_order_release);
    if (pool) {
        assert(pool->ready);
        bool was = atomic_exchange_explicit(&pool->bound, true, memory_order_acq_rel);
        assert(!was && "an ENet pool is bound on one thread at a time");
        (void)was;
    }
    /* A NULL value runs no destructor: unbinding needs no exit hook. */
    (void)pthread_setspecific(exit_key, pool);
    bound_pool = pool;
}

cradle_enet_pool *cradle_enet_pool_bound(void) { return bound_pool; }

/* Counters with one writer at a time (the owner, or the one thread freeing
 * after it stopped): a relaxed load and store, no locked instruction. */
static void bump32(atomic_uint_fast32_t *v, int delta) {
    uint_fast32_t n = atomic_load_explicit(v, memory_order_relaxed);
    atomic_store_explicit(v, delta > 0 ? n + 1u : n - 1u, memory_order_relaxed);
}

static void bump64(atomic_uint_fast64_t *v) {
    atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + 1u, memory_order_relaxed);
}

static void *fallback_malloc(cradle_enet_pool *pool, size_t size) {
    if (size > SIZE_MAX - HEADER_BYTES) return NULL;
    block_header *h = malloc(HEADER_BYTES + size);
    if (!h) return NULL;
    h->pool = pool;
    h->magic = MAGIC_FALLBACK;
    h->klass = 0;
    h->state = STATE_LIVE;
    return (unsigned char *)h + HEADER_BYTES;
}

void *cradle_enet_pool_malloc(size_t size) {
    cradle_enet_pool *pool = bound_pool;
    if (!pool) {
        atomic_fetch_add_explicit(&unbound_allocs, 1, memory_order_relaxed);
        return fallback_malloc(NULL, size);
    }
    uint32_t i = 0;
    while (i < CRADLE_ENET_POOL_CLASSES && cradle_enet_pool_class_bytes[i] < size) i++;
    if (i == CRADLE_ENET_POOL_CLASSES) {
        bump64(&pool->oversize);
        return fallback_malloc(pool, size);
    }
    cradle_enet_pool_class *c = &pool->classes[i];
    block_header *h;
    if (c->free_top > 0) {
        h = block_at(c, c->free_stack[--c->free_top]);
        UNPOISON(h, HEADER_BYTES);
        assert(h->magic == MAGIC_POOL && h->state == STATE_FREE && h->pool == pool);
    } else if (c->carved < c->blocks) {
        h = block_at(c, c->carved++);
        UNPOISON(h, HEADER_BYTES);
        h->pool = pool;
        h->magic = MAGIC_POOL;
        h->klass = (uint16_t)i;
    } else {
        bump64(&c->fallbacks);
        return fallback_malloc(pool, size);
    }
    h->state = STATE_LIVE;
    unsigned char *payload = (unsigned char *)h + HEADER_BYTES;
    UNPOISON(payload, size);
    bump64(&c->allocs);
    bump32(&c->in_use, +1);
    uint_fast32_t used = atomic_load_explicit(&c->in_use, memory_order_relaxed);
    if (used > atomic_load_explicit(&c->high_water, memory_order_relaxed))
        atomic_store_explicit(&c->high_water, used, memory_order_relaxed);
    return payload;
}

void cradle_enet_pool_free(void *memory) {
    if (!memory) return;
    block_header *h = (block_header *)(void *)((unsigned char *)memory - HEADER_BYTES);
    if (h->magic == MAGIC_FALLBACK) {
        assert(h->state == STATE_LIVE && "double free of an ENet block");
        h->magic = 0;
        free(h);
        return;
    }
    assert(h->magic == MAGIC_POOL && "free of memory cradle_enet_pool_malloc did not return");
    assert(h->state == STATE_LIVE && "double free of an ENet pool block");
    cradle_enet_pool *pool = h->pool;
    if (pool != bound_pool && atomic_load_explicit(&pool->bound, memory_order_acquire)) {
        /* Another thread owns this pool and may be using its free list now. */
        assert(false && "ENet pool block freed on another thread while its owner has the pool bound");
        atomic_fetch_add_explicit(&pool->foreign_frees, 1, memory_order_relaxed);
        return; /* left in use: a leak until deinit, never a corrupted pool */
    }
    cradle_enet_pool_class *c = &pool->classes[h->klass];
    uint32_t index = (uint32_t)((size_t)((unsigned char *)h - c->base) / stride_of(c));
    assert(block_at(c, index) == h && c->free_top < c->blocks);
    h->state = STATE_FREE;
    c->free_stack[c->free_top++] = index;
    bump32(&c->in_use, -1);
    POISON(h, stride_of(c));
}

int cradle_enet_pool_initialize(void) {
    ENetCallbacks callbacks;
    memset(&callbacks, 0, sizeof callbacks); /* later fields: ENet's defaults */
    callbacks.malloc = cradle_enet_pool_malloc;
    callbacks.free = cradle_enet_pool_free;
    return enet_initialize_with_callbacks(ENET_VERSION, &callbacks) == 0 ? 0 : CRADLE_ENET_INIT;
}

void cradle_enet_pool_read_stats(const cradle_enet_pool *pool, cradle_enet_pool_stats *out) {
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < CRADLE_ENET_POOL_CLASSES; i++) {
        const cradle_enet_pool_class *c = &pool->classes[i];
        cradle_enet_pool_class_stats *s = &out->classes[i];
        s->bytes = cradle_enet_pool_class_bytes[i];
        s->blocks = c->blocks;
        s->in_use = (uint32_t)atomic_load_explicit(&c->in_use, memory_order_relaxed);
        s->high_water = (uint32_t)atomic_load_explicit(&c->high_water, memory_order_relaxed);
        s->allocs = atomic_load_explicit(&c->allocs, memory_order_relaxed);
        s->fallbacks = atomic_load_explicit(&c->fallbacks, memory_order_relaxed);
        out->allocs += s->allocs;
        out->fallbacks += s->fallbacks;
        out->in_use += s->in_use;
        out->high_water += s->high_water;
    }
    out->oversize = atomic_load_explicit(&pool->oversize, memory_order_relaxed);
    out->fallbacks += out->oversize;
    out->foreign_frees = atomic_load_explicit(&pool->foreign_frees, memory_order_relaxed);
    out->reserved_bytes = pool->memory_bytes;
    out->bound = atomic_load_explicit(&pool->bound, memory_order_relaxed);
}

uint64_t cradle_enet_pool_unbound_allocs(void) {
    return atomic_load_explicit(&unbound_allocs, memory_order_relaxed);
}
