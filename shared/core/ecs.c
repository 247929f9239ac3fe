#include "cradle/ecs.h"

#include <assert.h>
#include <string.h>

/*
 * Block layout (every region starts on a 16-byte boundary):
 *   header                      CRADLE_ECS_HEADER_BYTES
 *   meta[max_entities]          u32: generation (bits 0..7), ALIVE bit
 *   next[max_entities]          u32: FIFO free-list link
 *   per component type c:
 *     sparse[max_entities]      u32: entity index -> dense position or ABSENT
 *     entities[capacity]        cradle_entity of each dense element
 *     data[capacity * stride]   the elements
 * Everything is addressed by offsets from the header, so the block is
 * relocatable.
 */

#define META_GENERATION 0xFFu
#define META_ALIVE 0x100u
#define ABSENT UINT32_MAX
#define END UINT32_MAX

typedef struct ecs_pool {
    uint32_t size;   /* bytes copied in by add() */
    uint32_t stride; /* size rounded up to the alignment */
    uint32_t capacity;
    uint32_t count;
    uint32_t sparse_offset;
    uint32_t entities_offset;
    uint32_t data_offset;
} ecs_pool;

struct cradle_ecs {
    uint32_t max_entities;
    uint32_t component_count;
    uint32_t live;
    uint32_t free_head; /* END when every index is live */
    uint32_t free_tail;
    uint32_t meta_offset;
    uint32_t next_offset;
    uint32_t total_bytes;
    ecs_pool pools[CRADLE_ECS_MAX_COMPONENTS];
};

_Static_assert(sizeof(struct cradle_ecs) <= CRADLE_ECS_HEADER_BYTES,
               "CRADLE_ECS_HEADER_BYTES must cover the header");
_Static_assert(CRADLE_ECS_HEADER_BYTES % 16u == 0, "regions stay 16-byte aligned");

static size_t r16(size_t n) { return (n + 15u) & ~(size_t)15u; }

static uint32_t default_align(uint32_t size) {
    uint32_t align = 1;
    while (align < CRADLE_ECS_MAX_ALIGN && size % (align * 2u) == 0) align *= 2u;
    return align;
}

/* Fills a copy of the component descs with defaults applied; false when the
 * config is invalid. */
static bool normalise(const cradle_ecs_config *config, cradle_ecs_component_desc *out) {
    if (config == NULL) return false;
    if (config->max_entities == 0 || config->max_entities > CRADLE_ECS_MAX_ENTITIES) return false;
    if (config->component_count > CRADLE_ECS_MAX_COMPONENTS) return false;
    for (uint32_t c = 0; c < config->component_count; c++) {
        cradle_ecs_component_desc d = config->components[c];
        if (d.size == 0) return false;
        if (d.align == 0) d.align = default_align(d.size);
        if ((d.align & (d.align - 1u)) != 0 || d.align > CRADLE_ECS_MAX_ALIGN) return false;
        if (d.capacity == 0) d.capacity = config->max_entities;
        if (d.capacity > config->max_entities) return false;
        if (d.size > UINT32_MAX - d.align) return false;
        out[c] = d;
    }
    return true;
}

static uint32_t stride_of(cradle_ecs_component_desc d) {
    return (d.size + d.align - 1u) & ~(d.align - 1u);
}

size_t cradle_ecs_bytes(const cradle_ecs_config *config) {
    cradle_ecs_component_desc descs[CRADLE_ECS_MAX_COMPONENTS];
    if (!normalise(config, descs)) return 0;
    /* Sizes are computed in 64 bits so a huge config is refused, not wrapped. */
    uint64_t total = CRADLE_ECS_BASE_BYTES(config->max_entities);
    for (uint32_t c = 0; c < config->component_count; c++) {
        total += CRADLE_ECS_COMPONENT_BYTES(config->max_entities, descs[c].capacity,
                                            (uint64_t)stride_of(descs[c]));
        if (total > UINT32_MAX) return 0;
    }
    return total > UINT32_MAX ? 0 : (size_t)total;
}

static unsigned char *base(const cradle_ecs *ecs) {
    return (unsigned char *)(uintptr_t)ecs;
}

static uint32_t *meta(const cradle_ecs *ecs) {
    return (uint32_t *)(void *)(base(ecs) + ecs->meta_offset);
}

