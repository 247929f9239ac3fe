/* Tests for ecs: the sparse-set entity-component store, checked step by step
 * against a naive reference model. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cradle/cradle.h"

typedef struct vec3 {
    int32_t x, y, z;
} vec3;

enum { C_U32, C_VEC3, C_BYTE, C_SMALL, C_COUNT };

#define MAX_E 600u
#define SMALL_CAP 40u
#define VALUE_MAX 16u

static cradle_ecs_config test_config(void) {
    cradle_ecs_config cfg = {.max_entities = MAX_E, .component_count = C_COUNT};
    cfg.components[C_U32] = CRADLE_ECS_COMPONENT(uint32_t, 0);
    cfg.components[C_VEC3] = CRADLE_ECS_COMPONENT(vec3, 0);
    cfg.components[C_BYTE] = (cradle_ecs_component_desc){.size = 1}; /* default align */
    cfg.components[C_SMALL] = (cradle_ecs_component_desc){.size = 10, .align = 2, .capacity = SMALL_CAP};
    return cfg;
}

static const uint32_t value_size[C_COUNT] = {4, 12, 1, 10};

static void *aligned_block(size_t size) {
    void *p = aligned_alloc(CRADLE_ECS_ALIGN, (size + CRADLE_ECS_ALIGN - 1) & ~(size_t)(CRADLE_ECS_ALIGN - 1));
    assert_non_null(p);
    memset(p, 0, size);
    return p;
}

/* ---- the reference model: plain arrays, a FIFO of free indices ---------- */

typedef struct model {
    bool alive[MAX_E];
    uint32_t generation[MAX_E];
    uint32_t queue[MAX_E]; /* free indices, FIFO ring */
    uint32_t queue_head, queue_len;
    uint32_t live;
    bool has[C_COUNT][MAX_E];
    uint8_t value[C_COUNT][MAX_E][VALUE_MAX];
    uint32_t count[C_COUNT];
} model;

static void model_init(model *m) {
    memset(m, 0, sizeof *m);
    for (uint32_t i = 0; i < MAX_E; i++) {
        m->generation[i] = 1;
        m->queue[i] = i;
    }
    m->queue_len = MAX_E;
}

static bool model_alive(const model *m, cradle_entity e) {
    uint32_t i = e & 0xFFFFFFu;
    return i < MAX_E && m->alive[i] && m->generation[i] == (e >> 24);
}

static cradle_entity model_create(model *m) {
    if (m->queue_len == 0) return CRADLE_ENTITY_NONE;
    uint32_t i = m->queue[m->queue_head];
    m->queue_head = (m->queue_head + 1) % MAX_E;
    m->queue_len--;
    m->alive[i] = true;
    m->live++;
    return (m->generation[i] << 24) | i;
}

static void model_destroy(model *m, cradle_entity e) {
    uint32_t i = e & 0xFFFFFFu;
    for (uint32_t c = 0; c < C_COUNT; c++) {
        if (m->has[c][i]) {
            m->has[c][i] = false;
            m->count[c]--;
        }
    }
    m->alive[i] = false;
    m->generation[i] = m->generation[i] == 255 ? 1 : m->generation[i] + 1;
    m->queue[(m->queue_head + m->queue_len) % MAX_E] = i;
    m->queue_len++;
    m->live--;
}

static uint32_t capacity_of(uint32_t c) { return c == C_SMALL ? SMALL_CAP : MAX_E; }

