/*
 * --play's controls: the key map and the speed/step state machine
 * (client/src/playback.c), then the same through SDL: real SDL_KEYDOWN
 * events pushed with SDL_PushEvent (dummy video driver, no window) and drained
 * by play.c's own event handling, cradle_client_play_poll.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <SDL.h>
#include <stdlib.h>
#include <string.h>

#include "play.h"
#include "playback.h"
#include "present.h"
#include "timeline.h"

#define SPS 60u
#define MS 1000000ull /* ns */

static void test_keys_map_to_actions(void **unused) {
    (void)unused;
    assert_int_equal(cradle_playback_key(SDLK_SPACE, false), CRADLE_PLAYBACK_TOGGLE_PAUSE);
    assert_int_equal(cradle_playback_key(SDLK_ESCAPE, false), CRADLE_PLAYBACK_QUIT);
    const int32_t faster[] = {SDLK_PLUS, SDLK_EQUALS, SDLK_KP_PLUS, SDLK_UP};
    const int32_t slower[] = {SDLK_MINUS, SDLK_KP_MINUS, SDLK_DOWN};
    const int32_t step[] = {SDLK_RIGHT, SDLK_PERIOD};
    for (size_t i = 0; i < sizeof faster / sizeof faster[0]; i++) {
        assert_int_equal(cradle_playback_key(faster[i], false), CRADLE_PLAYBACK_FASTER);
        assert_int_equal(cradle_playback_key(faster[i], true), CRADLE_PLAYBACK_FASTER);
    }
    for (size_t i = 0; i < sizeof slower / sizeof slower[0]; i++)
        assert_int_equal(cradle_playback_key(slower[i], false), CRADLE_PLAYBACK_SLOWER);
    for (size_t i = 0; i < sizeof step / sizeof step[0]; i++) {
        assert_int_equal(cradle_playback_key(step[i], false), CRADLE_PLAYBACK_STEP);
        assert_int_equal(cradle_playback_key(step[i], true), CRADLE_PLAYBACK_STEP); /* hold to step on */
    }
    /* A held Space or Escape does not toggle or quit again. */
    assert_int_equal(cradle_playback_key(SDLK_SPACE, true), CRADLE_PLAYBACK_NONE);
    assert_int_equal(cradle_playback_key(SDLK_ESCAPE, true), CRADLE_PLAYBACK_NONE);
    assert_int_equal(cradle_playback_key(SDLK_a, false), CRADLE_PLAYBACK_NONE);
    /* the timeline's keys */
    assert_int_equal(cradle_playback_key(SDLK_LEFT, false), CRADLE_PLAYBACK_STEP_BACK);
    assert_int_equal(cradle_playback_key(SDLK_COMMA, true), CRADLE_PLAYBACK_STEP_BACK);
    assert_int_equal(cradle_playback_key(SDLK_l, false), CRADLE_PLAYBACK_JUMP_FORWARD);
    assert_int_equal(cradle_playback_key(SDLK_PAGEDOWN, true), CRADLE_PLAYBACK_JUMP_FORWARD);
    assert_int_equal(cradle_playback_key(SDLK_j, false), CRADLE_PLAYBACK_JUMP_BACK);
    assert_int_equal(cradle_playback_key(SDLK_PAGEUP, false), CRADLE_PLAYBACK_JUMP_BACK);
    assert_int_equal(cradle_playback_key(SDLK_HOME, false), CRADLE_PLAYBACK_TO_START);
    assert_int_equal(cradle_playback_key(SDLK_END, false), CRADLE_PLAYBACK_TO_END);
    assert_int_equal(cradle_playback_key(SDLK_HOME, true), CRADLE_PLAYBACK_NONE);
}

