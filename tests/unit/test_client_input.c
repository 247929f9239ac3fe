/*
 * Tests for cradle-client's SDL-free input sources and presentation:
 * input scripts (client/src/script.c), the particle pool, shake and sound
 * forwarding (present.c), and the client's rasterizer (softdraw.c). The
 * bots are shared/core's (tests/unit/test_bot.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "present.h"
#include "script.h"
#include "softdraw.h"

static void test_script_parse_and_lookup(void **state) {
    (void)state;
    cradle_script s;
    char message[256] = "";
    const char *text = "# vanguard: right + fire, then stop, then up\n"
                       "0 18\n"
                       "\n"
                       "120 0   # stop\n"
                       "300 1\n";
    assert_int_equal(cradle_script_parse(&s, text, "t.txt", message, sizeof message), 0);
    assert_int_equal(s.count, 3);
    assert_int_equal(cradle_script_bits(&s, 0), 0x18);
    assert_int_equal(cradle_script_bits(&s, 119), 0x18);
    assert_int_equal(cradle_script_bits(&s, 120), 0);
    assert_int_equal(cradle_script_bits(&s, 5000), 1);
    cradle_script_free(&s);
}

static void test_script_errors_name_the_line(void **state) {
    (void)state;
    cradle_script s;
    char message[256] = "";
    assert_int_not_equal(cradle_script_parse(&s, "0 1\n10 2\n5 3\n", "t.txt", message, sizeof message), 0);
    assert_non_null(strstr(message, "t.txt line 3"));
    assert_null(s.changes);
    assert_int_not_equal(cradle_script_parse(&s, "0 1\nten 2\n", "t.txt", message, sizeof message), 0);
    assert_non_null(strstr(message, "t.txt line 2: expected"));
    assert_int_not_equal(cradle_script_parse(&s, "0 zz\n", "t.txt", message, sizeof message), 0);
    assert_int_not_equal(cradle_script_parse(&s, "0 1 2\n", "t.txt", message, sizeof message), 0);
}

typedef struct sound_log {
    int count;
    cradle_sound last;
} sound_log;

static void record_sound(void *context, cradle_sound cue, float volume, float pitch) {
    sound_log *log = context;
    (void)volume;
    (void)pitch;
    log->count++;
    log->last = cue;
}

static void test_present_pool_shake_sound(void **state) {
    (void)state;
    cradle_particle storage[100];
    cradle_present p;
    cradle_present_init(&p, storage, 100, 1);
    cradle_fx fx = cradle_present_fx(&p);
    fx.burst(fx.context, 10.0f, 20.0f, 60, 0xffffffffu, 100.0f, 0.5f);
    assert_int_equal(p.count, 60);
    fx.burst(fx.context, 10.0f, 20.0f, 60, 0xffffffffu, 100.0f, 0.5f);
    assert_int_equal(p.count, 100); /* a fixed pool: the rest is dropped and counted */
    assert_int_equal(p.dropped, 20);
    cradle_present_update(&p, 0.1f);
    assert_int_equal(p.count, 100);
    for (uint32_t i = 0; i < p.count; i++) assert_true(storage[i].x != 10.0f || storage[i].y != 20.0f);
    for (int i = 0; i < 10; i++) cradle_present_update(&p, 0.1f);
    assert_int_equal(p.count, 0); /* every particle lived at most 0.5 s */

    fx.shake(fx.context, 10.0f);
    assert_true(p.shake > 9.9f);
    cradle_present_update(&p, 0.016f);
    assert_true(p.shake_x >= -10.0f && p.shake_x <= 10.0f);
    for (int i = 0; i < 60; i++) cradle_present_update(&p, 0.016f);
    assert_true(p.shake == 0.0f && p.shake_x == 0.0f);

    sound_log log = {0};
    fx.sound(fx.context, 1u, 1.0f, 1.0f); /* no player: counted only */
    p.play = record_sound;
    p.play_context = &log;
    fx.sound(fx.context, 5u, 0.5f, 1.0f);
    assert_int_equal(p.sounds, 2);
    assert_int_equal(log.count, 1);
    assert_int_equal(log.last, 5u);
}

static void test_softdraw_pixels(void **state) {
    (void)state;
    static uint32_t px[40 * 20];
    cradle_softdraw sd;
    /* A 20x10 world view into 40x20 pixels: scale 2, no letterbox. */
    cradle_softdraw_init(&sd, px, 40, 20, 40, 20, 10);
    cradle_draw d = cradle_softdraw_world(&sd);
    d.clear(d.context, 0x102030ffu);
    cradle_softdraw_finish(&sd); /* clears are deferred until a shape or finish */
    assert_int_equal(px[0], 0xff102030u);
    assert_int_equal(px[40 * 20 - 1], 0xff102030u);
    d.rect(d.context, 1.0f, 1.0f, 2.0f, 1.0f, 0xff0000ffu); /* pixels x 2..5, y 2..3 */
    assert_int_equal(px[2 * 40 + 2], 0xffff0000u);
    assert_int_equal(px[3 * 40 + 5], 0xffff0000u);
    assert_int_equal(px[2 * 40 + 6], 0xff102030u);
    assert_int_equal(px[4 * 40 + 2], 0xff102030u);
    /* 50% white over black blends to about grey. */
    d.rect(d.context, 10.0f, 0.0f, 1.0f, 1.0f, 0x000000ffu);
    d.rect(d.context, 10.0f, 0.0f, 1.0f, 1.0f, 0xffffff80u);
    uint32_t g = px[0 * 40 + 20];
    assert_true((g & 0xFFu) >= 0x7Du && (g & 0xFFu) <= 0x82u);
    assert_int_equal(g >> 24, 0xFFu);
    /* A triangle covers its inside and not the far corner of its box. */
    d.clear(d.context, 0x000000ffu);
    d.triangle(d.context, 0.0f, 0.0f, 10.0f, 0.0f, 0.0f, 10.0f, 0x00ff00ffu);
    assert_int_equal(px[2 * 40 + 2], 0xff00ff00u);
    assert_int_equal(px[18 * 40 + 18], 0xff000000u);
    /* Text and lines stay inside the buffer even when they run off it. */
    d.text(d.context, 15.0f, 5.0f, 3.0f, 0xffffffffu, "OFF THE EDGE");
    d.line(d.context, -50.0f, -50.0f, 70.0f, 70.0f, 0xffffffffu);
    cradle_softdraw_letterbox(&sd);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_script_parse_and_lookup),
        cmocka_unit_test(test_script_errors_name_the_line),
        cmocka_unit_test(test_present_pool_shake_sound),
        cmocka_unit_test(test_softdraw_pixels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
