/* Tests for grid: uniform-grid collision detection, compared with brute
 * force on random scenes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cradle/cradle.h"

#define MAX_OBJ 200u
#define SCENES 1000u

typedef struct object {
    uint32_t id;
    cradle_box box;
    uint32_t layer, mask;
} object;

static void *aligned_block(size_t size) {
    void *p = aligned_alloc(CRADLE_GRID_ALIGN, (size + 15u) & ~(size_t)15u);
    assert_non_null(p);
    return p;
}

/* Independent reference: overlap written as interval lengths in 64 bits. */
static bool brute_overlap(cradle_box a, cradle_box b) {
    int64_t left = a.x > b.x ? a.x : b.x;
    int64_t right = (int64_t)a.x + a.w < (int64_t)b.x + b.w ? (int64_t)a.x + a.w : (int64_t)b.x + b.w;
    int64_t top = a.y > b.y ? a.y : b.y;
    int64_t bottom = (int64_t)a.y + a.h < (int64_t)b.y + b.h ? (int64_t)a.y + a.h : (int64_t)b.y + b.h;
    return right - left > 0 && bottom - top > 0;
}

static bool brute_collide(const object *a, const object *b) {
    return brute_overlap(a->box, b->box) && ((a->mask & b->layer) || (b->mask & a->layer));
}

/* All colliding pairs, sorted by (insertion number, insertion number). */
static uint32_t brute_pairs(const object *o, uint32_t n, cradle_grid_pair *out) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n; j++)
            if (brute_collide(&o[i], &o[j])) out[k++] = (cradle_grid_pair){o[i].id, o[j].id};
    return k;
}

/* A coordinate that often lies exactly on a cell border, sometimes off the
 * rectangle on either side, sometimes anywhere. */
static int32_t coordinate(cradle_rng *rng, int32_t origin, int32_t extent, int32_t cell) {
    switch (cradle_rng_below(rng, 6)) {
    case 0: /* on a border, including the rectangle's own edges */
        return origin + cell * cradle_rng_range(rng, -2, extent / cell + 2);
    case 1: /* one off a border */
        return origin + cell * cradle_rng_range(rng, 0, extent / cell) + cradle_rng_range(rng, -1, 1);
    case 2: /* well outside */
        return cradle_rng_below(rng, 2) ? origin - cradle_rng_range(rng, 1, 3 * extent)
                                        : origin + extent + cradle_rng_range(rng, 0, 3 * extent);
    default:
        return cradle_rng_range(rng, origin - cell, origin + extent + cell);
    }
}

static int32_t extent_of(cradle_rng *rng, int32_t cell, int32_t world) {
    switch (cradle_rng_below(rng, 8)) {
    case 0: return 0;                                /* empty box */
    case 1: return cell * cradle_rng_range(rng, 1, 3); /* whole cells */
    case 2: return cradle_rng_range(rng, world / 2, world * 2); /* huge */
    default: return cradle_rng_range(rng, 1, cell * 2);
    }
}

