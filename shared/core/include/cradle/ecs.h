#ifndef CRADLE_ECS_H
#define CRADLE_ECS_H
/*
 * ecs: a sparse-set entity-component store (seed 004).
 *
 * Entities are 32-bit ids: a 24-bit index and an 8-bit generation,
 *   id = generation << 24 | index.
 * A live id's generation is never 0, so the id 0 (CRADLE_ENTITY_NONE) never
 * names an entity and can mean "none". Destroyed indices go to the back of a
 * FIFO free list and come back with the next generation (1..255, skipping 0),
 * so a stale id is detected (alive() is false, get() is NULL) instead of
 * resolving to the index's next occupant. An index is reused only after every
 * other free index was handed out, so aliasing a stale id needs 255 reuses of
 * that one index.
 *
 * Component types are numbered 0..component_count-1 and fixed at init, each
 * with an element size, alignment and capacity. Each type is a sparse set: a
 * packed dense array of elements with a parallel array of their entity ids,
 * plus a sparse array mapping an entity index to its dense position.
 * add, remove, get and has are O(1); remove moves the last element into the
 * hole, so dense arrays stay packed and iteration touches only live data.
 * A query over several types walks the smallest pool and checks the others in
 * O(1) per entity.
 *
 * Memory: the whole world lives in ONE caller-provided block, aligned to
 * CRADLE_ECS_ALIGN and cradle_ecs_bytes(config) long. The world is the block:
 * it starts with the header and holds only offsets and indices, never
 * pointers, so the block can be memcpy'd to another CRADLE_ECS_ALIGN-aligned
 * address (for instance inside a game's state block) and (cradle_ecs *)copy
 * keeps working there, with the original free to be zeroed or released.
 * Nothing allocates after init.
 *
 * Determinism: every result, including iteration order, depends only on the
 * configuration and the sequence of calls. Dense order is insertion order
 * disturbed only by remove's swap-with-last.
 *
 * Semantics fixed here:
 *  - destroy() removes every component of the entity (in type order), then
 *    frees its index.
 *  - add() on an entity that already has the component returns
 *    CRADLE_EECS_EXISTS and leaves the stored value untouched (use get() to
 *    overwrite).
 *  - Pointers returned by get(), data() and query_get() stay valid until the
 *    next add/remove/destroy on that component type (those may move elements)
 *    or until the block moves.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"

typedef uint32_t cradle_entity;

#define CRADLE_ENTITY_NONE 0u
#define CRADLE_ECS_INDEX_BITS 24u
#define CRADLE_ECS_INDEX_MASK 0x00FFFFFFu
#define CRADLE_ECS_MAX_ENTITIES (1u << 24)  /* every 24-bit index */
#define CRADLE_ECS_MAX_COMPONENTS 32u
#define CRADLE_ECS_MAX_ALIGN 16u            /* largest component alignment */
#define CRADLE_ECS_ALIGN 16u                /* alignment of the world block */
#define CRADLE_ECS_QUERY_MAX 8u             /* component types per query */

static inline uint32_t cradle_entity_index(cradle_entity e) { return e & CRADLE_ECS_INDEX_MASK; }
static inline uint32_t cradle_entity_generation(cradle_entity e) { return e >> CRADLE_ECS_INDEX_BITS; }

/* One component type. size > 0; align a power of two <= CRADLE_ECS_MAX_ALIGN
 * (0 means the largest power of two dividing size, capped at
 * CRADLE_ECS_MAX_ALIGN); capacity <= max_entities (0 means max_entities).
 * The stored element stride is size rounded up to align. */
typedef struct cradle_ecs_component_desc {
    uint32_t size;
    uint32_t align;
    uint32_t capacity;
} cradle_ecs_component_desc;

/* A desc for type T with capacity cap (0 = max_entities). */
#define CRADLE_ECS_COMPONENT(T, cap) \
    ((cradle_ecs_component_desc){.size = sizeof(T), .align = _Alignof(T), .capacity = (cap)})

