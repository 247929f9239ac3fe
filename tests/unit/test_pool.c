/* Tests for pool: generational handles over one relocatable block (seed 000). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cradle/cradle.h"

#define CAP 8u

static _Alignas(64) uint8_t block_a[8192];
static _Alignas(64) uint8_t block_b[8192];

static cradle_pool *make_i32_pool(uint8_t *block, uint32_t capacity) {
    size_t need = cradle_pool_bytes(capacity, sizeof(int32_t), _Alignof(int32_t));
    assert_true(need > 0 && need <= sizeof block_a);
    memset(block, 0xCD, need); /* init must not rely on zeroed memory */
    cradle_pool *p = cradle_pool_init(block, need, capacity, sizeof(int32_t), _Alignof(int32_t));
    assert_non_null(p);
    return p;
}

static int32_t value_of(cradle_pool *p, cradle_pool_handle h) {
    int32_t *v = cradle_pool_get(p, h);
    assert_non_null(v);
    return *v;
}

static bool is_none(cradle_pool_handle h) { return h.index == 0 && h.generation == 0; }

/* ---- layout and init -------------------------------------------------------- */

static void test_bytes_and_bad_args(void **state) {
    (void)state;
    assert_int_equal(cradle_pool_bytes(0, 4, 4), 0);
    assert_int_equal(cradle_pool_bytes(CRADLE_POOL_MAX_CAPACITY + 1u, 4, 4), 0);
    assert_int_equal(cradle_pool_bytes(UINT32_MAX, 4, 4), 0);
    assert_int_equal(cradle_pool_bytes(4, 0, 4), 0);
    assert_int_equal(cradle_pool_bytes(4, 4, 0), 0);
    assert_int_equal(cradle_pool_bytes(4, 4, 3), 0);
    assert_int_equal(cradle_pool_bytes(4, 4, 12), 0);
    assert_int_equal(cradle_pool_bytes(4, 4, 8192), 0);
    /* a stride that would not fit the header's 32 bits */
    assert_int_equal(cradle_pool_bytes(1, UINT32_MAX, 2), 0);
    assert_int_equal(cradle_pool_bytes(1, UINT32_MAX - 100u, 4096), 0);
    assert_true(cradle_pool_bytes(1, UINT32_MAX, 1) > UINT32_MAX);

    /* values after the header and bookkeeping, each stride rounded up */
    size_t n = cradle_pool_bytes(CAP, 5, 4);
    assert_true(n >= sizeof(cradle_pool) + 2u * 4u * CAP + 8u * CAP);
    assert_true(cradle_pool_bytes(CRADLE_POOL_MAX_CAPACITY, 1, 1) > 0);

    uint8_t *aligned = block_a;
    size_t need = cradle_pool_bytes(CAP, 16, 16);
    assert_null(cradle_pool_init(NULL, need, CAP, 16, 16));
    assert_null(cradle_pool_init(aligned, need - 1, CAP, 16, 16));
    assert_null(cradle_pool_init(aligned, 0, CAP, 16, 16));
    assert_null(cradle_pool_init(aligned + 4, need, CAP, 16, 16)); /* misaligned for 16 */
    assert_null(cradle_pool_init(aligned + 1, need, CAP, 1, 1)); /* misaligned for the header */
    assert_null(cradle_pool_init(aligned, sizeof block_a, 0, 16, 16));
    assert_null(cradle_pool_init(aligned, sizeof block_a, CAP, 0, 16));
    assert_null(cradle_pool_init(aligned, sizeof block_a, CAP, 16, 6));
    cradle_pool *p = cradle_pool_init(aligned, need, CAP, 16, 16);
    assert_ptr_equal(p, aligned);
    assert_int_equal(p->capacity, CAP);
    assert_int_equal(p->live, 0);
}

/* ---- create, destroy, get ------------------------------------------------------ */

