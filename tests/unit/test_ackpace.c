/* When a client acks the step stream (cradle/ackpace.h): a player at once,
 * a spectator every CRADLE_ACKPACE_SPECTATOR_STEPS steps or when a held step
 * waited long enough. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cradle/ackpace.h"

#define MS 1000000ull

/* The wait is past the arrival of every step an ack waits for: 3.5 step
 * periods for an ack every 4 steps. */
static void test_wait_is_past_the_last_step_acked(void **state) {
    (void)state;
    _Static_assert(CRADLE_ACKPACE_WAIT_STEPS_X2 == 2u * CRADLE_ACKPACE_SPECTATOR_STEPS - 1u,
                   "half a period past the last step an ack waits for");
    assert_true(cradle_ackpace_wait_ns(60) == 58333333u); /* 3.5 / 60 s, rounded down */
    assert_true(cradle_ackpace_wait_ns(30) == 116666666u);
    assert_true(cradle_ackpace_wait_ns(1) == 3500 * MS);
}

static void test_player_acks_every_step(void **state) {
    (void)state;
    cradle_ackpace p;
    cradle_ackpace_init(&p, false, 60, 100);
    assert_false(cradle_ackpace_due(&p, 100, 0)); /* nothing new */
    assert_true(cradle_ackpace_due(&p, 101, 0));
    cradle_ackpace_sent(&p, 101);
    assert_false(cradle_ackpace_due(&p, 101, 1 * MS));
    assert_true(cradle_ackpace_due(&p, 102, 2 * MS));
}

static void test_spectator_acks_every_fourth_step(void **state) {
    (void)state;
    cradle_ackpace p;
    cradle_ackpace_init(&p, true, 60, 0);
    assert_int_equal(p.every, 4);
    uint64_t acks = 0;
    for (uint64_t s = 1; s <= 100; s++) {
        uint64_t now = s * 16 * MS + s % 3u * MS; /* some jitter, well under half a period */
        if (cradle_ackpace_due(&p, s, now)) {
            cradle_ackpace_sent(&p, s);
            acks++;
            assert_true(s % 4u == 0u);
        }
    }
    assert_true(acks == 25);
}

/* The stream pauses between two acks: the held steps' ack goes out after
 * the wait, not before, and not again. */
static void test_held_step_is_acked_after_the_wait(void **state) {
    (void)state;
    cradle_ackpace p;
    cradle_ackpace_init(&p, true, 60, 10);
    assert_false(cradle_ackpace_due(&p, 11, 100 * MS));
    assert_false(cradle_ackpace_due(&p, 13, 133 * MS)); /* three held: the fourth is due */
    assert_false(cradle_ackpace_due(&p, 13, 158 * MS));
    assert_true(cradle_ackpace_due(&p, 13, 159 * MS));
    cradle_ackpace_sent(&p, 13);
    assert_false(cradle_ackpace_due(&p, 13, 500 * MS));
    /* The wait counts from the first held step, not the latest call. */
    assert_false(cradle_ackpace_due(&p, 14, 501 * MS));
    assert_false(cradle_ackpace_due(&p, 15, 540 * MS));
    assert_true(cradle_ackpace_due(&p, 15, 560 * MS));
}

/* A gap (a step lost) holds received_next: no ack until it moves. */
static void test_no_ack_without_progress(void **state) {
    (void)state;
    cradle_ackpace p;
    cradle_ackpace_init(&p, true, 60, 50);
    for (uint64_t t = 0; t < 10; t++) assert_false(cradle_ackpace_due(&p, 50, t * 100 * MS));
    assert_true(cradle_ackpace_due(&p, 55, 1000 * MS));
    cradle_ackpace_sent(&p, 40); /* an older ack (reordered) does not move it back */
    assert_int_equal(p.sent, 50);
}

/* The server resent steps the spectator holds: its last ack was lost, and
 * goes out again at once, though nothing new arrived; once only. */
static void test_repeat_resends_the_ack(void **state) {
    (void)state;
    cradle_ackpace p;
    cradle_ackpace_init(&p, true, 60, 0);
    assert_true(cradle_ackpace_due(&p, 4, 0));
    cradle_ackpace_sent(&p, 4); /* ... and lost; the stream pauses */
    assert_false(cradle_ackpace_due(&p, 4, 1000 * MS));
    cradle_ackpace_repeated(&p); /* a repair brought steps 0..3 again */
    assert_true(cradle_ackpace_due(&p, 4, 1001 * MS));
    cradle_ackpace_sent(&p, 4);
    assert_false(cradle_ackpace_due(&p, 4, 2000 * MS));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wait_is_past_the_last_step_acked),
        cmocka_unit_test(test_player_acks_every_step),
        cmocka_unit_test(test_spectator_acks_every_fourth_step),
        cmocka_unit_test(test_held_step_is_acked_after_the_wait),
        cmocka_unit_test(test_no_ack_without_progress),
        cmocka_unit_test(test_repeat_resends_the_ack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
