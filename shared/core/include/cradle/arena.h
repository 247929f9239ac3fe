#ifndef CRADLE_ARENA_H
#define CRADLE_ARENA_H
/*
 * arena: a bump allocator over one caller-provided block (seed 002).
 *
 * Allocation moves an offset forward by the aligned size; nothing is freed
 * alone. mark/reset roll back to an earlier offset (per-line or per-frame
 * scratch). A request that does not fit returns NULL and changes nothing; the
 * arena never aborts. The arena does not own its block.
 */
#include <stddef.h>
#include <stdint.h>

typedef struct cradle_arena {
    uint8_t *base;
    size_t capacity;
    size_t used;
} cradle_arena;

typedef size_t cradle_arena_mark;

void cradle_arena_init(cradle_arena *arena, void *block, size_t capacity);

/* size bytes aligned to align (a power of two; asserted), or NULL when they
 * do not fit. A zero size returns a valid, aligned pointer consuming nothing
 * but padding. */
void *cradle_arena_alloc(cradle_arena *arena, size_t size, size_t align);

/* Like cradle_arena_alloc, then zero-filled. */
void *cradle_arena_alloc_zero(cradle_arena *arena, size_t size, size_t align);

cradle_arena_mark cradle_arena_mark_get(const cradle_arena *arena);
/* Rolls back to a mark taken earlier from this arena (asserted). */
void cradle_arena_reset_to(cradle_arena *arena, cradle_arena_mark mark);
/* Empties the arena. */
void cradle_arena_reset(cradle_arena *arena);
size_t cradle_arena_remaining(const cradle_arena *arena);

/* Typed allocation of n objects of type; NULL on overflow of the size too. */
#define CRADLE_ARENA_ALLOC_N(arena_ptr, type, n)                                              \
    ((type *)((size_t)(n) > SIZE_MAX / sizeof(type)                                           \
                  ? NULL                                                                      \
                  : cradle_arena_alloc((arena_ptr), sizeof(type) * (size_t)(n), _Alignof(type))))

#define CRADLE_ARENA_ALLOC(arena_ptr, type) CRADLE_ARENA_ALLOC_N(arena_ptr, type, 1)

#endif