static void test_create_until_full(void **state) {
    (void)state;
    cradle_pool *p = make_i32_pool(block_a, CAP);
    cradle_pool_handle h[CAP];
    for (uint32_t i = 0; i < CAP; i++) {
        int32_t v = (int32_t)i * 10 - 3;
        h[i] = cradle_pool_create(p, &v);
        assert_false(is_none(h[i]));
        assert_true(h[i].index < CAP);
        assert_int_equal(h[i].generation & 1u, 1u);
        assert_int_equal(p->live, i + 1);
        for (uint32_t j = 0; j < i; j++) assert_int_not_equal(h[i].index, h[j].index);
    }
    int32_t extra = 99;
    cradle_pool_handle full = cradle_pool_create(p, &extra);
    assert_true(is_none(full));
    assert_int_equal(p->live, CAP);
    for (uint32_t i = 0; i < CAP; i++) {
        assert_true(cradle_pool_contains(p, h[i]));
        assert_int_equal(value_of(p, h[i]), (int32_t)i * 10 - 3);
    }
    /* one destroyed: exactly one more fits */
    assert_true(cradle_pool_destroy(p, h[3]));
    assert_false(is_none(cradle_pool_create(p, &extra)));
    assert_true(is_none(cradle_pool_create(p, &extra)));
}

static void test_destroy(void **state) {
    (void)state;
    cradle_pool *p = make_i32_pool(block_a, CAP);
    int32_t v = 5;
    cradle_pool_handle h = cradle_pool_create(p, &v);
    cradle_pool_handle other = cradle_pool_create(p, &v);
    assert_true(cradle_pool_destroy(p, h));
    assert_int_equal(p->live, 1);
    assert_false(cradle_pool_contains(p, h));
    assert_null(cradle_pool_get(p, h));
    /* a second destroy of the same handle does nothing */
    assert_false(cradle_pool_destroy(p, h));
    assert_int_equal(p->live, 1);
    assert_true(cradle_pool_contains(p, other));
    /* handles that name no slot or a forged generation never resolve */
    cradle_pool_handle out = {.index = CAP, .generation = 1};
    cradle_pool_handle way_out = {.index = UINT32_MAX, .generation = 1};
    cradle_pool_handle even = {.index = other.index, .generation = other.generation + 1u};
    cradle_pool_handle older = {.index = other.index, .generation = other.generation + 2u};
    assert_false(cradle_pool_contains(p, out));
    assert_false(cradle_pool_contains(p, way_out));
    assert_false(cradle_pool_contains(p, even));
    assert_false(cradle_pool_contains(p, older));
    assert_false(cradle_pool_destroy(p, out));
    assert_false(cradle_pool_destroy(p, even));
    assert_null(cradle_pool_get(p, way_out));
    assert_int_equal(p->live, 1);
    assert_true(cradle_pool_contains(p, other));
}

static void test_stale_handle_after_slot_reuse(void **state) {
    (void)state;
    /* seed 000: "a stale handle does not resolve to the slot's new occupant" */
    cradle_pool *p = make_i32_pool(block_a, CAP);
    int32_t one = 1, two = 2;
    cradle_pool_handle old = cradle_pool_create(p, &one);
    assert_true(cradle_pool_destroy(p, old));
    cradle_pool_handle new = cradle_pool_create(p, &two);
    assert_int_equal(old.index, new.index); /* the freed slot is reused */
    assert_int_not_equal(old.generation, new.generation);
    assert_null(cradle_pool_get(p, old));
    assert_false(cradle_pool_contains(p, old));
    assert_false(cradle_pool_destroy(p, old)); /* and cannot destroy the new occupant */
    assert_int_equal(value_of(p, new), 2);

    /* many generations of one slot: every earlier handle stays stale */
    cradle_pool_handle seen[200];
    for (int i = 0; i < 200; i++) {
        int32_t v = i;
        assert_true(cradle_pool_destroy(p, new));
        new = cradle_pool_create(p, &v);
        assert_int_equal(new.index, old.index);
        seen[i] = new;
        for (int j = 0; j < i; j++) {
            assert_false(cradle_pool_contains(p, seen[j]));
            assert_int_not_equal(seen[j].generation, new.generation);
        }
        assert_int_equal(value_of(p, new), i);
    }
}