/* Full comparison of world and model. */
static void check_all(const cradle_ecs *w, const model *m) {
    assert_int_equal(cradle_ecs_live_count(w), m->live);
    for (uint32_t c = 0; c < C_COUNT; c++) {
        uint32_t n = cradle_ecs_count(w, c);
        assert_int_equal(n, m->count[c]);
        const cradle_entity *ids = cradle_ecs_entities(w, c);
        const uint8_t *data = cradle_ecs_data_const(w, c);
        uint32_t stride = cradle_ecs_stride(w, c);
        for (uint32_t k = 0; k < n; k++) {
            uint32_t i = ids[k] & 0xFFFFFFu;
            assert_true(model_alive(m, ids[k]));
            assert_true(m->has[c][i]);
            assert_memory_equal(data + (size_t)k * stride, m->value[c][i], value_size[c]);
            assert_ptr_equal(cradle_ecs_get_const(w, ids[k], c), data + (size_t)k * stride);
        }
    }
    /* A query over (C_U32, C_VEC3) yields exactly the model's set, once each. */
    static bool seen[MAX_E];
    memset(seen, 0, sizeof seen);
    uint32_t expected = 0;
    for (uint32_t i = 0; i < MAX_E; i++) expected += m->has[C_U32][i] && m->has[C_VEC3][i];
    cradle_ecs_query q;
    cradle_ecs_query_begin(&q, w, (const uint32_t[]){C_U32, C_VEC3}, 2);
    uint32_t got = 0;
    while (cradle_ecs_query_next(&q)) {
        uint32_t i = q.entity & 0xFFFFFFu;
        assert_true(model_alive(m, q.entity));
        assert_true(m->has[C_U32][i] && m->has[C_VEC3][i]);
        assert_false(seen[i]);
        seen[i] = true;
        assert_memory_equal(cradle_ecs_query_get(&q, 0), m->value[C_U32][i], 4);
        assert_memory_equal(cradle_ecs_query_get(&q, 1), m->value[C_VEC3][i], 12);
        got++;
    }
    assert_int_equal(got, expected);
    /* Three types, the capacity-limited one usually smallest. */
    expected = 0;
    for (uint32_t i = 0; i < MAX_E; i++)
        expected += m->has[C_BYTE][i] && m->has[C_SMALL][i] && m->has[C_U32][i];
    cradle_ecs_query_begin(&q, w, (const uint32_t[]){C_BYTE, C_SMALL, C_U32}, 3);
    got = 0;
    while (cradle_ecs_query_next(&q)) {
        uint32_t i = q.entity & 0xFFFFFFu;
        assert_true(m->has[C_BYTE][i] && m->has[C_SMALL][i] && m->has[C_U32][i]);
        assert_memory_equal(cradle_ecs_query_get(&q, 1), m->value[C_SMALL][i], 10);
        got++;
    }
    assert_int_equal(got, expected);
}

/* Picks an id to operate on: usually a live one, sometimes a stale or a
 * made-up one. */
static cradle_entity pick(cradle_rng *rng, const model *m, const cradle_entity *history,
                          uint32_t history_len) {
    uint32_t r = cradle_rng_below(rng, 10);
    if (r < 2 && history_len > 0) return history[cradle_rng_below(rng, history_len)];
    if (r == 2) return cradle_rng_next(rng);
    if (r == 3) return CRADLE_ENTITY_NONE;
    for (int tries = 0; tries < 8; tries++) {
        uint32_t i = cradle_rng_below(rng, MAX_E);
        if (m->alive[i]) return (m->generation[i] << 24) | i;
    }
    return history_len ? history[cradle_rng_below(rng, history_len)] : 0;
}

#define HISTORY 256u
#define OPS 150000u