typedef struct cradle_ecs_config {
    uint32_t max_entities;     /* 1..CRADLE_ECS_MAX_ENTITIES */
    uint32_t component_count;  /* 0..CRADLE_ECS_MAX_COMPONENTS */
    cradle_ecs_component_desc components[CRADLE_ECS_MAX_COMPONENTS];
} cradle_ecs_config;

/* Opaque: the header at the start of the world block. */
typedef struct cradle_ecs cradle_ecs;

/* ---- sizing at compile time ------------------------------------------------
 * A game's state block needs its size as a constant. cradle_ecs_bytes(config)
 * equals exactly
 *   CRADLE_ECS_BASE_BYTES(max_entities)
 *   + the sum over component types of
 *     CRADLE_ECS_COMPONENT_BYTES(max_entities, capacity, stride)
 * with capacity after defaulting (0 -> max_entities) and stride = size rounded
 * up to align (sizeof(T) for any C type T). The result must also fit in 32 bits
 * (cradle_ecs_bytes returns 0 otherwise). */
#define CRADLE_ECS_HEADER_BYTES 1024u
#define CRADLE_ECS__R16(n) ((((size_t)(n)) + 15u) & ~(size_t)15u)
#define CRADLE_ECS_BASE_BYTES(max_entities) \
    ((size_t)CRADLE_ECS_HEADER_BYTES + 2u * CRADLE_ECS__R16(4u * (size_t)(max_entities)))
#define CRADLE_ECS_COMPONENT_BYTES(max_entities, capacity, stride)                    \
    (CRADLE_ECS__R16(4u * (size_t)(max_entities)) + CRADLE_ECS__R16(4u * (size_t)(capacity)) + \
     CRADLE_ECS__R16((size_t)(capacity) * (size_t)(stride)))

/* ---- set-up ------------------------------------------------------------- */

/* Bytes of the world block for config, or 0 when the config is invalid (see
 * the limits above) or the world would not fit in 4 GiB. */
size_t cradle_ecs_bytes(const cradle_ecs_config *config);

/* Lays out an empty world in block (aligned to CRADLE_ECS_ALIGN and at least
 * cradle_ecs_bytes(config) long) and returns it (== block), or NULL when
 * block is NULL or misaligned, block_size is too small or the config is
 * invalid. O(max_entities). */
cradle_ecs *cradle_ecs_init(void *block, size_t block_size, const cradle_ecs_config *config);

/* The world in a block that init() laid out, at whatever address the block
 * now lives (after a memcpy, for instance). */
static inline cradle_ecs *cradle_ecs_of(void *block) { return (cradle_ecs *)block; }
static inline const cradle_ecs *cradle_ecs_of_const(const void *block) {
    return (const cradle_ecs *)block;
}

uint32_t cradle_ecs_max_entities(const cradle_ecs *ecs);
uint32_t cradle_ecs_component_count(const cradle_ecs *ecs);

/* ---- entities ----------------------------------------------------------- */

/* A new live entity with no components, or CRADLE_ENTITY_NONE when all
 * max_entities indices are live. */
cradle_entity cradle_ecs_create(cradle_ecs *ecs);

/* Removes every component of e, then frees its index (its id becomes stale).
 * Returns 0, or CRADLE_ESTALE when e is not a live id (nothing changes). */
int cradle_ecs_destroy(cradle_ecs *ecs, cradle_entity e);

/* True when e is a live id (false for CRADLE_ENTITY_NONE and stale ids). */
bool cradle_ecs_alive(const cradle_ecs *ecs, cradle_entity e);

/* Live entities. */
uint32_t cradle_ecs_live_count(const cradle_ecs *ecs);

/* ---- components --------------------------------------------------------
 * `component` must be < component_count (programmer error: asserts). */

/* Gives e the component, copying value (the type's size in bytes; NULL
 * zero-fills). Returns 0; CRADLE_ESTALE when e is not live; CRADLE_EECS_EXISTS
 * when e already has it (stored value unchanged); CRADLE_EFULL when the
 * type's capacity is used up. */
int cradle_ecs_add(cradle_ecs *ecs, cradle_entity e, uint32_t component, const void *value);