/* Moves other than a step forward become one seek a frame. */
static void test_seeks_fold_the_moves_of_a_frame(void **unused) {
    (void)unused;
    cradle_playback p;
    cradle_playback_init(&p);
    uint64_t to = 0;
    assert_false(cradle_playback_seek(&p, 500, 10000, SPS, &to)); /* nothing asked */
    cradle_playback_apply(&p, CRADLE_PLAYBACK_JUMP_FORWARD);
    assert_true(cradle_playback_seek(&p, 500, 10000, SPS, &to));
    assert_int_equal(to, 500 + 10 * SPS);
    assert_false(cradle_playback_seek(&p, 1100, 10000, SPS, &to)); /* taken */
    cradle_playback_apply(&p, CRADLE_PLAYBACK_JUMP_BACK);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_JUMP_BACK);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_JUMP_FORWARD);
    assert_true(cradle_playback_seek(&p, 1100, 10000, SPS, &to));
    assert_int_equal(to, 1100 - 10 * SPS);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_JUMP_BACK); /* clamped at the start */
    assert_true(cradle_playback_seek(&p, 200, 10000, SPS, &to));
    assert_int_equal(to, 0);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_JUMP_FORWARD); /* and at the end */
    assert_true(cradle_playback_seek(&p, 9900, 10000, SPS, &to));
    assert_int_equal(to, 10000);
    /* a step back only while paused, one step each */
    cradle_playback_apply(&p, CRADLE_PLAYBACK_STEP_BACK);
    assert_false(cradle_playback_seek(&p, 300, 10000, SPS, &to));
    cradle_playback_apply(&p, CRADLE_PLAYBACK_TOGGLE_PAUSE);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_STEP_BACK);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_STEP_BACK);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_STEP);
    assert_true(cradle_playback_seek(&p, 300, 10000, SPS, &to));
    assert_int_equal(to, 298);
    assert_int_equal(cradle_playback_steps(&p, 1000 * MS, SPS), 0); /* the step forward with a seek is void */
    cradle_playback_apply(&p, CRADLE_PLAYBACK_STEP_BACK);
    assert_true(cradle_playback_seek(&p, 0, 10000, SPS, &to));
    assert_int_equal(to, 0);
    /* Home and End */
    cradle_playback_apply(&p, CRADLE_PLAYBACK_JUMP_FORWARD);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_TO_START);
    assert_true(cradle_playback_seek(&p, 4000, 10000, SPS, &to));
    assert_int_equal(to, 0);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_TO_END);
    assert_true(cradle_playback_seek(&p, 4000, 10000, SPS, &to));
    assert_int_equal(to, 10000);
    /* the seek bar replaces what came before it in the frame */
    cradle_playback_apply(&p, CRADLE_PLAYBACK_JUMP_FORWARD);
    cradle_playback_bar(&p, 0.25);
    assert_true(cradle_playback_seek(&p, 4000, 10000, SPS, &to));
    assert_int_equal(to, 2500);
    cradle_playback_bar(&p, 7.0); /* clamped */
    assert_true(cradle_playback_seek(&p, 4000, 10000, SPS, &to));
    assert_int_equal(to, 10000);
    cradle_playback_bar(&p, 0.5);
    assert_true(cradle_playback_seek(&p, 4000, 0, SPS, &to)); /* an empty log */
    assert_int_equal(to, 0);
}