static void test_random_against_model(void **state) {
    (void)state;
    cradle_ecs_config cfg = test_config();
    size_t bytes = cradle_ecs_bytes(&cfg);
    assert_true(bytes > 0);
    void *block = aligned_block(bytes);
    cradle_ecs *w = cradle_ecs_init(block, bytes, &cfg);
    assert_non_null(w);
    model *m = malloc(sizeof *m);
    assert_non_null(m);
    model_init(m);
    cradle_rng rng;
    cradle_rng_seed(&rng, 2024, 7);
    cradle_entity history[HISTORY] = {0};
    uint32_t history_len = 0, history_at = 0;
    uint32_t stats[8] = {0};

    for (uint32_t op = 0; op < OPS; op++) {
        if (op == OPS / 2) {
            /* Relocate mid-run: the copy carries on, the original is wiped. */
            void *moved = aligned_block(bytes);
            memcpy(moved, block, bytes);
            memset(block, 0xA5, bytes);
            free(block);
            block = moved;
            w = cradle_ecs_of(block);
        }
        uint32_t kind = cradle_rng_below(&rng, 100);
        /* Bias creation so the world fills up and empties in waves. */
        uint32_t phase = (op / 20000u) % 2u;
        uint32_t create_pct = phase ? 15 : 30;
        uint32_t c = cradle_rng_below(&rng, C_COUNT);
        if (kind < create_pct) {
            cradle_entity e = cradle_ecs_create(w);
            cradle_entity want = model_create(m);
            assert_int_equal(e, want);
            if (e != CRADLE_ENTITY_NONE) {
                assert_int_not_equal(e >> 24, 0);
                history[history_at] = e;
                history_at = (history_at + 1) % HISTORY;
                if (history_len < HISTORY) history_len++;
            }
            stats[e == CRADLE_ENTITY_NONE ? 6 : 0]++;
        } else if (kind < create_pct + 12) {
            cradle_entity e = pick(&rng, m, history, history_len);
            bool live = model_alive(m, e);
            assert_int_equal(cradle_ecs_destroy(w, e), live ? 0 : CRADLE_ESTALE);
            if (live) model_destroy(m, e);
            assert_false(cradle_ecs_alive(w, e));
            stats[1]++;
        } else if (kind < create_pct + 42) {
            cradle_entity e = pick(&rng, m, history, history_len);
            uint8_t value[VALUE_MAX];
            for (uint32_t b = 0; b < VALUE_MAX; b++) value[b] = (uint8_t)cradle_rng_next(&rng);
            bool null_value = cradle_rng_below(&rng, 8) == 0;
            if (null_value) memset(value, 0, sizeof value);
            int want;
            uint32_t i = e & 0xFFFFFFu;
            if (!model_alive(m, e)) {
                want = CRADLE_ESTALE;
            } else if (m->has[c][i]) {
                want = CRADLE_EECS_EXISTS;
            } else if (m->count[c] >= capacity_of(c)) {
                want = CRADLE_EFULL;
            } else {
                want = 0;
                m->has[c][i] = true;
                m->count[c]++;
                memcpy(m->value[c][i], value, value_size[c]);
            }
            assert_int_equal(cradle_ecs_add(w, e, c, null_value ? NULL : value), want);
            stats[2]++;
        } else if (kind < create_pct + 57) {
            cradle_entity e = pick(&rng, m, history, history_len);
            uint32_t i = e & 0xFFFFFFu;
            int want;
            if (!model_alive(m, e)) {
                want = CRADLE_ESTALE;
            } else if (!m->has[c][i]) {
                want = CRADLE_EECS_ABSENT;
            } else {
                want = 0;
                m->has[c][i] = false;
                m->count[c]--;
            }
            assert_int_equal(cradle_ecs_remove(w, e, c), want);
            stats[3]++;
        } else {
            cradle_entity e = pick(&rng, m, history, history_len);
            uint32_t i = e & 0xFFFFFFu;
            bool present = model_alive(m, e) && m->has[c][i];
            assert_int_equal(cradle_ecs_alive(w, e), model_alive(m, e));
            assert_int_equal(cradle_ecs_has(w, e, c), present);
            void *p = cradle_ecs_get(w, e, c);
            if (!present) {
                assert_null(p);
            } else {
                assert_non_null(p);
                assert_memory_equal(p, m->value[c][i], value_size[c]);
                /* Writes through get() stick. */
                uint8_t *bytes_p = p;
                bytes_p[0] ^= 0x5A;
                m->value[c][i][0] ^= 0x5A;
            }
            stats[4]++;
        }
        if (op % 997 == 0) check_all(w, m);
    }
    check_all(w, m);
    /* The run exercised every path, including a full world and stale ids. */
    for (int s = 0; s < 5; s++) assert_true(stats[s] > 1000);
    assert_true(stats[6] > 0); /* create() on a full world */
    free(m);
    free(block);
}