static uint32_t *next_free(const cradle_ecs *ecs) {
    return (uint32_t *)(void *)(base(ecs) + ecs->next_offset);
}

static uint32_t *sparse(const cradle_ecs *ecs, const ecs_pool *pool) {
    return (uint32_t *)(void *)(base(ecs) + pool->sparse_offset);
}

static cradle_entity *dense_ids(const cradle_ecs *ecs, const ecs_pool *pool) {
    return (cradle_entity *)(void *)(base(ecs) + pool->entities_offset);
}

static unsigned char *dense_data(const cradle_ecs *ecs, const ecs_pool *pool) {
    return base(ecs) + pool->data_offset;
}

cradle_ecs *cradle_ecs_init(void *block, size_t block_size, const cradle_ecs_config *config) {
    size_t need = cradle_ecs_bytes(config);
    if (need == 0 || block == NULL || block_size < need) return NULL;
    if ((uintptr_t)block % CRADLE_ECS_ALIGN != 0) return NULL;
    cradle_ecs_component_desc descs[CRADLE_ECS_MAX_COMPONENTS];
    (void)normalise(config, descs);

    cradle_ecs *ecs = block;
    memset(ecs, 0, CRADLE_ECS_HEADER_BYTES);
    uint32_t max = config->max_entities;
    size_t at = CRADLE_ECS_HEADER_BYTES;
    ecs->max_entities = max;
    ecs->component_count = config->component_count;
    ecs->meta_offset = (uint32_t)at;
    at += r16(4u * (size_t)max);
    ecs->next_offset = (uint32_t)at;
    at += r16(4u * (size_t)max);
    for (uint32_t c = 0; c < config->component_count; c++) {
        ecs_pool *pool = &ecs->pools[c];
        pool->size = descs[c].size;
        pool->stride = stride_of(descs[c]);
        pool->capacity = descs[c].capacity;
        pool->count = 0;
        pool->sparse_offset = (uint32_t)at;
        at += r16(4u * (size_t)max);
        pool->entities_offset = (uint32_t)at;
        at += r16(4u * (size_t)pool->capacity);
        pool->data_offset = (uint32_t)at;
        at += r16((size_t)pool->capacity * pool->stride);
        uint32_t *sp = sparse(ecs, pool);
        for (uint32_t i = 0; i < max; i++) sp[i] = ABSENT;
    }
    assert(at == need);
    ecs->total_bytes = (uint32_t)at;

    /* Every index starts free, generation 1, queued in index order. */
    uint32_t *m = meta(ecs);
    uint32_t *next = next_free(ecs);
    for (uint32_t i = 0; i < max; i++) {
        m[i] = 1u;
        next[i] = i + 1u < max ? i + 1u : END;
    }
    ecs->free_head = 0;
    ecs->free_tail = max - 1u;
    ecs->live = 0;
    return ecs;
}

uint32_t cradle_ecs_max_entities(const cradle_ecs *ecs) { return ecs->max_entities; }
uint32_t cradle_ecs_component_count(const cradle_ecs *ecs) { return ecs->component_count; }
uint32_t cradle_ecs_live_count(const cradle_ecs *ecs) { return ecs->live; }

cradle_entity cradle_ecs_create(cradle_ecs *ecs) {
    if (ecs->free_head == END) return CRADLE_ENTITY_NONE;
    uint32_t index = ecs->free_head;
    uint32_t *next = next_free(ecs);
    ecs->free_head = next[index];
    if (ecs->free_head == END) ecs->free_tail = END;
    next[index] = END;
    uint32_t *m = meta(ecs);
    m[index] |= META_ALIVE;
    ecs->live++;
    return ((m[index] & META_GENERATION) << CRADLE_ECS_INDEX_BITS) | index;
}

/* The public functions call these static helpers rather than each other:
 * the library is built position independent, where a call between two
 * exported functions goes through the PLT and is never inlined. */
static inline bool entity_live(const cradle_ecs *ecs, cradle_entity e) {
    uint32_t index = cradle_entity_index(e);
    if (index >= ecs->max_entities) return false;
    uint32_t m = meta(ecs)[index];
    /* Alive with e's generation, in one compare. A live slot's generation is
     * never 0, so CRADLE_ENTITY_NONE never matches. */
    return (m & (META_ALIVE | META_GENERATION)) == (META_ALIVE | cradle_entity_generation(e));
}