/* The seek bar's geometry and its clock. */
static void test_the_timeline_maps_places_to_fractions(void **unused) {
    (void)unused;
    cradle_hud_rect bar = cradle_timeline_bar(1000, 600);
    assert_true(bar.x == CRADLE_TIMELINE_MARGIN && bar.w == 1000.0f - 2.0f * CRADLE_TIMELINE_MARGIN);
    double f = -1.0;
    assert_true(cradle_timeline_hit(1000, 600, bar.x + bar.w / 2.0f, bar.y + 2.0f, &f));
    assert_true(f > 0.499 && f < 0.501);
    assert_true(cradle_timeline_hit(1000, 600, bar.x, bar.y - CRADLE_TIMELINE_GRAB + 1.0f, &f));
    assert_true(f == 0.0);
    assert_false(cradle_timeline_hit(1000, 600, 500.0f, 300.0f, &f)); /* the game, not the bar */
    assert_false(cradle_timeline_hit(1000, 600, 2.0f, bar.y, &f));    /* the margin */
    assert_true(cradle_timeline_fraction(1000, 600, -50.0f) == 0.0);  /* a drag past the ends */
    assert_true(cradle_timeline_fraction(1000, 600, 5000.0f) == 1.0);
    char text[32];
    cradle_timeline_clock(text, sizeof text, 0, SPS);
    assert_string_equal(text, "0:00");
    cradle_timeline_clock(text, sizeof text, 61 * SPS + 59, SPS);
    assert_string_equal(text, "1:01");
    cradle_timeline_clock(text, sizeof text, 432000, SPS);
    assert_string_equal(text, "2:00:00");
}

static void test_playing_runs_steps_at_the_rate_carrying_fractions(void **unused) {
    (void)unused;
    cradle_playback p;
    cradle_playback_init(&p);
    assert_false(p.paused);
    assert_true(p.speed == 1.0);
    assert_int_equal(cradle_playback_steps(&p, 50 * MS, SPS), 3); /* 50 ms at 60/s */
    assert_int_equal(cradle_playback_steps(&p, 10 * MS, SPS), 0); /* 0.6 owed */
    assert_int_equal(cradle_playback_steps(&p, 10 * MS, SPS), 1); /* 1.2 */
    assert_int_equal(cradle_playback_steps(&p, 0, SPS), 0);
    uint32_t total = 0;
    for (int i = 0; i < 600; i++) total += cradle_playback_steps(&p, 1000 * MS / 60, SPS);
    assert_true(total >= 599 && total <= 601); /* 10 s of 60 Hz frames: 600 steps */
}

static void test_pause_stops_steps_and_resume_restarts_them(void **unused) {
    (void)unused;
    cradle_playback p;
    cradle_playback_init(&p);
    assert_int_equal(cradle_playback_steps(&p, 10 * MS, SPS), 0); /* 0.6 owed */
    cradle_playback_apply(&p, CRADLE_PLAYBACK_TOGGLE_PAUSE);
    assert_true(p.paused);
    assert_int_equal(cradle_playback_steps(&p, 1000 * MS, SPS), 0);
    assert_int_equal(cradle_playback_steps(&p, 60000 * MS, SPS), 0);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_TOGGLE_PAUSE); /* resume */
    assert_false(p.paused);
    /* Nothing owed from before the pause or from the paused time. */
    assert_int_equal(cradle_playback_steps(&p, 0, SPS), 0);
    assert_int_equal(cradle_playback_steps(&p, 10 * MS, SPS), 0);
    assert_int_equal(cradle_playback_steps(&p, 50 * MS, SPS), 3);
}

static void test_step_runs_exactly_one_while_paused(void **unused) {
    (void)unused;
    cradle_playback p;
    cradle_playback_init(&p);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_STEP); /* playing: ignored */
    assert_int_equal(p.step_requests, 0);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_TOGGLE_PAUSE);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_STEP);
    assert_int_equal(cradle_playback_steps(&p, 5000 * MS, SPS), 1);
    assert_int_equal(cradle_playback_steps(&p, 5000 * MS, SPS), 0); /* once */
    for (int i = 0; i < 3; i++) cradle_playback_apply(&p, CRADLE_PLAYBACK_STEP);
    assert_int_equal(cradle_playback_steps(&p, 1 * MS, SPS), 3); /* one per press, none lost */
    for (int i = 0; i < 1000; i++) cradle_playback_apply(&p, CRADLE_PLAYBACK_STEP);
    assert_int_equal(cradle_playback_steps(&p, 0, SPS), CRADLE_PLAYBACK_MAX_STEP_REQUESTS);
    /* Requests not run when play resumes are dropped, not run at speed. */
    cradle_playback_apply(&p, CRADLE_PLAYBACK_STEP);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_TOGGLE_PAUSE);
    assert_int_equal(p.step_requests, 0);
    assert_int_equal(cradle_playback_steps(&p, 0, SPS), 0);
}