static void test_bytes_match_macros(void **state) {
    (void)state;
    cradle_ecs_config cfg = test_config();
    size_t want = CRADLE_ECS_BASE_BYTES(MAX_E) + CRADLE_ECS_COMPONENT_BYTES(MAX_E, MAX_E, 4) +
                  CRADLE_ECS_COMPONENT_BYTES(MAX_E, MAX_E, sizeof(vec3)) +
                  CRADLE_ECS_COMPONENT_BYTES(MAX_E, MAX_E, 1) +
                  CRADLE_ECS_COMPONENT_BYTES(MAX_E, SMALL_CAP, 10);
    assert_int_equal(cradle_ecs_bytes(&cfg), want);
    cradle_ecs_config none = {.max_entities = 5};
    assert_int_equal(cradle_ecs_bytes(&none), CRADLE_ECS_BASE_BYTES(5));
}

static void test_invalid_config_and_block(void **state) {
    (void)state;
    cradle_ecs_config cfg = test_config();
    size_t bytes = cradle_ecs_bytes(&cfg);
    unsigned char *block = aligned_block(bytes + 16);
    assert_null(cradle_ecs_init(NULL, bytes, &cfg));
    assert_null(cradle_ecs_init(block, bytes - 1, &cfg));
    assert_null(cradle_ecs_init(block + 8, bytes, &cfg)); /* misaligned */
    assert_null(cradle_ecs_init(block, bytes, NULL));
    cradle_ecs_config bad = cfg;
    bad.max_entities = 0;
    assert_int_equal(cradle_ecs_bytes(&bad), 0);
    bad = cfg;
    bad.max_entities = CRADLE_ECS_MAX_ENTITIES + 1;
    assert_int_equal(cradle_ecs_bytes(&bad), 0);
    bad = cfg;
    bad.component_count = CRADLE_ECS_MAX_COMPONENTS + 1;
    assert_int_equal(cradle_ecs_bytes(&bad), 0);
    bad = cfg;
    bad.components[1].size = 0;
    assert_int_equal(cradle_ecs_bytes(&bad), 0);
    bad = cfg;
    bad.components[1].align = 3;
    assert_int_equal(cradle_ecs_bytes(&bad), 0);
    bad = cfg;
    bad.components[1].align = 32;
    assert_int_equal(cradle_ecs_bytes(&bad), 0);
    bad = cfg;
    bad.components[1].capacity = MAX_E + 1;
    assert_int_equal(cradle_ecs_bytes(&bad), 0);
    bad = (cradle_ecs_config){.max_entities = CRADLE_ECS_MAX_ENTITIES, .component_count = 32};
    for (int c = 0; c < 32; c++) bad.components[c] = (cradle_ecs_component_desc){.size = 64};
    assert_int_equal(cradle_ecs_bytes(&bad), 0); /* beyond 4 GiB */
    assert_non_null(cradle_ecs_init(block, bytes, &cfg));
    free(block);
}

static void test_full_world_and_generations(void **state) {
    (void)state;
    cradle_ecs_config cfg = {.max_entities = 3, .component_count = 1};
    cfg.components[0] = CRADLE_ECS_COMPONENT(uint32_t, 0);
    size_t bytes = cradle_ecs_bytes(&cfg);
    void *block = aligned_block(bytes);
    cradle_ecs *w = cradle_ecs_init(block, bytes, &cfg);
    cradle_entity a = cradle_ecs_create(w), b = cradle_ecs_create(w), c = cradle_ecs_create(w);
    assert_int_equal(a, (1u << 24) | 0u);
    assert_int_equal(b, (1u << 24) | 1u);
    assert_int_equal(c, (1u << 24) | 2u);
    assert_int_equal(cradle_ecs_create(w), CRADLE_ENTITY_NONE);
    assert_false(cradle_ecs_alive(w, CRADLE_ENTITY_NONE));
    /* Destroyed indices come back in FIFO order with the next generation. */
    assert_int_equal(cradle_ecs_destroy(w, b), 0);
    assert_int_equal(cradle_ecs_destroy(w, a), 0);
    assert_int_equal(cradle_ecs_destroy(w, a), CRADLE_ESTALE);
    cradle_entity b2 = cradle_ecs_create(w);
    assert_int_equal(b2, (2u << 24) | 1u);
    assert_false(cradle_ecs_alive(w, b));
    assert_null(cradle_ecs_get(w, b, 0));
    assert_int_equal(cradle_ecs_add(w, b, 0, NULL), CRADLE_ESTALE);
    assert_int_equal(cradle_ecs_remove(w, b, 0), CRADLE_ESTALE);
    assert_int_equal(cradle_ecs_destroy(w, b), CRADLE_ESTALE);
    /* One index cycled through every generation: 1..255 then 1 again, never 0. */
    cradle_entity e = cradle_ecs_create(w); /* index 0, generation 2 */
    assert_int_equal(e, (2u << 24) | 0u);
    for (uint32_t round = 0; round < 600; round++) {
        uint32_t gen = e >> 24;
        assert_true(gen >= 1 && gen <= 255);
        assert_int_equal(cradle_ecs_destroy(w, e), 0);
        cradle_entity next = cradle_ecs_create(w);
        assert_int_equal(next & 0xFFFFFFu, 0u);
        assert_int_equal(next >> 24, gen == 255 ? 1u : gen + 1u);
        e = next;
    }
    free(block);
}