bool cradle_ecs_alive(const cradle_ecs *ecs, cradle_entity e) { return entity_live(ecs, e); }

static const ecs_pool *pool_of(const cradle_ecs *ecs, uint32_t component) {
    assert(component < ecs->component_count);
    return &ecs->pools[component];
}

/* Removes dense element `position` of pool: the last element moves into it. */
static void pool_erase(cradle_ecs *ecs, ecs_pool *pool, uint32_t index, uint32_t position) {
    uint32_t *sp = sparse(ecs, pool);
    cradle_entity *ids = dense_ids(ecs, pool);
    uint32_t last = pool->count - 1u;
    if (position != last) {
        cradle_entity moved = ids[last];
        ids[position] = moved;
        memcpy(dense_data(ecs, pool) + (size_t)position * pool->stride,
               dense_data(ecs, pool) + (size_t)last * pool->stride, pool->stride);
        sp[cradle_entity_index(moved)] = position;
    }
    sp[index] = ABSENT;
    pool->count = last;
}

int cradle_ecs_destroy(cradle_ecs *ecs, cradle_entity e) {
    if (!entity_live(ecs, e)) return CRADLE_ESTALE;
    uint32_t index = cradle_entity_index(e);
    for (uint32_t c = 0; c < ecs->component_count; c++) {
        ecs_pool *pool = &ecs->pools[c];
        uint32_t position = sparse(ecs, pool)[index];
        if (position != ABSENT) pool_erase(ecs, pool, index, position);
    }
    uint32_t *m = meta(ecs);
    uint32_t generation = (m[index] & META_GENERATION) % 255u + 1u; /* 1..255, never 0 */
    m[index] = generation;
    uint32_t *next = next_free(ecs);
    next[index] = END;
    if (ecs->free_tail == END) {
        ecs->free_head = index;
    } else {
        next[ecs->free_tail] = index;
    }
    ecs->free_tail = index;
    ecs->live--;
    return 0;
}

int cradle_ecs_add(cradle_ecs *ecs, cradle_entity e, uint32_t component, const void *value) {
    ecs_pool *pool = (ecs_pool *)(uintptr_t)pool_of(ecs, component);
    if (!entity_live(ecs, e)) return CRADLE_ESTALE;
    uint32_t index = cradle_entity_index(e);
    uint32_t *sp = sparse(ecs, pool);
    if (sp[index] != ABSENT) return CRADLE_EECS_EXISTS;
    if (pool->count >= pool->capacity) return CRADLE_EFULL;
    uint32_t position = pool->count++;
    sp[index] = position;
    dense_ids(ecs, pool)[position] = e;
    unsigned char *at = dense_data(ecs, pool) + (size_t)position * pool->stride;
    /* The whole stride is written so padding bytes are deterministic (state
     * blocks are hashed). */
    memset(at, 0, pool->stride);
    if (value) memcpy(at, value, pool->size);
    return 0;
}

int cradle_ecs_remove(cradle_ecs *ecs, cradle_entity e, uint32_t component) {
    ecs_pool *pool = (ecs_pool *)(uintptr_t)pool_of(ecs, component);
    if (!entity_live(ecs, e)) return CRADLE_ESTALE;
    uint32_t index = cradle_entity_index(e);
    uint32_t position = sparse(ecs, pool)[index];
    if (position == ABSENT) return CRADLE_EECS_ABSENT;
    pool_erase(ecs, pool, index, position);
    return 0;
}

static inline unsigned char *element_of(const cradle_ecs *ecs, cradle_entity e,
                                        uint32_t component) {
    const ecs_pool *pool = pool_of(ecs, component);
    if (!entity_live(ecs, e)) return NULL;
    uint32_t position = sparse(ecs, pool)[cradle_entity_index(e)];
    if (position == ABSENT) return NULL;
    return dense_data(ecs, pool) + (size_t)position * pool->stride;
}

const void *cradle_ecs_get_const(const cradle_ecs *ecs, cradle_entity e, uint32_t component) {
    return element_of(ecs, e, component);
}

void *cradle_ecs_get(cradle_ecs *ecs, cradle_entity e, uint32_t component) {
    return element_of(ecs, e, component);
}

bool cradle_ecs_has(const cradle_ecs *ecs, cradle_entity e, uint32_t component) {
    return element_of(ecs, e, component) != NULL;
}