static void test_random_scenes_match_brute_force(void **state) {
    (void)state;
    static object objs[MAX_OBJ];
    static cradle_grid_pair want[MAX_OBJ * MAX_OBJ / 2], got[MAX_OBJ * MAX_OBJ / 2];
    static uint32_t want_ids[MAX_OBJ], got_ids[MAX_OBJ];
    cradle_rng rng;
    cradle_rng_seed(&rng, 42, 3);
    uint32_t total_pairs = 0, overflowed = 0;
    for (uint32_t scene = 0; scene < SCENES; scene++) {
        cradle_grid_config cfg = {
            .x = cradle_rng_range(&rng, -5000, 5000),
            .y = cradle_rng_range(&rng, -5000, 5000),
            .width = cradle_rng_range(&rng, 1, 2000),
            .height = cradle_rng_range(&rng, 1, 2000),
            .cell_size = cradle_rng_range(&rng, 1, 400),
            .max_objects = 1u + cradle_rng_below(&rng, MAX_OBJ),
        };
        if (cradle_rng_below(&rng, 4) == 0) cfg.max_entries = cradle_rng_below(&rng, 50);
        if (cradle_rng_below(&rng, 4) == 0) cfg.large_cells = 1u + cradle_rng_below(&rng, 8);
        /* A small pair buffer sends busy steps down the slower exact path. */
        if (cradle_rng_below(&rng, 3) == 0) cfg.max_pairs = 1u + cradle_rng_below(&rng, 64);
        while ((uint64_t)CRADLE_GRID_COLUMNS(cfg.width, cfg.cell_size) *
                   CRADLE_GRID_COLUMNS(cfg.height, cfg.cell_size) > 20000)
            cfg.cell_size *= 2;
        size_t bytes = cradle_grid_bytes(&cfg);
        assert_true(bytes > 0);
        uint32_t entries = cfg.max_entries ? cfg.max_entries : 4u * cfg.max_objects;
        uint32_t pairs_cap = cfg.max_pairs ? cfg.max_pairs : 2u * cfg.max_objects;
        assert_int_equal(bytes, CRADLE_GRID_BYTES_PAIRS(cfg.width, cfg.height, cfg.cell_size,
                                                        cfg.max_objects, entries, pairs_cap));
        if (cfg.max_pairs == 0)
            assert_int_equal(bytes, CRADLE_GRID_BYTES(cfg.width, cfg.height, cfg.cell_size,
                                                      cfg.max_objects, entries));
        void *block = aligned_block(bytes);
        cradle_grid *g = cradle_grid_init(block, bytes, &cfg);
        assert_non_null(g);
        int32_t world = cfg.width > cfg.height ? cfg.width : cfg.height;
        /* Two rounds over the same grid check that clear() forgets. */
        for (int round = 0; round < 2; round++) {
            cradle_grid_clear(g);
            uint32_t n = cradle_rng_below(&rng, cfg.max_objects + 1);
            for (uint32_t i = 0; i < n; i++) {
                object *o = &objs[i];
                o->id = i * 7919u + (uint32_t)scene;
                o->box.x = coordinate(&rng, cfg.x, cfg.width, cfg.cell_size);
                o->box.y = coordinate(&rng, cfg.y, cfg.height, cfg.cell_size);
                o->box.w = extent_of(&rng, cfg.cell_size, world);
                o->box.h = extent_of(&rng, cfg.cell_size, world);
                o->layer = cradle_rng_below(&rng, 16);
                o->mask = cradle_rng_below(&rng, 16);
                assert_int_equal(cradle_grid_insert(g, o->id, o->box, o->layer, o->mask), 0);
            }
            assert_int_equal(cradle_grid_count(g), n);
            uint32_t nwant = brute_pairs(objs, n, want);
            uint32_t dropped = 99;
            uint32_t ngot = cradle_grid_pairs(g, got, MAX_OBJ * MAX_OBJ / 2, &dropped);
            assert_int_equal(ngot, nwant);
            assert_int_equal(dropped, 0);
            assert_memory_equal(got, want, sizeof(cradle_grid_pair) * nwant);
            total_pairs += nwant;
            overflowed += cradle_grid_overflow_count(g);
            /* A short buffer keeps the first pairs in order and counts the rest. */
            if (nwant > 0) {
                uint32_t cap = cradle_rng_below(&rng, nwant);
                ngot = cradle_grid_pairs(g, got, cap, &dropped);
                assert_int_equal(ngot, cap);
                assert_int_equal(dropped, nwant - cap);
                assert_memory_equal(got, want, sizeof(cradle_grid_pair) * cap);
            }
            /* Box queries. */
            for (int q = 0; q < 3; q++) {
                cradle_box box = {coordinate(&rng, cfg.x, cfg.width, cfg.cell_size),
                                  coordinate(&rng, cfg.y, cfg.height, cfg.cell_size),
                                  extent_of(&rng, cfg.cell_size, world),
                                  extent_of(&rng, cfg.cell_size, world)};
                uint32_t mask = cradle_rng_below(&rng, 16);
                uint32_t nw = 0;
                for (uint32_t i = 0; i < n; i++)
                    if ((objs[i].layer & mask) && brute_overlap(box, objs[i].box)) want_ids[nw++] = objs[i].id;
                uint32_t ng = cradle_grid_query(g, box, mask, got_ids, MAX_OBJ, &dropped);
                assert_int_equal(ng, nw);
                assert_int_equal(dropped, 0);
                assert_memory_equal(got_ids, want_ids, sizeof(uint32_t) * nw);
                if (nw > 1) {
                    ng = cradle_grid_query(g, box, mask, got_ids, nw - 1, &dropped);
                    assert_int_equal(ng, nw - 1);
                    assert_int_equal(dropped, 1);
                }
            }
        }
        free(block);
    }
    assert_true(total_pairs > 10000);
    assert_true(overflowed > 100);
}