static void test_component_rules(void **state) {
    (void)state;
    cradle_ecs_config cfg = test_config();
    size_t bytes = cradle_ecs_bytes(&cfg);
    void *block = aligned_block(bytes);
    cradle_ecs *w = cradle_ecs_init(block, bytes, &cfg);
    cradle_entity e = cradle_ecs_create(w);
    vec3 v = {1, 2, 3}, v2 = {7, 8, 9};
    assert_int_equal(cradle_ecs_add(w, e, C_VEC3, &v), 0);
    assert_int_equal(cradle_ecs_add(w, e, C_VEC3, &v2), CRADLE_EECS_EXISTS);
    assert_int_equal(CRADLE_ECS_GET(w, e, C_VEC3, vec3)->z, 3); /* unchanged */
    assert_int_equal(cradle_ecs_add(w, e, C_BYTE, NULL), 0);
    assert_int_equal(*(uint8_t *)cradle_ecs_get(w, e, C_BYTE), 0);
    assert_int_equal(cradle_ecs_remove(w, e, C_U32), CRADLE_EECS_ABSENT);
    /* destroy removes every component */
    assert_int_equal(cradle_ecs_destroy(w, e), 0);
    for (uint32_t c = 0; c < C_COUNT; c++) assert_int_equal(cradle_ecs_count(w, c), 0);
    /* per-type capacity */
    for (uint32_t i = 0; i < SMALL_CAP; i++) {
        cradle_entity x = cradle_ecs_create(w);
        assert_int_equal(cradle_ecs_add(w, x, C_SMALL, NULL), 0);
    }
    cradle_entity x = cradle_ecs_create(w);
    assert_int_equal(cradle_ecs_add(w, x, C_SMALL, NULL), CRADLE_EFULL);
    assert_int_equal(cradle_ecs_capacity(w, C_SMALL), SMALL_CAP);
    assert_int_equal(cradle_ecs_stride(w, C_SMALL), 10);
    assert_int_equal(cradle_ecs_stride(w, C_BYTE), 1);
    free(block);
}

/* Runs a fixed sequence on a world; returns its query order as a checksum. */
static uint64_t scripted(cradle_ecs *w, uint64_t seed) {
    cradle_rng rng;
    cradle_rng_seed(&rng, seed, 1);
    for (int op = 0; op < 5000; op++) {
        uint32_t r = cradle_rng_below(&rng, 4);
        uint32_t i = cradle_rng_below(&rng, MAX_E);
        cradle_entity e = cradle_ecs_entities(w, C_U32)[0];
        if (r == 0 || cradle_ecs_count(w, C_U32) == 0) {
            e = cradle_ecs_create(w);
            uint32_t v = i;
            (void)cradle_ecs_add(w, e, C_U32, &v);
            (void)cradle_ecs_add(w, e, C_VEC3, NULL);
        } else if (r == 1) {
            (void)cradle_ecs_destroy(w, cradle_ecs_entities(w, C_U32)[i % cradle_ecs_count(w, C_U32)]);
        } else if (r == 2) {
            (void)cradle_ecs_remove(w, e, C_VEC3);
        } else {
            (void)cradle_ecs_add(w, e, C_VEC3, NULL);
        }
    }
    uint64_t h = 1469598103934665603ull;
    cradle_ecs_query q;
    cradle_ecs_query_begin(&q, w, (const uint32_t[]){C_VEC3, C_U32}, 2);
    while (cradle_ecs_query_next(&q)) h = (h ^ q.entity) * 1099511628211ull;
    return h;
}

