/* Tests for events: the per-step event queue, and its sink adapter. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cradle/cradle.h"

static cradle_event ev(uint16_t kind, int32_t a) {
    return (cradle_event){.kind = kind, .player = CRADLE_EVENT_NO_PLAYER, .a = a};
}

static void test_append_read_clear(void **state) {
    (void)state;
    cradle_event storage[4];
    cradle_event_queue q;
    assert_int_equal(cradle_events_init(&q, storage, 4), 0);
    assert_int_equal(cradle_events_count(&q), 0);
    for (int32_t i = 0; i < 3; i++) {
        cradle_event e = ev(7, i);
        assert_true(cradle_events_push(&q, &e));
    }
    assert_int_equal(cradle_events_count(&q), 3);
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(cradle_events_at(&q, i)->a, (int32_t)i);
        assert_int_equal(cradle_events_data(&q)[i].kind, 7);
    }
    cradle_events_clear(&q);
    assert_int_equal(cradle_events_count(&q), 0);
    assert_int_equal(q.appended_total, 3);
}

static void test_overflow_is_counted(void **state) {
    (void)state;
    cradle_event storage[2];
    cradle_event_queue q;
    assert_int_equal(cradle_events_init(&q, storage, 2), 0);
    for (int32_t i = 0; i < 5; i++) {
        cradle_event e = ev(1, i);
        assert_int_equal(cradle_events_push(&q, &e), i < 2);
    }
    /* The first events stay; the later ones are the dropped ones. */
    assert_int_equal(cradle_events_count(&q), 2);
    assert_int_equal(cradle_events_at(&q, 1)->a, 1);
    assert_int_equal(cradle_events_dropped(&q), 3);
    assert_int_equal(cradle_events_dropped_total(&q), 3);
    cradle_events_clear(&q);
    assert_int_equal(cradle_events_dropped(&q), 0);
    assert_int_equal(cradle_events_dropped_total(&q), 3);
    for (int32_t i = 0; i < 3; i++) {
        cradle_event e = ev(1, i);
        (void)cradle_events_push(&q, &e);
    }
    assert_int_equal(cradle_events_dropped(&q), 1);
    assert_int_equal(cradle_events_dropped_total(&q), 4);
    /* kind 0 is reserved: refused and counted apart */
    cradle_events_clear(&q);
    cradle_event zero = ev(0, 0);
    assert_false(cradle_events_push(&q, &zero));
    assert_false(cradle_events_push(&q, NULL));
    assert_int_equal(cradle_events_count(&q), 0);
    assert_int_equal(q.invalid, 2);
    assert_int_equal(q.invalid_total, 2);
    assert_int_equal(cradle_events_dropped(&q), 0);
    /* A zero-capacity queue drops everything, counted. */
    cradle_event_queue none;
    assert_int_equal(cradle_events_init(&none, NULL, 0), 0);
    cradle_event e = ev(3, 0);
    assert_false(cradle_events_push(&none, &e));
    assert_int_equal(cradle_events_dropped_total(&none), 1);
    assert_int_equal(cradle_events_init(&none, NULL, 1), CRADLE_EINVAL);
}

/* A stand-in for a game's step(): emits through the sink only. */
static void fake_step(const cradle_event_sink *sink, uint32_t n, uint32_t *refused) {
    for (uint32_t i = 0; i < n; i++) {
        cradle_event e = ev(5, (int32_t)i);
        e.x = (int32_t)i * 10;
        if (!sink->emit(sink->context, &e)) (*refused)++;
    }
}

static void test_sink_adapter(void **state) {
    (void)state;
    cradle_event storage[8];
    cradle_event_queue q;
    assert_int_equal(cradle_events_init(&q, storage, 8), 0);
    cradle_event_sink sink = cradle_events_sink(&q);
    assert_ptr_equal(sink.context, &q);
    uint32_t refused = 0;
    fake_step(&sink, 10, &refused);
    assert_int_equal(refused, 2);
    assert_int_equal(cradle_events_count(&q), 8);
    assert_int_equal(cradle_events_dropped(&q), 2);
    assert_int_equal(cradle_events_at(&q, 7)->x, 70);
    assert_int_equal(cradle_events_at(&q, 7)->kind, 5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_read_clear),
        cmocka_unit_test(test_overflow_is_counted),
        cmocka_unit_test(test_sink_adapter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