static void test_none_never_resolves(void **state) {
    (void)state;
    cradle_pool *p = make_i32_pool(block_a, CAP);
    cradle_pool_handle none = CRADLE_POOL_HANDLE_NONE;
    assert_true(is_none(none));
    assert_false(cradle_pool_contains(p, none));
    assert_null(cradle_pool_get(p, none));
    assert_false(cradle_pool_destroy(p, none));
    /* not even when slot 0 is live, full, destroyed or cleared */
    int32_t v = 7;
    cradle_pool_handle first = cradle_pool_create(p, &v);
    assert_int_equal(first.index, 0);
    assert_int_equal(first.generation, 1);
    for (uint32_t i = 1; i < CAP; i++) (void)cradle_pool_create(p, &v);
    assert_false(cradle_pool_contains(p, none));
    assert_null(cradle_pool_get(p, none));
    assert_false(cradle_pool_destroy(p, none));
    assert_int_equal(p->live, CAP);
    cradle_pool_clear(p);
    assert_false(cradle_pool_contains(p, none));
    (void)cradle_pool_create(p, &v);
    assert_false(cradle_pool_contains(p, none));
}

static void test_null_value_zero_fills(void **state) {
    (void)state;
    cradle_pool *p = make_i32_pool(block_a, CAP);
    int32_t v = -1;
    cradle_pool_handle h = cradle_pool_create(p, &v);
    assert_true(cradle_pool_destroy(p, h));
    h = cradle_pool_create(p, NULL); /* same slot, old bytes were all ones */
    assert_int_equal(value_of(p, h), 0);
}

/* ---- iteration -------------------------------------------------------------------- */

static void test_iteration_over_live_slots(void **state) {
    (void)state;
    cradle_pool *p = make_i32_pool(block_a, CAP);
    assert_int_equal(cradle_pool_first(p), CAP); /* empty: nothing to visit */
    cradle_pool_handle h[CAP];
    for (uint32_t i = 0; i < CAP; i++) {
        int32_t v = (int32_t)i + 100;
        h[i] = cradle_pool_create(p, &v);
    }
    /* keep 1, 2, 5, 7 */
    assert_true(cradle_pool_destroy(p, h[0]));
    assert_true(cradle_pool_destroy(p, h[3]));
    assert_true(cradle_pool_destroy(p, h[4]));
    assert_true(cradle_pool_destroy(p, h[6]));
    const uint32_t expect[] = {1, 2, 5, 7};
    size_t n = 0;
    for (uint32_t i = cradle_pool_first(p); i < p->capacity; i = cradle_pool_after(p, i)) {
        assert_true(n < 4);
        assert_int_equal(i, h[expect[n]].index);
        cradle_pool_handle at = cradle_pool_handle_at(p, i);
        assert_int_equal(at.index, h[expect[n]].index);
        assert_int_equal(at.generation, h[expect[n]].generation);
        int32_t *v = cradle_pool_value_at(p, i);
        assert_non_null(v);
        assert_int_equal(*v, (int32_t)expect[n] + 100);
        n++;
    }
    assert_int_equal(n, 4);
    /* free slots and indices past the end give none */
    assert_true(is_none(cradle_pool_handle_at(p, h[0].index)));
    assert_null(cradle_pool_value_at(p, h[0].index));
    assert_true(is_none(cradle_pool_handle_at(p, CAP)));
    assert_null(cradle_pool_value_at(p, CAP));
    assert_int_equal(cradle_pool_after(p, CAP - 1), CAP);
}