static void test_faster_and_slower_double_and_halve_within_bounds(void **unused) {
    (void)unused;
    cradle_playback p;
    cradle_playback_init(&p);
    char mode[32];
    cradle_playback_mode(&p, mode, sizeof mode);
    assert_string_equal(mode, "PLAY X1");
    cradle_playback_apply(&p, CRADLE_PLAYBACK_FASTER);
    assert_true(p.speed == 2.0);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_FASTER);
    assert_int_equal(cradle_playback_steps(&p, 50 * MS, SPS), 12); /* x4 */
    for (int i = 0; i < 10; i++) cradle_playback_apply(&p, CRADLE_PLAYBACK_FASTER);
    assert_true(p.speed == CRADLE_PLAYBACK_SPEED_MAX);
    cradle_playback_mode(&p, mode, sizeof mode);
    assert_string_equal(mode, "PLAY X64");
    for (int i = 0; i < 20; i++) cradle_playback_apply(&p, CRADLE_PLAYBACK_SLOWER);
    assert_true(p.speed == CRADLE_PLAYBACK_SPEED_MIN);
    cradle_playback_mode(&p, mode, sizeof mode);
    assert_string_equal(mode, "PLAY X0.0625");
    assert_int_equal(cradle_playback_steps(&p, 1000 * MS, SPS), 3); /* 60/16 = 3.75 */
    assert_int_equal(cradle_playback_steps(&p, 100 * MS, SPS), 1);  /* 0.75 + 0.375 */
    cradle_playback_apply(&p, CRADLE_PLAYBACK_FASTER);
    assert_true(p.speed == 0.125);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_TOGGLE_PAUSE);
    cradle_playback_mode(&p, mode, sizeof mode);
    assert_string_equal(mode, "PAUSED");
    cradle_playback_apply(&p, CRADLE_PLAYBACK_FASTER); /* speed changes while paused too */
    assert_true(p.speed == 0.25);
}

static void test_catch_up_is_bounded(void **unused) {
    (void)unused;
    cradle_playback p;
    cradle_playback_init(&p);
    for (int i = 0; i < 6; i++) cradle_playback_apply(&p, CRADLE_PLAYBACK_FASTER);
    assert_int_equal(cradle_playback_steps(&p, 10000 * MS, SPS), CRADLE_PLAYBACK_MAX_OWED); /* not 38,400 */
    assert_int_equal(cradle_playback_steps(&p, 0, SPS), 0);
}

/* The window loop's alpha (window.h) at the playback's rate. */
static float alpha(const cradle_playback *p, uint64_t since_step_ns) {
    return cradle_present_alpha(since_step_ns, SPS, cradle_playback_rate(p));
}

static void test_alpha_follows_speed_and_pause(void **unused) {
    (void)unused;
    cradle_playback p;
    cradle_playback_init(&p);
    assert_true(alpha(&p, 0) == 0.0f);
    float half = alpha(&p, 1000 * MS / 120);
    assert_true(half > 0.49f && half < 0.51f);
    assert_true(alpha(&p, 1000 * MS) == 0.999f);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_FASTER);
    float whole = alpha(&p, 1000 * MS / 120);
    assert_true(whole > 0.99f && whole <= 0.999f);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_TOGGLE_PAUSE);
    assert_true(alpha(&p, 0) == 0.999f);
}

static void test_quit(void **unused) {
    (void)unused;
    cradle_playback p;
    cradle_playback_init(&p);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_NONE);
    assert_false(p.quit);
    cradle_playback_apply(&p, CRADLE_PLAYBACK_QUIT);
    assert_true(p.quit);
}

/* ---- through SDL's event queue, as the --play window gets them ---- */

