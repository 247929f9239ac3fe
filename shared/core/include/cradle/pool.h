#ifndef CRADLE_POOL_H
#define CRADLE_POOL_H
/*
 * pool: fixed-capacity storage of equal-sized values addressed by
 * generational handles (seed 000, "handles, not pointers").
 *
 * The pool lives in one caller-provided block: a header, then the slot
 * bookkeeping, then the values. It holds offsets, never pointers, so the
 * block can be copied to another address (or hashed, saved, sent) and keeps
 * working there. A slot's generation is odd while it is live and even while
 * it is free; a handle names a slot and the generation it was created with,
 * so a handle kept past destroy() never resolves to the slot's next occupant.
 * Generation 0 is never handed out: the zero handle is "none".
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"

#define CRADLE_POOL_MAX_CAPACITY 65535u

typedef struct cradle_pool_handle {
    uint32_t index;
    uint32_t generation;
} cradle_pool_handle;

#define CRADLE_POOL_HANDLE_NONE ((cradle_pool_handle){0, 0})

typedef struct cradle_pool {
    uint32_t capacity;
    uint32_t value_size;   /* bytes of one value, as the caller gave it */
    uint32_t value_stride; /* value_size rounded up to value_align */
    uint32_t value_align;
    uint32_t free_head;    /* == capacity when the pool is full */
    uint32_t live;
    uint32_t values_offset; /* from the start of this struct */
    /* followed by: uint32_t generation[capacity]; uint32_t next_free[capacity];
       padding; values */
} cradle_pool;

/* Bytes a pool of `capacity` values of value_size bytes aligned to
 * value_align needs, or 0 when the arguments are invalid (capacity 0 or above
 * CRADLE_POOL_MAX_CAPACITY, value_size 0, align not a power of two or above
 * 4096, value_size rounded up to align above UINT32_MAX). */
size_t cradle_pool_bytes(uint32_t capacity, uint32_t value_size, uint32_t value_align);

/* Lays out an empty pool in `block` (aligned to value_align and at least
 * cradle_pool_bytes() long). Returns the pool or NULL when the arguments are
 * invalid or the block is too small or misaligned. */
cradle_pool *cradle_pool_init(void *block, size_t block_size, uint32_t capacity,
                              uint32_t value_size, uint32_t value_align);

/* Takes a free slot, copies value (value_size bytes; NULL zero-fills) into it
 * and returns its handle, or CRADLE_POOL_HANDLE_NONE when the pool is full. */
cradle_pool_handle cradle_pool_create(cradle_pool *pool, const void *value);

/* Frees the handle's slot. Returns false (doing nothing) for a stale handle. */
bool cradle_pool_destroy(cradle_pool *pool, cradle_pool_handle handle);

/* The value of a live handle, or NULL for a stale or none handle. */
void *cradle_pool_get(cradle_pool *pool, cradle_pool_handle handle);
bool cradle_pool_contains(const cradle_pool *pool, cradle_pool_handle handle);

/* Iteration over live slots in index order:
 *   for (uint32_t i = cradle_pool_first(p); i < p->capacity; i = cradle_pool_after(p, i))
 *       use cradle_pool_handle_at(p, i) / cradle_pool_value_at(p, i)
 * Destroying the current slot while iterating is allowed. */
uint32_t cradle_pool_first(const cradle_pool *pool);
uint32_t cradle_pool_after(const cradle_pool *pool, uint32_t index);
cradle_pool_handle cradle_pool_handle_at(const cradle_pool *pool, uint32_t index);
void *cradle_pool_value_at(cradle_pool *pool, uint32_t index);

/* Destroys every live value (their handles all become stale). */
void cradle_pool_clear(cradle_pool *pool);

#endif
