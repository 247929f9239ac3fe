#include "cradle/ring.h"

#include <assert.h>
#include <string.h>

static bool valid_shape(uint32_t capacity, uint32_t element_size) {
    return capacity > 0 && capacity <= CRADLE_RING_MAX_CAPACITY &&
           (capacity & (capacity - 1u)) == 0 && element_size > 0;
}

size_t cradle_ring_storage_bytes(uint32_t capacity, uint32_t element_size) {
    if (!valid_shape(capacity, element_size)) return 0;
    return (size_t)capacity * element_size;
}

int cradle_ring_init(cradle_ring *ring, void *storage, size_t storage_size, uint32_t capacity,
                     uint32_t element_size) {
    assert(ring != NULL);
    assert((uintptr_t)ring % CRADLE_RING_CACHE_LINE == 0);
    size_t need = cradle_ring_storage_bytes(capacity, element_size);
    if (need == 0 || storage == NULL || storage_size < need) return CRADLE_EINVAL;
    atomic_init(&ring->head, 0);
    atomic_init(&ring->tail, 0);
    ring->tail_cache = 0;
    ring->head_cache = 0;
    ring->storage = storage;
    ring->mask = (size_t)capacity - 1u;
    ring->capacity = capacity;
    ring->element_size = element_size;
    return 0;
}

static unsigned char *slot(const cradle_ring *ring, size_t position) {
    return ring->storage + (position & ring->mask) * ring->element_size;
}

/* Producer side: free slots, refreshing the view of head (acquire: the
 * consumer's copies out of those slots happen before we overwrite them) only
 * when the cached view cannot satisfy `want`. */
static size_t producer_space(cradle_ring *ring, size_t tail, size_t want) {
    size_t space = ring->capacity - (tail - ring->head_cache);
    if (space < want) {
        ring->head_cache = atomic_load_explicit(&ring->head, memory_order_acquire);
        space = ring->capacity - (tail - ring->head_cache);
    }
    return space;
}

/* Consumer side: filled slots, refreshing the view of tail (acquire: the
 * producer's writes into those slots happen before we read them) only when
 * the cached view cannot satisfy `want`. */
static size_t consumer_available(cradle_ring *ring, size_t head, size_t want) {
    size_t available = ring->tail_cache - head;
    if (available < want) {
        ring->tail_cache = atomic_load_explicit(&ring->tail, memory_order_acquire);
        available = ring->tail_cache - head;
    }
    return available;
}

bool cradle_ring_push(cradle_ring *ring, const void *element) {
    /* Only the producer writes tail, so a relaxed load of our own index is exact. */
    size_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    if (producer_space(ring, tail, 1) == 0) return false;
    memcpy(slot(ring, tail), element, ring->element_size);
    atomic_store_explicit(&ring->tail, tail + 1u, memory_order_release);
    return true;
}

bool cradle_ring_pop(cradle_ring *ring, void *element) {
    size_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    if (consumer_available(ring, head, 1) == 0) return false;
    memcpy(element, slot(ring, head), ring->element_size);
    atomic_store_explicit(&ring->head, head + 1u, memory_order_release);
    return true;
}

/* Copies n elements between the ring (from position) and a flat array, in at
 * most two runs because the ring wraps. */
static void copy_out(const cradle_ring *ring, size_t position, unsigned char *to, size_t n) {
    size_t first = ring->capacity - (position & ring->mask);
    if (first > n) first = n;
    memcpy(to, slot(ring, position), first * ring->element_size);
    if (n > first) memcpy(to + first * ring->element_size, ring->storage, (n - first) * ring->element_size);
}

static void copy_in(cradle_ring *ring, size_t position, const unsigned char *from, size_t n) {
    size_t first = ring->capacity - (position & ring->mask);
    if (first > n) first = n;
    memcpy(slot(ring, position), from, first * ring->element_size);
    if (n > first) memcpy(ring->storage, from + first * ring->element_size, (n - first) * ring->element_size);
}

uint32_t cradle_ring_push_many(cradle_ring *ring, const void *elements, uint32_t count) {
    if (count == 0) return 0;
    size_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    size_t n = producer_space(ring, tail, count);
    if (n > count) n = count;
    if (n == 0) return 0;
    copy_in(ring, tail, elements, n);
    atomic_store_explicit(&ring->tail, tail + n, memory_order_release);
    return (uint32_t)n;
}

uint32_t cradle_ring_pop_many(cradle_ring *ring, void *elements, uint32_t count) {
    if (count == 0) return 0;
    size_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    size_t n = consumer_available(ring, head, count);
    if (n > count) n = count;
    if (n == 0) return 0;
    copy_out(ring, head, elements, n);
    atomic_store_explicit(&ring->head, head + n, memory_order_release);
    return (uint32_t)n;
}

uint32_t cradle_ring_count(const cradle_ring *ring) {
    /* Load head first: tail only grows, so tail read afterwards is >= the
     * tail at the time head was read, and the difference never underflows. */
    size_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
    size_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
    size_t n = tail - head;
    return (uint32_t)(n > ring->capacity ? ring->capacity : n);
}