static void push_key(SDL_EventType type, SDL_Keycode key, bool repeat) {
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = type;
    e.key.type = type;
    e.key.state = type == SDL_KEYDOWN ? SDL_PRESSED : SDL_RELEASED;
    e.key.repeat = repeat ? 1 : 0;
    e.key.keysym.sym = key;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(key);
    assert_int_equal(SDL_PushEvent(&e), 1);
}

static void press(SDL_Keycode key) {
    push_key(SDL_KEYDOWN, key, false);
    push_key(SDL_KEYUP, key, false);
}

static int sdl_setup(void **unused) {
    (void)unused;
    if (setenv("SDL_VIDEODRIVER", "dummy", 1) != 0) return -1;
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        print_error("SDL_Init with the dummy video driver: %s\n", SDL_GetError());
        return -1;
    }
    return 0;
}

static int sdl_teardown(void **unused) {
    (void)unused;
    SDL_Quit();
    return 0;
}

static void test_sdl_key_events_drive_playback(void **unused) {
    (void)unused;
    cradle_playback p;
    cradle_playback_init(&p);
    cradle_client_play_poll(&p, 0, 0); /* nothing queued: no change */
    assert_false(p.paused);

    press(SDLK_SPACE);                          /* pause */
    press(SDLK_RIGHT);                          /* one step */
    push_key(SDL_KEYDOWN, SDLK_PERIOD, false);  /* another, held ... */
    push_key(SDL_KEYDOWN, SDLK_PERIOD, true);   /* ... and repeated: a third */
    push_key(SDL_KEYUP, SDLK_PERIOD, false);
    press(SDLK_UP);
    press(SDLK_KP_PLUS);                        /* x4 */
    press(SDLK_MINUS);                          /* x2 */
    push_key(SDL_KEYDOWN, SDLK_SPACE, true);    /* a held Space's repeat: still paused */
    press(SDLK_a);                              /* not a playback key */
    cradle_client_play_poll(&p, 0, 0);
    assert_true(p.paused);
    assert_false(p.quit);
    assert_true(p.speed == 2.0);
    assert_int_equal(p.step_requests, 3);
    assert_int_equal(cradle_playback_steps(&p, 1000 * MS, SPS), 3);
    assert_int_equal(cradle_playback_steps(&p, 1000 * MS, SPS), 0);

    press(SDLK_SPACE); /* resume at x2 */
    cradle_client_play_poll(&p, 0, 0);
    assert_false(p.paused);
    assert_int_equal(cradle_playback_steps(&p, 50 * MS, SPS), 6);

    press(SDLK_ESCAPE);
    cradle_client_play_poll(&p, 0, 0);
    assert_true(p.quit);

    cradle_playback_init(&p); /* the window's close button */
    SDL_Event quit;
    memset(&quit, 0, sizeof quit);
    quit.type = SDL_QUIT;
    assert_int_equal(SDL_PushEvent(&quit), 1);
    cradle_client_play_poll(&p, 0, 0);
    assert_true(p.quit);
}

static void push_mouse(SDL_EventType type, int x, int y) {
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = type;
    if (type == SDL_MOUSEMOTION) {
        e.motion.x = x;
        e.motion.y = y;
        e.motion.state = SDL_BUTTON_LMASK;
    } else {
        e.button.button = SDL_BUTTON_LEFT;
        e.button.state = type == SDL_MOUSEBUTTONDOWN ? SDL_PRESSED : SDL_RELEASED;
        e.button.x = x;
        e.button.y = y;
    }
    assert_int_equal(SDL_PushEvent(&e), 1);
}