/* Pairs and a few queries of the objects in g match brute force. */
static void check_against_brute_force(cradle_grid *g, const object *o, uint32_t n, cradle_rng *rng,
                                      cradle_box area) {
    static cradle_grid_pair want[MAX_OBJ * MAX_OBJ / 2], got[MAX_OBJ * MAX_OBJ / 2];
    static uint32_t want_ids[MAX_OBJ], got_ids[MAX_OBJ];
    uint32_t nwant = brute_pairs(o, n, want);
    uint32_t dropped = 99;
    assert_int_equal(cradle_grid_pairs(g, got, MAX_OBJ * MAX_OBJ / 2, &dropped), nwant);
    assert_int_equal(dropped, 0);
    assert_memory_equal(got, want, sizeof(cradle_grid_pair) * nwant);
    for (int q = 0; q < 8; q++) {
        cradle_box box = {cradle_rng_range(rng, area.x, area.x + area.w),
                          cradle_rng_range(rng, area.y, area.y + area.h),
                          cradle_rng_range(rng, 1, area.w / 4 + 1),
                          cradle_rng_range(rng, 1, area.h / 4 + 1)};
        uint32_t mask = cradle_rng_below(rng, 16);
        uint32_t nw = 0;
        for (uint32_t i = 0; i < n; i++)
            if ((o[i].layer & mask) && brute_overlap(box, o[i].box)) want_ids[nw++] = o[i].id;
        assert_int_equal(cradle_grid_query(g, box, mask, got_ids, MAX_OBJ, &dropped), nw);
        assert_int_equal(dropped, 0);
        assert_memory_equal(got_ids, want_ids, sizeof(uint32_t) * nw);
    }
}

/* Power-of-two cell sizes take a shift instead of a division; both must put
 * objects (including ones far outside, at the int32 limits) in the same
 * cells. The same scene is checked with cell sizes 2^k - 1, 2^k, 2^k + 1. */
static void test_power_of_two_cell_sizes(void **state) {
    (void)state;
    static object objs[MAX_OBJ];
    cradle_rng rng;
    cradle_rng_seed(&rng, 2024, 7);
    for (uint32_t scene = 0; scene < 60; scene++) {
        int32_t pow2 = (int32_t)1 << cradle_rng_range(&rng, 0, 12);
        cradle_box area = {cradle_rng_range(&rng, -100000, 100000), cradle_rng_range(&rng, -100000, 100000),
                           cradle_rng_range(&rng, 8, 40) * pow2, cradle_rng_range(&rng, 8, 40) * pow2};
        uint32_t n = 1u + cradle_rng_below(&rng, MAX_OBJ);
        for (uint32_t i = 0; i < n; i++) {
            object *o = &objs[i];
            o->id = i;
            o->layer = cradle_rng_below(&rng, 16);
            o->mask = cradle_rng_below(&rng, 16);
            switch (cradle_rng_below(&rng, 10)) {
            case 0: /* far outside, up to the int32 limits */
                o->box = (cradle_box){cradle_rng_below(&rng, 2) ? INT32_MIN : INT32_MAX - 2 * pow2,
                                      cradle_rng_range(&rng, area.y - 2 * pow2, area.y + area.h),
                                      cradle_rng_range(&rng, 1, 2 * pow2), cradle_rng_range(&rng, 1, 2 * pow2)};
                break;
            case 1: /* exactly on cell borders */
                o->box = (cradle_box){area.x + pow2 * cradle_rng_range(&rng, -1, area.w / pow2),
                                      area.y + pow2 * cradle_rng_range(&rng, -1, area.h / pow2), pow2, pow2};
                break;
            default:
                o->box = (cradle_box){cradle_rng_range(&rng, area.x - pow2, area.x + area.w),
                                      cradle_rng_range(&rng, area.y - pow2, area.y + area.h),
                                      cradle_rng_range(&rng, 1, 3 * pow2), cradle_rng_range(&rng, 1, 3 * pow2)};
            }
        }
        for (int32_t delta = -1; delta <= 1; delta++) {
            if (pow2 + delta < 1) continue;
            cradle_grid_config cfg = {.x = area.x, .y = area.y, .width = area.w, .height = area.h,
                                      .cell_size = pow2 + delta, .max_objects = MAX_OBJ};
            size_t bytes = cradle_grid_bytes(&cfg);
            void *block = aligned_block(bytes);
            cradle_grid *g = cradle_grid_init(block, bytes, &cfg);
            assert_non_null(g);
            for (uint32_t i = 0; i < n; i++)
                assert_int_equal(cradle_grid_insert(g, objs[i].id, objs[i].box, objs[i].layer, objs[i].mask), 0);
            cradle_rng qrng = rng; /* the same queries for every cell size */
            check_against_brute_force(g, objs, n, &qrng, area);
            free(block);
        }
        cradle_rng_next(&rng);
    }
}