static void test_deterministic_and_relocatable(void **state) {
    (void)state;
    cradle_ecs_config cfg = test_config();
    size_t bytes = cradle_ecs_bytes(&cfg);
    void *a = aligned_block(bytes), *b = aligned_block(bytes);
    uint64_t ha = scripted(cradle_ecs_init(a, bytes, &cfg), 5);
    uint64_t hb = scripted(cradle_ecs_init(b, bytes, &cfg), 5);
    assert_int_equal(ha, hb);
    assert_memory_equal(a, b, bytes); /* the same calls give the same bytes */

    /* Copy a to c, wipe and free a: c answers exactly as b does. */
    void *c = aligned_block(bytes);
    memcpy(c, a, bytes);
    memset(a, 0, bytes);
    free(a);
    cradle_ecs *wb = cradle_ecs_of(b), *wc = cradle_ecs_of(c);
    assert_int_equal(cradle_ecs_live_count(wc), cradle_ecs_live_count(wb));
    for (uint32_t k = 0; k < cradle_ecs_count(wb, C_U32); k++) {
        cradle_entity e = cradle_ecs_entities(wb, C_U32)[k];
        assert_true(cradle_ecs_alive(wc, e));
        assert_memory_equal(cradle_ecs_get(wc, e, C_U32), cradle_ecs_get(wb, e, C_U32), 4);
    }
    /* Both keep going identically after the move. */
    assert_int_equal(scripted(wc, 9), scripted(wb, 9));
    assert_memory_equal(b, c, bytes);
    free(b);
    free(c);
}

static void test_query_with_removal_of_current(void **state) {
    (void)state;
    cradle_ecs_config cfg = test_config();
    size_t bytes = cradle_ecs_bytes(&cfg);
    void *block = aligned_block(bytes);
    cradle_ecs *w = cradle_ecs_init(block, bytes, &cfg);
    for (uint32_t i = 0; i < 100; i++) {
        cradle_entity e = cradle_ecs_create(w);
        assert_int_equal(cradle_ecs_add(w, e, C_U32, &i), 0);
        if (i % 3 != 0) assert_int_equal(cradle_ecs_add(w, e, C_BYTE, NULL), 0);
    }
    /* Destroy every visited entity whose value is even: each is visited once. */
    static bool seen[100];
    cradle_ecs_query q;
    cradle_ecs_query_begin(&q, w, (const uint32_t[]){C_U32, C_BYTE}, 2);
    uint32_t visits = 0;
    while (cradle_ecs_query_next(&q)) {
        uint32_t v = *(uint32_t *)cradle_ecs_query_get(&q, 0);
        assert_true(v % 3 != 0);
        assert_false(seen[v]);
        seen[v] = true;
        visits++;
        if (v % 2 == 0) {
            assert_int_equal(cradle_ecs_destroy(w, q.entity), 0);
        } else {
            assert_int_equal(cradle_ecs_remove(w, q.entity, C_BYTE), 0);
        }
    }
    assert_int_equal(visits, 66);
    assert_int_equal(cradle_ecs_count(w, C_BYTE), 0);
    assert_int_equal(cradle_ecs_live_count(w), 100 - 33);
    free(block);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_match_macros),
        cmocka_unit_test(test_invalid_config_and_block),
        cmocka_unit_test(test_full_world_and_generations),
        cmocka_unit_test(test_component_rules),
        cmocka_unit_test(test_deterministic_and_relocatable),
        cmocka_unit_test(test_query_with_removal_of_current),
        cmocka_unit_test(test_random_against_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