static void test_destroy_during_iteration(void **state) {
    (void)state;
    cradle_pool *p = make_i32_pool(block_a, CAP);
    for (uint32_t i = 0; i < CAP; i++) {
        int32_t v = (int32_t)i;
        (void)cradle_pool_create(p, &v);
    }
    /* destroy every even value while walking; all slots are visited once */
    uint32_t visited = 0;
    for (uint32_t i = cradle_pool_first(p); i < p->capacity; i = cradle_pool_after(p, i)) {
        int32_t v = *(int32_t *)cradle_pool_value_at(p, i);
        assert_int_equal(v, (int32_t)i);
        visited |= 1u << i;
        if (v % 2 == 0) assert_true(cradle_pool_destroy(p, cradle_pool_handle_at(p, i)));
    }
    assert_int_equal(visited, 0xFFu);
    assert_int_equal(p->live, CAP / 2);
    uint32_t left = 0;
    for (uint32_t i = cradle_pool_first(p); i < p->capacity; i = cradle_pool_after(p, i)) {
        left |= 1u << i;
    }
    assert_int_equal(left, 0xAAu);
    /* destroy everything while walking */
    for (uint32_t i = cradle_pool_first(p); i < p->capacity; i = cradle_pool_after(p, i)) {
        assert_true(cradle_pool_destroy(p, cradle_pool_handle_at(p, i)));
    }
    assert_int_equal(p->live, 0);
    assert_int_equal(cradle_pool_first(p), CAP);
}

static void test_clear(void **state) {
    (void)state;
    cradle_pool *p = make_i32_pool(block_a, CAP);
    cradle_pool_handle h[CAP];
    for (uint32_t i = 0; i < CAP; i++) {
        int32_t v = (int32_t)i;
        h[i] = cradle_pool_create(p, &v);
    }
    cradle_pool_clear(p);
    assert_int_equal(p->live, 0);
    assert_int_equal(cradle_pool_first(p), CAP);
    for (uint32_t i = 0; i < CAP; i++) assert_false(cradle_pool_contains(p, h[i]));
    /* the full capacity is available again, with new generations */
    for (uint32_t i = 0; i < CAP; i++) {
        int32_t v = 50;
        cradle_pool_handle n = cradle_pool_create(p, &v);
        assert_false(is_none(n));
        for (uint32_t j = 0; j < CAP; j++) assert_false(n.index == h[j].index && n.generation == h[j].generation);
    }
    assert_true(is_none(cradle_pool_create(p, NULL)));
    for (uint32_t i = 0; i < CAP; i++) assert_false(cradle_pool_contains(p, h[i]));
    /* clearing an empty pool is fine */
    cradle_pool_clear(p);
    cradle_pool_clear(p);
    assert_int_equal(p->live, 0);
}

/* ---- alignment and odd sizes ---------------------------------------------------------- */

static void test_value_alignment(void **state) {
    (void)state;
    const uint32_t aligns[] = {1, 2, 4, 8, 16, 32, 64};
    const uint32_t sizes[] = {1, 3, 5, 24, 64, 65};
    for (size_t a = 0; a < sizeof aligns / sizeof aligns[0]; a++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            uint32_t align = aligns[a], size = sizes[s];
            size_t need = cradle_pool_bytes(CAP, size, align);
            assert_true(need > 0 && need <= sizeof block_a);
            cradle_pool *p = cradle_pool_init(block_a, need, CAP, size, align);
            assert_non_null(p);
            uint8_t *values[CAP];
            for (uint32_t i = 0; i < CAP; i++) {
                /* exactly `size` bytes on the heap: ASan catches a read past them */
                uint8_t *v = malloc(size);
                assert_non_null(v);
                memset(v, (int)(i + 1), size);
                cradle_pool_handle h = cradle_pool_create(p, v);
                free(v);
                values[i] = cradle_pool_get(p, h);
                assert_non_null(values[i]);
                assert_int_equal((uintptr_t)values[i] % align, 0);
                assert_true(values[i] + size <= block_a + need);
            }
            /* no value overlaps another */
            for (uint32_t i = 0; i < CAP; i++) {
                for (uint32_t k = 0; k < size; k++) assert_int_equal(values[i][k], i + 1);
            }
        }
    }
}