/* Inserting after a query (the cells were built) and querying again, and a
 * clear after that, give the brute-force answers every time; so does the
 * overflow count, before and after the first query. */
static void test_insert_after_query(void **state) {
    (void)state;
    static object objs[MAX_OBJ];
    cradle_rng rng;
    cradle_rng_seed(&rng, 77, 2);
    cradle_grid_config cfg = {.x = -500, .y = -300, .width = 1000, .height = 600, .cell_size = 64,
                              .max_objects = MAX_OBJ, .max_entries = 300, .large_cells = 6};
    cradle_box area = {cfg.x, cfg.y, cfg.width, cfg.height};
    size_t bytes = cradle_grid_bytes(&cfg);
    void *block = aligned_block(bytes);
    cradle_grid *g = cradle_grid_init(block, bytes, &cfg);
    assert_non_null(g);
    for (int round = 0; round < 20; round++) {
        cradle_grid_clear(g);
        uint32_t n = 0, batches = 1u + cradle_rng_below(&rng, 4);
        uint64_t entries = 0;
        uint32_t overflowed = 0;
        for (uint32_t batch = 0; batch < batches; batch++) {
            uint32_t more = cradle_rng_below(&rng, MAX_OBJ / 4);
            for (uint32_t k = 0; k < more && n < MAX_OBJ; k++, n++) {
                object *o = &objs[n];
                o->id = 1000u + n;
                o->layer = cradle_rng_below(&rng, 16);
                o->mask = cradle_rng_below(&rng, 16);
                int32_t size = cradle_rng_below(&rng, 8) == 0 ? 300 : 40;
                o->box = (cradle_box){cradle_rng_range(&rng, -600, 600), cradle_rng_range(&rng, -400, 400),
                                      cradle_rng_range(&rng, 0, size), cradle_rng_range(&rng, 0, size)};
                assert_int_equal(cradle_grid_insert(g, o->id, o->box, o->layer, o->mask), 0);
                if (o->box.w == 0 || o->box.h == 0) continue;
                /* The model of the budget: cells covered, clamped to the grid. */
                int64_t cx0 = ((int64_t)o->box.x - cfg.x) / 64, cx1 = ((int64_t)o->box.x + o->box.w - 1 - cfg.x) / 64;
                int64_t cy0 = ((int64_t)o->box.y - cfg.y) / 64, cy1 = ((int64_t)o->box.y + o->box.h - 1 - cfg.y) / 64;
                int64_t cols = (cfg.width + 63) / 64, rows = (cfg.height + 63) / 64;
                cx0 = (int64_t)o->box.x < cfg.x ? 0 : cx0 >= cols ? cols - 1 : cx0;
                cx1 = (int64_t)o->box.x + o->box.w - 1 < cfg.x ? 0 : cx1 >= cols ? cols - 1 : cx1;
                cy0 = (int64_t)o->box.y < cfg.y ? 0 : cy0 >= rows ? rows - 1 : cy0;
                cy1 = (int64_t)o->box.y + o->box.h - 1 < cfg.y ? 0 : cy1 >= rows ? rows - 1 : cy1;
                uint64_t covered = (uint64_t)(cx1 - cx0 + 1) * (uint64_t)(cy1 - cy0 + 1);
                if (covered > cfg.large_cells || entries + covered > cfg.max_entries) {
                    overflowed++;
                } else {
                    entries += covered;
                }
            }
            assert_int_equal(cradle_grid_overflow_count(g), overflowed);
            check_against_brute_force(g, objs, n, &rng, area);
            assert_int_equal(cradle_grid_overflow_count(g), overflowed);
        }
    }
    free(block);
}