/* Clicks and drags on the seek bar, through SDL's queue as the window gets them. */
static void test_sdl_mouse_on_the_seek_bar_seeks(void **unused) {
    (void)unused;
    cradle_playback p;
    cradle_playback_init(&p);
    const int width = 1000, height = 600;
    cradle_hud_rect bar = cradle_timeline_bar(width, height);
    int y = (int)(bar.y + bar.h / 2.0f);
    uint64_t to = 0;
    push_mouse(SDL_MOUSEBUTTONDOWN, (int)(bar.x + bar.w * 0.75f), y);
    push_mouse(SDL_MOUSEBUTTONUP, (int)(bar.x + bar.w * 0.75f), y);
    cradle_client_play_poll(&p, width, height);
    assert_true(cradle_playback_seek(&p, 0, 4000, SPS, &to));
    assert_true(to >= 2995 && to <= 3005);
    /* a drag: down on the bar, moved along (and off it), the last place counts */
    push_mouse(SDL_MOUSEBUTTONDOWN, (int)(bar.x + bar.w * 0.5f), y);
    push_mouse(SDL_MOUSEMOTION, (int)(bar.x + bar.w * 0.4f), y + 200);
    push_mouse(SDL_MOUSEMOTION, (int)(bar.x + bar.w * 0.1f), y + 300);
    cradle_client_play_poll(&p, width, height);
    assert_true(p.dragging);
    assert_true(cradle_playback_seek(&p, 3000, 4000, SPS, &to));
    assert_true(to >= 395 && to <= 405);
    push_mouse(SDL_MOUSEBUTTONUP, (int)(bar.x + bar.w * 0.1f), y + 300);
    push_mouse(SDL_MOUSEMOTION, (int)(bar.x + bar.w * 0.9f), y); /* released: a move is only a move */
    cradle_client_play_poll(&p, width, height);
    assert_false(p.dragging);
    assert_false(cradle_playback_seek(&p, 400, 4000, SPS, &to));
    /* a click on the game, and any click with no timeline (--watch), seek nowhere */
    push_mouse(SDL_MOUSEBUTTONDOWN, width / 2, height / 2);
    push_mouse(SDL_MOUSEBUTTONUP, width / 2, height / 2);
    cradle_client_play_poll(&p, width, height);
    push_mouse(SDL_MOUSEBUTTONDOWN, (int)(bar.x + bar.w * 0.75f), y);
    cradle_client_play_poll(&p, 0, 0);
    assert_false(cradle_playback_seek(&p, 400, 4000, SPS, &to));
    /* keys: J back 10 s, End */
    press(SDLK_j);
    cradle_client_play_poll(&p, width, height);
    assert_true(cradle_playback_seek(&p, 1000, 4000, SPS, &to));
    assert_int_equal(to, 1000 - 10 * SPS);
    press(SDLK_END);
    cradle_client_play_poll(&p, width, height);
    assert_true(cradle_playback_seek(&p, 1000, 4000, SPS, &to));
    assert_int_equal(to, 4000);
}

int main(void) {
    const struct CMUnitTest pure[] = {
        cmocka_unit_test(test_keys_map_to_actions),
        cmocka_unit_test(test_playing_runs_steps_at_the_rate_carrying_fractions),
        cmocka_unit_test(test_pause_stops_steps_and_resume_restarts_them),
        cmocka_unit_test(test_step_runs_exactly_one_while_paused),
        cmocka_unit_test(test_faster_and_slower_double_and_halve_within_bounds),
        cmocka_unit_test(test_catch_up_is_bounded),
        cmocka_unit_test(test_alpha_follows_speed_and_pause),
        cmocka_unit_test(test_quit),
        cmocka_unit_test(test_seeks_fold_the_moves_of_a_frame),
        cmocka_unit_test(test_the_timeline_maps_places_to_fractions),
    };
    const struct CMUnitTest sdl[] = {
        cmocka_unit_test(test_sdl_key_events_drive_playback),
        cmocka_unit_test(test_sdl_mouse_on_the_seek_bar_seeks),
    };
    int failed = cmocka_run_group_tests_name("playback", pure, NULL, NULL);
    failed += cmocka_run_group_tests_name("playback_sdl", sdl, sdl_setup, sdl_teardown);
    return failed;
}
