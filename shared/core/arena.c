#include "cradle/arena.h"

#include <assert.h>
#include <string.h>

void cradle_arena_init(cradle_arena *arena, void *block, size_t capacity) {
    assert(block != NULL || capacity == 0);
    *arena = (cradle_arena){.base = block, .capacity = capacity, .used = 0};
}

void *cradle_arena_alloc(cradle_arena *arena, size_t size, size_t align) {
    assert(align != 0 && (align & (align - 1)) == 0 && "alignment must be a power of two");
    size_t mask = align - 1;
    /* Branch-free padding to the next aligned address (not offset: the block
     * itself may be less aligned than the request). Integer arithmetic, so a
     * NULL block (capacity 0) never sees NULL + offset. */
    uintptr_t at = (uintptr_t)arena->base + arena->used;
    size_t padding = (size_t)((align - (at & mask)) & mask);
    size_t free_bytes = arena->capacity - arena->used;
    if (padding > free_bytes || size > free_bytes - padding) return NULL;
    uint8_t *p = arena->base + arena->used + padding;
    arena->used += padding + size;
    return p;
}

void *cradle_arena_alloc_zero(cradle_arena *arena, size_t size, size_t align) {
    void *p = cradle_arena_alloc(arena, size, align);
    if (p && size) memset(p, 0, size);
    return p;
}

cradle_arena_mark cradle_arena_mark_get(const cradle_arena *arena) { return arena->used; }

void cradle_arena_reset_to(cradle_arena *arena, cradle_arena_mark mark) {
    assert(mark <= arena->used && "mark is not from this arena or was already rolled past");
    arena->used = mark;
}

void cradle_arena_reset(cradle_arena *arena) { arena->used = 0; }

size_t cradle_arena_remaining(const cradle_arena *arena) { return arena->capacity - arena->used; }
