#ifndef CRADLE_RING_H
#define CRADLE_RING_H
/*
 * ring: a lock-free single-producer single-consumer queue of fixed-size
 * elements (seed 004), for the server's hand-off between its network thread
 * and its game thread.
 *
 * Exactly one thread pushes and exactly one thread pops (they may be the same
 * thread). No lock, no allocation after init, no waiting: push returns false
 * when the ring is full and pop returns false when it is empty; the caller
 * decides what to do (drop, count, retry later).
 *
 * Memory ordering: the producer writes an element, then publishes it with a
 * release store of `tail`; the consumer reads `tail` with acquire, copies the
 * element out, then frees the slot with a release store of `head`, which the
 * producer reads with acquire before reusing the slot. Each side also keeps a
 * private cached copy of the other side's index, so the shared cache lines
 * move only when the cached view says full or empty. head, tail and the
 * read-only fields sit on separate cache lines (no false sharing).
 *
 * The struct and the element storage are the caller's; the struct must be
 * aligned to CRADLE_RING_CACHE_LINE (static, automatic or aligned_alloc'd
 * storage gives that; plain malloc may not). Not relocatable: the struct
 * points at the storage.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"

#define CRADLE_RING_CACHE_LINE 64
#define CRADLE_RING_MAX_CAPACITY (1u << 30)

typedef struct cradle_ring {
    /* consumer's line: written by the consumer only */
    _Alignas(CRADLE_RING_CACHE_LINE) atomic_size_t head; /* next element to pop */
    size_t tail_cache;                                    /* consumer's view of tail */
    /* producer's line: written by the producer only */
    _Alignas(CRADLE_RING_CACHE_LINE) atomic_size_t tail; /* next slot to push */
    size_t head_cache;                                    /* producer's view of head */
    /* read-only after init */
    _Alignas(CRADLE_RING_CACHE_LINE) unsigned char *storage;
    size_t mask;          /* capacity - 1 */
    uint32_t capacity;    /* power of two */
    uint32_t element_size;
} cradle_ring;

/* Bytes of storage for capacity elements of element_size bytes, or 0 when
 * capacity is not a power of two in 1..CRADLE_RING_MAX_CAPACITY or
 * element_size is 0. */
size_t cradle_ring_storage_bytes(uint32_t capacity, uint32_t element_size);

/* Makes an empty ring over storage (at least cradle_ring_storage_bytes()
 * long, aligned for the element type the caller copies in and out). Returns
 * 0, or CRADLE_EINVAL for a bad capacity or size, NULL or short storage.
 * Call before either thread starts using the ring (publish the ring to them
 * with thread creation or another synchronising operation). */
int cradle_ring_init(cradle_ring *ring, void *storage, size_t storage_size, uint32_t capacity,
                     uint32_t element_size);

/* Producer only. Copies element (element_size bytes) in; false when full. */
bool cradle_ring_push(cradle_ring *ring, const void *element);

/* Consumer only. Copies the oldest element out; false when empty. */
bool cradle_ring_pop(cradle_ring *ring, void *element);

/* Producer only. Pushes up to count elements (contiguous, element_size
 * apart) with one publication; returns how many were pushed (0..count). */
uint32_t cradle_ring_push_many(cradle_ring *ring, const void *elements, uint32_t count);

/* Consumer only. Pops up to count elements into `elements`; returns how many. */
uint32_t cradle_ring_pop_many(cradle_ring *ring, void *elements, uint32_t count);

/* Elements in the ring as seen at the call; from either thread it is exact
 * for the caller's own side and may lag the other side's progress. */
uint32_t cradle_ring_count(const cradle_ring *ring);

static inline uint32_t cradle_ring_capacity(const cradle_ring *ring) { return ring->capacity; }

#endif