/* Every layer/mask combination over 3 bits, two unit boxes overlapping. */
static void test_every_layer_mask_combination(void **state) {
    (void)state;
    cradle_grid_config cfg = {.width = 100, .height = 100, .cell_size = 10, .max_objects = 2};
    size_t bytes = cradle_grid_bytes(&cfg);
    void *block = aligned_block(bytes);
    cradle_grid *g = cradle_grid_init(block, bytes, &cfg);
    cradle_grid_pair p[2];
    for (uint32_t la = 0; la < 8; la++)
        for (uint32_t ma = 0; ma < 8; ma++)
            for (uint32_t lb = 0; lb < 8; lb++)
                for (uint32_t mb = 0; mb < 8; mb++) {
                    cradle_grid_clear(g);
                    assert_int_equal(cradle_grid_insert(g, 1, (cradle_box){5, 5, 10, 10}, la, ma), 0);
                    assert_int_equal(cradle_grid_insert(g, 2, (cradle_box){9, 9, 10, 10}, lb, mb), 0);
                    bool want = (ma & lb) || (mb & la);
                    assert_int_equal(cradle_grid_pairs(g, p, 2, NULL), want ? 1u : 0u);
                    if (want) assert_true(p[0].a == 1 && p[0].b == 2);
                }
    free(block);
}

static void test_touching_edges_do_not_overlap(void **state) {
    (void)state;
    cradle_box a = {0, 0, 10, 10};
    assert_false(cradle_box_overlap(a, (cradle_box){10, 0, 5, 5}));  /* right edge */
    assert_false(cradle_box_overlap(a, (cradle_box){0, 10, 5, 5}));  /* bottom edge */
    assert_false(cradle_box_overlap(a, (cradle_box){10, 10, 5, 5})); /* corner */
    assert_false(cradle_box_overlap(a, (cradle_box){-5, 0, 5, 5}));  /* left edge */
    assert_true(cradle_box_overlap(a, (cradle_box){9, 9, 5, 5}));
    assert_false(cradle_box_overlap(a, (cradle_box){5, 5, 0, 3}));   /* empty */
    assert_false(cradle_box_overlap((cradle_box){5, 5, 0, 0}, (cradle_box){5, 5, 0, 0}));
    assert_true(cradle_box_overlap((cradle_box){INT32_MAX - 5, 0, 5, 5}, (cradle_box){INT32_MAX - 1, 0, 1, 1}));
}