/* ---- relocation ------------------------------------------------------------------------- */

static void test_block_is_relocatable(void **state) {
    (void)state;
    size_t need = cradle_pool_bytes(CAP, sizeof(uint64_t), 8);
    cradle_pool *a = cradle_pool_init(block_a, need, CAP, sizeof(uint64_t), 8);
    assert_non_null(a);
    cradle_pool_handle h[CAP];
    for (uint32_t i = 0; i < CAP; i++) {
        uint64_t v = 0x1000u + i;
        h[i] = cradle_pool_create(a, &v);
    }
    assert_true(cradle_pool_destroy(a, h[2]));
    assert_true(cradle_pool_destroy(a, h[5]));

    /* a byte copy at another address is a working pool */
    memcpy(block_b, block_a, need);
    cradle_pool *b = (cradle_pool *)(void *)block_b;
    assert_int_equal(b->live, CAP - 2);
    for (uint32_t i = 0; i < CAP; i++) {
        if (i == 2 || i == 5) {
            assert_false(cradle_pool_contains(b, h[i]));
            continue;
        }
        uint64_t *v = cradle_pool_get(b, h[i]);
        assert_non_null(v);
        assert_true((uint8_t *)v >= block_b && (uint8_t *)v < block_b + need);
        assert_int_equal(*v, 0x1000u + i);
    }
    /* it reuses the same free slots as the original would */
    uint64_t v = 77;
    cradle_pool_handle nb = cradle_pool_create(b, &v);
    cradle_pool_handle na = cradle_pool_create(a, &v);
    assert_int_equal(nb.index, na.index);
    assert_int_equal(nb.generation, na.generation);
    /* the two pools are independent */
    assert_true(cradle_pool_destroy(b, h[0]));
    assert_true(cradle_pool_contains(a, h[0]));
    assert_false(cradle_pool_contains(b, h[0]));
    size_t visited = 0;
    for (uint32_t i = cradle_pool_first(b); i < b->capacity; i = cradle_pool_after(b, i)) {
        assert_true((uint8_t *)cradle_pool_value_at(b, i) >= block_b);
        visited++;
    }
    assert_int_equal(visited, b->live);
}

static void test_max_capacity(void **state) {
    (void)state;
    const uint32_t cap = CRADLE_POOL_MAX_CAPACITY;
    size_t need = cradle_pool_bytes(cap, 2, 2);
    assert_true(need > 0);
    void *mem = malloc(need);
    assert_non_null(mem);
    cradle_pool *p = cradle_pool_init(mem, need, cap, 2, 2);
    assert_non_null(p);
    cradle_pool_handle last = CRADLE_POOL_HANDLE_NONE;
    for (uint32_t i = 0; i < cap; i++) {
        uint16_t v = (uint16_t)i;
        last = cradle_pool_create(p, &v);
        if (is_none(last)) fail_msg("full after %u of %u", i, cap);
    }
    assert_int_equal(last.index, cap - 1);
    assert_true(is_none(cradle_pool_create(p, NULL)));
    assert_int_equal(*(uint16_t *)cradle_pool_get(p, last), (uint16_t)(cap - 1));
    cradle_pool_clear(p);
    assert_int_equal(p->live, 0);
    free(mem);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_and_bad_args),
        cmocka_unit_test(test_create_until_full),
        cmocka_unit_test(test_destroy),
        cmocka_unit_test(test_stale_handle_after_slot_reuse),
        cmocka_unit_test(test_none_never_resolves),
        cmocka_unit_test(test_null_value_zero_fills),
        cmocka_unit_test(test_iteration_over_live_slots),
        cmocka_unit_test(test_destroy_during_iteration),
        cmocka_unit_test(test_clear),
        cmocka_unit_test(test_value_alignment),
        cmocka_unit_test(test_block_is_relocatable),
        cmocka_unit_test(test_max_capacity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
