#include "cradle/pool.h"

#include <string.h>

static uint32_t *generations(const cradle_pool *pool) {
    return (uint32_t *)(uintptr_t)((const uint8_t *)pool + sizeof(cradle_pool));
}

static uint32_t *next_free(const cradle_pool *pool) { return generations(pool) + pool->capacity; }

static uint8_t *value_ptr(const cradle_pool *pool, uint32_t index) {
    return (uint8_t *)(uintptr_t)pool + pool->values_offset + (size_t)index * pool->value_stride;
}

static bool valid_layout(uint32_t capacity, uint32_t value_size, uint32_t value_align) {
    return capacity > 0 && capacity <= CRADLE_POOL_MAX_CAPACITY && value_size > 0 &&
           value_align > 0 && (value_align & (value_align - 1)) == 0 && value_align <= 4096 &&
           /* the stride must fit the header's uint32_t */
           (uint64_t)value_size + value_align - 1u <= UINT32_MAX;
}

static size_t round_up(size_t n, size_t align) { return (n + align - 1) & ~(align - 1); }

static size_t values_offset(uint32_t capacity, uint32_t value_align) {
    size_t meta = sizeof(cradle_pool) + 2u * sizeof(uint32_t) * capacity;
    return round_up(meta, value_align > _Alignof(cradle_pool) ? value_align : _Alignof(cradle_pool));
}

size_t cradle_pool_bytes(uint32_t capacity, uint32_t value_size, uint32_t value_align) {
    if (!valid_layout(capacity, value_size, value_align)) return 0;
    size_t stride = round_up(value_size, value_align);
    size_t offset = values_offset(capacity, value_align);
    if (stride > (SIZE_MAX - offset) / capacity) return 0; /* only where size_t is narrow */
    return offset + stride * capacity;
}

cradle_pool *cradle_pool_init(void *block, size_t block_size, uint32_t capacity,
                              uint32_t value_size, uint32_t value_align) {
    size_t need = cradle_pool_bytes(capacity, value_size, value_align);
    if (need == 0 || block == NULL || block_size < need) return NULL;
    size_t header_align = value_align > _Alignof(cradle_pool) ? value_align : _Alignof(cradle_pool);
    if ((uintptr_t)block % header_align != 0) return NULL;
    /* Zero the whole block (padding and free slots included), so its bytes
     * (hashed, compared, sent to late joiners) depend only on the operations
     * done on it, never on what the memory held before. */
    memset(block, 0, need);
    cradle_pool *pool = block;
    *pool = (cradle_pool){
        .capacity = capacity,
        .value_size = value_size,
        .value_stride = (uint32_t)round_up(value_size, value_align),
        .value_align = value_align,
        .free_head = 0,
        .live = 0,
        .values_offset = (uint32_t)values_offset(capacity, value_align),
    };
    uint32_t *gen = generations(pool);
    uint32_t *next = next_free(pool);
    for (uint32_t i = 0; i < capacity; i++) {
        gen[i] = 0;
        next[i] = i + 1;
    }
    return pool;
}

static bool resolves(const cradle_pool *pool, cradle_pool_handle handle) {
    if (handle.index >= pool->capacity) return false;
    uint32_t gen = generations(pool)[handle.index];
    return gen == handle.generation && (gen & 1u) == 1u;
}

cradle_pool_handle cradle_pool_create(cradle_pool *pool, const void *value) {
    if (pool->free_head >= pool->capacity) return CRADLE_POOL_HANDLE_NONE;
    uint32_t index = pool->free_head;
    uint32_t *gen = generations(pool);
    pool->free_head = next_free(pool)[index];
    gen[index] += 1; /* even -> odd: live (a wrap lands on 1, never 0) */
    /* Copy exactly the caller's value_size bytes (the value may be shorter
     * than the stride); the slot's padding up to the stride is zeroed so the
     * block's bytes (hashed, saved, sent) never carry stale data. */
    uint8_t *slot = value_ptr(pool, index);
    if (value) {
        memcpy(slot, value, pool->value_size);
    } else {
        memset(slot, 0, pool->value_size);
    }
    memset(slot + pool->value_size, 0, pool->value_stride - pool->value_size);
    pool->live++;
    return (cradle_pool_handle){.index = index, .generation = gen[index]};
}

bool cradle_pool_destroy(cradle_pool *pool, cradle_pool_handle handle) {
    if (!resolves(pool, handle)) return false;
    generations(pool)[handle.index] += 1; /* odd -> even: free */
    next_free(pool)[handle.index] = pool->free_head;
    pool->free_head = handle.index;
    pool->live--;
    return true;
}

void *cradle_pool_get(cradle_pool *pool, cradle_pool_handle handle) {
    return resolves(pool, handle) ? value_ptr(pool, handle.index) : NULL;
}

bool cradle_pool_contains(const cradle_pool *pool, cradle_pool_handle handle) {
    return resolves(pool, handle);
}

uint32_t cradle_pool_after(const cradle_pool *pool, uint32_t index) {
    const uint32_t *gen = generations(pool);
    uint32_t i = index + 1;
    while (i < pool->capacity && (gen[i] & 1u) == 0) i++;
    return i;
}

uint32_t cradle_pool_first(const cradle_pool *pool) {
    if (pool->capacity == 0) return 0;
    return (generations(pool)[0] & 1u) ? 0 : cradle_pool_after(pool, 0);
}

cradle_pool_handle cradle_pool_handle_at(const cradle_pool *pool, uint32_t index) {
    if (index >= pool->capacity) return CRADLE_POOL_HANDLE_NONE;
    uint32_t gen = generations(pool)[index];
    if ((gen & 1u) == 0) return CRADLE_POOL_HANDLE_NONE;
    return (cradle_pool_handle){.index = index, .generation = gen};
}

void *cradle_pool_value_at(cradle_pool *pool, uint32_t index) {
    return cradle_pool_get(pool, cradle_pool_handle_at(pool, index));
}

void cradle_pool_clear(cradle_pool *pool) {
    for (uint32_t i = cradle_pool_first(pool); i < pool->capacity; i = cradle_pool_after(pool, i)) {
        cradle_pool_destroy(pool, cradle_pool_handle_at(pool, i));
    }
}