/* Takes the component from e; the type's last dense element moves into the
 * hole. Returns 0; CRADLE_ESTALE when e is not live; CRADLE_EECS_ABSENT when
 * e does not have it. */
int cradle_ecs_remove(cradle_ecs *ecs, cradle_entity e, uint32_t component);

/* e's component, or NULL when e is not live or lacks it. */
void *cradle_ecs_get(cradle_ecs *ecs, cradle_entity e, uint32_t component);
const void *cradle_ecs_get_const(const cradle_ecs *ecs, cradle_entity e, uint32_t component);
bool cradle_ecs_has(const cradle_ecs *ecs, cradle_entity e, uint32_t component);

/* Typed helper: CRADLE_ECS_GET(ecs, e, C_POSITION, position) -> position * */
#define CRADLE_ECS_GET(ecs, e, component, T) ((T *)cradle_ecs_get((ecs), (e), (component)))

/* ---- dense iteration over one type ---------------------------------------
 *   uint32_t n = cradle_ecs_count(w, C_POS);
 *   const cradle_entity *ids = cradle_ecs_entities(w, C_POS);
 *   position *p = cradle_ecs_data(w, C_POS);
 *   for (uint32_t i = 0; i < n; i++) ... ids[i], p[i] ...
 * Element i of data() belongs to entities()[i]. To remove elements while
 * walking, walk i downwards from n: the element moved into the hole has
 * already been visited. */
uint32_t cradle_ecs_count(const cradle_ecs *ecs, uint32_t component);
uint32_t cradle_ecs_capacity(const cradle_ecs *ecs, uint32_t component);
uint32_t cradle_ecs_stride(const cradle_ecs *ecs, uint32_t component);
const cradle_entity *cradle_ecs_entities(const cradle_ecs *ecs, uint32_t component);
void *cradle_ecs_data(cradle_ecs *ecs, uint32_t component);
const void *cradle_ecs_data_const(const cradle_ecs *ecs, uint32_t component);

/* ---- queries over several types --------------------------------------------
 *   cradle_ecs_query q;
 *   cradle_ecs_query_begin(&q, w, (uint32_t[]){C_POS, C_VEL}, 2);
 *   while (cradle_ecs_query_next(&q)) {
 *       position *p = cradle_ecs_query_get(&q, 0);   // slot 0 = C_POS
 *       velocity *v = cradle_ecs_query_get(&q, 1);   // slot 1 = C_VEL
 *       ... q.entity ...
 *   }
 * The query walks the dense array of the smallest listed type (ties: the
 * earliest listed), from its last element down to its first, and yields each
 * entity that has every listed type. The order is therefore deterministic.
 * During the walk the current entity may be destroyed or lose components,
 * and any entity may gain components (new elements are not visited). Removing
 * components of OTHER entities of the walked type may make the walk visit an
 * entity twice or skip one: defer such removals until the walk ends.
 * The iterator is a small value on the caller's stack; it points at the world
 * and must not outlive a move of the block. */
typedef struct cradle_ecs_query {
    const cradle_ecs *ecs;
    cradle_entity entity;                        /* current entity after next() */
    uint32_t count;                              /* listed types */
    uint32_t lead;                               /* slot of the walked type */
    uint32_t position;                           /* dense positions left to walk */
    uint32_t components[CRADLE_ECS_QUERY_MAX];
    uint32_t dense[CRADLE_ECS_QUERY_MAX];        /* current entity's position per slot */
} cradle_ecs_query;

/* Starts a query over count (1..CRADLE_ECS_QUERY_MAX) distinct component types
 * (programmer errors assert). A query begun on a const world must only read
 * through query_get(). */
void cradle_ecs_query_begin(cradle_ecs_query *query, const cradle_ecs *ecs,
                            const uint32_t *components, uint32_t count);

/* Moves to the next matching entity (query->entity); false when done. */
bool cradle_ecs_query_next(cradle_ecs_query *query);

/* The current entity's element of the type listed in `slot`. */
void *cradle_ecs_query_get(const cradle_ecs_query *query, uint32_t slot);

#endif