static void test_insert_errors_and_capacity(void **state) {
    (void)state;
    cradle_grid_config cfg = {.x = -50, .y = -50, .width = 100, .height = 100, .cell_size = 10, .max_objects = 3};
    size_t bytes = cradle_grid_bytes(&cfg);
    unsigned char *block = aligned_block(bytes + 16);
    assert_null(cradle_grid_init(block + 8, bytes, &cfg));
    assert_null(cradle_grid_init(block, bytes - 1, &cfg));
    assert_null(cradle_grid_init(NULL, bytes, &cfg));
    cradle_grid *g = cradle_grid_init(block, bytes, &cfg);
    assert_non_null(g);
    assert_int_equal(cradle_grid_insert(g, 1, (cradle_box){0, 0, -1, 5}, 1, 1), CRADLE_EINVAL);
    assert_int_equal(cradle_grid_insert(g, 1, (cradle_box){INT32_MAX, 0, 1, 5}, 1, 1), CRADLE_EINVAL);
    assert_int_equal(cradle_grid_count(g), 0);
    /* Far outside on every side, still found. */
    assert_int_equal(cradle_grid_insert(g, 1, (cradle_box){-100000, 900000, 10, 10}, 1, 1), 0);
    assert_int_equal(cradle_grid_insert(g, 2, (cradle_box){-99995, 900005, 10, 10}, 1, 1), 0);
    assert_int_equal(cradle_grid_insert(g, 3, (cradle_box){INT32_MIN, INT32_MIN, INT32_MAX, INT32_MAX}, 1, 1), 0);
    assert_int_equal(cradle_grid_insert(g, 4, (cradle_box){0, 0, 1, 1}, 1, 1), CRADLE_EFULL);
    cradle_grid_pair p[4];
    uint32_t dropped;
    assert_int_equal(cradle_grid_pairs(g, p, 4, &dropped), 1);
    assert_true(p[0].a == 1 && p[0].b == 2);
    assert_int_equal(cradle_grid_pairs(g, NULL, 0, &dropped), 0);
    assert_int_equal(dropped, 1);
    uint32_t ids[4];
    assert_int_equal(cradle_grid_query(g, (cradle_box){-100000, 900000, 1, 1}, 1, ids, 4, NULL), 1);
    assert_int_equal(ids[0], 1);
    assert_int_equal(cradle_grid_query(g, (cradle_box){0, 0, -1, 1}, 1, ids, 4, &dropped), 0);

    cradle_grid_config bad = cfg;
    bad.cell_size = 0;
    assert_int_equal(cradle_grid_bytes(&bad), 0);
    bad = cfg;
    bad.width = -1;
    assert_int_equal(cradle_grid_bytes(&bad), 0);
    bad = cfg;
    bad.max_objects = 0;
    assert_int_equal(cradle_grid_bytes(&bad), 0);
    bad = cfg;
    bad.x = INT32_MAX - 10;
    assert_int_equal(cradle_grid_bytes(&bad), 0);
    bad = cfg;
    bad.cell_size = 1;
    bad.width = bad.height = 100000; /* 10^10 cells */
    assert_int_equal(cradle_grid_bytes(&bad), 0);
    assert_null(cradle_grid_init(block, bytes, &bad));
    free(block);
}

static void test_relocatable(void **state) {
    (void)state;
    cradle_grid_config cfg = {.width = 1000, .height = 1000, .cell_size = 50, .max_objects = 200};
    size_t bytes = cradle_grid_bytes(&cfg);
    void *a = aligned_block(bytes);
    cradle_grid *g = cradle_grid_init(a, bytes, &cfg);
    cradle_rng rng;
    cradle_rng_seed(&rng, 9, 9);
    for (uint32_t i = 0; i < 200; i++) {
        cradle_box b = {cradle_rng_range(&rng, 0, 990), cradle_rng_range(&rng, 0, 990), 40, 40};
        assert_int_equal(cradle_grid_insert(g, i, b, 1, 1), 0);
    }
    static cradle_grid_pair before[20000], after[20000];
    uint32_t n = cradle_grid_pairs(g, before, 20000, NULL);
    assert_true(n > 0);
    void *b = aligned_block(bytes);
    memcpy(b, a, bytes);
    memset(a, 0xFF, bytes);
    free(a);
    assert_int_equal(cradle_grid_pairs(cradle_grid_of(b), after, 20000, NULL), n);
    assert_memory_equal(before, after, n * sizeof before[0]);
    free(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_touching_edges_do_not_overlap),
        cmocka_unit_test(test_every_layer_mask_combination),
        cmocka_unit_test(test_insert_errors_and_capacity),
        cmocka_unit_test(test_relocatable),
        cmocka_unit_test(test_power_of_two_cell_sizes),
        cmocka_unit_test(test_insert_after_query),
        cmocka_unit_test(test_random_scenes_match_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