uint32_t cradle_ecs_count(const cradle_ecs *ecs, uint32_t component) {
    return pool_of(ecs, component)->count;
}

uint32_t cradle_ecs_capacity(const cradle_ecs *ecs, uint32_t component) {
    return pool_of(ecs, component)->capacity;
}

uint32_t cradle_ecs_stride(const cradle_ecs *ecs, uint32_t component) {
    return pool_of(ecs, component)->stride;
}

const cradle_entity *cradle_ecs_entities(const cradle_ecs *ecs, uint32_t component) {
    return dense_ids(ecs, pool_of(ecs, component));
}

const void *cradle_ecs_data_const(const cradle_ecs *ecs, uint32_t component) {
    return dense_data(ecs, pool_of(ecs, component));
}

void *cradle_ecs_data(cradle_ecs *ecs, uint32_t component) {
    return dense_data(ecs, pool_of(ecs, component));
}

void cradle_ecs_query_begin(cradle_ecs_query *query, const cradle_ecs *ecs,
                            const uint32_t *components, uint32_t count) {
    assert(query != NULL && ecs != NULL && components != NULL);
    assert(count >= 1 && count <= CRADLE_ECS_QUERY_MAX);
    memset(query, 0, sizeof *query);
    query->ecs = ecs;
    query->count = count;
    uint32_t lead = 0;
    for (uint32_t s = 0; s < count; s++) {
        assert(components[s] < ecs->component_count);
        for (uint32_t t = 0; t < s; t++) assert(components[t] != components[s]);
        query->components[s] = components[s];
        if (ecs->pools[components[s]].count < ecs->pools[components[lead]].count) lead = s;
    }
    query->lead = lead;
    query->position = ecs->pools[components[lead]].count;
    query->entity = CRADLE_ENTITY_NONE;
}

/* query_next() for two types, the common case: one sparse array to check,
 * the walk position in a register. */
static bool query_next_pair(cradle_ecs_query *query) {
    const cradle_ecs *ecs = query->ecs;
    const uint32_t lead_slot = query->lead, other_slot = 1u - lead_slot;
    const ecs_pool *lead = &ecs->pools[query->components[lead_slot]];
    const cradle_entity *ids = dense_ids(ecs, lead);
    const uint32_t *other = sparse(ecs, &ecs->pools[query->components[other_slot]]);
    uint32_t position = query->position;
    while (position > 0) {
        position--;
        /* Elements removed behind the walk shrink the pool; skip past its end. */
        if (position >= lead->count) continue;
        cradle_entity e = ids[position];
        uint32_t p = other[cradle_entity_index(e)];
        if (p == ABSENT) continue;
        query->position = position;
        query->dense[lead_slot] = position;
        query->dense[other_slot] = p;
        query->entity = e;
        return true;
    }
    query->position = 0;
    query->entity = CRADLE_ENTITY_NONE;
    return false;
}

bool cradle_ecs_query_next(cradle_ecs_query *query) {
    if (query->count == 2) return query_next_pair(query);
    const cradle_ecs *ecs = query->ecs;
    const ecs_pool *lead = &ecs->pools[query->components[query->lead]];
    const cradle_entity *ids = dense_ids(ecs, lead);
    while (query->position > 0) {
        uint32_t position = --query->position;
        /* Elements removed behind the walk shrink the pool; skip past its end. */
        if (position >= lead->count) continue;
        cradle_entity e = ids[position];
        uint32_t index = cradle_entity_index(e);
        bool all = true;
        for (uint32_t s = 0; s < query->count; s++) {
            if (s == query->lead) {
                query->dense[s] = position;
                continue;
            }
            uint32_t p = sparse(ecs, &ecs->pools[query->components[s]])[index];
            if (p == ABSENT) {
                all = false;
                break;
            }
            query->dense[s] = p;
        }
        if (all) {
            query->entity = e;
            return true;
        }
    }
    query->entity = CRADLE_ENTITY_NONE;
    return false;
}

void *cradle_ecs_query_get(const cradle_ecs_query *query, uint32_t slot) {
    assert(slot < query->count);
    const ecs_pool *pool = &query->ecs->pools[query->components[slot]];
    return dense_data(query->ecs, pool) + (size_t)query->dense[slot] * pool->stride;
}
